/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connections of rdma_cm ids: rdma_connect / rdma_accept / rdma_reject / rdma_establish /
 * rdma_disconnect, and the CM's events turned into librdmacm's (the sequence the kernel's
 * rdma_cm gives: CONNECT_REQUEST with the listener, CONNECT_RESPONSE or ESTABLISHED, REJECTED
 * with the reason as status, UNREACHABLE with -ETIMEDOUT, DISCONNECTED). The QP moves the CM
 * makes are IBA 12.9's: the passive side to RTR and RTS before its REP, the active side on
 * the REP before its RTU; a disconnect puts the QP in ERR (its WQEs flush).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/cma.h"

#define CMA_MAX_RD_ATOMIC 16 /* the device's max_qp_rd_atom */
#define CMA_PSN_MASK      0xffffffu

static int fail(int err, const char *fn, const char *why)
{
	if (why)
		fprintf(stderr, "rocefw-verbs: %s: %s\n", fn, why);
	errno = err;
	return -1;
}

static uint8_t clamp_rd(uint8_t v)
{
	return v > CMA_MAX_RD_ATOMIC ? CMA_MAX_RD_ATOMIC : v;
}

/* A fresh starting PSN per connection (IBA 9.7.1: any 24-bit value). */
static uint32_t new_psn(struct rfw_cma *cm)
{
	uint64_t x = rfw_eng_clock_ns(cm->eng) * 6364136223846793005ull + 1442695040888963407ull;

	return (uint32_t)(x >> 40) & CMA_PSN_MASK;
}

static uint8_t port_mtu(struct rfw_cma *cm)
{
	struct rfw_eng_port_info pi;

	rfw_eng_port_info(cm->eng, &pi);
	return (uint8_t)rfw_vrb_mtu_of(pi.ip_mtu);
}

static void local_from_param(struct rfw_cma *cm, struct rfw_cma_id *c,
                             const struct rdma_conn_param *p)
{
	c->local.qpn = c->id.qp ? c->id.qp->qp_num : (p ? p->qp_num : 0);
	c->local.psn = new_psn(cm);
	c->local.resp_res = p ? clamp_rd(p->responder_resources) : CMA_MAX_RD_ATOMIC;
	c->local.init_depth = p ? clamp_rd(p->initiator_depth) : CMA_MAX_RD_ATOMIC;
	c->local.retry_cnt = p ? (p->retry_count > 7 ? 7 : p->retry_count) : 7;
	c->local.rnr_retry = p ? (p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count) : 7;
	c->local.flow_control = p ? p->flow_control : 1;
	c->local.srq = c->id.srq != NULL || (p && p->srq);
	c->local.mtu = port_mtu(cm);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_connect", NULL);
	if (p && p->private_data_len > RFW_CMA_REQ_PDATA_USER)
		return fail(EINVAL, "rdma_connect", "private data over 56 bytes");
	rfw_eng_lock(cm->eng);
	if (c->state != RFW_CMA_ROUTE_OK) {
		rc = -EINVAL;
	} else {
		local_from_param(cm, c, p);
		rc = rfw_cma_cm_connect(cm, c, p ? p->private_data : NULL,
		                        p ? p->private_data_len : 0);
		if (rc == 0)
			c->state = RFW_CMA_CONNECT;
	}
	rfw_eng_unlock(cm->eng);
	if (rc != 0)
		return fail(-rc, "rdma_connect", c->local.qpn ? NULL : "no QP on the id");
	rfw_vrb_progress_doorbell();
	return rfw_cma_complete(c);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_accept", NULL);
	rfw_eng_lock(cm->eng);
	if (c->state != RFW_CMA_REQ_RCVD) {
		rc = -EINVAL;
	} else {
		local_from_param(cm, c, p);
		/* Never more than the peer asked for or can take (IBA 12.7.3). */
		if (c->local.resp_res > c->remote.init_depth)
			c->local.resp_res = c->remote.init_depth;
		if (c->local.init_depth > c->remote.resp_res)
			c->local.init_depth = c->remote.resp_res;
		if (c->local.mtu > c->remote.mtu)
			c->local.mtu = c->remote.mtu;
		rc = rfw_cma_qp_to(c, IBV_QPS_RTR);
		if (rc == 0)
			rc = rfw_cma_qp_to(c, IBV_QPS_RTS);
		if (rc == 0)
			rc = rfw_cma_cm_accept(cm, c, p ? p->private_data : NULL,
			                       p ? p->private_data_len : 0);
		if (rc == 0)
			c->state = RFW_CMA_ACCEPT;
	}
	rfw_eng_unlock(cm->eng);
	if (rc != 0)
		return fail(-rc, "rdma_accept", NULL);
	rfw_vrb_progress_doorbell();
	return rfw_cma_complete(c);
}

int rdma_reject(struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_reject", NULL);
	rfw_eng_lock(cm->eng);
	rc = c->state == RFW_CMA_REQ_RCVD ? rfw_cma_cm_reject(cm, c, pdata, len) : -EINVAL;
	if (rc == 0)
		c->state = RFW_CMA_ERROR;
	rfw_eng_unlock(cm->eng);
	return rc ? fail(-rc, "rdma_reject", NULL) : 0;
}

/* The active side's QP to RTR and RTS from the REP, then the RTU (IBA 12.9.5). */
static int establish_locked(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	int rc = rfw_cma_qp_to(c, IBV_QPS_RTR);

	if (rc == 0)
		rc = rfw_cma_qp_to(c, IBV_QPS_RTS);
	if (rc == 0)
		rc = rfw_cma_cm_rtu(cm, c);
	if (rc == 0)
		c->state = RFW_CMA_CONNECTED;
	return rc;
}

int rdma_establish(struct rdma_cm_id *id)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_establish", NULL);
	rfw_eng_lock(cm->eng);
	rc = c->state == RFW_CMA_REP_RCVD ? establish_locked(cm, c) : -EINVAL;
	rfw_eng_unlock(cm->eng);
	return rc ? fail(-rc, "rdma_establish", NULL) : 0;
}

static void qp_to_err(struct rfw_cma_id *c)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (c->id.qp && c->id.qp->state != IBV_QPS_ERR && c->id.qp->state != IBV_QPS_RESET)
		rfw_vrb_modify_qp_locked(c->id.qp, &a, IBV_QP_STATE);
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	bool wait = false;
	int rc = 0;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_disconnect", NULL);
	rfw_eng_lock(cm->eng);
	switch (c->state) {
	case RFW_CMA_CONNECTED:
	case RFW_CMA_ACCEPT:
		qp_to_err(c);
		rc = rfw_cma_cm_disconnect(cm, c); /* DREQ */
		c->state = RFW_CMA_DISCONNECT;
		wait = c->sync; /* for DISCONNECTED: the DREP, or the DREQ given up on */
		break;
	case RFW_CMA_DISCONNECTED:
	case RFW_CMA_DISCONNECT:
		qp_to_err(c);
		rc = rfw_cma_cm_disconnect(cm, c); /* DREP to the peer's DREQ, if any */
		break;
	default:
		rc = -EINVAL;
	}
	rfw_eng_unlock(cm->eng);
	if (rc != 0)
		return fail(-rc, "rdma_disconnect", NULL);
	rfw_vrb_progress_doorbell();
	return wait ? rfw_cma_complete(c) : 0;
}

/* ---- the CM's events (engine lock held, on the NIC's thread) ---- */

/* A REQ for a listening id: a new id on the listener's channel (rdma_cm's "child"). */
void rfw_cma_on_req(struct rfw_cma *cm, struct rfw_cma_id *l, const struct rfw_cma_req *r)
{
	struct rfw_cma_id *c = calloc(1, sizeof(*c));
	struct sockaddr_in *s, *d;

	if (c == NULL) {
		rfw_cma_cm_reject_req(cm, r); /* no resources: REJ (IBA 12.6.7) */
		return;
	}
	c->id = l->id;
	c->id.qp = NULL;
	c->id.event = NULL;
	c->id.pd = NULL;
	c->id.route.path_rec = NULL;
	c->id.send_cq = c->id.recv_cq = NULL;
	c->id.send_cq_channel = c->id.recv_cq_channel = NULL;
	c->listener = l;
	if (l->sync) { /* a synchronous listener's requests are synchronous ids too */
		c->id.channel = rdma_create_event_channel();
		if (c->id.channel == NULL) {
			free(c);
			rfw_cma_cm_reject_req(cm, r);
			return;
		}
		c->sync = c->own_chan = true;
	}
	c->remote = r->peer;
	c->cm_conn = r->cm_conn;
	s = (struct sockaddr_in *)&c->id.route.addr.src_storage;
	d = (struct sockaddr_in *)&c->id.route.addr.dst_storage;
	*s = *(struct sockaddr_in *)&l->id.route.addr.src_storage;
	d->sin_family = AF_INET;
	d->sin_addr.s_addr = r->src_ip;
	d->sin_port = r->src_port;
	rfw_cma_gid_of(s->sin_addr.s_addr, c->id.route.addr.addr.ibaddr.sgid.raw);
	rfw_cma_gid_of(d->sin_addr.s_addr, c->id.route.addr.addr.ibaddr.dgid.raw);
	c->state = RFW_CMA_REQ_RCVD;
	rfw_cma_link(cm, c);
	rfw_cma_bind_conn(cm, c);
	rfw_cma_post(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, r->pdata, r->pdata_len, l);
}

void rfw_cma_on_rep(struct rfw_cma *cm, struct rfw_cma_id *c, const struct rfw_cma_conn *peer,
                    const void *pdata, uint8_t len)
{
	c->remote = *peer;
	if (c->local.mtu > peer->mtu)
		c->local.mtu = peer->mtu;
	if (c->id.qp == NULL) {
		c->state = RFW_CMA_REP_RCVD; /* the program moves its QP, then rdma_establish */
		rfw_cma_post(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, pdata, len, NULL);
		return;
	}
	if (establish_locked(cm, c) != 0) {
		rfw_cma_cm_reject(cm, c, NULL, 0);
		c->state = RFW_CMA_ERROR;
		rfw_cma_post(c, RDMA_CM_EVENT_CONNECT_ERROR, -EIO, NULL, 0, NULL);
		return;
	}
	rfw_cma_post(c, RDMA_CM_EVENT_ESTABLISHED, 0, pdata, len, NULL);
}

void rfw_cma_on_rtu(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm;
	if (c->state != RFW_CMA_ACCEPT)
		return;
	c->state = RFW_CMA_CONNECTED;
	rfw_cma_post(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0, NULL);
}

void rfw_cma_on_rej(struct rfw_cma *cm, struct rfw_cma_id *c, int reason, const void *pdata,
                    uint8_t len)
{
	(void)cm;
	c->state = RFW_CMA_ERROR;
	qp_to_err(c);
	rfw_cma_post(c, RDMA_CM_EVENT_REJECTED, reason, pdata, len, NULL);
}

void rfw_cma_on_timeout(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm;
	c->state = RFW_CMA_ERROR;
	qp_to_err(c);
	rfw_cma_post(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0, NULL);
}

/* DREQ received, or our DREQ answered (DREP) or given up on: the connection is gone. */
void rfw_cma_on_disconnected(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm;
	if (c->state == RFW_CMA_DISCONNECTED || c->state == RFW_CMA_ERROR)
		return;
	qp_to_err(c);
	c->state = RFW_CMA_DISCONNECTED;
	rfw_cma_post(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
}
