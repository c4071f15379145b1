/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain-buffer host for nic/ tests: NICs joined by a wire with a fixed delay, a virtual
 * clock, and a log of every frame each NIC sent. No DPDK.
 */
#ifndef RFW_TESTS_NIC_HARNESS_H
#define RFW_TESTS_NIC_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nic/rfw_fw.h"

#define H_FRAME 4352
#define H_QUEUE 512
#define H_NICS  3
#define H_LOG   8192
#define H_MEM   (256 * 1024)
#define H_MTU   RFW_MTU_1024
#define H_DELAY 1000 /* ns, each way */

struct h_frame {
	uint64_t t; /* arrival time */
	uint32_t len;
	int to;
	uint8_t data[H_FRAME];
};

/* One frame as it left a NIC. */
struct h_sent {
	uint64_t t;
	uint32_t qpn_dst, psn, len;
	uint8_t opcode, ackreq;
};

struct h_net;

struct h_nic {
	struct h_net *net;
	int id;
	struct rfw_fw *fw;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	uint8_t *mem;
	struct h_frame *cur; /* the frame frame_alloc gave (the host's own bookkeeping) */
	/* frame_alloc_ref's frame (h_ops_ref): the payload it was given, where the headers end,
	   and the ICRC's 4 bytes until h_send_ref joins the three as a copying PMD would. */
	const uint8_t *ref_payload;
	uint32_t ref_len, ref_hdr;
	uint8_t ref_icrc[4];
	/* When set: every frame sent, appended (its bytes, no separator) up to cap_max bytes. */
	uint8_t *cap;
	size_t cap_len, cap_max;
	unsigned nsent;
	struct h_sent sent[H_LOG];
};

struct h_net {
	uint64_t now;
	unsigned ce_to_1; /* mark the next this many ECN-capable frames to NIC 1 CE */
	uint8_t paused;   /* classes (bit per rfw_fw_path.prio) whose queue has no room */
	int room;         /* frames NIC 0's host still takes (any class); negative: no limit */
	unsigned head, tail;
	struct h_frame q[H_QUEUE];
	struct h_nic nic[H_NICS];
};

static uint8_t *h_alloc(void *host, uint32_t len)
{
	struct h_nic *n = host;
	struct h_net *net = n->net;

	if (len > H_FRAME || net->tail - net->head >= H_QUEUE)
		return NULL;
	n->cur = &net->q[net->tail % H_QUEUE];
	return n->cur->data;
}

/* The destination NIC: the last byte of the destination MAC is 0x10 + its index. */
static void h_send(void *host, uint8_t *frame, uint32_t len)
{
	struct h_nic *n = host;
	struct h_net *net = n->net;
	struct h_frame *f = &net->q[net->tail % H_QUEUE];
	struct rfw_frame_view v;

	if (frame != f->data)
		abort();
	f->len = len;
	f->t = net->now + H_DELAY;
	if (n->id == 0 && net->room > 0)
		net->room--;
	f->to = frame[5] - 0x10;
	if (n->cap != NULL && n->cap_len + len <= n->cap_max) {
		memcpy(n->cap + n->cap_len, frame, len);
		n->cap_len += len;
	}
	if (rfw_frame_parse_eth(frame, len, &v) == RFW_FRAME_ERR_OK && n->nsent < H_LOG) {
		const uint8_t *bth = frame + v.ib_off;
		struct h_sent *s = &n->sent[n->nsent++];

		*s = (struct h_sent){.t = net->now,
		                     .opcode = bth[0],
		                     .qpn_dst = rfw_get_be24(bth + 5),
		                     .psn = rfw_get_be24(bth + 9),
		                     .ackreq = bth[8] >> 7,
		                     .len = len};
		if (net->ce_to_1 != 0 && f->to == 1 && v.ip_ver == 4 &&
		    (frame[v.l3_off + 1] & 3) != 0) {
			uint8_t *ip = frame + v.l3_off;

			ip[1] |= RFW_ECN_CE; /* the ICRC masks the TOS; the header checksum not */
			rfw_put_be16(ip + 10, 0);
			rfw_put_be16(ip + 10,
			             (uint16_t)~rfw_csum_fold(rfw_csum_add(0, ip, RFW_IPV4_HLEN)));
			net->ce_to_1--;
		}
	}
	net->tail++;
}

static bool h_room(void *host, uint8_t prio)
{
	const struct h_nic *n = host;

	return !(n->net->paused & (1u << prio)) && (n->id != 0 || n->net->room != 0);
}

static const struct rfw_fw_host_ops h_ops = {
    .frame_alloc = h_alloc, .frame_send = h_send, .tx_room = h_room};

/* frame_alloc_ref: the headers in a queue slot, the payload left where it is. */
static uint8_t *h_alloc_ref(void *host, uint32_t hdr_len, const uint8_t *payload,
                            uint32_t payload_len, uint8_t **icrc)
{
	struct h_nic *n = host;
	uint8_t *f = h_alloc(host, hdr_len + payload_len + 4);

	if (f == NULL)
		return NULL;
	n->ref_payload = payload;
	n->ref_len = payload_len;
	n->ref_hdr = hdr_len;
	*icrc = n->ref_icrc;
	return f;
}

/* frame_send_ref: the payload and the ICRC copied in behind the headers, then sent. */
static void h_send_ref(void *host, uint8_t *frame, uint32_t len)
{
	struct h_nic *n = host;

	if (n->ref_hdr + n->ref_len + 4 != len)
		abort();
	memcpy(frame + n->ref_hdr, n->ref_payload, n->ref_len);
	memcpy(frame + n->ref_hdr + n->ref_len, n->ref_icrc, 4);
	h_send(host, frame, len);
}

/* h_ops and the payload sent from the MR (rfw_fw_host_ops.frame_alloc_ref). */
static const struct rfw_fw_host_ops h_ops_ref = {.frame_alloc = h_alloc,
                                                 .frame_send = h_send,
                                                 .tx_room = h_room,
                                                 .frame_alloc_ref = h_alloc_ref,
                                                 .frame_send_ref = h_send_ref};

/* Frames due by now delivered (in order), then every NIC runs. */
static void h_step(struct h_net *net)
{
	while (net->head != net->tail && net->q[net->head % H_QUEUE].t <= net->now) {
		struct h_frame *f = &net->q[net->head % H_QUEUE];

		if (f->to >= 0 && f->to < H_NICS && net->nic[f->to].fw != NULL)
			(void)rfw_fw_rx_frame(net->nic[f->to].fw, f->data, f->len, net->now);
		net->head++;
	}
	for (int i = 0; i < H_NICS; i++)
		if (net->nic[i].fw != NULL)
			rfw_fw_run(net->nic[i].fw, net->now);
}

/* Steps of @dt ns until @ns have passed. */
static void h_run(struct h_net *net, uint64_t ns, uint64_t dt)
{
	uint64_t end = net->now + ns;

	while (net->now < end) {
		net->now += dt;
		h_step(net);
	}
}

/* NIC @id on @net with host ops @ops (h_ops or h_ops_ref). */
static int h_nic_init_ops(struct h_net *net, int id, const struct rfw_fw_conf *conf,
                          const struct rfw_fw_host_ops *ops)
{
	struct h_nic *n = &net->nic[id];

	n->net = net;
	net->room = -1;
	n->id = id;
	n->fw = rfw_fw_create(conf, ops, n);
	if (n->fw == NULL)
		return -1;
	n->pd = rfw_alloc_pd(rfw_fw_dev(n->fw));
	n->cq = rfw_create_cq(rfw_fw_dev(n->fw), 1024);
	n->mem = calloc(1, H_MEM);
	n->mr =
	    rfw_reg_mr(n->pd, n->mem, H_MEM,
	               RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ);
	return n->pd && n->cq && n->mem && n->mr ? 0 : -1;
}

static int h_nic_init(struct h_net *net, int id, const struct rfw_fw_conf *conf)
{
	return h_nic_init_ops(net, id, conf, &h_ops);
}

static void h_nic_fini(struct h_nic *n)
{
	rfw_dereg_mr(n->mr);
	rfw_destroy_cq(n->cq);
	rfw_dealloc_pd(n->pd);
	rfw_fw_destroy(n->fw);
	free(n->mem);
	memset(n, 0, sizeof(*n));
}

/*
 * A QP of @n in INIT, attached from 10.0.0.(@src_host + 1) toward NIC @peer at
 * 10.0.0.(@dst_host + 1).
 */
static struct rfw_qp *h_qp_prio(struct h_nic *n, int peer, uint32_t src_host, uint32_t dst_host,
                                uint8_t prio)
{
	struct rfw_qp_init_attr ia = {.send_cq = n->cq, .recv_cq = n->cq, .sq_sig_all = true};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT,
	                        .qp_access_flags =
	                            RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ};
	struct rfw_fw_path p = {.src_mac = {2, 0, 0, 0, 0, (uint8_t)(0x10 + n->id)},
	                        .dst_mac = {2, 0, 0, 0, 0, (uint8_t)(0x10 + peer)},
	                        .cnp_dscp = 48,
	                        .cnp_pcp = 6,
	                        .prio = prio};
	struct rfw_qp *qp;

	ia.cap = (struct rfw_qp_cap){
	    .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 2, .max_recv_sge = 1};
	qp = rfw_create_qp(n->pd, &ia);
	if (qp == NULL || rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		return NULL;
	rfw_ip4_to_mapped(p.src_ip, 0x0a000001u + src_host);
	rfw_ip4_to_mapped(p.dst_ip, 0x0a000001u + dst_host);
	return rfw_fw_qp_attach(n->fw, qp, &p) == 0 ? qp : NULL;
}

/* h_qp_prio in class 0. */
static struct rfw_qp *h_qp(struct h_nic *n, int peer, uint32_t src_host, uint32_t dst_host)
{
	return h_qp_prio(n, peer, src_host, dst_host, 0);
}

/* RTR + RTS toward @dqpn between the GIDs @sgid and @dgid (IPv4-mapped or IPv6). */
static int h_connect_gids(struct rfw_qp *qp, uint32_t dqpn, const uint8_t *sgid,
                          const uint8_t *dgid)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RTR,
	                        .path_mtu = H_MTU,
	                        .dest_qp_num = dqpn,
	                        .max_dest_rd_atomic = 4,
	                        .min_rnr_timer = 1};
	int rc;

	memcpy(a.ah_attr.sgid, sgid, 16);
	memcpy(a.ah_attr.dgid, dgid, 16);
	rc = rfw_modify_qp(qp, &a,
	                   RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                       RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER);

	a.qp_state = RFW_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return rc != 0 ? rc
	               : rfw_modify_qp(qp, &a,
	                               RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT |
	                                   RFW_QP_RETRY_CNT | RFW_QP_RNR_RETRY |
	                                   RFW_QP_MAX_QP_RD_ATOMIC);
}

/* RTR + RTS toward @dqpn, the path's addresses as h_qp()'s (the transport checks them). */
static int h_connect(struct rfw_qp *qp, uint32_t dqpn, uint32_t src_host, uint32_t dst_host)
{
	uint8_t sgid[16], dgid[16];

	rfw_ip4_to_mapped(sgid, 0x0a000001u + src_host);
	rfw_ip4_to_mapped(dgid, 0x0a000001u + dst_host);
	return h_connect_gids(qp, dqpn, sgid, dgid);
}

/* RDMA WRITE of @len bytes from @n's memory at @off to @peer's at @roff. */
static int h_write(struct h_nic *n, struct rfw_qp *qp, uint32_t off, uint32_t len,
                   const struct h_nic *peer, uint32_t roff)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(n->mem + off), len, rfw_mr_lkey(n->mr)};
	struct rfw_send_wr wr = {.wr_id = off,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE},
	                   *bad;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(peer->mem + roff);
	wr.wr.rdma.rkey = rfw_mr_rkey(peer->mr);
	return rfw_post_send(qp, &wr, &bad, n->net->now);
}

/* Steps of @dt ns until @n has @want completions (or @limit ns pass); how many it got. */
static int h_run_until(struct h_net *net, struct h_nic *n, int want, uint64_t limit, uint64_t dt);

/* Completions of @n with status success (others: -1). */
static int h_reap(struct h_nic *n)
{
	struct rfw_wc wc[16];
	int k, got = 0;

	while ((k = rfw_poll_cq(n->cq, 16, wc)) > 0)
		for (int i = 0; i < k; i++)
			got += wc[i].status == RFW_WC_SUCCESS ? 1 : -1000;
	return got;
}

static int h_run_until(struct h_net *net, struct h_nic *n, int want, uint64_t limit, uint64_t dt)
{
	uint64_t end = net->now + limit;
	int got = 0;

	while (got < want && net->now < end) {
		net->now += dt;
		h_step(net);
		got += h_reap(n);
	}
	return got;
}

#endif
