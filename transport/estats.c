/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA Estats: timestamps, log-linear histograms, windows, trigger (docs/estats.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rfw_int.h"

static const char *const stage_names[] = {
#define RFW_ES_STAGE_NAME(name, doc) #name,
    RFW_FOREACH_ES_STAGE(RFW_ES_STAGE_NAME)
#undef RFW_ES_STAGE_NAME
};
static const char *const op_names[RFW_ES__OPS] = {"send", "write", "read", "atomic", "local"};
static const char *const status_names[RFW_ES__STATUSES] = {"success", "flush", "error"};

const char *rfw_es_stage_name(enum rfw_es_stage s)
{
	return (unsigned)s < RFW_ES__STAGES ? stage_names[s] : "?";
}
const char *rfw_es_op_name(enum rfw_es_op op)
{
	return (unsigned)op < RFW_ES__OPS ? op_names[op] : "?";
}
const char *rfw_es_status_name(enum rfw_es_status st)
{
	return (unsigned)st < RFW_ES__STATUSES ? status_names[st] : "?";
}

uint64_t rfw_es_bucket_lo(unsigned idx)
{
	unsigned e, sub;

	if (idx < RFW_ES_SUB)
		return idx;
	e = idx / RFW_ES_SUB + RFW_ES_SUB_BITS - 1;
	sub = idx % RFW_ES_SUB;
	return (uint64_t)(RFW_ES_SUB + sub) << (e - RFW_ES_SUB_BITS);
}

uint64_t rfw_es_hist_quantile(const struct rfw_es_hist *h, double q)
{
	uint64_t rank, cum = 0;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < RFW_ES_BUCKETS; i++) {
		cum += h->b[i];
		if (cum >= rank) {
			uint64_t hi = i + 1 < RFW_ES_BUCKETS ? rfw_es_bucket_lo(i + 1) - 1 : h->max;

			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}

/* ---- per-QP state ---- */

int rfw_es_qp_alloc(struct rfw_qp *qp)
{
	struct rfw_es_qp *es = calloc(1, sizeof(*es));

	if (es == NULL)
		return -ENOMEM;
	es->interval_ns = qp->dev->attr.estats_interval_ns;
	es->sink = qp->dev->es_sink;
	es->sink_ctx = qp->dev->es_sink_ctx;
	if (es->sink == NULL)
		es->bins = rfw_es_bins_create(es->interval_ns);
	if (es->sink == NULL && es->bins == NULL) {
		free(es);
		return -ENOMEM;
	}
	es->threshold_ns = qp->dev->attr.estats_threshold_ns;
	es->trig_armed = true;
	qp->es = es;
	return 0;
}

void rfw_es_qp_free(struct rfw_qp *qp)
{
	if (qp->es == NULL)
		return;
	rfw_es_bins_destroy(qp->es->bins);
	free(qp->es);
	qp->es = NULL;
}

int rfw_dev_estats_sink(struct rfw_dev *dev, rfw_es_sink_fn fn, void *ctx)
{
	if (dev == NULL)
		return -EINVAL;
	dev->es_sink = fn;
	dev->es_sink_ctx = fn != NULL ? ctx : NULL;
	return 0;
}

/* The trigger's interval: the same boundaries as the histograms' windows (both start at the
 * first record), re-armed in each. Callers test now >= twin_end first. */
static void es_trig_window(struct rfw_es_qp *es, uint64_t now)
{
	if (es->twin_end == 0) {
		es->twin_end = now + es->interval_ns;
		return;
	}
	es->twin_end += ((now - es->twin_end) / es->interval_ns + 1) * es->interval_ns;
	es->trig_armed = true;
}

static uint8_t es_op_of(enum rfw_wr_opcode op)
{
	switch (op) {
	case RFW_WR_RDMA_WRITE:
	case RFW_WR_RDMA_WRITE_WITH_IMM:
		return RFW_ES_OP_WRITE;
	case RFW_WR_SEND:
	case RFW_WR_SEND_WITH_IMM:
	case RFW_WR_SEND_WITH_INV:
		return RFW_ES_OP_SEND;
	case RFW_WR_RDMA_READ:
		return RFW_ES_OP_READ;
	case RFW_WR_ATOMIC_CMP_AND_SWP:
	case RFW_WR_ATOMIC_FETCH_AND_ADD:
		return RFW_ES_OP_ATOMIC;
	default:
		return RFW_ES_OP_LOCAL;
	}
}

static uint8_t es_status_of(enum rfw_wc_status st)
{
	return st == RFW_WC_SUCCESS        ? RFW_ES_SUCCESS
	       : st == RFW_WC_WR_FLUSH_ERR ? RFW_ES_FLUSH
	                                   : RFW_ES_ERROR;
}

/* The trigger: the first WQE of an interval whose T6-T1 (T5-T1 without a CQE) is above the
 * threshold. Only a flag and a copy here; the host dumps from its slow path. */
static void es_trigger(struct rfw_es_qp *es, const struct rfw_es_rec *c, uint64_t now)
{
	unsigned end = (c->have >> 5 & 1) ? 5 : 4;
	struct rfw_es_trigger *tr = &es->trig;

	if (!(c->have & 1) || !(c->have >> end & 1) || c->t[end] < c->t[0] ||
	    c->t[end] - c->t[0] <= es->threshold_ns)
		return;
	tr->at_ns = now;
	tr->latency_ns = c->t[end] - c->t[0];
	tr->stage = end == 5 ? RFW_ES_t6_t1 : RFW_ES_t5_t1;
	tr->op = c->op;
	tr->status = c->st;
	tr->wr_id = c->wr_id;
	for (unsigned k = 0; k < 6; k++)
		tr->t[k] = (c->have >> k & 1) ? c->t[k] : 0;
	es->trig_pending = true;
	es->trig_armed = false; /* once per interval */
	es->triggers++;
}

/* Record one WQE's timestamps (@have: bit i set when t[i] is known). Inline: one call per
 * completion, from rfw_es_polled (the usual case) or rfw_es_complete. */
static inline void es_record(struct rfw_qp *qp, const struct rfw_es_rec *c, uint64_t now)
{
	struct rfw_es_qp *es = qp->es;

	if (now >= es->twin_end)
		es_trig_window(es, now);
	if (es->bins == NULL) {
		es->sink(es->sink_ctx, c);
		es->handed++;
	} else if (!rfw_es_bins_add(es->bins, c, now)) {
		return; /* no (op, status) slot left: the bins count it unrecorded */
	}
	if (es->threshold_ns && es->trig_armed && !es->trig_pending)
		es_trigger(es, c, now);
}

void rfw_es_complete(struct rfw_qp *qp, const struct rfw_swqe *w, enum rfw_wc_status st, bool cqe)
{
	struct rfw_es_qp *es = qp->es;
	const struct rfw_es_wts *ts = &w->es;
	struct rfw_cq *cq = qp->send_cq;
	struct rfw_es_rec tmp, *c = &tmp;

	/* A CQE's record is written straight into its ring entry (recorded when polled: T6);
	 * one built here has its unknown T4 and T6 zeroed, since a sink copies records whole. */
	if (cqe && cq->es != NULL && cq->prod - cq->cons < cq->size)
		c = &cq->es[cq->prod & cq->mask];
	else
		tmp.t[3] = tmp.t[5] = 0;
	c->t[0] = ts->t[0];
	c->t[1] = ts->t[1];
	c->t[2] = ts->t[2];
	c->have = ts->have;
	/* T4: the RX time of the packet being processed, if this completion comes from one. */
	if (es->rx_now == qp->now && es->rx_valid && (c->have & 4)) {
		c->t[3] = es->rx_ts;
		c->have |= 8;
	}
	c->t[4] = qp->now;
	c->have |= 16;
	c->op = es_op_of(w->wr.opcode);
	c->st = es_status_of(st);
	c->wr_id = w->wr.wr_id;
	c->qpn = qp->qpn;
	if (c == &tmp && !cqe)
		es_record(qp, c, qp->now);
}

void rfw_es_polled(struct rfw_cq *cq, uint32_t idx, uint64_t now)
{
	struct rfw_es_rec *c = &cq->es[idx & cq->mask];
	struct rfw_qp *qp;

	if (!c->have)
		return; /* a receive completion, or posted before Estats state existed */
	qp = rfw_dev_qp_at(cq->dev, c->qpn);
	if (qp != NULL && qp->es != NULL) {
		c->t[5] = now > c->t[4] ? now : c->t[4];
		c->have |= 32;
		es_record(qp, c, now > c->t[4] ? now : c->t[4]);
	}
	c->have = 0;
}

int rfw_qp_estats_info(const struct rfw_qp *qp, struct rfw_es_info *info)
{
	const struct rfw_es_qp *es;

	if (qp == NULL || info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	es = qp->es;
	if (es == NULL)
		return 0;
	info->enabled = true;
	if (es->bins != NULL) { /* window, recorded and unrecorded: the bins' own */
		rfw_es_bins_info(es->bins, info);
	} else {
		info->window_start_ns = es->twin_end ? es->twin_end - es->interval_ns : 0;
		info->recorded = es->handed;
	}
	info->interval_ns = es->interval_ns;
	info->threshold_ns = es->threshold_ns;
	info->triggers = es->triggers;
	return 0;
}

int rfw_qp_estats_rows(struct rfw_qp *qp, enum rfw_es_window window, uint64_t now_ns,
                       struct rfw_es_row *rows, int max)
{
	struct rfw_es_qp *es;

	if (qp == NULL || (max > 0 && rows == NULL))
		return -EINVAL;
	es = qp->es;
	if (es == NULL)
		return 0;
	/* A new interval re-arms the trigger even when no WQE completes in it. */
	if (es->twin_end != 0 && now_ns >= es->twin_end)
		es_trig_window(es, now_ns);
	return es->bins != NULL ? rfw_es_bins_rows(es->bins, qp->qpn, window, now_ns, rows, max)
	                        : 0;
}

bool rfw_qp_estats_trigger(struct rfw_qp *qp, struct rfw_es_trigger *tr)
{
	if (qp == NULL || qp->es == NULL || !qp->es->trig_pending)
		return false;
	if (tr != NULL)
		*tr = qp->es->trig;
	qp->es->trig_pending = false;
	return true;
}

void rfw_dev_clock(struct rfw_dev *dev, uint64_t now_ns)
{
	dev->now = now_ns;
}

int rfw_qp_estats_state(const struct rfw_qp *qp, struct rfw_es_qp_state *st,
                        struct rfw_es_wqe *wqes, int max)
{
	int n = 0;

	if (qp == NULL || st == NULL || (max > 0 && wqes == NULL))
		return -EINVAL;
	*st = (struct rfw_es_qp_state){
	    .next_psn = qp->req.psn,
	    .acked_psn = qp->comp.psn,
	    .high_psn = qp->req.high_psn,
	    .epsn = qp->resp.psn,
	    .msn = qp->resp.msn,
	    .sq_posted = qp->sq_prod,
	    .sq_outstanding = qp->sq_prod - qp->comp.idx,
	    .retry_left = qp->comp.retry_left,
	    .rnr_left = qp->comp.rnr_left,
	    .retrying = qp->comp.retrying,
	    .rnr_wait = qp->req.rnr_wait,
	    .ack_timer_ns = qp->comp.timer,
	};
	for (uint32_t i = qp->comp.idx; i != qp->sq_prod && n < max; i++, n++) {
		const struct rfw_swqe *w = rfw_sq_at(qp, i);
		struct rfw_es_wqe *o = &wqes[n];

		*o = (struct rfw_es_wqe){
		    .wr_id = w->wr.wr_id,
		    .op = es_op_of(w->wr.opcode),
		    .state = w->state,
		    .psn_valid = w->psn_valid,
		    .first_psn = w->first_psn,
		    .last_psn = w->last_psn,
		    .length = w->length,
		};
		if (qp->es != NULL)
			for (unsigned k = 0; k < 3; k++)
				if (w->es.have >> k & 1)
					o->t[k] = w->es.t[k];
	}
	return n;
}
