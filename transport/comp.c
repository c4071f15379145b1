/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completer (IBA 9.7.5.2, requester side of acknowledgements): matches ACKs, NAKs, READ
 * responses and atomic ACKs against the send queue, retires WQEs in order, and decides on
 * go-back-N retries, RNR waits and errors. One small function per state and a driver loop,
 * like rxe_comp.c.
 */
#include <string.h>

#include "rfw_int.h"

enum comp_state {
	COMPST_GET_WQE,
	COMPST_CHECK_PSN,
	COMPST_CHECK_ACK,
	COMPST_READ,
	COMPST_ATOMIC,
	COMPST_WRITE_SEND,
	COMPST_COMP_WQE,
	COMPST_UPDATE_COMP,
	COMPST_RETRY,
	COMPST_RNR_RETRY,
	COMPST_ERROR,
	COMPST_EXIT,
	COMPST__COUNT
};

static const char *const comp_state_names[COMPST__COUNT] = {
    [COMPST_GET_WQE] = "GET WQE",       [COMPST_CHECK_PSN] = "CHECK PSN",
    [COMPST_CHECK_ACK] = "CHECK ACK",   [COMPST_READ] = "READ",
    [COMPST_ATOMIC] = "ATOMIC",         [COMPST_WRITE_SEND] = "WRITE/SEND",
    [COMPST_COMP_WQE] = "COMPLETE WQE", [COMPST_UPDATE_COMP] = "UPDATE COMP",
    [COMPST_RETRY] = "RETRY",           [COMPST_RNR_RETRY] = "RNR RETRY",
    [COMPST_ERROR] = "ERROR",           [COMPST_EXIT] = "EXIT",
};

/* Exposed for tests and traces. */
const char *rfw_comp_state_name(int s);
const char *rfw_comp_state_name(int s)
{
	return (unsigned)s < COMPST__COUNT ? comp_state_names[s] : "?";
}

struct comp_ctx {
	struct rfw_qp *qp;
	const struct rfw_ib_pkt *pkt;
	struct rfw_swqe *wqe;
	enum rfw_wc_status status;
	bool implied; /* RETRY because of an implied NAK (not a NAK packet) */
};

/* gbn retry probe: at most 2^PROBE_BACKOFF_MAX times the first interval. */
#define PROBE_BACKOFF_MAX 6

/* An acknowledgement covered the AckReq packet being timed: one RTT sample (1/8 gain). */
static void rtt_sample(struct rfw_qp *qp)
{
	uint64_t m = qp->now - qp->comp.rtt_t;

	qp->comp.srtt_ns = qp->comp.srtt_ns ? qp->comp.srtt_ns - qp->comp.srtt_ns / 8 + m / 8 : m;
	qp->comp.rtt_armed = false;
}

/*
 * After a go-back-N restart at retry_psn: when to go back again if that PSN is still not
 * acknowledged, twice the measured RTT, doubling each time, never past the local ACK timer.
 */
static void arm_probe(struct rfw_qp *qp)
{
	uint64_t at;

	qp->comp.probe_at = 0;
	if (qp->comp.srtt_ns == 0)
		return; /* no RTT measured: the local ACK timer alone */
	at = qp->now + ((2 * qp->comp.srtt_ns) << qp->comp.probe_backoff);
	if (qp->comp.timer == 0 || at < qp->comp.timer)
		qp->comp.probe_at = at;
}

/* Forward progress (IBA 9.7.5.2.?): retry counters start over, timer restarts. */
static void progress(struct rfw_qp *qp)
{
	if (qp->comp.rtt_armed && rfw_psn_cmp(qp->comp.psn, qp->comp.rtt_psn) > 0)
		rtt_sample(qp);
	qp->comp.probe_at = 0;
	qp->comp.probe_backoff = 0;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.retrying = false;
	qp->comp.timer = 0;
	if (rfw_psn_cmp(qp->req.psn, qp->comp.psn) < 0)
		rfw_req_rewind(qp, qp->comp.psn); /* a late ACK overtook a go-back-N restart */
	/* While an RNR wait is on, its timer is the only one (IBA 9.7.5.2.8). */
	if (rfw_psn_cmp(qp->req.high_psn, qp->comp.psn) > 0 && !qp->req.rnr_wait)
		rfw_req_arm_timer(qp);
}

void rfw_comp_drain_done(struct rfw_qp *qp)
{
	while (qp->comp.idx != qp->sq_prod) {
		struct rfw_swqe *w = rfw_sq_at(qp, qp->comp.idx);
		enum rfw_wc_status st = w->status;

		if (w->state != SWQE_DONE)
			return;
		rfw_qp_complete_swqe(qp, w, st);
		if (st != RFW_WC_SUCCESS) {
			rfw_qp_error(qp);
			return;
		}
	}
}

__attribute__((always_inline)) static inline enum comp_state get_wqe(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	rfw_comp_drain(qp);
	if (qp->state == RFW_QPS_ERR || qp->comp.idx == qp->sq_prod)
		c->wqe = NULL;
	else
		c->wqe = rfw_sq_at(qp, qp->comp.idx);
	if (c->wqe == NULL || !c->wqe->psn_valid) {
		/* Nothing outstanding: a late duplicate or a response to nothing we sent. */
		if (rfw_psn_cmp(c->pkt->bth.psn, qp->comp.psn) < 0)
			rfw_cnt(qp, RFW_CNT_duplicate_response);
		else
			rfw_cnt(qp, RFW_CNT_rx_ghost_response);
		return COMPST_EXIT;
	}
	return COMPST_CHECK_PSN;
}

__attribute__((always_inline)) static inline enum comp_state check_psn(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	const struct rfw_ib_pkt *p = c->pkt;
	struct rfw_swqe *w = c->wqe;
	bool resp = (p->op->flags & (RFW_OPF_READ | RFW_OPF_ATOMIC)) != 0;

	/* A response for a PSN never sent is bogus (or from another life of the QP). */
	if (rfw_psn_cmp(p->bth.psn, qp->req.high_psn) >= 0) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return COMPST_EXIT;
	}
	if (rfw_psn_cmp(p->bth.psn, qp->comp.psn) < 0) {
		rfw_cnt(qp, RFW_CNT_duplicate_response);
		return COMPST_EXIT;
	}
	if (rfw_psn_cmp(p->bth.psn, w->last_psn) > 0) {
		/*
		 * IBA 9.7.5.1.?: an acknowledgement beyond an unanswered READ or atomic
		 * means its response was lost: an implied NAK, retry from that WQE.
		 */
		if (rfw_wqe_is_rd_atomic(w)) {
			c->implied = true;
			return COMPST_RETRY;
		}
		return COMPST_COMP_WQE; /* covers this whole WQE: retire it, then look again */
	}
	/* A response beyond the next expected PSN of a READ: one went missing in between. */
	if (resp && rfw_psn_cmp(p->bth.psn, qp->comp.psn) > 0) {
		c->implied = true;
		return COMPST_RETRY;
	}
	return COMPST_CHECK_ACK;
}

static enum comp_state check_ack(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	const struct rfw_ib_pkt *p = c->pkt;
	struct rfw_swqe *w = c->wqe;
	uint8_t syn = p->aeth.syndrome;

	if (p->op->flags & RFW_OPF_READ) {
		/* FIRST/LAST/ONLY carry an AETH, which must say ACK (IBA 9.7.5.2): else no data. */
		if (w->wr.opcode != RFW_WR_RDMA_READ ||
		    ((p->op->hdrs & RFW_HDR_AETH) && rfw_aeth_syndrome_type(syn) != RFW_AETH_ACK)) {
			rfw_cnt(qp, RFW_CNT_rx_bad_response);
			return COMPST_EXIT;
		}
		return COMPST_READ;
	}
	if (p->op->flags & RFW_OPF_ATOMIC) {
		if (!rfw_wqe_is_rd_atomic(w) || w->wr.opcode == RFW_WR_RDMA_READ ||
		    rfw_aeth_syndrome_type(syn) != RFW_AETH_ACK) {
			rfw_cnt(qp, RFW_CNT_rx_bad_response);
			return COMPST_EXIT;
		}
		return COMPST_ATOMIC;
	}
	rfw_cnt(qp, RFW_CNT_rx_acks);
	switch (rfw_aeth_syndrome_type(syn)) {
	case RFW_AETH_ACK:
		if (rfw_wqe_is_rd_atomic(w)) {
			/* A plain ACK inside a READ/atomic's PSNs: its response is missing. */
			c->implied = true;
			return COMPST_RETRY;
		}
		if (p->bth.psn == w->last_psn)
			return COMPST_WRITE_SEND;
		/* Part of a multi-packet message (AckReq every ack_every packets). */
		qp->comp.psn = rfw_psn_add(p->bth.psn, 1);
		return COMPST_UPDATE_COMP;
	case RFW_AETH_RNR_NAK:
		return COMPST_RNR_RETRY;
	case RFW_AETH_NAK:
		switch (rfw_aeth_syndrome_value(syn)) {
		case RFW_NAK_PSN_SEQ_ERR:
			/* IBA 9.7.5.2.2: everything before the NAKed PSN is acknowledged. */
			if (rfw_psn_cmp(p->bth.psn, qp->comp.psn) > 0) {
				qp->comp.psn = p->bth.psn;
				progress(qp);
			}
			rfw_cnt(qp, RFW_CNT_packet_seq_err);
			rfw_cnt(qp, RFW_CNT_naks_received);
			return COMPST_RETRY;
		case RFW_NAK_INVALID_REQUEST:
			rfw_cnt(qp, RFW_CNT_req_remote_invalid_request);
			c->status = RFW_WC_REM_INV_REQ_ERR;
			return COMPST_ERROR;
		case RFW_NAK_REMOTE_ACCESS_ERR:
			rfw_cnt(qp, RFW_CNT_req_remote_access_errors);
			c->status = RFW_WC_REM_ACCESS_ERR;
			return COMPST_ERROR;
		default:
			/*
			 * Remote operational error, and any reserved NAK code (as rxe): a NAK we
			 * cannot act on must still end the WQE, not be dropped until the retries
			 * run out as RETRY_EXC_ERR.
			 */
			c->status = RFW_WC_REM_OP_ERR;
			return COMPST_ERROR;
		}
		break;
	default:
		break;
	}
	rfw_cnt(qp, RFW_CNT_rx_bad_response);
	return COMPST_EXIT;
}

static enum comp_state do_read(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	const struct rfw_ib_pkt *p = c->pkt;
	struct rfw_swqe *w = c->wqe;
	uint32_t d = (uint32_t)rfw_psn_diff(p->bth.psn, w->first_psn);
	uint32_t off = d * qp->mtu;
	uint32_t rem = w->length - off;
	uint32_t want = rem < qp->mtu ? rem : qp->mtu;
	bool end = (p->op->flags & (RFW_OPF_LAST | RFW_OPF_ONLY)) != 0;
	bool wqe_end = rem <= qp->mtu;

	/* The data for this PSN lands at a fixed offset; its size and position must match. A
	 * request ends at the READ's end or at a multiple of rfw_read_span() (req.c). */
	if (p->payload_len != want || end != (wqe_end || (d + 1) % rfw_read_span(qp) == 0)) {
		rfw_cnt(qp, RFW_CNT_rx_bad_response);
		return COMPST_EXIT;
	}
	/* The local MR is looked up again for every copy (it may have gone, IBA 10.6). */
	if (want && rfw_sge_check(qp, w->sge, w->wr.num_sge, RFW_ACCESS_LOCAL_WRITE)) {
		c->status = RFW_WC_LOC_PROT_ERR;
		return COMPST_ERROR;
	}
	if (want)
		rfw_sge_copy_in(w->sge, w->wr.num_sge, off, p->payload, want);
	qp->comp.psn = rfw_psn_add(p->bth.psn, 1);
	return wqe_end ? COMPST_COMP_WQE : COMPST_UPDATE_COMP;
}

static enum comp_state do_atomic(struct comp_ctx *c)
{
	uint64_t v = c->pkt->atomic_orig;
	uint8_t b[8];

	if (rfw_sge_check(c->qp, c->wqe->sge, c->wqe->wr.num_sge, RFW_ACCESS_LOCAL_WRITE)) {
		c->status = RFW_WC_LOC_PROT_ERR; /* the local MR has gone (IBA 10.6) */
		return COMPST_ERROR;
	}
	/* The original value lands in the local buffer in host order, as on a real HCA. */
	memcpy(b, &v, sizeof(b));
	rfw_sge_copy_in(c->wqe->sge, c->wqe->wr.num_sge, 0, b, sizeof(b));
	c->wqe->atomic_orig = v;
	return COMPST_COMP_WQE;
}

static enum comp_state write_send(struct comp_ctx *c)
{
	(void)c;
	return COMPST_COMP_WQE;
}

/*
 * The SEND and WRITE WQEs after the one just retired that the acknowledgement of @psn covers
 * wholly (their last PSN before it), retired in a row, as the loop would retire each
 * (get_wqe, check_psn, comp_wqe), but with progress() left to the caller's one call after them:
 * all it does is the same whichever of them it follows when no go-back-N rewind can be due
 * (the requester is past @psn, so past each of their ends) and nothing done locally lies
 * between (a WQE not sent whole, a local one, a READ or an atomic stops the row: the loop
 * takes it).
 */
static void retire_covered(struct rfw_qp *qp, uint32_t psn)
{
	if (rfw_psn_cmp(qp->req.psn, psn) <= 0)
		return;
	while (qp->state != RFW_QPS_ERR && qp->comp.idx != qp->sq_prod) {
		struct rfw_swqe *w = rfw_sq_at(qp, qp->comp.idx);

		if (w->state != SWQE_PENDING || !rfw_wqe_is_send_write(w) ||
		    rfw_psn_cmp(psn, w->last_psn) <= 0)
			return;
		qp->comp.psn = rfw_psn_add(w->last_psn, 1);
		rfw_qp_complete_swqe_inl(qp, w, RFW_WC_SUCCESS);
	}
}

__attribute__((always_inline)) static inline enum comp_state comp_wqe(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_swqe *w = c->wqe;
	uint32_t next = rfw_psn_add(w->last_psn, 1);

	if (rfw_psn_cmp(next, qp->comp.psn) > 0)
		qp->comp.psn = next;
	rfw_qp_complete_swqe(qp, w, RFW_WC_SUCCESS);
	/* Only a packet beyond this WQE's end (a coalesced ACK) can cover the ones after it. */
	if (rfw_psn_cmp(c->pkt->bth.psn, w->last_psn) > 0)
		retire_covered(qp, c->pkt->bth.psn);
	progress(qp);
	/*
	 * WQEs behind it already done locally (LOCAL_INV, a bad L_Key) retire now, in order: an
	 * error one takes the QP to ERR (IBA 10.8.3.3). Nothing else would retire them if no
	 * other response is coming (rxe's completer does the same on every run).
	 */
	rfw_comp_drain(qp);
	/* A coalesced ACK or a NAK may cover more: go on while it reaches further. */
	if (qp->state == RFW_QPS_ERR || rfw_psn_cmp(c->pkt->bth.psn, qp->comp.psn) < 0)
		return COMPST_EXIT;
	return COMPST_GET_WQE;
}

static enum comp_state update_comp(struct comp_ctx *c)
{
	progress(c->qp);
	return COMPST_EXIT;
}

static enum comp_state retry(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	if (c->implied)
		rfw_cnt(qp, RFW_CNT_implied_nak_seq_err);
	/* One go-back-N per PSN: a second NAK (or a later implied one) for it is ignored. */
	if (qp->comp.retrying && qp->comp.retry_psn == qp->comp.psn)
		return COMPST_EXIT;
	/* IBA 9.7.5.2.2: a NAK sequence error retry uses up retry_cnt like a timeout. */
	if (qp->comp.retry_left == 0) {
		rfw_cnt(qp, RFW_CNT_retry_exceeded);
		c->status = RFW_WC_RETRY_EXC_ERR;
		return COMPST_ERROR;
	}
	qp->comp.retry_left--;
	qp->comp.retrying = true;
	qp->comp.retry_psn = qp->comp.psn;
	rfw_req_rewind(qp, qp->comp.psn);
	qp->comp.timer = 0;
	rfw_req_arm_timer(qp);
	arm_probe(qp);
	return COMPST_EXIT;
}

static enum comp_state rnr_retry(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	const struct rfw_ib_pkt *p = c->pkt;

	/* mlx5 rnr_nak_retry_err counts received RNR NAKs. */
	rfw_cnt(qp, RFW_CNT_rnr_nak_retry_err);
	if (rfw_psn_cmp(p->bth.psn, qp->comp.psn) > 0) {
		qp->comp.psn = p->bth.psn;
		progress(qp);
	}
	if (qp->req.rnr_wait)
		return COMPST_EXIT; /* already waiting */
	/* IBA 9.7.5.2.8: rnr_retry 7 means retry forever. */
	if (qp->comp.rnr_left == 0) {
		rfw_cnt(qp, RFW_CNT_rnr_retry_exceeded);
		c->status = RFW_WC_RNR_RETRY_EXC_ERR;
		return COMPST_ERROR;
	}
	if (qp->comp.rnr_left != 7)
		qp->comp.rnr_left--;
	rfw_req_rewind(qp, p->bth.psn);
	qp->req.rnr_wait = true;
	qp->req.rnr_psn = p->bth.psn;
	qp->req.rnr_deadline =
	    qp->now + rfw_rnr_timer_ns(rfw_aeth_syndrome_value(p->aeth.syndrome));
	qp->comp.timer = 0; /* the RNR timer replaces the ACK timer while waiting */
	return COMPST_EXIT;
}

static enum comp_state comp_error(struct comp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	rfw_qp_complete_swqe(qp, c->wqe, c->status);
	rfw_qp_error(qp);
	return COMPST_EXIT;
}

typedef enum comp_state (*comp_fn)(struct comp_ctx *);
static const comp_fn comp_handlers[COMPST__COUNT] = {
    [COMPST_GET_WQE] = get_wqe,     [COMPST_CHECK_PSN] = check_psn,
    [COMPST_CHECK_ACK] = check_ack, [COMPST_READ] = do_read,
    [COMPST_ATOMIC] = do_atomic,    [COMPST_WRITE_SEND] = write_send,
    [COMPST_COMP_WQE] = comp_wqe,   [COMPST_UPDATE_COMP] = update_comp,
    [COMPST_RETRY] = retry,         [COMPST_RNR_RETRY] = rnr_retry,
    [COMPST_ERROR] = comp_error,
};

void rfw_comp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt)
{
	struct comp_ctx c = {.qp = qp, .pkt = pkt};
	enum comp_state s = COMPST_GET_WQE;

	if (qp->sr) {
		rfw_sr_comp_rx(qp, pkt);
		return;
	}
	/* A coalesced ACK retires WQE after WQE through these three states: direct calls the
	   compiler inlines, not an indirect call each; the rest through the table. */
	while (s != COMPST_EXIT) {
		switch (s) {
		case COMPST_GET_WQE:
			s = get_wqe(&c);
			break;
		case COMPST_CHECK_PSN:
			s = check_psn(&c);
			break;
		case COMPST_COMP_WQE:
			s = comp_wqe(&c);
			break;
		default:
			s = comp_handlers[s](&c);
			break;
		}
	}
}

/* IBA 9.7.6.1.3: the local ACK timer expired with requests outstanding. */
void rfw_comp_timer(struct rfw_qp *qp)
{
	struct comp_ctx c = {.qp = qp};

	if (qp->sr) {
		rfw_sr_timer(qp);
		return;
	}
	qp->comp.timer = 0;
	if (rfw_psn_cmp(qp->req.high_psn, qp->comp.psn) <= 0 || qp->req.rnr_wait)
		return;
	rfw_cnt(qp, RFW_CNT_local_ack_timeout_err);
	rfw_cnt(qp, RFW_CNT_rto_high_timeouts); /* GBN's one timer: IBA's local ACK timeout */
	rfw_comp_drain(qp);
	if (qp->state == RFW_QPS_ERR || qp->comp.idx == qp->sq_prod)
		return;
	c.wqe = rfw_sq_at(qp, qp->comp.idx);
	if (qp->comp.retry_left == 0) {
		rfw_cnt(qp, RFW_CNT_retry_exceeded);
		c.status = RFW_WC_RETRY_EXC_ERR;
		comp_error(&c);
		return;
	}
	qp->comp.retry_left--;
	qp->comp.retrying = true;
	qp->comp.retry_psn = qp->comp.psn;
	rfw_req_rewind(qp, qp->comp.psn);
	rfw_req_arm_timer(qp);
	arm_probe(qp);
}

/*
 * The gbn retry probe expired (issue 13.13). The responder NAKs a sequence error once and then
 * drops everything until the NAKed PSN arrives (IBA 9.7.5.1.2, as rxe), so a retransmission
 * lost again is otherwise recovered only by the local ACK timer: 67 ms at timeout 14, in which
 * a 2 us-RTT flow sends nothing. Go back to the NAKed PSN again; a requester may resend from
 * an earlier PSN at any time, the responder treating what it already has as duplicates (IBA
 * 9.7.5.2.2). retry_cnt is not charged: the local ACK timer keeps running and does that.
 */
void rfw_comp_probe(struct rfw_qp *qp)
{
	qp->comp.probe_at = 0;
	if (qp->sr || !qp->comp.retrying || qp->comp.retry_psn != qp->comp.psn ||
	    qp->req.rnr_wait || rfw_psn_cmp(qp->req.high_psn, qp->comp.psn) <= 0)
		return;
	rfw_cnt(qp, RFW_CNT_retry_probes);
	rfw_req_rewind(qp, qp->comp.psn);
	if (qp->comp.probe_backoff < PROBE_BACKOFF_MAX)
		qp->comp.probe_backoff++;
	arm_probe(qp);
}
