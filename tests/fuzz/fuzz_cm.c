/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM (ctrl/rfw_cm.h) under a script of input bytes: two CMs, A (active) and B (listening),
 * a wire the script delivers, drops, duplicates and reorders, time that the script advances,
 * host calls in any order (connect, accept, reject, RTU, disconnect, detach, B's listener
 * removed and restored, the end of listen grace) and arbitrary MADs injected (with a CM
 * header, so they reach the attribute parsers). Oracles: no crash
 * (ASan/UBSan), and per connection handle each event at most once and none after the
 * connection ended (TIMEOUT, REJ, TIMEWAIT_EXIT).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/rfw_cm.h"

#define QMAX    64
#define TRACK   64
#define SERVICE 0x01064e20ull

struct track {
	uint32_t h;
	uint8_t seen[RFW_CM_EV_TIMEWAIT_EXIT + 1];
	bool ended;
};

struct fz;

struct side {
	struct fz *f;
	int id;
	struct rfw_cm *cm;
	uint8_t gid[16];
	struct track t[TRACK];
	int nt;
	uint32_t last;
};

struct fz {
	struct side s[2];
	uint8_t q[QMAX][RFW_MAD_LEN];
	int to[QMAX];
	int n;
	uint64_t now;
};

static struct track *track_of(struct side *s, uint32_t h)
{
	for (int i = 0; i < s->nt; i++)
		if (s->t[i].h == h && !s->t[i].ended)
			return &s->t[i];
	if (s->nt == TRACK)
		return NULL;
	memset(&s->t[s->nt], 0, sizeof(s->t[0]));
	s->t[s->nt].h = h;
	return &s->t[s->nt++];
}

static int on_send(void *host, const uint8_t gid[16], const uint8_t *mad, uint64_t now)
{
	struct side *s = host;
	struct fz *f = s->f;

	(void)gid, (void)now;
	if (f->n < QMAX) {
		memcpy(f->q[f->n], mad, RFW_MAD_LEN);
		f->to[f->n++] = !s->id;
	}
	return 0;
}

static void on_event(void *host, const struct rfw_cm_event *ev)
{
	struct side *s = host;
	struct track *t = track_of(s, ev->conn);

	s->last = ev->conn;
	if (t == NULL)
		return;
	if (t->seen[ev->type]++ != 0)
		abort(); /* an event twice for one connection */
	if (ev->type == RFW_CM_EV_TIMEOUT || ev->type == RFW_CM_EV_REJ ||
	    ev->type == RFW_CM_EV_TIMEWAIT_EXIT)
		t->ended = true;
}

static const struct rfw_cm_ops ops = {.send = on_send, .event = on_event};

static const struct rfw_cm_params P = {.qpn = 0x77,
                                       .psn = 0x99,
                                       .resp_res = 1,
                                       .init_depth = 1,
                                       .retry_count = 7,
                                       .rnr_retry = 7,
                                       .mtu = 3};

static void deliver(struct fz *f, int i, bool keep)
{
	int to = f->to[i];
	uint8_t mad[RFW_MAD_LEN];

	memcpy(mad, f->q[i], RFW_MAD_LEN);
	if (!keep) {
		memmove(f->q + i, f->q + i + 1, (size_t)(f->n - i - 1) * RFW_MAD_LEN);
		memmove(f->to + i, f->to + i + 1, (size_t)(f->n - i - 1) * sizeof(int));
		f->n--;
	}
	rfw_cm_rx(f->s[to].cm, f->s[!to].gid, mad, RFW_MAD_LEN, f->now);
}

static void host_call(struct fz *f, uint8_t op, uint8_t arg)
{
	struct side *s = &f->s[arg & 1];
	uint32_t h = s->last;

	switch (op % 9) {
	case 0:
		rfw_cm_connect(f->s[0].cm, NULL, f->s[1].gid, SERVICE, &P, &arg, 1, f->now);
		break;
	case 1:
		rfw_cm_accept(s->cm, h, NULL, &P, NULL, 0, f->now);
		break;
	case 2:
		rfw_cm_reject(s->cm, h, RFW_CM_REJ_CONSUMER, &arg, 1, f->now);
		break;
	case 3:
		rfw_cm_rtu(s->cm, h, f->now);
		break;
	case 4:
		rfw_cm_disconnect(s->cm, h, f->now);
		break;
	case 5:
		rfw_cm_detach(s->cm, h, f->now);
		break;
	case 6: /* B's listener goes and comes back: REQs meanwhile are held (listen grace) */
		if (rfw_cm_unlisten(f->s[1].cm, SERVICE) != 0)
			rfw_cm_listen(f->s[1].cm, SERVICE, NULL);
		break;
	case 7: /* the host goes away: held REQs are refused */
		rfw_cm_stop_holding(s->cm, f->now);
		break;
	default:
		rfw_cm_step(s->cm, f->now);
		break;
	}
}

static void inject(struct fz *f, const uint8_t *d, size_t len, uint8_t who)
{
	uint8_t mad[RFW_MAD_LEN] = {1, RFW_MAD_CLASS_CM, RFW_MAD_CM_CLASS_VER, RFW_MAD_METHOD_SEND};

	memcpy(mad + 4, d, len < RFW_MAD_LEN - 4 ? len : RFW_MAD_LEN - 4);
	mad[16] = 0;
	mad[17] = (uint8_t)(0x10 + mad[17] % 8); /* REQ .. DREP, and SIDR_REQ */
	rfw_cm_rx(f->s[who & 1].cm, f->s[!(who & 1)].gid, mad, RFW_MAD_LEN, f->now);
}

static void setup(struct fz *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 2; i++) {
		struct rfw_cm_config c = {.max_conns = 4,
		                          .cm_timeout = 10,
		                          .max_cm_retries = 3,
		                          .timewait_ns = 5000000,
		                          .seed = (uint32_t)i};
		struct side *s = &f->s[i];

		s->f = f;
		s->id = i;
		s->gid[10] = s->gid[11] = 0xff;
		s->gid[15] = (uint8_t)(i + 1);
		memcpy(c.gid, s->gid, 16);
		s->cm = rfw_cm_create(&ops, s, &c);
		if (s->cm == NULL)
			abort();
	}
	rfw_cm_listen(f->s[1].cm, SERVICE, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t len)
{
	struct fz *f = malloc(sizeof(*f));
	size_t i = 0;

	setup(f);
	while (i + 2 <= len) {
		uint8_t op = d[i], arg = d[i + 1];

		i += 2;
		switch (op % 6) {
		case 0:
			if (f->n)
				deliver(f, arg % f->n, false);
			break;
		case 1:
			if (f->n)
				deliver(f, arg % f->n, true);
			break; /* a duplicate */
		case 2:
			if (f->n)
				f->n--;
			break; /* the newest is lost */
		case 3:
			f->now += (uint64_t)arg * 100000;
			rfw_cm_step(f->s[0].cm, f->now);
			rfw_cm_step(f->s[1].cm, f->now);
			break;
		case 4:
			host_call(f, op / 6, arg);
			break;
		default:
			inject(f, d + i, len - i, arg);
			i += arg % 64;
			break;
		}
	}
	rfw_cm_destroy(f->s[0].cm);
	rfw_cm_destroy(f->s[1].cm);
	free(f);
	return 0;
}
