/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocefw-verbs' rdma_cm: librdmacm's API (rdma/rdma_cma.h) for the rocefw device, with the
 * IBA chapter 12 Communication Manager (ctrl/rfw_cm.h) spoken on the device's QP1 instead of
 * the kernel's rdma_ucm. The exported rdma_* functions (cma_*.c) are interposed like the verbs
 * (rocefw-verbs.map); every rdma_cm_id of a program run by rocefw-run is a rocefw one (there
 * is no kernel RDMA to pass on to). docs/rdma-cm.md describes the whole.
 *
 * Locking: the engine lock (rfw_eng_lock) covers ids, the CM and QP1; a channel's lock covers
 * its event queue only and is taken inside the engine lock, never around it.
 */
#ifndef RFW_VERBS_CMA_H
#define RFW_VERBS_CMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

#include "verbs/vrb.h"

#define RFW_CMA_PDATA_MAX 196 /* the largest private data of a CM message (REP, REJ) */

struct rfw_cma_ev {
	struct rdma_cm_event ev; /* first: what rdma_get_cm_event hands out */
	struct rfw_cma_ev *next;
	/* The id the event counts against until acked: ev.id, or for a connection request the
	   listener (as librdmacm does: the new id may be destroyed before the ack). */
	struct rfw_cma_id *owner;
	uint8_t pdata[RFW_CMA_PDATA_MAX];
};

struct rfw_cma_chan {
	struct rdma_event_channel ch; /* ch.fd: an eventfd, readable while the queue is not empty */
	pthread_mutex_t lock;
	pthread_cond_t acked; /* an event of the channel was acked (rdma_destroy_id waits) */
	struct rfw_cma_ev *head, *tail;
	unsigned refs; /* atomic: the channel's own, and one per rdma_get_cm_event under way */
};

/* Where an id is in librdmacm's life cycle (the events it has delivered). */
enum rfw_cma_state {
	RFW_CMA_IDLE,
	RFW_CMA_ADDR_QUERY,   /* rdma_resolve_addr: ARP asked */
	RFW_CMA_ADDR_BOUND,   /* bound or resolved */
	RFW_CMA_ROUTE_OK,     /* route resolved */
	RFW_CMA_LISTEN,       /* rdma_listen */
	RFW_CMA_CONNECT,      /* REQ sent, waiting for REP */
	RFW_CMA_REQ_RCVD,     /* a listener's child: CONNECT_REQUEST delivered */
	RFW_CMA_ACCEPT,       /* REP sent, waiting for RTU */
	RFW_CMA_REP_RCVD,     /* active, no QP on the id: CONNECT_RESPONSE, rdma_establish next */
	RFW_CMA_CONNECTED,    /* ESTABLISHED delivered */
	RFW_CMA_DISCONNECT,   /* DREQ sent or received */
	RFW_CMA_DISCONNECTED, /* DISCONNECTED delivered */
	RFW_CMA_ERROR,        /* rejected, unreachable, address error */
	RFW_CMA__COUNT
};
extern const char *const rfw_cma_state_name[RFW_CMA__COUNT];

/* The connection parameters of one side, as the REQ / REP carry them (IBA 12.7.2, 12.7.3). */
struct rfw_cma_conn {
	uint32_t qpn; /* this side's QP */
	/* The Starting PSN of this side's REQ / REP: the first PSN this side expects to receive
	   (its RQ PSN); the peer starts its send queue there. So does Linux's CM (ib_cm: the
	   passive side's SQ PSN is the REQ's Starting PSN, the active side's the REP's). */
	uint32_t psn;
	uint8_t resp_res;     /* responder resources (max_dest_rd_atomic) */
	uint8_t init_depth;   /* initiator depth (max_rd_atomic) */
	uint8_t retry_cnt;    /* 0..7 */
	uint8_t rnr_retry;    /* 0..7 */
	uint8_t mtu;          /* enum ibv_mtu */
	uint8_t flow_control; /* end-to-end flow control */
	bool srq;
};

struct rfw_cma_id {
	struct rdma_cm_id id;           /* first: the application's handle */
	struct rfw_cma_id *next, *prev; /* on the list of ids (under the engine lock) */
	enum rfw_cma_state state;
	struct rfw_cma_id *listener; /* a connection request's listening id */
	int backlog;
	uint64_t addr_deadline_ns; /* ADDR_QUERY: ADDR_ERROR after this */
	struct rfw_cma_conn local, remote;
	uint32_t cm_conn; /* the CM's handle of the connection (ctrl/rfw_cm.h), 0 = none */
	bool qp_ours;     /* rdma_create_qp made id.qp (rdma_destroy_qp frees it) */
	bool pd_ours;     /* rdma_create_qp allocated id.pd */
	bool sync;        /* created without a channel: calls wait for their event (cma_ep.c) */
	bool own_chan;    /* id.channel is the id's private one */
	bool ep_attr_set; /* rdma_create_ep on a passive id: each request gets a QP like this */
	unsigned ev_out;  /* events rdma_get_cm_event handed out, not acked yet (channel lock) */
	struct ibv_qp_init_attr ep_attr;
	struct ibv_pd *ep_pd;
};

static inline struct rfw_cma_id *rfw_cma_of(struct rdma_cm_id *id)
{
	return (struct rfw_cma_id *)id;
}

/* The process's rdma_cm: the rocefw context every id uses, the ids, QP1 and the CM. */
struct rfw_cma {
	struct ibv_context *verbs;
	struct rfw_vrb_ctx *ctx;
	struct rfw_eng *eng;
	struct rfw_cma_id *ids;
	/* Ids put in ADDR_QUERY since the last walk found none: the progress step walks the ids
	   only while some may be waiting for ARP (a thousand connected ids cost nothing). */
	uint32_t addr_queries;
	uint16_t next_port; /* ephemeral ports for ids bound to port 0 */
	void *agent;        /* QP1 and the CM (cma_agent.c) */
};

/* Put @c on / take it off the list of ids, in O(1) (under the engine lock). */
static inline void rfw_cma_link(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	c->prev = NULL;
	c->next = cm->ids;
	if (cm->ids != NULL)
		cm->ids->prev = c;
	cm->ids = c;
}

static inline void rfw_cma_unlink(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else if (cm->ids == c)
		cm->ids = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
}

/* The rdma_cm of the process, set up on first use; NULL and errno if there is no device. */
struct rfw_cma *rfw_cma_get(void);

/* rdma_destroy_id: drop @c's events not handed out yet, wait for those handed out to be
 * acked (not under the engine lock). */
void rfw_cma_chan_forget(struct rfw_cma_id *c);
/* Queue @type on @id's channel (under the engine lock). 0 or -ENOMEM. */
int rfw_cma_post(struct rfw_cma_id *id, enum rdma_cm_event_type type, int status, const void *pdata,
                 uint8_t pdata_len, struct rfw_cma_id *listener);
/* The id's local / peer IPv4 addresses in network order, and ports in network order. */
uint32_t rfw_cma_src_ip(const struct rfw_cma_id *c);
uint32_t rfw_cma_dst_ip(const struct rfw_cma_id *c);
/* The IPv4-mapped GID of a network-order IPv4 address. */
void rfw_cma_gid_of(uint32_t ip, uint8_t gid[16]);

/* One step of the rdma_cm on the NIC's thread (engine lock held): QP1, CM timers, ARP. */
void rfw_cma_step(struct rfw_eng *e);

/* ---- the CM on QP1 (cma_cm.c: the host of ctrl/rfw_cm.h) ---- */

#define RFW_CMA_REQ_PDATA_USER 56 /* REQ private data after rdma_cm's 36-byte header */

/* A connection request as the listener sees it. */
struct rfw_cma_req {
	uint32_t cm_conn;  /* the CM's connection */
	uint32_t src_ip;   /* the requester's address and port (network order), from the */
	uint16_t src_port; /* rdma_cm header of the private data */
	struct rfw_cma_conn peer;
	const uint8_t *pdata; /* the user's private data */
	uint8_t pdata_len;
};

int rfw_cma_cm_create(struct rfw_cma *cm, uint64_t now_ns);
void rfw_cma_cm_step(struct rfw_cma *cm, uint64_t now_ns);
/* The process is exiting: REQs held for a listener get REJ 8 now (no listener will come). */
void rfw_cma_cm_stop_holding(struct rfw_cma *cm, uint64_t now_ns);
/* Whether the CM still has MADs to send on QP1, or (@answers) a DREQ without its DREP: @conn's,
   or any connection's when @conn is 0 (engine lock). */
bool rfw_cma_cm_owes(struct rfw_cma *cm, uint32_t conn, bool answers);
/* Drive the NIC until the CM owes nothing (rfw_cma_cm_owes) and the port has sent all the NIC
   made, for at most ~200 ms (verbs/cma.c). */
void rfw_cma_settle(struct rfw_cma *cm, uint32_t conn);
/* REQ / REP / REJ / RTU / DREQ-or-DREP for the id's connection; 0 or -errno. */
int rfw_cma_cm_connect(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len);
int rfw_cma_cm_accept(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len);
int rfw_cma_cm_reject(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len);
void rfw_cma_cm_reject_req(struct rfw_cma *cm, const struct rfw_cma_req *r);
int rfw_cma_cm_rtu(struct rfw_cma *cm, struct rfw_cma_id *c);
int rfw_cma_cm_disconnect(struct rfw_cma *cm, struct rfw_cma_id *c);
/* rdma_listen / its end: the id's service ID ((port space << 16) + port) to the CM. */
int rfw_cma_cm_listen(struct rfw_cma *cm, struct rfw_cma_id *c);
void rfw_cma_cm_unlisten(struct rfw_cma *cm, struct rfw_cma_id *c);
/* The CM's connection of a new child id @c now belongs to it. */
void rfw_cma_bind_conn(struct rfw_cma *cm, struct rfw_cma_id *c);
/* @c is being destroyed: its connection, if any, goes on without it (TimeWait, DREQ). */
void rfw_cma_forget(struct rfw_cma *cm, struct rfw_cma_id *c);

/* The CM's events for an id (cma_conn.c). */
void rfw_cma_on_req(struct rfw_cma *cm, struct rfw_cma_id *listener, const struct rfw_cma_req *r);
void rfw_cma_on_rep(struct rfw_cma *cm, struct rfw_cma_id *c, const struct rfw_cma_conn *peer,
                    const void *pdata, uint8_t len);
void rfw_cma_on_rtu(struct rfw_cma *cm, struct rfw_cma_id *c);
void rfw_cma_on_rej(struct rfw_cma *cm, struct rfw_cma_id *c, int reason, const void *pdata,
                    uint8_t len);
void rfw_cma_on_timeout(struct rfw_cma *cm, struct rfw_cma_id *c);
void rfw_cma_on_disconnected(struct rfw_cma *cm, struct rfw_cma_id *c);

/* A synchronous id waits for its next event; 0 or -1 and errno (cma_ep.c). */
int rfw_cma_complete(struct rfw_cma_id *c);

/* Moving an id's QP through INIT / RTR / RTS from the exchanged parameters (cma_qp.c). */
int rfw_cma_qp_attr(struct rfw_cma_id *c, struct ibv_qp_attr *a, int *mask);
int rfw_cma_qp_to(struct rfw_cma_id *c, enum ibv_qp_state s);

#endif
