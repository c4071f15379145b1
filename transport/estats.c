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
	es->ring = qp->dev->es_ring != NULL;
	es->sink = es->ring ? NULL : qp->dev->es_sink;
	es->sink_ctx = es->ring ? NULL : qp->dev->es_sink_ctx;
	if (es->sink == NULL && !es->ring)
		es->bins = rfw_es_bins_create(es->interval_ns);
	if (es->sink == NULL && !es->ring && es->bins == NULL) {
		free(es);
		return -ENOMEM;
	}
	es->threshold_ns = qp->dev->attr.estats_threshold_ns;
	es->trig_armed = true;
	es->rx_now = UINT64_MAX;
	es->slot = qp->qpn - qp->dev->attr.qpn_base;
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

int rfw_dev_estats_ring(struct rfw_dev *dev, struct rfw_es_ring *ring)
{
	if (dev == NULL)
		return -EINVAL;
	dev->es_ring = ring;
	return 0;
}

/* The trigger's interval: the same boundaries as the histograms' windows (both start at the
 * first record), re-armed in each. Callers test now >= twin_end first. */
void rfw_es_trig_window(struct rfw_es_qp *es, uint64_t now)
{
	if (es->twin_end == 0) {
		es->twin_end = now + es->interval_ns;
		return;
	}
	es->twin_end += ((now - es->twin_end) / es->interval_ns + 1) * es->interval_ns;
	es->trig_armed = true;
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

/* Hand @c on to where the QP's records go when it does not bin them: the device's ring (none
 * left: dropped), or the sink. */
static void es_hand_on(struct rfw_qp *qp, const struct rfw_es_rec *c)
{
	struct rfw_es_qp *es = qp->es;

	if (!es->ring)
		es->sink(es->sink_ctx, c);
	else if (qp->dev->es_ring != NULL)
		rfw_es_ring_push_rec(qp->dev->es_ring, c, qp->qpn - qp->dev->attr.qpn_base);
	es->handed++;
}

/* Whether the trigger may fire now: a threshold, armed, nothing pending. */
static inline bool es_trig_open(const struct rfw_es_qp *es)
{
	return es->threshold_ns && es->trig_armed && !es->trig_pending;
}

/* Record one WQE's timestamps (@have: bit i set when t[i] is known): every record but the
 * packed ring's fast paths (es_polled_one, es_burst_run). */
static void es_record(struct rfw_qp *qp, const struct rfw_es_rec *c, uint64_t now)
{
	struct rfw_es_qp *es = qp->es;

	if (now >= es->twin_end)
		rfw_es_trig_window(es, now);
	if (es->bins == NULL)
		es_hand_on(qp, c);
	else if (!rfw_es_bins_add(es->bins, c, now))
		return; /* no (op, status) slot left: the bins count it unrecorded */
	if (es_trig_open(es))
		es_trigger(es, c, now);
}

static inline uint8_t es_op_of(enum rfw_wr_opcode op)
{
	return (unsigned)op < RFW_WR__COUNT ? RFW_ES_META_OP(rfw_es_op_meta[op]) : RFW_ES_OP_LOCAL;
}

/* T2..T4 of @w completing now, a time not known taken as T1 (so its offset packs as 0), and the
 * have bits of T1..T5 (T4 only when the WQE was sent whole, es_t4). */
static unsigned es_times(const struct rfw_qp *qp, const struct rfw_swqe *w, uint64_t *t2,
                         uint64_t *t3, uint64_t *t4)
{
	unsigned have = w->es.have | 16u;

	*t2 = (have & 2) ? w->es.t[1] : w->es.t[0];
	*t3 = (have & 4) ? w->es.t[2] : w->es.t[0];
	*t4 = w->es.t[0];
	if ((have & 4) && rfw_es_t4(qp->es, qp->now, t4))
		have |= 8;
	return have;
}

/* The whole record of @w completing without a CQE at qp->now (T5), T6 unknown (the times not
 * known are 0: a sink copies records whole), recorded (@trig_only: only the trigger tested).
 * Out of line: its record on the stack would cost its callers' usual case a frame. */
static __attribute__((noinline)) void es_nocqe_rec(struct rfw_qp *qp, const struct rfw_swqe *w,
                                                   enum rfw_wc_status st, uint64_t t4,
                                                   unsigned have, bool trig_only)
{
	const struct rfw_es_wts *ts = &w->es;
	struct rfw_es_rec r = {
	    .t = {ts->t[0], (have & 2) ? ts->t[1] : 0, (have & 4) ? ts->t[2] : 0,
	          (have & 8) ? t4 : 0, qp->now},
	    .wr_id = w->wr.wr_id,
	    .qpn = qp->qpn,
	    .have = (uint8_t)have,
	    .op = es_op_of(w->wr.opcode),
	    .st = rfw_es_status_of(st),
	};

	if (trig_only)
		es_trigger(qp->es, &r, qp->now);
	else
		es_record(qp, &r, qp->now);
}

/*
 * A WQE without a CQE (unsignalled) completes: recorded now (T5), T6 unknown. A record for the
 * device's ring goes there packed in place, as a polled CQE's does, the whole record only
 * built for the trigger; other records whole (es_nocqe_rec).
 */
void rfw_es_complete_nocqe(struct rfw_qp *qp, const struct rfw_swqe *w, enum rfw_wc_status st)
{
	struct rfw_es_qp *es = qp->es;
	struct rfw_es_ring *ring = qp->dev->es_ring;
	uint64_t t2, t3, t4, now = qp->now;
	unsigned have = es_times(qp, w, &t2, &t3, &t4);

	if (es->ring && ring != NULL) {
		if (now >= es->twin_end)
			rfw_es_trig_window(es, now);
		if (rfw_es_ring_push_t5(ring, w->es.t[0], t2, t3, t4, now,
		                        RFW_ES_META(es->slot, have, es_op_of(w->wr.opcode),
		                                    rfw_es_status_of(st)))) {
			es->handed++;
			if (es_trig_open(es))
				es_nocqe_rec(qp, w, st, t4, have, true);
			return;
		}
	}
	es_nocqe_rec(qp, w, st, t4, have, false);
}

/* rfw_es_complete_cqe's side entry of a WQE not sent whole (a flush, a local error): out of
 * line, as it is rare. */
void rfw_es_cqe_partial(struct rfw_qp *qp, const struct rfw_swqe *w, enum rfw_wc_status st,
                        uint32_t i)
{
	struct rfw_cq *cq = qp->send_cq;
	uint64_t t2, t3, t4;
	unsigned have = es_times(qp, w, &t2, &t3, &t4) | 32u;

	rfw_es_cqe_pack(
	    &cq->es[i], &cq->es_wide[i], w->es.t[0], t2, t3, t4, qp->now,
	    RFW_ES_META(qp->es->slot, have, es_op_of(w->wr.opcode), rfw_es_status_of(st)));
}

/* The record of a polled CQ side entry, whole, and where it goes when it is not a narrow one
 * for the device's ring (es_polled_one): bins in place, a sink, or the ring, two slots. */
static void es_polled_slow(struct rfw_cq *cq, uint32_t i, uint64_t t6, const struct rfw_wc *wc,
                           struct rfw_qp *qp, uint32_t meta)
{
	struct rfw_es_rec r;

	rfw_es_cqe_unpack(&r, &cq->es[i], meta, &cq->es_wide[i], t6, qp->qpn, wc->wr_id);
	es_record(qp, &r, t6);
}

/* The trigger fires for a record es_polled_one or a run pushed: its times and wr_id, whole. */
static void es_polled_trig(struct rfw_cq *cq, uint32_t i, uint64_t t6, const struct rfw_wc *wc,
                           struct rfw_qp *qp, uint32_t meta)
{
	struct rfw_es_rec r;

	rfw_es_cqe_unpack(&r, &cq->es[i], meta, &cq->es_wide[i], t6, qp->qpn, wc->wr_id);
	es_trigger(qp->es, &r, t6);
}

/* A record polled at @t6, handed to the device's ring: the trigger's window moved and its
 * threshold tested, from what is at hand (its whole record only when it fires). */
static __attribute__((noinline)) void es_ring_trig(struct rfw_cq *cq, uint32_t i, uint64_t t6,
                                                   const struct rfw_wc *wc, struct rfw_qp *qp,
                                                   uint32_t meta)
{
	struct rfw_es_qp *es = qp->es;
	uint64_t t1 = cq->es[i].t1;

	if (t6 >= es->twin_end)
		rfw_es_trig_window(es, t6);
	if (es_trig_open(es) && t6 > t1 && t6 - t1 > es->threshold_ns)
		es_polled_trig(cq, i, t6, wc, qp, meta);
}

/*
 * The CQE at ring position @idx, copied to @wc, was polled at @now: its record, alone (a run's
 * way, es_burst_run, is the usual one). A narrow record of a QP whose records go to the
 * device's ring is the side entry copied into the ring with T6 and the slot added.
 */
static void es_polled_one(struct rfw_cq *cq, uint32_t idx, uint64_t now, const struct rfw_wc *wc)
{
	uint32_t i = idx & cq->mask;
	struct rfw_es_crec *e = &cq->es[i];
	uint32_t meta = e->meta, slot = wc->qp_num - cq->dev->attr.qpn_base;
	struct rfw_es_ring *ring = cq->dev->es_ring;
	struct rfw_es_qp *es;
	struct rfw_qp *qp;
	uint64_t t5, t6;

	if (!RFW_ES_META_HAVE(meta))
		return; /* a receive completion, or none kept */
	e->meta = 0;
	/* The CQE names its QP: qp_num is its QPN, slot + qpn_base (QP1's too). */
	qp = slot < cq->dev->attr.max_qp ? cq->dev->qps[slot] : NULL;
	if (qp == NULL || (es = qp->es) == NULL)
		return;
	t5 = rfw_es_cqe_t5(e, meta, &cq->es_wide[i]);
	t6 = now > t5 ? now : t5;
	if (!es->ring || ring == NULL || !rfw_es_cqe_to_ring(ring, e, meta, t6, slot)) {
		es_polled_slow(cq, i, t6, wc, qp, meta);
		return;
	}
	es->handed++;
	es_ring_trig(cq, i, t6, wc, qp, meta);
}

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Above this T6 - T1, a record fires the trigger (UINT64_MAX: it cannot now). */
static inline uint64_t es_trig_lim(const struct rfw_es_qp *es)
{
	return es_trig_open(es) ? es->threshold_ns : UINT64_MAX;
}

/* What a run of one QP's polled records has to test each against, and where it ended. */
struct es_run {
	uint64_t now, twin_end, lim; /* the poll's time; the trigger's window end and threshold */
	uint32_t slot;               /* the run's QP */
	uint32_t cross;              /* the meta of the record that crossed; 0: none did */
	uint64_t t6;                 /* the last record's T6 */
};

/*
 * @n side entries from @e, none across the end of the CQ's array, into the ring from *@cp, with
 * room for @n there before its end: each record of the run's QP goes as it is, T6's offset
 * added (its meta already has the slot and T6's bit, rfw_es_complete_cqe), as
 * rfw_es_cqe_to_ring does. Pointers, not masked positions, so the loop's values stay in
 * registers. Returns the entries consumed: fewer than @n when the run ends (another QP's
 * record, a wide one, or a crossing, which is consumed); *@cp moves past the records written.
 */
static inline uint32_t es_run_seg(struct es_run *r, struct rfw_es_crec *e, uint32_t n,
                                  struct rfw_es_crec **cp)
{
	struct rfw_es_crec *const e0 = e, *const end = e + n, *c = *cp;
	const uint64_t now = r->now, twin_end = r->twin_end, lim = r->lim;
	const uint32_t slot = r->slot;

	for (; e != end; e++) {
		uint32_t meta = e->meta;
		uint64_t t1, t5, t6;
		int64_t d6;

		/* A receive completion (any QP's) has no record: nothing to order. Another QP's
		 * record starts its own run; a wide one goes alone (es_polled_one). */
		if (!RFW_ES_META_HAVE(meta))
			continue;
		if ((meta & ((RFW_ES_MAX_SLOTS - 1) | RFW_ES_WIDE << 20)) != slot)
			break;
		t1 = e->t1;
		t5 = t1 + (uint64_t)(int64_t)e->d[3];
		t6 = now > t5 ? now : t5;
		d6 = (int64_t)(t6 - t1);
		if (((uint64_t)d6 + 0x80000000u) >> 32)
			break; /* T6's offset beyond int32: es_polled_one's */
		rfw_es_crec_copy(c++, e, (int32_t)d6, meta);
		e->meta = 0;
		/* The trigger's window or threshold crossed (one test for both: a negative d6
		 * passes it too, es_ring_trig tests exactly): the run ends after this record. */
		if (__builtin_expect((t6 >= twin_end) | ((uint64_t)d6 > lim), 0)) {
			r->cross = meta;
			r->t6 = t6;
			e++;
			break;
		}
	}
	*cp = c;
	return (uint32_t)(e - e0);
}

/*
 * The polled CQEs @j.. of one QP (wc[j]'s) whose records take the usual way: narrow, to the
 * device's ring, in pieces that wrap neither the CQ's side array nor the ring (es_run_seg), the
 * QP looked up once and the ring published once for the run. The run is told by the records'
 * own slots, so the loop reads only the side entries. Returns the next CQE to look at; a CQE
 * that cannot start a run goes through es_polled_one alone. Not inlined: inlined, the caller's
 * values took the loop's registers.
 */
static __attribute__((noinline)) int es_burst_run(struct rfw_cq *cq, struct rfw_es_ring *ring,
                                                  uint32_t idx, int j, int n, uint64_t now,
                                                  const struct rfw_wc *wc)
{
	const struct rfw_dev *dev = cq->dev;
	struct es_run r = {.now = now, .slot = wc[j].qp_num - dev->attr.qpn_base};
	struct rfw_qp *qp = r.slot < dev->attr.max_qp ? dev->qps[r.slot] : NULL;
	struct rfw_es_qp *es = qp != NULL ? qp->es : NULL;
	const uint32_t cmask = cq->mask, rmask = ring->mask, i0 = idx + (uint32_t)j;
	uint32_t i = i0, w = ring->prod, left;

	if (es == NULL || !es->ring)
		goto one;
	/* No more CQEs than free slots: each takes at most one. */
	left = min_u32(rfw_es_ring_free(ring, (uint32_t)(n - j)), (uint32_t)(n - j));
	r.twin_end = es->twin_end;
	r.lim = es_trig_lim(es);
	while (left != 0) {
		uint32_t seg =
		    min_u32(min_u32(left, cmask + 1 - (i & cmask)), rmask + 1 - (w & rmask));
		struct rfw_es_crec *const c0 = &ring->q[w & rmask], *c = c0;
		uint32_t got = es_run_seg(&r, &cq->es[i & cmask], seg, &c);

		rfw_es_prefetch_run(c0, c, &ring->q[rmask + 1]);
		i += got;
		w += (uint32_t)(c - c0);
		left -= got;
		if (got != seg || r.cross)
			break;
	}
	if (w != ring->prod) {
		es->handed += w - ring->prod;
		rfw_es_ring_publish(ring, w - ring->prod);
	}
	if (r.cross)
		es_ring_trig(cq, (i - 1) & cmask, r.t6, &wc[i - 1 - idx], qp, r.cross);
	if (i != i0)
		return (int)(i - idx);
one:
	es_polled_one(cq, i, now, &wc[i - idx]);
	return (int)(i - idx) + 1;
}

/*
 * The records of @n CQEs polled at @now, ring positions @idx.., copied to @wc: what
 * es_polled_one does for each, in one call. Runs of one QP's CQEs whose records go to the
 * device's ring are written together (es_burst_run); the ring keeps the poll's order.
 */
void rfw_es_polled_burst(struct rfw_cq *cq, uint32_t idx, int n, uint64_t now,
                         const struct rfw_wc *wc)
{
	struct rfw_es_ring *ring = cq->dev->es_ring;
	int j = 0;

	if (ring == NULL) {
		for (; j < n; j++)
			es_polled_one(cq, idx + (uint32_t)j, now, &wc[j]);
		return;
	}
	while (j < n)
		j = es_burst_run(cq, ring, idx, j, n, now, wc);
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
		rfw_es_trig_window(es, now_ns);
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
