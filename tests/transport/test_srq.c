/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues (transport/srq.c) over the in-test loopback host: two QP pairs, the
 * receiving QPs of endpoint 1 on one SRQ. What ibv_create_srq(3) / ibv_post_srq_recv(3) /
 * ibv_modify_srq(3) promise: messages of either QP take the SRQ's WQEs in posting order, each
 * completion names the QP that received it, an empty SRQ answers RNR and the message lands once
 * a WQE is posted, the armed limit fires once, a QP on an SRQ refuses its own receives, the
 * SRQ cannot be destroyed under a QP, and a QP in error flushes only what it took. Then the
 * same under selective repeat with a lost first packet (messages placed by RSN, out of order),
 * and a WRITE with immediate held at the ePSN for a WQE, woken by a post to the SRQ.
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

#include "loop.h"

#define NBUF  6
#define BUFSZ 8192

struct srq_fix {
	struct loop *lb;
	struct rfw_srq *srq;
	struct rfw_qp *orig[2];
	struct rfw_qp *a[2], *b[2]; /* a[i] on endpoint 0 sends to b[i] on endpoint 1 */
	struct rfw_mr *smr, *rmr;
	uint8_t sbuf[BUFSZ];
	uint8_t rbuf[NBUF][BUFSZ];
	int limit_events;
};

static void on_limit(void *ctx, struct rfw_srq *srq)
{
	struct srq_fix *f = ctx;

	assert_ptr_equal(rfw_srq_context(srq), f);
	f->limit_events++;
}

static struct rfw_qp *make_qp(struct lb_ep *e, struct rfw_srq *srq)
{
	struct rfw_qp_init_attr qa = {.send_cq = e->scq, .recv_cq = e->rcq, .srq = srq};

	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = srq ? 0 : 16;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 2;
	return rfw_create_qp(e->pd, &qa);
}

static void fix_setup(struct srq_fix *f, const struct lb_cfg *c)
{
	struct rfw_srq_init_attr sa = {
	    .srq_context = f, .attr = {.max_wr = 4, .max_sge = 2}, .limit_reached = on_limit};

	memset(f, 0, sizeof(*f));
	f->lb = lb_create(c);
	assert_non_null(f->lb);
	f->srq = rfw_create_srq(f->lb->ep[1].pd, &sa);
	assert_non_null(f->srq);
	for (int i = 0; i < 2; i++) {
		struct rfw_ah_attr ah0 = {0}, ah1 = {0};

		f->orig[i] = f->lb->ep[i].qp;
		f->a[i] = make_qp(&f->lb->ep[0], NULL);
		f->b[i] = make_qp(&f->lb->ep[1], f->srq);
		assert_non_null(f->a[i]);
		assert_non_null(f->b[i]);
		lb_ah(f->lb, 0, &ah0);
		lb_ah(f->lb, 1, &ah1);
		assert_int_equal(
		    lb_connect_av(f->a[i], rfw_qp_num(f->b[i]), c, 300, 900, c->mode[0], &ah0), 0);
		assert_int_equal(
		    lb_connect_av(f->b[i], rfw_qp_num(f->a[i]), c, 900, 300, c->mode[1], &ah1), 0);
	}
	f->smr = lb_mr(&f->lb->ep[0], f->sbuf, sizeof(f->sbuf));
	f->rmr = lb_mr(&f->lb->ep[1], f->rbuf, sizeof(f->rbuf));
	lb_fill(f->sbuf, sizeof(f->sbuf), 7);
}

static void fix_teardown(struct srq_fix *f)
{
	assert_int_equal(rfw_destroy_srq(f->srq), EBUSY); /* QPs still on it */
	for (int i = 0; i < 2; i++) {
		rfw_destroy_qp(f->a[i]);
		rfw_destroy_qp(f->b[i]);
		f->lb->ep[i].qp = f->orig[i];
	}
	assert_int_equal(rfw_destroy_srq(f->srq), 0);
	lb_destroy(f->lb);
}

static int srq_post(struct srq_fix *f, uint64_t id)
{
	struct rfw_sge sge[2] = {{.addr = (uint64_t)(uintptr_t)f->rbuf[id % NBUF],
	                          .length = 1000,
	                          .lkey = rfw_mr_lkey(f->rmr)},
	                         {.addr = (uint64_t)(uintptr_t)f->rbuf[id % NBUF] + 1000,
	                          .length = BUFSZ - 1000,
	                          .lkey = rfw_mr_lkey(f->rmr)}};
	struct rfw_recv_wr wr = {.wr_id = id, .sg_list = sge, .num_sge = 2};
	struct rfw_recv_wr *bad = NULL;

	return rfw_post_srq_recv(f->srq, &wr, &bad);
}

/* Pair @i sends @len bytes (SEND, or SEND with immediate when @imm). */
static void send_on(struct srq_fix *f, int i, uint64_t id, uint32_t len, bool imm)
{
	f->lb->ep[0].qp = f->a[i];
	f->lb->ep[1].qp = f->b[i];
	assert_int_equal(lb_post_op(&f->lb->ep[0], imm ? RFW_WR_SEND_WITH_IMM : RFW_WR_SEND, id,
	                            f->sbuf, len, f->smr, 0, 0),
	                 0);
}

/* The one receive completion expected: WQE @wr_id on QP b[@i], @len bytes, data intact. */
static void expect_recv(struct srq_fix *f, int i, uint64_t wr_id, uint32_t len)
{
	struct rfw_wc wc;

	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.qp_num, rfw_qp_num(f->b[i]));
	assert_int_equal(wc.byte_len, len);
	assert_memory_equal(f->rbuf[wr_id % NBUF], f->sbuf, len);
	memset(f->rbuf[wr_id % NBUF], 0, BUFSZ);
}

static void drain_send_cq(struct srq_fix *f, int n)
{
	struct rfw_wc wc;

	for (int k = 0; k < n; k++) {
		assert_int_equal(rfw_poll_cq(f->lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_int_equal(rfw_poll_cq(f->lb->ep[0].scq, 1, &wc), 0);
}

static void test_srq_shared_in_order(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct srq_fix *f = calloc(1, sizeof(*f));
	struct rfw_recv_wr own = {.wr_id = 99}, *bad = NULL;
	struct rfw_srq_attr qa;
	uint64_t cnt[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	fix_setup(f, &c);
	/* A QP on an SRQ has no receive queue of its own (ibv_post_recv(3): EINVAL). */
	assert_int_equal(rfw_post_recv(f->b[0], &own, &bad, f->lb->now), EINVAL);
	for (uint64_t id = 1; id <= 3; id++)
		assert_int_equal(srq_post(f, id), 0);
	/* Arm the limit at 2: it fires when the count drops from 2 to 1, once. */
	assert_int_equal(
	    rfw_modify_srq(f->srq, &(struct rfw_srq_attr){.srq_limit = 2}, RFW_SRQ_LIMIT), 0);
	assert_int_equal(
	    rfw_modify_srq(f->srq, &(struct rfw_srq_attr){.max_wr = 8}, RFW_SRQ_MAX_WR),
	    EOPNOTSUPP);
	send_on(f, 0, 11, 100, false);
	lb_run(f->lb, 10000000);
	expect_recv(f, 0, 1, 100);
	assert_int_equal(f->limit_events, 0);
	send_on(f, 1, 12, 5000, false); /* five packets at MTU 1024 */
	lb_run(f->lb, 10000000);
	expect_recv(f, 1, 2, 5000);
	assert_int_equal(f->limit_events, 1);
	assert_int_equal(rfw_query_srq(f->srq, &qa), 0);
	assert_int_equal(qa.srq_limit, 0); /* disarmed by the event */
	assert_int_equal(qa.max_wr, 4);
	send_on(f, 0, 13, 8000, true);
	lb_run(f->lb, 10000000);
	expect_recv(f, 0, 3, 8000);
	/* Empty: an RNR NAK, and the message lands once a WQE is posted. */
	send_on(f, 1, 14, 300, false);
	lb_run(f->lb, 200000);
	rfw_qp_counters(f->b[1], cnt);
	assert_true(cnt[RFW_CNT_rnr_nak_sent] >= 1);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	assert_int_equal(srq_post(f, 4), 0);
	lb_run(f->lb, 100000000);
	expect_recv(f, 1, 4, 300);
	assert_int_equal(f->limit_events, 1);
	drain_send_cq(f, 4);
	fix_teardown(f);
	free(f);
}

/* Full SRQ: ENOMEM and *bad_wr; an error QP flushes nothing it did not take. */
static void test_srq_full_and_flush(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct srq_fix *f = calloc(1, sizeof(*f));
	struct rfw_qp_attr err = {.qp_state = RFW_QPS_ERR};
	struct rfw_wc wc;

	(void)s;
	fix_setup(f, &c);
	for (uint64_t id = 1; id <= 4; id++)
		assert_int_equal(srq_post(f, id), 0);
	assert_int_equal(srq_post(f, 5), ENOMEM);
	assert_int_equal(rfw_modify_qp(f->b[1], &err, RFW_QP_STATE), 0);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	send_on(f, 0, 21, 64, false);
	lb_run(f->lb, 10000000);
	expect_recv(f, 0, 1, 64);
	/* b[0] in error now flushes only the WQE it holds mid-message: none here. */
	assert_int_equal(rfw_modify_qp(f->b[0], &err, RFW_QP_STATE), 0);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	fix_teardown(f);
	free(f);
}

/* Selective repeat: the first packet of three messages lost, the later two placed first. */
static enum lb_verdict drop_first_send(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                       void *arg)
{
	int *seen = arg;

	(void)lb;
	(void)len;
	if (from == 0 && ib[0] <= 5 && (*seen)++ == 0) /* RC SEND opcodes */
		return LB_DROP;
	return LB_PASS;
}

static void test_srq_selective_repeat(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct srq_fix *f = calloc(1, sizeof(*f));
	int seen = 0;

	(void)s;
	c.mode[0] = c.mode[1] = RFW_TRANSPORT_SR;
	fix_setup(f, &c);
	for (uint64_t id = 1; id <= 3; id++)
		assert_int_equal(srq_post(f, id), 0);
	f->lb->filter = drop_first_send;
	f->lb->farg = &seen;
	send_on(f, 0, 31, 3000, false);
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_SEND, 32, f->sbuf, 2000, f->smr, 0, 0),
	                 0);
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_SEND, 33, f->sbuf, 1500, f->smr, 0, 0),
	                 0);
	lb_run(f->lb, 100000000);
	assert_int_equal(f->lb->dropped, 1);
	expect_recv(f, 0, 1, 3000);
	expect_recv(f, 0, 2, 2000);
	expect_recv(f, 0, 3, 1500);
	drain_send_cq(f, 3);
	fix_teardown(f);
	free(f);
}

/* Drop the first packet of the first RDMA WRITE once. */
static enum lb_verdict drop_first_write(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                        void *arg)
{
	int *seen = arg;

	(void)lb;
	(void)len;
	if (from == 0 && ib[0] == RFW_OP_RC_RDMA_WRITE_FIRST && (*seen)++ == 0)
		return LB_DROP;
	return LB_PASS;
}

/*
 * Selective repeat, a WRITE with immediate into an empty SRQ, its first packet lost: the rest
 * arrive out of order and are SACKed, so once the hole is filled the message end waits at the
 * ePSN for a WQE that the requester will never resend for. A WQE posted to the SRQ must wake
 * that QP: the receive completion comes with nothing more from the requester.
 */
static void test_srq_sr_write_imm_waits(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct srq_fix *f = calloc(1, sizeof(*f));
	uint64_t cnt[RFW_CNT__COUNT];
	struct rfw_wc wc;
	int seen = 0;

	(void)s;
	c.mode[0] = c.mode[1] = RFW_TRANSPORT_SR;
	fix_setup(f, &c);
	f->lb->filter = drop_first_write;
	f->lb->farg = &seen;
	f->lb->ep[0].qp = f->a[0];
	f->lb->ep[1].qp = f->b[0];
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_RDMA_WRITE_WITH_IMM, 41, f->sbuf, 4000,
	                            f->smr, (uint64_t)(uintptr_t)f->rbuf[0], rfw_mr_rkey(f->rmr)),
	                 0);
	lb_run(f->lb, 20000000); /* 20 ms: RNR NAKs, the requester's timers, nothing completes */
	assert_int_equal(f->lb->dropped, 1);
	rfw_qp_counters(f->b[0], cnt);
	assert_true(cnt[RFW_CNT_rnr_nak_sent] >= 1);
	assert_true(cnt[RFW_CNT_ooo_accepted] >= 1);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	assert_int_equal(srq_post(f, 5), 0);
	lb_run(f->lb, 100000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.opcode, RFW_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.imm_data, 0xabcd0000u + 41);
	assert_int_equal(wc.qp_num, rfw_qp_num(f->b[0]));
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	assert_memory_equal(f->rbuf[0], f->sbuf, 4000);
	drain_send_cq(f, 1);
	fix_teardown(f);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_srq_shared_in_order),
	    cmocka_unit_test(test_srq_full_and_flush),
	    cmocka_unit_test(test_srq_selective_repeat),
	    cmocka_unit_test(test_srq_sr_write_imm_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
