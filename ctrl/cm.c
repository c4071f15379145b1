/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM's connections, the host's calls and the timers (IBA 12.9). Incoming MADs: cm_rx.c.
 * A MAD that asks for an answer (REQ, REP, DREQ) is resent every CM response timeout until
 * answered or max CM retries have passed (IBA 12.4); the last MAD of a connection is also what
 * a duplicate gets again.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/cm_int.h"

const char *const rfw_cm_cnt_name[RFW_CM_CNT__COUNT] = {
#define X(n, m) [RFW_CM_CNT_##n] = #n,
    RFW_CM_COUNTERS(X)
#undef X
};

const char *const rfw_cm_state_name[CM__STATES] = {
    [CM_IDLE] = "idle",           [CM_REQ_SENT] = "req_sent",   [CM_REQ_RCVD] = "req_rcvd",
    [CM_REP_SENT] = "rep_sent",   [CM_REP_RCVD] = "rep_rcvd",   [CM_ESTABLISHED] = "established",
    [CM_DREQ_SENT] = "dreq_sent", [CM_DREQ_RCVD] = "dreq_rcvd", [CM_TIMEWAIT] = "timewait",
};

struct rfw_cm *rfw_cm_create(const struct rfw_cm_ops *ops, void *host,
                             const struct rfw_cm_config *cfg)
{
	struct rfw_cm *cm;

	if (ops == NULL || ops->send == NULL || ops->event == NULL || cfg == NULL ||
	    cfg->max_conns > CM_MAX_CONNS || cfg->cm_timeout > 31 || cfg->max_cm_retries > 15)
		return NULL;
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return NULL;
	cm->ops = *ops;
	cm->host = host;
	cm->cfg = *cfg;
	if (cm->cfg.max_conns == 0)
		cm->cfg.max_conns = 256;
	if (cm->cfg.cm_timeout == 0)
		cm->cfg.cm_timeout = 16;
	if (cm->cfg.timewait_ns == 0)
		cm->cfg.timewait_ns = 100000000ull;
	if (cm->cfg.listen_grace_ns == 0)
		cm->cfg.listen_grace_ns = 100000000ull;
	cm->timeout_ns = 4096ull << cm->cfg.cm_timeout;
	cm->next_id = cfg->seed * 2654435761u | 1;
	cm->next_tid = cfg->seed ^ 0x5a5a5a5au;
	cm->hash_mask = 1;
	while (cm->hash_mask + 1 < 2 * cm->cfg.max_conns)
		cm->hash_mask = cm->hash_mask << 1 | 1;
	cm->conns = calloc(cm->cfg.max_conns, sizeof(*cm->conns));
	cm->rid_head = calloc(cm->hash_mask + 1, sizeof(*cm->rid_head));
	cm->qpn_head = calloc(cm->hash_mask + 1, sizeof(*cm->qpn_head));
	if (cm->conns == NULL || cm->rid_head == NULL || cm->qpn_head == NULL) {
		rfw_cm_destroy(cm);
		return NULL;
	}
	return cm;
}

void rfw_cm_destroy(struct rfw_cm *cm)
{
	if (cm == NULL)
		return;
	free(cm->conns);
	free(cm->rid_head);
	free(cm->qpn_head);
	free(cm);
}

int rfw_cm_listen(struct rfw_cm *cm, uint64_t service_id, void *ctx)
{
	struct cm_listen *f = NULL;

	for (int i = 0; i < CM_MAX_LISTEN; i++) {
		if (cm->listen[i].used && cm->listen[i].service_id == service_id)
			return -EADDRINUSE;
		if (!cm->listen[i].used && f == NULL)
			f = &cm->listen[i];
	}
	if (f == NULL)
		return -ENOSPC;
	*f = (struct cm_listen){.service_id = service_id, .ctx = ctx, .used = true};
	return 0;
}

int rfw_cm_unlisten(struct rfw_cm *cm, uint64_t service_id)
{
	for (int i = 0; i < CM_MAX_LISTEN; i++)
		if (cm->listen[i].used && cm->listen[i].service_id == service_id) {
			cm->listen[i].used = false;
			return 0;
		}
	return -ENOENT;
}

struct cm_conn *cm_conn_of(struct rfw_cm *cm, uint32_t h)
{
	uint32_t i = (h & CM_MAX_CONNS) - 1;

	if ((h & CM_MAX_CONNS) == 0 || i >= cm->cfg.max_conns)
		return NULL;
	if (cm->conns[i].st == CM_IDLE || cm->conns[i].gen != h >> CM_IDX_BITS)
		return NULL;
	return &cm->conns[i];
}

/*
 * A free slot, searched round robin from after the last one given: a slot just freed is the
 * last to be reused (a late MAD for the old connection then finds nothing), and under churn
 * the search ends at once. The local communication ID is random above the slot's bits.
 */
struct cm_conn *cm_conn_alloc(struct rfw_cm *cm)
{
	for (uint32_t k = 0; k < cm->cfg.max_conns; k++) {
		uint32_t i = (cm->alloc_next + k) % cm->cfg.max_conns;
		struct cm_conn *c = &cm->conns[i];
		uint32_t gen = (c->gen + 1) & ((1u << (32 - CM_IDX_BITS)) - 1);

		if (c->st != CM_IDLE)
			continue;
		memset(c, 0, sizeof(*c));
		c->gen = gen ? gen : 1;
		c->local_id = cm->next_id++ << CM_IDX_BITS | (i + 1);
		c->deadline = UINT64_MAX;
		cm->alloc_next = i + 1;
		return c;
	}
	return NULL;
}

static uint32_t peer_hash(const struct rfw_cm *cm, uint32_t key, const uint8_t gid[16])
{
	uint32_t h = key * 2654435761u, w;

	for (int i = 0; i < 16; i += 4) {
		memcpy(&w, gid + i, 4);
		h = (h ^ w) * 2654435761u;
	}
	return (h ^ h >> 16) & cm->hash_mask;
}

void cm_index(struct rfw_cm *cm, struct cm_conn *c)
{
	uint16_t slot = (uint16_t)(c - cm->conns + 1);
	uint32_t hr = peer_hash(cm, c->remote_id, c->peer_gid);
	uint32_t hq = peer_hash(cm, c->remote_qpn, c->peer_gid);

	c->rid_next = cm->rid_head[hr];
	cm->rid_head[hr] = slot;
	c->qpn_next = cm->qpn_head[hq];
	cm->qpn_head[hq] = slot;
	c->indexed = true;
}

/* Take slot @slot off the chain starting at @head, linked through the field at @off. */
static void chain_del(struct rfw_cm *cm, uint16_t *head, uint16_t slot, size_t off)
{
	for (uint16_t *p = head; *p != 0; p = (uint16_t *)((char *)&cm->conns[*p - 1] + off))
		if (*p == slot) {
			*p = *(uint16_t *)((char *)&cm->conns[slot - 1] + off);
			return;
		}
}

struct cm_conn *cm_by_remote(struct rfw_cm *cm, uint32_t remote_id, const uint8_t gid[16])
{
	for (uint16_t s = cm->rid_head[peer_hash(cm, remote_id, gid)]; s != 0;) {
		struct cm_conn *c = &cm->conns[s - 1];

		if (c->st != CM_IDLE && c->remote_id == remote_id && !memcmp(c->peer_gid, gid, 16))
			return c;
		s = c->rid_next;
	}
	return NULL;
}

struct cm_conn *cm_by_qpn(struct rfw_cm *cm, uint32_t qpn, const uint8_t gid[16])
{
	for (uint16_t s = cm->qpn_head[peer_hash(cm, qpn, gid)]; s != 0;) {
		struct cm_conn *c = &cm->conns[s - 1];

		if (c->st != CM_IDLE && c->st != CM_TIMEWAIT && c->remote_qpn == qpn &&
		    !memcmp(c->peer_gid, gid, 16))
			return c;
		s = c->qpn_next;
	}
	return NULL;
}

void cm_conn_free(struct rfw_cm *cm, struct cm_conn *c)
{
	if (c->indexed) {
		uint16_t slot = (uint16_t)(c - cm->conns + 1);

		chain_del(cm, &cm->rid_head[peer_hash(cm, c->remote_id, c->peer_gid)], slot,
		          offsetof(struct cm_conn, rid_next));
		chain_del(cm, &cm->qpn_head[peer_hash(cm, c->remote_qpn, c->peer_gid)], slot,
		          offsetof(struct cm_conn, qpn_next));
		c->indexed = false;
	}
	cm_set_st(cm, c, CM_IDLE);
	c->deadline = UINT64_MAX;
}

void cm_send(struct rfw_cm *cm, struct cm_conn *c, const uint8_t gid[16], struct rfw_cm_msg *m,
             uint64_t now)
{
	uint8_t buf[RFW_MAD_LEN];
	uint8_t *b = c ? c->last : buf;

	rfw_cm_mad_encode(m, b);
	if (c)
		c->has_last = true;
	cm->cnt[RFW_CM_CNT_mad_tx]++;
	cm->ops.send(cm->host, gid, b, now);
}

void cm_resend(struct rfw_cm *cm, struct cm_conn *c, uint64_t now)
{
	if (!c->has_last)
		return;
	cm->cnt[RFW_CM_CNT_mad_tx]++;
	cm->ops.send(cm->host, c->peer_gid, c->last, now);
}

void cm_arm(struct rfw_cm *cm, struct cm_conn *c, uint64_t now)
{
	c->retries = 0;
	cm_timer(cm, c, now + cm->timeout_ns);
}

void cm_event(struct rfw_cm *cm, struct cm_conn *c, struct rfw_cm_event *ev)
{
	if (c != NULL) {
		if (c->detached)
			return;
		ev->conn = cm_handle(cm, c);
		if (ev->type != RFW_CM_EV_REQ)
			ev->ctx = c->ctx;
	}
	cm->ops.event(cm->host, ev);
}

static void fill_req(struct rfw_cm *cm, struct cm_conn *c, const struct rfw_cm_params *p,
                     struct rfw_cm_req *r)
{
	r->local_comm_id = c->local_id;
	r->service_id = c->service_id;
	r->local_ca_guid = cm->cfg.ca_guid;
	r->local_qpn = p->qpn & 0xffffff;
	r->resp_res = p->resp_res;
	r->init_depth = p->init_depth;
	r->remote_cm_timeout = cm->cfg.cm_timeout;
	r->transport = 0; /* RC */
	r->flow_control = p->flow_control;
	r->start_psn = p->psn & 0xffffff;
	r->local_cm_timeout = cm->cfg.cm_timeout;
	r->retry_count = p->retry_count & 7;
	r->pkey = 0xffff;
	r->mtu = p->mtu;
	r->rnr_retry = p->rnr_retry & 7;
	r->max_cm_retries = cm->cfg.max_cm_retries;
	r->srq = p->srq;
	r->local_lid = r->remote_lid = 0xffff; /* RoCE: no LIDs (permissive) */
	memcpy(r->local_gid, cm->cfg.gid, 16);
	memcpy(r->remote_gid, c->peer_gid, 16);
	r->hop_limit = 64;
	r->packet_rate = 0x3f; /* as Linux sends for RoCE */
	r->ack_timeout = p->ack_timeout;
}

int rfw_cm_connect(struct rfw_cm *cm, void *ctx, const uint8_t peer_gid[16], uint64_t service_id,
                   const struct rfw_cm_params *p, const void *pdata, uint8_t len, uint64_t now)
{
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_REQ};
	struct cm_conn *c;

	if (p == NULL || peer_gid == NULL || len > RFW_CM_REQ_PDATA || (len && pdata == NULL))
		return -EINVAL;
	c = cm_conn_alloc(cm);
	if (c == NULL)
		return -ENOSPC;
	c->ctx = ctx;
	c->service_id = service_id;
	c->local_qpn = p->qpn;
	memcpy(c->peer_gid, peer_gid, 16);
	c->tid = (uint64_t)cm->next_tid++;
	m.tid = c->tid;
	fill_req(cm, c, p, &m.req);
	if (len)
		memcpy(m.req.pdata, pdata, len);
	cm_set_st(cm, c, CM_REQ_SENT);
	cm_send(cm, c, c->peer_gid, &m, now);
	cm_arm(cm, c, now);
	return (int)cm_handle(cm, c);
}

int rfw_cm_accept(struct rfw_cm *cm, uint32_t conn, void *ctx, const struct rfw_cm_params *p,
                  const void *pdata, uint8_t len, uint64_t now)
{
	struct cm_conn *c = cm_conn_of(cm, conn);
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_REP};

	if (c == NULL || p == NULL || len > RFW_CM_REP_PDATA || (len && pdata == NULL))
		return -EINVAL;
	if (c->st != CM_REQ_RCVD)
		return -EINVAL;
	c->ctx = ctx;
	c->local_qpn = p->qpn;
	m.tid = c->tid;
	m.rep.local_comm_id = c->local_id;
	m.rep.remote_comm_id = c->remote_id;
	m.rep.local_qpn = p->qpn & 0xffffff;
	m.rep.start_psn = p->psn & 0xffffff;
	m.rep.resp_res = p->resp_res;
	m.rep.init_depth = p->init_depth;
	m.rep.flow_control = p->flow_control;
	m.rep.rnr_retry = p->rnr_retry & 7;
	m.rep.srq = p->srq;
	m.rep.local_ca_guid = cm->cfg.ca_guid;
	if (len)
		memcpy(m.rep.pdata, pdata, len);
	cm_set_st(cm, c, CM_REP_SENT);
	cm_send(cm, c, c->peer_gid, &m, now);
	cm_arm(cm, c, now);
	return 0;
}

int rfw_cm_reject(struct rfw_cm *cm, uint32_t conn, uint16_t reason, const void *pdata, uint8_t len,
                  uint64_t now)
{
	struct cm_conn *c = cm_conn_of(cm, conn);
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_REJ};

	if (c == NULL || len > RFW_CM_REJ_PDATA || (len && pdata == NULL) ||
	    (c->st != CM_REQ_RCVD && c->st != CM_REP_RCVD))
		return -EINVAL;
	m.tid = c->tid;
	m.rej.local_comm_id = c->local_id;
	m.rej.remote_comm_id = c->remote_id;
	m.rej.msg_rejected = c->st == CM_REQ_RCVD ? RFW_CM_MSG_REQ : RFW_CM_MSG_REP;
	m.rej.reason = reason;
	if (len)
		memcpy(m.rej.pdata, pdata, len);
	cm->cnt[RFW_CM_CNT_rejected_tx]++;
	cm_send(cm, NULL, c->peer_gid, &m, now);
	cm_conn_free(cm, c);
	return 0;
}

int rfw_cm_rtu(struct rfw_cm *cm, uint32_t conn, uint64_t now)
{
	struct cm_conn *c = cm_conn_of(cm, conn);
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_RTU};

	if (c == NULL || c->st != CM_REP_RCVD)
		return -EINVAL;
	m.tid = c->tid;
	m.rtu.local_comm_id = c->local_id;
	m.rtu.remote_comm_id = c->remote_id;
	cm_set_st(cm, c, CM_ESTABLISHED);
	c->deadline = UINT64_MAX;
	cm->cnt[RFW_CM_CNT_established]++;
	cm_send(cm, c, c->peer_gid, &m, now); /* kept: a duplicate REP gets it again */
	return 0;
}

static void send_drep(struct rfw_cm *cm, struct cm_conn *c, uint64_t now)
{
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_DREP, .tid = c->tid};

	m.drep.local_comm_id = c->local_id;
	m.drep.remote_comm_id = c->remote_id;
	cm_set_st(cm, c, CM_TIMEWAIT);
	cm_timer(cm, c, now + cm->cfg.timewait_ns);
	cm_send(cm, c, c->peer_gid, &m, now); /* kept: a duplicate DREQ gets it again */
}

int rfw_cm_disconnect(struct rfw_cm *cm, uint32_t conn, uint64_t now)
{
	struct cm_conn *c = cm_conn_of(cm, conn);
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_DREQ};

	if (c == NULL)
		return -EINVAL;
	if (c->st == CM_DREQ_RCVD) {
		send_drep(cm, c, now);
		return 0;
	}
	if (c->st == CM_DREQ_SENT || c->st == CM_TIMEWAIT)
		return 0; /* already under way */
	if (c->st != CM_ESTABLISHED && c->st != CM_REP_SENT)
		return -EINVAL;
	c->tid = (uint64_t)cm->next_tid++;
	m.tid = c->tid;
	m.dreq.local_comm_id = c->local_id;
	m.dreq.remote_comm_id = c->remote_id;
	m.dreq.remote_qpn = c->remote_qpn;
	cm_set_st(cm, c, CM_DREQ_SENT);
	cm_send(cm, c, c->peer_gid, &m, now);
	cm_arm(cm, c, now);
	return 0;
}

void rfw_cm_detach(struct rfw_cm *cm, uint32_t conn, uint64_t now)
{
	struct cm_conn *c = cm_conn_of(cm, conn);

	if (c == NULL)
		return;
	switch (c->st) {
	case CM_REQ_RCVD:
	case CM_REP_RCVD:
		rfw_cm_reject(cm, conn, RFW_CM_REJ_CONSUMER, NULL, 0, now);
		return;
	case CM_REQ_SENT:
		cm_conn_free(cm, c); /* a late REP is answered REJ invalid comm ID */
		return;
	case CM_ESTABLISHED:
		rfw_cm_disconnect(cm, conn, now);
		break;
	case CM_DREQ_RCVD:
		send_drep(cm, c, now);
		break;
	default:
		break;
	}
	c->detached = true;
	c->ctx = NULL;
}

/* A timer ran out: resend, or give up (IBA 12.4: max CM retries). */
static void expire(struct rfw_cm *cm, struct cm_conn *c, uint64_t now)
{
	struct rfw_cm_event ev = {0};

	if (c->st == CM_TIMEWAIT) {
		ev.type = RFW_CM_EV_TIMEWAIT_EXIT;
		cm_event(cm, c, &ev);
		cm_conn_free(cm, c);
		return;
	}
	if (c->retries < cm->cfg.max_cm_retries) {
		c->retries++;
		cm_timer(cm, c, now + cm->timeout_ns);
		cm->cnt[RFW_CM_CNT_mad_resent]++;
		cm_resend(cm, c, now);
		return;
	}
	cm->cnt[RFW_CM_CNT_timeouts]++;
	if (c->st == CM_DREQ_SENT) { /* no DREP: disconnected all the same (IBA 12.9.7.2) */
		cm_set_st(cm, c, CM_TIMEWAIT);
		cm_timer(cm, c, now + cm->cfg.timewait_ns);
		ev.type = RFW_CM_EV_DREP;
		cm_event(cm, c, &ev);
		return;
	}
	ev.type = RFW_CM_EV_TIMEOUT; /* REQ_SENT, REP_SENT */
	cm_event(cm, c, &ev);
	cm_conn_free(cm, c);
}

/*
 * Nothing to do before next_due (a lower bound of every timer: cm_timer); then one walk over
 * the slots expires what is due and finds the next. A host polling every few microseconds pays
 * a compare per poll, and a walk per expiry batch (resends, TimeWait exits), not per poll.
 */
uint64_t rfw_cm_step(struct rfw_cm *cm, uint64_t now)
{
	uint64_t next = UINT64_MAX, held = cm->n_held != 0 ? cm_held_step(cm, now) : UINT64_MAX;

	if (now < cm->next_due)
		return cm->next_due < held ? cm->next_due : held;
	/* Timers set by what expire() calls (the host's event handlers) lower it again. */
	cm->next_due = UINT64_MAX;
	for (uint32_t i = 0; i < cm->cfg.max_conns; i++) {
		struct cm_conn *c = &cm->conns[i];

		if (c->st == CM_IDLE)
			continue;
		if (c->deadline <= now)
			expire(cm, c, now);
		if (c->st != CM_IDLE && c->deadline < next)
			next = c->deadline;
	}
	if (next < cm->next_due)
		cm->next_due = next;
	return cm->next_due < held ? cm->next_due : held;
}

void rfw_cm_counters(const struct rfw_cm *cm, uint64_t out[RFW_CM_CNT__COUNT])
{
	memcpy(out, cm->cnt, sizeof(cm->cnt));
}

unsigned rfw_cm_dreq_pending(const struct rfw_cm *cm)
{
	return cm->dreq_sent;
}

bool rfw_cm_dreq_unanswered(const struct rfw_cm *cm, uint32_t conn)
{
	struct cm_conn *c = cm_conn_of((struct rfw_cm *)cm, conn);

	return c != NULL && c->st == CM_DREQ_SENT;
}

const char *rfw_cm_conn_state(const struct rfw_cm *cm, uint32_t conn)
{
	struct cm_conn *c = cm_conn_of((struct rfw_cm *)cm, conn);

	return rfw_cm_state_name[c ? c->st : CM_IDLE];
}
