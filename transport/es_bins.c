/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA Estats' histograms of one QP (docs/estats.md): two windows (the current interval and
 * the last complete one) x (operation, status) slots x stages, each a log-linear histogram.
 * One thread at a time bins into a struct rfw_es_bins: the thread that polls the QP's CQ
 * (in-place binning, the default), or a host's own binning thread fed by the records its
 * rfw_dev_estats_sink receives.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/estats.h"

struct es_slot {
	bool used;
	uint8_t op, st;
	struct rfw_es_hist h[2][RFW_ES__STAGES]; /* [window][stage] */
};

struct rfw_es_bins {
	uint64_t interval_ns;
	uint64_t win_start;
	uint64_t win_end; /* win_start + interval_ns once set, 0 before: one compare per record */
	bool win_set, have_last;
	uint8_t cur; /* index of the current window in slot.h */
	uint64_t recorded, unrecorded;
	struct es_slot slot[RFW_ES_SLOTS];
};

/* Stage -> (from, to) timestamp indexes (0 = T1). */
static const uint8_t stage_from[RFW_ES__STAGES] = {0, 0, 0, 1, 2, 3, 4};
static const uint8_t stage_to[RFW_ES__STAGES] = {5, 4, 1, 2, 3, 4, 5};

struct rfw_es_bins *rfw_es_bins_create(uint64_t interval_ns)
{
	struct rfw_es_bins *b;

	if (interval_ns == 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (b != NULL)
		b->interval_ns = interval_ns;
	return b;
}

void rfw_es_bins_destroy(struct rfw_es_bins *b)
{
	free(b);
}

/* Move to the interval holding @now: the current window becomes the last (or both clear when
 * a whole interval passed with nothing recorded). Callers test now >= win_end first. */
static void bins_rotate(struct rfw_es_bins *b, uint64_t now)
{
	uint64_t n;

	if (!b->win_set) {
		b->win_start = now;
		b->win_end = now + b->interval_ns;
		b->win_set = true;
		return;
	}
	if (now < b->win_end)
		return;
	n = (now - b->win_start) / b->interval_ns;
	b->win_start += n * b->interval_ns;
	b->win_end = b->win_start + b->interval_ns;
	b->cur ^= 1;
	for (unsigned i = 0; i < RFW_ES_SLOTS; i++) {
		memset(b->slot[i].h[b->cur], 0, sizeof(b->slot[i].h[b->cur]));
		if (n > 1)
			memset(b->slot[i].h[b->cur ^ 1], 0, sizeof(b->slot[i].h[0]));
	}
	b->have_last = n == 1;
}

static struct es_slot *bins_slot(struct rfw_es_bins *b, uint8_t op, uint8_t st)
{
	for (unsigned i = 0; i < RFW_ES_SLOTS; i++) {
		struct es_slot *s = &b->slot[i];

		if (!s->used) {
			s->used = true;
			s->op = op;
			s->st = st;
			return s;
		}
		if (s->op == op && s->st == st)
			return s;
	}
	return NULL;
}

/* @b - @a, at least 0: a host may read T1 from a fresher clock than the poll time of T2, and
 * every stage counts every WQE. */
static inline uint64_t since(uint64_t b, uint64_t a)
{
	return b > a ? b - a : 0;
}

/* Every stage of a WQE with all six timestamps (a polled completion: the usual case), in a
 * straight line instead of the table walk below. Same stages as stage_from / stage_to. */
static inline void add_all(struct rfw_es_hist *h, const uint64_t t[6])
{
	/* Locals first: the histogram stores could alias t[] and force reloads otherwise. */
	uint64_t t1 = t[0], t2 = t[1], t3 = t[2], t4 = t[3], t5 = t[4], t6 = t[5];

	rfw_es_hist_add(&h[RFW_ES_t6_t1], since(t6, t1));
	rfw_es_hist_add(&h[RFW_ES_t5_t1], since(t5, t1));
	rfw_es_hist_add(&h[RFW_ES_t2_t1], since(t2, t1));
	rfw_es_hist_add(&h[RFW_ES_t3_t2], since(t3, t2));
	rfw_es_hist_add(&h[RFW_ES_t4_t3], since(t4, t3));
	rfw_es_hist_add(&h[RFW_ES_t5_t4], since(t5, t4));
	rfw_es_hist_add(&h[RFW_ES_t6_t5], since(t6, t5));
}

/* A WQE with some timestamps missing (not polled, flushed): the stages it has both ends of. */
static void add_some(struct rfw_es_hist *h, const struct rfw_es_rec *r)
{
	for (unsigned k = 0; k < RFW_ES__STAGES; k++) {
		unsigned a = stage_from[k], z = stage_to[k];

		if ((r->have >> a & 1) && (r->have >> z & 1))
			rfw_es_hist_add(&h[k], since(r->t[z], r->t[a]));
	}
}

bool rfw_es_bins_add(struct rfw_es_bins *b, const struct rfw_es_rec *r, uint64_t now)
{
	struct es_slot *s;

	if (now >= b->win_end)
		bins_rotate(b, now);
	s = bins_slot(b, r->op, r->st);
	if (s == NULL) {
		b->unrecorded++;
		return false;
	}
	b->recorded++;
	if (r->have == 63)
		add_all(s->h[b->cur], r->t);
	else
		add_some(s->h[b->cur], r);
	return true;
}

int rfw_es_bins_rows(struct rfw_es_bins *b, uint32_t qpn, enum rfw_es_window window,
                     uint64_t now_ns, struct rfw_es_row *rows, int max)
{
	unsigned w;
	int n = 0;

	if (b->win_set && now_ns >= b->win_end)
		bins_rotate(b, now_ns);
	if (window == RFW_ES_LAST && !b->have_last)
		return 0;
	w = window == RFW_ES_LAST ? b->cur ^ 1u : b->cur;
	for (unsigned i = 0; i < RFW_ES_SLOTS && n < max; i++) {
		const struct es_slot *s = &b->slot[i];

		for (unsigned k = 0; s->used && k < RFW_ES__STAGES && n < max; k++) {
			const struct rfw_es_hist *h = &s->h[w][k];

			if (h->count == 0)
				continue;
			rows[n++] = (struct rfw_es_row){
			    .qpn = qpn,
			    .op = s->op,
			    .status = s->st,
			    .stage = (uint8_t)k,
			    .count = h->count,
			    .p50 = rfw_es_hist_quantile(h, 0.5),
			    .p99 = rfw_es_hist_quantile(h, 0.99),
			    .p999 = rfw_es_hist_quantile(h, 0.999),
			    .max = h->max,
			};
		}
	}
	return n;
}

void rfw_es_bins_info(const struct rfw_es_bins *b, struct rfw_es_info *info)
{
	info->interval_ns = b->interval_ns;
	info->window_start_ns = b->win_start;
	info->have_last = b->have_last;
	info->recorded = b->recorded;
	info->unrecorded = b->unrecorded;
}
