/* SPDX-License-Identifier: BSD-3-Clause */
/* The host NIC device of rocefw-ns3. See host_device.h. */
#include "host_device.h"

#include <ns3/simulator.h>

namespace rfw
{

using ns3::Packet;
using ns3::Ptr;
using ns3::Simulator;

/* Frames a priority may hold in the device, the one on the wire included, before the NIC stops
 * producing more of it: enough to keep the wire busy, small enough that a pause or a CNP acts at
 * once. tools/sim holds TX_WINDOW (2) frames in total, the one on the wire included: the same
 * count for a host whose frames are all of one priority, as every sender's are. */
static constexpr uint32_t kTxWindow = 2;

static uint64_t now_ns()
{
	return (uint64_t)Simulator::Now().GetNanoSeconds();
}

ns3::TypeId RfwHostDevice::GetTypeId()
{
	static ns3::TypeId tid = ns3::TypeId("rfw::RfwHostDevice").SetParent<RfwPort>();
	return tid;
}

RfwHostDevice::~RfwHostDevice()
{
	rfw_hn_destroy(hn_);
}

bool RfwHostDevice::Init(const struct rfw_hn_conf &conf)
{
	static const struct rfw_hn_ops ops = {.tx_room = TxRoom,
	                                      .frame_alloc = FrameAlloc,
	                                      .frame_send = FrameSend,
	                                      .flow_done = FlowDone};

	hn_ = rfw_hn_create(&conf, &ops, this);
	return hn_ != nullptr;
}

bool RfwHostDevice::TxRoom(void *host, uint8_t prio)
{
	auto *d = static_cast<RfwHostDevice *>(host);

	return !d->paused(prio) && d->queued_frames(prio) + (d->sending(prio) ? 1 : 0) < kTxWindow;
}

uint8_t *RfwHostDevice::FrameAlloc(void *host, uint32_t len)
{
	auto *d = static_cast<RfwHostDevice *>(host);

	return len <= sizeof(d->scratch_) ? d->scratch_ : nullptr;
}

/* The frame becomes an ns-3 packet (one copy) on the queue of its DSCP's priority. */
void RfwHostDevice::FrameSend(void *host, uint8_t *frame, uint32_t len)
{
	auto *d = static_cast<RfwHostDevice *>(host);
	int prio = len > 15 ? frame[15] >> 5 : 0;

	d->Enqueue(ns3::Create<Packet>(frame, len), prio);
}

void RfwHostDevice::FlowDone(void *host, uint32_t flow, bool ok, uint64_t)
{
	auto *d = static_cast<RfwHostDevice *>(host);

	if (d->on_flow_done)
		d->on_flow_done(flow, ok);
}

void RfwHostDevice::Deliver(Ptr<Packet> p)
{
	uint8_t buf[RFW_HN_FRAME_MAX];
	uint32_t n = PacketBytes(p, buf, sizeof(buf));

	Capture(p);
	rfw_hn_rx_frame(hn_, buf, n, now_ns());
	Arm();
}

void RfwHostDevice::Kick()
{
	rfw_hn_run(hn_, now_ns());
	Arm();
}

void RfwHostDevice::Timer()
{
	timer_at_ = UINT64_MAX;
	Kick();
}

/* One pending event at the NIC's next deadline (pacer departure or transport timer). */
void RfwHostDevice::Arm()
{
	uint64_t now = now_ns(), d = rfw_hn_next_ns(hn_, now);

	/* Work due now was done by the run that preceded: the next look is 1 ns later, so a
	 * deadline the transport does not clear cannot spin the simulator at one instant. */
	if (d != UINT64_MAX && d <= now)
		d = now + 1;
	if (d == timer_at_)
		return;
	timer_.Cancel();
	timer_at_ = d;
	if (d == UINT64_MAX)
		return;
	timer_ = Simulator::Schedule(ns3::NanoSeconds(d - now), &RfwHostDevice::Timer, this);
}

} // namespace rfw
