/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ibv_wr_* post API (struct ibv_qp_ex) on rocefw QPs created with send_ops_flags: between
 * ibv_wr_start and ibv_wr_complete each operation call opens a work request in a batch (its
 * wr_id and flags from qpx->wr_id / wr_flags at that moment), the ibv_wr_set_* calls give it
 * its data, and ibv_wr_complete posts the batch with rfw_post_send under the engine lock, then
 * rings the doorbell. An error during the batch (too many WRs, too many SGEs, inline data too
 * long, an operation rocefw lacks) is remembered and returned by ibv_wr_complete, which then
 * posts nothing. Inline data is copied into the batch and handed to the transport as an
 * IBV_SEND_INLINE work request (copied again at post, so the caller's buffer is free at once).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/vrb.h"

/* The operations rocefw's transport performs (IBV_QP_EX_WITH_*). */
#define QPEX_OPS                                                                                   \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |    \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |                                 \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |                 \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW)

struct wr_slot {
	struct rfw_send_wr wr;
	struct rfw_sge *sge; /* max_send_sge entries */
	uint8_t *inl;        /* max_inline_data bytes */
};

struct rfw_vrb_wr_batch {
	uint32_t cap, n;
	int err;
	uint32_t max_sge, max_inline;
	struct wr_slot *slot;
};

static struct rfw_vrb_wr_batch *batch_of(struct ibv_qp_ex *qpx)
{
	return ((struct rfw_vrb_qp *)qpx)->batch;
}

/* A new WR of the batch for @op, or NULL (the error is kept for wr_complete). */
static struct wr_slot *begin(struct ibv_qp_ex *qpx, enum rfw_wr_opcode op)
{
	struct rfw_vrb_wr_batch *b = batch_of(qpx);
	struct wr_slot *s;

	if (b->n == b->cap) {
		b->err = ENOMEM; /* more WRs than the send queue holds */
		return NULL;
	}
	s = &b->slot[b->n++];
	memset(&s->wr, 0, sizeof(s->wr));
	s->wr.wr_id = qpx->wr_id;
	s->wr.send_flags = qpx->wr_flags;
	s->wr.opcode = op;
	s->wr.sg_list = s->sge;
	return s;
}

/* The WR the ibv_wr_set_* calls apply to: the last one begun. */
static struct wr_slot *last(struct ibv_qp_ex *qpx)
{
	struct rfw_vrb_wr_batch *b = batch_of(qpx);

	if (b->n == 0) {
		b->err = EINVAL;
		return NULL;
	}
	return &b->slot[b->n - 1];
}

static void wr_rdma(struct ibv_qp_ex *qpx, enum rfw_wr_opcode op, uint32_t rkey, uint64_t raddr,
                    uint32_t imm)
{
	struct wr_slot *s = begin(qpx, op);

	if (s == NULL)
		return;
	s->wr.wr.rdma.remote_addr = raddr;
	s->wr.wr.rdma.rkey = rkey;
	s->wr.imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr)
{
	wr_rdma(qpx, RFW_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	wr_rdma(qpx, RFW_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, be32toh(imm));
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr)
{
	wr_rdma(qpx, RFW_WR_RDMA_READ, rkey, raddr, 0);
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	begin(qpx, RFW_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct wr_slot *s = begin(qpx, RFW_WR_SEND_WITH_IMM);

	if (s != NULL)
		s->wr.imm_data = be32toh(imm);
}

static void wr_inv(struct ibv_qp_ex *qpx, enum rfw_wr_opcode op, uint32_t rkey)
{
	struct wr_slot *s = begin(qpx, op);

	if (s != NULL)
		s->wr.invalidate_rkey = rkey;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	wr_inv(qpx, RFW_WR_SEND_WITH_INV, rkey);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	wr_inv(qpx, RFW_WR_LOCAL_INV, rkey);
}

static void wr_atomic(struct ibv_qp_ex *qpx, enum rfw_wr_opcode op, uint32_t rkey, uint64_t raddr,
                      uint64_t compare_add, uint64_t swap)
{
	struct wr_slot *s = begin(qpx, op);

	if (s == NULL)
		return;
	s->wr.wr.atomic.remote_addr = raddr;
	s->wr.wr.atomic.rkey = rkey;
	s->wr.wr.atomic.compare_add = compare_add;
	s->wr.wr.atomic.swap = swap;
}

static void wr_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr, uint64_t compare,
                       uint64_t swap)
{
	wr_atomic(qpx, RFW_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare, swap);
}

static void wr_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	wr_atomic(qpx, RFW_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

static void set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct wr_slot *s = last(qpx);

	if (s == NULL)
		return;
	s->sge[0] = (struct rfw_sge){.addr = addr, .length = length, .lkey = lkey};
	s->wr.num_sge = 1;
}

static void set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list)
{
	struct rfw_vrb_wr_batch *b = batch_of(qpx);
	struct wr_slot *s = last(qpx);

	if (s == NULL)
		return;
	if (n > b->max_sge) {
		b->err = EINVAL;
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->sge[i] = (struct rfw_sge){
		    .addr = list[i].addr, .length = list[i].length, .lkey = list[i].lkey};
	s->wr.num_sge = (int)n;
}

static void set_inline_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs)
{
	struct rfw_vrb_wr_batch *b = batch_of(qpx);
	struct wr_slot *s = last(qpx);
	size_t len = 0;

	if (s == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		if (bufs[i].length > b->max_inline - len) {
			b->err = EINVAL; /* more than max_inline_data */
			return;
		}
		memcpy(s->inl + len, bufs[i].addr, bufs[i].length);
		len += bufs[i].length;
	}
	s->sge[0] = (struct rfw_sge){.addr = (uintptr_t)s->inl, .length = (uint32_t)len};
	s->wr.num_sge = 1;
	s->wr.send_flags |= RFW_SEND_INLINE;
}

static void set_inline(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf one = {.addr = addr, .length = length};

	set_inline_list(qpx, 1, &one);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct rfw_vrb_wr_batch *b = batch_of(qpx);

	b->n = 0;
	b->err = 0;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	wr_start(qpx);
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qpx;
	struct rfw_vrb_wr_batch *b = q->batch;
	struct rfw_eng *e = q->ctx->eng;
	struct rfw_send_wr *bad;
	int ret = b->err;
	uint64_t now;

	if (ret == 0) {
		rfw_eng_lock(e);
		now = rfw_eng_clock_ns(e);
		for (uint32_t i = 0; i < b->n && ret == 0; i++)
			ret = rfw_post_send(q->qp, &b->slot[i].wr, &bad, now);
		rfw_vrb_doorbell(q);
		rfw_eng_unlock(e);
		rfw_vrb_progress_doorbell();
	}
	wr_start(qpx);
	return ret;
}

/* Operations and address setters rocefw's RC QPs cannot take: the batch fails. */
static void wr_unsupported(struct ibv_qp_ex *qpx)
{
	batch_of(qpx)->err = rfw_vrb_unsupported("ibv_wr_* (tso, ud/xrc address, atomic write)",
	                                         "not an operation of rocefw's RC QPs");
}

static void bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
                    const struct ibv_mw_bind_info *bi)
{
	struct wr_slot *s = begin(qpx, RFW_WR_BIND_MW);

	if (s != NULL)
		rfw_vrb_bind_fields(mw, rkey, bi, &s->wr);
}

static void send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	wr_unsupported(qpx);
}

static void ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct wr_slot *s = last(qpx);

	if (s == NULL)
		return;
	if (ah != NULL && rfw_vrb_ah_resolve((struct rfw_vrb_ah *)ah) != 0) {
		batch_of(qpx)->err = EHOSTUNREACH;
		return;
	}
	s->wr.wr.ud.ah = ah != NULL ? ((struct rfw_vrb_ah *)ah)->ah : NULL;
	s->wr.wr.ud.remote_qpn = qpn;
	s->wr.wr.ud.remote_qkey = qkey;
}

static void xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	(void)srqn;
	wr_unsupported(qpx);
}

static void atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr, const void *wr)
{
	(void)rkey, (void)raddr, (void)wr;
	wr_unsupported(qpx);
}

static int batch_alloc(struct rfw_vrb_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct rfw_vrb_wr_batch *b;
	uint32_t i;

	if (rfw_vrb_query_qp(&q->ibvx.qp_base, &a, IBV_QP_CAP, &ia) != 0)
		return EINVAL;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return ENOMEM;
	q->batch = b;
	b->cap = a.cap.max_send_wr;
	b->max_sge = a.cap.max_send_sge;
	b->max_inline = a.cap.max_inline_data;
	b->slot = calloc(b->cap, sizeof(*b->slot));
	if (b->slot == NULL)
		return ENOMEM;
	for (i = 0; i < b->cap; i++) {
		b->slot[i].sge = calloc(b->max_sge, sizeof(struct rfw_sge));
		b->slot[i].inl = malloc(b->max_inline ? b->max_inline : 1);
		if (b->slot[i].sge == NULL || b->slot[i].inl == NULL)
			return ENOMEM;
	}
	return 0;
}

int rfw_vrb_qp_ex_init(struct rfw_vrb_qp *q, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *x = &q->ibvx;
	int ret;

	if (send_ops_flags & ~(uint64_t)QPEX_OPS)
		return rfw_vrb_unsupported("ibv_create_qp_ex", "send_ops_flags with memory window "
		                                               "binding, TSO or atomic write");
	ret = batch_alloc(q);
	if (ret != 0) {
		rfw_vrb_qp_ex_free(q);
		return ret;
	}
	x->wr_atomic_cmp_swp = wr_cmp_swp;
	x->wr_atomic_fetch_add = wr_fetch_add;
	x->wr_bind_mw = bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = send_tso;
	x->wr_set_ud_addr = ud_addr;
	x->wr_set_xrc_srqn = xrc_srqn;
	x->wr_set_inline_data = set_inline;
	x->wr_set_inline_data_list = set_inline_list;
	x->wr_set_sge = set_sge;
	x->wr_set_sge_list = set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_write = atomic_write;
	return 0;
}

void rfw_vrb_qp_ex_free(struct rfw_vrb_qp *q)
{
	struct rfw_vrb_wr_batch *b = q->batch;

	if (b == NULL)
		return;
	for (uint32_t i = 0; b->slot != NULL && i < b->cap; i++) {
		free(b->slot[i].sge);
		free(b->slot[i].inl);
	}
	free(b->slot);
	free(b);
	q->batch = NULL;
}
