/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Extended CQs (ibv_create_cq_ex): the same CQ and ring as ibv_create_cq (cq.c), read through
 * ibv_start_poll / ibv_next_poll / ibv_end_poll and the ibv_wc_read_* functions. start_poll
 * takes the CQ's consumer lock and makes the ring's oldest completion current; next_poll
 * consumes it and makes the next one current; end_poll consumes the current one and releases
 * the lock. ENOENT (CQ empty) from start_poll leaves nothing held, as the API says (end_poll is
 * not called then). Completions carry the standard fields only: no timestamps (rocefw's
 * per-WQE times are in Estats), VLAN, flow tag or tag matching.
 */
#include <endian.h>
#include <errno.h>

#include "verbs/vrb.h"

static struct rfw_vrb_cq *cq_of(struct ibv_cq_ex *x)
{
	return (struct rfw_vrb_cq *)x;
}

static const struct rfw_wc *cur(struct ibv_cq_ex *x)
{
	struct rfw_vrb_cq *q = cq_of(x);

	return &q->ring[q->cons & q->mask];
}

/* Make ring[cons] current, or ENOENT when the ring is empty. */
static int load(struct rfw_vrb_cq *q)
{
	const struct rfw_wc *w;

	if (__atomic_load_n(&q->prod, __ATOMIC_ACQUIRE) == q->cons)
		return ENOENT;
	w = &q->ring[q->cons & q->mask];
	q->ibvx.wr_id = w->wr_id;
	q->ibvx.status = (enum ibv_wc_status)w->status;
	return 0;
}

static void consume(struct rfw_vrb_cq *q)
{
	__atomic_store_n(&q->cons, q->cons + 1, __ATOMIC_RELEASE);
}

static int start_poll(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	struct rfw_vrb_cq *q = cq_of(x);
	int ret;

	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	rfw_vrb_cq_drive(q);
	pthread_mutex_lock(&q->cons_lock);
	ret = load(q);
	if (ret != 0) {
		pthread_mutex_unlock(&q->cons_lock);
		return ret;
	}
	q->polling = true;
	return 0;
}

static int next_poll(struct ibv_cq_ex *x)
{
	struct rfw_vrb_cq *q = cq_of(x);
	int ret;

	if (q->polling)
		consume(q);
	ret = load(q);
	q->polling = ret == 0;
	return ret;
}

static void end_poll(struct ibv_cq_ex *x)
{
	struct rfw_vrb_cq *q = cq_of(x);

	if (q->polling)
		consume(q);
	q->polling = false;
	pthread_mutex_unlock(&q->cons_lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *x)
{
	return (enum ibv_wc_opcode)cur(x)->opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *x)
{
	return cur(x)->vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *x)
{
	return cur(x)->byte_len;
}

/* ImmDt in network order, or the invalidated rkey (ibv_wc_read_invalidated_rkey reads it
 * through this function too). */
static __be32 read_imm_data(struct ibv_cq_ex *x)
{
	const struct rfw_wc *w = cur(x);

	if (w->wc_flags & RFW_WC_WITH_INV)
		return (__be32)w->invalidated_rkey;
	return htobe32(w->imm_data);
}

static uint32_t read_qp_num(struct ibv_cq_ex *x)
{
	return cur(x)->qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *x)
{
	return cur(x)->src_qp;
}

static uint32_t read_zero32(struct ibv_cq_ex *x)
{
	(void)x;
	return 0; /* slid (no LIDs on RoCE) */
}

static unsigned int read_wc_flags(struct ibv_cq_ex *x)
{
	return cur(x)->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
}

static uint8_t read_zero8(struct ibv_cq_ex *x)
{
	(void)x;
	return 0; /* sl, dlid_path_bits */
}

struct ibv_cq_ex *rfw_vrb_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
{
	struct ibv_cq *cq;
	struct ibv_cq_ex *x;

	if ((a->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) != 0 ||
	    (a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) != 0) {
		errno =
		    rfw_vrb_unsupported("ibv_create_cq_ex", "completion timestamps, VLAN, flow "
		                                            "tag, tag matching or a parent domain");
		return NULL;
	}
	if (a->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS || a->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = rfw_vrb_create_cq(c, (int)a->cqe, a->cq_context, a->channel, (int)a->comp_vector);
	if (cq == NULL)
		return NULL;
	x = &((struct rfw_vrb_cq *)cq)->ibvx;
	x->start_poll = start_poll;
	x->next_poll = next_poll;
	x->end_poll = end_poll;
	x->read_opcode = read_opcode;
	x->read_vendor_err = read_vendor_err;
	x->read_byte_len = read_byte_len;
	x->read_imm_data = read_imm_data;
	x->read_qp_num = read_qp_num;
	x->read_src_qp = read_src_qp;
	x->read_wc_flags = read_wc_flags;
	x->read_slid = read_zero32;
	x->read_sl = read_zero8;
	x->read_dlid_path_bits = read_zero8;
	return x;
}
