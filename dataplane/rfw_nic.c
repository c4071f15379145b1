/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software NIC: transport on a DPDK port queue, with a paced scheduler. See rfw_nic.h and
 * docs/nic.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "cc/pacer.h"
#include "dataplane/rfw_nic.h"

/* Ethernet + IPv4 + UDP in front of the BTH: the per-QP header template. */
#define NIC_HDR_LEN (RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN)
#define NIC_IP_OFF  RFW_ETH_HLEN
#define NIC_UDP_OFF (RFW_ETH_HLEN + RFW_IPV4_HLEN)

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
};

struct nic_qp {
	struct rfw_qp *qp;
	struct rfw_nic *nic;
	struct nic_qp *rnext; /* ready list */
	bool in_ready;
	bool cc;
	uint16_t held_head, held_n;
	struct wnode dep; /* departure of the first parked packet */
	struct wnode tmr; /* transport timer (rfw_qp_next_deadline) */
	uint8_t hdr[NIC_HDR_LEN] __rte_aligned(8);
	uint8_t cnp_tos;
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
	const struct dcqcn_prof *cc_prof;
	struct rte_mbuf *stage; /* the mbuf between tx_alloc and tx_send */
	unsigned sent;          /* frames queued for TX in this poll */
	struct nic_qp *rhead, *rtail;
	struct nic_qp **qps; /* by qpn - qpn_base */
	struct rfw_ether_addr_pad {
		uint8_t b[6];
	} src_mac;
	uint8_t gid[16];
	uint64_t ctr[RFW_NIC_CTR__COUNT];
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
				if (n == &(nq = dep_owner(n))->dep) {
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
	bool send = dcqcn_np_on_ce(&nq->np, now_ns);

	nq->nic->ctr[RFW_NIC_CTR_np_ecn_marked_roce_packets]++;
	return send;
}

static void cc_rp_on_cnp(void *cc, uint64_t now_ns)
{
	struct nic_qp *nq = cc;

	nq->nic->ctr[RFW_NIC_CTR_rp_cnp_handled]++;
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
	if (unlikely(NIC_HDR_LEN + len + RFW_ICRC_LEN > RFW_FRAME_MAX)) {
		nic->ctr[RFW_NIC_CTR_tx_too_big]++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(nic->pool);
	if (unlikely(m == NULL)) {
		nic->ctr[RFW_NIC_CTR_tx_no_mbuf]++;
		return NULL;
	}
	nic->stage = m;
	return rte_pktmbuf_mtod(m, uint8_t *) + NIC_HDR_LEN;
}

/* RC response opcodes (READ responses, ACK, atomic ACK) and CNP: never paced. */
static inline bool opcode_is_response(uint8_t op)
{
	return (op >= RFW_OP_RC_RDMA_READ_RESPONSE_FIRST && op <= RFW_OP_RC_ATOMIC_ACKNOWLEDGE) ||
	       op == RFW_OP_CNP;
}

static void io_tx_send(void *io_ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len)
{
	struct rfw_nic *nic = io_ctx;
	struct nic_qp *nq = nic_qp_of(nic, qp);
	struct rte_mbuf *m = nic->stage;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + NIC_IP_OFF);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + NIC_UDP_OFF);
	uint32_t crc;
	uint8_t op = buf[0];
	uint64_t rate;

	nic->stage = NULL;
	/* Template copy, then the three per-packet fields: lengths and the IPv4 checksum. */
	memcpy(f, nq->hdr, NIC_HDR_LEN);
	ip->total_length =
	    rte_cpu_to_be_16((uint16_t)(RFW_IPV4_HLEN + RFW_UDP_HLEN + len + RFW_ICRC_LEN));
	if (unlikely(op == RFW_OP_CNP)) {
		ip->type_of_service = nq->cnp_tos;
		nic->ctr[RFW_NIC_CTR_np_cnp_sent]++;
	}
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(RFW_UDP_HLEN + len + RFW_ICRC_LEN));
	crc = rfw_icrc_compute(f + NIC_IP_OFF, RFW_IPV4_HLEN + RFW_UDP_HLEN + len, 4);
	/* The ICRC goes on the wire least significant byte first (as rfw_frame_finalize). */
	crc = rte_cpu_to_le_32(crc);
	memcpy(buf + len, &crc, RFW_ICRC_LEN);
	m->data_len = (uint16_t)(NIC_HDR_LEN + len + RFW_ICRC_LEN);
	m->pkt_len = m->data_len;

	rate = opcode_is_response(op) ? 0 : nq_rate_kbps(nq, nic->now_ns);
	if (rate != 0) {
		uint64_t dep = cc_pacer_depart(&nq->pacer, nic->now_ns, m->pkt_len, rate);

		/* Packets already parked go first (PSN order), even if this one could leave. */
		if (dep > nic->now_ns || nq->held_n != 0) {
			unsigned slot = (nq->held_head + nq->held_n) % NIC_HOLD_MAX;

			nq->held[slot] = m;
			nq->held_dep[slot] = dep;
			nq->held_n++;
			nic->ctr[RFW_NIC_CTR_tx_paced_holds]++;
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
		if (rfw_dev_rx(nic->dev, &rx, nic->now_ns) != 0)
			nic->ctr[RFW_NIC_CTR_rx_dev_dropped]++;
		/* The packet may have produced responses or opened the window: serve the QP. */
		if (qi < nic->max_qp && nic->qps[qi] != NULL)
			ready_push(nic, nic->qps[qi]);
	}
	if (nrx != 0)
		rte_pktmbuf_free_bulk(pkts, nrx);

	wheel_advance(nic);

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
	return nrx + nic->sent;
}

/* ---- setup ---- */

struct rfw_nic *rfw_nic_create(struct rfw_queue *q, const struct rfw_nic_conf *conf)
{
	struct rfw_nic_conf c = {0};
	struct rfw_nic *nic;
	unsigned i;

	if (q == NULL || q->port == NULL || !q->port->id.has_ip4) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (conf != NULL)
		c = *conf;
	if (c.dscp > 63 || c.pacer_burst_ns > 1000000 || c.quantum > RFW_MAX_BURST) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (!c.dscp_set && c.dscp == 0)
		c.dscp = 26;
	if (c.pacer_burst_ns == 0)
		c.pacer_burst_ns = 2000;
	if (c.quantum == 0)
		c.quantum = 16;
	if (c.dev_attr.max_qp == 0)
		c.dev_attr.max_qp = 64;
	if (c.dev_attr.qpn_base == 0)
		c.dev_attr.qpn_base = 17;

	nic = rte_zmalloc("rfw_nic", sizeof(*nic), RTE_CACHE_LINE_SIZE);
	if (nic == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	nic->qps = rte_zmalloc("rfw_nic_qps", sizeof(nic->qps[0]) * c.dev_attr.max_qp, 0);
	if (nic->qps == NULL) {
		rte_free(nic);
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
	nic->cc_prof = c.cc_prof;
	memcpy(nic->src_mac.b, q->port->id.mac.addr_bytes, 6);
	memcpy(nic->gid, q->port->gid, 16);
	nic->tsc0 = rte_rdtsc();
	nic->ns_mult = (uint64_t)(((unsigned __int128)NS_PER_S << 32) / rte_get_tsc_hz());
	for (i = 0; i < WHEEL_SLOTS; i++)
		nic->wheel[i].next = nic->wheel[i].prev = &nic->wheel[i];
	nic->dev = rfw_dev_create(&c.dev_attr, &nic_io_ops, nic);
	if (nic->dev == NULL) {
		int e = errno;

		rte_free(nic->qps);
		rte_free(nic);
		rte_errno = e;
		return NULL;
	}
	return nic;
}

void rfw_nic_destroy(struct rfw_nic *nic)
{
	uint32_t i;

	if (nic == NULL)
		return;
	for (i = 0; i < nic->max_qp; i++)
		if (nic->qps[i] != NULL)
			rfw_nic_qp_detach(nic, nic->qps[i]->qp);
	rfw_tx_flush(nic->q, rte_rdtsc());
	rfw_dev_destroy(nic->dev);
	rte_free(nic->qps);
	rte_free(nic);
}

struct rfw_dev *rfw_nic_dev(struct rfw_nic *nic)
{
	return nic->dev;
}

const uint8_t *rfw_nic_gid(const struct rfw_nic *nic)
{
	return nic->gid;
}

int rfw_nic_qp_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path)
{
	uint32_t i;
	struct nic_qp *nq;
	struct rfw_frame_spec sp = {0};
	uint8_t tmp[NIC_HDR_LEN + 64];

	if (nic == NULL || qp == NULL || path == NULL || !rfw_ip_is_mapped4(path->dst_ip))
		return -EINVAL;
	i = rfw_qp_num(qp) - nic->qpn_base;
	if (i >= nic->max_qp || rfw_dev_qp(nic->dev, rfw_qp_num(qp)) != qp)
		return -EINVAL;
	if (nic->qps[i] != NULL)
		return -EEXIST;
	nq = rte_zmalloc("rfw_nic_qp", sizeof(*nq), RTE_CACHE_LINE_SIZE);
	if (nq == NULL)
		return -ENOMEM;
	nq->qp = qp;
	nq->nic = nic;

	/* The template: everything in front of the BTH, built once by the frame codec. */
	memcpy(sp.dst_mac, path->dst_mac.addr_bytes, 6);
	memcpy(sp.src_mac, nic->src_mac.b, 6);
	sp.ip_ver = 4;
	sp.tos = nic->data_tos;
	sp.ttl = 64;
	sp.df = true;
	memcpy(sp.src_ip, nic->gid, 16);
	memcpy(sp.dst_ip, path->dst_ip, 16);
	sp.udp_sport =
	    path->udp_sport != 0 ? path->udp_sport : (uint16_t)(0xc000 | (rfw_qp_num(qp) & 0x3fff));
	if (rfw_frame_build_hdrs(tmp, sizeof(tmp), &sp, 0) != NIC_HDR_LEN) {
		rte_free(nq);
		return -EINVAL;
	}
	memcpy(nq->hdr, tmp, NIC_HDR_LEN);

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
	nic->qps[i] = nq;
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
	if (nq->cc)
		rfw_qp_set_cc(qp, NULL, NULL);
	nic->qps[i] = NULL;
	rte_free(nq);
}

uint64_t rfw_nic_ctr(const struct rfw_nic *nic, enum rfw_nic_ctr c)
{
	return (unsigned)c < RFW_NIC_CTR__COUNT ? nic->ctr[c] : 0;
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
