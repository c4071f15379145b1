/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfw_resize_cq (ibv_resize_cq(3)): not below the completions the CQ holds (EINVAL); larger or
 * smaller otherwise, the unpolled completions kept in order, with their Estats records (the
 * CQ's side entries move with them: the same rows as without the resize). A QP takes only CQs
 * of its own device.
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

static void test_resize_keeps_completions(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[4096], b[4096];
	struct rfw_mr *ma, *mb;
	struct rfw_cq *cq;
	struct rfw_wc wc[4];

	(void)s;
	assert_non_null(lb);
	ma = lb_mr(&lb->ep[0], a, sizeof(a));
	mb = lb_mr(&lb->ep[1], b, sizeof(b));
	cq = lb->ep[0].scq;
	for (uint64_t id = 1; id <= 3; id++)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, id, a, 100, ma,
		                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(mb)),
		                 0);
	lb_run(lb, 1000000);
	assert_int_equal(rfw_cq_count(cq), 3);
	assert_int_equal(rfw_resize_cq(cq, 2), -EINVAL);
	assert_int_equal(rfw_resize_cq(cq, 0), -EINVAL);
	assert_int_equal(rfw_resize_cq(cq, 3), 0); /* exactly what it holds */
	assert_int_equal(rfw_poll_cq(cq, 1, wc), 1);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(rfw_resize_cq(cq, 64), 0);
	assert_int_equal(rfw_poll_cq(cq, 4, wc), 2);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[1].wr_id, 3);
	assert_int_equal(rfw_resize_cq(cq, 1), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 4, a, 100, ma,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(mb)),
	                 0);
	lb_run(lb, 1000000);
	assert_int_equal(rfw_poll_cq(cq, 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 4);
	lb_destroy(lb);
}

/* A QP's CQs must be its PD's device's (ibv_create_qp(3) takes CQs of its own context): another
 * device's CQ is EINVAL, and nothing is created. */
static void test_qp_cq_of_other_device(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	struct rfw_qp_init_attr ia = {.qp_type = RFW_QPT_RC,
	                              .cap = {.max_send_wr = 4, .max_recv_wr = 4}};
	struct rfw_qp *qp;

	(void)s;
	c.estats = true; /* the completion writes the send CQ's Estats side entries unchecked */
	lb = lb_create(&c);
	assert_non_null(lb);
	ia.send_cq = lb->ep[1].scq;
	ia.recv_cq = lb->ep[0].rcq;
	errno = 0;
	assert_null(rfw_create_qp(lb->ep[0].pd, &ia));
	assert_int_equal(errno, EINVAL);
	ia.send_cq = lb->ep[0].scq;
	ia.recv_cq = lb->ep[1].rcq;
	errno = 0;
	assert_null(rfw_create_qp(lb->ep[0].pd, &ia));
	assert_int_equal(errno, EINVAL);
	ia.recv_cq = lb->ep[0].rcq;
	qp = rfw_create_qp(lb->ep[0].pd, &ia);
	assert_non_null(qp);
	assert_int_equal(rfw_destroy_qp(qp), 0);
	lb_destroy(lb);
}

/* Three WRITEs completed, the CQ resized (@resize) before they are polled; the rows. */
static int es_run(bool resize, struct rfw_es_row *rows, int max)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[4096], b[4096];
	struct rfw_mr *ma, *mb;
	struct rfw_wc wc[4];
	int n;

	c.estats = true;
	lb = lb_create(&c);
	assert_non_null(lb);
	ma = lb_mr(&lb->ep[0], a, sizeof(a));
	mb = lb_mr(&lb->ep[1], b, sizeof(b));
	for (uint64_t id = 1; id <= 3; id++)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, id, a, 100, ma,
		                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(mb)),
		                 0);
	lb_run(lb, 1000000);
	assert_int_equal(rfw_poll_cq_ts(lb->ep[0].scq, 1, wc, lb->now), 1);
	if (resize)
		assert_int_equal(rfw_resize_cq(lb->ep[0].scq, 64), 0);
	assert_int_equal(rfw_poll_cq_ts(lb->ep[0].scq, 4, wc, lb->now + 5000), 2);
	n = rfw_qp_estats_rows(lb->ep[0].qp, RFW_ES_CURRENT, lb->now + 5000, rows, max);
	lb_destroy(lb);
	return n;
}

static void test_resize_keeps_estats(void **s)
{
	struct rfw_es_row ref[16], got[16];
	int nr = es_run(false, ref, 16), ng = es_run(true, got, 16);

	(void)s;
	assert_int_equal(nr, RFW_ES__STAGES);
	assert_int_equal(ng, nr);
	for (int i = 0; i < nr; i++) {
		assert_int_equal(got[i].count, 3);
		assert_int_equal(got[i].stage, ref[i].stage);
		assert_true(got[i].p50 == ref[i].p50 && got[i].max == ref[i].max);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resize_keeps_completions),
	    cmocka_unit_test(test_resize_keeps_estats),
	    cmocka_unit_test(test_qp_cq_of_other_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
