/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A minimal loopback host for transport tests: two devices, one RC QP each, packets carried
 * through one FIFO with a fixed delay and a virtual clock. A filter sees every packet (IB part
 * only, no Ethernet/IP/ICRC) and may drop, duplicate or rewrite it, so a test can lose exactly
 * the packet it wants. Header-only: each test file includes it.
 */
#ifndef RFW_TESTS_LOOP_H
#define RFW_TESTS_LOOP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/estats.h"
#include "transport/rfw_verbs.h"

#define LB_SLOT  4608
#define LB_RING  8192
#define LB_DELAY 1000 /* ns one way */

enum lb_verdict { LB_PASS, LB_DROP, LB_DUP };

struct loop;
typedef enum lb_verdict (*lb_filter)(struct loop *lb, int from, uint8_t *ib, uint32_t len,
                                     void *arg);

struct lb_pkt {
	uint8_t data[LB_SLOT];
	uint32_t len;
	int to;
	uint64_t t;
};

struct lb_ep {
	struct loop *lb;
	int id;
	struct rfw_dev *dev;
	struct rfw_pd *pd;
	struct rfw_cq *scq, *rcq;
	struct rfw_qp *qp;
};

struct loop {
	struct lb_ep ep[2];
	struct lb_pkt *ring;
	uint32_t prod, cons;
	uint64_t now;
	lb_filter filter;
	void *farg;
	uint64_t delivered, dropped;
	uint64_t pkts_from[2];
	struct rfw_mr *mrs[64];
	int nmr;
	uint8_t ip[2][16]; /* endpoint addresses: 10.0.0.1 and 10.0.0.2, IPv4-mapped */
};

/* The path of endpoint @id's QP: to the other endpoint, from its own address. */
static inline void lb_ah(const struct loop *lb, int id, struct rfw_ah_attr *ah)
{
	memcpy(ah->dgid, lb->ip[!id], 16);
	memcpy(ah->sgid, lb->ip[id], 16);
}

/* The addresses of a packet from endpoint @from, as a host puts them in rfw_rx_info. */
static inline void lb_rx_addr(const struct loop *lb, int from, struct rfw_rx_info *rx)
{
	memcpy(rx->src_ip, lb->ip[from], 16);
	memcpy(rx->dst_ip, lb->ip[!from], 16);
}

static uint8_t *lb_tx_alloc(void *ctx, struct rfw_qp *qp, uint32_t len)
{
	struct lb_ep *e = ctx;
	struct loop *lb = e->lb;

	(void)qp;
	if (len > LB_SLOT || lb->prod - lb->cons >= LB_RING - 1)
		return NULL;
	return lb->ring[lb->prod % LB_RING].data;
}

static void lb_tx_send(void *ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                       const struct rfw_tx_meta *m)
{
	struct lb_ep *e = ctx;
	struct loop *lb = e->lb;
	struct lb_pkt *p = &lb->ring[lb->prod % LB_RING];

	(void)qp;
	(void)buf;
	(void)m;
	p->len = len;
	p->to = !e->id;
	p->t = lb->now + LB_DELAY;
	lb->pkts_from[e->id]++;
	lb->prod++;
}

static const struct rfw_io_ops lb_ops = {.tx_alloc = lb_tx_alloc, .tx_send = lb_tx_send};

struct lb_cfg {
	enum rfw_mtu mtu;
	uint32_t psn[2];
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic;
	uint32_t ack_every;
	uint32_t max_unacked;
	uint32_t max_send_wr, max_recv_wr;
	unsigned access;
	enum rfw_transport_mode mode[2]; /* per endpoint; zero = GBN */
	uint64_t sr_rto_low_ns, sr_rto_high_ns;
	bool estats;                    /* Estats on both devices */
	uint64_t estats_interval_ns;    /* 0: the default (60 s) */
	uint64_t estats_threshold_ns;   /* the trigger's; 0: off */
	rfw_es_sink_fn es_sink;         /* and their records handed to this (rfw_dev_estats_sink) */
	void *es_sink_ctx[2];           /* per endpoint */
	struct rfw_es_ring *es_ring[2]; /* or pushed, packed, into these (rfw_dev_estats_ring) */
	uint32_t cq_entries;            /* each CQ's; 0: 4096 */
};

static inline struct lb_cfg lb_default_cfg(void)
{
	return (struct lb_cfg){.mtu = RFW_MTU_1024,
	                       .psn = {100, 5000},
	                       .timeout = 10, /* ~4.2 ms */
	                       .retry_cnt = 7,
	                       .rnr_retry = 7,
	                       .min_rnr_timer = 1,
	                       .max_rd_atomic = 4,
	                       .ack_every = 64,
	                       .max_send_wr = 256,
	                       .max_recv_wr = 256,
	                       .access = RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ |
	                                 RFW_ACCESS_REMOTE_ATOMIC};
}

/* @qp (RESET) through INIT to RTR toward @dqpn (path @ah; NULL: all zero): a responder. */
static inline int lb_connect_rtr(struct rfw_qp *qp, uint32_t dqpn, const struct lb_cfg *c,
                                 uint32_t rq_psn, enum rfw_transport_mode m,
                                 const struct rfw_ah_attr *ah)
{
	struct rfw_qp_attr a = {0};
	int rc;

	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags = c->access;
	a.transport_mode = m;
	rc = rfw_modify_qp(qp, &a,
	                   RFW_QP_STATE | RFW_QP_ACCESS_FLAGS |
	                       (m != RFW_TRANSPORT_GBN ? RFW_QP_TRANSPORT_MODE : 0));
	if (rc)
		return rc;
	a.qp_state = RFW_QPS_RTR;
	if (ah)
		a.ah_attr = *ah;
	a.path_mtu = c->mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = c->max_rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	return rfw_modify_qp(qp, &a,
	                     RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                         RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER);
}

/* Connect @qp (RESET) to @dqpn through INIT, RTR (path @ah; NULL: all zero) and RTS. */
static inline int lb_connect_av(struct rfw_qp *qp, uint32_t dqpn, const struct lb_cfg *c,
                                uint32_t sq_psn, uint32_t rq_psn, enum rfw_transport_mode m,
                                const struct rfw_ah_attr *ah)
{
	struct rfw_qp_attr a = {0};
	int rc = lb_connect_rtr(qp, dqpn, c, rq_psn, m, ah);

	if (rc)
		return rc;
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->max_rd_atomic;
	return rfw_modify_qp(qp, &a,
	                     RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                         RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
}

static inline int lb_connect_mode(struct rfw_qp *qp, uint32_t dqpn, const struct lb_cfg *c,
                                  uint32_t sq_psn, uint32_t rq_psn, enum rfw_transport_mode m)
{
	return lb_connect_av(qp, dqpn, c, sq_psn, rq_psn, m, NULL);
}

static inline int lb_connect(struct rfw_qp *qp, uint32_t dqpn, const struct lb_cfg *c,
                             uint32_t sq_psn, uint32_t rq_psn)
{
	return lb_connect_mode(qp, dqpn, c, sq_psn, rq_psn, RFW_TRANSPORT_GBN);
}

static inline struct loop *lb_create(const struct lb_cfg *c)
{
	struct loop *lb = calloc(1, sizeof(*lb));

	if (lb == NULL)
		return NULL;
	lb->ring = calloc(LB_RING, sizeof(*lb->ring));
	for (int i = 0; i < 2; i++) {
		static const uint8_t v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

		memcpy(lb->ip[i], v4m, 12);
		lb->ip[i][12] = 10;
		lb->ip[i][15] = (uint8_t)(1 + i);
	}
	for (int i = 0; i < 2; i++) {
		struct lb_ep *e = &lb->ep[i];
		struct rfw_dev_attr da = {.ack_every = c->ack_every,
		                          .max_unacked_psns = c->max_unacked,
		                          .np_min_time_between_cnps_ns = 4000,
		                          .qpn_base = 17 + 100 * (uint32_t)i,
		                          .sr_rto_low_ns = c->sr_rto_low_ns,
		                          .sr_rto_high_ns = c->sr_rto_high_ns,
		                          .estats = c->estats,
		                          .estats_interval_ns = c->estats_interval_ns,
		                          .estats_threshold_ns = c->estats_threshold_ns};
		struct rfw_qp_init_attr qa = {0};

		e->lb = lb;
		e->id = i;
		e->dev = rfw_dev_create(&da, &lb_ops, e);
		if (c->es_sink != NULL)
			rfw_dev_estats_sink(e->dev, c->es_sink, c->es_sink_ctx[i]);
		if (c->es_ring[i] != NULL)
			rfw_dev_estats_ring(e->dev, c->es_ring[i]);
		e->pd = rfw_alloc_pd(e->dev);
		e->scq = rfw_create_cq(e->dev, c->cq_entries ? c->cq_entries : 4096);
		e->rcq = rfw_create_cq(e->dev, c->cq_entries ? c->cq_entries : 4096);
		qa.send_cq = e->scq;
		qa.recv_cq = e->rcq;
		qa.cap.max_send_wr = c->max_send_wr;
		qa.cap.max_recv_wr = c->max_recv_wr;
		qa.cap.max_send_sge = 4;
		qa.cap.max_recv_sge = 4;
		qa.cap.max_inline_data = 256;
		e->qp = rfw_create_qp(e->pd, &qa);
		if (e->qp == NULL)
			return NULL;
	}
	for (int i = 0; i < 2; i++) {
		struct rfw_ah_attr ah = {0};

		lb_ah(lb, i, &ah);
		if (lb_connect_av(lb->ep[i].qp, rfw_qp_num(lb->ep[!i].qp), c, c->psn[i], c->psn[!i],
		                  c->mode[i], &ah))
			return NULL;
	}
	return lb;
}

static inline void lb_destroy(struct loop *lb)
{
	for (int i = 0; i < lb->nmr; i++)
		rfw_dereg_mr(lb->mrs[i]);
	for (int i = 0; i < 2; i++) {
		rfw_destroy_qp(lb->ep[i].qp);
		rfw_destroy_cq(lb->ep[i].scq);
		rfw_destroy_cq(lb->ep[i].rcq);
		rfw_dealloc_pd(lb->ep[i].pd);
		rfw_dev_destroy(lb->ep[i].dev);
	}
	free(lb->ring);
	free(lb);
}

static inline void lb_deliver(struct loop *lb, struct lb_pkt *p)
{
	struct rfw_ib_pkt pkt;
	struct rfw_rx_info rx = {0};
	enum lb_verdict v = LB_PASS;

	if (lb->filter)
		v = lb->filter(lb, !p->to, p->data, p->len, lb->farg);
	if (v == LB_DROP) {
		lb->dropped++;
		return;
	}
	for (int k = 0; k < (v == LB_DUP ? 2 : 1); k++) {
		if (rfw_ib_parse(p->data, p->len, &pkt) != RFW_IB_ERR_OK)
			return;
		rx.pkt = &pkt;
		lb_rx_addr(lb, !p->to, &rx);
		rfw_dev_rx(lb->ep[p->to].dev, &rx, lb->now);
		lb->delivered++;
	}
}

/* Deliver every packet in flight now, whatever its time (manual stepping). */
static inline void lb_deliver_all(struct loop *lb)
{
	static struct lb_pkt tmp; /* copied out: delivery may make the peer transmit */

	while (lb->cons != lb->prod) {
		tmp = lb->ring[lb->cons % LB_RING];
		lb->cons++;
		lb_deliver(lb, &tmp);
	}
}

/* Run until nothing is left to do or @limit_ns of virtual time has passed. */
static inline void lb_run(struct loop *lb, uint64_t limit_ns)
{
	uint64_t end = lb->now + limit_ns;

	for (;;) {
		bool busy = false;
		uint64_t next = UINT64_MAX;

		for (int i = 0; i < 2; i++)
			if (rfw_qp_tx_burst(lb->ep[i].qp, 16, lb->now))
				busy = true;
		while (lb->cons != lb->prod && lb->ring[lb->cons % LB_RING].t <= lb->now) {
			/* Copy out: delivery may make the peer transmit into the ring. */
			static struct lb_pkt tmp;

			tmp = lb->ring[lb->cons % LB_RING];
			lb->cons++;
			lb_deliver(lb, &tmp);
			busy = true;
		}
		if (busy)
			continue;
		if (lb->cons != lb->prod)
			next = lb->ring[lb->cons % LB_RING].t;
		for (int i = 0; i < 2; i++) {
			uint64_t d = rfw_qp_next_deadline(lb->ep[i].qp);

			if (d < next)
				next = d;
		}
		if (next == UINT64_MAX || next > end)
			return;
		if (next > lb->now)
			lb->now = next;
		for (int i = 0; i < 2; i++)
			rfw_qp_timer(lb->ep[i].qp, lb->now);
	}
}

/* Register an MR the loop deregisters in lb_destroy. */
static inline struct rfw_mr *lb_mr_acc(struct lb_ep *e, void *buf, size_t len, unsigned access)
{
	struct rfw_mr *mr = rfw_reg_mr(e->pd, buf, len, access);

	if (mr && e->lb->nmr < 64)
		e->lb->mrs[e->lb->nmr++] = mr;
	return mr;
}

/* A fast-registration MR (one LOCAL_INV / SEND with Invalidate may invalidate). */
static inline struct rfw_mr *lb_mr_fr(struct lb_ep *e, void *buf, size_t len)
{
	struct rfw_mr *mr = rfw_reg_mr_fr(e->pd, buf, len,
	                                  RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                                      RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC);

	if (mr && e->lb->nmr < 64)
		e->lb->mrs[e->lb->nmr++] = mr;
	return mr;
}

static inline struct rfw_mr *lb_mr(struct lb_ep *e, void *buf, size_t len)
{
	return lb_mr_acc(e, buf, len,
	                 RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ |
	                     RFW_ACCESS_REMOTE_ATOMIC);
}

/* Deterministic test bytes (xorshift from @seed). */
static inline void lb_fill(uint8_t *b, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)x;
	}
}

/* One work request of @op with one SGE and @flags (enum rfw_send_flags); WITH_IMM ops carry
 * 0xabcd0000 + @id. */
static inline int lb_post_op_flags(struct lb_ep *e, enum rfw_wr_opcode op, uint64_t id, void *lbuf,
                                   uint32_t len, struct rfw_mr *lmr, uint64_t raddr, uint32_t rkey,
                                   unsigned flags)
{
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)lbuf, .length = len, .lkey = lmr ? rfw_mr_lkey(lmr) : 0};
	struct rfw_send_wr wr = {.wr_id = id,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = op,
	                         .send_flags = flags,
	                         .imm_data = 0xabcd0000u + (uint32_t)id};
	struct rfw_send_wr *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return rfw_post_send(e->qp, &wr, &bad, e->lb->now);
}

/* One signalled work request of @op (lb_post_op_flags). */
static inline int lb_post_op(struct lb_ep *e, enum rfw_wr_opcode op, uint64_t id, void *lbuf,
                             uint32_t len, struct rfw_mr *lmr, uint64_t raddr, uint32_t rkey)
{
	return lb_post_op_flags(e, op, id, lbuf, len, lmr, raddr, rkey, RFW_SEND_SIGNALED);
}

static inline int lb_post_recv(struct lb_ep *e, uint64_t id, void *buf, uint32_t len,
                               struct rfw_mr *mr)
{
	struct rfw_sge sge = {
	    .addr = (uint64_t)(uintptr_t)buf, .length = len, .lkey = rfw_mr_lkey(mr)};
	struct rfw_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct rfw_recv_wr *bad;

	return rfw_post_recv(e->qp, &wr, &bad, e->lb->now);
}

/*
 * Each endpoint's QP replaced by a new one of @type (16 send WRs, 8 receive WRs, 2 SGEs each way,
 * @inl bytes inline), in RESET; the loop's own QPs go to @orig, for lb_restore_qps.
 */
static inline void lb_replace_qps(struct loop *lb, enum rfw_qp_type type, uint32_t inl,
                                  struct rfw_qp *orig[2])
{
	for (int i = 0; i < 2; i++) {
		struct lb_ep *e = &lb->ep[i];
		struct rfw_qp_init_attr qa = {
		    .send_cq = e->scq, .recv_cq = e->rcq, .qp_type = type};

		qa.cap = (struct rfw_qp_cap){.max_send_wr = 16,
		                             .max_recv_wr = 8,
		                             .max_send_sge = 2,
		                             .max_recv_sge = 2,
		                             .max_inline_data = inl};
		orig[i] = e->qp;
		e->qp = rfw_create_qp(e->pd, &qa);
	}
}

/* The endpoints' QPs destroyed (NULL: already gone) and the loop's own put back. */
static inline void lb_restore_qps(struct loop *lb, struct rfw_qp *orig[2])
{
	for (int i = 0; i < 2; i++) {
		if (lb->ep[i].qp != NULL)
			rfw_destroy_qp(lb->ep[i].qp);
		lb->ep[i].qp = orig[i];
	}
}

#endif
