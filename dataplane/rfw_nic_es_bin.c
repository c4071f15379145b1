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
#include <rte_pause.h>

#include "dataplane/rfw_nic_int.h"

/* How long attach and detach wait for room in a full ring before counting their marker lost. */
#define NIC_ES_MARK_WAIT_MS 100

int nic_es_bin_init(struct nic_es_binner *b, uint32_t max_qp)
{
	/* Aligned: a 64-byte record on one cache line, not two. */
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

static bool push(struct nic_es_binner *b, const struct rfw_es_rec *r)
{
	if (b->prod - b->cons_seen >= NIC_ES_RECS) {
		b->cons_seen = __atomic_load_n(&b->cons, __ATOMIC_ACQUIRE);
		if (b->prod - b->cons_seen >= NIC_ES_RECS)
			return false;
	}
	b->q[b->prod % NIC_ES_RECS] = *r;
	__atomic_store_n(&b->prod, b->prod + 1, __ATOMIC_RELEASE);
	/* Slots were last read by the Estats thread on another core: ask for one a few records
	 * ahead now, so that fetch overlaps other work instead of stalling a later record. */
	prefetch_w(&b->q[(b->prod + 8) % NIC_ES_RECS]);
	return true;
}

/* The transport's sink: on the thread that polls the CQ, which owns the ring's producer end. */
void nic_es_sink(void *ctx, const struct rfw_es_rec *r)
{
	struct rfw_nic *nic = ctx;
	struct nic_es_binner *b;

	if (nic->es_w == NULL)
		return; /* the Estats thread is gone (the NIC is being destroyed) */
	b = &nic->es_w->b;
	if (!push(b, r))
		__atomic_store_n(&b->dropped, b->dropped + 1, __ATOMIC_RELAXED);
}

/* A marker (have 0: no record of a WQE has it): a tick is skipped when the ring is full (the
 * next comes a period later); attach and detach wait for room a while. */
void nic_es_mark(struct rfw_nic *nic, enum nic_es_mark m, uint32_t slot, uint64_t now_ns)
{
	struct rfw_es_rec r = {.qpn = slot, .have = 0, .op = (uint8_t)m, .t = {now_ns}};
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * NIC_ES_MARK_WAIT_MS;
	struct nic_es_binner *b;

	if (nic->es_w == NULL)
		return;
	b = &nic->es_w->b;
	while (!push(b, &r)) {
		if (m == NIC_ES_MARK_TICK || rte_rdtsc() > end) {
			__atomic_store_n(&b->dropped, b->dropped + 1, __ATOMIC_RELAXED);
			return;
		}
		rte_pause();
	}
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

/* One record or marker, on the Estats thread. */
static void bin_one(struct rfw_nic *nic, const struct rfw_es_rec *r)
{
	struct nic_es_binner *b = &nic->es_w->b;
	uint32_t slot = r->have != 0 ? r->qpn - nic->qpn_base : r->qpn;

	if (r->have == 0 && r->op == NIC_ES_MARK_TICK) {
		publish(nic, r->t[0]);
		return;
	}
	if (slot >= b->max_qp)
		return;     /* not one of this NIC's QPNs (QP1 has its own number) */
	if (r->have == 0) { /* attach or detach: the slot's histograms end either way */
		rfw_es_bins_destroy(b->bins[slot]);
		b->bins[slot] = NULL;
		b->attached[slot] = r->op == NIC_ES_MARK_ATTACH;
		return;
	}
	if (b->bins[slot] == NULL) {
		b->bins[slot] = rfw_es_bins_create(nic->es_interval_ns);
		if (b->bins[slot] == NULL) {
			__atomic_store_n(&b->nomem, b->nomem + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	rfw_es_bins_add(b->bins[slot], r, rfw_es_rec_time(r));
}

uint32_t nic_es_bin_drain(struct rfw_nic *nic)
{
	struct nic_es_binner *b = &nic->es_w->b;
	uint32_t prod = __atomic_load_n(&b->prod, __ATOMIC_ACQUIRE), c = b->cons, n = prod - c;

	if (n == 0)
		return 0;
	/* Slots are freed 256 at a time: the poll thread rarely reads cons, never per record. */
	for (; c != prod; c++) {
		bin_one(nic, &b->q[c % NIC_ES_RECS]);
		if ((c & 255) == 255)
			__atomic_store_n(&b->cons, c + 1, __ATOMIC_RELEASE);
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
