/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regression tests for the transport review of issue 13, items 2, 5, 6, 13 and 14 (test_review.c
 * has the others), over the loopback host (loop.h). Each test failed on the code before its
 * fix. Also a late ACK moving the requester forward past a READ it had rewound to.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loop.h"
#include "transport/rfw_int.h" /* white box: the requester's and completer's PSNs */

/* BTH fields of a packet the filter sees (IB part: BTH first). */
static uint32_t bth_psn(const uint8_t *ib)
{
	return ((uint32_t)ib[9] << 16 | (uint32_t)ib[10] << 8 | ib[11]) & 0xffffff;
}

/* ---- 13.13: a go-back-N retransmission lost again ---- */

struct drop_psn {
	int from;
	uint32_t psn;
	int count; /* drop this many copies of it */
	int dropped;
};

static enum lb_verdict drop_psn_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                       void *arg)
{
	struct drop_psn *d = arg;

	(void)lb;
	(void)len;
	if (from == d->from && ib[0] < 0x10 && bth_psn(ib) == d->psn && d->dropped < d->count) {
		d->dropped++;
		return LB_DROP;
	}
	return LB_PASS;
}

/*
 * A WRITE loses PSN X and then X's go-back-N retransmission. The responder NAKs once per
 * sequence error (IBA 9.7.5.1.2) and drops the rest silently, so before the fix only the local
 * ACK timer (timeout 10: 4.2 ms) recovered. Now the requester goes back again after twice the
 * measured RTT: the WRITE completes within a small fraction of the ACK timeout.
 */
static void test_gbn_lost_retransmission(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t src[64 * 1024], dst[64 * 1024];
	struct rfw_mr *smr, *dmr;
	struct drop_psn d = {.from = 0, .psn = 100 + 1 + 10, .count = 2};
	uint64_t q0[RFW_CNT__COUNT];
	struct rfw_wc wc;
	uint64_t t0;

	(void)s;
	assert_non_null(lb);
	smr = lb_mr(&lb->ep[0], src, sizeof(src));
	dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	lb_fill(src, sizeof(src), 13);
	/* A one-packet WRITE first: the RTT sample (PSN 100). */
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, src, 512, smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 1000000);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	/* Then 64 packets (PSNs 101..164), PSN 111 lost twice. */
	lb->filter = drop_psn_filter;
	lb->farg = &d;
	t0 = lb->now;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 2, src, sizeof(src), smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	lb_run(lb, 100000000);
	assert_int_equal(d.dropped, 2);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	assert_memory_equal(src, dst, sizeof(src));
	rfw_qp_counters(lb->ep[0].qp, q0);
	assert_int_equal(q0[RFW_CNT_local_ack_timeout_err], 0);
	assert_true(q0[RFW_CNT_retry_probes] >= 1);
	assert_true(lb->now - t0 < 200000); /* 200 us, against 4.2 ms for the ACK timer */
	lb_destroy(lb);
}

/* ---- 13.6: RC packets only from the QP's path ---- */

/* Hand endpoint @to a packet as if from @src to @dst (IPv4 a.b.c.d as 0x0a0000xx). */
static int inject(struct loop *lb, int to, struct rfw_ib_pkt *p, uint8_t src, uint8_t dst)
{
	struct rfw_rx_info rx = {.pkt = p};

	lb_rx_addr(lb, !to, &rx);
	rx.src_ip[15] = src;
	rx.dst_ip[15] = dst;
	return rfw_dev_rx(lb->ep[to].dev, &rx, lb->now);
}

/*
 * A host at 10.0.0.66 that knows the QPNs, PSNs and an R_Key forges a fatal NAK to the
 * requester and a WRITE to the responder; the endpoints are 10.0.0.1 and 10.0.0.2. Before the
 * fix the NAK completed the WRITE with REM_INV_REQ_ERR and took the QP to ERR, and the forged
 * WRITE landed in memory. Now both are dropped and counted (rx_addr_mismatch), as is a packet
 * from the right peer to another address of ours; the real traffic then completes.
 */
static void test_rc_source_check(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t src[4096], dst[4096], evil[64];
	struct rfw_mr *smr, *dmr;
	struct rfw_ib_pkt p = {0};
	uint64_t q0[RFW_CNT__COUNT], q1[RFW_CNT__COUNT];
	struct rfw_wc wc;

	(void)s;
	assert_non_null(lb);
	smr = lb_mr(&lb->ep[0], src, sizeof(src));
	dmr = lb_mr(&lb->ep[1], dst, sizeof(dst));
	lb_fill(src, sizeof(src), 6);
	memset(evil, 0x66, sizeof(evil));
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_WRITE, 1, src, sizeof(src), smr,
	                            (uint64_t)(uintptr_t)dst, rfw_mr_rkey(dmr)),
	                 0);
	/* The forged NAK invalid request for the WRITE's first PSN (100), to the requester. */
	p.op = rfw_ib_opcode_info(RFW_OP_RC_ACKNOWLEDGE);
	p.bth.opcode = RFW_OP_RC_ACKNOWLEDGE;
	p.bth.dqpn = rfw_qp_num(lb->ep[0].qp);
	p.bth.psn = 100;
	p.aeth.syndrome = RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_INVALID_REQUEST);
	assert_int_equal(inject(lb, 0, &p, 66, 1), -EINVAL);
	/* From the peer's address but to one that is not the QP's source: dropped too. */
	assert_int_equal(inject(lb, 0, &p, 2, 3), -EINVAL);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_RTS);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 0);
	/* The forged WRITE ONLY at the responder's expected PSN (100) with the real R_Key. */
	memset(&p, 0, sizeof(p));
	p.op = rfw_ib_opcode_info(RFW_OP_RC_RDMA_WRITE_ONLY);
	p.bth.opcode = RFW_OP_RC_RDMA_WRITE_ONLY;
	p.bth.dqpn = rfw_qp_num(lb->ep[1].qp);
	p.bth.psn = 100;
	p.reth.va = (uint64_t)(uintptr_t)dst;
	p.reth.rkey = rfw_mr_rkey(dmr);
	p.reth.dma_len = sizeof(evil);
	p.payload = evil;
	p.payload_len = sizeof(evil);
	assert_int_equal(inject(lb, 1, &p, 66, 2), -EINVAL);
	assert_int_not_equal(dst[0], 0x66);
	rfw_qp_counters(lb->ep[0].qp, q0);
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q0[RFW_CNT_rx_addr_mismatch], 2);
	assert_int_equal(q1[RFW_CNT_rx_addr_mismatch], 1);
	/* The real exchange between 10.0.0.1 and 10.0.0.2 is untouched. */
	lb_run(lb, 100000000);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_memory_equal(src, dst, sizeof(src));
	rfw_qp_counters(lb->ep[1].qp, q1);
	assert_int_equal(q1[RFW_CNT_rx_addr_mismatch], 1);
	lb_destroy(lb);
}

/* ---- 13.2: selective repeat, a READ longer than sr_window ---- */

struct drop_resp {
	uint32_t first; /* PSN of the READ's first response */
	uint32_t off[4];
	int n, dropped;
};

/* Drops the first copy of the READ responses at the listed offsets from @first. */
static enum lb_verdict drop_resp_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                        void *arg)
{
	struct drop_resp *d = arg;
	uint32_t off = (bth_psn(ib) - d->first) & 0xffffff;

	(void)lb;
	(void)len;
	if (from != 1 || ib[0] < RFW_OP_RC_RDMA_READ_RESPONSE_FIRST ||
	    ib[0] > RFW_OP_RC_RDMA_READ_RESPONSE_ONLY)
		return LB_PASS;
	for (int i = 0; i < d->n; i++)
		if (off == d->off[i]) {
			d->off[i] = UINT32_MAX;
			d->dropped++;
			return LB_DROP;
		}
	return LB_PASS;
}

/*
 * sr, default window (4096 PSNs), MTU 1024: a 4.5 MiB READ is 4608 PSNs. Before the fix it
 * went as one request and its responses aliased in the requester's bitmaps (psn & 4095):
 * with a response lost at offset 100 the one at 4196 marked it received, so the READ
 * completed successfully with a hole, or the QP ended with RETRY_EXC_ERR. Now a READ longer
 * than half the window goes as several requests, each counted whole in the window.
 */
static void test_sr_read_longer_than_window(void **s)
{
	const uint32_t len = 4608u * 1024;
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	uint8_t *src = malloc(len), *dst = malloc(len);
	struct rfw_mr *smr, *dmr;
	struct drop_resp d = {.first = 100, .off = {100, 2500, 4600}, .n = 3};
	struct rfw_wc wc;

	(void)s;
	c.mode[0] = c.mode[1] = RFW_TRANSPORT_SR;
	lb = lb_create(&c);
	assert_non_null(lb);
	assert_non_null(src);
	assert_non_null(dst);
	smr = lb_mr(&lb->ep[1], src, len); /* the READ reads the peer's src into our dst */
	dmr = lb_mr(&lb->ep[0], dst, len);
	lb_fill(src, len, 2);
	memset(dst, 0xee, len);
	lb->filter = drop_resp_filter;
	lb->farg = &d;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 7, dst, len, dmr,
	                            (uint64_t)(uintptr_t)src, rfw_mr_rkey(smr)),
	                 0);
	lb_run(lb, 1000000000ull);
	assert_int_equal(d.dropped, 3);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.byte_len, len);
	assert_memory_equal(src, dst, len);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_RTS);
	lb_destroy(lb);
	free(src);
	free(dst);
}

/* ---- 13.5: a READ of 2^23 PSNs (IBA 9.7.1 half space) ---- */

#define ALIAS_UNIT (1u << 20)

/*
 * @total bytes of address space backed by one @ALIAS_UNIT-byte memfd mapped over and over: a
 * 2 GiB buffer for the price of 1 MiB (every alias shows the same bytes).
 */
static uint8_t *alias_map(size_t total)
{
	int fd = memfd_create("rfw_alias", 0);
	uint8_t *base;

	if (fd < 0 || ftruncate(fd, ALIAS_UNIT) != 0)
		return NULL;
	base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	for (size_t off = 0; base != MAP_FAILED && off < total; off += ALIAS_UNIT)
		if (mmap(base + off, ALIAS_UNIT, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		         0) == MAP_FAILED)
			base = MAP_FAILED;
	close(fd);
	return base == MAP_FAILED ? NULL : base;
}

/*
 * gbn, MTU 256: a READ of 2^31 bytes (the largest message) is 2^23 PSNs, half the PSN space.
 * Before the fix it went as one request: the requester's serial arithmetic saw its responses
 * as behind the oldest unacknowledged PSN, and the READ never completed. Now a READ goes as
 * requests of at most 2^22 PSNs, keeping fewer than 2^23 outstanding.
 */
static void test_gbn_read_half_psn_space(void **s)
{
	const size_t len = 1ull << 31;
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	uint8_t *src = alias_map(len), *dst = alias_map(len);
	struct rfw_mr *smr, *dmr;
	struct rfw_wc wc;

	(void)s;
	assert_non_null(src);
	assert_non_null(dst);
	c.mtu = RFW_MTU_256;
	c.retry_cnt = 1;
	lb = lb_create(&c);
	assert_non_null(lb);
	smr = lb_mr(&lb->ep[1], src, len);
	dmr = lb_mr(&lb->ep[0], dst, len);
	assert_non_null(smr);
	assert_non_null(dmr);
	lb_fill(src, ALIAS_UNIT, 5);
	memset(dst, 0xee, ALIAS_UNIT);
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 9, dst, (uint32_t)len, dmr,
	                            (uint64_t)(uintptr_t)src, rfw_mr_rkey(smr)),
	                 0);
	lb_run(lb, 100000000000ull);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.byte_len, (uint32_t)len);
	assert_memory_equal(src, dst, ALIAS_UNIT);
	lb_destroy(lb);
	munmap(src, len);
	munmap(dst, len);
}

/* ---- 13.14: READ then WRITE ordering, one rule for both modes ---- */

struct order_probe {
	uint64_t first_write;    /* when the first WRITE packet reached the responder */
	uint64_t last_read_resp; /* when the last READ response reached the requester */
};

static enum lb_verdict order_filter(struct loop *lb, int from, uint8_t *ib, uint32_t len, void *arg)
{
	struct order_probe *o = arg;

	(void)len;
	if (from == 0 && ib[0] >= RFW_OP_RC_RDMA_WRITE_FIRST &&
	    ib[0] <= RFW_OP_RC_RDMA_WRITE_ONLY_IMM && o->first_write == UINT64_MAX)
		o->first_write = lb->now;
	if (from == 1 && ib[0] >= RFW_OP_RC_RDMA_READ_RESPONSE_FIRST &&
	    ib[0] <= RFW_OP_RC_RDMA_READ_RESPONSE_ONLY)
		o->last_read_resp = lb->now;
	return LB_PASS;
}

/*
 * A 64 KiB READ then a 4 KiB WRITE to another buffer, with and without FENCE. The rule
 * (docs/transport.md "Ordering", IBA 9.5 and the Fence indicator of 10.8.3.3): a WRITE posted
 * after a READ does not wait for it unless it carries FENCE; with FENCE it waits until every
 * earlier READ and atomic has completed. Before the fix sr held every SEND/WRITE behind an
 * outstanding READ, fenced or not, while gbn did not.
 */
static void run_read_then_write(enum rfw_transport_mode m, bool fence)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb;
	static uint8_t rsrc[65536], rdst[65536], wsrc[4096], wdst[4096];
	struct rfw_mr *m_rsrc, *m_rdst, *m_wsrc, *m_wdst;
	struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)wsrc, .length = sizeof(wsrc)};
	struct rfw_send_wr wr = {.wr_id = 2,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE,
	                         .send_flags = RFW_SEND_SIGNALED | (fence ? RFW_SEND_FENCE : 0)};
	struct rfw_send_wr *bad = NULL;
	struct order_probe o = {.first_write = UINT64_MAX};
	struct rfw_wc wc[2];

	c.mode[0] = c.mode[1] = m;
	lb = lb_create(&c);
	assert_non_null(lb);
	m_rsrc = lb_mr(&lb->ep[1], rsrc, sizeof(rsrc));
	m_rdst = lb_mr(&lb->ep[0], rdst, sizeof(rdst));
	m_wsrc = lb_mr(&lb->ep[0], wsrc, sizeof(wsrc));
	m_wdst = lb_mr(&lb->ep[1], wdst, sizeof(wdst));
	lb_fill(rsrc, sizeof(rsrc), 14);
	lb_fill(wsrc, sizeof(wsrc), 15);
	lb->filter = order_filter;
	lb->farg = &o;
	assert_int_equal(lb_post_op(&lb->ep[0], RFW_WR_RDMA_READ, 1, rdst, sizeof(rdst), m_rdst,
	                            (uint64_t)(uintptr_t)rsrc, rfw_mr_rkey(m_rsrc)),
	                 0);
	sge.lkey = rfw_mr_lkey(m_wsrc);
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)wdst;
	wr.wr.rdma.rkey = rfw_mr_rkey(m_wdst);
	assert_int_equal(rfw_post_send(lb->ep[0].qp, &wr, &bad, lb->now), 0);
	lb_run(lb, 100000000);
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 2, wc), 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[0].status, RFW_WC_SUCCESS);
	assert_int_equal(wc[1].status, RFW_WC_SUCCESS);
	assert_memory_equal(rsrc, rdst, sizeof(rsrc));
	assert_memory_equal(wsrc, wdst, sizeof(wsrc));
	assert_true(o.first_write != UINT64_MAX);
	if (fence)
		assert_true(o.first_write > o.last_read_resp); /* sent after the READ completed */
	else
		assert_true(o.first_write < o.last_read_resp); /* overlapped with the READ */
	lb_destroy(lb);
}

static void test_read_then_write_order(void **s)
{
	(void)s;
	run_read_then_write(RFW_TRANSPORT_GBN, false);
	run_read_then_write(RFW_TRANSPORT_GBN, true);
	run_read_then_write(RFW_TRANSPORT_SR, false);
	run_read_then_write(RFW_TRANSPORT_SR, true);
}

/* ---- a late ACK moves the requester forward past where a rewind put it ---- */

/* The packets in the loop now, taken out undelivered into @keep (up to @max), in order. */
static uint32_t take_all(struct loop *lb, struct lb_pkt *keep, uint32_t max)
{
	uint32_t n = 0;

	while (lb->cons != lb->prod) {
		assert_true(n < max);
		keep[n++] = lb->ring[lb->cons % LB_RING];
		lb->cons++;
	}
	return n;
}

/* How many packets of ep0's at each PSN 100 + i reached ep1. */
struct late_watch {
	uint32_t sent[16];
};

static enum lb_verdict late_watch_fn(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                     void *arg)
{
	struct late_watch *w = arg;
	uint32_t i = bth_psn(ib) - 100;

	(void)lb;
	(void)len;
	if (from == 0 && i < 16)
		w->sent[i]++;
	return LB_PASS;
}

/* R1 (READ 4 KiB), W2 (WRITE 64 B), R3 (READ 64 B), W4 (WRITE 64 B) from ep0, between @a and
 * the peer's buffer at @rb. */
static void late_post(struct loop *lb, uint8_t *a, struct rfw_mr *amr, uint64_t rb, uint32_t rkey)
{
	static const struct {
		enum rfw_wr_opcode op;
		uint32_t off, len;
	} wr[4] = {{RFW_WR_RDMA_READ, 0, 4096},
	           {RFW_WR_RDMA_WRITE, 4096, 64},
	           {RFW_WR_RDMA_READ, 4200, 64},
	           {RFW_WR_RDMA_WRITE, 4300, 64}};

	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(lb_post_op(&lb->ep[0], wr[i].op, i + 1, a + wr[i].off, wr[i].len,
		                            amr, rb + wr[i].off, rkey),
		                 0);
}

/*
 * READ R1 of four packets (PSN 100-103), WRITE W2 (104), READ R3 (105), WRITE W4 (106). R1's
 * first response arrives; the rest, and W2's, R3's and W4's answers, are late. The ACK timer goes
 * off: the requester goes back to 101, the second packet of R1, and re-sends R1's remainder
 * (IBA 9.7.4.1.4: a READ reissued at the PSN of its first missing response, RETH advanced).
 * Before it sends more, R1's late responses and W2's ACK arrive: R1 and W2 complete, and the
 * requester moves forward to R3 (comp.c progress) instead of re-sending W2. The READ/atomic
 * count and mark (req.c, rfw_int.h) are held to their walk by checking builds all along.
 */
static void test_late_ack_past_rewound_read(void **s)
{
	struct lb_cfg c = lb_default_cfg();
	struct loop *lb = lb_create(&c);
	static uint8_t a[8192], b[8192];
	static struct lb_pkt held[16];
	struct rfw_mr *amr = lb_mr(&lb->ep[0], a, sizeof(a));
	struct rfw_mr *bmr = lb_mr(&lb->ep[1], b, sizeof(b));
	const struct rfw_qp *q0 = lb->ep[0].qp;
	struct late_watch w = {0};
	uint64_t rb = (uint64_t)(uintptr_t)b;
	uint32_t nheld, k;
	const uint8_t *req;
	struct rfw_wc wc;

	(void)s;
	lb_fill(a, sizeof(a), 3);
	lb_fill(b, sizeof(b), 9);
	lb->filter = late_watch_fn;
	lb->farg = &w;
	late_post(lb, a, amr, rb, rfw_mr_rkey(bmr));
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 16, 0), 4);
	lb_deliver_all(lb); /* all four executed, their responses queued */
	while (rfw_qp_tx_burst(lb->ep[1].qp, 16, 0))
		;
	nheld = take_all(lb, held, 16);
	assert_true(nheld >= 6); /* R1 x4, R3, and W2's and W4's ACKs, some coalesced */
	assert_int_equal(bth_psn(held[0].data), 100);
	lb_deliver(lb, &held[0]); /* R1's first response only */
	assert_int_equal(q0->comp.psn, 101);

	/* The ACK timer: back to 101, R1's remainder re-sent alone. */
	lb->now = rfw_qp_next_deadline(lb->ep[0].qp);
	assert_true(lb->now != UINT64_MAX);
	rfw_qp_timer(lb->ep[0].qp, lb->now);
	assert_int_equal(q0->req.psn, 101);
	assert_int_equal(rfw_qp_tx_burst(lb->ep[0].qp, 1, lb->now), 1);
	req = lb->ring[(lb->prod - 1) % LB_RING].data; /* the READ request for 3 KiB at 101 */
	assert_int_equal(req[0], RFW_OP_RC_RDMA_READ_REQUEST);
	assert_int_equal(bth_psn(req), 101);
	assert_int_equal(rfw_get_be64(req + RFW_BTH_LEN), rb + 1024);
	assert_int_equal(rfw_get_be32(req + RFW_BTH_LEN + 12), 3072);
	assert_int_equal(q0->req.psn, 104);
	lb->cons = lb->prod; /* it (and so what would answer it) is lost */

	/* Late: R1's other responses and W2's ACK (everything up to PSN 104). */
	for (k = 1; k < nheld && rfw_psn_cmp(bth_psn(held[k].data), 104) <= 0; k++)
		lb_deliver(lb, &held[k]);
	assert_int_equal(q0->comp.psn, 105);
	assert_int_equal(q0->req.psn, 105); /* forward, not back over W2 */
	assert_int_equal(q0->req.idx, q0->comp.idx);
	for (uint64_t id = 1; id <= 2; id++) {
		assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.wr_id, id);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}

	/* R3's response and W4's ACK were lost too: they are re-sent, and W2 is not. */
	lb_run(lb, 100000000);
	for (uint64_t id = 3; id <= 4; id++) {
		assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 1);
		assert_int_equal(wc.wr_id, id);
		assert_int_equal(wc.status, RFW_WC_SUCCESS);
	}
	assert_int_equal(rfw_poll_cq(lb->ep[0].scq, 1, &wc), 0);
	assert_int_equal(w.sent[0], 1); /* R1 once (its remainder's request was lost) */
	assert_int_equal(w.sent[1], 0);
	assert_int_equal(w.sent[4], 1); /* W2 once */
	assert_int_equal(w.sent[5], 2); /* R3 and W4 twice */
	assert_int_equal(w.sent[6], 2);
	assert_memory_equal(a, b, 4096);
	assert_memory_equal(a + 4096, b + 4096, 64);
	assert_memory_equal(a + 4200, b + 4200, 64);
	assert_memory_equal(a + 4300, b + 4300, 64);
	assert_int_equal(rfw_qp_state(lb->ep[0].qp), RFW_QPS_RTS);
	assert_int_equal(q0->req.rd_n, 0);
	lb_destroy(lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gbn_lost_retransmission),
	    cmocka_unit_test(test_rc_source_check),
	    cmocka_unit_test(test_sr_read_longer_than_window),
	    cmocka_unit_test(test_gbn_read_half_psn_space),
	    cmocka_unit_test(test_read_then_write_order),
	    cmocka_unit_test(test_late_ack_past_rewound_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
