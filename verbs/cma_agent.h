/* SPDX-License-Identifier: BSD-3-Clause */
/* QP1 of the rocefw device for the rdma_cm (cma_agent.c). Engine lock held for every call. */
#ifndef RFW_VERBS_CMA_AGENT_H
#define RFW_VERBS_CMA_AGENT_H

#include <stdint.h>

#include "verbs/engine.h"

/* X(name, meaning) */
#define RFW_CMA_AGENT_COUNTERS(X)                                                                  \
	X(mad_rx, "MADs received on QP1 (handed to the CM)")                                       \
	X(mad_tx, "MADs posted on QP1")                                                            \
	X(mad_tx_dropped, "MADs not sent: their wait queue was full, or QP1 refused the post")     \
	X(mad_tx_no_arp, "MADs dropped after 1 s without the peer's MAC (the CM resends)")

enum rfw_cma_agent_cnt {
#define X(n, m) RFW_CMA_AGENT_CNT_##n,
	RFW_CMA_AGENT_COUNTERS(X)
#undef X
	    RFW_CMA_AGENT_CNT__COUNT
};
extern const char *const rfw_cma_agent_cnt_name[RFW_CMA_AGENT_CNT__COUNT];

struct cma_agent;

/* A MAD from the IPv4 address @src_ip (network order). */
typedef void (*rfw_cma_agent_rx_fn)(void *arg, uint32_t src_ip, const uint8_t *mad, uint32_t len,
                                    uint64_t now_ns);

struct cma_agent *rfw_cma_agent_create(struct rfw_eng *e, uint64_t now_ns);
void rfw_cma_agent_destroy(struct cma_agent *a);
/* Send @mad to QP1 at @ip (network order), now or once ARP answers. 0 or -errno. */
int rfw_cma_agent_send(struct cma_agent *a, uint32_t ip, const uint8_t *mad, uint16_t len,
                       uint64_t now_ns);
/* Received MADs to @rx; completed sends retired; queued MADs sent when their MAC is known. */
void rfw_cma_agent_poll(struct cma_agent *a, uint64_t now_ns, rfw_cma_agent_rx_fn rx, void *arg);
/* No MAD waits to be posted and every posted send has completed. */
bool rfw_cma_agent_idle(const struct cma_agent *a);
void rfw_cma_agent_counters(const struct cma_agent *a, uint64_t out[RFW_CMA_AGENT_CNT__COUNT]);

#endif
