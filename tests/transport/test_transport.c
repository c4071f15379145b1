/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC transport core cases over the loopback host (loop.h): every operation, go-back-N after a
 * chosen loss, timeouts, RNR, retry exhaustion, access errors, duplicate READ/atomic replay,
 * PSN wrap, QP state machine, ACK coalescing, CNP hooks.
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

static int poll_one(struct rfw_cq *cq, struct rfw_wc *wc)
{
	return rfw_poll_cq(cq, 1, wc);
}

/* ---- every operation, both directions, sizes around the MTU and 64 KiB, 1 MiB ---- */

#define SZ_CAP ((1u << 20) + 64)

static void run_sizes(enum rfw_wr_opcode op, enum rfw_mtu mtu, int dir)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	uint8_t *src = malloc(SZ_CAP), *dst = malloc(SZ_CAP);
	struct lb_ep *req, *rsp;
	struct rfw_mr *smr, *dmr;
	struct rfw_wc wc;
	uint32_t m = rfw_mtu_to_bytes(mtu);
	const uint32_t sizes[] = {0, 1, m - 1, m, m + 1, 65535, 65536, 65537, 1u << 20};
	bool recv_side =
	    op == RFW_WR_SEND || op == RFW_WR_SEND_WITH_IMM || op == RFW_WR_RDMA_WRITE_WITH_IMM;

	c.mtu = mtu;
	lb = lb_create(&c);
	assert_non_null(lb);
	req = &lb->ep[dir];
	rsp = &lb->ep[!dir];
	smr = lb_mr(req, src, SZ_CAP);
	dmr = lb_mr(rsp, dst, SZ_CAP);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];
		uint8_t *from = src, *to = dst;

		/* Only the message and a margin after it are prepared (and checked). */
		lb_fill(src, n + 64, (uint32_t)k + 1);
		memset(dst, 0xee, n + 64);
		if (op == RFW_WR_RDMA_READ) {
			/* READ pulls the peer's dst into our src. */
			lb_fill(dst, n + 64, (uint32_t)k + 7);
			memset(src, 0xee, n + 64);
			from = dst;
			to = src;
		}
		if (recv_side)
			assert_int_equal(lb_post_recv(rsp, 900 + k, dst, SZ_CAP, dmr), 0);
		assert_int_equal(
		    lb_post_op(req, op, k, src, n, smr, (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
		    0);
		lb_run(lb, 1000000000ull);
		assert_int_equal(poll_one(req->scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_int_equal(wc.wr_id, k);
		assert_int_equal(wc.qp_num, rfw_qp_num(req->qp));
		if (op == RFW_WR_RDMA_READ)
			assert_int_equal(wc.byte_len, n);
		if (n)
			assert_memory_equal(from, to, n);
		assert_int_equal(to[n], 0xee); /* nothing past the message */
		if (recv_side) {
			assert_int_equal(poll_one(rsp->rcq, &wc), 1);
			assert_int_equal(wc.status, RFW_WC_SUCCESS);
			assert_int_equal(wc.wr_id, 900 + k);
			assert_int_equal(wc.byte_len, n);
			assert_int_equal(wc.opcode, op == RFW_WR_RDMA_WRITE_WITH_IMM
			                                ? RFW_WC_RECV_RDMA_WITH_IMM
			                                : RFW_WC_RECV);
			if (op != RFW_WR_SEND) {
				assert_true(wc.wc_flags & RFW_WC_WITH_IMM);
				assert_int_equal(wc.imm_data, 0xabcd0000u + k);
			}
		}
		assert_int_equal(poll_one(req->scq, &wc), 0);
		assert_int_equal(poll_one(rsp->rcq, &wc), 0);
	}
	uint64_t cnt[RFW_CNT__COUNT];
	rfw_dev_counters(req->dev, cnt);
	assert_int_equal(cnt[RFW_CNT_retransmitted_packets], 0);
	lb_destroy(lb);
	free(src);
	free(dst);
}

static void sizes_all_mtus(enum rfw_wr_opcode op)
{
	for (enum rfw_mtu m = RFW_MTU_256; m <= RFW_MTU_4096; m++)
		for (int dir = 0; dir < 2; dir++)
			run_sizes(op, m, dir);
}

static void test_send_sizes(void **s)
{
	(void)s;
	sizes_all_mtus(RFW_WR_SEND);
}
static void test_send_imm_sizes(void **s)
{
	(void)s;
	sizes_all_mtus(RFW_WR_SEND_WITH_IMM);
}
static void test_write_sizes(void **s)
{
	(void)s;
	sizes_all_mtus(RFW_WR_RDMA_WRITE);
}
static void test_write_imm_sizes(void **s)
{
	(void)s;
	sizes_all_mtus(RFW_WR_RDMA_WRITE_WITH_IMM);
}
static void test_read_sizes(void **s)
{
	(void)s;
	sizes_all_mtus(RFW_WR_RDMA_READ);
}

/* Atomics in both directions. */
static void test_atomics_both_directions(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint64_t target[2], res[2];

	(void)s;
	for (int dir = 0; dir < 2; dir++) {
		struct lb_ep *req = &lb->ep[dir], *rsp = &lb->ep[!dir];
		struct rfw_mr *tmr = lb_mr(rsp, &target[dir], 8);
		struct rfw_mr *rmr = lb_mr(req, &res[dir], 8);
		struct rfw_sge sge = {(uint64_t)(uintptr_t)&res[dir], 8, rfw_mr_lkey(rmr)};
		struct rfw_send_wr wr = {.wr_id = 1,
		                         .sg_list = &sge,
		                         .num_sge = 1,
		                         .opcode = RFW_WR_ATOMIC_FETCH_AND_ADD,
		                         .send_flags = RFW_SEND_SIGNALED};
		struct rfw_send_wr *bad;
		struct rfw_wc wc;

		target[dir] = 100 * (uint64_t)(dir + 1);
		wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&target[dir];
		wr.wr.atomic.rkey = rfw_mr_rkey(tmr);
		wr.wr.atomic.compare_add = 3;
		assert_int_equal(rfw_post_send(req->qp, &wr, &bad, lb->now), 0);
		lb_run(lb, 100000000);
		assert_int_equal(poll_one(req->scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_int_equal(res[dir], 100 * (uint64_t)(dir + 1));
		assert_int_equal(target[dir], 100 * (uint64_t)(dir + 1) + 3);
	}
	lb_destroy(lb);
}

/* WRITE with immediate: post the receive first so the RQ is ready. */
static void test_write_imm(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t src[5000], dst[5000];
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	struct rfw_wc wc;

	(void)s;
	lb_fill(src, sizeof(src), 3);
	assert_int_equal(lb_post_recv(&lb->ep[1], 77, dst, 0, dmr), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE_WITH_IMM, 5, src, 3000, smr,
	                            (uint64_t)(uintptr_t)dst + 100, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.opcode, RFW_WC_RDMA_WRITE);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.opcode, RFW_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.byte_len, 3000);
	assert_int_equal(wc.imm_data, 0xabcd0005u);
	assert_memory_equal(dst + 100, src, 3000);
	lb_destroy(lb);
}

static void test_atomics(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint64_t target[2] = {1000, 5};
	static uint64_t res;
	struct rfw_mr *tmr = lb_mr(&lb->ep[1], target, sizeof(target));
	struct rfw_mr *rmr = lb_mr(&lb->ep[0], &res, sizeof(res));
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)&res, .length = 8, .lkey = rfw_mr_lkey(rmr)};
	struct rfw_send_wr wr = {.wr_id = 1,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_ATOMIC_FETCH_AND_ADD,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	(void)s;
	wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&target[0];
	wr.wr.atomic.rkey = rfw_mr_rkey(tmr);
	wr.wr.atomic.compare_add = 7;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.opcode, RFW_WC_FETCH_ADD);
	assert_int_equal(res, 1000);
	assert_int_equal(target[0], 1007);

	/* CAS that matches, then one that does not. */
	wr.opcode = RFW_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&target[1];
	wr.wr.atomic.compare_add = 5;
	wr.wr.atomic.swap = 99;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.opcode, RFW_WC_COMP_SWAP);
	assert_int_equal(res, 5);
	assert_int_equal(target[1], 99);
	wr.wr.atomic.swap = 1;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(res, 99);
	assert_int_equal(target[1], 99);
	lb_destroy(lb);
}

/* SEND with invalidate invalidates the peer's MR; LOCAL_INV invalidates our own. */
static void test_invalidate(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[64], b[64], victim[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_mr *vmr = lb_mr_fr(&lb->ep[1], victim, sizeof(victim));
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)a, .length = 16, .lkey = rfw_mr_lkey(amr)};
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
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_true(wc.wc_flags & RFW_WC_WITH_INV);
	assert_int_equal(wc.invalidated_rkey, rfw_mr_rkey(vmr));
	/* The invalidated MR now refuses a WRITE: remote access error. */
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 3, a, 8, amr,
	                            (uint64_t)(uintptr_t)victim, rfw_mr_rkey(vmr)),
	                 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_ACCESS_ERR);
	lb_destroy(lb);

	/* LOCAL_INV on our own MR: later use of the lkey is a local protection error. */
	lb = lb_create(&c);
	amr = lb_mr_fr(&lb->ep[0], a, sizeof(a));
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	wr.opcode = RFW_WR_LOCAL_INV;
	wr.num_sge = 0;
	wr.invalidate_rkey = rfw_mr_lkey(amr);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 1000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.opcode, RFW_WC_LOCAL_INV);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 4, a, 8, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 1000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	lb_destroy(lb);
}

/* Inline data and scatter/gather on both sides. */
static void test_inline_and_sgl(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t p1[700], p2[900], p3[50], r1[1000], r2[1000];
	struct rfw_mr *m1 = lb_mr(&lb->ep[0], p1, sizeof(p1)),
	              *m2 = lb_mr(&lb->ep[0], p2, sizeof(p2));
	struct rfw_mr *mr1 = lb_mr(&lb->ep[1], r1, sizeof(r1)),
	              *mr2 = lb_mr(&lb->ep[1], r2, sizeof(r2));
	struct rfw_sge sg[3] = {{(uint64_t)(uintptr_t)p1, sizeof(p1), rfw_mr_lkey(m1)},
	                        {(uint64_t)(uintptr_t)p2, sizeof(p2), rfw_mr_lkey(m2)},
	                        {(uint64_t)(uintptr_t)p3, sizeof(p3), 0}};
	struct rfw_sge rsg[2] = {{(uint64_t)(uintptr_t)r1, 1000, rfw_mr_lkey(mr1)},
	                         {(uint64_t)(uintptr_t)r2, 1000, rfw_mr_lkey(mr2)}};
	struct rfw_recv_wr rwr = {.wr_id = 9, .sg_list = rsg, .num_sge = 2};
	struct rfw_send_wr wr = {.wr_id = 1,
	                         .sg_list = sg,
	                         .num_sge = 2,
	                         .opcode = RFW_WR_SEND,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct rfw_recv_wr *rbad;
	struct rfw_wc wc;
	uint8_t want[1600];

	(void)s;
	lb_fill(p1, sizeof(p1), 1);
	lb_fill(p2, sizeof(p2), 2);
	lb_fill(p3, sizeof(p3), 3);
	memcpy(want, p1, 700);
	memcpy(want + 700, p2, 900);
	assert_int_equal(rfw_post_recv(lb->ep[1].qp, &rwr, &rbad, 0), 0);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.byte_len, 1600);
	assert_memory_equal(r1, want, 1000);
	assert_memory_equal(r2, want + 1000, 600);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);

	/* Inline: p3 has no MR; the buffer is overwritten right after posting. */
	wr.sg_list = &sg[2];
	wr.num_sge = 1;
	wr.send_flags |= RFW_SEND_INLINE;
	memcpy(want, p3, 50);
	assert_int_equal(rfw_post_recv(lb->ep[1].qp, &rwr, &rbad, 0), 0);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	memset(p3, 0, sizeof(p3));
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.byte_len, 50);
	assert_memory_equal(r1, want, 50);
	/* Inline beyond max_inline_data is refused at post time. */
	sg[0].length = 700;
	wr.sg_list = sg;
	wr.num_sge = 1;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), EINVAL);
	assert_ptr_equal(bad, &wr);
	lb_destroy(lb);
}

/* Unsignalled WRs produce no CQE when they succeed; signalled ones around them do. */
static void test_unsignalled(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[64], b[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_sge sge = {(uint64_t)(uintptr_t)a, 16, rfw_mr_lkey(amr)};
	struct rfw_send_wr wr[3];
	struct rfw_send_wr *bad;
	struct rfw_wc wc[4];

	(void)s;
	for (int i = 0; i < 3; i++) {
		wr[i] = (struct rfw_send_wr){.wr_id = (uint64_t)i,
		                             .sg_list = &sge,
		                             .num_sge = 1,
		                             .opcode = RFW_WR_RDMA_WRITE,
		                             .send_flags = i == 1 ? 0 : RFW_SEND_SIGNALED,
		                             .next = i < 2 ? &wr[i + 1] : NULL};
		wr[i].wr.rdma.remote_addr = (uint64_t)(uintptr_t)b;
		wr[i].wr.rdma.rkey = rfw_mr_rkey(bmr);
	}
	assert_int_equal(rfw_post_send(lb->ep[0].qp, wr, &bad, 0), 0);
	lb_run(lb, 10000000);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 4, wc), 2);
	assert_int_equal(wc[0].wr_id, 0);
	assert_int_equal(wc[1].wr_id, 2);
	lb_destroy(lb);
}

/* A receive WQE with a bad L_Key: the responder fails locally, NAKs remote operational error. */
static void test_remote_op_error(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[64], b[64];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_sge sge = {(uint64_t)(uintptr_t)b, sizeof(b), 0x7777};
	struct rfw_recv_wr rwr = {.wr_id = 5, .sg_list = &sge, .num_sge = 1};
	struct rfw_recv_wr *rbad;
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(rfw_post_recv(lb->ep[1].qp, &rwr, &rbad, 0), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, a, 32, amr, 0, 0), 0);
	lb_run(lb, 10000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_OP_ERR);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	lb_destroy(lb);
}

/* ---- loss recovery ---- */

struct drop_nth {
	int from;
	uint8_t opcode; /* 0xff: any */
	int n;          /* drop the n-th matching packet (0-based) ... */
	int count;      /* ... and the count-1 matching ones after it */
	int seen;
	int dropped;
};

static enum lb_verdict drop_nth_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                       void *arg)
{
	struct drop_nth *d = arg;

	(void)lb;
	(void)len;
	if (from != d->from || (d->opcode != 0xff && ib[0] != d->opcode))
		return LB_PASS;
	if (d->seen++ >= d->n && d->dropped < d->count) {
		d->dropped++;
		return LB_DROP;
	}
	return LB_PASS;
}

static void write_with_filter(struct loop *lb, uint32_t len, uint8_t **dstp)
{
	static uint8_t src[1 << 17], dst[1 << 17];
	struct rfw_mr *smr = lb_mr(&lb->ep[0], src, sizeof(src));
	struct rfw_mr *dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));

	lb_fill(src, len, len);
	memset(dst, 0, sizeof(dst));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, src, len, smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 10000000000ull);
	assert_memory_equal(src, dst, len);
	*dstp = dst;
}

static void test_nak_seq_go_back_n(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct drop_nth d = {.from = 0, .opcode = RFW_OP_RC_RDMA_WRITE_MIDDLE, .n = 5, .count = 1};
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;
	uint8_t *dst;

	(void)s;
	lb->filter = drop_nth_filter;
	lb->farg = &d;
	write_with_filter(lb, 32 * 1024, &dst);
	assert_int_equal(d.dropped, 1);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	/* 32 packets; #6 (PSN first+6) lost: the responder NAKs once, the requester goes back. */
	assert_int_equal(q1[RFW_CNT_nak_seq_err_sent], 1);
	assert_int_equal(q0[RFW_CNT_packet_seq_err], 1);
	assert_true(q1[RFW_CNT_out_of_sequence] >= 1);
	/* Go-back-N resends from the lost PSN to the end: 32 - 6 packets. */
	assert_int_equal(q0[RFW_CNT_retransmitted_packets], 32 - 6);
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 0);
	lb_destroy(lb);
}

static void test_lost_last_packet_timeout(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct drop_nth d = {.from = 0, .opcode = RFW_OP_RC_RDMA_WRITE_LAST, .n = 0, .count = 1};
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;
	uint8_t *dst;

	(void)s;
	lb->filter = drop_nth_filter;
	lb->farg = &d;
	write_with_filter(lb, 8 * 1024, &dst);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 1);
	/* Nothing told the requester how far the responder got: it resends from the last ACK. */
	assert_true(q0[RFW_CNT_retransmitted_packets] >= 1);
	/* The timeout took 4.096 us * 2^10 at least. */
	assert_true(lb->now >= 4096ull << 10);
	lb_destroy(lb);
}

static void test_lost_ack(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct drop_nth d = {.from = 1, .opcode = RFW_OP_RC_ACKNOWLEDGE, .n = 0, .count = 1};
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_wc wc;
	uint8_t *dst;

	(void)s;
	lb->filter = drop_nth_filter;
	lb->farg = &d;
	write_with_filter(lb, 2048, &dst);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 0); /* exactly one completion */
	rfw_qp_counters(lb->ep[1].qp, q1);
	/* The retransmission is a duplicate at the responder, which re-ACKs it. */
	assert_true(q1[RFW_CNT_duplicate_request] >= 1);
	assert_int_equal(q1[RFW_CNT_rx_write_requests], 1);
	lb_destroy(lb);
}

static void test_retry_exhaustion(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	struct drop_nth d = {.from = 0, .opcode = 0xff, .n = 0, .count = 1 << 30};
	static uint8_t a[4096], b[4096];
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.retry_cnt = 3;
	c.timeout = 5;
	lb = lb_create(&c);
	lb->filter = drop_nth_filter;
	lb->farg = &d;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	for (int i = 0; i < 3; i++)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, (uint64_t)i, a, 2000,
		                            amr, (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
		                 0);
	lb_run(lb, 10000000000ull);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 0);
	assert_int_equal(wc.status, RFW_WC_RETRY_EXC_ERR);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.wr_id, (uint64_t)i);
		assert_int_equal(wc.status, RFW_WC_WR_FLUSH_ERR);
	}
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	rfw_qp_counters(lb->ep[0].qp, q0);
	/* retry_cnt 3: the first try plus three retries, each ended by a timeout. */
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 4);
	assert_int_equal(q0[RFW_CNT_retry_exceeded], 1);
	/* Timeouts at 4.096 us * 2^5 each: 4 of them. */
	assert_true(lb->now >= 4 * (4096ull << 5));
	/* Posting in ERR completes at once with a flush error. */
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 9, a, 10, amr, 0, 0), 0);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.status, RFW_WC_WR_FLUSH_ERR);
	lb_destroy(lb);
}

/* ---- RNR ---- */

static void test_rnr_then_success(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[3000], b[3000];
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.min_rnr_timer = 14; /* 1.28 ms */
	lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	lb_fill(a, sizeof(a), 5);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, a, 3000, amr, 0, 0), 0);
	/* No receive posted: run 1 ms, the sender must be waiting on the RNR timer. */
	lb_run(lb, 1000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rnr_nak_sent], 1);
	assert_true(rfw_qp_next_deadline(lb->ep[0].qp) >= 1280000);
	assert_int_equal(lb_post_recv(&lb->ep[1], 2, b, sizeof(b), bmr), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_true(lb->now >= 1280000); /* not before the RNR timer */
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.byte_len, 3000);
	assert_memory_equal(a, b, 3000);
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_rnr_nak_retry_err], 1);
	lb_destroy(lb);
}

/* RNR in the middle of a pipeline: packets behind the NAKed one are dropped quietly. */
static void test_rnr_pipeline(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[4][5000], b[4][5000];
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.min_rnr_timer = 10; /* 320 us */
	lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	for (int i = 0; i < 4; i++) {
		lb_fill(a[i], 5000, 40 + (uint32_t)i);
		assert_int_equal(
		    lb_post_op(&lb->ep[0], RFW_WR_SEND, (uint64_t)i, a[i], 5000, amr, 0, 0), 0);
	}
	assert_int_equal(lb_post_recv(&lb->ep[1], 0, b[0], 5000, bmr), 0);
	lb_run(lb, 200000); /* 200 us: message 0 done, message 1 RNR-NAKed */
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 0);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 0);
	for (int i = 1; i < 4; i++)
		assert_int_equal(lb_post_recv(&lb->ep[1], (uint64_t)i, b[i], 5000, bmr), 0);
	lb_run(lb, 100000000);
	for (int i = 1; i < 4; i++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.wr_id, (uint64_t)i);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
		assert_int_equal(wc.wr_id, (uint64_t)i);
		assert_memory_equal(a[i], b[i], 5000);
	}
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rnr_nak_sent], 1);
	assert_int_equal(q0[RFW_CNT_rnr_nak_retry_err], 1);
	/* The in-flight packets behind the RNR NAK drew no sequence NAK. */
	assert_int_equal(q1[RFW_CNT_nak_seq_err_sent], 0);
	assert_int_equal(q0[RFW_CNT_packet_seq_err], 0);
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 0);
	lb_destroy(lb);
}

static void test_rnr_exhaustion(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[100];
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.rnr_retry = 2;
	c.min_rnr_timer = 1;
	lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, a, 100, amr, 0, 0), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 2, a, 100, amr, 0, 0), 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, RFW_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, RFW_WC_WR_FLUSH_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_rnr_nak_retry_err], 3); /* first try + 2 retries */
	lb_destroy(lb);
}

/* ---- access violations ---- */

static void access_case(unsigned mr_access, uint64_t off, uint32_t len, bool bad_key,
                        enum rfw_wr_opcode op)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[8192], b[4096], b_copy[4096];
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr_acc(&lb->ep[1], b, sizeof(b), mr_access);

	assert_non_null(bmr);
	lb_fill(a, sizeof(a), 11);
	lb_fill(b, sizeof(b), 12);
	memcpy(b_copy, b, sizeof(b));
	assert_int_equal(lb_post_op(&lb->ep[0], op, 1, a, len, amr, (uint64_t)(uintptr_t)b + off,
	                            rfw_mr_rkey(bmr) ^ (bad_key ? 0x100 : 0)),
	                 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 2, a, 10, amr, 0, 0), 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, RFW_WC_REM_ACCESS_ERR);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_WR_FLUSH_ERR);
	assert_memory_equal(b, b_copy, sizeof(b)); /* responder memory untouched */
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q0[RFW_CNT_req_remote_access_errors], 1);
	assert_int_equal(q1[RFW_CNT_resp_remote_access_errors], 1);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	assert_int_equal(rfw_qp_state(lb->ep[1].qp), RFW_QPS_ERR);
	lb_destroy(lb);
}

static void test_access_errors(void **s)
{
	const unsigned all = RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                     RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC;

	(void)s;
	access_case(all, 0, 100, true, RFW_WR_RDMA_WRITE);     /* bad rkey */
	access_case(all, 4000, 200, false, RFW_WR_RDMA_WRITE); /* past the end */
	access_case(all, 0, 5000, false, RFW_WR_RDMA_WRITE);   /* longer than the MR */
	access_case(RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_READ, 0, 100, false,
	            RFW_WR_RDMA_WRITE); /* no remote write */
	access_case(RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE, 0, 100, false,
	            RFW_WR_RDMA_READ);                        /* no remote read */
	access_case(all, 4090, 100, false, RFW_WR_RDMA_READ); /* read past the end */
	access_case(all, 0, 100, true, RFW_WR_RDMA_READ);     /* read, bad rkey */
}

/* The target MR goes away in the middle of a WRITE: the rest is refused, nothing lands. */
struct dereg_probe {
	struct rfw_mr *mr;
	int seen;
};

static enum lb_verdict dereg_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct dereg_probe *d = arg;

	(void)lb;
	(void)ib;
	(void)len;
	if (from == 0 && ++d->seen == 4 && d->mr) {
		rfw_dereg_mr(d->mr);
		d->mr = NULL;
	}
	return LB_PASS;
}

static void test_mr_gone_mid_write(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[8192], b[8192];
	struct dereg_probe d = {0};
	struct rfw_wc wc;

	(void)s;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	d.mr = rfw_reg_mr(lb->ep[1].pd, b, sizeof(b),
	                  RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
	lb_fill(a, sizeof(a), 5);
	memset(b, 0, sizeof(b));
	lb->filter = dereg_filter;
	lb->farg = &d;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(d.mr)),
	                 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_ACCESS_ERR);
	/* Packets 1-3 landed (3 KiB), packet 4 onwards did not. */
	assert_memory_equal(a, b, 3 * 1024);
	for (size_t i = 3 * 1024; i < sizeof(b); i++)
		assert_int_equal(b[i], 0);
	lb_destroy(lb);
}

static void test_atomic_access_error(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint64_t t = 42, r;
	struct rfw_mr *tmr =
	    lb_mr_acc(&lb->ep[1], &t, 8, RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
	struct rfw_mr *rmr = lb_mr(&lb->ep[0], &r, 8);
	struct rfw_sge sge = {(uint64_t)(uintptr_t)&r, 8, rfw_mr_lkey(rmr)};
	struct rfw_send_wr wr = {.wr_id = 1,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_ATOMIC_FETCH_AND_ADD,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	(void)s;
	wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&t;
	wr.wr.atomic.rkey = rfw_mr_rkey(tmr);
	wr.wr.atomic.compare_add = 1;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_ACCESS_ERR);
	assert_int_equal(t, 42);
	lb_destroy(lb);
}

/* A SEND longer than the receive buffer: local length error at the responder. */
static void test_recv_too_small(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[3000], b[3000];
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(lb_post_recv(&lb->ep[1], 5, b, 1500, bmr), 0);
	assert_int_equal(lb_post_recv(&lb->ep[1], 6, b, 1500, bmr), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_SEND, 1, a, 2000, amr, 0, 0), 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_REM_INV_REQ_ERR);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, RFW_WC_LOC_LEN_ERR);
	assert_int_equal(poll_one(lb->ep[1].rcq, &wc), 1);
	assert_int_equal(wc.wr_id, 6);
	assert_int_equal(wc.status, RFW_WC_WR_FLUSH_ERR);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_resp_local_length_error], 1);
	lb_destroy(lb);
}

/* ---- duplicate READ and atomic requests ---- */

struct dup_filter {
	uint8_t opcode;
	int from;
	int dups;
	int drop_resp; /* drop the first response of that kind so the requester retries */
	uint8_t resp_opcode;
};

static enum lb_verdict dup_filter_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                     void *arg)
{
	struct dup_filter *d = arg;

	(void)lb;
	(void)len;
	if (from == d->from && ib[0] == d->opcode) {
		d->dups++;
		return LB_DUP;
	}
	if (from != d->from && ib[0] == d->resp_opcode && d->drop_resp) {
		d->drop_resp--;
		return LB_DROP;
	}
	return LB_PASS;
}

static void test_duplicate_atomic_not_reexecuted(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint64_t t, r;
	struct rfw_mr *tmr = lb_mr(&lb->ep[1], &t, 8);
	struct rfw_mr *rmr = lb_mr(&lb->ep[0], &r, 8);
	struct rfw_sge sge = {(uint64_t)(uintptr_t)&r, 8, rfw_mr_lkey(rmr)};
	struct rfw_send_wr wr = {.wr_id = 1,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_ATOMIC_FETCH_AND_ADD,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct dup_filter d = {.opcode = RFW_OP_RC_FETCH_ADD,
	                       .from = 0,
	                       .drop_resp = 1,
	                       .resp_opcode = RFW_OP_RC_ATOMIC_ACKNOWLEDGE};
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	(void)s;
	t = 10;
	lb->filter = dup_filter_fn;
	lb->farg = &d;
	wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&t;
	wr.wr.atomic.rkey = rfw_mr_rkey(tmr);
	wr.wr.atomic.compare_add = 5;
	for (int i = 0; i < 3; i++) {
		wr.wr_id = (uint64_t)i;
		assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	}
	lb_run(lb, 1000000000);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 0);
	/* Every request arrived at least twice, yet the add ran exactly three times. */
	assert_true(d.dups >= 3);
	assert_int_equal(t, 25);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rx_atomic_requests], 3);
	assert_true(q1[RFW_CNT_atomic_replays] >= 3);
	assert_int_equal(r, 20); /* the last one saw 10 + 5 + 5 */
	lb_destroy(lb);
}

static void test_duplicate_read_replayed(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[10000], b[10000];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct dup_filter d = {.opcode = RFW_OP_RC_RDMA_READ_REQUEST,
	                       .from = 0,
	                       .drop_resp = 1,
	                       .resp_opcode = RFW_OP_RC_RDMA_READ_RESPONSE_MIDDLE};
	uint64_t q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	lb_fill(b, sizeof(b), 77);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, 10000, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb->filter = dup_filter_fn;
	lb->farg = &d;
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 10000);
	assert_memory_equal(a, b, sizeof(b));
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rx_read_requests], 1);
	assert_true(q1[RFW_CNT_read_replays] >= 1);
	assert_true(q1[RFW_CNT_duplicate_request] >= 1);
	lb_destroy(lb);
}

/*
 * Responses leave in PSN order with the MSN of their own request: a READ's responses, built
 * after later requests executed, must not carry their higher MSN, or the MSN goes backwards
 * at the next response (the AETH MSN counts completed messages; what rc_invariants checks on
 * every capture). Before the fix: READ LAST carried MSN 3, the atomic ACK behind it MSN 2.
 */
struct msn_watch {
	uint32_t last_msn;
	int responses, backwards;
};

static enum lb_verdict msn_watch_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct msn_watch *m = arg;
	struct rfw_ib_pkt p;

	(void)lb;
	if (from != 1 || rfw_ib_parse(ib, len, &p) != RFW_IB_ERR_OK || !(p.op->hdrs & RFW_HDR_AETH))
		return LB_PASS;
	if (m->responses++ && p.aeth.msn < m->last_msn)
		m->backwards++;
	m->last_msn = p.aeth.msn;
	return LB_PASS;
}

static void msn_in_order(enum rfw_transport_mode mode)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[10000], b[10000];
	static uint64_t t, r;
	struct msn_watch m = {0};
	struct rfw_send_wr fa = {.wr_id = 2,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_ATOMIC_FETCH_AND_ADD,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct rfw_wc wc;

	c.mode[0] = c.mode[1] = mode;
	lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_mr *tmr = lb_mr(&lb->ep[1], &t, 8);
	struct rfw_mr *rmr = lb_mr(&lb->ep[0], &r, 8);
	struct rfw_sge sge = {(uint64_t)(uintptr_t)&r, 8, rfw_mr_lkey(rmr)};

	fa.sg_list = &sge;
	fa.wr.atomic.remote_addr = (uint64_t)(uintptr_t)&t;
	fa.wr.atomic.rkey = rfw_mr_rkey(tmr);
	fa.wr.atomic.compare_add = 1;
	lb_fill(b, sizeof(b), 5);
	lb->filter = msn_watch_fn;
	lb->farg = &m;
	/* WRITE, READ, atomic, WRITE: ACK, READ responses and atomic ACK, ACK */
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 0, a, 100, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &fa, &bad, 0), 0);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 3, a, 100, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 1000000000);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_true(m.responses >= 3);
	assert_int_equal(m.backwards, 0);
	assert_int_equal(m.last_msn, 4);
	lb_destroy(lb);
}

static void test_response_msn_in_order(void **s)
{
	(void)s;
	msn_in_order(RFW_TRANSPORT_GBN);
	msn_in_order(RFW_TRANSPORT_SR);
}

/* ---- PSN wrap ---- */

static void test_psn_wrap(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[65536], b[65536];
	struct drop_nth d = {.from = 0, .opcode = 0xff, .n = 20, .count = 1};
	struct rfw_qp_attr qa;
	struct rfw_wc wc;

	(void)s;
	c.psn[0] = 0xfffff0;
	c.psn[1] = 0xffffff;
	c.mtu = RFW_MTU_256;
	lb = lb_create(&c);
	lb->filter = drop_nth_filter;
	lb->farg = &d;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	for (int i = 0; i < 40; i++) {
		lb_fill(a, sizeof(a), (uint32_t)i);
		assert_int_equal(lb_post_op(&lb->ep[0],
		                            i & 1 ? RFW_WR_RDMA_READ : RFW_WR_RDMA_WRITE,
		                            (uint64_t)i, a, sizeof(a), amr, (uint64_t)(uintptr_t)b,
		                            rfw_mr_rkey(bmr)),
		                 0);
		lb_run(lb, 1000000000);
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
		assert_memory_equal(a, b, sizeof(a));
		if (i == 0)
			d.n = d.seen + 300, d.dropped = 0; /* another loss later, across the wrap */
	}
	rfw_query_qp(lb->ep[0].qp, &qa);
	/* 40 messages of 256 packets from 0xfffff0: the PSN wrapped to 40*256 - 16. */
	assert_int_equal(qa.sq_psn, (0xfffff0 + 40 * 256) & 0xffffff);
	rfw_query_qp(lb->ep[1].qp, &qa);
	assert_int_equal(qa.rq_psn, (0xfffff0 + 40 * 256) & 0xffffff);
	lb_destroy(lb);
}

/* ---- 2 GiB messages ---- */

struct big_probe {
	int pass; /* requester packets let through, then everything from it is lost */
	int seen;
	uint8_t first_opcode;
	uint32_t first_dma_len;
};

static enum lb_verdict big_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct big_probe *b = arg;
	struct rfw_ib_pkt p;

	(void)lb;
	if (from != 0)
		return LB_PASS;
	if (b->seen++ == 0 && rfw_ib_parse(ib, len, &p) == RFW_IB_ERR_OK) {
		b->first_opcode = p.bth.opcode;
		b->first_dma_len = p.reth.dma_len;
	}
	return b->seen <= b->pass ? LB_PASS : LB_DROP;
}

/*
 * The largest message, 2 GiB, without 2 GiB of memory: both MRs are 2 GiB MAP_NORESERVE
 * mappings (untouched pages cost nothing), the first 3000 packets (12 MiB) are delivered and
 * checked, then the link dies and the WRITE ends with RETRY_EXC_ERR. One byte more than
 * 2 GiB is refused at post time.
 */
static void test_two_gib_message(void **s)
{
	const size_t two_g = (size_t)1 << 31, pass = 3000, mtu = 4096;
	struct lb_cfg c = lb_default_cfg();
	struct big_probe b = {.pass = (int)pass};
	struct loop *lb;
	uint8_t *src, *dst;
	struct rfw_mr *smr, *dmr;
	struct rfw_wc wc;
	uint64_t q1[RFW_CNT__COUNT];

	(void)s;
	src = mmap(NULL, two_g, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	           -1, 0);
	dst = mmap(NULL, two_g, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	           -1, 0);
	assert_true(src != MAP_FAILED && dst != MAP_FAILED);
	c.mtu = RFW_MTU_4096;
	c.retry_cnt = 1;
	c.timeout = 5;
	lb = lb_create(&c);
	smr = lb_mr(&lb->ep[0], src, two_g);
	dmr = lb_mr(&lb->ep[1], dst, two_g);
	assert_non_null(smr);
	assert_non_null(dmr);
	lb_fill(src, pass * mtu, 99);
	lb->filter = big_filter;
	lb->farg = &b;

	/* 2 GiB + 1 in two SGEs: refused. */
	struct rfw_sge sg[2] = {{(uint64_t)(uintptr_t)src, (uint32_t)two_g, rfw_mr_lkey(smr)},
	                        {(uint64_t)(uintptr_t)src, 1, rfw_mr_lkey(smr)}};
	struct rfw_send_wr wr = {.wr_id = 1,
	                         .sg_list = sg,
	                         .num_sge = 2,
	                         .opcode = RFW_WR_RDMA_WRITE,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad = NULL;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)dst;
	wr.wr.rdma.rkey = rfw_mr_rkey(dmr);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), EINVAL);
	assert_ptr_equal(bad, &wr);
	/* 2 GiB + 1 in one SGE (check_send_wr's path for one SGE): refused too. */
	wr.num_sge = 1;
	sg[0].length = (uint32_t)two_g + 1;
	bad = NULL;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), EINVAL);
	assert_ptr_equal(bad, &wr);
	sg[0].length = (uint32_t)two_g;
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 10000000000ull);

	assert_int_equal(b.first_opcode, RFW_OP_RC_RDMA_WRITE_FIRST);
	assert_int_equal(b.first_dma_len, 0x80000000u);
	assert_memory_equal(dst, src, pass * mtu);
	assert_int_equal(dst[pass * mtu], 0); /* the rest never arrived */
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rx_write_requests], 1);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_RETRY_EXC_ERR);
	lb_destroy(lb);
	munmap(src, two_g);
	munmap(dst, two_g);
}

/* ---- QP state machine ---- */

static void test_qp_state_machine(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct rfw_dev *dev = lb->ep[0].dev;
	struct rfw_qp_init_attr ia = {.send_cq = lb->ep[0].scq,
	                              .recv_cq = lb->ep[0].rcq,
	                              .cap = {.max_send_wr = 4, .max_recv_wr = 4}};
	struct rfw_qp *qp = rfw_create_qp(lb->ep[0].pd, &ia);
	struct rfw_qp_attr a = {0};
	static uint8_t buf[16];
	struct rfw_sge sge = {(uint64_t)(uintptr_t)buf, 16, 0};
	struct rfw_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = RFW_WR_SEND};
	struct rfw_send_wr *bad = NULL;

	(void)s;
	(void)dev;
	assert_non_null(qp);
	assert_int_equal(rfw_qp_state(qp), RFW_QPS_RESET);
	/* RESET -> RTR is not a transition. */
	a.qp_state = RFW_QPS_RTR;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), -EINVAL);
	/* post_send before RTS: EINVAL and bad_wr. */
	assert_int_equal(rfw_post_send(qp, &wr, &bad, 0), EINVAL);
	assert_ptr_equal(bad, &wr);
	a.qp_state = RFW_QPS_INIT;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS), 0);
	/* INIT -> RTR without the required attributes fails. */
	a.qp_state = RFW_QPS_RTR;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_PATH_MTU), -EINVAL);
	a.path_mtu = 7;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_PATH_MTU), -EINVAL);
	a.path_mtu = RFW_MTU_4096;
	a.retry_cnt = 8;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_RETRY_CNT), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a,
	                               RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU |
	                                   RFW_QP_DEST_QPN | RFW_QP_RQ_PSN |
	                                   RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER),
	                 0);
	assert_int_equal(rfw_qp_state(qp), RFW_QPS_RTR);
	a.qp_state = RFW_QPS_RTS;
	a.retry_cnt = 7;
	assert_int_equal(rfw_modify_qp(qp, &a,
	                               RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT |
	                                   RFW_QP_RETRY_CNT | RFW_QP_RNR_RETRY |
	                                   RFW_QP_MAX_QP_RD_ATOMIC),
	                 0);
	a.qp_state = RFW_QPS_SQD;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	a.qp_state = RFW_QPS_RTS;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	/* SQ full: ENOMEM on the 5th of 4. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(rfw_post_send(qp, &wr, &bad, 0), 0);
	assert_int_equal(rfw_post_send(qp, &wr, &bad, 0), ENOMEM);
	/* ERR flushes all four; back to RESET and INIT works. */
	a.qp_state = RFW_QPS_ERR;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	struct rfw_wc wc[8];
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 8, wc), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(wc[i].status, RFW_WC_WR_FLUSH_ERR);
	a.qp_state = RFW_QPS_RESET;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	a.qp_state = RFW_QPS_INIT;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS), 0);
	assert_string_equal(rfw_qp_state_str(RFW_QPS_SQE), "SQE");
	assert_string_equal(rfw_wc_status_str(RFW_WC_RETRY_EXC_ERR),
	                    "transport retry counter exceeded");
	assert_int_equal(rfw_destroy_qp(qp), 0);
	lb_destroy(lb);
}

/* ---- ordering: SQD, fence, initiator depth ---- */

/* A log of opcodes in the order the loopback delivered them, per direction. */
struct op_log {
	uint8_t op[256];
	int from[256];
	int n;
};

static enum lb_verdict log_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct op_log *l = arg;

	(void)lb;
	(void)len;
	if (l->n < 256) {
		l->op[l->n] = ib[0];
		l->from[l->n++] = from;
	}
	return LB_PASS;
}

static int log_find(const struct op_log *l, int from, uint8_t op, int nth)
{
	for (int i = 0; i < l->n; i++)
		if (l->from[i] == from && l->op[i] == op && nth-- == 0)
			return i;
	return -1;
}

static void test_sqd(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[100], b[100];
	struct rfw_qp_attr qa = {0};
	struct rfw_wc wc;

	(void)s;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	qa.qp_state = RFW_QPS_SQD;
	assert_int_equal(rfw_modify_qp(lb->ep[0].qp, &qa, RFW_QP_STATE), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, (uint64_t)i, a, 100, amr,
		                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
		                 0);
	lb_run(lb, 10000000);
	/* Drained: nothing new starts. */
	assert_int_equal(lb->pkts_from[0], 0);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 0);
	qa.qp_state = RFW_QPS_RTS;
	assert_int_equal(rfw_modify_qp(lb->ep[0].qp, &qa, RFW_QP_STATE), 0);
	lb_run(lb, 10000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	lb_destroy(lb);
}

static void test_fence_and_rd_atomic_depth(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[3][3000], b[3000];
	struct op_log log = {0};
	struct rfw_wc wc;
	int i_write, i_last;

	(void)s;
	/* Fence: a WRITE behind a READ waits for the READ's response. */
	lb = lb_create(&c);
	lb->filter = log_filter;
	lb->farg = &log;
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_sge sge = {(uint64_t)(uintptr_t)a[1], 100, rfw_mr_lkey(amr)};
	struct rfw_send_wr wr = {.wr_id = 2,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE,
	                         .send_flags = RFW_SEND_SIGNALED | RFW_SEND_FENCE};
	struct rfw_send_wr *bad;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)b;
	wr.wr.rdma.rkey = rfw_mr_rkey(bmr);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a[0], 3000, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 10000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	i_last = log_find(&log, 1, RFW_OP_RC_RDMA_READ_RESPONSE_LAST, 0);
	i_write = log_find(&log, 0, RFW_OP_RC_RDMA_WRITE_ONLY, 0);
	assert_true(i_last >= 0 && i_write > i_last);
	lb_destroy(lb);

	/* Without the fence the WRITE goes right behind the READ request. */
	memset(&log, 0, sizeof(log));
	lb = lb_create(&c);
	lb->filter = log_filter;
	lb->farg = &log;
	amr = lb_mr(&lb->ep[0], a, sizeof(a));
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	sge.lkey = rfw_mr_lkey(amr);
	wr.wr.rdma.rkey = rfw_mr_rkey(bmr);
	wr.send_flags = RFW_SEND_SIGNALED;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a[0], 3000, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, 0), 0);
	lb_run(lb, 10000000);
	i_last = log_find(&log, 1, RFW_OP_RC_RDMA_READ_RESPONSE_LAST, 0);
	i_write = log_find(&log, 0, RFW_OP_RC_RDMA_WRITE_ONLY, 0);
	assert_true(i_write >= 0 && i_write < i_last);
	lb_destroy(lb);

	/* max_rd_atomic 1: the second READ request waits for the first READ's last response. */
	memset(&log, 0, sizeof(log));
	c.max_rd_atomic = 1;
	lb = lb_create(&c);
	lb->filter = log_filter;
	lb->farg = &log;
	amr = lb_mr(&lb->ep[0], a, sizeof(a));
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	for (int i = 0; i < 3; i++)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, (uint64_t)i, a[i], 3000,
		                            amr, (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
		                 0);
	lb_run(lb, 10000000);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.wr_id, (uint64_t)i);
	}
	for (int i = 0; i < 2; i++)
		assert_true(log_find(&log, 0, RFW_OP_RC_RDMA_READ_REQUEST, i + 1) >
		            log_find(&log, 1, RFW_OP_RC_RDMA_READ_RESPONSE_LAST, i));
	lb_destroy(lb);
}

/* ---- ACK coalescing and timer tables ---- */

static void test_ack_coalescing(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[100 * 1024], b[100 * 1024];
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.ack_every = 16;
	lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	/* 100 packets of 1 KiB: AckReq on packets 16, 32, ..., 96 and the last: 7 ACKs at most. */
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 100000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q0[RFW_CNT_tx_packets], 100);
	assert_true(q1[RFW_CNT_tx_acks] >= 1 && q1[RFW_CNT_tx_acks] <= 7);
	assert_int_equal(q0[RFW_CNT_rx_acks], q1[RFW_CNT_tx_acks]);
	lb_destroy(lb);
}

/* AckReq only at message ends and a window smaller than a message: the packet that fills the
 * window must ask for an ACK, or the QP would stall until it times out. */
static void test_window_ackreq(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[64 * 1024], b[64 * 1024];
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	c.ack_every = 0;
	c.max_unacked = 8;
	lb = lb_create(&c);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	lb_fill(a, sizeof(a), 8);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(a, b, sizeof(a));
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 0);
	/* 64 packets in windows of 8: one ACK per window. */
	assert_int_equal(q1[RFW_CNT_tx_acks], 8);
	lb_destroy(lb);
}

/* The PSN of the frame at ring position @i. */
static uint32_t frame_psn(const struct loop *lb, uint32_t i)
{
	return rfw_get_be32(lb->ring[i % LB_RING].data + 8) & 0xffffff;
}

/* Run the pair to the end: A's one WR completes successfully, and @a and @b agree. */
static void run_one_ok(struct loop *lb, const void *a, const void *b, size_t len)
{
	struct rfw_wc wc;

	lb_run(lb, 1000000000);
	assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(a, b, len);
}

/*
 * A long WRITE goes out several packets a call (rfw_req_tx_more), within the caller's budget:
 * 8 packets in calls of 3 are 3, 3, 2 frames, FIRST, MIDDLE.., LAST at consecutive PSNs, and
 * land intact. The source MR deregistered between two calls: the next call's first packet
 * checks the local key again (IBA 10.6: an MR deregistered is not accessed), so nothing more
 * of the WRITE is sent and it completes with a local protection error.
 */
static void write_in_calls(bool dereg_between)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[8 * 1024], b[8 * 1024];
	struct rfw_mr *amr = rfw_reg_mr(lb->ep[0].pd, a, sizeof(a), RFW_ACCESS_LOCAL_WRITE);
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	static const unsigned want[] = {3, 3, 2, 0};
	uint32_t psn0 = 0;
	struct rfw_wc wc;

	lb_fill(a, sizeof(a), 5);
	memset(b, 0, sizeof(b));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	for (unsigned k = 0; k < 4; k++) {
		uint32_t before = lb->prod;

		if (k == 1 && dereg_between)
			assert_int_equal(rfw_dereg_mr(amr), 0);
		unsigned n = rfw_qp_tx_burst(lb->ep[0].qp, 3, 0);

		assert_int_equal(n, dereg_between && k >= 1 ? 0 : want[k]);
		assert_int_equal(lb->prod - before, n);
		for (uint32_t i = before; i < lb->prod; i++) {
			const uint8_t *ib = lb->ring[i % LB_RING].data;
			uint32_t at = i - before + 3 * k;

			if (at == 0)
				psn0 = frame_psn(lb, i);
			assert_int_equal(ib[0], at == 0   ? RFW_OP_RC_RDMA_WRITE_FIRST
			                        : at == 7 ? RFW_OP_RC_RDMA_WRITE_LAST
			                                  : RFW_OP_RC_RDMA_WRITE_MIDDLE);
			assert_int_equal(frame_psn(lb, i), (psn0 + at) & 0xffffff);
		}
	}
	if (dereg_between) {
		lb->cons = lb->prod; /* the three sent are lost: nothing lands */
		lb_run(lb, 1000000000);
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_LOC_PROT_ERR);
		assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	} else {
		run_one_ok(lb, a, b, sizeof(a));
		rfw_dereg_mr(amr);
	}
	lb_destroy(lb);
}

static void test_write_in_calls(void **s)
{
	(void)s;
	write_in_calls(false);
	write_in_calls(true);
}

/*
 * Several messages a call (rfw_req_tx_more's run past a message's end), with each mode: what
 * next_wqe would stop at stops the run, and the general path then decides. WRITE, WRITE,
 * READ, WRITE, a WRITE whose local key is bad, WRITE: one call of budget 16 sends the first
 * four at consecutive PSNs (the READ by rfw_req_tx, the run going on after it) and stops at
 * the bad key, whose WQE completes with a local protection error and the last one flushed.
 * Then READ, a fenced WRITE and a WRITE: the READ alone goes (IBA 10.8.3.3: the fence waits
 * for it), then the two WRITEs once it is answered. Then five WRITEs in calls of budget 3 go
 * 3 and 2, and with go-back-N a window of 4 PSNs lets 4 of 6 go. Checking builds also hold
 * each message the run takes to what next_wqe picks (rfw_invariant).
 */
static void msgs_stop_at_bad_key(enum rfw_transport_mode m)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[6][64], b[6][64];
	static const uint8_t op[] = {RFW_OP_RC_RDMA_WRITE_ONLY, RFW_OP_RC_RDMA_WRITE_ONLY,
	                             RFW_OP_RC_RDMA_READ_REQUEST, RFW_OP_RC_RDMA_WRITE_ONLY};
	struct rfw_mr *amr, *bmr;
	struct rfw_wc wc;

	c.mode[0] = c.mode[1] = m;
	lb = lb_create(&c);
	amr = rfw_reg_mr(lb->ep[0].pd, a, sizeof(a), RFW_ACCESS_LOCAL_WRITE);
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	lb_fill(a[0], sizeof(a), 9);
	lb_fill(b[2], sizeof(b[2]), 3);
	for (unsigned k = 0; k < 6; k++) {
		enum rfw_wr_opcode o = k == 2 ? RFW_WR_RDMA_READ : RFW_WR_RDMA_WRITE;
		struct rfw_sge sge = {(uint64_t)(uintptr_t)a[k], 64, rfw_mr_lkey(amr) + (k == 4)};
		struct rfw_send_wr wr = {.wr_id = k,
		                         .sg_list = &sge,
		                         .num_sge = 1,
		                         .opcode = o,
		                         .send_flags = RFW_SEND_SIGNALED};
		struct rfw_send_wr *bad = NULL;

		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)b[k];
		wr.wr.rdma.rkey = rfw_mr_rkey(bmr);
		assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, lb->now), 0);
	}
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 4);
	assert_int_equal(lb->prod - lb->cons, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(lb->ring[(lb->cons + i) % LB_RING].data[0], op[i]);
		assert_int_equal(frame_psn(lb, lb->cons + i),
		                 (frame_psn(lb, lb->cons) + i) & 0xffffff);
	}
	lb_run(lb, 1000000000);
	for (uint64_t k = 0; k < 6; k++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.wr_id, k);
		assert_int_equal(wc.status, k < 4    ? RFW_WC_SUCCESS
		                            : k == 4 ? RFW_WC_LOC_PROT_ERR
		                                     : RFW_WC_WR_FLUSH_ERR);
	}
	assert_memory_equal(a[0], b[0], 2 * 64);
	assert_memory_equal(a[2], b[2], 2 * 64);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_ERR);
	rfw_dereg_mr(amr);
	lb_destroy(lb);
}

/* @n WRITEs of 64 bytes (FENCE on the @fenced-th, -1: none) after a READ when @read. */
static void post_writes(struct loop *lb, struct rfw_mr *amr, uint8_t *a, struct rfw_mr *bmr,
                        uint8_t *b, bool read, unsigned n, int fenced)
{
	if (read)
		assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 99, a + 64 * 8, 64, amr,
		                            (uint64_t)(uintptr_t)(b + 64 * 8), rfw_mr_rkey(bmr)),
		                 0);
	for (unsigned k = 0; k < n; k++)
		assert_int_equal(
		    lb_post_op_flags(&lb->ep[0], RFW_WR_RDMA_WRITE, k, a + 64 * k, 64, amr,
		                     (uint64_t)(uintptr_t)(b + 64 * k), rfw_mr_rkey(bmr),
		                     RFW_SEND_SIGNALED | ((int)k == fenced ? RFW_SEND_FENCE : 0)),
		    0);
}

static void msgs_fence_budget_window(enum rfw_transport_mode m)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t a[9 * 64], b[9 * 64];
	struct rfw_mr *amr, *bmr;
	struct rfw_wc wc;

	c.mode[0] = c.mode[1] = m;
	c.max_unacked = 4;
	lb = lb_create(&c);
	amr = rfw_reg_mr(lb->ep[0].pd, a, sizeof(a), RFW_ACCESS_LOCAL_WRITE);
	bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	lb_fill(a, sizeof(a), 4);
	post_writes(lb, amr, a, bmr, b, true, 2, 0);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 1);
	lb_run(lb, 1000000000);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 3, (struct rfw_wc[3]){0}), 3);
	post_writes(lb, amr, a, bmr, b, false, 5, -1);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 3, 0), 3);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 3, 0), m == RFW_TRANSPORT_GBN ? 1 : 2);
	lb_run(lb, 1000000000);
	for (unsigned k = 0; k < 5; k++) {
		assert_int_equal(poll_one(lb->ep[0].scq, &wc), 1);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_memory_equal(a, b, 5 * 64);
	assert_memory_equal(a + 64 * 8, b + 64 * 8, 64);
	rfw_dereg_mr(amr);
	lb_destroy(lb);
}

static void test_msgs_in_calls(void **s)
{
	(void)s;
	msgs_stop_at_bad_key(RFW_TRANSPORT_GBN);
	msgs_stop_at_bad_key(RFW_TRANSPORT_SR);
	msgs_fence_budget_window(RFW_TRANSPORT_GBN);
	msgs_fence_budget_window(RFW_TRANSPORT_SR);
}

/*
 * One coalesced ACK retires a row of WQEs (comp.c's retire_covered and the state machine's
 * round alike): WRITEs 0..7, only 0 and 3 signaled, sent in one call; B gets the first four
 * and answers with one ACK, which reaches A 1 ms later, before B gets the rest. A then holds
 * CQEs for 0 and 3 only, in order, and its local ACK timer restarted at the ACK's arrival for
 * the four still out (IBA 9.7.6.1.3: an ACK that makes progress restarts it). The rest go, and
 * everything lands; then READ, WRITE x 3, READ in a row: each READ stops the row and completes
 * in its place.
 */
static void deliver_at(struct loop *lb, uint32_t i)
{
	static struct lb_pkt tmp;

	tmp = lb->ring[i % LB_RING];
	lb_deliver(lb, &tmp);
}

static void test_ack_retires_row(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[10][64], b[10][64];
	struct rfw_mr *amr = rfw_reg_mr(lb->ep[0].pd, a, sizeof(a), RFW_ACCESS_LOCAL_WRITE);
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	struct rfw_wc wc[8];
	uint32_t first;

	(void)s;
	lb_fill(a[0], sizeof(a), 21);
	for (unsigned k = 0; k < 8; k++)
		assert_int_equal(lb_post_op_flags(&lb->ep[0], RFW_WR_RDMA_WRITE, k, a[k], 64, amr,
		                                  (uint64_t)(uintptr_t)b[k], rfw_mr_rkey(bmr),
		                                  k == 0 || k == 3 ? RFW_SEND_SIGNALED : 0),
		                 0);
	first = lb->prod;
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, lb->now), 8);
	for (uint32_t i = 0; i < 4; i++)
		deliver_at(lb, first + i);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[1].qp, 16, lb->now), 1);
	lb->now += 1000000;
	deliver_at(lb, lb->prod - 1);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 8, wc), 2);
	assert_int_equal(wc[0].wr_id, 0);
	assert_int_equal(wc[1].wr_id, 3);
	assert_int_equal(wc[1].status, RFW_WC_SUCCESS);
	assert_int_equal(rfw_qp_next_deadline(lb->ep[0].qp),
	                 lb->now + rfw_ack_timeout_ns(c.timeout));
	lb->cons = lb->prod; /* the ACK delivered; the rest of A's go again after the timeout */
	lb_run(lb, 1000000000);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 8, wc), 0);
	assert_memory_equal(a, b, 8 * 64);
	assert_int_equal(rfw_qp_next_deadline(lb->ep[0].qp), UINT64_MAX);
	for (unsigned k = 0; k < 5; k++) {
		bool rd = k == 0 || k == 4;

		assert_int_equal(lb_post_op(&lb->ep[0], rd ? RFW_WR_RDMA_READ : RFW_WR_RDMA_WRITE,
		                            10 + k, a[k], 64, amr, (uint64_t)(uintptr_t)b[9 - k],
		                            rfw_mr_rkey(bmr)),
		                 0);
	}
	lb_run(lb, 1000000000);
	for (unsigned k = 0; k < 5; k++) {
		assert_int_equal(poll_one(lb->ep[0].scq, wc), 1);
		assert_int_equal(wc[0].wr_id, 10 + k);
		assert_int_equal(wc[0].status, RFW_WC_SUCCESS);
	}
	for (unsigned k = 0; k < 5; k++)
		assert_memory_equal(a[k], b[9 - k], 64);
	rfw_dereg_mr(amr);
	lb_destroy(lb);
}

/*
 * A READ's request three times at the responder before it answers (a requester whose local ACK
 * timer ran out twice while a long READ was answered): the first is executed, the second
 * queues one replay (IBA 9.7.5.1.3), and the third restarts that replay where it asks instead
 * of queueing another: 64 + 64 responses for a 64 KiB READ at MTU 1024, not 3 x 64 (queued one
 * behind another they grew by a READ each timeout, and the requester ran out of retries with
 * nothing lost: fuzz_transport, corpus regress_gbn_read_replays_pile_up.bin). The READ
 * completes with the responder's bytes.
 */
static void test_read_dup_restarts_replay(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[65536], b[65536];
	struct rfw_mr *amr = rfw_reg_mr(lb->ep[0].pd, a, sizeof(a), RFW_ACCESS_LOCAL_WRITE);
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	uint64_t cnt[RFW_CNT__COUNT];
	uint32_t first, sent = 0, k;

	(void)s;
	lb_fill(b, sizeof(b), 17);
	memset(a, 0, sizeof(a));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, a, sizeof(a), amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	first = lb->prod;
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, lb->now), 1);
	for (int i = 0; i < 3; i++)
		deliver_at(lb, first);
	lb->cons = first + 1;
	while ((k = rfw_qp_tx_burst(lb->ep[1].qp, 1024, lb->now)) > 0)
		sent += k;
	assert_int_equal(sent, 2 * 64);
	rfw_qp_counters(lb->ep[1].qp, cnt);
	assert_int_equal(cnt[RFW_CNT_read_replays], 2);
	run_one_ok(lb, a, b, sizeof(a));
	rfw_dereg_mr(amr);
	lb_destroy(lb);
}

static void test_timer_tables(void **s)
{
	(void)s;
	/* IBA table 45, spot values. */
	assert_int_equal(rfw_rnr_timer_ns(0), 655360000ull);
	assert_int_equal(rfw_rnr_timer_ns(1), 10000ull);
	assert_int_equal(rfw_rnr_timer_ns(14), 1280000ull);
	assert_int_equal(rfw_rnr_timer_ns(31), 491520000ull);
	/* 4.096 us * 2^timeout; 0 is infinite. */
	assert_int_equal(rfw_ack_timeout_ns(14), 67108864ull);
	assert_int_equal(rfw_ack_timeout_ns(1), 8192ull);
	assert_true(rfw_ack_timeout_ns(0) == UINT64_MAX);
	for (int i = 0; i < RFW_CNT__COUNT; i++)
		assert_non_null(rfw_counter_name((enum rfw_counter)i));
	assert_string_equal(rfw_counter_name(RFW_CNT_out_of_sequence), "out_of_sequence");
}

/* ---- congestion-control hooks ---- */

struct cc_probe {
	uint64_t tx_bytes, ce, cnps;
};
static void cc_on_tx(void *cc, uint64_t now, uint32_t bytes)
{
	(void)now;
	((struct cc_probe *)cc)->tx_bytes += bytes;
}
static bool cc_np(void *cc, uint64_t now)
{
	(void)now;
	((struct cc_probe *)cc)->ce++;
	return true;
}
static void cc_rp(void *cc, uint64_t now)
{
	(void)now;
	((struct cc_probe *)cc)->cnps++;
}
static const struct rfw_cc_ops probe_ops = {
    .on_tx = cc_on_tx, .np_on_ce = cc_np, .rp_on_cnp = cc_rp};

static void test_cnp_hooks(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[4096], b[4096];
	struct cc_probe p0 = {0}, p1 = {0};
	uint8_t frame[64];
	struct rfw_ib_pkt pkt = {0}, parsed;
	struct rfw_rx_info rx = {0};
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];

	(void)s;
	rfw_qp_set_cc(lb->ep[0].qp, &probe_ops, &p0);
	rfw_qp_set_cc(lb->ep[1].qp, &probe_ops, &p1);
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, a, 4096, amr,
	                            (uint64_t)(uintptr_t)b, rfw_mr_rkey(bmr)),
	                 0);
	lb_run(lb, 100000000);
	/* 4 data packets of 12 + 16 (first) + 1024 bytes were accounted to the rate machine. */
	assert_int_equal(p0.tx_bytes, 4 * (12 + 1024) + 16);
	/* A CE-marked data packet at the responder: NP -> CNP -> RP at the requester. */
	pkt.bth.opcode = RFW_OP_RC_SEND_ONLY;
	pkt.bth.dqpn = rfw_qp_num(lb->ep[1].qp);
	pkt.bth.psn = 0x123456; /* out of sequence: dropped, but the CE mark still counts */
	assert_int_equal(rfw_ib_build(frame, sizeof(frame), &pkt), 12);
	assert_int_equal(rfw_ib_parse(frame, 12, &parsed), RFW_IB_ERR_OK);
	rx.pkt = &parsed;
	lb_rx_addr(lb, 0, &rx);
	rx.ecn = 3;
	assert_int_equal(rfw_dev_rx(lb->ep[1].dev, &rx, lb->now), 0);
	lb_run(lb, 100000000);
	assert_int_equal(p1.ce, 1);
	assert_int_equal(p0.cnps, 1);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_np_cnp_sent], 1);
	assert_int_equal(q1[RFW_CNT_np_ecn_marked_roce_packets], 1);
	assert_int_equal(q0[RFW_CNT_rp_cnp_handled], 1);
	lb_destroy(lb);
}

/* Garbage to an unknown QP, a response with no request, a bogus PSN: counted, dropped. */
static void test_unexpected_packets(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	struct rfw_ib_pkt pkt = {0}, parsed;
	struct rfw_rx_info rx = {0};
	uint8_t frame[64];
	uint64_t d0[RFW_CNT__COUNT];

	(void)s;
	pkt.bth.opcode = RFW_OP_RC_ACKNOWLEDGE;
	pkt.bth.dqpn = 9999;
	assert_true(rfw_ib_build(frame, sizeof(frame), &pkt) > 0);
	assert_int_equal(rfw_ib_parse(frame, 16, &parsed), RFW_IB_ERR_OK);
	rx.pkt = &parsed;
	assert_int_equal(rfw_dev_rx(lb->ep[0].dev, &rx, 0), -ENOENT);
	pkt.bth.dqpn = rfw_qp_num(lb->ep[0].qp);
	pkt.bth.psn = 77;
	lb_rx_addr(lb, 1, &rx);
	rfw_ib_build(frame, sizeof(frame), &pkt);
	rfw_ib_parse(frame, 16, &parsed);
	assert_int_equal(rfw_dev_rx(lb->ep[0].dev, &rx, 0), 0);
	rfw_dev_counters(lb->ep[0].dev, d0);
	assert_int_equal(d0[RFW_CNT_rx_unknown_qp], 1);
	assert_int_equal(d0[RFW_CNT_rx_ghost_response] + d0[RFW_CNT_rx_bad_response] +
	                     d0[RFW_CNT_duplicate_response],
	                 1);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_RTS);
	lb_destroy(lb);
}

/*
 * QP slots are reused first-freed-first (struct rfw_dev qp_free): a new QP does not take the
 * QPN just destroyed while older free ones wait, and a full table refuses with ENOMEM until a
 * slot frees. Every slot is used: max_qp QPs fit.
 */
static void test_qpn_reuse_fifo(void **s)
{
	struct rfw_dev_attr da = {.max_qp = 4, .qpn_base = 0x100};
	struct rfw_io_ops ops = lb_ops;
	struct rfw_dev *dev = rfw_dev_create(&da, &ops, NULL);
	struct rfw_pd *pd = rfw_alloc_pd(dev);
	struct rfw_cq *cq = rfw_create_cq(dev, 16);
	struct rfw_qp_init_attr ia = {.send_cq = cq,
	                              .recv_cq = cq,
	                              .qp_type = RFW_QPT_RC,
	                              .cap = {.max_send_wr = 4, .max_recv_wr = 4}};
	struct rfw_qp *qp[5];

	(void)s;
	assert_non_null(cq);
	for (int i = 0; i < 4; i++) {
		qp[i] = rfw_create_qp(pd, &ia);
		assert_non_null(qp[i]);
		assert_int_equal(rfw_qp_num(qp[i]), 0x100 + i);
	}
	errno = 0;
	assert_null(rfw_create_qp(pd, &ia));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(rfw_destroy_qp(qp[2]), 0);
	assert_int_equal(rfw_destroy_qp(qp[0]), 0);
	qp[4] = rfw_create_qp(pd, &ia); /* freed first: 0x102, then 0x100 */
	assert_int_equal(rfw_qp_num(qp[4]), 0x102);
	assert_ptr_equal(rfw_dev_qp(dev, 0x102), qp[4]);
	assert_null(rfw_dev_qp(dev, 0x100));
	assert_int_equal(rfw_destroy_qp(qp[4]), 0);
	qp[2] = rfw_create_qp(pd, &ia);
	assert_int_equal(rfw_qp_num(qp[2]), 0x100);
	qp[0] = rfw_create_qp(pd, &ia);
	assert_int_equal(rfw_qp_num(qp[0]), 0x102);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rfw_destroy_qp(qp[i]), 0);
	rfw_destroy_cq(cq);
	rfw_dealloc_pd(pd);
	rfw_dev_destroy(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timer_tables),
	    cmocka_unit_test(test_qpn_reuse_fifo),
	    cmocka_unit_test(test_send_sizes),
	    cmocka_unit_test(test_send_imm_sizes),
	    cmocka_unit_test(test_write_sizes),
	    cmocka_unit_test(test_write_imm_sizes),
	    cmocka_unit_test(test_read_sizes),
	    cmocka_unit_test(test_atomics_both_directions),
	    cmocka_unit_test(test_write_imm),
	    cmocka_unit_test(test_atomics),
	    cmocka_unit_test(test_invalidate),
	    cmocka_unit_test(test_inline_and_sgl),
	    cmocka_unit_test(test_unsignalled),
	    cmocka_unit_test(test_remote_op_error),
	    cmocka_unit_test(test_nak_seq_go_back_n),
	    cmocka_unit_test(test_lost_last_packet_timeout),
	    cmocka_unit_test(test_lost_ack),
	    cmocka_unit_test(test_retry_exhaustion),
	    cmocka_unit_test(test_rnr_then_success),
	    cmocka_unit_test(test_rnr_pipeline),
	    cmocka_unit_test(test_rnr_exhaustion),
	    cmocka_unit_test(test_access_errors),
	    cmocka_unit_test(test_mr_gone_mid_write),
	    cmocka_unit_test(test_atomic_access_error),
	    cmocka_unit_test(test_recv_too_small),
	    cmocka_unit_test(test_duplicate_atomic_not_reexecuted),
	    cmocka_unit_test(test_duplicate_read_replayed),
	    cmocka_unit_test(test_psn_wrap),
	    cmocka_unit_test(test_two_gib_message),
	    cmocka_unit_test(test_qp_state_machine),
	    cmocka_unit_test(test_sqd),
	    cmocka_unit_test(test_fence_and_rd_atomic_depth),
	    cmocka_unit_test(test_ack_coalescing),
	    cmocka_unit_test(test_window_ackreq),
	    cmocka_unit_test(test_write_in_calls),
	    cmocka_unit_test(test_msgs_in_calls),
	    cmocka_unit_test(test_ack_retires_row),
	    cmocka_unit_test(test_read_dup_restarts_replay),
	    cmocka_unit_test(test_cnp_hooks),
	    cmocka_unit_test(test_response_msn_in_order),
	    cmocka_unit_test(test_unexpected_packets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
