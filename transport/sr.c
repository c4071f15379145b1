/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat (rocefw extension, docs/transport-sr.md), after IRN (Mittal et al.,
 * SIGCOMM'18): the responder accepts SEND and WRITE packets out of order inside a PSN window,
 * places each one on its own (the SRETH says where), tracks arrivals in a bitmap and completes
 * messages only when the cumulative PSN passes them, in message order, as IBA requires of RC
 * (IBA 9.7.5.1.6, 10.8.3). NAKs carry the cumulative PSN and a SACK bitmap. The requester keeps
 * a SACK bitmap, retransmits only the holes, times out after RTO_low with few packets in flight
 * and RTO_high otherwise, and caps the bytes in flight at a BDP.
 *
 * READ and atomic requests are executed in PSN order only (the responder drops them out of
 * order), so every SEND/WRITE before one has been placed when it executes. A SEND/WRITE after
 * an atomic waits for the atomic's response (IBA 9.5: SEND, WRITE and atomics execute in
 * message order); one after a READ does not (IBA lets it execute before the READ reads; FENCE
 * forbids it): docs/transport.md "Ordering". READ responses are placed out of order and only
 * the missing part is asked for again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rfw_int.h"

#define ACK_SYNDROME RFW_AETH_SYNDROME(RFW_AETH_ACK, 0x1f)

/* Out-of-order arrivals between two SACK NAKs when no new hole appears. */
#define SR_SACK_EVERY 16

/* ---- setup ---- */

void rfw_sr_free(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;

	if (sr == NULL)
		return;
	free(sr->rx_bits);
	free(sr->slot);
	free(sr->sack);
	free(sr->rtxd);
	free(sr->rtx_mark);
	free(sr);
	qp->sr = NULL;
}

int rfw_sr_setup(struct rfw_qp *qp)
{
	const struct rfw_dev_attr *a = &qp->dev->attr;
	struct rfw_sr *sr;
	size_t words;

	if (qp->sr)
		return 0;
	sr = calloc(1, sizeof(*sr));
	if (sr == NULL)
		return -ENOMEM;
	sr->win = a->sr_window;
	words = sr->win / 64;
	sr->rx_bits = calloc(words, sizeof(uint64_t));
	sr->sack = calloc(words, sizeof(uint64_t));
	sr->rtxd = calloc(words, sizeof(uint64_t));
	sr->rtx_mark = calloc(sr->win, sizeof(uint32_t));
	sr->slot = calloc(sr->win, sizeof(*sr->slot));
	qp->sr = sr;
	if (!sr->rx_bits || !sr->sack || !sr->rtxd || !sr->slot || !sr->rtx_mark) {
		rfw_sr_free(qp);
		return -ENOMEM;
	}
	sr->rto_low = a->sr_rto_low_ns;
	sr->rto_high = a->sr_rto_high_ns;
	sr->rto_low_pkts = a->sr_rto_low_pkts;
	rfw_sr_reset(qp);
	return 0;
}

/* Per-MTU values: called at setup and whenever the path MTU changes. */
void rfw_sr_mtu(struct rfw_qp *qp)
{
	const struct rfw_dev_attr *a = &qp->dev->attr;
	struct rfw_sr *sr = qp->sr;

	sr->seg = qp->mtu - RFW_SRETH_LEN;
	if (a->sr_bdp_bytes)
		sr->bdp = a->sr_bdp_bytes;
	else
		/* The pipe (link x base RTT), plus the packets the responder gathers before it
		 * acknowledges (AckReq every ack_every) and two in serialisation. */
		sr->bdp = (uint64_t)a->link_gbps * a->base_rtt_ns / 8 +
		          (uint64_t)((a->ack_every ? a->ack_every : 1) + 2) * qp->mtu;
}

/*
 * The responder half and the requester half start over separately: RQ_PSN is set at
 * INIT->RTR, SQ_PSN at RTR->RTS, and the peer may already be sending in between.
 */
void rfw_sr_reset_resp(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;

	memset(sr->rx_bits, 0, sr->win / 64 * sizeof(uint64_t));
	sr->rx_high = qp->resp.psn;
	sr->rx_rsn = 0;
	sr->ooo_since_nak = 0;
}

void rfw_sr_reset_req(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;
	size_t words = sr->win / 64;

	memset(sr->sack, 0, words * sizeof(uint64_t));
	memset(sr->rtxd, 0, words * sizeof(uint64_t));
	sr->nsacked = 0;
	sr->sack_high = qp->comp.psn;
	sr->rtx_scan = qp->comp.psn;
	sr->rtx_active = false;
	sr->timer_low = false;
	sr->probe = false;
	sr->tx_rsn = 0;
}

void rfw_sr_reset(struct rfw_qp *qp)
{
	rfw_sr_reset_resp(qp);
	rfw_sr_reset_req(qp);
	rfw_sr_mtu(qp);
}

/* ---- responder ---- */

static void sr_fatal(struct rfw_qp *qp, unsigned code, uint32_t psn)
{
	rfw_qp_error(qp);
	rfw_resp_queue_nak(qp, RFW_AETH_SYNDROME(RFW_AETH_NAK, code), psn);
	rfw_resp_fatal_event(qp, code);
}

/* A packet's slot flags (SR_SLOT_*) from its opcode flags @f: 0 unless it ends a message. */
static inline uint8_t sr_slot_flags(uint32_t f)
{
	if (!(f & (RFW_OPF_LAST | RFW_OPF_ONLY)))
		return 0;
	return (uint8_t)(SR_SLOT_END | ((f & RFW_OPF_SEND) ? SR_SLOT_SEND : 0) |
	                 ((f & RFW_OPF_IMM) ? SR_SLOT_IMM : 0) |
	                 ((f & RFW_OPF_INV) ? SR_SLOT_INV : 0));
}

/*
 * A WRITE with immediate at the ePSN found no receive WQE (IBA 9.7.5.2.8): RNR NAK, and the
 * ePSN waits here. The packet is kept: a SACK may have reported it, and the requester never
 * resends a SACKed PSN (forgetting it lost the completion for good). A receive posted
 * (rfw_sr_recv_posted; to an SRQ, rfw_srq_wait) or the packet resent lets it go on.
 */
static void sr_hold(struct rfw_qp *qp)
{
	rfw_srq_wait(qp);
	rfw_cnt(qp, RFW_CNT_rnr_nak_sent);
	rfw_resp_queue_nak(qp, RFW_AETH_SYNDROME(RFW_AETH_RNR_NAK, qp->attr.min_rnr_timer),
	                   qp->resp.psn);
}

/*
 * The ePSN passes the end of a SEND or a WRITE with immediate (@flags: its slot's; @len, @imm,
 * @inv_rkey: its length and what its last packet carried): its receive WQE, which the caller
 * has made sure is there, completes. The caller counts the message in the MSN.
 */
static inline void sr_complete(struct rfw_qp *qp, uint8_t flags, uint32_t len, uint32_t imm,
                               uint32_t inv_rkey)
{
	struct rfw_rwqe *w = rfw_rq_at(qp, qp->rq_cons);
	unsigned wcf = 0;

	if (flags & SR_SLOT_IMM)
		wcf |= RFW_WC_WITH_IMM;
	if (flags & SR_SLOT_INV) {
		struct rfw_mr *mr = rfw_mr_invalidatable(qp, inv_rkey);

		if (mr)
			rfw_mr_invalidate(mr); /* IBA 10.6.5 */
		wcf |= RFW_WC_WITH_INV;
	}
	rfw_qp_complete_rwqe(qp, w, RFW_WC_SUCCESS,
	                     (flags & SR_SLOT_SEND) ? RFW_WC_RECV : RFW_WC_RECV_RDMA_WITH_IMM, len,
	                     wcf, imm, (flags & SR_SLOT_INV) ? inv_rkey : 0);
	qp->rq_cons++;
	qp->sr->rx_rsn++;
}

/*
 * Move the cumulative PSN (ePSN) over every PSN received, completing each message whose last
 * packet it passes, in PSN order (IBA 9.7.5.1.6: completions in message order).
 */
static void sr_advance(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;
	struct rfw_resp *r = &qp->resp;

	while (rfw_psn_cmp(sr->rx_high, r->psn) > 0 && rfw_bit(sr->rx_bits, sr->win, r->psn)) {
		struct rfw_sr_slot *s = &sr->slot[r->psn & (sr->win - 1)];

		if (s->flags & (SR_SLOT_SEND | SR_SLOT_IMM)) {
			if (rfw_rq_avail(qp, 1) == 0) {
				sr_hold(qp);
				return;
			}
			sr_complete(qp, s->flags, s->len, s->imm, s->inv_rkey);
		}
		if (s->flags & SR_SLOT_END)
			r->msn = (r->msn + 1) & RFW_MSN_MASK;
		s->flags = 0;
		rfw_bit_clr(sr->rx_bits, sr->win, r->psn);
		r->psn = rfw_psn_add(r->psn, 1);
	}
	if (rfw_psn_cmp(sr->rx_high, r->psn) < 0)
		sr->rx_high = r->psn;
}

/*
 * The ePSN held at a message end that found no receive WQE (sr_advance): try it again. Moved,
 * the requester learns the new ePSN; still held, sr_advance has queued another RNR NAK.
 */
static void sr_retry_held(struct rfw_qp *qp)
{
	uint32_t old = qp->resp.psn;

	sr_advance(qp);
	if (qp->resp.psn != old && qp->state != RFW_QPS_ERR)
		rfw_resp_queue_sr_state(qp);
}

/* SRETH (docs/transport-sr.md): WRITE: VA of this packet's data, R_Key; SEND: RSN. Both: the
 * byte offset of this packet's data in its message. */
struct sreth {
	uint64_t va;
	uint32_t rkey;
	uint32_t rsn;
	uint32_t off;
};

static void sreth_get(const uint8_t *b, bool send, struct sreth *e)
{
	if (send) {
		e->rsn = rfw_get_be32(b);
		e->va = 0;
		e->rkey = 0;
	} else {
		e->va = rfw_get_be64(b);
		e->rkey = rfw_get_be32(b + 8);
		e->rsn = 0;
	}
	e->off = rfw_get_be32(b + 12);
}

/*
 * Responder: a SEND packet's data into the receive WQE its RSN names. True when placed; false
 * when it was not (an RNR NAK or a fatal NAK queued, or dropped to be retransmitted).
 */
static bool sr_place_send(struct rfw_qp *qp, const struct rfw_ib_pkt *p, const struct sreth *e,
                          const uint8_t *data, uint32_t dlen, int32_t d)
{
	struct rfw_sr *sr = qp->sr;
	int32_t k = (int32_t)(e->rsn - sr->rx_rsn);
	bool end = (p->op->flags & (RFW_OPF_LAST | RFW_OPF_ONLY)) != 0;
	struct rfw_rwqe *w;

	if (k < 0) { /* a message already completed, under a PSN not seen: bogus */
		sr_fatal(qp, RFW_NAK_INVALID_REQUEST, p->bth.psn);
		return false;
	}
	if ((uint32_t)k >= rfw_rq_avail(qp, (uint32_t)k + 1)) {
		/* No receive WQE for it yet (IBA 9.7.5.2.8). At ePSN: RNR NAK; beyond: dropped,
		 * the retransmission finds it later. */
		if (d == 0) {
			rfw_cnt(qp, RFW_CNT_rnr_nak_sent);
			rfw_resp_queue_nak(
			    qp, RFW_AETH_SYNDROME(RFW_AETH_RNR_NAK, qp->attr.min_rnr_timer),
			    p->bth.psn);
		} else {
			rfw_cnt(qp, RFW_CNT_out_of_sequence);
		}
		return false;
	}
	w = rfw_rq_at(qp, qp->rq_cons + (uint32_t)k);
	if (rfw_sge_check(qp, w->sge, w->num_sge, RFW_ACCESS_LOCAL_WRITE)) {
		sr_fatal(qp, RFW_NAK_REMOTE_OP_ERR, p->bth.psn);
		return false;
	}
	if ((uint64_t)e->off + dlen > w->length) {
		rfw_cnt(qp, RFW_CNT_resp_local_length_error);
		sr_fatal(qp, RFW_NAK_INVALID_REQUEST, p->bth.psn);
		return false;
	}
	/* IBA 10.6: SEND with Invalidate names a fast-registration MR of our PD only */
	if ((p->op->flags & RFW_OPF_INV) && end && rfw_mr_invalidatable(qp, p->ieth_rkey) == NULL) {
		sr_fatal(qp, RFW_NAK_INVALID_REQUEST, p->bth.psn);
		return false;
	}
	if (dlen)
		rfw_sge_copy_in(w->sge, w->num_sge, e->off, data, dlen);
	return true;
}

/* Responder: a WRITE packet's data at the VA its SRETH names. False after a fatal NAK. */
static bool sr_place_write(struct rfw_qp *qp, const struct rfw_ib_pkt *p, const struct sreth *e,
                           const uint8_t *data, uint32_t dlen)
{
	if (dlen &&
	    rfw_mr_check_remote_inl(qp, e->rkey, e->va, dlen, RFW_ACCESS_REMOTE_WRITE) == NULL) {
		rfw_cnt(qp, RFW_CNT_resp_remote_access_errors);
		sr_fatal(qp, RFW_NAK_REMOTE_ACCESS_ERR, p->bth.psn);
		return false;
	}
	if (p->op->flags & (RFW_OPF_FIRST | RFW_OPF_ONLY))
		rfw_cnt(qp, RFW_CNT_rx_write_requests);
	if (dlen) /* as go-back-N's placement: a short payload in a few moves, inline */
		rfw_copy((uint8_t *)(uintptr_t)e->va, data, dlen);
	return true;
}

/* The received packet's slot: what the in-order completion needs of a message's end. */
static void sr_note_slot(struct rfw_sr *sr, const struct rfw_ib_pkt *p, const struct sreth *e,
                         uint32_t dlen)
{
	struct rfw_sr_slot *s = &sr->slot[p->bth.psn & (sr->win - 1)];
	uint32_t f = p->op->flags;

	rfw_bit_set(sr->rx_bits, sr->win, p->bth.psn);
	s->flags = sr_slot_flags(f);
	if (s->flags) {
		s->imm = p->imm;
		s->inv_rkey = p->ieth_rkey;
		s->len = e->off + dlen;
	}
}

/* sr_pass for the end of a SEND or a WRITE with immediate: its receive WQE completes. A SEND's
 * is there (sr_place_send placed it); a WRITE with immediate without one: false, nothing done
 * (sr_advance holds the ePSN for it). Out of line: WRITEs and middle packets do not pay for it. */
static __attribute__((noinline)) bool sr_pass_rwqe(struct rfw_qp *qp, const struct rfw_ib_pkt *p,
                                                   uint32_t len)
{
	uint8_t sf = sr_slot_flags(p->op->flags);

	if (!(sf & SR_SLOT_SEND) && rfw_rq_avail(qp, 1) == 0)
		return false;
	sr_complete(qp, sf, len, p->imm, p->ieth_rkey);
	qp->resp.msn = (qp->resp.msn + 1) & RFW_MSN_MASK;
	return true;
}

/* The ePSN at packet @p (placed, @len: its message's length so far) passes it: what sr_advance
 * does at a message's end, without the slot. False, nothing done, when it must wait there. */
static inline bool sr_pass(struct rfw_qp *qp, const struct rfw_ib_pkt *p, uint32_t len)
{
	uint32_t f = p->op->flags;

	if (!(f & (RFW_OPF_LAST | RFW_OPF_ONLY)))
		return true;
	if (f & (RFW_OPF_SEND | RFW_OPF_IMM))
		return sr_pass_rwqe(qp, p, len);
	qp->resp.msn = (qp->resp.msn + 1) & RFW_MSN_MASK;
	return true;
}

/*
 * The packet's SRETH and data, checked (the SR form of IBA 9.7.5.1's length and sequence
 * checks: FIRST and MIDDLE carry exactly one segment, every packet sits on a segment boundary,
 * the first at offset 0; the QP must allow the operation). False after a fatal NAK.
 */
static bool sr_check_shape(struct rfw_qp *qp, const struct rfw_ib_pkt *p, struct sreth *e,
                           uint32_t *dlen)
{
	struct rfw_sr *sr = qp->sr;
	uint32_t f = p->op->flags;
	bool send = (f & RFW_OPF_SEND) != 0;
	bool start = (f & (RFW_OPF_FIRST | RFW_OPF_ONLY)) != 0;

	if (p->payload_len < RFW_SRETH_LEN) {
		sr_fatal(qp, RFW_NAK_INVALID_REQUEST, p->bth.psn);
		return false;
	}
	sreth_get(p->payload, send, e);
	*dlen = p->payload_len - RFW_SRETH_LEN;
	if ((!send && !(qp->attr.qp_access_flags & RFW_ACCESS_REMOTE_WRITE)) ||
	    ((f & (RFW_OPF_FIRST | RFW_OPF_MIDDLE)) && *dlen != sr->seg) || *dlen > sr->seg ||
	    (start != (e->off == 0)) || e->off % sr->seg) {
		sr_fatal(qp, RFW_NAK_INVALID_REQUEST, p->bth.psn);
		return false;
	}
	return true;
}

/* Responder, SEND/WRITE packet at distance 0 <= d < win of ePSN, not yet received. */
static void sr_place(struct rfw_qp *qp, const struct rfw_ib_pkt *p, int32_t d)
{
	struct rfw_sr *sr = qp->sr;
	struct rfw_resp *r = &qp->resp;
	const uint8_t *data;
	uint32_t dlen;
	struct sreth e;
	bool new_hole;

	if (!sr_check_shape(qp, p, &e, &dlen))
		return;
	data = p->payload + RFW_SRETH_LEN;
	if ((p->op->flags & RFW_OPF_SEND) ? !sr_place_send(qp, p, &e, data, dlen, d)
	                                  : !sr_place_write(qp, p, &e, data, dlen))
		return;
	new_hole = rfw_psn_cmp(p->bth.psn, sr->rx_high) > 0;
	/* At the ePSN with nothing received beyond it (the usual case): the ePSN passes this
	   packet alone, as sr_advance would, without noting its slot. */
	if (d == 0 && sr->rx_high == r->psn && sr_pass(qp, p, e.off + dlen)) {
		r->psn = rfw_psn_add(r->psn, 1);
		sr->rx_high = r->psn;
	} else {
		sr_note_slot(sr, p, &e, dlen);
		if (rfw_psn_cmp(rfw_psn_add(p->bth.psn, 1), sr->rx_high) > 0)
			sr->rx_high = rfw_psn_add(p->bth.psn, 1);
		if (d > 0)
			rfw_cnt(qp, RFW_CNT_ooo_accepted);
		else
			sr_advance(qp);
	}
	if (qp->state == RFW_QPS_ERR)
		return;
	if (rfw_psn_cmp(sr->rx_high, r->psn) > 0) {
		/* Holes: report them on a new hole, when asked, and every few arrivals so the
		 * requester sees retransmissions lost again. */
		if (new_hole || p->bth.ackreq || ++sr->ooo_since_nak >= SR_SACK_EVERY) {
			sr->ooo_since_nak = 0;
			rfw_resp_queue_sr_state(qp);
		}
	} else if (p->bth.ackreq || d > 0) {
		rfw_resp_queue_sr_state(qp);
	}
}

void rfw_sr_resp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_sr *sr = qp->sr;
	struct rfw_resp *r = &qp->resp;
	int32_t d = rfw_psn_diff(p->bth.psn, r->psn);

	if (p->op->flags & (RFW_OPF_READ | RFW_OPF_ATOMIC)) {
		uint32_t old = r->psn;

		/*
		 * Executed in PSN order only: one beyond the ePSN is dropped and reported as a
		 * hole, and stays one (rx_high past it) so that when the ePSN reaches it a NAK
		 * says so, rather than an ACK the requester could only answer with its timer.
		 */
		if (d > 0) {
			rfw_cnt(qp, RFW_CNT_out_of_sequence);
			if (d < (int32_t)sr->win &&
			    rfw_psn_cmp(rfw_psn_add(p->bth.psn, 1), sr->rx_high) > 0)
				sr->rx_high = rfw_psn_add(p->bth.psn, 1);
			rfw_resp_queue_sr_state(qp);
			return;
		}
		rfw_resp_run_gbn(qp, p); /* execution, or duplicate replay (IBA 9.7.5.1.3) */
		for (uint32_t x = old; rfw_psn_cmp(x, r->psn) < 0; x = rfw_psn_add(x, 1)) {
			rfw_bit_clr(sr->rx_bits, sr->win, x);
			sr->slot[x & (sr->win - 1)].flags = 0;
		}
		if (rfw_psn_cmp(sr->rx_high, r->psn) < 0)
			sr->rx_high = r->psn;
		sr_advance(qp);
		/* Holes behind it (a READ or atomic dropped out of order): say so now. */
		if (rfw_psn_cmp(r->psn, old) != 0 && rfw_psn_cmp(sr->rx_high, r->psn) > 0 &&
		    qp->state != RFW_QPS_ERR)
			rfw_resp_queue_sr_state(qp);
		return;
	}
	if (d < 0 || (d < (int32_t)sr->win && rfw_bit(sr->rx_bits, sr->win, p->bth.psn))) {
		/* At the ePSN: the message end held for a receive WQE, resent as our RNR NAK
		 * asked (not a duplicate): try it again. */
		if (d == 0) {
			sr_retry_held(qp);
			return;
		}
		/* Already received: never placed twice (IBA 9.7.5.1.3); acknowledge again so a
		 * requester that lost the ACK learns it. */
		rfw_cnt(qp, RFW_CNT_duplicate_request);
		rfw_cnt(qp, RFW_CNT_spurious_retransmissions);
		rfw_resp_queue_sr_state(qp);
		return;
	}
	if (d >= (int32_t)sr->win) {
		rfw_cnt(qp, RFW_CNT_out_of_sequence);
		return;
	}
	sr_place(qp, p, d);
}

/* A receive WQE was posted (to the QP or its SRQ): a message end waiting at the ePSN for one
 * completes now. Any QP may be passed; only a selective-repeat one that can receive acts. */
void rfw_sr_recv_posted(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;

	if (sr == NULL || qp->state == RFW_QPS_ERR || qp->state == RFW_QPS_RESET)
		return;
	if (rfw_psn_cmp(sr->rx_high, qp->resp.psn) > 0 &&
	    rfw_bit(sr->rx_bits, sr->win, qp->resp.psn))
		sr_retry_held(qp);
}

uint32_t rfw_sr_sack_len(const struct rfw_qp *qp)
{
	const struct rfw_sr *sr = qp->sr;
	int32_t n = rfw_psn_diff(sr->rx_high, rfw_psn_add(qp->resp.psn, 1));
	uint32_t words;

	if (n <= 0)
		return RFW_SACK_HDRLEN;
	words = rfw_div_up((uint32_t)n, 32);
	if (words > RFW_SACK_MAX_WORDS)
		words = RFW_SACK_MAX_WORDS;
	return RFW_SACK_HDRLEN + 4 * words;
}

/* SACK block: 16-bit word count, 16 reserved bits, then bit j of word k = PSN ePSN+1+32k+j. */
uint32_t rfw_sr_build_sack(struct rfw_qp *qp, uint8_t *buf, uint32_t len)
{
	const struct rfw_sr *sr = qp->sr;
	uint32_t base = rfw_psn_add(qp->resp.psn, 1);
	uint32_t words = (len - RFW_SACK_HDRLEN) / 4;

	rfw_put_be16(buf, (uint16_t)words);
	rfw_put_be16(buf + 2, 0);
	for (uint32_t k = 0; k < words; k++) {
		uint32_t v = 0;

		for (uint32_t j = 0; j < 32; j++) {
			uint32_t x = rfw_psn_add(base, 32 * k + j);

			if (rfw_psn_cmp(x, sr->rx_high) < 0 && rfw_bit(sr->rx_bits, sr->win, x))
				v |= 1u << j;
		}
		rfw_put_be32(buf + RFW_SACK_HDRLEN + 4 * k, v);
	}
	return len;
}

/* ---- requester ---- */

bool rfw_sr_may_send(const struct rfw_qp *qp)
{
	uint64_t b = rfw_sr_inflight_bytes(qp);

	return b == 0 || b + qp->mtu <= qp->sr->bdp;
}

/*
 * Nothing new will follow the packets in flight: the send queue is empty, or its next WQE is a
 * SEND/WRITE held back behind an outstanding atomic (req.c) or, with FENCE, READ.
 */
static bool sr_drained(const struct rfw_qp *qp)
{
	const struct rfw_swqe *w;

	if (qp->req.idx == qp->sq_prod)
		return true;
	w = rfw_sq_at(qp, qp->req.idx);
	if (qp->req.off || !rfw_wqe_is_send_write(w))
		return false;
	for (uint32_t i = rfw_rd_atomic_from(qp); i != qp->req.idx; i++) {
		const struct rfw_swqe *x = rfw_sq_at(qp, i);

		if (rfw_wqe_is_rd_atomic(x) && x->state != SWQE_DONE &&
		    (x->wr.opcode != RFW_WR_RDMA_READ || (w->wr.send_flags & RFW_SEND_FENCE))) {
			rfw_invariant(rfw_rd_atomic_maybe(qp),
			              "a READ or atomic before rd_atomic_end");
			return true;
		}
	}
	return false;
}

/*
 * The RTO doubles with each timeout in a row without progress (as TCP's), so a peer that is
 * merely slow for a while (a descheduled software endpoint) draws a few probes, not a storm;
 * it never exceeds the QP's local ACK timeout (IBA's bound on waiting for an answer).
 */
static uint64_t sr_rto(const struct rfw_qp *qp, uint64_t base)
{
	uint64_t cap = rfw_ack_timeout_ns(qp->attr.timeout);
	uint64_t rto = base << qp->sr->backoff;

	if (cap < qp->sr->rto_high)
		cap = qp->sr->rto_high;
	return rto < cap ? rto : cap;
}

void rfw_sr_arm_timer(struct rfw_qp *qp, bool restart)
{
	struct rfw_sr *sr = qp->sr;
	int32_t n;

	if (restart)
		qp->comp.timer = 0;
	if (qp->req.rnr_wait || rfw_psn_cmp(qp->req.high_psn, qp->comp.psn) <= 0)
		return;
	/* Running, and long already: nothing below changes it (the usual case, every packet). */
	if (qp->comp.timer && !sr->timer_low)
		return;
	/*
	 * IRN: a short timeout when too few packets are in flight to draw a NAK. rocefw also
	 * takes the short one when the send queue is drained: nothing will follow the packets in
	 * flight either, and with AckReq only every ack_every packets the count since the last
	 * ACK says little about how many are really still in the network.
	 */
	n = rfw_psn_diff(qp->req.high_psn, qp->comp.psn) - (int32_t)sr->nsacked;
	if (sr_drained(qp))
		n = 0;
	if (qp->comp.timer) {
		/* More went out since it was armed short: the long one applies now. */
		if (sr->timer_low && n > (int32_t)sr->rto_low_pkts) {
			sr->timer_low = false;
			qp->comp.timer = sr->timer_start + sr->rto_high;
		}
		return;
	}
	sr->timer_low = n <= (int32_t)sr->rto_low_pkts;
	sr->timer_start = qp->now;
	if (sr->backoff == 0)
		sr->stall_since = qp->now;
	qp->comp.timer = qp->now + sr_rto(qp, sr->timer_low ? sr->rto_low : sr->rto_high);
}

/* After a timeout: every hole below @limit may be sent again, retransmitted or not. */
static void sr_new_round(struct rfw_qp *qp, uint32_t limit)
{
	struct rfw_sr *sr = qp->sr;

	memset(sr->rtxd, 0, sr->win / 64 * sizeof(uint64_t));
	sr->rtx_scan = qp->comp.psn;
	if (rfw_psn_cmp(limit, sr->sack_high) > 0)
		sr->sack_high = limit;
	sr->rtx_active = true;
}

/*
 * New SACK information: look at the holes below sack_high again. A hole not retransmitted
 * yet goes; one retransmitted goes again once a packet sent after that retransmission is
 * known received (its retransmission was lost too: the rule IRN and RACK use, per PSN).
 */
static void sr_round_update(struct rfw_qp *qp)
{
	qp->sr->rtx_scan = qp->comp.psn;
	qp->sr->rtx_active = true;
}

/* Whether hole @x may be (re)transmitted now. */
static bool sr_rtx_eligible(const struct rfw_sr *sr, uint32_t x)
{
	if (rfw_bit(sr->sack, sr->win, x))
		return false;
	return !rfw_bit(sr->rtxd, sr->win, x) ||
	       rfw_psn_cmp(sr->sack_high, sr->rtx_mark[x & (sr->win - 1)]) > 0;
}

static void sr_mark_sacked(struct rfw_qp *qp, uint32_t psn)
{
	struct rfw_sr *sr = qp->sr;

	if (rfw_psn_cmp(psn, qp->comp.psn) < 0 || rfw_psn_cmp(psn, qp->req.high_psn) >= 0 ||
	    rfw_bit(sr->sack, sr->win, psn))
		return;
	rfw_bit_set(sr->sack, sr->win, psn);
	sr->nsacked++;
	if (rfw_psn_cmp(rfw_psn_add(psn, 1), sr->sack_high) > 0)
		sr->sack_high = rfw_psn_add(psn, 1);
}

/* comp.psn one further, dropping the per-PSN state behind it. */
static void sr_comp_step(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;

	if (rfw_bit(sr->sack, sr->win, qp->comp.psn)) {
		rfw_bit_clr(sr->sack, sr->win, qp->comp.psn);
		sr->nsacked--;
	}
	rfw_bit_clr(sr->rtxd, sr->win, qp->comp.psn);
	qp->comp.psn = rfw_psn_add(qp->comp.psn, 1);
	if (rfw_psn_cmp(sr->sack_high, qp->comp.psn) < 0)
		sr->sack_high = qp->comp.psn;
}

static void sr_progress(struct rfw_qp *qp)
{
	qp->sr->backoff = 0;
	qp->sr->stall_since = qp->now;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	rfw_sr_arm_timer(qp, true);
}

/* Retire the WQEs at the head that the cumulative PSN covers. */
static void sr_retire(struct rfw_qp *qp)
{
	while (qp->comp.idx != qp->sq_prod && qp->state != RFW_QPS_ERR) {
		struct rfw_swqe *w = rfw_sq_at(qp, qp->comp.idx);

		if (w->state == SWQE_DONE) {
			rfw_comp_drain(qp);
			continue;
		}
		if (!w->psn_valid || rfw_psn_cmp(w->last_psn, qp->comp.psn) >= 0)
			return;
		/* Only a WQE sent whole: a partly sent one has PSNs not yet assigned to packets. */
		if (w->state != SWQE_PENDING)
			return;
		/* Inline, as in go-back-N's retire_covered: the status is success, the error
		 * paths fold away. */
		rfw_qp_complete_swqe_inl(qp, w, RFW_WC_SUCCESS);
	}
}

/*
 * Cumulative acknowledgement up to (not including) @cum. It never passes a READ or atomic
 * whose response is outstanding: an ACK beyond one means the response was lost (IBA
 * 9.7.5.1.? implied NAK): ask again for what is missing.
 */
static void sr_cumulative(struct rfw_qp *qp, uint32_t cum)
{
	struct rfw_sr *sr = qp->sr;
	bool moved = false;

	for (uint32_t i = qp->comp.idx; i != qp->sq_prod; i++) {
		struct rfw_swqe *w = rfw_sq_at(qp, i);
		uint32_t u;

		if (!w->psn_valid || rfw_psn_cmp(w->first_psn, cum) >= 0)
			break;
		if (!rfw_wqe_is_rd_atomic(w) || w->state == SWQE_DONE)
			continue;
		/* Its first response not received yet. */
		u = rfw_psn_cmp(w->first_psn, qp->comp.psn) > 0 ? w->first_psn : qp->comp.psn;
		/* Only PSNs sent: a READ still being requested has no state beyond high_psn. */
		while (rfw_psn_cmp(u, w->last_psn) <= 0 && rfw_psn_cmp(u, qp->req.high_psn) < 0 &&
		       rfw_bit(sr->sack, sr->win, u))
			u = rfw_psn_add(u, 1);
		if (rfw_psn_cmp(u, w->last_psn) > 0)
			continue; /* answered in full */
		if (rfw_psn_cmp(cum, u) > 0) {
			cum = u;
			rfw_cnt(qp, RFW_CNT_implied_nak_seq_err);
			if (rfw_psn_cmp(rfw_psn_add(w->last_psn, 1), sr->sack_high) > 0)
				sr->sack_high = rfw_psn_add(w->last_psn, 1);
			sr_round_update(qp);
		}
		break;
	}
	if (rfw_psn_cmp(cum, qp->req.high_psn) > 0)
		cum = qp->req.high_psn;
	while (rfw_psn_cmp(qp->comp.psn, cum) < 0) {
		sr_comp_step(qp);
		moved = true;
	}
	/* Responses that came early (READ, atomic) and SACKed packets right behind it. */
	while (rfw_psn_cmp(qp->comp.psn, qp->req.high_psn) < 0 &&
	       rfw_bit(sr->sack, sr->win, qp->comp.psn)) {
		sr_comp_step(qp);
		moved = true;
	}
	if (rfw_psn_cmp(sr->rtx_scan, qp->comp.psn) < 0)
		sr->rtx_scan = qp->comp.psn;
	sr_retire(qp);
	if (moved)
		sr_progress(qp);
}

static void sr_error(struct rfw_qp *qp, enum rfw_wc_status st)
{
	if (qp->comp.idx != qp->sq_prod)
		rfw_qp_complete_swqe(qp, rfw_sq_at(qp, qp->comp.idx), st);
	rfw_qp_error(qp);
}

/* A response for @w whose local MR has gone (IBA 10.6): @w ends in error, in order. */
static void sr_local_mr_gone(struct rfw_qp *qp, struct rfw_swqe *w)
{
	w->state = SWQE_DONE;
	w->status = RFW_WC_LOC_PROT_ERR;
	rfw_comp_drain(qp);
}

static void sr_apply_sack(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	uint32_t base = rfw_psn_add(p->bth.psn, 1);
	uint32_t words;

	if (p->payload_len < RFW_SACK_HDRLEN)
		return;
	words = rfw_get_be16(p->payload);
	if (words > RFW_SACK_MAX_WORDS || RFW_SACK_HDRLEN + 4 * words > p->payload_len) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return;
	}
	for (uint32_t k = 0; k < words; k++) {
		uint32_t v = rfw_get_be32(p->payload + RFW_SACK_HDRLEN + 4 * k);

		for (uint32_t j = 0; v && j < 32; j++)
			if (v & (1u << j))
				sr_mark_sacked(qp, rfw_psn_add(base, 32 * k + j));
	}
}

static void sr_ack(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_sr *sr = qp->sr;
	uint8_t syn = p->aeth.syndrome;

	rfw_cnt(qp, RFW_CNT_rx_acks);
	switch (rfw_aeth_syndrome_type(syn)) {
	case RFW_AETH_ACK:
		sr_cumulative(qp, rfw_psn_add(p->bth.psn, 1));
		return;
	case RFW_AETH_RNR_NAK:
		rfw_cnt(qp, RFW_CNT_rnr_nak_retry_err);
		sr_cumulative(qp, p->bth.psn);
		if (qp->req.rnr_wait || qp->state == RFW_QPS_ERR)
			return;
		if (qp->comp.rnr_left == 0) {
			rfw_cnt(qp, RFW_CNT_rnr_retry_exceeded);
			sr_error(qp, RFW_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->comp.rnr_left != 7)
			qp->comp.rnr_left--;
		/* IBA 9.7.5.2.8: wait, then resend from the NAKed PSN (rfw_sr_rnr_expired). */
		qp->req.rnr_wait = true;
		qp->req.rnr_psn = p->bth.psn;
		qp->req.rnr_deadline = qp->now + rfw_rnr_timer_ns(rfw_aeth_syndrome_value(syn));
		qp->comp.timer = 0;
		return;
	case RFW_AETH_NAK:
		break;
	default:
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return;
	}
	switch (rfw_aeth_syndrome_value(syn)) {
	case RFW_NAK_PSN_SEQ_ERR:
		rfw_cnt(qp, RFW_CNT_naks_received);
		rfw_cnt(qp, RFW_CNT_packet_seq_err);
		sr_cumulative(qp, p->bth.psn);
		if (qp->state == RFW_QPS_ERR || rfw_psn_cmp(p->bth.psn, qp->comp.psn) < 0)
			return; /* an old NAK, overtaken by later ACKs */
		sr_apply_sack(qp, p);
		/* The NAKed PSN itself is missing. */
		if (rfw_psn_cmp(rfw_psn_add(p->bth.psn, 1), sr->sack_high) > 0 &&
		    rfw_psn_cmp(p->bth.psn, qp->req.high_psn) < 0)
			sr->sack_high = rfw_psn_add(p->bth.psn, 1);
		sr_round_update(qp);
		return;
	case RFW_NAK_INVALID_REQUEST:
		rfw_cnt(qp, RFW_CNT_req_remote_invalid_request);
		sr_error(qp, RFW_WC_REM_INV_REQ_ERR);
		return;
	case RFW_NAK_REMOTE_ACCESS_ERR:
		rfw_cnt(qp, RFW_CNT_req_remote_access_errors);
		sr_error(qp, RFW_WC_REM_ACCESS_ERR);
		return;
	case RFW_NAK_REMOTE_OP_ERR:
		sr_error(qp, RFW_WC_REM_OP_ERR);
		return;
	default: /* reserved codes too, as rxe (issue 13.11): never left to RETRY_EXC_ERR */
		sr_error(qp, RFW_WC_REM_OP_ERR);
		return;
	}
}

/* READ responses land where their PSN says, in any order; only holes are asked for again. */
/* The WQE that holds @psn, among those sent. */
static struct rfw_swqe *sr_wqe_of(struct rfw_qp *qp, uint32_t psn)
{
	for (uint32_t i = qp->comp.idx; i != qp->sq_prod; i++) {
		struct rfw_swqe *w = rfw_sq_at(qp, i);

		if (w->state == SWQE_DONE || rfw_wqe_is_local(w))
			continue;
		if (!w->psn_valid)
			return NULL;
		if (rfw_psn_cmp(psn, w->first_psn) >= 0 && rfw_psn_cmp(psn, w->last_psn) <= 0)
			return w;
	}
	return NULL;
}

/* A response at @psn arrived: comp.psn moves over every PSN known done, WQEs retire in order. */
static void sr_resp_done(struct rfw_qp *qp, uint32_t psn)
{
	struct rfw_sr *sr = qp->sr;

	if (psn != qp->comp.psn) {
		rfw_cnt(qp, RFW_CNT_ooo_accepted);
		sr_mark_sacked(qp, psn);
		sr_round_update(qp); /* responses come in PSN order: the gap below is lost */
		rfw_sr_arm_timer(qp, true);
		return;
	}
	sr_comp_step(qp);
	while (rfw_psn_cmp(qp->comp.psn, qp->req.high_psn) < 0 &&
	       rfw_bit(sr->sack, sr->win, qp->comp.psn))
		sr_comp_step(qp);
	sr_retire(qp);
	sr_progress(qp);
}

/* READ responses land where their PSN says, in any order; only holes are asked for again. */
static void sr_read_resp(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_sr *sr = qp->sr;
	uint32_t psn = p->bth.psn;
	struct rfw_swqe *w;
	uint32_t off, rem, want;

	if (rfw_psn_cmp(psn, qp->comp.psn) < 0 || rfw_bit(sr->sack, sr->win, psn)) {
		rfw_cnt(qp, RFW_CNT_duplicate_response);
		return;
	}
	/* A READ still being requested (issue 13.2) takes responses to its sent part. */
	w = sr_wqe_of(qp, psn);
	if (w == NULL || w->wr.opcode != RFW_WR_RDMA_READ) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return;
	}
	off = (uint32_t)rfw_psn_diff(psn, w->first_psn) * qp->mtu;
	rem = w->length - off;
	want = rem < qp->mtu ? rem : qp->mtu;
	if (p->payload_len != want) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return;
	}
	if (want && rfw_sge_check(qp, w->sge, w->wr.num_sge, RFW_ACCESS_LOCAL_WRITE)) {
		sr_local_mr_gone(qp, w); /* looked up for every copy (issue 13.12) */
		return;
	}
	if (want)
		rfw_sge_copy_in(w->sge, w->wr.num_sge, off, p->payload, want);
	sr_resp_done(qp, psn);
}

static void sr_atomic_resp(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_sr *sr = qp->sr;
	uint64_t v = p->atomic_orig;
	struct rfw_swqe *w;
	uint8_t b[8];

	if (rfw_psn_cmp(p->bth.psn, qp->comp.psn) < 0 || rfw_bit(sr->sack, sr->win, p->bth.psn)) {
		rfw_cnt(qp, RFW_CNT_duplicate_response);
		return;
	}
	w = sr_wqe_of(qp, p->bth.psn);
	if (w == NULL || !rfw_wqe_is_rd_atomic(w) || w->wr.opcode == RFW_WR_RDMA_READ ||
	    w->state != SWQE_PENDING || p->bth.psn != w->first_psn ||
	    rfw_aeth_syndrome_type(p->aeth.syndrome) != RFW_AETH_ACK) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return;
	}
	if (rfw_sge_check(qp, w->sge, w->wr.num_sge, RFW_ACCESS_LOCAL_WRITE)) {
		sr_local_mr_gone(qp, w);
		return;
	}
	memcpy(b, &v, sizeof(b));
	rfw_sge_copy_in(w->sge, w->wr.num_sge, 0, b, sizeof(b));
	w->atomic_orig = v;
	sr_resp_done(qp, p->bth.psn);
}

void rfw_sr_comp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *p)
{
	struct rfw_swqe *w = NULL;

	rfw_comp_drain(qp);
	if (qp->state == RFW_QPS_ERR)
		return;
	if (rfw_psn_cmp(p->bth.psn, qp->req.high_psn) >= 0) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return;
	}
	if (qp->comp.idx != qp->sq_prod)
		w = rfw_sq_at(qp, qp->comp.idx);
	if (p->op->flags & (RFW_OPF_READ | RFW_OPF_ATOMIC)) {
		/* A response's AETH must say ACK (IBA 9.7.5.2): else it carries no data. */
		if ((p->op->hdrs & RFW_HDR_AETH) &&
		    rfw_aeth_syndrome_type(p->aeth.syndrome) != RFW_AETH_ACK) {
			rfw_cnt(qp, RFW_CNT_rx_bad_response);
			return;
		}
		if (w == NULL || !w->psn_valid) {
			rfw_cnt(qp, RFW_CNT_duplicate_response);
			return;
		}
		if (p->op->flags & RFW_OPF_READ)
			sr_read_resp(qp, p);
		else
			sr_atomic_resp(qp, p);
		return;
	}
	sr_ack(qp, p);
}

/* The local ACK timer (RTO_low or RTO_high) expired: every hole may go again. */
void rfw_sr_timer(struct rfw_qp *qp)
{
	struct rfw_sr *sr = qp->sr;

	qp->comp.timer = 0;
	if (rfw_psn_cmp(qp->req.high_psn, qp->comp.psn) <= 0 || qp->req.rnr_wait)
		return;
	rfw_cnt(qp, RFW_CNT_local_ack_timeout_err);
	rfw_cnt(qp, sr->timer_low ? RFW_CNT_rto_low_timeouts : RFW_CNT_rto_high_timeouts);
	rfw_comp_drain(qp);
	if (qp->state == RFW_QPS_ERR || qp->comp.idx == qp->sq_prod)
		return;
	/*
	 * retry_cnt counts what IBA counts (9.7.6.1.3): local ACK timeouts, i.e. periods of the
	 * QP's timeout without progress. RTO_low / RTO_high expiries in between are recovery
	 * probes; charging each to retry_cnt would let seven 100 us stalls of a busy peer kill
	 * the QP.
	 */
	if (qp->now - sr->stall_since >= rfw_ack_timeout_ns(qp->attr.timeout)) {
		if (qp->comp.retry_left == 0) {
			rfw_cnt(qp, RFW_CNT_retry_exceeded);
			sr_error(qp, RFW_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_left--;
		sr->stall_since = qp->now;
	}
	if (sr->backoff < 16)
		sr->backoff++;
	if (rfw_wqe_is_rd_atomic(rfw_sq_at(qp, qp->comp.idx))) {
		/* A READ or atomic alone in flight: ask again for all that is missing. */
		sr_new_round(qp, qp->req.high_psn);
	} else {
		/*
		 * The holes SACKs reported go again, plus one probe: the highest PSN not known
		 * received (a tail loss probe). Its answer, an ACK or a NAK with SACK, tells what
		 * else is missing; resending every unacknowledged packet would mostly duplicate.
		 */
		uint32_t x = rfw_psn_add(qp->req.high_psn, RFW_PSN_MASK);

		sr_new_round(qp, qp->comp.psn);
		while (rfw_psn_cmp(x, qp->comp.psn) > 0 && rfw_bit(sr->sack, sr->win, x))
			x = rfw_psn_add(x, RFW_PSN_MASK);
		sr->probe = true;
		sr->probe_psn = x;
	}
	rfw_sr_arm_timer(qp, false);
}

void rfw_sr_rnr_expired(struct rfw_qp *qp)
{
	qp->req.rnr_wait = false;
	sr_new_round(qp, qp->req.high_psn);
	rfw_sr_arm_timer(qp, true);
}

/* After a timeout: what to send for the probe PSN (sr->probe), if it is still missing. */
static struct rfw_swqe *sr_probe_pick(struct rfw_qp *qp, uint32_t *psn, uint32_t *npsn)
{
	struct rfw_sr *sr = qp->sr;
	struct rfw_swqe *w;

	sr->probe = false;
	if (rfw_psn_cmp(sr->probe_psn, qp->comp.psn) < 0 ||
	    rfw_psn_cmp(sr->probe_psn, qp->req.high_psn) >= 0 ||
	    rfw_bit(sr->sack, sr->win, sr->probe_psn))
		return NULL;
	w = sr_wqe_of(qp, sr->probe_psn);
	if (w && rfw_wqe_is_send_write(w)) {
		*psn = sr->probe_psn;
		*npsn = 1;
		return w;
	}
	if (w && w->wr.opcode == RFW_WR_RDMA_READ) {
		/* The READ's first missing run: its request may be what was lost. */
		uint32_t y = w->first_psn, n = 0;

		if (rfw_psn_cmp(y, qp->comp.psn) < 0)
			y = qp->comp.psn;
		while (rfw_psn_cmp(y, w->last_psn) < 0 && rfw_psn_cmp(y, qp->req.high_psn) < 0 &&
		       rfw_bit(sr->sack, sr->win, y))
			y = rfw_psn_add(y, 1);
		*psn = y;
		while (rfw_psn_cmp(y, w->last_psn) <= 0 && rfw_psn_cmp(y, qp->req.high_psn) < 0 &&
		       !rfw_bit(sr->sack, sr->win, y)) {
			n++;
			y = rfw_psn_add(y, 1);
		}
		*npsn = n ? n : 1;
		return w;
	}
	if (w) { /* an atomic */
		*psn = w->first_psn;
		*npsn = 1;
	}
	return w;
}

struct rfw_swqe *rfw_sr_next_rtx(struct rfw_qp *qp, uint32_t *psn, uint32_t *npsn)
{
	struct rfw_sr *sr = qp->sr;
	uint32_t lim;

	if (qp->req.rnr_wait)
		return NULL;
	if (sr->probe) {
		struct rfw_swqe *w = sr_probe_pick(qp, psn, npsn);

		if (w)
			return w;
	}
	if (!sr->rtx_active)
		return NULL;
	if (rfw_psn_cmp(sr->rtx_scan, qp->comp.psn) < 0)
		sr->rtx_scan = qp->comp.psn;
	lim = rfw_psn_cmp(sr->sack_high, qp->req.high_psn) < 0 ? sr->sack_high : qp->req.high_psn;
	while (rfw_psn_cmp(sr->rtx_scan, lim) < 0) {
		uint32_t x = sr->rtx_scan;
		struct rfw_swqe *w;

		if (!sr_rtx_eligible(sr, x)) {
			sr->rtx_scan = rfw_psn_add(x, 1);
			continue;
		}
		w = sr_wqe_of(qp, x);
		/* Not sent yet (a WQE in progress) or already complete: nothing to resend. */
		if (w == NULL || (rfw_wqe_is_send_write(w) && w->state != SWQE_PENDING &&
		                  rfw_psn_cmp(x, qp->req.psn) >= 0)) {
			sr->rtx_scan = rfw_psn_add(x, 1);
			continue;
		}
		*psn = x;
		*npsn = 1;
		if (w->wr.opcode == RFW_WR_RDMA_READ) {
			/* One request for the whole run of missing responses. */
			uint32_t n = 1, y = rfw_psn_add(x, 1);
			/* Nothing of it arrived: the request itself may be what was lost (the
			 * responder drops one out of order), so ask for all of it. */
			uint32_t rlim = x == w->first_psn ? rfw_psn_add(w->last_psn, 1) : lim;

			if (rfw_psn_cmp(rlim, qp->req.high_psn) > 0)
				rlim = qp->req.high_psn; /* a READ still being requested */

			while (rfw_psn_cmp(y, w->last_psn) <= 0 && rfw_psn_cmp(y, rlim) < 0 &&
			       sr_rtx_eligible(sr, y)) {
				n++;
				y = rfw_psn_add(y, 1);
			}
			*npsn = n;
		} else if (rfw_wqe_is_rd_atomic(w)) {
			*psn = w->first_psn;
		}
		return w;
	}
	sr->rtx_active = false;
	return NULL;
}

void rfw_sr_sent_rtx(struct rfw_qp *qp, uint32_t psn, uint32_t npsn)
{
	struct rfw_sr *sr = qp->sr;

	for (uint32_t i = 0; i < npsn; i++) {
		uint32_t x = rfw_psn_add(psn, i);

		rfw_bit_set(sr->rtxd, sr->win, x);
		sr->rtx_mark[x & (sr->win - 1)] = qp->req.high_psn;
	}
	if (rfw_psn_cmp(psn, sr->rtx_scan) == 0)
		sr->rtx_scan = rfw_psn_add(psn, npsn);
	rfw_sr_arm_timer(qp, false);
}
