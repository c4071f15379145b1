/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocefw NIC glue: one RC transport device (transport/rfw_verbs.h) hosted on one queue of a
 * DPDK port (dataplane/rfw_port.h). This is the part of the software NIC that firmware would be:
 *
 *   - packets out: the transport writes the IB part of each packet straight into an mbuf taken
 *     from the port's mempool, after room for the QP's headers (Ethernet, optional 802.1Q tag,
 *     IPv4 or IPv6, UDP); the NIC copies the QP's header template in front, patches lengths
 *     (and the IPv4 header checksum, or optionally the IPv6 UDP checksum), appends the ICRC
 *     and buffers the frame for TX. No malloc on the packet path.
 *   - peer MAC: given, or resolved by ARP/ND from the poll loop (the QP waits meanwhile).
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
 * (TSC converted to ns) and handed to everything below. Telemetry (/rocefw/nic, /rocefw/qp/...,
 * /rocefw/cc/...) runs on DPDK's telemetry thread: it reads counters live (64-bit words with
 * one writer: never torn, possibly a poll behind) and per-QP state only from snapshots the
 * lcore publishes every snapshot_us into an array that lives as long as the NIC, under a
 * sequence counter; it never touches a struct rfw_qp, which the application may destroy. A
 * registry lock keeps a NIC from being freed while a command reads it (docs/nic.md).
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
	X(tx_pkts, "RoCEv2 frames built for TX, sent or parked (all QPs)")                         \
	X(tx_bytes, "bytes of those frames (Ethernet header to ICRC)")                             \
	X(rx_pkts, "RoCEv2 frames handed to the transport (all QPs)")                              \
	X(rx_bytes, "bytes of those frames")                                                       \
	X(l2_resolved, "QPs attached with a zero dst_mac whose peer MAC ARP/ND resolved")          \
	X(l2_resolve_failed, "QPs moved to ERR: their peer never answered ARP/ND")                 \
	X(l2_tagged_probes, "ARP requests / NS sent by the NIC on a QP's VLAN while resolving")    \
	X(snapshots, "per-QP telemetry snapshots published")                                       \
	X(pkey_violations, "RoCEv2 frames dropped: P_Key not the default partition (IBA 10.9.3)")  \
	X(estats_dumps, "Estats trigger dumps written (docs/estats.md)")                           \
	X(estats_dump_errors, "Estats trigger dumps that could not be written (open/write "        \
	                      "failed)")

/*
 * Per-QP NIC counters (X(name, meaning)); telemetry /rocefw/qp/info. The transport's per-QP
 * counters (rfw_qp_counters) are a separate table.
 */
#define RFW_FOREACH_NIC_QP_CTR(X)                                                                  \
	X(tx_pkts, "frames of this QP built for TX, sent or parked (requests, responses, CNPs)")   \
	X(tx_bytes, "bytes of those frames (Ethernet header to ICRC)")                             \
	X(rx_pkts, "RoCEv2 frames for this QP handed to the transport")                            \
	X(rx_bytes, "bytes of those frames")                                                       \
	X(tx_paced_holds, "request packets parked until their pacer departure time")               \
	X(np_cnp_sent, "CNPs sent by this QP's notification point")                                \
	X(np_ecn_marked_roce_packets, "CE-marked packets received by this QP")                     \
	X(rp_cnp_handled, "CNPs handed to this QP's reaction point")                               \
	X(l2_wait_turns, "scheduler turns skipped while the peer MAC was being resolved")

enum rfw_nic_qp_ctr {
#define RFW_NIC_QP_CTR_ENUM(name, doc) RFW_NIC_QP_CTR_##name,
	RFW_FOREACH_NIC_QP_CTR(RFW_NIC_QP_CTR_ENUM)
#undef RFW_NIC_QP_CTR_ENUM
	    RFW_NIC_QP_CTR__COUNT
};
const char *rfw_nic_qp_ctr_name(enum rfw_nic_qp_ctr c);
const char *rfw_nic_qp_ctr_doc(enum rfw_nic_qp_ctr c);

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
	/* Transport device attributes; 0 picks the transport's default for every field,
	 * including ack_every (64; UINT32_MAX: AckReq on last packets only) and
	 * np_min_time_between_cnps_ns (4000). */
	struct rfw_dev_attr dev_attr;
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
	/* One 802.1Q tag on every QP's frames unless its path says otherwise: VLAN id 1..4094. */
	bool vlan;
	uint16_t vlan_id;
	/* 802.1p priority (PCP) of tagged data/response frames; default 3, range 0..7 (use
	 * pcp_set for 0). Tagged CNPs carry the profile's np_cnp_prio (6 without a profile). */
	uint8_t pcp;
	bool pcp_set;
	/* IPv6: compute the UDP checksum (RFC 8200 8.1). Default off: checksum 0, as Linux rxe
	 * sends and accepts for RoCEv2 over IPv6 (the ICRC protects the datagram; RFC 6936
	 * zero-checksum mode). docs/nic.md "IPv6 and the UDP checksum". */
	bool udp6_csum;
	/* Interval at which the NIC lcore publishes each attached QP's state for telemetry, in
	 * us; default 1000, range 10..1000000. */
	uint32_t snapshot_us;
	/*
	 * Estats (docs/estats.md): per-WQE timestamps and latency histograms on every QP and CQ of
	 * the device, telemetry /rocefw/estats. The environment overrides these for programs that
	 * do not set them: ROCEFW_ESTATS=0|1, ROCEFW_ESTATS_INTERVAL_MS,
	 * ROCEFW_ESTATS_THRESHOLD_US, ROCEFW_ESTATS_DUMP_DIR.
	 */
	bool estats;
	uint32_t estats_interval_ms;  /* histogram interval; default 60000, range 1..3600000 */
	uint32_t estats_threshold_us; /* dump a QP when T6-T1 (or T5-T1) exceeds it; 0 = never
	                                 (default), range 0..3600000000 */
	const char *estats_dump_dir;  /* where dumps go; default "." (copied at create) */
};

struct rfw_nic;

/* NICs per process that telemetry can list. */
#define RFW_NIC_MAX 16

/*
 * Create a NIC on queue @q (owned by the calling lcore) of a port set up with rfw_port_setup().
 * The port needs an IPv4 or an IPv6 address (QPs reach peers of the families it has). The NIC
 * is registered for telemetry (/rocefw/nic...). Returns NULL with rte_errno set (EINVAL,
 * ENOMEM, ENOSPC: more than RFW_NIC_MAX NICs, or the transport's errno).
 */
struct rfw_nic *rfw_nic_create(struct rfw_queue *q, const struct rfw_nic_conf *conf);
/* Destroy the NIC (the caller destroys its QPs, CQs, MRs and PDs first). */
void rfw_nic_destroy(struct rfw_nic *nic);
/* The transport device to create PDs, MRs, CQs and QPs on. */
struct rfw_dev *rfw_nic_dev(struct rfw_nic *nic);
/* The port GID to put in a peer's rfw_ah_attr.dgid: IPv4-mapped if the port has an IPv4
 * address, else its IPv6 address (for IPv6 paths on a dual-stack port, use the IPv6 address
 * of the port's identity). */
const uint8_t *rfw_nic_gid(const struct rfw_nic *nic);

/* VLAN choice of a path. */
enum rfw_nic_vlan {
	RFW_NIC_VLAN_CONF = 0, /* as rfw_nic_conf.vlan / vlan_id (the default) */
	RFW_NIC_VLAN_NONE = 1, /* untagged */
	RFW_NIC_VLAN_TAG = 2,  /* one 802.1Q tag with rfw_nic_path.vlan_id */
};

/* Where a QP's packets go. Zero fields take the default named beside them. */
struct rfw_nic_path {
	/* Peer MAC. All zero: resolved with ARP (IPv4) / ND (IPv6) through the port's neighbour
	 * table (rfw_port_resolve); the QP sends nothing until then. Needs the NIC on queue 0. */
	struct rte_ether_addr dst_mac;
	/* Peer address: IPv4-mapped (::ffff:a.b.c.d) for IPv4, else IPv6; the source address
	 * is the port's of the same family. */
	uint8_t dst_ip[16];
	/* UDP source port; 0: 0xc000 | (QPN & 0x3fff), one flow (entropy value) per QP as rxe. */
	uint16_t udp_sport;
	uint8_t vlan;     /* enum rfw_nic_vlan */
	uint16_t vlan_id; /* with RFW_NIC_VLAN_TAG: 1..4094 */
	uint8_t pcp;      /* data PCP of this path when pcp_set (else the NIC's), 0..7 */
	bool pcp_set;
};

/* Where a QP stands with its peer's MAC. */
enum rfw_nic_l2 {
	RFW_NIC_L2_READY,     /* MAC known: frames go out */
	RFW_NIC_L2_RESOLVING, /* ARP/ND outstanding: the QP's packets wait in the transport */
	RFW_NIC_L2_FAILED,    /* no answer after the neighbour layer's probes: QP moved to ERR */
};
const char *rfw_nic_l2_name(enum rfw_nic_l2 s);

/*
 * Attach @qp (created on this NIC's device) to the scheduler with its path: builds its header
 * template (Ethernet, optional 802.1Q tag, IPv4 or IPv6, UDP) and, with a cc profile, its
 * reaction/notification points and pacer. Call before the QP sends its first packet (e.g.
 * between INIT and RTR). With a zero dst_mac the peer is resolved by ARP/ND from the poll loop
 * (never blocking): the QP's packets wait in the transport until the MAC is known; if the
 * neighbour layer gives up (neigh_max_probes unanswered) the QP is moved to ERR, which flushes
 * its work requests with RFW_WC_WR_FLUSH_ERR. 0, or -EINVAL (not this device's QP, bad path,
 * no port address of the path's family, zero dst_mac on a queue other than 0), -EEXIST
 * (already attached), -ENOSPC (neighbour table full), -ENOMEM.
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

/*
 * Publish every attached QP's state for telemetry now (normally done by rfw_nic_poll every
 * snapshot_us, a slice per poll). From the NIC's lcore.
 */
void rfw_nic_publish(struct rfw_nic *nic);

/* The time of the last rfw_nic_poll(), in ns (the value the transport saw). */
uint64_t rfw_nic_now_ns(const struct rfw_nic *nic);
/* Read the clock now (TSC -> ns, same origin as rfw_nic_now_ns), for posting work. */
uint64_t rfw_nic_clock_ns(struct rfw_nic *nic);

uint64_t rfw_nic_ctr(const struct rfw_nic *nic, enum rfw_nic_ctr c);
/* Per-QP NIC counter of @qp (0 if not attached). */
uint64_t rfw_nic_qp_ctr(const struct rfw_nic *nic, const struct rfw_qp *qp, enum rfw_nic_qp_ctr c);
/* @qp's peer MAC state (RFW_NIC_L2_FAILED also when not attached). */
enum rfw_nic_l2 rfw_nic_qp_l2(const struct rfw_nic *nic, const struct rfw_qp *qp);
/* The NIC's id in telemetry (/rocefw/nics), 0.. in creation order; -1 if not registered. */
int rfw_nic_id(const struct rfw_nic *nic);
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
