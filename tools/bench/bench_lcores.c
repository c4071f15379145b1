/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-bench-lcores: several NICs on one port, one per RX/TX queue pair, each polled by its own
 * lcore (issue 20, docs/scale.md "Several lcores").
 *
 * Two ports A and B of the ring PMD, each with --nics queue pairs, joined queue to queue (what A
 * sends on its queue i arrives on B's queue i, as memif pairs its rings). On lcore i: the NIC of
 * A's queue i and the NIC of B's queue i, --qps RC QPs each. Every QP of A's NIC i sends
 * --size-byte SENDs, --depth at a time, to a QP of B's NIC i (or, with --cross, of B's NIC
 * i + 1: every data frame then arrives on a queue whose NIC does not own it, and so does every
 * ACK on the way back, so the software dispatcher carries all of them). B checks every byte of
 * every message on its own lcore against a pattern its sender cannot touch. With --resolve the
 * QPs start without their peer's MAC: every NIC resolves it with ARP through the port's
 * neighbour table, whose replies reach queue 0 only.
 *
 * It passes when every message arrived once, in order and intact, every QP made progress, no
 * frame reached a NIC that does not own its QP (the transport's rx_unknown_qp), with --cross
 * and more than one NIC the dispatcher carried frames (rx_steered > 0), and with --resolve
 * every QP's peer MAC was resolved. Frames dropped on a full dispatch ring are counted and
 * printed, not a failure: the transport recovers them as any loss. Prints the message rate and
 * goodput of the run.
 *
 * --eal-ports takes A and B from the EAL's ports 0 and 1 instead: e.g. net_af_packet on the two
 * ends of a veth pair with qpairs=2, where the kernel's packet fanout (by flow hash, as RSS)
 * puts each frame on a queue of its choosing and the dispatcher corrects it. (Two net_memif
 * vdevs of one socket in one process crash DPDK 22.11's interrupt thread at connect.)
 *
 * usage: rocefw-bench-lcores [EAL options, e.g. -l 0,1] -- [--nics N] [--qps Q] [--size B]
 *                            [--depth D] [--seconds S] [--cross] [--resolve] [--eal-ports]
 *                            [--mtu B] [--ipv6] [--json F]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_port.h"
#include "dataplane/rfw_steer.h"
#include "tools/common/rfw_endpoint.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_pattern.h"

#define PROG    "rocefw-bench-lcores"
#define SCHEMA  "rocefw-bench-lcores/1"
#define MAX_QPS 64   /* per NIC */
#define DRAIN_S 10.0 /* after --seconds, the time allowed to finish what is in flight */

struct opts {
	uint32_t nics, qps, size, depth, mtu;
	double seconds;
	bool cross, resolve, eal_ports, ipv6;
	const char *json;
};

/* One sending QP of A and the QP of B it sends to. */
struct pair {
	struct rfw_qp *a, *b;
	uint32_t gi;            /* global pair index, in the stamps */
	uint8_t *src, *dst;     /* A's send slots, B's receive slots: depth x size each */
	uint64_t posted, done;  /* A: SENDs posted and completed */
	uint64_t recvd;         /* B: messages received and checked */
	uint64_t final_posted;  /* A's count once it stopped posting (read by B's lcore) */
	uint32_t a_final;       /* set (release) after final_posted */
	uint64_t recvd_at_stop; /* B's count when the measured window ended */
	struct rfw_mr *src_mr, *dst_mr;
	struct rfw_nic *a_nic, *b_nic;
};

/* One queue pair of each port and its lcore's work. */
struct lane {
	struct rfw_ep a, b;       /* NICs on queue i of A and of B */
	struct pair *p[MAX_QPS];  /* pairs whose A side is on this lane */
	struct pair *in[MAX_QPS]; /* pairs whose B side is on this lane */
	uint32_t np, nin;
	struct run *R;
	unsigned lcore;
	uint16_t qid;
	bool finalized, complete;
	uint64_t errors;
	char err[160];
} __rte_cache_aligned;

struct run {
	struct opts o;
	struct lane lane[RFW_MAX_QUEUES];
	struct pair *pairs;
	uint8_t *pattern; /* 2 x depth x size bytes, never written after set-up */
	struct rfw_port *pa, *pb;
	uint64_t t0, t_stop;
	uint32_t stop; /* 1: window over, stop posting */
	uint32_t lanes_done;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [EAL options] -- [--nics N] [--qps Q] [--size B] [--depth D]\n"
	    "       [--seconds S] [--cross] [--resolve] [--ipv6] [--eal-ports] [--mtu B]\n"
	    "       [--json FILE]\n"
	    "  --nics N     NICs per port, one per queue pair and lcore (default: the "
	    "lcores, 1..%u)\n"
	    "  --qps Q      sending QPs per NIC (default 4, 1..%u)\n"
	    "  --size B     SEND size in bytes (default 64, 1..1048576)\n"
	    "  --depth D    SENDs outstanding per QP (default 16, 1..256)\n"
	    "  --seconds S  measured window (default 2, 0.1..3600)\n"
	    "  --cross      pair A's NIC i with B's NIC i+1: every frame dispatched\n"
	    "  --resolve    start without peer MACs: ARP through the port's table\n"
	    "  --ipv6       fd00::1 and fd00::2 only: RoCEv2 over IPv6, ND instead of ARP\n"
	    "  --eal-ports  A and B are the EAL's ports 0 and 1 (e.g. two net_af_packet vdevs)\n"
	    "  --mtu B      path MTU (default 4096; 1024 on a 1500-byte link)\n"
	    "  --json FILE  results as JSON (schema " SCHEMA ")\n",
	    PROG, (unsigned)RFW_MAX_QUEUES, (unsigned)MAX_QPS);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"nics", required_argument, NULL, 'n'},
	                                   {"qps", required_argument, NULL, 'q'},
	                                   {"size", required_argument, NULL, 's'},
	                                   {"depth", required_argument, NULL, 'd'},
	                                   {"seconds", required_argument, NULL, 't'},
	                                   {"cross", no_argument, NULL, 'x'},
	                                   {"eal-ports", no_argument, NULL, 'e'},
	                                   {"mtu", required_argument, NULL, 'm'},
	                                   {"resolve", no_argument, NULL, 'r'},
	                                   {"json", required_argument, NULL, 'j'},
	                                   {"ipv6", no_argument, NULL, '6'},
	                                   {"help", no_argument, NULL, 'h'},
	                                   {NULL, 0, NULL, 0}};
	int c;

	*o = (struct opts){.qps = 4, .size = 64, .depth = 16, .seconds = 2, .mtu = 4096};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->nics = rfw_opt_u32_or_exit(PROG, "--nics", optarg, 1, RFW_MAX_QUEUES);
			break;
		case 'q':
			o->qps = rfw_opt_u32_or_exit(PROG, "--qps", optarg, 1, MAX_QPS);
			break;
		case 's':
			o->size = rfw_opt_u32_or_exit(PROG, "--size", optarg, 1, 1u << 20);
			break;
		case 'd':
			o->depth = rfw_opt_u32_or_exit(PROG, "--depth", optarg, 1, 256);
			break;
		case 't':
			o->seconds = rfw_opt_double_or_exit(PROG, "--seconds", optarg, 0.1, 3600);
			break;
		case 'x':
			o->cross = true;
			break;
		case 'r':
			o->resolve = true;
			break;
		case '6':
			o->ipv6 = true;
			break;
		case 'e':
			o->eal_ports = true;
			break;
		case 'm':
			o->mtu = rfw_opt_u32_or_exit(PROG, "--mtu", optarg, 256, 4096);
			if (rfw_mtu_to_bytes(rfw_ep_mtu(o->mtu)) != o->mtu) {
				fprintf(stderr, "%s: --mtu %u: 256, 512, 1024, 2048 or 4096\n",
				        PROG, o->mtu);
				exit(RFW_OPT_EXIT_USAGE);
			}
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(RFW_OPT_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", PROG, argv[optind]);
		exit(RFW_OPT_EXIT_USAGE);
	}
}

static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* ---- the data: an immutable pattern, a stamp of (pair, message) (rfw_pattern_stamp) ---- */

static inline uint64_t stamp_of(uint32_t gi, uint64_t k)
{
	return (uint64_t)gi << 40 | (k & ((1ull << 40) - 1));
}

static inline const uint8_t *pattern_slot(const struct run *R, uint64_t k)
{
	const struct opts *o = &R->o;

	return R->pattern + ((k / o->depth) & 1) * (size_t)o->depth * o->size +
	       (k % o->depth) * (size_t)o->size;
}

/* Message @k of pair @p as it must have arrived at @got; false at the first wrong byte. */
static bool check(const struct run *R, const struct pair *p, uint64_t k, const uint8_t *got)
{
	const uint8_t *want = pattern_slot(R, k);
	uint64_t v = stamp_of(p->gi, k);
	uint32_t size = R->o.size;

	for (uint32_t off = 0; off < size; off += RFW_PATTERN_STAMP_GAP) {
		uint32_t n = RTE_MIN(8u, size - off);
		uint32_t rest = RTE_MIN(RFW_PATTERN_STAMP_GAP, size - off) - n;

		if (memcmp(got + off, &v, n) != 0 ||
		    memcmp(got + off + n, want + off + n, rest) != 0)
			return false;
	}
	return true;
}

/* ---- set-up ---- */

/* A's and B's addresses: 10.0.0.1 / .2, or fd00::1 / ::2 alone (--ipv6: RoCEv2 over IPv6 and
 * peers resolved with ND instead of ARP). */
static void identities(const struct opts *o, struct rfw_identity *ia, struct rfw_identity *ib)
{
	*ia = (struct rfw_identity){.has_ip4 = !o->ipv6, .ip4 = 0x0a000001, .has_ip6 = o->ipv6};
	*ib = (struct rfw_identity){.has_ip4 = !o->ipv6, .ip4 = 0x0a000002, .has_ip6 = o->ipv6};
	ia->ip6[0] = ib->ip6[0] = 0xfd;
	ia->ip6[15] = 1;
	ib->ip6[15] = 2;
}

/* A and B: the EAL's ports 0 and 1, set up with the NICs' queues, links up. */
static void ports_eal(struct run *R)
{
	struct rfw_port_conf pc = {.nb_rxq = (uint16_t)R->o.nics, .nb_txq = (uint16_t)R->o.nics};
	struct rfw_identity ia, ib;

	identities(&R->o, &ia, &ib);

	if (rte_eth_dev_count_avail() < 2) {
		fprintf(stderr, "%s: --eal-ports needs two DPDK ports (EAL --vdev): %u given\n",
		        PROG, rte_eth_dev_count_avail());
		exit(RFW_OPT_EXIT_USAGE);
	}
	R->pa = rfw_port_setup(0, &pc, &ia);
	R->pb = rfw_port_setup(1, &pc, &ib);
	if (R->pa == NULL || R->pb == NULL)
		die("rfw_port_setup", rte_errno);
	if (rfw_port_link_wait(R->pa, 10000) != 0 || rfw_port_link_wait(R->pb, 10000) != 0)
		die("link up", ETIMEDOUT);
}

/* Ports A and B of the ring PMD, queue i of A joined to queue i of B both ways. */
static void ports_make(struct run *R)
{
	struct rte_ring *ab[RFW_MAX_QUEUES], *ba[RFW_MAX_QUEUES];
	struct rfw_port_conf pc = {.nb_rxq = (uint16_t)R->o.nics, .nb_txq = (uint16_t)R->o.nics};
	struct rfw_identity ia, ib;

	identities(&R->o, &ia, &ib);
	unsigned socket = rte_socket_id();
	char name[RTE_RING_NAMESIZE];
	int a, b;

	for (uint32_t i = 0; i < R->o.nics; i++) {
		snprintf(name, sizeof(name), "lc_ab%u", i);
		ab[i] = rte_ring_create(name, 4096, (int)socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "lc_ba%u", i);
		ba[i] = rte_ring_create(name, 4096, (int)socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ab[i] == NULL || ba[i] == NULL)
			die("rte_ring_create", rte_errno);
	}
	a = rte_eth_from_rings("lcA", ba, R->o.nics, ab, R->o.nics, socket);
	b = rte_eth_from_rings("lcB", ab, R->o.nics, ba, R->o.nics, socket);
	if (a < 0 || b < 0)
		die("rte_eth_from_rings", rte_errno);
	R->pa = rfw_port_setup((uint16_t)a, &pc, &ia);
	R->pb = rfw_port_setup((uint16_t)b, &pc, &ib);
	if (R->pa == NULL || R->pb == NULL)
		die("rfw_port_setup", rte_errno);
}

/* The NIC of queue @qid of @port, its PD and CQ. */
static void ep_open(struct rfw_ep *ep, struct rfw_port *port, uint16_t qid, const struct opts *o)
{
	struct rfw_nic_conf nc = {0};

	nc.dev_attr.max_qp = o->qps + 8;
	ep->port = port;
	ep->nic = rfw_nic_create(port->q[qid], &nc);
	if (ep->nic == NULL)
		die("rfw_nic_create", rte_errno);
	ep->pd = rfw_alloc_pd(rfw_nic_dev(ep->nic));
	ep->cq = rfw_create_cq(rfw_nic_dev(ep->nic), 4 * MAX_QPS * o->depth);
	if (ep->pd == NULL || ep->cq == NULL)
		die("PD/CQ", errno);
}

static void qp_join(struct rfw_ep *s, struct rfw_qp *qp, const struct rfw_ep *peer,
                    const struct rfw_qp *peer_qp, bool resolve, uint32_t mtu)
{
	struct rfw_ep_path pp;
	const char *stage;
	int rc;

	rfw_ep_path_local(&pp, peer, peer_qp, rfw_ep_mtu(mtu), 14);
	if (resolve)
		memset(&pp.mac, 0, sizeof(pp.mac)); /* ARP it through the port's table */
	rc = rfw_ep_qp_connect(s->nic, qp, &pp, &stage);
	if (rc != 0)
		die(stage, rc);
}

static struct rfw_mr *reg(struct rfw_pd *pd, size_t len, uint8_t **mem)
{
	struct rfw_mr *mr;

	*mem = aligned_alloc(64, RTE_ALIGN_CEIL(len, 64));
	if (*mem == NULL)
		die("memory", ENOMEM);
	memset(*mem, 0, len);
	mr = rfw_reg_mr(pd, *mem, len, RFW_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		die("rfw_reg_mr", errno);
	return mr;
}

static void post_recv_slot(struct lane *L, struct pair *p, uint32_t in_idx, uint32_t slot)
{
	uint32_t size = L->R->o.size;
	struct rfw_sge sge = {.addr = (uintptr_t)(p->dst + (size_t)slot * size),
	                      .length = size,
	                      .lkey = rfw_mr_lkey(p->dst_mr)};
	struct rfw_recv_wr wr = {
	    .wr_id = (uint64_t)in_idx << 32 | slot, .sg_list = &sge, .num_sge = 1};
	struct rfw_recv_wr *bad;
	int rc = rfw_post_recv(p->b, &wr, &bad, rfw_nic_now_ns(L->b.nic));

	if (rc != 0)
		die("rfw_post_recv", rc);
}

/* Pair @gi: a QP on A's lane @la, its peer on B's lane @lb; both sides' slots registered. */
static void pair_make(struct run *R, uint32_t gi, struct lane *la, struct lane *lb)
{
	const struct opts *o = &R->o;
	struct pair *p = &R->pairs[gi];
	const char *stage;
	unsigned acc = RFW_ACCESS_LOCAL_WRITE;
	uint32_t in_idx = lb->nin++;

	p->gi = gi;
	p->a_nic = la->a.nic;
	p->b_nic = lb->b.nic;
	p->a = rfw_ep_qp_create(la->a.pd, la->a.cq, o->depth, 1, acc, true, &stage);
	p->b = rfw_ep_qp_create(lb->b.pd, lb->b.cq, 1, o->depth, acc, true, &stage);
	if (p->a == NULL || p->b == NULL)
		die(stage, errno);
	qp_join(&la->a, p->a, &lb->b, p->b, o->resolve, o->mtu);
	qp_join(&lb->b, p->b, &la->a, p->a, o->resolve, o->mtu);
	/* Both parities of the pattern in A's slots: only the stamps change per message. */
	p->src_mr = reg(la->a.pd, 2 * (size_t)o->depth * o->size, &p->src);
	memcpy(p->src, R->pattern, 2 * (size_t)o->depth * o->size);
	p->dst_mr = reg(lb->b.pd, (size_t)o->depth * o->size, &p->dst);
	la->p[la->np++] = p;
	lb->in[in_idx] = p;
	for (uint32_t s = 0; s < o->depth; s++)
		post_recv_slot(lb, p, in_idx, s);
}

static void setup(struct run *R)
{
	const struct opts *o = &R->o;
	size_t plen = 2 * (size_t)o->depth * o->size;
	unsigned lc = rte_get_main_lcore();

	R->pattern = malloc(plen);
	R->pairs = calloc((size_t)o->nics * o->qps, sizeof(*R->pairs));
	if (R->pattern == NULL || R->pairs == NULL)
		die("memory", ENOMEM);
	rfw_pattern_fill(R->pattern, plen, 4791);
	if (o->eal_ports)
		ports_eal(R);
	else
		ports_make(R);
	for (uint32_t i = 0; i < o->nics; i++) {
		struct lane *L = &R->lane[i];

		L->R = R;
		L->qid = (uint16_t)i;
		L->lcore = lc;
		if (i + 1 < o->nics) /* (with no worker lcore it would search forever) */
			lc = rte_get_next_lcore(lc, 1, 0);
		ep_open(&L->a, R->pa, L->qid, o);
		ep_open(&L->b, R->pb, L->qid, o);
	}
	for (uint32_t i = 0; i < o->nics; i++)
		for (uint32_t j = 0; j < o->qps; j++)
			pair_make(R, i * o->qps + j, &R->lane[i],
			          &R->lane[o->cross ? (i + 1) % o->nics : i]);
}

/* ---- the lanes ---- */

static void lane_fail(struct lane *L, const char *fmt, uint64_t a, uint64_t b)
{
	if (L->errors++ == 0)
		snprintf(L->err, sizeof(L->err), fmt, a, b);
}

static void post_sends(struct lane *L)
{
	const struct opts *o = &L->R->o;
	uint64_t now = rfw_nic_now_ns(L->a.nic);

	for (uint32_t i = 0; i < L->np; i++) {
		struct pair *p = L->p[i];

		while (p->posted - p->done < o->depth) {
			uint64_t k = p->posted;
			uint8_t *src = p->src + (((k / o->depth) & 1) * o->depth + k % o->depth) *
			                            (size_t)o->size;
			struct rfw_sge sge = {.addr = (uintptr_t)src,
			                      .length = o->size,
			                      .lkey = rfw_mr_lkey(p->src_mr)};
			struct rfw_send_wr wr = {.wr_id = i,
			                         .sg_list = &sge,
			                         .num_sge = 1,
			                         .opcode = RFW_WR_SEND,
			                         .send_flags = RFW_SEND_SIGNALED};
			struct rfw_send_wr *bad;
			int rc;

			rfw_pattern_stamp(src, o->size, stamp_of(p->gi, k));
			rc = rfw_post_send(p->a, &wr, &bad, now);
			if (rc != 0) {
				lane_fail(L, "post_send on pair %" PRIu64 ": error %" PRIu64, p->gi,
				          (uint64_t)rc);
				break;
			}
			p->posted++;
		}
	}
}

static void reap_sends(struct lane *L)
{
	struct rfw_wc wc[RFW_MAX_BURST];
	int n = rfw_poll_cq(L->a.cq, RFW_MAX_BURST, wc);

	for (int i = 0; i < n; i++) {
		if (wc[i].status != RFW_WC_SUCCESS || wc[i].wr_id >= L->np) {
			lane_fail(L, "send completion status %" PRIu64 " on QP %" PRIu64,
			          (uint64_t)wc[i].status, wc[i].qp_num);
			continue;
		}
		L->p[wc[i].wr_id]->done++;
	}
}

static void reap_recvs(struct lane *L)
{
	const struct opts *o = &L->R->o;
	struct rfw_wc wc[RFW_MAX_BURST];
	int n = rfw_poll_cq(L->b.cq, RFW_MAX_BURST, wc);

	for (int i = 0; i < n; i++) {
		uint32_t in_idx = (uint32_t)(wc[i].wr_id >> 32), slot = (uint32_t)wc[i].wr_id;
		struct pair *p = in_idx < L->nin ? L->in[in_idx] : NULL;

		if (wc[i].status != RFW_WC_SUCCESS || p == NULL) {
			lane_fail(L, "receive completion status %" PRIu64 " on QP %" PRIu64,
			          (uint64_t)wc[i].status, wc[i].qp_num);
			continue;
		}
		/* RC delivers in order: message k lands in the k-th receive, slot k % depth. */
		if (slot != p->recvd % o->depth || wc[i].byte_len != o->size ||
		    !check(L->R, p, p->recvd, p->dst + (size_t)slot * o->size))
			lane_fail(L, "pair %" PRIu64 ": message %" PRIu64 " arrived wrong", p->gi,
			          p->recvd);
		p->recvd++;
		post_recv_slot(L, p, in_idx, slot);
	}
}

/* After the window: what this lane's senders posted, for their receivers' lanes. */
static void lane_finalize(struct lane *L)
{
	for (uint32_t i = 0; i < L->np; i++) {
		L->p[i]->final_posted = L->p[i]->posted;
		__atomic_store_n(&L->p[i]->a_final, 1, __ATOMIC_RELEASE);
	}
	for (uint32_t i = 0; i < L->nin; i++)
		L->in[i]->recvd_at_stop = L->in[i]->recvd;
	L->finalized = true;
}

static bool lane_drained(const struct lane *L)
{
	for (uint32_t i = 0; i < L->np; i++)
		if (L->p[i]->done != L->p[i]->posted)
			return false;
	for (uint32_t i = 0; i < L->nin; i++) {
		const struct pair *p = L->in[i];

		if (!__atomic_load_n(&p->a_final, __ATOMIC_ACQUIRE) || p->recvd != p->final_posted)
			return false;
	}
	return true;
}

/* Lane 0 (the main lcore) ends the window; every lane polls until all are drained. */
static int lane_main(void *arg)
{
	struct lane *L = arg;
	struct run *R = L->R;
	uint64_t hz = rte_get_tsc_hz(), window = (uint64_t)(R->o.seconds * (double)hz);
	uint64_t drain = (uint64_t)(DRAIN_S * (double)hz);

	for (;;) {
		uint64_t now = rte_rdtsc();

		rfw_nic_poll(L->a.nic);
		rfw_nic_poll(L->b.nic);
		reap_sends(L);
		reap_recvs(L);
		if (L->qid == 0 && !__atomic_load_n(&R->stop, __ATOMIC_RELAXED) &&
		    now - R->t0 >= window) {
			R->t_stop = now;
			__atomic_store_n(&R->stop, 1, __ATOMIC_RELEASE);
		}
		if (!__atomic_load_n(&R->stop, __ATOMIC_ACQUIRE)) {
			post_sends(L);
			continue;
		}
		if (!L->finalized)
			lane_finalize(L);
		if (!L->complete && lane_drained(L)) {
			L->complete = true;
			__atomic_fetch_add(&R->lanes_done, 1, __ATOMIC_RELEASE);
		}
		if (__atomic_load_n(&R->lanes_done, __ATOMIC_ACQUIRE) == R->o.nics)
			return 0;
		if (now - R->t0 >= window + drain) {
			lane_fail(
			    L,
			    "not drained %" PRIu64 " s after the window (%" PRIu64 " lanes were)",
			    (uint64_t)DRAIN_S, __atomic_load_n(&R->lanes_done, __ATOMIC_RELAXED));
			return 0;
		}
	}
}

/* ---- results ---- */

struct totals {
	uint64_t msgs, errors, unknown_qp, idle_pairs, lost, resolved, qps;
	uint64_t steered[2], steer_in[2], steer_full[2]; /* [A, B] */
	double secs;
	bool pass;
};

static uint64_t dev_ctr(struct rfw_ep *ep, enum rfw_counter c)
{
	uint64_t v[RFW_CNT__COUNT];

	rfw_dev_counters(rfw_nic_dev(ep->nic), v);
	return v[c];
}

static void totals(struct run *R, struct totals *t)
{
	const struct opts *o = &R->o;
	struct rfw_port *ports[2] = {R->pa, R->pb};

	memset(t, 0, sizeof(*t));
	t->secs = (double)(R->t_stop - R->t0) / (double)rte_get_tsc_hz();
	t->qps = (uint64_t)o->nics * o->qps;
	for (uint32_t i = 0; i < o->nics; i++) {
		struct lane *L = &R->lane[i];

		t->errors += L->errors;
		t->unknown_qp +=
		    dev_ctr(&L->a, RFW_CNT_rx_unknown_qp) + dev_ctr(&L->b, RFW_CNT_rx_unknown_qp);
		t->resolved += rfw_nic_ctr(L->a.nic, RFW_NIC_CTR_l2_resolved) +
		               rfw_nic_ctr(L->b.nic, RFW_NIC_CTR_l2_resolved);
	}
	for (uint64_t i = 0; i < t->qps; i++) {
		const struct pair *p = &R->pairs[i];

		t->msgs += p->recvd_at_stop;
		t->idle_pairs += p->recvd_at_stop == 0;
		t->lost += p->recvd != p->final_posted || p->done != p->posted;
	}
	for (int s = 0; s < 2; s++) {
		t->steered[s] = rfw_port_ctr(ports[s], RFW_PORT_CTR_rx_steered);
		t->steer_in[s] = rfw_port_ctr(ports[s], RFW_PORT_CTR_rx_steer_in);
		t->steer_full[s] = rfw_port_ctr(ports[s], RFW_PORT_CTR_rx_steer_full);
	}
	t->pass = t->errors == 0 && t->unknown_qp == 0 && t->idle_pairs == 0 && t->lost == 0 &&
	          (!o->cross || o->nics == 1 || (t->steered[0] > 0 && t->steered[1] > 0)) &&
	          (!o->resolve || t->resolved == 2 * t->qps);
}

static void report(const struct run *R, const struct totals *t)
{
	const struct opts *o = &R->o;
	double rate = (double)t->msgs / t->secs;

	printf("%s: %u NIC(s) per port on %u lcore(s), %u QPs each, %u B SENDs, depth %u%s%s\n",
	       PROG, o->nics, o->nics, o->qps, o->size, o->depth, o->cross ? ", crossed" : "",
	       !o->resolve ? ""
	       : o->ipv6   ? ", IPv6, MACs by ND"
	                   : ", MACs by ARP");
	printf("  %.3f s: %" PRIu64 " messages, %.3f M msg/s, %.3f Gb/s goodput (every byte "
	       "checked)\n",
	       t->secs, t->msgs, rate / 1e6, rate * o->size * 8 / 1e9);
	printf("  dispatched: A %" PRIu64 " out / %" PRIu64 " in, B %" PRIu64 " out / %" PRIu64
	       " in, dropped on full rings %" PRIu64 "\n",
	       t->steered[0], t->steer_in[0], t->steered[1], t->steer_in[1],
	       t->steer_full[0] + t->steer_full[1]);
	printf("  frames for a QP the NIC does not own: %" PRIu64
	       "; QPs resolved by ARP/ND: %" PRIu64 "/%" PRIu64 "\n",
	       t->unknown_qp, o->resolve ? t->resolved : 0, o->resolve ? 2 * t->qps : 0);
	for (uint32_t i = 0; i < o->nics; i++)
		if (R->lane[i].errors != 0)
			printf("  lane %u: %" PRIu64 " error(s), first: %s\n", i, R->lane[i].errors,
			       R->lane[i].err);
	if (t->idle_pairs != 0 || t->lost != 0)
		printf("  pairs without a message: %" PRIu64 "; pairs not drained: %" PRIu64 "\n",
		       t->idle_pairs, t->lost);
	printf("%s\n", t->pass ? "PASS" : "FAIL");
}

static int write_json(const struct run *R, const struct totals *t)
{
	const struct opts *o = &R->o;
	FILE *f = fopen(o->json, "w");
	double rate = (double)t->msgs / t->secs;

	if (f == NULL)
		return -errno;
	fprintf(f,
	        "{\"schema\": \"%s\", \"nics\": %u, \"lcores\": %u, \"qps_per_nic\": %u, "
	        "\"size\": %u, \"depth\": %u, \"cross\": %s, \"resolve\": %s, \"ipv6\": %s, ",
	        SCHEMA, o->nics, o->nics, o->qps, o->size, o->depth, o->cross ? "true" : "false",
	        o->resolve ? "true" : "false", o->ipv6 ? "true" : "false");
	fprintf(f,
	        "\"seconds\": %.6f, \"messages\": %" PRIu64 ", \"msg_rate\": %.1f, "
	        "\"goodput_gbps\": %.4f, \"verify_errors\": %" PRIu64 ", ",
	        t->secs, t->msgs, rate, rate * o->size * 8 / 1e9, t->errors);
	fprintf(f,
	        "\"rx_unknown_qp\": %" PRIu64 ", \"pairs_idle\": %" PRIu64
	        ", \"pairs_not_drained\": %" PRIu64 ", \"l2_resolved\": %" PRIu64 ", ",
	        t->unknown_qp, t->idle_pairs, t->lost, t->resolved);
	fprintf(f,
	        "\"ports\": {\"A\": {\"rx_steered\": %" PRIu64 ", \"rx_steer_in\": %" PRIu64
	        ", \"rx_steer_full\": %" PRIu64 "}, \"B\": {\"rx_steered\": %" PRIu64
	        ", \"rx_steer_in\": %" PRIu64 ", \"rx_steer_full\": %" PRIu64 "}}, ",
	        t->steered[0], t->steer_in[0], t->steer_full[0], t->steered[1], t->steer_in[1],
	        t->steer_full[1]);
	fprintf(f, "\"lanes\": [");
	for (uint32_t i = 0; i < o->nics; i++) {
		const struct lane *L = &R->lane[i];
		uint64_t m = 0;

		for (uint32_t j = 0; j < L->nin; j++)
			m += L->in[j]->recvd_at_stop;
		fprintf(f,
		        "%s{\"lcore\": %u, \"queue\": %u, \"messages_received\": %" PRIu64
		        ", \"errors\": %" PRIu64 "}",
		        i ? ", " : "", L->lcore, L->qid, m, L->errors);
	}
	fprintf(f, "], \"passed\": %s}\n", t->pass ? "true" : "false");
	return fclose(f) == 0 ? 0 : -errno;
}

static void teardown(struct run *R)
{
	for (uint64_t i = 0; i < (uint64_t)R->o.nics * R->o.qps; i++) {
		struct pair *p = &R->pairs[i];

		rfw_nic_qp_detach(p->a_nic, p->a);
		rfw_nic_qp_detach(p->b_nic, p->b);
		rfw_destroy_qp(p->a);
		rfw_destroy_qp(p->b);
		rfw_dereg_mr(p->src_mr);
		rfw_dereg_mr(p->dst_mr);
		free(p->src);
		free(p->dst);
	}
	for (uint32_t i = 0; i < R->o.nics; i++) {
		struct rfw_ep *e[2] = {&R->lane[i].a, &R->lane[i].b};

		for (int s = 0; s < 2; s++) {
			rfw_destroy_cq(e[s]->cq);
			rfw_dealloc_pd(e[s]->pd);
			rfw_nic_destroy(e[s]->nic);
		}
	}
	rfw_port_close(R->pa);
	rfw_port_close(R->pb);
	free(R->pairs);
	free(R->pattern);
}

int main(int argc, char **argv)
{
	static struct run R;
	struct totals t;
	int n = rfw_eal_init(argc, argv);

	if (n < 0)
		return 1;
	parse(argc - n, argv + n, &R.o);
	if (R.o.nics == 0)
		R.o.nics = RTE_MIN(rte_lcore_count(), (unsigned)RFW_MAX_QUEUES);
	if (R.o.nics > rte_lcore_count()) {
		fprintf(stderr, "%s: --nics %u needs as many lcores (EAL -l): %u given\n", PROG,
		        R.o.nics, rte_lcore_count());
		return RFW_OPT_EXIT_USAGE;
	}
	setup(&R);
	R.t0 = rte_rdtsc();
	for (uint32_t i = 1; i < R.o.nics; i++)
		if (rte_eal_remote_launch(lane_main, &R.lane[i], R.lane[i].lcore) != 0)
			die("rte_eal_remote_launch", EBUSY);
	lane_main(&R.lane[0]);
	rte_eal_mp_wait_lcore();
	totals(&R, &t);
	report(&R, &t);
	if (R.o.json != NULL && write_json(&R, &t) != 0)
		die(R.o.json, errno);
	teardown(&R);
	rfw_eal_cleanup();
	return t.pass ? 0 : 1;
}
