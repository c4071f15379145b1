/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats' 32-byte record (docs/estats.md "On the DPDK NIC"): the CQ's side entry of a send
 * CQE (transport/cq.c) and what a host's record ring (rfw_dev_estats_ring) carries from the
 * thread that polls to the thread that bins. Half a cache line where struct rfw_es_rec takes a
 * whole one: the completion writes half a line, and a record costs the polling core half a
 * line's ownership when it crosses to the binning core.
 *
 * T2..T6 travel as signed nanosecond offsets from T1. A record with an offset beyond
 * +-2^31 ns (2.1 s: an RNR or timeout retry chain) is "wide": in a ring it takes two slots and
 * carries every timestamp whole, so no latency is ever clipped; in a CQ side entry its T2..T5
 * go whole into the CQ's wide array (struct rfw_es_wide). The record has no wr_id (the trigger
 * takes it from the CQE polled). Pure C, no transport internals: unit-tested
 * (tests/transport/test_es_rec.c).
 */
#ifndef RFW_TRANSPORT_ES_CREC_H
#define RFW_TRANSPORT_ES_CREC_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "transport/estats.h"

/* meta: slot (20 bits: the QP's slot on its device, QPN - qpn_base, in a CQ side entry too;
 * a marker's slot), have (7: rfw_es_rec.have's T1..T6 bits, 0 for a marker or a CQ entry
 * without a record, and RFW_ES_WIDE; a CQ side entry of rfw_es_complete_cqe has T6's bit set
 * already, its offset 0 until polled), op (3: enum rfw_es_op, or a host's marker kind) and st
 * (2: enum rfw_es_status). */
#define RFW_ES_SLOT_BITS 20
#define RFW_ES_MAX_SLOTS (1u << RFW_ES_SLOT_BITS)
#define RFW_ES_WIDE      0x40u /* in have: T2, T3 whole in this slot, T4..T6 in the next */
#define RFW_ES_META(slot, have, op, st)                                                            \
	((uint32_t)(slot) | (uint32_t)(have) << 20 | (uint32_t)(op) << 27 | (uint32_t)(st) << 30)
#define RFW_ES_META_SLOT(m) ((m) & (RFW_ES_MAX_SLOTS - 1))
#define RFW_ES_META_HAVE(m) ((uint8_t)((m) >> 20 & 0x7f))
#define RFW_ES_META_OP(m)   ((uint8_t)((m) >> 27 & 7))
#define RFW_ES_META_ST(m)   ((uint8_t)((m) >> 30))

struct rfw_es_crec {
	alignas(32) uint64_t t1;
	int32_t d[5]; /* T2..T6 - T1 [ns], 0 where unknown; wide: T2, T3 whole in d[0..3] */
	uint32_t meta;
};
_Static_assert(sizeof(struct rfw_es_crec) == 32, "an Estats record is half a cache line");
_Static_assert(RFW_ES__OPS <= 8 && RFW_ES__STATUSES <= 4, "op and st fit their meta bits");

/* A record's four offsets T2..T5 as one 16-byte store or load (rfw_es_pack_t5,
 * rfw_es_crec_copy), and its last 8 bytes, T6's offset and the meta, as one store into a ring
 * slot (rfw_es_crec_copy). */
typedef int32_t rfw_es_v4 __attribute__((vector_size(16), aligned(4)));
typedef uint64_t rfw_es_u2 __attribute__((vector_size(16)));
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a lane's low half is its first");
struct rfw_es_tail {
	int32_t d6;
	uint32_t meta;
};

/* T2..T5 whole of a wide CQ side entry (its own array: touched only by wide records). */
struct rfw_es_wide {
	uint64_t t[4];
};

/* An offset that fits, or false. Unknown timestamps (@known false) are stale: never checked. */
static inline bool rfw_es_off(int32_t *d, uint64_t t, uint64_t t1, bool known)
{
	int64_t v = known ? (int64_t)(t - t1) : 0;

	*d = (int32_t)v;
	return ((uint64_t)v + 0x80000000u) >> 32 == 0; /* v in [-2^31, 2^31) */
}

/* Pack @r of QP slot @slot into @c; false: it needs two slots (rfw_es_pack_wide). */
static inline bool rfw_es_pack(struct rfw_es_crec *c, const struct rfw_es_rec *r, uint32_t slot)
{
	bool ok = true;

	c->t1 = r->t[0];
	for (unsigned k = 1; k < 6; k++)
		ok &= rfw_es_off(&c->d[k - 1], r->t[k], r->t[0], r->have >> k & 1);
	c->meta = RFW_ES_META(slot, r->have, r->op, r->st);
	return ok;
}

/* Pack @r into two slots, @c and @next, timestamps whole. */
static inline void rfw_es_pack_wide(struct rfw_es_crec *c, struct rfw_es_crec *next,
                                    const struct rfw_es_rec *r, uint32_t slot)
{
	c->t1 = r->t[0];
	memcpy(c->d, &r->t[1], 2 * sizeof(uint64_t));
	c->meta = RFW_ES_META(slot, r->have | RFW_ES_WIDE, r->op, r->st);
	memcpy(next, &r->t[3], 3 * sizeof(uint64_t));
}

/* The record @c (and @next, when @c is wide) carries, QPN @qpn_base + slot, wr_id 0. */
static inline void rfw_es_unpack(struct rfw_es_rec *r, const struct rfw_es_crec *c,
                                 const struct rfw_es_crec *next, uint32_t qpn_base)
{
	uint8_t have = RFW_ES_META_HAVE(c->meta);

	r->t[0] = c->t1;
	if (have & RFW_ES_WIDE) {
		memcpy(&r->t[1], c->d, 2 * sizeof(uint64_t));
		memcpy(&r->t[3], next, 3 * sizeof(uint64_t));
	} else {
		for (unsigned k = 1; k < 6; k++)
			r->t[k] = c->t1 + (uint64_t)(int64_t)c->d[k - 1];
	}
	r->wr_id = 0;
	r->qpn = qpn_base + RFW_ES_META_SLOT(c->meta);
	r->have = (uint8_t)(have & ~RFW_ES_WIDE);
	r->op = RFW_ES_META_OP(c->meta);
	r->st = RFW_ES_META_ST(c->meta);
}

/*
 * T1..T5 of a completing send WQE into @e as @t1 and offsets, T6 not known (offset 0), @meta
 * as given. A time not known must equal T1 (so every offset packs without testing which are
 * known: 0). False when an offset is beyond int32 (the record is wide; @e then holds
 * truncated offsets). T2..T5's offsets are stored as one 16-byte piece, the width
 * rfw_es_crec_copy loads them by: a load wider than the store it reads from, or across two,
 * stalls store forwarding (the side entry is often still in the store buffer when its CQE is
 * polled).
 */
static inline bool rfw_es_pack_t5(struct rfw_es_crec *e, uint64_t t1, uint64_t t2, uint64_t t3,
                                  uint64_t t4, uint64_t t5, uint32_t meta)
{
	/* Two lanes at a time: each offset plus 2^31 (the bias folded into T1), which fits 32
	 * bits exactly when the offset fits int32; the low halves, the bias taken off again,
	 * are the offsets. */
	const uint64_t b = t1 - 0x80000000u;
	const rfw_es_u2 lo = (rfw_es_u2){t2, t3} - b, hi = (rfw_es_u2){t4, t5} - b;
	const rfw_es_u2 over = (lo | hi) >> 32;
	const rfw_es_v4 d = __builtin_shufflevector((rfw_es_v4)lo, (rfw_es_v4)hi, 0, 2, 4, 6);

	e->t1 = t1;
	*(rfw_es_v4 *)e->d = d ^ INT32_MIN;
	e->d[4] = 0;
	e->meta = meta;
	return (over[0] | over[1]) == 0;
}

/*
 * The CQ side entry of a completing send WQE, packed once (rfw_es_complete_cqe): T1..T5 as @t1
 * and offsets, T6 not yet (offset 0; its have bit as @meta has it), @meta's have bits saying
 * which are known, times not known equal to T1 (rfw_es_pack_t5). A record with an offset beyond
 * int32 is marked wide and its T2..T5 go whole into @w.
 */
static inline void rfw_es_cqe_pack(struct rfw_es_crec *e, struct rfw_es_wide *w, uint64_t t1,
                                   uint64_t t2, uint64_t t3, uint64_t t4, uint64_t t5,
                                   uint32_t meta)
{
	if (!rfw_es_pack_t5(e, t1, t2, t3, t4, t5, meta)) {
		w->t[0] = t2;
		w->t[1] = t3;
		w->t[2] = t4;
		w->t[3] = t5;
		e->meta = meta | RFW_ES_WIDE << 20;
	}
}

/* T5 of a CQ side entry with meta @meta. */
static inline uint64_t rfw_es_cqe_t5(const struct rfw_es_crec *e, uint32_t meta,
                                     const struct rfw_es_wide *w)
{
	return (meta & RFW_ES_WIDE << 20) ? w->t[3] : e->t1 + (uint64_t)(int64_t)e->d[3];
}

/* The full record of a CQ side entry with meta @meta (the entry's own may be cleared already)
 * polled at @t6 (T6 known), QPN @qpn, wr_id @wr_id; the times not known are 0 (a sink copies
 * records whole). */
static inline void rfw_es_cqe_unpack(struct rfw_es_rec *r, const struct rfw_es_crec *e,
                                     uint32_t meta, const struct rfw_es_wide *w, uint64_t t6,
                                     uint32_t qpn, uint64_t wr_id)
{
	uint8_t have = RFW_ES_META_HAVE(meta);

	r->t[0] = e->t1;
	for (unsigned k = 1; k < 5; k++)
		r->t[k] = !(have >> k & 1)     ? 0
		          : have & RFW_ES_WIDE ? w->t[k - 1]
		                               : e->t1 + (uint64_t)(int64_t)e->d[k - 1];
	r->t[5] = t6;
	r->have = (uint8_t)((have & ~RFW_ES_WIDE) | 32);
	r->op = RFW_ES_META_OP(meta);
	r->st = RFW_ES_META_ST(meta);
	r->qpn = qpn;
	r->wr_id = wr_id;
}

/*
 * A host's record ring (rfw_dev_estats_ring): single producer (the thread that polls the CQs),
 * single consumer (the thread that bins). Each side's index on a cache line of its own: the
 * producer reads the consumer's index only when its cached copy says the ring is full, and the
 * consumer should publish its index once per batch, so a record costs the producer one line's
 * ownership. The host allocates @q (64-byte aligned, @mask + 1 entries, a power of two).
 */
struct rfw_es_ring {
	alignas(64) uint32_t prod; /* the producer's */
	uint32_t cons_seen;        /* the producer's last read of cons */
	uint32_t mask;
	uint64_t dropped; /* records and markers lost to a full ring (the producer's) */
	struct rfw_es_crec *q;
	alignas(64) uint32_t cons; /* the consumer's */
};

/* A record or marker lost to a full ring (the producer's count). */
static inline void rfw_es_ring_drop(struct rfw_es_ring *r)
{
	__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
}

/* Free slots from prod, at least @want if the consumer has made them: its index is read only
 * when the cached one says fewer. */
static inline uint32_t rfw_es_ring_free(struct rfw_es_ring *r, uint32_t want)
{
	uint32_t free = r->mask + 1 - (r->prod - r->cons_seen);

	if (free < want) {
		r->cons_seen = __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
		free = r->mask + 1 - (r->prod - r->cons_seen);
	}
	return free;
}

/* Room for @n slots (1, or 2 for a wide record). */
static inline bool rfw_es_ring_room(struct rfw_es_ring *r, uint32_t n)
{
	return rfw_es_ring_free(r, n) >= n;
}

/* Fetch a line for writing. The baseline x86-64 target turns __builtin_prefetch into a read
 * prefetch, which leaves the line shared and the store still waiting for ownership. */
static inline void rfw_es_prefetch_w(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* Publish @n slots written at prod. Slots were last read by the consumer on another core: ask
 * for one a few lines ahead now, so that fetch overlaps other work instead of stalling a later
 * record (a run of records asks for its own, rfw_es_prefetch_run). */
static inline void rfw_es_ring_publish(struct rfw_es_ring *r, uint32_t n)
{
	__atomic_store_n(&r->prod, r->prod + n, __ATOMIC_RELEASE);
	rfw_es_prefetch_w(&r->q[(r->prod + 16) & r->mask]);
}

/* The lines 16 slots ahead of slots @c..@end (a run just written, not across the ring's end),
 * as far as the ring's end @q_end: a line each two slots, as rfw_es_ring_publish asks for one. */
static inline void rfw_es_prefetch_run(const struct rfw_es_crec *c, const struct rfw_es_crec *end,
                                       const struct rfw_es_crec *q_end)
{
	const uintptr_t ahead = 16 * sizeof(*c), lim = (uintptr_t)q_end;
	const uintptr_t stop = (uintptr_t)end + ahead < lim ? (uintptr_t)end + ahead : lim;

	for (uintptr_t p = (uintptr_t)c + ahead; p < stop; p += 2 * sizeof(*c))
		rfw_es_prefetch_w((const void *)p);
}

/* The slot at prod when there is room for one record, else NULL, the record counted dropped.
 * Written and not published (rfw_es_ring_publish), it is not the consumer's. */
static inline struct rfw_es_crec *rfw_es_ring_claim(struct rfw_es_ring *r)
{
	if (!rfw_es_ring_room(r, 1)) {
		rfw_es_ring_drop(r);
		return NULL;
	}
	return &r->q[r->prod & r->mask];
}

/*
 * A CQ side entry @e into ring slot @c, T6's offset @d6 and @meta in. By the pieces
 * rfw_es_pack_t5 stored (T1, the four offsets, the tail), each load as wide as the store of it:
 * a struct copy's loads across those stores stalled store forwarding, half of the poll's time
 * with Estats on. Volatile keeps the compiler from merging or splitting the loads.
 */
static inline void rfw_es_crec_copy(struct rfw_es_crec *c, const struct rfw_es_crec *e, int32_t d6,
                                    uint32_t meta)
{
	const struct rfw_es_tail tail = {d6, meta};

	c->t1 = e->t1;
	*(rfw_es_v4 *)c->d = *(const volatile rfw_es_v4 *)e->d;
	memcpy(&c->d[4], &tail, sizeof(tail));
}

/*
 * A polled CQ side entry @e (meta @meta, read before the poll cleared it) with T6 @t6, of QP
 * slot @slot, into @ring as it is, T6's offset and the slot added: no repacking, the ring's
 * records having the side entry's layout. False, nothing done: the record is wide (or its T6
 * offset does not fit) and goes whole (rfw_es_cqe_unpack, rfw_es_ring_push_rec). A full ring
 * counts the record dropped (true).
 */
static inline bool rfw_es_cqe_to_ring(struct rfw_es_ring *ring, const struct rfw_es_crec *e,
                                      uint32_t meta, uint64_t t6, uint32_t slot)
{
	int64_t d6 = (int64_t)(t6 - e->t1);
	struct rfw_es_crec *c;

	if ((meta & RFW_ES_WIDE << 20) || ((uint64_t)d6 + 0x80000000u) >> 32)
		return false; /* wide, or T6's offset outside [-2^31, 2^31) */
	c = rfw_es_ring_claim(ring);
	if (c == NULL)
		return true;
	rfw_es_crec_copy(c, e, (int32_t)d6, meta | 32u << 20 | slot);
	rfw_es_ring_publish(ring, 1);
	return true;
}

/*
 * The record of a send WQE completing without a CQE (T6 never known): T1..T5 as for
 * rfw_es_pack_t5, @meta with the QP's slot, into @ring in one slot, the form a polled CQE's
 * record takes. A full ring counts the record dropped (true). False, nothing published: an
 * offset beyond int32 (the caller pushes the record whole, rfw_es_ring_push_rec).
 */
static inline bool rfw_es_ring_push_t5(struct rfw_es_ring *ring, uint64_t t1, uint64_t t2,
                                       uint64_t t3, uint64_t t4, uint64_t t5, uint32_t meta)
{
	struct rfw_es_crec *c = rfw_es_ring_claim(ring);

	if (c == NULL)
		return true;
	if (!rfw_es_pack_t5(c, t1, t2, t3, t4, t5, meta))
		return false;
	rfw_es_ring_publish(ring, 1);
	return true;
}

/* Push @rec of QP slot @slot (two slots if wide); false: the ring is full (counted). */
static inline bool rfw_es_ring_push_rec(struct rfw_es_ring *r, const struct rfw_es_rec *rec,
                                        uint32_t slot)
{
	struct rfw_es_crec *c = rfw_es_ring_claim(r);

	if (c == NULL)
		return false;
	if (rfw_es_pack(c, rec, slot)) {
		rfw_es_ring_publish(r, 1);
		return true;
	}
	if (!rfw_es_ring_room(r, 2)) {
		rfw_es_ring_drop(r);
		return false;
	}
	rfw_es_pack_wide(c, &r->q[(r->prod + 1) & r->mask], rec, slot);
	rfw_es_ring_publish(r, 2);
	return true;
}

#endif
