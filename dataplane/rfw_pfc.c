/* SPDX-License-Identifier: BSD-3-Clause */
/* PAUSE/PFC reception, TX holding and the PFC watchdog. See rfw_pfc.h and docs/pfc.md. */
#include "dataplane/rfw_pfc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "dataplane/rfw_port.h"

static const char *const ctr_names[] = {
#define X(name, doc) #name,
    RFW_FOREACH_PFC_CTR(X)
#undef X
};
static const char *const ctr_docs[] = {
#define X(name, doc) doc,
    RFW_FOREACH_PFC_CTR(X)
#undef X
};
static const char *const pctr_fmts[] = {
#define X(id, name, doc) name,
    RFW_FOREACH_PFC_PRIO_CTR(X)
#undef X
};
static const char *const pctr_docs[] = {
#define X(id, name, doc) doc,
    RFW_FOREACH_PFC_PRIO_CTR(X)
#undef X
};
_Static_assert(RTE_DIM(ctr_names) == RFW_PFC_CTR__COUNT, "PFC counter names");
_Static_assert(RTE_DIM(pctr_fmts) == RFW_PFC_PCTR__COUNT, "PFC priority counter names");

const char *rfw_pfc_ctr_name(enum rfw_pfc_ctr c)
{
	return (unsigned)c < RFW_PFC_CTR__COUNT ? ctr_names[c] : "unknown";
}
const char *rfw_pfc_ctr_doc(enum rfw_pfc_ctr c)
{
	return (unsigned)c < RFW_PFC_CTR__COUNT ? ctr_docs[c] : "unknown";
}
const char *rfw_pfc_prio_ctr_fmt(enum rfw_pfc_prio_ctr c)
{
	return (unsigned)c < RFW_PFC_PCTR__COUNT ? pctr_fmts[c] : "unknown";
}
const char *rfw_pfc_prio_ctr_doc(enum rfw_pfc_prio_ctr c)
{
	return (unsigned)c < RFW_PFC_PCTR__COUNT ? pctr_docs[c] : "unknown";
}

/* ---- setup ---- */

int rfw_pfc_conf_check(const struct rfw_pfc_conf *c)
{
	if (c->link_mbps > RFW_PFC_LINK_MBPS_MAX || c->wd_ms > RFW_PFC_WD_MS_MAX ||
	    c->wd_restore_ms > RFW_PFC_WD_MS_MAX)
		return -EINVAL;
	if (c->gen_prio_mask != 0 &&
	    (c->gen_xoff == 1 || c->gen_xoff > 65535 ||
	     (c->gen_xon != 0 && c->gen_xon >= (c->gen_xoff ? c->gen_xoff : 256u))))
		return -EINVAL;
	if (c->dscp2prio != NULL)
		for (unsigned i = 0; i < 64; i++)
			if (c->dscp2prio[i] > 7)
				return -EINVAL;
	return 0;
}

int rfw_pfc_port_init(struct rfw_port *p, const struct rfw_pfc_conf *c, int socket)
{
	struct rfw_pfc *s = rte_zmalloc_socket("rfw_pfc", sizeof(*s), RTE_CACHE_LINE_SIZE, socket);

	if (s == NULL)
		return -ENOMEM;
	p->pfc = s;
	s->hz = rte_get_tsc_hz();
	s->off = c->off;
	s->wd_off = c->wd_off;
	s->link_mbps = c->link_mbps;
	s->wd_tsc = s->hz / 1000 * (c->wd_ms ? c->wd_ms : RFW_PFC_WD_MS_DEFAULT);
	s->restore_tsc =
	    s->hz / 1000 * (c->wd_restore_ms ? c->wd_restore_ms : RFW_PFC_WD_RESTORE_MS_DEFAULT);
	for (unsigned i = 0; i < 64; i++)
		s->dscp2prio[i] = c->dscp2prio ? c->dscp2prio[i] : (uint8_t)(i >> 3);
	s->gen_mask = c->gen_prio_mask;
	s->gen_xoff = c->gen_xoff ? c->gen_xoff : 256;
	s->gen_xon = c->gen_xon ? c->gen_xon : s->gen_xoff / 2;
	s->gen_quanta = c->gen_quanta ? c->gen_quanta : 0xffff;
	for (unsigned i = 0; i < RFW_MAX_QUEUES; i++) {
		struct rfw_queue *q = p->q[i];

		if (q == NULL)
			continue;
		q->pfc_state = &s->state;
		q->pfc_txq = rte_zmalloc_socket("rfw_pfc_txq", sizeof(*q->pfc_txq),
		                                RTE_CACHE_LINE_SIZE, socket);
		if (q->pfc_txq == NULL)
			return -ENOMEM; /* rfw_pfc_port_free() undoes the rest */
	}
	return 0;
}

void rfw_pfc_port_link(struct rfw_port *p, uint32_t pmd_mbps)
{
	if (p->pfc == NULL || p->pfc->link_mbps != 0)
		return;
	if (pmd_mbps == 0 || pmd_mbps > RFW_PFC_LINK_MBPS_MAX)
		pmd_mbps = RFW_PFC_LINK_MBPS_FALLBACK;
	p->pfc->link_mbps = pmd_mbps;
}

void rfw_pfc_port_free(struct rfw_port *p)
{
	for (unsigned i = 0; i < RFW_MAX_QUEUES; i++) {
		struct rfw_queue *q = p->q[i];
		struct rfw_pfc_txq *t;

		if (q == NULL || (t = q->pfc_txq) == NULL)
			continue;
		for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++)
			for (; t->n[pr] != 0; t->n[pr]--) {
				rte_pktmbuf_free(t->ring[pr][t->head[pr]]);
				t->head[pr] = (uint16_t)((t->head[pr] + 1) % RFW_PFC_HOLD_MAX);
			}
		rte_free(t);
		q->pfc_txq = NULL;
		q->pfc_held = 0;
		q->pfc_state = NULL;
	}
	rte_free(p->pfc);
	p->pfc = NULL;
}

/* ---- RX: the writer ---- */

static inline void state_set(struct rfw_pfc *s, uint16_t v)
{
	/* Release: a reader that sees a paused bit also sees its until[]. */
	__atomic_store_n(&s->state, v, __ATOMIC_RELEASE);
}

static inline uint64_t quanta_tsc(const struct rfw_pfc *s, uint16_t quanta)
{
	uint32_t mbps = s->link_mbps ? s->link_mbps : RFW_PFC_LINK_MBPS_FALLBACK;

	/* quanta x 512 bits at mbps x 10^6 b/s, in TSC cycles, rounded up. */
	return (uint64_t)(((unsigned __int128)quanta * RFW_PAUSE_QUANTUM_BITS * s->hz +
	                   (uint64_t)mbps * 1000000 - 1) /
	                  ((uint64_t)mbps * 1000000));
}

/*
 * The pause of @pr ends at @t (expiry, XON or storm): account its duration, clear its paused bit
 * and set @also in the same store (a reader never sees a storm without its pause ended, nor a
 * pause ended before its storm bit).
 */
static void pause_end(struct rfw_pfc *s, unsigned pr, uint64_t t, uint16_t also)
{
	uint64_t began = s->since[pr] > t ? t : s->since[pr];

	s->prio_ctr[RFW_PFC_PCTR_rx_pause_duration][pr] += (t - began) * 1000000 / s->hz;
	s->prio_ctr[RFW_PFC_PCTR_rx_pause_transition][pr]++;
	state_set(s, (uint16_t)((s->state & ~(1u << pr)) | also));
}

void rfw_pfc_rx(struct rfw_queue *q, const uint8_t *buf, size_t len, uint64_t now_tsc)
{
	struct rfw_pfc *s = q->port->pfc;
	struct rfw_pfc_msg m;
	enum rfw_pfc_err err;

	s->ctr[RFW_PFC_CTR_rx_mac_control_phy]++;
	err = rfw_pfc_parse(buf, len, q->port->id.mac.addr_bytes, &m);
	if (err == RFW_PFC_ERR_UNSUPPORTED_OPCODE) {
		s->ctr[RFW_PFC_CTR_rx_unsupported_op_phy]++;
		return;
	}
	if (err != RFW_PFC_ERR_OK) {
		s->ctr[RFW_PFC_CTR_rx_macctl_bad]++;
		s->bad[err]++;
		return;
	}
	s->ctr[RFW_PFC_CTR_rx_pause_ctrl_phy]++;
	if (m.opcode == RFW_MACCTL_OP_PAUSE)
		s->ctr[RFW_PFC_CTR_rx_global_pause]++;
	if (s->off) {
		s->ctr[RFW_PFC_CTR_rx_pause_not_honoured]++;
		return;
	}
	for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++) {
		uint16_t st = s->state;

		if (!(m.enable >> pr & 1))
			continue;
		s->prio_ctr[RFW_PFC_PCTR_rx_pause][pr]++;
		if (m.quanta[pr] == 0) {
			/* XON: resume now (802.1Qbb 36.1.3.1, 802.3 31B.3.7). */
			s->prio_ctr[RFW_PFC_PCTR_rx_xon][pr]++;
			if (RFW_PFC_STATE_PAUSED(st) >> pr & 1)
				pause_end(s, pr, now_tsc, 0);
			continue;
		}
		s->last_xoff[pr] = now_tsc;
		if (RFW_PFC_STATE_STORM(st) >> pr & 1) {
			s->prio_ctr[RFW_PFC_PCTR_wd_ignored][pr]++;
			continue;
		}
		/* A new pause time replaces the running one (802.3 31B.3.7). */
		__atomic_store_n(&s->until[pr], now_tsc + quanta_tsc(s, m.quanta[pr]),
		                 __ATOMIC_RELAXED);
		if (!(RFW_PFC_STATE_PAUSED(st) >> pr & 1)) {
			s->since[pr] = now_tsc;
			state_set(s, st | (uint16_t)(1u << pr));
		}
	}
}

void rfw_pfc_poll(struct rfw_port *p, uint64_t now_tsc)
{
	struct rfw_pfc *s = p->pfc;

	for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++) {
		uint16_t st = s->state;

		if (RFW_PFC_STATE_PAUSED(st) >> pr & 1) {
			if (now_tsc >= s->until[pr]) {
				pause_end(s, pr, s->until[pr], 0);
			} else if (!s->wd_off && now_tsc - s->since[pr] >= s->wd_tsc) {
				/* Paused without a break for wd_ms: a storm. Stop honouring. */
				s->prio_ctr[RFW_PFC_PCTR_wd_storm][pr]++;
				pause_end(s, pr, now_tsc, (uint16_t)(0x100u << pr));
			}
		} else if ((RFW_PFC_STATE_STORM(st) >> pr & 1) &&
		           now_tsc - s->last_xoff[pr] >= s->restore_tsc) {
			s->prio_ctr[RFW_PFC_PCTR_wd_restored][pr]++;
			state_set(s, st & (uint16_t) ~(0x100u << pr));
		}
	}
}

/* ---- TX ---- */

static inline uint8_t blocked_mask(const struct rfw_pfc *s, uint16_t st, uint64_t now_tsc)
{
	uint8_t paused = RFW_PFC_STATE_PAUSED(st) & (uint8_t)~RFW_PFC_STATE_STORM(st);
	uint8_t out = 0;

	/* A pause that expired since the writer's last poll is over for the reader too. */
	for (unsigned pr = 0; paused != 0; pr++, paused >>= 1)
		if ((paused & 1) && now_tsc < __atomic_load_n(&s->until[pr], __ATOMIC_RELAXED))
			out |= (uint8_t)(1u << pr);
	return out;
}

static inline void ring_pop(struct rfw_pfc_txq *t, unsigned pr, unsigned n)
{
	t->head[pr] = (uint16_t)((t->head[pr] + n) % RFW_PFC_HOLD_MAX);
	t->n[pr] = (uint16_t)(t->n[pr] - n);
	t->held -= n;
}

/* Send @pr's held frames, oldest first, as far as the PMD takes them. */
static void release(struct rfw_queue *q, struct rfw_pfc_txq *t, unsigned pr)
{
	while (t->n[pr] != 0) {
		struct rte_mbuf *burst[RFW_MAX_BURST];
		unsigned n = RTE_MIN((unsigned)t->n[pr], (unsigned)RFW_MAX_BURST), sent;

		for (unsigned i = 0; i < n; i++)
			burst[i] = t->ring[pr][(t->head[pr] + i) % RFW_PFC_HOLD_MAX];
		sent = rte_eth_tx_burst(q->port_id, q->qid, burst, (uint16_t)n);
		q->ctr[RFW_PORT_CTR_tx_pkts] += sent;
		ring_pop(t, pr, sent);
		if (sent < n)
			return; /* the rest keeps its place; retried at the next flush */
	}
}

void rfw_pfc_tx_filter(struct rfw_queue *q)
{
	uint64_t now_tsc = rte_rdtsc();
	const struct rfw_pfc *s = q->port->pfc;
	struct rfw_pfc_txq *t = q->pfc_txq;
	struct rte_eth_dev_tx_buffer *b = q->txb;
	uint16_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	uint8_t blocked = blocked_mask(s, st, now_tsc), storm = RFW_PFC_STATE_STORM(st);
	uint16_t keep = 0;

	/* Held frames are older than anything buffered: they go (or are dropped) first. */
	for (unsigned pr = 0; t->held != 0 && pr < RFW_PFC_PRIOS; pr++) {
		if (t->n[pr] == 0 || (blocked >> pr & 1))
			continue;
		if (storm >> pr & 1) {
			t->prio_ctr[RFW_PFC_PCTR_wd_dropped][pr] += t->n[pr];
			while (t->n[pr] != 0) {
				rte_pktmbuf_free(t->ring[pr][t->head[pr]]);
				ring_pop(t, pr, 1);
			}
		} else {
			release(q, t, pr);
		}
	}
	for (uint16_t i = 0; i < b->length; i++) {
		struct rte_mbuf *m = b->pkts[i];
		int pr = rfw_pfc_frame_prio(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
		                            s->dscp2prio);

		/* Behind a pause, or behind frames of its priority still held: keep the order. */
		if (pr < 0 || (!(blocked >> pr & 1) && t->n[pr] == 0)) {
			b->pkts[keep++] = m;
			continue;
		}
		if (t->n[pr] == RFW_PFC_HOLD_MAX) {
			t->prio_ctr[RFW_PFC_PCTR_tx_pause_hold_full][pr]++;
			rte_pktmbuf_free(m);
			continue;
		}
		m = rfw_tx_own(q, m); /* held past this poll */
		if (m == NULL)
			continue;
		t->ring[pr][(t->head[pr] + t->n[pr]) % RFW_PFC_HOLD_MAX] = m;
		t->n[pr]++;
		t->held++;
		t->prio_ctr[RFW_PFC_PCTR_tx_pause_held][pr]++;
	}
	b->length = keep;
	q->pfc_held = t->held;
}

/* ---- generation ---- */

/* One PFC frame for the generation mask with @quanta (0: XON), straight to the PMD. */
static bool gen_send(struct rfw_queue *q, struct rfw_pfc *s, uint16_t quanta)
{
	uint16_t qv[RFW_PFC_PRIOS];
	struct rte_mbuf *m = rte_pktmbuf_alloc(q->port->pool);
	char *d;

	for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++)
		qv[pr] = quanta;
	if (m == NULL || (d = rte_pktmbuf_append(m, RFW_MACCTL_FRAME_LEN)) == NULL) {
		rte_pktmbuf_free(m);
		s->ctr[RFW_PFC_CTR_tx_pause_alloc_failed]++;
		return false;
	}
	rfw_pfc_build((uint8_t *)d, RFW_MACCTL_FRAME_LEN, q->port->id.mac.addr_bytes, s->gen_mask,
	              qv);
	if (rte_eth_tx_burst(q->port_id, q->qid, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		s->ctr[RFW_PFC_CTR_tx_pause_alloc_failed]++;
		return false;
	}
	s->ctr[RFW_PFC_CTR_tx_pause_ctrl_phy]++;
	for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++)
		if (s->gen_mask >> pr & 1)
			s->prio_ctr[RFW_PFC_PCTR_tx_pause][pr]++;
	return true;
}

int rfw_pfc_rx_backlog(struct rfw_queue *q, uint32_t depth, uint64_t now_tsc)
{
	struct rfw_pfc *s = q->port->pfc;

	if (s->gen_mask == 0)
		return -ENOTSUP;
	if (!s->gen_on) {
		if (depth >= s->gen_xoff && gen_send(q, s, s->gen_quanta)) {
			s->gen_on = true;
			s->gen_since = now_tsc;
			s->gen_next = now_tsc + quanta_tsc(s, s->gen_quanta) / 2;
		}
		return s->gen_on;
	}
	if (depth <= s->gen_xon) {
		/* An XON that cannot be sent is retried at the next report; the peer's pause
		 * also runs out by itself. */
		if (gen_send(q, s, 0)) {
			uint64_t us = (now_tsc - s->gen_since) * 1000000 / s->hz;

			for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++)
				if (s->gen_mask >> pr & 1)
					s->prio_ctr[RFW_PFC_PCTR_tx_pause_duration][pr] += us;
			s->gen_on = false;
		}
		return s->gen_on;
	}
	/* Still above XON: refresh at half the pause time so the peer's pause never lapses. */
	if (now_tsc >= s->gen_next && gen_send(q, s, s->gen_quanta))
		s->gen_next = now_tsc + quanta_tsc(s, s->gen_quanta) / 2;
	return 1;
}

/* ---- reading ---- */

uint8_t rfw_pfc_paused(const struct rfw_port *p, uint64_t now_tsc)
{
	const struct rfw_pfc *s = p->pfc;

	return blocked_mask(s, __atomic_load_n(&s->state, __ATOMIC_ACQUIRE), now_tsc);
}

uint8_t rfw_pfc_storm(const struct rfw_port *p)
{
	return RFW_PFC_STATE_STORM(__atomic_load_n(&p->pfc->state, __ATOMIC_ACQUIRE));
}

uint64_t rfw_pfc_ctr(const struct rfw_port *p, enum rfw_pfc_ctr c)
{
	return (unsigned)c < RFW_PFC_CTR__COUNT ? p->pfc->ctr[c] : 0;
}

uint64_t rfw_pfc_prio_ctr(const struct rfw_port *p, enum rfw_pfc_prio_ctr c, unsigned prio)
{
	uint64_t sum;

	if ((unsigned)c >= RFW_PFC_PCTR__COUNT || prio >= RFW_PFC_PRIOS)
		return 0;
	sum = p->pfc->prio_ctr[c][prio];
	for (unsigned i = 0; i < RFW_MAX_QUEUES; i++)
		if (p->q[i] != NULL && p->q[i]->pfc_txq != NULL)
			sum += p->q[i]->pfc_txq->prio_ctr[c][prio];
	return sum;
}

uint32_t rfw_pfc_held(const struct rfw_port *p, unsigned prio)
{
	uint32_t sum = 0;

	for (unsigned i = 0; prio < RFW_PFC_PRIOS && i < RFW_MAX_QUEUES; i++)
		if (p->q[i] != NULL && p->q[i]->pfc_txq != NULL)
			sum += p->q[i]->pfc_txq->n[prio];
	return sum;
}

/* ---- telemetry: /rocefw/port/pfc,<port> ---- */

static int tel_port_pfc(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct rfw_port *p;
	char name[64];
	unsigned long id;
	char *end;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	id = strtoul(params, &end, 10);
	if (*end != '\0' || id >= RTE_MAX_ETHPORTS || (p = rfw_port_get((uint16_t)id)) == NULL ||
	    p->pfc == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.port.pfc/1");
	rte_tel_data_add_dict_int(d, "port", p->port_id);
	rte_tel_data_add_dict_u64(d, "link_mbps", p->pfc->link_mbps);
	rte_tel_data_add_dict_u64(d, "paused_mask", rfw_pfc_paused(p, rte_rdtsc()));
	rte_tel_data_add_dict_u64(d, "storm_mask", rfw_pfc_storm(p));
	for (unsigned c = 0; c < RFW_PFC_CTR__COUNT; c++)
		rte_tel_data_add_dict_u64(d, ctr_names[c], p->pfc->ctr[c]);
	for (unsigned c = 0; c < RFW_PFC_PCTR__COUNT; c++)
		for (unsigned pr = 0; pr < RFW_PFC_PRIOS; pr++) {
			snprintf(name, sizeof(name), pctr_fmts[c], pr);
			rte_tel_data_add_dict_u64(
			    d, name, rfw_pfc_prio_ctr(p, (enum rfw_pfc_prio_ctr)c, pr));
		}
	for (unsigned e = 1; e < RFW_PFC_ERR__COUNT; e++)
		if (p->pfc->bad[e] != 0)
			rte_tel_data_add_dict_u64(d, rfw_pfc_err_name((enum rfw_pfc_err)e),
			                          p->pfc->bad[e]);
	return 0;
}

RTE_INIT(rfw_pfc_telemetry)
{
	rte_telemetry_register_cmd("/rocefw/port/pfc", tel_port_pfc,
	                           "PFC/PAUSE state and counters of a port. Parameter: port id");
}
