/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MADs into the CM (IBA 12.9.6 - 12.9.8): each attribute finds its connection by the
 * communication IDs, acts if the connection's state expects it, answers a duplicate with the
 * MAD it answered before, and answers what has no connection as IBA says (REQ for nobody: REJ
 * invalid service ID, once it has waited listen_grace_ns for a listener; REP for no REQ: REJ
 * invalid communication ID; DREQ for nothing: DREP).
 */
#include <string.h>

#include "ctrl/cm_int.h"

static struct cm_listen *listener(struct rfw_cm *cm, uint64_t service_id)
{
	for (int i = 0; i < CM_MAX_LISTEN; i++)
		if (cm->listen[i].used && cm->listen[i].service_id == service_id)
			return &cm->listen[i];
	return NULL;
}

void cm_rej_stateless(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *in,
                      uint16_t reason, uint64_t now)
{
	struct rfw_cm_msg m = {.attr = RFW_CM_ATTR_REJ, .tid = in->tid};

	/* The REJ names the rejected message's sender by its own communication ID. */
	m.rej.remote_comm_id =
	    in->attr == RFW_CM_ATTR_REQ ? in->req.local_comm_id : in->rep.local_comm_id;
	m.rej.local_comm_id = in->attr == RFW_CM_ATTR_REP ? in->rep.remote_comm_id : 0;
	m.rej.msg_rejected = in->attr == RFW_CM_ATTR_REQ ? RFW_CM_MSG_REQ : RFW_CM_MSG_REP;
	m.rej.reason = reason;
	cm->cnt[RFW_CM_CNT_rejected_tx]++;
	cm_send(cm, NULL, gid, &m, now);
}

static void peer_of_req(const struct rfw_cm_req *r, struct rfw_cm_params *p)
{
	*p = (struct rfw_cm_params){.qpn = r->local_qpn,
	                            .psn = r->start_psn,
	                            .resp_res = r->resp_res,
	                            .init_depth = r->init_depth,
	                            .retry_count = r->retry_count,
	                            .rnr_retry = r->rnr_retry,
	                            .mtu = r->mtu,
	                            .ack_timeout = r->ack_timeout,
	                            .flow_control = r->flow_control,
	                            .srq = r->srq};
}

/*
 * Keep a REQ that found no listener until one comes or its deadline: listen_grace_ns, at most
 * half the requester's CM response timeout (the answer comes before it resends). IBA lets the
 * passive side answer any time within that timeout; Linux's CM answers REJ 8 at once, where a
 * listener replaced by another (perftest -R: its control channel's, then its test QPs' on the
 * same port) is gone for microseconds. Here the gap lasts until the listening process is
 * scheduled again, which can be after the REQ arrives. True when held (or already held: a
 * resent REQ), false when there is no room (REJ 8 at once).
 */
static bool hold(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *m, uint64_t now)
{
	uint64_t wait = (4096ull << m->req.remote_cm_timeout) / 2;
	struct cm_held *f = NULL;

	for (int i = 0; i < CM_MAX_HELD; i++) {
		struct cm_held *h = &cm->held[i];

		if (!h->used) {
			f = f ? f : h;
			continue;
		}
		if (h->m.req.local_comm_id == m->req.local_comm_id && !memcmp(h->gid, gid, 16)) {
			cm->cnt[RFW_CM_CNT_mad_rx_dup]++;
			return true;
		}
	}
	if (f == NULL)
		return false;
	f->m = *m;
	memcpy(f->gid, gid, 16);
	f->deadline = now + (wait < cm->cfg.listen_grace_ns ? wait : cm->cfg.listen_grace_ns);
	f->used = true;
	cm->n_held++;
	cm->cnt[RFW_CM_CNT_req_held]++;
	return true;
}

static void req_in(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *m,
                   uint64_t now, bool may_hold);

uint64_t cm_held_step(struct rfw_cm *cm, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (int i = 0; i < CM_MAX_HELD && cm->n_held != 0; i++) {
		struct cm_held *h = &cm->held[i];
		struct rfw_cm_msg m;
		uint8_t gid[16];

		if (!h->used)
			continue;
		if (listener(cm, h->m.req.service_id) == NULL && now < h->deadline) {
			next = h->deadline < next ? h->deadline : next;
			continue;
		}
		m = h->m;
		memcpy(gid, h->gid, 16);
		h->used = false;
		cm->n_held--;
		req_in(cm, gid, &m, now, false); /* the REQ event, or REJ 8 */
	}
	return next;
}

void rfw_cm_stop_holding(struct rfw_cm *cm, uint64_t now)
{
	cm->no_hold = true;
	for (int i = 0; i < CM_MAX_HELD; i++)
		cm->held[i].deadline = now;
	if (cm->n_held != 0)
		cm_held_step(cm, now);
}

static void rx_req(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *m,
                   uint64_t now)
{
	req_in(cm, gid, m, now, true);
}

static void req_in(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *m,
                   uint64_t now, bool may_hold)
{
	struct rfw_cm_event ev = {.type = RFW_CM_EV_REQ};
	struct rfw_cm_params peer;
	struct cm_listen *l;
	struct cm_conn *c = cm_by_remote(cm, m->req.local_comm_id, gid);

	if (c != NULL) { /* IBA 12.9.8.1: a duplicate REQ; REP_SENT answers with the REP */
		cm->cnt[RFW_CM_CNT_mad_rx_dup]++;
		if (c->st == CM_REP_SENT)
			cm_resend(cm, c, now);
		return;
	}
	if (cm_by_qpn(cm, m->req.local_qpn, gid) != NULL) {
		/* A new REQ from a QP we are still connected to: the old connection is stale
		   (the peer lost it); refused with REJ reason 10, as IBA 12.9.8.3.1 says. */
		cm->cnt[RFW_CM_CNT_req_stale]++;
		cm_rej_stateless(cm, gid, m, RFW_CM_REJ_STALE_CONN, now);
		return;
	}
	l = listener(cm, m->req.service_id);
	if (l == NULL && m->req.transport == 0 && may_hold && !cm->no_hold && hold(cm, gid, m, now))
		return;
	if (l == NULL || m->req.transport != 0) {
		cm->cnt[RFW_CM_CNT_req_no_listener]++;
		cm_rej_stateless(cm, gid, m, RFW_CM_REJ_INVALID_SERVICE_ID, now);
		return;
	}
	c = cm_conn_alloc(cm);
	if (c == NULL) {
		cm->cnt[RFW_CM_CNT_req_no_conn]++;
		cm_rej_stateless(cm, gid, m, RFW_CM_REJ_NO_RESOURCES, now);
		return;
	}
	cm_set_st(cm, c, CM_REQ_RCVD);
	c->remote_id = m->req.local_comm_id;
	c->remote_qpn = m->req.local_qpn;
	c->tid = m->tid;
	c->service_id = m->req.service_id;
	memcpy(c->peer_gid, gid, 16);
	cm_index(cm, c);
	peer_of_req(&m->req, &peer);
	ev.ctx = l->ctx;
	ev.peer = &peer;
	ev.service_id = m->req.service_id;
	ev.peer_gid = c->peer_gid;
	ev.pdata = m->req.pdata;
	ev.pdata_len = RFW_CM_REQ_PDATA;
	cm_event(cm, c, &ev);
}

static void rx_rep(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *m,
                   uint64_t now)
{
	struct cm_conn *c = cm_by_local(cm, m->rep.remote_comm_id);
	struct rfw_cm_event ev = {.type = RFW_CM_EV_REP};
	struct rfw_cm_params peer = {0};

	if (c == NULL) {
		cm->cnt[RFW_CM_CNT_mad_rx_unknown_conn]++;
		cm_rej_stateless(cm, gid, m, RFW_CM_REJ_INVALID_COMM_ID, now);
		return;
	}
	if (c->st == CM_ESTABLISHED && c->remote_id == m->rep.local_comm_id) {
		cm->cnt[RFW_CM_CNT_mad_rx_dup]++; /* our RTU was lost: again (IBA 12.9.8.2) */
		cm_resend(cm, c, now);
		return;
	}
	if (c->st != CM_REQ_SENT) {
		cm->cnt[RFW_CM_CNT_mad_rx_ignored]++;
		return;
	}
	cm_set_st(cm, c, CM_REP_RCVD);
	c->deadline = UINT64_MAX;
	c->remote_id = m->rep.local_comm_id;
	c->remote_qpn = m->rep.local_qpn;
	cm_index(cm, c);
	peer = (struct rfw_cm_params){.qpn = m->rep.local_qpn,
	                              .psn = m->rep.start_psn,
	                              .resp_res = m->rep.resp_res,
	                              .init_depth = m->rep.init_depth,
	                              .rnr_retry = m->rep.rnr_retry,
	                              .flow_control = m->rep.flow_control,
	                              .srq = m->rep.srq};
	ev.peer = &peer;
	ev.pdata = m->rep.pdata;
	ev.pdata_len = RFW_CM_REP_PDATA;
	cm_event(cm, c, &ev);
}

static void rx_rtu(struct rfw_cm *cm, const struct rfw_cm_msg *m)
{
	struct cm_conn *c = cm_by_local(cm, m->rtu.remote_comm_id);
	struct rfw_cm_event ev = {.type = RFW_CM_EV_RTU};

	if (c == NULL || c->st != CM_REP_SENT || c->remote_id != m->rtu.local_comm_id) {
		cm->cnt[c ? RFW_CM_CNT_mad_rx_ignored : RFW_CM_CNT_mad_rx_unknown_conn]++;
		return;
	}
	cm_set_st(cm, c, CM_ESTABLISHED);
	c->deadline = UINT64_MAX;
	cm->cnt[RFW_CM_CNT_established]++;
	cm_event(cm, c, &ev);
}

static void rx_rej(struct rfw_cm *cm, const struct rfw_cm_msg *m)
{
	struct cm_conn *c = cm_by_local(cm, m->rej.remote_comm_id);
	struct rfw_cm_event ev = {.type = RFW_CM_EV_REJ};

	cm->cnt[RFW_CM_CNT_rejected_rx]++;
	if (c == NULL || (c->st != CM_REQ_SENT && c->st != CM_REP_SENT && c->st != CM_REP_RCVD)) {
		cm->cnt[c ? RFW_CM_CNT_mad_rx_ignored : RFW_CM_CNT_mad_rx_unknown_conn]++;
		return;
	}
	ev.reason = m->rej.reason;
	ev.pdata = m->rej.pdata;
	ev.pdata_len = RFW_CM_REJ_PDATA;
	cm_event(cm, c, &ev);
	cm_conn_free(cm, c);
}

/* MRA (IBA 12.6.6): the peer needs longer; wait its service timeout before resending. */
static void rx_mra(struct rfw_cm *cm, const struct rfw_cm_msg *m, uint64_t now)
{
	struct cm_conn *c = cm_by_local(cm, m->mra.remote_comm_id);
	bool ok = c && ((c->st == CM_REQ_SENT && m->mra.msg_mraed == RFW_CM_MSG_REQ) ||
	                (c->st == CM_REP_SENT && m->mra.msg_mraed == RFW_CM_MSG_REP));

	if (!ok) {
		cm->cnt[c ? RFW_CM_CNT_mad_rx_ignored : RFW_CM_CNT_mad_rx_unknown_conn]++;
		return;
	}
	cm_timer(cm, c, now + cm->timeout_ns + (4096ull << m->mra.service_timeout));
}

static void rx_dreq(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *m,
                    uint64_t now)
{
	struct cm_conn *c = cm_by_local(cm, m->dreq.remote_comm_id);
	struct rfw_cm_event ev = {.type = RFW_CM_EV_DREQ};
	struct rfw_cm_msg r = {.attr = RFW_CM_ATTR_DREP, .tid = m->tid};

	if (c == NULL || c->remote_id != m->dreq.local_comm_id) {
		/* IBA 12.9.8.4: a DREQ for no connection still gets its DREP. */
		cm->cnt[RFW_CM_CNT_mad_rx_unknown_conn]++;
		r.drep.local_comm_id = m->dreq.remote_comm_id;
		r.drep.remote_comm_id = m->dreq.local_comm_id;
		cm_send(cm, NULL, gid, &r, now);
		return;
	}
	if (c->st == CM_TIMEWAIT) { /* our DREP was lost */
		cm->cnt[RFW_CM_CNT_mad_rx_dup]++;
		cm_resend(cm, c, now);
		return;
	}
	if (c->st != CM_ESTABLISHED && c->st != CM_REP_SENT && c->st != CM_DREQ_SENT) {
		cm->cnt[RFW_CM_CNT_mad_rx_ignored]++;
		return;
	}
	c->tid = m->tid;
	ev.pdata = m->dreq.pdata;
	ev.pdata_len = RFW_CM_DREQ_PDATA;
	if (c->st == CM_DREQ_SENT) { /* both sides disconnect at once: answer, done */
		struct rfw_cm_msg d = {.attr = RFW_CM_ATTR_DREP, .tid = m->tid};

		d.drep.local_comm_id = c->local_id;
		d.drep.remote_comm_id = c->remote_id;
		cm_send(cm, NULL, gid, &d, now);
		return;
	}
	cm_set_st(cm, c, CM_DREQ_RCVD);
	c->deadline = UINT64_MAX;
	cm_event(cm, c, &ev);
}

static void rx_drep(struct rfw_cm *cm, const struct rfw_cm_msg *m, uint64_t now)
{
	struct cm_conn *c = cm_by_local(cm, m->drep.remote_comm_id);
	struct rfw_cm_event ev = {.type = RFW_CM_EV_DREP};

	if (c == NULL || c->st != CM_DREQ_SENT) {
		cm->cnt[c ? RFW_CM_CNT_mad_rx_ignored : RFW_CM_CNT_mad_rx_unknown_conn]++;
		return;
	}
	cm_set_st(cm, c, CM_TIMEWAIT);
	cm_timer(cm, c, now + cm->cfg.timewait_ns);
	ev.pdata = m->drep.pdata;
	ev.pdata_len = RFW_CM_DREP_PDATA;
	cm_event(cm, c, &ev);
}

void rfw_cm_rx(struct rfw_cm *cm, const uint8_t gid[16], const uint8_t *mad, size_t len,
               uint64_t now)
{
	struct rfw_cm_msg m;

	if (rfw_cm_mad_decode(mad, len, &m) != 0) {
		cm->cnt[RFW_CM_CNT_mad_rx_bad]++;
		return;
	}
	cm->cnt[RFW_CM_CNT_mad_rx]++;
	switch (m.attr) {
	case RFW_CM_ATTR_REQ:
		rx_req(cm, gid, &m, now);
		break;
	case RFW_CM_ATTR_REP:
		rx_rep(cm, gid, &m, now);
		break;
	case RFW_CM_ATTR_RTU:
		rx_rtu(cm, &m);
		break;
	case RFW_CM_ATTR_REJ:
		rx_rej(cm, &m);
		break;
	case RFW_CM_ATTR_MRA:
		rx_mra(cm, &m, now);
		break;
	case RFW_CM_ATTR_DREQ:
		rx_dreq(cm, gid, &m, now);
		break;
	case RFW_CM_ATTR_DREP:
		rx_drep(cm, &m, now);
		break;
	default:
		cm->cnt[RFW_CM_CNT_mad_rx_bad]++;
		break;
	}
}
