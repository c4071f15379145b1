/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues of the rocefw device: ibv_create_srq / ibv_create_srq_ex (basic SRQs),
 * ibv_modify_srq (the limit; no resize), ibv_query_srq, ibv_destroy_srq, ibv_post_srq_recv, and
 * the SRQ limit event (IBV_EVENT_SRQ_LIMIT_REACHED) through the context's async events. The
 * transport's SRQ (transport/srq.c) does the work, under the engine lock like every verb.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs/vrb.h"

_Static_assert((int)IBV_SRQ_MAX_WR == (int)RFW_SRQ_MAX_WR &&
                   (int)IBV_SRQ_LIMIT == (int)RFW_SRQ_LIMIT,
               "srq attribute mask bits");

/* On the thread driving the NIC (engine lock held): the armed limit was crossed. */
static void limit_reached(void *srq_context, struct rfw_srq *srq)
{
	struct rfw_vrb_srq *s = srq_context;

	(void)srq;
	rfw_vrb_async_post_srq(s->ctx, &s->ibv);
}

static struct ibv_srq *srq_create(struct ibv_pd *pd, void *srq_context, struct ibv_srq_attr *a)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(pd->context);
	struct rfw_srq_init_attr ia = {0};
	struct rfw_srq_attr qa;
	struct rfw_vrb_srq *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	ia.srq_context = s;
	ia.attr.max_wr = a->max_wr;
	ia.attr.max_sge = a->max_sge;
	ia.attr.srq_limit = a->srq_limit;
	ia.limit_reached = limit_reached;
	s->ctx = x;
	rfw_eng_lock(x->eng);
	s->srq = rfw_create_srq(((struct rfw_vrb_pd *)pd)->pd, &ia);
	if (s->srq != NULL && rfw_query_srq(s->srq, &qa) == 0) {
		a->max_wr = qa.max_wr;
		a->max_sge = qa.max_sge;
	}
	rfw_eng_unlock(x->eng);
	if (s->srq == NULL) {
		free(s);
		return NULL; /* errno from the transport: EINVAL (sizes), ENOMEM */
	}
	s->ibv.context = pd->context;
	s->ibv.srq_context = srq_context;
	s->ibv.pd = pd;
	pthread_mutex_init(&s->ibv.mutex, NULL);
	pthread_cond_init(&s->ibv.cond, NULL);
	return &s->ibv;
}

struct ibv_srq *rfw_vrb_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
	return srq_create(pd, a->srq_context, &a->attr);
}

struct ibv_srq *rfw_vrb_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;

	if ((a->comp_mask & ~known) != 0 ||
	    ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type != IBV_SRQT_BASIC)) {
		errno = rfw_vrb_unsupported("ibv_create_srq_ex", "XRC and tag-matching SRQs");
		return NULL;
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || a->pd == NULL || a->pd->context != c) {
		errno = EINVAL;
		return NULL;
	}
	return srq_create(a->pd, a->srq_context, &a->attr);
}

int rfw_vrb_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	struct rfw_vrb_srq *s = (struct rfw_vrb_srq *)srq;
	struct rfw_srq_attr r = {.max_wr = a->max_wr, .srq_limit = a->srq_limit};
	int ret;

	if (mask & IBV_SRQ_MAX_WR)
		return rfw_vrb_unsupported("ibv_modify_srq", "resizing an SRQ (IBV_SRQ_MAX_WR)");
	rfw_eng_lock(s->ctx->eng);
	ret = rfw_modify_srq(s->srq, &r, (unsigned)mask);
	rfw_eng_unlock(s->ctx->eng);
	return ret;
}

int rfw_vrb_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	struct rfw_vrb_srq *s = (struct rfw_vrb_srq *)srq;
	struct rfw_srq_attr r;
	int ret;

	rfw_eng_lock(s->ctx->eng);
	ret = rfw_query_srq(s->srq, &r);
	rfw_eng_unlock(s->ctx->eng);
	if (ret == 0) {
		a->max_wr = r.max_wr;
		a->max_sge = r.max_sge;
		a->srq_limit = r.srq_limit;
	}
	return ret;
}

int rfw_vrb_destroy_srq(struct ibv_srq *srq)
{
	struct rfw_vrb_srq *s = (struct rfw_vrb_srq *)srq;
	int ret;

	rfw_eng_lock(s->ctx->eng);
	ret = rfw_destroy_srq(s->srq);
	rfw_eng_unlock(s->ctx->eng);
	if (ret != 0)
		return ret; /* EBUSY: a QP still uses it */
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(s);
	return 0;
}

int rfw_vrb_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rfw_vrb_srq *s = (struct rfw_vrb_srq *)srq;
	struct rfw_recv_wr r, *rbad;
	int ret = 0;

	rfw_eng_lock(s->ctx->eng);
	for (; wr != NULL; wr = wr->next) {
		r.wr_id = wr->wr_id;
		r.next = NULL;
		r.sg_list = (struct rfw_sge *)(void *)wr->sg_list;
		r.num_sge = wr->num_sge;
		ret = rfw_post_srq_recv(s->srq, &r, &rbad);
		if (ret != 0) {
			*bad = wr;
			break;
		}
	}
	rfw_eng_unlock(s->ctx->eng);
	return ret;
}
