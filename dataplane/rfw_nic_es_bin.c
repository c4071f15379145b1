/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats' histograms of a DPDK NIC, binned off the thread that polls (docs/estats.md "On the
 * DPDK NIC"). The transport pushes every recorded WQE, packed in 32 bytes, into the NIC's
 * single-producer single-consumer ring (rfw_dev_estats_ring) on the thread that polls the CQ
 * (no call, lock or allocation), or counts it lost when the ring is full. The NIC's Estats
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

#include "dataplane/rfw_log.h"
#include "dataplane/rfw_nic_int.h"

/* How long attach and detach wait for room in a full ring before counting their marker lost. */
#define NIC_ES_MARK_WAIT_MS 100

int nic_es_bin_init(struct nic_es_binner *b, uint32_t max_qp)
{
	if (max_qp > RFW_ES_MAX_SLOTS) {
		RFW_LOG(ERR, "Estats: %u QPs on one NIC, at most %u binned", max_qp,
		        RFW_ES_MAX_SLOTS);
		return -E2BIG;
	}
	/* Aligned: two 32-byte records to a cache line, never one across two. */
	b->r.q = aligned_alloc(64, NIC_ES_RECS * sizeof(*b->r.q));
	b->r.mask = NIC_ES_RECS - 1;
	b->bins = calloc(max_qp, sizeof(*b->bins));
	b->attached = calloc(max_qp, sizeof(*b->attached));
	b->max_qp = max_qp;
	return b->r.q != NULL && b->bins != NULL && b->attached != NULL ? 0 : -ENOMEM;
}

void nic_es_bin_free(struct nic_es_binner *b)
{
	for (uint32_t i = 0; b->bins != NULL && i < b->max_qp; i++)
		rfw_es_bins_destroy(b->bins[i]);
	free(b->bins);
	free(b->attached);
	free(b->r.q);
	memset(b, 0, sizeof(*b));
}

/* A marker (have 0: no record of a WQE has it): a tick is skipped when the ring is full (the
 * next comes a period later); attach and detach wait for room a while. */
void nic_es_mark(struct rfw_nic *nic, enum nic_es_mark m, uint32_t slot, uint64_t now_ns)
{
	struct rfw_es_crec c = {.t1 = now_ns, .meta = RFW_ES_META(slot, 0, m, 0)};
	uint64_t end = 0; /* the wait's deadline, once the ring is full (a tick never waits) */
	struct nic_es_binner *b;

	if (nic->es_w == NULL)
		return;
	b = &nic->es_w->b;
	while (!rfw_es_ring_room(&b->r, 1)) {
		if (m == NIC_ES_MARK_TICK || (end != 0 && rte_rdtsc() > end)) {
			rfw_es_ring_drop(&b->r);
			return;
		}
		if (end == 0)
			end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * NIC_ES_MARK_WAIT_MS;
		rte_pause();
	}
	b->r.q[b->r.prod & b->r.mask] = c;
	rfw_es_ring_publish(&b->r, 1);
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
static void bin_one(struct rfw_nic *nic, const struct rfw_es_crec *c,
                    const struct rfw_es_crec *next)
{
	struct nic_es_binner *b = &nic->es_w->b;
	uint32_t slot = RFW_ES_META_SLOT(c->meta);
	struct rfw_es_rec r;

	if (RFW_ES_META_HAVE(c->meta) == 0 && RFW_ES_META_OP(c->meta) == NIC_ES_MARK_TICK) {
		publish(nic, c->t1);
		return;
	}
	if (slot >= b->max_qp)
		return;
	if (RFW_ES_META_HAVE(c->meta) == 0) { /* attach or detach: the slot's histograms end */
		rfw_es_bins_destroy(b->bins[slot]);
		b->bins[slot] = NULL;
		b->attached[slot] = RFW_ES_META_OP(c->meta) == NIC_ES_MARK_ATTACH;
		return;
	}
	if (b->bins[slot] == NULL) {
		b->bins[slot] = rfw_es_bins_create(nic->es_interval_ns);
		if (b->bins[slot] == NULL) {
			__atomic_store_n(&b->nomem, b->nomem + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	rfw_es_unpack(&r, c, next, 0);
	rfw_es_bins_add(b->bins[slot], &r, rfw_es_rec_time(&r));
}

uint32_t nic_es_bin_drain(struct rfw_nic *nic)
{
	struct nic_es_binner *b = &nic->es_w->b;
	uint32_t prod = __atomic_load_n(&b->r.prod, __ATOMIC_ACQUIRE), c = b->r.cons, n = prod - c;
	uint32_t freed = c;

	if (n == 0)
		return 0;
	/* Slots are freed 512 at a time: the poll thread rarely reads cons, never per record. A
	 * wide record's two slots are published together, so both are there. */
	while (c != prod) {
		const struct rfw_es_crec *r = &b->r.q[c % NIC_ES_RECS];

		bin_one(nic, r, &b->r.q[(c + 1) % NIC_ES_RECS]);
		c += RFW_ES_META_HAVE(r->meta) & RFW_ES_WIDE ? 2 : 1;
		if (c - freed >= 512) {
			__atomic_store_n(&b->r.cons, c, __ATOMIC_RELEASE);
			freed = c;
		}
	}
	__atomic_store_n(&b->r.cons, c, __ATOMIC_RELEASE);
	return n;
}

uint64_t nic_es_records_dropped(const struct rfw_nic *nic)
{
	const struct nic_es_binner *b = nic->es_w != NULL ? &nic->es_w->b : NULL;

	return b != NULL ? __atomic_load_n(&b->r.dropped, __ATOMIC_RELAXED) +
	                       __atomic_load_n(&b->nomem, __ATOMIC_RELAXED)
	                 : 0;
}
