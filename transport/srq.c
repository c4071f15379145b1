/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues (ibv_create_srq(3)): one ring of receive WQEs that several QPs of a PD
 * take from. A QP takes a WQE only when a message needs one (the responder's SEND FIRST/ONLY, a
 * WRITE with immediate, or selective repeat placing a SEND by its RSN), so WQEs stay shared until
 * used; the ones taken sit in the QP's own ring and are completed (or flushed, IBA 10.3.1) from
 * there like those of a QP without an SRQ.
 */
#include <errno.h>
#include <stdlib.h>

#include "transport/rfw_int.h"

#define SRQ_MAX_WR  (1u << 16)
#define SRQ_MAX_SGE 32u

static void srq_free(struct rfw_srq *s)
{
	if (s->rq)
		for (uint32_t i = 0; i < s->size; i++)
			free(s->rq[i].sge);
	free(s->rq);
	free(s);
}

struct rfw_srq *rfw_create_srq(struct rfw_pd *pd, const struct rfw_srq_init_attr *ia)
{
	struct rfw_srq *s;

	if (pd == NULL || ia == NULL || ia->attr.max_wr == 0 || ia->attr.max_wr > SRQ_MAX_WR ||
	    ia->attr.max_sge > SRQ_MAX_SGE || ia->attr.srq_limit > ia->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->pd = pd;
	s->context = ia->srq_context;
	s->limit_reached = ia->limit_reached;
	s->max_wr = s->size = ia->attr.max_wr;
	s->max_sge = ia->attr.max_sge ? ia->attr.max_sge : 1;
	s->limit = ia->attr.srq_limit;
	s->armed = s->limit != 0;
	s->rq = calloc(s->size, sizeof(*s->rq));
	if (s->rq == NULL)
		goto nomem;
	for (uint32_t i = 0; i < s->size; i++) {
		s->rq[i].sge = calloc(s->max_sge, sizeof(struct rfw_sge));
		if (s->rq[i].sge == NULL)
			goto nomem;
	}
	pd->users++;
	return s;
nomem:
	srq_free(s);
	errno = ENOMEM;
	return NULL;
}

int rfw_destroy_srq(struct rfw_srq *s)
{
	if (s == NULL)
		return EINVAL;
	if (s->users)
		return EBUSY;
	s->pd->users--;
	srq_free(s);
	return 0;
}

int rfw_modify_srq(struct rfw_srq *s, const struct rfw_srq_attr *a, unsigned mask)
{
	if (s == NULL || a == NULL || (mask & ~(unsigned)(RFW_SRQ_MAX_WR | RFW_SRQ_LIMIT)))
		return EINVAL;
	if (mask & RFW_SRQ_MAX_WR)
		return EOPNOTSUPP; /* no SRQ resize (the device does not claim it) */
	if (mask & RFW_SRQ_LIMIT) {
		if (a->srq_limit > s->max_wr)
			return EINVAL;
		s->limit = a->srq_limit;
		s->armed = s->limit != 0; /* ibv_modify_srq(3): setting the limit arms it */
	}
	return 0;
}

int rfw_query_srq(const struct rfw_srq *s, struct rfw_srq_attr *a)
{
	if (s == NULL || a == NULL)
		return EINVAL;
	a->max_wr = s->max_wr;
	a->max_sge = s->max_sge;
	a->srq_limit = s->armed ? s->limit : 0;
	return 0;
}

void *rfw_srq_context(const struct rfw_srq *s)
{
	return s->context;
}

/*
 * WQEs were posted: the selective-repeat QPs held at a message end for one try again while
 * WQEs last (the most recent waiter first). A retry takes a WQE if one is left, so one that
 * waits again (back on the list) only does so once the SRQ is empty: the loop ends.
 */
static void srq_wake(struct rfw_srq *s)
{
	while (s->waiters != NULL && s->prod != s->cons) {
		struct rfw_qp *q = s->waiters;

		s->waiters = q->srq_next;
		q->srq_next = NULL;
		q->srq_waiting = false;
		rfw_sr_recv_posted(q);
		rfw_qp_doorbell(q);
	}
}

void rfw_srq_wait(struct rfw_qp *qp)
{
	struct rfw_srq *s = qp->srq;

	if (s == NULL || qp->srq_waiting)
		return;
	qp->srq_waiting = true;
	qp->srq_next = s->waiters;
	s->waiters = qp;
}

void rfw_srq_unwait(struct rfw_qp *qp)
{
	struct rfw_qp **pp;

	if (!qp->srq_waiting)
		return;
	for (pp = &qp->srq->waiters; *pp != NULL; pp = &(*pp)->srq_next)
		if (*pp == qp) {
			*pp = qp->srq_next;
			break;
		}
	qp->srq_waiting = false;
	qp->srq_next = NULL;
}

int rfw_post_srq_recv(struct rfw_srq *s, struct rfw_recv_wr *wr, struct rfw_recv_wr **bad_wr)
{
	uint32_t prod;
	int err = 0;

	if (s == NULL)
		return EINVAL;
	prod = s->prod;
	for (; wr; wr = wr->next) {
		err = s->prod - s->cons >= s->size
		          ? ENOMEM
		          : rfw_rwqe_set(&s->rq[s->prod % s->size], wr, s->max_sge);
		if (err) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
		s->prod++;
	}
	if (s->prod != prod && s->waiters != NULL)
		srq_wake(s);
	return err;
}

/* One WQE from the SRQ into the QP's ring: the slots swap, scatter lists included. */
static void srq_take(struct rfw_qp *qp, struct rfw_srq *s)
{
	struct rfw_rwqe *from = &s->rq[s->cons % s->size];
	struct rfw_rwqe *to = rfw_rq_at(qp, qp->rq_prod);
	struct rfw_rwqe t = *to;

	*to = *from;
	*from = t;
	s->cons++;
	qp->rq_prod++;
	if (s->armed && s->prod - s->cons < s->limit) {
		s->armed = false; /* one event per arming (ibv_modify_srq(3)) */
		if (s->limit_reached != NULL)
			s->limit_reached(s->context, s);
	}
}

uint32_t rfw_rq_avail(struct rfw_qp *qp, uint32_t want)
{
	struct rfw_srq *s = qp->srq;

	while (s != NULL && qp->rq_prod - qp->rq_cons < want &&
	       qp->rq_prod - qp->rq_cons < qp->rq_size && s->prod != s->cons)
		srq_take(qp, s);
	return qp->rq_prod - qp->rq_cons;
}
