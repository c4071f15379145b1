/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3's host adapter: ONE file between ns-3 and the firmware. A struct rfw_hn is the NIC
 * of one simulated host: a nic/ core (nic/rfw_fw.h: the transport, scheduler, pacing, DCQCN
 * with the profile's rp_scope, framing and ICRC: the firmware the DPDK dataplane and rocefw-sim
 * host), one RC QP per flow end, one RDMA WRITE per flow. The host (host_device.cc, C++) gives
 * frames, time and per-priority room (PFC pauses one priority's QPs only).
 *
 * Time is an argument everywhere (ns-3's Simulator::Now in ns); buffers come from the host.
 */
#ifndef RFW_TOOLS_NS3_HOST_NIC_H
#define RFW_TOOLS_NS3_HOST_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc/dcqcn.h"
#include "transport/rfw_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ethernet + IPv4 + UDP in front of the BTH of every frame the adapter builds. */
#define RFW_HN_FRAME_HDR 42
/* Largest frame: 4096-byte MTU payload + IB headers + ICRC + RFW_HN_FRAME_HDR. */
#define RFW_HN_FRAME_MAX (RFW_HN_FRAME_HDR + 4096 + 64 + 4)

/* What the host (the ns-3 NetDevice) gives the NIC. */
struct rfw_hn_ops {
	/* Whether the host's egress queue of priority @prio takes another frame now. When it
	 * says no, the scheduler stops; the host calls rfw_hn_run() again when room frees up. */
	bool (*tx_room)(void *host, uint8_t prio);
	/* A frame buffer of at least @len bytes (the host's scratch; NULL: none now). */
	uint8_t *(*frame_alloc)(void *host, uint32_t len);
	/* The frame at @frame is complete: @len bytes, Ethernet header to ICRC. */
	void (*frame_send)(void *host, uint8_t *frame, uint32_t len);
	/* The requester's WRITE of flow @flow completed (@ok false: an error completion). */
	void (*flow_done)(void *host, uint32_t flow, bool ok, uint64_t now_ns);
};

struct rfw_hn_conf {
	const struct dcqcn_prof *prof; /* DCQCN profile of this NIC; NULL: no reaction point */
	bool sr;                       /* selective repeat instead of go-back-N */
	uint32_t mtu;                  /* path MTU bytes: 256 .. 4096 */
	uint32_t max_flows;            /* QP table size: flow ends on this host */
	uint64_t link_bps;             /* for the SR bytes-in-flight cap */
	uint64_t base_rtt_ns;          /* idem */
	uint8_t timeout;               /* local ACK timeout code (4.096 us x 2^timeout) */
	uint64_t sr_rto_low_ns;        /* selective repeat's RTO_low; 0: the transport's default */
	uint64_t sr_rto_high_ns;       /* its RTO_high; idem */
	uint32_t sr_rto_low_pkts;      /* RTO_low with at most this many in flight; idem */
	uint32_t max_unacked_psns;     /* requester window in PSNs; 0: the transport's default */
	uint32_t var_win_bytes;        /* the window follows the rate (rfw_fw_conf); 0: fixed */
	uint32_t ack_every;            /* AckReq every N packets; 0: the firmware's default (64) */
	uint8_t mac[6];
	uint32_t ip; /* host order */
	/* Message memory shared by every flow (not verified: flows move bytes, not data). */
	uint8_t *mem;
	size_t mem_len;
};

/* Where one flow end's frames go. */
struct rfw_hn_path {
	uint8_t dst_mac[6];
	uint32_t dst_ip;    /* host order */
	uint16_t udp_sport; /* flow entropy for ECMP; 0: 0xc000 | QPN (as rxe) */
	uint8_t prio;       /* 802.1p priority of data and responses: DSCP prio << 3, ECT(0) */
};

struct rfw_hn;

/* NULL on a bad configuration or no memory. */
struct rfw_hn *rfw_hn_create(const struct rfw_hn_conf *conf, const struct rfw_hn_ops *ops,
                             void *host);
void rfw_hn_destroy(struct rfw_hn *hn);

/* A QP for flow @flow toward @path; its slot (>= 0) and *qpn, or -errno. */
int rfw_hn_flow_open(struct rfw_hn *hn, uint32_t flow, const struct rfw_hn_path *path,
                     uint32_t *qpn);
/* Connect slot @slot to the remote QP @remote_qpn (INIT -> RTR -> RTS). 0 or -errno. */
int rfw_hn_flow_connect(struct rfw_hn *hn, int slot, uint32_t remote_qpn);
/* The UDP source port of slot @slot's frames. */
uint16_t rfw_hn_flow_sport(const struct rfw_hn *hn, int slot);
/* Post the flow's one RDMA WRITE of @bytes (the requester end). 0 or -errno. */
int rfw_hn_flow_write(struct rfw_hn *hn, int slot, uint64_t bytes, uint64_t now_ns);
/* The rate of slot @slot's rate machine (its scope's) at @now_ns, kb/s (0: no CC). */
uint64_t rfw_hn_flow_rate_kbps(struct rfw_hn *hn, int slot, uint64_t now_ns);
/* The flow is over on this end: its QP leaves the scheduler (and is destroyed). */
void rfw_hn_flow_close(struct rfw_hn *hn, int slot);

/* One received frame (Ethernet header to ICRC). 0, or -EINVAL if dropped (counted). */
int rfw_hn_rx_frame(struct rfw_hn *hn, const uint8_t *frame, uint32_t len, uint64_t now_ns);
/* Expired timers, completions, then send while the host has room and pacers allow. */
void rfw_hn_run(struct rfw_hn *hn, uint64_t now_ns);
/* When rfw_hn_run() must run next if nothing arrives (UINT64_MAX: never). */
uint64_t rfw_hn_next_ns(const struct rfw_hn *hn, uint64_t now_ns);

struct rfw_hn_stats {
	uint64_t rx_bad_frame; /* not RoCEv2, bad ICRC or bad IB headers */
	uint64_t error_completions;
};
/* The transport's device counters (sum over live QPs + closed ones) and the adapter's. */
void rfw_hn_counters(const struct rfw_hn *hn, uint64_t out[RFW_CNT__COUNT],
                     struct rfw_hn_stats *st);

#ifdef __cplusplus
}
#endif
#endif
