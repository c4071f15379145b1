/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several NICs on one port: one NIC per RX/TX queue pair, each polled by its own lcore, and a
 * software dispatcher that brings every frame to the queue of the NIC that owns it.
 *
 * Why software: a RoCEv2 frame belongs to the QP its BTH names (destination QP, IBA 9.2), and
 * no PMD here can steer on the BTH. RSS (enabled when the PMD offers it) spreads frames by
 * the UDP source port, which the *sending* QP chooses: our own choice steers only what a
 * rocefw peer sends back, never what Linux rxe or a hardware NIC sends. memif, af_packet and
 * the ring PMD have no RSS at all (memif's queue i receives what the peer sent on its queue
 * i). So whatever the PMD put on a queue, that queue's lcore looks at the destination QPN and
 * hands a frame owned by another NIC to that NIC's queue through a single-producer /
 * single-consumer ring (one per ordered pair of queues), before the ICRC: the owner checks
 * it, parses it and counts it as if its PMD had delivered it. Frames of the port's control
 * plane (ARP, IPv6 ND, PAUSE / PFC) go to queue 0, whose lcore is the only writer of the
 * neighbour table's REACHABLE learning and of the pause state. QPN 1 (QP1, the CM) and QPNs no
 * NIC owns go to queue 0 too.
 *
 * Ownership is by QPN range: each NIC registers [qpn_base, qpn_base + max_qp) for its queue
 * (rfw_nic_create does it; the ranges of one port must not overlap, and by default a NIC on
 * queue q takes qpn_base 17 + q * RFW_STEER_QPN_STRIDE). Register before the lcores start
 * polling, remove after they stopped: the table is read without locks on every frame.
 *
 * Per frame: one load of the port's steering pointer on single-queue ports (NULL there); on a
 * multi-queue port a look-up over at most RFW_MAX_QUEUES ranges, and for a frame that is not
 * ours one ring enqueue. Every poll also looks at the rings into its queue (an empty ring
 * costs two loads). Counters: rx_steered, rx_steer_in, rx_steer_full (rfw_port.h).
 */
#ifndef RFW_DATAPLANE_RFW_STEER_H
#define RFW_DATAPLANE_RFW_STEER_H

#include <stdint.h>

#include <rte_ring.h>

#include "dataplane/rfw_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default QPN distance between the NICs of one port: queue q's NIC numbers its QPs from
 * 17 + q * 2^20 (QPNs are 24 bits: 8 queues fit, each with up to 2^20 - 17 QPs). */
#define RFW_STEER_QPN_STRIDE (1u << 20)
/* Frames one queue's dispatch ring to another holds (a power of two; 4095 usable): a full
 * RX ring's worth (1024 descriptors by default) and more, as a window of 64 KiB messages
 * arrives in bursts of 16 frames per message. */
#define RFW_STEER_RING_SIZE 4096

/* The QPN range a queue's NIC owns; n == 0: none. */
struct rfw_steer_range {
	uint32_t lo;
	uint32_t n;
};

struct rfw_steer {
	uint16_t nq;
	struct rfw_steer_range own[RFW_MAX_QUEUES];            /* by queue id */
	struct rte_ring *ring[RFW_MAX_QUEUES][RFW_MAX_QUEUES]; /* [to][from], SP/SC */
};

/* Set up the dispatcher of a port of several RX queues (rfw_port_setup calls it). 0 or
 * -ENOMEM. */
int rfw_steer_create(struct rfw_port *p, int socket);
/* Free the rings and any frames still in them (rfw_port_close). */
void rfw_steer_free(struct rfw_port *p);

/*
 * Make @qid the owner of QPNs [lo, lo + n). -EINVAL: no dispatcher on this port (single
 * queue: nothing to do, the caller may ignore it), bad queue or empty range; -EEXIST: the
 * queue already owns a range or the range overlaps another queue's.
 */
int rfw_port_steer_add(struct rfw_port *p, uint16_t qid, uint32_t lo, uint32_t n);
/* Forget @qid's range (after its lcore stopped polling). */
void rfw_port_steer_del(struct rfw_port *p, uint16_t qid);

/* The queue owning destination QPN @qpn: a registered range's, else 0. */
static inline uint16_t rfw_steer_owner(const struct rfw_steer *s, uint32_t qpn)
{
	for (uint16_t i = 0; i < s->nq; i++) {
		uint32_t n = __atomic_load_n(&s->own[i].n, __ATOMIC_ACQUIRE);

		if (qpn - s->own[i].lo < n)
			return i;
	}
	return 0;
}

/*
 * Hand frame @m, received on @q, to queue @to. Counted rx_steered; when @to's ring is full the
 * frame is freed and counted rx_steer_full (the sender's transport recovers it as a loss).
 */
void rfw_steer_put(struct rfw_queue *q, uint16_t to, struct rte_mbuf *m);
/* Take up to @max frames other queues handed to @q (counted rx_steer_in). */
uint16_t rfw_steer_take(struct rfw_queue *q, struct rte_mbuf **pkts, uint16_t max);

#ifdef __cplusplus
}
#endif
#endif
