/* SPDX-License-Identifier: BSD-3-Clause */
/* The CM's internals (cm.c: the host's calls and timers; cm_rx.c: MADs in). */
#ifndef RFW_CTRL_CM_INT_H
#define RFW_CTRL_CM_INT_H

#include "ctrl/rfw_cm.h"

#define CM_MAX_LISTEN 16
#define CM_MAX_HELD   32 /* REQs waiting for a listener at once; more get REJ 8 at once */
#define CM_IDX_BITS   12 /* a connection handle: generation << 12 | (index + 1) */
#define CM_MAX_CONNS  ((1u << CM_IDX_BITS) - 1)
_Static_assert(CM_MAX_CONNS == RFW_CM_MAX_CONNS, "rfw_cm.h");

/* IBA 12.9.6 / 12.9.7 states, one side's view. */
enum cm_state {
	CM_IDLE,        /* free slot */
	CM_REQ_SENT,    /* active: REQ out, REP awaited (resent on the timer) */
	CM_REQ_RCVD,    /* passive: the host decides */
	CM_REP_SENT,    /* passive: REP out, RTU awaited (resent on the timer) */
	CM_REP_RCVD,    /* active: the host moves its QP, then the RTU */
	CM_ESTABLISHED, /* both */
	CM_DREQ_SENT,   /* DREQ out, DREP awaited (resent on the timer) */
	CM_DREQ_RCVD,   /* the host's disconnect sends the DREP */
	CM_TIMEWAIT,    /* until the QP may be reused (IBA 12.9.7.3) */
	CM__STATES
};
extern const char *const rfw_cm_state_name[CM__STATES];

struct cm_conn {
	enum cm_state st;
	uint32_t gen;
	void *ctx;
	bool detached;
	uint32_t local_id, remote_id; /* communication IDs */
	uint64_t tid;                 /* of the exchange under way */
	uint64_t service_id;
	uint8_t peer_gid[16];
	uint32_t local_qpn, remote_qpn;
	uint64_t deadline; /* UINT64_MAX: no timer */
	uint8_t retries;
	uint8_t last[RFW_MAD_LEN]; /* the last MAD sent: resent on timeout or duplicate */
	bool has_last;
	/* In the peer indexes (cm_index) once remote_id / remote_qpn are known; the next slot
	   (+1, 0: none) of each hash chain. */
	bool indexed;
	uint16_t rid_next, qpn_next;
};

struct cm_listen {
	uint64_t service_id;
	void *ctx;
	bool used;
};

/* A REQ for a service ID nobody listens on, waiting for a listener until its deadline. */
struct cm_held {
	struct rfw_cm_msg m;
	uint8_t gid[16];
	uint64_t deadline;
	bool used;
};

struct rfw_cm {
	struct rfw_cm_ops ops;
	void *host;
	struct rfw_cm_config cfg;
	uint64_t timeout_ns; /* 4.096 us * 2^cfg.cm_timeout */
	uint32_t next_id, next_tid;
	/* No timer is due before this (0: unknown, look): rfw_cm_step is O(1) until then. */
	uint64_t next_due;
	uint32_t dreq_sent;  /* connections in CM_DREQ_SENT (cm_set_st keeps it) */
	uint32_t alloc_next; /* where the search for a free slot starts (round robin) */
	struct cm_listen listen[CM_MAX_LISTEN];
	struct cm_held held[CM_MAX_HELD];
	uint32_t n_held;       /* used entries of held[] */
	bool no_hold;          /* rfw_cm_stop_holding: no listener will come any more */
	struct cm_conn *conns; /* [cfg.max_conns] */
	/* Hash chains (slot + 1, 0: empty) by (remote comm ID, peer GID) and (remote QPN, peer
	   GID): a REQ's duplicate and stale checks (IBA 12.9.8.1, 12.9.8.3.1) without a walk. */
	uint32_t hash_mask;
	uint16_t *rid_head, *qpn_head;
	uint64_t cnt[RFW_CM_CNT__COUNT];
};

static inline uint32_t cm_handle(const struct rfw_cm *cm, const struct cm_conn *c)
{
	return c->gen << CM_IDX_BITS | (uint32_t)(c - cm->conns + 1);
}

struct cm_conn *cm_conn_of(struct rfw_cm *cm, uint32_t handle);
struct cm_conn *cm_conn_alloc(struct rfw_cm *cm);
void cm_conn_free(struct rfw_cm *cm, struct cm_conn *c);

/* Every state change goes through here: it keeps the count rfw_cm_dreq_pending() returns. */
static inline void cm_set_st(struct rfw_cm *cm, struct cm_conn *c, enum cm_state st)
{
	cm->dreq_sent += (uint32_t)(st == CM_DREQ_SENT) - (uint32_t)(c->st == CM_DREQ_SENT);
	c->st = st;
}
/* Enter @c in the peer indexes (its remote_id, remote_qpn and peer_gid are set). */
void cm_index(struct rfw_cm *cm, struct cm_conn *c);
/* The live connection with this peer's communication ID / with this peer QP (not TimeWait). */
struct cm_conn *cm_by_remote(struct rfw_cm *cm, uint32_t remote_id, const uint8_t gid[16]);
struct cm_conn *cm_by_qpn(struct rfw_cm *cm, uint32_t qpn, const uint8_t gid[16]);
/* Encode @m, keep it as the connection's last MAD (if @c), hand it to the host. */
void cm_send(struct rfw_cm *cm, struct cm_conn *c, const uint8_t gid[16], struct rfw_cm_msg *m,
             uint64_t now);
/* Resend the last MAD (a duplicate was received, or the timer). */
void cm_resend(struct rfw_cm *cm, struct cm_conn *c, uint64_t now);
void cm_event(struct rfw_cm *cm, struct cm_conn *c, struct rfw_cm_event *ev);
/* A REJ with no connection (to a REQ or a REP we have no state for). */
void cm_rej_stateless(struct rfw_cm *cm, const uint8_t gid[16], const struct rfw_cm_msg *in,
                      uint16_t reason, uint64_t now);
void cm_arm(struct rfw_cm *cm, struct cm_conn *c, uint64_t now);
/* The held REQs whose listener has come (the REQ event) or whose deadline has passed (REJ
   reason 8); the earliest deadline of those still waiting (UINT64_MAX: none). */
uint64_t cm_held_step(struct rfw_cm *cm, uint64_t now);

/* Set @c's timer to @at (ns). Every timer goes through here: it keeps next_due a lower bound. */
static inline void cm_timer(struct rfw_cm *cm, struct cm_conn *c, uint64_t at)
{
	c->deadline = at;
	if (at < cm->next_due)
		cm->next_due = at;
}

/*
 * The connection whose local communication ID is @local_id: the ID carries the slot in its low
 * CM_IDX_BITS (cm_conn_alloc), so a MAD finds its connection without a search.
 */
static inline struct cm_conn *cm_by_local(struct rfw_cm *cm, uint32_t local_id)
{
	uint32_t i = (local_id & CM_MAX_CONNS) - 1;

	if ((local_id & CM_MAX_CONNS) == 0 || i >= cm->cfg.max_conns)
		return NULL;
	return cm->conns[i].st != CM_IDLE && cm->conns[i].local_id == local_id ? &cm->conns[i]
	                                                                       : NULL;
}

#endif
