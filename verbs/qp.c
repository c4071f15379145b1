/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC, UC and UD queue pairs of the rocefw device: create, modify (the attributes of ibv_qp_attr
 * mapped onto transport/rfw_verbs.h; the path's destination GID becomes the NIC path), query,
 * destroy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/vrb.h"

/* The QP states and attribute-mask bits the transport takes have libibverbs' values. */
_Static_assert((int)IBV_QPS_RESET == (int)RFW_QPS_RESET && (int)IBV_QPS_ERR == (int)RFW_QPS_ERR,
               "qp states");
_Static_assert((int)IBV_QP_STATE == (int)RFW_QP_STATE && (int)IBV_QP_AV == (int)RFW_QP_AV &&
                   (int)IBV_QP_DEST_QPN == (int)RFW_QP_DEST_QPN &&
                   (int)IBV_QP_SQ_PSN == (int)RFW_QP_SQ_PSN &&
                   (int)IBV_QP_MAX_DEST_RD_ATOMIC == (int)RFW_QP_MAX_DEST_RD_ATOMIC &&
                   (int)IBV_QP_MIN_RNR_TIMER == (int)RFW_QP_MIN_RNR_TIMER &&
                   (int)IBV_QP_QKEY == (int)RFW_QP_QKEY,
               "qp attribute mask bits");

/* Mask bits handed to the transport as they are. */
#define QP_MASK_PASS                                                                               \
	(IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV |        \
	 IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN |  \
	 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |                          \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | IBV_QP_QKEY)
/* Accepted and not needed: the current state is known, SQD is not entered. */
#define QP_MASK_IGNORED (IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY)

static const char *const state_name[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

_Static_assert((int)IBV_EVENT_QP_REQ_ERR == (int)RFW_QP_EV_REQ_ERR &&
                   (int)IBV_EVENT_QP_ACCESS_ERR == (int)RFW_QP_EV_ACCESS_ERR &&
                   (int)IBV_EVENT_COMM_EST == (int)RFW_QP_EV_COMM_EST &&
                   (int)IBV_EVENT_QP_LAST_WQE_REACHED == (int)RFW_QP_EV_LAST_WQE &&
                   (int)IBV_EVENT_QP_FATAL == (int)RFW_QP_EV_FATAL,
               "qp event values");

/* The transport's affiliated events of a QP become the context's async events. */
static void qp_event(void *qp_context, struct rfw_qp *qp, enum rfw_qp_event ev)
{
	struct rfw_vrb_qp *q = qp_context;

	(void)qp;
	rfw_vrb_async_post_qp(q->ctx, &q->ibvx.qp_base, (enum ibv_event_type)ev);
}

/*
 * A UD QP is on the NIC from the start, with a path to our own address: its datagrams take
 * their destination from each work request's address handle (nic/ patches it per frame).
 */
static int ud_attach(struct rfw_eng *e, struct rfw_vrb_qp *q)
{
	struct rfw_eng_port_info pi;
	int rc;

	rfw_eng_port_info(e, &pi);
	rc = rfw_eng_qp_attach(e, q->qp, pi.gid, 0);
	q->attached = rc == 0;
	return rc;
}

struct ibv_qp *rfw_vrb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(pd->context);
	struct rfw_qp_init_attr ia = {0};
	struct rfw_qp_attr qa;
	struct rfw_vrb_qp *q;

	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UD && a->qp_type != IBV_QPT_UC) {
		errno = rfw_vrb_unsupported("ibv_create_qp",
		                            "only RC, UC and UD queue pairs (no XRC/raw)");
		return NULL;
	}
	if (a->srq != NULL && (!rfw_vrb_ours(a->srq->context) || a->srq->pd != pd)) {
		errno = EINVAL;
		return NULL;
	}
	if (a->send_cq == NULL || a->recv_cq == NULL || !rfw_vrb_ours(a->send_cq->context) ||
	    !rfw_vrb_ours(a->recv_cq->context)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->ctx = x; /* before the QP exists: its events name the context */
	ia.qp_context = q;
	ia.event = qp_event;
	ia.send_cq = ((struct rfw_vrb_cq *)a->send_cq)->cq;
	ia.recv_cq = ((struct rfw_vrb_cq *)a->recv_cq)->cq;
	ia.cap.max_send_wr = a->cap.max_send_wr;
	ia.cap.max_recv_wr = a->cap.max_recv_wr;
	ia.cap.max_send_sge = a->cap.max_send_sge;
	ia.cap.max_recv_sge = a->cap.max_recv_sge;
	ia.cap.max_inline_data = a->cap.max_inline_data;
	ia.sq_sig_all = a->sq_sig_all != 0;
	ia.srq = a->srq ? ((struct rfw_vrb_srq *)a->srq)->srq : NULL;
	ia.qp_type = a->qp_type == IBV_QPT_UD   ? RFW_QPT_UD
	             : a->qp_type == IBV_QPT_UC ? RFW_QPT_UC
	                                        : RFW_QPT_RC;
	rfw_eng_lock(x->eng);
	q->qp = rfw_create_qp(((struct rfw_vrb_pd *)pd)->pd, &ia);
	if (q->qp != NULL && ia.qp_type == RFW_QPT_UD && ud_attach(x->eng, q) != 0) {
		rfw_destroy_qp(q->qp);
		q->qp = NULL;
		errno = ENOMEM;
	}
	if (q->qp != NULL && rfw_query_qp(q->qp, &qa) == 0) {
		a->cap.max_send_wr = qa.cap.max_send_wr;
		a->cap.max_recv_wr = qa.cap.max_recv_wr;
		a->cap.max_send_sge = qa.cap.max_send_sge;
		a->cap.max_recv_sge = qa.cap.max_recv_sge;
		a->cap.max_inline_data = qa.cap.max_inline_data;
	}
	rfw_eng_unlock(x->eng);
	if (q->qp == NULL) {
		free(q);
		return NULL;
	}
	q->ctx = x;
	q->sq_sig_all = a->sq_sig_all;
	q->ibvx.qp_base.context = pd->context;
	q->ibvx.qp_base.qp_context = a->qp_context;
	q->ibvx.qp_base.pd = pd;
	q->ibvx.qp_base.send_cq = a->send_cq;
	q->ibvx.qp_base.recv_cq = a->recv_cq;
	q->ibvx.qp_base.srq = a->srq;
	q->ibvx.qp_base.qp_num = rfw_qp_num(q->qp);
	q->ibvx.qp_base.state = IBV_QPS_RESET;
	q->ibvx.qp_base.qp_type = a->qp_type;
	pthread_mutex_init(&q->ibvx.qp_base.mutex, NULL);
	pthread_cond_init(&q->ibvx.qp_base.cond, NULL);
	return &q->ibvx.qp_base;
}

/* ibv_qp_attr -> rfw_qp_attr for the bits in @mask. */
/*
 * Values past the device's limits, named: EINVAL alone leaves a program's user guessing (perftest
 * copies the peer's advertised READ depth, 128 for rxe, into max_rd_atomic).
 */
static int limits_check(const struct ibv_qp_attr *a, int mask)
{
	const char *what = NULL;
	unsigned v = 0;

	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > RFW_MAX_RD_ATOMIC)
		what = "max_rd_atomic", v = a->max_rd_atomic;
	else if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > RFW_MAX_RD_ATOMIC)
		what = "max_dest_rd_atomic", v = a->max_dest_rd_atomic;
	if (what == NULL)
		return 0;
	fprintf(stderr,
	        "rocefw-verbs: ibv_modify_qp: %s %u is above the device's %u "
	        "(max_qp_rd_atom / max_qp_init_rd_atom)\n",
	        what, v, RFW_MAX_RD_ATOMIC);
	return EINVAL;
}

static int attr_of(const struct ibv_qp_attr *a, int mask, struct rfw_qp_attr *r)
{
	memset(r, 0, sizeof(*r));
	if (limits_check(a, mask) != 0)
		return EINVAL;
	if ((mask & IBV_QP_AV) && !a->ah_attr.is_global) {
		fprintf(stderr, "rocefw-verbs: ibv_modify_qp: ah_attr.is_global is 0: RoCE needs a "
		                "GRH with the peer's GID (ibv_rc_pingpong -g 0, perftest -x 0)\n");
		return EINVAL;
	}
	if ((mask & IBV_QP_AV) && a->ah_attr.grh.sgid_index != 0) {
		fprintf(stderr,
		        "rocefw-verbs: ibv_modify_qp: sgid_index %u: rocefw's GID table has "
		        "index 0 only\n",
		        a->ah_attr.grh.sgid_index);
		return EINVAL;
	}
	r->qp_state = (enum rfw_qp_state)a->qp_state;
	r->path_mtu = (enum rfw_mtu)a->path_mtu;
	r->qp_access_flags = a->qp_access_flags & 0xf;
	r->pkey_index = a->pkey_index;
	r->port_num = a->port_num;
	memcpy(r->ah_attr.dgid, a->ah_attr.grh.dgid.raw, 16);
	r->ah_attr.traffic_class = a->ah_attr.grh.traffic_class;
	r->dest_qp_num = a->dest_qp_num;
	r->rq_psn = a->rq_psn;
	r->sq_psn = a->sq_psn;
	r->timeout = a->timeout;
	r->retry_cnt = a->retry_cnt;
	r->rnr_retry = a->rnr_retry;
	r->min_rnr_timer = a->min_rnr_timer;
	r->max_rd_atomic = a->max_rd_atomic;
	r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	r->qkey = a->qkey;
	return 0;
}

static int modify_locked(struct rfw_vrb_qp *q, struct rfw_qp_attr *r, int mask)
{
	struct rfw_eng *e = q->ctx->eng;
	struct rfw_eng_port_info pi;
	int ret;

	if (mask & IBV_QP_AV) {
		rfw_eng_port_info(e, &pi);
		memcpy(r->ah_attr.sgid, pi.gid, 16);
		ret = rfw_eng_qp_attach(e, q->qp, r->ah_attr.dgid, r->ah_attr.traffic_class);
		if (ret != 0)
			return ret;
		q->attached = true;
	}
	/* UD: a datagram is one packet of the port's active MTU (ibv_query_port's). */
	if (q->ibvx.qp_base.qp_type == IBV_QPT_UD && (mask & IBV_QP_STATE) &&
	    r->qp_state == RFW_QPS_INIT && q->ibvx.qp_base.state == IBV_QPS_RESET) {
		rfw_eng_port_info(e, &pi);
		r->path_mtu = (enum rfw_mtu)rfw_vrb_mtu_of(pi.ip_mtu);
		mask |= IBV_QP_PATH_MTU;
	}
	return rfw_modify_qp(q->qp, r, (unsigned)(mask & QP_MASK_PASS));
}

int rfw_vrb_modify_qp_locked(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qp;
	struct rfw_qp_attr r;
	int ret;

	if (mask & ~(QP_MASK_PASS | QP_MASK_IGNORED))
		return rfw_vrb_unsupported("ibv_modify_qp", "alternate path, path migration, "
		                                            "rate limit or resizing attributes");
	ret = attr_of(a, mask, &r);
	if (ret != 0)
		return ret;
	ret = -modify_locked(q, &r, mask);
	if (ret != 0) {
		fprintf(stderr, "rocefw-verbs: ibv_modify_qp(QP %u %s -> %s, mask 0x%x): %s\n",
		        qp->qp_num, state_name[qp->state < 7 ? qp->state : 6],
		        (mask & IBV_QP_STATE) && a->qp_state < 7 ? state_name[a->qp_state] : "same",
		        (unsigned)mask, strerror(ret));
		return ret;
	}
	if (mask & IBV_QP_STATE)
		qp->state = a->qp_state;
	return 0;
}

int rfw_vrb_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qp;
	int ret;

	rfw_eng_lock(q->ctx->eng);
	ret = rfw_vrb_modify_qp_locked(qp, a, mask);
	rfw_eng_unlock(q->ctx->eng);
	return ret;
}

static void attr_to_ibv(const struct rfw_qp_attr *r, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = (enum ibv_qp_state)r->qp_state;
	a->cur_qp_state = (enum ibv_qp_state)r->cur_qp_state;
	a->path_mtu = (enum ibv_mtu)r->path_mtu;
	a->qp_access_flags = r->qp_access_flags;
	a->pkey_index = r->pkey_index;
	a->port_num = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	memcpy(a->ah_attr.grh.dgid.raw, r->ah_attr.dgid, 16);
	a->ah_attr.grh.traffic_class = r->ah_attr.traffic_class;
	a->ah_attr.grh.hop_limit = 64;
	a->dest_qp_num = r->dest_qp_num;
	a->rq_psn = r->rq_psn;
	a->sq_psn = r->sq_psn;
	a->timeout = r->timeout;
	a->retry_cnt = r->retry_cnt;
	a->rnr_retry = r->rnr_retry;
	a->min_rnr_timer = r->min_rnr_timer;
	a->max_rd_atomic = r->max_rd_atomic;
	a->max_dest_rd_atomic = r->max_dest_rd_atomic;
	a->qkey = r->qkey;
	a->cap.max_send_wr = r->cap.max_send_wr;
	a->cap.max_recv_wr = r->cap.max_recv_wr;
	a->cap.max_send_sge = r->cap.max_send_sge;
	a->cap.max_recv_sge = r->cap.max_recv_sge;
	a->cap.max_inline_data = r->cap.max_inline_data;
}

int rfw_vrb_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
                     struct ibv_qp_init_attr *init)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qp;
	struct rfw_qp_attr r;
	int ret;

	(void)mask; /* everything is filled in */
	rfw_eng_lock(q->ctx->eng);
	ret = -rfw_query_qp(q->qp, &r);
	rfw_eng_unlock(q->ctx->eng);
	if (ret != 0)
		return ret;
	attr_to_ibv(&r, a);
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->srq = qp->srq;
		init->cap = a->cap;
		init->qp_type = qp->qp_type;
		init->sq_sig_all = q->sq_sig_all;
	}
	return 0;
}

int rfw_vrb_destroy_qp(struct ibv_qp *qp)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qp;
	struct rfw_eng *e = q->ctx->eng;
	int ret;

	rfw_eng_lock(e);
	if (q->attached)
		rfw_eng_qp_detach(e, q->qp);
	ret = -rfw_destroy_qp(q->qp);
	rfw_eng_unlock(e);
	if (ret != 0)
		return ret;
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	rfw_vrb_qp_ex_free(q);
	free(q);
	return 0;
}
