/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK host of the firmware (nic/rfw_fw.h): one NIC on one queue of a DPDK port
 * (dataplane/rfw_port.h). The firmware (scheduler, pacing, congestion control, framing,
 * counters, snapshots) is nic/'s; this file gives it what is DPDK's:
 *
 *   - frames: mbufs from the port's mempool (the firmware writes headers + IB part + ICRC into
 *     one segment), sent through the queue's TX buffer, flushed at the end of a poll that sent;
 *   - time: the TSC, read once per rfw_nic_poll() and converted to ns;
 *   - frames in: rfw_rx_burst() (classification, ICRC check, ARP/ND and PFC handled by the
 *     port) -> rfw_fw_rx();
 *   - peer MAC: given, or resolved by ARP/ND through the port's neighbour table from the poll
 *     loop (rfw_nic_l2.c; the QP waits meanwhile);
 *   - telemetry: /rocefw/nic, /rocefw/qp/..., /rocefw/cc/..., /rocefw/estats
 *     (rfw_nic_telemetry.c) read the firmware's seqlock snapshots, never a struct rfw_qp;
 *   - Estats trigger dumps are written by a thread of their own (rfw_nic_estats.c), never on
 *     the poll thread.
 *
 * Posting is the doorbell: rfw_post_send()/rfw_post_recv() on a QP of rfw_nic_dev() tell the
 * scheduler; there is no call to make after posting.
 *
 * Threading: a struct rfw_nic belongs to one lcore (the one calling rfw_nic_poll and posting
 * work). docs/nic.md.
 */
#ifndef RFW_DATAPLANE_RFW_NIC_H
#define RFW_DATAPLANE_RFW_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "cc/dcqcn.h"
#include "cc/timely.h"
#include "dataplane/rfw_port.h"
#include "nic/rfw_fw.h"
#include "transport/estats.h"
#include "transport/rfw_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Counters of the DPDK host (X(name, meaning)). rfw_nic_ctr() shows the firmware's
 * (RFW_FOREACH_FW_CTR, nic/rfw_fw.h) followed by these, in one table; the transport's
 * (rfw_dev_counters) and the port's (rfw_port_ctr) are separate tables. One owner per event:
 * docs/nic.md "Counters".
 */
#define RFW_FOREACH_NIC_HOST_CTR(X)                                                                \
	X(tx_no_mbuf, "frame buffers the mempool could not give (the QP retries next poll)")       \
	X(tx_backlog_polls, "polls that gave the firmware no turn: the port's queue still held "   \
	                    "frames the PMD had refused")                                          \
	X(tx_link_down, "times the port's queue took no frame for tx_stall_ms while frames "       \
	                "waited: the NIC treats the link as down until the PMD takes one again")   \
	X(tx_stall_drops, "frames the NIC dropped while the link was down (the PMD took none for " \
	                  "tx_stall_ms): their QPs' timers then retry and fail them")              \
	X(l2_resolved, "QPs attached with a zero dst_mac whose peer MAC ARP/ND resolved")          \
	X(l2_resolve_failed, "QPs moved to ERR: their peer never answered ARP/ND")                 \
	X(l2_tagged_probes, "ARP requests / NS sent by the NIC on a QP's VLAN while resolving")    \
	X(estats_dumps, "Estats trigger dumps written (docs/estats.md)")                           \
	X(estats_dump_errors, "Estats trigger dumps not written (open/write failed, or the "       \
	                      "writer's queue was full)")                                          \
	X(estats_records_dropped, "Estats WQE records not binned: the ring to the NIC's Estats "   \
	                          "thread was full (or no memory for a QP's histograms)")

#define RFW_FOREACH_NIC_CTR(X) RFW_FOREACH_FW_CTR(X) RFW_FOREACH_NIC_HOST_CTR(X)

/* Per-QP NIC counters: the firmware's (telemetry /rocefw/qp/info "nic_counters"). */
#define RFW_FOREACH_NIC_QP_CTR(X) RFW_FOREACH_FW_QP_CTR(X)

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
enum rfw_nic_host_ctr {
#define RFW_NIC_HOST_CTR_ENUM(name, doc) RFW_NIC_HOST_CTR_##name,
	RFW_FOREACH_NIC_HOST_CTR(RFW_NIC_HOST_CTR_ENUM)
#undef RFW_NIC_HOST_CTR_ENUM
	    RFW_NIC_HOST_CTR__COUNT
};
const char *rfw_nic_ctr_name(enum rfw_nic_ctr c);
const char *rfw_nic_ctr_doc(enum rfw_nic_ctr c);

/* rfw_nic_conf.tx_ref_min: every payload copied. */
#define RFW_NIC_TX_REF_OFF UINT32_MAX

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
	/* DCQCN profile (cc/dcqcn.h, dcqcn_prof_config): reaction point (rate per QP, destination
	 * or port as its rp_scope says), notification point and pacing. NULL: no congestion
	 * control, no pacing (the built-in notification point of the transport still answers CE
	 * with CNPs). */
	const struct dcqcn_prof *cc_prof;
	/* TIMELY profile (cc/timely.h): the rate machine instead of DCQCN's reaction point (a
	 * cc_prof still gives the notification point). NULL: none. */
	const struct timely_prof *timely_prof;
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
	/* Snapshots written per second at most, whatever the QP count (each costs a cache miss or
	 * more on a QP's state): beyond snapshot_us x this / 10^6 attached QPs a round takes
	 * longer than snapshot_us. Default 20000, range 1000..10000000 (docs/scale.md: 100000
	 * cost 15-25 % of the 64 B message rate at 1,024 QPs). */
	uint32_t snapshot_max_per_s;
	/*
	 * How long the port's queue may take no frame at all while frames wait before the NIC
	 * treats the link as down, in ms; default 30000 (at 1000 a peer starved of CPU was taken
	 * for gone), range 1..3600000. While frames wait the QPs get no turn (tx_backlog_polls),
	 * their timers included; a peer that is gone (a memif peer that exited) would keep them
	 * waiting for ever. Down, the NIC drops what the PMD refuses (tx_stall_drops), as a NIC
	 * does on a link that is down, and its QPs run: their ACK timers retry and fail them with
	 * RFW_WC_RETRY_EXC_ERR (IBA 9.7.6.1.3). Up again at the first frame the PMD takes. Only a
	 * link that once took frames goes down, and only after polls that kept trying (a paused
	 * poll loop starts the wait again).
	 */
	uint32_t tx_stall_ms;
	/*
	 * Payloads of at least this many bytes (one SGE's, a multiple of 4) go out from the MR
	 * where they are, attached to the frame's mbufs, instead of being copied into them
	 * (docs/nic.md "Payload sent from the MR"), on ports whose PMD copies frames at its burst
	 * (rfw_port_tx_ref); elsewhere they are copied with their ICRC folded in the same pass.
	 * With udp6_csum, and below the minimum, a payload is copied and its ICRC computed after.
	 * Bytes; default 1024, range 64..4096; RFW_NIC_TX_REF_OFF: never.
	 */
	uint32_t tx_ref_min;
	/*
	 * Estats (docs/estats.md): per-WQE timestamps and latency histograms on every QP and CQ of
	 * the device, telemetry /rocefw/estats. Programs that take these from the environment
	 * call rfw_nic_conf_env() while parsing their options; the library never reads it.
	 */
	bool estats;
	uint32_t estats_interval_ms;  /* histogram interval; default 60000, range 1..3600000 */
	uint32_t estats_threshold_us; /* dump a QP when T6-T1 (or T5-T1) exceeds it; 0 = never
	                                 (default), range 0..3600000000 */
	const char *estats_dump_dir;  /* where dumps go; default "." (copied at create) */
	/*
	 * The clock, ns (the host's to give, as every input of the firmware): NULL reads the TSC
	 * once per rfw_nic_poll(). Tests give a virtual clock to replay an event script at exact
	 * times (tests/dpdk/test_hosts.c). Must not go backwards.
	 */
	uint64_t (*clock_ns)(void *arg);
	void *clock_arg;
};

struct rfw_nic;

/*
 * Fill @conf's Estats fields from the environment: ROCEFW_ESTATS=0|1,
 * ROCEFW_ESTATS_INTERVAL_MS (1..3600000), ROCEFW_ESTATS_THRESHOLD_US (0..3600000000),
 * ROCEFW_ESTATS_DUMP_DIR (docs/estats.md "Tunables"); ROCEFW_SNAPSHOT_US,
 * ROCEFW_SNAPSHOT_MAX_PER_S, ROCEFW_TX_STALL_MS and ROCEFW_TX_REF_MIN (0: off, or 64..4096;
 * docs/nic.md). For programs, at option parsing; unset
 * variables leave the fields alone. 0, or -EINVAL with the variable named on stderr.
 */
int rfw_nic_conf_env(struct rfw_nic_conf *conf);

/* NICs per process that telemetry can list. */
#define RFW_NIC_MAX 16

/*
 * Create a NIC on queue @q (owned by the calling lcore) of a port set up with rfw_port_setup().
 * The port needs an IPv4 or an IPv6 address (QPs reach peers of the families it has). The NIC
 * is registered for telemetry (/rocefw/nic...). On a port of several queues, one NIC per queue,
 * each polled by its own lcore: the NIC owns QPNs [qpn_base, qpn_base + max_qp) on the port,
 * and the port's dispatcher brings it every frame for them whatever queue it arrived on
 * (rfw_steer.h); dev_attr.qpn_base defaults to 17 + queue * RFW_STEER_QPN_STRIDE. Returns NULL
 * with rte_errno set (EINVAL, ENOMEM, ENOSPC: more than RFW_NIC_MAX NICs, EEXIST: the queue
 * has a NIC or the QPN range overlaps another NIC's on the port, or the transport's errno).
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
	 * table (rfw_port_resolve); the QP sends nothing until then. */
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
 * no port address of the path's family), -EEXIST
 * (already attached), -ENOSPC (neighbour table full), -EHOSTUNREACH (the destination's
 * neighbour entry just failed resolution: its probes went unanswered), -ENOMEM.
 */
int rfw_nic_qp_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path);
/*
 * The MAC of neighbour @ip through the port's table (ARP / ND), for datagram address handles:
 * 0 and @mac; -EAGAIN: a probe is out, ask again after polling; -ENOSPC (table full),
 * -EHOSTUNREACH (probes unanswered).
 */
int rfw_nic_resolve(struct rfw_nic *nic, const uint8_t ip[16], uint8_t mac[6]);
/* Detach before rfw_destroy_qp(). */
void rfw_nic_qp_detach(struct rfw_nic *nic, struct rfw_qp *qp);

/*
 * One poll iteration: read the time, receive a burst and hand it to the transport, run expired
 * timers, serve ready QPs, flush TX if due. Returns the number of frames received + sent (0:
 * idle). Never allocates except mbufs from the pool.
 */
unsigned rfw_nic_poll(struct rfw_nic *nic);

/* Nothing waits in the port's TX buffer (frames made, not yet handed to the PMD). */
bool rfw_nic_tx_idle(const struct rfw_nic *nic);

/*
 * Publish every attached QP's state for telemetry now (normally done by rfw_nic_poll every
 * snapshot_us, a slice per poll). From the NIC's lcore.
 */
void rfw_nic_publish(struct rfw_nic *nic);

/*
 * The Estats rows of @window last published for this NIC's attached QPs (what telemetry's
 * /rocefw/estats reads), into @rows (at most @max); returns how many, 0 with Estats off,
 * -EBUSY if the publication kept changing under the read. Any thread. The rows are binned on
 * the NIC's Estats thread and published on its next tick after rfw_nic_publish (or every
 * 100 ms): @at_ns (if not NULL) gets the poll time they are up to.
 */
int rfw_nic_estats_rows(const struct rfw_nic *nic, enum rfw_es_window window,
                        struct rfw_es_row *rows, int max, uint64_t *at_ns);

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
/* The rate of @qp's rate machine (shared by its rp_scope), kb/s; 0 without one. */
uint64_t rfw_nic_qp_rate_kbps(const struct rfw_nic *nic, const struct rfw_qp *qp);
/* The firmware the NIC hosts (for its snapshots and counters). */
struct rfw_fw *rfw_nic_fw(struct rfw_nic *nic);
/*
 * Read-only view of @qp's reaction and notification points (rates, alpha, cnt[] with the
 * DCQCN_RP_CNT_* / DCQCN_NP_CNT_* counters); NULL if @qp is not attached or the NIC has no
 * DCQCN profile. Under rp_scope dst or port the reaction point is shared by the QPs of the
 * scope. For monitoring from the NIC's lcore (the state is not synchronised).
 */
const struct dcqcn_rp *rfw_nic_qp_rp(const struct rfw_nic *nic, const struct rfw_qp *qp);
const struct dcqcn_np *rfw_nic_qp_np(const struct rfw_nic *nic, const struct rfw_qp *qp);

#ifdef __cplusplus
}
#endif
#endif
