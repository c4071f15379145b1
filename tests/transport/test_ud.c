/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UD service (transport/ud.c) over the in-test loopback host: UD QPs on both endpoints,
 * datagrams addressed per work request. What the verbs API and IBA 9.8.4 promise: the
 * receive buffer starts with a 40-byte GRH (for IPv4: 20 zero bytes, then an IPv4 header whose
 * checksum holds and whose addresses are the sender's and ours), the completion carries the
 * GRH flag, the sender's QPN and the immediate; a Q_Key with the high bit set means the sender
 * QP's own; wrong Q_Key, no receive WQE, too-long datagrams are dropped and counted, never
 * answered; RC-only verbs and attributes are refused.
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

#define QKEY 0x11111111u

struct ud_fix {
	struct loop *lb;
	struct rfw_qp *orig[2];
	struct rfw_ah *ah; /* on endpoint 0, toward endpoint 1 */
	struct rfw_mr *smr, *rmr;
	uint8_t sbuf[8192];
	uint8_t rbuf[8][4096 + 40];
};

static int ud_up(struct rfw_qp *qp, uint32_t qkey)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT, .port_num = 1, .qkey = qkey};
	int rc =
	    rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_QKEY);

	if (rc)
		return rc;
	a.qp_state = RFW_QPS_RTR;
	rc = rfw_modify_qp(qp, &a, RFW_QP_STATE);
	if (rc)
		return rc;
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = 77;
	return rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_SQ_PSN);
}

static struct ud_fix *fix_setup(void)
{
	struct lb_cfg c = lb_default_cfg();
	struct ud_fix *f = calloc(1, sizeof(*f));
	struct rfw_ah_attr aa = {0};

	f->lb = lb_create(&c);
	assert_non_null(f->lb);
	lb_replace_qps(f->lb, RFW_QPT_UD, 64, f->orig);
	for (int i = 0; i < 2; i++) {
		assert_non_null(f->lb->ep[i].qp);
		assert_int_equal(ud_up(f->lb->ep[i].qp, QKEY), 0);
	}
	memcpy(aa.dgid, f->lb->ip[1], 16);
	memcpy(aa.sgid, f->lb->ip[0], 16);
	f->ah = rfw_create_ah(f->lb->ep[0].pd, &aa);
	assert_non_null(f->ah);
	f->smr = lb_mr(&f->lb->ep[0], f->sbuf, sizeof(f->sbuf));
	f->rmr = lb_mr(&f->lb->ep[1], f->rbuf, sizeof(f->rbuf));
	lb_fill(f->sbuf, sizeof(f->sbuf), 3);
	return f;
}

static void fix_teardown(struct ud_fix *f)
{
	assert_int_equal(rfw_destroy_ah(f->ah), 0);
	lb_restore_qps(f->lb, f->orig);
	lb_destroy(f->lb);
	free(f);
}

static int ud_send(struct ud_fix *f, uint64_t id, uint32_t len, uint32_t qkey, bool imm)
{
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)f->sbuf, .length = len, .lkey = rfw_mr_lkey(f->smr)};
	struct rfw_send_wr wr = {.wr_id = id,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = imm ? RFW_WR_SEND_WITH_IMM : RFW_WR_SEND,
	                         .send_flags = RFW_SEND_SIGNALED,
	                         .imm_data = 0x5a5a0000u + (uint32_t)id};
	struct rfw_send_wr *bad = NULL;

	wr.wr.ud.ah = f->ah;
	wr.wr.ud.remote_qpn = rfw_qp_num(f->lb->ep[1].qp);
	wr.wr.ud.remote_qkey = qkey;
	return rfw_post_send(f->lb->ep[0].qp, &wr, &bad, f->lb->now);
}

static void post_rbuf(struct ud_fix *f, uint64_t id, uint32_t len)
{
	assert_int_equal(lb_post_recv(&f->lb->ep[1], id, f->rbuf[id % 8], len, f->rmr), 0);
}

/* An independent check of an IPv4 header: the one's complement sum of its words is 0xffff. */
static bool ip4_sum_ok(const uint8_t *ip)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

static void expect_send_ok(struct ud_fix *f, uint64_t id)
{
	struct rfw_wc wc;

	assert_int_equal(rfw_poll_cq(f->lb->ep[0].scq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, id);
	assert_int_equal(wc.opcode, RFW_WC_SEND);
}

static void test_ud_datagram(void **s)
{
	struct ud_fix *f = fix_setup();
	struct rfw_wc wc;
	const uint8_t *g = f->rbuf[1];

	(void)s;
	post_rbuf(f, 1, 40 + 1024);
	assert_int_equal(ud_send(f, 11, 1000, QKEY, false), 0);
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 11);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.opcode, RFW_WC_RECV);
	assert_int_equal(wc.byte_len, 40 + 1000);
	assert_int_equal(wc.src_qp, rfw_qp_num(f->lb->ep[0].qp));
	assert_int_equal(wc.qp_num, rfw_qp_num(f->lb->ep[1].qp));
	assert_true(wc.wc_flags & RFW_WC_GRH);
	assert_false(wc.wc_flags & RFW_WC_WITH_IMM);
	assert_memory_equal(g + 40, f->sbuf, 1000);
	/* The GRH: 20 zero bytes, then IPv4 (version 4, IHL 5, UDP) from 10.0.0.1 to 10.0.0.2. */
	for (int i = 0; i < 20; i++)
		assert_int_equal(g[i], 0);
	assert_int_equal(g[20], 0x45);
	assert_int_equal(g[29], 17);
	assert_memory_equal(g + 32, f->lb->ip[0] + 12, 4);
	assert_memory_equal(g + 36, f->lb->ip[1] + 12, 4);
	/* total length: IPv4 20 + UDP 8 + BTH 12 + DETH 8 + 1000 + ICRC 4 */
	assert_int_equal(g[22] << 8 | g[23], 20 + 8 + 12 + 8 + 1000 + 4);
	assert_true(ip4_sum_ok(g + 20));
	fix_teardown(f);
}

static void test_ud_imm_and_own_qkey(void **s)
{
	struct ud_fix *f = fix_setup();
	struct rfw_wc wc;

	(void)s;
	post_rbuf(f, 2, 40 + 64);
	/* High bit set: the sender QP's own Q_Key (QKEY on both ends here). */
	assert_int_equal(ud_send(f, 12, 0, 0x80000000u, true), 0);
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 12);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 40);
	assert_true(wc.wc_flags & RFW_WC_WITH_IMM);
	assert_int_equal(wc.imm_data, 0x5a5a0000u + 12);
	fix_teardown(f);
}

/* Dropped, counted, never answered: the sender's completion is success all the same. */
static void test_ud_drops(void **s)
{
	struct ud_fix *f = fix_setup();
	uint64_t cnt[RFW_CNT__COUNT];
	uint64_t pkts0 = f->lb->pkts_from[1];
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(ud_send(f, 21, 100, QKEY, false), 0); /* no receive WQE */
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 21);
	post_rbuf(f, 3, 40 + 99); /* one byte short */
	assert_int_equal(ud_send(f, 22, 100, QKEY, false), 0);
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 22);
	assert_int_equal(ud_send(f, 23, 10, QKEY ^ 1, false), 0); /* wrong Q_Key */
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 23);
	rfw_qp_counters(f->lb->ep[1].qp, cnt);
	assert_int_equal(cnt[RFW_CNT_ud_no_rwqe], 1);
	assert_int_equal(cnt[RFW_CNT_ud_too_long], 1);
	assert_int_equal(cnt[RFW_CNT_ud_qkey_mismatch], 1);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	assert_int_equal(f->lb->pkts_from[1], pkts0); /* nothing sent back */
	/* The WQE that was too short is still there and takes the next datagram that fits. */
	assert_int_equal(ud_send(f, 24, 99, QKEY, false), 0);
	lb_run(f->lb, 1000000);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 3);
	assert_int_equal(wc.byte_len, 40 + 99);
	fix_teardown(f);
}

static void test_ud_refusals(void **s)
{
	struct ud_fix *f = fix_setup();
	struct lb_ep *e = &f->lb->ep[0];
	struct rfw_qp_init_attr qa = {.send_cq = e->scq, .recv_cq = e->rcq, .qp_type = RFW_QPT_UD};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT, .qkey = 1};
	struct rfw_qp *qp;

	(void)s;
	/* RDMA on UD, no address handle, more than one MTU (4096 by default): EINVAL at post. */
	assert_int_equal(lb_post_op(e, RFW_WR_RDMA_WRITE, 1, f->sbuf, 8, f->smr, 0, 0), EINVAL);
	assert_int_equal(ud_send(f, 2, 4097, QKEY, false), EINVAL);
	assert_int_equal(ud_send(f, 3, 4096, QKEY, false), 0);
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 3);
	rfw_destroy_ah(f->ah);
	f->ah = NULL;
	assert_int_equal(ud_send(f, 4, 8, QKEY, false), EINVAL);
	f->ah = rfw_create_ah(e->pd, &(struct rfw_ah_attr){0});
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qp = rfw_create_qp(e->pd, &qa);
	assert_non_null(qp);
	/* RESET->INIT needs P_Key index, port and Q_Key; RC's access flags are not UD's. */
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_QKEY), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a,
	                               RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT |
	                                   RFW_QP_QKEY | RFW_QP_ACCESS_FLAGS),
	                 -EINVAL);
	assert_int_equal(
	    rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_QKEY), 0);
	/* INIT->RTR takes no path: AV and DEST_QPN are RC's. */
	a.qp_state = RFW_QPS_RTR;
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_AV), -EINVAL);
	assert_int_equal(rfw_modify_qp(qp, &a, RFW_QP_STATE), 0);
	rfw_destroy_qp(qp);
	fix_teardown(f);
}

/* The device's counters keep a destroyed QP's counts (rfw_dev_counters: one owner). */
static void test_counters_outlive_qp(void **s)
{
	struct ud_fix *f = fix_setup();
	uint64_t before[RFW_CNT__COUNT], after[RFW_CNT__COUNT];
	struct rfw_qp *qp = f->lb->ep[0].qp;

	(void)s;
	post_rbuf(f, 1, 40 + 64);
	assert_int_equal(ud_send(f, 1, 64, QKEY, false), 0);
	lb_run(f->lb, 1000000);
	rfw_dev_counters(f->lb->ep[0].dev, before);
	assert_int_equal(before[RFW_CNT_tx_packets], 1);
	f->lb->ep[0].qp = NULL; /* gone: the teardown has nothing to destroy there */
	assert_int_equal(rfw_destroy_qp(qp), 0);
	rfw_dev_counters(f->lb->ep[0].dev, after);
	assert_memory_equal(before, after, sizeof(before));
	fix_teardown(f);
}

/* QP1 (rfw_qp_set_gsi): reached at QPN 1, sends from QPN 1 with the well-known Q_Key; a plain
 * UD QP's "controlled" Q_Key is its own (IBA 10.2.5), so it cannot reach QP1: dropped. */
static void test_gsi(void **s)
{
	struct ud_fix *f = fix_setup();
	struct rfw_qp *q0 = f->lb->ep[0].qp, *q1 = f->lb->ep[1].qp;
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RESET};
	uint64_t cnt[RFW_CNT__COUNT];
	struct rfw_send_wr *bad = NULL;
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)f->sbuf, .length = 256, .lkey = rfw_mr_lkey(f->smr)};
	struct rfw_send_wr wr = {.wr_id = 5,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_SEND,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_wc wc;

	(void)s;
	assert_int_equal(rfw_qp_set_gsi(q1), -EINVAL); /* not in RESET */
	for (int i = 0; i < 2; i++)
		assert_int_equal(rfw_modify_qp(f->lb->ep[i].qp, &a, RFW_QP_STATE), 0);
	assert_int_equal(rfw_qp_set_gsi(q1), 0);
	assert_ptr_equal(rfw_dev_qp(f->lb->ep[1].dev, RFW_GSI_QPN), q1);
	assert_int_equal(ud_up(q1, QKEY), -EINVAL); /* QP1's Q_Key is fixed */
	assert_int_equal(ud_up(q1, RFW_GSI_QKEY), 0);
	/* endpoint 0 plain UD: its Q_Key goes out, QP1 drops the datagram */
	assert_int_equal(ud_up(q0, QKEY), 0);
	post_rbuf(f, 1, 40 + 1024);
	wr.wr.ud.ah = f->ah;
	wr.wr.ud.remote_qpn = RFW_GSI_QPN;
	wr.wr.ud.remote_qkey = RFW_GSI_QKEY;
	assert_int_equal(rfw_post_send(q0, &wr, &bad, f->lb->now), 0);
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 5);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 0);
	rfw_qp_counters(q1, cnt);
	assert_int_equal(cnt[RFW_CNT_ud_qkey_mismatch], 1);
	/* endpoint 0 QP1 too: delivered, from source QPN 1 */
	assert_int_equal(rfw_modify_qp(q0, &a, RFW_QP_STATE), 0);
	assert_int_equal(rfw_qp_set_gsi(q0), 0);
	assert_int_equal(ud_up(q0, RFW_GSI_QKEY), 0);
	assert_int_equal(rfw_post_send(q0, &wr, &bad, f->lb->now), 0);
	lb_run(f->lb, 1000000);
	expect_send_ok(f, 5);
	assert_int_equal(rfw_poll_cq(f->lb->ep[1].rcq, 1, &wc), 1);
	assert_int_equal(wc.status, RFW_WC_SUCCESS);
	assert_int_equal(wc.src_qp, RFW_GSI_QPN);
	assert_int_equal(wc.byte_len, 40 + 256);
	assert_memory_equal(f->rbuf[1] + 40, f->sbuf, 256);
	fix_teardown(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ud_datagram),
	    cmocka_unit_test(test_ud_imm_and_own_qkey),
	    cmocka_unit_test(test_ud_drops),
	    cmocka_unit_test(test_ud_refusals),
	    cmocka_unit_test(test_counters_outlive_qp),
	    cmocka_unit_test(test_gsi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
