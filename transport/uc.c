/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The unreliable connected service (IBA 9.8.3): SEND and RDMA WRITE (with or without
 * immediate) between two connected QPs, packets in PSN order, nothing acknowledged or retried.
 * The requester completes a WQE once its last packet is out. The responder takes packets in
 * sequence; a gap abandons the message in progress and the responder waits for the next FIRST
 * or ONLY, whatever its PSN (it resynchronises on it). Errors never reach the sender: a message
 * with no receive WQE, too long for it, or outside the R_Key's MR is dropped and counted
 * (uc_msgs_dropped), as rxe's responder drops UC messages (class D).
 */
#include <errno.h>
#include <string.h>

#include "transport/rfw_int.h"

/* UC_SEND_FIRST .. ONLY_IMM are 0x20 .. 0x25, UC_RDMA_WRITE_FIRST .. ONLY_IMM 0x26 .. 0x2b. */
static uint8_t uc_opcode(const struct rfw_swqe *w, bool first, bool last)
{
	bool write =
	    w->wr.opcode == RFW_WR_RDMA_WRITE || w->wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM;
	bool imm =
	    w->wr.opcode == RFW_WR_SEND_WITH_IMM || w->wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM;
	uint8_t base = write ? RFW_OP_UC_RDMA_WRITE_FIRST : RFW_OP_UC_SEND_FIRST;

	if (first && last)
		return (uint8_t)(base + 4 + imm);
	if (first)
		return base;
	return last ? (uint8_t)(base + 2 + imm) : (uint8_t)(base + 1);
}

int rfw_uc_tx(struct rfw_qp *qp)
{
	const struct rfw_ib_opcode_info *oi;
	struct rfw_swqe *w;
	uint32_t off, len;
	bool first, last, se;
	uint8_t *buf;

	if (!rfw_sq_unsent(qp))
		return 0;
	w = rfw_sq_at(qp, qp->req.idx);
	if (!w->checked) {
		if (rfw_sge_check(qp, w->sge, w->wr.num_sge, 0)) {
			rfw_qp_complete_swqe(qp, w, RFW_WC_LOC_PROT_ERR);
			rfw_qp_error(qp); /* a local error: the QP to ERR, the rest flushed */
			return 0;
		}
		w->checked = true;
	}
	off = qp->req.off;
	len = w->length - off < qp->mtu ? w->length - off : qp->mtu;
	first = off == 0;
	last = off + len == w->length;
	oi = rfw_ib_opcode_info(uc_opcode(w, first, last));
	buf = rfw_tx_alloc(qp, oi, len);
	if (buf == NULL)
		return -ENOBUFS;
	se = last && (w->wr.send_flags & RFW_SEND_SOLICITED) &&
	     (oi->flags & (RFW_OPF_SEND | RFW_OPF_IMM));
	/* A UC SEND or WRITE opcode: headers written straight, as RC's; no AckReq in UC. */
	rfw_tx_put_sw(qp, buf, oi, w, qp->req.psn, off, len, se, false, w->length);
	rfw_tx_sr_mark(qp, buf); /* as every packet's of a QP in SR mode */
	if (len)
		rfw_sge_copy_out(w->sge, w->wr.num_sge, off, buf + oi->hdr_len, len);
	rfw_tx_finish(qp, buf, oi, len, false, qp->req.psn, NULL);
	qp->req.psn = rfw_psn_add(qp->req.psn, 1);
	qp->req.off = last ? 0 : off + len;
	if (last)
		rfw_qp_complete_swqe(qp, w, RFW_WC_SUCCESS); /* out is done: no ACK in UC */
	return 1;
}

/* The message in progress is abandoned (its receive WQE, if any, stays for the next). */
static int uc_drop(struct rfw_qp *qp)
{
	if (qp->resp.cls != MSG_NONE)
		rfw_cnt(qp, RFW_CNT_uc_msgs_dropped);
	qp->resp.cls = MSG_NONE;
	return -EINVAL;
}

/* FIRST or ONLY: a new message, checked before a byte lands. */
static int uc_start(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_resp *r = &qp->resp;

	if (p->op->flags & RFW_OPF_SEND) {
		struct rfw_rwqe *w;

		if (rfw_rq_avail(qp, 1) == 0)
			return -ENOBUFS;
		w = rfw_rq_at(qp, qp->rq_cons);
		if (rfw_sge_check(qp, w->sge, w->num_sge, RFW_ACCESS_LOCAL_WRITE))
			return -EACCES;
		r->send_off = 0;
		r->cls = MSG_SEND;
		return 0;
	}
	if (p->reth.dma_len && rfw_mr_check_remote(qp, p->reth.rkey, p->reth.va, p->reth.dma_len,
	                                           RFW_ACCESS_REMOTE_WRITE) == NULL)
		return -EACCES;
	r->wva = p->reth.va;
	r->wrkey = p->reth.rkey;
	r->wleft = r->wtotal = p->reth.dma_len;
	r->cls = MSG_WRITE;
	return 0;
}

/* One packet's data into the message in progress. */
static int uc_place(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_resp *r = &qp->resp;
	uint32_t n = p->payload_len;

	if (r->cls == MSG_SEND) {
		struct rfw_rwqe *w = rfw_rq_at(qp, qp->rq_cons);

		if ((uint64_t)r->send_off + n > w->length ||
		    rfw_sge_check(qp, w->sge, w->num_sge, RFW_ACCESS_LOCAL_WRITE))
			return -EMSGSIZE;
		if (n)
			rfw_sge_copy_in(w->sge, w->num_sge, r->send_off, p->payload, n);
		r->send_off += n;
		return 0;
	}
	/* A WRITE's packets add up to its DMA length; the MR is looked up again for each. */
	if (n > r->wleft || ((p->op->flags & (RFW_OPF_LAST | RFW_OPF_ONLY)) && n != r->wleft))
		return -EMSGSIZE;
	if (n && rfw_mr_check_remote(qp, r->wrkey, r->wva, n, RFW_ACCESS_REMOTE_WRITE) == NULL)
		return -EACCES;
	if (n)
		memcpy((uint8_t *)(uintptr_t)r->wva, p->payload, n);
	r->wva += n;
	r->wleft -= n;
	return 0;
}

/* LAST or ONLY: a SEND, or a WRITE with immediate, completes a receive WQE. */
static void uc_finish(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_resp *r = &qp->resp;
	bool imm = (p->op->flags & RFW_OPF_IMM) != 0;

	if (r->cls == MSG_SEND) {
		rfw_qp_complete_rwqe(qp, rfw_rq_at(qp, qp->rq_cons), RFW_WC_SUCCESS, RFW_WC_RECV,
		                     r->send_off, imm ? RFW_WC_WITH_IMM : 0, p->imm, 0);
		qp->rq_cons++;
	} else if (imm) {
		/* The data is in place; with no receive WQE only the completion is lost. */
		if (rfw_rq_avail(qp, 1) == 0) {
			rfw_cnt(qp, RFW_CNT_uc_msgs_dropped);
		} else {
			rfw_qp_complete_rwqe(qp, rfw_rq_at(qp, qp->rq_cons), RFW_WC_SUCCESS,
			                     RFW_WC_RECV_RDMA_WITH_IMM, r->wtotal, RFW_WC_WITH_IMM,
			                     p->imm, 0);
			qp->rq_cons++;
		}
	}
	r->cls = MSG_NONE;
}

int rfw_uc_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_resp *r = &qp->resp;
	uint32_t f = p->op->flags;
	bool begin = (f & (RFW_OPF_FIRST | RFW_OPF_ONLY)) != 0;
	int rc;

	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT || qp->state == RFW_QPS_ERR) {
		rfw_cnt(qp, RFW_CNT_rx_bad_state);
		return -EINVAL;
	}
	if (p->op->transport != RFW_IB_UC) {
		rfw_cnt(qp, RFW_CNT_rx_bad_opcode);
		return -EINVAL;
	}
	/* IBA 9.8.3: out of sequence abandons the message; the PSN is followed either way. */
	if (p->bth.psn != r->psn) {
		rfw_cnt(qp, RFW_CNT_out_of_sequence);
		uc_drop(qp);
	}
	r->psn = rfw_psn_add(p->bth.psn, 1);
	if (begin) {
		uc_drop(qp); /* a FIRST/ONLY while a message is open: the open one lost its LAST */
		rc = uc_start(qp, p);
		if (rc != 0) {
			rfw_cnt(qp, RFW_CNT_uc_msgs_dropped);
			return rc;
		}
	} else if (r->cls == MSG_NONE || (r->cls == MSG_SEND) != ((f & RFW_OPF_SEND) != 0)) {
		return uc_drop(qp); /* the rest of a message already abandoned */
	}
	rc = uc_place(qp, p);
	if (rc != 0) {
		rfw_cnt(qp, RFW_CNT_uc_msgs_dropped);
		r->cls = MSG_NONE;
		return rc;
	}
	if (f & (RFW_OPF_LAST | RFW_OPF_ONLY))
		uc_finish(qp, p);
	return 0;
}
