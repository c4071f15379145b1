/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synchronous ids and librdmacm's endpoint calls (rdma_create_ep, rdma_get_request,
 * rdma_destroy_ep), which rdma_server / rdma_client use. An id created without a channel gets
 * a private one, and each call that starts an exchange waits for its event there (the event
 * stays in id->event until the next call, as librdmacm keeps it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "verbs/cma.h"

/* Wait for the next event of a synchronous id; 0, or -1 with errno from its status. */
int rfw_cma_complete(struct rfw_cma_id *c)
{
	struct rdma_cm_event *e;

	if (!c->sync)
		return 0;
	if (c->id.event) {
		rdma_ack_cm_event(c->id.event);
		c->id.event = NULL;
	}
	if (rdma_get_cm_event(c->id.channel, &e) != 0)
		return -1;
	c->id.event = e;
	if (e->status == 0)
		return 0;
	errno = e->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED
	        : e->status < 0                    ? -e->status
	                                           : e->status;
	return -1;
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rfw_cma_id *l = rfw_cma_of(listen);
	struct rdma_cm_event *e;
	struct rfw_cma_id *c;

	if (listen == NULL || id == NULL || !l->sync || l->state != RFW_CMA_LISTEN) {
		errno = EINVAL;
		return -1;
	}
	if (rfw_cma_complete(l) != 0)
		return -1;
	e = l->id.event;
	if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		errno = EINVAL;
		return -1;
	}
	c = rfw_cma_of(e->id);
	if (l->ep_attr_set && rdma_create_qp(&c->id, l->ep_pd, &l->ep_attr) != 0) {
		rdma_reject(&c->id, NULL, 0);
		rdma_destroy_id(&c->id);
		return -1;
	}
	*id = &c->id;
	return 0;
}

static int ep_active(struct rdma_cm_id *id, struct rdma_addrinfo *res)
{
	if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, 2000) != 0)
		return -1;
	return rdma_resolve_route(id, 2000);
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
                   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct rfw_cma_id *c;
	int rc;

	if (id == NULL || res == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	c = rfw_cma_of(cid);
	if (res->ai_qp_type)
		cid->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = rdma_bind_addr(cid, res->ai_src_addr);
		if (rc == 0 && qp_init_attr) {
			c->ep_attr = *qp_init_attr;
			c->ep_attr_set = true;
			c->ep_pd = pd;
		}
	} else {
		rc = ep_active(cid, res);
		if (rc == 0 && qp_init_attr)
			rc = rdma_create_qp(cid, pd, qp_init_attr);
	}
	if (rc != 0) {
		rdma_destroy_ep(cid);
		return -1;
	}
	*id = cid;
	return 0;
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->send_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq && id->recv_cq != id->send_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel && id->recv_cq_channel != id->send_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	rdma_destroy_id(id);
}
