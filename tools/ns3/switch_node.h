/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3's switch (docs/ns3.md "Switch"): output-queued, eight strict priorities per port,
 * one shared buffer. Forwarding: the destination IPv4 address selects the equal-cost next hops
 * (shortest paths, fabric.cc), a hash of the 5-tuple (UDP source port included) picks one. ECN:
 * at dequeue (HPCC) or at enqueue (--mark-at), RED on the egress queue's bytes (Kmin/Kmax/Pmax; ECT
 * frames become CE). PFC: the buffer scheme HPCC's SwitchMmu documents
 * (simulation/src/point-to-point/model/switch-mmu.cc): ingress accounting per (port, priority), a
 * reserve per queue, a dynamic threshold (free shared buffer >> alpha_shift) above which the port
 * pauses its upstream and further bytes go to the port's headroom, resume once back below the
 * threshold by resume_offset, refreshed at half its time while it lasts. With PFC off, frames
 * above the dynamic threshold are dropped instead.
 */
#ifndef RFW_TOOLS_NS3_SWITCH_NODE_H
#define RFW_TOOLS_NS3_SWITCH_NODE_H

#include <array>
#include <unordered_map>
#include <vector>

#include "fabric_link.h"

namespace rfw
{

struct SwitchConf {
	uint64_t buffer_bytes = 32ull << 20; /* HPCC's fat-tree runs: 32 MB */
	uint32_t reserve = 4096;             /* per (ingress port, priority), as SwitchMmu */
	uint32_t resume_offset = 3072;
	bool pfc = true;
	bool ecn = true;
	bool mark_enqueue =
	    false; /* --mark-at enqueue (DCQCN paper, rocefw-sim) | dequeue (HPCC) */
	double kmin_kb_per_gbps = 4, kmax_kb_per_gbps = 16, pmax = 0.2; /* HPCC config.txt */
	double kmin_kb = -1, kmax_kb = -1; /* >= 0: fixed, whatever the rate */
	uint32_t nic_gbps = 100; /* alpha shift 3 (1/8) at this rate, one less per doubling */
	/* --seed: the run's random streams, the RED marking draws here and the links' losses
	 * (fabric.cc passes it on); 0, the default, keeps the streams of the runs before it. */
	uint32_t seed = 0;
};

class RfwSwitch;

class RfwSwitchPort : public RfwPort
{
      public:
	static ns3::TypeId GetTypeId();
	RfwSwitch *sw = nullptr;
	int idx = 0;
	uint64_t kmin = 0, kmax = 0; /* bytes */
	uint64_t headroom = 0;
	uint32_t alpha_shift = 3;

      protected:
	void Deliver(ns3::Ptr<ns3::Packet> p) override;
	void OnDequeue(QFrame &f, int prio) override;
};

struct SwitchStats {
	uint64_t pfc_pauses_sent = 0, pfc_resumes_sent = 0, pfc_refreshes_sent = 0, drops = 0,
	         no_route = 0, ce_marked = 0;
};

class RfwSwitch
{
      public:
	RfwSwitch(ns3::Ptr<ns3::Node> node, const SwitchConf &c, uint32_t seed);
	ns3::Ptr<RfwSwitchPort> AddPort(uint64_t rate_bps, const uint8_t mac[6]);
	/* Configure ECN and headroom once every port is linked (needs each link's delay). */
	void Finish();
	void AddRoute(uint32_t dst_ip, int port)
	{
		routes_[dst_ip].push_back(port);
	}
	void Forward(int in_port, ns3::Ptr<ns3::Packet> p);
	void Dequeued(int out_port, int prio, QFrame &f);
	SwitchStats st;

      private:
	uint64_t Threshold(int port) const;
	uint64_t SharedUsed(int port, int prio) const;
	bool Admit(int port, int prio, uint32_t size);
	void Release(int port, int prio, uint32_t size);
	void SendPfc(int port, int prio, bool pause);
	void Refresh(int port, int prio);
	void MarkRed(const RfwSwitchPort &op, uint64_t q, ns3::Ptr<ns3::Packet> &p);

	ns3::Ptr<ns3::Node> node_;
	SwitchConf c_;
	uint32_t seed_;
	uint64_t rng_;
	std::vector<ns3::Ptr<RfwSwitchPort>> ports_;
	std::unordered_map<uint32_t, std::vector<int>> routes_;
	/* MMU state: per (port, priority) */
	std::vector<std::array<uint64_t, kPrios>> ingress_, hdrm_;
	std::vector<std::array<bool, kPrios>> paused_;
	std::vector<std::array<ns3::EventId, kPrios>> refresh_;
	uint64_t shared_used_ = 0, total_hdrm_ = 0, total_rsrv_ = 0;
};

} // namespace rfw
#endif
