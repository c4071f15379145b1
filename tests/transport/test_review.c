/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regression tests for the go-back-N requester, responder and completer defects of issue 13
 * (an independent review against IBA vol. 1 ch. 9-11 and Linux rxe). Each test failed on the
 * code before its fix. Over the loopback host (loop.h); where a test needs a packet our own
 * requester never sends, it rewrites or injects the IB bytes directly.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/mman.h>

#include "loop.h"
#include "wire/ib_hdr.h"
#include "transport/rfw_int.h" /* white box: struct rfw_mr's valid flag (13.12) */

#define BTH_LEN 12

static int poll_one(struct rfw_cq *cq, struct rfw_wc *wc)
{
	return rfw_poll_cq(cq, 1, wc);
}

static uint8_t aeth_syn(const uint8_t *ib)
{
	return ib[BTH_LEN];
}

static bool is_pos_ack(const uint8_t *ib)
{
	return ib[0] == RFW_OP_RC_ACKNOWLEDGE &&
	       rfw_aeth_syndrome_type(aeth_syn(ib)) == RFW_AETH_ACK;
}

/* ---- 13.1: a duplicate SEND/WRITE is re-ACKed with a SEND/WRITE PSN, never a READ's ---- */

struct ack_watch {
	uint32_t bad_lo, bad_hi; /* PSNs no positive ACK may carry (a READ's or an atomic's) */
	int bad_acks;
	int drop_acks, drop_resps; /* drop this many first ACKs / READ or atomic responses */
};

static enum lb_verdict ack_watch_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct ack_watch *w = arg;
	uint32_t psn = rfw_bth_psn(ib);

	(void)lb;
	(void)len;
	if (from != 1)
		return LB_PASS;
	if (is_pos_ack(ib) && rfw_psn_cmp(psn, w->bad_lo) >= 0 && rfw_psn_cmp(psn, w->bad_hi) <= 0)
		w->bad_acks++;
	if (ib[0] == RFW_OP_RC_ACKNOWLEDGE && w->drop_acks > 0) {
		w->drop_acks--;
		return LB_DROP;
	}
	if (ib[0] != RFW_OP_RC_ACKNOWLEDGE && w->drop_resps > 0) {
		w->drop_resps--;
		return LB_DROP;
	}
	return LB_PASS;
}

/*
 * WRITE (PSN 100) then a READ or an atomic (PSN 101..): the WRITE's ACK and the response are
 * lost, the timer resends both. The duplicate WRITE must be re-ACKed with 100, not with the
 * READ's or atomic's PSN (IBA 9.7.5.1.3: those are acknowledged by their own responses only;
 * an rxe requester completes a one-packet READ or an atomic without data on such an ACK).
 */
static void dup_write_after(enum rfw_wr_opcode op)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[4096], b[4096];
	static uint64_t t, r;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_mr *tmr = lb_mr(&lb->ep[1], &t, 8);
	struct rfw_mr *rmr = lb_mr(&lb->ep[0], &r, 8);
	struct ack_watch w = {.bad_lo = 101, .bad_hi = 101, .drop_acks = 1, .drop_resps = 1};
	struct rfw_sge sge = {(uint64_t)(uintptr_t)&r, 8, rfw_mr_lkey(rmr)};
	struct rfw_send_wr wr = {.wr_id = 2,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = op,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	lb->filter = ack_watch_fn;
	lb->farg = &w;
	lb_fill(b, sizeof(b), 3);
	t = 7;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, 64, amr,
	                            (uint64_t)(uintptr_t)b + 2048, rfw_mr_rkey(bmr)),
	                 0);
	if (op == RFW_WR_RDMA_READ) {
		sge = (struct rfw_sge){(uint64_t)(uintptr_t)a + 1024, 512, rfw_mr_lkey(amr)};
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)b;
		wr.wr.rdma.rkey = rfw_mr_rkey(bmr);
	} else {
		wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&t;
		wr.wr.atomic.rkey = rfw_mr_rkey(tmr);
		wr.wr.atomic.compare_add = 1;
	}
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	if (op == RFW_WR_RDMA_READ)
		assert_memory_equal(a + 1024, b, 512);
	else
		assert_int_equal(r, 7);
	assert_int_equal(w.drop_acks + w.drop_resps, 0);
	assert_int_equal(w.bad_acks, 0);
	lb_destroy(lb);
}

static void test_dup_write_ack_psn(void **s)
{
	(void)s;
	dup_write_after(RFW_WR_RDMA_READ);
	dup_write_after(RFW_WR_ATOMIC_FETCH_AND_ADD);
}

/* ---- 13.3: a WQE completed locally behind an outstanding one is retired ---- */

/* An MR LOCAL_INV / SEND with Invalidate may invalidate. */
static struct rfw_mr *inv_mr(struct lb_ep *e, void *buf, size_t len)
{
	return lb_mr_fr(e, buf, len);
}

static int post_local_inv(struct lb_ep *e, uint64_t id, uint32_t key, unsigned flags)
{
	struct rfw_send_wr wr = {.wr_id = id,
	                         .opcode = RFW_WR_LOCAL_INV,
	                         .send_flags = RFW_SEND_SIGNALED | flags,
	                         .invalidate_rkey = key};
	struct rfw_send_wr *bad;

	return rfw_post_send(e->qp, &wr, &bad, e->lb->now);
}

/*
 * WRITE then LOCAL_INV (or a WRITE with a bad L_Key): the second completes at once, locally,
 * while the WRITE waits for its ACK. When the ACK retires the WRITE, the done WQE behind it
 * must be retired too (its CQE, and for the bad key the QP to ERR, IBA 10.8.3.3), as rxe's
 * completer does on every run.
 */
static void local_behind(bool bad_key)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[256], b[256], x[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_mr *xmr = inv_mr(&lb->ep[0], x, sizeof(x));
	struct rfw_sge sge = {(uint64_t)(uintptr_t)a, 64, 0x7777};
	struct rfw_send_wr wr = {.wr_id = 2,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, 64, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)b + 64;
	wr.wr.rdma.rkey = rfw_mr_rkey(bmr);
	if (bad_key)
		assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	else
		assert_int_equal(post_local_inv(&lb->ep[0], 2, rfw_mr_lkey(xmr), 0), 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, bad_key ? RFW_WC_LOC_PROT_ERR : RFW_WC_SUCCESS);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), bad_key ? RFW_QPS_ERR : RFW_QPS_RTS);
	lb_destroy(lb);
}

static void test_local_done_behind_outstanding(void **s)
{
	(void)s;
	local_behind(false);
	local_behind(true);
}

/* ---- 13.4: go-back-N across an already executed LOCAL_INV ---- */

struct gbn_inv_filter {
	int dropped_last, dropped_ack;
};

static enum lb_verdict gbn_inv_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct gbn_inv_filter *f = arg;

	(void)lb;
	(void)len;
	/* The WRITE's LAST (PSN 101) once, then the ACK of its retransmission. */
	if (from == 0 && rfw_bth_psn(ib) == 101 && !f->dropped_last) {
		f->dropped_last = 1;
		return LB_DROP;
	}
	if (from == 1 && is_pos_ack(ib) && rfw_bth_psn(ib) == 101 && !f->dropped_ack) {
		f->dropped_ack = 1;
		return LB_DROP;
	}
	return LB_PASS;
}

/*
 * WRITE A (PSNs 100-101), LOCAL_INV, WRITE B (102); A's LAST is lost, B draws a NAK for 101.
 * Going back N resends A's LAST, then must go on past the LOCAL_INV (executed once, IBA
 * 10.8.3.3, not again) to B. With the ACK of the retransmission lost too, only B's ACK can
 * complete the three: with the local ACK timer off (timeout 0) the QP hung.
 */
static void test_gbn_across_local_inv(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[4096], b[4096], x[64];
	struct rfw_mr *amr, *bmr, *xmr;
	struct gbn_inv_filter f = {0};
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.timeout = 0; /* no local ACK timer: nothing but the protocol moves the QP */
	lb = lb_create(&c);
	amr = lb_mr(&lb->ep[0], a, sizeof(a));
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	xmr = inv_mr(&lb->ep[0], x, sizeof(x));
	lb->filter = gbn_inv_fn;
	lb->farg = &f;
	lb_fill(a, sizeof(a), 11);
	memset(b, 0, sizeof(b));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, 2048, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(post_local_inv(&lb->ep[0], 2, rfw_mr_lkey(xmr), 0), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 3, a + 2048, 512, amr,
	                            (uint64_t)(uintptr_t)b + 2048, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 1000000000);
	assert_true(f.dropped_last); /* (the ACK of 101 is coalesced into B's once fixed) */
	for (uint64_t id = 1; id <= 3; id++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.wr_id, id);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_memory_equal(a, b, 2560);
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_packet_seq_err], 1);
	lb_destroy(lb);
}

/* ---- 13.7: only fast-registration MRs may be invalidated ---- */

/*
 * IBA 10.6 (and rxe, which refuses any MR but IB_MR_TYPE_MEM_REG): LOCAL_INV and SEND with
 * Invalidate invalidate fast-registration MRs only. Naming an ordinary MR: LOCAL_INV completes
 * with a local protection error, SEND with Invalidate draws NAK invalid request.
 */
static void test_invalidate_needs_fast_reg(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[64], b[64], v[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_mr *vmr = lb_mr(&lb->ep[1], v, sizeof(v)); /* an ordinary MR */
	struct rfw_sge sge = {(uint64_t)(uintptr_t)a, 16, rfw_mr_lkey(amr)};
	struct rfw_send_wr wr = {.wr_id = 1,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_SEND_WITH_INV,
	                         .send_flags = RFW_SEND_SIGNALED,
	                         .invalidate_rkey = rfw_mr_rkey(vmr)};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(lb_post_recv(&lb->ep[1], 2, b, sizeof(b), bmr), 0);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_INV_REQ_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	lb_destroy(lb);

	lb = lb_create(&c);
	amr = lb_mr(&lb->ep[0], a, sizeof(a));
	assert_int_equal(post_local_inv(&lb->ep[0], 3, rfw_mr_lkey(amr), 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 3);
	assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	lb_destroy(lb);
}

/* ---- 13.8: a READ whose MR goes away mid-response ---- */

static const uint8_t *ring_at(struct loop *lb, uint32_t i)
{
	return lb->ring[i % LB_RING].data;
}

/*
 * READ of 16 packets, then a WRITE; the responder has queued the READ's response stream and
 * the WRITE's ACK when the READ's MR is deregistered after two response packets. The rest of
 * the READ must become one NAK remote access error at the PSN of the packet it replaces, with
 * the responder's MSN (not 0), the responder QP goes to ERR (class C, IBA 9.9.3.1) and nothing
 * queued behind it (the WRITE's ACK) goes out after the NAK.
 */
static void test_read_mr_gone_mid_response(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[16384], b[16384], d[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr =
	    rfw_reg_mr(lb->ep[1].pd, b, sizeof(b), RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_READ);
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], d, sizeof(d));
	struct rfw_wc wc;
	uint32_t p0;
	const uint8_t *nak;

	(void)s;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 2, a, 64, amr,
	                            (uint64_t)(uintptr_t)d, rfw_mr_rkey(dmr)),
	                 0);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 2);
	lb_deliver_all(lb); /* READ executed (response queued), WRITE executed (ACK queued) */
	assert_int_equal(rfw_qp_tx_burst(lb->ep[1].qp, 2, 0), 2);
	assert_int_equal(rfw_dereg_mr(bmr), 0);
	p0 = lb->prod;
	rfw_qp_tx_burst(lb->ep[1].qp, 64, 0);
	assert_int_equal(lb->prod - p0, 1); /* the NAK, and nothing after it */
	nak = ring_at(lb, p0);
	assert_int_equal(nak[0], RFW_OP_RC_ACKNOWLEDGE);
	assert_int_equal(aeth_syn(nak), RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_REMOTE_ACCESS_ERR));
	assert_int_equal(rfw_bth_psn(nak), 102);
	assert_int_not_equal(rfw_get_be24(nak + BTH_LEN + 1), 0); /* MSN */
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	lb_deliver_all(lb);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, RFW_WC_REM_ACCESS_ERR);
	lb_destroy(lb);
}

/* ---- 13.9: a full response ring never drops a NAK ---- */

static void inject(struct loop *lb, int to, const struct lb_pkt *src, uint32_t psn)
{
	static struct lb_pkt tmp;

	tmp = *src;
	tmp.to = to;
	rfw_bth_set_psn(tmp.data, psn);
	lb_deliver(lb, &tmp);
}

/* The packets ep1 produces now: whether one is a NAK with @syn at @psn. */
static bool resp_sends_nak(struct loop *lb, uint8_t syn, uint32_t psn)
{
	uint32_t p0 = lb->prod;
	bool seen = false;

	while (rfw_qp_tx_burst(lb->ep[1].qp, 16, lb->now))
		;
	for (uint32_t i = p0; i != lb->prod; i++) {
		const uint8_t *ib = ring_at(lb, i);

		if (ib[0] == RFW_OP_RC_ACKNOWLEDGE && aeth_syn(ib) == syn && rfw_bth_psn(ib) == psn)
			seen = true;
	}
	return seen;
}

/*
 * A one-packet READ (PSN 100) delivered once and then 60 times more as a duplicate: each
 * duplicate queues a replay, more than the response ring holds. A NAK queued then (sequence
 * error for a PSN ahead, or a fatal remote access error for a bad R_Key) must still go out
 * (IBA 9.7.5.1.2: the NAK is what makes the requester go back; a lost fatal NAK turns
 * REM_ACCESS_ERR into RETRY_EXC_ERR at the requester).
 */
static void full_ring_nak(bool fatal)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[64], b[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	static struct lb_pkt req;
	uint64_t q1[RFW_CNT__COUNT];

	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 1);
	req = lb->ring[lb->cons % LB_RING];
	lb->cons = lb->prod;
	for (int i = 0; i < 61; i++)
		inject(lb, 1, &req, 100);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_true(q1[RFW_CNT_read_replays] == 60);
	if (fatal) {
		req.data[BTH_LEN + 8] ^= 0x55; /* RETH R_Key */
		inject(lb, 1, &req, 101);
		assert_true(resp_sends_nak(
		    lb, RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_REMOTE_ACCESS_ERR), 101));
		assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	} else {
		inject(lb, 1, &req, 105);
		assert_true(
		    resp_sends_nak(lb, RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_PSN_SEQ_ERR), 101));
	}
	lb_destroy(lb);
}

static void test_full_ring_keeps_nak(void **s)
{
	(void)s;
	full_ring_nak(true);
	full_ring_nak(false);
}

/* ---- 13.10: max_dest_rd_atomic ---- */

/* Reconnect ep1 (RESET, then INIT/RTR/RTS) with max_dest_rd_atomic = max_rd_atomic = @n. */
static void reconnect_ep1(struct loop *lb, const struct lb_cfg *c0, uint8_t n)
{
	struct lb_cfg c = *c0;
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RESET};
	struct rfw_ah_attr ah = {0};

	c.max_rd_atomic = n;
	lb_ah(lb, 1, &ah); /* the path's addresses: packets from elsewhere are dropped */
	assert_int_equal(rfw_modify_qp(lb->ep[1].qp, &a, RFW_QP_STATE), 0);
	assert_int_equal(lb_connect_av(lb->ep[1].qp, rfw_qp_num(lb->ep[0].qp), &c, c.psn[1],
	                               c.psn[0], RFW_TRANSPORT_GBN, &ah),
	                 0);
}

struct first_req {
	uint8_t opcode;
	struct lb_pkt pkt;
	int seen;
};

static enum lb_verdict first_req_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct first_req *f = arg;

	(void)lb;
	if (from == 0 && ib[0] == f->opcode && !f->seen++) {
		memcpy(f->pkt.data, ib, len);
		f->pkt.len = len;
	}
	return LB_PASS;
}

/*
 * IBA 9.7.5.1 / 10.2.4 (and rxe, ERR_TOO_MANY_RDMA_ATM_REQ): a responder with
 * max_dest_rd_atomic 0 answers READ and atomic requests with NAK invalid request (it was
 * coerced to 1). A READ that needs a resource still answering an earlier READ (the requester
 * exceeds max_dest_rd_atomic) is an invalid request too, not a silent overwrite. A duplicate
 * whose resource was reused is dropped, and counted.
 */
static uint8_t mdra_a[8192], mdra_b[8192];

/* READ of @len bytes at offset @off, wr_id @id, from ep0 into ep1's memory. */
static void mdra_read(struct loop *lb, struct rfw_mr *amr, struct rfw_mr *bmr, uint64_t id,
                      uint32_t off, uint32_t len)
{
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, id, mdra_a + off, len, amr,
	                            (uint64_t)(uintptr_t)mdra_b + off, rfw_mr_rkey(bmr)),
	                 0);
}

/* 0: no READ/atomic accepted at all. */
static void mdra_zero(struct lb_cfg c)
{
	struct loop *lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], mdra_a, sizeof(mdra_a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], mdra_b, sizeof(mdra_b));
	struct rfw_qp_attr qa;
	struct rfw_wc wc;

	reconnect_ep1(lb, &c, 0);
	assert_int_equal(rfw_query_qp(lb->ep[1].qp, &qa), 0);
	assert_int_equal(qa.max_dest_rd_atomic, 0);
	mdra_read(lb, amr, bmr, 1, 0, 64);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_INV_REQ_ERR);
	lb_destroy(lb);
}

/* 1 at the responder, 4 at the requester: the second READ finds the resource busy. */
static void mdra_busy(struct lb_cfg c)
{
	struct loop *lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], mdra_a, sizeof(mdra_a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], mdra_b, sizeof(mdra_b));
	struct rfw_wc wc;

	reconnect_ep1(lb, &c, 1);
	mdra_read(lb, amr, bmr, 1, 0, 4096);
	mdra_read(lb, amr, bmr, 2, 4096, 4096);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, RFW_WC_REM_INV_REQ_ERR);
	lb_destroy(lb);
}

/*
 * 1 on both sides: READ 1, READ 2, then a stale copy of READ 1 arrives: dropped, counted. Then
 * a replay of READ 3 still queued when READ 4 (legitimately) takes its resource: fine.
 */
static void mdra_stale_and_replay(struct lb_cfg c)
{
	struct first_req f = {.opcode = RFW_OP_RC_RDMA_READ_REQUEST};
	uint64_t q1[RFW_CNT__COUNT];
	struct loop *lb;
	struct rfw_mr *amr, *bmr;
	struct rfw_wc wc;

	c.max_rd_atomic = 1;
	lb = lb_create(&c);
	amr = lb_mr(&lb->ep[0], mdra_a, sizeof(mdra_a));
	bmr = lb_mr(&lb->ep[1], mdra_b, sizeof(mdra_b));
	lb->filter = first_req_fn;
	lb->farg = &f;
	for (uint64_t id = 1; id <= 2; id++)
		mdra_read(lb, amr, bmr, id, 0, 4096);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	inject(lb, 1, &f.pkt, 100);
	assert_false(resp_sends_nak(lb, 0, 100));
	assert_int_equal(lb->prod, lb->cons); /* nothing sent */
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_dup_no_resource], 1);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_RTS);

	f.seen = 0;
	mdra_read(lb, amr, bmr, 3, 0, 4096);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	inject(lb, 1, &f.pkt, rfw_bth_psn(f.pkt.data)); /* a duplicate of READ 3: replay queued */
	mdra_read(lb, amr, bmr, 4, 0, 4096);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, lb->now), 1);
	lb_deliver_all(lb); /* READ 4 arrives before the replay of READ 3 has gone */
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 4);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_RTS);
	lb_destroy(lb);
}

/*
 * A READ's requests outstanding (rfw_read_chunks_out), against chunks counted one by one in
 * plain 64-bit PSNs: the READ's requests cover [k * span, min((k + 1) * span, n)) PSNs from its
 * first (IBA 9.7.1: a long READ goes as several); requested up to @sent, answered below @done
 * (negative: comp.psn before the READ). A request holds its responder resource (IBA 9.7.4.1.5)
 * until its last response.
 */
static uint32_t chunks_oracle(uint64_t span, uint64_t sent, int64_t done)
{
	uint32_t n = 0;

	for (uint64_t lo = 0; lo < sent; lo += span) {
		uint64_t hi = lo + span < sent ? lo + span : sent;

		n += (int64_t)hi > (done > 0 ? done : 0);
	}
	return n;
}

/* Every first PSN around the wrap, every requested span up to a READ of 2^23 PSNs (2 GiB at
 * MTU 256: the one signed 24-bit arithmetic reads as -2^23), comp.psn from 2^23 - 1 before it
 * to its end. */
static void test_read_chunks_out(void **s)
{
	const uint64_t span = 1u << 22, big = 1u << 23;
	const uint32_t firsts[] = {0,
	                           1,
	                           100,
	                           (1u << 23) - 1,
	                           1u << 23,
	                           (1u << 24) - 1,
	                           (1u << 24) - span,
	                           (1u << 24) - big + 7};
	const uint64_t sents[] = {0, 1, 2, span - 1, span, span + 1, big - 1, big};
	struct rfw_qp *qp = calloc(1, sizeof(*qp));
	struct rfw_swqe w = {.psn_valid = true};
	unsigned checked = 0;

	(void)s;
	assert_non_null(qp);
	for (size_t f = 0; f < sizeof(firsts) / sizeof(firsts[0]); f++) {
		for (size_t k = 0; k < sizeof(sents) / sizeof(sents[0]); k++) {
			const int64_t sent = (int64_t)sents[k];
			const int64_t dones[] = {
			    -(int64_t)big + 1, -1,       0,   1, (int64_t)span - 1, (int64_t)span,
			    (int64_t)span + 1, sent - 1, sent};

			for (size_t d = 0; d < sizeof(dones) / sizeof(dones[0]); d++) {
				if (dones[d] > sent)
					continue;
				w.first_psn = firsts[f];
				qp->comp.psn = (uint32_t)(firsts[f] + dones[d]) & RFW_PSN_MASK;
				assert_int_equal(rfw_read_chunks_out(qp, &w,
				                                     (uint32_t)(firsts[f] + sent) &
				                                         RFW_PSN_MASK),
				                 chunks_oracle(span, (uint64_t)sent, dones[d]));
				checked++;
			}
		}
	}
	assert_true(checked > 400);
	/* The 2 GiB READ at MTU 256 with its first request answered and one response of its
	 * second in: one request outstanding, which the signed form counted as none. */
	w.first_psn = 5;
	qp->comp.psn = 5 + (uint32_t)span + 1;
	assert_int_equal(rfw_read_chunks_out(qp, &w, 5 + (uint32_t)big), 1);
	w.psn_valid = false;
	assert_int_equal(rfw_read_chunks_out(qp, &w, 5 + (uint32_t)big), 0);
	free(qp);
}

/*
 * The requester's running count of READ requests and atomics outstanding (req.rd_end, which
 * stands in for the walk in rd_atomic_in_flight): READs that complete leave nothing counted.
 * comp.psn passing an entry retires it as well, but an entry left behind would read as ahead
 * of comp.psn again after 2^23 PSNs of other traffic (serial arithmetic) and hold the
 * initiator depth or a FENCE for ever, which no run of that length here would show.
 */
static void test_rd_count_retired(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], mdra_a, sizeof(mdra_a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], mdra_b, sizeof(mdra_b));
	const struct rfw_req *r = &lb->ep[0].qp->req;
	struct rfw_wc wc;

	(void)s;
	mdra_read(lb, amr, bmr, 1, 0, 64);
	mdra_read(lb, amr, bmr, 2, 64, 4096);
	lb_run(lb, 100000000);
	for (uint64_t id = 1; id <= 2; id++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.wr_id, id);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_true(r->rd_ok); /* counted, not walked: no loss, no rewind */
	assert_int_equal(r->rd_n, 0);
	lb_destroy(lb);
}

static void test_max_dest_rd_atomic(void **s)
{
	(void)s;
	mdra_zero(lb_default_cfg());
	mdra_busy(lb_default_cfg());
	mdra_stale_and_replay(lb_default_cfg());
}

/* ---- 13.11: length and syndrome checks ---- */

static enum lb_verdict big_reth_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	(void)lb;
	(void)len;
	(void)arg;
	if (from == 0 && ib[0] == RFW_OP_RC_RDMA_WRITE_FIRST)
		rfw_put_be32(ib + BTH_LEN + 12, 0x80000000u + 1024); /* DMA length > 2^31 */
	return LB_PASS;
}

/* A WRITE whose RETH DMA length exceeds 2^31 (IBA 9.7.5.1, rxe check_length): invalid request,
 * NAKed at its FIRST packet with nothing written, even into an MR that large. */
static void write_too_long(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	size_t big = (1ull << 31) + 8192;
	uint8_t *dst = mmap(NULL, big, PROT_READ | PROT_WRITE,
	                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	static uint8_t a[2048];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *dmr;
	struct rfw_wc wc;
	uint8_t zero[2048] = {0};

	assert_true(dst != MAP_FAILED);
	dmr = lb_mr(&lb->ep[1], dst, big);
	lb_fill(a, sizeof(a), 5);
	lb->filter = big_reth_fn;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, 2048, amr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_INV_REQ_ERR);
	assert_memory_equal(dst, zero, sizeof(zero));
	lb_destroy(lb);
	munmap(dst, big);
}

/* A SEND_LAST without payload (IBA 9.7.5.1: LAST carries 1..PMTU bytes; rxe check_length). */
static void empty_send_last(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[2048], b[4096];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	static struct lb_pkt last;
	struct rfw_wc wc;

	assert_int_equal(lb_post_recv(&lb->ep[1], 9, b, sizeof(b), bmr), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, a, 2048, amr, 0, 0), 0);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 2);
	last = lb->ring[(lb->prod - 1) % LB_RING];
	assert_int_equal(last.data[0], RFW_OP_RC_SEND_LAST);
	lb->prod--; /* the LAST never leaves */
	lb_deliver_all(lb);
	last.len = BTH_LEN; /* no payload, no pad */
	last.data[1] &= (uint8_t)~0x30;
	inject(lb, 1, &last, 101);
	assert_true(
	    resp_sends_nak(lb, RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_INVALID_REQUEST), 101));
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_not_equal(wc.status, RFW_WC_SUCCESS);
	lb_destroy(lb);
}

struct syn_rewrite {
	uint8_t opcode, syn;
	int count; /* rewrite this many (-1: all) */
};

static enum lb_verdict syn_rewrite_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                      void *arg)
{
	struct syn_rewrite *r = arg;

	(void)lb;
	(void)len;
	if (from == 1 && ib[0] == r->opcode && r->count != 0) {
		ib[BTH_LEN] = r->syn;
		if (r->count > 0)
			r->count--;
	}
	return LB_PASS;
}

/* A READ response FIRST/LAST/ONLY must carry an ACK syndrome (IBA 9.7.5.2): one with a NAK
 * syndrome is not data for the READ; dropped as a bad response (the retry recovers). */
static void read_resp_nak_syndrome(enum rfw_transport_mode m)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[512], b[512];
	struct rfw_mr *amr, *bmr;
	struct syn_rewrite r = {.opcode = RFW_OP_RC_RDMA_READ_RESPONSE_ONLY,
	                        .syn = RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_INVALID_REQUEST),
	                        .count = 1};
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;

	c.mode[0] = c.mode[1] = m;
	lb = lb_create(&c);
	amr = lb_mr(&lb->ep[0], a, sizeof(a));
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	lb_fill(b, sizeof(b), 9);
	lb->filter = syn_rewrite_fn;
	lb->farg = &r;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(a, b, sizeof(b));
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_rx_bad_response], 1);
	assert_true(q0[RFW_CNT_retransmitted_packets] >= 1);
	lb_destroy(lb);
}

/* A NAK with a reserved code (here 31): remote operational error at once, as rxe, not
 * dropped until the retries run out (RETRY_EXC_ERR). */
static void unknown_nak_code(enum rfw_transport_mode m)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[64], b[64];
	struct rfw_mr *amr, *bmr;
	struct syn_rewrite r = {.opcode = RFW_OP_RC_ACKNOWLEDGE,
	                        .syn = RFW_AETH_SYNDROME(RFW_AETH_NAK, 31),
	                        .count = -1};
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;

	c.timeout = 5;
	c.mode[0] = c.mode[1] = m;
	lb = lb_create(&c);
	amr = lb_mr(&lb->ep[0], a, sizeof(a));
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	lb->filter = syn_rewrite_fn;
	lb->farg = &r;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_OP_ERR);
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 0);
	lb_destroy(lb);
}

static void test_length_and_syndrome_checks(void **s)
{
	(void)s;
	write_too_long();
	empty_send_last();
	for (int m = RFW_TRANSPORT_GBN; m <= RFW_TRANSPORT_SR; m++) {
		read_resp_nak_syndrome((enum rfw_transport_mode)m);
		unknown_nak_code((enum rfw_transport_mode)m);
	}
}

/* ---- 13.12: FENCE on LOCAL_INV, rfw_modify_qp attribute checks, MRs looked up per copy ---- */

struct fence_watch {
	struct rfw_mr *mr; /* must stay valid while the READ's responses land in it */
	int resps, invalid_at_resp;
};

static enum lb_verdict fence_watch_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                      void *arg)
{
	struct fence_watch *f = arg;

	(void)lb;
	(void)len;
	if (from == 1 && rfw_ib_opcode_info(ib[0]) &&
	    (rfw_ib_opcode_info(ib[0])->flags & RFW_OPF_READ)) {
		f->resps++;
		if (!f->mr->valid)
			f->invalid_at_resp++;
	}
	return LB_PASS;
}

/* IBA 10.8.3.3: a fenced LOCAL_INV waits for the READs before it - it must not invalidate the
 * MR a READ response is still being written into. */
static void fenced_local_inv(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[16384], b[16384];
	struct rfw_mr *amr = lb_mr_fr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct fence_watch f = {.mr = amr};
	struct rfw_wc wc;

	lb_fill(b, sizeof(b), 21);
	lb->filter = fence_watch_fn;
	lb->farg = &f;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(post_local_inv(&lb->ep[0], 2, rfw_mr_lkey(amr), RFW_SEND_FENCE), 0);
	lb_run(lb, 100000000);
	assert_int_equal(f.resps, 16);
	assert_int_equal(f.invalid_at_resp, 0);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(a, b, sizeof(b));
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_false(amr->valid);
	lb_destroy(lb);
}

/* As ib_modify_qp_is_ok: only the attributes a transition allows (IBA 11.2.5, table of
 * required and optional attributes); no state bit means the current state again. */
static void modify_qp_attrs(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct rfw_qp *qp = lb->ep[0].qp;
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RTS, .path_mtu = RFW_MTU_256};

	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_PATH_MTU), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_SQ_PSN), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_RQ_PSN), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_DEST_QPN), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_TRANSPORT_MODE), -EINVAL);
	a.qp_access_flags = c.access;
	a.min_rnr_timer = 3;
	assert_int_equal(
	    rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS | RFW_QP_MIN_RNR_TIMER), 0);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_MIN_RNR_TIMER), 0);
	assert_int_equal(rfw_query_qp(qp, &a), 0);
	assert_int_equal(a.path_mtu, c.mtu); /* untouched by the refused calls */
	a.qp_state = RFW_QPS_SQD;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	a.timeout = 12;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_TIMEOUT), 0); /* SQD->SQD */
	a.qp_state = RFW_QPS_RTS;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_TIMEOUT), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	assert_int_equal(rfw_modify_qp(NULL, &a, RFW_QP_STATE), -EINVAL);
	lb_destroy(lb);
}

static enum lb_verdict drop_first_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                     void *arg)
{
	int *n = arg;

	(void)lb;
	(void)ib;
	(void)len;
	return (from == 0 && (*n)++ == 0) ? LB_DROP : LB_PASS;
}

/* The local MR of a WQE deregistered between its first transmission and its retransmission
 * (or before its READ response lands): a local protection error, never a copy from or to the
 * memory the MR covered (IBA 10.6: every access is checked against a valid MR). */
static void local_mr_gone(bool read)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[4096], b[4096];
	struct rfw_mr *amr = rfw_reg_mr(lb->ep[0].pd, a, sizeof(a), RFW_ACCESS_LOCAL_WRITE);
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	uint8_t zero[4096] = {0};
	int n = 0;
	struct rfw_wc wc;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	(read ? lb_fill(b, sizeof(b), 2) : lb_fill(a, sizeof(a), 2));
	if (!read) {
		lb->filter = drop_first_fn;
		lb->farg = &n;
	}
	assert_int_equal(lb_post_op(&lb->ep[0], read ? RFW_WR_RDMA_READ : RFW_WR_RDMA_WRITE, 1, a,
	                            sizeof(a), amr, (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 500); /* sent, not yet delivered */
	assert_int_equal(rfw_dereg_mr(amr), 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
	assert_memory_equal(read ? a : b, zero, sizeof(zero));
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	lb_destroy(lb);
}

/* The receive WQE's MR deregistered after a SEND's FIRST packet was placed: the MIDDLE must
 * not be copied into it; the WQE completes in error, NAK remote operational error. */
static void recv_mr_gone(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[3072], b[3072];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = rfw_reg_mr(lb->ep[1].pd, b, sizeof(b), RFW_ACCESS_LOCAL_WRITE);
	static struct lb_pkt tmp;
	uint8_t zero[2048] = {0};
	struct rfw_wc wc;

	lb_fill(a, sizeof(a), 4);
	memset(b, 0, sizeof(b));
	assert_int_equal(lb_post_recv(&lb->ep[1], 7, b, sizeof(b), bmr), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, a, sizeof(a), amr, 0, 0), 0);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 3);
	tmp = lb->ring[lb->cons++ % LB_RING];
	lb_deliver(lb, &tmp); /* FIRST placed */
	assert_int_equal(rfw_dereg_mr(bmr), 0);
	lb_deliver_all(lb);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	assert_memory_equal(b + 1024, zero, sizeof(zero));
	assert_true(
	    resp_sends_nak(lb, RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_REMOTE_OP_ERR), 101));
	lb_destroy(lb);
}

static void test_fence_modify_local_mr(void **s)
{
	(void)s;
	fenced_local_inv();
	local_mr_gone(false);
	local_mr_gone(true);
	recv_mr_gone();
	modify_qp_attrs(); /* last: the old code dereferenced NULL */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dup_write_ack_psn),
	    cmocka_unit_test(test_local_done_behind_outstanding),
	    cmocka_unit_test(test_gbn_across_local_inv),
	    cmocka_unit_test(test_invalidate_needs_fast_reg),
	    cmocka_unit_test(test_read_mr_gone_mid_response),
	    cmocka_unit_test(test_full_ring_keeps_nak),
	    cmocka_unit_test(test_max_dest_rd_atomic),
	    cmocka_unit_test(test_read_chunks_out),
	    cmocka_unit_test(test_rd_count_retired),
	    cmocka_unit_test(test_length_and_syndrome_checks),
	    cmocka_unit_test(test_fence_modify_local_mr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
