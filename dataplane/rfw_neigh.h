/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour table: IPv4 (mapped) and IPv6 address -> MAC, on rte_hash, with the states of
 * RFC 4861 7.3.2 reduced to what an endpoint on one L2 segment needs: INCOMPLETE (probing),
 * REACHABLE (confirmed within reachable_ms), STALE (older: still used, re-probed). ARP entries
 * (RFC 826) use the same machine. One writer (the lcore polling the port's queue 0); telemetry
 * reads the entry array without locks and may see an entry mid-update.
 */
#ifndef RFW_DATAPLANE_RFW_NEIGH_H
#define RFW_DATAPLANE_RFW_NEIGH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rfw_neigh_state {
	RFW_NEIGH_FREE = 0,
	RFW_NEIGH_INCOMPLETE,
	RFW_NEIGH_REACHABLE,
	RFW_NEIGH_STALE,
};

const char *rfw_neigh_state_name(enum rfw_neigh_state s);

struct rfw_neigh_entry {
	uint8_t ip[16];
	struct rte_ether_addr mac;
	uint8_t state;  /* enum rfw_neigh_state */
	uint8_t probes; /* probes sent since the last confirmation */
	uint64_t confirmed_tsc;
	uint64_t probe_tsc; /* when the last probe was sent */
};

struct rfw_neigh {
	struct rte_hash *h;
	struct rfw_neigh_entry *e; /* indexed by the rte_hash key position */
	uint32_t capacity;
	uint32_t max_probes;
	uint64_t reachable_tsc, retrans_tsc, gc_tsc;
};

/* Capacity >= 8; times in TSC cycles. NULL and rte_errno on failure. */
struct rfw_neigh *rfw_neigh_create(const char *name, uint32_t capacity, int socket,
                                   uint64_t reachable_tsc, uint64_t retrans_tsc, uint64_t gc_tsc,
                                   uint32_t max_probes);
void rfw_neigh_free(struct rfw_neigh *n);

/* The entry for @ip, or NULL. */
struct rfw_neigh_entry *rfw_neigh_find(struct rfw_neigh *n, const uint8_t ip[16]);
/* The entry for @ip, created INCOMPLETE if absent; NULL if the table is full. */
struct rfw_neigh_entry *rfw_neigh_get(struct rfw_neigh *n, const uint8_t ip[16]);
void rfw_neigh_delete(struct rfw_neigh *n, const uint8_t ip[16]);

/* Record a confirmed (REACHABLE) or merely learnt (STALE) link-layer address. */
static inline void rfw_neigh_set(struct rfw_neigh_entry *e, const uint8_t mac[6], bool confirmed,
                                 uint64_t now_tsc)
{
	memcpy(e->mac.addr_bytes, mac, RTE_ETHER_ADDR_LEN);
	e->state = confirmed ? RFW_NEIGH_REACHABLE : RFW_NEIGH_STALE;
	e->probes = 0;
	e->confirmed_tsc = now_tsc;
}

#ifdef __cplusplus
}
#endif
#endif
