/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-demo: DCQCN through a congestion point, end to end on DPDK ports.
 *
 *   rocefw-demo [EAL options] -- [options]
 *
 * Two endpoints in this process, on the calling lcore: a sender on DPDK port 0 and a receiver on
 * port 1, each a software NIC (dataplane/rfw_nic.h) with DCQCN reaction and notification points.
 * Between them, in another process on another core, rocefw-cp (tools/cp) forwards port 0 <-> 1
 * of its own through a bottleneck queue with RED ECN marking. tools/demo.sh wires them with
 * memif. N flows (one RC QP each, sender -> receiver) post RDMA WRITEs, start staggered and stop
 * in reverse order, so the run shows one flow alone, the cut when the next one arrives, the
 * shared rate, and the recovery when the others leave.
 *
 * Every WRITE is verified: when its completion arrives (the ACK means the bytes are in the
 * receiver's memory, IBA 9.7.5.1.1) the receiver's slot is compared with the source.
 *
 * Out: a per-flow time series (--csv: rate RC, target RT, alpha, goodput, CNPs, cuts), a log of
 * every CNP the receiver's port transmits (--cnp-csv, seen by a DPDK TX callback on the wire
 * side of the NIC, with the NP's clock and the TSC at hand-over to the PMD), and a JSON summary
 * (--json). See docs/demo.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "cc/dcqcn.h"
#include "cc/dcqcn_params.h"
#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_port.h"
#include "tools/common/rfw_endpoint.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_pattern.h"
#include "tools/common/rfw_clock.h"

#define DEMO_SCHEMA     "rocefw.demo/1"
#define DEMO_CSV_SCHEMA "rocefw.demo.flows/1"
#define DEMO_CNP_SCHEMA "rocefw.demo.cnps/1"
#define MAX_FLOWS       8
#define CNP_LOG_MAX     (1u << 20)            /* CNPs logged per run (16 MB) */
#define STALL_NS        (5ull * NS_PER_S)     /* outstanding WRITEs, no completion: fail */
#define SETTLE_NS       (20ull * 1000 * 1000) /* poll after the last completion (late frames) */
#define ROCEV2_PORT     4791

struct opts {
	uint32_t flows;
	uint32_t duration_ms;
	uint32_t stagger_ms;
	uint32_t size;
	uint32_t depth;
	uint32_t line_gbps;
	uint32_t sample_us;
	uint32_t time_scale;
	uint32_t link_wait_ms;
	const char *profile;
	struct dcqcn_params params;
	const char *csv, *cnp_csv, *json;
	uint32_t linger_pid; /* 0: off */
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: rocefw-demo [EAL options: two ports, 0 = sender, 1 = receiver] -- "
	        "[options]\n"
	        "  --flows N            flows (RC QPs) sender -> receiver, 1..%u (default 2)\n"
	        "  --duration-ms MS     run length, 100..600000 (default 4000)\n"
	        "  --stagger-ms MS      flow i runs from i*MS to duration - i*MS, 0..300000 "
	        "(default 1000)\n"
	        "  --size BYTES         WRITE size, 1..4194304 (default 65536)\n"
	        "  --depth N            outstanding WRITEs per flow, 1..256 (default 4)\n"
	        "  --line-gbps G        line rate DCQCN starts from and recovers to, 1..400 "
	        "(default 10)\n"
	        "  --cc-profile P       DCQCN profile: unified, paper, mlx5-cx5, hpcc-ns3, "
	        "shared-port (default unified)\n"
	        "  --cc NAME=VALUE      override one DCQCN parameter (cc/dcqcn_params.h), "
	        "repeatable\n"
	        "  --cc-time-scale N    multiply the profile's DCQCN time constants by N, "
	        "1..1000 (default 10)\n"
	        "  --sample-us US       time series period, 100..1000000 (default 1000)\n"
	        "  --link-wait-ms MS    wait for both links, 0..60000 (default 15000)\n"
	        "  --csv FILE           per-flow time series (schema " DEMO_CSV_SCHEMA ")\n"
	        "  --cnp-csv FILE       every CNP the receiver sent (schema " DEMO_CNP_SCHEMA ")\n"
	        "  --json FILE          summary (schema " DEMO_SCHEMA ")\n"
	        "  --linger-pid PID     after the run, close the ports only once process PID (the\n"
	        "                       memif peer, rocefw-cp) has exited, at most 10 s (default: "
	        "off)\n",
	        MAX_FLOWS);
}

/* A bad option value: "rocefw-demo: <what><detail>", exit status 2 (nothing started yet). */
static void bad(const char *what, const char *detail)
{
	fprintf(stderr, "rocefw-demo: %s%s\n", what, detail);
	exit(2);
}

/* The numeric options: name, range, field. */
static const struct rfw_opt_num num_opts[] = {
    RFW_OPT_U32("flows", struct opts, flows, 1, MAX_FLOWS),
    RFW_OPT_U32("duration-ms", struct opts, duration_ms, 100, 600000),
    RFW_OPT_U32("stagger-ms", struct opts, stagger_ms, 0, 300000),
    RFW_OPT_U32("size", struct opts, size, 1, 4u << 20),
    RFW_OPT_U32("depth", struct opts, depth, 1, 256),
    RFW_OPT_U32("line-gbps", struct opts, line_gbps, 1, 400),
    RFW_OPT_U32("cc-time-scale", struct opts, time_scale, 1, 1000),
    RFW_OPT_U32("sample-us", struct opts, sample_us, 100, 1000000),
    RFW_OPT_U32("link-wait-ms", struct opts, link_wait_ms, 0, 60000),
    RFW_OPT_U32("linger-pid", struct opts, linger_pid, 1, 4194304),
};

enum { O_PROF = 256, O_CC, O_CSV, O_CNP, O_JSON, O_HELP };

/* --cc overrides apply after the profile, whatever their order on the command line. */
struct cc_overrides {
	const char *v[64];
	unsigned n;
};

static void opts_default(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->flows = 2;
	o->duration_ms = 4000;
	o->stagger_ms = 1000;
	o->size = 65536;
	o->depth = 4;
	o->line_gbps = 10;
	o->sample_us = 1000;
	o->time_scale = 10;
	o->link_wait_ms = 15000;
	o->profile = "unified";
}

/* One option that is not in num_opts (getopt_long's value @c, its argument @arg). */
static void other_opt(struct opts *o, struct cc_overrides *cc, int c, const char *arg,
                      const char *word)
{
	switch (c) {
	case O_PROF:
		if (dcqcn_profile_lookup(arg) < 0)
			bad("--cc-profile: expected unified, paper, mlx5-cx5, hpcc-ns3 or "
			    "shared-port, not ",
			    arg);
		o->profile = arg;
		break;
	case O_CC:
		if (cc->n == sizeof(cc->v) / sizeof(cc->v[0]))
			bad("--cc: more than 64 overrides", "");
		cc->v[cc->n++] = arg;
		break;
	case O_CSV:
		o->csv = arg;
		break;
	case O_CNP:
		o->cnp_csv = arg;
		break;
	case O_JSON:
		o->json = arg;
		break;
	case O_HELP:
		usage(stdout);
		exit(0);
	default:
		fprintf(stderr, "rocefw-demo: unknown option or missing value: '%s'\n", word);
		usage(stderr);
		exit(2);
	}
}

/* The checks across options. */
static void check_opts(const struct opts *o)
{
	if (o->flows > 1 && 2ull * (o->flows - 1) * o->stagger_ms >= o->duration_ms)
		bad("--stagger-ms: the last flow would never run (need 2 x (flows - 1) x stagger < "
		    "duration)",
		    "");
	/* Source (two parities) and destination slots of every flow are allocated up front. */
	if ((uint64_t)o->size * o->depth > 16u << 20)
		bad("--size x --depth: more than 16 MiB in flight per flow", "");
}

/* The DCQCN parameters: the profile, its time constants scaled, then the --cc overrides. */
static void cc_params(struct opts *o, const struct cc_overrides *cc)
{
	const char *const *cc_over = cc->v;
	unsigned ncc = cc->n, i;
	char msg[160];
	int prof_id;

	prof_id = dcqcn_profile_lookup(o->profile);
	dcqcn_params_init(&o->params, (enum dcqcn_profile)prof_id);
	/*
	 * The profiles are tuned for 40-100 Gb/s fabrics, where a queue at Kmax drains in tens of
	 * microseconds. At the demo's 1 Gb/s bottleneck with 4 KiB frames it takes a millisecond:
	 * every time constant of the control loop (CNP spacing, the rate-reduce monitor period,
	 * the alpha period, the rate-increase timer) is stretched by the same factor so that the
	 * loop sees the same number of feedback rounds per queue drain. Rates and byte counts are
	 * left alone. --cc overrides come after and win.
	 */
	o->params.np_min_time_between_cnps *= o->time_scale;
	o->params.rp_rate_reduce_monitor_period *= o->time_scale;
	o->params.rp_dce_tcp_rtt *= o->time_scale;
	o->params.rp_time_reset *= o->time_scale;
	for (i = 0; i < ncc; i++) {
		char name[64];
		const char *eq = strchr(cc_over[i], '=');

		if (eq == NULL || eq == cc_over[i] || (size_t)(eq - cc_over[i]) >= sizeof(name))
			bad("--cc: expected NAME=VALUE, not ", cc_over[i]);
		memcpy(name, cc_over[i], (size_t)(eq - cc_over[i]));
		name[eq - cc_over[i]] = '\0';
		if (dcqcn_param_set_msg(&o->params, name, eq + 1, msg, sizeof(msg)) != 0)
			bad("--cc: ", msg);
	}
	if (dcqcn_params_validate(&o->params, msg, sizeof(msg)) != 0)
		bad("--cc: ", msg);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"flows", required_argument, NULL, 0},
	    {"duration-ms", required_argument, NULL, 0},
	    {"stagger-ms", required_argument, NULL, 0},
	    {"size", required_argument, NULL, 0},
	    {"depth", required_argument, NULL, 0},
	    {"line-gbps", required_argument, NULL, 0},
	    {"cc-profile", required_argument, NULL, O_PROF},
	    {"cc", required_argument, NULL, O_CC},
	    {"sample-us", required_argument, NULL, 0},
	    {"cc-time-scale", required_argument, NULL, 0},
	    {"link-wait-ms", required_argument, NULL, 0},
	    {"csv", required_argument, NULL, O_CSV},
	    {"cnp-csv", required_argument, NULL, O_CNP},
	    {"json", required_argument, NULL, O_JSON},
	    {"linger-pid", required_argument, NULL, 0},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct cc_overrides cc = {.n = 0};
	int c, idx;

	opts_default(o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, &idx)) != -1) {
		int rc = rfw_opt_num_getopt("rocefw-demo", lo, num_opts, RTE_DIM(num_opts), c, idx,
		                            optarg, o);

		if (rc < 0)
			exit(2);
		if (rc == 1)
			other_opt(o, &cc, c, optarg, argv[optind - 1]);
	}
	if (optind < argc)
		bad("unexpected argument: ", argv[optind]);
	check_opts(o);
	cc_params(o, &cc);
}

/* ---- endpoints ---- */

/* One flow's numbers at one sample. */
struct fsample {
	uint64_t rc_kbps, rt_kbps;
	uint64_t bytes; /* verified, cumulative */
	uint64_t cnp_handled, cuts, np_cnp_sent, ce_rx;
	uint32_t alpha;
	uint8_t state;
};

struct flow {
	struct rfw_qp *qs, *qr; /* sender's and receiver's QP */
	uint8_t *src;           /* 2 parities x depth slots at the sender */
	uint8_t *dst;           /* depth slots at the receiver */
	uint64_t start_ns, stop_ns;
	uint64_t posted, done, bytes, bad;
	uint64_t first_ns, last_ns; /* first post, last completion */
	uint64_t min_rc_kbps;       /* lowest RC seen at a sample after the first CNP */
	uint64_t cnt_s[RFW_CNT__COUNT], cnt_r[RFW_CNT__COUNT];
	struct dcqcn_rp rp; /* copies taken before the QPs go */
	struct dcqcn_np np;
};

/* One CNP seen leaving the receiver's port. */
struct cnp_rec {
	uint64_t np_ns; /* the NP's clock: the poll iteration in which it was produced */
	uint64_t tx_ns; /* same clock, read when the frame was handed to the PMD */
	uint32_t dqpn;  /* the sender QP it is for */
};

/* One run's state: the options, both endpoints, the flows, the samples and the CNP log. Owned
 * by main and passed to what uses it; only the signal flag below is file-scope. */
struct demo {
	struct opts o;
	struct rfw_ep s, r; /* sender, receiver */
	struct flow flows[MAX_FLOWS];
	struct dcqcn_prof prof;
	struct fsample *samples; /* [nsamples][flows] */
	uint64_t *sample_t;
	uint32_t nsamples, maxsamples;
	struct cnp_rec *cnps;
	uint64_t t0_r; /* the receiver NIC's clock at the sender's t0 */
	uint32_t ncnps;
	uint64_t cnps_unlogged, cnps_rx_at_sender;
	bool failed;
	unsigned fail_printed;
};

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "rocefw-demo: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void side_setup(struct demo *d, struct rfw_ep *s, uint16_t port_id, uint32_t ip4)
{
	struct rfw_ep_conf c = {.port_id = port_id, .ip4 = ip4};
	const char *stage;
	int rc;

	c.nic.dev_attr.max_qp = 2 * MAX_FLOWS;
	c.nic.cc_prof = &d->prof;
	rc = rfw_ep_open(s, &c, &stage);
	if (rc != 0)
		die(stage, rc);
}

static struct rfw_qp *make_qp(struct demo *d, struct rfw_ep *s)
{
	const char *stage;
	struct rfw_qp *qp =
	    rfw_ep_qp_create(s->pd, s->cq, d->o.depth, 1,
	                     RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE, true, &stage);

	if (qp == NULL)
		die(stage, errno);
	return qp;
}

static void qp_connect(struct rfw_ep *s, struct rfw_qp *qp, const struct rfw_ep *peer,
                       const struct rfw_qp *pqp)
{
	struct rfw_ep_path p;
	const char *stage;
	int rc;

	/* rocefw-cp forwards frames unchanged: the peer's own MAC is the destination. 4.096 us x
	 * 2^14 = 67 ms: far above the deepest queue here (2 MiB at 1 Gb/s: 17 ms), so a
	 * retransmission means a frame was lost, not that the queue was long. WRITEs only: one
	 * outstanding READ/atomic is plenty. */
	rfw_ep_path_local(&p, peer, pqp, RFW_MTU_4096, 14);
	p.max_rd_atomic = 1;
	p.max_dest_rd_atomic = 1;
	rc = rfw_ep_qp_connect(s->nic, qp, &p, &stage);
	if (rc != 0)
		die(stage, rc);
}

/* ---- CNPs on the wire: a TX callback on the receiver's port ---- */

/*
 * Called by rte_eth_tx_burst() on the receiver's port (from rfw_nic_poll's flush, on this
 * lcore) with every frame about to be handed to the PMD. RoCEv2 CNPs (BTH opcode 0x81, IBA
 * A17.9.1 / RoCEv2 annex) are logged with the destination QP. No allocation: a fixed log.
 */
static uint16_t cnp_tx_cb(uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
                          void *arg)
{
	struct demo *d = arg;
	struct rfw_nic *nic = d->r.nic;
	uint64_t tx_ns = 0;

	(void)port_id;
	(void)queue;
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		uint32_t len = pkts[i]->data_len, ihl;
		const uint8_t *bth;

		if (len < RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN + RFW_BTH_LEN ||
		    f[12] != 0x08 || f[13] != 0x00)
			continue;
		ihl = (uint32_t)(f[RFW_ETH_HLEN] & 0xf) * 4;
		if (f[RFW_ETH_HLEN + 9] != IPPROTO_UDP ||
		    len < RFW_ETH_HLEN + ihl + RFW_UDP_HLEN + RFW_BTH_LEN)
			continue;
		bth = f + RFW_ETH_HLEN + ihl;
		if (((uint32_t)bth[2] << 8 | bth[3]) != ROCEV2_PORT)
			continue;
		bth += RFW_UDP_HLEN;
		if (bth[0] != RFW_OP_CNP)
			continue;
		if (d->ncnps == CNP_LOG_MAX) {
			d->cnps_unlogged++;
			continue;
		}
		if (tx_ns == 0)
			tx_ns = rfw_nic_clock_ns(nic);
		d->cnps[d->ncnps].np_ns = rfw_nic_now_ns(nic);
		d->cnps[d->ncnps].tx_ns = tx_ns;
		d->cnps[d->ncnps].dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
		d->ncnps++;
	}
	return n;
}

/* CNPs arriving at the sender's port, counted before the NIC sees them (cross-check). */
static uint16_t cnp_rx_cb(uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
                          uint16_t max, void *arg)
{
	struct demo *d = arg;

	(void)port_id;
	(void)queue;
	(void)max;
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		uint32_t len = pkts[i]->data_len, ihl;

		if (len < RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN + RFW_BTH_LEN ||
		    f[12] != 0x08 || f[13] != 0x00)
			continue;
		ihl = (uint32_t)(f[RFW_ETH_HLEN] & 0xf) * 4;
		if (f[RFW_ETH_HLEN + 9] == IPPROTO_UDP &&
		    len >= RFW_ETH_HLEN + ihl + RFW_UDP_HLEN + RFW_BTH_LEN &&
		    ((uint32_t)f[RFW_ETH_HLEN + ihl + 2] << 8 | f[RFW_ETH_HLEN + ihl + 3]) ==
		        ROCEV2_PORT &&
		    f[RFW_ETH_HLEN + ihl + RFW_UDP_HLEN] == RFW_OP_CNP)
			d->cnps_rx_at_sender++;
	}
	return n;
}

/* ---- the data pattern (as rocefw-perf: two random parities, message number stamped) ---- */

static uint8_t *slot_src(struct demo *d, const struct flow *f, uint64_t k)
{
	return f->src +
	       ((((k / d->o.depth) & 1) * d->o.depth) + k % d->o.depth) * (size_t)d->o.size;
}

/* Each 256-byte chunk carries the message number: no stale slot content can pass the check. */
static void stamp(struct demo *d, uint8_t *p, uint64_t k)
{
	for (uint32_t off = 0; off < d->o.size; off += 256) {
		uint32_t n = d->o.size - off < 8 ? d->o.size - off : 8;

		memcpy(p + off, &k, n);
	}
}

static int post_write(struct demo *d, struct flow *f, uint64_t now)
{
	uint64_t k = f->posted;
	uint8_t *src = slot_src(d, f, k);
	struct rfw_sge sge = {(uint64_t)(uintptr_t)src, d->o.size, rfw_mr_lkey(d->s.mr)};
	struct rfw_send_wr wr = {0}, *badw;

	stamp(d, src, k);
	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = RFW_WR_RDMA_WRITE;
	wr.send_flags = RFW_SEND_SIGNALED;
	wr.wr.rdma.remote_addr =
	    (uint64_t)(uintptr_t)(f->dst + (k % d->o.depth) * (size_t)d->o.size);
	wr.wr.rdma.rkey = rfw_mr_rkey(d->r.mr);
	return rfw_post_send(f->qs, &wr, &badw, now);
}

static void fail(struct demo *d, const char *what, unsigned fi, uint64_t k)
{
	if (d->fail_printed++ < 5)
		fprintf(stderr, "rocefw-demo: flow %u message %" PRIu64 ": %s\n", fi, k, what);
	d->failed = true;
}

static void reap(struct demo *d, uint64_t now)
{
	struct rfw_wc wc[32];
	int n;

	while ((n = rfw_poll_cq(d->s.cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			unsigned fi;
			struct flow *f = NULL;
			uint64_t k = wc[i].wr_id;

			for (fi = 0; fi < d->o.flows; fi++)
				if (rfw_qp_num(d->flows[fi].qs) == wc[i].qp_num) {
					f = &d->flows[fi];
					break;
				}
			if (f == NULL) {
				fail(d, "completion for an unknown QP", wc[i].qp_num, k);
				continue;
			}
			const char *why = NULL;

			if (wc[i].status != RFW_WC_SUCCESS)
				why = rfw_wc_status_str(wc[i].status);
			else if (k != f->done)
				why = "completion out of order";
			else if (memcmp(f->dst + (k % d->o.depth) * (size_t)d->o.size,
			                slot_src(d, f, k), d->o.size) != 0)
				why = "WRITE data differs at the responder";
			if (why != NULL) {
				fail(d, why, fi, k);
				f->bad++;
			} else {
				f->bytes += d->o.size;
			}
			f->done++;
			f->last_ns = now;
		}
	}
	if (n < 0)
		die("rfw_poll_cq", n);
	/* The receiver's CQ gets nothing for WRITEs without immediate; drain it anyway. */
	while ((n = rfw_poll_cq(d->r.cq, 32, wc)) > 0)
		fail(d, "unexpected completion at the receiver", 0, wc[0].wr_id);
}

static void take_sample(struct demo *d, uint64_t now)
{
	struct fsample *row = &d->samples[(size_t)d->nsamples * d->o.flows];

	if (d->nsamples == d->maxsamples)
		return;
	d->sample_t[d->nsamples] = now;
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		const struct flow *f = &d->flows[fi];
		const struct dcqcn_rp *rp = rfw_nic_qp_rp(d->s.nic, f->qs);
		const struct dcqcn_np *np = rfw_nic_qp_np(d->r.nic, f->qr);
		struct fsample *s = &row[fi];

		s->rc_kbps = dcqcn_rp_rate_kbps(rp);
		s->rt_kbps = dcqcn_rp_target_kbps(rp);
		s->alpha = dcqcn_rp_alpha(rp);
		s->state = rp->state;
		s->bytes = f->bytes;
		s->cnp_handled = rp->cnt[DCQCN_RP_CNT_rp_cnp_handled];
		s->cuts = rp->cnt[DCQCN_RP_CNT_rp_rate_cuts];
		s->np_cnp_sent = np->cnt[DCQCN_NP_CNT_np_cnp_sent];
		s->ce_rx = np->cnt[DCQCN_NP_CNT_np_ecn_marked_roce_packets];
		if (s->cnp_handled > 0 && dcqcn_rp_rate_kbps(rp) < d->flows[fi].min_rc_kbps)
			d->flows[fi].min_rc_kbps = dcqcn_rp_rate_kbps(rp);
	}
	d->nsamples++;
}

/* ---- output ---- */

static int write_csv(struct demo *d, const char *path, uint64_t t0, uint64_t t0_mono)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -errno;
	fprintf(f,
	        "# schema=" DEMO_CSV_SCHEMA " t0_mono_ns=%" PRIu64 " flows=%u sample_us=%u "
	        "line_gbps=%u profile=%s; rates in Gb/s, alpha in 1/1024, counters cumulative\n",
	        t0_mono, d->o.flows, d->o.sample_us, d->o.line_gbps, d->o.profile);
	fprintf(f, "t_s");
	for (unsigned fi = 0; fi < d->o.flows; fi++)
		fprintf(f,
		        ",f%u_rc_gbps,f%u_rt_gbps,f%u_alpha,f%u_goodput_gbps,f%u_cnps_handled,"
		        "f%u_rate_cuts,f%u_cnps_sent,f%u_ce_rx,f%u_state",
		        fi, fi, fi, fi, fi, fi, fi, fi, fi);
	fprintf(f, "\n");
	for (uint32_t k = 0; k < d->nsamples; k++) {
		const struct fsample *row = &d->samples[(size_t)k * d->o.flows];
		const struct fsample *prev = k ? &d->samples[(size_t)(k - 1) * d->o.flows] : NULL;
		double dt = k ? (double)(d->sample_t[k] - d->sample_t[k - 1]) : 0;

		fprintf(f, "%.6f", (double)(d->sample_t[k] - t0) / 1e9);
		for (unsigned fi = 0; fi < d->o.flows; fi++) {
			const struct fsample *s = &row[fi];
			double g =
			    prev && dt > 0 ? (double)(s->bytes - prev[fi].bytes) * 8.0 / dt : 0;

			fprintf(f,
			        ",%.4f,%.4f,%u,%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			        ",%s",
			        (double)s->rc_kbps / 1e6, (double)s->rt_kbps / 1e6, s->alpha, g,
			        s->cnp_handled, s->cuts, s->np_cnp_sent, s->ce_rx,
			        dcqcn_rp_state_name((enum dcqcn_rp_state)s->state));
		}
		fprintf(f, "\n");
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

static int write_cnp_csv(struct demo *d, const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -errno;
	fprintf(f,
	        "# schema=" DEMO_CNP_SCHEMA " np_min_time_between_cnps_us=%u; np_ns: the NP's "
	        "clock when it produced the CNP, tx_ns: when the frame went to the PMD; since the "
	        "run started\n",
	        d->o.params.np_min_time_between_cnps);
	fprintf(f, "np_ns,tx_ns,dqpn,flow\n");
	for (uint32_t i = 0; i < d->ncnps; i++) {
		int fl = -1;

		for (unsigned fi = 0; fi < d->o.flows; fi++)
			if (rfw_qp_num(d->flows[fi].qs) == d->cnps[i].dqpn)
				fl = (int)fi;
		fprintf(f, "%" PRId64 ",%" PRId64 ",%u,%d\n", (int64_t)(d->cnps[i].np_ns - d->t0_r),
		        (int64_t)(d->cnps[i].tx_ns - d->t0_r), d->cnps[i].dqpn, fl);
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

static void json_counters(FILE *f, const uint64_t *c)
{
	const char *sep = "";

	fprintf(f, "{");
	for (unsigned k = 0; k < RFW_CNT__COUNT; k++)
		if (c[k] != 0) {
			fprintf(f, "%s\"%s\": %" PRIu64, sep, rfw_counter_name((enum rfw_counter)k),
			        c[k]);
			sep = ", ";
		}
	fprintf(f, "}");
}

static void json_side(FILE *f, const char *name, const struct rfw_ep *s)
{
	const char *sep = "";

	fprintf(f, "    \"%s\": {\"port\": %u, ", name, s->port->port_id);
	for (unsigned k = 0; k < RFW_NIC_CTR__COUNT; k++)
		fprintf(f, "\"nic_%s\": %" PRIu64 ", ", rfw_nic_ctr_name((enum rfw_nic_ctr)k),
		        rfw_nic_ctr(s->nic, (enum rfw_nic_ctr)k));
	fprintf(f, "\"port_ctr\": {");
	for (unsigned k = 0; k < RFW_PORT_CTR__COUNT; k++) {
		fprintf(f, "%s\"%s\": %" PRIu64, sep, rfw_port_ctr_name((enum rfw_port_ctr)k),
		        rfw_port_ctr(s->port, (enum rfw_port_ctr)k));
		sep = ", ";
	}
	fprintf(f, "}}");
}

static double gbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes * 8.0 / (double)ns : 0;
}

static int write_json(struct demo *d, const char *path, uint64_t t0, uint64_t t0_mono,
                      uint64_t t_end)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n  \"schema\": \"" DEMO_SCHEMA "\",\n");
	fprintf(f, "  \"ok\": %s,\n  \"t0_mono_ns\": %" PRIu64 ",\n  \"seconds\": %.6f,\n",
	        d->failed ? "false" : "true", t0_mono, (double)(t_end - t0) / 1e9);
	fprintf(f,
	        "  \"config\": {\"flows\": %u, \"duration_ms\": %u, \"stagger_ms\": %u, "
	        "\"size\": %u, \"depth\": %u, \"line_gbps\": %u, \"sample_us\": %u, "
	        "\"cc_profile\": \"%s\", \"cc_time_scale\": %u, \"cc\": {",
	        d->o.flows, d->o.duration_ms, d->o.stagger_ms, d->o.size, d->o.depth,
	        d->o.line_gbps, d->o.sample_us, d->o.profile, d->o.time_scale);
	for (unsigned k = 0; k < DCQCN_PARAM__COUNT; k++)
		fprintf(f, "%s\"%s\": %u", k ? ", " : "", dcqcn_param_info(k)->name,
		        dcqcn_param_get(&d->o.params, k));
	fprintf(f,
	        "}},\n  \"cnp_log\": {\"logged\": %u, \"unlogged\": %" PRIu64
	        ", \"rx_at_sender\": %" PRIu64 "},\n",
	        d->ncnps, d->cnps_unlogged, d->cnps_rx_at_sender);
	fprintf(f, "  \"flows\": [");
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		const struct flow *fl = &d->flows[fi];
		uint64_t span = fl->last_ns > fl->first_ns ? fl->last_ns - fl->first_ns : 0;

		fprintf(f,
		        "%s\n    {\"flow\": %u, \"sender_qpn\": %u, \"receiver_qpn\": %u, "
		        "\"start_s\": %.3f, \"stop_s\": %.3f, \"messages\": %" PRIu64
		        ", \"completed\": %" PRIu64 ", \"verified_bytes\": %" PRIu64
		        ", \"bad_messages\": %" PRIu64 ", \"goodput_gbps\": %.4f, "
		        "\"line_gbps\": %u, \"min_rate_gbps\": %.4f, \"final_rate_gbps\": %.4f, "
		        "\"final_alpha\": %u,\n     \"rp\": {",
		        fi ? "," : "", fi, rfw_qp_num(fl->qs), rfw_qp_num(fl->qr),
		        (double)(fl->start_ns - t0) / 1e9, (double)(fl->stop_ns - t0) / 1e9,
		        fl->posted, fl->done, fl->bytes, fl->bad, gbps(fl->bytes, span),
		        d->o.line_gbps,
		        fl->min_rc_kbps == UINT64_MAX ? (double)d->o.line_gbps
		                                      : (double)fl->min_rc_kbps / 1e6,
		        (double)dcqcn_rp_rate_kbps(&fl->rp) / 1e6, dcqcn_rp_alpha(&fl->rp));
		for (unsigned k = 0; k < DCQCN_RP_CNT__COUNT; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", dcqcn_rp_counter_name(k),
			        fl->rp.cnt[k]);
		fprintf(f, "},\n     \"np\": {");
		for (unsigned k = 0; k < DCQCN_NP_CNT__COUNT; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", dcqcn_np_counter_name(k),
			        fl->np.cnt[k]);
		fprintf(f, "},\n     \"sender_qp\": ");
		json_counters(f, fl->cnt_s);
		fprintf(f, ",\n     \"receiver_qp\": ");
		json_counters(f, fl->cnt_r);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n  \"endpoints\": {\n");
	json_side(f, "sender", &d->s);
	fprintf(f, ",\n");
	json_side(f, "receiver", &d->r);
	fprintf(f, "\n  }\n}\n");
	return fclose(f) == 0 ? 0 : -EIO;
}

/* ---- the run ---- */

/* Post WRITEs on every flow inside its time span, up to --depth outstanding. Returns the
 * WRITEs outstanding; *@done the completions so far. */
static uint64_t post_flows(struct demo *d, uint64_t now, uint64_t *done)
{
	uint64_t outstanding = 0;

	*done = 0;
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		struct flow *f = &d->flows[fi];

		while (!quit && now >= f->start_ns && now < f->stop_ns &&
		       f->posted - f->done < d->o.depth) {
			if (f->posted == 0)
				f->first_ns = now;
			if (post_write(d, f, now) != 0) {
				fail(d, "post_send refused", fi, f->posted);
				break;
			}
			f->posted++;
		}
		outstanding += f->posted - f->done;
		*done += f->done;
	}
	return outstanding;
}

/* The run's loop from @t0 to --duration-ms, then until the last WRITE completed and the
 * trailing ACKs and CNPs landed. Returns the time it ended. */
static uint64_t run_loop(struct demo *d, uint64_t t0)
{
	uint64_t sample_ns = (uint64_t)d->o.sample_us * 1000, next_sample = t0;
	uint64_t end = t0 + (uint64_t)d->o.duration_ms * 1000000, last_progress = t0, now = t0;
	uint64_t done_seen = 0, settle_until = 0, outstanding, done;

	for (;;) {
		rfw_nic_poll(d->s.nic);
		rfw_nic_poll(d->r.nic);
		now = rfw_nic_clock_ns(d->s.nic);
		reap(d, now);
		outstanding = post_flows(d, now, &done);
		if (now >= next_sample) {
			take_sample(d, now);
			next_sample += sample_ns;
			if (next_sample < now)
				next_sample = now + sample_ns;
		}
		if (done != done_seen) {
			done_seen = done;
			last_progress = now;
		}
		if (outstanding && now - last_progress > STALL_NS) {
			fprintf(stderr,
			        "rocefw-demo: no completion for 5 s with %" PRIu64
			        " WRITEs outstanding\n",
			        outstanding);
			d->failed = true;
			return now;
		}
		if ((now >= end || quit) && outstanding == 0) {
			/* Let trailing ACKs and CNPs land before the counters are read. */
			if (settle_until == 0)
				settle_until = now + SETTLE_NS;
			else if (now >= settle_until)
				return now;
		}
	}
}

/* The summary table on stdout. */
static void print_summary(struct demo *d, uint64_t t0, uint64_t now)
{
	printf("rocefw-demo: %u flows, %.2f s, profile %s, line %u Gb/s, %u-byte WRITEs x %u\n",
	       d->o.flows, (double)(now - t0) / 1e9, d->o.profile, d->o.line_gbps, d->o.size,
	       d->o.depth);
	printf("%-5s %9s %9s %10s %10s %9s %9s %9s %10s %8s\n", "flow", "start_s", "stop_s",
	       "goodput", "verified", "CE_rx", "CNP_sent", "CNP_hdl", "rate_cuts", "min_rate");
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		const struct flow *f = &d->flows[fi];

		printf("%-5u %9.3f %9.3f %6.3fGb/s %7.1fMiB %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		       " %10" PRIu64 " %4.2fGb/s\n",
		       fi, (double)(f->start_ns - t0) / 1e9, (double)(f->stop_ns - t0) / 1e9,
		       gbps(f->bytes, f->last_ns - f->first_ns), (double)f->bytes / 1048576.0,
		       f->np.cnt[DCQCN_NP_CNT_np_ecn_marked_roce_packets],
		       f->np.cnt[DCQCN_NP_CNT_np_cnp_sent], f->rp.cnt[DCQCN_RP_CNT_rp_cnp_handled],
		       f->rp.cnt[DCQCN_RP_CNT_rp_rate_cuts],
		       f->min_rc_kbps == UINT64_MAX ? (double)d->o.line_gbps
		                                    : (double)f->min_rc_kbps / 1e6);
	}
}

static void run(struct demo *d)
{
	/* Each NIC's clock has its own origin: read both back to back (CNPs are logged on the
	 * receiver's clock). */
	uint64_t t0 = rfw_nic_clock_ns(d->s.nic), t0_mono = rfw_mono_ns(), now;
	uint64_t end = t0 + (uint64_t)d->o.duration_ms * 1000000;

	d->t0_r = rfw_nic_clock_ns(d->r.nic);
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		d->flows[fi].start_ns = t0 + (uint64_t)fi * d->o.stagger_ms * 1000000;
		d->flows[fi].stop_ns = end - (uint64_t)fi * d->o.stagger_ms * 1000000;
		d->flows[fi].min_rc_kbps = UINT64_MAX;
	}
	now = run_loop(d, t0);
	take_sample(d, now);
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		struct flow *f = &d->flows[fi];

		f->rp = *rfw_nic_qp_rp(d->s.nic, f->qs);
		f->np = *rfw_nic_qp_np(d->r.nic, f->qr);
		rfw_qp_counters(f->qs, f->cnt_s);
		rfw_qp_counters(f->qr, f->cnt_r);
	}
	if (d->o.csv && write_csv(d, d->o.csv, t0, t0_mono) != 0)
		die(d->o.csv, errno);
	if (d->o.cnp_csv && write_cnp_csv(d, d->o.cnp_csv) != 0)
		die(d->o.cnp_csv, errno);
	if (d->o.json && write_json(d, d->o.json, t0, t0_mono, now) != 0)
		die(d->o.json, errno);
	print_summary(d, t0, now);
	if (quit) {
		fprintf(stderr, "rocefw-demo: interrupted\n");
		d->failed = true;
	}
}

/* Both endpoints, the CNP logging callbacks, links up. */
static void endpoints_up(struct demo *d)
{
	side_setup(d, &d->s, 0, 0x0a000001);
	side_setup(d, &d->r, 1, 0x0a000002);
	if (rte_eth_add_tx_callback(d->r.port->port_id, 0, cnp_tx_cb, d) == NULL ||
	    rte_eth_add_rx_callback(d->s.port->port_id, 0, cnp_rx_cb, d) == NULL)
		die("rte_eth_add_tx/rx_callback (DPDK built without RTE_ETHDEV_RXTX_CALLBACKS?)",
		    rte_errno);
	if (rfw_port_link_wait(d->s.port, d->o.link_wait_ms) != 0 ||
	    rfw_port_link_wait(d->r.port, d->o.link_wait_ms) != 0) {
		fprintf(stderr, "rocefw-demo: links not up after %u ms (is rocefw-cp running?)\n",
		        d->o.link_wait_ms);
		exit(1);
	}
}

/* Memory (sources with two parities at the sender, destinations at the receiver) and every
 * flow's pair of QPs, connected. */
static void flows_up(struct demo *d)
{
	size_t src_len = 2ull * d->o.depth * d->o.size, dst_len = (size_t)d->o.depth * d->o.size;

	d->s.mem_len = ((size_t)d->o.flows * src_len + 4095) & ~(size_t)4095;
	d->r.mem_len = ((size_t)d->o.flows * dst_len + 4095) & ~(size_t)4095;
	d->s.mem = aligned_alloc(4096, d->s.mem_len);
	d->r.mem = aligned_alloc(4096, d->r.mem_len);
	if (d->s.mem == NULL || d->r.mem == NULL)
		die("memory", ENOMEM);
	memset(d->r.mem, 0, d->r.mem_len);
	d->s.mr = rfw_reg_mr(d->s.pd, d->s.mem, d->s.mem_len, RFW_ACCESS_LOCAL_WRITE);
	d->r.mr = rfw_reg_mr(d->r.pd, d->r.mem, d->r.mem_len,
	                     RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
	if (d->s.mr == NULL || d->r.mr == NULL)
		die("rfw_reg_mr", errno);
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		struct flow *f = &d->flows[fi];

		f->src = d->s.mem + fi * src_len;
		f->dst = d->r.mem + fi * dst_len;
		rfw_pattern_fill(f->src, src_len, fi + 1);
		f->qs = make_qp(d, &d->s);
		f->qr = make_qp(d, &d->r);
		qp_connect(&d->s, f->qs, &d->r, f->qr);
		qp_connect(&d->r, f->qr, &d->s, f->qs);
	}
}

/*
 * DPDK's memif PMD unmaps a connection's rings from its control thread when the peer
 * disconnects, racing with a data path still polling them. So the peer (rocefw-cp, still
 * polling) must stop first: this side closes its ports only once the peer has exited (at most
 * 10 s), and polls nothing meanwhile. Then everything goes.
 */
static void close_all(struct demo *d)
{
	for (unsigned i = 0; d->o.linger_pid != 0 && i < 10000; i++) {
		if (kill((pid_t)d->o.linger_pid, 0) != 0)
			break;
		usleep(1000);
	}
	for (unsigned fi = 0; fi < d->o.flows; fi++) {
		rfw_nic_qp_detach(d->s.nic, d->flows[fi].qs);
		rfw_nic_qp_detach(d->r.nic, d->flows[fi].qr);
		if (rfw_destroy_qp(d->flows[fi].qs) != 0 || rfw_destroy_qp(d->flows[fi].qr) != 0)
			die("rfw_destroy_qp", EBUSY);
	}
	rfw_dereg_mr(d->s.mr);
	rfw_dereg_mr(d->r.mr);
	rfw_destroy_cq(d->s.cq);
	rfw_destroy_cq(d->r.cq);
	rfw_dealloc_pd(d->s.pd);
	rfw_dealloc_pd(d->r.pd);
	rfw_nic_destroy(d->s.nic);
	rfw_nic_destroy(d->r.nic);
	rfw_port_close(d->s.port);
	rfw_port_close(d->r.port);
	free(d->s.mem);
	free(d->r.mem);
	free(d->samples);
	free(d->sample_t);
	free(d->cnps);
	rfw_eal_cleanup();
}

int main(int argc, char **argv)
{
	static struct demo dm;
	struct demo *d = &dm;
	int dd = rfw_opt_dashdash(argc, argv);
	char msg[160];

	parse_opts(dd < 0 ? 1 : argc - dd, dd < 0 ? argv : argv + dd, &d->o);
	if (dd < 0) {
		fprintf(stderr, "rocefw-demo: missing '--' between EAL and demo options\n");
		usage(stderr);
		return 2;
	}
	if (dcqcn_prof_config(&d->prof, &d->o.params, d->o.line_gbps * 1000, msg, sizeof(msg)) !=
	    0) {
		fprintf(stderr, "rocefw-demo: --cc-profile %s: %s\n", d->o.profile, msg);
		return 2;
	}
	if (rfw_eal_init(dd, argv) < 0)
		return 1;
	if (rte_eth_dev_count_avail() != 2) {
		fprintf(stderr,
		        "rocefw-demo: need exactly two ports (0: sender, 1: receiver), have %u\n",
		        rte_eth_dev_count_avail());
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	d->maxsamples = (uint32_t)((uint64_t)d->o.duration_ms * 1000 / d->o.sample_us + 64 +
	                           STALL_NS / 1000 / d->o.sample_us);
	d->samples = calloc((size_t)d->maxsamples * d->o.flows, sizeof(*d->samples));
	d->sample_t = calloc(d->maxsamples, sizeof(*d->sample_t));
	d->cnps = calloc(CNP_LOG_MAX, sizeof(*d->cnps));
	if (d->samples == NULL || d->sample_t == NULL || d->cnps == NULL)
		die("memory", ENOMEM);
	endpoints_up(d);
	flows_up(d);
	run(d);
	close_all(d);
	if (d->failed)
		fprintf(stderr, "rocefw-demo: FAILED\n");
	return d->failed ? 1 : 0;
}
