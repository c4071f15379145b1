/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM state machine (ctrl/rfw_cm.h): two CMs back to back through a wire that drops and
 * duplicates MADs (seeded). Oracles: each side sees each event of a connection's life at most
 * once and the ones it must see exactly once (IBA 12.9: REQ and RTU at the passive side, REP
 * and DREP at the active one), a total loss ends in one TIMEOUT after max CM retries, REJ
 * reasons as IBA table 112 says, a REQ that comes before the listener waits for it (listen
 * grace), and bad input counted and answered, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctrl/rfw_cm.h"

#define QMAX    256
#define SERVICE 0x01064e20ull /* RDMA_PS_TCP, port 20000 */
#define MS      1000000ull

struct side;

struct wire {
	uint8_t mad[QMAX][RFW_MAD_LEN];
	int to[QMAX]; /* 0: to A, 1: to B */
	int n;
	uint32_t rnd;
	unsigned loss_pct, dup_pct;
	struct side *s[2];
};

struct side {
	int id;
	struct wire *w;
	struct rfw_cm *cm;
	uint8_t gid[16];
	unsigned ev[RFW_CM_EV_TIMEWAIT_EXIT + 1];
	uint32_t conn;
	uint16_t last_reason;
	uint8_t last_pdata0;
	bool auto_accept, auto_rtu, auto_drep, reject;
	uint64_t now;
};

static uint32_t rnd(struct wire *w)
{
	w->rnd = w->rnd * 1103515245u + 12345u;
	return w->rnd >> 16;
}

static int wire_send(void *host, const uint8_t gid[16], const uint8_t *mad, uint64_t now)
{
	struct side *s = host;
	struct wire *w = s->w;
	int copies = 1;

	(void)gid, (void)now;
	if (rnd(w) % 100 < w->loss_pct)
		return 0;
	if (rnd(w) % 100 < w->dup_pct)
		copies = 2;
	while (copies-- && w->n < QMAX) {
		memcpy(w->mad[w->n], mad, RFW_MAD_LEN);
		w->to[w->n++] = !s->id;
	}
	return 0;
}

static const struct rfw_cm_params params = {.qpn = 0x123,
                                            .psn = 0x456,
                                            .resp_res = 1,
                                            .init_depth = 1,
                                            .retry_count = 7,
                                            .rnr_retry = 7,
                                            .mtu = 3,
                                            .ack_timeout = 14};

static void on_event(void *host, const struct rfw_cm_event *ev)
{
	struct side *s = host;

	s->ev[ev->type]++;
	s->last_reason = ev->reason;
	s->last_pdata0 = ev->pdata_len ? ev->pdata[0] : 0;
	s->conn = ev->conn;
	if (ev->type == RFW_CM_EV_REQ) {
		if (s->reject) {
			uint8_t why = 0x5a;
			assert_int_equal(
			    rfw_cm_reject(s->cm, ev->conn, RFW_CM_REJ_CONSUMER, &why, 1, s->now),
			    0);
		} else if (s->auto_accept) {
			assert_int_equal(
			    rfw_cm_accept(s->cm, ev->conn, s, &params, NULL, 0, s->now), 0);
		}
	} else if (ev->type == RFW_CM_EV_REP && s->auto_rtu) {
		assert_int_equal(rfw_cm_rtu(s->cm, ev->conn, s->now), 0);
		assert_int_equal(rfw_cm_disconnect(s->cm, ev->conn, s->now), 0); /* at once */
		assert_string_equal(rfw_cm_conn_state(s->cm, ev->conn), "dreq_sent");
		assert_int_equal(rfw_cm_dreq_pending(s->cm), 1); /* the CM's count sees it */
	} else if (ev->type == RFW_CM_EV_DREQ && s->auto_drep) {
		assert_int_equal(rfw_cm_disconnect(s->cm, ev->conn, s->now), 0);
	}
}

static const struct rfw_cm_ops ops = {.send = wire_send, .event = on_event};

static void side_init(struct side *s, struct wire *w, int id)
{
	struct rfw_cm_config c = {.max_conns = 8,
	                          .cm_timeout = 14,
	                          .max_cm_retries = 15,
	                          .timewait_ns = 50 * MS,
	                          .seed = 7u + (uint32_t)id};

	memset(s, 0, sizeof(*s));
	s->id = id;
	s->w = w;
	s->gid[10] = s->gid[11] = 0xff;
	s->gid[15] = (uint8_t)(id + 1);
	memcpy(c.gid, s->gid, 16);
	s->cm = rfw_cm_create(&ops, s, &c);
	assert_non_null(s->cm);
	w->s[id] = s;
}

/* Deliver what is on the wire and run the timers, in 1 ms steps, for @ms. */
static void run(struct wire *w, uint64_t *now, unsigned ms)
{
	for (unsigned t = 0; t < ms; t++) {
		*now += MS;
		for (int i = 0; i < 2; i++)
			w->s[i]->now = *now;
		while (w->n > 0) {
			uint8_t mad[RFW_MAD_LEN];
			int to = w->to[0];

			memcpy(mad, w->mad[0], RFW_MAD_LEN);
			memmove(w->mad, w->mad + 1, (size_t)(w->n - 1) * RFW_MAD_LEN);
			memmove(w->to, w->to + 1, (size_t)(w->n - 1) * sizeof(int));
			w->n--;
			rfw_cm_rx(w->s[to]->cm, w->s[!to]->gid, mad, RFW_MAD_LEN, *now);
		}
		for (int i = 0; i < 2; i++)
			rfw_cm_step(w->s[i]->cm, *now);
	}
}

static void pair(struct wire *w, struct side *a, struct side *b, unsigned loss, unsigned dup,
                 uint32_t seed)
{
	memset(w, 0, sizeof(*w));
	w->rnd = seed;
	w->loss_pct = loss;
	w->dup_pct = dup;
	side_init(a, w, 0);
	side_init(b, w, 1);
	a->auto_rtu = true;
	b->auto_accept = b->auto_drep = true;
	assert_int_equal(rfw_cm_listen(b->cm, SERVICE, b), 0);
}

static void done(struct side *a, struct side *b)
{
	rfw_cm_destroy(a->cm);
	rfw_cm_destroy(b->cm);
}

/* Connect, then disconnect at once, through 20 % loss and 10 % duplicates, 300 seeds. */
static void test_lossy_life(void **st)
{
	(void)st;
	for (uint32_t seed = 1; seed <= 300; seed++) {
		struct wire w;
		struct side a, b;
		uint64_t now = 0;

		pair(&w, &a, &b, 20, 10, seed);
		assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
		run(&w, &now, 20000);
		assert_int_equal(b.ev[RFW_CM_EV_REQ], 1);
		assert_int_equal(a.ev[RFW_CM_EV_REP], 1);
		assert_true(b.ev[RFW_CM_EV_RTU] <= 1); /* the DREQ may overtake a lost RTU */
		assert_int_equal(b.ev[RFW_CM_EV_DREQ], 1);
		assert_int_equal(a.ev[RFW_CM_EV_DREP], 1);
		assert_int_equal(a.ev[RFW_CM_EV_TIMEOUT] + b.ev[RFW_CM_EV_TIMEOUT], 0);
		assert_int_equal(a.ev[RFW_CM_EV_REJ] + b.ev[RFW_CM_EV_REJ], 0);
		assert_int_equal(a.ev[RFW_CM_EV_TIMEWAIT_EXIT], 1);
		assert_int_equal(b.ev[RFW_CM_EV_TIMEWAIT_EXIT], 1);
		assert_int_equal(rfw_cm_dreq_pending(a.cm) + rfw_cm_dreq_pending(b.cm), 0);
		done(&a, &b);
	}
}

/* Nothing arrives: one TIMEOUT after 1 + max CM retries sends, each a CM response timeout. */
static void test_total_loss(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0, cnt[RFW_CM_CNT__COUNT];
	/* 16 periods of 4.096 us * 2^14 = 67.1 ms, each rounded up to the 1 ms steps of run() */
	unsigned ideal = (unsigned)((4096ull << 14) * 16 / MS), stepped = 16 * 68;

	(void)st;
	pair(&w, &a, &b, 100, 0, 1);
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
	run(&w, &now, ideal);
	assert_int_equal(a.ev[RFW_CM_EV_TIMEOUT], 0);
	run(&w, &now, stepped + 2 - ideal);
	assert_int_equal(a.ev[RFW_CM_EV_TIMEOUT], 1);
	rfw_cm_counters(a.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_tx], 16);
	assert_int_equal(b.ev[RFW_CM_EV_REQ], 0);
	done(&a, &b);
}

static void test_rejects(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0;

	(void)st;
	pair(&w, &a, &b, 0, 0, 1);
	/* nobody listens on this service: REJ invalid service ID (8), after the listen grace
	   (half the requester's CM response timeout here: 33.5 ms) */
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE + 1, &params, NULL, 0, now) > 0);
	run(&w, &now, 36);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 1);
	assert_int_equal(a.last_reason, RFW_CM_REJ_INVALID_SERVICE_ID);
	/* the consumer refuses, with private data */
	b.reject = true;
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
	run(&w, &now, 5);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 2);
	assert_int_equal(a.last_reason, RFW_CM_REJ_CONSUMER);
	assert_int_equal(a.last_pdata0, 0x5a);
	assert_int_equal(b.ev[RFW_CM_EV_REQ], 1);
	done(&a, &b);
}

/*
 * perftest -R's server replaces its listener: it destroys the one of its control connection,
 * syncs with the client over that connection, then listens on the same port for its test QPs,
 * and the client connects as soon as the sync is done. A REQ that arrives before the new
 * listener waits for it (listen grace) instead of being refused with REJ 8; resends of it
 * while it waits are duplicates. The grace is half the requester's CM response timeout at
 * most (here 4.096 us * 2^14 / 2 = 33.5 ms), the configured one (100 ms) otherwise.
 */
static void test_listen_grace(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0, cnt[RFW_CM_CNT__COUNT];
	uint8_t mad[RFW_MAD_LEN];
	struct rfw_cm_msg req;

	(void)st;
	pair(&w, &a, &b, 0, 0, 1);
	assert_int_equal(rfw_cm_unlisten(b.cm, SERVICE), 0);
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
	memcpy(mad, w.mad[0], RFW_MAD_LEN); /* the REQ, for a resend by hand */
	run(&w, &now, 20);
	assert_int_equal(a.ev[RFW_CM_EV_REJ] + b.ev[RFW_CM_EV_REQ], 0); /* waiting */
	rfw_cm_rx(b.cm, a.gid, mad, RFW_MAD_LEN, now);                  /* a resend */
	rfw_cm_counters(b.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_req_held], 1);
	assert_int_equal(cnt[RFW_CM_CNT_mad_rx_dup], 1);
	assert_int_equal(cnt[RFW_CM_CNT_mad_tx], 0);
	/* the listener comes: the REQ event at B's next step, then REP, RTU */
	assert_int_equal(rfw_cm_listen(b.cm, SERVICE, &b), 0);
	run(&w, &now, 3);
	assert_int_equal(b.ev[RFW_CM_EV_REQ], 1);
	assert_int_equal(a.ev[RFW_CM_EV_REP], 1);
	assert_int_equal(b.ev[RFW_CM_EV_RTU], 1);
	assert_int_equal(a.ev[RFW_CM_EV_REJ] + b.ev[RFW_CM_EV_REJ], 0);
	rfw_cm_counters(b.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_req_no_listener], 0);
	rfw_cm_counters(a.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_resent], 0);
	done(&a, &b);

	/* no listener comes: REJ 8 once the grace is over, not before, and no resend */
	pair(&w, &a, &b, 0, 0, 1);
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE + 1, &params, NULL, 0, now) > 0);
	run(&w, &now, 34); /* the REQ reached B at 1 ms: REJ at 35 ms, at A 1 ms later */
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 0);
	run(&w, &now, 2);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 1);
	assert_int_equal(a.last_reason, RFW_CM_REJ_INVALID_SERVICE_ID);
	rfw_cm_counters(b.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_req_held], 1);
	assert_int_equal(cnt[RFW_CM_CNT_req_no_listener], 1);
	rfw_cm_counters(a.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_tx], 1);
	done(&a, &b);

	/* a requester with a long CM response timeout (Linux's rdma_cm: 20, 4.3 s): 100 ms */
	pair(&w, &a, &b, 0, 0, 1);
	req = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_REQ, .tid = 9};
	req.req.local_comm_id = 0x777;
	req.req.service_id = SERVICE + 1;
	req.req.local_qpn = 0x99;
	req.req.remote_cm_timeout = 20;
	rfw_cm_mad_encode(&req, mad);
	rfw_cm_rx(b.cm, a.gid, mad, RFW_MAD_LEN, now);
	assert_int_equal(rfw_cm_step(b.cm, now), now + 100 * MS); /* its deadline */
	rfw_cm_step(b.cm, now + 100 * MS - 1);
	assert_int_equal(w.n, 0);
	rfw_cm_step(b.cm, now + 100 * MS);
	assert_int_equal(w.n, 1);
	assert_int_equal(rfw_cm_mad_decode(w.mad[0], RFW_MAD_LEN, &req), 0);
	assert_int_equal(req.attr, RFW_CM_ATTR_REJ);
	assert_int_equal(req.rej.reason, RFW_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(req.rej.remote_comm_id, 0x777);
	assert_int_equal(req.tid, 9);
	done(&a, &b);
}

/* The host goes away while it holds a REQ: REJ 8 then, not the requester's timeout. */
static void test_stop_holding(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0, cnt[RFW_CM_CNT__COUNT];

	(void)st;
	pair(&w, &a, &b, 0, 0, 1);
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE + 1, &params, NULL, 0, now) > 0);
	run(&w, &now, 5);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 0);
	rfw_cm_stop_holding(b.cm, now);
	run(&w, &now, 2);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 1);
	assert_int_equal(a.last_reason, RFW_CM_REJ_INVALID_SERVICE_ID);
	/* and a REQ after it is not held at all */
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE + 2, &params, NULL, 0, now) > 0);
	run(&w, &now, 3);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 2);
	rfw_cm_counters(b.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_req_held], 1);
	assert_int_equal(cnt[RFW_CM_CNT_req_no_listener], 2);
	done(&a, &b);
}

/* A second REQ from a QP that is still connected (say, its host restarted): REJ reason 10. */
static void test_stale(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0, cnt[RFW_CM_CNT__COUNT];

	(void)st;
	pair(&w, &a, &b, 0, 0, 1);
	a.auto_rtu = false;
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
	run(&w, &now, 2);
	assert_int_equal(rfw_cm_rtu(a.cm, a.conn, now), 0);
	run(&w, &now, 2);
	assert_int_equal(b.ev[RFW_CM_EV_RTU], 1);
	/* the same QP asks again, as a new connection (a fresh comm ID) */
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
	run(&w, &now, 2);
	assert_int_equal(a.ev[RFW_CM_EV_REJ], 1);
	assert_int_equal(a.last_reason, RFW_CM_REJ_STALE_CONN);
	assert_int_equal(b.ev[RFW_CM_EV_REQ], 1);
	rfw_cm_counters(b.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_req_stale], 1);
	done(&a, &b);
}

/* A MAD with @attr from B's side, built by hand around the codec. */
static void inject(struct side *to, const uint8_t gid[16], struct rfw_cm_msg *m, uint64_t now)
{
	uint8_t mad[RFW_MAD_LEN];

	rfw_cm_mad_encode(m, mad);
	rfw_cm_rx(to->cm, gid, mad, RFW_MAD_LEN, now);
}

static void test_bad_input(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0, cnt[RFW_CM_CNT__COUNT];
	uint8_t mad[RFW_MAD_LEN] = {1, 7, 2, 3};
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_DREQ}, got;

	(void)st;
	pair(&w, &a, &b, 0, 0, 1);
	rfw_cm_rx(a.cm, b.gid, mad, 100, now); /* truncated */
	mad[2] = 1;                            /* class version 1 */
	rfw_cm_rx(a.cm, b.gid, mad, RFW_MAD_LEN, now);
	mad[2] = 2;
	mad[16] = 0, mad[17] = 0x19; /* LAP: not handled */
	rfw_cm_rx(a.cm, b.gid, mad, RFW_MAD_LEN, now);
	rfw_cm_counters(a.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_rx_bad], 3);
	/* a DREQ for no connection: a DREP all the same (IBA 12.9.8.4) */
	m.dreq.local_comm_id = 0x1111;
	m.dreq.remote_comm_id = 0x2222;
	inject(&a, b.gid, &m, now);
	assert_int_equal(w.n, 1);
	assert_int_equal(rfw_cm_mad_decode(w.mad[0], RFW_MAD_LEN, &got), 0);
	assert_int_equal(got.attr, RFW_CM_ATTR_DREP);
	assert_int_equal(got.drep.remote_comm_id, 0x1111);
	w.n = 0;
	/* a REP for no REQ: REJ invalid communication ID (6) */
	m = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_REP};
	m.rep.local_comm_id = 0x3333;
	m.rep.remote_comm_id = 0x4444;
	inject(&a, b.gid, &m, now);
	assert_int_equal(w.n, 1);
	assert_int_equal(rfw_cm_mad_decode(w.mad[0], RFW_MAD_LEN, &got), 0);
	assert_int_equal(got.attr, RFW_CM_ATTR_REJ);
	assert_int_equal(got.rej.reason, RFW_CM_REJ_INVALID_COMM_ID);
	assert_int_equal(got.rej.remote_comm_id, 0x3333);
	rfw_cm_counters(a.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_rx_unknown_conn], 2);
	assert_int_equal(a.ev[RFW_CM_EV_REP] + a.ev[RFW_CM_EV_DREQ], 0);
	done(&a, &b);
}

/* A duplicate REQ while the REP is out gets the REP again; a duplicate REP after the RTU gets
   the RTU again (IBA 12.9.8.1, 12.9.8.2). */
static void test_duplicates(void **st)
{
	struct wire w;
	struct side a, b;
	uint64_t now = 0, cnt[RFW_CM_CNT__COUNT];
	struct rfw_cm_msg got;
	uint8_t req[RFW_MAD_LEN];

	(void)st;
	pair(&w, &a, &b, 0, 0, 1);
	a.auto_rtu = false;
	assert_true(rfw_cm_connect(a.cm, &a, b.gid, SERVICE, &params, NULL, 0, now) > 0);
	memcpy(req, w.mad[0], RFW_MAD_LEN);
	run(&w, &now, 1); /* REQ to B, REP back to A: A has the REP event, no RTU yet */
	assert_int_equal(a.ev[RFW_CM_EV_REP], 1);
	rfw_cm_rx(b.cm, a.gid, req, RFW_MAD_LEN, now); /* the REQ again */
	assert_int_equal(w.n, 1);
	assert_int_equal(rfw_cm_mad_decode(w.mad[0], RFW_MAD_LEN, &got), 0);
	assert_int_equal(got.attr, RFW_CM_ATTR_REP);
	assert_int_equal(b.ev[RFW_CM_EV_REQ], 1);
	memcpy(req, w.mad[0], RFW_MAD_LEN); /* keep the REP */
	w.n = 0;
	rfw_cm_counters(b.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_rx_dup], 1);
	assert_int_equal(rfw_cm_rtu(a.cm, a.conn, now), 0);
	assert_string_equal(rfw_cm_conn_state(a.cm, a.conn), "established");
	w.n = 0;                                       /* the RTU is lost */
	rfw_cm_rx(a.cm, b.gid, req, RFW_MAD_LEN, now); /* so the REP comes again */
	assert_int_equal(w.n, 1);
	assert_int_equal(rfw_cm_mad_decode(w.mad[0], RFW_MAD_LEN, &got), 0);
	assert_int_equal(got.attr, RFW_CM_ATTR_RTU);
	assert_int_equal(a.ev[RFW_CM_EV_REP], 1);
	rfw_cm_counters(a.cm, cnt);
	assert_int_equal(cnt[RFW_CM_CNT_mad_rx_dup], 1);
	run(&w, &now, 1);
	assert_int_equal(b.ev[RFW_CM_EV_RTU], 1);
	done(&a, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lossy_life),   cmocka_unit_test(test_total_loss),
	    cmocka_unit_test(test_rejects),      cmocka_unit_test(test_listen_grace),
	    cmocka_unit_test(test_stop_holding), cmocka_unit_test(test_stale),
	    cmocka_unit_test(test_bad_input),    cmocka_unit_test(test_duplicates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
