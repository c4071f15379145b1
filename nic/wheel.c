/* SPDX-License-Identifier: BSD-3-Clause */
/* Timer wheel with an occupancy bitmap. See wheel.h. */
#include <string.h>

#include "nic/wheel.h"

void fw_wheel_init(struct fw_wheel *w, uint8_t shift, uint64_t now_ns)
{
	memset(w->occ, 0, sizeof(w->occ));
	for (unsigned i = 0; i < FW_WHEEL_SLOTS; i++)
		w->head[i].next = w->head[i].prev = &w->head[i];
	w->shift = shift;
	w->next = now_ns >> shift;
	w->lb = UINT64_MAX;
}

void fw_wheel_remove(struct fw_wheel *w, struct fw_wnode *n)
{
	struct fw_wnode *head;

	if (!n->armed)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->armed = false;
	head = &w->head[n->slot];
	if (head->next == head)
		w->occ[n->slot / 64] &= ~(1ull << (n->slot % 64));
}

void fw_wheel_insert(struct fw_wheel *w, struct fw_wnode *n, uint64_t at)
{
	uint64_t tick = at >> w->shift;
	struct fw_wnode *head;

	fw_wheel_remove(w, n);
	/* Never into a slot already visited: it would wait a whole lap. */
	if (tick < w->next)
		tick = w->next;
	n->slot = (uint16_t)(tick & FW_WHEEL_MASK);
	head = &w->head[n->slot];
	n->at = at;
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
	n->armed = true;
	w->occ[n->slot / 64] |= 1ull << (n->slot % 64);
	if (at < w->lb)
		w->lb = at;
}

/*
 * The first occupied slot among the @count slots from @from on (cyclically), as an offset from
 * @from; @count if none. One bitmap word at a time.
 */
static unsigned next_occupied(const struct fw_wheel *w, unsigned from, unsigned count)
{
	unsigned off = 0;

	while (off < count) {
		unsigned s = (from + off) & FW_WHEEL_MASK;
		uint64_t word = w->occ[s / 64] >> (s % 64);
		unsigned span = 64 - s % 64;

		if (word != 0) {
			unsigned k = (unsigned)__builtin_ctzll(word);

			return off + k < count ? off + k : count;
		}
		off += span;
	}
	return count;
}

/* Fire the entries of @slot due by @now_ns; the earliest time of those left (UINT64_MAX). */
static uint64_t expire_slot(struct fw_wheel *w, unsigned slot, uint64_t now_ns,
                            void (*fire)(void *ctx, struct fw_wnode *n), void *ctx)
{
	struct fw_wnode *head = &w->head[slot];
	struct fw_wnode *n = head->next;
	uint64_t left = UINT64_MAX;

	while (n != head) {
		struct fw_wnode *next = n->next;

		if (n->at <= now_ns) {
			fw_wheel_remove(w, n);
			fire(ctx, n);
		} else if (n->at < left) {
			left = n->at;
		}
		n = next;
	}
	return left;
}

/*
 * Slots [next, cur] are visited, cur included so that an entry due exactly now fires now; the
 * current slot is then left unvisited (next = cur), since entries due later in its tick must be
 * looked at again. After a stall of a lap or more every slot is visited once.
 *
 * The new lower bound: entries left in visited slots are due when they say; every other entry
 * sits in a later tick's slot, due no earlier than the start of the first occupied one after
 * cur (an entry whose time had passed when inserted went into a slot not yet visited, and
 * lowered lb itself; so did any @fire inserted, lb being reset first).
 */
void fw_wheel_advance(struct fw_wheel *w, uint64_t now_ns,
                      void (*fire)(void *ctx, struct fw_wnode *n), void *ctx)
{
	uint64_t cur = now_ns >> w->shift, left = UINT64_MAX;
	uint64_t span = cur >= w->next ? cur - w->next + 1 : 0;
	unsigned count = span < FW_WHEEL_SLOTS ? (unsigned)span : FW_WHEEL_SLOTS;
	unsigned from = (unsigned)(w->next & FW_WHEEL_MASK);
	unsigned off = 0, ahead;

	/* next moves first: what @fire inserts then goes no further back than cur's slot, which
	 * the next advance visits (moved after, it could land in a slot just passed, to wait
	 * a lap there). */
	if (cur > w->next)
		w->next = cur;
	w->lb = UINT64_MAX;
	while ((off += next_occupied(w, (from + off) & FW_WHEEL_MASK, count - off)) < count) {
		uint64_t l = expire_slot(w, (from + off) & FW_WHEEL_MASK, now_ns, fire, ctx);

		left = l < left ? l : left;
		off++;
	}
	/* All the slots, cur's last: were the clock ever behind next, cur's own slot would hold
	 * only a later lap's entries, not yet visited. */
	ahead = next_occupied(w, (unsigned)((cur + 1) & FW_WHEEL_MASK), FW_WHEEL_SLOTS);
	if (ahead < FW_WHEEL_SLOTS && ((cur + 1 + ahead) << w->shift) < left)
		left = (cur + 1 + ahead) << w->shift;
	if (left < w->lb)
		w->lb = left;
}

/* The earliest entry of @slot due before @lap_end, else the earliest of all; *in_lap says. */
static uint64_t slot_min(const struct fw_wheel *w, unsigned slot, uint64_t lap_end, bool *in_lap)
{
	const struct fw_wnode *head = &w->head[slot];
	uint64_t best = UINT64_MAX;

	for (const struct fw_wnode *n = head->next; n != head; n = n->next)
		if (n->at < best)
			best = n->at;
	*in_lap = (best >> w->shift) < lap_end;
	return best;
}

/*
 * Occupied slots in tick order from the next unvisited one: the first holding an entry due
 * within this lap has the earliest entry (later laps' entries are all later). Without one, the
 * earliest of every slot.
 */
uint64_t fw_wheel_next(const struct fw_wheel *w)
{
	unsigned from = (unsigned)(w->next & FW_WHEEL_MASK), off = 0;
	uint64_t lap_end = w->next + FW_WHEEL_SLOTS, best = UINT64_MAX;

	while ((off += next_occupied(w, (from + off) & FW_WHEEL_MASK, FW_WHEEL_SLOTS - off)) <
	       FW_WHEEL_SLOTS) {
		bool in_lap;
		uint64_t t = slot_min(w, (from + off) & FW_WHEEL_MASK, lap_end, &in_lap);

		if (in_lap)
			return t < best ? t : best;
		if (t < best)
			best = t;
		off++;
	}
	return best;
}
