/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hashed timer wheel with a bitmap of occupied slots. FW_WHEEL_SLOTS slots of 2^shift ns;
 * an entry keeps its absolute time, so one due beyond a lap stays in its slot until its lap
 * comes round. Insert and remove are O(1); an advance visits only occupied slots (found 64 at a
 * time in the bitmap), never the empty ones it crosses, so its cost does not grow with the time
 * since the last advance or with the number of idle QPs. Caller-owned state, time as argument.
 */
#ifndef RFW_NIC_WHEEL_H
#define RFW_NIC_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define FW_WHEEL_SLOTS 4096u
#define FW_WHEEL_MASK  (FW_WHEEL_SLOTS - 1)
#define FW_WHEEL_WORDS (FW_WHEEL_SLOTS / 64)

struct fw_wnode {
	struct fw_wnode *next, *prev;
	uint64_t at; /* ns */
	void *owner; /* what the entry is for */
	uint16_t slot;
	uint8_t kind; /* the owner's tag, handed back at expiry */
	bool armed;
};

struct fw_wheel {
	uint64_t next; /* the first tick not yet visited (every one before it has been) */
	/* No armed entry is due before this (ns): a lower bound, lowered by every insert and
	 * recomputed by each advance, so that an advance before it, most polls', does nothing. */
	uint64_t lb;
	uint8_t shift;
	uint64_t occ[FW_WHEEL_WORDS]; /* bit set: the slot's list is not empty */
	struct fw_wnode head[FW_WHEEL_SLOTS];
};

void fw_wheel_init(struct fw_wheel *w, uint8_t shift, uint64_t now_ns);
void fw_wheel_insert(struct fw_wheel *w, struct fw_wnode *n, uint64_t at);
void fw_wheel_remove(struct fw_wheel *w, struct fw_wnode *n);
/*
 * Remove and hand to @fire every entry due at or before @now_ns, in slot order. @fire may
 * insert entries (also into slots already visited: they wait for the next advance).
 */
void fw_wheel_advance(struct fw_wheel *w, uint64_t now_ns,
                      void (*fire)(void *ctx, struct fw_wnode *n), void *ctx);
static inline void fw_wheel_expire(struct fw_wheel *w, uint64_t now_ns,
                                   void (*fire)(void *ctx, struct fw_wnode *n), void *ctx)
{
	/* Inline: nothing due is one compare, not a call walking the bitmap. The ticks skipped
	 * are crossed by the next advance (only occupied slots are visited). */
	if (now_ns >= w->lb)
		fw_wheel_advance(w, now_ns, fire, ctx);
}
/* The earliest armed entry's time, or UINT64_MAX (scans occupied slots: not for fast paths). */
uint64_t fw_wheel_next(const struct fw_wheel *w);

#endif
