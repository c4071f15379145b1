/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host NIC of rocefw-ns3: an ns-3 NetDevice (an RfwPort) owning a rocefw NIC through the
 * host adapter (host_nic.h). ns-3's Simulator time is the NIC's clock, ns3::Packet carries its
 * frames, the port's priority queues and PFC state are its TX backpressure: a paused or full
 * priority stops the QPs of that priority, never the others.
 */
#ifndef RFW_TOOLS_NS3_HOST_DEVICE_H
#define RFW_TOOLS_NS3_HOST_DEVICE_H

#include <functional>

#include "fabric_link.h"
#include "host_nic.h"

namespace rfw
{

class RfwHostDevice : public RfwPort
{
      public:
	static ns3::TypeId GetTypeId();
	~RfwHostDevice() override;
	/* Create the NIC; false on failure. */
	bool Init(const struct rfw_hn_conf &conf);
	struct rfw_hn *nic()
	{
		return hn_;
	}
	/* Called when this host's requester end of @flow completed. */
	std::function<void(uint32_t flow, bool ok)> on_flow_done;
	/* Run the NIC now (after posting work) and re-arm its timer. */
	void Kick();

      protected:
	void Deliver(ns3::Ptr<ns3::Packet> p) override;
	void OnTxIdle() override
	{
		Kick();
	}

      private:
	static bool TxRoom(void *host, uint8_t prio);
	static uint8_t *FrameAlloc(void *host, uint32_t len);
	static void FrameSend(void *host, uint8_t *frame, uint32_t len);
	static void FlowDone(void *host, uint32_t flow, bool ok, uint64_t now_ns);
	void Timer();
	void Arm();

	struct rfw_hn *hn_ = nullptr;
	uint8_t scratch_[RFW_HN_FRAME_MAX];
	ns3::EventId timer_;
	uint64_t timer_at_ = UINT64_MAX;
};

} // namespace rfw
#endif
