/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queues: a fixed ring allocated at create time (IBA 11.4.2). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rfw_int.h"

/* Estats side entries for @entries ring entries, zeroed, 64-byte aligned (a side entry is
 * half a line, never across two); NULL: no memory. */
static struct rfw_es_crec *es_alloc(uint32_t entries)
{
	size_t bytes = ((size_t)entries * sizeof(struct rfw_es_crec) + 63) & ~(size_t)63;
	struct rfw_es_crec *es = aligned_alloc(64, bytes);

	if (es != NULL)
		memset(es, 0, bytes);
	return es;
}

struct rfw_cq *rfw_create_cq(struct rfw_dev *dev, uint32_t cqe)
{
	struct rfw_cq *cq;

	if (dev == NULL || cqe == 0 || cqe > (1u << 24)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->mask = rfw_ring_entries(cqe) - 1;
	cq->ring = calloc(cq->mask + 1, sizeof(*cq->ring));
	if (cq->ring == NULL) {
		free(cq);
		return NULL;
	}
	if (dev->attr.estats) {
		cq->es = es_alloc(cq->mask + 1);
		cq->es_wide = calloc(cq->mask + 1, sizeof(*cq->es_wide));
		if (cq->es == NULL || cq->es_wide == NULL) {
			free(cq->es);
			free(cq->es_wide);
			free(cq->ring);
			free(cq);
			return NULL;
		}
	}
	cq->dev = dev;
	cq->size = cqe;
	return cq;
}

int rfw_destroy_cq(struct rfw_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	if (cq->users)
		return -EBUSY;
	free(cq->es);
	free(cq->es_wide);
	free(cq->ring);
	free(cq);
	return 0;
}

/* The unpolled completions move to a ring of @cqe (their Estats side entries with them). */
int rfw_resize_cq(struct rfw_cq *cq, uint32_t cqe)
{
	struct rfw_es_crec *es = NULL;
	struct rfw_es_wide *wide = NULL;
	struct rfw_wc *ring;
	uint32_t n, mask = rfw_ring_entries(cqe) - 1;

	if (cq == NULL || cqe == 0 || cqe > (1u << 24))
		return -EINVAL;
	n = cq->prod - cq->cons;
	if (cqe < n)
		return -EINVAL; /* ibv_resize_cq(3): not below the completions it holds */
	ring = calloc(mask + 1, sizeof(*ring));
	if (ring != NULL && cq->es != NULL) {
		es = es_alloc(mask + 1);
		wide = calloc(mask + 1, sizeof(*wide));
	}
	if (ring == NULL || (cq->es != NULL && (es == NULL || wide == NULL))) {
		free(ring);
		free(es);
		free(wide);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t from = (cq->cons + i) & cq->mask;

		ring[i] = cq->ring[from];
		if (es != NULL) {
			es[i] = cq->es[from];
			wide[i] = cq->es_wide[from];
		}
	}
	free(cq->ring);
	free(cq->es);
	free(cq->es_wide);
	cq->ring = ring;
	cq->es = es;
	cq->es_wide = wide;
	cq->size = cqe;
	cq->mask = mask;
	cq->cons = 0;
	cq->prod = n;
	return 0;
}

uint32_t rfw_cq_count(const struct rfw_cq *cq)
{
	return cq->prod - cq->cons;
}

/* rfw_poll_cq_ts with Estats on: the CQEs' records go on as they are polled (T6), the burst's
 * together. A loop of its own, so that the loop without Estats stays as lean as before it. */
static int poll_es(struct rfw_cq *cq, int n, struct rfw_wc *wc, uint64_t now_ns)
{
	uint32_t first = cq->cons;
	int got = 0;

	while (got < n && cq->cons != cq->prod) {
		wc[got++] = cq->ring[cq->cons & cq->mask];
		cq->cons++;
	}
	if (got)
		rfw_es_polled_burst(cq, first, got, now_ns, wc);
	return got;
}

int rfw_poll_cq_ts(struct rfw_cq *cq, int n, struct rfw_wc *wc, uint64_t now_ns)
{
	int got = 0;

	if (cq == NULL || n < 0 || (n && wc == NULL))
		return -EINVAL;
	if (cq->es != NULL)
		return poll_es(cq, n, wc, now_ns);
	while (got < n && cq->cons != cq->prod) {
		wc[got++] = cq->ring[cq->cons & cq->mask];
		cq->cons++;
	}
	return got;
}

int rfw_poll_cq(struct rfw_cq *cq, int n, struct rfw_wc *wc)
{
	return rfw_poll_cq_ts(cq, n, wc, cq != NULL ? cq->dev->now : 0);
}
