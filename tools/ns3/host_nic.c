/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3's host adapter: the transport and cc/ hosted directly, as tools/sim/sim.c does,
 * until issue 14's nic/ core replaces the body of this file (host_nic.h says how).
 */
#include "host_nic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cc/pacer.h"
#include "transport/rfw_verbs.h"
#include "wire/frame.h"

/* The congestion control of one QP: cc/'s RP and NP behind the transport's rfw_cc_ops. */
struct hn_cc {
	struct dcqcn_rp rp;
	struct dcqcn_np np;
	struct cc_pacer pacer;
	struct hn_cc *rpq; /* whose RP and pacer: its own, or the NIC's (rp_scope port/dst) */
	uint64_t cnps;
};

struct hn_qp {
	struct rfw_hn *hn;
	struct rfw_qp *qp;
	uint32_t flow;
	struct rfw_frame_spec spec;
	uint8_t prio;
	bool open;
	uint32_t active_at; /* index in hn->active */
	struct hn_cc cc;
};

struct rfw_hn {
	struct rfw_hn_conf conf;
	struct rfw_hn_ops ops;
	void *host;
	struct rfw_dev *dev;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	struct hn_qp *slot; /* [max_flows] */
	uint32_t nslots;
	uint32_t *active; /* slots with an open QP, in round-robin order */
	uint32_t nactive, rr;
	struct hn_cc port_cc; /* the shared RP of rp_scope port / dst */
	uint64_t closed_cnt[RFW_CNT__COUNT];
	struct rfw_hn_stats st;
};

/* ---- transport I/O seam: frames from the host, headers from wire/frame.h ---- */

static uint8_t *hn_tx_alloc(void *ctx, struct rfw_qp *qp, uint32_t len)
{
	struct rfw_hn *hn = ctx;
	uint8_t *f;

	(void)qp;
	if (len + RFW_HN_FRAME_HDR + RFW_ICRC_LEN > RFW_HN_FRAME_MAX)
		return NULL;
	f = hn->ops.frame_alloc(hn->host, len + RFW_HN_FRAME_HDR + RFW_ICRC_LEN);
	return f ? f + RFW_HN_FRAME_HDR : NULL;
}

static void hn_tx_send(void *ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                       const struct rfw_tx_meta *m)
{
	struct rfw_hn *hn = ctx;
	struct hn_qp *q = rfw_qp_context(qp);
	struct rfw_frame_spec sp = q->spec;
	uint8_t *f = buf - RFW_HN_FRAME_HDR; /* the frame hn_tx_alloc handed out */

	/* A CNP goes out at the profile's np_cnp_dscp, Not-ECT (it must not be marked itself),
	 * so switches queue it at that priority. */
	if (m->kind == RFW_TX_CNP && hn->conf.prof)
		sp.tos = (uint8_t)(dcqcn_np_cnp_dscp(&q->cc.np) << 2);
	if (rfw_frame_build_hdrs(f, RFW_HN_FRAME_MAX, &sp, len) != RFW_HN_FRAME_HDR)
		return;
	/* The ICRC is computed and checked (ISA-L): a capture verifies in Wireshark. */
	hn->ops.frame_send(hn->host, f, (uint32_t)rfw_frame_finalize(f, &sp, len));
}

static const struct rfw_io_ops hn_io = {.tx_alloc = hn_tx_alloc, .tx_send = hn_tx_send};

/* ---- congestion control seam: cc/ behind rfw_cc_ops (as tools/sim/sim.c) ---- */

/* Bytes are charged as the Ethernet frame the packet becomes, the unit of rocefw-replay cc. */
static void hn_cc_on_tx(void *cc, uint64_t now_ns, uint32_t bytes)
{
	struct hn_cc *c = ((struct hn_cc *)cc)->rpq;
	uint32_t flen = bytes + RFW_HN_FRAME_HDR + RFW_ICRC_LEN;

	if (dcqcn_rp_next_deadline(&c->rp) <= now_ns)
		dcqcn_rp_on_timer(&c->rp, now_ns);
	cc_pacer_depart(&c->pacer, now_ns, flen, dcqcn_rp_rate_kbps(&c->rp));
	dcqcn_rp_on_tx(&c->rp, flen, now_ns);
}

static bool hn_cc_np_on_ce(void *cc, uint64_t now_ns)
{
	return dcqcn_np_on_ce(&((struct hn_cc *)cc)->np, now_ns);
}

static void hn_cc_rp_on_cnp(void *cc, uint64_t now_ns)
{
	struct hn_cc *c = cc;

	c->cnps++;
	dcqcn_rp_on_cnp(&c->rpq->rp, now_ns);
}

static const struct rfw_cc_ops hn_cc_ops = {
    .on_tx = hn_cc_on_tx, .np_on_ce = hn_cc_np_on_ce, .rp_on_cnp = hn_cc_rp_on_cnp};

static uint64_t hn_paced_at(const struct hn_qp *q)
{
	return q->hn->conf.prof ? q->cc.rpq->pacer.tat_ns : 0;
}

/* ---- life cycle ---- */

static int hn_dev_init(struct rfw_hn *hn)
{
	const struct rfw_hn_conf *c = &hn->conf;
	struct rfw_dev_attr da = {.max_qp = c->max_flows,
	                          .max_mr = 4,
	                          .np_min_time_between_cnps_ns = 4000,
	                          .link_gbps = (uint32_t)(c->link_bps / 1000000000ull),
	                          .base_rtt_ns = c->base_rtt_ns};

	hn->dev = rfw_dev_create(&da, &hn_io, hn);
	if (hn->dev == NULL)
		return -ENOMEM;
	hn->pd = rfw_alloc_pd(hn->dev);
	hn->cq = rfw_create_cq(hn->dev, c->max_flows + 64);
	if (hn->pd == NULL || hn->cq == NULL)
		return -ENOMEM;
	hn->mr = rfw_reg_mr(hn->pd, c->mem, c->mem_len,
	                    RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
	return hn->mr ? 0 : -ENOMEM;
}

struct rfw_hn *rfw_hn_create(const struct rfw_hn_conf *conf, const struct rfw_hn_ops *ops,
                             void *host)
{
	struct rfw_hn *hn;

	if (conf->max_flows == 0 || conf->mem == NULL || conf->mem_len == 0 || conf->mtu < 256 ||
	    conf->mtu > 4096)
		return NULL;
	hn = calloc(1, sizeof(*hn));
	if (hn == NULL)
		return NULL;
	hn->conf = *conf;
	hn->ops = *ops;
	hn->host = host;
	hn->nslots = conf->max_flows;
	hn->slot = calloc(conf->max_flows, sizeof(*hn->slot));
	hn->active = calloc(conf->max_flows, sizeof(*hn->active));
	if (hn->slot == NULL || hn->active == NULL || hn_dev_init(hn)) {
		rfw_hn_destroy(hn);
		return NULL;
	}
	if (conf->prof) {
		dcqcn_rp_init(&hn->port_cc.rp, conf->prof);
		cc_pacer_init(&hn->port_cc.pacer, 0);
		hn->port_cc.rpq = &hn->port_cc;
	}
	return hn;
}

void rfw_hn_destroy(struct rfw_hn *hn)
{
	if (hn == NULL)
		return;
	for (uint32_t i = 0; hn->slot && i < hn->nslots; i++)
		if (hn->slot[i].qp)
			rfw_destroy_qp(hn->slot[i].qp);
	if (hn->mr)
		rfw_dereg_mr(hn->mr);
	if (hn->cq)
		rfw_destroy_cq(hn->cq);
	if (hn->pd)
		rfw_dealloc_pd(hn->pd);
	rfw_dev_destroy(hn->dev);
	free(hn->slot);
	free(hn->active);
	free(hn);
}

static void hn_spec(const struct rfw_hn *hn, const struct rfw_hn_path *p, struct rfw_frame_spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	memcpy(sp->src_mac, hn->conf.mac, 6);
	memcpy(sp->dst_mac, p->dst_mac, 6);
	sp->ip_ver = 4;
	sp->ttl = 64;
	sp->df = true;
	sp->tos = (uint8_t)((p->prio << 3) << 2 | RFW_ECN_ECT0);
	rfw_ip4_to_mapped(sp->src_ip, hn->conf.ip);
	rfw_ip4_to_mapped(sp->dst_ip, p->dst_ip);
	sp->udp_sport = p->udp_sport;
}

int rfw_hn_flow_open(struct rfw_hn *hn, uint32_t flow, const struct rfw_hn_path *path,
                     uint32_t *qpn)
{
	struct rfw_qp_init_attr qa = {.send_cq = hn->cq, .recv_cq = hn->cq};
	struct hn_qp *q = NULL;
	uint32_t s;

	for (s = 0; s < hn->nslots && q == NULL; s++)
		if (hn->slot[s].qp == NULL && !hn->slot[s].open)
			q = &hn->slot[s];
	if (q == NULL || path->prio > 7)
		return q ? -EINVAL : -ENOSPC;
	s--;
	qa.qp_context = q;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	q->qp = rfw_create_qp(hn->pd, &qa);
	if (q->qp == NULL)
		return -ENOMEM;
	q->hn = hn;
	q->flow = flow;
	q->prio = path->prio;
	hn_spec(hn, path, &q->spec);
	if (hn->conf.prof) {
		const struct dcqcn_prof *pr = hn->conf.prof;

		dcqcn_rp_init(&q->cc.rp, pr);
		dcqcn_np_init(&q->cc.np, pr);
		cc_pacer_init(&q->cc.pacer, 0);
		/* rp_scope port or dst: one RP and paced rate per NIC, as tools/sim/sim.c. */
		q->cc.rpq = pr->scope != DCQCN_SCOPE_QP ? &hn->port_cc : &q->cc;
		rfw_qp_set_cc(q->qp, &hn_cc_ops, &q->cc);
	}
	if (path->udp_sport == 0) /* one flow per QP, as rxe: 0xc000 | QPN */
		q->spec.udp_sport = (uint16_t)(0xc000 | (rfw_qp_num(q->qp) & 0x3fff));
	q->open = true;
	q->active_at = hn->nactive;
	hn->active[hn->nactive++] = s;
	*qpn = rfw_qp_num(q->qp);
	return (int)s;
}

int rfw_hn_flow_connect(struct rfw_hn *hn, int slot, uint32_t remote_qpn)
{
	struct rfw_qp *qp = hn->slot[slot].qp;
	struct rfw_qp_attr a = {0};
	enum rfw_mtu m = RFW_MTU_256;
	int rc;

	while (rfw_mtu_to_bytes(m) < hn->conf.mtu)
		m++;
	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags = RFW_ACCESS_REMOTE_WRITE;
	a.transport_mode = hn->conf.sr ? RFW_TRANSPORT_SR : RFW_TRANSPORT_GBN;
	rc = rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS | RFW_QP_TRANSPORT_MODE);
	a.qp_state = RFW_QPS_RTR;
	/* The transport drops packets from anywhere but the path (ah_attr, as rxe's check_addr). */
	memcpy(a.ah_attr.sgid, hn->slot[slot].spec.src_ip, 16);
	memcpy(a.ah_attr.dgid, hn->slot[slot].spec.dst_ip, 16);
	a.path_mtu = m;
	a.dest_qp_num = remote_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	if (!rc)
		rc = rfw_modify_qp(qp, &a,
		                   RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
		                       RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC |
		                       RFW_QP_MIN_RNR_TIMER);
	a.qp_state = RFW_QPS_RTS;
	a.timeout = hn->conf.timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (!rc)
		rc =
		    rfw_modify_qp(qp, &a,
		                  RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
		                      RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
	return rc;
}

uint16_t rfw_hn_flow_sport(const struct rfw_hn *hn, int slot)
{
	return hn->slot[slot].spec.udp_sport;
}

int rfw_hn_flow_write(struct rfw_hn *hn, int slot, uint64_t bytes, uint64_t now_ns)
{
	struct hn_qp *q = &hn->slot[slot];
	struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)hn->conf.mem,
	                      .length = (uint32_t)bytes,
	                      .lkey = rfw_mr_lkey(hn->mr)};
	struct rfw_send_wr wr = {.wr_id = slot,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;

	if (bytes > hn->conf.mem_len)
		return -EMSGSIZE;
	/* Every flow writes the shared memory at the same address on the peer: the rkey is the
	 * peer's, but every NIC registers the same memory first, so keys agree (rfw_reg_mr). */
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)hn->conf.mem;
	wr.wr.rdma.rkey = rfw_mr_rkey(hn->mr);
	return rfw_post_send(q->qp, &wr, &bad, now_ns) ? -EINVAL : 0;
}

void rfw_hn_flow_close(struct rfw_hn *hn, int slot)
{
	struct hn_qp *q = &hn->slot[slot];
	uint64_t c[RFW_CNT__COUNT];
	uint32_t last;

	if (!q->open)
		return;
	rfw_qp_counters(q->qp, c);
	for (int i = 0; i < RFW_CNT__COUNT; i++)
		hn->closed_cnt[i] += c[i];
	last = hn->active[--hn->nactive];
	hn->active[q->active_at] = last;
	hn->slot[last].active_at = q->active_at;
	q->open = false;
	rfw_destroy_qp(q->qp);
	q->qp = NULL;
}

/* ---- packets in, scheduler, timers ---- */

int rfw_hn_rx_frame(struct rfw_hn *hn, const uint8_t *frame, uint32_t len, uint64_t now_ns)
{
	struct rfw_frame_view v;
	struct rfw_ib_pkt pkt;
	struct rfw_rx_info rx = {0};

	/* A NIC drops a frame whose ICRC does not match (IBA Annex A17.3.3). */
	if (rfw_frame_parse_eth(frame, len, &v) != RFW_FRAME_ERR_OK || v.kind != RFW_FRAME_ROCEV2 ||
	    !rfw_frame_icrc_ok(frame, &v) ||
	    rfw_ib_parse(frame + v.ib_off, v.ib_len, &pkt) != RFW_IB_ERR_OK) {
		hn->st.rx_bad_frame++;
		return -EINVAL;
	}
	rx.pkt = &pkt;
	rx.ecn = (uint8_t)rfw_frame_ecn(&v);
	memcpy(rx.src_ip, v.src_ip, 16);
	memcpy(rx.dst_ip, v.dst_ip, 16);
	rx.rx_ts_ns = now_ns;
	rfw_dev_rx(hn->dev, &rx, now_ns);
	rfw_hn_run(hn, now_ns);
	return 0;
}

static void hn_poll(struct rfw_hn *hn, uint64_t now_ns)
{
	struct rfw_wc wc[16];
	int n;

	while ((n = rfw_poll_cq(hn->cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			bool ok = wc[i].status == RFW_WC_SUCCESS;

			if (!ok)
				hn->st.error_completions++;
			if (wc[i].wr_id < hn->nslots && hn->slot[wc[i].wr_id].open)
				hn->ops.flow_done(hn->host, hn->slot[wc[i].wr_id].flow, ok, now_ns);
		}
}

/* One packet from the next QP (round robin) that has work, its pacer allowing and the host
 * having room at its priority. */
static bool hn_send_one(struct rfw_hn *hn, uint64_t now_ns)
{
	for (uint32_t k = 0; k < hn->nactive; k++) {
		uint32_t i = (hn->rr + k) % hn->nactive;
		struct hn_qp *q = &hn->slot[hn->active[i]];

		if (!q->open || hn_paced_at(q) > now_ns || !rfw_qp_has_work(q->qp, now_ns) ||
		    !hn->ops.tx_room(hn->host, q->prio))
			continue;
		if (rfw_qp_tx_burst(q->qp, 1, now_ns)) {
			hn->rr = i + 1;
			return true;
		}
	}
	return false;
}

void rfw_hn_run(struct rfw_hn *hn, uint64_t now_ns)
{
	for (uint32_t k = 0; k < hn->nactive; k++) {
		struct hn_qp *q = &hn->slot[hn->active[k]];

		if (rfw_qp_next_deadline(q->qp) <= now_ns)
			rfw_qp_timer(q->qp, now_ns);
	}
	hn_poll(hn, now_ns);
	while (hn_send_one(hn, now_ns))
		;
	hn_poll(hn, now_ns);
}

uint64_t rfw_hn_next_ns(const struct rfw_hn *hn, uint64_t now_ns)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t k = 0; k < hn->nactive; k++) {
		const struct hn_qp *q = &hn->slot[hn->active[k]];
		uint64_t t = rfw_qp_next_deadline(q->qp);

		if (t < d)
			d = t;
		/* A paced QP with work waits for its departure time; the RP's own timers need no
		 * event (every cc/ entry point first runs the work due by its now_ns). */
		t = hn_paced_at(q);
		if (t > now_ns && t < d && rfw_qp_has_work(q->qp, now_ns))
			d = t;
	}
	return d;
}

void rfw_hn_counters(const struct rfw_hn *hn, uint64_t out[RFW_CNT__COUNT], struct rfw_hn_stats *st)
{
	rfw_dev_counters(hn->dev, out);
	for (int i = 0; i < RFW_CNT__COUNT; i++)
		out[i] += hn->closed_cnt[i];
	*st = hn->st;
}
