/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry of the NICs of this process: /rocefw/nics, /rocefw/nic, /rocefw/nic/counters,
 * /rocefw/qp/list, /rocefw/qp/info, /rocefw/cc/state, /rocefw/cc/params, /rocefw/estats. The
 * handlers run on DPDK's telemetry thread and read only the firmware's seqlock snapshots and
 * single-writer counters, never a struct rfw_qp (docs/nic.md "Telemetry").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "dataplane/rfw_nic_int.h"

/*
 * NICs of this process, for telemetry (DPDK 22.11's handlers take no context, so a registry is
 * the only way to them). The lock is taken by create/destroy and by the handlers, never on the
 * packet path: a command holding it keeps the NIC from being freed.
 */
/* Estats rows a telemetry reply carries (16 KB limit). */
#define NIC_ES_TEL_ROWS 64

static struct rfw_nic *nic_reg[RFW_NIC_MAX];
static rte_spinlock_t nic_reg_lock = RTE_SPINLOCK_INITIALIZER;

int nic_registry_add(struct rfw_nic *nic)
{
	rte_spinlock_lock(&nic_reg_lock);
	for (unsigned i = 0; i < RFW_NIC_MAX; i++) {
		if (nic_reg[i] == NULL) {
			nic_reg[i] = nic;
			nic->id = (int)i;
			break;
		}
	}
	rte_spinlock_unlock(&nic_reg_lock);
	return nic->id < 0 ? -ENOSPC : 0;
}

void nic_registry_remove(struct rfw_nic *nic)
{
	rte_spinlock_lock(&nic_reg_lock);
	if (nic->id >= 0 && nic_reg[nic->id] == nic)
		nic_reg[nic->id] = NULL;
	rte_spinlock_unlock(&nic_reg_lock);
}

/*
 * Parameters "A" or "A,B" (unsigned decimal). Returns how many were read (1 or 2), or -1
 * for anything else.
 */
static int tel_args(const char *params, unsigned long v[2])
{
	char *end;
	int n = 0;

	if (params == NULL || *params == '\0')
		return 0;
	while (n < 2) {
		if (*params < '0' || *params > '9')
			return -1;
		v[n++] = strtoul(params, &end, 10);
		if (*end == '\0')
			return n;
		if (*end != ',')
			return -1;
		params = end + 1;
	}
	return -1;
}

/* The registered NIC @id, with the registry lock held on success. */
static struct rfw_nic *tel_nic_lock(unsigned long id)
{
	rte_spinlock_lock(&nic_reg_lock);
	if (id < RFW_NIC_MAX && nic_reg[id] != NULL)
		return nic_reg[id];
	rte_spinlock_unlock(&nic_reg_lock);
	return NULL;
}

static void tel_nic_unlock(void)
{
	rte_spinlock_unlock(&nic_reg_lock);
}

static const char *tel_cc_name(const struct rfw_nic *nic)
{
	return nic->timely_prof != NULL ? "timely" : nic->cc_prof != NULL ? "dcqcn" : "none";
}

static const char *tel_scope_name(const struct rfw_nic *nic)
{
	static const char *const names[] = {"qp", "dst", "port"};

	return nic->cc_prof != NULL && nic->timely_prof == NULL && nic->cc_prof->scope < 3
	           ? names[nic->cc_prof->scope]
	           : "qp";
}

static void tel_add_ip(struct rte_tel_data *d, const char *key, const uint8_t ip[16])
{
	char buf[64];

	rte_tel_data_add_dict_string(d, key, rfw_ip_to_str(ip, buf, sizeof(buf)));
}

static int tel_nics(const char *cmd __rte_unused, const char *params __rte_unused,
                    struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	rte_spinlock_lock(&nic_reg_lock);
	for (unsigned i = 0; i < RFW_NIC_MAX; i++)
		if (nic_reg[i] != NULL)
			rte_tel_data_add_array_int(d, (int)i);
	rte_spinlock_unlock(&nic_reg_lock);
	return 0;
}

static void tel_nic_conf(struct rte_tel_data *d, const struct rfw_nic *nic)
{
	struct rfw_fw_snap s;
	unsigned attached = 0;

	rte_tel_data_add_dict_string(d, "schema", "rocefw.nic/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_int(d, "port", nic->q->port_id);
	rte_tel_data_add_dict_int(d, "queue", nic->q->qid);
	rte_tel_data_add_dict_int(d, "qpn_base", (int)nic->qpn_base);
	rte_tel_data_add_dict_int(d, "max_qp", (int)nic->max_qp);
	for (uint32_t i = 0; i < nic->max_qp; i++)
		attached += rfw_fw_snap_read(nic->fw, i, &s) && s.attached;
	rte_tel_data_add_dict_int(d, "qps_attached", (int)attached);
	rte_tel_data_add_dict_int(d, "dscp", nic->dscp);
	rte_tel_data_add_dict_int(d, "pcp", nic->data_pcp);
	rte_tel_data_add_dict_int(d, "vlan_id", nic->vlan ? nic->vlan_id : -1);
	rte_tel_data_add_dict_int(d, "udp6_csum", nic->udp6_csum);
	rte_tel_data_add_dict_string(d, "cc", tel_cc_name(nic));
	rte_tel_data_add_dict_string(d, "rp_scope", tel_scope_name(nic));
	rte_tel_data_add_dict_u64(d, "quantum", nic->quantum);
	rte_tel_data_add_dict_u64(d, "pacer_burst_ns", nic->pacer_burst_ns);
	rte_tel_data_add_dict_u64(d, "snapshot_us", nic->snapshot_ns / 1000);
	rte_tel_data_add_dict_u64(d, "snapshot_max_per_s", nic->pub_max_per_s);
	rte_tel_data_add_dict_u64(d, "tx_stall_ms", nic->tx_stall_ns / 1000000u);
	rte_tel_data_add_dict_u64(d, "tx_down", nic->tx_down);
	rte_tel_data_add_dict_u64(d, "now_ns", nic->now_ns);
}

static void tel_nic_ctrs(struct rte_tel_data *d, const struct rfw_nic *nic)
{
	uint64_t cnt[RFW_CNT__COUNT], at;
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_NIC_CTR__COUNT; k++)
			rte_tel_data_add_dict_u64(c, rfw_nic_ctr_name(k), rfw_nic_ctr(nic, k));
		rte_tel_data_add_dict_container(d, "counters", c, 0);
	}
	if (rfw_fw_dev_read(nic->fw, cnt, &at) && (c = rte_tel_data_alloc()) != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_CNT__COUNT; k++)
			rte_tel_data_add_dict_u64(c, rfw_counter_name(k), cnt[k]);
		rte_tel_data_add_dict_container(d, "dev_counters", c, 0);
		rte_tel_data_add_dict_u64(d, "dev_counters_at_ns", at);
	}
}

/* /rocefw/nic[,id]: configuration, NIC counters, the transport device's counters. */
static int tel_nic(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned long a[2] = {0, 0};
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n < 0 || n > 1 || (nic = tel_nic_lock(a[0])) == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	tel_nic_conf(d, nic);
	tel_nic_ctrs(d, nic);
	tel_nic_unlock();
	return 0;
}

/* /rocefw/qp/list[,nic]: the QP numbers attached (as of the last snapshots). */
static int tel_qp_list(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned long a[2] = {0, 0};
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n < 0 || n > 1 || (nic = tel_nic_lock(a[0])) == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (uint32_t i = 0, listed = 0; i < nic->max_qp && listed < RTE_TEL_MAX_ARRAY_ENTRIES;
	     i++) {
		struct rfw_fw_snap s;

		if (rfw_fw_snap_read(nic->fw, i, &s) && s.attached) {
			rte_tel_data_add_array_int(d, (int)(nic->qpn_base + i));
			listed++;
		}
	}
	tel_nic_unlock();
	return 0;
}

/*
 * "QPN" (on NIC 0) or "NIC,QPN": the NIC (locked) and a consistent snapshot of the QP's slot.
 * NULL if there is no such NIC, QP slot or attached QP.
 */
static struct rfw_nic *tel_qp_snap(const char *params, struct rfw_fw_snap *s, uint32_t *slot)
{
	unsigned long a[2] = {0, 0}, id = 0, qpn;
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n == 1) {
		qpn = a[0];
	} else if (n == 2) {
		id = a[0];
		qpn = a[1];
	} else {
		return NULL;
	}
	nic = tel_nic_lock(id);
	if (nic == NULL)
		return NULL;
	if (qpn < nic->qpn_base || qpn - nic->qpn_base >= nic->max_qp)
		goto none;
	*slot = (uint32_t)(qpn - nic->qpn_base);
	if (!rfw_fw_snap_read(nic->fw, *slot, s) || !s->attached)
		goto none;
	return nic;
none:
	tel_nic_unlock();
	return NULL;
}

static const char *transport_mode_name(unsigned m)
{
	return m == RFW_TRANSPORT_SR ? "sr" : m == RFW_TRANSPORT_GBN ? "gbn" : "unknown";
}

/* /rocefw/qp/info,[NIC,]QPN: state, PSNs, path, transport mode, counters. */
static int tel_qp_info(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct rfw_fw_snap s;
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	uint32_t slot;
	char buf[64];

	nic = tel_qp_snap(params, &s, &slot);
	if (nic == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.qp.info/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_int(d, "qpn", (int)s.qpn);
	rte_tel_data_add_dict_u64(d, "snapshot_age_ns",
	                          nic->now_ns > s.at_ns ? nic->now_ns - s.at_ns : 0);
	rte_tel_data_add_dict_string(d, "state", rfw_qp_state_str(s.state));
	rte_tel_data_add_dict_string(d, "transport_mode", transport_mode_name(s.transport_mode));
	rte_tel_data_add_dict_int(d, "path_mtu", (int)s.path_mtu);
	rte_tel_data_add_dict_int(d, "dest_qpn", (int)s.dest_qpn);
	rte_tel_data_add_dict_int(d, "sq_psn", (int)s.sq_psn);
	rte_tel_data_add_dict_int(d, "rq_psn", (int)s.rq_psn);
	rte_tel_data_add_dict_string(d, "l2", rfw_nic_l2_name(nic->l2[slot].state));
	rte_tel_data_add_dict_int(d, "ip_version", s.ip_ver);
	tel_add_ip(d, "src_ip", s.src_ip);
	tel_add_ip(d, "dst_ip", s.dst_ip);
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", s.dst_mac[0], s.dst_mac[1],
	         s.dst_mac[2], s.dst_mac[3], s.dst_mac[4], s.dst_mac[5]);
	rte_tel_data_add_dict_string(d, "dst_mac", buf);
	rte_tel_data_add_dict_int(d, "udp_sport", s.udp_sport);
	rte_tel_data_add_dict_int(d, "vlan_id", s.vlan ? s.vlan_id : -1);
	rte_tel_data_add_dict_int(d, "pcp", s.vlan ? s.pcp : -1);
	rte_tel_data_add_dict_int(d, "dscp", s.dscp);
	rte_tel_data_add_dict_u64(d, "paced_rate_kbps", s.cc && s.paced ? s.rate_kbps : 0);
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		/* Live counters: the slot array outlives any QP, reading it is always safe. */
		for (unsigned k = 0; k < RFW_NIC_QP_CTR__COUNT; k++)
			rte_tel_data_add_dict_u64(c, rfw_nic_qp_ctr_name(k), s.ctr[k]);
		rte_tel_data_add_dict_container(d, "nic_counters", c, 0);
	}
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_CNT__COUNT; k++)
			rte_tel_data_add_dict_u64(c, rfw_counter_name(k), s.tcnt[k]);
		rte_tel_data_add_dict_container(d, "counters", c, 0);
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/cc/state,[NIC,]QPN: the QP's reaction and notification points. */
static int tel_cc_state(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct rfw_fw_snap s;
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	uint32_t slot;

	nic = tel_qp_snap(params, &s, &slot);
	if (nic == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.cc.state/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_int(d, "qpn", (int)s.qpn);
	rte_tel_data_add_dict_string(d, "cc", tel_cc_name(nic));
	rte_tel_data_add_dict_string(d, "rp_scope", tel_scope_name(nic));
	rte_tel_data_add_dict_u64(d, "snapshot_age_ns",
	                          nic->now_ns > s.at_ns ? nic->now_ns - s.at_ns : 0);
	if (s.cc) {
		rte_tel_data_add_dict_string(d, "rp_state", dcqcn_rp_state_name(s.rp_state));
		rte_tel_data_add_dict_int(d, "paced", s.paced);
		rte_tel_data_add_dict_u64(d, "rate_kbps", s.rate_kbps);
		rte_tel_data_add_dict_u64(d, "target_kbps", s.target_kbps);
		rte_tel_data_add_dict_u64(d, "alpha", s.alpha);
		c = rte_tel_data_alloc();
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			for (unsigned k = 0; k < DCQCN_RP_CNT__COUNT; k++)
				rte_tel_data_add_dict_u64(c, dcqcn_rp_counter_name(k), s.rp_cnt[k]);
			rte_tel_data_add_dict_container(d, "rp_counters", c, 0);
		}
		c = rte_tel_data_alloc();
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			for (unsigned k = 0; k < DCQCN_NP_CNT__COUNT; k++)
				rte_tel_data_add_dict_u64(c, dcqcn_np_counter_name(k), s.np_cnt[k]);
			rte_tel_data_add_dict_container(d, "np_counters", c, 0);
		}
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/cc/params[,nic]: the profile's parameters by their dcqcn_params.h names. */
static int tel_cc_params(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned long a[2] = {0, 0};
	struct rte_tel_data *c;
	struct rfw_nic *nic;
	int n = tel_args(params, a);

	if (n < 0 || n > 1 || (nic = tel_nic_lock(a[0])) == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.cc.params/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	rte_tel_data_add_dict_string(d, "cc", tel_cc_name(nic));
	if (nic->cc_prof != NULL) {
		rte_tel_data_add_dict_u64(d, "line_rate_mbps", nic->cc_prof->line_kbps / 1000);
		c = rte_tel_data_alloc();
		if (c != NULL) {
			rte_tel_data_start_dict(c);
			for (unsigned k = 0; k < DCQCN_PARAM__COUNT; k++)
				rte_tel_data_add_dict_u64(
				    c, dcqcn_param_info(k)->name,
				    dcqcn_param_get(&nic->cc_prof->params, k));
			rte_tel_data_add_dict_container(d, "params", c, 0);
		}
	}
	tel_nic_unlock();
	return 0;
}

/* /rocefw/qp/counters: what each per-QP and NIC counter means. */
static int tel_nic_counters(const char *cmd __rte_unused, const char *params __rte_unused,
                            struct rte_tel_data *d)
{
	struct rte_tel_data *c;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.nic.counters/1");
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_NIC_CTR__COUNT; k++)
			rte_tel_data_add_dict_string(c, rfw_nic_ctr_name(k), rfw_nic_ctr_doc(k));
		rte_tel_data_add_dict_container(d, "nic", c, 0);
	}
	c = rte_tel_data_alloc();
	if (c != NULL) {
		rte_tel_data_start_dict(c);
		for (unsigned k = 0; k < RFW_NIC_QP_CTR__COUNT; k++)
			rte_tel_data_add_dict_string(c, rfw_nic_qp_ctr_name(k),
			                             rfw_nic_qp_ctr_doc(k));
		rte_tel_data_add_dict_container(d, "qp", c, 0);
	}
	return 0;
}

/* Parameters "", "NIC" or "NIC,last|current" (window -1: not given). 0 or -EINVAL. */
static int tel_estats_args(const char *params, unsigned long *id, int *window)
{
	char *end;

	if (params == NULL || *params == '\0')
		return 0;
	if (*params < '0' || *params > '9')
		return -EINVAL;
	*id = strtoul(params, &end, 10);
	if (*end == '\0')
		return 0;
	if (*end != ',')
		return -EINVAL;
	if (strcmp(end + 1, "last") == 0)
		*window = RFW_ES_LAST;
	else if (strcmp(end + 1, "current") == 0)
		*window = RFW_ES_CURRENT;
	else
		return -EINVAL;
	return 0;
}

/*
 * /rocefw/estats[,NIC[,last|current]]: latency quantiles per QP x op x status x stage
 * (schema rocefw.estats/1, docs/estats.md). Without a window: the last complete interval if
 * there is one, else the current.
 */
static int tel_estats(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	static struct nic_es_pub snap; /* one telemetry thread: too big for its stack */
	static rte_spinlock_t snap_lock = RTE_SPINLOCK_INITIALIZER;
	unsigned long id = 0;
	int window = -1;
	struct rfw_nic *nic;
	struct rte_tel_data *rows;
	bool ok = false;
	char key[64];
	uint32_t n;

	if (tel_estats_args(params, &id, &window) != 0)
		return -EINVAL;
	nic = tel_nic_lock(id);
	if (nic == NULL)
		return -EINVAL;
	rte_spinlock_lock(&snap_lock);
	if (nic->es_pub != NULL)
		ok = rfw_seq_read(&nic->es_pub->seq, nic->es_pub, &snap, sizeof(snap));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.estats/1");
	rte_tel_data_add_dict_int(d, "nic", nic->id);
	/* DPDK 22.11 telemetry has no boolean: 0/1 as "udp6_csum" in /rocefw/nic */
	rte_tel_data_add_dict_int(d, "enabled", nic->es_pub != NULL);
	rte_tel_data_add_dict_u64(d, "interval_ns", nic->es_interval_ns);
	rte_tel_data_add_dict_u64(d, "threshold_ns", nic->es_threshold_ns);
	if (window < 0)
		window = ok && snap.have_last ? RFW_ES_LAST : RFW_ES_CURRENT;
	rte_tel_data_add_dict_string(d, "window", window == RFW_ES_LAST ? "last" : "current");
	if (nic->es_pub != NULL && !ok)
		rte_tel_data_add_dict_string(d, "error", "busy");
	if (ok) {
		rte_tel_data_add_dict_u64(d, "at_ns", snap.at_ns);
		rte_tel_data_add_dict_u64(d, "dumps", nic_es_dumps(nic));
	}
	n = ok ? snap.nrows[window] : 0;
	rte_tel_data_add_dict_int(d, "truncated", (ok && snap.truncated) || n > NIC_ES_TEL_ROWS);
	rows = rte_tel_data_alloc();
	if (rows != NULL) {
		/* DPDK 22.11 telemetry cannot put dicts in an array: rows is a dict keyed
		 * "QPN/op/status/stage", each value the row object (docs/estats.md). */
		rte_tel_data_start_dict(rows);
		for (uint32_t i = 0; i < n && i < NIC_ES_TEL_ROWS; i++) {
			const struct rfw_es_row *r = &snap.rows[window][i];
			struct rte_tel_data *o = rte_tel_data_alloc();

			if (o == NULL)
				break;
			rte_tel_data_start_dict(o);
			rte_tel_data_add_dict_int(o, "qpn", (int)r->qpn);
			rte_tel_data_add_dict_string(o, "op", rfw_es_op_name(r->op));
			rte_tel_data_add_dict_string(o, "status", rfw_es_status_name(r->status));
			rte_tel_data_add_dict_string(o, "stage", rfw_es_stage_name(r->stage));
			rte_tel_data_add_dict_u64(o, "count", r->count);
			rte_tel_data_add_dict_u64(o, "p50_ns", r->p50);
			rte_tel_data_add_dict_u64(o, "p99_ns", r->p99);
			rte_tel_data_add_dict_u64(o, "p999_ns", r->p999);
			rte_tel_data_add_dict_u64(o, "max_ns", r->max);
			snprintf(key, sizeof(key), "%u/%s/%s/%s", r->qpn, rfw_es_op_name(r->op),
			         rfw_es_status_name(r->status), rfw_es_stage_name(r->stage));
			rte_tel_data_add_dict_container(rows, key, o, 0);
		}
		rte_tel_data_add_dict_container(d, "rows", rows, 0);
	}
	rte_spinlock_unlock(&snap_lock);
	tel_nic_unlock();
	return 0;
}

RTE_INIT(rfw_nic_telemetry_init)
{
	rte_telemetry_register_cmd("/rocefw/estats", tel_estats,
	                           "Returns Estats latency quantiles per QP x op x status x stage. "
	                           "Parameters: nic id (default 0), then last|current");
	rte_telemetry_register_cmd("/rocefw/nics", tel_nics,
	                           "Returns the ids of the rocefw NICs. No parameters");
	rte_telemetry_register_cmd(
	    "/rocefw/nic", tel_nic,
	    "Returns a NIC's configuration, counters and transport counters. Parameter: nic id "
	    "(default 0)");
	rte_telemetry_register_cmd("/rocefw/nic/counters", tel_nic_counters,
	                           "Returns what each NIC and per-QP NIC counter means");
	rte_telemetry_register_cmd("/rocefw/qp/list", tel_qp_list,
	                           "Returns the QP numbers attached to a NIC. Parameter: nic id "
	                           "(default 0)");
	rte_telemetry_register_cmd("/rocefw/qp/info", tel_qp_info,
	                           "Returns a QP's state, PSNs, path and counters. Parameters: "
	                           "qpn, or nic id,qpn");
	rte_telemetry_register_cmd("/rocefw/cc/state", tel_cc_state,
	                           "Returns a QP's DCQCN reaction/notification point state. "
	                           "Parameters: qpn, or nic id,qpn");
	rte_telemetry_register_cmd("/rocefw/cc/params", tel_cc_params,
	                           "Returns the DCQCN profile parameters of a NIC. Parameter: nic "
	                           "id (default 0)");
}
