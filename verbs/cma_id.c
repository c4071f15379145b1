/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm ids and addresses: create / destroy, bind, address and route resolution, listen,
 * ports. One rocefw device with one IPv4 address per process (ROCEFW_IP): an id binds to it
 * (or to INADDR_ANY, which means it); the destination's MAC comes from rocefw's ARP, the
 * "route" is the one hop of a RoCE subnet (no SA on Ethernet: the path is made up locally, as
 * the kernel does for RoCE).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/cma.h"

const char *const rfw_cma_state_name[RFW_CMA__COUNT] = {
    [RFW_CMA_IDLE] = "idle",
    [RFW_CMA_ADDR_QUERY] = "addr_query",
    [RFW_CMA_ADDR_BOUND] = "addr_bound",
    [RFW_CMA_ROUTE_OK] = "route_resolved",
    [RFW_CMA_LISTEN] = "listen",
    [RFW_CMA_CONNECT] = "connect",
    [RFW_CMA_REQ_RCVD] = "connect_request",
    [RFW_CMA_ACCEPT] = "accept",
    [RFW_CMA_REP_RCVD] = "connect_response",
    [RFW_CMA_CONNECTED] = "connected",
    [RFW_CMA_DISCONNECT] = "disconnect",
    [RFW_CMA_DISCONNECTED] = "disconnected",
    [RFW_CMA_ERROR] = "error",
};

#define ADDR_TIMEOUT_MIN_MS 100
#define EPHEMERAL_FIRST     32768

void rfw_cma_gid_of(uint32_t ip, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &ip, 4);
}

static struct sockaddr_in *sin_of(struct sockaddr_storage *s)
{
	return (struct sockaddr_in *)(void *)s;
}

uint32_t rfw_cma_src_ip(const struct rfw_cma_id *c)
{
	return ((const struct sockaddr_in *)&c->id.route.addr.src_addr)->sin_addr.s_addr;
}

uint32_t rfw_cma_dst_ip(const struct rfw_cma_id *c)
{
	return ((const struct sockaddr_in *)&c->id.route.addr.dst_addr)->sin_addr.s_addr;
}

static int fail(int err, const char *fn, const char *why)
{
	if (why)
		fprintf(stderr, "rocefw-verbs: %s: %s\n", fn, why);
	errno = err;
	return -1;
}

int rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *context,
                   enum rdma_port_space ps)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c;

	if (cm == NULL)
		return -1;
	if (id == NULL)
		return fail(EINVAL, "rdma_create_id", NULL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB)
		return fail(EOPNOTSUPP, "rdma_create_id", "port space other than TCP, UDP, IB");
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -1;
	if (ch == NULL) { /* synchronous: a private channel (cma_ep.c) */
		ch = rdma_create_event_channel();
		if (ch == NULL) {
			free(c);
			return -1;
		}
		c->sync = c->own_chan = true;
	}
	c->id.channel = ch;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	c->id.verbs = cm->verbs;
	c->id.port_num = 1;
	c->state = RFW_CMA_IDLE;
	rfw_eng_lock(cm->eng);
	rfw_cma_link(cm, c);
	rfw_eng_unlock(cm->eng);
	*id = &c->id;
	return 0;
}

/* Bind @c to @a (NULL or INADDR_ANY: the device's address; port 0: an ephemeral one). */
static int bind_to(struct rfw_cma *cm, struct rfw_cma_id *c, const struct sockaddr *a)
{
	struct sockaddr_in *s = sin_of(&c->id.route.addr.src_storage);
	uint32_t own = htonl(rfw_vrb_dev.conf.ip4);
	const struct sockaddr_in *in = (const struct sockaddr_in *)a;

	if (a != NULL && a->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	if (in != NULL && in->sin_addr.s_addr != INADDR_ANY && in->sin_addr.s_addr != own)
		return -EADDRNOTAVAIL;
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = own;
	s->sin_port = in ? in->sin_port : 0;
	for (struct rfw_cma_id *o = cm->ids; o && s->sin_port; o = o->next)
		if (o != c && o->state != RFW_CMA_IDLE && o->listener == NULL &&
		    sin_of(&o->id.route.addr.src_storage)->sin_port == s->sin_port &&
		    o->id.ps == c->id.ps)
			return -EADDRINUSE;
	if (s->sin_port == 0)
		s->sin_port = htons((uint16_t)(EPHEMERAL_FIRST + cm->next_port++ % 28000));
	c->state = RFW_CMA_ADDR_BOUND;
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc;

	if (cm == NULL || id == NULL || addr == NULL)
		return fail(EINVAL, "rdma_bind_addr", NULL);
	rfw_eng_lock(cm->eng);
	rc = c->state == RFW_CMA_IDLE ? bind_to(cm, c, addr) : -EINVAL;
	rfw_eng_unlock(cm->eng);
	return rc ? fail(-rc, "rdma_bind_addr", NULL) : 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
                      int timeout_ms)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc = 0;

	if (cm == NULL || id == NULL || dst == NULL)
		return fail(EINVAL, "rdma_resolve_addr", NULL);
	if (dst->sa_family != AF_INET)
		return fail(EAFNOSUPPORT, "rdma_resolve_addr", "IPv4 destinations only");
	rfw_eng_lock(cm->eng);
	if (c->state == RFW_CMA_IDLE)
		rc = bind_to(cm, c, src);
	else if (c->state != RFW_CMA_ADDR_BOUND)
		rc = -EINVAL;
	if (rc == 0) {
		memcpy(&c->id.route.addr.dst_storage, dst, sizeof(struct sockaddr_in));
		c->addr_deadline_ns =
		    rfw_eng_clock_ns(cm->eng) + (uint64_t)(timeout_ms < ADDR_TIMEOUT_MIN_MS
		                                               ? ADDR_TIMEOUT_MIN_MS
		                                               : timeout_ms) *
		                                    1000000u;
		c->state = RFW_CMA_ADDR_QUERY; /* rfw_cma_step asks ARP and posts the event */
		cm->addr_queries++;
	}
	rfw_eng_unlock(cm->eng);
	if (rc != 0)
		return fail(-rc, "rdma_resolve_addr", NULL);
	rfw_vrb_progress_doorbell();
	return rfw_cma_complete(c);
}

/* The path record librdmacm fills for RoCE: GIDs, P_Key, MTU; no SA. */
static void fill_route(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	struct ibv_sa_path_rec *p = calloc(1, sizeof(*p));
	struct rfw_eng_port_info pi;

	rfw_eng_port_info(cm->eng, &pi);
	free(c->id.route.path_rec);
	c->id.route.path_rec = p;
	c->id.route.num_paths = p ? 1 : 0;
	rfw_cma_gid_of(rfw_cma_src_ip(c), c->id.route.addr.addr.ibaddr.sgid.raw);
	rfw_cma_gid_of(rfw_cma_dst_ip(c), c->id.route.addr.addr.ibaddr.dgid.raw);
	c->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
	if (p == NULL)
		return;
	p->sgid = c->id.route.addr.addr.ibaddr.sgid;
	p->dgid = c->id.route.addr.addr.ibaddr.dgid;
	p->pkey = htons(0xffff);
	p->mtu = (uint8_t)rfw_vrb_mtu_of(pi.ip_mtu);
	p->mtu_selector = 2; /* exactly */
	p->hop_limit = 64;
	p->reversible = 1;
	p->numb_path = 1;
	p->packet_life_time = 14; /* ~67 ms: the CM response timeout derives from it */
	p->packet_life_time_selector = 2;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc = 0;

	(void)timeout_ms;
	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_resolve_route", NULL);
	rfw_eng_lock(cm->eng);
	if (c->state != RFW_CMA_ADDR_BOUND || rfw_cma_dst_ip(c) == 0) {
		rc = -EINVAL;
	} else {
		fill_route(cm, c);
		c->state = RFW_CMA_ROUTE_OK;
		rc = rfw_cma_post(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, NULL);
	}
	rfw_eng_unlock(cm->eng);
	return rc ? fail(-rc, "rdma_resolve_route", NULL) : rfw_cma_complete(c);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	int rc = 0;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_listen", NULL);
	rfw_eng_lock(cm->eng);
	if (c->state == RFW_CMA_IDLE)
		rc = bind_to(cm, c, NULL);
	if (rc == 0 && c->state != RFW_CMA_ADDR_BOUND)
		rc = -EINVAL;
	if (rc == 0)
		rc = rfw_cma_cm_listen(cm, c);
	if (rc == 0) {
		c->backlog = backlog > 0 ? backlog : 128;
		c->state = RFW_CMA_LISTEN;
	}
	rfw_eng_unlock(cm->eng);
	return rc ? fail(-rc, "rdma_listen", NULL) : 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_id *c = rfw_cma_of(id);
	uint32_t conn;

	if (cm == NULL || id == NULL)
		return fail(EINVAL, "rdma_destroy_id", NULL);
	rfw_eng_lock(cm->eng);
	if (c->state == RFW_CMA_LISTEN)
		rfw_cma_cm_unlisten(cm, c);
	conn = c->cm_conn;
	rfw_cma_forget(cm, c); /* the CM keeps a connection's TimeWait, without the id */
	rfw_cma_unlink(cm, c);
	rfw_eng_unlock(cm->eng);
	if (conn != 0) /* its DREQ (or DREP) out, and answered, before the program may exit */
		rfw_cma_settle(cm, conn);
	if (c->id.event)
		rdma_ack_cm_event(c->id.event);
	/* Nothing posts for @c any more: its queued events go, and another thread still handling
	   one it got (rping's CM thread, while main tears down) finishes before @c is freed. */
	rfw_cma_chan_forget(c);
	if (c->own_chan)
		rdma_destroy_event_channel(c->id.channel);
	if (c->pd_ours && c->id.qp == NULL)
		ibv_dealloc_pd(c->id.pd);
	free(c->id.route.path_rec);
	free(c);
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return sin_of(&id->route.addr.src_storage)->sin_port;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return sin_of(&id->route.addr.dst_storage)->sin_port;
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	(void)id, (void)optval, (void)optlen;
	/* Type of service and reuse-address change nothing a rocefw connection depends on. */
	if (level == RDMA_OPTION_ID &&
	    (optname == RDMA_OPTION_ID_TOS || optname == RDMA_OPTION_ID_REUSEADDR))
		return 0;
	fprintf(stderr, "rocefw-verbs: rdma_set_option(level %d, option %d) is not supported\n",
	        level, optname);
	errno = ENOSYS;
	return -1;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	(void)id, (void)ch;
	return fail(ENOSYS, "rdma_migrate_id", "not supported by rocefw");
}
