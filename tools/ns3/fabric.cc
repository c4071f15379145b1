/* SPDX-License-Identifier: BSD-3-Clause */
/* rocefw-ns3's experiment: topology, routes, flows, FCT. See fabric.h. */
#include "fabric.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include <ns3/node.h>
#include <ns3/object-factory.h>
#include <ns3/simulator.h>

#include "cc/dcqcn_params.h"
#include "host_device.h"

namespace rfw
{

using ns3::Ptr;
using ns3::Simulator;

namespace
{

/* One end of a link as seen from a node. */
struct Adj {
	uint32_t peer;
	int port; /* the node's port index (switch) or 0 (host) */
	uint64_t rate_bps, delay_ns;
};

struct FlowState {
	int src_slot = -1, dst_slot = -1;
	uint16_t sport = 0;
	bool started = false, done = false;
};

struct Fabric {
	const struct rfw_topo &t;
	const struct rfw_flow_spec *flows;
	uint32_t nflows;
	const FabricConf &c;
	FILE *fct;
	FabricResult *r;
	std::vector<Ptr<ns3::Node>> node;
	std::vector<std::vector<Adj>> adj;
	std::vector<std::unique_ptr<RfwSwitch>> sw; /* by node id (null for hosts) */
	std::vector<Ptr<RfwHostDevice>> host;       /* by node id (null for switches) */
	std::vector<Ptr<RfwChannel>> chans;
	std::vector<pcap_dumper_t *> dumpers;
	pcap_t *pcap = nullptr;
	std::map<uint64_t, struct dcqcn_prof> profs; /* by line rate */
	std::vector<FlowState> fs;
	std::vector<std::vector<uint32_t>> dist; /* [host id] -> hops to it from every node */
	uint8_t *mem = nullptr;
	uint64_t done = 0;

	Fabric(const struct rfw_topo &t_, const struct rfw_flow_spec *f, uint32_t n,
	       const FabricConf &c_, FILE *o, FabricResult *res)
	    : t(t_), flows(f), nflows(n), c(c_), fct(o), r(res)
	{
	}
	~Fabric();
	bool Build(std::string *err);
	bool BuildLinks(std::string *err);
	bool BuildHosts(std::string *err);
	void Routes();
	void Bfs(uint32_t dst, std::vector<uint32_t> &d) const;
	void PathInfo(uint32_t src, uint32_t dst, uint64_t *rtt_ns, uint64_t *bneck) const;
	uint64_t Standalone(const struct rfw_flow_spec &f) const;
	void Start(uint32_t i);
	void Done(uint32_t i, bool ok);
	void Sample();
	void Collect();
};

void MacOf(uint32_t node, uint32_t port, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0;
	mac[2] = (uint8_t)(node >> 8);
	mac[3] = (uint8_t)node;
	mac[4] = (uint8_t)(port >> 8);
	mac[5] = (uint8_t)port;
}

Fabric::~Fabric()
{
	for (auto d : dumpers)
		pcap_dump_close(d);
	if (pcap)
		pcap_close(pcap);
	std::free(mem);
}

/* Every link: a switch port or the host's NIC at each end, one channel between them. */
bool Fabric::BuildLinks(std::string *err)
{
	std::vector<Ptr<RfwPort>> hostport(t.nodes);

	for (uint32_t i = 0; i < t.nodes; i++) {
		node.push_back(ns3::CreateObject<ns3::Node>());
		sw.emplace_back(t.is_switch[i] ? new RfwSwitch(node[i], c.sw, i) : nullptr);
	}
	adj.resize(t.nodes);
	host.resize(t.nodes);
	for (uint32_t k = 0; k < t.nlinks; k++) {
		const struct rfw_topo_link &l = t.link[k];
		Ptr<RfwPort> end[2];
		uint32_t id[2] = {l.src, l.dst};
		int port[2] = {0, 0};

		for (int e = 0; e < 2; e++) {
			uint8_t mac[6];

			if (sw[id[e]]) {
				port[e] = (int)node[id[e]]->GetNDevices();
				MacOf(id[e], (uint32_t)port[e] + 1, mac);
				end[e] = sw[id[e]]->AddPort(l.rate_bps, mac);
				continue;
			}
			if (host[id[e]]) {
				*err = "topology: host " + std::to_string(id[e]) +
				       " has more than one link (one NIC per host)";
				return false;
			}
			MacOf(id[e], 0, mac);
			host[id[e]] = ns3::CreateObject<RfwHostDevice>();
			host[id[e]]->Setup(l.rate_bps, mac);
			node[id[e]]->AddDevice(host[id[e]]);
			end[e] = host[id[e]];
		}
		Ptr<RfwChannel> ch = ns3::CreateObject<RfwChannel>();
		ch->Attach(end[0], end[1], l.delay_ns, l.error_rate, c.sw.seed);
		chans.push_back(ch);
		adj[l.src].push_back({l.dst, port[0], l.rate_bps, l.delay_ns});
		adj[l.dst].push_back({l.src, port[1], l.rate_bps, l.delay_ns});
	}
	for (uint32_t i = 0; i < t.nodes; i++)
		if (sw[i])
			sw[i]->Finish();
	return true;
}

/* Hops from every node to @dst, through switches only. */
void Fabric::Bfs(uint32_t dst, std::vector<uint32_t> &d) const
{
	std::deque<uint32_t> q{dst};

	d.assign(t.nodes, UINT32_MAX);
	d[dst] = 0;
	while (!q.empty()) {
		uint32_t u = q.front();

		q.pop_front();
		if (u != dst && !t.is_switch[u])
			continue;
		for (const Adj &a : adj[u])
			if (d[a.peer] == UINT32_MAX) {
				d[a.peer] = d[u] + 1;
				q.push_back(a.peer);
			}
	}
}

/* Equal-cost shortest paths: a switch routes host h over every port one hop closer to h. */
void Fabric::Routes()
{
	dist.resize(t.nodes);
	for (uint32_t h = 0; h < t.nodes; h++) {
		if (t.is_switch[h] || !host[h])
			continue;
		Bfs(h, dist[h]);
		for (uint32_t s = 0; s < t.nodes; s++) {
			if (!sw[s] || dist[h][s] == UINT32_MAX)
				continue;
			for (const Adj &a : adj[s])
				if (dist[h][a.peer] + 1 == dist[h][s])
					sw[s]->AddRoute(rfw_hpcc_node_ip(h), a.port);
		}
	}
}

/*
 * Along one shortest path: the base RTT (propagation both ways, one ACK serialised per hop,
 * the first MTU frame stored and forwarded at every hop but the slowest) and the slowest link.
 */
void Fabric::PathInfo(uint32_t src, uint32_t dst, uint64_t *rtt_ns, uint64_t *bneck) const
{
	const std::vector<uint32_t> &d = dist[dst];
	uint64_t frame_bits = (uint64_t)(c.mtu + 58 + kWireExtra) * 8, ack_bits = (58 + 4 + 24) * 8;
	uint64_t sf_ns = 0, sf_max = 0;
	uint32_t u = src;

	*rtt_ns = 0;
	*bneck = UINT64_MAX;
	while (u != dst && d[u] != UINT32_MAX) {
		for (const Adj &a : adj[u])
			if (d[a.peer] + 1 == d[u]) {
				uint64_t sf = frame_bits * 1000000000ull / a.rate_bps;

				*rtt_ns += 2 * a.delay_ns + ack_bits * 1000000000ull / a.rate_bps;
				sf_ns += sf;
				sf_max = std::max(sf_max, sf);
				*bneck = std::min(*bneck, a.rate_bps);
				u = a.peer;
				break;
			}
	}
	*rtt_ns += sf_ns - sf_max;
}

/* HPCC's standalone FCT: base RTT + the flow's frames at the path's bottleneck rate (per
 * packet Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + 24 on the wire; RETH 16 once). */
uint64_t Fabric::Standalone(const struct rfw_flow_spec &f) const
{
	uint64_t rtt, bn, pkts = (f.size + c.mtu - 1) / c.mtu;
	uint64_t bytes = f.size + pkts * (58 + kWireExtra) + 16;

	PathInfo(f.src, f.dst, &rtt, &bn);
	return rtt + bytes * 8 * 1000000000ull / bn;
}

/* The profile at a line rate (cc/dcqcn.h: rates are fractions of the line). */
static const struct dcqcn_prof *ProfAt(std::map<uint64_t, struct dcqcn_prof> &m, int profile,
                                       uint64_t rate_bps, std::string *err)
{
	struct dcqcn_params prm;
	char msg[160];

	if (profile < 0)
		return nullptr;
	auto it = m.find(rate_bps);
	if (it != m.end())
		return &it->second;
	struct dcqcn_prof &p = m[rate_bps];
	if (dcqcn_params_init(&prm, (enum dcqcn_profile)profile) ||
	    dcqcn_prof_config(&p, &prm, (uint32_t)(rate_bps / 1000000), msg, sizeof(msg))) {
		*err = std::string("profile: ") + msg;
		return nullptr;
	}
	return &p;
}

bool Fabric::BuildHosts(std::string *err)
{
	std::vector<uint32_t> ends(t.nodes, 0), rtt(t.nodes, 0);
	uint64_t maxsz = 1;

	for (uint32_t i = 0; i < nflows; i++) {
		uint64_t r, bn;

		if (!host[flows[i].src] || !host[flows[i].dst] ||
		    dist[flows[i].dst][flows[i].src] == UINT32_MAX) {
			*err = "flows: flow " + std::to_string(i) + " has no path from " +
			       std::to_string(flows[i].src) + " to " + std::to_string(flows[i].dst);
			return false;
		}
		ends[flows[i].src]++;
		ends[flows[i].dst]++;
		maxsz = std::max<uint64_t>(maxsz, flows[i].size);
		PathInfo(flows[i].src, flows[i].dst, &r, &bn);
		rtt[flows[i].src] = std::max<uint32_t>(rtt[flows[i].src], (uint32_t)r);
	}
	/* Message memory shared by every NIC: flows move bytes, the data is not checked. */
	mem = (uint8_t *)std::calloc(1, maxsz);
	if (mem == nullptr) {
		*err = "out of memory for the message buffer";
		return false;
	}
	if (!c.pcap_dir.empty())
		pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
		                                            PCAP_TSTAMP_PRECISION_NANO);
	for (uint32_t h = 0; h < t.nodes; h++) {
		if (!host[h])
			continue;
		struct rfw_hn_conf hc = {};
		hc.prof = ProfAt(profs, c.profile, host[h]->rate_bps(), err);
		if (c.profile >= 0 && hc.prof == nullptr)
			return false;
		hc.sr = c.sr;
		hc.mtu = c.mtu;
		hc.max_flows = ends[h] ? ends[h] : 1;
		hc.link_bps = host[h]->rate_bps();
		hc.base_rtt_ns = rtt[h] ? rtt[h] : 10000;
		hc.timeout = c.ack_timeout;
		hc.sr_rto_low_ns = c.sr_rto_low_ns;
		hc.sr_rto_high_ns = c.sr_rto_high_ns;
		hc.sr_rto_low_pkts = c.sr_rto_low_pkts;
		hc.max_unacked_psns = WindowPsns(c);
		hc.var_win_bytes = c.var_win ? (uint32_t)std::llround(c.window_kb * 1024) : 0;
		hc.ack_every = c.ack_every;
		std::memcpy(hc.mac, host[h]->mac(), 6);
		hc.ip = rfw_hpcc_node_ip(h);
		hc.mem = mem;
		hc.mem_len = maxsz;
		if (!host[h]->Init(hc)) {
			*err = "host " + std::to_string(h) + ": NIC setup failed";
			return false;
		}
		host[h]->on_flow_done = [this](uint32_t f, bool ok) { Done(f, ok); };
		if (pcap) {
			std::string path = c.pcap_dir + "/host-" + std::to_string(h) + ".pcap";
			pcap_dumper_t *d = pcap_dump_open(pcap, path.c_str());

			if (d == nullptr) {
				*err = "--pcap: cannot write " + path;
				return false;
			}
			dumpers.push_back(d);
			host[h]->set_pcap(d);
		}
	}
	return true;
}

bool Fabric::Build(std::string *err)
{
	if (!BuildLinks(err))
		return false;
	Routes();
	if (!BuildHosts(err))
		return false;
	fs.resize(nflows);
	for (uint32_t i = 0; i < nflows; i++)
		Simulator::Schedule(ns3::NanoSeconds(flows[i].start_ns), &Fabric::Start, this, i);
	if (c.rates != nullptr) {
		std::fputs("time_us,flow,rate_gbps\n", c.rates);
		Simulator::Schedule(ns3::NanoSeconds(0), &Fabric::Sample, this);
	}
	return true;
}

/* --rates: each started, unfinished flow's rate machine (its scope's) at this instant. */
void Fabric::Sample()
{
	uint64_t now = (uint64_t)Simulator::Now().GetNanoSeconds();

	for (uint32_t i = 0; i < nflows; i++)
		if (fs[i].started && !fs[i].done)
			std::fprintf(c.rates, "%.3f,%u,%.3f\n", (double)now / 1e3, i,
			             (double)rfw_hn_flow_rate_kbps(host[flows[i].src]->nic(),
			                                           fs[i].src_slot, now) /
			                 1e6);
	if (done < nflows)
		Simulator::Schedule(ns3::NanoSeconds(c.sample_ns), &Fabric::Sample, this);
}

/* The MAC at the other end of @p's link. */
static const uint8_t *PeerMac(RfwPort &p)
{
	Ptr<ns3::NetDevice> d = p.channel()->GetDevice(0);

	if (PeekPointer(d) == &p)
		d = p.channel()->GetDevice(1);
	return static_cast<RfwPort *>(PeekPointer(d))->mac();
}

/* A flow starts: a QP at each end, connected, one WRITE of its size posted (the doorbell). */
void Fabric::Start(uint32_t i)
{
	const struct rfw_flow_spec &f = flows[i];
	RfwHostDevice &a = *host[f.src], &b = *host[f.dst];
	/* Hosts send to their switch port's MAC: the next hop. */
	const uint8_t *gw_a = PeerMac(a), *gw_b = PeerMac(b);
	struct rfw_hn_path pa = {}, pb = {};
	uint32_t qa, qb;

	std::memcpy(pa.dst_mac, gw_a, 6);
	pa.dst_ip = rfw_hpcc_node_ip(f.dst);
	pa.prio = (uint8_t)f.pg;
	std::memcpy(pb.dst_mac, gw_b, 6);
	pb.dst_ip = rfw_hpcc_node_ip(f.src);
	pb.prio = (uint8_t)f.pg;
	fs[i].src_slot = rfw_hn_flow_open(a.nic(), i, &pa, &qa);
	fs[i].dst_slot = rfw_hn_flow_open(b.nic(), i, &pb, &qb);
	if (fs[i].src_slot < 0 || fs[i].dst_slot < 0 ||
	    rfw_hn_flow_connect(a.nic(), fs[i].src_slot, qb) ||
	    rfw_hn_flow_connect(b.nic(), fs[i].dst_slot, qa) ||
	    rfw_hn_flow_write(a.nic(), fs[i].src_slot, f.size,
	                      (uint64_t)Simulator::Now().GetNanoSeconds())) {
		Done(i, false);
		return;
	}
	fs[i].sport = rfw_hn_flow_sport(a.nic(), fs[i].src_slot);
	fs[i].started = true;
	a.Kick();
}

void Fabric::Done(uint32_t i, bool ok)
{
	const struct rfw_flow_spec &f = flows[i];
	uint64_t now = (uint64_t)Simulator::Now().GetNanoSeconds();
	char line[160];

	if (fs[i].done)
		return;
	fs[i].done = true;
	if (ok) {
		r->completed++;
		r->last_fct_ns = now - f.start_ns;
		rfw_fct_line(line, sizeof(line), rfw_hpcc_node_ip(f.src), rfw_hpcc_node_ip(f.dst),
		             fs[i].sport, f.dport, f.size, f.start_ns, now - f.start_ns,
		             Standalone(f));
		std::fputs(line, fct);
	} else {
		r->failed++;
	}
	if (fs[i].src_slot >= 0)
		rfw_hn_flow_close(host[f.src]->nic(), fs[i].src_slot);
	if (fs[i].dst_slot >= 0)
		rfw_hn_flow_close(host[f.dst]->nic(), fs[i].dst_slot);
	if (++done == nflows)
		Simulator::Stop();
}

void Fabric::Collect()
{
	for (uint32_t i = 0; i < t.nodes; i++) {
		if (sw[i]) {
			r->pfc_pauses += sw[i]->st.pfc_pauses_sent;
			r->pfc_resumes += sw[i]->st.pfc_resumes_sent;
			r->pfc_refreshes += sw[i]->st.pfc_refreshes_sent;
			r->drops += sw[i]->st.drops;
			r->no_route += sw[i]->st.no_route;
			r->ce_marked += sw[i]->st.ce_marked;
		}
		if (!host[i])
			continue;
		uint64_t cnt[RFW_CNT__COUNT];
		struct rfw_hn_stats st;

		rfw_hn_counters(host[i]->nic(), cnt, &st);
		r->cnps_sent += cnt[RFW_CNT_np_cnp_sent];
		r->cnps_handled += cnt[RFW_CNT_rp_cnp_handled];
		r->ecn_marked_rx += cnt[RFW_CNT_np_ecn_marked_roce_packets];
		r->retransmissions += cnt[RFW_CNT_retransmitted_packets];
		r->ack_timeouts += cnt[RFW_CNT_local_ack_timeout_err];
		r->rto_low_timeouts += cnt[RFW_CNT_rto_low_timeouts];
		r->rto_high_timeouts += cnt[RFW_CNT_rto_high_timeouts];
		r->spurious_retransmissions += cnt[RFW_CNT_spurious_retransmissions];
		r->rx_bad_frame += st.rx_bad_frame;
		r->pauses_received += host[i]->pauses_received;
	}
	for (auto &ch : chans)
		r->link_losses += ch->lost;
}

} // namespace

uint32_t WindowPsns(const FabricConf &c)
{
	if (c.window_kb <= 0)
		return 0;
	double psns = std::ceil(c.window_kb * 1024 / c.mtu);
	return psns < 1 ? 1 : (uint32_t)psns;
}

int RunFabric(const struct rfw_topo &t, const struct rfw_flow_spec *flows, uint32_t nflows,
              const FabricConf &c, FILE *fct, FabricResult *r, std::string *err)
{
	auto t0 = std::chrono::steady_clock::now();
	int rc = 0;

	*r = FabricResult();
	r->flows = nflows;
	{
		ns3::ObjectFactory sched;

		sched.SetTypeId(c.scheduler);
		Simulator::SetScheduler(sched);
		Fabric f(t, flows, nflows, c, fct, r);

		if (!f.Build(err)) {
			rc = -1;
		} else {
			if (nflows)
				Simulator::Stop(ns3::NanoSeconds(c.sim_time_ns));
			Simulator::Run();
			r->sim_time_ns = (uint64_t)Simulator::Now().GetNanoSeconds();
			r->events = Simulator::GetEventCount();
			f.Collect();
		}
		Simulator::Destroy();
	}
	r->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	return rc;
}

} // namespace rfw
