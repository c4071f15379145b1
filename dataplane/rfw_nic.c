/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software NIC: transport on a DPDK port queue, with a paced scheduler. See rfw_nic.h and
 * docs/nic.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "cc/pacer.h"
#include "wire/neigh_wire.h"
#include "dataplane/rfw_neigh.h"
#include "dataplane/rfw_nic.h"
#include "transport/estats.h"

/*
 * Everything in front of the BTH, built once per QP at attach time: Ethernet, at most one
 * 802.1Q tag, IPv4 (20) or IPv6 (40), UDP. The largest shape is 14 + 4 + 40 + 8 = 66 bytes.
 */
#define NIC_HDR_MAX (RFW_ETH_HLEN + RFW_VLAN_HLEN + RFW_IPV6_HLEN + RFW_UDP_HLEN)
/* Default 802.1p priority of tagged data frames, and of CNPs without a cc profile (mlx5's
 * default cnp_802p_prio is 6 too). */
#define NIC_PCP_DEFAULT     3
#define NIC_CNP_PCP_NO_PROF 6
/* How often QPs waiting for ARP/ND look at the neighbour table (the reply arrives through the
 * NIC's own RX burst; probes are re-sent by rfw_port_resolve on its own interval). */
#define NIC_RESOLVE_CHECK_NS 10000
/* Telemetry snapshots: QP slots looked at, and snapshots written, per poll iteration. */
#define NIC_PUB_SCAN  64
#define NIC_PUB_BATCH 8
/* Estats: rows published per window, the republication period (quantiles cost a histogram
 * scan each), in-flight WQEs a dump lists, and rows a telemetry reply carries (16 KB limit). */
#define NIC_ES_ROWS      256
#define NIC_ES_PUB_NS    100000000ull
#define NIC_ES_DUMP_WQES 64
#define NIC_ES_TEL_ROWS  64

/*
 * Request packets a QP may hold back for pacing. Responses are never held, but a QP parks
 * requests behind them; this bounds how much is committed to departure times computed at the
 * rate in force when they were produced.
 */
#define NIC_HOLD_MAX 32
/* Paced service asks the transport for more only while fewer than this many are parked, so a
 * rate cut takes effect within a couple of packets. */
#define NIC_HOLD_LOW 2

/*
 * Hashed timer wheel: slots of 2^WHEEL_SHIFT ns. Pacing departures and transport timers share
 * it; an entry beyond one lap stays in its slot and is skipped until its lap comes round, so
 * insert and remove are O(1) and a pass visits only the entries of the slots it crosses.
 */
#define WHEEL_SHIFT 8 /* 256 ns slots */
#define WHEEL_SLOTS 4096u
#define WHEEL_MASK  (WHEEL_SLOTS - 1)

struct wnode {
	struct wnode *next, *prev;
	uint64_t at; /* ns */
	bool armed;
	bool is_dep; /* a pacing departure (nic_qp.dep), else a transport timer (nic_qp.tmr) */
};

/*
 * What telemetry may read of one QP slot: written by the NIC lcore only (pub_write), read by
 * the telemetry thread under the slot's sequence counter (pub_read). The array of these lives
 * as long as the NIC, so a QP destroyed meanwhile leaves at worst a stale snapshot.
 */
struct nic_snap {
	uint64_t at_ns; /* NIC time of the snapshot */
	uint32_t qpn;
	uint32_t dest_qpn, sq_psn, rq_psn, path_mtu;
	uint8_t attached, state, transport_mode, l2;
	uint8_t ip_ver, vlan, pcp, dscp, cc, rp_state, paced;
	uint16_t vlan_id, udp_sport;
	uint8_t dst_mac[6];
	uint8_t src_ip[16], dst_ip[16];
	uint64_t rc_kbps, rt_kbps;
	uint32_t alpha;
	uint64_t rp_cnt[DCQCN_RP_CNT__COUNT];
	uint64_t np_cnt[DCQCN_NP_CNT__COUNT];
	uint64_t tcnt[RFW_CNT__COUNT]; /* the transport's per-QP counters */
};

struct nic_pub {
	uint32_t seq; /* odd while the lcore writes s */
	struct nic_snap s;
	/* Per-QP NIC counters, live: one writer (the lcore), 64-bit words, read racily. Reset at
	 * attach. */
	uint64_t ctr[RFW_NIC_QP_CTR__COUNT];
} __rte_cache_aligned;

/* The device counters (rfw_dev_counters walks the QPs: only the lcore may call it). */
struct nic_dev_pub {
	uint32_t seq;
	uint64_t at_ns;
	uint64_t cnt[RFW_CNT__COUNT];
} __rte_cache_aligned;

/* Estats rows of every attached QP, both windows, under a sequence counter (as nic_pub). */
struct nic_es_pub {
	uint32_t seq;
	uint64_t at_ns;
	uint32_t nrows[2]; /* [enum rfw_es_window] */
	bool have_last;
	bool truncated;
	struct rfw_es_row rows[2][NIC_ES_ROWS];
};

struct nic_qp {
	struct rfw_qp *qp;
	struct rfw_nic *nic;
	struct nic_qp *rnext; /* ready list */
	uint64_t *ctr;        /* the slot's live counters (struct nic_pub) */
	bool in_ready;
	bool cc;
	uint16_t held_head, held_n;
	struct wnode dep; /* departure of the first parked packet */
	struct wnode tmr; /* transport timer (rfw_qp_next_deadline) */
	uint8_t hdr[NIC_HDR_MAX + 6] __rte_aligned(8);
	uint8_t hdr_len, ip_off, udp_off, ip_ver;
	uint8_t cnp_tos;
	uint8_t l2; /* enum rfw_nic_l2 */
	bool vlan;
	uint16_t data_tci, cnp_tci;
	uint64_t probe_tsc; /* last tagged ARP/ND probe (nq_tagged_probe) */
	uint8_t dst_ip[16];
	struct rte_mbuf *held[NIC_HOLD_MAX];
	uint64_t held_dep[NIC_HOLD_MAX];
	struct cc_pacer pacer;
	struct dcqcn_rp rp;
	struct dcqcn_np np;
} __rte_cache_aligned;

struct rfw_nic {
	struct rfw_queue *q;
	struct rfw_dev *dev;
	struct rte_mempool *pool;
	uint64_t now_ns;
	uint64_t tsc0;
	uint64_t ns_mult;    /* ns per TSC cycle, 32.32 fixed point */
	uint64_t wheel_tick; /* last tick processed */
	uint32_t qpn_base, max_qp;
	uint32_t quantum;
	uint32_t pacer_burst_ns;
	uint8_t data_tos;
	uint8_t data_pcp;
	bool vlan;
	bool udp6_csum;
	uint16_t vlan_id;
	int id; /* telemetry registry slot */
	uint32_t n_resolving;
	uint64_t resolve_next_ns;
	uint64_t snapshot_ns; /* publication interval */
	uint64_t pub_next_ns;
	uint32_t pub_cursor;
	const struct dcqcn_prof *cc_prof;
	struct rte_mbuf *stage; /* the mbuf between tx_alloc and tx_send */
	unsigned sent;          /* frames queued for TX in this poll */
	struct nic_qp *rhead, *rtail;
	struct nic_qp **qps; /* by qpn - qpn_base */
	struct rfw_ether_addr_pad {
		uint8_t b[6];
	} src_mac;
	uint8_t gid[16];
	uint8_t ip6[16]; /* the port's IPv6 address, if it has one */
	uint64_t ctr[RFW_NIC_CTR__COUNT];
	struct nic_pub *pub; /* [max_qp], by qpn - qpn_base */
	struct nic_dev_pub dev_pub;
	/* Estats (docs/estats.md); es_pub is NULL when off */
	struct nic_es_pub *es_pub;
	uint64_t es_interval_ns, es_threshold_ns;
	uint64_t es_pub_next_ns;
	char es_dump_dir[256];
	struct wnode wheel[WHEEL_SLOTS]; /* list heads (sentinels) */
} __rte_cache_aligned;

static const char *const nic_ctr_names[] = {
#define X(name, doc) #name,
    RFW_FOREACH_NIC_CTR(X)
#undef X
};
static const char *const nic_ctr_docs[] = {
#define X(name, doc) doc,
    RFW_FOREACH_NIC_CTR(X)
#undef X
};
_Static_assert(RTE_DIM(nic_ctr_names) == RFW_NIC_CTR__COUNT, "counter names");

const char *rfw_nic_ctr_name(enum rfw_nic_ctr c)
{
	return (unsigned)c < RFW_NIC_CTR__COUNT ? nic_ctr_names[c] : NULL;
}

const char *rfw_nic_ctr_doc(enum rfw_nic_ctr c)
{
	return (unsigned)c < RFW_NIC_CTR__COUNT ? nic_ctr_docs[c] : NULL;
}

static const char *const nic_qp_ctr_names[] = {
#define X(name, doc) #name,
    RFW_FOREACH_NIC_QP_CTR(X)
#undef X
};
static const char *const nic_qp_ctr_docs[] = {
#define X(name, doc) doc,
    RFW_FOREACH_NIC_QP_CTR(X)
#undef X
};
_Static_assert(RTE_DIM(nic_qp_ctr_names) == RFW_NIC_QP_CTR__COUNT, "per-QP counter names");

const char *rfw_nic_qp_ctr_name(enum rfw_nic_qp_ctr c)
{
	return (unsigned)c < RFW_NIC_QP_CTR__COUNT ? nic_qp_ctr_names[c] : NULL;
}

const char *rfw_nic_qp_ctr_doc(enum rfw_nic_qp_ctr c)
{
	return (unsigned)c < RFW_NIC_QP_CTR__COUNT ? nic_qp_ctr_docs[c] : NULL;
}

static const char *const nic_l2_names[] = {
    [RFW_NIC_L2_READY] = "ready",
    [RFW_NIC_L2_RESOLVING] = "resolving",
    [RFW_NIC_L2_FAILED] = "failed",
};

const char *rfw_nic_l2_name(enum rfw_nic_l2 s)
{
	return (unsigned)s < RTE_DIM(nic_l2_names) ? nic_l2_names[s] : NULL;
}

/* ---- time ---- */

static inline uint64_t nic_clock(const struct rfw_nic *nic)
{
	return (uint64_t)(((unsigned __int128)(rte_rdtsc() - nic->tsc0) * nic->ns_mult) >> 32);
}

uint64_t rfw_nic_clock_ns(struct rfw_nic *nic)
{
	return nic_clock(nic);
}

uint64_t rfw_nic_now_ns(const struct rfw_nic *nic)
{
	return nic->now_ns;
}

/* ---- timer wheel ---- */

static inline void wheel_remove(struct wnode *n)
{
	if (!n->armed)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->armed = false;
}

static inline void wheel_insert(struct rfw_nic *nic, struct wnode *n, uint64_t at)
{
	uint64_t tick = at >> WHEEL_SHIFT;
	struct wnode *head;

	wheel_remove(n);
	/* Never into a slot already processed: it would wait a whole lap. */
	if (tick <= nic->wheel_tick)
		tick = nic->wheel_tick + 1;
	head = &nic->wheel[tick & WHEEL_MASK];
	n->at = at;
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
	n->armed = true;
}

static inline struct nic_qp *dep_owner(struct wnode *n)
{
	return (struct nic_qp *)((char *)n - offsetof(struct nic_qp, dep));
}
static inline struct nic_qp *tmr_owner(struct wnode *n)
{
	return (struct nic_qp *)((char *)n - offsetof(struct nic_qp, tmr));
}

/* ---- ready list ---- */

static inline void ready_push(struct rfw_nic *nic, struct nic_qp *nq)
{
	if (nq->in_ready)
		return;
	nq->in_ready = true;
	nq->rnext = NULL;
	if (nic->rtail != NULL)
		nic->rtail->rnext = nq;
	else
		nic->rhead = nq;
	nic->rtail = nq;
}

static inline struct nic_qp *ready_pop(struct rfw_nic *nic)
{
	struct nic_qp *nq = nic->rhead;

	if (nq == NULL)
		return NULL;
	nic->rhead = nq->rnext;
	if (nic->rhead == NULL)
		nic->rtail = NULL;
	nq->in_ready = false;
	return nq;
}

/*
 * Process every slot whose tick has ended: a slot is visited once per lap, so an entry due later
 * in the current tick must not be looked at yet (it would wait a whole lap). Due entries fire at
 * most one slot (256 ns) late.
 */
static void wheel_advance(struct rfw_nic *nic)
{
	uint64_t cur = nic->now_ns >> WHEEL_SHIFT;
	uint64_t to = cur != 0 ? cur - 1 : 0;
	uint64_t t = nic->wheel_tick;
	unsigned steps = 0;

	while (t < to && steps < WHEEL_SLOTS) {
		struct wnode *head = &nic->wheel[++t & WHEEL_MASK];
		struct wnode *n = head->next;

		steps++;
		while (n != head) {
			struct wnode *next = n->next;

			if (n->at <= nic->now_ns) {
				struct nic_qp *nq;

				wheel_remove(n);
				/* The node says what it is: dep and tmr sit at different offsets in
				 * struct nic_qp, so the owner is found only once the kind is known.
				 */
				if (n->is_dep) {
					nq = dep_owner(n);
					ready_push(nic, nq);
				} else {
					nq = tmr_owner(n);
					nic->ctr[RFW_NIC_CTR_timer_fired]++;
					rfw_qp_timer(nq->qp, nic->now_ns);
					ready_push(nic, nq);
				}
			}
			n = next;
		}
	}
	/* After a long stall every slot has been visited once: jump to now. */
	nic->wheel_tick = to > t ? to : t;
}

/* ---- congestion control hooks (cc/dcqcn.h behind transport's rfw_cc_ops) ---- */

static void cc_on_tx(void *cc, uint64_t now_ns, uint32_t bytes)
{
	dcqcn_rp_on_tx(&((struct nic_qp *)cc)->rp, bytes, now_ns);
}

static bool cc_np_on_ce(void *cc, uint64_t now_ns)
{
	struct nic_qp *nq = cc;
	/* np_ecn_marked_roce_packets is counted at RX, with or without a profile. */
	return dcqcn_np_on_ce(&nq->np, now_ns);
}

static void cc_rp_on_cnp(void *cc, uint64_t now_ns)
{
	struct nic_qp *nq = cc;

	nq->nic->ctr[RFW_NIC_CTR_rp_cnp_handled]++;
	nq->ctr[RFW_NIC_QP_CTR_rp_cnp_handled]++;
	dcqcn_rp_on_cnp(&nq->rp, now_ns);
}

/*
 * The rate to pace a request at, 0 for none. A reaction point at line rate (no CNP yet, or back
 * at the maximum) has no rate limiter, as in DCQCN (SIGCOMM'15 3.1) and mlx5: pacing at line
 * rate would only turn the poll loop's bursts into parked packets.
 */
static inline uint64_t nq_rate_kbps(struct nic_qp *nq, uint64_t now_ns)
{
	if (!nq->cc)
		return 0;
	if (now_ns >= dcqcn_rp_next_deadline(&nq->rp))
		dcqcn_rp_on_timer(&nq->rp, now_ns);
	if (nq->rp.state == DCQCN_RP_IDLE || nq->rp.state == DCQCN_RP_AT_MAX)
		return 0;
	return dcqcn_rp_rate_kbps(&nq->rp);
}

static uint64_t cc_rate_bps(void *cc, uint64_t now_ns)
{
	return nq_rate_kbps(cc, now_ns) * 1000;
}

static const struct rfw_cc_ops nic_cc_ops = {
    .on_tx = cc_on_tx,
    .np_on_ce = cc_np_on_ce,
    .rp_on_cnp = cc_rp_on_cnp,
    .rate_bps = cc_rate_bps,
};

/* ---- packets out ---- */

static inline struct nic_qp *nic_qp_of(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	uint32_t i = rfw_qp_num(qp) - nic->qpn_base;

	return i < nic->max_qp ? nic->qps[i] : NULL;
}

static uint8_t *io_tx_alloc(void *io_ctx, struct rfw_qp *qp, uint32_t len)
{
	struct rfw_nic *nic = io_ctx;
	struct nic_qp *nq = nic_qp_of(nic, qp);
	struct rte_mbuf *m;

	/* A full hold queue stops the burst: the QP continues at its next turn. */
	if (unlikely(nq == NULL || nq->held_n == NIC_HOLD_MAX))
		return NULL;
	if (unlikely(nq->hdr_len + len + RFW_ICRC_LEN > RFW_FRAME_MAX)) {
		nic->ctr[RFW_NIC_CTR_tx_too_big]++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(nic->pool);
	if (unlikely(m == NULL)) {
		nic->ctr[RFW_NIC_CTR_tx_no_mbuf]++;
		return NULL;
	}
	nic->stage = m;
	return rte_pktmbuf_mtod(m, uint8_t *) + nq->hdr_len;
}

/* RC response opcodes (READ responses, ACK, atomic ACK) and CNP: never paced. */
static inline bool opcode_is_response(uint8_t op)
{
	return (op >= RFW_OP_RC_RDMA_READ_RESPONSE_FIRST && op <= RFW_OP_RC_ATOMIC_ACKNOWLEDGE) ||
	       op == RFW_OP_CNP;
}

/*
 * Template copy, then the per-packet fields: lengths (IPv4 total length and header checksum,
 * or IPv6 payload length; UDP length), the CNP's DSCP/ECN and PCP, the ICRC and, for IPv6 when
 * configured, the UDP checksum (it covers the ICRC, so it comes last; the ICRC masks it).
 */
static inline void nq_finish(const struct rfw_nic *nic, const struct nic_qp *nq, uint8_t *f,
                             uint32_t len, bool cnp)
{
	uint8_t *ip = f + nq->ip_off;
	uint8_t *udp = f + nq->udp_off;
	uint32_t udp_len = RFW_UDP_HLEN + len + RFW_ICRC_LEN;
	uint32_t crc;

	memcpy(f, nq->hdr, nq->hdr_len);
	if (unlikely(cnp) && nq->vlan)
		rfw_put_be16(f + RFW_ETH_HLEN, nq->cnp_tci); /* the TCI follows the TPID */
	if (nq->ip_ver == 4) {
		struct rte_ipv4_hdr *ih = (struct rte_ipv4_hdr *)ip;

		ih->total_length = rte_cpu_to_be_16((uint16_t)(RFW_IPV4_HLEN + udp_len));
		if (unlikely(cnp))
			ih->type_of_service = nq->cnp_tos;
		ih->hdr_checksum = 0;
		ih->hdr_checksum = rte_ipv4_cksum(ih);
	} else {
		rfw_put_be16(ip + 4, (uint16_t)udp_len);
		if (unlikely(cnp)) {
			uint32_t w = rfw_get_be32(ip);

			rfw_put_be32(ip, (w & ~(0xffu << 20)) | (uint32_t)nq->cnp_tos << 20);
		}
	}
	rfw_put_be16(udp + 4, (uint16_t)udp_len);
	crc = rfw_icrc_compute(ip, (size_t)(udp - ip) + RFW_UDP_HLEN + len, nq->ip_ver);
	/* The ICRC goes on the wire least significant byte first (as rfw_frame_finalize). */
	crc = rte_cpu_to_le_32(crc);
	memcpy(udp + RFW_UDP_HLEN + len, &crc, RFW_ICRC_LEN);
	if (nq->ip_ver == 6 && nic->udp6_csum) {
		uint16_t c;

		rfw_put_be16(udp + 6, 0);
		c = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, udp);
		/* rte_ipv6_udptcp_cksum already maps 0 to 0xffff for UDP; kept explicit. */
		rfw_put_be16(udp + 6, rte_be_to_cpu_16(c) != 0 ? rte_be_to_cpu_16(c) : 0xffff);
	}
}

static void io_tx_send(void *io_ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len)
{
	struct rfw_nic *nic = io_ctx;
	struct nic_qp *nq = nic_qp_of(nic, qp);
	struct rte_mbuf *m = nic->stage;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t op = buf[0];
	bool cnp = op == RFW_OP_CNP;
	uint64_t rate;

	nic->stage = NULL;
	nq_finish(nic, nq, f, len, cnp);
	if (unlikely(cnp)) {
		nic->ctr[RFW_NIC_CTR_np_cnp_sent]++;
		nq->ctr[RFW_NIC_QP_CTR_np_cnp_sent]++;
	}
	m->data_len = (uint16_t)(nq->hdr_len + len + RFW_ICRC_LEN);
	m->pkt_len = m->data_len;
	nic->ctr[RFW_NIC_CTR_tx_pkts]++;
	nic->ctr[RFW_NIC_CTR_tx_bytes] += m->pkt_len;
	nq->ctr[RFW_NIC_QP_CTR_tx_pkts]++;
	nq->ctr[RFW_NIC_QP_CTR_tx_bytes] += m->pkt_len;

	rate = opcode_is_response(op) ? 0 : nq_rate_kbps(nq, nic->now_ns);
	/*
	 * Requests already parked go first (PSN order), even if this one could leave - also when
	 * the rate recovered to line rate meanwhile (unpaced): overtaking them would look like a
	 * PSN gap to the responder and cost a go-back-N round.
	 */
	if (rate != 0 || (!opcode_is_response(op) && nq->held_n != 0)) {
		uint64_t dep = rate != 0
		                   ? cc_pacer_depart(&nq->pacer, nic->now_ns, m->pkt_len, rate)
		                   : nic->now_ns;

		if (dep > nic->now_ns || nq->held_n != 0) {
			unsigned slot = (nq->held_head + nq->held_n) % NIC_HOLD_MAX;

			nq->held[slot] = m;
			nq->held_dep[slot] = dep;
			nq->held_n++;
			nic->ctr[RFW_NIC_CTR_tx_paced_holds]++;
			nq->ctr[RFW_NIC_QP_CTR_tx_paced_holds]++;
			return;
		}
	}
	rfw_tx_one(nic->q, m);
	nic->sent++;
}

static const struct rfw_io_ops nic_io_ops = {.tx_alloc = io_tx_alloc, .tx_send = io_tx_send};

/* ---- scheduler ---- */

static inline void nq_rearm_timer(struct rfw_nic *nic, struct nic_qp *nq)
{
	uint64_t d = rfw_qp_next_deadline(nq->qp);

	if (d == UINT64_MAX)
		wheel_remove(&nq->tmr);
	else if (!nq->tmr.armed || nq->tmr.at != d)
		wheel_insert(nic, &nq->tmr, d);
}

/* One turn of a ready QP: parked packets that are due, then new packets from the transport. */
static void nq_service(struct rfw_nic *nic, struct nic_qp *nq)
{
	uint64_t now = nic->now_ns;
	unsigned want;

	nic->ctr[RFW_NIC_CTR_sched_rounds]++;
	/* No MAC yet (or never): the transport keeps the packets; resolution re-queues the QP. */
	if (unlikely(nq->l2 != RFW_NIC_L2_READY)) {
		nq->ctr[RFW_NIC_QP_CTR_l2_wait_turns]++;
		nq_rearm_timer(nic, nq);
		return;
	}
	while (nq->held_n != 0 && nq->held_dep[nq->held_head] <= now) {
		rfw_tx_one(nic->q, nq->held[nq->held_head]);
		nic->sent++;
		nq->held_head = (uint16_t)((nq->held_head + 1) % NIC_HOLD_MAX);
		nq->held_n--;
	}
	/*
	 * With packets parked, still call the transport so that responses and CNPs leave now
	 * (they come before requests in every burst); requests it produces join the hold queue,
	 * which bounds the call.
	 */
	want = nq->held_n < NIC_HOLD_LOW ? nic->quantum : (unsigned)(NIC_HOLD_MAX - nq->held_n);
	if (want > nic->quantum)
		want = nic->quantum;
	if (want != 0 && rfw_qp_has_work(nq->qp, now))
		rfw_qp_tx_burst(nq->qp, want, now);

	if (nq->held_n != 0)
		wheel_insert(nic, &nq->dep, nq->held_dep[nq->held_head]);
	else if (rfw_qp_has_work(nq->qp, now))
		ready_push(nic, nq);
	nq_rearm_timer(nic, nq);
}

/* ---- peer MAC resolution (ARP / ND through the port's neighbour table) ---- */

static void nq_set_mac(struct nic_qp *nq, const struct rte_ether_addr *mac)
{
	memcpy(nq->hdr, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
}

/*
 * The port's probes (rfw_port_resolve) are untagged; a peer reachable only on the QP's VLAN
 * would never see them. So a tagged QP also sends its own probe on its VLAN (same PCP as its
 * data), at most once per neigh_retrans_ms; the reply, tagged or not, is learnt by the port's
 * RX path into the entry rfw_port_resolve created, and the next look-up finds it.
 */
static void nq_tagged_probe(struct rfw_nic *nic, struct nic_qp *nq, uint64_t tsc)
{
	static const uint8_t zero[6];
	const struct rfw_port *p = nic->q->port;
	uint8_t buf[RFW_NEIGH_FRAME_MAX];
	struct rfw_l2 l2 = {0};
	struct rte_mbuf *m;
	char *d;
	size_t len;

	if (!nq->vlan || (nq->probe_tsc != 0 && tsc - nq->probe_tsc < p->neigh->retrans_tsc))
		return;
	nq->probe_tsc = tsc;
	memcpy(l2.src, p->id.mac.addr_bytes, 6);
	l2.nvlan = 1;
	l2.vlan_tci[0] = nq->data_tci;
	l2.vlan_tpid[0] = RFW_ETHERTYPE_VLAN;
	if (nq->ip_ver == 4) {
		memset(l2.dst, 0xff, 6);
		len = rfw_arp_build(buf, sizeof(buf), &l2, 1, p->id.mac.addr_bytes, p->id.ip4, zero,
		                    rfw_get_be32(nq->dst_ip + 12));
	} else {
		uint8_t sn[16];

		rfw_ip6_solicited_node(sn, nq->dst_ip);
		rfw_ip6_mcast_mac(l2.dst, sn);
		len = rfw_nd_build_ns(buf, sizeof(buf), &l2, p->id.ip6, sn, nq->dst_ip);
	}
	if (len == 0)
		return;
	m = rte_pktmbuf_alloc(nic->pool);
	if (m == NULL) {
		nic->ctr[RFW_NIC_CTR_tx_no_mbuf]++;
		return;
	}
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(d, buf, len);
	rfw_tx_one(nic->q, m);
	nic->sent++;
	nic->ctr[RFW_NIC_CTR_l2_tagged_probes]++;
}

/*
 * One look at the neighbour table for a resolving QP. rfw_port_resolve re-sends the probe
 * once per neigh_retrans_ms and gives up after neigh_max_probes: then the QP goes to ERR
 * (IBA 10.3.1: every outstanding WR completes with RFW_WC_WR_FLUSH_ERR) and stays FAILED.
 */
static void nq_resolve(struct rfw_nic *nic, struct nic_qp *nq, uint64_t tsc)
{
	struct rte_ether_addr mac;
	int rc = rfw_port_resolve(nic->q, nq->dst_ip, tsc, &mac);

	if (rc == -EAGAIN) {
		nq_tagged_probe(nic, nq, tsc);
		return;
	}
	nic->n_resolving--;
	if (rc == 0) {
		nq_set_mac(nq, &mac);
		nq->l2 = RFW_NIC_L2_READY;
		nic->ctr[RFW_NIC_CTR_l2_resolved]++;
		ready_push(nic, nq);
	} else {
		struct rfw_qp_attr a = {.qp_state = RFW_QPS_ERR};

		nq->l2 = RFW_NIC_L2_FAILED;
		nic->ctr[RFW_NIC_CTR_l2_resolve_failed]++;
		(void)rfw_modify_qp(nq->qp, &a, RFW_QP_STATE);
	}
}

static void nic_resolve_pending(struct rfw_nic *nic, uint64_t tsc)
{
	for (uint32_t i = 0; i < nic->max_qp && nic->n_resolving != 0; i++) {
		struct nic_qp *nq = nic->qps[i];

		if (nq != NULL && nq->l2 == RFW_NIC_L2_RESOLVING)
			nq_resolve(nic, nq, tsc);
	}
	nic->resolve_next_ns = nic->now_ns + NIC_RESOLVE_CHECK_NS;
}

/* ---- telemetry snapshots (written here, read by the telemetry thread) ---- */

static void pub_write(struct rfw_nic *nic, uint32_t i)
{
	struct nic_pub *p = &nic->pub[i];
	const struct nic_qp *nq = nic->qps[i];
	struct nic_snap *s = &p->s;
	uint32_t sn = p->seq;

	__atomic_store_n(&p->seq, sn + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->at_ns = nic->now_ns;
	s->attached = nq != NULL;
	if (nq != NULL) {
		struct rfw_qp_attr a;

		(void)rfw_query_qp(nq->qp, &a);
		s->qpn = rfw_qp_num(nq->qp);
		s->state = (uint8_t)a.qp_state;
		s->transport_mode = (uint8_t)a.transport_mode;
		s->path_mtu = rfw_mtu_to_bytes(a.path_mtu);
		s->dest_qpn = a.dest_qp_num;
		s->sq_psn = a.sq_psn;
		s->rq_psn = a.rq_psn;
		s->l2 = nq->l2;
		s->ip_ver = nq->ip_ver;
		s->vlan = nq->vlan;
		s->vlan_id = nq->data_tci & 0xfff;
		s->pcp = (uint8_t)(nq->data_tci >> 13);
		s->dscp = nic->data_tos >> 2;
		s->udp_sport = rfw_get_be16(nq->hdr + nq->udp_off);
		memcpy(s->dst_mac, nq->hdr, 6);
		if (nq->ip_ver == 4) {
			rfw_ip4_to_mapped(s->src_ip, rfw_get_be32(nq->hdr + nq->ip_off + 12));
			rfw_ip4_to_mapped(s->dst_ip, rfw_get_be32(nq->hdr + nq->ip_off + 16));
		} else {
			memcpy(s->src_ip, nq->hdr + nq->ip_off + 8, 16);
			memcpy(s->dst_ip, nq->hdr + nq->ip_off + 24, 16);
		}
		s->cc = nq->cc;
		if (nq->cc) {
			s->rp_state = nq->rp.state;
			s->paced = nq->rp.state != DCQCN_RP_IDLE && nq->rp.state != DCQCN_RP_AT_MAX;
			s->rc_kbps = dcqcn_rp_rate_kbps(&nq->rp);
			s->rt_kbps = dcqcn_rp_target_kbps(&nq->rp);
			s->alpha = dcqcn_rp_alpha(&nq->rp);
			memcpy(s->rp_cnt, nq->rp.cnt, sizeof(s->rp_cnt));
			memcpy(s->np_cnt, nq->np.cnt, sizeof(s->np_cnt));
		}
		rfw_qp_counters(nq->qp, s->tcnt);
	}
	__atomic_store_n(&p->seq, sn + 2, __ATOMIC_RELEASE);
	nic->ctr[RFW_NIC_CTR_snapshots]++;
}

static void pub_dev(struct rfw_nic *nic)
{
	struct nic_dev_pub *p = &nic->dev_pub;
	uint32_t sn = p->seq;

	__atomic_store_n(&p->seq, sn + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	p->at_ns = nic->now_ns;
	rfw_dev_counters(nic->dev, p->cnt);
	__atomic_store_n(&p->seq, sn + 2, __ATOMIC_RELEASE);
}

/* ---- Estats: publication and trigger dumps (slow path) ---- */

static void es_json_counters(FILE *f, const char *key, const uint64_t *v, unsigned n,
                             const char *(*name)(unsigned))
{
	fprintf(f, "\"%s\": {", key);
	for (unsigned k = 0; k < n; k++)
		fprintf(f, "%s\"%s\": %lu", k ? ", " : "", name(k), (unsigned long)v[k]);
	fprintf(f, "}");
}
static const char *es_tcnt_name(unsigned k)
{
	return rfw_counter_name((enum rfw_counter)k);
}
static const char *es_nic_qp_ctr_name(unsigned k)
{
	return rfw_nic_qp_ctr_name((enum rfw_nic_qp_ctr)k);
}
static const char *es_rp_cnt_name(unsigned k)
{
	return dcqcn_rp_counter_name((enum dcqcn_rp_counter)k);
}

/*
 * A QP crossed the threshold: write its state as JSON (schema rocefw.estats.dump/1) to
 * <dump dir>/rocefw-estats-nic<N>-qp<QPN>-<at_ns>.json. From the poll loop's slow path
 * (the publication step), at most once per QP per interval (the transport rate-limits).
 */
static void es_dump(struct rfw_nic *nic, const struct nic_qp *nq, const struct rfw_es_trigger *tr)
{
	static const char *const wstate[] = {"posted", "pending", "done"};
	struct rfw_es_wqe w[NIC_ES_DUMP_WQES];
	struct rfw_es_qp_state st;
	struct rfw_qp_attr a;
	uint64_t tcnt[RFW_CNT__COUNT];
	char path[512], tmp[520];
	int nw, rc;
	FILE *f;

	rc = snprintf(path, sizeof(path), "%s/rocefw-estats-nic%d-qp%u-%lu.json", nic->es_dump_dir,
	              nic->id, rfw_qp_num(nq->qp), (unsigned long)tr->at_ns);
	if (rc < 0 || (size_t)rc >= sizeof(path)) {
		nic->ctr[RFW_NIC_CTR_estats_dump_errors]++;
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL) {
		nic->ctr[RFW_NIC_CTR_estats_dump_errors]++;
		return;
	}
	(void)rfw_query_qp(nq->qp, &a);
	nw = rfw_qp_estats_state(nq->qp, &st, w, NIC_ES_DUMP_WQES);
	rfw_qp_counters(nq->qp, tcnt);
	fprintf(
	    f,
	    "{\"schema\": \"rocefw.estats.dump/1\", \"nic\": %d, \"qpn\": %u, \"now_ns\": %lu,\n",
	    nic->id, rfw_qp_num(nq->qp), (unsigned long)nic->now_ns);
	fprintf(f,
	        " \"trigger\": {\"stage\": \"%s\", \"latency_ns\": %lu, \"threshold_ns\": %lu, "
	        "\"at_ns\": %lu, \"op\": \"%s\", \"status\": \"%s\", \"wr_id\": %lu",
	        rfw_es_stage_name(tr->stage), (unsigned long)tr->latency_ns,
	        (unsigned long)nic->es_threshold_ns, (unsigned long)tr->at_ns,
	        rfw_es_op_name(tr->op), rfw_es_status_name(tr->status), (unsigned long)tr->wr_id);
	for (unsigned k = 0; k < 6; k++)
		fprintf(f, ", \"t%u_ns\": %lu", k + 1, (unsigned long)tr->t[k]);
	fprintf(f, "},\n");
	fprintf(f,
	        " \"qp\": {\"state\": \"%s\", \"transport_mode\": \"%s\", \"path_mtu\": %u, "
	        "\"dest_qpn\": %u, \"sq_psn\": %u, \"rq_psn\": %u},\n",
	        rfw_qp_state_str(a.qp_state), a.transport_mode == RFW_TRANSPORT_SR ? "sr" : "gbn",
	        rfw_mtu_to_bytes(a.path_mtu), a.dest_qp_num, a.sq_psn, a.rq_psn);
	fprintf(f,
	        " \"psn\": {\"next_psn\": %u, \"acked_psn\": %u, \"high_psn\": %u, \"epsn\": %u, "
	        "\"msn\": %u, \"sq_outstanding\": %u, \"retry_left\": %u, \"rnr_left\": %u, "
	        "\"retrying\": %s, \"rnr_wait\": %s, \"ack_timer_ns\": %lu},\n",
	        st.next_psn, st.acked_psn, st.high_psn, st.epsn, st.msn, st.sq_outstanding,
	        st.retry_left, st.rnr_left, st.retrying ? "true" : "false",
	        st.rnr_wait ? "true" : "false", (unsigned long)st.ack_timer_ns);
	fprintf(f, " \"inflight\": [");
	for (int i = 0; i < nw; i++)
		fprintf(f,
		        "%s\n  {\"wr_id\": %lu, \"op\": \"%s\", \"state\": \"%s\", \"length\": %u, "
		        "\"first_psn\": %d, \"last_psn\": %d, \"t1_ns\": %lu, \"t2_ns\": %lu, "
		        "\"t3_ns\": %lu}",
		        i ? "," : "", (unsigned long)w[i].wr_id, rfw_es_op_name(w[i].op),
		        w[i].state < 3 ? wstate[w[i].state] : "?", w[i].length,
		        w[i].psn_valid ? (int)w[i].first_psn : -1,
		        w[i].psn_valid ? (int)w[i].last_psn : -1, (unsigned long)w[i].t[0],
		        (unsigned long)w[i].t[1], (unsigned long)w[i].t[2]);
	fprintf(f, "],\n \"inflight_truncated\": %s,\n",
	        (uint32_t)nw < st.sq_outstanding ? "true" : "false");
	fprintf(f, " \"rate\": {\"cc\": %s", nq->cc ? "true" : "false");
	if (nq->cc) {
		fprintf(
		    f,
		    ", \"rp_state\": \"%s\", \"rc_kbps\": %lu, \"rt_kbps\": %lu, \"alpha\": %u, ",
		    dcqcn_rp_state_name(nq->rp.state), (unsigned long)dcqcn_rp_rate_kbps(&nq->rp),
		    (unsigned long)dcqcn_rp_target_kbps(&nq->rp), dcqcn_rp_alpha(&nq->rp));
		es_json_counters(f, "counters", nq->rp.cnt, DCQCN_RP_CNT__COUNT, es_rp_cnt_name);
	}
	fprintf(f, "},\n ");
	es_json_counters(f, "counters", tcnt, RFW_CNT__COUNT, es_tcnt_name);
	fprintf(f, ",\n ");
	es_json_counters(f, "nic_counters", nq->ctr, RFW_NIC_QP_CTR__COUNT, es_nic_qp_ctr_name);
	fprintf(f, "}\n");
	/* Written whole, then renamed: a reader never sees half a dump. */
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		nic->ctr[RFW_NIC_CTR_estats_dump_errors]++;
		return;
	}
	nic->ctr[RFW_NIC_CTR_estats_dumps]++;
}

/* Every attached QP: dump a pending trigger, then publish its rows of both windows. */
static void pub_estats(struct rfw_nic *nic)
{
	struct nic_es_pub *p = nic->es_pub;
	uint32_t sn = p->seq;
	struct rfw_es_trigger tr;
	bool have_last = false, trunc = false;

	for (uint32_t i = 0; i < nic->max_qp; i++)
		if (nic->qps[i] != NULL && rfw_qp_estats_trigger(nic->qps[i]->qp, &tr))
			es_dump(nic, nic->qps[i], &tr);
	__atomic_store_n(&p->seq, sn + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	p->at_ns = nic->now_ns;
	for (unsigned w = 0; w < 2; w++) {
		uint32_t n = 0;

		for (uint32_t i = 0; i < nic->max_qp; i++) {
			struct rfw_es_info info;
			int k;

			if (nic->qps[i] == NULL)
				continue;
			k = rfw_qp_estats_rows(nic->qps[i]->qp, (enum rfw_es_window)w, nic->now_ns,
			                       p->rows[w] + n, (int)(NIC_ES_ROWS - n));
			if (k > 0)
				n += (uint32_t)k;
			if (n == NIC_ES_ROWS)
				trunc = true;
			if (rfw_qp_estats_info(nic->qps[i]->qp, &info) == 0 && info.have_last)
				have_last = true;
		}
		p->nrows[w] = n;
	}
	p->have_last = have_last;
	p->truncated = trunc;
	__atomic_store_n(&p->seq, sn + 2, __ATOMIC_RELEASE);
	nic->es_pub_next_ns = nic->now_ns + NIC_ES_PUB_NS;
}

/*
 * A slice of the periodic publication: at most NIC_PUB_SCAN slots looked at and NIC_PUB_BATCH
 * snapshots written per poll, so a NIC with many QPs spreads the work over several polls.
 */
static void pub_step(struct rfw_nic *nic)
{
	unsigned scanned = 0, written = 0;

	while (nic->pub_cursor < nic->max_qp && scanned < NIC_PUB_SCAN && written < NIC_PUB_BATCH) {
		uint32_t i = nic->pub_cursor++;

		scanned++;
		if (nic->qps[i] != NULL) {
			pub_write(nic, i);
			written++;
		}
	}
	if (nic->pub_cursor >= nic->max_qp) {
		pub_dev(nic);
		if (nic->es_pub != NULL && nic->now_ns >= nic->es_pub_next_ns)
			pub_estats(nic);
		nic->pub_cursor = 0;
		nic->pub_next_ns = nic->now_ns + nic->snapshot_ns;
	}
}

void rfw_nic_publish(struct rfw_nic *nic)
{
	for (uint32_t i = 0; i < nic->max_qp; i++)
		if (nic->qps[i] != NULL)
			pub_write(nic, i);
	pub_dev(nic);
	if (nic->es_pub != NULL)
		pub_estats(nic);
	nic->pub_cursor = 0;
	nic->pub_next_ns = nic->now_ns + nic->snapshot_ns;
}

void rfw_nic_qp_kick(struct rfw_nic *nic, struct rfw_qp *qp)
{
	struct nic_qp *nq = nic_qp_of(nic, qp);

	if (nq != NULL)
		ready_push(nic, nq);
}

unsigned rfw_nic_poll(struct rfw_nic *nic)
{
	struct rte_mbuf *pkts[RFW_MAX_BURST];
	struct rfw_rx_view views[RFW_MAX_BURST];
	uint64_t tsc = rte_rdtsc();
	unsigned nrx, i, nready;
	struct nic_qp *nq;

	nic->now_ns = (uint64_t)(((unsigned __int128)(tsc - nic->tsc0) * nic->ns_mult) >> 32);
	nic->sent = 0;
	if (nic->es_pub != NULL)
		rfw_dev_clock(nic->dev,
		              nic->now_ns); /* T6 of completions polled with rfw_poll_cq */

	nrx = rfw_rx_burst(nic->q, tsc, pkts, views, RFW_MAX_BURST);
	for (i = 0; i < nrx; i++) {
		const struct rfw_rx_view *v = &views[i];
		struct rfw_rx_info rx = {
		    .pkt = &v->ib,
		    .ecn = (uint8_t)rfw_frame_ecn(&v->f),
		    .udp_sport = v->f.udp_sport,
		    .rx_ts_ns = nic->now_ns,
		};
		uint32_t qi = v->ib.bth.dqpn - nic->qpn_base;

		/*
		 * P_Key check (IBA 10.9.3): the NIC's partition table holds only the
		 * default partition 0xffff (full member, what the transport sends), so a packet
		 * matches when its low 15 bits are 0x7fff. Anything else is dropped before the
		 * transport sees it and counted, as PortInfo:P_KeyViolations is.
		 */
		if (unlikely((v->ib.bth.pkey & 0x7fff) != 0x7fff)) {
			nic->ctr[RFW_NIC_CTR_pkey_violations]++;
			continue;
		}
		memcpy(rx.src_ip, v->f.src_ip, 16);
		memcpy(rx.dst_ip, v->f.dst_ip, 16);
		nic->ctr[RFW_NIC_CTR_rx_pkts]++;
		nic->ctr[RFW_NIC_CTR_rx_bytes] += pkts[i]->pkt_len;
		if (rfw_dev_rx(nic->dev, &rx, nic->now_ns) != 0)
			nic->ctr[RFW_NIC_CTR_rx_dev_dropped]++;
		/* The packet may have produced responses or opened the window: serve the QP. */
		if (unlikely(rx.ecn == 3))
			nic->ctr[RFW_NIC_CTR_np_ecn_marked_roce_packets]++;
		if (qi < nic->max_qp && (nq = nic->qps[qi]) != NULL) {
			if (unlikely(rx.ecn == 3))
				nq->ctr[RFW_NIC_QP_CTR_np_ecn_marked_roce_packets]++;
			nq->ctr[RFW_NIC_QP_CTR_rx_pkts]++;
			nq->ctr[RFW_NIC_QP_CTR_rx_bytes] += pkts[i]->pkt_len;
			ready_push(nic, nq);
		}
	}
	if (nrx != 0)
		rte_pktmbuf_free_bulk(pkts, nrx);

	wheel_advance(nic);
	if (unlikely(nic->n_resolving != 0) && nic->now_ns >= nic->resolve_next_ns)
		nic_resolve_pending(nic, tsc);

	/* Each QP ready now gets one turn; QPs it re-queues wait for the next poll. */
	nready = 0;
	for (nq = nic->rhead; nq != NULL; nq = nq->rnext)
		nready++;
	while (nready-- != 0 && (nq = ready_pop(nic)) != NULL)
		nq_service(nic, nq);

	/* Flush every iteration that produced frames: the peer's poll loop is waiting for them,
	 * and a burst is already as large as this iteration can make it. */
	if (nic->sent != 0)
		rfw_tx_flush(nic->q, tsc);
	else
		rfw_tx_flush_if_due(nic->q, tsc);
	if (unlikely(nic->now_ns >= nic->pub_next_ns))
		pub_step(nic);
	return nrx + nic->sent;
}

/* ---- setup ---- */

/* NICs of this process, for telemetry. The lock is taken by create/destroy and by telemetry
 * commands, never on the packet path: a command holding it keeps the NIC from being freed. */
static struct rfw_nic *nic_reg[RFW_NIC_MAX];
static rte_spinlock_t nic_reg_lock = RTE_SPINLOCK_INITIALIZER;

static void nic_free(struct rfw_nic *nic)
{
	rte_free(nic->es_pub);
	rte_free(nic->pub);
	rte_free(nic->qps);
	rte_free(nic);
}

/* An unsigned environment value in [lo, hi]; 0 if unset, -EINVAL if malformed. */
static int es_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end != '\0' || *v == '-' || x < lo || x > hi) {
		RTE_LOG(ERR, USER1, "rocefw: bad %s=%s (range %llu..%llu)\n", name, v,
		        (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	*out = x;
	return 1;
}

/* ROCEFW_ESTATS* (docs/estats.md "Tunables") over the configuration's Estats fields. */
static int es_env(struct rfw_nic_conf *c)
{
	uint64_t x;
	int rc;

	if ((rc = es_env_u64("ROCEFW_ESTATS", 0, 1, &x)) < 0)
		return rc;
	if (rc)
		c->estats = x == 1;
	if ((rc = es_env_u64("ROCEFW_ESTATS_INTERVAL_MS", 1, 3600000, &x)) < 0)
		return rc;
	if (rc)
		c->estats_interval_ms = (uint32_t)x;
	if ((rc = es_env_u64("ROCEFW_ESTATS_THRESHOLD_US", 0, 3600000000ull, &x)) < 0)
		return rc;
	if (rc)
		c->estats_threshold_us = (uint32_t)x;
	if (getenv("ROCEFW_ESTATS_DUMP_DIR") != NULL && *getenv("ROCEFW_ESTATS_DUMP_DIR"))
		c->estats_dump_dir = getenv("ROCEFW_ESTATS_DUMP_DIR");
	return 0;
}

struct rfw_nic *rfw_nic_create(struct rfw_queue *q, const struct rfw_nic_conf *conf)
{
	struct rfw_nic_conf c = {0};
	struct rfw_nic *nic;
	unsigned i;

	if (q == NULL || q->port == NULL || (!q->port->id.has_ip4 && !q->port->id.has_ip6)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (conf != NULL)
		c = *conf;
	if (es_env(&c) != 0 || c.estats_interval_ms > 3600000 ||
	    (c.estats_dump_dir != NULL && strlen(c.estats_dump_dir) >= 200)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (c.estats) {
		if (c.estats_interval_ms == 0)
			c.estats_interval_ms = 60000;
		c.dev_attr.estats = true;
		c.dev_attr.estats_interval_ns = (uint64_t)c.estats_interval_ms * 1000000ull;
		c.dev_attr.estats_threshold_ns = (uint64_t)c.estats_threshold_us * 1000ull;
	}
	if (c.dscp > 63 || c.pacer_burst_ns > 1000000 || c.quantum > RFW_MAX_BURST || c.pcp > 7 ||
	    (c.vlan && (c.vlan_id == 0 || c.vlan_id > 4094)) ||
	    (c.snapshot_us != 0 && (c.snapshot_us < 10 || c.snapshot_us > 1000000))) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (!c.dscp_set && c.dscp == 0)
		c.dscp = 26;
	if (!c.pcp_set && c.pcp == 0)
		c.pcp = NIC_PCP_DEFAULT;
	if (c.pacer_burst_ns == 0)
		c.pacer_burst_ns = 2000;
	if (c.quantum == 0)
		c.quantum = 16;
	if (c.snapshot_us == 0)
		c.snapshot_us = 1000;
	if (c.dev_attr.max_qp == 0)
		c.dev_attr.max_qp = 64;
	if (c.dev_attr.qpn_base == 0)
		c.dev_attr.qpn_base = 17;
	/*
	 * The transport's defaults for these two apply only to a NULL attribute struct, where 0
	 * is a value of its own (AckReq on last packets only; no CNP spacing); a NIC conf left
	 * zero means "defaults" as for every other field. UINT32_MAX gives last-packet-only.
	 */
	if (c.dev_attr.ack_every == 0)
		c.dev_attr.ack_every = 64;
	if (c.dev_attr.np_min_time_between_cnps_ns == 0)
		c.dev_attr.np_min_time_between_cnps_ns = 4000;

	nic = rte_zmalloc("rfw_nic", sizeof(*nic), RTE_CACHE_LINE_SIZE);
	if (nic == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	nic->id = -1;
	nic->qps = rte_zmalloc("rfw_nic_qps", sizeof(nic->qps[0]) * c.dev_attr.max_qp, 0);
	nic->pub = rte_zmalloc("rfw_nic_pub", sizeof(nic->pub[0]) * c.dev_attr.max_qp,
	                       RTE_CACHE_LINE_SIZE);
	if (c.estats)
		nic->es_pub =
		    rte_zmalloc("rfw_nic_es_pub", sizeof(*nic->es_pub), RTE_CACHE_LINE_SIZE);
	if (nic->qps == NULL || nic->pub == NULL || (c.estats && nic->es_pub == NULL)) {
		nic_free(nic);
		rte_errno = ENOMEM;
		return NULL;
	}
	nic->q = q;
	nic->pool = q->port->pool;
	nic->qpn_base = c.dev_attr.qpn_base;
	nic->max_qp = c.dev_attr.max_qp;
	nic->quantum = c.quantum;
	nic->pacer_burst_ns = c.pacer_burst_ns;
	nic->data_tos = (uint8_t)(c.dscp << 2 | RFW_ECN_ECT0);
	nic->data_pcp = c.pcp;
	nic->vlan = c.vlan;
	nic->vlan_id = c.vlan_id;
	nic->udp6_csum = c.udp6_csum;
	nic->snapshot_ns = (uint64_t)c.snapshot_us * 1000;
	nic->es_interval_ns = c.dev_attr.estats_interval_ns;
	nic->es_threshold_ns = c.dev_attr.estats_threshold_ns;
	snprintf(nic->es_dump_dir, sizeof(nic->es_dump_dir), "%s",
	         c.estats_dump_dir != NULL ? c.estats_dump_dir : ".");
	nic->cc_prof = c.cc_prof;
	memcpy(nic->src_mac.b, q->port->id.mac.addr_bytes, 6);
	memcpy(nic->gid, q->port->gid, 16);
	if (q->port->id.has_ip6)
		memcpy(nic->ip6, q->port->id.ip6, 16);
	nic->tsc0 = rte_rdtsc();
	nic->ns_mult = (uint64_t)(((unsigned __int128)NS_PER_S << 32) / rte_get_tsc_hz());
	for (i = 0; i < WHEEL_SLOTS; i++)
		nic->wheel[i].next = nic->wheel[i].prev = &nic->wheel[i];
	nic->dev = rfw_dev_create(&c.dev_attr, &nic_io_ops, nic);
	if (nic->dev == NULL) {
		int e = errno;

		nic_free(nic);
		rte_errno = e;
		return NULL;
	}
	rte_spinlock_lock(&nic_reg_lock);
	for (i = 0; i < RFW_NIC_MAX; i++) {
		if (nic_reg[i] == NULL) {
			nic_reg[i] = nic;
			nic->id = (int)i;
			break;
		}
	}
	rte_spinlock_unlock(&nic_reg_lock);
	if (nic->id < 0) {
		rfw_dev_destroy(nic->dev);
		nic_free(nic);
		rte_errno = ENOSPC;
		return NULL;
	}
	return nic;
}

void rfw_nic_destroy(struct rfw_nic *nic)
{
	uint32_t i;

	if (nic == NULL)
		return;
	/* Out of the registry first: a telemetry command reading it finishes before we go on. */
	rte_spinlock_lock(&nic_reg_lock);
	if (nic->id >= 0 && nic_reg[nic->id] == nic)
		nic_reg[nic->id] = NULL;
	rte_spinlock_unlock(&nic_reg_lock);
	for (i = 0; i < nic->max_qp; i++)
		if (nic->qps[i] != NULL)
			rfw_nic_qp_detach(nic, nic->qps[i]->qp);
	rfw_tx_flush(nic->q, rte_rdtsc());
	rfw_dev_destroy(nic->dev);
	nic_free(nic);
}

struct rfw_dev *rfw_nic_dev(struct rfw_nic *nic)
{
	return nic->dev;
}

const uint8_t *rfw_nic_gid(const struct rfw_nic *nic)
{
	return nic->gid;
}

int rfw_nic_id(const struct rfw_nic *nic)
{
	return nic->id;
}

/*
 * Build @nq's header template from the path: IPv4 when the destination is IPv4-mapped, else
 * IPv6; one 802.1Q tag when the path (or, by default, the NIC conf) asks for one. Data and
 * responses: DSCP << 2 | ECT(0); CNPs: np_cnp_dscp, Not-ECT, PCP np_cnp_prio (patched per
 * packet from cnp_tos / cnp_tci).
 */
static int nq_template(struct rfw_nic *nic, struct nic_qp *nq, const struct rfw_nic_path *path)
{
	const struct rfw_port *port = nic->q->port;
	struct rfw_frame_spec sp = {0};
	uint8_t tmp[NIC_HDR_MAX + 64];
	bool v4 = rfw_ip_is_mapped4(path->dst_ip);
	bool vlan;
	uint16_t vid;
	uint8_t pcp, cnp_pcp;
	int off;

	if (v4 ? !port->id.has_ip4 : !port->id.has_ip6)
		return -EINVAL;
	switch (path->vlan) {
	case RFW_NIC_VLAN_CONF:
		vlan = nic->vlan;
		vid = nic->vlan_id;
		break;
	case RFW_NIC_VLAN_NONE:
		vlan = false;
		vid = 0;
		break;
	case RFW_NIC_VLAN_TAG:
		vlan = true;
		vid = path->vlan_id;
		break;
	default:
		return -EINVAL;
	}
	if (vlan && (vid == 0 || vid > 4094))
		return -EINVAL;
	if (path->pcp_set && path->pcp > 7)
		return -EINVAL;
	pcp = path->pcp_set ? path->pcp : nic->data_pcp;
	cnp_pcp = nic->cc_prof != NULL ? nic->cc_prof->cnp_prio : NIC_CNP_PCP_NO_PROF;

	memcpy(sp.dst_mac, path->dst_mac.addr_bytes, 6);
	memcpy(sp.src_mac, nic->src_mac.b, 6);
	if (vlan) {
		sp.nvlan = 1;
		sp.vlan_tci[0] = (uint16_t)(pcp << 13 | vid);
	}
	sp.ip_ver = v4 ? 4 : 6;
	sp.tos = nic->data_tos;
	sp.ttl = 64;
	sp.df = true;
	if (v4)
		rfw_ip4_to_mapped(sp.src_ip, port->id.ip4);
	else
		memcpy(sp.src_ip, nic->ip6, 16);
	memcpy(sp.dst_ip, path->dst_ip, 16);
	sp.udp_sport = path->udp_sport != 0 ? path->udp_sport
	                                    : (uint16_t)(0xc000 | (rfw_qp_num(nq->qp) & 0x3fff));
	off = rfw_frame_build_hdrs(tmp, sizeof(tmp), &sp, 0);
	if (off < 0 || off > NIC_HDR_MAX)
		return -EINVAL;
	memcpy(nq->hdr, tmp, (size_t)off);
	nq->hdr_len = (uint8_t)off;
	nq->ip_off = (uint8_t)(RFW_ETH_HLEN + (vlan ? RFW_VLAN_HLEN : 0));
	nq->udp_off = (uint8_t)(nq->ip_off + (v4 ? RFW_IPV4_HLEN : RFW_IPV6_HLEN));
	nq->ip_ver = sp.ip_ver;
	nq->vlan = vlan;
	nq->data_tci = sp.vlan_tci[0];
	nq->cnp_tci = (uint16_t)(cnp_pcp << 13 | vid);
	memcpy(nq->dst_ip, path->dst_ip, 16);
	return 0;
}

int rfw_nic_qp_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path)
{
	uint32_t i;
	struct nic_qp *nq;
	bool resolve;
	int rc;

	if (nic == NULL || qp == NULL || path == NULL)
		return -EINVAL;
	i = rfw_qp_num(qp) - nic->qpn_base;
	if (i >= nic->max_qp || rfw_dev_qp(nic->dev, rfw_qp_num(qp)) != qp)
		return -EINVAL;
	if (nic->qps[i] != NULL)
		return -EEXIST;
	/* The neighbour table has one writer: the lcore polling queue 0 (rfw_port.h). */
	resolve = rte_is_zero_ether_addr(&path->dst_mac);
	if (resolve && nic->q->qid != 0)
		return -EINVAL;
	nq = rte_zmalloc("rfw_nic_qp", sizeof(*nq), RTE_CACHE_LINE_SIZE);
	if (nq == NULL)
		return -ENOMEM;
	nq->qp = qp;
	nq->nic = nic;
	nq->dep.is_dep = true;
	rc = nq_template(nic, nq, path);
	if (rc != 0) {
		rte_free(nq);
		return rc;
	}
	nq->l2 = RFW_NIC_L2_READY;
	if (resolve) {
		struct rte_ether_addr mac;
		uint64_t tsc = rte_rdtsc();

		rc = rfw_port_resolve(nic->q, path->dst_ip, tsc, &mac);
		if (rc == 0) {
			nq_set_mac(nq, &mac);
			nic->ctr[RFW_NIC_CTR_l2_resolved]++;
		} else if (rc == -EAGAIN) {
			nq->l2 = RFW_NIC_L2_RESOLVING;
			nic->n_resolving++;
			nq_tagged_probe(nic, nq, tsc);
		} else {
			rte_free(nq);
			return rc == -ENOSPC ? -ENOSPC : -EINVAL;
		}
	}

	if (nic->cc_prof != NULL) {
		nq->cc = true;
		dcqcn_rp_init(&nq->rp, nic->cc_prof);
		dcqcn_np_init(&nq->np, nic->cc_prof);
		cc_pacer_init(&nq->pacer, nic->pacer_burst_ns);
		/* CNPs: the profile's np_cnp_dscp, not ECN-capable (a CNP is never marked). */
		nq->cnp_tos = (uint8_t)(dcqcn_np_cnp_dscp(&nq->np) << 2);
		rfw_qp_set_cc(qp, &nic_cc_ops, nq);
	} else {
		nq->cnp_tos = nic->data_tos & ~3u;
	}
	memset(nic->pub[i].ctr, 0, sizeof(nic->pub[i].ctr));
	nq->ctr = nic->pub[i].ctr;
	nic->qps[i] = nq;
	pub_write(nic, i);
	return 0;
}

void rfw_nic_qp_detach(struct rfw_nic *nic, struct rfw_qp *qp)
{
	uint32_t i = rfw_qp_num(qp) - nic->qpn_base;
	struct nic_qp *nq, **pp;

	if (i >= nic->max_qp || (nq = nic->qps[i]) == NULL)
		return;
	wheel_remove(&nq->dep);
	wheel_remove(&nq->tmr);
	if (nq->in_ready) {
		struct nic_qp *prev = NULL;

		for (pp = &nic->rhead; *pp != NULL; prev = *pp, pp = &(*pp)->rnext) {
			if (*pp == nq) {
				*pp = nq->rnext;
				if (nic->rtail == nq)
					nic->rtail = prev;
				break;
			}
		}
	}
	while (nq->held_n != 0) {
		rte_pktmbuf_free(nq->held[nq->held_head]);
		nq->held_head = (uint16_t)((nq->held_head + 1) % NIC_HOLD_MAX);
		nq->held_n--;
	}
	if (nq->l2 == RFW_NIC_L2_RESOLVING)
		nic->n_resolving--;
	if (nq->cc)
		rfw_qp_set_cc(qp, NULL, NULL);
	nic->qps[i] = NULL;
	pub_write(nic, i); /* the slot now reads "not attached" */
	rte_free(nq);
}

uint64_t rfw_nic_ctr(const struct rfw_nic *nic, enum rfw_nic_ctr c)
{
	return (unsigned)c < RFW_NIC_CTR__COUNT ? nic->ctr[c] : 0;
}

uint64_t rfw_nic_qp_ctr(const struct rfw_nic *nic, const struct rfw_qp *qp, enum rfw_nic_qp_ctr c)
{
	struct nic_qp *nq = nic_qp_of(nic, qp);

	return nq != NULL && (unsigned)c < RFW_NIC_QP_CTR__COUNT ? nq->ctr[c] : 0;
}

enum rfw_nic_l2 rfw_nic_qp_l2(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	struct nic_qp *nq = nic_qp_of(nic, qp);

	return nq != NULL ? (enum rfw_nic_l2)nq->l2 : RFW_NIC_L2_FAILED;
}

uint64_t rfw_nic_qp_rate_kbps(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	struct nic_qp *nq = nic_qp_of(nic, qp);

	return nq != NULL && nq->cc ? dcqcn_rp_rate_kbps(&nq->rp) : 0;
}

const struct dcqcn_rp *rfw_nic_qp_rp(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	struct nic_qp *nq = nic_qp_of(nic, qp);

	return nq != NULL && nq->cc ? &nq->rp : NULL;
}

const struct dcqcn_np *rfw_nic_qp_np(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	struct nic_qp *nq = nic_qp_of(nic, qp);

	return nq != NULL && nq->cc ? &nq->np : NULL;
}

/* ---- telemetry: /rocefw/nics, /rocefw/nic, /rocefw/qp/..., /rocefw/cc/... ---- */

/* A consistent copy of a snapshot; false if the lcore kept rewriting it (then "busy"). */
static bool pub_read(const uint32_t *seq, const void *src, void *dst, size_t len)
{
	for (unsigned tries = 0; tries < 10000; tries++) {
		uint32_t b = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (b & 1) {
			rte_pause();
			continue;
		}
		memcpy(dst, src, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seq, __ATOMIC_RELAXED) == b)
			return true;
	}
	return false;
}

/*
 * Parameters "A" or "A,B" (unsigned decimal). Returns how many were read (1 or 2), or -1
 * for anything else.
 */
static int tel_args(const char *params, unsigned long v[2])
{
	char *end;
	int n = 0;

	if (params == NULL || *params == '\0')
		return 0;
	while (n < 2) {
		if (*params < '0' || *params > '9')
			return -1;
		v[n++] = strtoul(params, &end, 10);
		if (*end == '\0')
			return n;
		if (*end != ',')
			return -1;
		params = end + 1;
	}
	return -1;
}

/* The registered NIC @id, with the registry lock held on success. */
static struct rfw_nic *tel_nic_lock(unsigned long id)
{
	rte_spinlock_lock(&nic_reg_lock);
	if (id < RFW_NIC_MAX && nic_reg[id] != NULL)
		return nic_reg[id];
	rte_spinlock_unlock(&nic_reg_lock);
	return NULL;
}

static void tel_nic_unlock(void)
{
	rte_spinlock_unlock(&nic_reg_lock);
}

static void tel_add_ip(struct rte_tel_data *d, const char *key, const uint8_t ip[16])
{
	char buf[64];

	rte_tel_data_add_dict_string(d, key, rfw_ip_to_str(ip, buf, sizeof(buf)));
}

static int tel_nics(const char *cmd __rte_unused, const char *params __rte_unused,
                    struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	rte_spinlock_lock(&nic_reg_lock);
	for (unsigned i = 0; i < RFW_NIC_MAX; i++)
		if (nic_reg[i] != NULL)
			rte_tel_data_add_array_int(d, (int)i);
	rte_spinlock_unlock(&nic_reg_lock);
	return 0;
}

/* /rocefw/nic[,id]: configuration, NIC counters, the transport device's counters. */
static int tel_nic(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned long a[2] = {0, 0};
	struct nic_dev_pub dp;
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	unsigned attached = 0;
	int n = tel_args(params, a);

	if (n < 0 || n > 1 || (nic = tel_nic_lock(a[0])) == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.nic/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_int(d, "port", nic->q->port_id);
	rte_tel_data_add_dict_int(d, "queue", nic->q->qid);
	rte_tel_data_add_dict_int(d, "qpn_base", (int)nic->qpn_base);
	rte_tel_data_add_dict_int(d, "max_qp", (int)nic->max_qp);
	for (uint32_t i = 0; i < nic->max_qp; i++)
		attached += __atomic_load_n(&nic->pub[i].s.attached, __ATOMIC_RELAXED) != 0;
	rte_tel_data_add_dict_int(d, "qps_attached", (int)attached);
	rte_tel_data_add_dict_int(d, "dscp", nic->data_tos >> 2);
	rte_tel_data_add_dict_int(d, "pcp", nic->data_pcp);
	rte_tel_data_add_dict_int(d, "vlan_id", nic->vlan ? nic->vlan_id : -1);
	rte_tel_data_add_dict_int(d, "udp6_csum", nic->udp6_csum);
	rte_tel_data_add_dict_string(d, "cc", nic->cc_prof != NULL ? "dcqcn" : "none");
	rte_tel_data_add_dict_u64(d, "quantum", nic->quantum);
	rte_tel_data_add_dict_u64(d, "pacer_burst_ns", nic->pacer_burst_ns);
	rte_tel_data_add_dict_u64(d, "snapshot_us", nic->snapshot_ns / 1000);
	rte_tel_data_add_dict_u64(d, "now_ns", nic->now_ns);
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_NIC_CTR__COUNT; k++)
			rte_tel_data_add_dict_u64(c, nic_ctr_names[k], nic->ctr[k]);
		rte_tel_data_add_dict_container(d, "counters", c, 0);
	}
	if (pub_read(&nic->dev_pub.seq, &nic->dev_pub, &dp, sizeof(dp)) &&
	    (c = rte_tel_data_alloc()) != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_CNT__COUNT; k++)
			rte_tel_data_add_dict_u64(c, rfw_counter_name(k), dp.cnt[k]);
		rte_tel_data_add_dict_container(d, "dev_counters", c, 0);
		rte_tel_data_add_dict_u64(d, "dev_counters_at_ns", dp.at_ns);
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/qp/list[,nic]: the QP numbers attached (as of the last snapshots). */
static int tel_qp_list(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned long a[2] = {0, 0};
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n < 0 || n > 1 || (nic = tel_nic_lock(a[0])) == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (uint32_t i = 0, listed = 0; i < nic->max_qp && listed < RTE_TEL_MAX_ARRAY_ENTRIES;
	     i++) {
		if (__atomic_load_n(&nic->pub[i].s.attached, __ATOMIC_RELAXED)) {
			rte_tel_data_add_array_int(d, (int)(nic->qpn_base + i));
			listed++;
		}
	}
	tel_nic_unlock();
	return 0;
}

/*
 * "QPN" (on NIC 0) or "NIC,QPN": the NIC (locked) and a consistent snapshot of the QP's slot.
 * NULL if there is no such NIC, QP slot or attached QP.
 */
static struct rfw_nic *tel_qp_snap(const char *params, struct nic_snap *s, uint32_t *slot)
{
	unsigned long a[2] = {0, 0}, id = 0, qpn;
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n == 1) {
		qpn = a[0];
	} else if (n == 2) {
		id = a[0];
		qpn = a[1];
	} else {
		return NULL;
	}
	nic = tel_nic_lock(id);
	if (nic == NULL)
		return NULL;
	if (qpn < nic->qpn_base || qpn - nic->qpn_base >= nic->max_qp)
		goto none;
	*slot = (uint32_t)(qpn - nic->qpn_base);
	if (!pub_read(&nic->pub[*slot].seq, &nic->pub[*slot].s, s, sizeof(*s)) || !s->attached)
		goto none;
	return nic;
none:
	tel_nic_unlock();
	return NULL;
}

static const char *transport_mode_name(unsigned m)
{
	return m == RFW_TRANSPORT_SR ? "sr" : m == RFW_TRANSPORT_GBN ? "gbn" : "unknown";
}

/* /rocefw/qp/info,[NIC,]QPN: state, PSNs, path, transport mode, counters. */
static int tel_qp_info(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct nic_snap s;
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	uint32_t slot;
	char buf[64];

	nic = tel_qp_snap(params, &s, &slot);
	if (nic == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.qp.info/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_int(d, "qpn", (int)s.qpn);
	rte_tel_data_add_dict_u64(d, "snapshot_age_ns",
	                          nic->now_ns > s.at_ns ? nic->now_ns - s.at_ns : 0);
	rte_tel_data_add_dict_string(d, "state", rfw_qp_state_str(s.state));
	rte_tel_data_add_dict_string(d, "transport_mode", transport_mode_name(s.transport_mode));
	rte_tel_data_add_dict_int(d, "path_mtu", (int)s.path_mtu);
	rte_tel_data_add_dict_int(d, "dest_qpn", (int)s.dest_qpn);
	rte_tel_data_add_dict_int(d, "sq_psn", (int)s.sq_psn);
	rte_tel_data_add_dict_int(d, "rq_psn", (int)s.rq_psn);
	rte_tel_data_add_dict_string(d, "l2", rfw_nic_l2_name(s.l2));
	rte_tel_data_add_dict_int(d, "ip_version", s.ip_ver);
	tel_add_ip(d, "src_ip", s.src_ip);
	tel_add_ip(d, "dst_ip", s.dst_ip);
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", s.dst_mac[0], s.dst_mac[1],
	         s.dst_mac[2], s.dst_mac[3], s.dst_mac[4], s.dst_mac[5]);
	rte_tel_data_add_dict_string(d, "dst_mac", buf);
	rte_tel_data_add_dict_int(d, "udp_sport", s.udp_sport);
	rte_tel_data_add_dict_int(d, "vlan_id", s.vlan ? s.vlan_id : -1);
	rte_tel_data_add_dict_int(d, "pcp", s.vlan ? s.pcp : -1);
	rte_tel_data_add_dict_int(d, "dscp", s.dscp);
	rte_tel_data_add_dict_u64(d, "paced_rate_kbps", s.cc && s.paced ? s.rc_kbps : 0);
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		/* Live counters: the slot array outlives any QP, reading it is always safe. */
		for (unsigned k = 0; k < RFW_NIC_QP_CTR__COUNT; k++)
			rte_tel_data_add_dict_u64(c, nic_qp_ctr_names[k], nic->pub[slot].ctr[k]);
		rte_tel_data_add_dict_container(d, "nic_counters", c, 0);
	}
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_CNT__COUNT; k++)
			rte_tel_data_add_dict_u64(c, rfw_counter_name(k), s.tcnt[k]);
		rte_tel_data_add_dict_container(d, "counters", c, 0);
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/cc/state,[NIC,]QPN: the QP's reaction and notification points. */
static int tel_cc_state(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct nic_snap s;
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	uint32_t slot;

	nic = tel_qp_snap(params, &s, &slot);
	if (nic == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.cc.state/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_int(d, "qpn", (int)s.qpn);
	rte_tel_data_add_dict_string(d, "cc", s.cc ? "dcqcn" : "none");
	rte_tel_data_add_dict_u64(d, "snapshot_age_ns",
	                          nic->now_ns > s.at_ns ? nic->now_ns - s.at_ns : 0);
	if (s.cc) {
		rte_tel_data_add_dict_string(d, "rp_state", dcqcn_rp_state_name(s.rp_state));
		rte_tel_data_add_dict_int(d, "paced", s.paced);
		rte_tel_data_add_dict_u64(d, "rate_kbps", s.rc_kbps);
		rte_tel_data_add_dict_u64(d, "target_kbps", s.rt_kbps);
		rte_tel_data_add_dict_u64(d, "alpha", s.alpha);
		c = rte_tel_data_alloc();
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			for (unsigned k = 0; k < DCQCN_RP_CNT__COUNT; k++)
				rte_tel_data_add_dict_u64(c, dcqcn_rp_counter_name(k), s.rp_cnt[k]);
			rte_tel_data_add_dict_container(d, "rp_counters", c, 0);
		}
		c = rte_tel_data_alloc();
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			for (unsigned k = 0; k < DCQCN_NP_CNT__COUNT; k++)
				rte_tel_data_add_dict_u64(c, dcqcn_np_counter_name(k), s.np_cnt[k]);
			rte_tel_data_add_dict_container(d, "np_counters", c, 0);
		}
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/cc/params[,nic]: the profile's parameters by their dcqcn_params.h names. */
static int tel_cc_params(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned long a[2] = {0, 0};
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n < 0 || n > 1 || (nic = tel_nic_lock(a[0])) == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.cc.params/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_string(d, "cc", nic->cc_prof != NULL ? "dcqcn" : "none");
	if (nic->cc_prof != NULL) {
		rte_tel_data_add_dict_u64(d, "line_rate_mbps", nic->cc_prof->line_kbps / 1000);
		c = rte_tel_data_alloc();
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			for (unsigned k = 0; k < DCQCN_PARAM__COUNT; k++)
				rte_tel_data_add_dict_u64(
				    c, dcqcn_param_info(k)->name,
				    dcqcn_param_get(&nic->cc_prof->params, k));
			rte_tel_data_add_dict_container(d, "params", c, 0);
		}
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/qp/counters: what each per-QP and NIC counter means. */
static int tel_nic_counters(const char *cmd __rte_unused, const char *params __rte_unused,
                            struct rte_tel_data *d)
{
	struct rte_tel_data *c;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.nic.counters/1");
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_NIC_CTR__COUNT; k++)
			rte_tel_data_add_dict_string(c, nic_ctr_names[k], nic_ctr_docs[k]);
		rte_tel_data_add_dict_container(d, "nic", c, 0);
	}
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_NIC_QP_CTR__COUNT; k++)
			rte_tel_data_add_dict_string(c, nic_qp_ctr_names[k], nic_qp_ctr_docs[k]);
		rte_tel_data_add_dict_container(d, "qp", c, 0);
	}
	return 0;
}

/*
 * /rocefw/estats[,NIC[,last|current]]: latency quantiles per QP x op x status x stage
 * (schema rocefw.estats/1, docs/estats.md). Without a window: the last complete interval if
 * there is one, else the current.
 */
static int tel_estats(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	static struct nic_es_pub snap; /* one telemetry thread: too big for its stack */
	static rte_spinlock_t snap_lock = RTE_SPINLOCK_INITIALIZER;
	unsigned long id = 0;
	int window = -1;
	struct rfw_nic *nic;
	struct rte_tel_data *rows;
	bool ok = false;
	char key[64];
	uint32_t n;

	if (params != NULL && *params != '\0') {
		char *end;

		if (*params < '0' || *params > '9')
			return -EINVAL;
		id = strtoul(params, &end, 10);
		if (*end == ',') {
			if (strcmp(end + 1, "last") == 0)
				window = RFW_ES_LAST;
			else if (strcmp(end + 1, "current") == 0)
				window = RFW_ES_CURRENT;
			else
				return -EINVAL;
		} else if (*end != '\0') {
			return -EINVAL;
		}
	}
	nic = tel_nic_lock(id);
	if (nic == NULL)
		return -EINVAL;
	rte_spinlock_lock(&snap_lock);
	if (nic->es_pub != NULL)
		ok = pub_read(&nic->es_pub->seq, nic->es_pub, &snap, sizeof(snap));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.estats/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	/* DPDK 22.11 telemetry has no boolean: 0/1 as "udp6_csum" in /rocefw/nic */
	rte_tel_data_add_dict_int(d, "enabled", nic->es_pub != NULL);
	rte_tel_data_add_dict_u64(d, "interval_ns", nic->es_interval_ns);
	rte_tel_data_add_dict_u64(d, "threshold_ns", nic->es_threshold_ns);
	if (window < 0)
		window = ok && snap.have_last ? RFW_ES_LAST : RFW_ES_CURRENT;
	rte_tel_data_add_dict_string(d, "window", window == RFW_ES_LAST ? "last" : "current");
	if (nic->es_pub != NULL && !ok)
		rte_tel_data_add_dict_string(d, "error", "busy");
	if (ok) {
		rte_tel_data_add_dict_u64(d, "at_ns", snap.at_ns);
		rte_tel_data_add_dict_u64(d, "dumps", nic->ctr[RFW_NIC_CTR_estats_dumps]);
	}
	n = ok ? snap.nrows[window] : 0;
	rte_tel_data_add_dict_int(d, "truncated", (ok && snap.truncated) || n > NIC_ES_TEL_ROWS);
	rows = rte_tel_data_alloc();
	if (rows != NULL) {
		/* DPDK 22.11 telemetry cannot put dicts in an array: rows is a dict keyed
		 * "QPN/op/status/stage", each value the row object (docs/estats.md). */
		rte_tel_data_start_dict(rows);
		for (uint32_t i = 0; i < n && i < NIC_ES_TEL_ROWS; i++) {
			const struct rfw_es_row *r = &snap.rows[window][i];
			struct rte_tel_data *o = rte_tel_data_alloc();

			if (o == NULL)
				break;
			rte_tel_data_start_dict(o);
			rte_tel_data_add_dict_int(o, "qpn", (int)r->qpn);
			rte_tel_data_add_dict_string(o, "op", rfw_es_op_name(r->op));
			rte_tel_data_add_dict_string(o, "status", rfw_es_status_name(r->status));
			rte_tel_data_add_dict_string(o, "stage", rfw_es_stage_name(r->stage));
			rte_tel_data_add_dict_u64(o, "count", r->count);
			rte_tel_data_add_dict_u64(o, "p50_ns", r->p50);
			rte_tel_data_add_dict_u64(o, "p99_ns", r->p99);
			rte_tel_data_add_dict_u64(o, "p999_ns", r->p999);
			rte_tel_data_add_dict_u64(o, "max_ns", r->max);
			snprintf(key, sizeof(key), "%u/%s/%s/%s", r->qpn, rfw_es_op_name(r->op),
			         rfw_es_status_name(r->status), rfw_es_stage_name(r->stage));
			rte_tel_data_add_dict_container(rows, key, o, 0);
		}
		rte_tel_data_add_dict_container(d, "rows", rows, 0);
	}
	rte_spinlock_unlock(&snap_lock);
	tel_nic_unlock();
	return 0;
}

RTE_INIT(rfw_nic_telemetry_init)
{
	rte_telemetry_register_cmd("/rocefw/estats", tel_estats,
	                           "Returns Estats latency quantiles per QP x op x status x stage. "
	                           "Parameters: nic id (default 0), then last|current");
	rte_telemetry_register_cmd("/rocefw/nics", tel_nics,
	                           "Returns the ids of the rocefw NICs. No parameters");
	rte_telemetry_register_cmd(
	    "/rocefw/nic", tel_nic,
	    "Returns a NIC's configuration, counters and transport counters. Parameter: nic id "
	    "(default 0)");
	rte_telemetry_register_cmd("/rocefw/nic/counters", tel_nic_counters,
	                           "Returns what each NIC and per-QP NIC counter means");
	rte_telemetry_register_cmd("/rocefw/qp/list", tel_qp_list,
	                           "Returns the QP numbers attached to a NIC. Parameter: nic id "
	                           "(default 0)");
	rte_telemetry_register_cmd("/rocefw/qp/info", tel_qp_info,
	                           "Returns a QP's state, PSNs, path and counters. Parameters: "
	                           "qpn, or nic id,qpn");
	rte_telemetry_register_cmd("/rocefw/cc/state", tel_cc_state,
	                           "Returns a QP's DCQCN reaction/notification point state. "
	                           "Parameters: qpn, or nic id,qpn");
	rte_telemetry_register_cmd("/rocefw/cc/params", tel_cc_params,
	                           "Returns the DCQCN profile parameters of a NIC. Parameter: nic "
	                           "id (default 0)");
}
