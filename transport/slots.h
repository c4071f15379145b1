/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Free slots of a table (QPs, MRs and windows), a FIFO ring: a new object takes the slot
 * freed longest ago in O(1) whatever the table's size, and a slot's number (a QPN, a key's
 * index) comes back as late as it can, so a stale packet or key of a destroyed object is less
 * likely to reach its successor (rxe allocates its pool indexes cyclically too). Internal to
 * transport/.
 */
#ifndef RFW_TRANSPORT_SLOTS_H
#define RFW_TRANSPORT_SLOTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct rfw_slots {
	uint32_t *ring; /* size entries */
	uint32_t size, head, n;
};

/* All of 0..@size-1 free, in order. 0, or -1 (no memory). */
static inline int rfw_slots_init(struct rfw_slots *s, uint32_t size)
{
	s->ring = malloc((size_t)(size ? size : 1) * sizeof(*s->ring));
	if (s->ring == NULL)
		return -1;
	for (uint32_t i = 0; i < size; i++)
		s->ring[i] = i;
	s->size = size;
	s->head = 0;
	s->n = size;
	return 0;
}

static inline void rfw_slots_fini(struct rfw_slots *s)
{
	free(s->ring);
	s->ring = NULL;
}

/* The slot a new object would get (rfw_slots_take() then takes it); false when none. */
static inline bool rfw_slots_peek(const struct rfw_slots *s, uint32_t *slot)
{
	if (s->n == 0)
		return false;
	*slot = s->ring[s->head];
	return true;
}

static inline void rfw_slots_take(struct rfw_slots *s)
{
	s->head = (s->head + 1) % s->size;
	s->n--;
}

static inline void rfw_slots_put(struct rfw_slots *s, uint32_t slot)
{
	s->ring[(s->head + s->n) % s->size] = slot;
	s->n++;
}

#endif
