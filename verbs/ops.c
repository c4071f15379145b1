/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ops tables of a rocefw context. libibverbs' inline verbs (verbs.h) call through them:
 * ibv_post_send/post_recv/poll_cq/req_notify_cq through context->ops, the extended ones through
 * struct verbs_context when verbs_get_ctx_op() finds the op (context->abi_compat is
 * __VERBS_ABI_IS_EXTENDED and vctx->sz covers the field). An op left NULL makes the inline
 * wrapper fail with EOPNOTSUPP silently; the ops rocefw lacks are therefore filled with stubs
 * that say which verb it was (rfw_vrb_unsupported), once per verb.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs/vrb.h"

/* The stubs take the ops' signatures and use none of the arguments. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define UNSUPPORTED_PTR(name, type, verb, why, ...)                                                \
	static type *name(__VA_ARGS__)                                                             \
	{                                                                                          \
		errno = rfw_vrb_unsupported(verb, why);                                            \
		return NULL;                                                                       \
	}
#define UNSUPPORTED_INT(name, verb, why, ...)                                                      \
	static int name(__VA_ARGS__)                                                               \
	{                                                                                          \
		return rfw_vrb_unsupported(verb, why);                                             \
	}

int rfw_vrb_unsupported(const char *verb, const char *why)
{
	static char said[64][48];
	static unsigned nsaid;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	bool first = true;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nsaid; i++)
		if (strcmp(said[i], verb) == 0)
			first = false;
	if (first && nsaid < 64)
		snprintf(said[nsaid++], sizeof(said[0]), "%s", verb);
	pthread_mutex_unlock(&lock);
	if (first)
		fprintf(stderr, "rocefw-verbs: %s: not supported by rocefw0 (%s): EOPNOTSUPP\n",
		        verb, why);
	return EOPNOTSUPP;
}

UNSUPPORTED_PTR(xrcd_open, struct ibv_xrcd, "ibv_open_xrcd", "XRC", struct ibv_context *c,
                struct ibv_xrcd_init_attr *a)
UNSUPPORTED_PTR(qp_open, struct ibv_qp, "ibv_open_qp", "XRC", struct ibv_context *c,
                struct ibv_qp_open_attr *a)
UNSUPPORTED_PTR(dm_alloc, struct ibv_dm, "ibv_alloc_dm", "device memory", struct ibv_context *c,
                struct ibv_alloc_dm_attr *a)
UNSUPPORTED_PTR(td_alloc, struct ibv_td, "ibv_alloc_td", "thread domains", struct ibv_context *c,
                struct ibv_td_init_attr *a)
UNSUPPORTED_PTR(parent_domain, struct ibv_pd, "ibv_alloc_parent_domain", "parent domains",
                struct ibv_context *c, struct ibv_parent_domain_init_attr *a)
UNSUPPORTED_INT(rt_values, "ibv_query_rt_values_ex", "a raw hardware clock", struct ibv_context *c,
                struct ibv_values_ex *v)
UNSUPPORTED_INT(cq_modify, "ibv_modify_cq", "CQ moderation", struct ibv_cq *cq,
                struct ibv_modify_cq_attr *a)
UNSUPPORTED_PTR(wq_create, struct ibv_wq, "ibv_create_wq", "work queues (RSS)",
                struct ibv_context *c, struct ibv_wq_init_attr *a)
UNSUPPORTED_PTR(ind_table, struct ibv_rwq_ind_table, "ibv_create_rwq_ind_table",
                "work queues (RSS)", struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *a)
UNSUPPORTED_PTR(flow_create, struct ibv_flow, "ibv_create_flow", "flow steering", struct ibv_qp *qp,
                struct ibv_flow_attr *a)
UNSUPPORTED_PTR(counters_create, struct ibv_counters, "ibv_create_counters",
                "flow counters (rocefw's counters "
                "are in telemetry)",
                struct ibv_context *c, struct ibv_counters_init_attr *a)
UNSUPPORTED_INT(mr_advise, "ibv_advise_mr", "on-demand paging", struct ibv_pd *pd,
                enum ibv_advise_mr_advice adv, uint32_t flags, struct ibv_sge *sg, uint32_t n)
UNSUPPORTED_PTR(null_mr, struct ibv_mr, "ibv_alloc_null_mr", "null MRs", struct ibv_pd *pd)
UNSUPPORTED_INT(rate_limit, "ibv_modify_qp_rate_limit",
                "per-QP rate limits (use a DCQCN "
                "profile)",
                struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *a)

/* ibv_create_qp_ex: ibv_create_qp's attributes, and send_ops_flags for the ibv_wr_* API. */
static struct ibv_qp *qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	/* Create flags and a TSO header size of 0 ask for nothing (pyverbs sets the mask so). */
	uint32_t mask = a->comp_mask;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	int err;

	if ((mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags == 0)
		mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	if ((mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) && a->max_tso_header == 0)
		mask &= ~(uint32_t)IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	if ((mask & ~known) != 0 || a->pd == NULL || a->pd->context != c) {
		errno =
		    rfw_vrb_unsupported("ibv_create_qp_ex", "attributes beyond ibv_create_qp's "
		                                            "and send_ops_flags (XRC, RSS, TSO, "
		                                            "create flags)");
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = a->qp_context;
	ia.send_cq = a->send_cq;
	ia.recv_cq = a->recv_cq;
	ia.srq = a->srq;
	ia.cap = a->cap;
	ia.qp_type = a->qp_type;
	ia.sq_sig_all = a->sq_sig_all;
	qp = rfw_vrb_create_qp(a->pd, &ia);
	if (qp == NULL)
		return NULL;
	a->cap = ia.cap;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (err = rfw_vrb_qp_ex_init((struct rfw_vrb_qp *)qp, a->send_ops_flags)) != 0) {
		rfw_vrb_destroy_qp(qp);
		errno = err;
		return NULL;
	}
	return qp;
}

void rfw_vrb_ctx_ops(struct rfw_vrb_ctx *x)
{
	struct ibv_context_ops *o = &x->vctx.context.ops;
	struct verbs_context *v = &x->vctx;

	o->poll_cq = rfw_vrb_poll_cq;
	o->req_notify_cq = rfw_vrb_req_notify_cq;
	o->post_send = rfw_vrb_post_send;
	o->post_recv = rfw_vrb_post_recv;
	o->post_srq_recv = rfw_vrb_post_srq_recv;
	o->alloc_mw = rfw_vrb_alloc_mw;
	o->bind_mw = rfw_vrb_bind_mw;
	o->dealloc_mw = rfw_vrb_dealloc_mw;
	v->create_qp_ex = qp_ex;
	v->create_cq_ex = rfw_vrb_create_cq_ex;
	v->create_srq_ex = rfw_vrb_create_srq_ex;
	v->open_xrcd = xrcd_open;
	v->open_qp = qp_open;
	v->alloc_dm = dm_alloc;
	v->alloc_td = td_alloc;
	v->alloc_parent_domain = parent_domain;
	v->query_rt_values = rt_values;
	v->modify_cq = cq_modify;
	v->create_wq = wq_create;
	v->create_rwq_ind_table = ind_table;
	v->ibv_create_flow = flow_create;
	v->create_counters = counters_create;
	v->advise_mr = mr_advise;
	v->alloc_null_mr = null_mr;
	v->modify_qp_rate_limit = rate_limit;
}
