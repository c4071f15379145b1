/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry commands of librocefw, under /rocefw/ (readable with dpdk-telemetry.py -f PREFIX).
 * Registered in a constructor, as DPDK's own libraries do. Every reply dict carries a
 * "schema" field naming its layout and version. See docs/dataplane.md.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "wire/neigh_wire.h"
#include "dataplane/rfw_neigh.h"
#include "dataplane/rfw_port.h"
#include "dataplane/rfw_steer.h"

static struct rfw_port *port_arg(const char *params)
{
	char *end;
	unsigned long id;

	if (params == NULL || *params == '\0')
		return NULL;
	id = strtoul(params, &end, 10);
	if (*end != '\0' || id >= RTE_MAX_ETHPORTS)
		return NULL;
	return rfw_port_get((uint16_t)id);
}

static int tel_ports(const char *cmd __rte_unused, const char *params __rte_unused,
                     struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (unsigned i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (rfw_port_get((uint16_t)i) != NULL)
			rte_tel_data_add_array_int(d, (int)i);
	return 0;
}

static int tel_port_info(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct rfw_port *p = port_arg(params);
	char buf[64];
	struct rte_eth_link link;

	if (p == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.port.info/1");
	rte_tel_data_add_dict_int(d, "port", p->port_id);
	rte_tel_data_add_dict_string(d, "name", p->name);
	rte_ether_format_addr(buf, sizeof(buf), &p->id.mac);
	rte_tel_data_add_dict_string(d, "mac", buf);
	if (p->id.has_ip4) {
		uint8_t m[16];

		rfw_ip4_to_mapped(m, p->id.ip4);
		rte_tel_data_add_dict_string(d, "ipv4", rfw_ip_to_str(m, buf, sizeof(buf)));
	}
	if (p->id.has_ip6)
		rte_tel_data_add_dict_string(d, "ipv6", rfw_ip_to_str(p->id.ip6, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf),
	         "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
	         p->gid[0], p->gid[1], p->gid[2], p->gid[3], p->gid[4], p->gid[5], p->gid[6],
	         p->gid[7], p->gid[8], p->gid[9], p->gid[10], p->gid[11], p->gid[12], p->gid[13],
	         p->gid[14], p->gid[15]);
	rte_tel_data_add_dict_string(d, "gid", buf);
	rte_tel_data_add_dict_int(d, "mtu", p->mtu);
	rte_tel_data_add_dict_int(d, "rx_queues", p->nb_rxq);
	rte_tel_data_add_dict_int(d, "tx_queues", p->nb_txq);
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0) {
		rte_tel_data_add_dict_string(d, "link", link.link_status ? "up" : "down");
		rte_tel_data_add_dict_u64(d, "link_speed_mbps", link.link_speed);
	}
	return 0;
}

static int tel_port_stats(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct rfw_port *p = port_arg(params);
	struct rte_tel_data *reasons;

	if (p == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.port.stats/1");
	rte_tel_data_add_dict_int(d, "port", p->port_id);
	for (unsigned c = 0; c < RFW_PORT_CTR__COUNT; c++)
		rte_tel_data_add_dict_u64(d, rfw_port_ctr_name(c), rfw_port_ctr(p, c));
	/* Non-zero reasons only, named as rocefw-replay names them. */
	reasons = rte_tel_data_alloc();
	if (reasons == NULL)
		return 0;
	rte_tel_data_start_dict(reasons);
	for (unsigned r = 1; r < RFW_FRAME_ERR__COUNT; r++) {
		uint64_t sum = 0;

		for (unsigned i = 0; i < RFW_MAX_QUEUES; i++)
			sum += p->q[i] ? p->q[i]->malformed_frame[r] : 0;
		if (sum)
			rte_tel_data_add_dict_u64(reasons, rfw_frame_err_name(r), sum);
	}
	for (unsigned r = 1; r < RFW_IB_ERR__COUNT; r++) {
		uint64_t sum = 0;

		for (unsigned i = 0; i < RFW_MAX_QUEUES; i++)
			sum += p->q[i] ? p->q[i]->malformed_ib[r] : 0;
		if (sum)
			rte_tel_data_add_dict_u64(reasons, rfw_ib_err_name(r), sum);
	}
	for (unsigned r = 1; r < RFW_NEIGH_ERR__COUNT; r++) {
		uint64_t sum = 0;

		for (unsigned i = 0; i < RFW_MAX_QUEUES; i++)
			sum += p->q[i] ? p->q[i]->neigh_bad[r] : 0;
		if (sum)
			rte_tel_data_add_dict_u64(reasons, rfw_neigh_err_name(r), sum);
	}
	rte_tel_data_add_dict_container(d, "malformed_by_reason", reasons, 0);
	return 0;
}

static int tel_counters(const char *cmd __rte_unused, const char *params __rte_unused,
                        struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (unsigned c = 0; c < RFW_PORT_CTR__COUNT; c++)
		rte_tel_data_add_dict_string(d, rfw_port_ctr_name(c), rfw_port_ctr_doc(c));
	return 0;
}

static int tel_neigh(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct rfw_port *p = port_arg(params);
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	unsigned listed = 0;

	if (p == NULL)
		return -EINVAL;
	/* DPDK 22.11 accepts only arrays inside arrays, so entries are a dict keyed by the
	 * table slot, each a dict. */
	rte_tel_data_start_dict(d);
	/* Any queue's lcore may be resolving (rfw_port.h "Threading"). */
	rte_spinlock_lock(&p->neigh_lock);
	for (uint32_t i = 0; i < p->neigh->capacity && listed < 256; i++) {
		const struct rfw_neigh_entry *e = &p->neigh->e[i];
		struct rte_tel_data *x;
		char buf[64], key[16];

		if (e->state == RFW_NEIGH_FREE)
			continue;
		x = rte_tel_data_alloc();
		if (x == NULL)
			break;
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "ip", rfw_ip_to_str(e->ip, buf, sizeof(buf)));
		rte_ether_format_addr(buf, sizeof(buf), &e->mac);
		rte_tel_data_add_dict_string(x, "mac", buf);
		rte_tel_data_add_dict_string(x, "state", rfw_neigh_state_name(e->state));
		rte_tel_data_add_dict_int(x, "probes", e->probes);
		rte_tel_data_add_dict_u64(
		    x, "age_ms", e->confirmed_tsc ? (now - e->confirmed_tsc) * 1000 / hz : 0);
		snprintf(key, sizeof(key), "%u", i);
		rte_tel_data_add_dict_container(d, key, x, 0);
		listed++;
	}
	rte_spinlock_unlock(&p->neigh_lock);
	return 0;
}

/* "P,Q": one queue's counters and, on a port of several queues, the QPNs its NIC owns. */
static int tel_port_queue(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct rfw_port *p;
	const struct rfw_queue *q;
	char *end;
	unsigned long id, qid;

	if (params == NULL)
		return -EINVAL;
	id = strtoul(params, &end, 10);
	if (*end != ',' || id >= RTE_MAX_ETHPORTS || (p = rfw_port_get((uint16_t)id)) == NULL)
		return -EINVAL;
	qid = strtoul(end + 1, &end, 10);
	if (*end != '\0' || qid >= RFW_MAX_QUEUES || (q = p->q[qid]) == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.port.queue/1");
	rte_tel_data_add_dict_int(d, "port", p->port_id);
	rte_tel_data_add_dict_int(d, "queue", q->qid);
	if (p->steer != NULL && qid < p->steer->nq) {
		uint32_t n = __atomic_load_n(&p->steer->own[qid].n, __ATOMIC_ACQUIRE);

		rte_tel_data_add_dict_u64(d, "qpn_lo", n ? p->steer->own[qid].lo : 0);
		rte_tel_data_add_dict_u64(d, "qpn_count", n);
	}
	for (unsigned c = 0; c < RFW_PORT_CTR__COUNT; c++)
		rte_tel_data_add_dict_u64(d, rfw_port_ctr_name(c), q->ctr[c]);
	return 0;
}

RTE_INIT(rfw_telemetry_init)
{
	rte_telemetry_register_cmd("/rocefw/ports", tel_ports,
	                           "Returns the ids of the ports rocefw set up. No parameters");
	rte_telemetry_register_cmd(
	    "/rocefw/port/info", tel_port_info,
	    "Returns name, MAC, IPv4/IPv6, GID, MTU, link. Parameter: port id");
	rte_telemetry_register_cmd("/rocefw/port/stats", tel_port_stats,
	                           "Returns the rocefw counters of a port. Parameter: port id");
	rte_telemetry_register_cmd("/rocefw/port/queue", tel_port_queue,
	                           "Returns one queue's rocefw counters and the QPNs its NIC owns. "
	                           "Parameters: port id,queue id");
	rte_telemetry_register_cmd("/rocefw/port/counters", tel_counters,
	                           "Returns what each /rocefw/port/stats counter means");
	rte_telemetry_register_cmd(
	    "/rocefw/neigh", tel_neigh,
	    "Returns the ARP/ND neighbour table of a port. Parameter: port id");
}
