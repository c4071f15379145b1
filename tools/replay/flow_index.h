/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Index of RoCEv2 flow keys (source IP, destination IP, destination QPN) -> dense entry number
 * 0, 1, 2, ... in order of insertion. The callers keep their per-flow records in their own
 * arrays under the same numbers; the index keeps a copy of the keys so it needs no callback to
 * compare them. Open addressing with linear probing, load factor at most one half.
 */
#ifndef RFW_REPLAY_FLOW_INDEX_H
#define RFW_REPLAY_FLOW_INDEX_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rfw_flow_key {
	uint8_t src[16]; /* IPv4-mapped for IPv4 */
	uint8_t dst[16];
	uint32_t qpn;
};

struct rfw_flow_index {
	struct rfw_flow_key *keys; /* by entry number */
	uint32_t n, cap;
	uint32_t *slots; /* entry number + 1; 0 = empty */
	uint32_t nslots; /* power of two */
};

/* Per packet, so word-wise: four 64-bit loads mixed with splitmix64's finaliser. Only the
 * table's distribution depends on it. */
static inline uint32_t rfw_flow_key_hash(const uint8_t *src, const uint8_t *dst, uint32_t qpn)
{
	uint64_t w[4], h = qpn;

	memcpy(&w[0], src, 8);
	memcpy(&w[1], src + 8, 8);
	memcpy(&w[2], dst, 8);
	memcpy(&w[3], dst + 8, 8);
	for (int i = 0; i < 4; i++) {
		h ^= w[i];
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h *= 0x94d049bb133111ebull;
	return (uint32_t)(h ^ (h >> 32));
}

static inline void rfw_flow_index_free(struct rfw_flow_index *ix)
{
	free(ix->keys);
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

/* Entry number of the key, or -1. */
static inline int64_t rfw_flow_index_find(const struct rfw_flow_index *ix, const uint8_t *src,
                                          const uint8_t *dst, uint32_t qpn)
{
	uint32_t k;

	if (ix->nslots == 0)
		return -1;
	k = rfw_flow_key_hash(src, dst, qpn) & (ix->nslots - 1);
	while (ix->slots[k]) {
		const struct rfw_flow_key *e = &ix->keys[ix->slots[k] - 1];

		if (e->qpn == qpn && !memcmp(e->src, src, 16) && !memcmp(e->dst, dst, 16))
			return ix->slots[k] - 1;
		k = (k + 1) & (ix->nslots - 1);
	}
	return -1;
}

static inline int rfw_flow_index__rehash(struct rfw_flow_index *ix, uint32_t nslots)
{
	uint32_t *s = calloc(nslots, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < ix->n; i++) {
		const struct rfw_flow_key *e = &ix->keys[i];
		uint32_t k = rfw_flow_key_hash(e->src, e->dst, e->qpn) & (nslots - 1);

		while (s[k])
			k = (k + 1) & (nslots - 1);
		s[k] = i + 1;
	}
	free(ix->slots);
	ix->slots = s;
	ix->nslots = nslots;
	return 0;
}

/* Add a key that is not in the index (rfw_flow_index_find said -1): its entry number (the
 * old ix->n), or -ENOMEM with the index unchanged. */
static inline int64_t rfw_flow_index_insert(struct rfw_flow_index *ix, const uint8_t *src,
                                            const uint8_t *dst, uint32_t qpn)
{
	struct rfw_flow_key *e;
	uint32_t k;

	if ((ix->n + 1) * 2 > ix->nslots &&
	    rfw_flow_index__rehash(ix, ix->nslots ? ix->nslots * 2 : 64))
		return -ENOMEM;
	if (ix->n == ix->cap) {
		uint32_t ncap = ix->cap ? ix->cap * 2 : 16;
		struct rfw_flow_key *nk = realloc(ix->keys, ncap * sizeof(*nk));

		if (nk == NULL)
			return -ENOMEM;
		ix->keys = nk;
		ix->cap = ncap;
	}
	e = &ix->keys[ix->n];
	memcpy(e->src, src, 16);
	memcpy(e->dst, dst, 16);
	e->qpn = qpn;
	k = rfw_flow_key_hash(src, dst, qpn) & (ix->nslots - 1);
	while (ix->slots[k])
		k = (k + 1) & (ix->nslots - 1);
	ix->slots[k] = ++ix->n;
	return ix->n - 1;
}

#endif
