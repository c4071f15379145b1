/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3: rocefw's transport and DCQCN as the host NICs of an ns-3 3.37 fabric, driven by
 * HPCC's topology and flow files, writing HPCC's FCT file (docs/ns3.md).
 *
 *   rocefw-ns3 --topology FILE --flows FILE --fct-out FILE [--profile P] [--transport gbn|sr]
 *              [--pfc on|off] [--sim-time-ms T] [--pcap DIR] [--json] [more: --help]
 *
 * Exit: 0 every flow completed, 1 some did not (by --sim-time-ms, or an error completion),
 * 2 bad options or input files (the message names the option), 3 setup failure.
 */
#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <jansson.h>

#include "cc/dcqcn_params.h"
#include "fabric.h"
#include "transport/rfw_verbs.h"

namespace
{

struct Opts {
	const char *topology = nullptr, *flows = nullptr, *fct_out = nullptr, *rates = nullptr;
	bool json = false;
	rfw::FabricConf fc;
};

[[noreturn]] void Bad(const char *opt, const std::string &why)
{
	std::fprintf(stderr, "rocefw-ns3: %s: %s (rocefw-ns3 --help)\n", opt, why.c_str());
	std::exit(2);
}

void Usage()
{
	std::printf(
	    "usage: rocefw-ns3 --topology FILE --flows FILE --fct-out FILE [options]\n"
	    "  --topology FILE     HPCC topology: 'nodes switches links', switch ids, then\n"
	    "                      'src dst rate delay error_rate' per link\n"
	    "  --flows FILE        HPCC flows: count, then 'src dst priority dport size start_s'\n"
	    "  --fct-out FILE      HPCC FCT: 'sip dip sport dport size start_ns fct_ns "
	    "standalone_ns'\n"
	    "  --profile P         DCQCN profile (unified, paper, mlx5-cx5, hpcc-ns3, "
	    "shared-port)\n"
	    "                      or none (no reaction point); default unified\n"
	    "  --transport gbn|sr  loss recovery: go-back-N (default) or selective repeat\n"
	    "  --pfc on|off        PFC at the switches (default on; off: lossy, DT drops)\n"
	    "  --ecn on|off        ECN marking at the switches (default on)\n"
	    "  --mark-at dequeue|enqueue  RED on the queue a frame leaves (HPCC, default) or\n"
	    "                      joins (the DCQCN paper's CP, rocefw-sim)\n"
	    "  --sim-time-ms T     stop at T ms of simulated time (default 1000)\n"
	    "  --pcap DIR          DIR/host-<id>.pcap per host: frames sent and received\n"
	    "  --rates FILE        CSV 'time_us,flow,rate_gbps': every sending flow's DCQCN rate\n"
	    "                      (its rp_scope's) each --sample-us (default 10, 0.1..1e6)\n"
	    "  --json              results as one JSON object (schema rocefw.ns3/1)\n"
	    "  --mtu B             path MTU 256|512|1024|2048|4096 (default 1024)\n"
	    "  --buffer-mb M       shared buffer per switch, MB (default 32, 1..1024)\n"
	    "  --kmin-kb K --kmax-kb K --pmax P   RED marking (default: HPCC's 4 and 16 KB per\n"
	    "                      Gb/s of the port, Pmax 0.2)\n"
	    "  --ack-timeout N     local ACK timeout 4.096 us x 2^N, 1..31 (default 14: 67 ms,\n"
	    "                      perftest's; 8 fired spuriously in an 8:1 incast under the\n"
	    "                      paper profile: 64-packet ACK coalescing at its lowest rates)\n"
	    "  --sr-rto-low-us U   selective repeat's RTO_low, us (default 100, 1..1e6): the "
	    "timer\n"
	    "                      with few packets in flight or the send queue drained\n"
	    "  --sr-rto-high-us U  its RTO_high, us (default 1000, 1..1e6, not below RTO_low)\n"
	    "  --sr-rto-low-pkts N RTO_low applies with at most N packets in flight (default 3,\n"
	    "                      1..65536); the three have no effect with --transport gbn\n"
	    "  --window-kb X       cap each QP's in-flight data at X KB (0..1e6; default 0: the\n"
	    "                      transport's 1024 PSNs): go-back-N's requester window of\n"
	    "                      ceil(X*1024 / path MTU) PSNs, at least 1 (no effect with\n"
	    "                      --transport sr, which keeps its own BDP cap)\n"
	    "  --seed N            the run's random streams: RED marking draws and link losses\n"
	    "                      (0..4294967295, default 0; ECMP hashing does not change)\n"
	    "  --var-win           the window follows the QP's rate: X KB x rate / max rate,\n"
	    "                      at least 1 byte (HPCC's VAR_WIN, its DCQCN+win); needs\n"
	    "                      --window-kb, go-back-N, a profile; every packet asks for\n"
	    "                      its ACK (ack_every 1, as HPCC's receiver ACKs each)\n"
	    "  --ack-every N       a request asks for its ACK every N packets, and at each\n"
	    "                      message's end (1..1024, default 64; 1 with --var-win, which\n"
	    "                      allows no other): HPCC's receiver ACKs every packet\n"
	    "  --scheduler S       ns-3's event scheduler: map, heap, calendar, list or\n"
	    "                      priority-queue (default priority-queue, 10-15 %% less CPU\n"
	    "                      than ns-3's map); the same events in the same order with\n"
	    "                      any of them: only the speed differs\n");
}

/* ns-3's scheduler type for a --scheduler name. */
std::string SchedulerType(const char *opt, const char *v)
{
	static const char *const names[][2] = {{"map", "ns3::MapScheduler"},
	                                       {"heap", "ns3::HeapScheduler"},
	                                       {"calendar", "ns3::CalendarScheduler"},
	                                       {"list", "ns3::ListScheduler"},
	                                       {"priority-queue", "ns3::PriorityQueueScheduler"}};

	for (const auto &n : names)
		if (std::strcmp(v, n[0]) == 0)
			return n[1];
	Bad(opt, std::string("'") + v + "': expected map, heap, calendar, list or priority-queue");
	return "";
}

double Num(const char *opt, const char *v, double lo, double hi)
{
	char *end;
	double x = std::strtod(v, &end);

	if (end == v || *end || !(x >= lo && x <= hi))
		Bad(opt, std::string("'") + v + "': expected a number " + std::to_string(lo) +
		             ".." + std::to_string(hi));
	return x;
}

bool OnOff(const char *opt, const char *v)
{
	if (std::strcmp(v, "on") == 0)
		return true;
	if (std::strcmp(v, "off") == 0)
		return false;
	Bad(opt, std::string("'") + v + "': expected on or off");
}

enum {
	O_TOPO = 256,
	O_FLOWS,
	O_FCT,
	O_PROFILE,
	O_TRANSPORT,
	O_PFC,
	O_ECN,
	O_SIMTIME,
	O_PCAP,
	O_JSON,
	O_MARKAT,
	O_MTU,
	O_BUF,
	O_KMIN,
	O_KMAX,
	O_PMAX,
	O_ACKTO,
	O_RATES,
	O_SAMPLE,
	O_RTOLOW,
	O_RTOHIGH,
	O_RTOPKTS,
	O_WINDOW,
	O_VARWIN,
	O_SCHED,
	O_ACKEVERY,
	O_SEED,
	O_HELP
};

/* The transport's options (--transport, --ack-timeout, the SR timers); false: not one. */
bool SetTransport(rfw::FabricConf &f, int c, const char *v)
{
	switch (c) {
	case O_TRANSPORT:
		if (std::strcmp(v, "gbn") && std::strcmp(v, "sr"))
			Bad("--transport", std::string("'") + v + "': expected gbn or sr");
		f.sr = std::strcmp(v, "sr") == 0;
		break;
	case O_ACKTO:
		f.ack_timeout = (uint8_t)Num("--ack-timeout", v, 1, 31);
		break;
	case O_RTOLOW:
		f.sr_rto_low_ns = (uint64_t)std::llround(Num("--sr-rto-low-us", v, 1, 1e6) * 1e3);
		break;
	case O_RTOHIGH:
		f.sr_rto_high_ns = (uint64_t)std::llround(Num("--sr-rto-high-us", v, 1, 1e6) * 1e3);
		break;
	case O_RTOPKTS: {
		double n = Num("--sr-rto-low-pkts", v, 1, 65536);
		if (n != std::floor(n))
			Bad("--sr-rto-low-pkts",
			    std::string("'") + v + "': expected a whole number");
		f.sr_rto_low_pkts = (uint32_t)n;
		break;
	}
	case O_WINDOW:
		f.window_kb = Num("--window-kb", v, 0, 1e6);
		break;
	case O_VARWIN:
		f.var_win = true;
		break;
	case O_ACKEVERY: {
		double n = Num("--ack-every", v, 1, 1024);
		if (n != std::floor(n))
			Bad("--ack-every", std::string("'") + v + "': expected a whole number");
		f.ack_every = (uint32_t)n;
		break;
	}
	case O_SCHED:
		f.scheduler = SchedulerType("--scheduler", v);
		break;
	default:
		return false;
	}
	return true;
}

void Set(Opts &o, int c, const char *v)
{
	rfw::FabricConf &f = o.fc;

	if (SetTransport(f, c, v))
		return;
	switch (c) {
	case O_TOPO:
		o.topology = v;
		break;
	case O_FLOWS:
		o.flows = v;
		break;
	case O_FCT:
		o.fct_out = v;
		break;
	case O_PROFILE:
		f.profile = std::strcmp(v, "none") == 0 ? -1 : dcqcn_profile_lookup(v);
		if (f.profile < 0 && std::strcmp(v, "none") != 0)
			Bad("--profile", std::string("unknown profile '") + v + "'");
		break;
	case O_PFC:
		f.sw.pfc = OnOff("--pfc", v);
		break;
	case O_ECN:
		f.sw.ecn = OnOff("--ecn", v);
		break;
	case O_SIMTIME:
		f.sim_time_ns = (uint64_t)std::llround(Num("--sim-time-ms", v, 0.001, 1e7) * 1e6);
		break;
	case O_PCAP:
		f.pcap_dir = v;
		break;
	case O_MARKAT:
		if (std::strcmp(v, "enqueue") && std::strcmp(v, "dequeue"))
			Bad("--mark-at", std::string("'") + v + "': expected enqueue or dequeue");
		f.sw.mark_enqueue = std::strcmp(v, "enqueue") == 0;
		break;
	case O_JSON:
		o.json = true;
		break;
	case O_MTU: {
		double m = Num("--mtu", v, 256, 4096);
		if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)
			Bad("--mtu",
			    std::string("'") + v + "': expected 256, 512, 1024, 2048 or 4096");
		f.mtu = (uint32_t)m;
		break;
	}
	case O_BUF:
		f.sw.buffer_bytes = (uint64_t)(Num("--buffer-mb", v, 1, 1024) * 1048576);
		break;
	case O_KMIN:
		f.sw.kmin_kb = Num("--kmin-kb", v, 0, 1e6);
		break;
	case O_KMAX:
		f.sw.kmax_kb = Num("--kmax-kb", v, 0, 1e6);
		break;
	case O_PMAX:
		f.sw.pmax = Num("--pmax", v, 0, 1);
		break;
	case O_RATES:
		o.rates = v;
		break;
	case O_SAMPLE:
		f.sample_ns = (uint64_t)std::llround(Num("--sample-us", v, 0.1, 1e6) * 1e3);
		break;
	case O_SEED: {
		double n = Num("--seed", v, 0, 4294967295.0);
		if (n != std::floor(n))
			Bad("--seed", std::string("'") + v + "': expected a whole number");
		f.sw.seed = (uint32_t)n;
		break;
	}
	}
}

/* RTO_low above RTO_high is refused (rfw_dev_create would fail), each unset one taken at the
 * transport's default (100 us, 1 ms); the option named is the one given (low if both). */
void CheckRto(const rfw::FabricConf &f)
{
	uint64_t lo = f.sr_rto_low_ns ? f.sr_rto_low_ns : RFW_DEF_SR_RTO_LOW_NS;
	uint64_t hi = f.sr_rto_high_ns ? f.sr_rto_high_ns : RFW_DEF_SR_RTO_HIGH_NS;
	char m[160];

	if (lo <= hi)
		return;
	std::snprintf(m, sizeof(m), "RTO_low %g us is above RTO_high %g us%s", lo / 1e3, hi / 1e3,
	              f.sr_rto_low_ns == 0    ? " (RTO_low at its default)"
	              : f.sr_rto_high_ns == 0 ? " (RTO_high at its default)"
	                                      : "");
	Bad(f.sr_rto_low_ns ? "--sr-rto-low-us" : "--sr-rto-high-us", m);
}

Opts Parse(int argc, char **argv)
{
	static const struct option lo[] = {{"topology", 1, 0, O_TOPO},
	                                   {"flows", 1, 0, O_FLOWS},
	                                   {"fct-out", 1, 0, O_FCT},
	                                   {"profile", 1, 0, O_PROFILE},
	                                   {"transport", 1, 0, O_TRANSPORT},
	                                   {"pfc", 1, 0, O_PFC},
	                                   {"ecn", 1, 0, O_ECN},
	                                   {"sim-time-ms", 1, 0, O_SIMTIME},
	                                   {"pcap", 1, 0, O_PCAP},
	                                   {"json", 0, 0, O_JSON},
	                                   {"mtu", 1, 0, O_MTU},
	                                   {"buffer-mb", 1, 0, O_BUF},
	                                   {"kmin-kb", 1, 0, O_KMIN},
	                                   {"kmax-kb", 1, 0, O_KMAX},
	                                   {"pmax", 1, 0, O_PMAX},
	                                   {"ack-timeout", 1, 0, O_ACKTO},
	                                   {"mark-at", 1, 0, O_MARKAT},
	                                   {"rates", 1, 0, O_RATES},
	                                   {"sample-us", 1, 0, O_SAMPLE},
	                                   {"sr-rto-low-us", 1, 0, O_RTOLOW},
	                                   {"sr-rto-high-us", 1, 0, O_RTOHIGH},
	                                   {"sr-rto-low-pkts", 1, 0, O_RTOPKTS},
	                                   {"window-kb", 1, 0, O_WINDOW},
	                                   {"var-win", 0, 0, O_VARWIN},
	                                   {"scheduler", 1, 0, O_SCHED},
	                                   {"ack-every", 1, 0, O_ACKEVERY},
	                                   {"seed", 1, 0, O_SEED},
	                                   {"help", 0, 0, O_HELP},
	                                   {0, 0, 0, 0}};
	Opts o;
	int c;

	o.fc.profile = DCQCN_PROFILE_UNIFIED;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, nullptr)) != -1) {
		if (c == O_HELP) {
			Usage();
			std::exit(0);
		}
		if (c == '?')
			Bad(argv[optind - 1], optopt ? "needs a value" : "unknown option");
		Set(o, c, optarg);
	}
	if (optind < argc)
		Bad(argv[optind], "unexpected argument");
	if (!o.topology)
		Bad("--topology", "required");
	if (!o.flows)
		Bad("--flows", "required");
	if (!o.fct_out)
		Bad("--fct-out", "required");
	if (o.fc.sw.kmin_kb >= 0 && o.fc.sw.kmax_kb >= 0 && o.fc.sw.kmin_kb >= o.fc.sw.kmax_kb)
		Bad("--kmin-kb", "must be below --kmax-kb");
	if ((o.fc.sw.kmin_kb >= 0) != (o.fc.sw.kmax_kb >= 0))
		Bad(o.fc.sw.kmin_kb >= 0 ? "--kmax-kb" : "--kmin-kb",
		    "give --kmin-kb and --kmax-kb together");
	CheckRto(o.fc);
	if (o.fc.var_win && (o.fc.window_kb <= 0 || o.fc.sr || o.fc.profile < 0))
		Bad("--var-win", o.fc.window_kb <= 0 ? "needs --window-kb above 0"
		                 : o.fc.sr ? "needs --transport gbn (sr keeps its own cap)"
		                           : "needs a profile (no rate to follow)");
	if (o.fc.var_win && o.fc.ack_every > 1)
		Bad("--ack-every",
		    "must be 1 with --var-win (a shrinking window needs an ACK a packet)");
	return o;
}

/* A timer setting in us as the transport uses it (0: its default @def_ns). */
double RtoUs(uint64_t ns, uint64_t def_ns)
{
	return (double)(ns ? ns : def_ns) / 1e3;
}

void Report(const Opts &o, const rfw::FabricResult &r)
{
	if (!o.json) {
		std::printf(
		    "rocefw-ns3: %llu/%llu flows completed in %.3f ms simulated, %.2f s wall; "
		    "CNPs sent %llu handled %llu; PFC pauses %llu; drops %llu; "
		    "retransmissions %llu; %llu events\n",
		    (unsigned long long)r.completed, (unsigned long long)r.flows,
		    (double)r.sim_time_ns / 1e6, r.wall_s, (unsigned long long)r.cnps_sent,
		    (unsigned long long)r.cnps_handled, (unsigned long long)r.pfc_pauses,
		    (unsigned long long)(r.drops + r.link_losses),
		    (unsigned long long)r.retransmissions, (unsigned long long)r.events);
		return;
	}
	json_t *j = json_pack(
	    "{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I, s:I, s:f, s:f}",
	    "schema", "rocefw.ns3/1", "profile",
	    o.fc.profile < 0 ? "none" : dcqcn_profile_name((enum dcqcn_profile)o.fc.profile),
	    "transport", o.fc.sr ? "sr" : "gbn", "pfc", o.fc.sw.pfc, "flows", (json_int_t)r.flows,
	    "flows_completed", (json_int_t)r.completed, "flows_failed", (json_int_t)r.failed,
	    "cnps_sent", (json_int_t)r.cnps_sent, "cnps_handled", (json_int_t)r.cnps_handled,
	    "ce_marked", (json_int_t)r.ce_marked, "ecn_marked_received",
	    (json_int_t)r.ecn_marked_rx, "pfc_pauses", (json_int_t)r.pfc_pauses, "pfc_resumes",
	    (json_int_t)r.pfc_resumes, "pfc_refreshes", (json_int_t)r.pfc_refreshes,
	    "pfc_frames_received", (json_int_t)r.pauses_received, "drops",
	    (json_int_t)(r.drops + r.link_losses), "switch_drops", (json_int_t)r.drops,
	    "link_losses", (json_int_t)r.link_losses, "retransmissions",
	    (json_int_t)r.retransmissions, "ack_timeouts", (json_int_t)r.ack_timeouts,
	    "rx_bad_frames", (json_int_t)r.rx_bad_frame, "events", (json_int_t)r.events,
	    "sim_time_ms", (double)r.sim_time_ns / 1e6, "wall_s", r.wall_s);
	json_object_set_new(j, "rto_low_timeouts", json_integer((json_int_t)r.rto_low_timeouts));
	json_object_set_new(j, "rto_high_timeouts", json_integer((json_int_t)r.rto_high_timeouts));
	json_object_set_new(j, "spurious_retransmissions",
	                    json_integer((json_int_t)r.spurious_retransmissions));
	json_object_set_new(j, "sr_rto_low_us",
	                    json_real(RtoUs(o.fc.sr_rto_low_ns, RFW_DEF_SR_RTO_LOW_NS)));
	json_object_set_new(j, "sr_rto_high_us",
	                    json_real(RtoUs(o.fc.sr_rto_high_ns, RFW_DEF_SR_RTO_HIGH_NS)));
	json_object_set_new(j, "window_kb", json_real(o.fc.window_kb));
	json_object_set_new(
	    j, "window_psns",
	    json_integer(o.fc.window_kb > 0 ? rfw::WindowPsns(o.fc) : RFW_DEF_MAX_UNACKED_PSNS));
	json_object_set_new(j, "var_win", json_boolean(o.fc.var_win));
	json_object_set_new(j, "ack_every",
	                    json_integer(o.fc.ack_every ? o.fc.ack_every
	                                 : o.fc.var_win ? 1
	                                                : 64));
	json_object_set_new(j, "scheduler", json_string(o.fc.scheduler.c_str()));
	json_object_set_new(j, "seed", json_integer((json_int_t)o.fc.sw.seed));
	json_object_set_new(
	    j, "sr_rto_low_pkts",
	    json_integer(o.fc.sr_rto_low_pkts ? o.fc.sr_rto_low_pkts : RFW_DEF_SR_RTO_LOW_PKTS));
	json_dumpf(j, stdout, JSON_INDENT(2));
	std::printf("\n");
	json_decref(j);
}

FILE *Open(const char *opt, const char *path, const char *mode)
{
	FILE *f = std::fopen(path, mode);

	if (f == nullptr)
		Bad(opt, std::string(path) + ": " + std::strerror(errno));
	return f;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o = Parse(argc, argv);
	struct rfw_topo topo;
	struct rfw_flow_spec *flows = nullptr;
	uint32_t nflows = 0;
	char err[256];
	std::string serr;
	rfw::FabricResult r;
	FILE *f = Open("--topology", o.topology, "r");
	int rc = rfw_topo_read(f, &topo, err, sizeof(err));

	std::fclose(f);
	if (rc)
		Bad("--topology",
		    std::string(o.topology) + ": " + (rc == -ENOMEM ? "out of memory" : err));
	f = Open("--flows", o.flows, "r");
	rc = rfw_flows_read(f, &topo, &flows, &nflows, err, sizeof(err));
	std::fclose(f);
	if (rc)
		Bad("--flows",
		    std::string(o.flows) + ": " + (rc == -ENOMEM ? "out of memory" : err));
	f = Open("--fct-out", o.fct_out, "w");
	if (o.rates)
		o.fc.rates = Open("--rates", o.rates, "w");
	rc = rfw::RunFabric(topo, flows, nflows, o.fc, f, &r, &serr);
	std::fclose(f);
	if (o.fc.rates)
		std::fclose(o.fc.rates);
	std::free(flows);
	rfw_topo_free(&topo);
	if (rc) {
		std::fprintf(stderr, "rocefw-ns3: %s\n", serr.c_str());
		return 3;
	}
	Report(o, r);
	return r.completed == r.flows ? 0 : 1;
}
