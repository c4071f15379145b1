/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1 of the rocefw device: the GSI QP (transport rfw_qp_set_gsi) that CM MADs arrive on and
 * leave from (IBA 12.2, 13.5.1), as UD SEND-Only with Q_Key 0x80010000 and P_Key 0xffff.
 * Transport objects of the device directly (not the verbs objects: this runs on the NIC's
 * thread with the engine lock held). Outgoing MADs wait in a FIFO while ARP is asking for the
 * peer's MAC or QP1's send queue is full (a burst of connections: cmtime -c 1000 asks for a
 * thousand at once); an address handle per peer is kept. Queue sizes as Linux's ib_mad
 * defaults (recv_queue_size 512, send_queue_size 128).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/cma.h"
#include "verbs/cma_agent.h"

#define MAD_LEN  256
#define GRH_LEN  40
#define RECV_N   512
#define SEND_N   128
#define AH_MAX   64
#define OUTQ_MAX 4096 /* a power of two; RFW_CM_MAX_CONNS MADs at once fit */

struct agent_ah {
	uint32_t ip; /* network order; 0 = free */
	struct rfw_ah *ah;
};

struct agent_out {
	uint32_t ip; /* 0 = free */
	uint16_t len;
	uint64_t asked_ns;
	uint8_t mad[MAD_LEN];
};

struct cma_agent {
	struct rfw_eng *eng;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_qp *qp;
	struct rfw_mr *mr;
	uint8_t *buf; /* RECV_N x (GRH + MAD), then SEND_N x MAD */
	uint32_t send_next;
	uint32_t tx_busy;            /* sends posted and not completed */
	uint32_t out_head, out_tail; /* FIFO of MADs waiting (ARP, or a full send queue) */
	struct agent_ah ah[AH_MAX];
	struct agent_out out[OUTQ_MAX];
	uint64_t cnt[RFW_CMA_AGENT_CNT__COUNT];
};

const char *const rfw_cma_agent_cnt_name[RFW_CMA_AGENT_CNT__COUNT] = {
#define X(n, m) [RFW_CMA_AGENT_CNT_##n] = #n,
    RFW_CMA_AGENT_COUNTERS(X)
#undef X
};

static uint8_t *recv_slot(struct cma_agent *a, uint32_t i)
{
	return a->buf + (size_t)i * (GRH_LEN + MAD_LEN);
}

static uint8_t *send_slot(struct cma_agent *a, uint32_t i)
{
	return a->buf + (size_t)RECV_N * (GRH_LEN + MAD_LEN) + (size_t)i * MAD_LEN;
}

static int post_recv(struct cma_agent *a, uint32_t i, uint64_t now)
{
	struct rfw_sge s = {.addr = (uint64_t)(uintptr_t)recv_slot(a, i),
	                    .length = GRH_LEN + MAD_LEN,
	                    .lkey = rfw_mr_lkey(a->mr)};
	struct rfw_recv_wr w = {.wr_id = i, .sg_list = &s, .num_sge = 1}, *bad;

	return rfw_post_recv(a->qp, &w, &bad, now);
}

static int qp1_up(struct cma_agent *a, uint64_t now)
{
	struct rfw_qp_attr at = {.qp_state = RFW_QPS_INIT, .port_num = 1, .qkey = RFW_GSI_QKEY};
	struct rfw_eng_port_info pi;
	int rc = rfw_qp_set_gsi(a->qp);

	if (rc == 0)
		rc = rfw_modify_qp(a->qp, &at,
		                   RFW_QP_STATE | RFW_QP_PKEY_INDEX | RFW_QP_PORT | RFW_QP_QKEY);
	at.qp_state = RFW_QPS_RTR;
	if (rc == 0)
		rc = rfw_modify_qp(a->qp, &at, RFW_QP_STATE);
	at.qp_state = RFW_QPS_RTS;
	if (rc == 0)
		rc = rfw_modify_qp(a->qp, &at, RFW_QP_STATE | RFW_QP_SQ_PSN);
	rfw_eng_port_info(a->eng, &pi);
	if (rc == 0)
		rc = rfw_eng_qp_attach(a->eng, a->qp, pi.gid, 0);
	for (uint32_t i = 0; rc == 0 && i < RECV_N; i++)
		rc = post_recv(a, i, now);
	return rc;
}

struct cma_agent *rfw_cma_agent_create(struct rfw_eng *e, uint64_t now)
{
	struct rfw_qp_init_attr ia = {.qp_type = RFW_QPT_UD,
	                              .cap = {.max_send_wr = SEND_N,
	                                      .max_recv_wr = RECV_N,
	                                      .max_send_sge = 1,
	                                      .max_recv_sge = 1}};
	size_t len = (size_t)RECV_N * (GRH_LEN + MAD_LEN) + (size_t)SEND_N * MAD_LEN;
	struct cma_agent *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->eng = e;
	a->buf = calloc(1, len);
	a->pd = rfw_alloc_pd(rfw_eng_dev(e));
	a->cq = rfw_create_cq(rfw_eng_dev(e), RECV_N + SEND_N);
	ia.send_cq = ia.recv_cq = a->cq;
	a->mr = a->pd && a->buf ? rfw_reg_mr(a->pd, a->buf, len, RFW_ACCESS_LOCAL_WRITE) : NULL;
	a->qp = a->mr && a->cq ? rfw_create_qp(a->pd, &ia) : NULL;
	if (a->qp == NULL || qp1_up(a, now) != 0) {
		fprintf(stderr, "rocefw-verbs: rdma_cm: cannot set up QP1\n");
		rfw_cma_agent_destroy(a);
		return NULL;
	}
	return a;
}

void rfw_cma_agent_destroy(struct cma_agent *a)
{
	if (a == NULL)
		return;
	if (a->qp) {
		rfw_eng_qp_detach(a->eng, a->qp);
		rfw_destroy_qp(a->qp);
	}
	for (int i = 0; i < AH_MAX; i++)
		if (a->ah[i].ah)
			rfw_destroy_ah(a->ah[i].ah);
	if (a->mr)
		rfw_dereg_mr(a->mr);
	if (a->cq)
		rfw_destroy_cq(a->cq);
	if (a->pd)
		rfw_dealloc_pd(a->pd);
	free(a->buf);
	free(a);
}

/* The peer's AH, made once ARP has its MAC; NULL while it is being asked (or on error). */
static struct rfw_ah *ah_for(struct cma_agent *a, uint32_t ip)
{
	struct rfw_eng_port_info pi;
	struct rfw_ah_attr at = {0};
	int free_i = -1;

	for (int i = 0; i < AH_MAX; i++) {
		if (a->ah[i].ip == ip)
			return a->ah[i].ah;
		if (a->ah[i].ip == 0 && free_i < 0)
			free_i = i;
	}
	rfw_cma_gid_of(ip, at.dgid);
	if (rfw_eng_resolve(a->eng, at.dgid, at.dmac) != 0)
		return NULL;
	rfw_eng_port_info(a->eng, &pi);
	memcpy(at.sgid, pi.gid, 16);
	if (free_i < 0) { /* full: reuse the oldest slot's */
		free_i = 0;
		rfw_destroy_ah(a->ah[0].ah);
	}
	a->ah[free_i].ah = rfw_create_ah(a->pd, &at);
	a->ah[free_i].ip = a->ah[free_i].ah ? ip : 0;
	return a->ah[free_i].ah;
}

static int send_now(struct cma_agent *a, struct rfw_ah *ah, const uint8_t *mad, uint16_t len,
                    uint64_t now)
{
	uint32_t i = a->send_next++ % SEND_N;
	struct rfw_sge s = {.addr = (uint64_t)(uintptr_t)send_slot(a, i),
	                    .length = len,
	                    .lkey = rfw_mr_lkey(a->mr)};
	/* Signaled: the completion frees the slot (tx_busy). */
	struct rfw_send_wr w = {.wr_id = RECV_N + i,
	                        .sg_list = &s,
	                        .num_sge = 1,
	                        .opcode = RFW_WR_SEND,
	                        .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;

	memcpy(send_slot(a, i), mad, len);
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = RFW_GSI_QPN;
	w.wr.ud.remote_qkey = RFW_GSI_QKEY;
	if (rfw_post_send(a->qp, &w, &bad, now) != 0) {
		a->cnt[RFW_CMA_AGENT_CNT_mad_tx_dropped]++;
		return -ENOBUFS;
	}
	a->tx_busy++;
	a->cnt[RFW_CMA_AGENT_CNT_mad_tx]++;
	return 0;
}

int rfw_cma_agent_send(struct cma_agent *a, uint32_t ip, const uint8_t *mad, uint16_t len,
                       uint64_t now)
{
	struct agent_out *o;

	if (len > MAD_LEN)
		return -EMSGSIZE;
	/* Behind what already waits: MADs of one connection leave in the order the CM sent them. */
	if (a->out_head == a->out_tail && a->tx_busy < SEND_N) {
		struct rfw_ah *ah = ah_for(a, ip);

		if (ah != NULL)
			return send_now(a, ah, mad, len, now);
	}
	if (a->out_tail - a->out_head == OUTQ_MAX) {
		a->cnt[RFW_CMA_AGENT_CNT_mad_tx_dropped]++;
		return -ENOBUFS;
	}
	o = &a->out[a->out_tail++ % OUTQ_MAX];
	o->ip = ip;
	o->len = len;
	o->asked_ns = now;
	memcpy(o->mad, mad, len);
	return 0;
}

/*
 * Waiting MADs, oldest first: sent while QP1's send queue has room and the peer's MAC is known;
 * one whose peer gave no MAC for a second is dropped (the CM resends). The head waits for its
 * MAC before anything behind it goes (one peer at a time is what a CM burst looks like).
 */
static void flush_out(struct cma_agent *a, uint64_t now)
{
	while (a->out_head != a->out_tail && a->tx_busy < SEND_N) {
		struct agent_out *o = &a->out[a->out_head % OUTQ_MAX];
		struct rfw_ah *ah = ah_for(a, o->ip);

		if (ah != NULL)
			send_now(a, ah, o->mad, o->len, now);
		else if (now - o->asked_ns < 1000000000ull)
			return;
		else
			a->cnt[RFW_CMA_AGENT_CNT_mad_tx_no_arp]++;
		a->out_head++;
	}
}

/* One batch of QP1 completions; how many there were. */
static int poll_batch(struct cma_agent *a, uint64_t now, rfw_cma_agent_rx_fn rx, void *arg)
{
	struct rfw_wc wc[16];
	int n = rfw_poll_cq(a->cq, 16, wc);

	for (int k = 0; k < n; k++) {
		const uint8_t *g;
		uint32_t src;

		if (wc[k].wr_id >= RECV_N) { /* a send's completion: its slot is free */
			a->tx_busy--;
			continue;
		}
		g = recv_slot(a, (uint32_t)wc[k].wr_id);
		if (wc[k].status == RFW_WC_SUCCESS && wc[k].byte_len > GRH_LEN) {
			/* IPv4 in the GRH's last 20 bytes (IBA 11.4.1.1 for RoCEv2): source at 12
			 */
			memcpy(&src, g + 20 + 12, 4);
			a->cnt[RFW_CMA_AGENT_CNT_mad_rx]++;
			rx(arg, src, g + GRH_LEN, wc[k].byte_len - GRH_LEN, now);
		}
		if (a->qp && rfw_qp_state(a->qp) == RFW_QPS_RTS)
			post_recv(a, (uint32_t)wc[k].wr_id, now);
	}
	return n;
}

void rfw_cma_agent_poll(struct cma_agent *a, uint64_t now, rfw_cma_agent_rx_fn rx, void *arg)
{
	/* Until the CQ is empty (bounded: the engine's other work waits meanwhile). */
	for (int round = 0; round < 64 && poll_batch(a, now, rx, arg) == 16; round++)
		;
	flush_out(a, now);
}

bool rfw_cma_agent_idle(const struct cma_agent *a)
{
	return a->out_head == a->out_tail && a->tx_busy == 0;
}

void rfw_cma_agent_counters(const struct cma_agent *a, uint64_t out[RFW_CMA_AGENT_CNT__COUNT])
{
	memcpy(out, a->cnt, sizeof(a->cnt));
}
