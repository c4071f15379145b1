/* SPDX-License-Identifier: BSD-3-Clause */
/* rocefw-ns3's channel and port device. See fabric_link.h. */
#include "fabric_link.h"

#include <cstring>

#include <ns3/simulator.h>

#include "wire/pfc_wire.h"

namespace rfw
{

using ns3::Packet;
using ns3::Ptr;
using ns3::Simulator;

uint32_t PacketBytes(Ptr<const Packet> p, uint8_t *buf, uint32_t cap)
{
	uint32_t n = p->GetSize();

	return p->CopyData(buf, n < cap ? n : cap);
}

/* ---- channel ---- */

ns3::TypeId RfwChannel::GetTypeId()
{
	static ns3::TypeId tid = ns3::TypeId("rfw::RfwChannel").SetParent<ns3::Channel>();
	return tid;
}

void RfwChannel::Attach(Ptr<RfwPort> a, Ptr<RfwPort> b, uint64_t delay_ns, double loss,
                        uint32_t seed)
{
	end_[0] = a;
	end_[1] = b;
	delay_ns_ = delay_ns;
	loss_ = loss;
	rng_ = 0x9e3779b97f4a7c15ull ^ ((uint64_t)a->GetNode()->GetId() << 32) ^
	       b->GetNode()->GetId() ^ ((uint64_t)seed * 0xd1b54a32d192ed03ull);
	a->set_channel(this);
	b->set_channel(this);
}

void RfwChannel::DoDispose()
{
	end_[0] = end_[1] = nullptr;
	ns3::Channel::DoDispose();
}

Ptr<ns3::NetDevice> RfwChannel::GetDevice(std::size_t i) const
{
	return end_[i & 1];
}

/* splitmix64: the link's own seeded stream, so losses do not depend on event order elsewhere */
static double unit(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (double)((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
}

void RfwChannel::Transmit(RfwPort *from, Ptr<Packet> p)
{
	RfwPort *to = PeekPointer(end_[0]) == from ? PeekPointer(end_[1]) : PeekPointer(end_[0]);

	if (loss_ > 0 && unit(&rng_) < loss_) {
		lost++;
		return;
	}
	Simulator::ScheduleWithContext(to->GetNode()->GetId(), ns3::NanoSeconds(delay_ns_),
	                               &RfwPort::Receive, to, p);
}

/* ---- port ---- */

ns3::TypeId RfwPort::GetTypeId()
{
	static ns3::TypeId tid = ns3::TypeId("rfw::RfwPort").SetParent<ns3::NetDevice>();
	return tid;
}

void RfwPort::DoDispose()
{
	chan_ = nullptr;
	node_ = nullptr;
	for (auto &q : q_)
		q.clear();
	ctl_.clear();
	resume_ev_.Cancel();
	ns3::NetDevice::DoDispose();
}

void RfwPort::Setup(uint64_t rate_bps, const uint8_t mac[6])
{
	rate_bps_ = rate_bps;
	std::memcpy(mac_, mac, 6);
}

void RfwPort::SetAddress(ns3::Address address)
{
	ns3::Mac48Address::ConvertFrom(address).CopyTo(mac_);
}

ns3::Address RfwPort::GetAddress() const
{
	ns3::Mac48Address a;

	a.CopyFrom(mac_);
	return a;
}

bool RfwPort::paused(int prio) const
{
	return pause_until_[prio] > (uint64_t)Simulator::Now().GetNanoSeconds();
}

void RfwPort::Enqueue(Ptr<Packet> p, int prio, int in_port)
{
	if (prio < 0) {
		ctl_.push_back(p);
	} else {
		q_[prio].push_back({p, in_port});
		qbytes_[prio] += p->GetSize();
	}
	StartTx();
}

void RfwPort::Capture(Ptr<const Packet> p)
{
	uint8_t buf[9216];
	struct pcap_pkthdr h = {};
	uint64_t now = Simulator::Now().GetNanoSeconds();

	if (pcap_ == nullptr)
		return;
	h.caplen = h.len = PacketBytes(p, buf, sizeof(buf));
	h.ts.tv_sec = (time_t)(now / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(now % 1000000000ull); /* nanosecond pcap */
	pcap_dump((u_char *)pcap_, &h, buf);
}

/*
 * Strict priority: MAC Control first, then the highest priority that is not paused. Events run
 * at whole ns (ns-3's default resolution), so the wire's end is kept in ps (free_ps_) and a
 * frame already waiting when the wire frees (@cont, from TxDone) starts at that exact end, as
 * tools/sim does: back-to-back frames then take exactly their share of the rate instead of a
 * whole number of ns each.
 */
void RfwPort::StartTx(bool cont)
{
	Ptr<Packet> p;

	if (busy_ || chan_ == nullptr)
		return;
	busy_prio_ = -1;
	if (!ctl_.empty()) {
		p = ctl_.front();
		ctl_.pop_front();
	} else {
		for (int pr = kPrios - 1; pr >= 0 && p == nullptr; pr--) {
			if (q_[pr].empty() || paused(pr))
				continue;
			QFrame f = q_[pr].front();

			q_[pr].pop_front();
			qbytes_[pr] -= f.p->GetSize();
			OnDequeue(f, pr);
			p = f.p;
			busy_prio_ = pr;
		}
	}
	if (p == nullptr)
		return;
	busy_ = true;
	frames_sent++;
	Capture(p);
	uint64_t bits = (uint64_t)(p->GetSize() + kWireExtra) * 8;
	uint64_t ps = (bits * 1000000000000ull + rate_bps_ - 1) / rate_bps_;
	uint64_t now = (uint64_t)Simulator::Now().GetNanoSeconds(), end;

	free_ps_ = (!cont && now * 1000 > free_ps_ ? now * 1000 : free_ps_) + ps;
	end = (free_ps_ + 999) / 1000;
	if (end <= now)
		end = now + 1;
	Simulator::Schedule(ns3::NanoSeconds(end - now), &RfwPort::TxDone, this, p);
}

void RfwPort::TxDone(Ptr<Packet> p)
{
	busy_ = false;
	chan_->Transmit(this, p);
	StartTx(true);
	OnTxIdle();
}

/* 802.1Qbb: a PFC frame pauses each enabled priority for its quanta (0 resumes it at once). */
void RfwPort::HandlePfc(const uint8_t *buf, uint32_t len)
{
	struct rfw_pfc_msg m;
	uint64_t now = Simulator::Now().GetNanoSeconds(), wake = 0;

	if (rfw_pfc_parse(buf, len, mac_, &m) != RFW_PFC_ERR_OK)
		return;
	pauses_received++;
	for (int pr = 0; pr < kPrios; pr++) {
		if (!(m.enable & (1u << pr)))
			continue;
		pause_until_[pr] =
		    m.quanta[pr]
		        ? now + rfw_pause_quanta_ns(m.quanta[pr], (uint32_t)(rate_bps_ / 1000000))
		        : 0;
		if (pause_until_[pr] > wake)
			wake = pause_until_[pr];
	}
	if (wake) {
		/* Pause expiry restarts the queue without a resume frame. */
		resume_ev_.Cancel();
		resume_ev_ =
		    Simulator::Schedule(ns3::NanoSeconds(wake - now), &RfwPort::Resume, this);
	}
	StartTx();
	OnTxIdle();
}

void RfwPort::Receive(Ptr<Packet> p)
{
	uint8_t hdr[64];
	uint32_t n = PacketBytes(p, hdr, sizeof(hdr));

	if (n >= 14 && hdr[12] == 0x88 && hdr[13] == 0x08) {
		Capture(p);
		HandlePfc(hdr, n);
		return;
	}
	Deliver(p);
}

} // namespace rfw
