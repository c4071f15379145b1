/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: arbitrary packets into a connected pair of RC QPs, A (requester with work
 * posted) and B (responder with receives posted and MRs registered), while the two also talk
 * to each other. Each input is a list of records:
 *
 *   byte 0     control: bit0 target (0: B, the responder side; 1: A, the requester side)
 *                       bit1 set the BTH DestQP to the target QP
 *                       bit2 set the PSN near what the target expects (+ int8 of the PSN's
 *                            low byte), so in-sequence paths are reachable
 *                       bit3 rebase RETH/AtomicETH VA and R_Key into B's MR (offset = VA mod
 *                            the MR length), so accepted remote accesses are reachable
 *                       bit4 the packet is CE-marked
 *                       bit5 advance the clock by (first packet byte) x 64 us and run timers
 *                       bit6 post one more send WR on A (opcode from the first packet byte)
 *                       bit7 set the selective-repeat marker (BTH Resv7 = RFW_SR_MARK) and,
 *                            with bit3, rebase the SRETH VA/R_Key of a WRITE too
 *
 * Every input runs twice: on a go-back-N pair and on a selective-repeat pair
 * (docs/transport-sr.md), so both parsers, the SACK reader and the mode check are reached.
 *   bytes 1-2  length (big-endian), then that many bytes: the IB part, BTH first
 *
 * Oracles: no sanitizer report; every packet transport emits parses and is RC or a CNP; every
 * completion has a known status; memory around the MRs (canaries) is never written.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rfw_int.h"
#include "transport/rfw_verbs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXPKT 4400
#define NQ     64
#define MRLEN  8192
#define CANARY 64

struct side;
struct pq {
	uint8_t buf[NQ][MAXPKT];
	uint32_t len[NQ];
	uint32_t n;
	uint8_t stage[MAXPKT];
};

struct fz {
	struct rfw_dev *dev[2];
	struct rfw_pd *pd[2];
	struct rfw_cq *cq[2];
	struct rfw_qp *qp[2];
	struct rfw_mr *mr[2];
	uint8_t *mem[2]; /* CANARY | MRLEN | CANARY */
	struct pq out[2];
	uint64_t now;
};

static uint8_t *fz_alloc(void *ctx, struct rfw_qp *qp, uint32_t len)
{
	struct pq *q = ctx;

	(void)qp;
	return len <= MAXPKT ? q->stage : NULL;
}

static void fz_send(void *ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                    const struct rfw_tx_meta *m)
{
	struct pq *q = ctx;
	struct rfw_ib_pkt p;
	uint8_t kind;

	(void)qp;
	/* Oracle: whatever transport writes is a well-formed RC packet or a CNP... */
	if (rfw_ib_parse(buf, len, &p) != RFW_IB_ERR_OK)
		__builtin_trap();
	/* ... and the kind it declares is what the opcode says. */
	kind = (p.op->flags & RFW_OPF_CNP)       ? RFW_TX_CNP
	       : (p.op->flags & RFW_OPF_REQUEST) ? RFW_TX_REQUEST
	                                         : RFW_TX_RESPONSE;
	if (m->kind != kind || m->psn != p.bth.psn || m->ack_req != p.bth.ackreq)
		__builtin_trap();
	if (p.op->transport != RFW_IB_RC && !(p.op->flags & RFW_OPF_CNP))
		__builtin_trap();
	if (q->n < NQ) {
		memcpy(q->buf[q->n], buf, len);
		q->len[q->n++] = len;
	}
}

static const struct rfw_io_ops fz_ops = {.tx_alloc = fz_alloc, .tx_send = fz_send};

static void fz_connect(struct rfw_qp *qp, uint32_t dqpn, uint32_t sq, uint32_t rq, bool sr)
{
	struct rfw_qp_attr a = {0};

	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags =
	    RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC;
	a.transport_mode = sr ? RFW_TRANSPORT_SR : RFW_TRANSPORT_GBN;
	rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS | RFW_QP_TRANSPORT_MODE);
	a.qp_state = RFW_QPS_RTR;
	a.path_mtu = RFW_MTU_256;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	rfw_modify_qp(qp, &a,
	              RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN | RFW_QP_RQ_PSN |
	                  RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER);
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = sq;
	a.timeout = 4;
	a.retry_cnt = 3;
	a.rnr_retry = 3;
	a.max_rd_atomic = 4;
	rfw_modify_qp(qp, &a,
	              RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                  RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
}

static void post_one(struct fz *f, uint8_t sel)
{
	static const enum rfw_wr_opcode ops[] = {
	    RFW_WR_SEND,
	    RFW_WR_RDMA_WRITE,
	    RFW_WR_RDMA_READ,
	    RFW_WR_SEND_WITH_IMM,
	    RFW_WR_ATOMIC_FETCH_AND_ADD,
	    RFW_WR_ATOMIC_CMP_AND_SWP,
	    RFW_WR_RDMA_WRITE_WITH_IMM,
	};
	enum rfw_wr_opcode op = ops[sel % 7];
	uint32_t len = (op == RFW_WR_ATOMIC_FETCH_AND_ADD || op == RFW_WR_ATOMIC_CMP_AND_SWP)
	                   ? 8
	                   : (uint32_t)(sel * 37u) % 1200;
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(f->mem[0] + CANARY), len,
	                      rfw_mr_lkey(f->mr[0])};
	struct rfw_send_wr wr = {.wr_id = sel,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = op,
	                         .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(f->mem[1] + CANARY + (sel & 0xf8));
	wr.wr.rdma.rkey = rfw_mr_rkey(f->mr[1]);
	if (op == RFW_WR_ATOMIC_FETCH_AND_ADD || op == RFW_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = wr.wr.rdma.remote_addr;
		wr.wr.atomic.rkey = rfw_mr_rkey(f->mr[1]);
		wr.wr.atomic.compare_add = sel;
	}
	(void)rfw_post_send(f->qp[0], &wr, &bad, f->now);
}

static void deliver(struct fz *f, int to, uint8_t *buf, uint32_t len, bool ce)
{
	struct rfw_ib_pkt p;
	struct rfw_rx_info rx = {0};

	if (rfw_ib_parse(buf, len, &p) != RFW_IB_ERR_OK)
		return;
	rx.pkt = &p;
	rx.ecn = ce ? 3 : 0;
	(void)rfw_dev_rx(f->dev[to], &rx, f->now);
}

/* Let the pair talk for a few rounds: each side's output goes to the other. */
static void pump(struct fz *f, int rounds)
{
	static uint8_t tmp[NQ][MAXPKT];
	static uint32_t tlen[NQ];

	for (int r = 0; r < rounds; r++) {
		for (int s = 0; s < 2; s++) {
			uint32_t n;

			f->out[s].n = 0;
			rfw_qp_tx_burst(f->qp[s], 16, f->now);
			n = f->out[s].n;
			for (uint32_t i = 0; i < n; i++) {
				memcpy(tmp[i], f->out[s].buf[i], f->out[s].len[i]);
				tlen[i] = f->out[s].len[i];
			}
			for (uint32_t i = 0; i < n; i++)
				deliver(f, !s, tmp[i], tlen[i], false);
		}
	}
}

static void drain_cqs(struct fz *f)
{
	struct rfw_wc wc[16];
	int n;

	for (int s = 0; s < 2; s++)
		while ((n = rfw_poll_cq(f->cq[s], 16, wc)) > 0)
			for (int i = 0; i < n; i++)
				if ((unsigned)wc[i].status >= RFW_WC__COUNT)
					__builtin_trap();
}

static void run_one(const uint8_t *data, size_t size, bool sr)
{
	static struct fz f;
	static uint8_t pkt[MAXPKT];

	memset(&f, 0, sizeof(f));
	for (int s = 0; s < 2; s++) {
		struct rfw_dev_attr da = {.ack_every = 4,
		                          .max_unacked_psns = 32,
		                          .qpn_base = 17 + 10 * (uint32_t)s,
		                          .sr_window = 64}; /* small: its wrap is reachable */
		struct rfw_qp_init_attr qa = {0};

		f.dev[s] = rfw_dev_create(&da, &fz_ops, &f.out[s]);
		f.pd[s] = rfw_alloc_pd(f.dev[s]);
		f.cq[s] = rfw_create_cq(f.dev[s], 64);
		qa.send_cq = qa.recv_cq = f.cq[s];
		qa.cap.max_send_wr = 8;
		qa.cap.max_recv_wr = 4;
		qa.cap.max_send_sge = 2;
		qa.cap.max_recv_sge = 2;
		f.qp[s] = rfw_create_qp(f.pd[s], &qa);
		f.mem[s] = malloc(MRLEN + 2 * CANARY);
		memset(f.mem[s], 0xa5, MRLEN + 2 * CANARY);
		f.mr[s] = rfw_reg_mr(f.pd[s], f.mem[s] + CANARY, MRLEN,
		                     RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
		                         RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC);
	}
	fz_connect(f.qp[0], rfw_qp_num(f.qp[1]), 0xfffff0, 0x1000, sr);
	fz_connect(f.qp[1], rfw_qp_num(f.qp[0]), 0x1000, 0xfffff0, sr);
	for (int i = 0; i < 3; i++) {
		struct rfw_sge sge = {(uint64_t)(uintptr_t)(f.mem[1] + CANARY + 2048 * (unsigned)i),
		                      2048, rfw_mr_lkey(f.mr[1])};
		struct rfw_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
		struct rfw_recv_wr *bad;

		rfw_post_recv(f.qp[1], &wr, &bad, 0);
	}
	post_one(&f, 1);
	post_one(&f, 2);
	post_one(&f, 4);
	rfw_qp_tx_burst(f.qp[0], 4, 0); /* some requests in flight, their responses pending */
	f.out[0].n = 0;

	while (size >= 3) {
		uint8_t ctl = data[0];
		size_t len = ((size_t)data[1] << 8) | data[2];
		int to = ctl & 1 ? 0 : 1;
		struct rfw_qp *qp = f.qp[to];
		struct rfw_ib_pkt p;

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		if (len > MAXPKT)
			len = MAXPKT;
		memcpy(pkt, data, len);
		data += len;
		size -= len;
		if (len >= RFW_BTH_LEN && rfw_ib_parse(pkt, len, &p) == RFW_IB_ERR_OK) {
			if (ctl & 2)
				rfw_put_be24(pkt + 5, rfw_qp_num(qp));
			if (ctl & 4) {
				uint32_t base =
				    (p.op->flags & RFW_OPF_REQUEST) ? qp->resp.psn : qp->comp.psn;
				rfw_bth_set_psn(pkt, rfw_psn_add(base, (uint32_t)(int8_t)pkt[11]));
			}
			if ((ctl & 8) && (p.op->hdrs & (RFW_HDR_RETH | RFW_HDR_ATOMICETH))) {
				/* Both headers start right after the BTH: VA then R_Key. */
				uint64_t va = rfw_get_be64(pkt + RFW_BTH_LEN) % MRLEN;

				rfw_put_be64(pkt + RFW_BTH_LEN,
				             (uint64_t)(uintptr_t)(f.mem[to] + CANARY) + va);
				rfw_put_be32(pkt + RFW_BTH_LEN + 8, rfw_mr_rkey(f.mr[to]));
			}
			if ((ctl & 8) && (ctl & 0x80) && (p.op->flags & RFW_OPF_WRITE) &&
			    p.payload_len >= RFW_SRETH_LEN) {
				/* The SRETH: VA of this packet's data, then the R_Key. */
				uint8_t *e = pkt + p.op->hdr_len;
				uint64_t va = rfw_get_be64(e) % MRLEN;

				rfw_put_be64(e, (uint64_t)(uintptr_t)(f.mem[to] + CANARY) + va);
				rfw_put_be32(e + 8, rfw_mr_rkey(f.mr[to]));
			}
			if (ctl & 0x80)
				pkt[8] = (uint8_t)((pkt[8] & 0x80) | RFW_SR_MARK);
		}
		if (ctl & 0x40)
			post_one(&f, len ? pkt[0] : 0);
		deliver(&f, to, pkt, (uint32_t)len, ctl & 0x10);
		if (ctl & 0x20) {
			f.now += (uint64_t)(len ? pkt[0] : 1) * 64000;
			for (int s = 0; s < 2; s++)
				rfw_qp_timer(f.qp[s], f.now);
		}
		pump(&f, 2);
		drain_cqs(&f);
	}
	pump(&f, 4);
	drain_cqs(&f);

	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < CANARY; i++)
			if (f.mem[s][i] != 0xa5 || f.mem[s][CANARY + MRLEN + i] != 0xa5)
				__builtin_trap();
		rfw_destroy_qp(f.qp[s]);
		rfw_dereg_mr(f.mr[s]);
		rfw_destroy_cq(f.cq[s]);
		rfw_dealloc_pd(f.pd[s]);
		rfw_dev_destroy(f.dev[s]);
		free(f.mem[s]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run_one(data, size, false);
	run_one(data, size, true);
	return 0;
}
