/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats' records handed to a sink (rfw_dev_estats_sink) and binned on another thread give the
 * same rows as binning in the QP: two loopback runs of one script, the same virtual times, one
 * binning in place, the other pushing every record through a single-producer ring to a thread
 * that bins with rfw_es_bins_add. The same with the records pushed, packed, into a record ring
 * (rfw_dev_estats_ring, what the DPDK NIC uses: packed at completion into the CQ's side entry,
 * copied on at poll) that a thread unpacks and bins. Also: a sink or ring QP reports no rows of
 * its own, counts what it handed on, and keeps its trigger.
 */
#include <pthread.h>
#include <stdalign.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loop.h"
#include "transport/es_crec.h"

#define RING   1024 /* a power of two */
#define NMSG   3000
#define MEMLEN (64 * 1024)

/* The test's binning thread: a ring of records in, one QP's histograms out. */
struct binner {
	struct rfw_es_rec q[RING];
	uint32_t prod, cons; /* atomic */
	bool stop;           /* atomic */
	struct rfw_es_bins *bins;
	uint64_t binned;
	pthread_t th;
};

/* The sink, on the thread that polls: wait for room (a test may; a NIC would count a drop). */
static void sink(void *ctx, const struct rfw_es_rec *r)
{
	struct binner *b = ctx;

	while (b->prod - __atomic_load_n(&b->cons, __ATOMIC_ACQUIRE) == RING)
		;
	b->q[b->prod % RING] = *r;
	__atomic_store_n(&b->prod, b->prod + 1, __ATOMIC_RELEASE);
}

static void *binner_main(void *arg)
{
	struct binner *b = arg;

	for (;;) {
		uint32_t prod = __atomic_load_n(&b->prod, __ATOMIC_ACQUIRE);
		bool stop = __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE);

		for (; b->cons != prod; b->binned++) {
			const struct rfw_es_rec *r = &b->q[b->cons % RING];

			rfw_es_bins_add(b->bins, r, rfw_es_rec_time(r));
			__atomic_store_n(&b->cons, b->cons + 1, __ATOMIC_RELEASE);
		}
		if (stop && b->cons == __atomic_load_n(&b->prod, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

/* A thread binning the packed records of a record ring (as the DPDK NIC's Estats thread). */
struct ring_binner {
	struct rfw_es_ring r;
	alignas(64) struct rfw_es_crec q[4 * RING]; /* more than the script's records: no drop */
	bool stop;                                  /* atomic */
	struct rfw_es_bins *bins[2];                /* by QP slot */
	uint64_t binned, wide, bad_slot;
	pthread_t th;
};

static void *ring_binner_main(void *arg)
{
	struct ring_binner *b = arg;
	uint32_t mask = b->r.mask;

	for (;;) {
		bool stop = __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE);
		uint32_t prod = __atomic_load_n(&b->r.prod, __ATOMIC_ACQUIRE), c = b->r.cons;

		for (; c != prod; b->binned++) {
			const struct rfw_es_crec *e = &b->q[c & mask];
			struct rfw_es_rec r;

			rfw_es_unpack(&r, e, &b->q[(c + 1) & mask], 0);
			/* r.qpn: the slot. Another is counted, asserted on the test's thread. */
			if (r.qpn < 2)
				rfw_es_bins_add(b->bins[r.qpn], &r, rfw_es_rec_time(&r));
			else
				b->bad_slot++;
			b->wide += !!(RFW_ES_META_HAVE(e->meta) & RFW_ES_WIDE);
			c += RFW_ES_META_HAVE(e->meta) & RFW_ES_WIDE ? 2 : 1;
		}
		__atomic_store_n(&b->r.cons, c, __ATOMIC_RELEASE);
		if (stop && c == __atomic_load_n(&b->r.prod, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

/* The script: WRITEs and READs of several sizes from A to B, every @sig_every-th (and the
 * last) signaled and polled as it completes with the virtual time (T6), @poll_n at most a poll,
 * over several 1 ms intervals. The others complete without a CQE: their records end at T5. */
static void script(struct loop *lb, int sig_every, int poll_n)
{
	static uint8_t src[MEMLEN], dst[MEMLEN];
	struct lb_ep *a = &lb->ep[0], *b = &lb->ep[1];
	struct rfw_mr *sm = lb_mr(a, src, sizeof(src)), *dm = lb_mr(b, dst, sizeof(dst));
	struct rfw_wc wc[32];
	int posted = 0, done = 0;

	lb_fill(src, sizeof(src), 7);
	while (done < NMSG) {
		while (posted < NMSG && posted - done < 64) {
			uint32_t len = 64u << (posted % 9); /* 64 B .. 16 KiB */
			enum rfw_wr_opcode op =
			    posted % 5 == 4 ? RFW_WR_RDMA_READ : RFW_WR_RDMA_WRITE;

			bool sig = posted % sig_every == sig_every - 1 || posted == NMSG - 1;

			assert_int_equal(lb_post_op_flags(a, op, (uint64_t)posted, src, len, sm,
			                                  (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dm),
			                                  sig ? RFW_SEND_SIGNALED : 0),
			                 0);
			posted++;
		}
		lb_run(lb, 20000);
		for (int n; (n = rfw_poll_cq_ts(a->scq, poll_n, wc, lb->now)) > 0;)
			for (int i = 0; i < n; i++) {
				assert_int_equal(wc[i].status, RFW_WC_SUCCESS);
				assert_true((int)wc[i].wr_id >= done); /* in order */
				done = (int)wc[i].wr_id + 1;
			}
		lb->now +=
		    100000; /* the consumer's polling delay: T6 - T5 not 0, and 1 ms windows turn */
	}
}

static struct lb_cfg es_cfg(void)
{
	struct lb_cfg c = lb_default_cfg();

	c.estats = true;
	c.estats_interval_ns = 1000000;
	return c;
}

static void assert_rows_equal(const struct rfw_es_row *x, int nx, const struct rfw_es_row *y,
                              int ny)
{
	assert_int_equal(nx, ny);
	for (int i = 0; i < nx; i++) {
		assert_int_equal(x[i].op, y[i].op);
		assert_int_equal(x[i].status, y[i].status);
		assert_int_equal(x[i].stage, y[i].stage);
		assert_int_equal(x[i].count, y[i].count);
		assert_int_equal(x[i].p50, y[i].p50);
		assert_int_equal(x[i].p99, y[i].p99);
		assert_int_equal(x[i].p999, y[i].p999);
		assert_int_equal(x[i].max, y[i].max);
	}
}

static void test_sink_same_rows(void **st)
{
	struct lb_cfg c = es_cfg();
	struct binner *bn = calloc(1, sizeof(*bn));
	struct loop *ref, *lb;
	struct rfw_es_row rr[64], rs[64];
	struct rfw_es_info ir, is;
	uint64_t now;

	(void)st;
	ref = lb_create(&c);
	assert_non_null(ref);
	script(ref, 1, 32);
	bn->bins = rfw_es_bins_create(c.estats_interval_ns);
	assert_non_null(bn->bins);
	assert_int_equal(pthread_create(&bn->th, NULL, binner_main, bn), 0);
	c.es_sink = sink;
	c.es_sink_ctx[0] = c.es_sink_ctx[1] = bn;
	lb = lb_create(&c);
	assert_non_null(lb);
	script(lb, 1, 32);
	__atomic_store_n(&bn->stop, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(bn->th, NULL), 0);

	assert_int_equal(ref->now, lb->now); /* one script, one clock */
	now = lb->now - 100000; /* the last poll's time: the current window holds its WQEs */
	assert_true(now > 3 * c.estats_interval_ns);
	for (int w = RFW_ES_CURRENT; w <= RFW_ES_LAST; w++) {
		int nr = rfw_qp_estats_rows(ref->ep[0].qp, (enum rfw_es_window)w, now, rr, 64);
		int ns = rfw_es_bins_rows(bn->bins, rfw_qp_num(lb->ep[0].qp), (enum rfw_es_window)w,
		                          now, rs, 64);

		assert_true(nr >= RFW_ES__STAGES); /* every stage of one (op, status) at least */
		assert_rows_equal(rr, nr, rs, ns);
		/* the sink QP bins nothing itself */
		assert_int_equal(
		    rfw_qp_estats_rows(lb->ep[0].qp, (enum rfw_es_window)w, now, rs, 64), 0);
	}
	assert_int_equal(rfw_qp_estats_info(ref->ep[0].qp, &ir), 0);
	assert_int_equal(rfw_qp_estats_info(lb->ep[0].qp, &is), 0);
	assert_int_equal(ir.recorded, NMSG);
	assert_int_equal(is.recorded, NMSG); /* handed to the sink */
	assert_int_equal(bn->binned, NMSG);
	assert_int_equal(is.window_start_ns, ir.window_start_ns);
	lb_destroy(ref);
	lb_destroy(lb);
	rfw_es_bins_destroy(bn->bins);
	free(bn);
}

/* Through a record ring: the same rows, counts and trigger as binning in place (every
 * @sig_every-th WQE signaled: the others' records go into the ring at completion). The ring's
 * positions start at @start; CQs of @cq_entries (0: the loop's), polled @poll_n at most. */
static void ring_same_rows(int sig_every, uint32_t start, uint32_t cq_entries, int poll_n)
{
	struct lb_cfg c = es_cfg();
	struct ring_binner *bn = aligned_alloc(64, sizeof(*bn));
	struct loop *ref, *lb;
	struct rfw_es_row rr[64], rs[64];
	struct rfw_es_info ir, is;
	struct rfw_es_trigger tr, ts;
	uint64_t now;

	c.estats_threshold_ns = 2000; /* below any WQE's T6 - T1 here */
	c.cq_entries = cq_entries;
	ref = lb_create(&c);
	assert_non_null(ref);
	script(ref, sig_every, poll_n);
	assert_non_null(bn);
	memset(bn, 0, sizeof(*bn));
	bn->r.q = bn->q;
	bn->r.mask = 4 * RING - 1;
	bn->r.prod = bn->r.cons_seen = bn->r.cons = start;
	bn->bins[0] = rfw_es_bins_create(c.estats_interval_ns);
	bn->bins[1] = NULL;
	assert_non_null(bn->bins[0]);
	assert_int_equal(pthread_create(&bn->th, NULL, ring_binner_main, bn), 0);
	c.es_ring[0] = &bn->r;
	lb = lb_create(&c);
	assert_non_null(lb);
	script(lb, sig_every, poll_n);
	__atomic_store_n(&bn->stop, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(bn->th, NULL), 0);

	now = lb->now - 100000; /* the last poll's time */
	for (int w = RFW_ES_CURRENT; w <= RFW_ES_LAST; w++) {
		int nr = rfw_qp_estats_rows(ref->ep[0].qp, (enum rfw_es_window)w, now, rr, 64);
		int ns = rfw_es_bins_rows(bn->bins[0], rfw_qp_num(lb->ep[0].qp),
		                          (enum rfw_es_window)w, now, rs, 64);

		assert_true(nr >= RFW_ES__STAGES);
		assert_rows_equal(rr, nr, rs, ns);
		assert_int_equal(
		    rfw_qp_estats_rows(lb->ep[0].qp, (enum rfw_es_window)w, now, rs, 64), 0);
	}
	assert_int_equal(rfw_qp_estats_info(ref->ep[0].qp, &ir), 0);
	assert_int_equal(rfw_qp_estats_info(lb->ep[0].qp, &is), 0);
	assert_int_equal(is.recorded, NMSG); /* pushed into the ring */
	assert_int_equal(bn->r.prod - start, NMSG);
	assert_int_equal(bn->binned, NMSG);
	assert_true(bn->r.dropped == 0 && bn->bad_slot == 0);
	assert_int_equal(is.window_start_ns, ir.window_start_ns);
	assert_true(rfw_qp_estats_trigger(ref->ep[0].qp, &tr));
	assert_true(rfw_qp_estats_trigger(lb->ep[0].qp, &ts));
	assert_int_equal(tr.at_ns, ts.at_ns);
	assert_int_equal(tr.latency_ns, ts.latency_ns);
	assert_int_equal(tr.wr_id, ts.wr_id);
	assert_int_equal(tr.stage, ts.stage);
	assert_int_equal(tr.op, ts.op);
	assert_memory_equal(tr.t, ts.t, sizeof(tr.t));
	/* The ring withdrawn: the QP's records are dropped, still counted as handed on. */
	rfw_dev_estats_ring(lb->ep[0].dev, NULL);
	lb_destroy(ref);
	lb_destroy(lb);
	rfw_es_bins_destroy(bn->bins[0]);
	free(bn);
}

static void test_ring_same_rows(void **st)
{
	(void)st;
	ring_same_rows(1, 0, 0, 32);
}

/* The same with the ring's positions starting 40 before the end of its array and of uint32_t,
 * and CQs of 100 (a side array of 128 entries, which 3000 completions wrap 23 times) polled 29
 * at a time: polled runs of records cross the end of either (es_burst_run's pieces). */
static void test_ring_wraps_same_rows(void **st)
{
	(void)st;
	ring_same_rows(1, UINT32_MAX - 39, 100, 29);
}

/* Two WQEs of three unsignaled, as perftest's --cq-mod or an application's unsignaled WRITEs:
 * the T5 records packed into the ring at completion bin as the in-place records do. */
static void test_ring_unsignaled_same_rows(void **st)
{
	(void)st;
	ring_same_rows(3, 0, 0, 32);
}

/* A second QP pair on the loop's CQs and devices: A's @q2[0] to B's @q2[1]; @q2[0]'s receive
 * completions in A's send CQ when @shared. */
static void second_pair(struct loop *lb, const struct lb_cfg *c, struct rfw_qp *q2[2], bool shared)
{
	for (int i = 0; i < 2; i++) {
		struct lb_ep *e = &lb->ep[i];
		struct rfw_qp_init_attr qa = {.send_cq = e->scq,
		                              .recv_cq = shared && i == 0 ? e->scq : e->rcq};

		qa.cap = (struct rfw_qp_cap){
		    .max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 4, .max_recv_sge = 4};
		q2[i] = rfw_create_qp(e->pd, &qa);
		assert_non_null(q2[i]);
	}
	for (int i = 0; i < 2; i++) {
		struct rfw_ah_attr ah = {0};

		lb_ah(lb, i, &ah);
		assert_int_equal(lb_connect_av(q2[i], rfw_qp_num(q2[!i]), c, 300u + (uint32_t)i,
		                               300u + (uint32_t)!i, RFW_TRANSPORT_GBN, &ah),
		                 0);
	}
}

/*
 * WRITEs on two QPs that share A's send CQ, three at a time on each, @depth ahead of those
 * polled, @poll_n at most a poll, so that a poll's burst holds runs of both; every fifth
 * round's completions are polled 3 s late, so their T6 is more than 2^31 ns after T1 (records
 * that take two ring slots) and the next poll's burst mixes them with the next round's narrow
 * ones. With @sends, B also sends a SEND a round to the second QP, whose receive completions go
 * to A's send CQ. The loop drives one pair at a time (it knows one QP per endpoint); the script
 * is the same for both runs, so their virtual times are.
 */
static void script_two(struct loop *lb, struct rfw_qp *q2[2], int depth, int poll_n, bool sends)
{
	static uint8_t src[MEMLEN], dst[MEMLEN], msg[64], rbuf[64];
	struct lb_ep *a = &lb->ep[0], *b = &lb->ep[1];
	struct rfw_qp *pair[2][2] = {{a->qp, b->qp}, {q2[0], q2[1]}};
	struct rfw_mr *sm = lb_mr(a, src, sizeof(src)), *dm = lb_mr(b, dst, sizeof(dst));
	struct rfw_mr *mm = lb_mr(b, msg, sizeof(msg)), *rm = lb_mr(a, rbuf, sizeof(rbuf));
	struct rfw_wc wc[32];
	int posted = 0, done = 0;

	for (int round = 0; done < NMSG; round++) {
		if (sends) { /* a SEND from B to @q2[0] received between A's send completions */
			a->qp = q2[0];
			b->qp = q2[1];
			assert_int_equal(lb_post_recv(a, (uint64_t)round, rbuf, sizeof(rbuf), rm),
			                 0);
			assert_int_equal(
			    lb_post_op_flags(b, RFW_WR_SEND, (uint64_t)round, msg, 16, mm, 0, 0, 0),
			    0);
		}
		for (; posted < NMSG && posted - done < depth; posted++) {
			a->qp = pair[posted / 3 % 2][0];
			assert_int_equal(lb_post_op_flags(a, RFW_WR_RDMA_WRITE, (uint64_t)posted,
			                                  src, 64u << (posted % 7), sm,
			                                  (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dm),
			                                  RFW_SEND_SIGNALED),
			                 0);
		}
		for (int k = 0; k < 4; k++) {
			a->qp = pair[k % 2][0];
			b->qp = pair[k % 2][1];
			lb_run(lb, 1000000);
		}
		if (round % 5 == 4) {
			lb->now += UINT64_C(3000000000);
			continue;
		}
		for (int n; (n = rfw_poll_cq_ts(a->scq, poll_n, wc, lb->now)) > 0;)
			for (int i = 0; i < n; i++) {
				assert_int_equal(wc[i].status, RFW_WC_SUCCESS);
				done += wc[i].opcode != RFW_WC_RECV;
			}
		lb->now += 100000;
	}
	a->qp = pair[0][0];
	b->qp = pair[0][1];
}

/* Two QPs' records through a ring, polled in bursts that mix the QPs and narrow and wide
 * records: each QP's rows, counts and window as binning in place gives them. The ring's
 * positions start at @start; CQs of @cq_entries (0: the loop's), @depth WQEs posted ahead of
 * those polled, polled @poll_n at most; with @sends, receive completions among them. */
static void ring_two_qps(uint32_t start, uint32_t cq_entries, int depth, int poll_n, bool sends)
{
	struct lb_cfg c = es_cfg();
	struct ring_binner *bn = aligned_alloc(64, sizeof(*bn));
	struct rfw_qp *r2[2], *l2[2];
	struct loop *ref, *lb;

	c.cq_entries = cq_entries;
	ref = lb_create(&c);
	assert_non_null(ref);
	second_pair(ref, &c, r2, sends);
	script_two(ref, r2, depth, poll_n, sends);
	assert_non_null(bn);
	memset(bn, 0, sizeof(*bn));
	bn->r.q = bn->q;
	bn->r.mask = 4 * RING - 1;
	bn->r.prod = bn->r.cons_seen = bn->r.cons = start;
	for (int k = 0; k < 2; k++)
		assert_non_null(bn->bins[k] = rfw_es_bins_create(c.estats_interval_ns));
	assert_int_equal(pthread_create(&bn->th, NULL, ring_binner_main, bn), 0);
	c.es_ring[0] = &bn->r;
	lb = lb_create(&c);
	assert_non_null(lb);
	second_pair(lb, &c, l2, sends);
	script_two(lb, l2, depth, poll_n, sends);
	__atomic_store_n(&bn->stop, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(bn->th, NULL), 0);
	assert_int_equal(ref->now, lb->now);
	for (int k = 0; k < 2; k++) {
		struct rfw_qp *rq = k ? r2[0] : ref->ep[0].qp, *lq = k ? l2[0] : lb->ep[0].qp;
		struct rfw_es_row rr[64], rs[64];
		struct rfw_es_info ir, is;

		for (int w = RFW_ES_CURRENT; w <= RFW_ES_LAST; w++) {
			int nr = rfw_qp_estats_rows(rq, (enum rfw_es_window)w, lb->now, rr, 64);
			int ns = rfw_es_bins_rows(bn->bins[rfw_qp_num(lq) - 17], rfw_qp_num(lq),
			                          (enum rfw_es_window)w, lb->now, rs, 64);

			assert_true(w == RFW_ES_LAST || nr >= RFW_ES__STAGES);
			assert_rows_equal(rr, nr, rs, ns);
		}
		assert_int_equal(rfw_qp_estats_info(rq, &ir), 0);
		assert_int_equal(rfw_qp_estats_info(lq, &is), 0);
		assert_int_equal(ir.recorded, is.recorded);
		assert_int_equal(is.window_start_ns, ir.window_start_ns);
	}
	assert_int_equal(bn->binned, NMSG);
	assert_true(bn->wide > NMSG / 20 && bn->wide < NMSG / 2); /* both kinds */
	assert_true(bn->r.dropped == 0 && bn->bad_slot == 0);
	for (int k = 0; k < 2; k++) {
		rfw_destroy_qp(r2[k]);
		rfw_destroy_qp(l2[k]);
		rfw_es_bins_destroy(bn->bins[k]);
	}
	lb_destroy(ref);
	lb_destroy(lb);
	free(bn);
}

static void test_ring_two_qps(void **st)
{
	(void)st;
	ring_two_qps(0, 0, 64, 32, false);
}

/* The same with the ring's positions starting 40 before the end of its array and of uint32_t,
 * and CQs of 100 (a side array of 128 entries), 61 WQEs ahead, polled 29 at a time: runs of
 * records cross the end of either (es_burst_run's pieces); and a SEND a round received on the
 * second QP, its completion in A's send CQ (a CQE without a record inside a run). */
static void test_ring_two_qps_wraps(void **st)
{
	(void)st;
	ring_two_qps(UINT32_MAX - 39, 100, 61, 29, true);
}

/* A ring no one drains, eight slots: the first eight records fill it, in the order of their
 * WQEs, and every later one is counted dropped, never written over them; the QP counts every
 * record handed on, dropped or not. */
static void test_ring_full_burst(void **st)
{
	static alignas(64) struct rfw_es_crec q[8];
	struct rfw_es_ring ring = {.q = q, .mask = 7};
	struct lb_cfg c = es_cfg();
	struct rfw_es_info is;
	struct loop *lb;

	(void)st;
	c.es_ring[0] = &ring;
	lb = lb_create(&c);
	assert_non_null(lb);
	script(lb, 1, 32);
	assert_int_equal(ring.prod, 8);
	assert_true(ring.dropped == NMSG - 8);
	for (unsigned k = 0; k < 8; k++) {
		struct rfw_es_rec r;

		rfw_es_unpack(&r, &q[k], &q[(k + 1) & 7], 0);
		assert_int_equal(r.have, 63); /* WRITEs and READs polled: T1..T6 */
		assert_int_equal(r.op, k % 5 == 4 ? RFW_ES_OP_READ : RFW_ES_OP_WRITE);
		assert_true(k == 0 || r.t[0] >= q[k - 1].t1);
	}
	assert_int_equal(rfw_qp_estats_info(lb->ep[0].qp, &is), 0);
	assert_int_equal(is.recorded, NMSG);
	lb_destroy(lb);
}

/* The trigger stays with the QP: the same crossing is reported with and without a sink. */
static void sink_nothing(void *ctx, const struct rfw_es_rec *r)
{
	(void)r;
	(*(uint64_t *)ctx)++;
}

static void test_sink_trigger(void **st)
{
	struct lb_cfg c = es_cfg();
	struct loop *ref, *lb;
	struct rfw_es_trigger tr, ts;
	uint64_t handed = 0;

	(void)st;
	c.estats_threshold_ns = 2000; /* below any WQE's T6 - T1 here */
	ref = lb_create(&c);
	assert_non_null(ref);
	script(ref, 1, 32);
	c.es_sink = sink_nothing;
	c.es_sink_ctx[0] = c.es_sink_ctx[1] = &handed;
	lb = lb_create(&c);
	assert_non_null(lb);
	script(lb, 1, 32);
	assert_int_equal(handed, NMSG);
	assert_true(rfw_qp_estats_trigger(ref->ep[0].qp, &tr));
	assert_true(rfw_qp_estats_trigger(lb->ep[0].qp, &ts));
	assert_int_equal(tr.at_ns, ts.at_ns);
	assert_int_equal(tr.latency_ns, ts.latency_ns);
	assert_int_equal(tr.wr_id, ts.wr_id);
	assert_int_equal(tr.stage, ts.stage);
	assert_memory_equal(tr.t, ts.t, sizeof(tr.t));
	lb_destroy(ref);
	lb_destroy(lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sink_same_rows),
	    cmocka_unit_test(test_sink_trigger),
	    cmocka_unit_test(test_ring_same_rows),
	    cmocka_unit_test(test_ring_wraps_same_rows),
	    cmocka_unit_test(test_ring_unsignaled_same_rows),
	    cmocka_unit_test(test_ring_two_qps),
	    cmocka_unit_test(test_ring_two_qps_wraps),
	    cmocka_unit_test(test_ring_full_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
