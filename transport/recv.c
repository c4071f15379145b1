/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive demux (IBA 9.6 header validation, as rxe_recv.c): find the QP, check the packet may
 * arrive in the QP's state, feed the congestion-control seam, and hand requests to the
 * responder and responses to the completer.
 */
#include <errno.h>
#include <string.h>

#include "rfw_int.h"

/* A RoCE packet that carries data, for the notification point (CE marks on it count). */
static bool carries_data(const struct rfw_ib_pkt *p)
{
	return (p->op->flags & RFW_OPF_PAYLOAD) != 0;
}

/* Annex A17.9: the notification point, built-in when no cc ops are attached. */
static void np_ce(struct rfw_qp *qp, uint64_t now)
{
	bool send;

	rfw_cnt(qp, RFW_CNT_np_ecn_marked_roce_packets);
	if (qp->cc_ops && qp->cc_ops->np_on_ce)
		send = qp->cc_ops->np_on_ce(qp->cc, now);
	else
		send = !qp->resp.cnp_ever ||
		       now - qp->resp.last_cnp_ns >= qp->dev->attr.np_min_time_between_cnps_ns;
	if (send && !qp->resp.cnp_pending) {
		qp->resp.cnp_pending = true;
		qp->resp.cnp_ever = true;
		qp->resp.last_cnp_ns = now;
	}
}

/*
 * The transport modes of the two ends differ (docs/transport-sr.md "Mode mismatch"): an SR QP
 * accepts only SR-marked packets, a GBN QP refuses SR-marked ones (other Resv7 values stay
 * ignored, as IBA 9.2 wants). The out-of-band exchange should have refused the connection;
 * this catches the first packet anyway.
 */
static bool mode_mismatch(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	if ((p->bth.resv7 == RFW_SR_MARK) == (qp->sr != NULL))
		return false;
	rfw_cnt(qp, RFW_CNT_rx_transport_mismatch);
	return true;
}

/*
 * An RC QP talks to one peer: its packets come from the path's destination (ah_attr.dgid) to
 * its source (ah_attr.sgid), IPv4 as IPv4-mapped GIDs. Anything else is dropped before it can
 * ACK, NAK, CNP or WRITE (as rxe's check_addr in rxe_recv.c does for RC/UC): without it,
 * whoever reaches UDP 4791 and guesses a QPN and PSN could complete or kill the QP. The AV is
 * set at INIT->RTR, so the check starts there.
 */
static bool addr_mismatch(struct rfw_qp *qp, const struct rfw_rx_info *rx)
{
	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT)
		return false;
	if (memcmp(rx->src_ip, qp->attr.ah_attr.dgid, 16) == 0 &&
	    memcmp(rx->dst_ip, qp->attr.ah_attr.sgid, 16) == 0)
		return false;
	rfw_cnt(qp, RFW_CNT_rx_addr_mismatch);
	return true;
}

/* An RC request packet for the responder of @qp. */
static int rx_request(struct rfw_qp *qp, const struct rfw_rx_info *rx, uint64_t now_ns)
{
	const struct rfw_ib_pkt *p = rx->pkt;

	/* IBA 10.3.1: a responder accepts requests in RTR, RTS, SQD and SQE. */
	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT || qp->state == RFW_QPS_ERR) {
		rfw_cnt(qp, RFW_CNT_rx_bad_state);
		return -EINVAL;
	}
	if (mode_mismatch(qp, p)) {
		/* Never placed: the connection ends with an invalid-request NAK. */
		rfw_qp_error(qp);
		rfw_resp_queue_nak(qp, RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_INVALID_REQUEST),
		                   p->bth.psn);
		rfw_resp_fatal_event(qp, RFW_NAK_INVALID_REQUEST);
		return -EINVAL;
	}
	if (qp->state == RFW_QPS_RTR && !qp->comm_est) {
		qp->comm_est = true; /* IBA 11.6.3.1: communication established */
		rfw_qp_event(qp, RFW_QP_EV_COMM_EST);
	}
	if (rx->ecn == 3 && carries_data(p))
		np_ce(qp, now_ns);
	rfw_resp_rx(qp, p);
	return 0;
}

int rfw_dev_rx(struct rfw_dev *dev, const struct rfw_rx_info *rx, uint64_t now_ns)
{
	const struct rfw_ib_pkt *p = rx->pkt;
	struct rfw_qp *qp;

	if (p == NULL || p->op == NULL) {
		dev->cnt[RFW_CNT_rx_bad_opcode]++;
		return -EINVAL;
	}
	qp = rfw_dev_qp_at(dev, p->bth.dqpn); /* inline: once per packet received */
	if (qp == NULL) {
		dev->cnt[RFW_CNT_rx_unknown_qp]++;
		return -ENOENT;
	}
	if (qp->type != RFW_QPT_UD && addr_mismatch(qp, rx))
		return -EINVAL;
	qp->now = now_ns;
	if (qp->es) {
		qp->es->rx_now = now_ns;
		qp->es->rx_ts = rx->rx_ts_ns; /* 0: none (T4 is then rx_now) */
	}
	rfw_cnt(qp, RFW_CNT_rx_packets);
	rfw_cnt_add(qp, RFW_CNT_rx_bytes, p->op->hdr_len + p->payload_len + p->bth.padcnt);

	if (p->op->flags & RFW_OPF_CNP) {
		/* Annex A17.9.2: a CNP goes to the reaction point of the QP. */
		if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT) {
			rfw_cnt(qp, RFW_CNT_rx_bad_state);
			return -EINVAL;
		}
		rfw_cnt(qp, RFW_CNT_rp_cnp_handled);
		if (qp->cc_ops && qp->cc_ops->rp_on_cnp)
			qp->cc_ops->rp_on_cnp(qp->cc, now_ns);
		return 0;
	}
	if (qp->type == RFW_QPT_UD)
		return rfw_ud_rx(qp, p, rx);
	if (qp->type == RFW_QPT_UC) {
		if (rx->ecn == 3 && carries_data(p))
			np_ce(qp, now_ns); /* DCQCN on UC: the NP answers CE as for RC */
		return rfw_uc_rx(qp, p);
	}
	/* Only the RC service: UC/UD on an RC QP is an invalid packet, silently dropped (IBA 9.6).
	 */
	if (p->op->transport != RFW_IB_RC) {
		rfw_cnt(qp, RFW_CNT_rx_bad_opcode);
		return -EINVAL;
	}
	if (p->op->flags & RFW_OPF_REQUEST)
		return rx_request(qp, rx, now_ns);
	if (!rfw_qp_sq_active(qp)) {
		rfw_cnt(qp, RFW_CNT_rx_bad_state);
		return -EINVAL;
	}
	if (mode_mismatch(qp, p)) {
		if (qp->comp.idx != qp->sq_prod)
			rfw_qp_complete_swqe(qp, rfw_sq_at(qp, qp->comp.idx), RFW_WC_BAD_RESP_ERR);
		rfw_qp_error(qp);
		return -EINVAL;
	}
	if (rx->ecn == 3 && carries_data(p))
		np_ce(qp, now_ns);
	rfw_comp_rx(qp, p);
	return 0;
}

void rfw_tx_pkt_init(const struct rfw_qp *qp, struct rfw_ib_pkt *p,
                     const struct rfw_ib_opcode_info *oi, uint32_t psn, uint32_t payload_len)
{
	/* Two halves of 64 bytes at most, each stored from one zero register: a compound literal
	   compiles to `rep stosq`, and a copy of rfw_ib_pkt_zero to a load for every store. */
	_Static_assert(sizeof(*p) > 64 && sizeof(*p) <= 128, "two halves of 64 bytes at most");
	memset(p, 0, 64);
	memset((uint8_t *)p + 64, 0, sizeof(*p) - 64);
	p->op = oi;
	p->bth.opcode = oi->opcode;
	p->bth.pkey = 0xffff; /* the default partition (IBA 10.9.1.2) */
	p->bth.padcnt = rfw_ib_padcnt(payload_len);
	p->bth.dqpn = qp->attr.dest_qp_num;
	p->bth.psn = psn & RFW_PSN_MASK;
}

uint8_t *rfw_tx_begin(struct rfw_qp *qp, struct rfw_ib_pkt *p, uint8_t opcode, uint32_t psn,
                      uint32_t payload_len)
{
	const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(opcode);
	uint8_t *buf = rfw_tx_alloc(qp, oi, payload_len);

	if (buf == NULL)
		return NULL;
	rfw_tx_pkt_init(qp, p, oi, psn, payload_len);
	return buf;
}

void rfw_tx_end(struct rfw_qp *qp, uint8_t *buf, struct rfw_ib_pkt *p, uint32_t payload_len)
{
	rfw_tx_end_ah(qp, buf, p, payload_len, NULL);
}

void rfw_tx_end_ah(struct rfw_qp *qp, uint8_t *buf, struct rfw_ib_pkt *p, uint32_t payload_len,
                   const struct rfw_ah_attr *ah)
{
	(void)rfw_ib_build_op(buf, p->op, p); /* p->op and the buffer from rfw_tx_begin */
	rfw_tx_sr_mark(qp, buf);
	rfw_tx_finish(qp, buf, p->op, payload_len, p->bth.ackreq, p->bth.psn, ah);
}

void rfw_tx_finish(struct rfw_qp *qp, uint8_t *buf, const struct rfw_ib_opcode_info *oi,
                   uint32_t payload_len, bool ackreq, uint32_t psn, const struct rfw_ah_attr *ah)
{
	rfw_tx_finish_inl(qp, buf, oi, payload_len, ackreq, psn, ah);
}
