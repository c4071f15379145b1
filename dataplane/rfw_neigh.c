/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbour table on rte_hash (see rfw_neigh.h). */
#include "dataplane/rfw_neigh.h"

#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

static const char *const state_names[] = {
    [RFW_NEIGH_FREE] = "free",
    [RFW_NEIGH_INCOMPLETE] = "incomplete",
    [RFW_NEIGH_REACHABLE] = "reachable",
    [RFW_NEIGH_STALE] = "stale",
};

const char *rfw_neigh_state_name(enum rfw_neigh_state s)
{
	return (unsigned)s < RTE_DIM(state_names) ? state_names[s] : "unknown";
}

struct rfw_neigh *rfw_neigh_create(const char *name, uint32_t capacity, int socket,
                                   uint64_t reachable_tsc, uint64_t retrans_tsc, uint64_t gc_tsc,
                                   uint32_t max_probes)
{
	struct rte_hash_parameters hp = {
	    .name = name,
	    .entries = capacity,
	    .key_len = 16,
	    .hash_func = rte_jhash,
	    .socket_id = socket,
	};
	struct rfw_neigh *n;

	if (capacity < 8 || max_probes == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	n = rte_zmalloc_socket("rfw_neigh", sizeof(*n), RTE_CACHE_LINE_SIZE, socket);
	if (n == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	n->h = rte_hash_create(&hp);
	/* rte_hash may hand out positions up to its own rounded-up size: size the array by
	 * rte_hash_max_key_id so every position indexes it. */
	if (n->h != NULL)
		n->e = rte_zmalloc_socket("rfw_neigh_e",
		                          sizeof(*n->e) * ((size_t)rte_hash_max_key_id(n->h) + 1),
		                          RTE_CACHE_LINE_SIZE, socket);
	if (n->h == NULL || n->e == NULL) {
		rfw_neigh_free(n);
		rte_errno = ENOMEM;
		return NULL;
	}
	n->capacity = (uint32_t)rte_hash_max_key_id(n->h) + 1;
	n->max_probes = max_probes;
	n->reachable_tsc = reachable_tsc;
	n->retrans_tsc = retrans_tsc;
	n->gc_tsc = gc_tsc;
	return n;
}

void rfw_neigh_free(struct rfw_neigh *n)
{
	if (n == NULL)
		return;
	rte_hash_free(n->h);
	rte_free(n->e);
	rte_free(n);
}

/*
 * rte_jhash reads the key as 32-bit words; on x86 it does so even when the key is not 4-byte
 * aligned (UBSan reports it). Keys come from packet views at any offset, so hash an aligned
 * copy.
 */
union neigh_key {
	uint32_t w[4];
	uint8_t b[16];
};

static inline void key_of(union neigh_key *k, const uint8_t ip[16])
{
	memcpy(k->b, ip, 16);
}

struct rfw_neigh_entry *rfw_neigh_find(struct rfw_neigh *n, const uint8_t ip[16])
{
	union neigh_key k;
	int32_t pos;

	key_of(&k, ip);
	pos = rte_hash_lookup(n->h, k.w);

	return pos >= 0 ? &n->e[pos] : NULL;
}

struct rfw_neigh_entry *rfw_neigh_get(struct rfw_neigh *n, const uint8_t ip[16])
{
	struct rfw_neigh_entry *e;
	union neigh_key k;
	int32_t pos;

	key_of(&k, ip);
	pos = rte_hash_lookup(n->h, k.w);
	if (pos >= 0)
		return &n->e[pos];
	pos = rte_hash_add_key(n->h, k.w);
	if (pos < 0)
		return NULL;
	e = &n->e[pos];
	memset(e, 0, sizeof(*e));
	memcpy(e->ip, ip, 16);
	e->state = RFW_NEIGH_INCOMPLETE;
	return e;
}

void rfw_neigh_delete(struct rfw_neigh *n, const uint8_t ip[16])
{
	union neigh_key k;
	int32_t pos;

	key_of(&k, ip);
	pos = rte_hash_del_key(n->h, k.w);

	if (pos >= 0)
		n->e[pos].state = RFW_NEIGH_FREE;
}
