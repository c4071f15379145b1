/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UC service (transport/uc.c) over the in-test loopback host, against IBA 9.8.3 and what
 * rxe does: SEND and WRITE (with immediate) of several packets arrive whole, nothing is sent
 * back (no ACK), the sender's WQE completes once sent; a lost packet costs exactly its message
 * (the receive WQE stays for the next one, which arrives whole); a message with no receive WQE
 * or a bad R_Key is dropped and counted; READ and atomics are refused at post; the modify table
 * is UC's.
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

struct uc_fix {
	struct loop *lb;
	struct rfw_qp *orig[2];
	struct rfw_mr *smr, *rmr;
	uint8_t sbuf[16384], rbuf[16384];
};

static int uc_connect(struct loop *lb, int i, struct rfw_qp *qp, uint32_t dqpn)
{
	struct rfw_qp_attr a = {
	    .qp_state = RFW_QPS_INIT, .port_num = 1, .qp_access_flags = RFW_ACCESS_REMOTE_WRITE};
	int rc = rfw_modify_qp(
	    qp, &a, RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_ACCESS_FLAGS);

	if (rc)
		return rc;
	a.qp_state = RFW_QPS_RTR;
	lb_ah(lb, i, &a.ah_attr);
	a.path_mtu = RFW_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = i ? 700 : 900;
	rc = rfw_modify_qp(
	    qp, &a, RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN | RFW_QP_RQ_PSN);
	if (rc)
		return rc;
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = i ? 900 : 700;
	return rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_SQ_PSN);
}

static struct uc_fix *fix_setup(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct uc_fix *f = calloc(1, sizeof(*f));
	struct lb_ep *e;

	f->lb = lb_create(&c);
	assert_non_null(f->lb);
	e = f->lb->ep;
	lb_replace_qps(f->lb, RFW_QPT_UC, 0, f->orig);
	assert_non_null(e[0].qp);
	assert_non_null(e[1].qp);
	for (int i = 0; i < 2; i++)
		assert_int_equal(uc_connect(f->lb, i, e[i].qp, rfw_qp_num(e[!i].qp)), 0);
	f->smr = lb_mr(&f->lb->ep[0], f->sbuf, sizeof(f->sbuf));
	f->rmr = lb_mr(&f->lb->ep[1], f->rbuf, sizeof(f->rbuf));
	lb_fill(f->sbuf, sizeof(f->sbuf), 5);
	return f;
}

static void fix_teardown(struct uc_fix *f)
{
	lb_restore_qps(f->lb, f->orig);
	lb_destroy(f->lb);
	free(f);
}

static void expect_send_done(struct uc_fix *f, uint64_t id)
{
	struct rfw_wc wc;

	assert_int_equal(rfw_poll_cq(f->lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, id);
}

static void test_uc_send_write(void **s)
{
	struct uc_fix *f = fix_setup();
	uint64_t c1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(lb_post_recv(&f->lb->ep[1], 1, f->rbuf, 8192, f->rmr), 0);
	assert_int_equal(
	    lb_post_op(&f->lb->ep[0], RFW_WR_SEND_WITH_IMM, 11, f->sbuf, 5000, f->smr, 0, 0), 0);
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_RDMA_WRITE, 12, f->sbuf, 3000, f->smr,
	                            (uint64_t)(uintptr_t)(f->rbuf + 9000), rfw_mr_rkey(f->rmr)),
	                 0);
	lb_run(f->lb, 1000000);
	expect_send_done(f, 11);
	expect_send_done(f, 12);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.byte_len, 5000);
	assert_true(wc.wc_flags & RFW_WC_WITH_IMM);
	assert_int_equal(wc.imm_data, 0xabcd0000u + 11);
	assert_memory_equal(f->rbuf, f->sbuf, 5000);
	assert_memory_equal(f->rbuf + 9000, f->sbuf, 3000);
	/* 5 + 3 packets one way, nothing back. */
	assert_int_equal(f->lb->pkts_from[0], 8);
	assert_int_equal(f->lb->pkts_from[1], 0);
	rfw_qp_counters(f->lb->ep[1].qp, c1);
	assert_int_equal(c1[RFW_CNT_uc_msgs_dropped], 0);
	fix_teardown(f);
}

/* Drop the third packet from endpoint 0 (the MIDDLE of the first 5-packet SEND). */
static enum lb_verdict drop_third(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *a)
{
	int *n = a;

	(void)lb, (void)ib, (void)len;
	return from == 0 && ++*n == 3 ? LB_DROP : LB_PASS;
}

static void test_uc_loss_costs_one_message(void **s)
{
	struct uc_fix *f = fix_setup();
	uint64_t c1[RFW_CNT__COUNT];
	struct rfw_wc wc;
	int n = 0;

	(void)s;
	f->lb->filter = drop_third;
	f->lb->farg = &n;
	assert_int_equal(lb_post_recv(&f->lb->ep[1], 1, f->rbuf, 8192, f->rmr), 0);
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_SEND, 21, f->sbuf, 5000, f->smr, 0, 0),
	                 0);
	assert_int_equal(
	    lb_post_op(&f->lb->ep[0], RFW_WR_SEND, 22, f->sbuf + 100, 2500, f->smr, 0, 0), 0);
	lb_run(f->lb, 1000000);
	expect_send_done(f, 21); /* the sender never knows */
	expect_send_done(f, 22);
	/* The first message is gone; its receive WQE took the second, whole. */
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.byte_len, 2500);
	assert_memory_equal(f->rbuf, f->sbuf + 100, 2500);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	rfw_qp_counters(f->lb->ep[1].qp, c1);
	assert_int_equal(c1[RFW_CNT_uc_msgs_dropped], 1);
	assert_int_equal(c1[RFW_CNT_out_of_sequence], 1);
	fix_teardown(f);
}

static void test_uc_drops_and_refusals(void **s)
{
	struct uc_fix *f = fix_setup();
	uint64_t c1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	/* No receive WQE, then a WRITE outside the MR: both dropped, counted, the QP goes on. */
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_SEND, 31, f->sbuf, 100, f->smr, 0, 0), 0);
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_RDMA_WRITE, 32, f->sbuf, 100, f->smr,
	                            (uint64_t)(uintptr_t)(f->rbuf + sizeof(f->rbuf) - 50),
	                            rfw_mr_rkey(f->rmr)),
	                 0);
	lb_run(f->lb, 1000000);
	expect_send_done(f, 31);
	expect_send_done(f, 32);
	rfw_qp_counters(f->lb->ep[1].qp, c1);
	assert_int_equal(c1[RFW_CNT_uc_msgs_dropped], 2);
	assert_int_equal(rfw_qp_state(f->lb->ep[1].qp), RFW_QPS_RTS);
	assert_int_equal(lb_post_recv(&f->lb->ep[1], 2, f->rbuf, 256, f->rmr), 0);
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_SEND, 33, f->sbuf, 64, f->smr, 0, 0), 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.byte_len, 64);
	/* READ and atomics are not UC operations. */
	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_RDMA_READ, 34, f->sbuf, 64, f->smr,
	                            (uint64_t)(uintptr_t)f->rbuf, rfw_mr_rkey(f->rmr)),
	                 EINVAL);
	fix_teardown(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uc_send_write),
	    cmocka_unit_test(test_uc_loss_costs_one_message),
	    cmocka_unit_test(test_uc_drops_and_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
