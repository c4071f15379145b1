/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat (docs/transport-sr.md) beside go-back-N over the loopback host: the mode
 * attribute; one lost first / middle / last packet, ACK and NAK in both modes with every byte
 * checked and exactly one completion; SEND and WRITE with immediate under loss and
 * duplication (completions in order, exactly once); READ responses lost in the middle (only
 * the missing part asked again); atomics replayed, never executed twice; RNR; the BDP cap; a
 * mode mismatch refused on the first packet with nothing placed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loop.h"

static struct loop *make(enum rfw_transport_mode m0, enum rfw_transport_mode m1)
{
	struct lb_cfg c = lb_default_cfg();

	c.mode[0] = m0;
	c.mode[1] = m1;
	return lb_create(&c);
}

/* ---- the attribute ---- */

static void test_mode_attribute(void **s)
{
	struct loop *lb = make(RFW_TRANSPORT_SR, RFW_TRANSPORT_SR);
	struct rfw_qp_init_attr ia = {.send_cq = lb->ep[0].scq,
	                              .recv_cq = lb->ep[0].rcq,
	                              .cap = {.max_send_wr = 4, .max_recv_wr = 4}};
	struct rfw_qp_attr a = {0}, q;
	struct rfw_qp *qp;

	(void)s;
	assert_int_equal(rfw_query_qp(lb->ep[0].qp, &q), 0);
	assert_int_equal(q.transport_mode, RFW_TRANSPORT_SR);
	assert_int_equal(q.qp_state, RFW_QPS_RTS);
	/* Only before the QP talks. */
	a.transport_mode = RFW_TRANSPORT_GBN;
	assert_int_equal(rfw_modify_qp(lb->ep[0].qp, &a, RFW_QP_TRANSPORT_MODE), -EINVAL);

	qp = rfw_create_qp(lb->ep[0].pd, &ia);
	assert_non_null(qp);
	assert_int_equal(rfw_query_qp(qp, &q), 0);
	assert_int_equal(q.transport_mode, RFW_TRANSPORT_GBN); /* the default */
	a.qp_state = RFW_QPS_INIT;
	a.transport_mode = RFW_TRANSPORT_SR;
	assert_int_equal(
	    rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS | RFW_QP_TRANSPORT_MODE), 0);
	assert_int_equal(rfw_query_qp(qp, &q), 0);
	assert_int_equal(q.transport_mode, RFW_TRANSPORT_SR);
	a.transport_mode = (enum rfw_transport_mode)7;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_TRANSPORT_MODE), -EINVAL);
	a.transport_mode = RFW_TRANSPORT_GBN; /* INIT -> INIT may change it back */
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_TRANSPORT_MODE), 0);
	assert_int_equal(rfw_query_qp(qp, &q), 0);
	assert_int_equal(q.transport_mode, RFW_TRANSPORT_GBN);
	assert_int_equal(rfw_destroy_qp(qp), 0);
	lb_destroy(lb);
}

/* ---- one lost packet of each kind, both modes ---- */

enum lose { LOSE_FIRST, LOSE_MIDDLE, LOSE_LAST, LOSE_ACK, LOSE_NAK };

struct lose_f {
	enum lose what;
	int seen_mid, dropped_data, dropped_ack;
};

static bool is_nak(const uint8_t *ib)
{
	return ib[0] == RFW_OP_RC_ACKNOWLEDGE &&
	       rfw_aeth_syndrome_type(ib[RFW_BTH_LEN]) == RFW_AETH_NAK;
}

static enum lb_verdict lose_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct lose_f *f = arg;

	(void)lb;
	(void)len;
	if (from == 0) {
		if (f->dropped_data)
			return LB_PASS;
		if ((f->what == LOSE_FIRST && ib[0] == RFW_OP_RC_RDMA_WRITE_FIRST) ||
		    (f->what == LOSE_LAST && ib[0] == RFW_OP_RC_RDMA_WRITE_LAST) ||
		    ((f->what == LOSE_MIDDLE || f->what == LOSE_NAK) &&
		     ib[0] == RFW_OP_RC_RDMA_WRITE_MIDDLE && f->seen_mid++ == 5)) {
			f->dropped_data++;
			return LB_DROP;
		}
		return LB_PASS;
	}
	if (f->dropped_ack)
		return LB_PASS;
	if ((f->what == LOSE_ACK && ib[0] == RFW_OP_RC_ACKNOWLEDGE && !is_nak(ib)) ||
	    (f->what == LOSE_NAK && is_nak(ib))) {
		f->dropped_ack++;
		return LB_DROP;
	}
	return LB_PASS;
}

#define LOSE_LEN (32 * 1024)

/* What selective repeat's counters must show after losing @what once. */
static void lose_counters_sr(enum lose what, const uint64_t *q0, const uint64_t *q1)
{
	if (what == LOSE_FIRST || what == LOSE_MIDDLE) {
		/* Selective: the NAK's SACK names the one hole; only it goes again. */
		assert_int_equal(q0[RFW_CNT_retransmitted_packets], 1);
		assert_true(q1[RFW_CNT_ooo_accepted] >= 1);
		assert_true(q1[RFW_CNT_naks_sent] >= 1);
		assert_true(q0[RFW_CNT_naks_received] >= 1);
		assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 0);
		assert_int_equal(q1[RFW_CNT_spurious_retransmissions], 0);
	} else if (what == LOSE_NAK) {
		/* The hole's only NAK (later SACKs coalesce into it) is lost: the timer
		 * sends a probe (the highest PSN, a duplicate), whose NAK names the hole.
		 */
		assert_int_equal(q0[RFW_CNT_retransmitted_packets], 2);
		assert_int_equal(q0[RFW_CNT_rto_high_timeouts], 1);
		assert_true(q1[RFW_CNT_naks_sent] >= 2);
		assert_int_equal(q1[RFW_CNT_spurious_retransmissions], 1);
	} else {
		/* A tail loss (LAST or its ACK): nothing after it draws a NAK, the timer
		 * probes with the highest PSN. 33 packets in flight: the long timeout. */
		assert_int_equal(q0[RFW_CNT_retransmitted_packets], 1);
		assert_int_equal(q0[RFW_CNT_rto_high_timeouts], 1);
		assert_int_equal(q0[RFW_CNT_rto_low_timeouts], 0);
		assert_int_equal(q1[RFW_CNT_spurious_retransmissions], what == LOSE_ACK ? 1 : 0);
	}
}

/* What go-back-N's counters must show after losing @what once (@npkts in the WRITE). */
static void lose_counters_gbn(enum lose what, uint32_t npkts, const uint64_t *q0,
                              const uint64_t *q1)
{
	switch (what) {
	case LOSE_FIRST:
		assert_int_equal(q0[RFW_CNT_retransmitted_packets], npkts);
		break;
	case LOSE_MIDDLE:
		/* go back to #7 (FIRST + 6): 32 - 6 packets again */
		assert_int_equal(q0[RFW_CNT_retransmitted_packets], npkts - 6);
		assert_int_equal(q0[RFW_CNT_naks_received], 1);
		break;
	case LOSE_NAK:
		/* the one NAK lost: the timer goes back N */
		assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 1);
		assert_int_equal(q0[RFW_CNT_rto_high_timeouts], 1);
		break;
	default:
		assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 1);
		assert_true(q0[RFW_CNT_retransmitted_packets] >= 1);
		break;
	}
	assert_int_equal(q1[RFW_CNT_ooo_accepted], 0);
}

static void lose_one(enum rfw_transport_mode mode, enum lose what)
{
	static uint8_t src[LOSE_LEN], dst[LOSE_LEN + 64];
	struct loop *lb = make(mode, mode);
	struct lose_f f = {.what = what};
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	bool sr = mode == RFW_TRANSPORT_SR;
	/* GBN: 32 packets of 1024 B; SR: 1008 B of data after the SRETH, 33 packets. */
	uint32_t npkts = sr ? 33 : 32;
	struct rfw_wc wc;

	assert_non_null(lb);
	lb->filter = lose_filter;
	lb->farg = &f;
	lb_fill(src, sizeof(src), 11 + what);
	memset(dst, 0x5a, sizeof(dst));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 77, src, LOSE_LEN, smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 10000000000ull);
	assert_int_equal(f.dropped_data, what == LOSE_ACK ? 0 : 1);
	assert_int_equal(f.dropped_ack, (what == LOSE_ACK || what == LOSE_NAK) ? 1 : 0);
	assert_memory_equal(src, dst, LOSE_LEN);
	assert_int_equal(dst[LOSE_LEN], 0x5a);
	/* Exactly one completion, successful. */
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 0);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 0);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rx_write_requests], 1);
	assert_int_equal(q0[RFW_CNT_rx_transport_mismatch] + q1[RFW_CNT_rx_transport_mismatch], 0);
	assert_true(q0[RFW_CNT_inflight_bytes_hwm] > 0);
	if (sr)
		lose_counters_sr(what, q0, q1);
	else
		lose_counters_gbn(what, npkts, q0, q1);
	lb_destroy(lb);
}

static void test_lose_each_gbn(void **s)
{
	(void)s;
	for (enum lose w = LOSE_FIRST; w <= LOSE_NAK; w++)
		lose_one(RFW_TRANSPORT_GBN, w);
}

static void test_lose_each_sr(void **s)
{
	(void)s;
	for (enum lose w = LOSE_FIRST; w <= LOSE_NAK; w++)
		lose_one(RFW_TRANSPORT_SR, w);
}

/* ---- SEND and WRITE with immediate: loss + duplication, completions exactly once ---- */

struct chaos {
	uint32_t n;
};

/* Deterministic: every 7th data packet lost once, every 5th duplicated, every 9th ACK lost. */
static enum lb_verdict chaos_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct chaos *c = arg;
	uint32_t k = ++c->n;

	(void)lb;
	(void)len;
	if (from == 1)
		return (ib[0] == RFW_OP_RC_ACKNOWLEDGE && k % 9 == 0) ? LB_DROP : LB_PASS;
	if (k % 7 == 0)
		return LB_DROP;
	if (k % 5 == 0)
		return LB_DUP;
	return LB_PASS;
}

#define NMSG 24
#define MSZ  5000

static void test_sr_send_imm_exactly_once(void **s)
{
	static uint8_t src[NMSG][MSZ], dst[NMSG][MSZ], wdst[NMSG * MSZ];
	struct loop *lb = make(RFW_TRANSPORT_SR, RFW_TRANSPORT_SR);
	struct chaos ch = {0};
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	struct rfw_mr *wmr = lb_mr(&lb->ep[1], wdst, sizeof(wdst));
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	lb->filter = chaos_filter;
	lb->farg = &ch;
	memset(dst, 0, sizeof(dst));
	memset(wdst, 0, sizeof(wdst));
	for (int i = 0; i < NMSG; i++) {
		uint32_t len = MSZ - 97u * (uint32_t)i;

		lb_fill(src[i], MSZ, 100u + (uint32_t)i);
		assert_int_equal(lb_post_recv(&lb->ep[1], 500u + (uint32_t)i, dst[i], MSZ, dmr), 0);
		if (i % 2)
			assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND_WITH_IMM, (uint64_t)i,
			                            src[i], len, smr, 0, 0),
			                 0);
		else
			assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE_WITH_IMM,
			                            (uint64_t)i, src[i], len, smr,
			                            (uint64_t)(uintptr_t)&wdst[(size_t)i * MSZ],
			                            rfw_mr_rkey(wmr)),
			                 0);
	}
	lb_run(lb, 10000000000ull);
	for (int i = 0; i < NMSG; i++) {
		uint32_t len = MSZ - 97u * (uint32_t)i;

		assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);
		/* Receive completions in message order, each once, with its immediate. */
		assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 500u + (uint32_t)i);
		assert_int_equal(wc.byte_len, len);
		assert_true(wc.wc_flags & RFW_WC_WITH_IMM);
		assert_int_equal(wc.imm_data, 0xabcd0000u + (uint32_t)i);
		if (i % 2) {
			assert_int_equal(wc.opcode, RFW_WC_RECV);
			assert_memory_equal(src[i], dst[i], len);
		} else {
			assert_int_equal(wc.opcode, RFW_WC_RECV_RDMA_WITH_IMM);
			assert_memory_equal(src[i], &wdst[(size_t)i * MSZ], len);
		}
	}
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 0);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_true(q1[RFW_CNT_ooo_accepted] > 0);
	assert_true(q1[RFW_CNT_duplicate_request] > 0);
	lb_destroy(lb);
}

/* ---- READ: a lost response in the middle; only that part is asked for again ---- */

struct rd_log {
	int resp_seen, dropped, responses, requests;
	uint32_t last_req_len;
};

static enum lb_verdict read_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct rd_log *r = arg;

	(void)lb;
	(void)len;
	if (from == 0 && ib[0] == RFW_OP_RC_RDMA_READ_REQUEST) {
		r->requests++;
		r->last_req_len = rfw_get_be32(ib + RFW_BTH_LEN + 12);
	}
	if (from == 1 && ib[0] >= RFW_OP_RC_RDMA_READ_RESPONSE_FIRST &&
	    ib[0] <= RFW_OP_RC_RDMA_READ_RESPONSE_ONLY) {
		r->responses++;
		if (ib[0] == RFW_OP_RC_RDMA_READ_RESPONSE_MIDDLE && r->resp_seen++ == 9 &&
		    !r->dropped) {
			r->dropped++;
			return LB_DROP;
		}
	}
	return LB_PASS;
}

static void test_sr_read_missing_part(void **s)
{
	static uint8_t remote[64 * 1024], local[64 * 1024];
	struct loop *lb = make(RFW_TRANSPORT_SR, RFW_TRANSPORT_SR);
	struct rd_log r = {0};
	struct rfw_mr *lmr = lb_mr(&lb->ep[0], local, sizeof(local));
	struct rfw_mr *rmr = lb_mr(&lb->ep[1], remote, sizeof(remote));
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	lb->filter = read_filter;
	lb->farg = &r;
	lb_fill(remote, sizeof(remote), 3);
	memset(local, 0, sizeof(local));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 9, local, sizeof(local), lmr,
	                            (uint64_t)(uintptr_t)remote, rfw_mr_rkey(rmr)),
	                 0);
	lb_run(lb, 10000000000ull);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.byte_len, sizeof(local));
	assert_memory_equal(remote, local, sizeof(local));
	assert_int_equal(r.dropped, 1);
	/* 64 responses, then one request for the one missing MTU and its one response. */
	assert_int_equal(r.requests, 2);
	assert_int_equal(r.last_req_len, 1024);
	assert_int_equal(r.responses, 64 + 1);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_read_replays], 1);
	assert_true(q0[RFW_CNT_ooo_accepted] >= 1);
	assert_int_equal(q0[RFW_CNT_retransmitted_packets], 1);
	lb_destroy(lb);
}

/* ---- atomics: a lost atomic ACK and duplicated requests, executed once ---- */

struct at_f {
	int acks, dup;
};

static enum lb_verdict atomic_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                     void *arg)
{
	struct at_f *a = arg;

	(void)lb;
	(void)len;
	if (from == 1 && ib[0] == RFW_OP_RC_ATOMIC_ACKNOWLEDGE && a->acks++ == 0)
		return LB_DROP;
	if (from == 0 && ib[0] == RFW_OP_RC_FETCH_ADD) {
		a->dup++;
		return LB_DUP;
	}
	return LB_PASS;
}

static void test_sr_atomic_once(void **s)
{
	static uint64_t target = 1000, orig[4];
	struct loop *lb = make(RFW_TRANSPORT_SR, RFW_TRANSPORT_SR);
	struct at_f a = {0};
	struct rfw_mr *lmr = lb_mr(&lb->ep[0], orig, sizeof(orig));
	struct rfw_mr *rmr = lb_mr(&lb->ep[1], &target, sizeof(target));
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	lb->filter = atomic_filter;
	lb->farg = &a;
	for (int i = 0; i < 4; i++) {
		struct rfw_sge sge = {
		    .addr = (uint64_t)(uintptr_t)&orig[i], .length = 8, .lkey = rfw_mr_lkey(lmr)};
		struct rfw_send_wr wr = {.wr_id = (uint64_t)i,
		                         .sg_list = &sge,
		                         .num_sge = 1,
		                         .opcode = RFW_WR_ATOMIC_FETCH_AND_ADD,
		                         .send_flags = RFW_SEND_SIGNALED};
		struct rfw_send_wr *bad;

		wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&target;
		wr.wr.atomic.rkey = rfw_mr_rkey(rmr);
		wr.wr.atomic.compare_add = 10;
		assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, lb->now), 0);
	}
	lb_run(lb, 10000000000ull);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);
		assert_int_equal(orig[i], 1000 + 10 * (uint64_t)i);
	}
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 0);
	assert_int_equal(target, 1040); /* four adds, each once */
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rx_atomic_requests], 4); /* executed once each */
	assert_true(q1[RFW_CNT_atomic_replays] >= 4); /* duplicates answered from the cache */
	assert_int_equal(a.acks, 8);                  /* every copy answered, the lost ACK's too */
	lb_destroy(lb);
}

/*
 * ---- RNR: a message that needs a receive WQE sent before it is posted ----
 * @op of @len bytes: a SEND, or a WRITE with immediate into the receiver's buffer (the ePSN's
 * short path must not complete a receive WQE that is not there: it holds the ePSN, as
 * sr_advance does). An RNR NAK and no completion; once the receive is posted, each side
 * completes exactly once and the bytes are there.
 */
static void rnr_before_recv(enum rfw_wr_opcode op, uint32_t len)
{
	static uint8_t src[6000], dst[6000];
	struct loop *lb = make(RFW_TRANSPORT_SR, RFW_TRANSPORT_SR);
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	bool imm = op == RFW_WR_RDMA_WRITE_WITH_IMM;
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	memset(dst, 0, sizeof(dst));
	lb_fill(src, len, 5);
	assert_int_equal(lb_post_op(&lb->ep[0], op, 1, src, len, smr,
	                            imm ? (uint64_t)(uintptr_t)dst : 0, imm ? rfw_mr_rkey(dmr) : 0),
	                 0);
	lb_run(lb, 50000);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_true(q1[RFW_CNT_rnr_nak_sent] >= 1);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 0);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 0);
	assert_int_equal(lb_post_recv(&lb->ep[1], 2, dst, sizeof(dst), dmr), 0);
	lb_run(lb, 10000000000ull);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.opcode, imm ? RFW_WC_RECV_RDMA_WITH_IMM : RFW_WC_RECV);
	if (imm)
		assert_int_equal(wc.imm_data, 0xabcd0000u + 1);
	assert_int_equal(wc.byte_len, len);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 0); /* completed once */
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(src, dst, len);
	lb_destroy(lb);
}

static void test_sr_rnr(void **s)
{
	(void)s;
	rnr_before_recv(RFW_WR_SEND, 6000);
}

static void test_sr_rnr_write_imm(void **s)
{
	(void)s;
	rnr_before_recv(RFW_WR_RDMA_WRITE_WITH_IMM, 3000);
}

/* ---- the peer sends while this end is still in RTR: its RTS must not forget that ---- */

static void test_sr_traffic_in_rtr(void **s)
{
	static uint8_t src[2][3000], dst[2][3000];
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	struct rfw_qp_attr a = {0};
	struct rfw_mr *smr, *dmr;
	struct rfw_wc wc;
	struct rfw_qp *b;

	(void)s;
	c.mode[0] = c.mode[1] = RFW_TRANSPORT_SR;
	lb = lb_create(&c);
	assert_non_null(lb);
	b = lb->ep[1].qp;
	smr = lb_mr(&lb->ep[0], src, sizeof(src));
	dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	/* B back to RESET, then INIT and RTR only (A stays in RTS). */
	a.qp_state = RFW_QPS_RESET;
	assert_int_equal(rfw_modify_qp(b, &a, RFW_QP_STATE), 0);
	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags = c.access;
	a.transport_mode = RFW_TRANSPORT_SR;
	assert_int_equal(
	    rfw_modify_qp(b, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS | RFW_QP_TRANSPORT_MODE), 0);
	a.qp_state = RFW_QPS_RTR;
	lb_ah(lb, 1, &a.ah_attr);
	a.path_mtu = c.mtu;
	a.dest_qp_num = rfw_qp_num(lb->ep[0].qp);
	a.rq_psn = c.psn[0];
	a.max_dest_rd_atomic = c.max_rd_atomic;
	a.min_rnr_timer = c.min_rnr_timer;
	assert_int_equal(rfw_modify_qp(b, &a,
	                               RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU |
	                                   RFW_QP_DEST_QPN | RFW_QP_RQ_PSN |
	                                   RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER),
	                 0);
	for (int i = 0; i < 2; i++) {
		lb_fill(src[i], sizeof(src[i]), 40u + (uint32_t)i);
		assert_int_equal(lb_post_recv(&lb->ep[1], 10u + (uint32_t)i, dst[i], 3000, dmr), 0);
	}
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 0, src[0], 3000, smr, 0, 0), 0);
	lb_run(lb, 10000000);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 10);
	/* Now B goes to RTS: its responder half keeps its place. */
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = c.psn[1];
	a.timeout = c.timeout;
	a.retry_cnt = c.retry_cnt;
	a.rnr_retry = c.rnr_retry;
	a.max_rd_atomic = c.max_rd_atomic;
	assert_int_equal(rfw_modify_qp(b, &a,
	                               RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT |
	                                   RFW_QP_RETRY_CNT | RFW_QP_RNR_RETRY |
	                                   RFW_QP_MAX_QP_RD_ATOMIC),
	                 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, src[1], 3000, smr, 0, 0), 0);
	lb_run(lb, 10000000);
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 11);
	assert_memory_equal(src[0], dst[0], 3000);
	assert_memory_equal(src[1], dst[1], 3000);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	lb_destroy(lb);
}

/* ---- more SENDs in flight than the receive queue holds: RNR, then all in order ---- */

static void test_sr_sends_beyond_rq(void **s)
{
	static uint8_t src[6][100], dst[6][100];
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	struct rfw_mr *smr, *dmr;
	struct rfw_wc wc;

	(void)s;
	c.mode[0] = c.mode[1] = RFW_TRANSPORT_SR;
	c.max_recv_wr = 2;
	lb = lb_create(&c);
	assert_non_null(lb);
	smr = lb_mr(&lb->ep[0], src, sizeof(src));
	dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	for (int i = 0; i < 6; i++) {
		lb_fill(src[i], 100, 60u + (uint32_t)i);
		assert_int_equal(
		    lb_post_op(&lb->ep[0], RFW_WR_SEND, (uint64_t)i, src[i], 100, smr, 0, 0), 0);
	}
	for (int i = 0; i < 6; i += 2) {
		assert_int_equal(lb_post_recv(&lb->ep[1], 20u + (uint32_t)i, dst[i], 100, dmr), 0);
		assert_int_equal(lb_post_recv(&lb->ep[1], 21u + (uint32_t)i, dst[i + 1], 100, dmr),
		                 0);
		lb_run(lb, 200000);
		for (int k = i; k < i + 2; k++) {
			assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 1);
			assert_int_equal(wc.status, RFW_WC_SUCCESS);
			assert_int_equal(wc.wr_id, 20u + (uint32_t)k);
		}
	}
	lb_run(lb, 10000000);
	for (int i = 0; i < 6; i++) {
		assert_memory_equal(src[i], dst[i], 100);
		assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);
	}
	assert_int_equal(rfw_poll_cq(lb->ep[1].rcq, 1, &wc), 0);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_RTS);
	lb_destroy(lb);
}

/* ---- the BDP cap ---- */

static void test_sr_bdp_cap(void **s)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	struct loop *lb = make(RFW_TRANSPORT_SR, RFW_TRANSPORT_SR);
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	uint64_t q0[RFW_CNT__COUNT];
	/* the default: 100 Gb/s x 10 us, plus (ack_every 64 + 2) MTUs */
	const uint64_t bdp = 125000 + 66 * 1024;
	struct rfw_wc wc;

	(void)s;
	lb_fill(src, sizeof(src), 8);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, src, sizeof(src), smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 10000000000ull);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(src, dst, sizeof(src));
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_true(q0[RFW_CNT_inflight_bytes_hwm] <= bdp);
	assert_true(q0[RFW_CNT_inflight_bytes_hwm] > bdp / 2);
	lb_destroy(lb);
}

/* ---- mode mismatch: refused on the first packet, nothing placed ---- */

static void mismatch(enum rfw_transport_mode m0, enum rfw_transport_mode m1)
{
	static uint8_t src[8192], dst[8192];
	struct loop *lb = make(m0, m1);
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	lb_fill(src, sizeof(src), 1);
	memset(dst, 0, sizeof(dst));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, src, sizeof(src), smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 10000000000ull);
	for (size_t i = 0; i < sizeof(dst); i++)
		assert_int_equal(dst[i], 0);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_not_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_true(q1[RFW_CNT_rx_transport_mismatch] >= 1);
	assert_int_equal(q1[RFW_CNT_rx_write_requests], 0);
	lb_destroy(lb);
}

static void test_mode_mismatch(void **s)
{
	(void)s;
	mismatch(RFW_TRANSPORT_SR, RFW_TRANSPORT_GBN);
	mismatch(RFW_TRANSPORT_GBN, RFW_TRANSPORT_SR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mode_attribute),
	    cmocka_unit_test(test_lose_each_gbn),
	    cmocka_unit_test(test_lose_each_sr),
	    cmocka_unit_test(test_sr_send_imm_exactly_once),
	    cmocka_unit_test(test_sr_read_missing_part),
	    cmocka_unit_test(test_sr_atomic_once),
	    cmocka_unit_test(test_sr_rnr),
	    cmocka_unit_test(test_sr_rnr_write_imm),
	    cmocka_unit_test(test_sr_bdp_cap),
	    cmocka_unit_test(test_sr_traffic_in_rtr),
	    cmocka_unit_test(test_sr_sends_beyond_rq),
	    cmocka_unit_test(test_mode_mismatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
