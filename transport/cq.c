/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queues: a fixed ring allocated at create time (IBA 11.4.2). */
#include <errno.h>
#include <stdlib.h>

#include "rfw_int.h"

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
		cq->es = calloc(cq->mask + 1, sizeof(*cq->es));
		if (cq->es == NULL) {
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
	free(cq->ring);
	free(cq);
	return 0;
}

/* The unpolled completions move to a ring of @cqe (their Estats entries with them). */
int rfw_resize_cq(struct rfw_cq *cq, uint32_t cqe)
{
	struct rfw_es_rec *es = NULL;
	struct rfw_wc *ring;
	uint32_t n, mask = rfw_ring_entries(cqe) - 1;

	if (cq == NULL || cqe == 0 || cqe > (1u << 24))
		return -EINVAL;
	n = cq->prod - cq->cons;
	if (cqe < n)
		return -EINVAL; /* ibv_resize_cq(3): not below the completions it holds */
	ring = calloc(mask + 1, sizeof(*ring));
	if (ring != NULL && cq->es != NULL)
		es = calloc(mask + 1, sizeof(*es));
	if (ring == NULL || (cq->es != NULL && es == NULL)) {
		free(ring);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		ring[i] = cq->ring[(cq->cons + i) & cq->mask];
		if (es != NULL)
			es[i] = cq->es[(cq->cons + i) & cq->mask];
	}
	free(cq->ring);
	free(cq->es);
	cq->ring = ring;
	cq->es = es;
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

int rfw_poll_cq_ts(struct rfw_cq *cq, int n, struct rfw_wc *wc, uint64_t now_ns)
{
	int got = 0;

	if (cq == NULL || n < 0 || (n && wc == NULL))
		return -EINVAL;
	while (got < n && cq->cons != cq->prod) {
		wc[got++] = cq->ring[cq->cons & cq->mask];
		if (cq->es)
			rfw_es_polled(cq, cq->cons, now_ns);
		cq->cons++;
	}
	return got;
}

int rfw_poll_cq(struct rfw_cq *cq, int n, struct rfw_wc *wc)
{
	return rfw_poll_cq_ts(cq, n, wc, cq != NULL ? cq->dev->now : 0);
}
