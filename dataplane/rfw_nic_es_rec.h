/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An Estats record as the DPDK NIC's ring carries it from the polling thread to the Estats
 * thread (rfw_nic_es_bin.c): 32 bytes, two to a cache line, where struct rfw_es_rec takes a
 * whole line. Every record crosses cores, so its size is what a record costs the polling core
 * in line ownership (docs/estats.md "On the DPDK NIC").
 *
 * T2..T6 travel as signed nanosecond offsets from T1. A record with an offset beyond
 * +-2^31 ns (2.1 s: an RNR or timeout retry chain) is "wide": it takes two slots and carries
 * every timestamp whole, so no latency is ever clipped. The binner needs no wr_id (the
 * trigger, which does, runs on the polling thread from the full record). Pure C: unit-tested.
 */
#ifndef RFW_NIC_ES_REC_H
#define RFW_NIC_ES_REC_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "transport/estats.h"

/* meta: slot (20 bits: the QP's slot on its NIC, QPN - qpn_base; a marker's slot), have (7:
 * rfw_es_rec.have's T1..T6 bits, 0 for a marker, and NIC_ES_WIDE), op (3: enum rfw_es_op; a
 * marker's enum nic_es_mark) and st (2: enum rfw_es_status). */
#define NIC_ES_SLOT_BITS 20
#define NIC_ES_MAX_SLOTS (1u << NIC_ES_SLOT_BITS)
#define NIC_ES_WIDE      0x40u /* in have: T2, T3 whole in this slot, T4..T6 in the next */
#define NIC_ES_META(slot, have, op, st)                                                            \
	((uint32_t)(slot) | (uint32_t)(have) << 20 | (uint32_t)(op) << 27 | (uint32_t)(st) << 30)
#define NIC_ES_META_SLOT(m) ((m) & (NIC_ES_MAX_SLOTS - 1))
#define NIC_ES_META_HAVE(m) ((uint8_t)((m) >> 20 & 0x7f))
#define NIC_ES_META_OP(m)   ((uint8_t)((m) >> 27 & 7))
#define NIC_ES_META_ST(m)   ((uint8_t)((m) >> 30))

struct nic_es_crec {
	alignas(32) uint64_t t1;
	int32_t d[5]; /* T2..T6 - T1 [ns], 0 where unknown; wide: T2, T3 whole in d[0..3] */
	uint32_t meta;
};
_Static_assert(sizeof(struct nic_es_crec) == 32, "an Estats ring record is half a cache line");
_Static_assert(RFW_ES__OPS <= 8 && RFW_ES__STATUSES <= 4, "op and st fit their meta bits");

/* An offset that fits, or false. Unknown timestamps (@known false) are stale: never checked. */
static inline bool nic_es_off(int32_t *d, uint64_t t, uint64_t t1, bool known)
{
	int64_t v = known ? (int64_t)(t - t1) : 0;

	*d = (int32_t)v;
	return v == (int64_t)*d;
}

/* Pack @r of QP slot @slot into @c; false: it needs two slots (nic_es_pack_wide). */
static inline bool nic_es_pack(struct nic_es_crec *c, const struct rfw_es_rec *r, uint32_t slot)
{
	bool ok = true;

	c->t1 = r->t[0];
	for (unsigned k = 1; k < 6; k++)
		ok &= nic_es_off(&c->d[k - 1], r->t[k], r->t[0], r->have >> k & 1);
	c->meta = NIC_ES_META(slot, r->have, r->op, r->st);
	return ok;
}

/* Pack @r into two slots, @c and @next, timestamps whole. */
static inline void nic_es_pack_wide(struct nic_es_crec *c, struct nic_es_crec *next,
                                    const struct rfw_es_rec *r, uint32_t slot)
{
	c->t1 = r->t[0];
	memcpy(c->d, &r->t[1], 2 * sizeof(uint64_t));
	c->meta = NIC_ES_META(slot, r->have | NIC_ES_WIDE, r->op, r->st);
	memcpy(next, &r->t[3], 3 * sizeof(uint64_t));
}

/* The record @c (and @next, when @c is wide) carries, QPN @qpn_base + slot, wr_id 0. */
static inline void nic_es_unpack(struct rfw_es_rec *r, const struct nic_es_crec *c,
                                 const struct nic_es_crec *next, uint32_t qpn_base)
{
	uint8_t have = NIC_ES_META_HAVE(c->meta);

	r->t[0] = c->t1;
	if (have & NIC_ES_WIDE) {
		memcpy(&r->t[1], c->d, 2 * sizeof(uint64_t));
		memcpy(&r->t[3], next, 3 * sizeof(uint64_t));
	} else {
		for (unsigned k = 1; k < 6; k++)
			r->t[k] = c->t1 + (uint64_t)(int64_t)c->d[k - 1];
	}
	r->wr_id = 0;
	r->qpn = qpn_base + NIC_ES_META_SLOT(c->meta);
	r->have = (uint8_t)(have & ~NIC_ES_WIDE);
	r->op = NIC_ES_META_OP(c->meta);
	r->st = NIC_ES_META_ST(c->meta);
}

#endif
