/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs: creation, the QP state machine (IBA 10.3.1), posting work requests, error and
 * flush (IBA 10.3.1 "Error state", 10.8.3.3), and the host scheduler entry points.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rfw_int.h"

/* Receive ring of a QP on an SRQ: WQEs taken and not yet completed (srq.c). */
#define QP_SRQ_RING 64u

static const char *const qp_state_names[RFW_QPS__COUNT] = {
    [RFW_QPS_RESET] = "RESET", [RFW_QPS_INIT] = "INIT", [RFW_QPS_RTR] = "RTR",
    [RFW_QPS_RTS] = "RTS",     [RFW_QPS_SQD] = "SQD",   [RFW_QPS_SQE] = "SQE",
    [RFW_QPS_ERR] = "ERR",
};

const char *rfw_qp_state_str(enum rfw_qp_state s)
{
	return (unsigned)s < RFW_QPS__COUNT ? qp_state_names[s] : "UNKNOWN";
}

static void qp_free_queues(struct rfw_qp *qp)
{
	if (qp->sq)
		for (uint32_t i = 0; i < qp->sq_size; i++)
			free(qp->sq[i].inline_buf);
	free(qp->sq_sge);
	if (qp->rq)
		for (uint32_t i = 0; i <= qp->rq_mask; i++)
			free(qp->rq[i].sge);
	free(qp->sq);
	free(qp->rq);
	free(qp->resp.res);
	free(qp->resp.rsp);
	rfw_sr_free(qp);
	rfw_es_qp_free(qp);
}

/*
 * The receive ring: the QP's own, or with an SRQ a ring for the WQEs it took (enough for the
 * messages selective repeat may place ahead; slots sized as the SRQ's for the swap in srq.c).
 */
static void qp_rq_size(struct rfw_qp *qp, struct rfw_srq *srq)
{
	if (srq != NULL) {
		qp->srq = srq;
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = srq->max_sge;
		qp->rq_size = srq->size < QP_SRQ_RING ? srq->size : QP_SRQ_RING;
	} else {
		if (qp->cap.max_recv_sge == 0)
			qp->cap.max_recv_sge = 1;
		qp->rq_size = qp->cap.max_recv_wr ? qp->cap.max_recv_wr : 1;
	}
	qp->rq_mask = rfw_ring_entries(qp->rq_size) - 1;
}

_Static_assert(RFW_RSP_RING >= 2 * RFW_MAX_RD_ATOMIC + 8 &&
                   (RFW_RSP_RING & (RFW_RSP_RING - 1)) == 0,
               "the response ring holds nrsp entries and is indexed with a mask");

/* Every per-packet structure is allocated here, none on the packet path. 0 or -ENOMEM. */
static int qp_alloc_queues(struct rfw_qp *qp)
{
	uint32_t nsge = qp->cap.max_send_sge ? qp->cap.max_send_sge : 1;

	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	/* One array of scatter lists beside the ring, not one allocation per WQE: a WQE's
	 * list is then near its neighbours' (posting and sending touch it per message). */
	qp->sq_sge = calloc((size_t)qp->sq_size * nsge, sizeof(struct rfw_sge));
	qp->rq = calloc(qp->rq_mask + 1, sizeof(*qp->rq));
	qp->resp.nres = RFW_MAX_RD_ATOMIC;
	qp->resp.res = calloc(qp->resp.nres, sizeof(*qp->resp.res));
	qp->resp.nrsp = 2 * RFW_MAX_RD_ATOMIC + 8;
	qp->resp.rsp = calloc(RFW_RSP_RING, sizeof(*qp->resp.rsp));
	if (!qp->sq || !qp->sq_sge || !qp->rq || !qp->resp.res || !qp->resp.rsp)
		return -ENOMEM;
	for (uint32_t i = 0; i < qp->sq_size; i++) {
		qp->sq[i].sge = qp->sq_sge + (size_t)i * nsge;
		if (qp->cap.max_inline_data) {
			qp->sq[i].inline_buf = malloc(qp->cap.max_inline_data);
			if (qp->sq[i].inline_buf == NULL)
				return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i <= qp->rq_mask; i++) {
		qp->rq[i].sge = calloc(qp->cap.max_recv_sge, sizeof(struct rfw_sge));
		if (qp->rq[i].sge == NULL)
			return -ENOMEM;
	}
	if (qp->dev->attr.estats && rfw_es_qp_alloc(qp))
		return -ENOMEM;
	return 0;
}

struct rfw_qp *rfw_create_qp(struct rfw_pd *pd, const struct rfw_qp_init_attr *ia)
{
	struct rfw_dev *dev;
	struct rfw_qp *qp;
	uint32_t i;

	if (pd == NULL || ia == NULL || ia->send_cq == NULL || ia->recv_cq == NULL ||
	    ia->cap.max_send_wr > (1u << 16) || ia->cap.max_recv_wr > (1u << 16) ||
	    ia->cap.max_send_sge > 32 || ia->cap.max_recv_sge > 32 ||
	    ia->cap.max_inline_data > 4096 || (ia->srq != NULL && ia->srq->pd != pd) ||
	    ia->send_cq->dev != pd->dev || ia->recv_cq->dev != pd->dev ||
	    (ia->qp_type != RFW_QPT_RC && ia->qp_type != RFW_QPT_UD && ia->qp_type != RFW_QPT_UC)) {
		errno = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	if (!rfw_slots_peek(&dev->qp_free, &i)) {
		errno = ENOMEM;
		return NULL;
	}
	/* Cache-line aligned: the per-packet fields are laid out by line (rfw_int.h). */
	qp = aligned_alloc(64, (sizeof(*qp) + 63) & ~(size_t)63);
	if (qp == NULL)
		return NULL;
	memset(qp, 0, sizeof(*qp));
	qp->dev = dev;
	qp->pd = pd;
	qp->type = ia->qp_type;
	qp->event = ia->event;
	qp->send_cq = ia->send_cq;
	qp->recv_cq = ia->recv_cq;
	qp->context = ia->qp_context;
	qp->sq_sig_all = ia->sq_sig_all;
	qp->cap = ia->cap;
	if (qp->cap.max_send_sge == 0)
		qp->cap.max_send_sge = 1;
	qp->qpn = dev->attr.qpn_base + i;
	qp->wire_qpn = qp->qpn;
	/* A receive-only QP may ask for no send WRs (qperf's servers do): one slot keeps the
	   ring arithmetic defined, and posting finds the queue full (cap 0). */
	qp->sq_size = rfw_ring_entries(qp->cap.max_send_wr);
	qp_rq_size(qp, ia->srq);
	if (qp_alloc_queues(qp) != 0)
		goto nomem;
	qp->state = RFW_QPS_RESET;
	/* UD: a datagram is at most one packet of the port's MTU; the host lowers it with
	   RFW_QP_PATH_MTU (a rocefw extension for UD) when its port carries less. */
	qp->attr.path_mtu = qp->type == RFW_QPT_UD ? RFW_MTU_4096 : RFW_MTU_1024;
	qp->mtu = rfw_mtu_to_bytes(qp->attr.path_mtu);
	qp->attr.max_rd_atomic = 1;
	qp->attr.max_dest_rd_atomic = 1;
	dev->qps[i] = qp;
	rfw_slots_take(&dev->qp_free);
	pd->users++;
	qp->send_cq->users++;
	qp->recv_cq->users++;
	if (qp->srq != NULL)
		qp->srq->users++;
	return qp;
nomem:
	qp_free_queues(qp);
	free(qp);
	errno = ENOMEM;
	return NULL;
}

int rfw_destroy_qp(struct rfw_qp *qp)
{
	uint32_t slot;

	if (qp == NULL)
		return -EINVAL;
	slot = qp->qpn - qp->dev->attr.qpn_base;
	qp->dev->qps[slot] = NULL;
	rfw_slots_put(&qp->dev->qp_free, slot);
	if (qp->dev->gsi == qp)
		qp->dev->gsi = NULL;
	qp->pd->users--;
	qp->send_cq->users--;
	qp->recv_cq->users--;
	if (qp->srq != NULL) {
		rfw_srq_unwait(qp);
		qp->srq->users--;
	}
	qp_free_queues(qp);
	free(qp);
	return 0;
}

void rfw_qp_fatal(struct rfw_qp *qp)
{
	if (qp == NULL || qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_ERR)
		return;
	rfw_qp_error(qp);
	rfw_qp_event(qp, RFW_QP_EV_FATAL);
}

_Static_assert(offsetof(struct rfw_qp, qpn) == 0, "rfw_qp_num reads the first member");

void *rfw_qp_context(const struct rfw_qp *qp)
{
	return qp->context;
}
enum rfw_qp_state rfw_qp_state(const struct rfw_qp *qp)
{
	return qp->state;
}

void rfw_qp_counters(const struct rfw_qp *qp, uint64_t out[RFW_CNT__COUNT])
{
	memcpy(out, qp->cnt, sizeof(qp->cnt));
}

uint64_t rfw_qp_counter(const struct rfw_qp *qp, enum rfw_counter c)
{
	return (unsigned)c < RFW_CNT__COUNT ? qp->cnt[c] : 0;
}

struct rfw_qp *rfw_dev_qp(struct rfw_dev *dev, uint32_t qpn)
{
	return rfw_dev_qp_at(dev, qpn);
}

int rfw_qp_set_gsi(struct rfw_qp *qp)
{
	if (qp == NULL || qp->type != RFW_QPT_UD || qp->state != RFW_QPS_RESET)
		return -EINVAL;
	if (qp->dev->gsi != NULL && qp->dev->gsi != qp)
		return -EBUSY;
	qp->dev->gsi = qp;
	qp->wire_qpn = RFW_GSI_QPN;
	qp->attr.qkey = RFW_GSI_QKEY;
	return 0;
}

void rfw_qp_set_cc(struct rfw_qp *qp, const struct rfw_cc_ops *ops, void *cc)
{
	qp->cc_ops = ops;
	qp->cc = cc;
}

void rfw_qp_set_window_bytes(struct rfw_qp *qp, uint64_t bytes)
{
	uint32_t mtu = qp->mtu != 0 ? qp->mtu : 256;

	qp->req.win = bytes != 0 && bytes < (uint64_t)qp->dev->attr.max_unacked_psns * mtu
	                  ? rfw_div_up(bytes, mtu)
	                  : 0;
}

/* Back to RESET: queues emptied without completions (IBA 10.3.1 "Reset state"). */
static void qp_reset(struct rfw_qp *qp)
{
	qp->comm_est = false;
	qp->sq_prod = 0;
	qp->rq_prod = qp->rq_cons = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	rfw_resp_reset(qp);
	for (uint32_t i = 0; i < qp->sq_size; i++)
		qp->sq[i].state = SWQE_DONE;
	if (qp->sr)
		rfw_sr_reset(qp);
}

/*
 * Complete the WQE at the head of the SQ. A successful unsignalled WQE produces no CQE
 * (IBA 10.8.1.1); an error always does.
 */
void rfw_qp_complete_swqe(struct rfw_qp *qp, struct rfw_swqe *w, enum rfw_wc_status st)
{
	rfw_qp_complete_swqe_inl(qp, w, st);
}

void rfw_qp_complete_rwqe(struct rfw_qp *qp, const struct rfw_rwqe *w, enum rfw_wc_status st,
                          enum rfw_wc_opcode op, uint32_t byte_len, unsigned flags, uint32_t imm,
                          uint32_t inv_rkey)
{
	struct rfw_wc *wc;

	if (st == RFW_WC_WR_FLUSH_ERR)
		rfw_cnt(qp, RFW_CNT_resp_cqe_flush_error);
	else if (st != RFW_WC_SUCCESS)
		rfw_cnt(qp, RFW_CNT_resp_cqe_error);
	wc = rfw_cq_slot(qp, qp->recv_cq, w->wr_id, st, op);
	if (wc == NULL)
		return;
	wc->byte_len = byte_len;
	wc->imm_data = imm;
	wc->invalidated_rkey = inv_rkey;
	wc->wc_flags = flags;
	rfw_cq_commit(qp->recv_cq);
}

/*
 * To ERR (IBA 10.3.1): every outstanding WQE of both queues completes with
 * RFW_WC_WR_FLUSH_ERR, in order. Responses already queued (the NAK that reports the error)
 * are still sent.
 */
void rfw_qp_error(struct rfw_qp *qp)
{
	bool was_err = qp->state == RFW_QPS_ERR;

	qp->state = RFW_QPS_ERR;
	rfw_rd_out_stop(qp);
	while (qp->comp.idx != qp->sq_prod)
		rfw_qp_complete_swqe(qp, rfw_sq_at(qp, qp->comp.idx), RFW_WC_WR_FLUSH_ERR);
	qp->req.idx = qp->comp.idx;
	qp->req.off = 0;
	qp->req.rnr_wait = false;
	qp->comp.timer = 0;
	while (qp->rq_cons != qp->rq_prod) {
		rfw_qp_complete_rwqe(qp, rfw_rq_at(qp, qp->rq_cons), RFW_WC_WR_FLUSH_ERR,
		                     RFW_WC_RECV, 0, 0, 0, 0);
		qp->rq_cons++;
	}
	qp->resp.have_rwqe = false;
	qp->resp.cls = MSG_NONE;
	/* IBA 11.6.3: an SRQ's QP reports when its last WQE has completed (here: flushed). */
	if (!was_err && qp->srq != NULL)
		rfw_qp_event(qp, RFW_QP_EV_LAST_WQE);
}

/* ---- modify / query ---- */

/*
 * UD (ib_modify_qp_is_ok's UD column): RESET->INIT needs P_Key index, port and Q_Key, RTR->RTS
 * the SQ PSN; the Q_Key may change on the way (and the path MTU, a rocefw extension: the port's
 * MTU, before RTR).
 */
static unsigned ud_mask(enum rfw_qp_state cur, enum rfw_qp_state next, bool required)
{
	if (next == RFW_QPS_RESET || next == RFW_QPS_ERR)
		return 0;
	if (cur == RFW_QPS_RESET)
		return required ? RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_QKEY : RFW_QP_PATH_MTU;
	if (cur == RFW_QPS_RTR && next == RFW_QPS_RTS && required)
		return RFW_QP_SQ_PSN;
	if (required)
		return 0;
	if (cur == RFW_QPS_INIT)
		return RFW_QP_PKEY_INDEX | RFW_QP_QKEY | RFW_QP_PATH_MTU |
		       (next == RFW_QPS_INIT ? RFW_QP_PORT : 0);
	return RFW_QP_QKEY | (cur == RFW_QPS_SQD && next == RFW_QPS_SQD ? RFW_QP_PKEY_INDEX : 0);
}

/*
 * UC (ib_modify_qp_is_ok's UC column): RC's path attributes without the retry, timeout,
 * RNR and READ/atomic ones.
 */
static unsigned uc_mask(enum rfw_qp_state cur, enum rfw_qp_state next, bool required)
{
	if (next == RFW_QPS_RESET || next == RFW_QPS_ERR)
		return 0;
	if (cur == RFW_QPS_RESET)
		return required ? RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_ACCESS_FLAGS : 0;
	if (cur == RFW_QPS_INIT && next == RFW_QPS_RTR)
		return required ? RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN | RFW_QP_RQ_PSN
		                : RFW_QP_ACCESS_FLAGS | RFW_QP_PKEY_INDEX;
	if (cur == RFW_QPS_RTR && next == RFW_QPS_RTS)
		return required ? RFW_QP_SQ_PSN : RFW_QP_ACCESS_FLAGS;
	if (required)
		return 0;
	if (cur == RFW_QPS_INIT)
		return RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_ACCESS_FLAGS;
	return RFW_QP_ACCESS_FLAGS | (cur == RFW_QPS_SQD && next == RFW_QPS_SQD
	                                  ? RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_AV
	                                  : 0);
}

/* IBA 11.2.5.1 (as ibv_modify_qp): attributes required for a transition. */
static unsigned required_mask(enum rfw_qp_state cur, enum rfw_qp_state next)
{
	if (cur == RFW_QPS_RESET && next == RFW_QPS_INIT)
		return RFW_QP_ACCESS_FLAGS;
	if (cur == RFW_QPS_INIT && next == RFW_QPS_RTR)
		return RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN | RFW_QP_RQ_PSN |
		       RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER;
	if (cur == RFW_QPS_RTR && next == RFW_QPS_RTS)
		return RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT | RFW_QP_RNR_RETRY |
		       RFW_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

/*
 * Attributes a transition may also carry, as ib_modify_qp_is_ok's table for RC (IBA 11.2.5.1:
 * what is not listed for a transition is an error, so e.g. PATH_MTU or SQ_PSN cannot change in
 * RTS). The rocefw extension TRANSPORT_MODE goes with RESET->INIT, INIT->INIT and INIT->RTR.
 */
static unsigned optional_mask(enum rfw_qp_state cur, enum rfw_qp_state next)
{
	const unsigned rts = RFW_QP_ACCESS_FLAGS | RFW_QP_MIN_RNR_TIMER;

	if (next == RFW_QPS_RESET || next == RFW_QPS_ERR)
		return 0;
	switch (cur) {
	case RFW_QPS_RESET:
		return RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_TRANSPORT_MODE;
	case RFW_QPS_INIT:
		if (next == RFW_QPS_INIT)
			return RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_ACCESS_FLAGS |
			       RFW_QP_TRANSPORT_MODE;
		return RFW_QP_ACCESS_FLAGS | RFW_QP_PKEY_INDEX | RFW_QP_TRANSPORT_MODE;
	case RFW_QPS_RTR:
	case RFW_QPS_SQE:
		return rts;
	case RFW_QPS_RTS:
		return next == RFW_QPS_RTS ? rts : 0;
	case RFW_QPS_SQD:
		if (next == RFW_QPS_RTS)
			return rts;
		return rts | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_AV | RFW_QP_MAX_QP_RD_ATOMIC |
		       RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
		       RFW_QP_RNR_RETRY;
	default:
		return 0;
	}
}

static bool transition_ok(enum rfw_qp_state cur, enum rfw_qp_state next)
{
	if (next == RFW_QPS_RESET || next == RFW_QPS_ERR)
		return true;
	switch (cur) {
	case RFW_QPS_RESET:
		return next == RFW_QPS_INIT;
	case RFW_QPS_INIT:
		return next == RFW_QPS_INIT || next == RFW_QPS_RTR;
	case RFW_QPS_RTR:
		return next == RFW_QPS_RTS;
	case RFW_QPS_RTS:
		return next == RFW_QPS_RTS || next == RFW_QPS_SQD;
	case RFW_QPS_SQD:
		return next == RFW_QPS_SQD || next == RFW_QPS_RTS;
	case RFW_QPS_SQE:
		return next == RFW_QPS_RTS;
	default:
		return false;
	}
}

/* The transition and its attributes, as ib_modify_qp_is_ok; values range-checked. */
static int modify_check(const struct rfw_qp *qp, const struct rfw_qp_attr *a, unsigned mask,
                        enum rfw_qp_state *nextp)
{
	/* No state bit: the QP stays in its state, a cur -> cur transition (as ibverbs). */
	enum rfw_qp_state next = (mask & RFW_QP_STATE) ? a->qp_state : qp->state;
	unsigned req, opt;

	if ((unsigned)next >= RFW_QPS__COUNT || !transition_ok(qp->state, next))
		return -EINVAL;
	req = qp->type == RFW_QPT_UD   ? ud_mask(qp->state, next, true)
	      : qp->type == RFW_QPT_UC ? uc_mask(qp->state, next, true)
	                               : required_mask(qp->state, next);
	opt = qp->type == RFW_QPT_UD   ? ud_mask(qp->state, next, false)
	      : qp->type == RFW_QPT_UC ? uc_mask(qp->state, next, false)
	                               : optional_mask(qp->state, next);
	if ((mask & req) != req || (mask & ~(RFW_QP_STATE | req | opt)) != 0)
		return -EINVAL;
	*nextp = next;
	if ((mask & RFW_QP_PATH_MTU) && rfw_mtu_to_bytes(a->path_mtu) == 0)
		return -EINVAL;
	if ((mask & RFW_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & RFW_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & RFW_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & RFW_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & RFW_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > RFW_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & RFW_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > RFW_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & RFW_QP_DEST_QPN) && a->dest_qp_num > RFW_QPN_MASK)
		return -EINVAL;
	if ((mask & RFW_QP_QKEY) && qp->wire_qpn == RFW_GSI_QPN && a->qkey != RFW_GSI_QKEY)
		return -EINVAL; /* QP1's Q_Key is the well-known one (IBA 13.5.1) */
	/* TRANSPORT_MODE only before the QP talks: RESET->INIT, INIT->INIT, INIT->RTR. */
	if ((mask & RFW_QP_TRANSPORT_MODE) && a->transport_mode != RFW_TRANSPORT_GBN &&
	    a->transport_mode != RFW_TRANSPORT_SR)
		return -EINVAL;
	return 0;
}

/* The attributes of @mask from @a into @qp (checked by modify_check). */
static void modify_apply(struct rfw_qp *qp, const struct rfw_qp_attr *a, unsigned mask)
{
	if (mask & RFW_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = a->qp_access_flags;
	if (mask & RFW_QP_PKEY_INDEX)
		qp->attr.pkey_index = a->pkey_index;
	if (mask & RFW_QP_PORT)
		qp->attr.port_num = a->port_num;
	if (mask & RFW_QP_AV)
		qp->attr.ah_attr = a->ah_attr;
	if (mask & RFW_QP_PATH_MTU) {
		qp->attr.path_mtu = a->path_mtu;
		qp->mtu = rfw_mtu_to_bytes(a->path_mtu);
	}
	if (mask & RFW_QP_TIMEOUT)
		qp->attr.timeout = a->timeout;
	if (mask & RFW_QP_RETRY_CNT) {
		qp->attr.retry_cnt = a->retry_cnt;
		qp->comp.retry_left = a->retry_cnt;
	}
	if (mask & RFW_QP_RNR_RETRY) {
		qp->attr.rnr_retry = a->rnr_retry;
		qp->comp.rnr_left = a->rnr_retry;
	}
	if (mask & RFW_QP_RQ_PSN) {
		qp->attr.rq_psn = a->rq_psn & RFW_PSN_MASK;
		qp->resp.psn = qp->attr.rq_psn;
		qp->resp.ack_psn = qp->attr.rq_psn;
	}
	if (mask & RFW_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = a->max_rd_atomic ? a->max_rd_atomic : 1;
	if (mask & RFW_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = a->max_dest_rd_atomic; /* 0: no READ/atomic */
	if (mask & RFW_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = a->min_rnr_timer;
	if (mask & RFW_QP_SQ_PSN) {
		qp->attr.sq_psn = a->sq_psn & RFW_PSN_MASK;
		qp->req.psn = qp->attr.sq_psn;
		qp->req.high_psn = qp->attr.sq_psn;
		qp->comp.psn = qp->attr.sq_psn;
	}
	if (mask & RFW_QP_DEST_QPN)
		qp->attr.dest_qp_num = a->dest_qp_num;
	if (mask & RFW_QP_QKEY)
		qp->attr.qkey = a->qkey;
	if (mask & RFW_QP_TRANSPORT_MODE) {
		qp->attr.transport_mode = a->transport_mode;
		qp->mode = a->transport_mode;
		if (qp->mode == RFW_TRANSPORT_GBN)
			rfw_sr_free(qp);
	}
}

int rfw_modify_qp(struct rfw_qp *qp, const struct rfw_qp_attr *a, unsigned mask)
{
	enum rfw_qp_state next;
	int rc;

	if (qp == NULL || a == NULL)
		return -EINVAL;
	rc = modify_check(qp, a, mask, &next);
	if (rc)
		return rc;
	/* SR state is allocated here, never on the packet path (transport-sr.md). */
	if ((mask & RFW_QP_TRANSPORT_MODE) && a->transport_mode == RFW_TRANSPORT_SR &&
	    rfw_sr_setup(qp))
		return -ENOMEM;

	modify_apply(qp, a, mask);
	/* PSNs or MTU changed: the SR state starts over from them, each half on its own. */
	if (qp->sr && (mask & RFW_QP_RQ_PSN))
		rfw_sr_reset_resp(qp);
	if (qp->sr && (mask & RFW_QP_SQ_PSN))
		rfw_sr_reset_req(qp);
	if (qp->sr && (mask & RFW_QP_PATH_MTU))
		rfw_sr_mtu(qp);

	if (mask & RFW_QP_STATE) {
		if (next == RFW_QPS_RESET) {
			qp_reset(qp);
			qp->state = RFW_QPS_RESET;
		} else if (next == RFW_QPS_ERR) {
			rfw_qp_error(qp);
		} else {
			qp->state = next;
		}
	}
	return 0;
}

int rfw_query_qp(const struct rfw_qp *qp, struct rfw_qp_attr *a)
{
	if (qp == NULL || a == NULL)
		return -EINVAL;
	*a = qp->attr;
	a->qp_state = a->cur_qp_state = qp->state;
	a->sq_psn = qp->req.psn;
	a->rq_psn = qp->resp.psn;
	a->cap = qp->cap;
	return 0;
}

/* ---- posting ---- */

/* RC's SEND and RDMA WRITE (with or without immediate) and RDMA READ. */
#define RC_PLAIN_OPS                                                                               \
	(1u << RFW_WR_SEND | 1u << RFW_WR_SEND_WITH_IMM | 1u << RFW_WR_RDMA_WRITE |                \
	 1u << RFW_WR_RDMA_WRITE_WITH_IMM | 1u << RFW_WR_RDMA_READ)
_Static_assert(RFW_WR__COUNT <= 32, "RC_PLAIN_OPS holds every opcode's bit");

static int check_send_wr(const struct rfw_qp *qp, const struct rfw_send_wr *wr, uint64_t *len)
{
	uint64_t total = 0;

	/* What a data path posts: one of RC_PLAIN_OPS on an RC QP, one SGE, not inline. Every
	 * test below passes for it but the length's, so that one is all it takes (16
	 * instructions a 64 B WRITE less). */
	if (qp->type == RFW_QPT_RC && (unsigned)wr->opcode < RFW_WR__COUNT &&
	    (RC_PLAIN_OPS >> wr->opcode & 1) && wr->num_sge == 1 && wr->sg_list != NULL &&
	    qp->cap.max_send_sge >= 1 && !(wr->send_flags & RFW_SEND_INLINE)) {
		*len = wr->sg_list[0].length;
		return *len > RFW_MAX_MSG_SIZE ? EINVAL : 0;
	}
	if ((unsigned)wr->opcode >= RFW_WR__COUNT)
		return EINVAL;
	/* IBA 10.6.7.2: RC and UC QPs bind windows; rocefw's UC send path has no local
	   operations, so RC only */
	if (wr->opcode == RFW_WR_BIND_MW && (qp->type != RFW_QPT_RC || wr->wr.bind_mw.mw == NULL))
		return EINVAL;
	/* UD: SENDs to an address handle of the QP's PD (IBA 10.2.2), one packet each. */
	if (qp->type == RFW_QPT_UD &&
	    ((wr->opcode != RFW_WR_SEND && wr->opcode != RFW_WR_SEND_WITH_IMM) ||
	     wr->wr.ud.ah == NULL || wr->wr.ud.ah->pd != qp->pd))
		return EINVAL;
	/* UC: SEND and RDMA WRITE, with or without immediate (IBA 9.8.3: no READ, no atomics). */
	if (qp->type == RFW_QPT_UC && wr->opcode != RFW_WR_SEND &&
	    wr->opcode != RFW_WR_SEND_WITH_IMM && wr->opcode != RFW_WR_RDMA_WRITE &&
	    wr->opcode != RFW_WR_RDMA_WRITE_WITH_IMM)
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge ||
	    (wr->num_sge && wr->sg_list == NULL))
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > RFW_MAX_MSG_SIZE || (qp->type == RFW_QPT_UD && total > qp->mtu))
		return EINVAL;
	if ((wr->send_flags & RFW_SEND_INLINE) &&
	    (total > qp->cap.max_inline_data || wr->opcode == RFW_WR_RDMA_READ ||
	     wr->opcode == RFW_WR_ATOMIC_CMP_AND_SWP || wr->opcode == RFW_WR_ATOMIC_FETCH_AND_ADD))
		return EINVAL;
	if ((wr->opcode == RFW_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == RFW_WR_ATOMIC_FETCH_AND_ADD) &&
	    (total != 8 || (wr->wr.atomic.remote_addr & 7) != 0))
		return EINVAL; /* IBA 9.4.5: 8 bytes, naturally aligned (rxe's library refuses too)
		                */
	*len = total;
	return 0;
}

/*
 * @wr into @w field by field, each load as wide as the store that wrote it: a caller fills its
 * WR just before posting, and a struct copy's 16-byte loads over those fresh 4- and 8-byte
 * stores stall store forwarding, a stall per load (libibverbs providers read a WR by fields
 * too). Of the union, the member the WR's opcode uses (and that a UD QP's SEND uses).
 */
static void swqe_copy_wr(struct rfw_swqe *w, const struct rfw_send_wr *wr, bool ud)
{
	w->wr.wr_id = wr->wr_id;
	w->wr.next = NULL;
	w->wr.sg_list = w->sge;
	w->wr.num_sge = wr->num_sge;
	w->wr.opcode = wr->opcode;
	w->wr.send_flags = wr->send_flags;
	w->wr.imm_data = wr->imm_data;
	w->wr.invalidate_rkey = wr->invalidate_rkey;
	if (ud) {
		w->wr.wr.ud.ah = wr->wr.ud.ah;
		RFW_NO_LOAD_MERGE();
		w->wr.wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		w->wr.wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		return;
	}
	switch (wr->opcode) {
	case RFW_WR_ATOMIC_CMP_AND_SWP:
	case RFW_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		RFW_NO_LOAD_MERGE();
		w->wr.wr.atomic.compare_add = wr->wr.atomic.compare_add;
		RFW_NO_LOAD_MERGE();
		w->wr.wr.atomic.swap = wr->wr.atomic.swap;
		w->wr.wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case RFW_WR_BIND_MW:
		w->wr.wr.bind_mw = wr->wr.bind_mw; /* rare: posted long before, a copy is fine */
		break;
	default:
		w->wr.wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	}
}

static int post_send_wrs(struct rfw_qp *qp, struct rfw_send_wr *wr, struct rfw_send_wr **bad_wr,
                         uint64_t now_ns)
{
	qp->now = now_ns;
	for (; wr; wr = wr->next) {
		struct rfw_swqe *w;
		uint64_t len;
		int err;

		if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT ||
		    qp->state == RFW_QPS_RTR)
			err = EINVAL;
		else if (qp->sq_prod - qp->comp.idx >= qp->cap.max_send_wr)
			err = ENOMEM;
		else
			err = check_send_wr(qp, wr, &len);
		if (err) {
			if (bad_wr)
				*bad_wr = wr;
			return err;
		}
		w = rfw_sq_at(qp, qp->sq_prod);
		if (qp->es) { /* T1; T2, T3 are read only once their have bits say so */
			w->es.t[0] = now_ns;
			w->es.have = 1;
		}
		swqe_copy_wr(w, wr, qp->type == RFW_QPT_UD);
		w->length = (uint32_t)len;
		w->state = SWQE_POSTED;
		w->psn_valid = false;
		w->checked = false;
		w->status = RFW_WC_SUCCESS;
		w->signaled = qp->sq_sig_all || (wr->send_flags & RFW_SEND_SIGNALED);
		if (wr->send_flags & RFW_SEND_INLINE) {
			/* The data is copied now: the caller may reuse its buffers at once. */
			rfw_sge_copy_out(wr->sg_list, wr->num_sge, 0, w->inline_buf, w->length);
			w->sge[0].addr = (uint64_t)(uintptr_t)w->inline_buf;
			w->sge[0].length = w->length;
			w->sge[0].lkey = 0;
			w->wr.num_sge = 1;
			w->checked = true;
		} else if (wr->num_sge == 1) {
			/* The common WR: by fields, as the WR (its list may be filled just now). */
			w->sge[0].addr = wr->sg_list[0].addr;
			RFW_NO_LOAD_MERGE();
			w->sge[0].length = wr->sg_list[0].length;
			w->sge[0].lkey = wr->sg_list[0].lkey;
		} else if (wr->num_sge) { /* LOCAL_INV may pass no list at all */
			memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*w->sge));
		}
		qp->sq_prod++;
		if (qp->state == RFW_QPS_ERR)
			rfw_qp_error(qp); /* flushes it at once (IBA 10.8.3.3) */
	}
	return 0;
}

int rfw_rwqe_set(struct rfw_rwqe *w, const struct rfw_recv_wr *wr, uint32_t max_sge)
{
	uint64_t total = 0;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge && wr->sg_list == NULL))
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > RFW_MAX_MSG_SIZE)
		return EINVAL;
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->length = (uint32_t)total;
	memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*w->sge));
	return 0;
}

static int post_recv_wrs(struct rfw_qp *qp, struct rfw_recv_wr *wr, struct rfw_recv_wr **bad_wr,
                         uint64_t now_ns)
{
	qp->now = now_ns;
	for (; wr; wr = wr->next) {
		int err;

		if (qp->state == RFW_QPS_RESET || qp->cap.max_recv_wr == 0)
			err = EINVAL;
		else if (qp->rq_prod - qp->rq_cons >= qp->rq_size)
			err = ENOMEM;
		else
			err = rfw_rwqe_set(rfw_rq_at(qp, qp->rq_prod), wr, qp->cap.max_recv_sge);
		if (err) {
			if (bad_wr)
				*bad_wr = wr;
			return err;
		}
		qp->rq_prod++;
		if (qp->state == RFW_QPS_ERR)
			rfw_qp_error(qp);
	}
	return 0;
}

/* Posting is the doorbell (rfw_qp_doorbell): the host's scheduler is told once WRs are in the
 * queue, including for the WRs before a refused one. */
int rfw_post_send(struct rfw_qp *qp, struct rfw_send_wr *wr, struct rfw_send_wr **bad_wr,
                  uint64_t now_ns)
{
	uint32_t prod;
	int rc;

	if (qp == NULL)
		return EINVAL;
	prod = qp->sq_prod;
	rc = post_send_wrs(qp, wr, bad_wr, now_ns);
	if (qp->sq_prod != prod)
		rfw_qp_doorbell(qp);
	return rc;
}

int rfw_post_recv(struct rfw_qp *qp, struct rfw_recv_wr *wr, struct rfw_recv_wr **bad_wr,
                  uint64_t now_ns)
{
	uint32_t prod;
	int rc;

	if (qp == NULL)
		return EINVAL;
	prod = qp->rq_prod;
	rc = post_recv_wrs(qp, wr, bad_wr, now_ns);
	if (qp->rq_prod != prod) {
		rfw_sr_recv_posted(qp);
		rfw_qp_doorbell(qp);
	}
	return rc;
}

/* ---- host scheduler entry points ---- */

/* UC answers nothing but the NP's CNPs; UD not even those. */
bool rfw_qp_has_responses(const struct rfw_qp *qp)
{
	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT || qp->type == RFW_QPT_UD)
		return false;
	return rfw_resp_has_work(qp);
}

/* UC and UD send what is posted and unsent; RC asks its requester (windows, timers). */
bool rfw_qp_has_requests(const struct rfw_qp *qp, uint64_t now_ns)
{
	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT)
		return false;
	if (qp->type != RFW_QPT_RC)
		return rfw_sq_unsent(qp);
	return rfw_req_has_work(qp, now_ns);
}

bool rfw_qp_has_work(const struct rfw_qp *qp, uint64_t now_ns)
{
	return rfw_qp_has_responses(qp) || rfw_qp_has_requests(qp, now_ns);
}

unsigned rfw_qp_tx_responses(struct rfw_qp *qp, unsigned max, uint64_t now_ns)
{
	unsigned n = 0;

	qp->now = now_ns;
	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT || qp->type == RFW_QPT_UD)
		return 0;
	while (n < max) {
		int r = rfw_resp_tx(qp);

		if (r <= 0)
			break;
		n++;
	}
	return n;
}

unsigned rfw_qp_tx_requests(struct rfw_qp *qp, unsigned max, uint64_t now_ns)
{
	unsigned n = 0;

	qp->now = now_ns;
	if (qp->state == RFW_QPS_RESET || qp->state == RFW_QPS_INIT)
		return 0;
	while (n < max) {
		int r = qp->type == RFW_QPT_UD   ? rfw_ud_tx(qp)
		        : qp->type == RFW_QPT_UC ? rfw_uc_tx(qp)
		                                 : rfw_req_tx(qp);

		if (r <= 0)
			break;
		n++;
		/* the rest of a long message, checked once (docs/perf.md "(eleventh)"), and the
		   SEND and WRITE messages after it that start with nothing to weigh */
		if (n < max && qp->type == RFW_QPT_RC)
			n += rfw_req_tx_more(qp, max - n);
	}
	return n;
}

unsigned rfw_qp_tx_burst(struct rfw_qp *qp, unsigned max, uint64_t now_ns)
{
	unsigned n = rfw_qp_tx_responses(qp, max, now_ns);

	/* A response the host had no buffer for stops the burst: requests wait behind it. */
	if (n < max && rfw_qp_has_responses(qp))
		return n;
	return n + rfw_qp_tx_requests(qp, max - n, now_ns);
}

uint64_t rfw_qp_next_deadline(const struct rfw_qp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->state != RFW_QPS_RTS && qp->state != RFW_QPS_SQD)
		return d;
	if (qp->req.rnr_wait)
		d = qp->req.rnr_deadline;
	if (qp->comp.timer && qp->comp.timer < d)
		d = qp->comp.timer;
	if (qp->comp.probe_at && qp->comp.probe_at < d)
		d = qp->comp.probe_at;
	return d;
}

void rfw_qp_timer(struct rfw_qp *qp, uint64_t now_ns)
{
	qp->now = now_ns;
	if (!rfw_qp_sq_active(qp))
		return;
	if (qp->req.rnr_wait && now_ns >= qp->req.rnr_deadline) {
		/* IBA 9.7.5.2.8: after the RNR timer, resend from the NAKed PSN. */
		if (qp->sr) {
			rfw_sr_rnr_expired(qp);
		} else {
			qp->req.rnr_wait = false;
			rfw_req_rewind(qp, qp->req.rnr_psn);
		}
	}
	if (qp->comp.timer && now_ns >= qp->comp.timer)
		rfw_comp_timer(qp);
	if (qp->comp.probe_at && now_ns >= qp->comp.probe_at)
		rfw_comp_probe(qp);
}
