/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-ns3's host adapter on nic/ (nic/rfw_fw.h): the same firmware core the DPDK dataplane
 * and rocefw-sim host. ns-3 gives frames (frame_alloc / frame_send), time (every call's now_ns)
 * and per-priority room (tx_room: PFC pauses one priority's QPs, never the others); the
 * firmware does scheduling, pacing, DCQCN with the profile's rp_scope, framing and the ICRC.
 * What is left here is the flow bookkeeping of a simulated host: one RC QP per flow end, one
 * RDMA WRITE per flow, its completion reported to the fabric.
 */
#include "host_nic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nic/rfw_fw.h"
#include "transport/rfw_verbs.h"
#include "wire/frame.h"

struct hn_qp {
	struct rfw_qp *qp;
	uint32_t flow;
	uint32_t dst_ip; /* host order */
	uint16_t sport;
	bool open;
};

struct rfw_hn {
	struct rfw_hn_conf conf;
	struct rfw_hn_ops ops;
	void *host;
	struct rfw_fw *fw;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	struct hn_qp *slot; /* [max_flows] */
	uint32_t nslots;
	struct rfw_hn_stats st;
};

static uint8_t *hn_frame_alloc(void *host, uint32_t len)
{
	struct rfw_hn *hn = host;

	return len <= RFW_HN_FRAME_MAX ? hn->ops.frame_alloc(hn->host, len) : NULL;
}

static void hn_frame_send(void *host, uint8_t *frame, uint32_t len)
{
	struct rfw_hn *hn = host;

	hn->ops.frame_send(hn->host, frame, len);
}

static bool hn_tx_room(void *host, uint8_t prio)
{
	struct rfw_hn *hn = host;

	return hn->ops.tx_room(hn->host, prio);
}

static const struct rfw_fw_host_ops hn_fw_ops = {
    .frame_alloc = hn_frame_alloc, .frame_send = hn_frame_send, .tx_room = hn_tx_room};

/*
 * The firmware as rocefw-sim configures it for a simulator: strict pacing (no burst) and an
 * exact timer wheel (the host wakes it exactly at rfw_fw_next_ns), DCQCN with the profile.
 */
static int hn_fw_init(struct rfw_hn *hn)
{
	const struct rfw_hn_conf *c = &hn->conf;
	struct rfw_fw_conf fc = {.dev_attr = {.max_qp = c->max_flows,
	                                      .max_mr = 4,
	                                      .np_min_time_between_cnps_ns = 4000,
	                                      .link_gbps = (uint32_t)(c->link_bps / 1000000000ull),
	                                      .base_rtt_ns = c->base_rtt_ns,
	                                      .sr_rto_low_ns = c->sr_rto_low_ns,
	                                      .sr_rto_high_ns = c->sr_rto_high_ns,
	                                      .sr_rto_low_pkts = c->sr_rto_low_pkts,
	                                      .max_unacked_psns = c->max_unacked_psns,
	                                      .ack_every = c->ack_every},
	                         .cc = c->prof ? RFW_FW_CC_DCQCN : RFW_FW_CC_NONE,
	                         .dcqcn = c->prof,
	                         .pacer_burst_set = true,
	                         .wheel_shift_set = true,
	                         .frame_max = RFW_HN_FRAME_MAX,
	                         .var_win_bytes = c->var_win_bytes};

	hn->fw = rfw_fw_create(&fc, &hn_fw_ops, hn);
	if (hn->fw == NULL)
		return -ENOMEM;
	hn->pd = rfw_alloc_pd(rfw_fw_dev(hn->fw));
	hn->cq = rfw_create_cq(rfw_fw_dev(hn->fw), c->max_flows + 64);
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
	if (hn->slot == NULL || hn_fw_init(hn)) {
		rfw_hn_destroy(hn);
		return NULL;
	}
	return hn;
}

void rfw_hn_destroy(struct rfw_hn *hn)
{
	if (hn == NULL)
		return;
	for (uint32_t i = 0; hn->slot && i < hn->nslots; i++)
		if (hn->slot[i].qp) {
			rfw_fw_qp_detach(hn->fw, hn->slot[i].qp);
			rfw_destroy_qp(hn->slot[i].qp);
		}
	if (hn->mr)
		rfw_dereg_mr(hn->mr);
	if (hn->cq)
		rfw_destroy_cq(hn->cq);
	if (hn->pd)
		rfw_dealloc_pd(hn->pd);
	if (hn->fw)
		rfw_fw_destroy(hn->fw);
	free(hn->slot);
	free(hn);
}

/* The firmware's path of a flow end: data at DSCP prio << 3 (ECT(0)); CNPs at the profile's
 * np_cnp_dscp, Not-ECT, so switches queue them at that priority. */
static void hn_path(const struct rfw_hn *hn, const struct rfw_hn_path *p, struct rfw_fw_path *fp)
{
	memset(fp, 0, sizeof(*fp));
	memcpy(fp->src_mac, hn->conf.mac, 6);
	memcpy(fp->dst_mac, p->dst_mac, 6);
	rfw_ip4_to_mapped(fp->src_ip, hn->conf.ip);
	rfw_ip4_to_mapped(fp->dst_ip, p->dst_ip);
	fp->udp_sport = p->udp_sport;
	fp->dscp = (uint8_t)(p->prio << 3);
	fp->cnp_dscp = hn->conf.prof ? hn->conf.prof->cnp_dscp : fp->dscp;
	fp->prio = p->prio;
}

int rfw_hn_flow_open(struct rfw_hn *hn, uint32_t flow, const struct rfw_hn_path *path,
                     uint32_t *qpn)
{
	struct rfw_qp_init_attr qa = {.send_cq = hn->cq, .recv_cq = hn->cq};
	struct rfw_fw_path fp;
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
	hn_path(hn, path, &fp);
	/* One flow per QP, as rxe: 0xc000 | QPN (what the firmware uses for 0, kept for ECMP). */
	if (fp.udp_sport == 0)
		fp.udp_sport = (uint16_t)(0xc000 | (rfw_qp_num(q->qp) & 0x3fff));
	if (rfw_fw_qp_attach(hn->fw, q->qp, &fp) != 0) {
		rfw_destroy_qp(q->qp);
		q->qp = NULL;
		return -EINVAL;
	}
	q->flow = flow;
	q->dst_ip = path->dst_ip;
	q->sport = fp.udp_sport;
	q->open = true;
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
	rfw_ip4_to_mapped(a.ah_attr.sgid, hn->conf.ip);
	rfw_ip4_to_mapped(a.ah_attr.dgid, hn->slot[slot].dst_ip);
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
	return hn->slot[slot].sport;
}

int rfw_hn_flow_write(struct rfw_hn *hn, int slot, uint64_t bytes, uint64_t now_ns)
{
	struct hn_qp *q = &hn->slot[slot];
	struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)hn->conf.mem,
	                      .length = (uint32_t)bytes,
	                      .lkey = rfw_mr_lkey(hn->mr)};
	struct rfw_send_wr wr = {.wr_id = (uint64_t)slot,
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
	/* Posting rings the firmware's doorbell: the QP is on its ready list. */
	return rfw_post_send(q->qp, &wr, &bad, now_ns) ? -EINVAL : 0;
}

uint64_t rfw_hn_flow_rate_kbps(struct rfw_hn *hn, int slot, uint64_t now_ns)
{
	return rfw_fw_qp_rate_kbps(hn->fw, hn->slot[slot].qp, now_ns);
}

void rfw_hn_flow_close(struct rfw_hn *hn, int slot)
{
	struct hn_qp *q = &hn->slot[slot];
	if (!q->open)
		return;
	q->open = false;
	rfw_fw_qp_detach(hn->fw, q->qp);
	rfw_destroy_qp(q->qp);
	q->qp = NULL;
}

/* ---- packets in, the firmware's run, completions ---- */

int rfw_hn_rx_frame(struct rfw_hn *hn, const uint8_t *frame, uint32_t len, uint64_t now_ns)
{
	/* Parse, ICRC check (IBA Annex A17.3.3: a NIC drops a frame whose ICRC is wrong), IB
	 * parse, P_Key, the transport: the firmware's. */
	if (rfw_fw_rx_frame(hn->fw, frame, len, now_ns) != 0) {
		hn->st.rx_bad_frame++;
		return -EINVAL;
	}
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

/*
 * A run gives each ready QP one turn; QPs whose quantum ran out are ready again and get the
 * next run at once, while frames still go out (a class that is full sends nothing: its QPs
 * wait for the host's next call, when room frees).
 */
void rfw_hn_run(struct rfw_hn *hn, uint64_t now_ns)
{
	while (rfw_fw_run(hn->fw, now_ns) != 0 && rfw_fw_ready(hn->fw))
		;
	hn_poll(hn, now_ns);
}

uint64_t rfw_hn_next_ns(const struct rfw_hn *hn, uint64_t now_ns)
{
	(void)now_ns;
	return rfw_fw_next_ns(hn->fw);
}

void rfw_hn_counters(const struct rfw_hn *hn, uint64_t out[RFW_CNT__COUNT], struct rfw_hn_stats *st)
{
	rfw_dev_counters(rfw_fw_dev(hn->fw), out); /* destroyed QPs' counts included */
	*st = hn->st;
}
