/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IBA Communication Manager (vol. 1 ch. 12) for RC connections, DPDK-free: the connection
 * state machine of IBA 12.9 on the MADs of ctrl/cm_mad.h. Time is an argument (ns); nothing
 * here reads a clock, allocates after rfw_cm_create, or does I/O: the host hands MADs in
 * (rfw_cm_rx), sends the MADs the CM gives it (ops.send, a UD SEND to QP1 of the peer with
 * Q_Key 0x80010000), and calls rfw_cm_step by the deadline it returns.
 *
 * How a host uses it (verbs/cma_cm.c is one):
 *   - active: rfw_cm_connect (REQ) -> event REP (move the QP to RTR, RTS) -> rfw_cm_rtu;
 *   - passive: rfw_cm_listen(service ID) -> event REQ with a new connection -> rfw_cm_accept
 *     (the QP already RTR, RTS; REP) -> event RTU; or rfw_cm_reject; a REQ that comes before
 *     the listener waits for it up to listen_grace_ns (its event then comes from rfw_cm_step);
 *   - either: rfw_cm_disconnect (DREQ, or the DREP to a DREQ received) -> event DREP, or event
 *     DREQ from the peer; event TIMEOUT when retries run out; event TIMEWAIT_EXIT at the end;
 *   - rfw_cm_detach when the host's object goes: the connection finishes without events.
 * Connections are small integers (1..max), stable until TimeWait ends.
 */
#ifndef RFW_CTRL_RFW_CM_H
#define RFW_CTRL_RFW_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/cm_mad.h"

/* X(name, meaning) */
#define RFW_CM_COUNTERS(X)                                                                         \
	X(mad_rx, "CM MADs received")                                                              \
	X(mad_rx_bad, "MADs dropped: not a CM MAD this CM decodes (short, wrong class/version)")   \
	X(mad_rx_unknown_conn, "MADs for no connection of ours (answered as IBA 12.9 says)")       \
	X(mad_rx_dup, "duplicates answered again (REQ -> REP, REP -> RTU, DREQ -> DREP)")          \
	X(mad_rx_ignored, "MADs not expected in the connection's state, dropped")                  \
	X(mad_tx, "CM MADs handed to the host to send")                                            \
	X(mad_resent, "MADs resent after a CM response timeout")                                   \
	X(req_no_listener, "REQs for a service ID nobody listens on (REJ reason 8)")               \
	X(req_held, "REQs that found no listener and waited for one (listen grace)")               \
	X(req_no_conn, "REQs refused for want of a free connection (REJ reason 3)")                \
	X(req_stale, "REQs from a QP still connected to us (REJ reason 10, stale connection)")     \
	X(timeouts, "exchanges given up after max CM retries")                                     \
	X(established, "connections established")                                                  \
	X(rejected_rx, "REJs received")                                                            \
	X(rejected_tx, "REJs sent")

enum rfw_cm_cnt {
#define X(n, m) RFW_CM_CNT_##n,
	RFW_CM_COUNTERS(X)
#undef X
	    RFW_CM_CNT__COUNT
};
extern const char *const rfw_cm_cnt_name[RFW_CM_CNT__COUNT];

/* What one side offers for the connection (REQ or REP fields). */
struct rfw_cm_params {
	uint32_t qpn, psn;   /* 24 bits each */
	uint8_t resp_res;    /* responder resources */
	uint8_t init_depth;  /* initiator depth */
	uint8_t retry_count; /* 0..7 */
	uint8_t rnr_retry;   /* 0..7 */
	uint8_t mtu;         /* IBA encoding: 1 = 256 .. 5 = 4096 */
	uint8_t ack_timeout; /* the REQ's Local ACK Timeout, 0..31 */
	bool flow_control;
	bool srq;
};

enum rfw_cm_ev_type {
	RFW_CM_EV_REQ,     /* a listener got a REQ: a new connection (accept or reject it) */
	RFW_CM_EV_REP,     /* the REP to our REQ: move the QP, then rfw_cm_rtu */
	RFW_CM_EV_RTU,     /* the RTU to our REP: established */
	RFW_CM_EV_REJ,     /* rejected (reason, private data) */
	RFW_CM_EV_DREQ,    /* the peer disconnects: rfw_cm_disconnect sends the DREP */
	RFW_CM_EV_DREP,    /* our DREQ answered (or given up on): disconnected */
	RFW_CM_EV_TIMEOUT, /* REQ or REP unanswered after max CM retries */
	RFW_CM_EV_TIMEWAIT_EXIT,
};

struct rfw_cm_event {
	enum rfw_cm_ev_type type;
	uint32_t conn;
	void *ctx;                        /* the connection's (REQ: the listener's) */
	const struct rfw_cm_params *peer; /* REQ, REP */
	uint64_t service_id;              /* REQ */
	const uint8_t *peer_gid;          /* REQ: the requester's GID */
	const uint8_t *pdata;             /* REQ, REP, REJ, DREQ, DREP */
	uint8_t pdata_len;
	uint16_t reason; /* REJ */
};

struct rfw_cm_ops {
	/* Send a 256-byte MAD to QP1 at @gid; 0 or -errno (the CM resends on its timer). */
	int (*send)(void *host, const uint8_t gid[16], const uint8_t *mad, uint64_t now_ns);
	void (*event)(void *host, const struct rfw_cm_event *ev);
};

struct rfw_cm_config {
	uint8_t gid[16];        /* this port's GID (IPv4-mapped) */
	uint64_t ca_guid;       /* Local CA GUID in REQ / REP */
	uint32_t max_conns;     /* default 256, 1..RFW_CM_MAX_CONNS */
	uint8_t cm_timeout;     /* our CM response timeout, 4.096 us * 2^n; default 16 (268 ms) */
	uint8_t max_cm_retries; /* default 15, 0..15 */
	uint64_t timewait_ns;   /* TimeWait; default 100 ms */
	/* A REQ for a service ID nobody listens on waits this long (at most half the requester's
	   CM response timeout) for an rfw_cm_listen before its REJ reason 8; default 100 ms.
	   A listener replaced by another on the same service ID (perftest -R) leaves a gap
	   that a requester's REQ may fall in whenever the listening process is descheduled. */
	uint64_t listen_grace_ns;
	uint32_t seed; /* comm IDs and TIDs start from it */
};

struct rfw_cm;

/* Connections one CM can hold at once (a handle keeps 12 bits for the slot). */
#define RFW_CM_MAX_CONNS 4095

struct rfw_cm *rfw_cm_create(const struct rfw_cm_ops *ops, void *host,
                             const struct rfw_cm_config *cfg);
void rfw_cm_destroy(struct rfw_cm *cm);
/* Up to 16 listeners; -EADDRINUSE, -ENOSPC. */
int rfw_cm_listen(struct rfw_cm *cm, uint64_t service_id, void *ctx);
int rfw_cm_unlisten(struct rfw_cm *cm, uint64_t service_id);
/* A REQ to @peer_gid; the connection (> 0) or -errno. @pdata: up to 92 bytes. */
int rfw_cm_connect(struct rfw_cm *cm, void *ctx, const uint8_t peer_gid[16], uint64_t service_id,
                   const struct rfw_cm_params *p, const void *pdata, uint8_t len, uint64_t now);
/* The REP to a REQ event (@ctx becomes the connection's); up to 196 bytes of data. */
int rfw_cm_accept(struct rfw_cm *cm, uint32_t conn, void *ctx, const struct rfw_cm_params *p,
                  const void *pdata, uint8_t len, uint64_t now);
/* REJ (REQ received, or REP received and refused); up to 148 bytes of data. */
int rfw_cm_reject(struct rfw_cm *cm, uint32_t conn, uint16_t reason, const void *pdata, uint8_t len,
                  uint64_t now);
/* The RTU after a REP event: established. */
int rfw_cm_rtu(struct rfw_cm *cm, uint32_t conn, uint64_t now);
/* DREQ (established) or DREP (a DREQ received). */
int rfw_cm_disconnect(struct rfw_cm *cm, uint32_t conn, uint64_t now);
/* No more events for @conn: what it still owes the peer goes on (TimeWait, DREQ/DREP). */
void rfw_cm_detach(struct rfw_cm *cm, uint32_t conn, uint64_t now);
/* A MAD from QP1 of @src_gid. */
void rfw_cm_rx(struct rfw_cm *cm, const uint8_t src_gid[16], const uint8_t *mad, size_t len,
               uint64_t now);
/* Timers, and REQs waiting for a listener; returns the next deadline (UINT64_MAX: none). */
uint64_t rfw_cm_step(struct rfw_cm *cm, uint64_t now);
void rfw_cm_counters(const struct rfw_cm *cm, uint64_t out[RFW_CM_CNT__COUNT]);
/* No listener will come any more (the host is going away): every REQ held for one gets its
   REJ 8 now, instead of its requester timing out, and later REQs get theirs at once. */
void rfw_cm_stop_holding(struct rfw_cm *cm, uint64_t now);
/* Connections whose DREQ has had no DREP yet (resent on timeouts): what the CM still owes its
   peers. A count the CM keeps as connections change state: O(1). */
unsigned rfw_cm_dreq_pending(const struct rfw_cm *cm);
/* Whether @conn's DREQ has had no DREP yet. */
bool rfw_cm_dreq_unanswered(const struct rfw_cm *cm, uint32_t conn);
/* The state of @conn by name ("idle" if none), for tests and logs. */
const char *rfw_cm_conn_state(const struct rfw_cm *cm, uint32_t conn);

#endif
