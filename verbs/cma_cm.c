/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host of the CM (ctrl/rfw_cm.h) for the rdma_cm: MADs to and from QP1 (cma_agent.c), the
 * CM's events to the ids (cma_conn.c), the rdma_cm header in a REQ's private data (IBA Annex
 * A11: version, IP version, source port, source and destination address, 36 bytes), service
 * IDs of (port space << 16) + port. Engine lock held throughout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "ctrl/rfw_cm.h"
#include "verbs/cma.h"
#include "verbs/cma_agent.h"

struct cma_host {
	struct rfw_cm *cm;
	struct cma_agent *agent;
	struct rfw_eng *eng; /* its lock guards both */
};

/* One rdma_cm per process: the ids of every event channel share its CM and QP1. */
static struct cma_host host;

/* The CM's and QP1 agent's counters, read under the engine lock (cm NULL: not started). */
static bool cm_counters(uint64_t cm[RFW_CM_CNT__COUNT], uint64_t qp1[RFW_CMA_AGENT_CNT__COUNT])
{
	if (host.cm == NULL)
		return false;
	rfw_eng_lock(host.eng);
	rfw_cm_counters(host.cm, cm);
	rfw_cma_agent_counters(host.agent, qp1);
	rfw_eng_unlock(host.eng);
	return true;
}

/* One counter table as the dictionary @key of @d. */
static void tel_table(struct rte_tel_data *d, const char *key, const char *const *names,
                      const uint64_t *v, unsigned n)
{
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	for (unsigned k = 0; k < n; k++)
		rte_tel_data_add_dict_u64(c, names[k], v[k]);
	rte_tel_data_add_dict_container(d, key, c, 0);
}

/* Telemetry /rocefw/cm (schema rocefw.cm/1, docs/rdma-cm.md). */
static int tel_cm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t cm[RFW_CM_CNT__COUNT], qp1[RFW_CMA_AGENT_CNT__COUNT];
	bool on = cm_counters(cm, qp1);

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "schema", "rocefw.cm/1");
	rte_tel_data_add_dict_int(d, "started", on);
	if (on) {
		tel_table(d, "cm", rfw_cm_cnt_name, cm, RFW_CM_CNT__COUNT);
		tel_table(d, "qp1", rfw_cma_agent_cnt_name, qp1, RFW_CMA_AGENT_CNT__COUNT);
	}
	return 0;
}

/* The non-zero counters of one table as "rocefw-verbs: @what NAME N" lines on stderr. */
static void print_table(const char *what, const char *const *names, const uint64_t *v, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (v[k] != 0)
			fprintf(stderr, "rocefw-verbs: %s %s %" PRIu64 "\n", what, names[k], v[k]);
}

/* ROCEFW_STATS=1, at exit: the non-zero ones, beside the engine's (verbs/engine.c). */
static void print_stats(void)
{
	uint64_t cm[RFW_CM_CNT__COUNT], qp1[RFW_CMA_AGENT_CNT__COUNT];

	if (!cm_counters(cm, qp1))
		return;
	print_table("cm", rfw_cm_cnt_name, cm, RFW_CM_CNT__COUNT);
	print_table("qp1", rfw_cma_agent_cnt_name, qp1, RFW_CMA_AGENT_CNT__COUNT);
}

static struct cma_host *host_of(struct rfw_cma *cm)
{
	return cm->agent;
}

static uint32_t ip_of_gid(const uint8_t gid[16])
{
	uint32_t ip;

	memcpy(&ip, gid + 12, 4);
	return ip;
}

static int send_mad(void *arg, const uint8_t gid[16], const uint8_t *mad, uint64_t now)
{
	struct cma_host *h = arg;

	return rfw_cma_agent_send(h->agent, ip_of_gid(gid), mad, RFW_MAD_LEN, now);
}

static struct rfw_cma_id *id_of_conn(struct rfw_cma *cm, uint32_t conn)
{
	for (struct rfw_cma_id *c = cm->ids; c; c = c->next)
		if (c->cm_conn == conn)
			return c;
	return NULL;
}

static void conn_of_params(const struct rfw_cm_params *p, struct rfw_cma_conn *o)
{
	*o = (struct rfw_cma_conn){.qpn = p->qpn,
	                           .psn = p->psn,
	                           .resp_res = p->resp_res,
	                           .init_depth = p->init_depth,
	                           .retry_cnt = p->retry_count,
	                           .rnr_retry = p->rnr_retry,
	                           .mtu = p->mtu ? p->mtu : IBV_MTU_4096,
	                           .flow_control = p->flow_control,
	                           .srq = p->srq};
}

static uint8_t port_mtu_of(struct rfw_cma *cm)
{
	struct rfw_eng_port_info pi;

	rfw_eng_port_info(cm->eng, &pi);
	return (uint8_t)rfw_vrb_mtu_of(pi.ip_mtu);
}

/* A REQ: the rdma_cm header must be there and name us; the user data follows it. */
static void on_req(struct rfw_cma *cm, const struct rfw_cm_event *ev)
{
	struct rfw_cma_id *l = ev->ctx; /* the listening id (rfw_cma_cm_listen) */
	struct rfw_cma_hdr hdr;
	struct rfw_cma_req r = {.cm_conn = ev->conn};

	if (l == NULL || rfw_cma_hdr_decode(ev->pdata, ev->pdata_len, &hdr) != 0 ||
	    hdr.ip_version != 4) {
		rfw_cm_reject(host_of(cm)->cm, ev->conn, RFW_CM_REJ_INVALID_SERVICE_ID, NULL, 0,
		              rfw_eng_clock_ns(cm->eng));
		return;
	}
	if (ev->peer->mtu > port_mtu_of(cm)) {
		/* IBA 12.6.5: a path MTU this port cannot carry is refused (REJ 26), not accepted
		   to fail later with every full-sized packet dropped */
		fprintf(stderr, "rocefw-verbs: rdma_cm: REQ path MTU %u above the port's %u: REJ\n",
		        128u << ev->peer->mtu, 128u << port_mtu_of(cm));
		rfw_cm_reject(host_of(cm)->cm, ev->conn, RFW_CM_REJ_INVALID_MTU, NULL, 0,
		              rfw_eng_clock_ns(cm->eng));
		return;
	}
	memcpy(&r.src_ip, hdr.src_ip + 12, 4);
	r.src_port = htons(hdr.src_port);
	conn_of_params(ev->peer, &r.peer);
	r.pdata = ev->pdata + RFW_CMA_HDR_LEN;
	r.pdata_len = RFW_CMA_REQ_PDATA_USER;
	rfw_cma_on_req(cm, l, &r);
}

static void on_event(void *arg, const struct rfw_cm_event *ev)
{
	struct rfw_cma *cm = arg;
	struct rfw_cma_id *c;
	struct rfw_cma_conn peer;

	if (ev->type == RFW_CM_EV_REQ) {
		on_req(cm, ev);
		return;
	}
	/* The connection's context is its id once connect or accept named it (a detached
	   connection's is NULL); before that, the listener's: then look the id up. */
	c = ev->ctx;
	if (c == NULL || c->cm_conn != ev->conn)
		c = id_of_conn(cm, ev->conn);
	if (c == NULL)
		return;
	switch (ev->type) {
	case RFW_CM_EV_REP:
		conn_of_params(ev->peer, &peer);
		peer.mtu = c->local.mtu; /* the REP carries no MTU: the REQ's stands */
		rfw_cma_on_rep(cm, c, &peer, ev->pdata, (uint8_t)ev->pdata_len);
		break;
	case RFW_CM_EV_RTU:
		rfw_cma_on_rtu(cm, c);
		break;
	case RFW_CM_EV_REJ:
		c->cm_conn = 0;
		rfw_cma_on_rej(cm, c, ev->reason, ev->pdata, (uint8_t)ev->pdata_len);
		break;
	case RFW_CM_EV_TIMEOUT:
		c->cm_conn = 0;
		rfw_cma_on_timeout(cm, c);
		break;
	case RFW_CM_EV_DREQ:
	case RFW_CM_EV_DREP:
		rfw_cma_on_disconnected(cm, c);
		break;
	case RFW_CM_EV_TIMEWAIT_EXIT:
		c->cm_conn = 0;
		rfw_cma_post(c, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, 0, NULL);
		break;
	default:
		break;
	}
}

/* A wrapper: the CM calls back with the rdma_cm as its host argument for events, and the
   cma_host for sends. */
static int send_cb(void *arg, const uint8_t gid[16], const uint8_t *mad, uint64_t now)
{
	return send_mad(host_of(arg), gid, mad, now);
}

int rfw_cma_cm_create(struct rfw_cma *cm, uint64_t now)
{
	static const struct rfw_cm_ops ops = {.send = send_cb, .event = on_event};
	struct rfw_eng_port_info pi;
	/* As many connections as the CM can name (cmtime -c 4000 asks for them at once). */
	struct rfw_cm_config cfg = {
	    .max_cm_retries = 15, .cm_timeout = 16, .max_conns = RFW_CM_MAX_CONNS};

	rfw_eng_port_info(cm->eng, &pi);
	memcpy(cfg.gid, pi.gid, 16);
	cfg.ca_guid = be64toh(rfw_vrb_node_guid());
	cfg.seed = (uint32_t)(now ^ (now >> 32));
	host.agent = rfw_cma_agent_create(cm->eng, now);
	if (host.agent == NULL)
		return -EIO;
	cm->agent = &host;
	host.eng = cm->eng;
	host.cm = rfw_cm_create(&ops, cm, &cfg);
	if (host.cm == NULL)
		return -ENOMEM;
	/* telemetry is up when the user gave EAL a --file-prefix (docs/verbs.md) */
	rte_telemetry_register_cmd(
	    "/rocefw/cm", tel_cm,
	    "Returns this process's rdma_cm counters: the IBA CM and its QP1 "
	    "agent");
	if (rfw_vrb_dev.conf.stats)
		atexit(print_stats);
	return 0;
}

static void rx_mad(void *arg, uint32_t src_ip, const uint8_t *mad, uint32_t len, uint64_t now)
{
	struct rfw_cma *cm = arg;
	uint8_t gid[16];

	rfw_cma_gid_of(src_ip, gid);
	rfw_cm_rx(host_of(cm)->cm, gid, mad, len, now);
}

void rfw_cma_cm_step(struct rfw_cma *cm, uint64_t now)
{
	struct cma_host *h = host_of(cm);

	rfw_cma_agent_poll(h->agent, now, rx_mad, cm);
	rfw_cm_step(h->cm, now);
}

void rfw_cma_cm_stop_holding(struct rfw_cma *cm, uint64_t now)
{
	rfw_cm_stop_holding(host_of(cm)->cm, now);
}

bool rfw_cma_cm_owes(struct rfw_cma *cm, uint32_t conn, bool answers)
{
	struct cma_host *h = host_of(cm);

	if (!rfw_cma_agent_idle(h->agent))
		return true;
	if (!answers)
		return false;
	return conn != 0 ? rfw_cm_dreq_unanswered(h->cm, conn) : rfw_cm_dreq_pending(h->cm) != 0;
}

static void params_of(const struct rfw_cma_conn *l, struct rfw_cm_params *p)
{
	*p = (struct rfw_cm_params){.qpn = l->qpn,
	                            .psn = l->psn,
	                            .resp_res = l->resp_res,
	                            .init_depth = l->init_depth,
	                            .retry_count = l->retry_cnt,
	                            .rnr_retry = l->rnr_retry,
	                            .mtu = l->mtu,
	                            .ack_timeout = 14,
	                            .flow_control = l->flow_control,
	                            .srq = l->srq};
}

int rfw_cma_cm_connect(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len)
{
	uint8_t pd[RFW_CM_REQ_PDATA] = {0}, gid[16];
	struct rfw_cma_hdr hdr = {.version = 0, .ip_version = 4};
	struct sockaddr_in *s = (struct sockaddr_in *)&c->id.route.addr.src_storage;
	struct sockaddr_in *d = (struct sockaddr_in *)&c->id.route.addr.dst_storage;
	struct rfw_cm_params p;
	int rc;

	if (c->local.qpn == 0)
		return -EINVAL;
	hdr.src_port = ntohs(s->sin_port);
	rfw_cma_gid_of(s->sin_addr.s_addr, hdr.src_ip);
	rfw_cma_gid_of(d->sin_addr.s_addr, hdr.dst_ip);
	memset(hdr.src_ip, 0, 12); /* IPv4 in the last 4 bytes, the rest zero (Annex A11) */
	memset(hdr.dst_ip, 0, 12);
	rfw_cma_hdr_encode(&hdr, pd);
	if (len)
		memcpy(pd + RFW_CMA_HDR_LEN, pdata, len);
	params_of(&c->local, &p);
	rfw_cma_gid_of(d->sin_addr.s_addr, gid);
	rc = rfw_cm_connect(host_of(cm)->cm, c, gid,
	                    rfw_cma_service_id((uint16_t)c->id.ps, ntohs(d->sin_port)), &p, pd,
	                    sizeof(pd), rfw_eng_clock_ns(cm->eng));
	if (rc < 0)
		return rc;
	c->cm_conn = (uint32_t)rc;
	return 0;
}

int rfw_cma_cm_accept(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len)
{
	struct rfw_cm_params p;

	if (c->local.qpn == 0)
		return -EINVAL;
	params_of(&c->local, &p);
	return rfw_cm_accept(host_of(cm)->cm, c->cm_conn, c, &p, pdata, len,
	                     rfw_eng_clock_ns(cm->eng));
}

int rfw_cma_cm_reject(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len)
{
	int rc = rfw_cm_reject(host_of(cm)->cm, c->cm_conn, RFW_CM_REJ_CONSUMER, pdata, len,
	                       rfw_eng_clock_ns(cm->eng));

	c->cm_conn = 0;
	return rc;
}

void rfw_cma_cm_reject_req(struct rfw_cma *cm, const struct rfw_cma_req *r)
{
	rfw_cm_reject(host_of(cm)->cm, r->cm_conn, RFW_CM_REJ_NO_RESOURCES, NULL, 0,
	              rfw_eng_clock_ns(cm->eng));
}

int rfw_cma_cm_rtu(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	return rfw_cm_rtu(host_of(cm)->cm, c->cm_conn, rfw_eng_clock_ns(cm->eng));
}

int rfw_cma_cm_disconnect(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	return c->cm_conn
	           ? rfw_cm_disconnect(host_of(cm)->cm, c->cm_conn, rfw_eng_clock_ns(cm->eng))
	           : 0;
}

void rfw_cma_bind_conn(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm, (void)c; /* the REQ's connection handle is already in c->cm_conn */
}

void rfw_cma_forget(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	if (c->cm_conn)
		rfw_cm_detach(host_of(cm)->cm, c->cm_conn, rfw_eng_clock_ns(cm->eng));
	c->cm_conn = 0;
}

static uint64_t service_of(const struct rfw_cma_id *c)
{
	const struct sockaddr_in *s = (const struct sockaddr_in *)&c->id.route.addr.src_storage;

	return rfw_cma_service_id((uint16_t)c->id.ps, ntohs(s->sin_port));
}

int rfw_cma_cm_listen(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	return rfw_cm_listen(host_of(cm)->cm, service_of(c), c);
}

void rfw_cma_cm_unlisten(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	rfw_cm_unlisten(host_of(cm)->cm, service_of(c));
}
