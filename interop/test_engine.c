/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interop case engine (interop/case.c) end to end without DPDK or rxe: two threads run
 * ic_run() over a real TCP connection on 127.0.0.1, each with a fake verbs backend that
 * executes operations directly on the other side's memory (one process, so remote addresses
 * are pointers). Checks every op in both directions, the fault cases, RNR (a SEND arriving
 * before its receive is retried), and that a corrupted byte, a wrong immediate or a wrong
 * completion status makes the case fail.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "interop/case.h"

#define NQ 256

struct fake {
	pthread_mutex_t *mu;
	struct fake *peer;
	uint8_t *mem;
	size_t len;
	uint32_t rkey;
	bool error;
	/* posted receives */
	uint64_t rq_id[NQ], rq_addr[NQ];
	uint32_t rq_len[NQ];
	unsigned rq_head, rq_tail;
	/* completions */
	struct ic_wc cq[NQ];
	unsigned cq_head, cq_tail;
	/* sends waiting for a receive (RNR) */
	struct ic_wr pend[NQ];
	unsigned pend_head, pend_tail;
	/* sabotage */
	int corrupt; /* flip a byte of every delivered message */
	int bad_imm;
	int bad_status;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake F[2]; /* 0 = the "rocefw" side, 1 = the "peer" side */

static void push_wc(struct fake *f, uint64_t id, int status, bool with_imm, uint32_t imm,
                    uint32_t len)
{
	struct ic_wc *w = &f->cq[f->cq_tail++ % NQ];

	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->status = status;
	w->with_imm = with_imm;
	w->imm = imm;
	w->byte_len = len;
}

static void to_error(struct fake *f)
{
	f->error = true;
	while (f->rq_head != f->rq_tail) {
		push_wc(f, f->rq_id[f->rq_head % NQ], IC_WC_WR_FLUSH_ERR, false, 0, 0);
		f->rq_head++;
	}
}

static bool in_range(const struct fake *r, uint64_t addr, uint32_t len, uint32_t rkey)
{
	uint64_t b = (uint64_t)(uintptr_t)r->mem;

	return rkey == r->rkey && addr >= b && addr + len <= b + r->len;
}

/* Execute one WR against the peer; false if it must wait for a receive (RNR). */
static bool execute(struct fake *f, const struct ic_wr *w)
{
	struct fake *r = f->peer;
	uint8_t *l = (uint8_t *)(uintptr_t)w->laddr;
	int st = IC_WC_SUCCESS;

	if (w->op == IC_SEND || w->op == IC_SEND_IMM || w->op == IC_WRITE_IMM) {
		if (r->rq_head == r->rq_tail && !r->error)
			return false;
	}
	switch (w->op) {
	case IC_SEND:
	case IC_SEND_IMM: {
		unsigned i = r->rq_head++ % NQ;
		uint8_t *dst = (uint8_t *)(uintptr_t)r->rq_addr[i];

		memcpy(dst, l, w->len);
		if (r->corrupt && w->len)
			dst[w->len / 2] ^= 1;
		push_wc(r, r->rq_id[i], IC_WC_SUCCESS, w->op == IC_SEND_IMM, w->imm ^ r->bad_imm,
		        w->len);
		break;
	}
	case IC_WRITE:
	case IC_WRITE_IMM:
		if (!in_range(r, w->raddr, w->len, w->rkey)) {
			st = IC_WC_REM_ACCESS_ERR;
			to_error(r);
			break;
		}
		memcpy((uint8_t *)(uintptr_t)w->raddr, l, w->len);
		if (r->corrupt && w->len)
			((uint8_t *)(uintptr_t)w->raddr)[w->len - 1] ^= 1;
		if (w->op == IC_WRITE_IMM) {
			unsigned i = r->rq_head++ % NQ;

			push_wc(r, r->rq_id[i], IC_WC_SUCCESS, true, w->imm ^ r->bad_imm, w->len);
		}
		break;
	case IC_READ:
		if (!in_range(r, w->raddr, w->len, w->rkey)) {
			st = IC_WC_REM_ACCESS_ERR;
			to_error(r);
			break;
		}
		memcpy(l, (uint8_t *)(uintptr_t)w->raddr, w->len);
		if (f->corrupt && w->len)
			l[0] ^= 1;
		break;
	case IC_CAS:
	case IC_FAA: {
		uint64_t old;

		if (!in_range(r, w->raddr, 8, w->rkey) || (w->raddr & 7)) {
			st = IC_WC_REM_ACCESS_ERR;
			to_error(r);
			break;
		}
		memcpy(&old, (void *)(uintptr_t)w->raddr, 8);
		memcpy(l, &old, 8);
		if (w->op == IC_FAA)
			old += w->compare_add;
		else if (old == w->compare_add)
			old = w->swap;
		memcpy((void *)(uintptr_t)w->raddr, &old, 8);
		break;
	}
	default:
		st = IC_WC_REM_ACCESS_ERR;
	}
	if (f->bad_status && st == IC_WC_SUCCESS)
		st = f->bad_status;
	push_wc(f, w->wr_id, st, false, 0, 0);
	if (st != IC_WC_SUCCESS)
		to_error(f);
	return true;
}

static int f_open(void *ctx, const struct ic_case *c, uint8_t **mem, struct rfw_oob_conn *mine)
{
	struct fake *f = ctx;
	static const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};

	f->len = ic_mem_len(c);
	f->mem = calloc(1, f->len);
	if (f->mem == NULL)
		return -ENOMEM;
	f->rkey = f == &F[0] ? 0x100 : 0x200;
	memcpy(mine->gid, gid, 16);
	mine->ip4 = 0x7f000001;
	mine->rkey = f->rkey;
	mine->qp[0].qpn = f == &F[0] ? 0x11 : 0x12;
	*mem = f->mem;
	/* sabotage, chosen by the case's seed (test_damage_detected) */
	switch (c->seed) {
	case 0xbad0: /* WRITE: the responder's memory gets a flipped byte */
	case 0xbad1: /* SEND: the delivered message gets a flipped byte */
		f->corrupt = f == &F[1];
		break;
	case 0xbad2: /* WRITE with immediate: the immediate arrives changed */
		f->bad_imm = f == &F[1];
		break;
	case 0xbad3: /* READ: the requester's buffer gets a flipped byte */
		f->corrupt = f == &F[0];
		break;
	case 0xbad4: /* WRITE: the requester's completion says retry exceeded */
		f->bad_status = f == &F[0] ? 12 : 0;
		break;
	}
	return 0;
}

static int f_connect(void *ctx, const struct ic_case *c, const struct rfw_oob_conn *peer,
                     bool requester)
{
	(void)ctx;
	(void)c;
	(void)peer;
	(void)requester;
	return 0;
}

static int f_post_send(void *ctx, const struct ic_wr *w)
{
	struct fake *f = ctx;

	pthread_mutex_lock(f->mu);
	f->pend[f->pend_tail++ % NQ] = *w;
	pthread_mutex_unlock(f->mu);
	return 0;
}

static int f_post_recv(void *ctx, uint64_t wr_id, uint64_t addr, uint32_t len)
{
	struct fake *f = ctx;

	pthread_mutex_lock(f->mu);
	if (f->error) {
		push_wc(f, wr_id, IC_WC_WR_FLUSH_ERR, false, 0, 0);
	} else {
		f->rq_id[f->rq_tail % NQ] = wr_id;
		f->rq_addr[f->rq_tail % NQ] = addr;
		f->rq_len[f->rq_tail % NQ] = len;
		f->rq_tail++;
	}
	pthread_mutex_unlock(f->mu);
	return 0;
}

static int f_poll(void *ctx, struct ic_wc *wc)
{
	struct fake *f = ctx;
	int n = 0;

	pthread_mutex_lock(f->mu);
	/* the "wire": pending sends execute in order; one waiting for a receive blocks the rest */
	while (f->pend_head != f->pend_tail && !f->error && execute(f, &f->pend[f->pend_head % NQ]))
		f->pend_head++;
	/* a QP in error flushes what it has not sent (IBA 10.8.3.3) */
	while (f->error && f->pend_head != f->pend_tail) {
		push_wc(f, f->pend[f->pend_head % NQ].wr_id, IC_WC_WR_FLUSH_ERR, false, 0, 0);
		f->pend_head++;
	}
	if (f->cq_head != f->cq_tail) {
		*wc = f->cq[f->cq_head++ % NQ];
		n = 1;
	}
	pthread_mutex_unlock(f->mu);
	return n;
}

static int f_qp_in_error(void *ctx)
{
	struct fake *f = ctx;
	int e;

	pthread_mutex_lock(f->mu);
	e = f->error;
	pthread_mutex_unlock(f->mu);
	return e;
}

static void f_close(void *ctx)
{
	(void)ctx; /* memory freed by the test once both sides are done */
}

static const char *f_status(int s)
{
	static char b[16];

	snprintf(b, sizeof(b), "status %d", s);
	return b;
}

static struct ic_backend backend(struct fake *f)
{
	struct ic_backend b = {
	    .ctx = f,
	    .open = f_open,
	    .connect = f_connect,
	    .post_send = f_post_send,
	    .post_recv = f_post_recv,
	    .poll = f_poll,
	    .qp_in_error = f_qp_in_error,
	    .close = f_close,
	    .status_str = f_status,
	};
	return b;
}

struct side_arg {
	int fd;
	struct ic_case c;
	struct ic_outcome out;
	int rc;
};

static void *peer_thread(void *p)
{
	struct side_arg *a = p;
	static struct ic_conn cn;
	struct ic_backend b = backend(&F[1]);
	char err[RFW_OOB_ERR_MAX];
	struct ic_case c;

	memset(&cn, 0, sizeof(cn));
	cn.fd = a->fd;
	a->rc = ic_recv_case(&cn, &c, 5000, err, sizeof(err));
	if (a->rc == 0)
		a->rc = ic_run(&c, false, &cn, &b, &a->out);
	return NULL;
}

/* Run @c between the two fakes; returns the rocefw side's outcome (pass needs both). */
static bool run_case(const struct ic_case *c, struct ic_outcome *out)
{
	static struct ic_conn cn;
	struct side_arg pa = {0};
	struct ic_backend b;
	pthread_t t;
	int lfd, fd, afd = -EAGAIN, rc, i;

	for (i = 0; i < 2; i++) {
		free(F[i].mem);
		memset(&F[i], 0, sizeof(F[i]));
		F[i].mu = &mu;
	}
	F[0].peer = &F[1];
	F[1].peer = &F[0];
	lfd = rfw_oob_listen(0);
	assert_true(lfd >= 0);
	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		uint16_t port;

		assert_int_equal(getsockname(lfd, (struct sockaddr *)&ss, &sl), 0);
		port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
		                                     : ((struct sockaddr_in6 *)&ss)->sin6_port);
		fd = rfw_oob_connect("127.0.0.1", port, 2000);
	}
	assert_true(fd >= 0);
	for (i = 0; i < 200 && afd == -EAGAIN; i++) {
		afd = rfw_oob_accept(lfd);
		if (afd == -EAGAIN)
			usleep(1000);
	}
	assert_true(afd >= 0);
	close(lfd);
	pa.fd = afd;
	assert_int_equal(pthread_create(&t, NULL, peer_thread, &pa), 0);
	memset(&cn, 0, sizeof(cn));
	cn.fd = fd;
	b = backend(&F[0]);
	assert_int_equal(ic_send_case(&cn, c), 0);
	rc = ic_run(c, true, &cn, &b, out);
	pthread_join(t, NULL);
	close(fd);
	close(afd);
	/* both sides agree on the verdict */
	assert_int_equal(out->pass, pa.out.pass);
	return rc == 0 && pa.rc == 0 && out->pass;
}

static struct ic_case mk(enum ic_dir d, enum ic_op op, uint32_t size, uint32_t count)
{
	struct ic_case c;

	ic_case_init(&c);
	snprintf(c.name, sizeof(c.name), "%s-%s-%u", ic_dir_name(d), ic_op_name(op), size);
	c.dir = d;
	c.op = op;
	c.size = size;
	c.count = count;
	c.psn = 0xfffff0;
	c.timeout_s = 10;
	return c;
}

static void test_all_ops(void **state)
{
	static const uint32_t sizes[] = {0, 1, 1023, 4097, 65537};
	struct ic_outcome out;
	unsigned d, op, s;

	(void)state;
	for (d = 0; d < IC__DIRS; d++)
		for (op = 0; op < IC__OPS; op++)
			for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				bool atomic = op == IC_CAS || op == IC_FAA;
				struct ic_case c =
				    mk((enum ic_dir)d, (enum ic_op)op, atomic ? 8 : sizes[s], 3);

				if (atomic && s > 0)
					continue;
				if (!run_case(&c, &out))
					fail_msg("%s: %s / peer %s", c.name, out.mine.error,
					         out.peer.error);
				/* the side that owns the data checked it */
				assert_true(out.mine.checked_bytes + out.peer.checked_bytes >=
				            (uint64_t)c.size * c.count);
			}
}

static void test_faults_and_rnr(void **state)
{
	struct ic_outcome out;
	unsigned d, f;
	static const enum ic_op ops[] = {IC_WRITE, IC_READ, IC_CAS, IC_FAA, IC_SEND_IMM};

	(void)state;
	for (d = 0; d < IC__DIRS; d++) {
		for (f = 0; f < 4; f++) {
			struct ic_case c =
			    mk((enum ic_dir)d, ops[f], ops[f] >= IC_CAS ? 8 : 4096, 1);

			c.fault = IC_FAULT_BAD_RKEY;
			assert_true(run_case(&c, &out));
			c.fault = IC_FAULT_OOB;
			assert_true(run_case(&c, &out));
		}
		{
			struct ic_case c = mk((enum ic_dir)d, IC_SEND, 2048, 2);

			c.rnr_delay_ms = 20;
			assert_true(run_case(&c, &out));
			c.op = IC_SEND_IMM;
			assert_true(run_case(&c, &out));
		}
	}
}

/* The checks are real: damage makes the case fail, on the side that owns the data. */
static void test_damage_detected(void **state)
{
	struct ic_outcome out;
	struct ic_case c;

	(void)state;
	/* run_case resets the fakes: the sabotage is chosen in f_open by the seed */
	for (int what = 0; what < 5; what++) {
		static const enum ic_op ops[] = {IC_WRITE, IC_SEND, IC_WRITE_IMM, IC_READ,
		                                 IC_WRITE};

		c = mk(IC_RFW_REQ, ops[what], 3000, 2);
		c.seed = 0xbad0 + (uint32_t)what;
		assert_false(run_case(&c, &out));
		assert_true(out.have_peer);
		assert_true(out.mine.error[0] != '\0' || out.peer.error[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_ops),
	    cmocka_unit_test(test_faults_and_rnr),
	    cmocka_unit_test(test_damage_detected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
