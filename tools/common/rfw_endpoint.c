/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/common/rfw_endpoint.h"

#include <errno.h>
#include <string.h>

#include <rte_errno.h>

int rfw_ep_open(struct rfw_ep *ep, const struct rfw_ep_conf *c, const char **stage)
{
	struct rfw_port_conf pc = {.nb_mbufs = c->nb_mbufs ? c->nb_mbufs : 8192};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = c->ip4};
	struct rfw_nic_conf nc = c->nic;
	struct rfw_dev *dev;

	/* The operator's ROCEFW_ESTATS* settings (docs/estats.md), read here, before the NIC. */
	*stage = "ROCEFW_* environment (ROCEFW_ESTATS*, ROCEFW_SNAPSHOT_*, ROCEFW_TX_*)";
	if (rfw_nic_conf_env(&nc) != 0)
		return -EINVAL;
	*stage = "rfw_port_setup";
	ep->port = rfw_port_setup(c->port_id, &pc, &id);
	if (ep->port == NULL)
		return -rte_errno;
	*stage = "rfw_nic_create";
	ep->nic = rfw_nic_create(ep->port->q[0], &nc);
	if (ep->nic == NULL)
		return -rte_errno;
	dev = rfw_nic_dev(ep->nic);
	*stage = "PD/CQ";
	ep->pd = rfw_alloc_pd(dev);
	ep->cq = rfw_create_cq(dev, c->cq_entries ? c->cq_entries : 4096);
	if (ep->pd == NULL || ep->cq == NULL)
		return -errno;
	return 0;
}

struct rfw_qp *rfw_ep_qp_create(struct rfw_pd *pd, struct rfw_cq *cq, uint32_t send_wr,
                                uint32_t recv_wr, unsigned access, bool sig_all, const char **stage)
{
	struct rfw_qp_init_attr ia = {0};
	struct rfw_qp_attr a = {0};
	struct rfw_qp *qp;
	int rc;

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.cap.max_send_wr = send_wr;
	ia.cap.max_recv_wr = recv_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.sq_sig_all = sig_all;
	*stage = "rfw_create_qp";
	qp = rfw_create_qp(pd, &ia);
	if (qp == NULL)
		return NULL;
	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags = access;
	*stage = "rfw_modify_qp(INIT)";
	rc = rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS);
	if (rc != 0) {
		rfw_destroy_qp(qp);
		errno = -rc;
		return NULL;
	}
	return qp;
}

void rfw_ep_path_local(struct rfw_ep_path *p, const struct rfw_ep *peer,
                       const struct rfw_qp *peer_qp, enum rfw_mtu mtu, uint8_t timeout)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->gid, rfw_nic_gid(peer->nic), 16);
	p->mac = peer->port->id.mac;
	p->mtu = mtu;
	p->qpn = rfw_qp_num(peer_qp);
	p->max_rd_atomic = RFW_MAX_RD_ATOMIC;
	p->max_dest_rd_atomic = RFW_MAX_RD_ATOMIC;
	p->min_rnr_timer = 1;
	p->timeout = timeout;
	p->retry_cnt = 7;
	p->rnr_retry = 7;
	p->transport = RFW_TRANSPORT_GBN;
}

static int to_rtr(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_ep_path *p)
{
	struct rfw_qp_attr a = {0};

	a.qp_state = RFW_QPS_RTR;
	memcpy(a.ah_attr.dgid, p->gid, 16);
	memcpy(a.ah_attr.sgid, rfw_nic_gid(nic), 16);
	a.path_mtu = p->mtu;
	a.dest_qp_num = p->qpn;
	a.rq_psn = p->rq_psn;
	a.max_dest_rd_atomic = p->max_dest_rd_atomic;
	a.min_rnr_timer = p->min_rnr_timer;
	a.transport_mode = p->transport;
	return rfw_modify_qp(qp, &a,
	                     RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                         RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER |
	                         RFW_QP_TRANSPORT_MODE);
}

static int to_rts(struct rfw_qp *qp, const struct rfw_ep_path *p)
{
	struct rfw_qp_attr a = {0};

	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = p->sq_psn;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.max_rd_atomic = p->max_rd_atomic;
	return rfw_modify_qp(qp, &a,
	                     RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                         RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
}

int rfw_ep_qp_connect(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_ep_path *p,
                      const char **stage)
{
	struct rfw_nic_path path = {0};
	int rc;

	path.dst_mac = p->mac;
	memcpy(path.dst_ip, p->gid, 16);
	*stage = "rfw_nic_qp_attach";
	rc = rfw_nic_qp_attach(nic, qp, &path);
	if (rc != 0)
		return rc;
	*stage = "rfw_modify_qp(RTR)";
	rc = to_rtr(nic, qp, p);
	if (rc != 0)
		return rc;
	*stage = "rfw_modify_qp(RTS)";
	return to_rts(qp, p);
}

enum rfw_mtu rfw_ep_mtu(uint32_t bytes)
{
	enum rfw_mtu m;

	for (m = RFW_MTU_256; m < RFW_MTU_4096; m++)
		if (rfw_mtu_to_bytes(m) == bytes)
			break;
	return m;
}
