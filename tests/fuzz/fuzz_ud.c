/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the UD and UC services and shared receive queues (transport/ud.c, uc.c, srq.c).
 * One device, four QPs: U (UD, its own receive queue), V (UD, on the SRQ), R (RC, on the SRQ,
 * never connected: packets for it are dropped before a WQE is taken) and W (UC, on the SRQ, in
 * RTR: injected UC packets reach its responder, which writes into the canaried memory). Each input
 * is a list of records, byte 0 the operation:
 *
 *   0  post a receive on U or the SRQ (byte 1: bit0 which, length = byte 2 x 32)
 *   1  inject an IB packet (bytes 1-2: length, big-endian, then that many bytes, BTH first);
 *      byte 3's low bits may retarget it: bit0 DestQP := U, bit1 := V, bit2 Q_Key := the QPs',
 *      bit3 DestQP := W
 *   2  post a UD send from U to V or U (byte 1: bit0 destination, bit1 immediate, bit2 Q_Key
 *      with the high bit (the QP's own), bits 3-7 + byte 2: length), the packets U produces
 *      are delivered back to the device (loopback)
 *   3  move U or V to ERR and back up (byte 1 bit0), or arm the SRQ limit (bit1)
 *
 * Oracles: no sanitizer report; every packet the transport emits parses and is UD; receive
 * buffers are written only inside their WQE (canaries); every send WR completes exactly once,
 * in order; every receive WQE completes at most once, with byte_len <= its length and, on
 * success, for UD >= 40 (the GRH) and the GRH flag, for UC no GRH; at the end (U, V, W to
 * ERR) every receive posted to U has completed, and the SRQ's WQEs are those completed plus
 * those still in it.
 * A violation traps.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rfw_int.h"
#include "transport/rfw_verbs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXPKT 4400
#define NWQE   64 /* receive WQEs per input, per queue */
#define SLOT   (8192 + 64)
#define CANARY 0xa5
#define QKEY   0x2222u

struct fz {
	struct rfw_dev *dev;
	struct rfw_pd *pd;
	struct rfw_cq *scq, *rcq;
	struct rfw_srq *srq;
	struct rfw_qp *u, *v, *r, *w; /* w: UC on the SRQ, in RTR toward U */
	struct rfw_mr *mr;
	struct rfw_ah *ah;
	uint8_t *mem; /* 2 x NWQE slots: [0, NWQE) U's, [NWQE, 2 NWQE) the SRQ's */
	uint32_t len[2 * NWQE];
	bool done[2 * NWQE];
	uint32_t nposted[2];
	uint64_t sends_posted, sends_done;
	uint8_t pkt[16][MAXPKT]; /* what U produced, delivered at the next pump */
	uint32_t pkt_len[16];
	int npkt;
};

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

static uint8_t *fz_alloc(void *ctx, struct rfw_qp *qp, uint32_t len)
{
	struct fz *f = ctx;

	(void)qp;
	if (f->npkt == 16 || len > MAXPKT)
		return NULL;
	return f->pkt[f->npkt];
}

static void fz_send(void *ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                    const struct rfw_tx_meta *m)
{
	struct fz *f = ctx;
	struct rfw_ib_pkt p;

	(void)qp;
	CHECK(buf == f->pkt[f->npkt]);
	CHECK(rfw_ib_parse(buf, len, &p) == RFW_IB_ERR_OK);
	CHECK(p.op->transport == RFW_IB_UD && m->ah != NULL);
	f->pkt_len[f->npkt++] = len;
}

static const struct rfw_io_ops fz_ops = {.tx_alloc = fz_alloc, .tx_send = fz_send};

static void rx_one(struct fz *f, const uint8_t *buf, uint32_t len)
{
	static const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
	struct rfw_ib_pkt p;
	struct rfw_rx_info rx = {.pkt = &p};

	if (rfw_ib_parse(buf, len, &p) != RFW_IB_ERR_OK)
		return;
	memcpy(rx.src_ip, v4, 16);
	memcpy(rx.dst_ip, v4, 16);
	rfw_dev_rx(f->dev, &rx, 0);
}

static void check_recv(struct fz *f, const struct rfw_wc *wc)
{
	uint64_t i = wc->wr_id;

	CHECK(i < 2 * NWQE && !f->done[i] && f->len[i] != UINT32_MAX);
	f->done[i] = true;
	if (wc->status != RFW_WC_SUCCESS)
		return;
	CHECK(wc->byte_len <= f->len[i]);
	if (wc->qp_num == rfw_qp_num(f->w)) /* UC: no GRH */
		CHECK(!(wc->wc_flags & RFW_WC_GRH));
	else
		CHECK(wc->byte_len >= 40 && (wc->wc_flags & RFW_WC_GRH));
}

static void drain(struct fz *f)
{
	struct rfw_wc wc;

	while (rfw_poll_cq(f->rcq, 1, &wc) == 1)
		check_recv(f, &wc);
	while (rfw_poll_cq(f->scq, 1, &wc) == 1) {
		CHECK(wc.wr_id == f->sends_done); /* in posting order, once */
		f->sends_done++;
	}
}

static void pump(struct fz *f)
{
	for (int round = 0; round < 4; round++) {
		f->npkt = 0;
		rfw_qp_tx_burst(f->u, 16, 0);
		for (int k = 0; k < f->npkt; k++)
			rx_one(f, f->pkt[k], f->pkt_len[k]);
		drain(f);
	}
}

static void post_recv(struct fz *f, bool srq, uint8_t len8)
{
	uint32_t q = srq ? 1 : 0, i = q * NWQE + f->nposted[q];
	struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)(f->mem + (size_t)i * SLOT),
	                      .length = (uint32_t)len8 * 32,
	                      .lkey = rfw_mr_lkey(f->mr)};
	struct rfw_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
	int rc;

	if (f->nposted[q] == NWQE)
		return;
	rc = srq ? rfw_post_srq_recv(f->srq, &wr, &bad) : rfw_post_recv(f->u, &wr, &bad, 0);
	if (rc != 0)
		return;
	f->len[i] = sge.length;
	f->nposted[q]++;
}

static void post_send(struct fz *f, uint8_t a, uint8_t b)
{
	static uint8_t src[4096];
	uint32_t len = ((uint32_t)(a >> 3) << 8 | b) % 4097;
	struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)src, .length = len, .lkey = 0};
	struct rfw_send_wr wr = {.wr_id = f->sends_posted,
	                         .sg_list = &sge,
	                         .num_sge = len <= 64 ? 1 : 0,
	                         .opcode = (a & 2) ? RFW_WR_SEND_WITH_IMM : RFW_WR_SEND,
	                         .send_flags =
	                             RFW_SEND_SIGNALED | (len <= 64 ? RFW_SEND_INLINE : 0)},
	                   *bad;

	/* Longer ones go as zero-length datagrams (num_sge 0): no MR needed. */
	wr.wr.ud.ah = f->ah;
	wr.wr.ud.remote_qpn = rfw_qp_num((a & 1) ? f->u : f->v);
	wr.wr.ud.remote_qkey = (a & 4) ? 0x80000000u : QKEY;
	if (rfw_post_send(f->u, &wr, &bad, 0) == 0)
		f->sends_posted++;
	pump(f);
}

static int ud_up(struct rfw_qp *qp)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT, .port_num = 1, .qkey = QKEY};

	if (rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_QKEY))
		return -1;
	a.qp_state = RFW_QPS_RTR;
	if (rfw_modify_qp(qp, &a, RFW_QP_STATE))
		return -1;
	a.qp_state = RFW_QPS_RTS;
	return rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_SQ_PSN);
}

static void bounce(struct fz *f, struct rfw_qp *qp)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_ERR};

	rfw_modify_qp(qp, &a, RFW_QP_STATE);
	drain(f);
	a.qp_state = RFW_QPS_RESET;
	rfw_modify_qp(qp, &a, RFW_QP_STATE);
	/* Reset drops U's own WQEs without completions (IBA 10.3.1): they were flushed above. */
	CHECK(ud_up(qp) == 0);
}

/* A UC QP in RTR toward @dqpn, its path 10.0.0.1 both ways (what rx_one says). */
static int uc_rtr(struct rfw_qp *qp, uint32_t dqpn)
{
	static const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
	struct rfw_qp_attr a = {
	    .qp_state = RFW_QPS_INIT, .port_num = 1, .qp_access_flags = RFW_ACCESS_REMOTE_WRITE};

	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_ACCESS_FLAGS))
		return -1;
	a.qp_state = RFW_QPS_RTR;
	memcpy(a.ah_attr.dgid, v4, 16);
	memcpy(a.ah_attr.sgid, v4, 16);
	a.path_mtu = RFW_MTU_1024;
	a.dest_qp_num = dqpn;
	return rfw_modify_qp(
	    qp, &a, RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN | RFW_QP_RQ_PSN);
}

static struct rfw_qp *make_qp(struct fz *f, enum rfw_qp_type t, struct rfw_srq *srq)
{
	struct rfw_qp_init_attr qa = {
	    .send_cq = f->scq, .recv_cq = f->rcq, .qp_type = t, .srq = srq};

	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = srq ? 0 : NWQE;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = 64;
	return rfw_create_qp(f->pd, &qa);
}

static bool setup(struct fz *f)
{
	struct rfw_dev_attr da = {0};
	struct rfw_srq_init_attr sa = {.attr = {.max_wr = NWQE, .max_sge = 1}};
	struct rfw_ah_attr aa = {0};
	size_t memlen = (size_t)2 * NWQE * SLOT;

	memset(f, 0, sizeof(*f));
	f->dev = rfw_dev_create(&da, &fz_ops, f);
	f->pd = rfw_alloc_pd(f->dev);
	f->scq = rfw_create_cq(f->dev, 4096);
	f->rcq = rfw_create_cq(f->dev, 4096);
	f->srq = rfw_create_srq(f->pd, &sa);
	f->mem = malloc(memlen);
	if (!f->dev || !f->pd || !f->scq || !f->rcq || !f->srq || !f->mem)
		return false;
	memset(f->mem, CANARY, memlen);
	memset(f->len, 0xff, sizeof(f->len));
	f->mr = rfw_reg_mr(f->pd, f->mem, memlen, RFW_ACCESS_LOCAL_WRITE);
	f->u = make_qp(f, RFW_QPT_UD, NULL);
	f->v = make_qp(f, RFW_QPT_UD, f->srq);
	f->r = make_qp(f, RFW_QPT_RC, f->srq);
	f->w = make_qp(f, RFW_QPT_UC, f->srq);
	if (f->w == NULL || uc_rtr(f->w, rfw_qp_num(f->u)) != 0)
		return false;
	f->ah = rfw_create_ah(f->pd, &aa);
	return f->mr && f->u && f->v && f->r && f->ah && ud_up(f->u) == 0 && ud_up(f->v) == 0;
}

/* Liveness and exactly-once at the end, the canaries, then everything freed. */
static void finish(struct fz *f)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_ERR};
	uint32_t srq_done = 0;

	pump(f);
	rfw_modify_qp(f->u, &a, RFW_QP_STATE);
	rfw_modify_qp(f->v, &a, RFW_QP_STATE);
	rfw_modify_qp(f->w, &a, RFW_QP_STATE);
	drain(f);
	CHECK(f->sends_done == f->sends_posted);
	for (uint32_t i = 0; i < 2 * NWQE; i++) {
		const uint8_t *s = f->mem + (size_t)i * SLOT;

		if (i < NWQE)
			CHECK(f->done[i] == (i < f->nposted[0]));
		else
			srq_done += f->done[i];
		for (uint32_t k = f->len[i] == UINT32_MAX ? 0 : f->len[i]; k < SLOT; k++)
			CHECK(s[k] == CANARY);
	}
	CHECK(srq_done + (f->srq->prod - f->srq->cons) == f->nposted[1]);
	rfw_destroy_ah(f->ah);
	rfw_destroy_qp(f->u);
	rfw_destroy_qp(f->v);
	rfw_destroy_qp(f->r);
	rfw_destroy_qp(f->w);
	rfw_dereg_mr(f->mr);
	CHECK(rfw_destroy_srq(f->srq) == 0);
	rfw_destroy_cq(f->scq);
	rfw_destroy_cq(f->rcq);
	rfw_dealloc_pd(f->pd);
	rfw_dev_destroy(f->dev);
	free(f->mem);
}

/* An injected packet, retargeted as record byte 3 says. */
static void inject(struct fz *f, const uint8_t *p, uint32_t len, uint8_t how)
{
	static uint8_t buf[MAXPKT];
	struct rfw_ib_pkt pk;

	if (len > MAXPKT)
		return;
	memcpy(buf, p, len);
	if (len >= 12 && (how & 3))
		rfw_put_be24(buf + 5, rfw_qp_num((how & 1) ? f->u : f->v));
	if (len >= 12 && (how & 8)) /* the UC QP, PSN near what it expects */
		rfw_put_be24(buf + 5, rfw_qp_num(f->w));
	if (len >= 20 && (how & 4) && rfw_ib_parse(buf, len, &pk) == RFW_IB_ERR_OK &&
	    (pk.op->hdrs & RFW_HDR_DETH))
		rfw_put_be32(buf + 12, QKEY);
	rx_one(f, buf, len);
	drain(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	size_t i = 0;

	if (!setup(&f))
		__builtin_trap();
	while (i < size) {
		uint8_t op = data[i] & 3;
		uint8_t b1 = i + 1 < size ? data[i + 1] : 0, b2 = i + 2 < size ? data[i + 2] : 0;

		if (op == 1) {
			uint32_t len = (uint32_t)b1 << 8 | b2;
			uint8_t how = i + 3 < size ? data[i + 3] : 0;

			i += 4;
			if (len > size - (i < size ? i : size))
				len = (uint32_t)(size - (i < size ? i : size));
			inject(&f, data + (i < size ? i : size), len, how);
			i += len;
			continue;
		}
		if (op == 0)
			post_recv(&f, b1 & 1, b2);
		else if (op == 2)
			post_send(&f, b1, b2);
		else if (b1 & 2)
			rfw_modify_srq(f.srq, &(struct rfw_srq_attr){.srq_limit = b2 % NWQE},
			               RFW_SRQ_LIMIT);
		else
			bounce(&f, (b1 & 1) ? f.v : f.u);
		i += 3;
	}
	finish(&f);
	return 0;
}
