/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peer MAC resolution of the NIC's QPs through the port's neighbour table (ARP for IPv4, ND for
 * IPv6), from the poll loop, never blocking: the firmware keeps a pending QP's packets in the
 * transport until rfw_fw_qp_set_mac(). docs/nic.md "Peer MAC resolution".
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "dataplane/rfw_neigh.h"
#include "dataplane/rfw_nic_int.h"
#include "wire/neigh_wire.h"

/* How often QPs waiting for ARP/ND look at the neighbour table (the reply arrives through the
 * NIC's own RX burst; probes are re-sent by rfw_port_resolve on its own interval). */
#define NIC_RESOLVE_CHECK_NS 10000

/* One ARP request / NS for @l's peer, tagged with @l's TCI, into @buf; its length or 0. */
static size_t probe_build(const struct rfw_port *p, const struct nic_l2 *l, uint8_t *buf,
                          size_t cap)
{
	static const uint8_t zero[6];
	struct rfw_l2 l2 = {0};

	memcpy(l2.src, p->id.mac.addr_bytes, 6);
	l2.nvlan = 1;
	l2.vlan_tci[0] = l->tci;
	l2.vlan_tpid[0] = RFW_ETHERTYPE_VLAN;
	if (l->ip_ver == 4) {
		memset(l2.dst, 0xff, 6);
		return rfw_arp_build(buf, cap, &l2, 1, p->id.mac.addr_bytes, p->id.ip4, zero,
		                     rfw_get_be32(l->dst_ip + 12));
	} else {
		uint8_t sn[16];

		rfw_ip6_solicited_node(sn, l->dst_ip);
		rfw_ip6_mcast_mac(l2.dst, sn);
		return rfw_nd_build_ns(buf, cap, &l2, p->id.ip6, sn, l->dst_ip);
	}
}

/*
 * The port's probes (rfw_port_resolve) are untagged; a peer reachable only on the QP's VLAN
 * would never see them. So a tagged QP also sends its own probe on its VLAN (same PCP as its
 * data), at most once per neigh_retrans_ms; the reply, tagged or not, is learnt by the port's
 * RX path into the entry rfw_port_resolve created, and the next look-up finds it.
 */
static void tagged_probe(struct rfw_nic *nic, struct nic_l2 *l, uint64_t tsc)
{
	const struct rfw_port *p = nic->q->port;
	uint8_t buf[RFW_NEIGH_FRAME_MAX];
	struct rte_mbuf *m;
	size_t len;
	char *d;

	if (!l->vlan || (l->probe_tsc != 0 && tsc - l->probe_tsc < p->neigh->retrans_tsc))
		return;
	l->probe_tsc = tsc;
	len = probe_build(p, l, buf, sizeof(buf));
	if (len == 0)
		return;
	m = rte_pktmbuf_alloc(nic->pool);
	if (m == NULL) {
		nic->ctr[RFW_NIC_HOST_CTR_tx_no_mbuf]++;
		return;
	}
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(d, buf, len);
	rfw_tx_one(nic->q, m);
	nic->sent++;
	nic->ctr[RFW_NIC_HOST_CTR_l2_tagged_probes]++;
}

int nic_l2_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path,
                  struct rfw_fw_path *fp)
{
	uint32_t i = rfw_qp_num(qp) - nic->qpn_base;
	struct nic_l2 *l = &nic->l2[i];
	struct rte_ether_addr mac;
	uint64_t tsc = rte_rdtsc();
	int rc;

	memset(l, 0, sizeof(*l));
	l->ip_ver = rfw_ip_is_mapped4(fp->dst_ip) ? 4 : 6;
	l->vlan = fp->vlan;
	l->tci = (uint16_t)(fp->pcp << 13 | fp->vlan_id);
	memcpy(l->dst_ip, fp->dst_ip, 16);
	l->state = RFW_NIC_L2_READY;
	if (!rte_is_zero_ether_addr(&path->dst_mac)) {
		l->qp = qp;
		return 0;
	}
	rc = rfw_port_resolve(nic->q, path->dst_ip, tsc, &mac);
	if (rc == 0) {
		memcpy(fp->dst_mac, mac.addr_bytes, 6);
		nic->ctr[RFW_NIC_HOST_CTR_l2_resolved]++;
	} else if (rc == -EAGAIN) {
		l->state = RFW_NIC_L2_RESOLVING;
		fp->l2_pending = true;
		nic->n_resolving++;
		tagged_probe(nic, l, tsc);
	} else {
		return rc == -ENOSPC || rc == -EHOSTUNREACH ? rc : -EINVAL;
	}
	l->qp = qp;
	return 0;
}

int rfw_nic_resolve(struct rfw_nic *nic, const uint8_t ip[16], uint8_t mac[6])
{
	struct rte_ether_addr m;
	int rc;

	rc = rfw_port_resolve(nic->q, ip, rte_rdtsc(), &m);
	if (rc == 0)
		memcpy(mac, m.addr_bytes, 6);
	return rc;
}

void nic_l2_detach(struct rfw_nic *nic, uint32_t slot)
{
	struct nic_l2 *l = &nic->l2[slot];

	if (l->state == RFW_NIC_L2_RESOLVING)
		nic->n_resolving--;
	memset(l, 0, sizeof(*l));
}

/*
 * One look at the neighbour table for a resolving QP. rfw_port_resolve re-sends the probe
 * once per neigh_retrans_ms and gives up after neigh_max_probes: then the QP goes to ERR
 * (IBA 10.3.1: every outstanding WR completes with RFW_WC_WR_FLUSH_ERR) with the affiliated
 * catastrophic error event (rfw_qp_fatal), and stays FAILED.
 */
static void resolve_one(struct rfw_nic *nic, struct nic_l2 *l, uint64_t tsc)
{
	struct rte_ether_addr mac;
	int rc = rfw_port_resolve(nic->q, l->dst_ip, tsc, &mac);

	if (rc == -EAGAIN) {
		tagged_probe(nic, l, tsc);
		return;
	}
	nic->n_resolving--;
	if (rc == 0) {
		l->state = RFW_NIC_L2_READY;
		nic->ctr[RFW_NIC_HOST_CTR_l2_resolved]++;
		rfw_fw_qp_set_mac(nic->fw, l->qp, mac.addr_bytes);
	} else {
		l->state = RFW_NIC_L2_FAILED;
		nic->ctr[RFW_NIC_HOST_CTR_l2_resolve_failed]++;
		rfw_qp_fatal(l->qp); /* ERR, WQEs flushed, IBV_EVENT_QP_FATAL */
	}
}

void nic_l2_poll(struct rfw_nic *nic, uint64_t tsc)
{
	for (uint32_t i = 0; i < nic->max_qp && nic->n_resolving != 0; i++)
		if (nic->l2[i].qp != NULL && nic->l2[i].state == RFW_NIC_L2_RESOLVING)
			resolve_one(nic, &nic->l2[i], tsc);
	nic->resolve_next_ns = nic->now_ns + NIC_RESOLVE_CHECK_NS;
}
