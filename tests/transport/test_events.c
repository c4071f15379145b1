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

/* A pair a -> b installed as the loop's endpoints, b with the event hook, and an MR each. */
struct ev_fix {
	struct loop *lb;
	struct ev_log log;
	struct rfw_qp *orig[2], *a, *b;
	struct rfw_mr *smr, *rmr;
	uint8_t sbuf[256], rbuf[256];
};

static struct ev_fix *ev_new(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct ev_fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->lb = lb_create(&c);
	assert_non_null(f->lb);
	pair(f->lb, &f->log, NULL, &f->a, &f->b);
	for (int i = 0; i < 2; i++)
		f->orig[i] = f->lb->ep[i].qp;
	f->lb->ep[0].qp = f->a;
	f->lb->ep[1].qp = f->b;
	f->smr = lb_mr(&f->lb->ep[0], f->sbuf, sizeof(f->sbuf));
	f->rmr = lb_mr(&f->lb->ep[1], f->rbuf, sizeof(f->rbuf));
	return f;
}

static void ev_free(struct ev_fix *f)
{
	lb_restore_qps(f->lb, f->orig); /* a and b are the endpoints' QPs */
	lb_destroy(f->lb);
	free(f);
}

/* a posts an RDMA op of 64 bytes into b's MR, R_Key XOR @key_flip. */
static void ev_post(struct ev_fix *f, enum rfw_wr_opcode op, uint64_t id, uint32_t key_flip)
{
	assert_int_equal(lb_post_op(&f->lb->ep[0], op, id, f->sbuf, 64, f->smr,
	                            (uint64_t)(uintptr_t)f->rbuf, rfw_mr_rkey(f->rmr) ^ key_flip),
	                 0);
}

static void test_comm_est_and_access_err(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct ev_fix *f = ev_new();
	struct rfw_ah_attr ah0 = {0}, ah1 = {0};

	(void)s;
	lb_ah(f->lb, 0, &ah0);
	lb_ah(f->lb, 1, &ah1);
	/* b only up to RTR: a responder that has not been told to go to RTS. */
	assert_int_equal(lb_connect_av(f->a, rfw_qp_num(f->b), &c, 10, 20, RFW_TRANSPORT_GBN, &ah0),
	                 0);
	assert_int_equal(lb_connect_rtr(f->b, rfw_qp_num(f->a), &c, 10, RFW_TRANSPORT_GBN, &ah1),
	                 0);
	ev_post(f, RFW_WR_RDMA_WRITE, 0, 0);
	ev_post(f, RFW_WR_RDMA_WRITE, 1, 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(f->log.n[RFW_QP_EV_COMM_EST], 1); /* once, for two requests */
	assert_int_equal(rfw_qp_state(f->b), RFW_QPS_RTR); /* the owner moves it to RTS */
	/* A WRITE with a wrong R_Key: NAK remote access error, b to ERR, its owner told. */
	ev_post(f, RFW_WR_RDMA_WRITE, 9, 0x100);
	lb_run(f->lb, 1000000);
	assert_int_equal(f->log.n[RFW_QP_EV_ACCESS_ERR], 1);
	assert_int_equal(rfw_qp_state(f->b), RFW_QPS_ERR);
	assert_int_equal(f->log.total, 2);
	ev_free(f);
}

static void test_req_err(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct ev_fix *f = ev_new();

	(void)s;
	c.max_rd_atomic = 0; /* b grants no READ resources: a READ is an invalid request */
	connect_pair(f->lb, &c, f->a, f->b);
	ev_post(f, RFW_WR_RDMA_READ, 1, 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(f->log.n[RFW_QP_EV_REQ_ERR], 1);
	assert_int_equal(rfw_qp_state(f->b), RFW_QPS_ERR);
	ev_free(f);
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
