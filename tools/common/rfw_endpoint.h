/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Endpoint bring-up for the tools: a NIC on a DPDK port with its PD and CQ, RC QPs taken to
 * INIT, and a QP connected to its peer (attach to the NIC, INIT -> RTR -> RTS). rocefw-perf,
 * rocefw-demo and the NIC tests did this each in their own copy; this is the one.
 *
 * Errors are returned, not fatal: each call returns 0 or a negative errno (constructors NULL
 * and errno) and points *stage at the name of the call that failed ("rfw_port_setup",
 * "rfw_nic_create", "rfw_modify_qp(RTR)", ...), so a tool words its own message.
 * This file is the only tool code that calls rfw_nic_create / rfw_nic_qp_attach: when the NIC
 * core (nic/) changes the host interface, the tools follow here.
 */
#ifndef RFW_TOOLS_COMMON_RFW_ENDPOINT_H
#define RFW_TOOLS_COMMON_RFW_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_port.h"
#include "transport/rfw_verbs.h"

/* One NIC on one port, and what a tool registers on it. */
struct rfw_ep {
	struct rfw_port *port;
	struct rfw_nic *nic;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr; /* the tool's memory, registered by the tool */
	uint8_t *mem;
	size_t mem_len;
};

struct rfw_ep_conf {
	uint16_t port_id;
	uint32_t ip4;        /* this side's IPv4 address, host byte order */
	uint32_t nb_mbufs;   /* port's mbuf pool; 0: 8192 */
	uint32_t cq_entries; /* the one CQ (send and receive); 0: 4096 */
	struct rfw_nic_conf nic;
};

/* Port (IPv4 identity @c->ip4), NIC on its queue 0, PD and CQ. 0 or a negative errno. */
int rfw_ep_open(struct rfw_ep *ep, const struct rfw_ep_conf *c, const char **stage);

/* An RC QP on @pd with @cq for sends and receives: one SGE each way, every send signaled if
 * @sig_all (else as each work request asks), taken to INIT with @access (enum
 * rfw_access_flags). NULL with errno set on failure. */
struct rfw_qp *rfw_ep_qp_create(struct rfw_pd *pd, struct rfw_cq *cq, uint32_t send_wr,
                                uint32_t recv_wr, unsigned access, bool sig_all,
                                const char **stage);

/* Where and how a QP connects to its peer QP (the RTR and RTS attributes). */
struct rfw_ep_path {
	uint8_t gid[16]; /* peer's GID (IPv4-mapped for IPv4) */
	struct rte_ether_addr mac;
	enum rfw_mtu mtu;
	uint32_t qpn, rq_psn, sq_psn;
	uint8_t max_rd_atomic, max_dest_rd_atomic, min_rnr_timer;
	uint8_t timeout; /* IBA local ACK timeout exponent: 4.096 us x 2^timeout */
	uint8_t retry_cnt, rnr_retry;
	enum rfw_transport_mode transport;
};

/* A path toward @peer_qp of endpoint @peer in the same process: PSNs from 0, one outstanding
 * RDMA READ / atomic each way, min RNR timer 1, 7 retries; mtu, timeout and transport are the
 * caller's (@mtu, @timeout, GBN). */
void rfw_ep_path_local(struct rfw_ep_path *p, const struct rfw_ep *peer,
                       const struct rfw_qp *peer_qp, enum rfw_mtu mtu, uint8_t timeout);

/* Attach @qp (in INIT) to @nic toward @p and take it to RTR, then RTS. */
int rfw_ep_qp_connect(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_ep_path *p,
                      const char **stage);

/* The path MTU enum of @bytes (256..4096, a power of two; anything else: RFW_MTU_4096). */
enum rfw_mtu rfw_ep_mtu(uint32_t bytes);

#endif
