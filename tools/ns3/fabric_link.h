/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3's links: a full-duplex point-to-point channel and the port device at each end
 * (docs/ns3.md "Fabric"). A port has eight strict-priority output queues (802.1p priority =
 * DSCP >> 3 of the frame) plus a MAC Control queue that pauses never hold (802.3 Annex 31B),
 * serialises frames at the link rate with 24 bytes of preamble, FCS and gap each, and honours
 * PFC frames it receives (802.1Qbb: per priority, pause time in 512-bit quanta, 0 = resume).
 * Frames are real Ethernet bytes in ns3::Packet; loss (the topology's error_rate) is applied at
 * the receiving end. Hosts (host_device.h) and switch ports (switch_node.h) are both RfwPorts.
 */
#ifndef RFW_TOOLS_NS3_FABRIC_LINK_H
#define RFW_TOOLS_NS3_FABRIC_LINK_H

#include <deque>
#include <functional>

#include <ns3/channel.h>
#include <ns3/event-id.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <ns3/packet.h>

#include <pcap/pcap.h>

namespace rfw
{

constexpr int kPrios = 8;
constexpr uint32_t kWireExtra = 24; /* preamble 8, FCS 4, inter-frame gap 12 */

class RfwPort;

class RfwChannel : public ns3::Channel
{
      public:
	static ns3::TypeId GetTypeId();
	/* @seed: the run's (--seed); 0 keeps the loss stream of the runs before the option. */
	void Attach(ns3::Ptr<RfwPort> a, ns3::Ptr<RfwPort> b, uint64_t delay_ns, double loss,
	            uint32_t seed = 0);
	std::size_t GetNDevices() const override
	{
		return 2;
	}
	ns3::Ptr<ns3::NetDevice> GetDevice(std::size_t i) const override;
	/* @from finished serialising @p: it reaches the other end after the delay. */
	void Transmit(RfwPort *from, ns3::Ptr<ns3::Packet> p);
	uint64_t delay_ns() const
	{
		return delay_ns_;
	}
	uint64_t lost = 0;

      protected:
	void DoDispose() override; /* breaks the port <-> channel reference cycle */

      private:
	ns3::Ptr<RfwPort> end_[2];
	uint64_t delay_ns_ = 0;
	double loss_ = 0;
	uint64_t rng_ = 0;
};

/* One queued frame and the switch ingress port it came in on (-1: from a host). */
struct QFrame {
	ns3::Ptr<ns3::Packet> p;
	int in_port;
};

class RfwPort : public ns3::NetDevice
{
      public:
	static ns3::TypeId GetTypeId();
	void Setup(uint64_t rate_bps, const uint8_t mac[6]);
	uint64_t rate_bps() const
	{
		return rate_bps_;
	}
	const uint8_t *mac() const
	{
		return mac_;
	}
	ns3::Ptr<RfwChannel> channel() const
	{
		return chan_;
	}
	void set_channel(ns3::Ptr<RfwChannel> c)
	{
		chan_ = c;
	}

	/* Queue a frame at priority @prio (0..7), or a MAC Control frame (prio < 0). */
	void Enqueue(ns3::Ptr<ns3::Packet> p, int prio, int in_port = -1);
	uint32_t queued_frames(int prio) const
	{
		return q_[prio].size();
	}
	/* The frame being sent is of @prio (MAC Control: -1). */
	bool sending(int prio) const
	{
		return busy_ && busy_prio_ == prio;
	}
	uint64_t queued_bytes(int prio) const
	{
		return qbytes_[prio];
	}
	bool paused(int prio) const;
	/* Called by the channel: a frame arrived (PFC handled here, the rest to Deliver). */
	void Receive(ns3::Ptr<ns3::Packet> p);
	/* Capture every frame this port sends and receives (nanosecond pcap). */
	void set_pcap(pcap_dumper_t *d)
	{
		pcap_ = d;
	}
	uint64_t pauses_received = 0, frames_sent = 0;

	/* ns3::NetDevice: the bookkeeping ns-3 asks of every device. */
	void SetIfIndex(const uint32_t index) override
	{
		ifindex_ = index;
	}
	uint32_t GetIfIndex() const override
	{
		return ifindex_;
	}
	ns3::Ptr<ns3::Channel> GetChannel() const override
	{
		return chan_;
	}
	void SetAddress(ns3::Address address) override;
	ns3::Address GetAddress() const override;
	bool SetMtu(const uint16_t mtu) override
	{
		return mtu == 4200;
	}
	uint16_t GetMtu() const override
	{
		return 4200;
	}
	bool IsLinkUp() const override
	{
		return chan_ != nullptr;
	}
	void AddLinkChangeCallback(ns3::Callback<void>) override
	{
	}
	bool IsBroadcast() const override
	{
		return false;
	}
	ns3::Address GetBroadcast() const override
	{
		return ns3::Mac48Address::GetBroadcast();
	}
	bool IsMulticast() const override
	{
		return false;
	}
	ns3::Address GetMulticast(ns3::Ipv4Address) const override
	{
		return GetBroadcast();
	}
	ns3::Address GetMulticast(ns3::Ipv6Address) const override
	{
		return GetBroadcast();
	}
	bool IsBridge() const override
	{
		return false;
	}
	bool IsPointToPoint() const override
	{
		return true;
	}
	bool Send(ns3::Ptr<ns3::Packet>, const ns3::Address &, uint16_t) override
	{
		return false;
	}
	bool SendFrom(ns3::Ptr<ns3::Packet>, const ns3::Address &, const ns3::Address &,
	              uint16_t) override
	{
		return false;
	}
	ns3::Ptr<ns3::Node> GetNode() const override
	{
		return node_;
	}
	void SetNode(ns3::Ptr<ns3::Node> node) override
	{
		node_ = node;
	}
	bool NeedsArp() const override
	{
		return false;
	}
	void SetReceiveCallback(ns3::NetDevice::ReceiveCallback cb) override
	{
		rx_cb_ = cb;
	}
	void SetPromiscReceiveCallback(ns3::NetDevice::PromiscReceiveCallback) override
	{
	}
	bool SupportsSendFrom() const override
	{
		return false;
	}

      protected:
	void DoDispose() override;
	/* A data frame arrived. */
	virtual void Deliver(ns3::Ptr<ns3::Packet> p) = 0;
	/* @f leaves queue @prio now (before serialisation): the switch's MMU and ECN marking. May
	 * replace f.p (a marked copy). */
	virtual void OnDequeue(QFrame &f, int prio)
	{
		(void)f, (void)prio;
	}
	/* The wire is free again (a host's NIC may send more). */
	virtual void OnTxIdle()
	{
	}
	void Capture(ns3::Ptr<const ns3::Packet> p);

      private:
	/* The next frame onto the wire; @cont: the wire just freed (TxDone), see the .cc. */
	void StartTx(bool cont = false);
	void Resume()
	{
		StartTx(false);
	}
	void TxDone(ns3::Ptr<ns3::Packet> p);
	void HandlePfc(const uint8_t *buf, uint32_t len);

	uint64_t rate_bps_ = 0;
	uint8_t mac_[6] = {0};
	ns3::Ptr<RfwChannel> chan_;
	ns3::Ptr<ns3::Node> node_;
	uint32_t ifindex_ = 0;
	std::deque<QFrame> q_[kPrios];
	std::deque<ns3::Ptr<ns3::Packet>> ctl_;
	uint64_t qbytes_[kPrios] = {0};
	uint64_t pause_until_[kPrios] = {0};
	ns3::EventId resume_ev_;
	bool busy_ = false;
	uint64_t free_ps_ = 0; /* when the wire is free, in ps: no rounding drift */
	int busy_prio_ = -1;   /* the priority of the frame being sent (MAC Control: -1) */
	pcap_dumper_t *pcap_ = nullptr;
	ns3::NetDevice::ReceiveCallback rx_cb_;
};

/* The bytes of a packet (frames are at most a few KB). */
uint32_t PacketBytes(ns3::Ptr<const ns3::Packet> p, uint8_t *buf, uint32_t cap);

} // namespace rfw
#endif
