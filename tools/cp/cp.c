/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-cp: a congestion point on DPDK ports. Ports are paired (0<->1, 2<->3, ...; an odd last
 * port forwards back to itself). Each egress port has a bottleneck (token bucket on the TSC),
 * a FIFO of a configured size in bytes, and RED (DPDK lib/sched rte_red) that marks ECT
 * packets CE instead of dropping them; non-ECT packets are dropped at RED's decision.
 * Everything runs on the main lcore, in one poll loop. See docs/cp.md.
 *
 * usage: rocefw-cp [EAL options] -- [options]   (rocefw-cp -- --help)
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include <rte_red.h>
#include <rte_telemetry.h>

#include "wire/frame.h"
#include "wire/neigh_wire.h"
#include "dataplane/rfw_port.h"
#include "wire/ib_hdr.h"
#include "ctrl/rfw_num.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_clock.h"

RTE_LOG_REGISTER_SUFFIX(cp_logtype, cp, NOTICE);
#define CP_LOG(level, fmt, ...)                                                                    \
	rte_log(RTE_LOG_##level, cp_logtype, "rocefw-cp: " fmt "\n", ##__VA_ARGS__)

#define CP_MAX_PORTS 8u
#define CP_SCHEMA    "rocefw.cp.stats/1"
#define CSV_SCHEMA   "rocefw.cp.queue/1"

/* Per egress port counters: name, meaning (docs/cp.md lists the same). */
#define CP_FOREACH_CTR(X)                                                                          \
	X(rx_pkts, "frames received on this port (they leave by its pair)")                        \
	X(enqueued, "frames accepted into this port's egress queue")                               \
	X(forwarded, "frames transmitted by this port (accepted by the PMD)")                      \
	X(forwarded_bytes, "bytes transmitted by this port")                                       \
	X(marked_ce, "ECT(0)/ECT(1) frames marked CE by RED")                                      \
	X(ce_in, "frames that arrived already CE (left as they are)")                              \
	X(dropped_red, "non-ECT frames dropped at RED's decision")                                 \
	X(dropped_tail, "frames dropped because the queue was full")                               \
	X(dropped_random, "frames dropped by --drop")                                              \
	X(queue_hw_bytes, "queue high-water mark in bytes")                                        \
	X(queue_hw_pkts, "queue high-water mark in frames")

enum cp_ctr {
#define CP_CTR_ENUM(n, d) CP_CTR_##n,
	CP_FOREACH_CTR(CP_CTR_ENUM)
#undef CP_CTR_ENUM
	    CP_CTR__COUNT
};
static const char *const cp_ctr_names[] = {
#define CP_CTR_NAME(n, d) #n,
    CP_FOREACH_CTR(CP_CTR_NAME)
#undef CP_CTR_NAME
};

struct cp_conf {
	double rate_gbps;
	uint32_t kmin_kb, kmax_kb;
	double pmax;
	uint32_t wq_log2;
	uint32_t queue_kb;
	double drop;
	uint32_t overhead;
	uint32_t burst_kb;
	const char *csv;
	uint32_t sample_us;
	double duration_s;
	uint32_t idle_exit_ms;
	uint32_t inject;
	uint32_t inject_len;
	bool io_fwd;
	bool touch;
	bool json;
	uint32_t nb_mbufs;
	/* PFC generation toward the senders (docs/pfc.md): -1 off, else the priority. */
	int pfc_prio;
	uint32_t pfc_xoff_kb, pfc_xon_kb, pfc_quanta;
};

/* The egress side of a port: FIFO, token bucket, RED, counters. One lcore. */
struct cp_port {
	uint16_t port_id;
	uint16_t out; /* index of the egress cp_port for frames received here */
	struct rte_mbuf **fifo;
	uint32_t mask, head, tail; /* head: next to send; tail: next free slot */
	uint64_t qbytes;
	uint64_t credit; /* token bucket, in bytes x tsc_hz */
	uint64_t last_tsc;
	struct rte_red red;
	uint64_t ctr[CP_CTR__COUNT];
	uint16_t ntx;
	struct rte_mbuf *tx[RFW_MAX_BURST];
} __rte_cache_aligned;

struct csv_row;

/* The congestion point's state: configuration, ports and queues, the bottleneck's constants,
 * the CSV time series. Owned by main and passed to what uses it. */
struct cp {
	struct cp_conf conf;
	struct cp_port *cps;
	unsigned nports;
	/* Ports telemetry may look at: set once cps[] is fully built (the telemetry thread runs
	 * from EAL init on). */
	volatile unsigned tel_nports;
	struct rte_red_config red_cfg;
	unsigned red_shift; /* log2 of the RED queue unit in bytes */
	/*
	 * The bottleneck is a link, not a policer: credit accrues at rate_fp bytes per TSC cycle
	 * (fixed point, CREDIT_SHIFT fractional bits) and is spent per frame (length +
	 * --overhead). While the queue is empty the credit is capped at the bucket depth
	 * (--burst-kb): an idle link cannot save up more than one burst. While frames wait the
	 * link keeps serving at the rate, however long one poll iteration takes (the cap is then
	 * the depth plus what the queue needs).
	 */
	uint64_t rate_Bps, rate_fp, hz, depth_credit, dt_max, cap_bytes, drop_thresh, t0;
	/* CLOCK_MONOTONIC at t0 (ns): lets another process put the CSV's t_ns on its own time
	 * axis. */
	uint64_t t0_mono_ns;
	double red_scale; /* RTE_RED_S x units per TSC cycle */
	struct csv_row *rows;
	size_t nrows, maxrows;
	FILE *csvf;
};

/* The one run, for the telemetry handlers only: DPDK 22.11's telemetry callbacks take no
 * argument (rte_telemetry_register_cmd), so they find the state here. Set before EAL init. */
static struct cp *tel_cp;

/* Ports telemetry may look at: set once cps[] is fully built (the telemetry thread runs from
 * EAL init on). */
/*
 * The bottleneck is a link, not a policer: credit accrues at rate_fp bytes per TSC cycle
 * (fixed point, CREDIT_SHIFT fractional bits) and is spent per frame (length + --overhead).
 * While the queue is empty the credit is capped at the bucket depth (--burst-kb): an idle link
 * cannot save up more than one burst. While frames wait the link keeps serving at the rate,
 * however long one poll iteration takes (the cap is then the depth plus what the queue needs).
 */
#define CREDIT_SHIFT 32
/* CLOCK_MONOTONIC at t0 (ns): lets another process put the CSV's t_ns on its own time axis. */
static volatile int quit;
/* At exit, how long to wait for a memif peer to close first (see run()). */
#define CP_PEER_GONE_MS 3000

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: rocefw-cp [EAL options] -- [options]\n"
	    "Forwards between port pairs (0<->1, 2<->3; an odd last port back to itself)\n"
	    "through a bottleneck queue per egress port with RED/ECN marking.\n"
	    "  --rate-gbps G     bottleneck rate per egress port, Gbit/s   [10]  0.001..1000\n"
	    "  --overhead B      bytes charged per frame beyond its length: preamble+SFD 8,\n"
	    "                    IFG 12, FCS 4                            [24]  0..64\n"
	    "  --burst-kb K      token bucket depth, KiB (>= one frame)   [16]  1..4096\n"
	    "  --queue-kb Q      FIFO capacity per egress port, KiB      [512]  1..65536\n"
	    "  --kmin-kb K       RED min threshold (Kmin), KiB             [5]  0..queue-kb\n"
	    "  --kmax-kb K       RED max threshold (Kmax), KiB           [200]  kmin+1..queue-kb\n"
	    "  --pmax P          marking probability at Kmax            [0.01]  1/255..1\n"
	    "  --wq-log2 N       RED EWMA weight 2^-N                      [1]  1..12\n"
	    "  --drop P          random drop probability before the queue [0]  0..1\n"
	    "  --csv FILE        queue time series (t_ns,port,queue_bytes,queue_pkts,marked,\n"
	    "                    dropped), schema comment on the first line  [none]\n"
	    "  --sample-us U     CSV sample period, microseconds        [100]  1..1000000\n"
	    "  --duration-s S    stop after S seconds (0: at SIGINT/SIGTERM) [0]  0..86400\n"
	    "  --idle-exit-ms M  stop when nothing arrived for M ms and the queues are empty\n"
	    "                    or could not move a frame for M ms (egress link down)\n"
	    "                    (0: never)                                 [0]  0..3600000\n"
	    "  --inject N        at start, send N ECT(0) RoCEv2 frames out of every port\n"
	    "                    (prime a loop, like testpmd --tx-first)   [0]  0..65536\n"
	    "  --inject-len B    length of injected frames, bytes       [1024]  64..4200\n"
	    "  --io-fwd          plain rx->tx forwarding, no queue/RED/rate (a bound)\n"
	    "  --touch           with --io-fwd: also read each frame's IP header\n"
	    "  --mbufs N         mbufs in the pool (4.5 KiB each)                 1024..1048576\n"
	    "                    [ports x (queue-kb x 4 + 768 + inject), at most 65536]\n"
	    "  --pfc-prio P      send PFC XOFF/XON for priority P out of the port frames\n"
	    "                    arrive on, from the egress queue they feed, like a switch\n"
	    "                    (not with --io-fwd)                    [off]  0..7\n"
	    "  --pfc-xoff-kb K   queue depth that sends XOFF, KiB  [queue-kb / 2]  2..queue-kb\n"
	    "  --pfc-xon-kb K    queue depth that sends XON, KiB     [xoff / 2]  1..xoff-1\n"
	    "  --pfc-quanta Q    pause time in the XOFF, quanta of 512 bit times at\n"
	    "                    --rate-gbps; refreshed every half   [65535]  1..65535\n"
	    "  --json            print the exit statistics as JSON (schema " CP_SCHEMA ")\n"
	    "  --help\n");
}

/* The numeric options: name, range, field (the rest are flags and a path, below). */
static const struct rfw_opt_num num_opts[] = {
    RFW_OPT_DOUBLE("rate-gbps", struct cp_conf, rate_gbps, 0.001, 1000),
    RFW_OPT_U32("kmin-kb", struct cp_conf, kmin_kb, 0, 65536),
    RFW_OPT_U32("kmax-kb", struct cp_conf, kmax_kb, 1, 65536),
    RFW_OPT_DOUBLE("pmax", struct cp_conf, pmax, 1.0 / RTE_RED_MAXP_INV_MAX, 1),
    RFW_OPT_U32("wq-log2", struct cp_conf, wq_log2, RTE_RED_WQ_LOG2_MIN, RTE_RED_WQ_LOG2_MAX),
    RFW_OPT_U32("queue-kb", struct cp_conf, queue_kb, 1, 65536),
    RFW_OPT_DOUBLE("drop", struct cp_conf, drop, 0, 1),
    RFW_OPT_U32("overhead", struct cp_conf, overhead, 0, 64),
    RFW_OPT_U32("burst-kb", struct cp_conf, burst_kb, 1, 4096),
    RFW_OPT_U32("sample-us", struct cp_conf, sample_us, 1, 1000000),
    RFW_OPT_DOUBLE("duration-s", struct cp_conf, duration_s, 0, 86400),
    RFW_OPT_U32("idle-exit-ms", struct cp_conf, idle_exit_ms, 0, 3600000),
    RFW_OPT_U32("inject", struct cp_conf, inject, 0, 65536),
    RFW_OPT_U32("inject-len", struct cp_conf, inject_len, 64, RFW_IP_MTU_DEFAULT),
    RFW_OPT_U32("mbufs", struct cp_conf, nb_mbufs, 1024, 1048576),
    RFW_OPT_U32("pfc-xoff-kb", struct cp_conf, pfc_xoff_kb, 2, 65535),
    RFW_OPT_U32("pfc-xon-kb", struct cp_conf, pfc_xon_kb, 1, 65534),
    RFW_OPT_U32("pfc-quanta", struct cp_conf, pfc_quanta, 1, 65535),
};

/* The checks across options, and the PFC thresholds' defaults (they follow --queue-kb). */
static int check_conf(struct cp_conf *c)
{
	if (c->kmax_kb > c->queue_kb) {
		fprintf(stderr, "rocefw-cp: --kmax-kb: %u is above --queue-kb %u\n", c->kmax_kb,
		        c->queue_kb);
		return -EINVAL;
	}
	if (c->kmin_kb >= c->kmax_kb) {
		fprintf(stderr, "rocefw-cp: --kmin-kb: %u must be below --kmax-kb %u\n", c->kmin_kb,
		        c->kmax_kb);
		return -EINVAL;
	}
	if (c->pfc_prio < 0)
		return 0;
	if (c->pfc_xoff_kb == 0)
		c->pfc_xoff_kb = c->queue_kb / 2 >= 2 ? c->queue_kb / 2 : 2;
	if (c->pfc_xon_kb == 0)
		c->pfc_xon_kb = c->pfc_xoff_kb / 2;
	if (c->pfc_xoff_kb > c->queue_kb || c->pfc_xon_kb >= c->pfc_xoff_kb || c->io_fwd) {
		fprintf(stderr,
		        "rocefw-cp: --pfc-*: need xon-kb (%u) < xoff-kb (%u) <= "
		        "queue-kb (%u), and no --io-fwd\n",
		        c->pfc_xon_kb, c->pfc_xoff_kb, c->queue_kb);
		return -EINVAL;
	}
	return 0;
}

/* One option that is not in num_opts (getopt_long's value @c). */
static int other_opt(struct cp_conf *c, int opt, const char *arg)
{
	uint32_t prio;

	switch (opt) {
	case 'c':
		c->csv = arg;
		return 0;
	case 'f':
		c->io_fwd = true;
		return 0;
	case 'T':
		c->touch = true;
		return 0;
	case 'j':
		c->json = true;
		return 0;
	case 'P':
		if (rfw_opt_u32("rocefw-cp", "--pfc-prio", arg, 0, 7, &prio) != 0)
			return -EINVAL;
		c->pfc_prio = (int)prio;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		return -EINVAL;
	}
}

static int parse_args(int argc, char **argv, struct cp_conf *c)
{
	static const struct option opts[] = {
	    {"rate-gbps", required_argument, NULL, 0},
	    {"kmin-kb", required_argument, NULL, 0},
	    {"kmax-kb", required_argument, NULL, 0},
	    {"pmax", required_argument, NULL, 0},
	    {"wq-log2", required_argument, NULL, 0},
	    {"queue-kb", required_argument, NULL, 0},
	    {"drop", required_argument, NULL, 0},
	    {"overhead", required_argument, NULL, 0},
	    {"burst-kb", required_argument, NULL, 0},
	    {"csv", required_argument, NULL, 'c'},
	    {"sample-us", required_argument, NULL, 0},
	    {"duration-s", required_argument, NULL, 0},
	    {"idle-exit-ms", required_argument, NULL, 0},
	    {"inject", required_argument, NULL, 0},
	    {"inject-len", required_argument, NULL, 0},
	    {"io-fwd", no_argument, NULL, 'f'},
	    {"touch", no_argument, NULL, 'T'},
	    {"json", no_argument, NULL, 'j'},
	    {"mbufs", required_argument, NULL, 0},
	    {"pfc-prio", required_argument, NULL, 'P'},
	    {"pfc-xoff-kb", required_argument, NULL, 0},
	    {"pfc-xon-kb", required_argument, NULL, 0},
	    {"pfc-quanta", required_argument, NULL, 0},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt, idx, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		ret = rfw_opt_num_getopt("rocefw-cp", opts, num_opts, RTE_DIM(num_opts), opt, idx,
		                         optarg, c);
		if (ret == 1)
			ret = other_opt(c, opt, optarg);
		if (ret != 0)
			return ret;
	}
	if (optind != argc) {
		fprintf(stderr, "rocefw-cp: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return check_conf(c);
}

/*
 * rte_red counts the queue in packets with thresholds up to RTE_RED_MAX_TH_MAX (1023). We hand
 * it the queue in bytes, in units of 2^red_shift bytes: 1 KiB, or the smallest power of two
 * that fits the whole queue in 1023 units (so the EWMA never overflows rte_red's fixed point).
 * Kmin and Kmax are rounded to that unit.
 */
static int red_setup(struct cp *C)
{
	uint64_t q = (uint64_t)C->conf.queue_kb * 1024;
	uint32_t min_th, max_th, maxp_inv;
	int ret;

	for (C->red_shift = 10; (q >> C->red_shift) > RTE_RED_MAX_TH_MAX; C->red_shift++)
		;
	min_th = (uint32_t)(((uint64_t)C->conf.kmin_kb * 1024 + (1u << C->red_shift) / 2) >>
	                    C->red_shift);
	max_th = (uint32_t)(((uint64_t)C->conf.kmax_kb * 1024 + (1u << C->red_shift) / 2) >>
	                    C->red_shift);
	maxp_inv = (uint32_t)lround(1.0 / C->conf.pmax);
	if (max_th > RTE_RED_MAX_TH_MAX)
		max_th = RTE_RED_MAX_TH_MAX;
	if (min_th >= max_th) {
		fprintf(
		    stderr,
		    "rocefw-cp: --kmin-kb/--kmax-kb: %u and %u KiB round to the same RED unit of "
		    "%u bytes (set by --queue-kb); widen them\n",
		    C->conf.kmin_kb, C->conf.kmax_kb, 1u << C->red_shift);
		return -EINVAL;
	}
	ret = rte_red_config_init(&C->red_cfg, (uint16_t)C->conf.wq_log2, (uint16_t)min_th,
	                          (uint16_t)max_th, (uint16_t)maxp_inv);
	if (ret != 0) {
		fprintf(stderr,
		        "rocefw-cp: rte_red_config_init(wq_log2 %u, min %u, max %u, "
		        "maxp_inv %u) failed: %d\n",
		        C->conf.wq_log2, min_th, max_th, maxp_inv, ret);
		return -EINVAL;
	}
	CP_LOG(INFO, "RED unit %u B: min_th %u, max_th %u, maxp_inv %u, wq_log2 %u",
	       1u << C->red_shift, min_th, max_th, maxp_inv, C->conf.wq_log2);
	return 0;
}

/* rte_red's clock: one RTE_RED_S per queue unit the bottleneck could have sent (so that
 * rte_red_enqueue_empty() ages the average by the frames an idle link could have carried). */
static inline uint64_t red_time(struct cp *C, uint64_t now)
{
	return (uint64_t)((double)(now - C->t0) * C->red_scale);
}

/*
 * rte_red_enqueue() for an empty queue, without the undefined shift in DPDK 22.11's
 * __rte_red_calc_qempty_factor(): when the idle time is shorter than 2^10 / log2 table units
 * its `1 << (n - 1)` runs with n = 0 (x86 happens to mask the count; UBSan aborts). Same
 * arithmetic as rte_red.h otherwise: avg *= (1 - wq)^m, m = frames the idle link could have
 * carried.
 */
static inline void red_enqueue_empty(struct cp *C, struct rte_red *red, uint64_t time)
{
	uint64_t m = (time - red->q_time) / RTE_RED_S;
	uint32_t n, f, factor;

	red->count++;
	if (m >= RTE_RED_2POW16) {
		red->avg = 0;
		return;
	}
	n = (uint32_t)m * rte_red_log2_1_minus_Wq[C->red_cfg.wq_log2 - RTE_RED_WQ_LOG2_MIN];
	f = (n >> 6) & 0xf;
	n >>= 10;
	if (n >= RTE_RED_SCALING)
		factor = 0;
	else
		factor = (rte_red_pow2_frac_inv[f] + (n ? 1u << (n - 1) : 0)) >> n;
	red->avg = (red->avg >> RTE_RED_SCALING) * (uint16_t)factor;
}

static inline int red_enqueue(struct cp *C, struct rte_red *red, unsigned q, uint64_t now)
{
	if (q != 0)
		return rte_red_enqueue_nonempty(&C->red_cfg, red, q);
	red_enqueue_empty(C, red, red_time(C, now));
	return 0;
}

/* ---- the queue ---- */

static inline uint32_t q_pkts(const struct cp_port *o)
{
	return o->tail - o->head;
}

/* ECN of an IPv4/IPv6 frame, or -1. Only the headers in the first segment are read. */
static inline int frame_ecn(const uint8_t *d, uint32_t len)
{
	uint32_t off = 12;
	uint16_t et;

	if (len < RFW_ETH_HLEN + 2)
		return -1;
	et = rfw_get_be16(d + off);
	for (unsigned n = 0; (et == RFW_ETHERTYPE_VLAN || et == RFW_ETHERTYPE_QINQ); n++) {
		if (n == RFW_MAX_VLANS || len < off + 2 + RFW_VLAN_HLEN + 2)
			return -1;
		off += RFW_VLAN_HLEN;
		et = rfw_get_be16(d + off);
	}
	off += 2;
	if (et == RFW_ETHERTYPE_IPV4 && len >= off + 2)
		return d[off + 1] & 3;
	if (et == RFW_ETHERTYPE_IPV6 && len >= off + 2)
		return (d[off + 1] >> 4) & 3;
	return -1;
}

static inline void enqueue(struct cp *C, struct cp_port *o, struct rte_mbuf *m, uint64_t now)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = m->pkt_len;
	unsigned qu;
	int ecn, red;

	if (C->drop_thresh && (C->drop_thresh == UINT64_MAX || rte_rand() < C->drop_thresh)) {
		o->ctr[CP_CTR_dropped_random]++;
		rte_pktmbuf_free(m);
		return;
	}
	qu = (unsigned)RTE_MIN(o->qbytes >> C->red_shift, (uint64_t)RTE_RED_MAX_TH_MAX);
	red = red_enqueue(C, &o->red, qu, now);
	if (o->qbytes + len > C->cap_bytes || q_pkts(o) > o->mask) {
		o->ctr[CP_CTR_dropped_tail]++;
		rte_pktmbuf_free(m);
		return;
	}
	ecn = frame_ecn(d, m->data_len);
	if (ecn == RFW_ECN_CE)
		o->ctr[CP_CTR_ce_in]++;
	if (red != 0) {
		if (ecn == RFW_ECN_ECT0 || ecn == RFW_ECN_ECT1) {
			/* Mark instead of dropping (RFC 3168 7); IPv4 checksum fixed inside. */
			rfw_ecn_mark_ce(d, m->data_len);
			o->ctr[CP_CTR_marked_ce]++;
		} else if (ecn != RFW_ECN_CE) {
			o->ctr[CP_CTR_dropped_red]++;
			rte_pktmbuf_free(m);
			return;
		}
	}
	o->fifo[o->tail++ & o->mask] = m;
	o->qbytes += len;
	o->ctr[CP_CTR_enqueued]++;
	if (unlikely(o->qbytes > o->ctr[CP_CTR_queue_hw_bytes]))
		o->ctr[CP_CTR_queue_hw_bytes] = o->qbytes;
	if (unlikely(q_pkts(o) > o->ctr[CP_CTR_queue_hw_pkts]))
		o->ctr[CP_CTR_queue_hw_pkts] = q_pkts(o);
}

/* Move as many frames as the token bucket allows into the TX staging area, then send. */
static inline void service(struct cp *C, struct cp_port *o, uint64_t now)
{
	uint64_t dt = now - o->last_tsc, cap;
	uint16_t sent;

	o->last_tsc = now;
	o->credit += RTE_MIN(dt, C->dt_max) * C->rate_fp;
	cap = C->depth_credit +
	      ((o->qbytes + (uint64_t)q_pkts(o) * C->conf.overhead) << CREDIT_SHIFT);
	if (o->credit > cap)
		o->credit = cap;
	while (o->head != o->tail && o->ntx < RFW_MAX_BURST) {
		struct rte_mbuf *m = o->fifo[o->head & o->mask];
		uint64_t need = (uint64_t)(m->pkt_len + C->conf.overhead) << CREDIT_SHIFT;

		if (o->credit < need)
			break;
		o->credit -= need;
		o->head++;
		o->qbytes -= m->pkt_len;
		o->tx[o->ntx++] = m;
		if (o->head == o->tail)
			rte_red_mark_queue_empty(&o->red, red_time(C, now));
	}
	if (o->ntx == 0)
		return;
	sent = rte_eth_tx_burst(o->port_id, 0, o->tx, o->ntx);
	for (uint16_t i = 0; i < sent; i++)
		o->ctr[CP_CTR_forwarded_bytes] += o->tx[i]->pkt_len;
	o->ctr[CP_CTR_forwarded] += sent;
	/* The PMD pushed back: keep the rest, in order, for the next round (never drop here:
	 * the bottleneck is ours, not the PMD's). */
	if (sent < o->ntx)
		memmove(o->tx, o->tx + sent, (o->ntx - sent) * sizeof(o->tx[0]));
	o->ntx = (uint16_t)(o->ntx - sent);
}

/* ---- CSV ---- */

struct csv_row {
	uint64_t t_ns;
	uint64_t qbytes;
	uint64_t marked;
	uint64_t dropped;
	uint32_t qpkts;
	uint16_t port;
};

static void csv_flush(struct cp *C)
{
	for (size_t i = 0; i < C->nrows; i++)
		fprintf(C->csvf, "%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 "\n",
		        C->rows[i].t_ns, C->rows[i].port, C->rows[i].qbytes, C->rows[i].qpkts,
		        C->rows[i].marked, C->rows[i].dropped);
	C->nrows = 0;
}

static void csv_sample(struct cp *C, uint64_t now)
{
	uint64_t t_ns = (uint64_t)((double)(now - C->t0) * 1e9 / (double)C->hz);

	/* Rows live in memory; the (rare) flush when the buffer is full is the only write
	 * on the forwarding lcore. */
	if (C->nrows + C->nports > C->maxrows)
		csv_flush(C);
	for (unsigned i = 0; i < C->nports; i++) {
		const struct cp_port *o = &C->cps[i];
		struct csv_row *r = &C->rows[C->nrows++];

		r->t_ns = t_ns;
		r->port = o->port_id;
		r->qbytes = o->qbytes;
		r->qpkts = q_pkts(o);
		r->marked = o->ctr[CP_CTR_marked_ce];
		r->dropped = o->ctr[CP_CTR_dropped_red] + o->ctr[CP_CTR_dropped_tail] +
		             o->ctr[CP_CTR_dropped_random];
	}
}

static int csv_open(struct cp *C)
{
	double samples;

	C->csvf = fopen(C->conf.csv, "w");
	if (C->csvf == NULL) {
		fprintf(stderr, "rocefw-cp: --csv: %s: %s\n", C->conf.csv, strerror(errno));
		return -errno;
	}
	fprintf(C->csvf,
	        "# schema=" CSV_SCHEMA " rate_gbps=%g queue_kb=%u kmin_kb=%u kmax_kb=%u pmax=%g "
	        "wq_log2=%u sample_us=%u; marked and dropped are cumulative\n",
	        C->conf.rate_gbps, C->conf.queue_kb, C->conf.kmin_kb, C->conf.kmax_kb, C->conf.pmax,
	        C->conf.wq_log2, C->conf.sample_us);
	fprintf(C->csvf, "t_ns,port,queue_bytes,queue_pkts,marked,dropped\n");
	/* The whole run if --duration-s makes it known and it fits 2^20 rows (40 MB). */
	samples =
	    C->conf.duration_s > 0 ? C->conf.duration_s * 1e6 / C->conf.sample_us + 2 : 1 << 20;
	C->maxrows = (size_t)RTE_MIN(samples * C->nports, (double)(1 << 20));
	if (C->maxrows < C->nports)
		C->maxrows = C->nports;
	C->rows = calloc(C->maxrows, sizeof(*C->rows));
	if (C->rows == NULL)
		return -ENOMEM;
	return 0;
}

/* ---- telemetry ---- */

static int tel_cp_stats(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct cp *C = tel_cp;
	uint32_t id;

	if (params == NULL || rfw_num_u32(params, 0, UINT16_MAX, &id) != 0)
		return -EINVAL;
	for (unsigned i = 0; i < C->tel_nports; i++) {
		const struct cp_port *o = &C->cps[i];

		if (o->port_id != id)
			continue;
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "schema", CP_SCHEMA);
		rte_tel_data_add_dict_int(d, "port", o->port_id);
		rte_tel_data_add_dict_int(d, "egress_of", C->cps[o->out].port_id);
		for (unsigned c = 0; c < CP_CTR__COUNT; c++)
			rte_tel_data_add_dict_u64(d, cp_ctr_names[c], o->ctr[c]);
		rte_tel_data_add_dict_u64(d, "queue_bytes", o->qbytes);
		rte_tel_data_add_dict_u64(d, "queue_pkts", q_pkts(o));
		return 0;
	}
	return -EINVAL;
}

static int tel_cp_ports(const char *cmd __rte_unused, const char *params __rte_unused,
                        struct rte_tel_data *d)
{
	const struct cp *C = tel_cp;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (unsigned i = 0; i < C->tel_nports; i++)
		rte_tel_data_add_array_int(d, C->cps[i].port_id);
	return 0;
}

static int tel_cp_config(const char *cmd __rte_unused, const char *params __rte_unused,
                         struct rte_tel_data *d)
{
	const struct cp *C = tel_cp;
	char buf[32];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.cp.config/1");
	snprintf(buf, sizeof(buf), "%g", C->conf.rate_gbps);
	rte_tel_data_add_dict_string(d, "rate_gbps", buf);
	rte_tel_data_add_dict_u64(d, "queue_kb", C->conf.queue_kb);
	rte_tel_data_add_dict_u64(d, "kmin_kb", C->conf.kmin_kb);
	rte_tel_data_add_dict_u64(d, "kmax_kb", C->conf.kmax_kb);
	snprintf(buf, sizeof(buf), "%g", C->conf.pmax);
	rte_tel_data_add_dict_string(d, "pmax", buf);
	rte_tel_data_add_dict_u64(d, "wq_log2", C->conf.wq_log2);
	rte_tel_data_add_dict_u64(d, "red_unit_bytes", 1u << C->red_shift);
	snprintf(buf, sizeof(buf), "%g", C->conf.drop);
	rte_tel_data_add_dict_string(d, "drop", buf);
	rte_tel_data_add_dict_u64(d, "overhead", C->conf.overhead);
	rte_tel_data_add_dict_u64(d, "burst_kb", C->conf.burst_kb);
	return 0;
}

RTE_INIT(cp_telemetry_init)
{
	rte_telemetry_register_cmd(
	    "/rocefw/cp/ports", tel_cp_ports,
	    "Returns the port ids rocefw-cp forwards between. No parameters");
	rte_telemetry_register_cmd("/rocefw/cp/config", tel_cp_config,
	                           "Returns rocefw-cp's bottleneck, queue and RED settings");
	rte_telemetry_register_cmd("/rocefw/cp/stats", tel_cp_stats,
	                           "Returns the egress counters and queue of a port. Parameter: "
	                           "port id");
}

/* ---- set-up, inject, loop, report ---- */

static int inject(struct cp *C, struct rte_mempool *mp)
{
	for (unsigned i = 0; i < C->nports; i++) {
		uint32_t k;

		for (k = 0; k < C->conf.inject; k++) {
			struct rfw_frame_spec s = {
			    .dst_mac = {0x02, 0, 0, 0, 0, 2},
			    .src_mac = {0x02, 0, 0, 0, 0, 1},
			    .ip_ver = 4,
			    .tos = RFW_ECN_ECT0,
			    .ttl = 64,
			    .df = true,
			    .udp_sport = (uint16_t)(0xc000 | (k & 0x3fff)),
			};
			struct rfw_ib_pkt p = {0};
			struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
			size_t hdr = RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN + RFW_ICRC_LEN;
			size_t ib_len = C->conf.inject_len - hdr, total;
			uint8_t *d;
			int off;

			if (m == NULL)
				return -ENOMEM;
			rfw_ip4_to_mapped(s.src_ip, 0xc0000201);
			rfw_ip4_to_mapped(s.dst_ip, 0xc0000202);
			p.bth.opcode = RFW_OP_RC_SEND_ONLY;
			p.bth.dqpn = 0x11;
			p.bth.psn = k;
			ib_len &= ~(size_t)3;
			d = rte_pktmbuf_mtod(m, uint8_t *);
			off = rfw_frame_build_hdrs(d, RFW_FRAME_MAX, &s, ib_len);
			if (off < 0 || rfw_ib_build(d + off, ib_len, &p) < 0) {
				rte_pktmbuf_free(m);
				return -EINVAL;
			}
			memset(d + off + RFW_BTH_LEN, 0xab, ib_len - RFW_BTH_LEN);
			total = rfw_frame_finalize(d, &s, ib_len);
			m->data_len = (uint16_t)total;
			m->pkt_len = (uint32_t)total;
			if (rte_eth_tx_burst(C->cps[i].port_id, 0, &m, 1) != 1) {
				rte_pktmbuf_free(m);
				break;
			}
		}
		CP_LOG(NOTICE, "port %u: injected %u of %u frames", C->cps[i].port_id, k,
		       C->conf.inject);
	}
	return 0;
}

static void report(struct cp *C, double secs)
{
	if (C->conf.json) {
		printf("{\n  \"schema\": \"" CP_SCHEMA "\",\n  \"seconds\": %.6f,\n  "
		       "\"t0_mono_ns\": %" PRIu64 ",\n  \"ports\": [",
		       secs, C->t0_mono_ns);
		for (unsigned i = 0; i < C->nports; i++) {
			struct rte_eth_stats st = {0};

			rte_eth_stats_get(C->cps[i].port_id, &st);
			printf("%s\n    {\"port\": %u", i ? "," : "", C->cps[i].port_id);
			for (unsigned c = 0; c < CP_CTR__COUNT; c++)
				printf(", \"%s\": %" PRIu64, cp_ctr_names[c], C->cps[i].ctr[c]);
			printf(", \"queue_bytes\": %" PRIu64 ", \"rx_nombuf\": %" PRIu64
			       ", \"imissed\": %" PRIu64 ", \"pfc_frames_sent\": %" PRIu64 "}",
			       C->cps[i].qbytes, st.rx_nombuf, st.imissed,
			       rfw_pfc_ctr(rfw_port_get(C->cps[i].port_id),
			                   RFW_PFC_CTR_tx_pause_ctrl_phy));
		}
		printf("\n  ]\n}\n");
		return;
	}
	printf("rocefw-cp: %.3f s\n%-16s", secs, "counter");
	for (unsigned i = 0; i < C->nports; i++)
		printf(" %14s%u", "port", C->cps[i].port_id);
	printf("\n");
	for (unsigned c = 0; c < CP_CTR__COUNT; c++) {
		printf("%-16s", cp_ctr_names[c]);
		for (unsigned i = 0; i < C->nports; i++)
			printf(" %15" PRIu64, C->cps[i].ctr[c]);
		printf("\n");
	}
	for (unsigned i = 0; i < C->nports; i++)
		if (secs > 0)
			printf("port %u: %.3f Mpps, %.3f Gbit/s transmitted\n", C->cps[i].port_id,
			       C->cps[i].ctr[CP_CTR_forwarded] / secs / 1e6,
			       C->cps[i].ctr[CP_CTR_forwarded_bytes] * 8 / secs / 1e9);
}

/* --io-fwd: straight to the other port; --touch reads each frame's IP header (counting CE),
 * the least any forwarder that looks at packets must do. */
static void io_forward(struct cp *C, struct cp_port *in, struct cp_port *o, struct rte_mbuf **pk,
                       uint16_t n)
{
	uint16_t s;

	if (C->conf.touch)
		for (uint16_t k = 0; k < n; k++) {
			if (k + RFW_PREFETCH_AHEAD < n)
				rte_prefetch0(rte_pktmbuf_mtod(pk[k + RFW_PREFETCH_AHEAD], void *));
			in->ctr[CP_CTR_ce_in] += frame_ecn(rte_pktmbuf_mtod(pk[k], uint8_t *),
			                                   pk[k]->data_len) == RFW_ECN_CE;
		}
	s = rte_eth_tx_burst(o->port_id, 0, pk, n);
	o->ctr[CP_CTR_forwarded] += s;
	if (s < n)
		rte_pktmbuf_free_bulk(pk + s, n - s);
}

/* One RX burst of every port, into the egress queue it feeds. Whether anything arrived. */
static bool rx_all(struct cp *C, uint64_t now)
{
	struct rte_mbuf *pk[RFW_MAX_BURST];
	bool got = false;

	for (unsigned i = 0; i < C->nports; i++) {
		struct cp_port *in = &C->cps[i], *o = &C->cps[in->out];
		uint16_t n = rte_eth_rx_burst(in->port_id, 0, pk, RFW_MAX_BURST);

		if (n == 0)
			continue;
		got = true;
		in->ctr[CP_CTR_rx_pkts] += n;
		if (C->conf.io_fwd) {
			io_forward(C, in, o, pk, n);
			continue;
		}
		for (uint16_t k = 0; k < n; k++) {
			if (k + RFW_PREFETCH_AHEAD < n)
				rte_prefetch0(rte_pktmbuf_mtod(pk[k + RFW_PREFETCH_AHEAD], void *));
			enqueue(C, o, pk[k], now);
		}
	}
	return got;
}

/* Every egress queue served; the PFC thresholds fed. Returns the frames forwarded so far;
 * *@busy when a queue still holds frames. */
static uint64_t service_all(struct cp *C, uint64_t now, bool *busy)
{
	uint64_t fwd = 0;

	for (unsigned i = 0; i < C->nports; i++) {
		service(C, &C->cps[i], now);
		/* The depth of the queue port i feeds, in KiB, to its PFC thresholds. */
		if (C->conf.pfc_prio >= 0)
			rfw_pfc_rx_backlog(rfw_port_get(C->cps[i].port_id)->q[0],
			                   (uint32_t)(C->cps[C->cps[i].out].qbytes >> 10), now);
		*busy |= C->cps[i].head != C->cps[i].tail || C->cps[i].ntx;
		fwd += C->cps[i].ctr[CP_CTR_forwarded];
	}
	return fwd;
}

static void loop(struct cp *C)
{
	uint64_t sample_tsc = C->hz / 1000000 * C->conf.sample_us, next_sample = C->t0;
	uint64_t end =
	    C->conf.duration_s > 0 ? C->t0 + (uint64_t)(C->conf.duration_s * (double)C->hz) : 0;
	uint64_t idle_tsc = C->hz / 1000 * C->conf.idle_exit_ms, last_rx = C->t0;
	uint64_t last_progress = C->t0, fwd_seen = 0;

	while (!quit) {
		uint64_t now = rte_rdtsc();
		bool busy = false;

		if (rx_all(C, now))
			last_rx = now;
		if (!C->conf.io_fwd) {
			uint64_t fwd = service_all(C, now, &busy);

			if (fwd != fwd_seen) {
				fwd_seen = fwd;
				last_progress = now;
			}
		}
		if (C->csvf != NULL && now >= next_sample) {
			csv_sample(C, now);
			next_sample += sample_tsc;
			if (next_sample < now)
				next_sample = now + sample_tsc;
		}
		if (end && now >= end)
			break;
		/* Idle: nothing arrived for M ms and the queues are empty, or no queued frame could
		 * leave for M ms (an egress link that is down): either way --idle-exit-ms ends the
		 * run rather than waiting forever on a link that never comes up. */
		if (idle_tsc && now - last_rx >= idle_tsc &&
		    (!busy || now - last_progress >= idle_tsc))
			break;
	}
	for (unsigned i = 0; i < C->nports; i++)
		if (C->cps[i].head != C->cps[i].tail || C->cps[i].ntx)
			CP_LOG(WARNING, "port %u: frames still queued at exit (egress link down?)",
			       C->cps[i].port_id);
}

/* The token bucket and RED scaling from --rate-gbps, --burst-kb, --queue-kb and --drop. */
static void shaper_setup(struct cp *C)
{
	C->hz = rte_get_tsc_hz();
	C->rate_Bps = (uint64_t)(C->conf.rate_gbps * 1e9 / 8);
	C->rate_fp =
	    (uint64_t)((double)C->rate_Bps * (double)(1ull << CREDIT_SHIFT) / (double)C->hz);
	if (C->rate_fp == 0)
		C->rate_fp = 1;
	/* The bucket always holds at least one maximal frame, or it would never leave. */
	C->depth_credit = RTE_MAX((uint64_t)C->conf.burst_kb * 1024, (uint64_t)RFW_FRAME_MAX + 64)
	                  << CREDIT_SHIFT;
	/* Longest gap worth crediting: a full queue of minimum frames plus a burst; keeps
	 * dt x rate_fp far from overflow (2^26 B of queue << 32 < 2^64). */
	C->dt_max = (((uint64_t)C->conf.queue_kb * 1024 * 2) << CREDIT_SHIFT) / C->rate_fp +
	            C->depth_credit / C->rate_fp + 1;
	C->red_scale =
	    (double)C->rate_Bps / (double)C->hz / (double)(1u << C->red_shift) * RTE_RED_S;
	C->cap_bytes = (uint64_t)C->conf.queue_kb * 1024;
	C->drop_thresh =
	    C->conf.drop >= 1 ? UINT64_MAX : (uint64_t)(C->conf.drop * 18446744073709551616.0);
}

/* One port: its egress FIFO of @slots, its bucket, RED state, and the DPDK port itself. */
static int port_setup(struct cp *C, struct cp_port *o, uint16_t pid, unsigned i, uint64_t slots,
                      struct rte_mempool *mp)
{
	struct rfw_port_conf pc = {
	    .pool = mp,
	    .promisc = true,
	    .no_rx_filter = true,
	    .nb_rxd = 512,
	    .nb_txd = 512,
	    /* PFC generation: this port pauses its senders when the queue it feeds is deep; the
	     * pause time runs at the bottleneck rate. */
	    .pfc = {.gen_prio_mask = C->conf.pfc_prio >= 0 ? (uint8_t)(1u << C->conf.pfc_prio) : 0,
	            .gen_xoff = C->conf.pfc_xoff_kb,
	            .gen_xon = C->conf.pfc_xon_kb,
	            .gen_quanta = (uint16_t)C->conf.pfc_quanta,
	            .link_mbps = (uint32_t)RTE_MIN(ceil(C->conf.rate_gbps * 1000),
	                                           (double)RFW_PFC_LINK_MBPS_MAX)},
	};

	o->port_id = pid;
	o->out = (uint16_t)((i ^ 1) < C->nports ? (i ^ 1) : i);
	o->mask = (uint32_t)slots - 1;
	o->fifo = rte_zmalloc("cp_fifo", sizeof(*o->fifo) * slots, RTE_CACHE_LINE_SIZE);
	o->last_tsc = C->t0;
	o->credit = C->depth_credit; /* an idle link starts with a full bucket */
	rte_red_rt_data_init(&o->red);
	if (o->fifo == NULL || rfw_port_setup(pid, &pc, NULL) == NULL) {
		fprintf(stderr, "rocefw-cp: port %u: %s\n", pid, rte_strerror(rte_errno));
		return 1;
	}
	return 0;
}

/* The mbuf pool and every port. 0 or 1. */
static int ports_setup(struct cp *C, struct rte_mempool **mp)
{
	/* Slots for a full queue of minimum-size frames (60 bytes), as a power of two. */
	uint64_t slots = rte_align64pow2(C->cap_bytes / 60 + 1);
	unsigned i = 0;
	uint16_t pid;

	/* Each mbuf holds a whole 4 KiB-MTU frame (4.5 KiB), so the default pool is sized for
	 * a full queue of 256-byte frames (queue-kb x 4), plus RX rings, bursts and injected
	 * frames, per port; smaller frames may run the pool dry first (counted as rx_nombuf). */
	if (C->conf.nb_mbufs == 0) {
		uint64_t per_port =
		    RTE_MIN(slots, (uint64_t)C->conf.queue_kb * 4) + 768 + C->conf.inject;

		C->conf.nb_mbufs = (uint32_t)RTE_MIN(C->nports * per_port, (uint64_t)65536);
	}
	*mp = rfw_pktmbuf_pool_create("cp_pool", C->conf.nb_mbufs, -1);
	if (*mp == NULL)
		return 1;
	C->cps = rte_zmalloc("cp_ports", sizeof(*C->cps) * C->nports, RTE_CACHE_LINE_SIZE);
	if (C->cps == NULL)
		return 1;
	C->t0 = rte_rdtsc();
	RTE_ETH_FOREACH_DEV(pid)
	{
		if (port_setup(C, &C->cps[i], pid, i, slots, *mp) != 0)
			return 1;
		i++;
	}
	rte_smp_wmb();
	C->tel_nports = C->nports;
	return 0;
}

/* Links up (or a warning after 10 s), --inject, then the clocks' zero. 0 or 1. */
static int start(struct cp *C, struct rte_mempool *mp)
{
	unsigned i;

	/* memif, tap and real NICs come up some time after start: wait (up to 10 s) so that
	 * injected frames are not refused by a link that is still down. */
	for (i = 0; i < C->nports; i++)
		if (rfw_port_link_wait(rfw_port_get(C->cps[i].port_id), 10000) != 0)
			CP_LOG(WARNING, "port %u: link still down", C->cps[i].port_id);
	if (C->conf.inject && inject(C, mp) != 0) {
		fprintf(stderr, "rocefw-cp: --inject: cannot build or send frames\n");
		return 1;
	}
	CP_LOG(NOTICE, "%u ports, %g Gbit/s, queue %u KiB, Kmin %u KiB, Kmax %u KiB, Pmax %g",
	       C->nports, C->conf.rate_gbps, C->conf.queue_kb, C->conf.kmin_kb, C->conf.kmax_kb,
	       C->conf.pmax);
	C->t0 = rte_rdtsc();
	C->t0_mono_ns = rfw_mono_ns();
	for (i = 0; i < C->nports; i++)
		C->cps[i].last_tsc = C->t0;
	return 0;
}

/*
 * Not polling any more: give memif peers time to go first (their closing unmaps the shared
 * rings; a PMD polling them then crashes, DPDK 22.11), so that whichever side of a memif pair
 * stops first closes only once the other has stopped polling too. Ports whose link does not
 * follow the peer return at once. Not after a signal: then leave at once. Frames still queued
 * are freed; the PMD's TX (a pcap file) is flushed at close.
 */
static void ports_close(struct cp *C)
{
	unsigned i;

	C->tel_nports = 0;
	for (i = 0; i < C->nports && !quit; i++)
		(void)rfw_port_peer_gone_wait(rfw_port_get(C->cps[i].port_id), CP_PEER_GONE_MS);
	for (i = 0; i < C->nports; i++) {
		struct cp_port *o = &C->cps[i];

		while (o->head != o->tail)
			rte_pktmbuf_free(o->fifo[o->head++ & o->mask]);
		if (o->ntx)
			rte_pktmbuf_free_bulk(o->tx, o->ntx);
		rfw_port_close(rfw_port_get(o->port_id));
	}
}

static int run(struct cp *C, int argc, char **argv)
{
	struct rte_mempool *mp;
	double secs;

	if (parse_args(argc, argv, &C->conf) != 0)
		return 2;
	C->nports = rte_eth_dev_count_avail();
	if (C->nports == 0 || C->nports > CP_MAX_PORTS) {
		fprintf(stderr, "rocefw-cp: %u ports; give 1..%u with --vdev or -a\n", C->nports,
		        CP_MAX_PORTS);
		return 1;
	}
	if (red_setup(C) != 0)
		return 2;
	shaper_setup(C);
	if (ports_setup(C, &mp) != 0)
		return 1;
	if (C->conf.csv != NULL && csv_open(C) != 0)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (start(C, mp) != 0)
		return 1;
	loop(C);
	secs = (double)(rte_rdtsc() - C->t0) / (double)C->hz;
	if (C->csvf != NULL) {
		csv_flush(C);
		fclose(C->csvf);
	}
	report(C, secs);
	ports_close(C);
	return 0;
}

int main(int argc, char **argv)
{
	static struct cp cp = {.conf = {
	                           .rate_gbps = 10,
	                           .kmin_kb = 5,
	                           .kmax_kb = 200,
	                           .pmax = 0.01,
	                           .wq_log2 = 1,
	                           .queue_kb = 512,
	                           .drop = 0,
	                           .overhead = 24,
	                           .burst_kb = 16,
	                           .sample_us = 100,
	                           .inject_len = 1024,
	                           .pfc_prio = -1,
	                           .pfc_quanta = 65535,
	                       }};
	struct cp *C = &cp;
	int ret;

	tel_cp = C;
	ret = rfw_eal_init(argc, argv);

	if (ret < 0)
		return 1;
	/* Every exit after EAL start-up goes through rfw_eal_cleanup() (ASan's leak check). */
	ret = run(C, argc - ret, argv + ret);
	rfw_eal_cleanup();
	return ret;
}
