/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Affiliated asynchronous events of a QP (rfw_qp_init_attr.event; IBA 11.6.3 and
 * ibv_get_async_event(3)): communication established when the first request reaches a QP in
 * RTR (once, and the QP stays in RTR), access error and invalid request on the responder of a
 * failed RDMA request (no WQE there to report them), last WQE reached when a QP on an SRQ
 * enters ERR (once).
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

struct ev_log {
	int n[32];
	int total;
};

static void on_event(void *ctx, struct rfw_qp *qp, enum rfw_qp_event ev)
{
	struct ev_log *l = ctx;

	(void)qp;
	assert_true((unsigned)ev < 32);
	l->n[ev]++;
	l->total++;
}

/* QP b on endpoint 1 (with the event hook, optionally on @srq), a on endpoint 0. */
static void pair(struct loop *lb, struct ev_log *log, struct rfw_srq *srq, struct rfw_qp **a,
                 struct rfw_qp **b)
{
	struct rfw_qp_init_attr qa = {.send_cq = lb->ep[0].scq, .recv_cq = lb->ep[0].rcq};

	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	*a = rfw_create_qp(lb->ep[0].pd, &qa);
	qa.send_cq = lb->ep[1].scq;
	qa.recv_cq = lb->ep[1].rcq;
	qa.qp_context = log;
	qa.event = on_event;
	qa.srq = srq;
	*b = rfw_create_qp(lb->ep[1].pd, &qa);
	assert_non_null(*a);
	assert_non_null(*b);
}

static void connect_pair(struct loop *lb, const struct lb_cfg *c, struct rfw_qp *a,
                         struct rfw_qp *b)
{
	struct rfw_ah_attr ah0 = {0}, ah1 = {0};

	lb_ah(lb, 0, &ah0);
	lb_ah(lb, 1, &ah1);
	assert_int_equal(lb_connect_av(a, rfw_qp_num(b), c, 10, 20, RFW_TRANSPORT_GBN, &ah0), 0);
	assert_int_equal(lb_connect_av(b, rfw_qp_num(a), c, 20, 10, RFW_TRANSPORT_GBN, &ah1), 0);
}

static void test_comm_est_and_access_err(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct ev_log log = {0};
	struct rfw_qp *orig[2] = {lb->ep[0].qp, lb->ep[1].qp}, *a, *b;
	static uint8_t sbuf[256], rbuf[256];
	struct rfw_qp_attr at = {0};
	struct rfw_ah_attr ah0 = {0}, ah1 = {0};
	struct rfw_mr *smr, *rmr;

	(void)s;
	pair(lb, &log, NULL, &a, &b);
	lb->ep[0].qp = a;
	lb->ep[1].qp = b;
	smr = lb_mr(&lb->ep[0], sbuf, sizeof(sbuf));
	rmr = lb_mr(&lb->ep[1], rbuf, sizeof(rbuf));
	lb_ah(lb, 0, &ah0);
	lb_ah(lb, 1, &ah1);
	/* b only up to RTR: a responder that has not been told to go to RTS. */
	assert_int_equal(lb_connect_av(a, rfw_qp_num(b), &c, 10, 20, RFW_TRANSPORT_GBN, &ah0), 0);
	at.qp_state = RFW_QPS_INIT;
	at.qp_access_flags = c.access;
	assert_int_equal(rfw_modify_qp(b, &at, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS), 0);
	at.qp_state = RFW_QPS_RTR;
	at.ah_attr = ah1;
	at.path_mtu = c.mtu;
	at.dest_qp_num = rfw_qp_num(a);
	at.rq_psn = 10;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	assert_int_equal(rfw_modify_qp(b, &at,
	                               RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU |
	                                   RFW_QP_DEST_QPN | RFW_QP_RQ_PSN |
	                                   RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER),
	                 0);
	for (int k = 0; k < 2; k++)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, (uint64_t)k, sbuf, 64,
		                            smr, (uint64_t)(uintptr_t)rbuf, rfw_mr_rkey(rmr)),
		                 0);
	lb_run(lb, 1000000);
	assert_int_equal(log.n[RFW_QP_EV_COMM_EST], 1); /* once, for two requests */
	assert_int_equal(rfw_qp_state(b), RFW_QPS_RTR); /* the owner moves it to RTS */
	/* A WRITE with a wrong R_Key: NAK remote access error, b to ERR, its owner told. */
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 9, sbuf, 64, smr,
	                            (uint64_t)(uintptr_t)rbuf, rfw_mr_rkey(rmr) ^ 0x100),
	                 0);
	lb_run(lb, 1000000);
	assert_int_equal(log.n[RFW_QP_EV_ACCESS_ERR], 1);
	assert_int_equal(rfw_qp_state(b), RFW_QPS_ERR);
	assert_int_equal(log.total, 2);
	rfw_destroy_qp(a);
	rfw_destroy_qp(b);
	lb->ep[0].qp = orig[0];
	lb->ep[1].qp = orig[1];
	lb_destroy(lb);
}

static void test_req_err(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct ev_log log = {0};
	struct rfw_qp *orig[2] = {lb->ep[0].qp, lb->ep[1].qp}, *a, *b;
	static uint8_t sbuf[256], rbuf[256];
	struct rfw_mr *smr, *rmr;

	(void)s;
	pair(lb, &log, NULL, &a, &b);
	lb->ep[0].qp = a;
	lb->ep[1].qp = b;
	smr = lb_mr(&lb->ep[0], sbuf, sizeof(sbuf));
	rmr = lb_mr(&lb->ep[1], rbuf, sizeof(rbuf));
	c.max_rd_atomic = 0; /* b grants no READ resources: a READ is an invalid request */
	connect_pair(lb, &c, a, b);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, sbuf, 64, smr,
	                            (uint64_t)(uintptr_t)rbuf, rfw_mr_rkey(rmr)),
	                 0);
	lb_run(lb, 1000000);
	assert_int_equal(log.n[RFW_QP_EV_REQ_ERR], 1);
	assert_int_equal(rfw_qp_state(b), RFW_QPS_ERR);
	rfw_destroy_qp(a);
	rfw_destroy_qp(b);
	lb->ep[0].qp = orig[0];
	lb->ep[1].qp = orig[1];
	lb_destroy(lb);
}

static void test_last_wqe(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct ev_log log = {0}, log_plain = {0};
	struct rfw_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct rfw_srq *srq = rfw_create_srq(lb->ep[1].pd, &sa);
	struct rfw_qp_attr err = {.qp_state = RFW_QPS_ERR};
	struct rfw_qp *a, *b, *a2, *b2;

	(void)s;
	assert_non_null(srq);
	pair(lb, &log, srq, &a, &b);
	pair(lb, &log_plain, NULL, &a2, &b2);
	connect_pair(lb, &c, a, b);
	connect_pair(lb, &c, a2, b2);
	assert_int_equal(rfw_modify_qp(b, &err, RFW_QP_STATE), 0);
	assert_int_equal(rfw_modify_qp(b, &err, RFW_QP_STATE), 0);  /* already ERR: no second */
	assert_int_equal(rfw_modify_qp(b2, &err, RFW_QP_STATE), 0); /* no SRQ: no event */
	assert_int_equal(log.n[RFW_QP_EV_LAST_WQE], 1);
	assert_int_equal(log.total, 1);
	assert_int_equal(log_plain.total, 0);
	rfw_destroy_qp(a);
	rfw_destroy_qp(b);
	rfw_destroy_qp(a2);
	rfw_destroy_qp(b2);
	assert_int_equal(rfw_destroy_srq(srq), 0);
	lb_destroy(lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comm_est_and_access_err),
	    cmocka_unit_test(test_req_err),
	    cmocka_unit_test(test_last_wqe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
