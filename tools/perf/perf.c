/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-perf: a perftest-style benchmark of the software NIC (dataplane/rfw_nic.h).
 *
 *   rocefw-perf [EAL options] -- write|read|send|atomic bw|lat [options] --loopback
 *   rocefw-perf [EAL options] -- write|read|send|atomic bw|lat [options] --ip A.B.C.D [server]
 *
 * --loopback runs both endpoints in this process, on the calling lcore, over a connected pair
 * of DPDK ring ports (rte_eth_from_rings). Every message moved is checked: WRITE and SEND data
 * at the receiver, READ data at the requester, and each FETCH_AND_ADD's returned value. Beside
 * the goodput it prints the bound measured on the same core in the same run: copying the same
 * bytes once and computing their ICRC once (rfw_icrc_compute), per path-MTU packet.
 *
 * Without --loopback, two processes each drive one DPDK port (any PMD): the server (no address)
 * listens on a TCP port, the client connects to it; they exchange rocefw-oob/2 records
 * (docs/oob.md: up to 16,384 QPs, 32 per record, streamed), resolve each other's MAC by ARP,
 * run the test and exchange their accounts of it, so that the side owning the memory reports
 * what it verified.
 * See docs/perf.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_ring.h>

#include "cc/dcqcn.h"
#include "cc/dcqcn_params.h"
#include "dataplane/rfw_nic.h"
#include "ctrl/rfw_oob.h"
#include "dataplane/rfw_port.h"
#include "tools/common/rfw_ccset.h"
#include "tools/common/rfw_ce.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_pattern.h"
#include "tools/perf/perf.h"

const char *const op_names[4] = {"write", "read", "send", "atomic"};

#define PERF_SCHEMA     "rocefw-perf/1"
#define MAX_QPS         16384       /* both modes (RFW_OOB_MAX_QPS); --perftest: PT_MAX_QPS */
#define RING_SLOTS      16384       /* loopback rings */
#define OUTSTANDING_MAX 32768       /* messages over all QPs (cq_entries): depth is cut */
#define TOTAL_BYTES_MAX (1u << 30)  /* slot bytes over all QPs, per parity: depth is cut */
#define MAX_SIZE        (8u << 20)  /* largest message: 8 MiB */
#define SLOT_BYTES_MAX  (16u << 20) /* per QP and parity: depth is cut to fit */
#define INFLIGHT_BYTES  (2u << 20)  /* bw without -t: depth x size per QP, at least 2 messages */
#define ALL_SIZE_MIN    2
#define STALL_NS        (5ull * NS_PER_S) /* no completion for this long: fail */
#define SERVER_CHECK_NS 1000000ull        /* the server looks for the client's result */

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: rocefw-perf [EAL options] -- write|read|send|atomic bw|lat [options]\n"
	       "  -s, --size BYTES      message size, 1..8388608 (default: bw 65536, lat 2; "
	       "atomic: 8)\n"
	       "  -a, --all             every power of two from 2 B to 8 MiB (atomic: 8 only)\n"
	       "  -n, --iters N         messages per size, 1..1000000000 (default: bw 5000, lat "
	       "1000)\n"
	       "  -D, --duration S      run each size for S seconds instead, 1..3600\n"
	       "  -q, --qps N           queue pairs, 1..16384 (--perftest: 1..32; default 1)\n"
	       "  -t, --tx-depth N      outstanding messages per QP, 1..1024 (default: bw 128,\n"
	       "                        at most 2 MiB a QP and at least 2; lat 1)\n"
	       "  -Q, --cq-mod N        bw: a completion every N messages (and the last), "
	       "1..1024, at most the TX depth (perftest's --cq-mod; default 1: every message, "
	       "with -l the list's length)\n"
	       "  -l, --post_list N     bw: post lists of N work requests, one call each, 1..1024, "
	       "at most the TX depth; a multiple of -Q (perftest's --post_list; default 1)\n"
	       "      --mtu BYTES       path MTU: 256, 512, 1024, 2048 or 4096 (default 4096)\n"
	       "      --cc-profile P    DCQCN profile (unified, paper, mlx5-cx5, hpcc-ns3, "
	       "shared-port), timely (TIMELY's rate machine, unified's notification point) or "
	       "none (default unified)\n"
	       "      --cc-set N=V,...  parameters of that profile by their cc/ names (docs/cc.md; "
	       "timely_* for TIMELY), this side's NIC\n"
	       "      --dscp N          DSCP of data packets, 0..63 (default 26)\n"
	       "      --line-rate GBPS  line rate the DCQCN profile paces against, 1..4000 Gb/s "
	       "(default 100)\n"
	       "      --report_gbits    bandwidth columns in Gb/s instead of MB/s\n"
	       "      --out_json FILE   results as JSON (schema " PERF_SCHEMA ")\n"
	       "      --loopback        both endpoints in this process over a ring port pair\n"
	       "      --ce-mark-every N loopback congestion point: mark every Nth ECN-capable "
	       "frame from the requester side CE, 0..1000000 (default 0: off)\n"
	       "      --check-corrupt-one  test of the checker: flip one delivered byte of the "
	       "middle message of QP 0 before it is checked (the run must fail)\n"
	       "      --transport M     loss recovery: gbn (go-back-N) or sr (selective repeat); "
	       "default gbn\n"
	       "      --ack-timeout N   local ACK timeout 4.096 us * 2^N, 1..31 (default 14: 67 "
	       "ms)\n"
	       "      --tx-ref-min BYTES  payloads of at least this many bytes sent from the MR, "
	       "not copied, where the port's PMD copies frames (memif, af_packet, tap, pcap; "
	       "docs/nic.md), elsewhere copied with their ICRC in one pass, 64..4096, or 0: every "
	       "payload copied, its ICRC a pass of its own (default 1024)\n"
	       "two-process mode (without --loopback; one DPDK port per process, any PMD):\n"
	       "      --ip A.B.C.D      this side's IPv4 address on the DPDK port (required)\n"
	       "  -p, --port N          TCP port of the out-of-band exchange, 1..65535 (default "
	       "18515)\n"
	       "      --oob-timeout S   wait at most S seconds for the peer (TCP, ARP), 1..3600 "
	       "(default 30)\n"
	       "      --perftest        the peer is an unmodified perftest (ib_write_bw, "
	       "ib_read_bw, ib_send_bw, ib_atomic_bw): speak its TCP exchange on -p; bw "
	       "tests; give -s, -n and -q as on the perftest side\n"
	       "      --perftest-dump F --perftest: after the run, write the memory the peer "
	       "addressed (each QP's cycle buffer, in QP order) to F; --out_json lists it\n"
	       "  server address        run as the client of this server (name or address); "
	       "without it, run as the server\n");
}

static void bad(const char *msg, const char *what)
{
	fprintf(stderr, "rocefw-perf: %s%s%s\n", msg, what ? ": " : "", what ? what : "");
	usage(stderr);
	exit(2);
}

/* The numeric options: name, range, field (--mtu is also checked to be a power of two). */
static const struct rfw_opt_num num_opts[] = {
    RFW_OPT_U32("size", struct opts, size, 1, MAX_SIZE),
    RFW_OPT_U64("iters", struct opts, iters, 1, 1000000000),
    RFW_OPT_U32("duration", struct opts, duration_s, 1, 3600),
    RFW_OPT_U32("qps", struct opts, qps, 1, MAX_QPS),
    RFW_OPT_U32("tx-depth", struct opts, depth, 1, 1024),
    RFW_OPT_U32("cq-mod", struct opts, cq_mod, 1, 1024),
    RFW_OPT_U32("post_list", struct opts, post_list, 1, 1024),
    RFW_OPT_U32("mtu", struct opts, mtu, 256, 4096),
    RFW_OPT_U32("dscp", struct opts, dscp, 0, 63),
    RFW_OPT_U32("line-rate", struct opts, line_gbps, 1, 4000),
    RFW_OPT_U32("ce-mark-every", struct opts, ce_every, 0, 1000000),
    RFW_OPT_U8("ack-timeout", struct opts, ack_timeout, 1, 31),
    RFW_OPT_U32("tx-ref-min", struct opts, tx_ref_min, 0, 4096),
    RFW_OPT_U16("port", struct opts, tcp_port, 1, 65535),
    RFW_OPT_U32("oob-timeout", struct opts, oob_timeout_s, 1, 3600),
};

enum {
	O_MTU = 256,
	O_CC,
	O_DSCP,
	O_GBITS,
	O_JSON,
	O_LOOP,
	O_LINE,
	O_CORRUPT,
	O_CE,
	O_TRANSPORT,
	O_ACKTO,
	O_IP,
	O_OOBTO,
	O_PERFTEST,
	O_DUMP,
	O_CCSET,
	O_TXREF
};

static void opts_default(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->qps = 1;
	o->post_list = 1;
	o->mtu = 4096;
	o->cc_profile = "unified";
	o->dscp = 26;
	o->line_gbps = 100;
	o->transport = RFW_TRANSPORT_GBN;
	o->ack_timeout = 14; /* 67 ms, perftest's default */
	o->tx_ref_min = 1024;
	o->tcp_port = RFW_OOB_PORT_DEFAULT;
	o->oob_timeout_s = 30;
}

/* A value that is not a number: "rocefw-perf: bad value for OPT: 'V' (expected WHAT)", exit 2. */
static void bad_value(const char *opt, const char *v, const char *expected)
{
	fprintf(stderr, "rocefw-perf: bad value for %s: '%s' (expected %s)\n", opt, v, expected);
	exit(2);
}

/* --cc-profile, --transport, --ip. */
static void word_opt(struct opts *o, int c, const char *arg)
{
	struct in_addr a;
	int m;

	if (c == O_CC) {
		if (strcmp(arg, "none") != 0 && strcmp(arg, "timely") != 0 &&
		    dcqcn_profile_lookup(arg) < 0)
			bad_value(
			    "--cc-profile", arg,
			    "none, unified, paper, mlx5-cx5, hpcc-ns3, shared-port or timely");
		o->cc_profile = arg;
	} else if (c == O_TRANSPORT) {
		m = rfw_oob_transport_lookup(arg);
		if (m < 0)
			bad_value("--transport", arg, "gbn or sr");
		o->transport = (enum rfw_transport_mode)m;
	} else {
		if (inet_pton(AF_INET, arg, &a) != 1)
			bad_value("--ip", arg, "an IPv4 address A.B.C.D");
		o->ip4 = ntohl(a.s_addr);
		o->has_ip = true;
	}
}

/* One option that is not in num_opts: flags, paths, words. */
static void other_opt(struct opts *o, int c, const char *arg, const char *word)
{
	switch (c) {
	case 'a':
		o->all = true;
		break;
	case O_CC:
	case O_TRANSPORT:
	case O_IP:
		word_opt(o, c, arg);
		break;
	case O_GBITS:
		o->gbits = true;
		break;
	case O_JSON:
		o->json = arg;
		break;
	case O_LOOP:
		o->loopback = true;
		break;
	case O_CORRUPT:
		o->corrupt_one = true;
		break;
	case O_PERFTEST:
		o->perftest = true;
		break;
	case O_DUMP:
		o->dump = arg;
		break;
	case O_CCSET:
		o->cc_set = arg;
		break;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		if (optopt != 0 && optopt < 256 && strchr("snDqtpQ", optopt) != NULL) {
			fprintf(stderr, "rocefw-perf: option -%c needs a value\n", optopt);
			exit(2);
		}
		bad("unknown option or missing value", word);
	}
}

/* The test from the positional words: OP KIND [SERVER]. */
static void positional(struct opts *o, const char *const pos[3], int npos)
{
	int c;

	if (npos < 2)
		bad("missing test: write|read|send|atomic bw|lat", NULL);
	for (c = 0; c < 4; c++)
		if (strcmp(pos[0], op_names[c]) == 0)
			break;
	if (c == 4)
		bad("unknown operation (expected write, read, send or atomic)", pos[0]);
	o->op = (enum test_op)c;
	if (strcmp(pos[1], "bw") == 0)
		o->lat = false;
	else if (strcmp(pos[1], "lat") == 0)
		o->lat = true;
	else
		bad("unknown test kind (expected bw or lat)", pos[1]);
	o->server = pos[2];
}

/* The options that go only with one mode (loopback, two-process, --perftest). */
static void check_modes(const struct opts *o)
{
	if (o->server != NULL && o->loopback)
		bad("--loopback takes no server address", o->server);
	if (o->tx_ref_min != 0 && o->tx_ref_min < 64)
		bad("--tx-ref-min: 0 (off) or 64..4096 bytes", NULL);
	if (!o->loopback) {
		if (!o->has_ip)
			bad("two-process mode needs --ip A.B.C.D (this side's address on the DPDK "
			    "port)",
			    NULL);
		if (o->all)
			bad("--all is not supported in two-process mode (give one --size)", NULL);
		if (o->ce_every != 0)
			bad("--ce-mark-every is a loopback option", NULL);
	} else if (o->has_ip) {
		bad("--ip is a two-process option (not with --loopback)", NULL);
	}
	if (o->perftest) {
		if (o->qps > PT_MAX_QPS)
			bad("--perftest: up to 32 QPs (--qps; rocefw's own exchange, without "
			    "--perftest, takes up to 16384)",
			    NULL);
		if (o->loopback)
			bad("--perftest is a two-process mode (not with --loopback)", NULL);
		if (o->lat && o->op != OP_WRITE)
			bad("--perftest: of the latency tests only write lat (ib_write_lat) is "
			    "supported",
			    NULL);
		if (o->lat && o->qps != 1)
			bad("--perftest: write lat runs on one QP (-q 1)", NULL);
		if (o->duration_s != 0)
			bad("--perftest counts iterations (-n), as perftest's default: not with "
			    "--duration",
			    NULL);
		if (o->transport != RFW_TRANSPORT_GBN)
			bad("--perftest: perftest's peers speak go-back-N only (--transport gbn)",
			    NULL);
	} else if (o->dump != NULL) {
		bad("--perftest-dump is a --perftest option", NULL);
	}
}

/* The checks across options. */
static void check_opts(const struct opts *o, const char *mtu_arg)
{
	if (o->mtu & (o->mtu - 1))
		bad_value("--mtu", mtu_arg, "256, 512, 1024, 2048 or 4096");
	check_modes(o);
	if (o->op == OP_ATOMIC && o->size != 0 && o->size != 8)
		bad("atomic operations are 8 bytes: --size must be 8", NULL);
	if (o->duration_s != 0 && o->iters != 0)
		bad("--iters and --duration exclude each other", NULL);
	if (o->all && o->size != 0)
		bad("--all and --size exclude each other", NULL);
	if (o->cq_mod > 1 && (o->lat || o->perftest))
		bad("--cq-mod is a bw option of rocefw's own modes (not lat, not --perftest)",
		    NULL);
	if (o->post_list > 1 && (o->lat || o->perftest))
		bad("--post_list is a bw option of rocefw's own modes (not lat, not --perftest)",
		    NULL);
	/* perftest's rule: every list ends on a signaled WR, so a QP's last list completes */
	if (o->post_list > 1 && o->cq_mod != 0 && o->post_list % o->cq_mod != 0)
		bad("--post_list must be a multiple of --cq-mod (as perftest's)", NULL);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"size", required_argument, NULL, 's'},
	    {"all", no_argument, NULL, 'a'},
	    {"iters", required_argument, NULL, 'n'},
	    {"duration", required_argument, NULL, 'D'},
	    {"qps", required_argument, NULL, 'q'},
	    {"tx-depth", required_argument, NULL, 't'},
	    {"cq-mod", required_argument, NULL, 'Q'},
	    {"post_list", required_argument, NULL, 'l'},
	    {"mtu", required_argument, NULL, O_MTU},
	    {"cc-profile", required_argument, NULL, O_CC},
	    {"cc-set", required_argument, NULL, O_CCSET},
	    {"dscp", required_argument, NULL, O_DSCP},
	    {"line-rate", required_argument, NULL, O_LINE},
	    {"report_gbits", no_argument, NULL, O_GBITS},
	    {"out_json", required_argument, NULL, O_JSON},
	    {"loopback", no_argument, NULL, O_LOOP},
	    {"check-corrupt-one", no_argument, NULL, O_CORRUPT},
	    {"ce-mark-every", required_argument, NULL, O_CE},
	    {"transport", required_argument, NULL, O_TRANSPORT},
	    {"ack-timeout", required_argument, NULL, O_ACKTO},
	    {"tx-ref-min", required_argument, NULL, O_TXREF},
	    {"ip", required_argument, NULL, O_IP},
	    {"port", required_argument, NULL, 'p'},
	    {"oob-timeout", required_argument, NULL, O_OOBTO},
	    {"perftest", no_argument, NULL, O_PERFTEST},
	    {"perftest-dump", required_argument, NULL, O_DUMP},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, idx = 0, npos = 0, rc;
	const char *pos[3] = {NULL, NULL, NULL}, *mtu_arg = "";

	opts_default(o);
	optind = 1;
	opterr = 0;
	/* '-' in the option string keeps positional arguments in order, interleaved. */
	while ((c = getopt_long(argc, argv, "-s:an:D:q:t:Q:l:p:h", lo, &idx)) != -1) {
		if (c == 1) {
			if (npos == 3)
				bad("unexpected argument", optarg);
			pos[npos++] = optarg;
			continue;
		}
		if (c == O_MTU)
			mtu_arg = optarg;
		rc = rfw_opt_num_getopt("rocefw-perf", lo, num_opts, RTE_DIM(num_opts), c, idx,
		                        optarg, o);
		if (rc < 0)
			exit(2);
		if (rc == 1)
			other_opt(o, c, optarg, argv[optind - 1]);
	}
	positional(o, pos, npos);
	check_opts(o, mtu_arg);
}

/* ---- the loopback pair ---- */

struct conn {
	struct rfw_qp *qa, *qb;
	/* Region offsets inside each side's memory for this QP. */
	uint8_t *src; /* 2 parities x depth slots, at the side that supplies data */
	uint8_t *dst; /* depth (write/read) or 2 x depth (send receive buffers) slots */
	uint64_t posted, done, recvd;
	uint32_t unsig;     /* bw -Q: messages posted unsignaled since the last signaled one */
	bool ready;         /* in perf.ready: bw_loop posts on it next */
	uint64_t peer_addr; /* two processes: where this QP's requests go at the peer */
	uint32_t qpn;       /* two processes: qa's number (completions find their QP by it) */
	/* loopback: A's L_Key and B's R_Key, kept as perftest keeps its MR's: no call a WR */
	uint32_t lkey, rkey;
	/* the work requests of one post (-l of them, chained), zeroed once (calloc) and only
	   their fields set per post: a zeroing per message compiled to `rep stosq`, whose
	   start-up the message rate paid */
	struct rfw_send_wr *wrs;
	struct rfw_sge *sges;
};

/*
 * One run's state, owned by main and passed to every function that uses it: the two sides
 * (two-process modes use a only), the QPs, the loopback congestion point, the checker's verdict
 * and the two-process exchange. perf.h sees it opaque (perftest_mode.c reaches a side and the
 * verdict through accessors).
 */
struct perf {
	struct rfw_ep a, b;
	struct conn *conns; /* o.qps of them */
	/* bw_loop: the QPs that may post (each once): all at the start, then those with new
	 * completions, so that a poll iteration costs what completed, not the number of QPs */
	uint32_t *ready, nready;
	struct dcqcn_prof prof;
	struct timely_prof tprof; /* --cc-profile timely */
	/* --ce-mark-every: A transmits into ring_cp; the poll loop marks and moves frames to
	 * ring_ab. */
	struct rte_ring *ring_cp, *ring_ab;
	struct rfw_ce_every ce;
	uint8_t *pong_buf;       /* at A: where the pong lands (WRITE / SEND latency) */
	uint64_t pong_recvd;     /* SEND latency: pongs received at A */
	uint64_t last_recv_slot; /* SEND latency: B's receive slot of the last ping */
	/* the checker */
	bool failed;
	uint64_t bad_msgs;
	uint64_t corrupt_at; /* --check-corrupt-one: which message of QP 0 */
	/* bw_loop's signaling (-Q): every sig_mod-th message of a QP, and message sig_last (the
	 * run's last; UINT64_MAX when timed); 0 or 1: every message (lat) */
	uint32_t sig_mod;
	uint64_t sig_last;
	char first_err[RFW_OOB_TEXT_MAX]; /* two-process mode: reported to the peer */
	bool qp_dumped;                   /* the first failed QP's counters went to stderr */
	/* output */
	void (*header_extra)(struct perf *P); /* two-process mode: addresses, before the columns */
	const char *json_mode;                /* "loopback", "server", "client" */
	bool have_peer_result;
	struct rfw_oob_result peer_result;
	/* two-process mode */
	int oob_fd;
	struct rfw_oob_rx oob_rx;
	struct rfw_oob_conn my_conn, peer_conn; /* peer_conn.qp: its first batch only */
	uint32_t peer_rkey;
	struct rte_ether_addr peer_mac;
	bool is_server;
};

void die(const char *what, int err)
{
	fprintf(stderr, "rocefw-perf: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/*
 * The QP's transport mode is set with INIT -> RTR (RFW_QP_TRANSPORT_MODE). A transport without
 * selective repeat refuses sr with -EOPNOTSUPP: say so plainly instead of a bare errno.
 */
static void modify_rtr_failed(int rc, const struct opts *o)
{
	if (o->transport != RFW_TRANSPORT_GBN)
		fprintf(stderr,
		        "rocefw-perf: --transport %s refused by the transport: rfw_modify_qp(RTR, "
		        "RFW_QP_TRANSPORT_MODE): %s%s\n",
		        rfw_oob_transport_name((enum rfw_oob_transport)o->transport), strerror(-rc),
		        rc == -EOPNOTSUPP ? " (selective repeat is not implemented by this build's "
		                            "transport)"
		                          : "");
	else
		fprintf(stderr, "rocefw-perf: modify_qp RTR: %s\n", strerror(-rc));
}

static uint16_t make_ring_port(const char *name, struct rte_ring *rx, struct rte_ring *tx)
{
	int p = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned)rte_socket_id());

	if (p < 0)
		die("rte_eth_from_rings", rte_errno);
	return (uint16_t)p;
}

/* Outstanding messages per QP as asked: -t, else perftest's default (bw 128, lat 1). */
static uint32_t asked_depth(const struct opts *o)
{
	return o->depth ? o->depth : (o->lat ? 1 : 128);
}

/*
 * Entries of a side's one CQ: its outstanding sends and receives at the deepest of the run's
 * sizes (eff_depth only cuts -t), with room to spare. Not more, as perftest sizes its CQs by
 * -t: every completion writes the CQ's next entry, so a CQ far larger than what is outstanding
 * streams its whole ring through the cache (65,536 entries: 3 MB, a cold line every other
 * completion).
 */
static uint32_t cq_entries(const struct opts *o)
{
	uint64_t out = (uint64_t)o->qps * asked_depth(o);

	if (out > OUTSTANDING_MAX)
		out = OUTSTANDING_MAX;
	return (uint32_t)(2 * out + 256);
}

void side_setup(struct perf *P, struct rfw_ep *s, uint16_t port_id, uint32_t ip4,
                const struct opts *o)
{
	struct rfw_ep_conf c = {.port_id = port_id, .ip4 = ip4, .cq_entries = cq_entries(o)};
	const char *stage;
	int rc;

	c.nic.dev_attr.max_qp = o->qps + 8;
	c.nic.dscp = (uint8_t)o->dscp;
	c.nic.dscp_set = true;
	c.nic.tx_ref_min = o->tx_ref_min != 0 ? o->tx_ref_min : RFW_NIC_TX_REF_OFF;
	c.nic.cc_prof = strcmp(o->cc_profile, "none") != 0 ? &P->prof : NULL;
	c.nic.timely_prof = strcmp(o->cc_profile, "timely") == 0 ? &P->tprof : NULL;
	rc = rfw_ep_open(s, &c, &stage);
	if (rc != 0)
		die(stage, rc);
}

/* Loopback: @qp of side @s (in INIT) to RTS toward @peer_qp of side @peer, PSNs from 0. */
static void qp_connect(struct rfw_ep *s, struct rfw_qp *qp, const struct rfw_ep *peer,
                       const struct rfw_qp *peer_qp, const struct opts *o)
{
	struct rfw_ep_path pp;
	const char *stage;
	int rc;

	rfw_ep_path_local(&pp, peer, peer_qp, rfw_ep_mtu(o->mtu), o->ack_timeout);
	rc = qp_to_peer(s, qp, &pp, o, &stage);
	if (rc == 0)
		return;
	if (strcmp(stage, "rfw_modify_qp(RTR)") == 0) {
		modify_rtr_failed(rc, o);
		exit(1);
	}
	die(stage, rc);
}

struct rfw_qp *make_qp(struct rfw_ep *s, uint32_t depth)
{
	const char *stage;
	struct rfw_qp *qp = rfw_ep_qp_create(s->pd, s->cq, depth, 2 * depth,
	                                     RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                                         RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC,
	                                     false, &stage);

	if (qp == NULL)
		die(strcmp(stage, "rfw_create_qp") == 0 ? stage : "modify_qp INIT", errno);
	return qp;
}

/* ---- the data pattern ---- */

/*
 * Each QP has two parities of source slots: the slots of one parity hold the same
 * pseudo-random bytes, the two parities different ones; message k uses slot k % depth of parity
 * (k / depth) & 1, so consecutive uses of one destination slot alternate between two contents.
 * On top, the message's number is stamped every 256 bytes (the smallest path MTU) before
 * posting, so that every packet of a message carries bytes no earlier message left in that
 * slot. The checker compares every byte. One content per parity lets the two-process checker
 * rebuild what message k must be in one slot per parity that stays in cache (want_msg),
 * instead of in a slot of its own that has to come from memory as the received one does.
 */

/*
 * WRITE latency is a ping-pong, as perftest's write_lat: the receiver learns of a WRITE only by
 * watching its memory, so the last bytes of message k carry k + 1 (never the previous message's
 * value, never the zeroed buffer's).
 */
static inline void stamp_last(uint8_t *p, uint32_t size, uint64_t v)
{
	uint32_t n = size < 8 ? size : 8;

	memcpy(p + size - n, &v, n);
}

static inline bool last_is(const uint8_t *p, uint32_t size, const uint8_t *want)
{
	uint32_t n = size < 8 ? size : 8;

	return memcmp(p + size - n, want + size - n, n) == 0;
}

/* ---- one measured size ---- */

uint64_t now_ns(struct perf *P)
{
	return rfw_nic_clock_ns(P->a.nic);
}

/* The loopback congestion point: CE on every ce.every-th ECN-capable frame A -> B (the ICRC
 * masks the ECN bits). */
static void cp_move(struct perf *P)
{
	void *objs[RFW_MAX_BURST];
	unsigned n = rte_ring_dequeue_burst(P->ring_cp, objs, RFW_MAX_BURST, NULL), i, sent;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];

		rfw_ce_every_frame(&P->ce, rte_pktmbuf_mtod(m, uint8_t *), m->data_len);
	}
	sent = rte_ring_enqueue_burst(P->ring_ab, objs, n, NULL);
	if (sent < n)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs + sent, n - sent);
}

/* Both sides' polls; the frames they moved. */
static unsigned poll_both(struct perf *P)
{
	unsigned n = rfw_nic_poll(P->a.nic);

	if (P->ce.every != 0)
		cp_move(P);
	return n + rfw_nic_poll(P->b.nic);
}

/* k % depth and (k / depth) & 1, by mask and shift when the depth is a power of two (the
 * defaults: bw 128, lat 1): a 64-bit divide per post and per check cost the 64 B message rate
 * some 40 cycles each. */
/* The bytes of one message: an atomic's 8, else the run's size. */
static inline uint32_t msg_bytes(const struct opts *o, uint32_t size)
{
	return o->op == OP_ATOMIC ? 8 : size;
}

static inline uint64_t kslot(uint64_t k, uint32_t depth)
{
	return (depth & (depth - 1)) == 0 ? k & (depth - 1) : k % depth;
}
static inline uint64_t kpar(uint64_t k, uint32_t depth)
{
	return ((depth & (depth - 1)) == 0 ? k >> __builtin_ctz(depth) : k / depth) & 1;
}

/* Byte offset of message k's source slot inside a QP's pattern area (both parities): slot
 * kpar * depth + kslot, which is k % (2 depth) (k = q depth + r: (q & 1) depth + r). */
static inline uint64_t slot_off(uint32_t depth, uint32_t size, uint64_t k)
{
	return kslot(k, 2 * depth) * (uint64_t)size;
}

static uint8_t *slot_src(struct conn *c, uint32_t depth, uint32_t size, uint64_t k)
{
	return c->src + slot_off(depth, size, k);
}

/* A QP's source slots for one size (see above): parity 0's content in every slot of parity 0,
 * parity 1's in every slot of parity 1; the same bytes on both sides of a two-process run. */
static void slots_fill(struct conn *c, uint32_t depth, uint32_t size, uint32_t qi)
{
	uint64_t seed = ((uint64_t)size << 8) + qi;

	for (unsigned par = 0; par < 2; par++) {
		uint8_t *base = c->src + (size_t)par * depth * size;

		rfw_pattern_fill(base, size, seed * 2 + par);
		for (uint32_t s = 1; s < depth; s++)
			memcpy(base + (size_t)s * size, base, size);
	}
}

/* Message @k's send flags: signaled every sig_mod-th message and the last, as perftest's
 * --cq-mod (a counter, not k % sig_mod: no division per post). */
static inline unsigned send_flags_of(struct perf *P, struct conn *c, uint64_t k)
{
	if (P->sig_mod > 1 && ++c->unsig < P->sig_mod && k != P->sig_last)
		return 0;
	c->unsig = 0;
	return RFW_SEND_SIGNALED;
}

/* The WR of message @k of the loopback pair into @wr and @sge. */
static inline __attribute__((always_inline)) void
fill_loop(struct perf *P, struct conn *c, const struct opts *o, uint32_t depth, uint32_t size,
          uint64_t k, struct rfw_send_wr *wr, struct rfw_sge *sge)
{
	uint8_t *src = slot_src(c, depth, size, k);
	uint8_t *dst = c->dst + kslot(k, depth) * (size_t)size;

	wr->wr_id = k;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = send_flags_of(P, c, k);
	switch (o->op) {
	case OP_WRITE:
		rfw_pattern_stamp(src, size, k);
		if (o->lat)
			stamp_last(src, size, k + 1);
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)src, size, c->lkey};
		wr->opcode = RFW_WR_RDMA_WRITE;
		wr->wr.rdma.remote_addr = (uint64_t)(uintptr_t)dst;
		wr->wr.rdma.rkey = c->rkey;
		break;
	case OP_SEND:
		rfw_pattern_stamp(src, size, k);
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)src, size, c->lkey};
		wr->opcode = RFW_WR_SEND;
		break;
	case OP_READ:
		/* The data lives at B (src) and lands at A (dst). */
		rfw_pattern_stamp(src, size, k);
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)dst, size, c->lkey};
		wr->opcode = RFW_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = (uint64_t)(uintptr_t)src;
		wr->wr.rdma.rkey = c->rkey;
		break;
	case OP_ATOMIC:
		/* src: B's 8-byte counter; dst: A's result slot. */
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)dst, 8, c->lkey};
		wr->opcode = RFW_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = (uint64_t)(uintptr_t)c->src;
		wr->wr.atomic.compare_add = 1;
		wr->wr.atomic.rkey = c->rkey;
		break;
	}
}

typedef void (*fill_fn)(struct perf *P, struct conn *c, const struct opts *o, uint32_t depth,
                        uint32_t size, uint64_t k, struct rfw_send_wr *wr, struct rfw_sge *sge);

/* Messages @k..@k + @n - 1 of @c as one post of a chain of WRs (-l), each filled by @fill.
 * Inline, so that each caller's @fill is inlined into it. */
static inline __attribute__((always_inline)) int post_n(struct perf *P, struct conn *c,
                                                        const struct opts *o, uint32_t depth,
                                                        uint32_t size, uint64_t k, uint32_t n,
                                                        uint64_t t, fill_fn fill)
{
	struct rfw_send_wr *badw;

	/* One WR (no -l) on a path of its own: the loop's registers cost it 50 instructions. */
	if (__builtin_expect(n == 1, 1)) {
		fill(P, c, o, depth, size, k, c->wrs, c->sges);
		c->wrs[0].next = NULL;
		return rfw_post_send(c->qa, c->wrs, &badw, t);
	}
	for (uint32_t j = 0; j < n; j++) {
		fill(P, c, o, depth, size, k + j, &c->wrs[j], &c->sges[j]);
		c->wrs[j].next = j + 1 < n ? &c->wrs[j + 1] : NULL;
	}
	return rfw_post_send(c->qa, c->wrs, &badw, t);
}

static int post_recv_slot(struct perf *P, struct conn *c, uint32_t size, uint64_t slot, uint64_t t)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(c->dst + slot * size), size,
	                      rfw_mr_lkey(P->b.mr)};
	struct rfw_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *badw;

	return rfw_post_recv(c->qb, &wr, &badw, t);
}

void check_fail(struct perf *P, const char *what, uint32_t qi, uint64_t k)
{
	if (P->first_err[0] == '\0')
		snprintf(P->first_err, sizeof(P->first_err), "qp %u message %" PRIu64 ": %s", qi, k,
		         what);
	if (P->bad_msgs++ < 5)
		fprintf(stderr, "rocefw-perf: qp %u message %" PRIu64 ": %s\n", qi, k, what);
	P->failed = true;
}

/*
 * A completion with an error status: recorded like any failed check, and the first failed QP's
 * non-zero transport counters go to stderr (retries, timeouts, NAKs: why it gave up), since no
 * JSON is written for a failed run.
 */
static void wc_fail(struct perf *P, struct rfw_qp *qp, enum rfw_wc_status st, uint32_t qi,
                    uint64_t k)
{
	uint64_t cnt[RFW_CNT__COUNT];

	check_fail(P, rfw_wc_status_str(st), qi, k);
	if (P->qp_dumped || qp == NULL)
		return;
	P->qp_dumped = true;
	rfw_qp_counters(qp, cnt);
	fprintf(stderr, "rocefw-perf: qp %u counters at the error:", qi);
	for (int i = 0; i < RFW_CNT__COUNT; i++)
		if (cnt[i] != 0)
			fprintf(stderr, " %s=%" PRIu64, rfw_counter_name((enum rfw_counter)i),
			        cnt[i]);
	fputc('\n', stderr);
}

/* Completions of both CQs; every message is checked here. Returns messages completed. */
/* A successful send-side completion @k of QP @qi: the data where it landed (WRITE at B, READ at
 * A), or the value an atomic add returned. */
static inline __attribute__((always_inline)) void
check_send_wc(struct perf *P, const struct opts *o, struct conn *c, uint32_t qi, uint64_t k,
              uint32_t depth, uint32_t size, struct result *r)
{
	uint8_t *dst = c->dst + kslot(k, depth) * (size_t)msg_bytes(o, size);
	uint64_t v;

	if (o->corrupt_one && qi == 0 && k == P->corrupt_at && o->op != OP_SEND)
		*dst ^= 1;
	if (o->op == OP_WRITE || o->op == OP_READ) {
		/* WRITE: the ACK means the bytes are in B's memory: check them there. */
		if (memcmp(dst, slot_src(c, depth, size, k), size) != 0)
			check_fail(P,
			           o->op == OP_WRITE ? "WRITE data differs at the responder"
			                             : "READ data differs at the requester",
			           qi, k);
		r->checked_bytes += size;
	} else if (o->op == OP_ATOMIC) {
		/* In-order execution on one QP: the k-th add returns k. */
		memcpy(&v, dst, 8);
		if (v != k)
			check_fail(P, "FETCH_AND_ADD returned a wrong value", qi, k);
		r->checked_bytes += 8;
	}
}

/* QP @qi has a completion: bw_loop looks at it again (once, however many completed). */
static inline void conn_ready(struct perf *P, uint32_t qi)
{
	if (!P->conns[qi].ready) {
		P->conns[qi].ready = true;
		P->ready[P->nready++] = qi;
	}
}

/*
 * A send completion of message @k on @c, not the next one (c->done): the messages before it
 * completed unsignaled (-Q), in order and successfully (an RC send queue completes in order,
 * and an error always completes with a CQE): each is checked by @chk as its own completion
 * would have been. Returns how many (0, the failure named, if @k is not among the messages
 * outstanding). Out of line: the completion of the next message (every one without -Q) pays
 * only its callers' test.
 */
static __attribute__((noinline)) unsigned
catch_up(struct perf *P, const struct opts *o, struct conn *c, uint32_t qi, uint64_t k,
         uint32_t depth, uint32_t size, struct result *r,
         void (*chk)(struct perf *, const struct opts *, struct conn *, uint32_t, uint64_t,
                     uint32_t, uint32_t, struct result *))
{
	unsigned n = 0;

	/* Every message signaled (lat: their loops count no c->posted): exactly the next one. */
	if (k < c->done || P->sig_mod <= 1 || k >= c->posted) {
		check_fail(P, "completion out of order", qi, k);
		return 0;
	}
	for (; c->done < k; c->done++, n++)
		chk(P, o, c, qi, c->done, depth, size, r);
	return n;
}

/* A's completions. The send completions counted. */
static unsigned reap_a(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                       struct result *r)
{
	struct rfw_wc wc[32];
	unsigned total = 0;
	uint32_t qpn0 = rfw_qp_num(P->conns[0].qa); /* the others follow it (qi is checked) */
	int n;

	while ((n = rfw_poll_cq(P->a.cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			uint32_t qi = wc[i].qp_num - qpn0;
			uint64_t k = wc[i].wr_id;

			/* SEND latency: the pong landed at A (its data is checked by the caller).
			 */
			if (wc[i].opcode == RFW_WC_RECV) {
				if (wc[i].status != RFW_WC_SUCCESS || wc[i].byte_len != size)
					check_fail(P, "pong receive error or length", qi, k);
				P->pong_recvd++;
				continue;
			}
			if (qi >= o->qps) {
				check_fail(P, "completion for an unknown QP", qi, k);
				continue;
			}
			r->completions++;
			if (k != P->conns[qi].done)
				total += catch_up(P, o, &P->conns[qi], qi, k, depth, size, r,
				                  check_send_wc);
			if (wc[i].status != RFW_WC_SUCCESS) {
				wc_fail(P, P->conns[qi].qa, wc[i].status, qi, k);
				P->conns[qi].done++;
				conn_ready(P, qi);
				continue;
			}
			check_send_wc(P, o, &P->conns[qi], qi, k, depth, size, r);
			P->conns[qi].done++;
			conn_ready(P, qi);
			total++;
		}
	}
	if (n < 0)
		die("rfw_poll_cq", n);
	return total;
}

/* A receive at B in @slot of QP @qi: checked, then the slot posted again. */
static void check_recv_wc(struct perf *P, const struct opts *o, const struct rfw_wc *wc,
                          uint32_t qi, uint32_t depth, uint32_t size, struct result *r)
{
	struct conn *c = &P->conns[qi];
	uint64_t slot = wc->wr_id;

	if (o->corrupt_one && qi == 0 && c->recvd == P->corrupt_at)
		c->dst[slot * size] ^= 1;
	if (wc->status != RFW_WC_SUCCESS || wc->byte_len != size)
		check_fail(P, "receive completion error or length", qi, c->recvd);
	else if (memcmp(c->dst + slot * size, slot_src(c, depth, size, c->recvd), size) != 0)
		check_fail(P, "SEND data differs at the receiver", qi, c->recvd);
	else
		r->checked_bytes += size;
	c->recvd++;
	if (post_recv_slot(P, c, size, slot, rfw_nic_now_ns(P->b.nic)) != 0)
		check_fail(P, "post_recv failed", qi, slot);
}

/* B's completions (SEND tests): receives, and the pong SENDs of SEND latency. */
static void reap_b_recvs(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                         struct result *r)
{
	struct rfw_wc wc[32];
	uint32_t qpn0 = rfw_qp_num(P->conns[0].qb);
	int n;

	while ((n = rfw_poll_cq(P->b.cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			uint32_t qi = wc[i].qp_num - qpn0;

			/* SEND latency: B's own pong SENDs complete here too. */
			if (wc[i].opcode == RFW_WC_SEND) {
				if (wc[i].status != RFW_WC_SUCCESS)
					check_fail(P, rfw_wc_status_str(wc[i].status), qi,
					           wc[i].wr_id);
				continue;
			}
			P->last_recv_slot = wc[i].wr_id;
			if (qi >= o->qps) {
				check_fail(P, "receive completion for an unknown QP", qi,
				           wc[i].wr_id);
				continue;
			}
			check_recv_wc(P, o, &wc[i], qi, depth, size, r);
		}
	}
}

static unsigned reap(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                     struct result *r)
{
	unsigned total = reap_a(P, o, depth, size, r);

	if (o->op == OP_SEND)
		reap_b_recvs(P, o, depth, size, r);
	return total;
}

/*
 * This side's verification work per message, timed on this core after the run (bound.c):
 * r->check_ns (comparing what landed) and r->stamp_ns (stamping). @both: loopback, where this
 * core does both sides'. Two processes: the client stamps what it sends (WRITE, SEND) and
 * compares what it reads (READ); the server rebuilds its expectation in a cache-resident slot
 * and compares what landed (WRITE, SEND). Last: the stamping writes the slots it times.
 */
static void tool_costs(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                       bool both, struct result *r)
{
	uint32_t n = o->op == OP_ATOMIC ? 1 : 2 * depth, sz = msg_bytes(o, size);
	bool data = o->op == OP_WRITE || o->op == OP_SEND;
	uint8_t *src = P->conns[0].src;

	r->check_ns = r->stamp_ns = 0;
	if (both) {
		r->check_ns = perf_check_ns(P, src, n, sz, false);
		r->stamp_ns = o->op == OP_ATOMIC ? 0 : perf_stamp_ns(P, src, n, sz);
	} else if (P->is_server && data) {
		r->check_ns = perf_check_ns(P, src, n, sz, true);
		r->stamp_ns = perf_restamp_ns(P, src, sz);
	} else if (!P->is_server && o->op == OP_READ) {
		r->check_ns = perf_check_ns(P, src, n, sz, false);
	} else if (!P->is_server && data) {
		r->stamp_ns = perf_stamp_ns(P, src, n, sz);
	}
}

/* This side's verification over the run (ns): its messages by its costs (tool_costs). */
static double tool_total_ns(const struct result *r)
{
	return (double)r->iters * (r->check_ns + r->stamp_ns);
}

/*
 * The NIC's goodput (nic_goodput_gbps): the run's bytes over its time less what verification
 * could have taken from it. Its time W' is the largest of: the wall time less every side's
 * verification; this side's busy time less its own; the peer's busy time less its own. One
 * core (loopback) does it all one after the other, so W' is the wall time less the
 * verification. Two processes without the peer's account (a latency test): the wall clock.
 */
static void nic_goodput(const struct opts *o, uint32_t size, bool both, struct result *r)
{
	double bits = (double)r->iters * msg_bytes(o, size) * 8.0;
	double wall = r->bw_avg_gbps > 0 ? bits / r->bw_avg_gbps : 0;
	double mine = tool_total_ns(r);
	double peer = r->have_peer_time ? (double)r->peer_tool_ns : 0;
	double nic = wall - mine - peer;

	r->nic_goodput_gbps = r->bw_avg_gbps;
	if (wall <= 0 || (!both && !r->have_peer_time))
		return;
	if ((double)r->busy_ns - mine > nic)
		nic = (double)r->busy_ns - mine;
	if (r->have_peer_time && (double)r->peer_busy_ns - peer > nic)
		nic = (double)r->peer_busy_ns - peer;
	/* Costs timed on a loaded machine can come out at or above the run's own time. */
	if (nic > 0 && nic < wall)
		r->nic_goodput_gbps = bits / nic;
}

/*
 * The yardsticks of the run (bound.c), on this core right after it. The bound: the same bytes
 * copied once and ICRCed once per path-MTU packet. The byte-work bound: the passes the path
 * must make (@both: loopback, both ends on this core), the receiver's copy into as many MR
 * slots as the run's (one a message in flight, which verifying every byte needs: a message's
 * slot is compared after it completes), so the slots' cache misses, a cost of verification,
 * are the bound's as much as the NIC's. Then this side's verification costs and the NIC's
 * goodput with them taken out.
 */
static void measure_bounds(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                           bool both, struct result *r)
{
	uint32_t n = o->op == OP_ATOMIC ? 1 : 2 * depth, sz = msg_bytes(o, size);
	/* Loopback: the target MR's slots (conns_fill: SEND's receives take both parities). */
	uint32_t dslots = !both || o->op == OP_ATOMIC ? 1 : o->op == OP_SEND ? 2 * depth : depth;

	r->bound_gbps = perf_byte_passes_gbps(P, P->conns[0].src, n, sz, o->mtu, 1, 1, 0, 1);
	/* Two processes: one copy, the PMD's out of the MR where the port takes payloads
	 * attached from it (docs/nic.md "Payload sent from the MR"), or ours into the mbuf where
	 * the PMD hands the peer the mbuf itself (memif zero-copy); both elsewhere. Where the
	 * port does not take them, payloads from tx_ref_min on are copied with their ICRC in one
	 * pass. */
	r->byte_work_bound_gbps = perf_byte_passes_gbps(
	    P, P->conns[0].src, n, sz, o->mtu,
	    both || (rfw_port_tx_copies(P->a.port) && !rfw_port_tx_ref(P->a.port)) ? 2 : 1,
	    both ? 2 : 1, rfw_port_tx_ref(P->a.port) ? 0 : o->tx_ref_min, dslots);
	tool_costs(P, o, depth, size, both, r);
	nic_goodput(o, size, both, r);
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Latency columns from @n samples in ns (sorted here). */
void lat_stats(uint64_t *lat, uint64_t done, struct result *r)
{
	double sum = 0, sq = 0, mean;
	uint64_t i;

	qsort(lat, done, sizeof(*lat), cmp_u64);
	for (i = 0; i < done; i++)
		sum += (double)lat[i];
	mean = sum / (double)done;
	for (i = 0; i < done; i++)
		sq += ((double)lat[i] - mean) * ((double)lat[i] - mean);
	r->t_min = (double)lat[0] / 1e3;
	r->t_max = (double)lat[done - 1] / 1e3;
	r->t_typ = (double)lat[done / 2] / 1e3;
	r->t_avg = mean / 1e3;
	r->t_stdev = sqrt(sq / (double)done) / 1e3;
	r->p99 =
	    (double)lat[(uint64_t)((double)done * 0.99) < done ? (uint64_t)((double)done * 0.99)
	                                                       : done - 1] /
	    1e3;
	r->p999 =
	    (double)lat[(uint64_t)((double)done * 0.999) < done ? (uint64_t)((double)done * 0.999)
	                                                        : done - 1] /
	    1e3;
}

/*
 * Outstanding messages per QP for @size: asked_depth, cut so that one QP's slots
 * of one parity stay within SLOT_BYTES_MAX, all QPs' within TOTAL_BYTES_MAX, and all QPs'
 * outstanding messages within OUTSTANDING_MAX (at least one each). Without -t, bw also keeps
 * INFLIGHT_BYTES per QP (at least two messages): every message has its own slots, so 128 x
 * 64 KiB would stream 16 MiB of slots a side through the cache for no more in flight than 2
 * MiB gives (168 us at 100 Gb/s). Measured (docs/perf.md "2026-11-29 late morning"): loopback
 * NIC goodput 64 KiB 48 -> 72 Gb/s, 256 KiB 44 -> 75, 1 MiB 47 -> 74.
 */
static uint32_t eff_depth(const struct opts *o, uint32_t size)
{
	uint64_t depth = asked_depth(o), budget = INFLIGHT_BYTES / size;
	uint64_t caps[3] = {SLOT_BYTES_MAX / size, TOTAL_BYTES_MAX / ((uint64_t)o->qps * size),
	                    OUTSTANDING_MAX / o->qps};

	if (!o->depth && !o->lat && depth > budget)
		depth = budget > 2 ? budget : 2;
	for (int i = 0; i < 3; i++)
		if (depth > caps[i])
			depth = caps[i] ? caps[i] : 1;
	return (uint32_t)depth;
}

/* -l at most the depth: a QP posts a list when it has room for all of it. */
static uint32_t eff_post_list(const struct opts *o, uint32_t depth)
{
	return o->post_list < depth ? o->post_list : depth;
}

/*
 * -Q (without it, 1 or, with -l, the list's length, as perftest's) at most the depth, as
 * perftest cuts it: a QP must be able to post its signaled message while the rest of its group
 * is outstanding. With lists, a divisor of the list's length (check_opts asks it of what was
 * given; the cut to the depth may break it): every list then ends on a signaled WR, so the
 * room a list waits for is freed by completions.
 */
static uint32_t eff_cq_mod(const struct opts *o, uint32_t depth)
{
	uint32_t list = eff_post_list(o, depth);
	uint32_t q = o->cq_mod != 0 ? o->cq_mod : o->post_list;

	if (q > depth)
		q = depth;
	while (list > 1 && list % q != 0)
		q--;
	return q;
}

/*
 * Fresh QPs for every size: receive WQEs left posted by one size (SEND) describe that size's
 * slots, and a new PSN space keeps sizes independent.
 */
static void conns_up(struct perf *P, const struct opts *o)
{
	uint32_t qi;

	/* WRs for the deepest any size gets (-t, cut as eff_depth cuts it for 1-byte messages) */
	uint32_t wrs = eff_depth(o, 1);

	for (qi = 0; qi < o->qps; qi++) {
		struct conn *c = &P->conns[qi];

		c->qa = make_qp(&P->a, wrs);
		c->qb = make_qp(&P->b, wrs);
		qp_connect(&P->a, c->qa, &P->b, c->qb, o);
		qp_connect(&P->b, c->qb, &P->a, c->qa, o);
		/* the ports answer each other's ARP while thousands of QPs are set up */
		rfw_nic_poll(P->a.nic);
		rfw_nic_poll(P->b.nic);
	}
}

static void conns_down(struct perf *P, const struct opts *o)
{
	uint32_t qi;
	int i;

	/* Let frames still in the rings (coalesced ACKs) land before their QPs go. */
	for (i = 0; i < 64; i++) {
		rfw_nic_poll(P->a.nic);
		if (P->ce.every != 0)
			cp_move(P);
		rfw_nic_poll(P->b.nic);
	}
	/* The device's counters keep what destroyed QPs counted (rfw_dev_counters). */
	for (qi = 0; qi < o->qps; qi++) {
		rfw_nic_qp_detach(P->a.nic, P->conns[qi].qa);
		rfw_nic_qp_detach(P->b.nic, P->conns[qi].qb);
		if (rfw_destroy_qp(P->conns[qi].qa) != 0 || rfw_destroy_qp(P->conns[qi].qb) != 0)
			die("rfw_destroy_qp", EBUSY);
	}
}

/*
 * What differs between the loopback run (both endpoints here) and the client of a two-process
 * run: how a message is posted, what a poll iteration drives and where completions are checked.
 */
struct driver {
	int (*post)(struct perf *P, struct conn *c, uint32_t qi, const struct opts *o,
	            uint32_t depth, uint32_t size, uint64_t k, uint32_t n, uint64_t t);
	unsigned (*poll)(struct perf *P); /* the frames the NIC moved */
	unsigned (*reap)(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
	                 struct result *r);
};

/* A timed latency run (-D) keeps its last LAT_RING samples, however many it makes. */
#define LAT_RING 1000000u

/* Latency sample storage (NULL for bw tests). A timed run is bounded by its deadline only
   (as perftest's -D): its samples go round a ring of LAT_RING. */
static uint64_t *lat_alloc(const struct opts *o, uint64_t *iters)
{
	uint64_t *lat;

	if (!o->lat)
		return NULL;
	lat = malloc(sizeof(*lat) * (o->duration_s ? LAT_RING : *iters));
	if (lat == NULL)
		die("latency samples", ENOMEM);
	if (o->duration_s)
		*iters = UINT64_MAX;
	return lat;
}

/* Where sample @k goes. */
static inline uint64_t *lat_slot(uint64_t *lat, const struct opts *o, uint64_t k)
{
	return &lat[o->duration_s ? k % LAT_RING : k];
}

/*
 * QP @qi posts while it has room: lists of -l messages (a QP waits for room for a whole
 * list), the last shorter when @iters (UINT64_MAX: timed) is not a multiple. Timed, past the
 * deadline (@open false), only to the end of a signaled group (-Q).
 */
static inline void post_lists(struct perf *P, const struct opts *o, const struct driver *d,
                              uint32_t qi, uint32_t depth, uint32_t size, uint64_t iters, bool open,
                              uint64_t t)
{
	struct conn *c = &P->conns[qi];
	uint32_t list = eff_post_list(o, depth);

	if (list == 1) { /* no -l: the loop as it was before lists, 10 instructions leaner */
		while (c->posted - c->done < depth && c->posted < iters &&
		       (open || c->unsig != 0)) {
			if (d->post(P, c, qi, o, depth, size, c->posted, 1, t) != 0)
				die("post_send", EINVAL);
			c->posted++;
		}
		return;
	}
	for (;;) {
		uint64_t n = iters - c->posted < list ? iters - c->posted : list;

		if (n == 0 || c->posted - c->done + n > depth || !(open || c->unsig != 0))
			return;
		if (d->post(P, c, qi, o, depth, size, c->posted, (uint32_t)n, t) != 0)
			die("post_send", EINVAL);
		c->posted += n;
	}
}

/*
 * bw: @depth messages outstanding on every QP until @iters per QP have completed (timed: until
 * @deadline, then until what was posted has completed). BW peak is the best of 16 equal
 * windows of completions. Returns the messages completed; *t_end the time of the last.
 */
static uint64_t bw_loop(struct perf *P, const struct opts *o, const struct driver *d,
                        uint32_t depth, uint32_t size, uint64_t iters, uint64_t t_start,
                        uint64_t deadline, uint64_t *t_end, struct result *r)
{
	bool timed = o->duration_s != 0;
	uint64_t target = timed ? UINT64_MAX : iters * o->qps;
	uint64_t done = 0, last_progress = t_start, win_start = t_start, win_done = 0;
	uint64_t win = target == UINT64_MAX ? 0 : target / 16;
	uint32_t qi;

	P->sig_mod = r->cq_mod = eff_cq_mod(o, depth);
	r->post_list = eff_post_list(o, depth);
	P->sig_last = timed ? UINT64_MAX : iters - 1;
	P->nready = 0;
	for (qi = 0; qi < o->qps; qi++) {
		P->conns[qi].ready = false; /* a latency loop's completions may have queued it */
		P->conns[qi].unsig = 0;
		conn_ready(P, qi);
	}
	/* One clock read per round, the NIC's own at its poll (a TSC read of the tool's own per
	 * round showed as 4-5 % of a process in this VM). A round runs from one poll's clock to
	 * the next; it is busy when its poll moved a frame or its reap found a completion. */
	uint64_t t = now_ns(P), t_round = t;
	bool busy = true;

	while (done < target) {
		uint32_t nready = P->nready;
		unsigned got, moved;

		/* Only the QPs reap queued: posting never queues one, so the list is stable. */
		P->nready = 0;
		for (uint32_t i = 0; i < nready; i++) {
			qi = P->ready[i];
			P->conns[qi].ready = false;
			post_lists(P, o, d, qi, depth, size, timed ? UINT64_MAX : iters,
			           !timed || t < deadline, t);
		}
		moved = d->poll(P);
		got = d->reap(P, o, depth, size, r);
		done += got;
		t = rfw_nic_now_ns(P->a.nic);
		r->busy_ns += busy ? t - t_round : 0;
		t_round = t;
		busy = moved != 0 || got != 0;
		if (got != 0) {
			last_progress = t;
			win_done += got;
			if (win != 0 && win_done >= win) {
				double g = (double)win_done * size * 8.0 / (double)(t - win_start);

				if (g > r->bw_peak_gbps)
					r->bw_peak_gbps = g;
				win_done = 0;
				win_start = t;
			}
		} else if (t - last_progress > STALL_NS) {
			fprintf(stderr,
			        "rocefw-perf: no completion for 5 s (%" PRIu64 " of %" PRIu64
			        " done)\n",
			        done, target);
			exit(1);
		}
		if (timed && t >= deadline) {
			uint64_t posted = 0;

			for (qi = 0; qi < o->qps; qi++)
				posted += P->conns[qi].posted;
			target = posted;
		}
	}
	*t_end = now_ns(P);
	r->busy_ns += busy ? *t_end - t_round : 0;
	return done;
}

/* lat (READ, atomic): one message at a time on QP 0, post -> completion. */
static uint64_t lat_loop(struct perf *P, const struct opts *o, const struct driver *d,
                         uint32_t depth, uint32_t size, uint64_t iters, uint64_t deadline,
                         uint64_t *lat, uint64_t *t_end, struct result *r)
{
	struct conn *c = &P->conns[0];
	uint64_t k, done = 0;

	for (k = 0; k < iters; k++) {
		uint64_t t0 = now_ns(P);

		if (t0 >= deadline)
			break;
		if (d->post(P, c, 0, o, depth, size, k, 1, t0) != 0)
			die("post_send", EINVAL);
		while (c->done == k) {
			d->poll(P);
			d->reap(P, o, depth, size, r);
			if (now_ns(P) - t0 > STALL_NS) {
				fprintf(stderr, "rocefw-perf: no completion for 5 s\n");
				exit(1);
			}
		}
		*lat_slot(lat, o, k) = now_ns(P) - t0;
		done++;
	}
	*t_end = now_ns(P);
	return done;
}

/* The figures of a run of @done messages from @t_start to @t_end; frees @lat. */
static void run_figures(const struct opts *o, uint32_t size, uint64_t done, uint64_t t_start,
                        uint64_t t_end, uint64_t *lat, struct result *r)
{
	double secs = (double)(t_end - t_start) / 1e9;
	uint64_t mb = msg_bytes(o, size);

	r->iters = done;
	r->bw_avg_gbps = secs > 0 ? (double)done * mb * 8.0 / 1e9 / secs : 0;
	r->mpps = secs > 0 ? (double)done / secs / 1e6 : 0;
	if (r->bw_peak_gbps < r->bw_avg_gbps)
		r->bw_peak_gbps = r->bw_avg_gbps;
	if (o->lat && done > 0)
		lat_stats(lat, done < LAT_RING || !o->duration_s ? done : LAT_RING, r);
	free(lat);
}

static int loop_post(struct perf *P, struct conn *c, uint32_t qi, const struct opts *o,
                     uint32_t depth, uint32_t size, uint64_t k, uint32_t n, uint64_t t)
{
	(void)qi;
	return post_n(P, c, o, depth, size, k, n, t, fill_loop);
}

static const struct driver loop_driver = {.post = loop_post, .poll = poll_both, .reap = reap};

/* Every QP's slots for one size: source patterns, zeroed destinations, SEND receives. */
static void conns_fill(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size)
{
	for (uint32_t qi = 0; qi < o->qps; qi++) {
		struct conn *c = &P->conns[qi];

		c->posted = c->done = c->recvd = 0;
		if (o->op == OP_ATOMIC)
			memset(c->src, 0, 8);
		else
			slots_fill(c, depth, size, qi);
		memset(c->dst, 0, (o->op == OP_SEND ? 2ull : 1ull) * depth * size);
		if (o->op == OP_SEND) {
			for (uint64_t s = 0; s < 2ull * depth; s++)
				if (post_recv_slot(P, c, size, s, now_ns(P)) != 0)
					die("post_recv", EINVAL);
		}
	}
}

/* Poll both NICs until the last bytes at @p are @want's ("ping"/"pong" @what of message @k). */
static void wait_last_is(struct perf *P, const uint8_t *p, uint32_t size, const uint8_t *want,
                         uint64_t t0, const char *what, uint64_t k)
{
	while (!last_is(p, size, want)) {
		poll_both(P);
		if (now_ns(P) - t0 > STALL_NS) {
			fprintf(stderr, "rocefw-perf: %s %" PRIu64 " never arrived\n", what, k);
			exit(1);
		}
	}
}

/* Poll and reap until *@count moves past @k (SEND latency: ping received at B, pong at A). */
static void wait_count(struct perf *P, const volatile uint64_t *count, uint64_t k, uint64_t t0,
                       const char *what, const struct opts *o, uint32_t depth, uint32_t size,
                       struct result *r)
{
	while (*count == k) {
		poll_both(P);
		reap(P, o, depth, size, r);
		if (now_ns(P) - t0 > STALL_NS) {
			fprintf(stderr, "rocefw-perf: %s %" PRIu64 " never arrived\n", what, k);
			exit(1);
		}
	}
}

/* B writes message @k back from its slot into A's pong buffer. */
static void write_pong(struct perf *P, struct conn *c, uint32_t size, uint64_t k)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)c->dst, size, rfw_mr_lkey(P->b.mr)};
	struct rfw_send_wr wr = {0}, *badw;

	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = RFW_WR_RDMA_WRITE;
	wr.send_flags = RFW_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)P->pong_buf;
	wr.wr.rdma.rkey = rfw_mr_rkey(P->a.mr);
	if (rfw_post_send(c->qb, &wr, &badw, now_ns(P)) != 0)
		die("post_send (pong)", EINVAL);
}

/* B's completions: statuses checked. */
static void reap_b(struct perf *P, uint64_t k)
{
	struct rfw_wc wc[16];
	int n;

	while ((n = rfw_poll_cq(P->b.cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].status != RFW_WC_SUCCESS)
				check_fail(P, rfw_wc_status_str(wc[i].status), 0, k);
}

/* Poll and reap until QP 0 has @done completions, or give up after @limit_ns without. */
static void
drain_qp0(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size, uint64_t done,
          bool (*stalled)(struct perf *P, const struct opts *o, uint64_t t_start, uint64_t last),
          uint64_t t_start, uint64_t last, struct result *r)
{
	struct conn *c = &P->conns[0];

	while (c->done < done) {
		poll_both(P);
		reap(P, o, depth, size, r);
		if (stalled(P, o, t_start, last)) {
			check_fail(P, "completions missing", 0, c->done);
			break;
		}
	}
}

static bool write_lat_stalled(struct perf *P, const struct opts *o, uint64_t t_start, uint64_t last)
{
	return now_ns(P) - t_start > STALL_NS + (uint64_t)o->duration_s * NS_PER_S &&
	       now_ns(P) - last > STALL_NS;
}

static bool send_lat_stalled(struct perf *P, const struct opts *o, uint64_t t_start, uint64_t last)
{
	(void)t_start;
	return now_ns(P) - last > STALL_NS + (uint64_t)o->duration_s * NS_PER_S;
}

/*
 * WRITE latency, ping-pong on QP 0: A writes message k into B's slot; B sees its last bytes
 * change, checks the whole message and writes it back into A's pong buffer; A sees that,
 * checks it too. One sample = half the round trip, as perftest's write_lat. Returns the
 * messages done; *@t_end the end of the run.
 */
static uint64_t write_lat_loop(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                               uint64_t iters, uint64_t t_start, uint64_t deadline, uint64_t *lat,
                               uint64_t *t_end, struct result *r)
{
	struct conn *c = &P->conns[0];
	uint64_t k, done = 0;

	for (k = 0; k < iters; k++) {
		uint64_t t0 = now_ns(P);
		const uint8_t *src = slot_src(c, depth, size, k);

		if (t0 >= deadline)
			break;
		if (post_n(P, c, o, depth, size, k, 1, t0, fill_loop) != 0)
			die("post_send", EINVAL);
		wait_last_is(P, c->dst, size, src, t0, "ping", k);
		if (memcmp(c->dst, src, size) != 0)
			check_fail(P, "WRITE data differs at the responder (ping)", 0, k);
		write_pong(P, c, size, k);
		wait_last_is(P, P->pong_buf, size, src, t0, "pong", k);
		*lat_slot(lat, o, k) = (now_ns(P) - t0) / 2;
		if (memcmp(P->pong_buf, src, size) != 0)
			check_fail(P, "WRITE data differs at the requester (pong)", 0, k);
		done++;
		/* Completions of both sides: statuses checked, A's data checked again. */
		reap(P, o, depth, size, r);
		reap_b(P, k);
	}
	/* The last ACKs. */
	drain_qp0(P, o, depth, size, done, write_lat_stalled, t_start, t_start, r);
	*t_end = now_ns(P);
	return done;
}

/* B sends message @k back from the receive buffer it landed in. */
static void send_pong(struct perf *P, struct conn *c, uint32_t size, uint64_t k)
{
	struct rfw_sge ss = {(uint64_t)(uintptr_t)(c->dst + P->last_recv_slot * size), size,
	                     rfw_mr_lkey(P->b.mr)};
	struct rfw_send_wr swr = {0}, *bads;

	swr.wr_id = k;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = RFW_WR_SEND;
	swr.send_flags = RFW_SEND_SIGNALED;
	if (rfw_post_send(c->qb, &swr, &bads, now_ns(P)) != 0)
		die("post_send (pong)", EINVAL);
}

/*
 * SEND latency, ping-pong on QP 0 as perftest's send_lat: A sends message k, B's receive
 * completion checks it and B sends the same bytes back from its receive buffer into a receive
 * A posted on its pong buffer; A checks them. One sample = half the round trip.
 */
static uint64_t send_lat_loop(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                              uint64_t iters, uint64_t t_start, uint64_t deadline, uint64_t *lat,
                              uint64_t *t_end, struct result *r)
{
	struct conn *c = &P->conns[0];
	uint64_t k, done = 0;

	P->pong_recvd = 0;
	for (k = 0; k < iters; k++) {
		uint64_t t0 = now_ns(P);
		const uint8_t *src = slot_src(c, depth, size, k);
		struct rfw_sge rs = {(uint64_t)(uintptr_t)P->pong_buf, size, rfw_mr_lkey(P->a.mr)};
		struct rfw_recv_wr rwr = {.wr_id = k, .sg_list = &rs, .num_sge = 1}, *badr;

		if (t0 >= deadline)
			break;
		if (rfw_post_recv(c->qa, &rwr, &badr, t0) != 0)
			die("post_recv (pong)", EINVAL);
		if (post_n(P, c, o, depth, size, k, 1, t0, fill_loop) != 0)
			die("post_send", EINVAL);
		wait_count(P, &c->recvd, k, t0, "ping", o, depth, size, r);
		send_pong(P, c, size, k);
		wait_count(P, &P->pong_recvd, k, t0, "pong", o, depth, size, r);
		*lat_slot(lat, o, k) = (now_ns(P) - t0) / 2;
		if (memcmp(P->pong_buf, src, size) != 0)
			check_fail(P, "SEND data differs at the requester (pong)", 0, k);
		done++;
	}
	drain_qp0(P, o, depth, size, done, send_lat_stalled, t_start, t_start, r);
	*t_end = now_ns(P);
	return done;
}

/* SEND: the receiver's last completions may trail the sender's. */
static void drain_recvs(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                        uint64_t done, struct result *r)
{
	uint64_t t0 = now_ns(P);

	for (;;) {
		uint64_t recvd = 0;

		for (uint32_t qi = 0; qi < o->qps; qi++)
			recvd += P->conns[qi].recvd;
		if (recvd >= done)
			break;
		if (now_ns(P) - t0 > STALL_NS) {
			check_fail(P, "receive completions missing", 0, recvd);
			break;
		}
		poll_both(P);
		reap(P, o, depth, size, r);
	}
}

/* Atomics: each QP's counter at the responder equals the adds completed. */
static void check_atomics(struct perf *P, const struct opts *o)
{
	for (uint32_t qi = 0; qi < o->qps; qi++) {
		uint64_t v;

		memcpy(&v, P->conns[qi].src, 8);
		if (v != P->conns[qi].done)
			check_fail(P, "counter at the responder differs from the adds completed",
			           qi, v);
	}
}

static void run_size(struct perf *P, const struct opts *o, uint32_t size, struct result *r)
{
	uint32_t depth = eff_depth(o, size);
	uint64_t iters = o->iters ? o->iters : (o->lat ? 1000 : 5000);
	uint64_t t_start, t_end, deadline, done;
	uint64_t *lat;
	bool timed = o->duration_s != 0;

	memset(r, 0, sizeof(*r));
	r->bytes = size;
	conns_fill(P, o, depth, size);
	lat = lat_alloc(o, &iters);
	P->corrupt_at = timed ? 0 : iters / 2;
	P->failed = false;
	P->bad_msgs = 0;
	t_start = now_ns(P);
	deadline = timed ? t_start + (uint64_t)o->duration_s * NS_PER_S : UINT64_MAX;
	if (o->lat && o->op == OP_WRITE)
		done = write_lat_loop(P, o, depth, size, iters, t_start, deadline, lat, &t_end, r);
	else if (o->lat && o->op == OP_SEND)
		done = send_lat_loop(P, o, depth, size, iters, t_start, deadline, lat, &t_end, r);
	else if (o->lat)
		done = lat_loop(P, o, &loop_driver, depth, size, iters, deadline, lat, &t_end, r);
	else
		done =
		    bw_loop(P, o, &loop_driver, depth, size, iters, t_start, deadline, &t_end, r);
	if (o->op == OP_SEND)
		drain_recvs(P, o, depth, size, done, r);
	if (o->op == OP_ATOMIC)
		check_atomics(P, o);
	run_figures(o, size, done, t_start, t_end, lat, r);
	r->verified = !P->failed && done > 0 && r->checked_bytes == done * msg_bytes(o, size);
	measure_bounds(P, o, depth, size, true, r);
}

/* ---- output ---- */

static void print_header(struct perf *P, const struct opts *o, uint32_t depth, const char *how)
{
	const char *line = "---------------------------------------------------------------------"
	                   "-------------------";

	printf("%s\n", line);
	printf("                    RDMA_%s %s %s (rocefw-perf, %s)\n",
	       o->op == OP_WRITE  ? "Write"
	       : o->op == OP_READ ? "Read"
	       : o->op == OP_SEND ? "Send"
	                          : "Atomic",
	       o->lat ? "Latency" : "BW", "Test", how);
	printf(" Number of qps   : %u\t\tTransport type : IB (RoCEv2, rocefw)\n", o->qps);
	printf(" Mtu             : %u[B]\t\tTX depth       : %u\n", o->mtu, depth);
	printf(" CC profile      : %s\t\tData DSCP      : %u (ECT(0))\n", o->cc_profile, o->dscp);
	printf(" Transport mode  : %s\t\tLocal ACK timeout : %u (%.3f ms)\n",
	       rfw_oob_transport_name((enum rfw_oob_transport)o->transport), o->ack_timeout,
	       4.096e-3 * (double)(1ull << o->ack_timeout));
	if (!o->lat)
		printf(" CQ Moderation   : %u\n", eff_cq_mod(o, depth));
	if (eff_post_list(o, depth) > 1)
		printf(" Post List       : %u\n", eff_post_list(o, depth));
	printf(" Verification    : every byte of every message\n");
	if (P->header_extra != NULL)
		P->header_extra(P);
	printf("%s\n", line);
	if (o->server == NULL && !o->loopback)
		printf(" #bytes     #messages      checked_bytes    verified\n");
	else if (o->lat)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		       "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% "
		       "percentile[usec]   bound[%s]  ratio\n",
		       o->gbits ? "Gb/sec" : "MB/sec");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   "
		       "MsgRate[Mpps]   bound[%s]   ratio   verified\n",
		       o->gbits ? "Gb/sec" : "MB/sec", o->gbits ? "Gb/sec" : "MB/sec",
		       o->gbits ? "Gb/sec" : "MB/sec");
}

static double unit(const struct opts *o, double gbps)
{
	return o->gbits ? gbps : gbps * 1e9 / 8.0 / 1048576.0;
}

static void print_result(const struct opts *o, const struct result *r)
{
	double ratio = r->bound_gbps > 0 ? r->bw_avg_gbps / r->bound_gbps : 0;

	if (o->lat)
		printf(" %-7u %-10" PRIu64 " %-14.2f %-14.2f %-16.2f %-14.2f %-15.2f %-22.2f "
		       "%-24.2f %-10.2f %.3f\n",
		       r->bytes, r->iters, r->t_min, r->t_max, r->t_typ, r->t_avg, r->t_stdev,
		       r->p99, r->p999, unit(o, r->bound_gbps), ratio);
	else
		printf(" %-10u %-14" PRIu64 " %-18.2f %-18.2f %-15.6f %-11.2f %-7.3f %s\n",
		       r->bytes, r->iters, unit(o, r->bw_peak_gbps), unit(o, r->bw_avg_gbps),
		       r->mpps, unit(o, r->bound_gbps), ratio, r->verified ? "yes" : "NO");
	if (!o->lat && r->byte_work_bound_gbps > 0)
		printf("   byte-work bound %.2f %s (the copies and ICRCs the path must make, this "
		       "core); checker %.1f, stamp %.1f ns/message; NIC goodput %.2f %s, ratio "
		       "%.3f\n",
		       unit(o, r->byte_work_bound_gbps), o->gbits ? "Gb/s" : "MB/s", r->check_ns,
		       r->stamp_ns, unit(o, r->nic_goodput_gbps), o->gbits ? "Gb/s" : "MB/s",
		       r->nic_goodput_gbps / r->byte_work_bound_gbps);
	if (!o->lat && r->have_peer_time && r->iters > 0)
		printf("   busy %.1f ns/message here, %.1f at the peer (its verification %.1f of "
		       "it)\n",
		       (double)r->busy_ns / (double)r->iters,
		       (double)r->peer_busy_ns / (double)r->iters,
		       (double)r->peer_tool_ns / (double)r->iters);
	fflush(stdout);
}

static double per_msg(const struct result *r, uint64_t ns)
{
	return r->iters > 0 ? (double)ns / (double)r->iters : 0;
}

/* Non-zero counters of one side: transport (rfw_dev_counters) and NIC (rfw_nic_ctr). */
static void json_counters(FILE *f, const char *name, const struct rfw_ep *s)
{
	uint64_t c[RFW_CNT__COUNT];
	unsigned i;
	const char *sep = "";

	rfw_dev_counters(rfw_nic_dev(s->nic), c);
	fprintf(f, "  \"counters_%s\": {", name);
	for (i = 0; i < RFW_CNT__COUNT; i++) {
		if (c[i] == 0)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, sep, rfw_counter_name((enum rfw_counter)i), c[i]);
		sep = ", ";
	}
	for (i = 0; i < RFW_NIC_CTR__COUNT; i++) {
		uint64_t v = rfw_nic_ctr(s->nic, (enum rfw_nic_ctr)i);

		if (v == 0)
			continue;
		fprintf(f, "%s\"nic_%s\": %" PRIu64, sep, rfw_nic_ctr_name((enum rfw_nic_ctr)i), v);
		sep = ", ";
	}
	fprintf(f, "}");
}

/* Two-process mode: what the JSON says about this process and its peer. */

static int write_json(struct perf *P, const struct opts *o, const struct result *res, unsigned n)
{
	FILE *f = fopen(o->json, "w");
	unsigned i;

	if (f == NULL) {
		fprintf(stderr, "rocefw-perf: --out_json %s: %s\n", o->json, strerror(errno));
		return -1;
	}
	fprintf(f,
	        "{\n  \"schema\": \"%s\",\n  \"test\": \"%s\",\n  \"kind\": \"%s\",\n"
	        "  \"mode\": \"%s\",\n  \"transport\": \"%s\",\n  \"qps\": %u,\n  \"mtu\": %u,\n"
	        "  \"cc_profile\": \"%s\",\n  \"dscp\": %u,\n  \"results\": [\n",
	        PERF_SCHEMA, op_names[o->op], o->lat ? "lat" : "bw", P->json_mode,
	        rfw_oob_transport_name((enum rfw_oob_transport)o->transport), o->qps, o->mtu,
	        o->cc_profile, o->dscp);
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		fprintf(f,
		        "    {\"bytes\": %u, \"iterations\": %" PRIu64 ", \"bw_peak_gbps\": %.4f, "
		        "\"bw_average_gbps\": %.6g, \"msg_rate_mpps\": %.6f, \"verified\": %s, "
		        "\"checked_bytes\": %" PRIu64 ", \"bound_gbps\": %.4f, "
		        "\"bound_ratio\": %.4f, \"byte_work_bound_gbps\": %.4f, "
		        "\"byte_work_ratio\": %.4f, \"check_ns_per_msg\": %.2f, "
		        "\"stamp_ns_per_msg\": %.2f, \"nic_goodput_gbps\": %.6g",
		        r->bytes, r->iters, r->bw_peak_gbps, r->bw_avg_gbps, r->mpps,
		        r->verified ? "true" : "false", r->checked_bytes, r->bound_gbps,
		        r->bound_gbps > 0 ? r->bw_avg_gbps / r->bound_gbps : 0.0,
		        r->byte_work_bound_gbps,
		        r->byte_work_bound_gbps > 0 ? r->nic_goodput_gbps / r->byte_work_bound_gbps
		                                    : 0.0,
		        r->check_ns, r->stamp_ns, r->nic_goodput_gbps);
		if (!o->lat)
			fprintf(f,
			        ", \"cq_mod\": %u, \"post_list\": %u, \"completions\": %" PRIu64
			        ", \"busy_ns_per_msg\": %.2f",
			        r->cq_mod, r->post_list, r->completions, per_msg(r, r->busy_ns));
		if (r->have_peer_time)
			fprintf(f,
			        ", \"peer_busy_ns_per_msg\": %.2f, \"peer_tool_ns_per_msg\": %.2f",
			        per_msg(r, r->peer_busy_ns), per_msg(r, r->peer_tool_ns));
		if (o->lat)
			fprintf(f,
			        ", \"t_min_us\": %.3f, \"t_max_us\": %.3f, \"t_typical_us\": %.3f, "
			        "\"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, \"p99_us\": %.3f, "
			        "\"p999_us\": %.3f",
			        r->t_min, r->t_max, r->t_typ, r->t_avg, r->t_stdev, r->p99,
			        r->p999);
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	if (o->loopback) {
		fprintf(f, "  ],\n  \"ce_marked\": %" PRIu64 ",\n", P->ce.marked);
		json_counters(f, "a", &P->a);
		fprintf(f, ",\n");
		json_counters(f, "b", &P->b);
	} else {
		fprintf(f, "  ],\n");
		if (P->have_peer_result)
			fprintf(f,
			        "  \"peer\": {\"messages\": %" PRIu64
			        ", \"checked_bytes\": %" PRIu64 ", \"verified\": %s},\n",
			        P->peer_result.messages, P->peer_result.checked_bytes,
			        P->peer_result.verified ? "true" : "false");
		json_counters(f, "local", &P->a);
	}
	fprintf(f, "\n}\n");
	return fclose(f) == 0 ? 0 : -1;
}

/* ---- two-process mode: one side per process, connected out of band (docs/oob.md) ---- */

/* The port counters that tell why a peer is silent (for error messages). */
const char *port_summary(struct perf *P)
{
	static char buf[200];

	snprintf(buf, sizeof(buf),
	         "port %s: rx %" PRIu64 " frames (%" PRIu64 " ARP, %" PRIu64 " RoCEv2, %" PRIu64
	         " not for us), tx %" PRIu64 " frames (%" PRIu64 " ARP requests, %" PRIu64
	         " ARP replies)",
	         P->a.port->name, rfw_port_ctr(P->a.port, RFW_PORT_CTR_rx_pkts),
	         rfw_port_ctr(P->a.port, RFW_PORT_CTR_rx_arp),
	         rfw_port_ctr(P->a.port, RFW_PORT_CTR_rx_rocev2),
	         rfw_port_ctr(P->a.port, RFW_PORT_CTR_rx_not_for_us),
	         rfw_port_ctr(P->a.port, RFW_PORT_CTR_tx_pkts),
	         rfw_port_ctr(P->a.port, RFW_PORT_CTR_arp_request_sent),
	         rfw_port_ctr(P->a.port, RFW_PORT_CTR_arp_reply_sent));
	return buf;
}

/* Refuse or abort: tell the peer (error record) if it is connected, say why, exit 1. */
static void remote_abort(struct perf *P, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void remote_abort(struct perf *P, const char *fmt, ...)
{
	struct rfw_oob_msg m = {.type = RFW_OOB_ERROR};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.u.error.reason, sizeof(m.u.error.reason), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rocefw-perf: %s: %s\n", P->is_server ? "server" : "client",
	        m.u.error.reason);
	if (P->oob_fd >= 0)
		(void)rfw_oob_send(P->oob_fd, &m);
	exit(1);
}

/* Wait for the next record from the peer, polling the NIC (ARP answers) meanwhile. */
static void remote_recv(struct perf *P, struct rfw_oob_msg *m, uint64_t timeout_ns,
                        const char *what)
{
	char err[RFW_OOB_ERR_MAX];
	uint64_t t0 = now_ns(P);
	int rc;

	for (;;) {
		rc = rfw_oob_recv(P->oob_fd, &P->oob_rx, m, err, sizeof(err));
		if (rc == 1)
			break;
		if (rc == -EPROTO)
			remote_abort(P, "bad %s record from the peer: %s", what, err);
		if (rc < 0) {
			fprintf(
			    stderr,
			    "rocefw-perf: connection to the peer lost while waiting for %s: %s\n",
			    what, rc == -EPIPE ? "closed by the peer" : strerror(-rc));
			exit(1);
		}
		rfw_nic_poll(P->a.nic);
		if (now_ns(P) - t0 > timeout_ns) {
			fprintf(stderr, "rocefw-perf: no %s record from the peer in %.0f s (%s)\n",
			        what, (double)timeout_ns / 1e9, port_summary(P));
			exit(1);
		}
	}
	if (m->type == RFW_OOB_ERROR) {
		fprintf(stderr, "rocefw-perf: %s: the peer refused: %s\n",
		        P->is_server ? "server" : "client", m->u.error.reason);
		exit(1);
	}
}

int peer_resolve(struct perf *P, const uint8_t gid[16], uint64_t timeout_ns,
                 struct rte_ether_addr *mac)
{
	uint64_t t0 = now_ns(P);
	int rc;

	for (;;) {
		rc = rfw_port_resolve(P->a.port->q[0], gid, rte_rdtsc(), mac);
		if (rc == 0)
			return 0;
		if (rc != -EAGAIN && rc != -EHOSTUNREACH)
			return rc;
		if (now_ns(P) - t0 > timeout_ns)
			return -ETIMEDOUT;
		rfw_nic_poll(P->a.nic);
	}
}

/* The peer's MAC by ARP, or refuse (the peer is told). */
static void remote_resolve(struct perf *P, const struct opts *o)
{
	int rc =
	    peer_resolve(P, P->peer_conn.gid, (uint64_t)o->oob_timeout_s * NS_PER_S, &P->peer_mac);

	if (rc == -ETIMEDOUT)
		remote_abort(P, "no ARP reply from %u.%u.%u.%u in %u s (%s)",
		             P->peer_conn.ip4 >> 24, (P->peer_conn.ip4 >> 16) & 0xff,
		             (P->peer_conn.ip4 >> 8) & 0xff, P->peer_conn.ip4 & 0xff,
		             o->oob_timeout_s, port_summary(P));
	if (rc != 0)
		remote_abort(P, "ARP for the peer's address failed: %s", strerror(-rc));
}

int qp_to_peer(struct rfw_ep *s, struct rfw_qp *qp, struct rfw_ep_path *pp, const struct opts *o,
               const char **stage)
{
	pp->timeout = o->ack_timeout;
	pp->retry_cnt = 7;
	pp->rnr_retry = 7;
	pp->transport = o->transport;
	return rfw_ep_qp_connect(s->nic, qp, pp, stage);
}

/* INIT -> RTR -> RTS toward the peer's QP @peer (transport mode set with RTR); this side's
 * first PSN is 0 (my_qp). */
static void remote_qp_connect(struct perf *P, struct rfw_qp *qp, const struct rfw_oob_qp *peer,
                              const struct opts *o)
{
	struct rfw_ep_path pp = {.mac = P->peer_mac,
	                         .mtu = rfw_ep_mtu(o->mtu),
	                         .qpn = peer->qpn,
	                         .rq_psn = peer->psn,
	                         .sq_psn = 0,
	                         .max_rd_atomic = RFW_MAX_RD_ATOMIC,
	                         .max_dest_rd_atomic = RFW_MAX_RD_ATOMIC,
	                         .min_rnr_timer = 1};
	const char *stage;
	int rc;

	memcpy(pp.gid, P->peer_conn.gid, 16);
	rc = qp_to_peer(&P->a, qp, &pp, o, &stage);
	if (rc != 0)
		remote_abort(
		    P, "%s (transport %s) on this side: %s%s", stage,
		    rfw_oob_transport_name((enum rfw_oob_transport)o->transport), strerror(-rc),
		    rc == -EOPNOTSUPP && o->transport != RFW_TRANSPORT_GBN
		        ? " (selective repeat is not implemented by this build's transport)"
		        : "");
}

/*
 * The index of the QP a completion names. One NIC numbers the QPs it creates from a ring of
 * free slots, so on a fresh NIC they are consecutive and the index is an offset: O(1) per
 * completion at 16,384 QPs. Checked; a scan if the numbers ever are not consecutive.
 */
static int conn_index(struct perf *P, uint32_t qpn, uint32_t qps)
{
	uint32_t i = qpn - P->conns[0].qpn;

	if (i < qps && P->conns[i].qpn == qpn)
		return (int)i;
	for (i = 0; i < qps; i++)
		if (P->conns[i].qpn == qpn)
			return (int)i;
	return -1;
}

/*
 * The bytes message k must arrive with: the pattern slot it was sent from, stamped as the
 * sender stamps it. Both sides fill their pattern slots with the same seed, so the checking
 * side rebuilds the expectation in its own copy.
 */
static const uint8_t *stamp_msg(uint8_t *p, const struct opts *o, uint32_t size, uint64_t k)
{
	if (o->op == OP_WRITE || o->op == OP_SEND) {
		rfw_pattern_stamp(p, size, k);
		if (o->lat && o->op == OP_WRITE)
			stamp_last(p, size, k + 1);
	}
	return p;
}

static const uint8_t *expect_msg(struct conn *c, const struct opts *o, uint32_t depth,
                                 uint32_t size, uint64_t k)
{
	return stamp_msg(slot_src(c, depth, size, k), o, size, k);
}

/*
 * The same bytes as expect_msg, built in the first slot of message k's parity (every slot of
 * a parity holds the same content): the two-process checker's expectation, two slots a QP
 * that stay in cache however deep the queue. Only where this side sends nothing from them.
 */
static const uint8_t *want_msg(struct conn *c, const struct opts *o, uint32_t depth, uint32_t size,
                               uint64_t k)
{
	return stamp_msg(c->src + (size_t)kpar(k, depth) * depth * size, o, size, k);
}

/* The WR of message @k of a two-process client into @wr and @sge. */
static inline __attribute__((always_inline)) void
fill_remote(struct perf *P, struct conn *c, const struct opts *o, uint32_t depth, uint32_t size,
            uint64_t k, struct rfw_send_wr *wr, struct rfw_sge *sge)
{
	uint8_t *dst = c->dst + kslot(k, depth) * (size_t)size;

	wr->wr_id = k;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = send_flags_of(P, c, k);
	switch (o->op) {
	case OP_WRITE: {
		uint8_t *src = (uint8_t *)expect_msg(c, o, depth, size, k);

		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)src, size, rfw_mr_lkey(P->a.mr)};
		/* bw: with immediate, so the responder gets a completion per message and checks
		 * it (it cannot see plain WRITEs); lat: plain WRITE, the responder polls memory. */
		wr->opcode = o->lat ? RFW_WR_RDMA_WRITE : RFW_WR_RDMA_WRITE_WITH_IMM;
		wr->imm_data = (uint32_t)k;
		wr->wr.rdma.remote_addr = c->peer_addr + kslot(k, depth) * (uint64_t)size;
		wr->wr.rdma.rkey = P->peer_rkey;
		break;
	}
	case OP_SEND:
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)expect_msg(c, o, depth, size, k), size,
		                        rfw_mr_lkey(P->a.mr)};
		wr->opcode = RFW_WR_SEND;
		break;
	case OP_READ:
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)dst, size, rfw_mr_lkey(P->a.mr)};
		wr->opcode = RFW_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = c->peer_addr + slot_off(depth, size, k);
		wr->wr.rdma.rkey = P->peer_rkey;
		break;
	case OP_ATOMIC:
		*sge = (struct rfw_sge){(uint64_t)(uintptr_t)(c->dst + kslot(k, depth) * 8), 8,
		                        rfw_mr_lkey(P->a.mr)};
		wr->opcode = RFW_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = c->peer_addr;
		wr->wr.atomic.compare_add = 1;
		wr->wr.atomic.rkey = P->peer_rkey;
		break;
	}
}

static int remote_post(struct perf *P, struct conn *c, uint32_t qi, const struct opts *o,
                       uint32_t depth, uint32_t size, uint64_t k, uint32_t n, uint64_t t)
{
	(void)qi; /* the QP's own peer address is in @c */
	return post_n(P, c, o, depth, size, k, n, t, fill_remote);
}

/* A receive WQE: on slot @slot of the QP's receive area (SEND), or without buffer (the
 * immediate of a WRITE consumes one, IBA 9.4.3). */
static int remote_post_recv(struct perf *P, struct conn *c, const struct opts *o, uint32_t size,
                            uint64_t slot, uint64_t t)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(c->dst + slot * size), size,
	                      rfw_mr_lkey(P->a.mr)};
	struct rfw_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *badw;

	/* No buffer: num_sge 0. sg_list stays a valid pointer (rfw_post_recv copies num_sge
	 * entries from it, and a memcpy from NULL is undefined even for 0 bytes). */
	if (o->op == OP_WRITE)
		wr.num_sge = 0;
	return rfw_post_recv(c->qa, &wr, &badw, t);
}

/* Compare a delivered message with its expectation; --check-corrupt-one damages one first. */
static void check_msg(struct perf *P, const struct opts *o, uint8_t *got, const uint8_t *want,
                      uint32_t size, uint32_t qi, uint64_t k, const char *what, struct result *r)
{
	if (o->corrupt_one && qi == 0 && k == P->corrupt_at)
		got[0] ^= 1;
	if (memcmp(got, want, size) != 0)
		check_fail(P, what, qi, k);
	else
		r->checked_bytes += size;
}

static uint64_t remote_recvd(struct perf *P, const struct opts *o)
{
	uint64_t n = 0;
	uint32_t qi;

	for (qi = 0; qi < o->qps; qi++)
		n += P->conns[qi].recvd;
	return n;
}

/* ---- the client: the requester ---- */

/* A successful send completion of message @k at the client: READ data and atomic results are
 * checked here (WRITE and SEND data at the server). */
static inline __attribute__((always_inline)) void client_check(struct perf *P, const struct opts *o,
                                                               struct conn *c, uint32_t qi,
                                                               uint64_t k, uint32_t depth,
                                                               uint32_t size, struct result *r)
{
	if (o->op == OP_READ) {
		check_msg(P, o, c->dst + kslot(k, depth) * (size_t)size,
		          slot_src(c, depth, size, k), size, qi, k,
		          "READ data differs at the requester", r);
	} else if (o->op == OP_ATOMIC) {
		uint8_t *p = c->dst + kslot(k, depth) * 8;
		uint64_t v;

		if (o->corrupt_one && qi == 0 && k == P->corrupt_at)
			p[0] ^= 1;
		/* In-order execution on one QP: the k-th add returns k. */
		memcpy(&v, p, 8);
		if (v != k)
			check_fail(P, "FETCH_AND_ADD returned a wrong value", qi, k);
		else
			r->checked_bytes += 8;
	}
}

/* Completions at the client. */
static unsigned client_reap(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                            struct result *r)
{
	struct rfw_wc wc[32];
	unsigned total = 0;
	int n, i;

	while ((n = rfw_poll_cq(P->a.cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			int qi = conn_index(P, wc[i].qp_num, o->qps);
			uint64_t k = wc[i].wr_id;
			struct conn *c;

			if (qi < 0) {
				check_fail(P, "completion for an unknown QP", 0, k);
				continue;
			}
			c = &P->conns[qi];
			if (wc[i].opcode == RFW_WC_RECV) { /* SEND latency: the pong */
				if (wc[i].status != RFW_WC_SUCCESS || wc[i].byte_len != size)
					check_fail(P, "pong receive error or length", (uint32_t)qi,
					           k);
				P->pong_recvd++;
				continue;
			}
			r->completions++;
			if (k != c->done)
				total += catch_up(P, o, c, (uint32_t)qi, k, depth, size, r,
				                  client_check);
			if (wc[i].status != RFW_WC_SUCCESS) {
				wc_fail(P, c->qa, wc[i].status, (uint32_t)qi, k);
				c->done++;
				conn_ready(P, (uint32_t)qi);
				continue;
			}
			client_check(P, o, c, (uint32_t)qi, k, depth, size, r);
			c->done++;
			conn_ready(P, (uint32_t)qi);
			total++;
		}
	}
	if (n < 0)
		die("rfw_poll_cq", n);
	return total;
}

/*
 * Wait until @got holds @want (the last bytes first, then all of it). With selective repeat the
 * last packet may be placed before an earlier, retransmitted one: a mismatch is only final when
 * it lasts STALL_NS.
 */
static bool wait_for_msg(struct perf *P, const uint8_t *got, const uint8_t *want, uint32_t size,
                         uint64_t t0, const struct opts *o, uint32_t depth, struct result *r,
                         bool server)
{
	for (;;) {
		if (last_is(got, size, want) && memcmp(got, want, size) == 0)
			return true;
		rfw_nic_poll(P->a.nic);
		if (!server)
			client_reap(P, o, depth, size, r);
		if (now_ns(P) - t0 > STALL_NS)
			return false;
	}
}

static unsigned client_poll(struct perf *P)
{
	return rfw_nic_poll(P->a.nic);
}

static const struct driver client_driver = {
    .post = remote_post, .poll = client_poll, .reap = client_reap};

/* Latency ping-pong, client side, on QP 0 (perftest's write_lat / send_lat): half the round
 * trip per sample. Returns the messages done; *@t_end the end. */
static uint64_t client_pingpong(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                                uint64_t iters, uint64_t t_start, uint64_t deadline, uint64_t *lat,
                                uint64_t *t_end, struct result *r)
{
	struct conn *c = &P->conns[0];
	uint64_t k, done = 0;

	P->pong_recvd = 0;
	for (k = 0; k < iters; k++) {
		uint64_t t0 = now_ns(P);
		const uint8_t *src = slot_src(c, depth, size, k);

		if (t0 >= deadline)
			break;
		if (o->op == OP_SEND) {
			struct rfw_sge rs = {(uint64_t)(uintptr_t)P->pong_buf, size,
			                     rfw_mr_lkey(P->a.mr)};
			struct rfw_recv_wr rwr = {.wr_id = k, .sg_list = &rs, .num_sge = 1}, *badr;

			if (rfw_post_recv(c->qa, &rwr, &badr, t0) != 0)
				die("post_recv (pong)", EINVAL);
		}
		if (remote_post(P, c, 0, o, depth, size, k, 1, t0) != 0)
			die("post_send", EINVAL);
		if (o->op == OP_SEND) {
			while (P->pong_recvd == k) {
				rfw_nic_poll(P->a.nic);
				client_reap(P, o, depth, size, r);
				if (now_ns(P) - t0 > STALL_NS) {
					fprintf(stderr,
					        "rocefw-perf: pong %" PRIu64 " never arrived\n", k);
					exit(1);
				}
			}
		} else if (!wait_for_msg(P, P->pong_buf, src, size, t0, o, depth, r, false)) {
			fprintf(stderr, "rocefw-perf: pong %" PRIu64 " never arrived intact\n", k);
			exit(1);
		}
		*lat_slot(lat, o, k) = (now_ns(P) - t0) / 2;
		if (memcmp(P->pong_buf, src, size) != 0)
			check_fail(P, "data differs at the requester (pong)", 0, k);
		done++;
		client_reap(P, o, depth, size, r);
	}
	while (c->done < done) {
		rfw_nic_poll(P->a.nic);
		client_reap(P, o, depth, size, r);
		if (now_ns(P) - t_start > STALL_NS + (uint64_t)o->duration_s * NS_PER_S) {
			check_fail(P, "completions missing", 0, c->done);
			break;
		}
	}
	*t_end = now_ns(P);
	return done;
}

static void client_run(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                       struct result *r)
{
	uint64_t iters = o->iters ? o->iters : (o->lat ? 1000 : 5000);
	bool timed = o->duration_s != 0;
	uint64_t t_start, t_end, deadline, done;
	uint64_t *lat = lat_alloc(o, &iters);

	t_start = now_ns(P);
	deadline = timed ? t_start + (uint64_t)o->duration_s * NS_PER_S : UINT64_MAX;
	if (o->lat && (o->op == OP_WRITE || o->op == OP_SEND))
		done = client_pingpong(P, o, depth, size, iters, t_start, deadline, lat, &t_end, r);
	else if (o->lat)
		done = lat_loop(P, o, &client_driver, depth, size, iters, deadline, lat, &t_end, r);
	else
		done =
		    bw_loop(P, o, &client_driver, depth, size, iters, t_start, deadline, &t_end, r);
	run_figures(o, size, done, t_start, t_end, lat, r);
}

/* ---- the server: the responder ---- */

#define server_fail check_fail

/* Completions at the server: WRITE-with-immediate and SEND data are checked here. Returns
 * how many it took. */
static unsigned server_reap(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                            struct result *r)
{
	struct rfw_wc wc[32];
	unsigned total = 0;
	int n, i;

	while ((n = rfw_poll_cq(P->a.cq, 32, wc)) > 0) {
		total += (unsigned)n;
		for (i = 0; i < n; i++) {
			int qi = conn_index(P, wc[i].qp_num, o->qps);
			struct conn *c;
			uint64_t k;

			if (qi < 0) {
				server_fail(P, "completion for an unknown QP", 0, wc[i].wr_id);
				continue;
			}
			c = &P->conns[qi];
			k = c->recvd;
			if (wc[i].opcode != RFW_WC_RECV &&
			    wc[i].opcode != RFW_WC_RECV_RDMA_WITH_IMM) {
				/* The server's own pongs (latency): status only. */
				if (wc[i].status != RFW_WC_SUCCESS)
					server_fail(P, rfw_wc_status_str(wc[i].status),
					            (uint32_t)qi, wc[i].wr_id);
				continue;
			}
			if (wc[i].status != RFW_WC_SUCCESS) {
				server_fail(P, rfw_wc_status_str(wc[i].status), (uint32_t)qi, k);
				c->recvd++;
				continue;
			}
			if (o->op == OP_WRITE) {
				/* The completion of message k's immediate: all of it is placed. */
				if (wc[i].opcode != RFW_WC_RECV_RDMA_WITH_IMM ||
				    !(wc[i].wc_flags & RFW_WC_WITH_IMM) ||
				    wc[i].imm_data != (uint32_t)k)
					server_fail(P, "WRITE immediate missing or out of order",
					            (uint32_t)qi, k);
				check_msg(P, o, c->dst + kslot(k, depth) * (size_t)size,
				          want_msg(c, o, depth, size, k), size, (uint32_t)qi, k,
				          "WRITE data differs at the responder", r);
			} else {
				uint64_t slot = wc[i].wr_id;
				uint8_t *got = c->dst + slot * size;

				if (wc[i].byte_len != size)
					server_fail(P, "SEND length differs", (uint32_t)qi, k);
				else
					check_msg(P, o, got, want_msg(c, o, depth, size, k), size,
					          (uint32_t)qi, k,
					          "SEND data differs at the receiver", r);
				if (o->lat) {
					/* send_lat: the same bytes back from the receive buffer. */
					struct rfw_sge ss = {(uint64_t)(uintptr_t)got, size,
					                     rfw_mr_lkey(P->a.mr)};
					struct rfw_send_wr swr = {0}, *bads;

					swr.wr_id = k;
					swr.sg_list = &ss;
					swr.num_sge = 1;
					swr.opcode = RFW_WR_SEND;
					swr.send_flags = RFW_SEND_SIGNALED;
					if (rfw_post_send(c->qa, &swr, &bads,
					                  rfw_nic_now_ns(P->a.nic)) != 0)
						server_fail(P, "post_send (pong) failed",
						            (uint32_t)qi, k);
				}
			}
			c->recvd++;
			if (remote_post_recv(P, c, o, size, o->op == OP_WRITE ? 0 : wc[i].wr_id,
			                     rfw_nic_now_ns(P->a.nic)) != 0)
				server_fail(P, "post_recv failed", (uint32_t)qi, k);
		}
	}
	if (n < 0)
		die("rfw_poll_cq", n);
	return total;
}

/* WRITE latency at the server: when QP 0's slot shows ping k (its last bytes), check it whole
 * and write it back. */
static void server_pong(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                        struct result *r)
{
	struct conn *c0 = &P->conns[0];
	uint64_t k = c0->recvd;
	const uint8_t *want = want_msg(c0, o, depth, size, k);
	struct rfw_sge sge = {(uint64_t)(uintptr_t)c0->dst, size, rfw_mr_lkey(P->a.mr)};
	struct rfw_send_wr wr = {0}, *badw;

	if (!last_is(c0->dst, size, want))
		return;
	if (!wait_for_msg(P, c0->dst, want, size, now_ns(P), o, depth, r, true))
		server_fail(P, "WRITE data differs at the responder (ping)", 0, k);
	else
		r->checked_bytes += size;
	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = RFW_WR_RDMA_WRITE;
	wr.send_flags = RFW_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = c0->peer_addr;
	wr.wr.rdma.rkey = P->peer_rkey;
	if (rfw_post_send(c0->qa, &wr, &badw, now_ns(P)) != 0)
		server_fail(P, "post_send (pong) failed", 0, k);
	c0->recvd++;
}

/* The client's result record, if it came: true then (*@client set). Exits when the client
 * aborted or the connection broke. */
static bool client_result_in(struct perf *P, struct rfw_oob_result *client)
{
	struct rfw_oob_msg m;
	char err[RFW_OOB_ERR_MAX];
	int rc = rfw_oob_recv(P->oob_fd, &P->oob_rx, &m, err, sizeof(err));

	if (rc == -EPROTO)
		remote_abort(P, "bad result record from the client: %s", err);
	if (rc < 0) {
		fprintf(stderr,
		        "rocefw-perf: server: connection to the client lost during the run: %s\n",
		        rc == -EPIPE ? "closed by the client" : strerror(-rc));
		exit(1);
	}
	if (rc != 1)
		return false;
	if (m.type == RFW_OOB_ERROR) {
		fprintf(stderr, "rocefw-perf: server: the client aborted: %s\n", m.u.error.reason);
		exit(1);
	}
	if (m.type != RFW_OOB_RESULT)
		remote_abort(P, "expected a result record, got %s", rfw_oob_type_name(m.type));
	*client = m.u.result;
	return true;
}

/* Atomics: the counters at the responder add up to the adds the client completed. */
static void server_check_atomics(struct perf *P, const struct opts *o, uint64_t messages)
{
	uint64_t sum = 0, v;

	for (uint32_t qi = 0; qi < o->qps; qi++) {
		memcpy(&v, P->conns[qi].src, 8);
		sum += v;
	}
	if (sum != messages)
		server_fail(P, "counters at the responder differ from the adds completed", 0, sum);
}

/*
 * Serve until the client's result arrives and everything it reports has been seen here.
 * WRITE latency: watch QP 0's slot for ping k (its last bytes), check it whole, write it back.
 */
static void server_run(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                       struct result *r, struct rfw_oob_result *client)
{
	bool have_client = false, busy = false;
	uint64_t t_client = 0, t_check = 0, t_round = 0;

	for (;;) {
		unsigned work = rfw_nic_poll(P->a.nic);
		uint64_t t;

		/* The clock is the NIC's own, read at its poll (as bw_loop's): a TSC read of the
		 * tool's own per poll showed as 4 % of the server in this VM. A round runs from one
		 * poll's clock to the next, busy as bw_loop's: its poll moved a frame or its reap
		 * found a completion. */
		t = rfw_nic_now_ns(P->a.nic);
		r->busy_ns += busy ? t - t_round : 0;
		t_round = t;
		work += server_reap(P, o, depth, size, r);
		busy = work != 0;
		if (o->lat && o->op == OP_WRITE)
			server_pong(P, o, depth, size, r);
		/* The socket (a syscall) and the sum over the QPs once a millisecond, not per poll:
		 * at 1 QP the recv() of every poll cost the server most of its time. */
		if (t - t_check < SERVER_CHECK_NS)
			continue;
		t_check = t;
		if (!have_client) {
			have_client = client_result_in(P, client);
			if (have_client)
				t_client = now_ns(P);
			continue;
		}
		/* The client is done: wait for what it completed to be seen here too. */
		if (o->op == OP_READ || o->op == OP_ATOMIC ||
		    remote_recvd(P, o) >= client->messages)
			break;
		if (now_ns(P) - t_client > STALL_NS) {
			server_fail(P, "messages the client completed never arrived here", 0,
			            remote_recvd(P, o));
			break;
		}
	}
	r->busy_ns += busy ? now_ns(P) - t_round : 0;
	r->iters = o->op == OP_READ || o->op == OP_ATOMIC ? client->messages : remote_recvd(P, o);
	if (o->op == OP_ATOMIC)
		server_check_atomics(P, o, client->messages);
}

/* Set up this process's port, NIC and memory; returns the tx depth. */
void open_port(struct perf *P, const struct opts *o)
{
	uint16_t pid = RTE_MAX_ETHPORTS, p;

	RTE_ETH_FOREACH_DEV(p)
	{
		pid = p;
		break;
	}
	if (pid == RTE_MAX_ETHPORTS) {
		fprintf(stderr, "rocefw-perf: no DPDK port: give one with an EAL --vdev option "
		                "(e.g. --vdev=net_memif0,role=server,socket=/tmp/m.sock)\n");
		exit(1);
	}
	side_setup(P, &P->a, pid, o->ip4, o);
	if (rfw_port_link_wait(P->a.port, o->oob_timeout_s * 1000) != 0) {
		fprintf(stderr, "rocefw-perf: link of port %s still down after %u s\n",
		        P->a.port->name, o->oob_timeout_s);
		exit(1);
	}
}

static uint32_t remote_setup(struct perf *P, const struct opts *o, uint32_t size)
{
	uint32_t depth = eff_depth(o, size), qi;
	size_t per_qp, off = 0;

	open_port(P, o);
	/* Per QP: the pattern area (2 x depth slots) and the receive area (2 x depth slots). */
	per_qp = ((size_t)4 * depth * size + 63) & ~(size_t)63;
	P->a.mem_len = ((size_t)o->qps * per_qp + 4095) & ~(size_t)4095;
	/* Zero pages from the kernel: at 16,384 QPs x 64 KiB (4 GiB) a memset would touch every
	 * page, the receive slots no message of the run ever reaches too. */
	P->a.mem =
	    mmap(NULL, P->a.mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (P->a.mem == MAP_FAILED)
		die("memory (mmap of the QPs' slots)", errno);
	P->a.mr = rfw_reg_mr(P->a.pd, P->a.mem, P->a.mem_len,
	                     RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                         RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC);
	if (P->a.mr == NULL)
		die("rfw_reg_mr", errno);
	for (qi = 0; qi < o->qps; qi++, off += per_qp) {
		struct conn *c = &P->conns[qi];

		c->src = P->a.mem + off;
		c->dst = P->a.mem + off + per_qp / 2;
		if (o->op == OP_ATOMIC)
			memset(c->src, 0, 8);
		else
			slots_fill(c, depth, size, qi);
		/* The slots messages land in, faulted in before the clock starts (as the loopback's
		 * conns_fill): at 1,024 QPs x 64 KiB their first touches were 10 % of the server's
		 * time in the run. SEND uses both halves of the receive area. */
		memset(c->dst, 0, (o->op == OP_SEND ? 2ull : 1ull) * depth * size);
	}
	P->pong_buf = P->conns[0].dst; /* latency: where the client's pong lands */
	return depth;
}

/* What the peer needs of this side's QP @qi: its number, first PSN, where its requests go. */
static struct rfw_oob_qp my_qp(struct perf *P, const struct opts *o, uint32_t qi, uint32_t depth,
                               uint32_t size)
{
	const struct conn *c = &P->conns[qi];
	bool src = o->op == OP_READ || o->op == OP_ATOMIC;

	return (struct rfw_oob_qp){.qpn = c->qpn,
	                           .psn = 0,
	                           .addr = (uint64_t)(uintptr_t)(src ? c->src : c->dst),
	                           .len = (uint64_t)2 * depth * size};
}

/* This side's conn record: parameters, address, and its first batch of QPs. */
static void fill_conn(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size)
{
	uint32_t qi;

	memset(&P->my_conn, 0, sizeof(P->my_conn));
	P->my_conn.test = (enum rfw_oob_test)o->op;
	P->my_conn.kind = o->lat ? RFW_OOB_LAT : RFW_OOB_BW;
	P->my_conn.transport = (enum rfw_oob_transport)o->transport;
	P->my_conn.mtu = o->mtu;
	P->my_conn.size = size;
	P->my_conn.iters = o->duration_s ? 0 : (o->iters ? o->iters : (o->lat ? 1000 : 5000));
	P->my_conn.duration_s = o->duration_s;
	P->my_conn.depth = depth;
	memcpy(P->my_conn.gid, rfw_nic_gid(P->a.nic), 16);
	P->my_conn.ip4 = o->ip4;
	P->my_conn.has_mac = true;
	memcpy(P->my_conn.mac, P->a.port->id.mac.addr_bytes, 6);
	P->my_conn.rkey = rfw_mr_rkey(P->a.mr);
	P->my_conn.qps = o->qps;
	for (qi = 0; qi < rfw_oob_conn_lines(&P->my_conn); qi++)
		P->my_conn.qp[qi] = my_qp(P, o, qi, depth, size);
}

/*
 * Write @m whole to the peer. The socket is non-blocking: while it is full this side polls its
 * NIC, because the peer may be resolving this side's MAC by ARP before it reads on (with
 * 16,384 QPs the records are 1 MB, more than a socket buffer may hold).
 */
static void remote_send(struct perf *P, const struct opts *o, const struct rfw_oob_msg *m)
{
	char buf[RFW_OOB_RECORD_MAX + 1];
	int len = rfw_oob_encode(m, buf, sizeof(buf)), off = 0;
	uint64_t t0 = now_ns(P);

	if (len < 0)
		remote_abort(P, "encoding a %s record failed: %s", rfw_oob_type_name(m->type),
		             strerror(-len));
	while (off < len) {
		ssize_t n = send(P->oob_fd, buf + off, (size_t)(len - off), MSG_NOSIGNAL);

		if (n > 0) {
			off += (int)n;
			t0 = now_ns(P);
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			fprintf(
			    stderr,
			    "rocefw-perf: connection to the peer lost sending a %s record: %s\n",
			    rfw_oob_type_name(m->type), strerror(errno));
			exit(1);
		}
		rfw_nic_poll(P->a.nic);
		if (now_ns(P) - t0 > (uint64_t)o->oob_timeout_s * NS_PER_S) {
			fprintf(stderr,
			        "rocefw-perf: the peer read nothing for %u s (--oob-timeout)\n",
			        o->oob_timeout_s);
			exit(1);
		}
	}
}

/* This side's records: conn (parameters and the first QPs), then qps records for the others,
 * back to back: no record waits for an answer. */
static void send_records(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size)
{
	struct rfw_oob_msg m = {.type = RFW_OOB_CONN, .u.conn = P->my_conn};
	uint32_t first = rfw_oob_conn_lines(&P->my_conn);

	remote_send(P, o, &m);
	while (first < o->qps) {
		m = (struct rfw_oob_msg){.type = RFW_OOB_QPS};
		m.u.qps.first = first;
		m.u.qps.n = RTE_MIN(o->qps - first, (uint32_t)RFW_OOB_BATCH_QPS);
		for (uint32_t i = 0; i < m.u.qps.n; i++)
			m.u.qps.qp[i] = my_qp(P, o, first + i, depth, size);
		remote_send(P, o, &m);
		first += m.u.qps.n;
	}
}

/* Take the peer's conn record: refuse a mismatch (both sides say so), keep its addresses. */
static void take_peer_conn(struct perf *P, const struct opts *o, const struct rfw_oob_msg *m)
{
	char err[RFW_OOB_ERR_MAX];

	if (m->type != RFW_OOB_CONN)
		remote_abort(P, "expected a conn record, got %s", rfw_oob_type_name(m->type));
	P->peer_conn = m->u.conn;
	if (rfw_oob_conn_compare(&P->my_conn, &P->peer_conn, err, sizeof(err)) != 0) {
		/* "this side X, peer Y" -> "server X, client Y": the text goes to the peer too. */
		char msg[RFW_OOB_ERR_MAX + 16], *p = strstr(err, "this side "), *q;

		if (p != NULL && (q = strstr(p, ", peer ")) != NULL) {
			*p = '\0';
			*q = '\0';
			snprintf(msg, sizeof(msg), "%s%s %s, %s %s", err,
			         P->is_server ? "server" : "client", p + 10,
			         P->is_server ? "client" : "server", q + 7);
			memcpy(err, msg, sizeof(err) - 1);
			err[sizeof(err) - 1] = '\0';
		}
		remote_abort(P, "%s; refused before any RoCE packet (port tx %" PRIu64 " frames)",
		             err, rfw_port_ctr(P->a.port, RFW_PORT_CTR_tx_pkts));
	}
	if (P->peer_conn.ip4 == o->ip4)
		remote_abort(P, "the peer has this side's own address (field 'ip')");
	P->peer_rkey = P->peer_conn.rkey;
}

/* The peer's QPs @first .. @first + @n - 1 (@q): this side's QPs connected to them; the server
 * posts their receives too (the client may send as soon as it has the server's records). */
static void take_peer_qps(struct perf *P, const struct opts *o, uint32_t first, uint32_t n,
                          const struct rfw_oob_qp *q, uint32_t depth, uint32_t size)
{
	bool recvs = P->is_server && (o->op == OP_SEND || (o->op == OP_WRITE && !o->lat));

	for (uint32_t i = 0; i < n; i++) {
		struct conn *c = &P->conns[first + i];

		c->peer_addr = q[i].addr;
		remote_qp_connect(P, c->qa, &q[i], o);
		for (uint64_t s = 0; recvs && s < 2ull * depth; s++)
			if (remote_post_recv(P, c, o, size, s, now_ns(P)) != 0)
				remote_abort(P, "post_recv failed");
	}
	/* ARP and the peer's frames answered while thousands of QPs are set up */
	rfw_nic_poll(P->a.nic);
}

/* The peer's QPs: the conn record's batch, then its qps records, each connected as it comes. */
static void recv_peer_qps(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size)
{
	uint32_t got = rfw_oob_conn_lines(&P->peer_conn);
	struct rfw_oob_msg m;

	take_peer_qps(P, o, 0, got, P->peer_conn.qp, depth, size);
	while (got < o->qps) {
		remote_recv(P, &m, (uint64_t)o->oob_timeout_s * NS_PER_S, "qps");
		if (m.type != RFW_OOB_QPS)
			remote_abort(P, "expected a qps record (QP %u of %u), got %s", got, o->qps,
			             rfw_oob_type_name(m.type));
		if (m.u.qps.first != got || m.u.qps.n > o->qps - got)
			remote_abort(P, "qps record of QPs %u..%u: expected QPs from %u (of %u)",
			             m.u.qps.first, m.u.qps.first + m.u.qps.n - 1, got, o->qps);
		take_peer_qps(P, o, got, m.u.qps.n, m.u.qps.qp, depth, size);
		got += m.u.qps.n;
	}
}

static void print_ip(const char *what, uint32_t ip, const struct rte_ether_addr *mac)
{
	printf(" %-15s : %u.%u.%u.%u  MAC " RTE_ETHER_ADDR_PRT_FMT "\n", what, ip >> 24,
	       (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff, RTE_ETHER_ADDR_BYTES(mac));
}

static void print_addresses(struct perf *P)
{
	print_ip("local address", P->my_conn.ip4, &P->a.port->id.mac);
	print_ip("remote address", P->peer_conn.ip4, &P->peer_mac);
	printf(" %-15s : %u, QPN 0x%06x.. local, 0x%06x.. remote\n", "queue pairs", P->my_conn.qps,
	       P->my_conn.qp[0].qpn, P->peer_conn.qp[0].qpn);
}

/* Server: accept the client (the NIC polled meanwhile, so ARP gets answers), connect the QPs,
 * post the receives, then answer with our conn record. */
static void server_connect(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                           char *how, size_t howlen)
{
	struct rfw_oob_msg m;
	int lfd = rfw_oob_listen(o->tcp_port);
	uint64_t t0 = now_ns(P);

	if (lfd < 0) {
		fprintf(stderr, "rocefw-perf: server: cannot listen on TCP port %u: %s\n",
		        o->tcp_port, strerror(-lfd));
		exit(1);
	}
	printf("rocefw-perf: server waiting for a client on TCP port %u\n", o->tcp_port);
	fflush(stdout);
	/* No timeout here: a server waits for its client (as perftest's). */
	while ((P->oob_fd = rfw_oob_accept(lfd)) == -EAGAIN) {
		rfw_nic_poll(P->a.nic);
		if (now_ns(P) - t0 < 1000000)
			continue;
		usleep(100);
	}
	close(lfd);
	if (P->oob_fd < 0) {
		fprintf(stderr, "rocefw-perf: server: accept: %s\n", strerror(-P->oob_fd));
		exit(1);
	}
	remote_recv(P, &m, (uint64_t)o->oob_timeout_s * NS_PER_S, "conn");
	take_peer_conn(P, o, &m);
	remote_resolve(P, o);
	/* Every QP connected and its receives posted before our records go out: the client may
	 * send at once. */
	recv_peer_qps(P, o, depth, size);
	send_records(P, o, depth, size);
	snprintf(how, howlen, "server on port %s", P->a.port->name);
}

/* Client: connect, send our records first, take the server's, connect the QPs. */
static void client_connect(struct perf *P, const struct opts *o, uint32_t depth, uint32_t size,
                           char *how, size_t howlen)
{
	struct rfw_oob_msg m;

	P->oob_fd = rfw_oob_connect(o->server, o->tcp_port, o->oob_timeout_s * 1000);
	if (P->oob_fd < 0) {
		fprintf(stderr, "rocefw-perf: client: cannot connect to %s port %u: %s\n",
		        o->server, o->tcp_port, strerror(-P->oob_fd));
		exit(1);
	}
	send_records(P, o, depth, size);
	remote_recv(P, &m, (uint64_t)o->oob_timeout_s * NS_PER_S, "conn");
	take_peer_conn(P, o, &m);
	remote_resolve(P, o);
	recv_peer_qps(P, o, depth, size);
	snprintf(how, howlen, "client of %s on port %s", o->server, P->a.port->name);
}

/* Server: run, send our result, combine it with the client's. Returns the client's result. */
static struct rfw_oob_result server_result(struct perf *P, const struct opts *o, uint32_t depth,
                                           uint32_t size, struct result *res)
{
	uint64_t mb = msg_bytes(o, size);
	struct rfw_oob_result mine = {0}, client;
	struct rfw_oob_msg m;

	server_run(P, o, depth, size, res, &client);
	mine.messages = res->iters;
	mine.checked_bytes = res->checked_bytes;
	/* A bandwidth run: this core's account, for the client's NIC goodput (nic_goodput). */
	if (!o->lat) {
		double tool;

		tool_costs(P, o, depth, size, false, res);
		tool = tool_total_ns(res);
		mine.has_time = true;
		mine.busy_ns = res->busy_ns;
		mine.tool_ns = tool < (double)res->busy_ns ? (uint64_t)tool : res->busy_ns;
	}
	/* What this side had to check: WRITE and SEND data (every message the client
	 * completed); atomics: the counters (checked in server_run). */
	mine.verified =
	    !P->failed &&
	    (o->op == OP_READ || o->op == OP_ATOMIC ||
	     (res->iters == client.messages && res->checked_bytes == client.messages * mb));
	snprintf(mine.error, sizeof(mine.error), "%s", P->first_err);
	m = (struct rfw_oob_msg){.type = RFW_OOB_RESULT, .u.result = mine};
	if (rfw_oob_send(P->oob_fd, &m) != 0)
		fprintf(stderr, "rocefw-perf: server: sending the result failed\n");
	/* The run is verified when both sides' checks hold. */
	res->verified = mine.verified && client.verified;
	if (o->op == OP_READ || o->op == OP_ATOMIC)
		res->checked_bytes = client.checked_bytes;
	printf(" server: %" PRIu64 " messages seen, %" PRIu64
	       " bytes checked here; client: %" PRIu64 " messages completed, %" PRIu64
	       " bytes checked there%s%s\n",
	       mine.messages, mine.checked_bytes, client.messages, client.checked_bytes,
	       client.error[0] ? "; client error: " : "", client.error);
	printf(" %-10u %-14" PRIu64 " %-16" PRIu64 " %s\n", size, client.messages,
	       res->checked_bytes, res->verified ? "yes" : "NO");
	return client;
}

/* Client: run, exchange results, decide. Returns the server's result. */
static struct rfw_oob_result client_result(struct perf *P, const struct opts *o, uint32_t depth,
                                           uint32_t size, struct result *res)
{
	uint64_t mb = msg_bytes(o, size);
	struct rfw_oob_result mine = {0}, peer;
	struct rfw_oob_msg m;

	client_run(P, o, depth, size, res);
	mine.messages = res->iters;
	mine.checked_bytes = res->checked_bytes;
	mine.verified = !P->failed;
	if (P->failed)
		snprintf(mine.error, sizeof(mine.error), "%s", P->first_err);
	m = (struct rfw_oob_msg){.type = RFW_OOB_RESULT, .u.result = mine};
	if (rfw_oob_send(P->oob_fd, &m) != 0)
		remote_abort(P, "sending the result failed");
	remote_recv(P, &m, STALL_NS * 2, "result");
	if (m.type != RFW_OOB_RESULT)
		remote_abort(P, "expected a result record, got %s", rfw_oob_type_name(m.type));
	peer = m.u.result;
	if (peer.error[0] != '\0')
		fprintf(stderr, "rocefw-perf: client: the server reports: %s\n", peer.error);
	/* Where the data landed decides who compared it: the server for WRITE and SEND,
	 * this side for READ and atomics. Every byte, or not verified. */
	if (o->op == OP_WRITE || o->op == OP_SEND)
		res->checked_bytes = peer.checked_bytes;
	res->verified = mine.verified && peer.verified && res->iters > 0 &&
	                res->checked_bytes == res->iters * mb;
	res->have_peer_time = peer.has_time && !o->lat;
	res->peer_busy_ns = peer.busy_ns;
	res->peer_tool_ns = peer.tool_ns;
	measure_bounds(P, o, depth, size, false, res);
	print_result(o, res);
	return peer;
}

/*
 * Teardown order, strictly one side after the other: the client polls a little longer (its
 * last ACKs), then hangs up and waits without polling; the server polls until it sees the
 * hang-up, closes its port, and only then hangs up too; the client, seeing that, waits until
 * its port has noticed the peer gone (memif: the PMD's control thread has handled the
 * disconnect) and closes its own. Nobody polls or closes a port while the other side may be
 * closing its own: net_memif (DPDK 22.11) was seen to crash then.
 */
static void remote_hangup(struct perf *P)
{
	uint64_t t0 = now_ns(P);
	char err[RFW_OOB_ERR_MAX];
	struct rfw_oob_msg m;

	if (P->is_server) {
		while (now_ns(P) - t0 < STALL_NS &&
		       rfw_oob_recv(P->oob_fd, &P->oob_rx, &m, err, sizeof(err)) >= 0)
			rfw_nic_poll(P->a.nic);
		return;
	}
	while (now_ns(P) - t0 < 20 * 1000 * 1000)
		rfw_nic_poll(P->a.nic);
	shutdown(P->oob_fd, SHUT_WR);
	t0 = now_ns(P);
	while (now_ns(P) - t0 < STALL_NS &&
	       rfw_oob_recv(P->oob_fd, &P->oob_rx, &m, err, sizeof(err)) >= 0)
		usleep(1000);
	if (rfw_port_peer_gone_wait(P->a.port, 2000) != 0)
		fprintf(stderr, "rocefw-perf: client: the port did not see the server "
		                "go within 2 s; closing anyway\n");
}

/* A's QPs, memory, NIC and port, then the hang-up's socket and EAL. */
static void remote_close(struct perf *P, const struct opts *o)
{
	for (uint32_t qi = 0; qi < o->qps; qi++) {
		rfw_nic_qp_detach(P->a.nic, P->conns[qi].qa);
		rfw_destroy_qp(P->conns[qi].qa);
	}
	rfw_dereg_mr(P->a.mr);
	rfw_destroy_cq(P->a.cq);
	rfw_dealloc_pd(P->a.pd);
	rfw_nic_destroy(P->a.nic);
	rfw_port_close(P->a.port);
	close(P->oob_fd); /* the server's hang-up comes after its port is closed */
	munmap(P->a.mem, P->a.mem_len);
	rfw_eal_cleanup();
}

/*
 * This side's QPs, with WRs for the depth eff_depth gives 1-byte messages (as the loopback's
 * conns_up: 2 each at 16,384 QPs), at least 16 for latency tests: a pong may be posted before
 * the previous one is acknowledged.
 */
static void remote_qps(struct perf *P, const struct opts *o)
{
	uint32_t wrs = eff_depth(o, 1);

	if (o->lat && wrs < 16)
		wrs = 16;
	for (uint32_t qi = 0; qi < o->qps; qi++) {
		P->conns[qi].qa = make_qp(&P->a, wrs);
		P->conns[qi].qpn = rfw_qp_num(P->conns[qi].qa);
	}
}

static int run_remote(struct perf *P, const struct opts *o, uint32_t size)
{
	struct result res;
	uint32_t depth;
	char how[160];
	bool ok;

	P->is_server = o->server == NULL;
	P->json_mode = P->is_server ? "server" : "client";
	depth = remote_setup(P, o, size);
	memset(&res, 0, sizeof(res));
	res.bytes = size;
	P->corrupt_at = o->duration_s ? 0 : (o->iters ? o->iters : (o->lat ? 1000 : 5000)) / 2;
	remote_qps(P, o);
	fill_conn(P, o, depth, size);
	if (P->is_server)
		server_connect(P, o, depth, size, how, sizeof(how));
	else
		client_connect(P, o, depth, size, how, sizeof(how));
	P->header_extra = print_addresses;
	print_header(P, o, depth, how);
	fflush(stdout);
	P->peer_result = P->is_server ? server_result(P, o, depth, size, &res)
	                              : client_result(P, o, depth, size, &res);
	P->have_peer_result = true;
	printf("-------------------------------------------------------------------------------"
	       "---------\n");
	ok = res.verified;
	if (!ok)
		fprintf(stderr, "rocefw-perf: verification FAILED\n");
	if (o->json != NULL && write_json(P, o, &res, 1) != 0)
		ok = false;
	remote_hangup(P);
	remote_close(P, o);
	return ok ? 0 : 1;
}

/* The sizes to run: 8 for atomics, every power of two for --all, else one. */
static uint32_t test_sizes(const struct opts *o, uint32_t sizes[32])
{
	uint32_t n = 0;

	if (o->op == OP_ATOMIC)
		sizes[n++] = 8;
	else if (o->all)
		for (uint32_t k = ALL_SIZE_MIN; k <= MAX_SIZE; k *= 2)
			sizes[n++] = k;
	else
		sizes[n++] = o->size ? o->size : (o->lat ? 2 : 65536);
	return n;
}

/* The DCQCN profile (or TIMELY's) at --line-rate with --cc-set over it, into prof / tprof.
 * 0, or 2 (bad usage, the option named). */
static int cc_setup(struct perf *P, const struct opts *o)
{
	bool timely = strcmp(o->cc_profile, "timely") == 0;
	struct dcqcn_params p;
	struct timely_params tp;
	char msg[128];

	if (strcmp(o->cc_profile, "none") == 0) {
		if (o->cc_set == NULL)
			return 0;
		fprintf(stderr, "rocefw-perf: --cc-set: no rate machine with --cc-profile none\n");
		return 2;
	}
	/* TIMELY: its rate machine on every QP; unified's notification point still answers CE
	 * with CNPs (which TIMELY counts and ignores: timely_cnp_ignored). */
	timely_params_init(&tp);
	if (dcqcn_params_init(
	        &p, timely ? DCQCN_PROFILE_UNIFIED
	                   : (enum dcqcn_profile)dcqcn_profile_lookup(o->cc_profile)) != 0) {
		fprintf(stderr, "rocefw-perf: --cc-profile %s: unknown\n", o->cc_profile);
		return 2;
	}
	if (rfw_cc_set_apply(&p, timely ? &tp : NULL, o->cc_set, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "rocefw-perf: --cc-set: %s\n", msg);
		return 2;
	}
	if (dcqcn_prof_config(&P->prof, &p, o->line_gbps * 1000, msg, sizeof(msg)) != 0 ||
	    (timely &&
	     timely_prof_config(&P->tprof, &tp, o->line_gbps * 1000, msg, sizeof(msg)) != 0)) {
		fprintf(stderr, "rocefw-perf: --cc-profile %s: %s\n", o->cc_profile, msg);
		return 2;
	}
	return 0;
}

/* Loopback: the ring pair (through the congestion point with --ce-mark-every), A and B. */
static void loopback_sides(struct perf *P, const struct opts *o)
{
	struct rte_ring *r_ab, *r_ba;
	uint16_t pa, pb;

	/* Larger than a port's mbuf pool (8192): a sender runs out of mbufs (and waits) before
	 * the ring can overflow (and drop), however many QPs send at once. */
	r_ab = rte_ring_create("perf_ab", RING_SLOTS, (int)rte_socket_id(),
	                       RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_ba = rte_ring_create("perf_ba", RING_SLOTS, (int)rte_socket_id(),
	                       RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r_ab == NULL || r_ba == NULL)
		die("rte_ring_create", rte_errno);
	P->ce.every = o->ce_every;
	P->ring_ab = r_ab;
	if (P->ce.every != 0) {
		P->ring_cp = rte_ring_create("perf_cp", RING_SLOTS, (int)rte_socket_id(),
		                             RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (P->ring_cp == NULL)
			die("rte_ring_create", rte_errno);
	}
	pa = make_ring_port("perf_a", r_ba, P->ce.every != 0 ? P->ring_cp : r_ab);
	pb = make_ring_port("perf_b", r_ab, r_ba);
	side_setup(P, &P->a, pa, 0x0a000001, o);
	side_setup(P, &P->b, pb, 0x0a000002, o);
}

/* Bytes of one QP's source share for every size run (destination: the same): both parities. */
static size_t loopback_share(const struct opts *o, const uint32_t *sizes, uint32_t nsizes)
{
	size_t per_qp = 0;

	for (uint32_t k = 0; k < nsizes; k++) {
		size_t b = 2 * (size_t)eff_depth(o, sizes[k]) * sizes[k];

		if (b > per_qp)
			per_qp = b;
	}
	return (per_qp + 63) & ~(size_t)63;
}

/* Loopback memory: every QP gets its own slots on both sides; returns the source share. */
static size_t loopback_memory(struct perf *P, const struct opts *o, const uint32_t *sizes,
                              uint32_t nsizes)
{
	size_t per_qp_src = loopback_share(o, sizes, nsizes), per_qp_dst = per_qp_src;
	size_t off_a = 0, off_b = 0;
	/* WRITE/SEND: data goes A -> B. READ/atomic: the data (or counter) is at B. */
	bool src_at_b = o->op == OP_READ || o->op == OP_ATOMIC;
	unsigned acc = RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ |
	               RFW_ACCESS_REMOTE_ATOMIC;

	/* aligned_alloc wants a multiple of the alignment (C11 7.22.3.1). */
	P->a.mem_len = ((size_t)o->qps * (per_qp_src + per_qp_dst) + 4095) & ~(size_t)4095;
	P->b.mem_len = P->a.mem_len;
	P->a.mem = aligned_alloc(4096, P->a.mem_len);
	P->b.mem = aligned_alloc(4096, P->b.mem_len);
	if (P->a.mem == NULL || P->b.mem == NULL)
		die("memory", ENOMEM);
	P->a.mr = rfw_reg_mr(P->a.pd, P->a.mem, P->a.mem_len, acc);
	P->b.mr = rfw_reg_mr(P->b.pd, P->b.mem, P->b.mem_len, acc);
	if (P->a.mr == NULL || P->b.mr == NULL)
		die("rfw_reg_mr", errno);
	for (uint32_t qi = 0; qi < o->qps; qi++) {
		struct conn *c = &P->conns[qi];

		c->lkey = rfw_mr_lkey(P->a.mr);
		c->rkey = rfw_mr_rkey(P->b.mr);
		c->src = src_at_b ? P->b.mem + off_b : P->a.mem + off_a;
		*(src_at_b ? &off_b : &off_a) += per_qp_src;
		c->dst = src_at_b ? P->a.mem + off_a : P->b.mem + off_b;
		*(src_at_b ? &off_a : &off_b) += per_qp_dst;
	}
	return per_qp_src;
}

static void loopback_close(struct perf *P)
{
	rfw_dereg_mr(P->a.mr);
	rfw_dereg_mr(P->b.mr);
	rfw_destroy_cq(P->a.cq);
	rfw_destroy_cq(P->b.cq);
	rfw_dealloc_pd(P->a.pd);
	rfw_dealloc_pd(P->b.pd);
	rfw_nic_destroy(P->a.nic);
	rfw_nic_destroy(P->b.nic);
	rfw_port_close(P->a.port);
	rfw_port_close(P->b.port);
	free(P->a.mem);
	free(P->b.mem);
	rfw_eal_cleanup();
}

/* Loopback: every size on fresh QPs, printed as it completes. 0 when all verified. */
static int run_loopback(struct perf *P, const struct opts *o, const uint32_t *sizes,
                        uint32_t nsizes)
{
	uint32_t depth = eff_depth(o, sizes[nsizes - 1]);
	struct result res[32];
	bool all_ok = true;
	size_t per_qp_src;

	loopback_sides(P, o);
	per_qp_src = loopback_memory(P, o, sizes, nsizes);
	print_header(P, o, depth, "loopback over a DPDK ring pair");
	/* WRITE latency: B writes pongs into A's otherwise unused destination share. */
	P->pong_buf = P->a.mem + (size_t)o->qps * per_qp_src;
	for (uint32_t k = 0; k < nsizes; k++) {
		conns_up(P, o);
		run_size(P, o, sizes[k], &res[k]);
		conns_down(P, o);
		print_result(o, &res[k]);
		all_ok &= res[k].verified;
	}
	printf("-------------------------------------------------------------------------------"
	       "---------\n");
	if (!all_ok)
		fprintf(stderr, "rocefw-perf: verification FAILED\n");
	if (o->json != NULL && write_json(P, o, res, nsizes) != 0)
		all_ok = false;
	loopback_close(P);
	return all_ok ? 0 : 1;
}

struct rfw_ep *perf_side_a(struct perf *P)
{
	return &P->a;
}

bool perf_failed(const struct perf *P)
{
	return P->failed;
}

const char *perf_first_err(const struct perf *P)
{
	return P->first_err;
}

/* The QPs' state, each with room for a post list of WRs (-l). */
static void conns_alloc(struct perf *P, const struct opts *o)
{
	P->conns = calloc(o->qps, sizeof(*P->conns));
	P->ready = calloc(o->qps, sizeof(*P->ready));
	if (P->conns == NULL || P->ready == NULL)
		die("--qps", ENOMEM);
	for (uint32_t qi = 0; qi < o->qps; qi++) {
		P->conns[qi].wrs = calloc(o->post_list, sizeof(*P->conns[qi].wrs));
		P->conns[qi].sges = calloc(o->post_list, sizeof(*P->conns[qi].sges));
		if (P->conns[qi].wrs == NULL || P->conns[qi].sges == NULL)
			die("--post_list", ENOMEM);
	}
}

int main(int argc, char **argv)
{
	static struct perf run = {.oob_fd = -1, .json_mode = "loopback"};
	struct perf *P = &run;
	struct opts o;
	int dd;
	uint32_t sizes[32], nsizes;

	/* App options are checked before EAL starts, so a bad option costs nothing. */
	dd = rfw_opt_dashdash(argc, argv);
	if (dd < 0) {
		fprintf(stderr, "rocefw-perf: missing '--' between EAL and test options\n");
		usage(stderr);
		return 2;
	}
	parse_opts(argc - dd, argv + dd, &o);
	nsizes = test_sizes(&o, sizes);
	conns_alloc(P, &o);
	if (cc_setup(P, &o) != 0)
		return 2;
	if (rfw_eal_init(dd, argv) < 0)
		return 1;
	if (!o.loopback)
		return o.perftest ? perftest_run(P, &o, sizes[0]) : run_remote(P, &o, sizes[0]);
	return run_loopback(P, &o, sizes, nsizes);
}
