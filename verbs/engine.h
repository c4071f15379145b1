/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC as the verbs device sees it: one small interface so that the host of the firmware
 * (today dataplane/rfw_nic.h on a DPDK port; nic/ once issue 14 lands) is swapped in this one
 * place. Everything else in verbs/ talks to the transport objects (transport/rfw_verbs.h) and
 * to these functions, never to DPDK.
 *
 * Threading: the engine is not thread-safe; callers hold rfw_eng_lock() around every call that
 * touches the transport or the NIC (the verbs layer does: docs/verbs.md "Progress").
 */
#ifndef RFW_VERBS_ENGINE_H
#define RFW_VERBS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/rfw_verbs.h"
#include "verbs/conf.h"

struct rfw_eng;

/* What the device reports about its port (queried, not on the fast path). */
struct rfw_eng_port_info {
	bool link_up;
	uint32_t speed_mbps; /* 0 if the PMD does not say */
	uint32_t ip_mtu;     /* IP MTU of the port */
	uint8_t mac[6];
	uint8_t gid[16]; /* IPv4-mapped address of the port */
};

/*
 * Start EAL with the configured options (the built-in loopback port without ROCEFW_EAL), set up
 * the first DPDK port with the configured address and host a NIC on its queue 0. Once per
 * process: later calls return the same engine. NULL and errno on failure (a message naming the
 * cause is printed).
 */
struct rfw_eng *rfw_eng_open(const struct rfw_vconf *conf);

void rfw_eng_lock(struct rfw_eng *e);
void rfw_eng_unlock(struct rfw_eng *e);
/* true when the lock was free and is now held. */
bool rfw_eng_trylock(struct rfw_eng *e);

/* The transport device PDs, MRs, CQs and QPs are created on. */
struct rfw_dev *rfw_eng_dev(struct rfw_eng *e);
void rfw_eng_port_info(struct rfw_eng *e, struct rfw_eng_port_info *pi);

/*
 * Give @qp its path to the peer whose GID is @dgid (IPv4-mapped) before it leaves INIT: the
 * peer's MAC is resolved by ARP (or is the port's own for a QP of this device). Replaces an
 * earlier path. 0 or -errno.
 */
int rfw_eng_qp_attach(struct rfw_eng *e, struct rfw_qp *qp, const uint8_t dgid[16],
                      uint8_t traffic_class);
/*
 * The MAC of the neighbour @ip (IPv4-mapped): 0 and @mac, -EAGAIN while ARP is asked (call
 * again after the NIC has polled), another -errno when it cannot be. Our own address: the
 * port's MAC (the loopback of a hardware NIC).
 */
int rfw_eng_resolve(struct rfw_eng *e, const uint8_t ip[16], uint8_t mac[6]);
/* Before rfw_destroy_qp(). Harmless if @qp was never attached. */
void rfw_eng_qp_detach(struct rfw_eng *e, struct rfw_qp *qp);

/* One poll iteration of the NIC; frames received + sent (0: idle). */
unsigned rfw_eng_poll(struct rfw_eng *e);
/* Nothing the NIC made waits to be handed to the port (engine lock held). */
bool rfw_eng_tx_idle(struct rfw_eng *e);
/* The process settles its NIC through the rdma_cm at exit (verbs/cma.c), not the engine's own
   linger (eng_linger, for plain verbs programs). */
void rfw_eng_linger_skip(void);
/* The NIC's clock in ns, for posting work. */
uint64_t rfw_eng_clock_ns(struct rfw_eng *e);
/* CLOCK_MONOTONIC in ns: the host's clock for waits off the NIC (the exit lingers). */
uint64_t rfw_eng_mono_ns(void);

#endif
