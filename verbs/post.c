/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send / ibv_post_recv of the rocefw device (reached through context->ops): each work
 * request is translated into the transport's and posted under the engine lock; then the
 * doorbell (the QP goes on the NIC's ready list; a sleeping progress thread is woken). The
 * scatter/gather lists are handed over as they are: struct ibv_sge and struct rfw_sge have the
 * same layout (checked below).
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>

#include "verbs/vrb.h"

_Static_assert(sizeof(struct ibv_sge) == sizeof(struct rfw_sge) &&
                   offsetof(struct ibv_sge, addr) == offsetof(struct rfw_sge, addr) &&
                   offsetof(struct ibv_sge, length) == offsetof(struct rfw_sge, length) &&
                   offsetof(struct ibv_sge, lkey) == offsetof(struct rfw_sge, lkey),
               "sge layout");
_Static_assert((int)IBV_WR_RDMA_WRITE == (int)RFW_WR_RDMA_WRITE &&
                   (int)IBV_WR_SEND == (int)RFW_WR_SEND &&
                   (int)IBV_WR_RDMA_READ == (int)RFW_WR_RDMA_READ &&
                   (int)IBV_WR_ATOMIC_FETCH_AND_ADD == (int)RFW_WR_ATOMIC_FETCH_AND_ADD &&
                   (int)IBV_WR_SEND_WITH_INV == (int)RFW_WR_SEND_WITH_INV &&
                   (int)IBV_WR_BIND_MW == (int)RFW_WR_BIND_MW &&
                   (int)IBV_WR_LOCAL_INV == (int)RFW_WR_LOCAL_INV,
               "work request opcodes");
_Static_assert((int)IBV_WC_GRH == (int)RFW_WC_GRH && (int)IBV_WC_WITH_IMM == (int)RFW_WC_WITH_IMM,
               "completion flags");
_Static_assert((int)IBV_SEND_FENCE == (int)RFW_SEND_FENCE &&
                   (int)IBV_SEND_SIGNALED == (int)RFW_SEND_SIGNALED &&
                   (int)IBV_SEND_SOLICITED == (int)RFW_SEND_SOLICITED &&
                   (int)IBV_SEND_INLINE == (int)RFW_SEND_INLINE,
               "send flags");

#define SEND_FLAGS_KNOWN (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE)

static int send_wr_of(const struct ibv_send_wr *w, struct rfw_send_wr *r, bool ud)
{
	if ((unsigned)w->opcode > IBV_WR_SEND_WITH_INV)
		return rfw_vrb_unsupported("ibv_post_send", "opcode (TSO, driver-specific, "
		                                            "atomic write)");
	if (w->send_flags & ~(unsigned)SEND_FLAGS_KNOWN)
		return rfw_vrb_unsupported("ibv_post_send", "send flag IBV_SEND_IP_CSUM");
	r->wr_id = w->wr_id;
	r->next = NULL;
	r->sg_list = (struct rfw_sge *)(void *)w->sg_list;
	r->num_sge = w->num_sge;
	r->opcode = (enum rfw_wr_opcode)w->opcode;
	r->send_flags = w->send_flags;
	if (w->opcode == IBV_WR_SEND_WITH_INV || w->opcode == IBV_WR_LOCAL_INV)
		r->invalidate_rkey = w->invalidate_rkey;
	else
		r->imm_data = be32toh(w->imm_data);
	if (w->opcode == IBV_WR_BIND_MW) {
		rfw_vrb_bind_fields(w->bind_mw.mw, w->bind_mw.rkey, &w->bind_mw.bind_info, r);
	} else if (ud) {
		r->wr.ud.ah = w->wr.ud.ah != NULL ? ((struct rfw_vrb_ah *)w->wr.ud.ah)->ah : NULL;
		r->wr.ud.remote_qpn = w->wr.ud.remote_qpn;
		r->wr.ud.remote_qkey = w->wr.ud.remote_qkey;
	} else if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	           w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		r->wr.atomic.remote_addr = w->wr.atomic.remote_addr;
		r->wr.atomic.compare_add = w->wr.atomic.compare_add;
		r->wr.atomic.swap = w->wr.atomic.swap;
		r->wr.atomic.rkey = w->wr.atomic.rkey;
	} else {
		r->wr.rdma.remote_addr = w->wr.rdma.remote_addr;
		r->wr.rdma.rkey = w->wr.rdma.rkey;
	}
	return 0;
}

/*
 * After posting (which rang the NIC's doorbell: the transport's io_ops.doorbell puts the QP on
 * the firmware's ready list), the NIC runs once here, in both modes: the posting thread holds
 * the engine lock already, and the first packets leave without waiting for the progress thread
 * to be scheduled. Engine lock held.
 */
void rfw_vrb_doorbell(struct rfw_vrb_qp *q)
{
	rfw_vrb_progress_step(q->ctx->eng);
}

/* UD: every AH of the list has its MAC (a flag test after the first datagram to it). */
static int ud_resolve(struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	for (; wr != NULL; wr = wr->next) {
		int ret = wr->wr.ud.ah != NULL
		              ? rfw_vrb_ah_resolve((struct rfw_vrb_ah *)wr->wr.ud.ah)
		              : 0;

		if (ret != 0) {
			*bad = wr;
			return ret;
		}
	}
	return 0;
}

int rfw_vrb_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qp;
	struct rfw_eng *e = q->ctx->eng;
	struct rfw_send_wr r, *rbad;
	int ret = 0;
	uint64_t now;

	if (qp->qp_type == IBV_QPT_UD && (ret = ud_resolve(wr, bad)) != 0)
		return ret;
	rfw_eng_lock(e);
	now = rfw_eng_clock_ns(e);
	for (; wr != NULL; wr = wr->next) {
		ret = send_wr_of(wr, &r, qp->qp_type == IBV_QPT_UD);
		if (ret == 0)
			ret = rfw_post_send(q->qp, &r, &rbad, now);
		if (ret != 0) {
			*bad = wr;
			break;
		}
	}
	rfw_vrb_doorbell(q);
	rfw_eng_unlock(e);
	rfw_vrb_progress_doorbell();
	return ret;
}

int rfw_vrb_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rfw_vrb_qp *q = (struct rfw_vrb_qp *)qp;
	struct rfw_eng *e = q->ctx->eng;
	struct rfw_recv_wr r, *rbad;
	int ret = 0;
	uint64_t now;

	rfw_eng_lock(e);
	now = rfw_eng_clock_ns(e);
	for (; wr != NULL; wr = wr->next) {
		r.wr_id = wr->wr_id;
		r.next = NULL;
		r.sg_list = (struct rfw_sge *)(void *)wr->sg_list;
		r.num_sge = wr->num_sge;
		ret = rfw_post_recv(q->qp, &r, &rbad, now);
		if (ret != 0) {
			*bad = wr;
			break;
		}
	}
	rfw_vrb_doorbell(q);
	rfw_eng_unlock(e);
	rfw_vrb_progress_doorbell();
	return ret;
}
