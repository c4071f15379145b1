/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK host of the firmware: configuration, create/destroy, QP attach/detach, accessors.
 * See rfw_nic.h and docs/nic.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "dataplane/rfw_nic_int.h"
#include "dataplane/rfw_steer.h"

#define NIC_PCP_DEFAULT     3
#define NIC_CNP_PCP_NO_PROF 6

/* An unsigned environment value in [lo, hi]; 0 if unset, -EINVAL if malformed. */
static int env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end != '\0' || *v == '-' || x < lo || x > hi) {
		fprintf(stderr, "rocefw: bad %s=%s (range %llu..%llu)\n", name, v,
		        (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	*out = x;
	return 1;
}

int rfw_nic_conf_env(struct rfw_nic_conf *c)
{
	uint64_t x;
	int rc;

	if ((rc = env_u64("ROCEFW_ESTATS", 0, 1, &x)) < 0)
		return rc;
	if (rc)
		c->estats = x == 1;
	if ((rc = env_u64("ROCEFW_ESTATS_INTERVAL_MS", 1, 3600000, &x)) < 0)
		return rc;
	if (rc)
		c->estats_interval_ms = (uint32_t)x;
	if ((rc = env_u64("ROCEFW_ESTATS_THRESHOLD_US", 0, 3600000000ull, &x)) < 0)
		return rc;
	if (rc)
		c->estats_threshold_us = (uint32_t)x;
	if (getenv("ROCEFW_ESTATS_DUMP_DIR") != NULL && *getenv("ROCEFW_ESTATS_DUMP_DIR"))
		c->estats_dump_dir = getenv("ROCEFW_ESTATS_DUMP_DIR");
	if ((rc = env_u64("ROCEFW_SNAPSHOT_US", 10, 1000000, &x)) < 0)
		return rc;
	if (rc)
		c->snapshot_us = (uint32_t)x;
	if ((rc = env_u64("ROCEFW_SNAPSHOT_MAX_PER_S", 1000, 10000000, &x)) < 0)
		return rc;
	if (rc)
		c->snapshot_max_per_s = (uint32_t)x;
	if ((rc = env_u64("ROCEFW_TX_STALL_MS", 1, 3600000, &x)) < 0)
		return rc;
	if (rc)
		c->tx_stall_ms = (uint32_t)x;
	if ((rc = env_u64("ROCEFW_TX_REF_MIN", 0, 4096, &x)) < 0)
		return rc;
	if (rc && x != 0 && x < 64) {
		fprintf(stderr, "rocefw: bad ROCEFW_TX_REF_MIN=%llu (0: off, or 64..4096)\n",
		        (unsigned long long)x);
		return -EINVAL;
	}
	if (rc)
		c->tx_ref_min = x == 0 ? RFW_NIC_TX_REF_OFF : (uint32_t)x;
	return 0;
}

/* Ranges and defaults of struct rfw_nic_conf (rfw_nic.h), for a NIC on queue @qid. */
static int conf_fill(struct rfw_nic_conf *c, const struct rfw_queue *q)
{
	if (c->estats_interval_ms > 3600000 ||
	    (c->estats_dump_dir != NULL && strlen(c->estats_dump_dir) >= 200))
		return -EINVAL;
	if (c->dscp > 63 || c->pacer_burst_ns > 1000000 || c->quantum > RFW_MAX_BURST ||
	    c->pcp > 7 || (c->vlan && (c->vlan_id == 0 || c->vlan_id > 4094)) ||
	    (c->snapshot_us != 0 && (c->snapshot_us < 10 || c->snapshot_us > 1000000)) ||
	    (c->snapshot_max_per_s != 0 &&
	     (c->snapshot_max_per_s < 1000 || c->snapshot_max_per_s > 10000000)) ||
	    c->tx_stall_ms > 3600000 ||
	    (c->tx_ref_min != 0 && c->tx_ref_min != RFW_NIC_TX_REF_OFF &&
	     (c->tx_ref_min < 64 || c->tx_ref_min > 4096)))
		return -EINVAL;
	if (c->estats) {
		if (c->estats_interval_ms == 0)
			c->estats_interval_ms = 60000;
		c->dev_attr.estats = true;
		c->dev_attr.estats_interval_ns = (uint64_t)c->estats_interval_ms * 1000000ull;
		c->dev_attr.estats_threshold_ns = (uint64_t)c->estats_threshold_us * 1000ull;
	}
	if (!c->dscp_set && c->dscp == 0)
		c->dscp = 26;
	if (!c->pcp_set && c->pcp == 0)
		c->pcp = NIC_PCP_DEFAULT;
	if (c->snapshot_us == 0)
		c->snapshot_us = 1000;
	if (c->snapshot_max_per_s == 0)
		c->snapshot_max_per_s = 20000; /* 1,024 QPs a round per 51 ms, 16,384 per 0.82 s */
	/* Far above a loaded peer's pauses: only a peer that is gone. */
	if (c->tx_stall_ms == 0)
		c->tx_stall_ms = 30000;
	if (c->dev_attr.max_qp == 0)
		c->dev_attr.max_qp = 64;
	/* Several NICs on one port number their QPs apart (rfw_steer.h). */
	if (c->dev_attr.qpn_base == 0)
		c->dev_attr.qpn_base = 17 + (uint32_t)q->qid * RFW_STEER_QPN_STRIDE;
	/* Payloads sent from the MR where the PMD copies frames at its burst, else copied with
	   their ICRC in one pass (fw_create's host ops). */
	if (c->tx_ref_min == 0)
		c->tx_ref_min = NIC_TX_REF_MIN_DEFAULT;
	c->dev_attr.tx_ref_min = c->tx_ref_min != RFW_NIC_TX_REF_OFF ? c->tx_ref_min : 0;
	return 0;
}

static struct rfw_fw *fw_create(struct rfw_nic *nic, const struct rfw_nic_conf *c)
{
	struct rfw_fw_conf fc = {
	    .dev_attr = c->dev_attr,
	    .dcqcn = c->cc_prof,
	    .timely = c->timely_prof,
	    .pacer_burst_ns = c->pacer_burst_ns,
	    .quantum = c->quantum,
	    .udp6_csum = c->udp6_csum,
	    .frame_max = RFW_FRAME_MAX,
	};
	struct rfw_fw_host_ops ops = nic_host_ops;

	fc.cc = c->timely_prof != NULL ? RFW_FW_CC_TIMELY
	        : c->cc_prof != NULL   ? RFW_FW_CC_DCQCN
	                               : RFW_FW_CC_NONE;
	/* A port whose PMD does not copy at its burst gets the ops without the payload-from-MR
	   pair: the firmware then copies such payloads into whole frames, their ICRC folded in
	   the same pass. rfw_fw_create keeps its own copy of the ops. */
	if (!rfw_port_tx_ref(nic->q->port)) {
		ops.frame_alloc_ref = NULL;
		ops.frame_send_ref = NULL;
	}
	return rfw_fw_create(&fc, &ops, nic);
}

static void nic_free(struct rfw_nic *nic)
{
	if (nic->mb_n != 0)
		rte_pktmbuf_free_bulk(nic->mb_stash, nic->mb_n);
	rte_free(nic->es_pub);
	rte_free(nic->l2);
	rte_free(nic);
}

static struct rfw_nic *nic_alloc(struct rfw_queue *q, const struct rfw_nic_conf *c)
{
	struct rfw_nic *nic = rte_zmalloc("rfw_nic", sizeof(*nic), RTE_CACHE_LINE_SIZE);

	if (nic == NULL)
		return NULL;
	nic->id = -1;
	nic->l2 = rte_zmalloc("rfw_nic_l2", sizeof(nic->l2[0]) * c->dev_attr.max_qp, 0);
	if (c->estats)
		nic->es_pub =
		    rte_zmalloc("rfw_nic_es_pub", sizeof(*nic->es_pub), RTE_CACHE_LINE_SIZE);
	if (nic->l2 == NULL || (c->estats && nic->es_pub == NULL)) {
		nic_free(nic);
		return NULL;
	}
	nic->q = q;
	nic->pool = q->port->pool;
	nic_ref_init(nic);
	nic->qpn_base = c->dev_attr.qpn_base;
	nic->max_qp = c->dev_attr.max_qp;
	nic->dscp = c->dscp;
	nic->data_pcp = c->pcp;
	nic->vlan = c->vlan;
	nic->vlan_id = c->vlan_id;
	nic->udp6_csum = c->udp6_csum;
	nic->cc_prof = c->cc_prof;
	nic->timely_prof = c->timely_prof;
	nic->cnp_dscp = c->cc_prof != NULL ? c->cc_prof->cnp_dscp : c->dscp;
	nic->cnp_pcp = c->cc_prof != NULL ? c->cc_prof->cnp_prio : NIC_CNP_PCP_NO_PROF;
	nic->quantum = c->quantum != 0 ? c->quantum : 16;
	nic->pacer_burst_ns = c->pacer_burst_ns != 0 ? c->pacer_burst_ns : 2000;
	nic->snapshot_ns = (uint64_t)c->snapshot_us * 1000;
	nic->pub_max_per_s = c->snapshot_max_per_s;
	nic->tx_stall_ns = (uint64_t)c->tx_stall_ms * 1000000ull;
	nic->es_interval_ns = c->dev_attr.estats_interval_ns;
	nic->es_threshold_ns = c->dev_attr.estats_threshold_ns;
	memcpy(nic->src_mac, q->port->id.mac.addr_bytes, 6);
	memcpy(nic->gid, q->port->gid, 16);
	if (q->port->id.has_ip6)
		memcpy(nic->ip6, q->port->id.ip6, 16);
	nic->clock_ns = c->clock_ns;
	nic->clock_arg = c->clock_arg;
	nic->tsc0 = rte_rdtsc();
	nic->ns_mult = (uint64_t)(((unsigned __int128)NS_PER_S << 32) / rte_get_tsc_hz());
	return nic;
}

struct rfw_nic *rfw_nic_create(struct rfw_queue *q, const struct rfw_nic_conf *conf)
{
	struct rfw_nic_conf c = conf != NULL ? *conf : (struct rfw_nic_conf){0};
	struct rfw_nic *nic;
	int e;

	if (q == NULL || q->port == NULL || (!q->port->id.has_ip4 && !q->port->id.has_ip6) ||
	    conf_fill(&c, q) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	nic = nic_alloc(q, &c);
	if (nic == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	e = -nic_mbuf_off_init(nic);
	if (e == 0) {
		nic->fw = fw_create(nic, &c);
		e = nic->fw == NULL ? errno : 0;
	}
	if (e == 0) {
		nic->dev = rfw_fw_dev(nic->fw);
		if (c.estats)
			e = -nic_es_start(nic, c.estats_dump_dir != NULL ? c.estats_dump_dir : ".");
	}
	if (e == 0)
		e = -nic_registry_add(nic);
	/* On a port of several queues the dispatcher brings this NIC its QPNs' frames. */
	if (e == 0 && q->port->steer != NULL) {
		e = -rfw_port_steer_add(q->port, q->qid, c.dev_attr.qpn_base, c.dev_attr.max_qp);
		if (e != 0)
			nic_registry_remove(nic);
	}
	if (e != 0) {
		nic_es_stop(nic);
		rfw_fw_destroy(nic->fw);
		nic_free(nic);
		rte_errno = e;
		return NULL;
	}
	return nic;
}

void rfw_nic_destroy(struct rfw_nic *nic)
{
	if (nic == NULL)
		return;
	/* Out of the registry first: a telemetry command reading it finishes before we go on. */
	nic_registry_remove(nic);
	rfw_port_steer_del(nic->q->port, nic->q->qid);
	for (uint32_t i = 0; i < nic->max_qp; i++)
		if (nic->l2[i].qp != NULL)
			rfw_nic_qp_detach(nic, nic->l2[i].qp);
	rfw_tx_flush(nic->q, rte_rdtsc());
	nic_es_stop(nic);
	rfw_fw_destroy(nic->fw);
	nic_free(nic);
}

struct rfw_dev *rfw_nic_dev(struct rfw_nic *nic)
{
	return nic->dev;
}

struct rfw_fw *rfw_nic_fw(struct rfw_nic *nic)
{
	return nic->fw;
}

const uint8_t *rfw_nic_gid(const struct rfw_nic *nic)
{
	return nic->gid;
}

int rfw_nic_id(const struct rfw_nic *nic)
{
	return nic->id;
}

/*
 * The firmware's path from the application's: the port's addresses of the destination's
 * family, the NIC's VLAN unless the path says otherwise, DSCP/PCP of data and CNPs.
 */
static int fw_path(const struct rfw_nic *nic, const struct rfw_nic_path *path,
                   struct rfw_fw_path *fp)
{
	const struct rfw_port *port = nic->q->port;
	bool v4 = rfw_ip_is_mapped4(path->dst_ip);

	if (v4 ? !port->id.has_ip4 : !port->id.has_ip6)
		return -EINVAL;
	if (path->vlan > RFW_NIC_VLAN_TAG || (path->pcp_set && path->pcp > 7))
		return -EINVAL;
	memset(fp, 0, sizeof(*fp));
	memcpy(fp->dst_mac, path->dst_mac.addr_bytes, 6);
	memcpy(fp->src_mac, nic->src_mac, 6);
	if (v4)
		rfw_ip4_to_mapped(fp->src_ip, port->id.ip4);
	else
		memcpy(fp->src_ip, nic->ip6, 16);
	memcpy(fp->dst_ip, path->dst_ip, 16);
	fp->udp_sport = path->udp_sport;
	fp->vlan = path->vlan == RFW_NIC_VLAN_TAG || (path->vlan == RFW_NIC_VLAN_CONF && nic->vlan);
	fp->vlan_id = path->vlan == RFW_NIC_VLAN_TAG ? path->vlan_id : fp->vlan ? nic->vlan_id : 0;
	fp->pcp = path->pcp_set ? path->pcp : nic->data_pcp;
	fp->dscp = nic->dscp;
	fp->cnp_dscp = nic->cnp_dscp;
	fp->cnp_pcp = nic->cnp_pcp;
	return fp->vlan && (fp->vlan_id == 0 || fp->vlan_id > 4094) ? -EINVAL : 0;
}

int rfw_nic_qp_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path)
{
	struct rfw_fw_path fp;
	uint32_t i;
	int rc;

	if (nic == NULL || qp == NULL || path == NULL)
		return -EINVAL;
	i = rfw_qp_num(qp) - nic->qpn_base;
	if (i >= nic->max_qp || rfw_dev_qp(nic->dev, rfw_qp_num(qp)) != qp)
		return -EINVAL;
	if (nic->l2[i].qp != NULL)
		return -EEXIST;
	rc = fw_path(nic, path, &fp);
	if (rc == 0)
		rc = nic_l2_attach(nic, qp, path, &fp);
	if (rc != 0)
		return rc;
	rc = rfw_fw_qp_attach(nic->fw, qp, &fp);
	if (rc != 0) {
		nic_l2_detach(nic, i);
		return rc;
	}
	nic_es_mark(nic, NIC_ES_MARK_ATTACH, i, nic->now_ns); /* its Estats rows start afresh */
	return 0;
}

void rfw_nic_qp_detach(struct rfw_nic *nic, struct rfw_qp *qp)
{
	uint32_t i = rfw_qp_num(qp) - nic->qpn_base;

	if (i >= nic->max_qp || nic->l2[i].qp != qp)
		return;
	rfw_fw_qp_detach(nic->fw, qp);
	nic_l2_detach(nic, i);
	nic_es_mark(nic, NIC_ES_MARK_DETACH, i, nic->now_ns);
}

uint64_t rfw_nic_ctr(const struct rfw_nic *nic, enum rfw_nic_ctr c)
{
	unsigned h = (unsigned)c - RFW_FW_CTR__COUNT;

	if ((unsigned)c < RFW_FW_CTR__COUNT)
		return rfw_fw_ctr_read(nic->fw, (enum rfw_fw_ctr)c);
	if (h == RFW_NIC_HOST_CTR_estats_dumps)
		return nic_es_dumps(nic);
	if (h == RFW_NIC_HOST_CTR_estats_dump_errors)
		return nic_es_dump_errors(nic);
	if (h == RFW_NIC_HOST_CTR_estats_records_dropped)
		return nic_es_records_dropped(nic);
	return h < RFW_NIC_HOST_CTR__COUNT ? __atomic_load_n(&nic->ctr[h], __ATOMIC_RELAXED) : 0;
}

uint64_t rfw_nic_qp_ctr(const struct rfw_nic *nic, const struct rfw_qp *qp, enum rfw_nic_qp_ctr c)
{
	return rfw_fw_qp_ctr(nic->fw, qp, (enum rfw_fw_qp_ctr)c);
}

enum rfw_nic_l2 rfw_nic_qp_l2(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	uint32_t i = rfw_qp_num(qp) - nic->qpn_base;

	return i < nic->max_qp && nic->l2[i].qp == qp ? (enum rfw_nic_l2)nic->l2[i].state
	                                              : RFW_NIC_L2_FAILED;
}

uint64_t rfw_nic_qp_rate_kbps(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	return rfw_fw_qp_rate_kbps(nic->fw, qp, nic->now_ns);
}

const struct dcqcn_rp *rfw_nic_qp_rp(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	const struct cc_flow *f = rfw_fw_qp_flow(nic->fw, qp);

	return f != NULL && f->algo == CC_ALGO_DCQCN ? &f->u.dcqcn : NULL;
}

const struct dcqcn_np *rfw_nic_qp_np(const struct rfw_nic *nic, const struct rfw_qp *qp)
{
	return rfw_fw_qp_np(nic->fw, qp);
}
