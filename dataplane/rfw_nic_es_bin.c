/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats' histograms of a DPDK NIC, binned off the thread that polls (docs/estats.md "On the
 * DPDK NIC"). The transport hands every recorded WQE to nic_es_sink (rfw_dev_estats_sink) on
 * the thread that polls the CQ; the sink copies it into a single-producer single-consumer ring
 * (64 bytes, no lock, no allocation) or counts it lost when the ring is full. The NIC's Estats
 * thread (rfw_nic_estats.c) drains the ring into one struct rfw_es_bins per QP slot and
 * publishes the rows telemetry reads. Markers in the same ring keep the two threads in order:
 * a QP attached (its slot's histograms start afresh), detached (its rows are no longer
 * published), and a tick carrying the poll thread's clock (publish now).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_branch_prediction.h>
#include <rte_pause.h>

#include "dataplane/rfw_log.h"
#include "dataplane/rfw_nic_es_rec.h"
#include "dataplane/rfw_nic_int.h"

/* How long attach and detach wait for room in a full ring before counting their marker lost. */
#define NIC_ES_MARK_WAIT_MS 100

int nic_es_bin_init(struct nic_es_binner *b, uint32_t max_qp)
{
	if (max_qp > NIC_ES_MAX_SLOTS) {
		RFW_LOG(ERR, "Estats: %u QPs on one NIC, at most %u binned", max_qp,
		        NIC_ES_MAX_SLOTS);
		return -E2BIG;
	}
	/* Aligned: two 32-byte records to a cache line, never one across two. */
	b->q = aligned_alloc(64, NIC_ES_RECS * sizeof(*b->q));
	b->bins = calloc(max_qp, sizeof(*b->bins));
	b->attached = calloc(max_qp, sizeof(*b->attached));
	b->max_qp = max_qp;
	return b->q != NULL && b->bins != NULL && b->attached != NULL ? 0 : -ENOMEM;
}

void nic_es_bin_free(struct nic_es_binner *b)
{
	for (uint32_t i = 0; b->bins != NULL && i < b->max_qp; i++)
		rfw_es_bins_destroy(b->bins[i]);
	free(b->bins);
	free(b->attached);
	free(b->q);
	memset(b, 0, sizeof(*b));
}

/* Fetch a line for writing. The baseline x86-64 target turns __builtin_prefetch into a read
 * prefetch, which leaves the line shared and the store still waiting for ownership. */
static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* Room for @n slots (1, or 2 for a wide record): the consumer's index is read only when the
 * cached copy says the ring is full. */
static inline bool room(struct nic_es_binner *b, uint32_t n)
{
	if (b->prod - b->cons_seen > NIC_ES_RECS - n) {
		b->cons_seen = __atomic_load_n(&b->cons, __ATOMIC_ACQUIRE);
		if (b->prod - b->cons_seen > NIC_ES_RECS - n)
			return false;
	}
	return true;
}

/* Publish @n slots written at prod. Slots were last read by the Estats thread on another core:
 * ask for one a few lines ahead now, so that fetch overlaps other work instead of stalling a
 * later record. */
static inline void publish_slots(struct nic_es_binner *b, uint32_t n)
{
	__atomic_store_n(&b->prod, b->prod + n, __ATOMIC_RELEASE);
	prefetch_w(&b->q[(b->prod + 16) % NIC_ES_RECS]);
}

static bool push(struct nic_es_binner *b, const struct rfw_es_rec *r, uint32_t slot)
{
	struct nic_es_crec *c;

	if (!room(b, 1))
		return false;
	c = &b->q[b->prod % NIC_ES_RECS];
	if (likely(nic_es_pack(c, r, slot))) {
		publish_slots(b, 1);
		return true;
	}
	if (!room(b, 2))
		return false;
	nic_es_pack_wide(c, &b->q[(b->prod + 1) % NIC_ES_RECS], r, slot);
	publish_slots(b, 2);
	return true;
}

/* The transport's sink: on the thread that polls the CQ, which owns the ring's producer end.
 * A QPN outside this NIC's slots (QP1 has its own number) is not binned: not handed on. */
void nic_es_sink(void *ctx, const struct rfw_es_rec *r)
{
	struct rfw_nic *nic = ctx;
	struct nic_es_binner *b;
	uint32_t slot = r->qpn - nic->qpn_base;

	if (nic->es_w == NULL)
		return; /* the Estats thread is gone (the NIC is being destroyed) */
	b = &nic->es_w->b;
	if (slot >= b->max_qp)
		return;
	if (!push(b, r, slot))
		__atomic_store_n(&b->dropped, b->dropped + 1, __ATOMIC_RELAXED);
}

/* A marker (have 0: no record of a WQE has it): a tick is skipped when the ring is full (the
 * next comes a period later); attach and detach wait for room a while. */
void nic_es_mark(struct rfw_nic *nic, enum nic_es_mark m, uint32_t slot, uint64_t now_ns)
{
	struct nic_es_crec c = {.t1 = now_ns, .meta = NIC_ES_META(slot, 0, m, 0)};
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * NIC_ES_MARK_WAIT_MS;
	struct nic_es_binner *b;

	if (nic->es_w == NULL)
		return;
	b = &nic->es_w->b;
	while (!room(b, 1)) {
		if (m == NIC_ES_MARK_TICK || rte_rdtsc() > end) {
			__atomic_store_n(&b->dropped, b->dropped + 1, __ATOMIC_RELAXED);
			return;
		}
		rte_pause();
	}
	b->q[b->prod % NIC_ES_RECS] = c;
	publish_slots(b, 1);
}

/* Rows of window @win of every attached slot's histograms into the publication. */
static bool pub_window(struct rfw_nic *nic, unsigned win, uint64_t now, bool *have_last)
{
	struct nic_es_binner *b = &nic->es_w->b;
	struct nic_es_pub *p = nic->es_pub;
	uint32_t n = 0;
	bool trunc = false;

	for (uint32_t i = 0; i < b->max_qp; i++) {
		struct rfw_es_info info;
		int k;

		if (!b->attached[i] || b->bins[i] == NULL)
			continue;
		k = rfw_es_bins_rows(b->bins[i], nic->qpn_base + i, (enum rfw_es_window)win, now,
		                     p->rows[win] + n, (int)(NIC_ES_ROWS - n));
		n += k > 0 ? (uint32_t)k : 0;
		trunc |= n == NIC_ES_ROWS;
		rfw_es_bins_info(b->bins[i], &info);
		*have_last |= info.have_last;
	}
	p->nrows[win] = n;
	return trunc;
}

static void publish(struct rfw_nic *nic, uint64_t now)
{
	struct nic_es_pub *p = nic->es_pub;
	bool have_last = false, trunc = false;

	rfw_seq_write_begin(&p->seq);
	p->at_ns = now;
	for (unsigned w = 0; w < 2; w++)
		trunc |= pub_window(nic, w, now, &have_last);
	p->have_last = have_last;
	p->truncated = trunc;
	rfw_seq_write_end(&p->seq);
}

/* One record or marker, on the Estats thread (@next: the slot after @c, for a wide record). */
static void bin_one(struct rfw_nic *nic, const struct nic_es_crec *c,
                    const struct nic_es_crec *next)
{
	struct nic_es_binner *b = &nic->es_w->b;
	uint32_t slot = NIC_ES_META_SLOT(c->meta);
	struct rfw_es_rec r;

	if (NIC_ES_META_HAVE(c->meta) == 0 && NIC_ES_META_OP(c->meta) == NIC_ES_MARK_TICK) {
		publish(nic, c->t1);
		return;
	}
	if (slot >= b->max_qp)
		return;
	if (NIC_ES_META_HAVE(c->meta) == 0) { /* attach or detach: the slot's histograms end */
		rfw_es_bins_destroy(b->bins[slot]);
		b->bins[slot] = NULL;
		b->attached[slot] = NIC_ES_META_OP(c->meta) == NIC_ES_MARK_ATTACH;
		return;
	}
	if (b->bins[slot] == NULL) {
		b->bins[slot] = rfw_es_bins_create(nic->es_interval_ns);
		if (b->bins[slot] == NULL) {
			__atomic_store_n(&b->nomem, b->nomem + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	nic_es_unpack(&r, c, next, 0);
	rfw_es_bins_add(b->bins[slot], &r, rfw_es_rec_time(&r));
}

uint32_t nic_es_bin_drain(struct rfw_nic *nic)
{
	struct nic_es_binner *b = &nic->es_w->b;
	uint32_t prod = __atomic_load_n(&b->prod, __ATOMIC_ACQUIRE), c = b->cons, n = prod - c;
	uint32_t freed = c;

	if (n == 0)
		return 0;
	/* Slots are freed 512 at a time: the poll thread rarely reads cons, never per record. A
	 * wide record's two slots are published together, so both are there. */
	while (c != prod) {
		const struct nic_es_crec *r = &b->q[c % NIC_ES_RECS];

		bin_one(nic, r, &b->q[(c + 1) % NIC_ES_RECS]);
		c += NIC_ES_META_HAVE(r->meta) & NIC_ES_WIDE ? 2 : 1;
		if (c - freed >= 512) {
			__atomic_store_n(&b->cons, c, __ATOMIC_RELEASE);
			freed = c;
		}
	}
	__atomic_store_n(&b->cons, c, __ATOMIC_RELEASE);
	return n;
}

uint64_t nic_es_records_dropped(const struct rfw_nic *nic)
{
	const struct nic_es_binner *b = nic->es_w != NULL ? &nic->es_w->b : NULL;

	return b != NULL ? __atomic_load_n(&b->dropped, __ATOMIC_RELAXED) +
	                       __atomic_load_n(&b->nomem, __ATOMIC_RELAXED)
	                 : 0;
}
