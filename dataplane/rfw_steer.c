/* SPDX-License-Identifier: BSD-3-Clause */
/* The software dispatcher between the queues of one port: see rfw_steer.h. */
#include "dataplane/rfw_steer.h"

#include <errno.h>
#include <stdio.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

int rfw_steer_create(struct rfw_port *p, int socket)
{
	struct rfw_steer *s;
	char name[RTE_RING_NAMESIZE];

	s = rte_zmalloc_socket("rfw_steer", sizeof(*s), RTE_CACHE_LINE_SIZE, socket);
	if (s == NULL)
		return -ENOMEM;
	s->nq = p->nb_rxq;
	p->steer = s;
	for (uint16_t to = 0; to < s->nq; to++) {
		for (uint16_t from = 0; from < s->nq; from++) {
			if (from == to)
				continue;
			snprintf(name, sizeof(name), "rfw_st%u_%u_%u", p->port_id, from, to);
			s->ring[to][from] = rte_ring_create(name, RFW_STEER_RING_SIZE, socket,
			                                    RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (s->ring[to][from] == NULL)
				return -ENOMEM;
		}
	}
	return 0;
}

void rfw_steer_free(struct rfw_port *p)
{
	struct rfw_steer *s = p->steer;
	struct rte_mbuf *m;

	if (s == NULL)
		return;
	for (uint16_t to = 0; to < RFW_MAX_QUEUES; to++) {
		for (uint16_t from = 0; from < RFW_MAX_QUEUES; from++) {
			struct rte_ring *r = s->ring[to][from];

			if (r == NULL)
				continue;
			while (rte_ring_sc_dequeue(r, (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(r);
		}
	}
	rte_free(s);
	p->steer = NULL;
}

int rfw_port_steer_add(struct rfw_port *p, uint16_t qid, uint32_t lo, uint32_t n)
{
	struct rfw_steer *s = p->steer;

	if (s == NULL || qid >= s->nq || n == 0 || lo + n < lo)
		return -EINVAL;
	for (uint16_t i = 0; i < s->nq; i++) {
		const struct rfw_steer_range *r = &s->own[i];

		if (r->n == 0)
			continue;
		if (i == qid || (lo < r->lo + r->n && r->lo < lo + n))
			return -EEXIST;
	}
	s->own[qid].lo = lo;
	__atomic_store_n(&s->own[qid].n, n, __ATOMIC_RELEASE);
	return 0;
}

void rfw_port_steer_del(struct rfw_port *p, uint16_t qid)
{
	if (p->steer != NULL && qid < p->steer->nq)
		__atomic_store_n(&p->steer->own[qid].n, 0, __ATOMIC_RELEASE);
}

void rfw_steer_put(struct rfw_queue *q, uint16_t to, struct rte_mbuf *m)
{
	if (likely(rte_ring_sp_enqueue(q->port->steer->ring[to][q->qid], m) == 0)) {
		q->ctr[RFW_PORT_CTR_rx_steered]++;
		return;
	}
	q->ctr[RFW_PORT_CTR_rx_steer_full]++;
	rte_pktmbuf_free(m);
}

uint16_t rfw_steer_take(struct rfw_queue *q, struct rte_mbuf **pkts, uint16_t max)
{
	const struct rfw_steer *s = q->port->steer;
	uint16_t n = 0;

	/* At most half a burst from the rings: the PMD's queue is never starved by them. */
	max /= 2;

	for (uint16_t from = 0; from < s->nq && n < max; from++) {
		if (from == q->qid)
			continue;
		n += (uint16_t)rte_ring_sc_dequeue_burst(s->ring[q->qid][from], (void **)(pkts + n),
		                                         max - n, NULL);
	}
	q->ctr[RFW_PORT_CTR_rx_steer_in] += n;
	return n;
}
