/* SPDX-License-Identifier: BSD-3-Clause */
/* rocefw-ns3's switch: forwarding, ECMP, ECN, the shared-buffer MMU and PFC. See switch_node.h. */
#include "switch_node.h"

#include <algorithm>
#include <cstring>

#include <ns3/simulator.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"
#include "wire/pfc_wire.h"

namespace rfw
{

using ns3::Packet;
using ns3::Ptr;

static constexpr uint32_t kMaxFrame = 4200; /* largest frame a port may have in flight */

ns3::TypeId RfwSwitchPort::GetTypeId()
{
	static ns3::TypeId tid = ns3::TypeId("rfw::RfwSwitchPort").SetParent<RfwPort>();
	return tid;
}

void RfwSwitchPort::Deliver(Ptr<Packet> p)
{
	sw->Forward(idx, p);
}

void RfwSwitchPort::OnDequeue(QFrame &f, int prio)
{
	sw->Dequeued(idx, prio, f);
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

RfwSwitch::RfwSwitch(Ptr<ns3::Node> node, const SwitchConf &c, uint32_t seed)
    : node_(node), c_(c), seed_(seed), rng_(mix64(seed + 1 + ((uint64_t)c.seed << 32)))
{
}

Ptr<RfwSwitchPort> RfwSwitch::AddPort(uint64_t rate_bps, const uint8_t mac[6])
{
	Ptr<RfwSwitchPort> p = ns3::CreateObject<RfwSwitchPort>();

	p->Setup(rate_bps, mac);
	p->sw = this;
	p->idx = (int)ports_.size();
	node_->AddDevice(p);
	ports_.push_back(p);
	ingress_.push_back({});
	hdrm_.push_back({});
	paused_.push_back({});
	refresh_.push_back({});
	return p;
}

void RfwSwitch::Finish()
{
	total_hdrm_ = total_rsrv_ = 0;
	for (auto &p : ports_) {
		double gbps = (double)p->rate_bps() / 1e9;
		uint64_t delay = p->channel() ? p->channel()->delay_ns() : 0;
		uint64_t r = p->rate_bps();

		p->kmin =
		    (uint64_t)((c_.kmin_kb >= 0 ? c_.kmin_kb : c_.kmin_kb_per_gbps * gbps) * 1000);
		p->kmax =
		    (uint64_t)((c_.kmax_kb >= 0 ? c_.kmax_kb : c_.kmax_kb_per_gbps * gbps) * 1000);
		/* HPCC: 3 x the one-way bytes in flight; plus two largest frames, one leaving each
		 * end when the pause is sent (matters on 1 us links). */
		p->headroom = p->rate_bps() / 8 * delay / 1000000000ull * 3 + 2 * kMaxFrame;
		p->alpha_shift = 3;
		while (r > (uint64_t)c_.nic_gbps * 1000000000ull && p->alpha_shift > 0) {
			p->alpha_shift--;
			r /= 2;
		}
		total_hdrm_ += p->headroom;
		total_rsrv_ += c_.reserve;
	}
}

/* Free shared buffer >> alpha: the dynamic threshold of one ingress queue. */
uint64_t RfwSwitch::Threshold(int port) const
{
	uint64_t used = total_hdrm_ + total_rsrv_ + shared_used_;

	return used >= c_.buffer_bytes ? 0 : (c_.buffer_bytes - used) >> ports_[port]->alpha_shift;
}

uint64_t RfwSwitch::SharedUsed(int port, int prio) const
{
	uint64_t b = ingress_[port][prio];

	return b > c_.reserve ? b - c_.reserve : 0;
}

bool RfwSwitch::Admit(int port, int prio, uint32_t size)
{
	uint64_t thresh = Threshold(port), nb = ingress_[port][prio] + size;

	if (c_.pfc) {
		if (size + hdrm_[port][prio] > ports_[port]->headroom &&
		    size + SharedUsed(port, prio) > thresh)
			return false; /* headroom exhausted: the pause came too late */
	} else if (nb > c_.reserve && nb - c_.reserve > thresh) {
		return false; /* lossy: the dynamic threshold drops */
	}
	if (nb <= c_.reserve) {
		ingress_[port][prio] = nb;
	} else if (c_.pfc && nb - c_.reserve > thresh) {
		hdrm_[port][prio] += size;
	} else {
		ingress_[port][prio] = nb;
		shared_used_ += std::min<uint64_t>(size, nb - c_.reserve);
	}
	return true;
}

void RfwSwitch::Release(int port, int prio, uint32_t size)
{
	uint64_t from_hdrm = std::min<uint64_t>(hdrm_[port][prio], size);
	uint64_t from_shared = std::min<uint64_t>(size - from_hdrm, SharedUsed(port, prio));

	hdrm_[port][prio] -= from_hdrm;
	ingress_[port][prio] -= size - from_hdrm;
	shared_used_ -= from_shared;
}

void RfwSwitch::SendPfc(int port, int prio, bool pause)
{
	uint8_t buf[RFW_MACCTL_FRAME_LEN];
	uint16_t quanta[RFW_PFC_PRIOS] = {0};
	size_t n;

	quanta[prio] = pause ? 0xffff : 0;
	n = rfw_pfc_build(buf, sizeof(buf), ports_[port]->mac(), (uint8_t)(1u << prio), quanta);
	if (pause && paused_[port][prio])
		st.pfc_refreshes_sent++;
	else if (pause)
		st.pfc_pauses_sent++;
	else
		st.pfc_resumes_sent++;
	paused_[port][prio] = pause;
	ports_[port]->Enqueue(ns3::Create<Packet>(buf, (uint32_t)n), -1);
	if (pause) {
		/* XOFF again at half the pause time while still paused, as switches refresh it, so
		 * a congestion longer than 0xffff quanta (335 us at 100 G) does not resume the
		 * upstream by expiry. */
		uint64_t half =
		    rfw_pause_quanta_ns(0xffff, (uint32_t)(ports_[port]->rate_bps() / 1000000)) / 2;

		refresh_[port][prio].Cancel();
		refresh_[port][prio] = ns3::Simulator::Schedule(
		    ns3::NanoSeconds(half), &RfwSwitch::Refresh, this, port, prio);
	} else {
		refresh_[port][prio].Cancel();
	}
}

void RfwSwitch::Refresh(int port, int prio)
{
	if (paused_[port][prio])
		SendPfc(port, prio, true);
}

void RfwSwitch::Forward(int in_port, Ptr<Packet> p)
{
	uint8_t h[64];
	uint32_t n = PacketBytes(p, h, sizeof(h));
	int prio;

	if (n < 38 || h[12] != 0x08 || h[13] != 0x00 || (h[14] >> 4) != 4) {
		st.no_route++;
		return;
	}
	auto it = routes_.find(rfw_get_be32(h + 30));
	if (it == routes_.end()) {
		st.no_route++;
		return;
	}
	/* ECMP over the 5-tuple: addresses, protocol, UDP ports (the RoCEv2 source port carries
	 * the per-QP entropy). */
	uint64_t k = mix64(((uint64_t)rfw_get_be32(h + 26) << 32 | rfw_get_be32(h + 30)) ^ seed_);
	k = mix64(k ^ ((uint64_t)h[23] << 32 | rfw_get_be32(h + 34)));
	int out = it->second[k % it->second.size()];
	prio = h[15] >> 5;
	if (!Admit(in_port, prio, p->GetSize())) {
		st.drops++;
		return;
	}
	if (c_.pfc && !paused_[in_port][prio] &&
	    (hdrm_[in_port][prio] > 0 || SharedUsed(in_port, prio) >= Threshold(in_port)))
		SendPfc(in_port, prio, true);
	if (c_.mark_enqueue) /* the queue the frame joins, as it finds it */
		MarkRed(*ports_[out], ports_[out]->queued_bytes(prio), p);
	ports_[out]->Enqueue(p, prio, in_port);
}

/* RED on @q bytes of an egress queue of @op (DCQCN's CP, HPCC's ShouldSendCN): an ECT frame
 * becomes CE, with its IPv4 header checksum recomputed (the ICRC does not cover the TOS). */
void RfwSwitch::MarkRed(const RfwSwitchPort &op, uint64_t q, Ptr<Packet> &p)
{
	if (!c_.ecn || q <= op.kmin)
		return;
	if (q <= op.kmax) {
		double pr = c_.pmax * (double)(q - op.kmin) / (double)(op.kmax - op.kmin);
		double u = (double)(mix64(rng_++) >> 11) * (1.0 / 9007199254740992.0);

		if (u >= pr)
			return;
	}
	uint8_t buf[9216];
	uint32_t n = PacketBytes(p, buf, sizeof(buf));
	uint8_t *ip = buf + RFW_ETH_HLEN;

	if (n < RFW_ETH_HLEN + RFW_IPV4_HLEN || (ip[1] & 3) == RFW_ECN_NOT_ECT ||
	    (ip[1] & 3) == RFW_ECN_CE)
		return;
	ip[1] |= RFW_ECN_CE;
	ip[10] = ip[11] = 0;
	rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(rfw_csum_add(0, ip, RFW_IPV4_HLEN)));
	p = ns3::Create<Packet>(buf, n);
	st.ce_marked++;
}

/* A frame leaves the egress queue: give its buffer back to its ingress queue, maybe resume
 * that ingress, and (--mark-at dequeue) mark it by RED on the queue it leaves. */
void RfwSwitch::Dequeued(int out_port, int prio, QFrame &f)
{
	int in = f.in_port;

	Release(in, prio, f.p->GetSize());
	if (paused_[in][prio] && hdrm_[in][prio] == 0 &&
	    (SharedUsed(in, prio) == 0 || SharedUsed(in, prio) + c_.resume_offset <= Threshold(in)))
		SendPfc(in, prio, false);
	if (!c_.mark_enqueue)
		MarkRed(*ports_[out_port], ports_[out_port]->queued_bytes(prio), f.p);
}

} // namespace rfw
