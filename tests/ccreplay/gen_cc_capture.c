/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_cc_capture: a small discrete-event simulation of DCQCN senders behind one bottleneck,
 * written out as the pcap a capture point would have recorded. A test tool for
 * `rocefw-replay cc` until rocefw-sim and rocefw-perf write captures of their own.
 *
 *   sender(s) --prop--> bottleneck queue (RED CE marking) --> receiver (NP, cc/'s dcqcn_np)
 *        ^                                                          |
 *        +------------------- CNPs / ACKs, after --rev-us ----------+
 *
 * Each sender is backlogged: it always has the next packet of an RDMA WRITE ready, and
 * cc/pacer.h (strict spacing, no burst) turns the rate of cc/'s dcqcn_rp into departure times,
 * one MTU-sized packet per departure. The RP is fed the CNPs when they reach the sender and the
 * bytes it sends. With rp_scope = port or dst (shared-port profile) the flows of one sender
 * host share one RP and one pacer and take turns (round robin).
 *
 * Frames are built with wire/frame.h and wire/ib_hdr.h, with valid ICRCs.
 *
 * Capture points (--capture):
 *   sender    data as it leaves the sender (ECT(0), never CE), CNPs and ACKs as they arrive
 *   receiver  data as it reaches the receiver (CE where the queue marked it), CNPs and ACKs as
 *             the receiver sends them
 *   switch    data as it leaves the bottleneck queue (marked), CNPs and ACKs halfway back
 *
 * Same-code caveat: the model in rocefw-replay cc is the same cc/ code; see docs/replay-cc.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "cc/dcqcn.h"
#include "cc/pacer.h"
#include "wire/frame.h"
#include "wire/ib_hdr.h"

#define PROG      "gen_cc_capture"
#define MAX_FLOWS 64
#define CNPQ      (1u << 16) /* per-flow FIFO of CNPs / ACKs on their way back */
#define T0_NS     1700000000000000000ull

enum capture_point { CAP_SENDER, CAP_RECEIVER, CAP_SWITCH };
enum link { LINK_ETH, LINK_VLAN, LINK_SLL };
enum rec_kind { REC_DATA, REC_CNP, REC_ACK, REC_NOISE };

struct rec {
	uint64_t ts;
	uint32_t seq; /* tie-break: generation order */
	uint8_t kind;
	uint8_t flow;
	uint8_t ecn;
	uint8_t opcode;
	uint32_t psn;
	uint32_t msn;
};

struct back { /* a CNP or ACK travelling back to the sender */
	uint64_t at;
	bool cnp;
};

struct gflow {
	unsigned host;
	uint32_t sqpn, dqpn, psn, msn;
	uint16_t sport;
	uint32_t msg_off; /* bytes of the current message already sent */
	uint32_t since_ack;
	struct dcqcn_np np;
	struct back *q; /* CNPQ entries */
	unsigned qh, qt;
};

struct host {
	struct dcqcn_rp rp;
	struct cc_pacer pacer;
	uint64_t next_dep;
	unsigned rr; /* next flow of this host, round robin */
};

struct opts {
	const char *out;
	struct dcqcn_params params;
	bool cc_on, np_on, usec, ipv6;
	unsigned first_host;
	unsigned flows, hosts;
	double line_gbps, bn_gbps, cross_gbps;
	double cross_on_us, cross_off_us, cross_start_us;
	double kmin_kb, kmax_kb, pmax;
	double prop_us, rev_us, duration_ms;
	unsigned mtu, msg_kb, ack_every, snaplen, noise;
	enum capture_point cap;
	enum link link;
	uint64_t seed;
};

static struct rec *recs;
static size_t nrec, caprec;
static uint32_t seqno;
static uint64_t rs;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static void add_rec(uint64_t ts, enum rec_kind k, unsigned flow, unsigned ecn, uint8_t opcode,
                    uint32_t psn, uint32_t msn)
{
	if (nrec == caprec) {
		size_t nc = caprec ? caprec * 2 : 65536;
		struct rec *n = realloc(recs, nc * sizeof(*n));

		if (n == NULL) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
		recs = n;
		caprec = nc;
	}
	recs[nrec++] =
	    (struct rec){ts, seqno++, (uint8_t)k, (uint8_t)flow, (uint8_t)ecn, opcode, psn, msn};
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: " PROG " --out FILE [options]\n"
	        "  --profile P         DCQCN profile of sender RPs and receiver NP (unified)\n"
	        "  --set name=value    override one DCQCN parameter (repeatable)\n"
	        "  --cc on|off         off: the sender ignores CNPs (default on)\n"
	        "  --np on|off         off: the receiver sends no CNPs (default on)\n"
	        "  --first-host K      sender hosts are 10.0.0.(K+1)... (0)\n"
	        "  --flows N           flows, 1..%d (1)        --hosts H  sender hosts (= flows)\n"
	        "  --line-gbps G       sender line rate (100)\n"
	        "  --bottleneck-gbps G bottleneck service rate (50)\n"
	        "  --cross-gbps G      cross traffic taking part of the bottleneck (0)\n"
	        "  --cross-on-us U     cross traffic on for U us ... (1000)\n"
	        "  --cross-off-us U    ... then off for U us (2000)\n"
	        "  --cross-start-us U  first on phase starts at U us (2000)\n"
	        "  --kmin-kb K --kmax-kb K --pmax P   RED marking (5, 200, 0.01)\n"
	        "  --prop-us U         sender -> receiver latency without queueing (2)\n"
	        "  --rev-us U          receiver -> sender latency of CNPs and ACKs (2)\n"
	        "  --duration-ms M     sending time (10)\n"
	        "  --mtu B             payload per packet (4096)   --msg-kb K  message size (64)\n"
	        "  --ack-every N       ACK every N data packets, 0 = none (16)\n"
	        "  --capture sender|receiver|switch   capture point (sender)\n"
	        "  --link eth|vlan|sll link layer written (eth)\n"
	        "  --snaplen B         keep B bytes of each frame, 0 = all (0)\n"
	        "  --noise N           one non-RoCE frame per N frames, 0 = none (0)\n"
	        "  --seed S            PRNG seed of the marking (1)\n"
	        "  --usec              microsecond timestamps (pcap's default) instead of ns\n"
	        "  --ipv6              IPv6 (2001:db8::/64 hosts) instead of IPv4\n",
	        MAX_FLOWS);
}

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, PROG ": %s: '%s' is not a number in %g..%g\n", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o, const char **profile)
{
	static const struct option lo[] = {
	    {"out", 1, 0, 'o'},          {"profile", 1, 0, 'p'},
	    {"set", 1, 0, 's'},          {"cc", 1, 0, 'c'},
	    {"flows", 1, 0, 'f'},        {"hosts", 1, 0, 'H'},
	    {"line-gbps", 1, 0, 'l'},    {"bottleneck-gbps", 1, 0, 'b'},
	    {"cross-gbps", 1, 0, 'x'},   {"cross-on-us", 1, 0, 'X'},
	    {"cross-off-us", 1, 0, 'Y'}, {"cross-start-us", 1, 0, 'Z'},
	    {"kmin-kb", 1, 0, 'k'},      {"kmax-kb", 1, 0, 'K'},
	    {"pmax", 1, 0, 'P'},         {"prop-us", 1, 0, 'd'},
	    {"rev-us", 1, 0, 'r'},       {"duration-ms", 1, 0, 'D'},
	    {"mtu", 1, 0, 'm'},          {"msg-kb", 1, 0, 'M'},
	    {"ack-every", 1, 0, 'a'},    {"capture", 1, 0, 'C'},
	    {"link", 1, 0, 'L'},         {"snaplen", 1, 0, 'S'},
	    {"noise", 1, 0, 'n'},        {"seed", 1, 0, 'e'},
	    {"help", 0, 0, 'h'},         {"np", 1, 0, 'N'},
	    {"first-host", 1, 0, 'F'},   {"usec", 0, 0, 'U'},
	    {"ipv6", 0, 0, '6'},         {0, 0, 0, 0},
	};
	char msg[160];
	double v = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'p':
			*profile = optarg;
			if (dcqcn_profile_lookup(optarg) < 0) {
				fprintf(stderr, PROG ": --profile: unknown profile '%s'\n", optarg);
				return -1;
			}
			dcqcn_params_init(&o->params,
			                  (enum dcqcn_profile)dcqcn_profile_lookup(optarg));
			break;
		case 's': {
			char *eq = strchr(optarg, '=');

			if (eq == NULL) {
				fprintf(stderr, PROG ": --set: expected name=value, got '%s'\n",
				        optarg);
				return -1;
			}
			*eq = 0;
			if (dcqcn_param_set_msg(&o->params, optarg, eq + 1, msg, sizeof(msg)) < 0) {
				fprintf(stderr, PROG ": --set %s\n", msg);
				return -1;
			}
			break;
		}
		case 'c':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
				fprintf(stderr, PROG ": --cc: expected on or off\n");
				return -1;
			}
			o->cc_on = !strcmp(optarg, "on");
			break;
		case 'U':
			o->usec = true;
			break;
		case '6':
			o->ipv6 = true;
			break;
		case 'N':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
				fprintf(stderr, PROG ": --np: expected on or off\n");
				return -1;
			}
			o->np_on = !strcmp(optarg, "on");
			break;
		case 'F':
			bad = parse_num("--first-host", optarg, 0, 200, &v);
			o->first_host = (unsigned)v;
			break;
		case 'f':
			bad = parse_num("--flows", optarg, 1, MAX_FLOWS, &v);
			o->flows = (unsigned)v;
			break;
		case 'H':
			bad = parse_num("--hosts", optarg, 1, MAX_FLOWS, &v);
			o->hosts = (unsigned)v;
			break;
		case 'l':
			bad = parse_num("--line-gbps", optarg, 1, 4000, &o->line_gbps);
			break;
		case 'b':
			bad = parse_num("--bottleneck-gbps", optarg, 0.01, 4000, &o->bn_gbps);
			break;
		case 'x':
			bad = parse_num("--cross-gbps", optarg, 0, 4000, &o->cross_gbps);
			break;
		case 'X':
			bad = parse_num("--cross-on-us", optarg, 0, 1e9, &o->cross_on_us);
			break;
		case 'Y':
			bad = parse_num("--cross-off-us", optarg, 0, 1e9, &o->cross_off_us);
			break;
		case 'Z':
			bad = parse_num("--cross-start-us", optarg, 0, 1e9, &o->cross_start_us);
			break;
		case 'k':
			bad = parse_num("--kmin-kb", optarg, 0, 1e6, &o->kmin_kb);
			break;
		case 'K':
			bad = parse_num("--kmax-kb", optarg, 0, 1e6, &o->kmax_kb);
			break;
		case 'P':
			bad = parse_num("--pmax", optarg, 0, 1, &o->pmax);
			break;
		case 'd':
			bad = parse_num("--prop-us", optarg, 0.001, 1e6, &o->prop_us);
			break;
		case 'r':
			bad = parse_num("--rev-us", optarg, 0.001, 1e6, &o->rev_us);
			break;
		case 'D':
			bad = parse_num("--duration-ms", optarg, 0.001, 1e6, &o->duration_ms);
			break;
		case 'm':
			bad = parse_num("--mtu", optarg, 256, 4096, &v);
			o->mtu = (unsigned)v;
			break;
		case 'M':
			bad = parse_num("--msg-kb", optarg, 1, 1 << 20, &v);
			o->msg_kb = (unsigned)v;
			break;
		case 'a':
			bad = parse_num("--ack-every", optarg, 0, 1 << 20, &v);
			o->ack_every = (unsigned)v;
			break;
		case 'C':
			if (!strcmp(optarg, "sender"))
				o->cap = CAP_SENDER;
			else if (!strcmp(optarg, "receiver"))
				o->cap = CAP_RECEIVER;
			else if (!strcmp(optarg, "switch"))
				o->cap = CAP_SWITCH;
			else
				bad = fprintf(stderr,
				              PROG ": --capture: sender, receiver or switch\n");
			break;
		case 'L':
			if (!strcmp(optarg, "eth"))
				o->link = LINK_ETH;
			else if (!strcmp(optarg, "vlan"))
				o->link = LINK_VLAN;
			else if (!strcmp(optarg, "sll"))
				o->link = LINK_SLL;
			else
				bad = fprintf(stderr, PROG ": --link: eth, vlan or sll\n");
			break;
		case 'S':
			bad = parse_num("--snaplen", optarg, 0, 65535, &v);
			o->snaplen = (unsigned)v;
			break;
		case 'n':
			bad = parse_num("--noise", optarg, 0, 1 << 20, &v);
			o->noise = (unsigned)v;
			break;
		case 'e':
			bad = parse_num("--seed", optarg, 1, 1e15, &v);
			o->seed = (uint64_t)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		if (bad)
			return -1;
	}
	if (o->out == NULL || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* ---- simulation ---- */

static struct opts o;
static struct gflow fl[MAX_FLOWS];
static struct host hs[MAX_FLOWS];
static struct dcqcn_prof prof;
static bool shared_rp; /* rp_scope dst or port: one RP per sender host (one receiver here) */

/* Bottleneck: a virtual FIFO drained at the bottleneck rate minus the cross traffic. */
static double q_bytes;
static uint64_t q_last, q_last_leave;

static double bn_rate_gbps(uint64_t t)
{
	double us = (double)(t - T0_NS) / 1000.0, period = o.cross_on_us + o.cross_off_us;

	if (o.cross_gbps > 0 && period > 0 && us >= o.cross_start_us &&
	    (us - o.cross_start_us) - period * (double)(long)((us - o.cross_start_us) / period) <
	        o.cross_on_us) {
		double r = o.bn_gbps - o.cross_gbps;

		return r > 0.01 ? r : 0.01;
	}
	return o.bn_gbps;
}

/* Packet of @bytes reaches the queue at @t: returns the time it leaves, sets @ce. */
static uint64_t bottleneck(uint64_t t, unsigned bytes, bool *ce)
{
	double rate = bn_rate_gbps(t); /* bits per ns */
	double kmin = o.kmin_kb * 1000, kmax = o.kmax_kb * 1000, p;
	uint64_t leave;

	q_bytes -= (double)(t - q_last) * rate / 8.0;
	if (q_bytes < 0)
		q_bytes = 0;
	q_last = t;
	if (q_bytes <= kmin)
		p = 0;
	else if (q_bytes > kmax)
		p = 1;
	else
		p = o.pmax * (q_bytes - kmin) / (kmax - kmin);
	*ce = p > 0 && (double)(rnd() >> 11) / 9007199254740992.0 < p;
	q_bytes += bytes;
	/* FIFO: when the service rate changes, a packet never leaves before the one ahead. */
	leave = t + (uint64_t)(q_bytes * 8.0 / rate);
	if (leave < q_last_leave)
		leave = q_last_leave;
	q_last_leave = leave;
	return leave;
}

static unsigned data_frame_len(uint8_t opcode)
{
	const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(opcode);

	return RFW_ETH_HLEN + (o.ipv6 ? RFW_IPV6_HLEN : RFW_IPV4_HLEN) + RFW_UDP_HLEN +
	       oi->hdr_len + o.mtu + RFW_ICRC_LEN;
}

static void back_push(struct gflow *f, uint64_t at, bool cnp)
{
	if (f->qt - f->qh == CNPQ) {
		fprintf(stderr,
		        PROG ": CNP/ACK queue overflow at %.3f ms, bottleneck queue %.0f KB\n",
		        (double)(at - T0_NS) / 1e6, q_bytes / 1e3);
		exit(1);
	}
	f->q[f->qt++ % CNPQ] = (struct back){at, cnp};
}

/* One data packet of flow @f leaves its sender at @t. */
static void send_one(struct gflow *f, uint64_t t)
{
	uint32_t msg = o.msg_kb * 1024, left = msg - f->msg_off;
	uint8_t op;
	uint64_t leave, arrive;
	bool ce, first = f->msg_off == 0, last = left <= o.mtu;
	unsigned len;

	op = first && last ? RFW_OP_RC_RDMA_WRITE_ONLY
	     : first       ? RFW_OP_RC_RDMA_WRITE_FIRST
	     : last        ? RFW_OP_RC_RDMA_WRITE_LAST
	                   : RFW_OP_RC_RDMA_WRITE_MIDDLE;
	len = data_frame_len(op);
	f->msg_off = last ? 0 : f->msg_off + o.mtu;
	leave = bottleneck(t + (uint64_t)(o.prop_us * 500), len, &ce);
	arrive = leave + (uint64_t)(o.prop_us * 500);

	if (o.cap == CAP_SENDER)
		add_rec(t, REC_DATA, (unsigned)(f - fl), RFW_ECN_ECT0, op, f->psn, 0);
	else
		add_rec(o.cap == CAP_SWITCH ? leave : arrive, REC_DATA, (unsigned)(f - fl),
		        ce ? RFW_ECN_CE : RFW_ECN_ECT0, op, f->psn, 0);

	/* Receiver: the NP answers CE marks (cc/'s dcqcn_np), the responder ACKs. */
	if (ce && o.np_on && dcqcn_np_on_ce(&f->np, arrive)) {
		uint64_t at = arrive + (uint64_t)(o.rev_us * 1000);

		back_push(f, at, true);
		add_rec(o.cap == CAP_SENDER   ? at
		        : o.cap == CAP_SWITCH ? arrive + (uint64_t)(o.rev_us * 500)
		                              : arrive,
		        REC_CNP, (unsigned)(f - fl), RFW_ECN_NOT_ECT, RFW_OP_CNP, 0, 0);
	}
	if (last)
		f->msn = (f->msn + 1) & RFW_MSN_MASK;
	if (o.ack_every && (++f->since_ack >= o.ack_every || last)) {
		uint64_t at = arrive + (uint64_t)(o.rev_us * 1000);

		f->since_ack = 0;
		back_push(f, at, false);
		add_rec(o.cap == CAP_SENDER   ? at
		        : o.cap == CAP_SWITCH ? arrive + (uint64_t)(o.rev_us * 500)
		                              : arrive,
		        REC_ACK, (unsigned)(f - fl), RFW_ECN_ECT0, RFW_OP_RC_ACKNOWLEDGE, f->psn,
		        f->msn);
	}
	f->psn = rfw_psn_add(f->psn, 1);
	if (o.noise && seqno % o.noise == 0)
		add_rec(t, REC_NOISE, (unsigned)(f - fl), 0, 0, 0, 0);
}

static struct dcqcn_rp *rp_of(unsigned flow)
{
	return &hs[shared_rp ? fl[flow].host : flow].rp;
}

static void simulate(void)
{
	uint64_t end = T0_NS + (uint64_t)(o.duration_ms * 1e6);
	unsigned nsched = shared_rp ? o.hosts : o.flows;

	q_last = T0_NS;
	for (unsigned i = 0; i < o.flows; i++) {
		struct gflow *f = &fl[i];

		f->host = i % o.hosts;
		f->sqpn = 0x000100 + i;
		f->dqpn = 0x000200 + i;
		f->psn = (uint32_t)(0x1000 * (i + 1));
		f->sport = (uint16_t)(49152 + i);
		dcqcn_np_init(&f->np, &prof);
		f->q = calloc(CNPQ, sizeof(*f->q));
		if (f->q == NULL) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
	}
	for (unsigned h = 0; h < nsched; h++) {
		dcqcn_rp_init(&hs[h].rp, &prof);
		cc_pacer_init(&hs[h].pacer, 0);
		hs[h].next_dep = T0_NS + h * 97; /* staggered starts */
		hs[h].rr = h;
	}
	for (;;) {
		/* The earliest event: a departure, or a CNP/ACK reaching its sender. */
		uint64_t best = UINT64_MAX;
		int bh = -1, bf = -1;

		for (unsigned h = 0; h < nsched; h++)
			if (hs[h].next_dep < best && hs[h].next_dep < end) {
				best = hs[h].next_dep;
				bh = (int)h;
			}
		for (unsigned i = 0; i < o.flows; i++)
			if (fl[i].qh != fl[i].qt && fl[i].q[fl[i].qh % CNPQ].at <= best) {
				best = fl[i].q[fl[i].qh % CNPQ].at;
				bf = (int)i;
			}
		if (bf >= 0) {
			struct back b = fl[bf].q[fl[bf].qh++ % CNPQ];

			if (b.cnp && o.cc_on)
				dcqcn_rp_on_cnp(rp_of((unsigned)bf), b.at);
			continue;
		}
		if (bh < 0)
			break;
		{
			struct host *h = &hs[bh];
			unsigned flow = shared_rp ? h->rr : (unsigned)bh;
			struct gflow *f = &fl[flow];
			uint32_t len;
			uint64_t rate;

			if (shared_rp) { /* next flow of this host, round robin */
				unsigned nf = o.flows ? o.flows : 1; /* >= 1 (option range) */

				do
					h->rr = (h->rr + 1) % nf;
				while (fl[h->rr].host != (unsigned)bh);
			}
			len = data_frame_len(f->msg_off == 0 ? RFW_OP_RC_RDMA_WRITE_FIRST
			                                     : RFW_OP_RC_RDMA_WRITE_MIDDLE);
			dcqcn_rp_on_timer(&h->rp, best);
			rate = dcqcn_rp_rate_kbps(&h->rp);
			/* Departure now; the pacer charges this packet at the current rate and says
			 * when the next one may leave. */
			cc_pacer_depart(&h->pacer, best, len, rate);
			h->next_dep = h->pacer.tat_ns;
			send_one(f, best);
			dcqcn_rp_on_tx(&h->rp, len, best);
		}
	}
}

/* ---- frames ---- */

static size_t build(uint8_t *buf, size_t cap, const struct rec *r)
{
	const struct gflow *f = &fl[r->flow];
	struct rfw_frame_spec s = {0};
	struct rfw_ib_pkt p = {0};
	bool fwd = r->kind == REC_DATA;
	uint32_t plen = 0;
	size_t ib_len;
	int off, hl;

	memcpy(s.dst_mac, fwd ? "\x02\0\0\0\x01\x01" : "\x02\0\0\0\0\x01", 6);
	memcpy(s.src_mac, fwd ? "\x02\0\0\0\0\x01" : "\x02\0\0\0\x01\x01", 6);
	s.src_mac[5] = fwd ? (uint8_t)(f->host + 1) : 1;
	s.dst_mac[5] = fwd ? 1 : (uint8_t)(f->host + 1);
	if (o.link == LINK_VLAN) {
		s.nvlan = 1;
		s.vlan_tci[0] = (uint16_t)((r->kind == REC_CNP ? prof.cnp_prio : 3) << 13 | 100);
	}
	s.ip_ver = 4;
	s.ttl = 64;
	s.df = true;
	rfw_ip4_to_mapped(fwd ? s.src_ip : s.dst_ip, 0x0a000001 + o.first_host + f->host);
	rfw_ip4_to_mapped(fwd ? s.dst_ip : s.src_ip, 0x0a000101);
	if (o.ipv6) { /* 2001:db8::<host> and 2001:db8::1:1; IPv6 needs the UDP checksum */
		static const uint8_t pfx[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0};
		uint8_t *sa = fwd ? s.src_ip : s.dst_ip, *da = fwd ? s.dst_ip : s.src_ip;

		s.ip_ver = 6;
		s.udp_csum = true;
		memset(sa, 0, 16);
		memset(da, 0, 16);
		memcpy(sa, pfx, 8);
		memcpy(da, pfx, 8);
		sa[15] = (uint8_t)(1 + o.first_host + f->host);
		da[13] = 1;
		da[15] = 1;
	}
	s.udp_sport = f->sport;
	p.bth.pkey = 0xffff;
	p.bth.opcode = r->opcode;
	p.bth.psn = r->psn;
	if (r->kind == REC_DATA) {
		s.tos = (uint8_t)(26 << 2 | r->ecn);
		p.bth.dqpn = f->dqpn;
		plen = o.mtu;
		p.bth.ackreq = (r->opcode == RFW_OP_RC_RDMA_WRITE_LAST ||
		                r->opcode == RFW_OP_RC_RDMA_WRITE_ONLY);
		p.reth.va = 0x10000000ull;
		p.reth.rkey = 0x1234;
		p.reth.dma_len = o.msg_kb * 1024;
	} else if (r->kind == REC_CNP) {
		s.tos = (uint8_t)(prof.cnp_dscp << 2);
		p.bth.dqpn = f->sqpn;
		p.bth.becn = true;
		p.bth.psn = 0;
	} else {
		s.tos = (uint8_t)(26 << 2 | RFW_ECN_ECT0);
		p.bth.dqpn = f->sqpn;
		p.aeth.syndrome = RFW_AETH_SYNDROME(RFW_AETH_ACK, 0x1f);
		p.aeth.msn = r->msn;
	}
	p.bth.padcnt = rfw_ib_padcnt(plen);
	ib_len = rfw_ib_opcode_info(r->opcode)->hdr_len + plen + p.bth.padcnt;
	off = rfw_frame_build_hdrs(buf, cap, &s, ib_len);
	if (off < 0)
		return 0;
	hl = rfw_ib_build(buf + off, cap - (size_t)off, &p);
	if (hl < 0)
		return 0;
	for (uint32_t k = 0; k < plen; k++)
		buf[off + hl + k] = (uint8_t)(k * 7 + r->psn);
	memset(buf + off + hl + plen, 0, p.bth.padcnt);
	return rfw_frame_finalize(buf, &s, ib_len);
}

/* A frame that is not RoCE: UDP to port 53 or an ARP request, alternately. */
static size_t build_noise(uint8_t *buf, const struct rec *r)
{
	static const uint8_t arp[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0,
	                                9,    0x08, 0x06, 0,    1,    8,    0, 6, 4, 0, 1};
	struct rfw_frame_spec s = {0};
	int off;

	if (r->seq & 1) {
		memcpy(buf, arp, sizeof(arp));
		return 60;
	}
	s.ip_ver = 4;
	s.ttl = 64;
	s.udp_sport = 5353;
	s.udp_dport = 53;
	rfw_ip4_to_mapped(s.src_ip, 0x0a000009);
	rfw_ip4_to_mapped(s.dst_ip, 0x0a000101);
	off = rfw_frame_build_hdrs(buf, 256, &s, 32);
	if (off < 0)
		return 0;
	memset(buf + off, 0x55, 32);
	return (size_t)off + 32; /* no ICRC: not RoCE */
}

/* The options' defaults, before the command line. */
static void opts_default(void)
{
	o.cc_on = true;
	o.np_on = true;
	o.flows = 1;
	o.line_gbps = 100;
	o.bn_gbps = 50;
	o.cross_on_us = 1000;
	o.cross_off_us = 2000;
	o.cross_start_us = 2000;
	o.kmin_kb = 5;
	o.kmax_kb = 200;
	o.pmax = 0.01;
	o.prop_us = 2;
	o.rev_us = 2;
	o.duration_ms = 10;
	o.mtu = 4096;
	o.msg_kb = 64;
	o.ack_every = 16;
	o.seed = 1;
	dcqcn_params_init(&o.params, DCQCN_PROFILE_UNIFIED);
}

/* Every record as a frame into @d (Ethernet, or Linux cooked v1 with --link sll). 0 or 1. */
static int write_frames(pcap_dumper_t *d)
{
	static uint8_t frame[9216], out[9216];

	for (size_t i = 0; i < nrec; i++) {
		const struct rec *r = &recs[i];
		struct pcap_pkthdr h = {0};
		size_t len =
		    r->kind == REC_NOISE ? build_noise(frame, r) : build(frame, sizeof(frame), r);
		const uint8_t *w = frame;

		if (len == 0) {
			fprintf(stderr, PROG ": frame build failed\n");
			return 1;
		}
		if (o.link == LINK_SLL) { /* 16-byte cooked header in place of Ethernet's 14 */
			static const uint8_t sll[14] = {0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0};

			memcpy(out, sll, 14);
			memcpy(out + 14, frame + 12, len - 12);
			len += 2;
			w = out;
		}
		h.ts.tv_sec = (time_t)(r->ts / 1000000000ull);
		/* the dumper writes tv_usec as is: ns for a nano dump, us for a micro one */
		h.ts.tv_usec = (suseconds_t)(r->ts % 1000000000ull / (o.usec ? 1000 : 1));
		h.len = (bpf_u_int32)len;
		h.caplen = (bpf_u_int32)(o.snaplen && o.snaplen < len ? o.snaplen : len);
		pcap_dump((u_char *)d, &h, w);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *profile = "unified";
	char msg[160];
	pcap_t *dead;
	pcap_dumper_t *d;
	int rc;

	opts_default();
	if (parse(argc, argv, &o, &profile) < 0)
		return 2;
	if (o.hosts == 0 || o.hosts > o.flows)
		o.hosts = o.flows;
	rs = o.seed * 0x9e3779b97f4a7c15ull | 1;
	if (dcqcn_prof_config(&prof, &o.params, (uint32_t)(o.line_gbps * 1000), msg, sizeof(msg)) <
	    0) {
		fprintf(stderr, PROG ": %s\n", msg);
		return 2;
	}
	shared_rp = prof.scope != DCQCN_SCOPE_QP;

	simulate();
	qsort(recs, nrec, sizeof(*recs), cmp_rec);

	dead = pcap_open_dead_with_tstamp_precision(
	    o.link == LINK_SLL ? DLT_LINUX_SLL : DLT_EN10MB, o.snaplen ? (int)o.snaplen : 65535,
	    o.usec ? PCAP_TSTAMP_PRECISION_MICRO : PCAP_TSTAMP_PRECISION_NANO);
	d = pcap_dump_open(dead, o.out);
	if (d == NULL) {
		fprintf(stderr, PROG ": %s\n", pcap_geterr(dead));
		return 1;
	}
	rc = write_frames(d);
	pcap_dump_close(d);
	pcap_close(dead);
	if (rc != 0)
		return rc;
	fprintf(stderr, PROG ": %zu frames, profile %s, cc %s\n", nrec, profile,
	        o.cc_on ? "on" : "off");
	free(recs);
	return 0;
}
