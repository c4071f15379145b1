/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP of an rdma_cm_id: rdma_create_qp / rdma_destroy_qp, rdma_init_qp_attr, and the
 * INIT -> RTR -> RTS moves the CM makes from the exchanged REQ / REP (IBA 12.7.2, 12.7.3):
 * the peer's QPN and starting PSN, path MTU, responder resources and initiator depth, retry
 * counts. The QP calls are the verbs device's own (rfw_vrb_*_locked where the engine lock is
 * already held, on the NIC's thread).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs/cma.h"

#define CMA_MIN_RNR_TIMER 12 /* 0.64 ms (IBA table 45); the kernel's CM uses 0 (655 ms) */
#define CMA_ACK_TIMEOUT   14 /* 4.096 us * 2^14 = 67 ms, the Local ACK Timeout in the REQ */

static void attr_init(const struct rfw_cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	a->pkey_index = 0;
	a->port_num = 1;
	/* IBA 12.7.2: remote reads and atomics only with responder resources to serve them. */
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (c->local.resp_res)
		a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	if (c->id.qp_type == IBV_QPT_UD) {
		a->qkey = 0; /* rdma_cm's UD Q_Key is RDMA_UDP_QKEY, set by the program */
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	}
}

static void attr_rtr(const struct rfw_cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	a->path_mtu = (enum ibv_mtu)c->local.mtu;
	a->dest_qp_num = c->remote.qpn;
	a->rq_psn = c->local.psn; /* what we put in our REQ / REP: see rfw_cma_conn.psn */
	a->max_dest_rd_atomic = c->local.resp_res;
	a->min_rnr_timer = CMA_MIN_RNR_TIMER;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.sgid_index = 0;
	a->ah_attr.grh.hop_limit = 64;
	memcpy(a->ah_attr.grh.dgid.raw, c->id.route.addr.addr.ibaddr.dgid.raw, 16);
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static void attr_rts(const struct rfw_cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	a->sq_psn = c->remote.psn; /* the peer's REQ / REP: where it expects us to start */
	a->timeout = CMA_ACK_TIMEOUT;
	a->retry_cnt = c->local.retry_cnt;
	a->rnr_retry = c->local.rnr_retry;
	a->max_rd_atomic = c->local.init_depth;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	        IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
}

int rfw_cma_qp_attr(struct rfw_cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state s = a->qp_state;

	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		attr_init(c, a, mask);
		return 0;
	case IBV_QPS_RTR:
		if (c->remote.qpn == 0)
			return -EINVAL; /* no REQ / REP yet */
		attr_rtr(c, a, mask);
		return 0;
	case IBV_QPS_RTS:
		attr_rts(c, a, mask);
		return 0;
	default:
		return -EINVAL;
	}
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	int rc;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL) {
		errno = EINVAL;
		return -1;
	}
	rc = rfw_cma_qp_attr(rfw_cma_of(id), qp_attr, qp_attr_mask);
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

/* Move the id's QP to @s (INIT -> INIT again first for RTR: the access flags now known). */
int rfw_cma_qp_to(struct rfw_cma_id *c, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = {.qp_state = s};
	int mask, rc;

	if (c->id.qp == NULL)
		return 0; /* the program moves its own QP (rdma_init_qp_attr) */
	if (s == IBV_QPS_RTR) {
		rc = rfw_cma_qp_to(c, IBV_QPS_INIT);
		if (rc != 0)
			return rc;
		a.qp_state = s;
	}
	rc = rfw_cma_qp_attr(c, &a, &mask);
	if (rc == 0)
		rc = -rfw_vrb_modify_qp_locked(c->id.qp, &a, mask);
	return rc;
}

static struct ibv_cq *own_cq(struct rdma_cm_id *id, struct ibv_comp_channel **ch, int depth)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (*ch == NULL)
		return NULL;
	return ibv_create_cq(id->verbs, depth, id, *ch, 0);
}

/* rdma_create_ep-style ids may ask for the QP without CQs: make them, with channels. */
static int make_cqs(struct rdma_cm_id *id, struct ibv_qp_init_attr *a)
{
	if (a->send_cq == NULL) {
		id->send_cq = own_cq(id, &id->send_cq_channel, (int)a->cap.max_send_wr + 1);
		if (id->send_cq == NULL)
			return -1;
		a->send_cq = id->send_cq;
	}
	if (a->recv_cq == NULL) {
		id->recv_cq = own_cq(id, &id->recv_cq_channel, (int)a->cap.max_recv_wr + 1);
		if (id->recv_cq == NULL)
			return -1;
		a->recv_cq = id->recv_cq;
	}
	return 0;
}

/* rdma_create_qp(_ex): the QP on the id's device, PD and CQs made if not given, to INIT. */
int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *a)
{
	struct rfw_cma_id *c = rfw_cma_of(id);
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_INIT};
	int mask;

	if (id == NULL || a == NULL || id->qp != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL) {
		if (id->pd == NULL) {
			id->pd = ibv_alloc_pd(id->verbs);
			if (id->pd == NULL)
				return -1;
			c->pd_ours = true;
		}
		a->pd = id->pd;
		a->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (a->qp_type == 0) /* not set (rdma_client): the id's, from rdma_getaddrinfo */
		a->qp_type = id->qp_type;
	if (make_cqs(id, (struct ibv_qp_init_attr *)a) != 0)
		return -1;
	id->qp = ibv_create_qp_ex(id->verbs, a);
	if (id->qp == NULL)
		return -1;
	id->pd = a->pd;
	c->qp_ours = true;
	rfw_cma_qp_attr(c, &qa, &mask);
	if (ibv_modify_qp(id->qp, &qa, mask) != 0) {
		ibv_destroy_qp(id->qp);
		id->qp = NULL;
		return -1;
	}
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex x = {0};
	int rc;

	if (a == NULL) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&x, a, sizeof(*a)); /* ibv_qp_init_attr is ibv_qp_init_attr_ex's prefix */
	x.pd = pd;
	x.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	rc = rdma_create_qp_ex(id, &x);
	if (rc == 0) {
		a->send_cq = x.send_cq;
		a->recv_cq = x.recv_cq;
		a->cap = x.cap;
	}
	return rc;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	rfw_cma_of(id)->qp_ours = false;
}
