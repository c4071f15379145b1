/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3's experiment: an HPCC topology built of RfwSwitch nodes and RfwHostDevice NICs,
 * shortest-path ECMP routes, one RC QP pair per flow of the flow file posting one RDMA WRITE of
 * the flow's size at its start time, and the FCT file written as flows complete.
 */
#ifndef RFW_TOOLS_NS3_FABRIC_H
#define RFW_TOOLS_NS3_FABRIC_H

#include <cstdio>
#include <string>

#include "hpcc_fmt.h"
#include "switch_node.h"

namespace rfw
{

struct FabricConf {
	int profile = -1;         /* enum dcqcn_profile; -1: no congestion control ("none") */
	bool sr = false;          /* --transport sr */
	uint32_t mtu = 1024;      /* --mtu: path MTU bytes */
	uint8_t ack_timeout = 14; /* --ack-timeout: local ACK timeout 4.096 us x 2^N (14: 67 ms) */
	/* --sr-rto-low-us, --sr-rto-high-us, --sr-rto-low-pkts: selective repeat's timers
	 * (rfw_dev_attr.sr_rto_*); 0: the transport's default (100 us, 1 ms, 3). */
	uint64_t sr_rto_low_ns = 0, sr_rto_high_ns = 0;
	uint32_t sr_rto_low_pkts = 0;
	/* --window-kb: each QP's in-flight data cap, KB; 0: the transport's default window
	 * (1024 PSNs). Applied as rfw_dev_attr.max_unacked_psns = WindowPsns(). */
	double window_kb = 0;
	/* --var-win: the window scales with the QP's rate (rfw_fw_conf.var_win_bytes) */
	bool var_win = false;
	/* --ack-every: AckReq every N packets (rfw_dev_attr.ack_every); 0: the firmware's 64 */
	uint32_t ack_every = 0;
	/* --scheduler: ns-3's event scheduler type (same events in the same order, any of them) */
	std::string scheduler = "ns3::PriorityQueueScheduler";
	uint64_t sim_time_ns = 1000000000ull;
	std::string pcap_dir;       /* --pcap: host-<id>.pcap per host */
	FILE *rates = nullptr;      /* --rates: 'time_us,flow,rate_gbps' of every sending flow */
	uint64_t sample_ns = 10000; /* --sample-us */
	SwitchConf sw;
};

struct FabricResult {
	uint64_t flows = 0, completed = 0, failed = 0;
	uint64_t cnps_sent = 0, cnps_handled = 0, ce_marked = 0, ecn_marked_rx = 0;
	uint64_t pfc_pauses = 0, pfc_resumes = 0, pfc_refreshes = 0, pauses_received = 0;
	uint64_t drops = 0, link_losses = 0, no_route = 0;
	uint64_t retransmissions = 0, ack_timeouts = 0, rx_bad_frame = 0;
	uint64_t rto_low_timeouts = 0, rto_high_timeouts = 0, spurious_retransmissions = 0;
	uint64_t events = 0, sim_time_ns = 0, last_fct_ns = 0;
	double wall_s = 0;
};

/* The go-back-N requester window in PSNs for c.window_kb: ceil(window_kb * 1024 / mtu), at
 * least 1; 0 when window_kb is 0 (the transport's default). */
uint32_t WindowPsns(const FabricConf &c);

/* 0, or -1 with *err set (setup failure). Flows not finished by sim_time_ns are reported as
 * flows - completed - failed. */
int RunFabric(const struct rfw_topo &t, const struct rfw_flow_spec *flows, uint32_t nflows,
              const FabricConf &c, FILE *fct, FabricResult *r, std::string *err);

} // namespace rfw
#endif
