/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The unreliable datagram service (IBA 9.8.4): a UD QP sends each SEND / SEND with immediate
 * as one packet (BTH + DETH [+ ImmDt]) to the address handle, remote QPN and Q_Key of its work
 * request, and completes it once the packet is out; nothing is acknowledged or retried. A
 * received datagram needs the QP's Q_Key and a receive WQE, lands after a 40-byte GRH (for
 * RoCEv2 over IPv4: 20 bytes of zero, then the IPv4 header, as rxe and the RoCE annex lay it
 * out, so ibv_init_ah_from_wc can read the sender from it) and completes with the sender's QPN.
 * Errors of a received datagram never reach the sender (class D/E, as rxe's responder): a
 * missing WQE or a too-long datagram drops it and counts it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rfw_int.h"
#include "wire/frame.h"

#define UD_GRH_LEN 40

struct rfw_ah *rfw_create_ah(struct rfw_pd *pd, const struct rfw_ah_attr *attr)
{
	struct rfw_ah *ah;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return NULL;
	ah->pd = pd;
	ah->attr = *attr;
	pd->users++;
	return ah;
}

int rfw_destroy_ah(struct rfw_ah *ah)
{
	if (ah == NULL)
		return EINVAL;
	ah->pd->users--;
	free(ah);
	return 0;
}

const struct rfw_ah_attr *rfw_ah_attr_of(const struct rfw_ah *ah)
{
	return &ah->attr;
}

void rfw_ah_set_dmac(struct rfw_ah *ah, const uint8_t dmac[6])
{
	memcpy(ah->attr.dmac, dmac, 6);
}

/* A local error of a send WQE: completed with @st, then the QP to ERR (rxe does the same). */
static void ud_send_error(struct rfw_qp *qp, struct rfw_swqe *w, enum rfw_wc_status st)
{
	rfw_qp_complete_swqe(qp, w, st);
	rfw_qp_error(qp);
}

int rfw_ud_tx(struct rfw_qp *qp)
{
	struct rfw_swqe *w;
	struct rfw_ib_pkt p;
	bool imm;
	uint8_t *buf;
	uint32_t qkey;

	if (!rfw_sq_unsent(qp))
		return 0;
	w = rfw_sq_at(qp, qp->req.idx);
	if (!w->checked && rfw_sge_check(qp, w->sge, w->wr.num_sge, 0)) {
		ud_send_error(qp, w, RFW_WC_LOC_PROT_ERR);
		return 0;
	}
	imm = w->wr.opcode == RFW_WR_SEND_WITH_IMM;
	buf = rfw_tx_begin(qp, &p, imm ? RFW_OP_UD_SEND_ONLY_IMM : RFW_OP_UD_SEND_ONLY, qp->req.psn,
	                   w->length);
	if (buf == NULL)
		return -ENOBUFS;
	qkey = w->wr.wr.ud.remote_qkey;
	p.bth.dqpn = w->wr.wr.ud.remote_qpn & RFW_QPN_MASK;
	p.bth.se = (w->wr.send_flags & RFW_SEND_SOLICITED) != 0;
	p.deth.qkey = (qkey & 0x80000000u) ? qp->attr.qkey : qkey;
	p.deth.src_qpn = qp->wire_qpn; /* QP1's MADs come from QPN 1 (IBA 13.5.1) */
	if (imm)
		p.imm = w->wr.imm_data;
	if (w->length)
		rfw_sge_copy_out(w->sge, w->wr.num_sge, 0, buf + p.op->hdr_len, w->length);
	rfw_tx_end_ah(qp, buf, &p, w->length, &w->wr.wr.ud.ah->attr);
	qp->req.psn = (qp->req.psn + 1) & RFW_PSN_MASK;
	rfw_qp_complete_swqe(qp, w, RFW_WC_SUCCESS); /* sent is done: no ACK in UD */
	return 1;
}

/*
 * The GRH a UD receive buffer starts with. IPv4: bytes 0..19 zero, 20..39 the IPv4 header of
 * the datagram (checksum valid: rdma-core checks it to tell IPv4 from IPv6); IPv6: the IPv6
 * header. Rebuilt from what the host saw (addresses, TOS, TTL) and the lengths.
 */
static void ud_grh(uint8_t *g, const struct rfw_rx_info *rx, uint32_t udp_len)
{
	uint8_t ttl = rx->ttl ? rx->ttl : 64;

	memset(g, 0, UD_GRH_LEN);
	if (rfw_ip_is_mapped4(rx->src_ip)) {
		uint8_t *ip = g + 20;

		ip[0] = 0x45;
		ip[1] = rx->tclass;
		rfw_put_be16(ip + 2, (uint16_t)(RFW_IPV4_HLEN + udp_len));
		ip[6] = 0x40; /* DF */
		ip[8] = ttl;
		ip[9] = RFW_IPPROTO_UDP;
		memcpy(ip + 12, rx->src_ip + 12, 4);
		memcpy(ip + 16, rx->dst_ip + 12, 4);
		rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(rfw_csum_add(0, ip, RFW_IPV4_HLEN)));
		return;
	}
	rfw_put_be32(g, 6u << 28 | (uint32_t)rx->tclass << 20);
	rfw_put_be16(g + 4, (uint16_t)udp_len);
	g[6] = RFW_IPPROTO_UDP;
	g[7] = ttl;
	memcpy(g + 8, rx->src_ip, 16);
	memcpy(g + 24, rx->dst_ip, 16);
}

/* Why a datagram is refused before it reaches a WQE, or 0. */
static int ud_rx_check(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	if (qp->state != RFW_QPS_RTR && qp->state != RFW_QPS_RTS && qp->state != RFW_QPS_SQD &&
	    qp->state != RFW_QPS_SQE) {
		rfw_cnt(qp, RFW_CNT_rx_bad_state);
		return -EINVAL;
	}
	if (p->op->transport != RFW_IB_UD) {
		rfw_cnt(qp, RFW_CNT_rx_bad_opcode);
		return -EINVAL;
	}
	if (p->deth.qkey != qp->attr.qkey) {
		rfw_cnt(qp, RFW_CNT_ud_qkey_mismatch);
		return -EINVAL;
	}
	if (rfw_rq_avail(qp, 1) == 0) {
		rfw_cnt(qp, RFW_CNT_ud_no_rwqe);
		return -ENOBUFS;
	}
	return 0;
}

int rfw_ud_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *p, const struct rfw_rx_info *rx)
{
	struct rfw_rwqe *w;
	uint8_t grh[UD_GRH_LEN];
	struct rfw_wc *wc;
	int rc = ud_rx_check(qp, p);

	if (rc)
		return rc;
	w = rfw_rq_at(qp, qp->rq_cons);
	if ((uint64_t)p->payload_len + UD_GRH_LEN > w->length) {
		rfw_cnt(qp, RFW_CNT_ud_too_long);
		return -EMSGSIZE;
	}
	if (rfw_sge_check(qp, w->sge, w->num_sge, RFW_ACCESS_LOCAL_WRITE)) {
		/* A malformed receive WQE: completed in error, the QP to ERR (class A). */
		rfw_qp_complete_rwqe(qp, w, RFW_WC_LOC_PROT_ERR, RFW_WC_RECV, 0, 0, 0, 0);
		qp->rq_cons++;
		rfw_qp_error(qp);
		return -EACCES;
	}
	ud_grh(grh, rx,
	       RFW_UDP_HLEN + p->op->hdr_len + p->payload_len + p->bth.padcnt + RFW_ICRC_LEN);
	rfw_sge_copy_in(w->sge, w->num_sge, 0, grh, UD_GRH_LEN);
	if (p->payload_len)
		rfw_sge_copy_in(w->sge, w->num_sge, UD_GRH_LEN, p->payload, p->payload_len);
	qp->rq_cons++;
	wc = rfw_cq_slot(qp, qp->recv_cq, w->wr_id, RFW_WC_SUCCESS, RFW_WC_RECV);
	if (wc == NULL)
		return 0;
	wc->byte_len = UD_GRH_LEN + p->payload_len;
	wc->imm_data = p->imm;
	wc->src_qp = p->deth.src_qpn;
	wc->wc_flags = RFW_WC_GRH | ((p->op->flags & RFW_OPF_IMM) ? RFW_WC_WITH_IMM : 0);
	rfw_cq_commit(qp->recv_cq);
	return 0;
}
