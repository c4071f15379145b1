/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocefw-verbs internals: the libibverbs objects of a rocefw device and the functions that
 * implement the verbs on them. Each object embeds the public libibverbs struct first, so the
 * pointer the application holds is the pointer to ours; an object is a rocefw one when its
 * context's device is the rocefw device (rfw_vrb_ours). docs/verbs.md describes the whole.
 */
#ifndef RFW_VERBS_VRB_H
#define RFW_VERBS_VRB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "transport/rfw_verbs.h"
#include "verbs/conf.h"
#include "verbs/engine.h"

/* The macros verbs.h puts over some exported names; this library defines the functions. */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* The one device of a process (struct ibv_device first: what ibv_get_device_list hands out). */
struct rfw_vrb_device {
	struct ibv_device ibv;
	struct rfw_vconf conf;
	bool conf_ok;
};
extern struct rfw_vrb_device rfw_vrb_dev;
/* The configuration read (once) and the device there: false if there is no rocefw device. */
bool rfw_vrb_device_ready(void);

struct rfw_vrb_cq;

/* The name of a rocefw context's cmd_fd (a memfd): /proc/self/fd shows "/memfd:<name>". */
#define RFW_VRB_CMD_FD_NAME "rocefw-verbs-cmd"

#define RFW_VRB_ASYNC_MAX 64 /* queued async events per context (more are dropped) */

struct rfw_vrb_ctx {
	struct verbs_context vctx; /* vctx.context is what the application holds */
	struct rfw_eng *eng;
	bool inline_progress;
	/* Async events (async.c): queued here, one eventfd count each on context.async_fd. */
	struct rfw_vrb_ctx *next; /* on the list of open contexts */
	pthread_mutex_t ev_lock;
	struct ibv_async_event ev[RFW_VRB_ASYNC_MAX];
	uint32_t ev_head, ev_n;
};

struct rfw_vrb_pd {
	struct ibv_pd ibv;
	struct rfw_pd *pd;
};

struct rfw_vrb_mr {
	struct ibv_mr ibv;
	struct rfw_mr *mr;
};

struct rfw_vrb_mw {
	struct ibv_mw ibv;
	struct rfw_mr *mw; /* the transport's window (an entry of the key table) */
};

#define RFW_VRB_CHAN_MAX 4096 /* pending events per completion channel */

struct rfw_vrb_channel {
	struct ibv_comp_channel ibv; /* ibv.fd: an eventfd in semaphore mode, one count per event */
	pthread_mutex_t lock;
	struct rfw_vrb_cq *pending[RFW_VRB_CHAN_MAX];
	uint32_t head, n;
};

/*
 * A CQ: the transport's CQ, drained by the NIC side (under the engine lock) into a ring that
 * ibv_poll_cq reads without the engine lock (single producer: whoever holds the engine lock;
 * consumers serialised by cons_lock). The ring is what the application sees.
 */
struct rfw_vrb_cq {
	union {
		struct ibv_cq ibv;     /* the application's handle: a prefix of ... */
		struct ibv_cq_ex ibvx; /* ... the extended CQ (ibv_create_cq_ex) */
	};
	struct rfw_cq *cq;
	struct rfw_vrb_ctx *ctx;
	struct rfw_vrb_cq *next; /* on the list of CQs (under the engine lock) */
	bool armed;              /* req_notify_cq called, no event sent since (engine lock) */
	struct rfw_wc *ring;
	uint32_t mask;       /* ring size - 1 (a power of two) */
	uint32_t prod, cons; /* free running; prod written under the engine lock, cons under
	                        cons_lock; both read with acquire */
	pthread_mutex_t cons_lock;
	bool polling; /* ibv_start_poll .. ibv_end_poll: cons_lock held, ring[cons] current */
};

struct rfw_vrb_ah {
	struct ibv_ah ibv;
	struct rfw_ah *ah;
	struct rfw_vrb_ctx *ctx;
	uint8_t dgid[16];
	bool resolved; /* the MAC is in ah (atomic: read by posting threads) */
};

struct rfw_vrb_srq {
	struct ibv_srq ibv;
	struct rfw_srq *srq;
	struct rfw_vrb_ctx *ctx;
};

struct rfw_vrb_wr_batch;

struct rfw_vrb_qp {
	struct ibv_qp_ex ibvx; /* ibvx.qp_base is the struct ibv_qp the application holds */
	struct rfw_qp *qp;
	struct rfw_vrb_ctx *ctx;
	bool attached; /* has a NIC path (ah_attr given) */
	int sq_sig_all;
	struct rfw_vrb_wr_batch *batch; /* created with send_ops_flags: the ibv_wr_* API */
};

static inline struct rfw_vrb_ctx *rfw_vrb_ctx_of(struct ibv_context *c)
{
	return (struct rfw_vrb_ctx *)(void *)((uint8_t *)c - offsetof(struct rfw_vrb_ctx, vctx) -
	                                      offsetof(struct verbs_context, context));
}

static inline bool rfw_vrb_ours(const struct ibv_context *c)
{
	return c != NULL && c->device == &rfw_vrb_dev.ibv;
}

/* errno-style failure of a verb rocefw does not implement: a one-line message, once per verb. */
int rfw_vrb_unsupported(const char *verb, const char *why);

/* ---- device (device.c) ---- */
struct ibv_context *rfw_vrb_open(void);
int rfw_vrb_close(struct ibv_context *c);
int rfw_vrb_query_device(struct ibv_context *c, struct ibv_device_attr *a);
int rfw_vrb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
int rfw_vrb_query_gid(struct ibv_context *c, uint32_t port, int index, union ibv_gid *gid);
int rfw_vrb_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index,
                         struct ibv_gid_entry *e, size_t entry_size);
int rfw_vrb_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey);
void rfw_vrb_ctx_ops(struct rfw_vrb_ctx *x); /* fill the ops tables (ops.c) */
__be64 rfw_vrb_node_guid(void);              /* from the configured address */
/* The largest path MTU whose RoCEv2 packets fit an IP MTU (the port's active_mtu). */
enum ibv_mtu rfw_vrb_mtu_of(uint32_t ip_mtu);

/* ---- PD, MR (mem.c) ---- */
struct ibv_pd *rfw_vrb_alloc_pd(struct ibv_context *c);
int rfw_vrb_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *rfw_vrb_reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
                              unsigned access);
int rfw_vrb_dereg_mr(struct ibv_mr *mr);
/* Memory windows (mw.c). */
struct ibv_mw *rfw_vrb_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type t);
int rfw_vrb_dealloc_mw(struct ibv_mw *mw);
int rfw_vrb_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b);
/* A bind WR's fields (IBV_WR_BIND_MW, ibv_wr_bind_mw) into @r. */
void rfw_vrb_bind_fields(struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bi,
                         struct rfw_send_wr *r);

/* ---- CQ and completion channels (cq.c) ---- */
struct ibv_comp_channel *rfw_vrb_create_channel(struct ibv_context *c);
int rfw_vrb_destroy_channel(struct ibv_comp_channel *ch);
struct ibv_cq *rfw_vrb_create_cq(struct ibv_context *c, int cqe, void *cq_context,
                                 struct ibv_comp_channel *ch, int vector);
int rfw_vrb_destroy_cq(struct ibv_cq *cq);
int rfw_vrb_resize_cq(struct ibv_cq *cq, int cqe);
int rfw_vrb_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context);
void rfw_vrb_ack_cq_events(struct ibv_cq *cq, unsigned n);
int rfw_vrb_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int rfw_vrb_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* Before reading a CQ's ring: inline mode runs the NIC; thread mode runs it if the ring is
 * empty and the progress thread is not polling. */
void rfw_vrb_cq_drive(struct rfw_vrb_cq *q);
/* Completion -> ibv_wc. */
void rfw_vrb_wc_of(const struct rfw_wc *r, struct ibv_wc *w);
/* ibv_create_cq_ex (cq_ex.c). */
struct ibv_cq_ex *rfw_vrb_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *a);
/* Under the engine lock: move completions from the transport's CQs into the rings, and send
 * the events of armed CQs whose ring is not empty. */
void rfw_vrb_cq_collect(void);

/* ---- QP (qp.c, post.c) ---- */
struct ibv_qp *rfw_vrb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a);
int rfw_vrb_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
/* The same with the engine lock held (the rdma_cm on the NIC's thread). */
int rfw_vrb_modify_qp_locked(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
int rfw_vrb_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
                     struct ibv_qp_init_attr *init);
int rfw_vrb_destroy_qp(struct ibv_qp *qp);
int rfw_vrb_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int rfw_vrb_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* After posting (engine lock held): tell the NIC and run it once. */
void rfw_vrb_doorbell(struct rfw_vrb_qp *q);

/* ---- address handles (ah.c) ---- */
struct ibv_ah *rfw_vrb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a);
int rfw_vrb_destroy_ah(struct ibv_ah *ah);
/* Before a datagram to @h is posted: its MAC known (waits for ARP the first time; engine lock
 * not held). 0 or an errno. */
int rfw_vrb_ah_resolve(struct rfw_vrb_ah *h);
/* The AH back to a UD receive's sender, from the GRH in front of its data. 0 or an errno. */
int rfw_vrb_init_ah_from_wc(struct ibv_context *c, uint8_t port, const struct ibv_wc *wc,
                            const struct ibv_grh *grh, struct ibv_ah_attr *a);

/* ---- SRQ (srq.c) ---- */
struct ibv_srq *rfw_vrb_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a);
struct ibv_srq *rfw_vrb_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *a);
int rfw_vrb_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask);
int rfw_vrb_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a);
int rfw_vrb_destroy_srq(struct ibv_srq *srq);
int rfw_vrb_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* ---- the ibv_wr_* post API (qp_ex.c) ---- */
/* Give @q the ibv_qp_ex functions for the operations in @send_ops_flags. 0 or an errno
 * (EOPNOTSUPP: an operation rocefw lacks; ENOMEM). */
int rfw_vrb_qp_ex_init(struct rfw_vrb_qp *q, uint64_t send_ops_flags);
void rfw_vrb_qp_ex_free(struct rfw_vrb_qp *q);

/* ---- async events (async.c) ---- */
void rfw_vrb_async_add(struct rfw_vrb_ctx *x);
void rfw_vrb_async_remove(struct rfw_vrb_ctx *x);
/* From the NIC's progress (engine lock held): port state changes become events. */
void rfw_vrb_async_check(struct rfw_eng *e);
int rfw_vrb_get_async_event(struct ibv_context *c, struct ibv_async_event *ev);
/* IBV_EVENT_SRQ_LIMIT_REACHED for @srq to its context (NIC thread, engine lock held). */
void rfw_vrb_async_post_srq(struct rfw_vrb_ctx *x, struct ibv_srq *srq);
/* An affiliated event of @qp (NIC thread or a verb, engine lock held). */
void rfw_vrb_async_post_qp(struct rfw_vrb_ctx *x, struct ibv_qp *qp, enum ibv_event_type type);

/* ---- progress (progress.c): one per process, like the engine ---- */
/* Start the progress thread on @e (once; later calls do nothing). 0 or -errno. */
int rfw_vrb_progress_start(struct rfw_eng *e);
/* Posting rang the doorbell: wake the progress thread if it sleeps (cheap when it does not). */
void rfw_vrb_progress_doorbell(void);
/* One NIC poll and the CQ collection; the caller holds the engine lock. */
unsigned rfw_vrb_progress_step(struct rfw_eng *e);

#endif
