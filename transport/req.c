/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester (IBA 9.7.4 and 9.7.5.1): turns send WQEs into request packets segmented at the
 * path MTU, assigns PSNs, sets the AckReq bit, limits the PSN window and the READ/atomic depth,
 * and goes back N when the completer says so.
 */
#include <errno.h>

#include "rfw_int.h"

/*
 * IBA 10.8.3.3 / 9.7.4.1.5: READ and atomic requests in flight, each holding one of the
 * responder's max_dest_rd_atomic resources: one per atomic, one per outstanding chunk of a
 * READ (a long READ goes as several requests). @w, the WQE at req.idx, counts its chunks sent.
 * The definition, a walk over the WQEs in flight; rd_atomic_in_flight takes the running count
 * instead when it is kept. Not inline: only READ, atomic and fenced WQEs ask.
 */
static __attribute__((noinline)) uint32_t rd_atomic_walk(const struct rfw_qp *qp,
                                                         const struct rfw_swqe *w)
{
	uint32_t n = 0;

	for (uint32_t i = rfw_rd_atomic_from(qp); i != qp->req.idx; i++) {
		const struct rfw_swqe *x = rfw_sq_at(qp, i);

		if (!rfw_wqe_is_rd_atomic(x) || x->state == SWQE_DONE)
			continue;
		rfw_invariant(rfw_rd_atomic_maybe(qp), "a READ or atomic before rd_atomic_end");
		n += x->wr.opcode == RFW_WR_RDMA_READ
		         ? rfw_read_chunks_out(qp, x, rfw_psn_add(x->last_psn, 1))
		         : 1;
	}
	if (w != NULL && w->wr.opcode == RFW_WR_RDMA_READ && qp->req.off != 0)
		n += rfw_read_chunks_out(qp, w, qp->req.psn);
	return n;
}

/*
 * The running count: the requests counted whose responses comp.psn has not passed. Those it
 * has passed leave at the next push or completion; here they are only not counted, the QP
 * being const.
 */
static inline uint32_t rd_out_count(const struct rfw_qp *qp)
{
	uint32_t h;

	return rfw_rd_out_left(&qp->req, qp->comp.psn, &h);
}

/* rd_atomic_walk's count: the running one while it is kept (a step per READ in flight, 16 at
   max_rd_atomic 16, was 7 % of a 64 B READ's instructions), held to the walk in checking
   builds. */
static uint32_t rd_atomic_in_flight(const struct rfw_qp *qp, const struct rfw_swqe *w)
{
	if (!qp->req.rd_ok)
		return rd_atomic_walk(qp, w);
	rfw_invariant(rd_out_count(qp) == rd_atomic_walk(qp, w), "the READ/atomic count");
	return rd_out_count(qp);
}

/*
 * A READ request or an atomic ending before PSN @end (one past its last) was sent by
 * rfw_req_tx. Counted while the count is kept; when it is not (a rewind, an error, a reset
 * stopped it), it starts again, at zero, with a request sent while nothing is in flight:
 * no WQE before req.idx outstanding and none of it sent. SR's resent requests do not come
 * here (req_tx_sr_rtx): they hold the resource their first sending counted.
 */
static void rd_out_push(struct rfw_qp *qp, uint32_t end)
{
	struct rfw_req *r = &qp->req;

	if (!r->rd_ok) {
		if (qp->comp.idx != r->idx || r->off != 0)
			return;
		r->rd_ok = true;
		r->rd_head = 0;
		r->rd_n = 0;
	}
	rfw_rd_out_retire_to(qp, qp->comp.psn);
	if (r->rd_n == RFW_MAX_RD_ATOMIC) { /* max_rd_atomic lowered below those in flight */
		rfw_rd_out_stop(qp);
		return;
	}
	r->rd_end[(r->rd_head + r->rd_n) % RFW_MAX_RD_ATOMIC] = end;
	r->rd_n++;
}

/*
 * Bytes the next READ request of @w asks for, from byte @off (a multiple of the MTU): up to the
 * next multiple of rfw_read_span() PSNs from the READ's first one, or its end. 0: all of a
 * zero-length READ.
 */
static uint32_t read_chunk(const struct rfw_qp *qp, const struct rfw_swqe *w, uint32_t off)
{
	uint64_t span = rfw_read_span(qp);
	uint64_t end = (off / qp->mtu / span + 1) * span * qp->mtu;
	uint64_t left = w->length - off;

	return (uint32_t)(end - off < left ? end - off : left);
}

/* PSNs the next request packet of @w consumes (a READ: its whole request). */
static uint32_t next_span(const struct rfw_qp *qp, const struct rfw_swqe *w)
{
	if (w->wr.opcode != RFW_WR_RDMA_READ)
		return 1;
	return rfw_msg_npkts(read_chunk(qp, w, qp->req.off), qp->mtu);
}

/* SR (qp->sr set): a retransmission waits to be sent, of holes below sack_high or a probe. */
static inline bool sr_resend_due(const struct rfw_qp *qp)
{
	return qp->sr->probe || qp->sr->rtx_active;
}

/*
 * Room for new packets of @span PSNs: go-back-N's PSN window; SR's bitmap window (a READ's
 * whole span counted: issue 13.2, a READ past the window aliased the bitmaps) and its BDP cap
 * on bytes in flight. @sr: the QP's mode (a constant where the caller is compiled per mode).
 */
static inline bool room(const struct rfw_qp *qp, bool sr, uint32_t span)
{
	if (sr)
		return (uint64_t)rfw_psn_diff(qp->req.psn, qp->comp.psn) + span <= qp->sr->win &&
		       rfw_sr_may_send(qp);
	return rfw_psn_diff(qp->req.psn, qp->comp.psn) < (int32_t)rfw_req_win(qp);
}

/*
 * The first WQE from req.idx not yet executed: a go-back-N rewind (rfw_req_rewind) leaves
 * behind it the local operations already executed, which are not executed again and must not
 * stop the resending of the WQEs after them (IBA 10.8.3.3: a WR executes once).
 */
static uint32_t first_unexecuted(const struct rfw_qp *qp)
{
	uint32_t i = qp->req.idx;

	while (i != qp->sq_prod) {
		const struct rfw_swqe *w = rfw_sq_at(qp, i);

		if (!rfw_wqe_is_local(w) || w->state != SWQE_DONE || w->status != RFW_WC_SUCCESS)
			break;
		i++;
	}
	return i;
}

/*
 * The WQE the requester may send (part of) now, else NULL; its SQ index in @idxp (req.idx,
 * or past executed local WQEs).
 */
static struct rfw_swqe *next_wqe(const struct rfw_qp *qp, uint32_t *idxp)
{
	struct rfw_swqe *w;
	uint32_t idx = first_unexecuted(qp);

	if (!rfw_qp_sq_active(qp) || qp->req.rnr_wait || idx == qp->sq_prod)
		return NULL;
	*idxp = idx;
	w = rfw_sq_at(qp, idx);
	if (w->state == SWQE_DONE)
		return NULL; /* an error WQE: the completer takes the QP to ERR */
	/* SQD (IBA 10.3.1): finish the message in progress, start no new one. */
	if (qp->state == RFW_QPS_SQD && qp->req.off == 0 && !w->psn_valid)
		return NULL;
	if (qp->sr) {
		if (!room(qp, true, next_span(qp, w)))
			return NULL;
		/* The responder executes READ and atomic requests in PSN order only, but places
		 * SEND/WRITE out of order. IBA 9.5 lets a SEND/WRITE be executed before an earlier
		 * READ has read its data (FENCE, below, is how a user forbids it), but not before
		 * an earlier atomic: so no SEND/WRITE starts while an atomic is outstanding
		 * (docs/transport.md "Ordering", issue 13.14). */
		if (qp->req.off == 0 && rfw_wqe_is_send_write(w) && rfw_atomic_in_flight(qp))
			return NULL;
	} else if (!room(qp, false, 1)) {
		/* The window: at most that many PSNs beyond the oldest unacknowledged one. */
		return NULL;
	}
	if (qp->req.off == 0 && (w->wr.send_flags & RFW_SEND_FENCE) &&
	    rd_atomic_in_flight(qp, NULL)) {
		/* Fence (IBA 10.8.3.3): wait for earlier READ and atomic operations; a LOCAL_INV
		   too, or it could invalidate an MR a READ response is still written into. */
		return NULL;
	}
	/* Initiator depth (max_rd_atomic, IBA 9.7.4.1.5), counted in requests: each request of a
	 * READ split at rfw_read_span() holds a responder resource too. */
	if (rfw_wqe_is_rd_atomic(w) && (qp->req.off == 0 || w->wr.opcode == RFW_WR_RDMA_READ) &&
	    rd_atomic_in_flight(qp, w) >= qp->attr.max_rd_atomic)
		return NULL;
	return w;
}

bool rfw_req_has_work(const struct rfw_qp *qp, uint64_t now_ns)
{
	(void)now_ns;
	if (qp->sr && sr_resend_due(qp) && !qp->req.rnr_wait && rfw_qp_sq_active(qp))
		return true;
	uint32_t idx;

	return next_wqe(qp, &idx) != NULL;
}

void rfw_req_arm_timer(struct rfw_qp *qp)
{
	uint64_t t;

	/* Running already (IBA 9.7.6.1.3: it is stopped and started again by ACKs that make
	   progress): the timeout is not worked out again for every packet. SR's long timeout
	   too, which rfw_sr_arm_timer leaves as it is without a restart: no call. */
	if (qp->comp.timer != 0 && (qp->sr == NULL || !qp->sr->timer_low))
		return;
	if (qp->sr) {
		rfw_sr_arm_timer(qp, false);
		return;
	}
	t = rfw_ack_timeout_ns_inl(qp->attr.timeout);
	if (t != UINT64_MAX)
		qp->comp.timer = qp->now + t;
}

/*
 * Go back N (IBA 9.7.5.1.2 NAK sequence error, 9.7.6.1.3 local ACK timeout, 9.7.5.2.8 RNR):
 * position the requester at the WQE that holds @psn and resend from there. A retry from the
 * middle of a SEND or WRITE resumes with MIDDLE/LAST opcodes (the responder still holds the
 * message context, as rxe does); a READ is reissued for the remaining bytes at @psn with the
 * RETH adjusted (IBA 9.7.4.1.4). Also used to move forward when a late ACK overtakes it.
 */
void rfw_req_rewind(struct rfw_qp *qp, uint32_t psn)
{
	uint32_t i;

	qp->comp.rtt_armed = false; /* Karn: no RTT sample across a retransmission */
	rfw_rd_out_stop(qp);        /* requests re-sent: the walk counts until none is in flight */

	for (i = qp->comp.idx; i != qp->sq_prod; i++) {
		struct rfw_swqe *w = rfw_sq_at(qp, i);

		if (w->state == SWQE_DONE)
			continue;
		/*
		 * A local operation not executed yet (posted during an RNR wait, say): nothing at
		 * or after it was sent, the requester resumes there (IBA 10.8.3: every WR
		 * completes, in order).
		 */
		if (rfw_wqe_is_local(w))
			break;
		if (!w->psn_valid)
			break;
		if (rfw_psn_cmp(psn, w->last_psn) <= 0)
			break;
	}
	if (i == qp->sq_prod || !rfw_sq_at(qp, i)->psn_valid) {
		/* Nothing sent at or after psn: continue with new WQEs from i. */
		if ((int32_t)(i - qp->req.idx) > 0 || qp->req.idx == i) {
			if ((int32_t)(i - qp->req.idx) > 0) {
				qp->req.idx = i;
				qp->req.off = 0;
			}
			if (rfw_psn_cmp(psn, qp->req.psn) > 0)
				qp->req.psn = psn;
		}
		return;
	}
	for (uint32_t j = i; j != qp->sq_prod && (int32_t)(j - qp->req.idx) <= 0; j++) {
		struct rfw_swqe *w = rfw_sq_at(qp, j);

		if (w->state == SWQE_PENDING)
			w->state = SWQE_POSTED;
	}
	{
		struct rfw_swqe *w = rfw_sq_at(qp, i);
		int32_t d = rfw_psn_diff(psn, w->first_psn);

		if (d < 0) {
			d = 0;
			psn = w->first_psn;
		}
		qp->req.idx = i;
		qp->req.off = (uint32_t)d * qp->mtu;
		if (qp->req.off > w->length)
			qp->req.off = w->length;
		qp->req.psn = psn;
		qp->req.since_ackreq = 0;
	}
}

static uint8_t send_opcode(const struct rfw_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == RFW_WR_SEND_WITH_IMM;
	bool inv = w->wr.opcode == RFW_WR_SEND_WITH_INV;

	if (first && last)
		return imm   ? RFW_OP_RC_SEND_ONLY_IMM
		       : inv ? RFW_OP_RC_SEND_ONLY_INV
		             : RFW_OP_RC_SEND_ONLY;
	if (first)
		return RFW_OP_RC_SEND_FIRST;
	if (!last)
		return RFW_OP_RC_SEND_MIDDLE;
	return imm ? RFW_OP_RC_SEND_LAST_IMM : inv ? RFW_OP_RC_SEND_LAST_INV : RFW_OP_RC_SEND_LAST;
}

static uint8_t write_opcode(const struct rfw_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM;

	if (first && last)
		return imm ? RFW_OP_RC_RDMA_WRITE_ONLY_IMM : RFW_OP_RC_RDMA_WRITE_ONLY;
	if (first)
		return RFW_OP_RC_RDMA_WRITE_FIRST;
	if (!last)
		return RFW_OP_RC_RDMA_WRITE_MIDDLE;
	return imm ? RFW_OP_RC_RDMA_WRITE_LAST_IMM : RFW_OP_RC_RDMA_WRITE_LAST;
}

/* A local error on a WQE (bad lkey): it completes in order and takes the QP to ERR. */
static void req_local_error(struct rfw_qp *qp, struct rfw_swqe *w, enum rfw_wc_status st)
{
	w->state = SWQE_DONE;
	w->status = st;
	rfw_comp_drain(qp);
}

/* LOCAL_INV and Bind Memory Window execute when the requester reaches them (IBA 10.6.5,
   10.6.7.2): a failed bind completes with MW_BIND_ERR, the QP to ERR (IBA 10.8.3.3). */
static void req_local_op(struct rfw_qp *qp, struct rfw_swqe *w)
{
	if (w->wr.opcode == RFW_WR_BIND_MW) {
		if (rfw_mw_bind(qp, &w->wr) != 0) {
			req_local_error(qp, w, RFW_WC_MW_BIND_ERR);
			return;
		}
	} else {
		struct rfw_mr *mr = rfw_mr_invalidatable(qp, w->wr.invalidate_rkey);

		if (mr == NULL) { /* not ours, or not invalidatable (IBA 10.6) */
			req_local_error(qp, w, RFW_WC_LOC_PROT_ERR);
			return;
		}
		rfw_mr_invalidate(mr);
	}
	w->state = SWQE_DONE;
	w->status = RFW_WC_SUCCESS;
	qp->req.idx++;
	qp->req.off = 0;
	rfw_comp_drain(qp);
}

/* @w's PSNs: @npkts of them from the requester's next. */
static inline void set_psns(struct rfw_qp *qp, struct rfw_swqe *w, uint32_t npkts)
{
	w->npkts = npkts;
	w->first_psn = qp->req.psn;
	w->last_psn = rfw_psn_add(w->first_psn, npkts - 1);
	w->psn_valid = true;
}

static inline __attribute__((always_inline)) void assign_psns(struct rfw_qp *qp, struct rfw_swqe *w)
{
	uint32_t npkts;

	switch (w->wr.opcode) {
	case RFW_WR_ATOMIC_CMP_AND_SWP:
	case RFW_WR_ATOMIC_FETCH_AND_ADD:
		npkts = 1;
		break;
	default:
		/* A READ request consumes one PSN per response packet (IBA 9.7.1.1). */
		npkts = rfw_msg_npkts(w->length, qp->mtu);
		break;
	}
	if (qp->sr &&
	    (w->wr.opcode == RFW_WR_SEND || w->wr.opcode == RFW_WR_SEND_WITH_IMM ||
	     w->wr.opcode == RFW_WR_SEND_WITH_INV || w->wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM))
		w->rsn = qp->sr->tx_rsn++; /* consumes a receive WQE: its place in the RQ */
	if (qp->sr && rfw_wqe_is_send_write(w))
		npkts = rfw_msg_npkts(w->length, qp->sr->seg);
	set_psns(qp, w, npkts);
}

/* The AtomicETH of @w's atomic request @p (its opcode chosen). */
static void fill_atomiceth(struct rfw_ib_pkt *p, const struct rfw_swqe *w)
{
	p->atomiceth.va = w->wr.wr.atomic.remote_addr;
	p->atomiceth.rkey = w->wr.wr.atomic.rkey;
	if (p->op->opcode == RFW_OP_RC_COMPARE_SWAP) {
		p->atomiceth.swap_add = w->wr.wr.atomic.swap;
		p->atomiceth.compare = w->wr.wr.atomic.compare_add;
	} else {
		p->atomiceth.swap_add = w->wr.wr.atomic.compare_add;
	}
}

/* SRETH (docs/transport-sr.md) at @e: where this packet of @oi goes on its own. */
static inline __attribute__((always_inline)) void
put_sreth(uint8_t *e, const struct rfw_ib_opcode_info *oi, const struct rfw_swqe *w, uint32_t off)
{
	/* Words swapped in registers and stored whole, as rfw_ib_put_sw's: byte stores of
	   rfw_put_be32 are not merged (31 instructions a packet, 2026-11-30). Inline: SR's run
	   has emit_body to itself (tx_more's copy for SR), where go-back-N's copy folds it away;
	   when emit was one function for both modes, it cost go-back-N 6 instructions there. */
	if (oi->flags & RFW_OPF_SEND) {
		rfw_put_word(e, rfw_be32_of(w->rsn));
		rfw_put_word(e + 4, 0);
		rfw_put_word(e + 8, 0);
	} else {
		uint64_t va = w->wr.wr.rdma.remote_addr + off;

		rfw_put_word(e, rfw_be32_of((uint32_t)(va >> 32)));
		rfw_put_word(e + 4, rfw_be32_of((uint32_t)va));
		rfw_put_word(e + 8, rfw_be32_of(w->wr.wr.rdma.rkey));
	}
	rfw_put_word(e + 12, rfw_be32_of(off));
}

/*
 * AckReq (IBA 9.7.6.1.1 allows any coalescing): on the last packet of every message and on
 * READ/atomic requests, plus every ack_every packets so long messages are acknowledged (and the
 * window opens) before they end, like hardware and rxe, and on the packet that fills the
 * window. SR also asks on retransmissions (each fills a hole) and on the packet that fills the
 * BDP cap.
 */
static inline __attribute__((always_inline)) bool
want_ackreq(struct rfw_qp *qp, uint32_t psn, uint32_t npsn, bool last, bool retx, bool sr)
{
	bool ask;

	if (!retx)
		qp->req.since_ackreq++;
	if (sr)
		ask =
		    retx || last ||
		    (qp->dev->attr.ack_every && qp->req.since_ackreq >= qp->dev->attr.ack_every) ||
		    rfw_psn_diff(rfw_psn_add(psn, npsn), qp->comp.psn) >= (int32_t)qp->sr->win ||
		    rfw_sr_inflight_bytes(qp) + 2ull * qp->mtu > qp->sr->bdp;
	else
		ask =
		    last ||
		    (qp->dev->attr.ack_every && qp->req.since_ackreq >= qp->dev->attr.ack_every) ||
		    /* the first packet of a go-back-N restart: its ACK ends the retry probe */
		    (qp->comp.retrying && psn == qp->comp.retry_psn) ||
		    /* the window closes behind this packet: ask, or nothing would reopen it */
		    rfw_psn_diff(rfw_psn_add(psn, npsn), qp->comp.psn) >= (int32_t)rfw_req_win(qp);
	if (ask && !retx)
		qp->req.since_ackreq = 0;
	return ask;
}

/* The opcode of @w's packet from byte @off of @left; its data length, last flag and PSNs. */
static inline __attribute__((always_inline)) uint8_t
pick_opcode(const struct rfw_qp *qp, const struct rfw_swqe *w, uint32_t off, uint32_t rd_len,
            uint32_t *left, uint32_t *paylen, bool *last, uint32_t *npsn)
{
	uint32_t seg = rfw_wqe_seg(qp, w);
	bool first = off == 0;

	switch (w->wr.opcode) {
	case RFW_WR_SEND:
	case RFW_WR_SEND_WITH_IMM:
	case RFW_WR_SEND_WITH_INV:
	case RFW_WR_RDMA_WRITE:
	case RFW_WR_RDMA_WRITE_WITH_IMM:
		*paylen = *left < seg ? *left : seg;
		*last = *left <= seg;
		return (w->wr.opcode == RFW_WR_RDMA_WRITE ||
		        w->wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM)
		           ? write_opcode(w, first, *last)
		           : send_opcode(w, first, *last);
	case RFW_WR_RDMA_READ:
		*last = rd_len == 0 || rd_len >= *left; /* the request reaches the READ's end */
		if (rd_len && rd_len < *left)
			*left = rd_len;
		*npsn = rfw_msg_npkts(*left, qp->mtu);
		return RFW_OP_RC_RDMA_READ_REQUEST;
	default: /* atomics */
		*last = true;
		return w->wr.opcode == RFW_WR_ATOMIC_CMP_AND_SWP ? RFW_OP_RC_COMPARE_SWAP
		                                                 : RFW_OP_RC_FETCH_ADD;
	}
}

enum emit_flag {
	EMIT_RETX = 1u << 0,       /* a retransmission (SR's hole resend) */
	EMIT_KEYS_FRESH = 1u << 1, /* the caller validated @w's local keys in this very call */
};

/* The headers of @w's atomic request (@oi) at @psn through an rfw_ib_pkt and the wire's
   serializer (the one header rfw_ib_put_sw does not write, the AtomicETH). */
static void put_hdrs_atomic(struct rfw_qp *qp, uint8_t *buf, const struct rfw_ib_opcode_info *oi,
                            const struct rfw_swqe *w, uint32_t psn, bool ackreq)
{
	struct rfw_ib_pkt p;

	rfw_tx_pkt_init(qp, &p, oi, psn, 0);
	p.bth.ackreq = ackreq;
	fill_atomiceth(&p, w);
	(void)rfw_ib_build_op(buf, oi, &p);
	rfw_tx_sr_mark(qp, buf);
}

/*
 * Build and send the packet of @w at @psn whose data starts at byte @off (@rd_len: the bytes
 * a READ request asks for; @how: enum emit_flag). Outputs: whether it is the message's last
 * packet, its data length and the PSNs it consumes. -ENOBUFS if the host has no buffer.
 * SEND and WRITE packets and READ requests have their headers written straight from the WQE
 * (rfw_ib_put_sw, and SR's SRETH); atomics through an rfw_ib_pkt (put_hdrs_atomic). @sr:
 * the QP's mode (qp->sr != NULL), a constant where the body is inlined into tx_more's copy for
 * one mode, which folds the other mode's tests away.
 */
static inline __attribute__((always_inline)) int
emit_body(struct rfw_qp *qp, struct rfw_swqe *w, uint32_t psn, uint32_t off, uint32_t rd_len,
          unsigned how, bool *lastp, uint32_t *paylenp, uint32_t *npsnp, bool sr)
{
	uint32_t paylen = 0, npsn = 1, left = w->length - off;
	uint32_t ext = sr && rfw_wqe_is_send_write(w) ? RFW_SRETH_LEN : 0;
	bool last, ackreq, se;
	const struct rfw_ib_opcode_info *oi =
	    rfw_ib_opcode_info(pick_opcode(qp, w, off, rd_len, &left, &paylen, &last, &npsn));
	const uint8_t *ref;
	uint8_t *buf;

	/* The local MRs are looked up for every packet, not once: one deregistered or
	   invalidated since (before a retransmission) is never read (IBA 10.6). Not twice in a
	   row, though: a WQE's first packet follows its validation with no verb in between. */
	if (paylen && !(how & EMIT_KEYS_FRESH) && !(w->wr.send_flags & RFW_SEND_INLINE) &&
	    rfw_sge_check(qp, w->sge, w->wr.num_sge, 0))
		return -EACCES;

	ref = rfw_tx_ref_len(qp, paylen) && !(w->wr.send_flags & RFW_SEND_INLINE)
	          ? rfw_tx_ref_span(w->sge, w->wr.num_sge, off, paylen)
	          : NULL;
	/* SR's SRETH counts as payload, written in the headers' buffer when the data is not. */
	buf = ref != NULL ? rfw_tx_alloc_ref(qp, oi, ext, ref, paylen)
	                  : rfw_tx_alloc(qp, oi, paylen + ext);
	if (buf == NULL)
		return -ENOBUFS;
	ackreq = want_ackreq(qp, psn, npsn, last, how & EMIT_RETX, sr);
	/* gbn: time one new SEND/WRITE packet with AckReq to its ACK (the retry probe's RTT). */
	if (!sr && ackreq && !qp->comp.rtt_armed && rfw_wqe_is_send_write(w) &&
	    rfw_psn_cmp(psn, qp->req.high_psn) >= 0) {
		qp->comp.rtt_armed = true;
		qp->comp.rtt_psn = psn;
		qp->comp.rtt_t = qp->now;
	}
	se = last && (w->wr.send_flags & RFW_SEND_SOLICITED) &&
	     (oi->flags & (RFW_OPF_SEND | RFW_OPF_IMM));
	/* Two branches that write the same headers: one, with SR's test inside, cost gbn's
	   packets 5 instructions more in this function (docs/perf.md, 2026-11-30). */
	if (!ext && rfw_wqe_is_send_write(w)) { /* gbn's SEND or WRITE */
		rfw_tx_put_sw(qp, buf, oi, w, psn, off, paylen, se, ackreq, w->length);
	} else if (ext) { /* SR's: its mark, then the SRETH ahead of the data (a multiple of 4) */
		rfw_tx_put_sw(qp, buf, oi, w, psn, off, paylen, se, ackreq, w->length);
		rfw_tx_sr_mark(qp, buf);
		put_sreth(buf + oi->hdr_len, oi, w, off);
	} else if (oi->hdrs & RFW_HDR_RETH) { /* a READ request: @left bytes from byte @off */
		rfw_tx_put_sw(qp, buf, oi, w, psn, off, 0, false, ackreq, left);
		rfw_tx_sr_mark(qp, buf);
	} else {
		put_hdrs_atomic(qp, buf, oi, w, psn, ackreq);
	}
	if (paylen && ref == NULL)
		rfw_sge_copy_out(w->sge, w->wr.num_sge, off, buf + oi->hdr_len + ext, paylen);
	if (rfw_psn_cmp(psn, qp->req.high_psn) < 0)
		rfw_cnt(qp, RFW_CNT_retransmitted_packets);
	rfw_tx_finish_inl(qp, buf, oi, paylen + ext, ackreq, psn, NULL);
	*lastp = last;
	*paylenp = paylen;
	*npsnp = npsn;
	return 1;
}

/* emit_body out of line, for the callers that send one packet a call: a copy for each mode,
 * as tx_more's. */
static int emit(struct rfw_qp *qp, struct rfw_swqe *w, uint32_t psn, uint32_t off, uint32_t rd_len,
                unsigned how, bool *lastp, uint32_t *paylenp, uint32_t *npsnp)
{
	return qp->sr != NULL
	           ? emit_body(qp, w, psn, off, rd_len, how, lastp, paylenp, npsnp, true)
	           : emit_body(qp, w, psn, off, rd_len, how, lastp, paylenp, npsnp, false);
}

/* SR: resend one hole (a READ: one request for a run of missing responses). */
static int req_tx_sr_rtx(struct rfw_qp *qp, struct rfw_swqe *w, uint32_t psn, uint32_t npsn)
{
	uint32_t seg = rfw_wqe_seg(qp, w), off = 0, rd_len = 0, paylen, np;
	bool last;
	int rc;

	if (w->wr.opcode == RFW_WR_RDMA_READ) {
		off = (uint32_t)rfw_psn_diff(psn, w->first_psn) * qp->mtu;
		rd_len = npsn * qp->mtu;
	} else if (rfw_wqe_is_send_write(w)) {
		off = (uint32_t)rfw_psn_diff(psn, w->first_psn) * seg;
	}
	rc = emit(qp, w, psn, off, rd_len, EMIT_RETX, &last, &paylen, &np);
	if (rc == -EACCES) {
		req_local_error(qp, w, RFW_WC_LOC_PROT_ERR);
		return 0;
	}
	if (rc < 0)
		return rc;
	rfw_sr_sent_rtx(qp, psn, npsn);
	return 1;
}

/*
 * The WQE at req.idx when it is a SEND or WRITE that may start now and next_wqe would have
 * nothing else to weigh for it: the QP in RTS (not SQD, which starts no message), no RNR wait,
 * room for a packet, a WQE posted and never sent (so no local WQE executed before it to skip,
 * IBA 10.8.3.3), not fenced, and with SR no atomic outstanding (next_wqe's ordering rule). Its
 * local keys are checked here when they were not (@how: EMIT_KEYS_FRESH then, as rfw_req_tx),
 * and its PSNs assigned. NULL for anything else, a failed key check included: rfw_req_tx then
 * decides, and completes the WQE in error.
 */
static inline __attribute__((always_inline)) struct rfw_swqe *next_simple(struct rfw_qp *qp,
                                                                          bool sr, unsigned *how)
{
	struct rfw_swqe *w;

	/* The WQE's own tests first: a READ or an atomic next (a READ run) ends here. */
	if (qp->req.idx == qp->sq_prod)
		return NULL;
	w = rfw_sq_at(qp, qp->req.idx);
	if (!rfw_wqe_is_send_write(w) || w->state != SWQE_POSTED || w->psn_valid ||
	    (w->wr.send_flags & RFW_SEND_FENCE) || qp->state != RFW_QPS_RTS || qp->req.rnr_wait ||
	    (sr && sr_resend_due(qp)) || !room(qp, sr, 1) || (sr && rfw_atomic_in_flight(qp)))
		return NULL;
	*how = 0;
	if (!w->checked) {
		if (rfw_sge_check_inl(qp, w->sge, w->wr.num_sge, 0))
			return NULL;
		w->checked = true;
		*how = EMIT_KEYS_FRESH;
	}
	if (RFW_INVARIANTS) {
		uint32_t idx;

		rfw_invariant(next_wqe(qp, &idx) == w && idx == qp->req.idx,
		              "next_simple picks what next_wqe would");
	}
	if (sr)
		assign_psns(qp, w);
	else
		set_psns(qp, w, rfw_msg_npkts(w->length, qp->mtu)); /* assign_psns, go-back-N's */
	return w;
}

/*
 * More SEND and WRITE packets after the one rfw_req_tx just sent, up to @max, in the same call
 * (rfw_qp_tx_requests): the rest of the message in progress, then the messages after it for as
 * long as next_simple takes them. The message in progress passed next_wqe's checks and its
 * keys were checked, and no verb runs in between, so they hold (emit's EMIT_KEYS_FRESH: the
 * rule of a WQE's first packet, IBA 10.6). What a packet can change is tested for each: the
 * room, the QP's state, SR's resends, a buffer from the host. go-back-N's timer and the
 * in-flight high-water mark are seen to once, after the run; SR's timer after each packet, as
 * rfw_req_tx does (its short timeout turns long as packets go). Returns how many were sent.
 */
static inline __attribute__((always_inline)) unsigned tx_more(struct rfw_qp *qp, unsigned max,
                                                              bool sr)
{
	struct rfw_swqe *w = rfw_sq_at(qp, qp->req.idx);
	uint32_t paylen, npsn;
	unsigned n = 0, how = EMIT_KEYS_FRESH;
	bool last, fresh = qp->req.off == 0; /* next_simple has just tested what a packet may */

	if (fresh)
		w = next_simple(qp, sr, &how);
	while (w != NULL && rfw_wqe_is_send_write(w) && n < max) {
		/* rfw_req_tx's first test and next_wqe's, for a packet of a message under way */
		if ((!fresh && ((sr && sr_resend_due(qp)) || !rfw_qp_sq_active(qp) ||
		                qp->req.rnr_wait || !room(qp, sr, 1))) ||
		    emit_body(qp, w, qp->req.psn, qp->req.off, 0, how, &last, &paylen, &npsn, sr) <
		        0)
			break;
		/* rfw_req_tx's bookkeeping, for a SEND/WRITE packet (one PSN) */
		if (qp->es)
			rfw_es_tx(w, qp->now, last);
		qp->req.psn = rfw_psn_add(qp->req.psn, npsn);
		if (rfw_psn_cmp(qp->req.psn, qp->req.high_psn) > 0)
			qp->req.high_psn = qp->req.psn;
		if (sr)
			rfw_req_arm_timer(qp);
		n++;
		how = EMIT_KEYS_FRESH;
		fresh = last;
		if (!last) {
			qp->req.off += paylen;
			continue;
		}
		qp->req.off = 0;
		qp->req.idx++;
		w->state = SWQE_PENDING;
		w = n < max ? next_simple(qp, sr, &how) : NULL;
	}
	if (n != 0) {
		/* the high-water mark of the run's last packet: it only grows along the run */
		rfw_cnt_max(qp, RFW_CNT_inflight_bytes_hwm,
		            sr ? rfw_sr_inflight_bytes(qp)
		               : (uint64_t)rfw_psn_diff(qp->req.high_psn, qp->comp.psn) * qp->mtu);
		rfw_req_arm_timer(qp);
	}
	return n;
}

/* One copy of the run for each mode, its tests of the mode made when compiled. */
unsigned rfw_req_tx_more(struct rfw_qp *qp, unsigned max)
{
	return qp->sr != NULL ? tx_more(qp, max, true) : tx_more(qp, max, false);
}

int rfw_req_tx(struct rfw_qp *qp)
{
	struct rfw_swqe *w;
	uint32_t paylen, npsn, rd_len;
	unsigned how;
	bool last;
	int rc;

	/* rfw_sr_next_rtx's own first test, here: no call for a QP with nothing to resend. */
	if (qp->sr && sr_resend_due(qp) && rfw_qp_sq_active(qp)) {
		uint32_t psn, n;

		w = rfw_sr_next_rtx(qp, &psn, &n);
		if (w)
			return req_tx_sr_rtx(qp, w, psn, n);
	}
	for (;;) {
		uint32_t idx;

		w = next_wqe(qp, &idx);
		if (w == NULL)
			return 0;
		if (idx != qp->req.idx) {
			qp->req.idx = idx;
			qp->req.off = 0;
		}
		how = 0;
		if (!w->checked) {
			unsigned acc = rfw_wqe_is_rd_atomic(w) ? RFW_ACCESS_LOCAL_WRITE : 0;

			if (rfw_sge_check_inl(qp, w->sge, w->wr.num_sge, acc)) {
				req_local_error(qp, w, RFW_WC_LOC_PROT_ERR);
				return 0;
			}
			w->checked = true;
			how = EMIT_KEYS_FRESH; /* access 0 or LOCAL_WRITE: what emit checks, or more
			                        */
		}
		if (!rfw_wqe_is_local(w))
			break;
		req_local_op(qp, w);
	}
	if (!w->psn_valid)
		assign_psns(qp, w);
	/* A READ longer than rfw_read_span() goes as several requests (IBA 9.7.1 half space). */
	rd_len = w->wr.opcode == RFW_WR_RDMA_READ ? read_chunk(qp, w, qp->req.off) : 0;
	rc = emit(qp, w, qp->req.psn, qp->req.off, rd_len, how, &last, &paylen, &npsn);
	if (rc == -EACCES) {
		req_local_error(qp, w, RFW_WC_LOC_PROT_ERR);
		return 0;
	}
	if (rc < 0)
		return rc;
	if (qp->es)
		rfw_es_tx(w, qp->now, last);
	if (rfw_wqe_is_rd_atomic(w)) {
		rd_out_push(qp, rfw_psn_add(qp->req.psn, npsn));
		if (last)
			rfw_rd_atomic_mark(qp, qp->req.idx + 1);
	}
	qp->req.psn = rfw_psn_add(qp->req.psn, npsn);
	if (rfw_psn_cmp(qp->req.psn, qp->req.high_psn) > 0)
		qp->req.high_psn = qp->req.psn;
	if (last) {
		qp->req.off = 0;
		qp->req.idx++;
		w->state = SWQE_PENDING;
	} else {
		qp->req.off += w->wr.opcode == RFW_WR_RDMA_READ ? rd_len : paylen;
	}
	rfw_cnt_max(qp, RFW_CNT_inflight_bytes_hwm,
	            qp->sr ? rfw_sr_inflight_bytes(qp)
	                   : (uint64_t)rfw_psn_diff(qp->req.high_psn, qp->comp.psn) * qp->mtu);
	rfw_req_arm_timer(qp);
	return 1;
}
