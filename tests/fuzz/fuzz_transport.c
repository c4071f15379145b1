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
 *                            and set A's go-back-N window (rfw_qp_set_window_bytes) to the
 *                            byte's top three bits x 512 bytes (0: the device's window)
 *                       bit7 set the selective-repeat marker (BTH Resv7 = RFW_SR_MARK) and,
 *                            with bit3, rebase the SRETH VA/R_Key of a WRITE too
 *
 * Every input runs three times: on a go-back-N pair, on a selective-repeat pair
 * (docs/transport-sr.md), so both parsers, the SACK reader and the mode check are reached, and
 * on a selective-repeat pair whose B takes its receives from an SRQ (the same receives, posted
 * to the SRQ; taken in posting order since B is its only QP).
 *   bytes 1-2  length (big-endian), then that many bytes: the IB part, BTH first
 *
 * A record shorter than a BTH injects nothing: its byte 0 is the argument of bit5 (time) and
 * bit6 (post: the WR kind, see post_one: the seven operations, LOCAL_INV of an unknown key and
 * of a plain MR, a bad lkey, zero-length SEND/WRITE/READ, a READ of 64 KiB: 256 PSNs at MTU
 * 256, beyond the sr window and max_unacked_psns), and its byte 1, when present, impairs the
 * next exchange between the pair (lose the first four A->B packets by bits 0-3, the first two
 * B->A by bits 4-5, duplicate the first A->B by bit 6, reverse the A->B order by bit 7).
 *
 * Oracles: no sanitizer report; every packet transport emits parses and is RC or a CNP; memory
 * around the MRs (canaries) is never written; and liveness and exactly-once (IBA 10.8.3,
 * 11.6.2): every WR posted completes exactly once, in posting order, with a known status, and
 * after an error every later WR is flushed; every receive likewise; when the input ends, the
 * pair is run (timers fired as simulated time passes) until every WR has completed, within a
 * bound of simulated time. While nothing was injected (only posts, time and impairments),
 * each status is the one IBA prescribes: success (with the right opcode, and a 64 KiB READ's
 * bytes equal to the source), a local error for a bad lkey or a LOCAL_INV that cannot
 * invalidate (only fast-registration MRs may be, IBA 10.6; rocefw has none), a retry
 * error only if packets were lost, a flush after an error; and every SEND / WRITE with
 * immediate that succeeded was received once (one that failed: at most once). A's Estats
 * records (a ring of two slots, often full): exactly one for every send completion polled,
 * drained or counted dropped, never more published than the ring holds, each well formed; the
 * trigger reports only a latency above its threshold. A violation traps (libFuzzer reports it).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rfw_int.h"
#include "transport/rfw_verbs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXPKT 4400
#define NQ     64
#define MRLEN  8192
#define CANARY 64
#define BIGLEN 65536 /* the huge READ: 256 PSNs at MTU 256 */
#define NRECV  3
#define WRRING 64 /* posted, not completed: at most the send queue's size */
/*
 * Liveness bound: simulated time after the input for every WR to complete. Our own traffic
 * needs a few local ACK timeouts (65 us each here) and B's RNR timer (10 us); an injected RNR
 * NAK may ask for up to 655.36 ms (IBA table 45, code 0) per retry.
 */
#define SETTLE_NS          (200ull * 1000 * 1000)
#define SETTLE_INJECTED_NS (4ull * 1000 * 1000 * 1000)
#define SETTLE_ITERS       20000

/*
 * Defect classes the harness holds back from provoking (bit N: item N of issue 13), so that a
 * fuzzing run looks past a known, unfixed defect instead of stopping at it within seconds.
 * None today: items 2, 3 and 7 are fixed and their inputs are corpus seeds (item*_*.bin).
 */
#define FZ_WAIVED  0u
#define WAIVED(it) ((FZ_WAIVED >> (it)) & 1u)

/* A's Estats trigger threshold on T6 - T1: some WRs cross it as simulated time advances. */
#define FZ_ES_THRESHOLD_NS 100000u

/* What IBA prescribes for a WR when no packet was injected (the strict oracle). */
enum expect { EXP_OK, EXP_LOCAL_ERR };

struct wr_rec {
	uint8_t kind;       /* enum wr_kind */
	uint8_t expect;     /* enum expect */
	uint8_t wc_op;      /* the completion opcode of a success */
	bool consumes_recv; /* SEND, WRITE with immediate */
	bool big_read;      /* the 64 KiB READ: bytes checked */
};

/* The exactly-once / in-order book of one run. */
struct book {
	struct wr_rec wr[WRRING];
	uint64_t posted, completed;      /* send WRs on A, by wr_id = posting number */
	uint64_t recv_posted, recv_done; /* receives on B, by wr_id = posting number */
	uint64_t recv_ok;                /* B's successful receives */
	uint64_t recv_sends_ok;          /* A's SENDs / WRITEs with immediate: successful */
	uint64_t recv_sends_err;         /* .. and in error (B may or may not have them) */
	bool failed;                     /* a send WR completed in error: the rest are flushed */
	bool injected;                   /* a packet from the input reached a QP: not strict */
	bool impaired;                   /* the input lost a packet: retry errors are allowed */
	bool b_failed;                   /* a receive completed in error */
};

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
	struct rfw_srq *srq; /* B's receives come from it in the third run (NULL otherwise) */
	struct rfw_mr *mr[2];
	struct rfw_mr *bigmr[2];
	struct rfw_mr *spare; /* A's plain MR that nothing uses: what K_INV_PLAIN invalidates */
	uint8_t *mem[2];      /* CANARY | MRLEN | CANARY */
	uint8_t *big[2];      /* CANARY | BIGLEN | CANARY: A's READ sink, B's READ source */
	struct pq out[2];
	uint64_t now;
	uint8_t impair; /* for the next exchange (record byte 1) */
	struct book bk;
	/* A's Estats records (docs/estats.md): a ring of 2 slots, drained after each poll of A's
	 * CQ, so that a poll's burst (up to 8 send CQEs: the send queue) finds it full at times. */
	struct rfw_es_ring esr;
	struct rfw_es_crec esq[2];
	uint64_t es_records; /* drained from the ring */
};

/* A violated oracle traps; -DFZ_DEBUG says which line first (for triage). */
#ifdef FZ_DEBUG
#define oracle(ok)                                                                                 \
	do {                                                                                       \
		if (!(ok)) {                                                                       \
			fprintf(stderr, "oracle line %d: %s\n", __LINE__, #ok);                    \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)
#else
#define oracle(ok)                                                                                 \
	do {                                                                                       \
		if (!(ok))                                                                         \
			__builtin_trap();                                                          \
	} while (0)
#endif

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

static void post_recv_b(struct fz *f)
{
	uint64_t k = f->bk.recv_posted;
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(f->mem[1] + CANARY + 2048 * (k % NRECV)), 2048,
	                      rfw_mr_lkey(f->mr[1])};
	struct rfw_recv_wr wr = {.wr_id = k, .sg_list = &sge, .num_sge = 1};
	struct rfw_recv_wr *bad;

	if ((f->srq ? rfw_post_srq_recv(f->srq, &wr, &bad)
	            : rfw_post_recv(f->qp[1], &wr, &bad, f->now)) == 0)
		f->bk.recv_posted++;
}

/* The kinds post_one can post; the first seven are the operations, the rest the odd cases. */
enum wr_kind {
	K_SEND,
	K_WRITE,
	K_READ,
	K_SEND_IMM,
	K_FETCH_ADD,
	K_CMP_SWAP,
	K_WRITE_IMM,
	K_INV_UNKNOWN, /* LOCAL_INV of an R_Key no MR has */
	K_INV_PLAIN,   /* LOCAL_INV of A's spare plain MR: not a fast-registration MR */
	K_BAD_LKEY,    /* a SEND whose SGE names no MR */
	K_SEND0,
	K_WRITE0,
	K_READ0,
	K_BIG_READ,
	K__COUNT
};

static const struct {
	enum rfw_wr_opcode op;
	uint8_t wc_op;
} kinds[K__COUNT] = {
    [K_SEND] = {RFW_WR_SEND, RFW_WC_SEND},
    [K_WRITE] = {RFW_WR_RDMA_WRITE, RFW_WC_RDMA_WRITE},
    [K_READ] = {RFW_WR_RDMA_READ, RFW_WC_RDMA_READ},
    [K_SEND_IMM] = {RFW_WR_SEND_WITH_IMM, RFW_WC_SEND},
    [K_FETCH_ADD] = {RFW_WR_ATOMIC_FETCH_AND_ADD, RFW_WC_FETCH_ADD},
    [K_CMP_SWAP] = {RFW_WR_ATOMIC_CMP_AND_SWP, RFW_WC_COMP_SWAP},
    [K_WRITE_IMM] = {RFW_WR_RDMA_WRITE_WITH_IMM, RFW_WC_RDMA_WRITE},
    [K_INV_UNKNOWN] = {RFW_WR_LOCAL_INV, RFW_WC_LOCAL_INV},
    [K_INV_PLAIN] = {RFW_WR_LOCAL_INV, RFW_WC_LOCAL_INV},
    [K_BAD_LKEY] = {RFW_WR_SEND, RFW_WC_SEND},
    [K_SEND0] = {RFW_WR_SEND, RFW_WC_SEND},
    [K_WRITE0] = {RFW_WR_RDMA_WRITE, RFW_WC_RDMA_WRITE},
    [K_READ0] = {RFW_WR_RDMA_READ, RFW_WC_RDMA_READ},
    [K_BIG_READ] = {RFW_WR_RDMA_READ, RFW_WC_RDMA_READ},
};

/* Fill a WR of kind @k (sel: the input's byte, for lengths and offsets). */
static void fill_wr(struct fz *f, enum wr_kind k, uint8_t sel, struct rfw_send_wr *wr,
                    struct rfw_sge *sge)
{
	bool atomic = k == K_FETCH_ADD || k == K_CMP_SWAP;

	*sge = (struct rfw_sge){(uint64_t)(uintptr_t)(f->mem[0] + CANARY),
	                        atomic ? 8 : (uint32_t)(sel * 37u) % 1200, rfw_mr_lkey(f->mr[0])};
	wr->opcode = kinds[k].op;
	wr->imm_data = 0x1000u + sel;
	wr->wr.rdma.remote_addr = (uint64_t)(uintptr_t)(f->mem[1] + CANARY + (sel & 0xf8));
	wr->wr.rdma.rkey = rfw_mr_rkey(f->mr[1]);
	if (atomic) {
		wr->wr.atomic.remote_addr = wr->wr.rdma.remote_addr;
		wr->wr.atomic.rkey = rfw_mr_rkey(f->mr[1]);
		wr->wr.atomic.compare_add = sel;
	}
	switch (k) {
	case K_INV_UNKNOWN:
		wr->invalidate_rkey = 0xdead00u | sel;
		break;
	case K_INV_PLAIN:
		wr->invalidate_rkey = rfw_mr_rkey(f->spare);
		break;
	case K_BAD_LKEY:
		sge->lkey = rfw_mr_lkey(f->mr[0]) ^ 0x5a5a00u;
		break;
	case K_SEND0:
	case K_WRITE0:
	case K_READ0:
		sge->length = 0;
		break;
	case K_BIG_READ:
		sge->addr = (uint64_t)(uintptr_t)(f->big[0] + CANARY);
		sge->length = BIGLEN;
		sge->lkey = rfw_mr_lkey(f->bigmr[0]);
		wr->wr.rdma.remote_addr = (uint64_t)(uintptr_t)(f->big[1] + CANARY);
		wr->wr.rdma.rkey = rfw_mr_rkey(f->bigmr[1]);
		break;
	default:
		break;
	}
}

/* The kind to post for @sel, minus what a waived item would trip over (FZ_WAIVED). */
static enum wr_kind kind_for(const struct fz *f, uint8_t sel)
{
	enum wr_kind k = (enum wr_kind)(sel % K__COUNT);
	bool local_err = k == K_INV_UNKNOWN || k == K_INV_PLAIN || k == K_BAD_LKEY;

	if (WAIVED(2) && k == K_BIG_READ && f->qp[0]->sr)
		return K_READ;
	if (WAIVED(3) && local_err && !f->qp[0]->sr && f->bk.completed < f->bk.posted)
		return K_SEND;
	return k;
}

static void post_one(struct fz *f, uint8_t sel)
{
	enum wr_kind k = kind_for(f, sel);
	struct rfw_sge sge;
	struct rfw_send_wr wr = {
	    .wr_id = f->bk.posted, .sg_list = &sge, .num_sge = 1, .send_flags = RFW_SEND_SIGNALED};
	struct rfw_send_wr *bad;
	struct wr_rec *r = &f->bk.wr[f->bk.posted % WRRING];

	fill_wr(f, k, sel, &wr, &sge);
	if (rfw_post_send(f->qp[0], &wr, &bad, f->now) != 0)
		return; /* refused (queue full): no completion is owed */
	*r = (struct wr_rec){
	    .kind = (uint8_t)k,
	    .expect = (k == K_INV_UNKNOWN || k == K_INV_PLAIN || k == K_BAD_LKEY) ? EXP_LOCAL_ERR
	                                                                          : EXP_OK,
	    .wc_op = kinds[k].wc_op,
	    .consumes_recv = wr.opcode == RFW_WR_SEND || wr.opcode == RFW_WR_SEND_WITH_IMM ||
	                     wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM,
	    .big_read = k == K_BIG_READ};
	f->bk.posted++;
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

/* One side's burst to the other, through the pending impairment (record byte 1). */
static void exchange(struct fz *f, int s)
{
	static uint8_t tmp[NQ + 1][MAXPKT];
	static uint32_t tlen[NQ + 1];
	uint32_t n = 0, m;

	f->out[s].n = 0;
	rfw_qp_tx_burst(f->qp[s], 16, f->now);
	m = f->out[s].n;
	if (f->impair)
		f->bk.impaired = true; /* loss and reordering both spend retries (IBA 9.7.5.2) */
	for (uint32_t i = 0; i < m; i++) {
		bool lose =
		    s == 0 ? i < 4 && (f->impair >> i & 1) : i < 2 && (f->impair >> (4 + i) & 1);

		if (lose)
			continue;
		memcpy(tmp[n], f->out[s].buf[i], f->out[s].len[i]);
		tlen[n++] = f->out[s].len[i];
	}
	if (s == 0 && n && (f->impair & 0x40)) { /* the first one duplicated */
		memcpy(tmp[n], tmp[0], tlen[0]);
		tlen[n++] = tlen[0];
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (s == 0 && (f->impair & 0x80)) ? n - 1 - i : i;

		deliver(f, !s, tmp[j], tlen[j], false);
	}
	if (s == 1)
		f->impair = 0; /* one exchange each way */
}

/* Let the pair talk for a few rounds: each side's output goes to the other. */
static void pump(struct fz *f, int rounds)
{
	for (int r = 0; r < rounds; r++)
		for (int s = 0; s < 2; s++)
			exchange(f, s);
}

static bool is_local_err(enum rfw_wc_status st)
{
	return st == RFW_WC_LOC_PROT_ERR || st == RFW_WC_LOC_QP_OP_ERR ||
	       st == RFW_WC_LOC_ACCESS_ERR || st == RFW_WC_MW_BIND_ERR || st == RFW_WC_LOC_LEN_ERR;
}

/* A send completion on A: the next WR posted, once, with a status IBA allows. */
static void send_done(struct fz *f, const struct rfw_wc *wc)
{
	struct book *b = &f->bk;
	const struct wr_rec *r = &b->wr[b->completed % WRRING];
	bool ok = wc->status == RFW_WC_SUCCESS;

#ifdef FZ_DEBUG
	fprintf(stderr, "%s wc id %llu status %s op %d (expect %d) injected %d impaired %d\n",
	        f->qp[0]->sr ? "sr" : "gbn", (unsigned long long)wc->wr_id,
	        rfw_wc_status_str(wc->status), wc->opcode, r->expect, b->injected, b->impaired);
#endif
	oracle(!(wc->opcode & RFW_WC_RECV)); /* A has no receive posted */
	oracle(b->completed < b->posted);    /* nothing completes twice or unposted */
	oracle(wc->wr_id == b->completed);   /* in posting order (IBA 10.8.3) */
	oracle((unsigned)wc->status < RFW_WC__COUNT);
	oracle(!b->failed || wc->status == RFW_WC_WR_FLUSH_ERR); /* after an error: flushed */
	if (ok)
		oracle(wc->opcode == r->wc_op);
	if (!b->injected) {
		if (r->expect == EXP_LOCAL_ERR)
			oracle(b->failed || is_local_err(wc->status) ||
			       (WAIVED(7) && r->kind == K_INV_PLAIN && ok));
		else if (!b->failed)
			oracle(ok || (b->impaired && (wc->status == RFW_WC_RETRY_EXC_ERR ||
			                              wc->status == RFW_WC_RNR_RETRY_EXC_ERR)));
		if (ok && r->big_read) /* every byte of the 256-PSN READ */
			oracle(memcmp(f->big[0] + CANARY, f->big[1] + CANARY, BIGLEN) == 0);
		if (r->consumes_recv)
			*(ok ? &b->recv_sends_ok : &b->recv_sends_err) += 1;
	}
	if (!ok)
		b->failed = true;
	b->completed++;
}

/* A receive completion on B: the next receive posted, once; replenished like an application. */
static void recv_done(struct fz *f, const struct rfw_wc *wc)
{
	struct book *b = &f->bk;

	oracle(wc->opcode & RFW_WC_RECV);
	oracle(b->recv_done < b->recv_posted && wc->wr_id == b->recv_done);
	oracle((unsigned)wc->status < RFW_WC__COUNT);
	oracle(!b->b_failed || wc->status == RFW_WC_WR_FLUSH_ERR);
	b->recv_done++;
	if (wc->status != RFW_WC_SUCCESS) {
		b->b_failed = true;
		return;
	}
	b->recv_ok++;
	post_recv_b(f);
}

/* A's Estats records so far: each one A's QP's (slot 0), of an op and status that exist, with
 * T1, T5 and T6 known and in order (every WR is signaled: its record ends at its poll). */
static void drain_es(struct fz *f)
{
	struct rfw_es_ring *r = &f->esr;

	oracle(r->prod - r->cons <= 2); /* never more published than the ring holds */
	while (r->cons != r->prod) {
		const struct rfw_es_crec *c = &f->esq[r->cons & 1];
		struct rfw_es_rec rec;
		uint8_t have = RFW_ES_META_HAVE(c->meta);

		rfw_es_unpack(&rec, c, &f->esq[(r->cons + 1) & 1], 0);
		oracle(have != 0 && RFW_ES_META_SLOT(c->meta) == 0);
		oracle(rec.op < RFW_ES__OPS && rec.st < RFW_ES__STATUSES);
		oracle((rec.have & (1 | 16 | 32)) == (1 | 16 | 32));
		oracle(rec.t[4] >= rec.t[0] && rec.t[5] >= rec.t[4]);
		r->cons += (have & RFW_ES_WIDE) ? 2 : 1;
		f->es_records++;
	}
}

static void drain_cqs(struct fz *f)
{
	struct rfw_es_trigger tr;
	struct rfw_wc wc[16];
	int n;

	while ((n = rfw_poll_cq(f->cq[0], 16, wc)) > 0) {
		for (int i = 0; i < n; i++)
			send_done(f, &wc[i]);
		drain_es(f);
	}
	/* A record above the threshold, at most one an interval, is what the trigger kept. */
	if (rfw_qp_estats_trigger(f->qp[0], &tr))
		oracle(tr.latency_ns > FZ_ES_THRESHOLD_NS);
	while ((n = rfw_poll_cq(f->cq[1], 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			oracle(wc[i].opcode & RFW_WC_RECV); /* B posts no send */
			recv_done(f, &wc[i]);
		}
}

static void hung_report(const struct fz *f, uint64_t d)
{
#ifdef FZ_DEBUG
	if (d == UINT64_MAX)
		fprintf(stderr,
		        "hung: A state %d rnr_wait %d comp.timer %llu req.idx %u sq_prod %u\n",
		        f->qp[0]->state, f->qp[0]->req.rnr_wait,
		        (unsigned long long)f->qp[0]->comp.timer, (unsigned)f->qp[0]->req.idx,
		        (unsigned)f->qp[0]->sq_prod);
	if (d == UINT64_MAX)
		fprintf(stderr, "hung: comp.idx %u, its state %d, psn_valid %d\n",
		        (unsigned)f->qp[0]->comp.idx,
		        rfw_sq_at(f->qp[0], f->qp[0]->comp.idx)->state,
		        rfw_sq_at(f->qp[0], f->qp[0]->comp.idx)->psn_valid);
	if (d == UINT64_MAX)
		for (uint64_t i = f->bk.completed; i < f->bk.posted; i++)
			fprintf(stderr, "hung: wr %llu kind %d\n", (unsigned long long)i,
			        f->bk.wr[i % WRRING].kind);
#else
	(void)f;
	(void)d;
#endif
}

/*
 * Liveness: run the pair, firing timers as simulated time passes, until every WR posted has
 * completed; within SETTLE_NS of simulated time and SETTLE_ITERS rounds, else trap (a hang or
 * a livelock). Then, if nothing was injected, every SEND / WRITE with immediate that succeeded
 * was received exactly once.
 */
static void settle(struct fz *f)
{
	uint64_t t0 = f->now, bound = f->bk.injected ? SETTLE_INJECTED_NS : SETTLE_NS;

	for (int it = 0; f->bk.completed < f->bk.posted; it++) {
		bool work = false;

#ifdef FZ_DEBUG
		if (!(it < SETTLE_ITERS && f->now - t0 <= bound))
			fprintf(stderr,
			        "settle: it %d, %llu ns, completed %llu of %llu, state %d/%d\n", it,
			        (unsigned long long)(f->now - t0),
			        (unsigned long long)f->bk.completed,
			        (unsigned long long)f->bk.posted, f->qp[0]->state, f->qp[1]->state);
#endif
		oracle(it < SETTLE_ITERS && f->now - t0 <= bound);
		pump(f, 2);
		drain_cqs(f);
		for (int s = 0; s < 2; s++)
			work |= rfw_qp_has_work(f->qp[s], f->now);
		if (!work && f->bk.completed < f->bk.posted) {
			uint64_t d0 = rfw_qp_next_deadline(f->qp[0]);
			uint64_t d1 = rfw_qp_next_deadline(f->qp[1]);
			uint64_t d = d0 < d1 ? d0 : d1;

			hung_report(f, d);
			/* WRs outstanding, nothing to send, no timer: hung */
			oracle(d != UINT64_MAX);
			f->now = d > f->now ? d : f->now + 1000;
			for (int s = 0; s < 2; s++)
				rfw_qp_timer(f->qp[s], f->now);
		}
	}
	pump(f, 4); /* the last ACKs, and B's receive completions */
	drain_cqs(f);
	/* Exactly one Estats record for every send completion polled: drained, or dropped (and
	 * counted) when the ring was full. */
	oracle(f->es_records + f->esr.dropped == f->bk.completed);
	if (!f->bk.injected && !f->bk.b_failed)
		oracle(f->bk.recv_ok >= f->bk.recv_sends_ok &&
		       f->bk.recv_ok <= f->bk.recv_sends_ok + f->bk.recv_sends_err);
}

static void setup(struct fz *f, bool sr, bool srq)
{
	for (int s = 0; s < 2; s++) {
		struct rfw_dev_attr da = {.ack_every = 4,
		                          .max_unacked_psns = 32,
		                          .qpn_base = 17 + 10 * (uint32_t)s,
		                          .sr_window = 64, /* small: its wrap is reachable */
		                          .estats = s == 0,
		                          .estats_interval_ns = 1000000,
		                          .estats_threshold_ns = FZ_ES_THRESHOLD_NS};
		struct rfw_qp_init_attr qa = {0};

		f->dev[s] = rfw_dev_create(&da, &fz_ops, &f->out[s]);
		if (s == 0) { /* before the QP: its records go to the ring */
			f->esr.q = f->esq;
			f->esr.mask = 1;
			rfw_dev_estats_ring(f->dev[0], &f->esr);
		}
		f->pd[s] = rfw_alloc_pd(f->dev[s]);
		f->cq[s] = rfw_create_cq(f->dev[s], 64);
		if (s == 1 && srq) {
			struct rfw_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 2}};

			f->srq = rfw_create_srq(f->pd[1], &sa);
			qa.srq = f->srq;
		}
		qa.send_cq = qa.recv_cq = f->cq[s];
		qa.cap.max_send_wr = 8;
		qa.cap.max_recv_wr = 4;
		qa.cap.max_send_sge = 2;
		qa.cap.max_recv_sge = 2;
		f->qp[s] = rfw_create_qp(f->pd[s], &qa);
		f->mem[s] = malloc(MRLEN + 2 * CANARY);
		memset(f->mem[s], 0xa5, MRLEN + 2 * CANARY);
		f->mr[s] = rfw_reg_mr(f->pd[s], f->mem[s] + CANARY, MRLEN,
		                      RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
		                          RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC);
		f->big[s] = malloc(BIGLEN + 2 * CANARY);
		memset(f->big[s], 0xa5, BIGLEN + 2 * CANARY);
		f->bigmr[s] = rfw_reg_mr(f->pd[s], f->big[s] + CANARY, BIGLEN,
		                         RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_READ);
	}
	f->spare = rfw_reg_mr(f->pd[0], f->mem[0] + CANARY, 64, RFW_ACCESS_LOCAL_WRITE);
	for (uint32_t i = 0; i < BIGLEN; i++) /* the READ source: every byte distinct by place */
		f->big[1][CANARY + i] = (uint8_t)(i * 7 + (i >> 8));
	fz_connect(f->qp[0], rfw_qp_num(f->qp[1]), 0xfffff0, 0x1000, sr);
	fz_connect(f->qp[1], rfw_qp_num(f->qp[0]), 0x1000, 0xfffff0, sr);
	for (int i = 0; i < NRECV; i++)
		post_recv_b(f);
}

static void teardown(struct fz *f)
{
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < CANARY; i++) {
			oracle(f->mem[s][i] == 0xa5 && f->mem[s][CANARY + MRLEN + i] == 0xa5);
			oracle(f->big[s][i] == 0xa5 && f->big[s][CANARY + BIGLEN + i] == 0xa5);
		}
		rfw_destroy_qp(f->qp[s]);
		if (s == 1 && f->srq != NULL)
			oracle(rfw_destroy_srq(f->srq) == 0);
		rfw_dereg_mr(f->mr[s]);
		rfw_dereg_mr(f->bigmr[s]);
		if (s == 0)
			rfw_dereg_mr(f->spare);
		rfw_destroy_cq(f->cq[s]);
		rfw_dealloc_pd(f->pd[s]);
		rfw_dev_destroy(f->dev[s]);
		free(f->mem[s]);
		free(f->big[s]);
	}
}

/* Rewrite a parsed packet per the record's control bits (see the top of the file). */
static void shape(struct fz *f, uint8_t ctl, int to, uint8_t *pkt, const struct rfw_ib_pkt *p)
{
	struct rfw_qp *qp = f->qp[to];

	if (ctl & 2)
		rfw_put_be24(pkt + 5, rfw_qp_num(qp));
	if (ctl & 4) {
		uint32_t base = (p->op->flags & RFW_OPF_REQUEST) ? qp->resp.psn : qp->comp.psn;
		rfw_bth_set_psn(pkt, rfw_psn_add(base, (uint32_t)(int8_t)pkt[11]));
	}
	if ((ctl & 8) && (p->op->hdrs & (RFW_HDR_RETH | RFW_HDR_ATOMICETH))) {
		/* Both headers start right after the BTH: VA then R_Key. */
		uint64_t va = rfw_get_be64(pkt + RFW_BTH_LEN) % MRLEN;

		rfw_put_be64(pkt + RFW_BTH_LEN, (uint64_t)(uintptr_t)(f->mem[to] + CANARY) + va);
		rfw_put_be32(pkt + RFW_BTH_LEN + 8, rfw_mr_rkey(f->mr[to]));
	}
	if ((ctl & 8) && (ctl & 0x80) && (p->op->flags & RFW_OPF_WRITE) &&
	    p->payload_len >= RFW_SRETH_LEN) {
		/* The SRETH: VA of this packet's data, then the R_Key. */
		uint8_t *e = pkt + p->op->hdr_len;
		uint64_t va = rfw_get_be64(e) % MRLEN;

		rfw_put_be64(e, (uint64_t)(uintptr_t)(f->mem[to] + CANARY) + va);
		rfw_put_be32(e + 8, rfw_mr_rkey(f->mr[to]));
	}
	if (ctl & 0x80)
		pkt[8] = (uint8_t)((pkt[8] & 0x80) | RFW_SR_MARK);
}

static void run_one(const uint8_t *data, size_t size, bool sr, bool srq)
{
	static struct fz f;
	static uint8_t pkt[MAXPKT];

	memset(&f, 0, sizeof(f));
	setup(&f, sr, srq);
	post_one(&f, K_WRITE);
	post_one(&f, K_READ);
	post_one(&f, K_FETCH_ADD);
	/* Some requests in flight, their responses pending at B. */
	rfw_qp_tx_burst(f.qp[0], 4, 0);
	for (uint32_t i = 0; i < f.out[0].n; i++)
		deliver(&f, 1, f.out[0].buf[i], f.out[0].len[i], false);
	f.out[0].n = 0;

	while (size >= 3) {
		uint8_t ctl = data[0];
		size_t len = ((size_t)data[1] << 8) | data[2];
		int to = ctl & 1 ? 0 : 1;
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
			shape(&f, ctl, to, pkt, &p);
			f.bk.injected = true;
		} else if (len >= 2) {
			f.impair = pkt[1];
		}
		if (ctl & 0x40) {
			post_one(&f, len ? pkt[0] : 0);
			/* The host's window (nic/'s var_win_bytes) moves too, shrinking under
			 * packets in flight: 0 (the device's) .. 14 PSNs at MTU 256; go-back-N
			 * only. */
			rfw_qp_set_window_bytes(f.qp[0], (uint64_t)((len ? pkt[0] : 0) >> 5) * 512);
		}
		deliver(&f, to, pkt, (uint32_t)len, ctl & 0x10);
		if (ctl & 0x20) {
			f.now += (uint64_t)(len ? pkt[0] : 1) * 64000;
			for (int s = 0; s < 2; s++)
				rfw_qp_timer(f.qp[s], f.now);
		}
		pump(&f, 2);
		drain_cqs(&f);
	}
	settle(&f);
	teardown(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run_one(data, size, false, false);
	run_one(data, size, true, false);
	run_one(data, size, true, true);
	return 0;
}
