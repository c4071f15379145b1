/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocefw NIC glue: one RC transport device (transport/rfw_verbs.h) hosted on one queue of a
 * DPDK port (dataplane/rfw_port.h). This is the part of the software NIC that firmware would be:
 *
 *   - packets out: the transport writes the IB part of each packet straight into an mbuf taken
 *     from the port's mempool, after headroom for Ethernet/IPv4/UDP; the NIC copies a per-QP
 *     header template in front, patches lengths and the IPv4 checksum, appends the ICRC and
 *     buffers the frame for TX. No malloc on the packet path.
 *   - packets in: rfw_rx_burst() (classification + ICRC) -> rfw_dev_rx() with the parsed view
 *     (ECN bits, addresses, UDP source port, RX time).
 *   - when: a paced scheduler. Each QP has a pacer (cc/pacer.h) driven by its DCQCN reaction
 *     point (cc/dcqcn.h); a QP whose next request packet may not leave yet parks that one packet
 *     and sits in a hashed timer wheel until its departure time. Responses (ACK/NAK, READ
 *     responses, atomic ACKs) and CNPs are never held: they go out as soon as the transport
 *     produces them, ahead of the QP's parked data. Ready QPs are served round robin, a bounded
 *     number of packets each, so one QP cannot starve the others.
 *   - transport timers (local ACK timeout, RNR) are entries of the same wheel, armed from
 *     rfw_qp_next_deadline().
 *
 * Threading: a struct rfw_nic belongs to one lcore. Time is read once per rfw_nic_poll()
 * (TSC converted to ns) and handed to everything below.
 */
#ifndef RFW_DATAPLANE_RFW_NIC_H
#define RFW_DATAPLANE_RFW_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "cc/dcqcn.h"
#include "dataplane/rfw_port.h"
#include "transport/rfw_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * NIC counters, mlx5 names where mlx5 has one (X(name, meaning)). The transport's own counters
 * (rfw_dev_counters) and the port's (rfw_port_ctr) are separate tables.
 */
#define RFW_FOREACH_NIC_CTR(X)                                                                     \
	X(tx_paced_holds, "request packets parked until their pacer departure time")               \
	X(tx_no_mbuf, "tx_alloc calls refused: mempool empty (the burst is retried later)")        \
	X(tx_too_big, "tx_alloc calls refused: packet larger than the frame size")                 \
	X(rx_dev_dropped, "RoCEv2 frames the transport dropped (unknown QP, bad state, ...)")      \
	X(np_cnp_sent, "CNPs sent by the notification point (mlx5 np_cnp_sent)")                   \
	X(np_ecn_marked_roce_packets, "CE-marked RoCE data packets received (mlx5)")               \
	X(rp_cnp_handled, "CNPs handed to a reaction point (mlx5 rp_cnp_handled)")                 \
	X(timer_fired, "transport timer wheel entries that expired")                               \
	X(sched_rounds, "QP services by the round-robin scheduler")                                \
	X(pkey_violations, "RoCEv2 frames dropped: P_Key not the default partition (IBA 10.9.3)")

enum rfw_nic_ctr {
#define RFW_NIC_CTR_ENUM(name, doc) RFW_NIC_CTR_##name,
	RFW_FOREACH_NIC_CTR(RFW_NIC_CTR_ENUM)
#undef RFW_NIC_CTR_ENUM
	    RFW_NIC_CTR__COUNT
};
const char *rfw_nic_ctr_name(enum rfw_nic_ctr c);
const char *rfw_nic_ctr_doc(enum rfw_nic_ctr c);

/* NIC configuration. Zero fields take the default named beside them. */
struct rfw_nic_conf {
	struct rfw_dev_attr dev_attr; /* transport device attributes (transport defaults) */
	/* DSCP of data and response packets, sent ECT(0); default 26 (mlx5 RoCE tos 106 >> 2),
	 * range 0..63. Use dscp_set to send DSCP 0. */
	uint8_t dscp;
	bool dscp_set;
	/* DCQCN profile (cc/dcqcn.h, dcqcn_prof_config). NULL: no congestion control, no pacing
	 * (the built-in notification point of the transport still answers CE with CNPs). */
	const struct dcqcn_prof *cc_prof;
	/* Pacer burst tolerance in ns of transmission time at the QP's rate; default 2000,
	 * range 0..1000000. */
	uint32_t pacer_burst_ns;
	/* Packets a QP may send per scheduler turn; default 16, range 1..RFW_MAX_BURST. */
	uint32_t quantum;
};

struct rfw_nic;

/*
 * Create a NIC on queue @q (owned by the calling lcore) of a port set up with rfw_port_setup().
 * The port must have an IPv4 address (the header template is IPv4; IPv6 is future work).
 * Returns NULL with rte_errno set (EINVAL, ENOMEM, or the transport's errno).
 */
struct rfw_nic *rfw_nic_create(struct rfw_queue *q, const struct rfw_nic_conf *conf);
/* Destroy the NIC (the caller destroys its QPs, CQs, MRs and PDs first). */
void rfw_nic_destroy(struct rfw_nic *nic);
/* The transport device to create PDs, MRs, CQs and QPs on. */
struct rfw_dev *rfw_nic_dev(struct rfw_nic *nic);
/* The port GID (IPv4-mapped) to put in a peer's rfw_ah_attr.dgid. */
const uint8_t *rfw_nic_gid(const struct rfw_nic *nic);

/* Where a QP's packets go. */
struct rfw_nic_path {
	struct rte_ether_addr dst_mac;
	uint8_t dst_ip[16]; /* IPv4-mapped */
	/* UDP source port; 0: 0xc000 | (QPN & 0x3fff), one flow (entropy value) per QP as rxe. */
	uint16_t udp_sport;
};

/*
 * Attach @qp (created on this NIC's device) to the scheduler with its path: builds its header
 * template and, with a cc profile, its reaction/notification points and pacer. Call before the
 * QP sends its first packet (e.g. between INIT and RTR). 0, or -EINVAL (not this device's QP,
 * bad path), -EEXIST (already attached).
 */
int rfw_nic_qp_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path);
/* Detach before rfw_destroy_qp(); a parked packet is freed. */
void rfw_nic_qp_detach(struct rfw_nic *nic, struct rfw_qp *qp);

/* The QP has new work (after rfw_post_send / rfw_post_recv): put it on the ready list. */
void rfw_nic_qp_kick(struct rfw_nic *nic, struct rfw_qp *qp);

/*
 * One poll iteration: read the time, receive a burst and hand it to the transport, run expired
 * timers, serve ready QPs, flush TX if due. Returns the number of frames received + sent (0:
 * idle). Never allocates except mbufs from the pool.
 */
unsigned rfw_nic_poll(struct rfw_nic *nic);

/* The time of the last rfw_nic_poll(), in ns (the value the transport saw). */
uint64_t rfw_nic_now_ns(const struct rfw_nic *nic);
/* Read the clock now (TSC -> ns, same origin as rfw_nic_now_ns), for posting work. */
uint64_t rfw_nic_clock_ns(struct rfw_nic *nic);

uint64_t rfw_nic_ctr(const struct rfw_nic *nic, enum rfw_nic_ctr c);
/* Current pacing rate of @qp in kb/s (0: unpaced). */
uint64_t rfw_nic_qp_rate_kbps(const struct rfw_nic *nic, const struct rfw_qp *qp);
/*
 * Read-only view of @qp's reaction and notification points (rates, alpha, cnt[] with the
 * DCQCN_RP_CNT_* / DCQCN_NP_CNT_* counters); NULL if @qp is not attached or the NIC has no
 * cc profile. For monitoring from the NIC's lcore (the state is not synchronised).
 */
const struct dcqcn_rp *rfw_nic_qp_rp(const struct rfw_nic *nic, const struct rfw_qp *qp);
const struct dcqcn_np *rfw_nic_qp_np(const struct rfw_nic *nic, const struct rfw_qp *qp);

#ifdef __cplusplus
}
#endif
#endif
