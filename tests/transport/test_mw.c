/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (transport/mw.c, IBA 10.6.7) over the in-test loopback host: endpoint 1's
 * buffer is registered with local write and MW bind only, so a remote WRITE can reach it only
 * through a bound window. What IBA promises: a bind completes as BIND_MW and gives the window
 * the WR's R_Key; the window grants its range and rights only; a zero-length bind unbinds a
 * type 1 window, LOCAL_INV or a SEND with Invalidate a type 2 one (never a type 1); a bad bind
 * completes with MW_BIND_ERR and the QP goes to ERR; a window's R_Key is no L_Key; an MR with
 * a window bound cannot be deregistered.
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

#define BUF 8192

struct mw_fix {
	struct loop *lb;
	struct rfw_mr *smr, *dmr, *mw;
	uint8_t src[BUF], dst[BUF];
};

static struct mw_fix *fix(unsigned type)
{
	struct lb_cfg c = lb_default_cfg();
	struct mw_fix *f = calloc(1, sizeof(*f));

	f->lb = lb_create(&c);
	assert_non_null(f->lb);
	f->smr = lb_mr(&f->lb->ep[0], f->src, BUF);
	f->dmr = lb_mr_acc(&f->lb->ep[1], f->dst, BUF, RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_MW_BIND);
	assert_non_null(f->dmr);
	f->mw = rfw_alloc_mw(f->lb->ep[1].pd, type);
	assert_non_null(f->mw);
	lb_fill(f->src, BUF, 7);
	return f;
}

static void unfix(struct mw_fix *f)
{
	assert_int_equal(rfw_dealloc_mw(f->mw), 0);
	lb_destroy(f->lb);
	free(f);
}

/* A Bind Memory Window WR on endpoint @ep's QP; its completion's status. */
static enum rfw_wc_status bind(struct mw_fix *f, int ep, uint32_t rkey, struct rfw_mr *mr,
                               uint64_t off, uint64_t len, unsigned access)
{
	struct rfw_send_wr wr = {
	    .wr_id = 77, .opcode = RFW_WR_BIND_MW, .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad = NULL;
	struct rfw_wc wc;

	wr.wr.bind_mw.mw = f->mw;
	wr.wr.bind_mw.rkey = rkey;
	wr.wr.bind_mw.mr = mr;
	wr.wr.bind_mw.addr = (uint64_t)(uintptr_t)f->dst + off;
	wr.wr.bind_mw.length = len;
	wr.wr.bind_mw.access = access;
	assert_int_equal(rfw_post_send(f->lb->ep[ep].qp, &wr, &bad, f->lb->now), 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[ep].scq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 77);
	if (wc.status == RFW_WC_SUCCESS)
		assert_int_equal(wc.opcode, RFW_WC_BIND_MW);
	return wc.status;
}

static uint32_t next_key(uint32_t k)
{
	return (k & ~0xffu) | ((k + 1) & 0xff);
}

/* A WRITE of @len bytes from endpoint 0 at dst + @off with @rkey; its completion's status. */
static enum rfw_wc_status write(struct mw_fix *f, uint32_t rkey, uint64_t off, uint32_t len)
{
	struct rfw_wc wc;

	assert_int_equal(lb_post_op(&f->lb->ep[0], RFW_WR_RDMA_WRITE, 5, f->src, len, f->smr,
	                            (uint64_t)(uintptr_t)f->dst + off, rkey),
	                 0);
	lb_run(f->lb, 200000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[0].scq, 1, &wc), 1);
	return wc.status;
}

/* LOCAL_INV of @key on endpoint 1's QP; its completion's status (opcode checked if success). */
static enum rfw_wc_status local_inv(struct mw_fix *f, uint32_t key)
{
	struct rfw_send_wr inv = {.wr_id = 9,
	                          .opcode = RFW_WR_LOCAL_INV,
	                          .send_flags = RFW_SEND_SIGNALED,
	                          .invalidate_rkey = key};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	assert_int_equal(rfw_post_send(f->lb->ep[1].qp, &inv, &bad, f->lb->now), 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].scq, 1, &wc), 1);
	if (wc.status == RFW_WC_SUCCESS)
		assert_int_equal(wc.opcode, RFW_WC_LOCAL_INV);
	return wc.status;
}

static void test_type1(void **s)
{
	struct mw_fix *f = fix(1);
	uint32_t k = next_key(rfw_mr_rkey(f->mw));

	(void)s;
	assert_int_equal(write(f, rfw_mr_rkey(f->dmr), 0, 64), RFW_WC_REM_ACCESS_ERR);
	unfix(f); /* the MR alone grants no remote write */
	f = fix(1);
	k = next_key(rfw_mr_rkey(f->mw));
	assert_int_equal(bind(f, 1, k, f->dmr, 1024, 4096, RFW_ACCESS_REMOTE_WRITE),
	                 RFW_WC_SUCCESS);
	assert_int_equal(rfw_mr_rkey(f->mw), k);
	assert_int_equal(rfw_dereg_mr(f->dmr), -EBUSY);
	assert_int_equal(write(f, k, 1024, 4096), RFW_WC_SUCCESS);
	assert_memory_equal(f->dst + 1024, f->src, 4096);
	/* zero-length bind: unbound, the old key refused */
	assert_int_equal(bind(f, 1, next_key(k), NULL, 0, 0, 0), RFW_WC_SUCCESS);
	assert_int_equal(write(f, k, 1024, 64), RFW_WC_REM_ACCESS_ERR);
	unfix(f);
}

static void test_type1_bounds(void **s)
{
	struct mw_fix *f = fix(1);
	uint32_t k = next_key(rfw_mr_rkey(f->mw));

	(void)s;
	assert_int_equal(bind(f, 1, k, f->dmr, 1024, 4096, RFW_ACCESS_REMOTE_WRITE),
	                 RFW_WC_SUCCESS);
	assert_int_equal(write(f, k, 1024 + 4096 - 8, 64),
	                 RFW_WC_REM_ACCESS_ERR); /* past its end */
	unfix(f);
}

static void test_type2_local_inv(void **s)
{
	struct mw_fix *f = fix(2);
	uint32_t k = next_key(rfw_mr_rkey(f->mw));

	(void)s;
	assert_int_equal(bind(f, 1, k, f->dmr, 0, BUF, RFW_ACCESS_REMOTE_WRITE), RFW_WC_SUCCESS);
	assert_int_equal(write(f, k, 0, BUF), RFW_WC_SUCCESS);
	assert_memory_equal(f->dst, f->src, BUF);
	assert_int_equal(local_inv(f, k), RFW_WC_SUCCESS);
	assert_int_equal(write(f, k, 0, 64), RFW_WC_REM_ACCESS_ERR);
	unfix(f);
}

static void test_type2_remote_inv(void **s)
{
	struct mw_fix *f = fix(2);
	uint32_t k = next_key(rfw_mr_rkey(f->mw));
	uint8_t rbuf[64];
	struct rfw_mr *rmr = lb_mr(&f->lb->ep[1], rbuf, sizeof(rbuf));
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)f->src, .length = 16, .lkey = rfw_mr_lkey(f->smr)};
	struct rfw_send_wr wr = {.wr_id = 3,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_SEND_WITH_INV,
	                         .send_flags = RFW_SEND_SIGNALED,
	                         .invalidate_rkey = k};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(bind(f, 1, k, f->dmr, 0, BUF, RFW_ACCESS_REMOTE_WRITE), RFW_WC_SUCCESS);
	assert_int_equal(lb_post_recv(&f->lb->ep[1], 4, rbuf, sizeof(rbuf), rmr), 0);
	assert_int_equal(rfw_post_send(f->lb->ep[0].qp, &wr, &bad, f->lb->now), 0);
	lb_run(f->lb, 100000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_true(wc.wc_flags & RFW_WC_WITH_INV);
	assert_int_equal(wc.invalidated_rkey, k);
	assert_int_equal(write(f, k, 0, 64), RFW_WC_REM_ACCESS_ERR);
	unfix(f);
}

/* Bad binds: MW_BIND_ERR and the QP in ERR. Each on a fresh pair. */
static void test_bad_binds(void **s)
{
	struct mw_fix *f;
	struct rfw_mr *plain;
	uint32_t k;

	(void)s;
	f = fix(1); /* an MR without MW bind access */
	plain = lb_mr(&f->lb->ep[1], f->dst, 64);
	k = next_key(rfw_mr_rkey(f->mw));
	assert_int_equal(bind(f, 1, k, plain, 0, 64, RFW_ACCESS_REMOTE_READ), RFW_WC_MW_BIND_ERR);
	assert_int_equal(rfw_qp_state(f->lb->ep[1].qp), RFW_QPS_ERR);
	unfix(f);
	f = fix(1); /* past the MR's end */
	k = next_key(rfw_mr_rkey(f->mw));
	assert_int_equal(bind(f, 1, k, f->dmr, BUF - 8, 64, RFW_ACCESS_REMOTE_READ),
	                 RFW_WC_MW_BIND_ERR);
	unfix(f);
	f = fix(2); /* a type 2 window bound again before it is invalidated */
	k = next_key(rfw_mr_rkey(f->mw));
	assert_int_equal(bind(f, 1, k, f->dmr, 0, 64, RFW_ACCESS_REMOTE_READ), RFW_WC_SUCCESS);
	assert_int_equal(bind(f, 1, next_key(k), f->dmr, 0, 64, RFW_ACCESS_REMOTE_READ),
	                 RFW_WC_MW_BIND_ERR);
	unfix(f);
}

/* A type 1 window's R_Key cannot be invalidated, and no window's key is an L_Key. */
static void test_type1_not_invalidated_nor_lkey(void **s)
{
	struct mw_fix *f = fix(1);
	uint32_t k = next_key(rfw_mr_rkey(f->mw));
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(bind(f, 1, k, f->dmr, 0, BUF, RFW_ACCESS_REMOTE_WRITE), RFW_WC_SUCCESS);
	assert_int_equal(lb_post_op(&f->lb->ep[1], RFW_WR_SEND, 1, f->dst, 16, f->mw, 0, 0), 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
	unfix(f);
	f = fix(1);
	k = next_key(rfw_mr_rkey(f->mw));
	assert_int_equal(bind(f, 1, k, f->dmr, 0, BUF, RFW_ACCESS_REMOTE_WRITE), RFW_WC_SUCCESS);
	assert_int_equal(local_inv(f, k), RFW_WC_LOC_PROT_ERR);
	unfix(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_type1),
	    cmocka_unit_test(test_type1_bounds),
	    cmocka_unit_test(test_type2_local_inv),
	    cmocka_unit_test(test_type2_remote_inv),
	    cmocka_unit_test(test_bad_binds),
	    cmocka_unit_test(test_type1_not_invalidated_nor_lkey),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
