/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder (IBA 9.7.5.1): PSN check against the expected PSN, duplicate detection and
 * replay, opcode sequence, resources, length and R_Key checks, execution, completion and
 * acknowledgement. Responses are queued in PSN order (ACKs coalesce at the tail) and sent by
 * rfw_resp_tx() when the host asks the QP for packets. Error states map one to one to NAK
 * syndromes, as in rxe_resp.c.
 */
#include <string.h>

#include "rfw_int.h"

enum resp_state {
	RESPST_CHK_PSN,
	RESPST_CHK_OP_SEQ,
	RESPST_CHK_OP_VALID,
	RESPST_CHK_RESOURCE,
	RESPST_CHK_LENGTH,
	RESPST_CHK_RKEY,
	RESPST_EXECUTE,
	RESPST_READ_REPLY,
	RESPST_ATOMIC_REPLY,
	RESPST_COMPLETE,
	RESPST_ACKNOWLEDGE,
	RESPST_DUPLICATE_REQUEST,
	RESPST_ERR_PSN_OUT_OF_SEQ,
	RESPST_ERR_RNR,
	RESPST_ERR_INVALID_REQUEST,
	RESPST_ERR_LENGTH,
	RESPST_ERR_RKEY_VIOLATION,
	RESPST_ERR_REMOTE_OP,
	RESPST_EXIT,
	RESPST__COUNT
};

static const char *const resp_state_names[RESPST__COUNT] = {
    [RESPST_CHK_PSN] = "CHECK PSN",
    [RESPST_CHK_OP_SEQ] = "CHECK OP SEQ",
    [RESPST_CHK_OP_VALID] = "CHECK OP VALID",
    [RESPST_CHK_RESOURCE] = "CHECK RESOURCE",
    [RESPST_CHK_LENGTH] = "CHECK LENGTH",
    [RESPST_CHK_RKEY] = "CHECK RKEY",
    [RESPST_EXECUTE] = "EXECUTE",
    [RESPST_READ_REPLY] = "READ REPLY",
    [RESPST_ATOMIC_REPLY] = "ATOMIC REPLY",
    [RESPST_COMPLETE] = "COMPLETE",
    [RESPST_ACKNOWLEDGE] = "ACKNOWLEDGE",
    [RESPST_DUPLICATE_REQUEST] = "DUPLICATE REQUEST",
    [RESPST_ERR_PSN_OUT_OF_SEQ] = "ERR PSN OUT OF SEQ",
    [RESPST_ERR_RNR] = "ERR RNR",
    [RESPST_ERR_INVALID_REQUEST] = "ERR INVALID REQUEST",
    [RESPST_ERR_LENGTH] = "ERR LENGTH",
    [RESPST_ERR_RKEY_VIOLATION] = "ERR RKEY VIOLATION",
    [RESPST_ERR_REMOTE_OP] = "ERR REMOTE OP",
    [RESPST_EXIT] = "EXIT",
};

const char *rfw_resp_state_name(int s);
const char *rfw_resp_state_name(int s)
{
	return (unsigned)s < RESPST__COUNT ? resp_state_names[s] : "?";
}

struct resp_ctx {
	struct rfw_qp *qp;
	const struct rfw_ib_pkt *pkt;
	uint32_t flags; /* pkt->op->flags */
	struct rfw_mr *mr;
};

#define ACK_SYNDROME RFW_AETH_SYNDROME(RFW_AETH_ACK, 0x1f) /* no end-to-end credits */

void rfw_resp_reset(struct rfw_qp *qp)
{
	struct rfw_resp *r = &qp->resp;

	r->psn = qp->attr.rq_psn;
	r->ack_psn = r->psn;
	r->msn = 0;
	r->nak_sent = false;
	r->cls = MSG_NONE;
	r->send_off = 0;
	r->have_rwqe = false;
	r->wrkey = 0;
	r->wleft = r->wtotal = 0;
	r->res_next = 0;
	memset(r->res, 0, r->nres * sizeof(*r->res));
	r->rsp_prod = r->rsp_cons = 0;
	r->nak_pending = false;
	r->cnp_pending = false;
	r->cnp_ever = false;
}

/* ---- the response queue ---- */

static bool rsp_full(const struct rfw_resp *r)
{
	return r->rsp_prod - r->rsp_cons >= r->nrsp;
}

/* The pending NAK goes into the ring first, before anything queued after it. */
static void rsp_flush_nak(struct rfw_resp *r)
{
	if (r->nak_pending && !rsp_full(r)) {
		r->rsp[r->rsp_prod++ & (RFW_RSP_RING - 1)] = r->nak_pend;
		r->nak_pending = false;
	}
}

static struct rfw_rsp *rsp_push(struct rfw_qp *qp)
{
	struct rfw_resp *r = &qp->resp;

	rsp_flush_nak(r);
	if (r->nak_pending || rsp_full(r)) {
		rfw_cnt(qp, RFW_CNT_resp_queue_full);
		return NULL;
	}
	return &r->rsp[r->rsp_prod++ & (RFW_RSP_RING - 1)];
}

/*
 * Queue an ACK or NAK. An ACK not yet sent at the tail is overwritten by a newer one (ACK
 * coalescing, IBA 9.7.6.1.1: one ACK may acknowledge several requests).
 */
static inline void queue_ack(struct rfw_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct rfw_resp *r = &qp->resp;
	struct rfw_rsp *t;

	if (r->rsp_prod != r->rsp_cons && !r->nak_pending) {
		t = &r->rsp[(r->rsp_prod - 1) & (RFW_RSP_RING - 1)];
		if (t->kind == RSP_ACK && t->syndrome == ACK_SYNDROME && syndrome == ACK_SYNDROME) {
			t->psn = psn;
			t->msn = r->msn;
			return;
		}
	}
	if (syndrome != ACK_SYNDROME) {
		/*
		 * Never drop a NAK (IBA 9.7.5.1.2: a sequence NAK is sent once per gap and is what
		 * makes the requester go back; a fatal one carries the error the requester must
		 * report). With the ring full it waits in nak_pend; a newer NAK supersedes it.
		 */
		rsp_flush_nak(r);
		if (r->nak_pending || rsp_full(r)) {
			r->nak_pend = (struct rfw_rsp){
			    .kind = RSP_ACK, .syndrome = syndrome, .psn = psn, .msn = r->msn};
			r->nak_pending = true;
			return;
		}
	}
	t = rsp_push(qp);
	if (t == NULL)
		return; /* full (counted): the requester's retry recovers */
	*t = (struct rfw_rsp){.kind = RSP_ACK, .syndrome = syndrome, .psn = psn, .msn = r->msn};
}

static void queue_nak(struct rfw_qp *qp, unsigned code, uint32_t psn)
{
	queue_ack(qp, RFW_AETH_SYNDROME(RFW_AETH_NAK, code), psn);
}

/* The queue entry of READ responses from @psn: @len bytes at @va under @rkey. */
static struct rfw_rsp read_rsp(uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len, uint32_t msn,
                               bool replay)
{
	return (struct rfw_rsp){.kind = RSP_READ,
	                        .psn = psn,
	                        .msn = msn,
	                        .va = va,
	                        .rkey = rkey,
	                        .left = len,
	                        .replay = replay};
}

/*
 * @msn: the MSN with this READ counted, carried by each of its responses (the AETH MSN counts
 * completed messages, IBA ch. 9): a response still queued when later requests execute must
 * not carry their higher MSN, or the MSN goes backwards at the next response queued before it
 * ran (an atomic's, an ACK).
 */
static void queue_read(struct rfw_qp *qp, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len,
                       uint32_t msn, bool replay)
{
	struct rfw_rsp *t = rsp_push(qp);

	if (t)
		*t = read_rsp(psn, va, rkey, len, msn, replay);
}

static void queue_atomic(struct rfw_qp *qp, uint32_t psn, uint64_t orig, uint32_t msn, bool replay)
{
	struct rfw_rsp *t = rsp_push(qp);

	if (t)
		*t = (struct rfw_rsp){
		    .kind = RSP_ATOMIC, .psn = psn, .orig = orig, .msn = msn, .replay = replay};
}

/* The resource the next READ/atomic takes: the oldest of max_dest_rd_atomic (checked > 0). */
static struct rfw_res *next_res(struct rfw_qp *qp)
{
	return &qp->resp.res[qp->resp.res_next % qp->attr.max_dest_rd_atomic];
}

static struct rfw_res *new_res(struct rfw_qp *qp)
{
	struct rfw_res *res = next_res(qp);

	qp->resp.res_next = (qp->resp.res_next + 1) % qp->attr.max_dest_rd_atomic;
	return res;
}

/*
 * Whether the first answer of @res is still queued, unsent: then the requester has more
 * READ/atomics outstanding than we granted (it completes one only on its answer, and replays
 * queue behind the first). A queued replay does not count: it carries its own copy of what it
 * needs, and the requester may have completed the request from the first answer meanwhile.
 * First answers are queued in PSN order (READ and atomic requests execute in PSN order, in
 * both transport modes), so the first one past @res ends the search: @res, the oldest
 * resource, is decided by the first first answer queued, not by a walk of the whole queue.
 */
static bool res_busy(const struct rfw_qp *qp, const struct rfw_res *res)
{
	const struct rfw_resp *r = &qp->resp;

	if (res->type == RES_NONE)
		return false;
	for (uint32_t i = r->rsp_cons; i != r->rsp_prod; i++) {
		const struct rfw_rsp *t = &r->rsp[i & (RFW_RSP_RING - 1)];

		if ((t->kind != RSP_READ && t->kind != RSP_ATOMIC) || t->replay)
			continue;
		if (rfw_psn_cmp(t->psn, res->last_psn) > 0)
			return false;
		if (rfw_psn_cmp(t->psn, res->first_psn) >= 0)
			return true;
	}
	return false;
}

static struct rfw_res *find_res(struct rfw_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < qp->resp.nres; i++) {
		struct rfw_res *res = &qp->resp.res[i];

		if (res->type != RES_NONE && rfw_psn_cmp(psn, res->first_psn) >= 0 &&
		    rfw_psn_cmp(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* ---- states ---- */

static inline enum resp_state chk_psn(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	int32_t d = rfw_psn_cmp(c->pkt->bth.psn, qp->resp.psn);

	if (d > 0) {
		rfw_cnt(qp, RFW_CNT_out_of_sequence);
		return RESPST_ERR_PSN_OUT_OF_SEQ;
	}
	if (d < 0) {
		rfw_cnt(qp, RFW_CNT_duplicate_request);
		return RESPST_DUPLICATE_REQUEST;
	}
	qp->resp.nak_sent = false;
	return RESPST_CHK_OP_SEQ;
}

/* IBA 9.7.5.1.1: FIRST, MIDDLE, LAST of one message, nothing interleaved. */
static inline enum resp_state chk_op_seq(struct resp_ctx *c)
{
	uint8_t cls = c->qp->resp.cls;
	uint32_t f = c->flags;
	bool cont = (f & (RFW_OPF_MIDDLE | RFW_OPF_LAST)) != 0;

	if (cls == MSG_NONE && cont)
		return RESPST_ERR_INVALID_REQUEST;
	if (cls == MSG_SEND && !(cont && (f & RFW_OPF_SEND)))
		return RESPST_ERR_INVALID_REQUEST;
	if (cls == MSG_WRITE && !(cont && (f & RFW_OPF_WRITE)))
		return RESPST_ERR_INVALID_REQUEST;
	return RESPST_CHK_OP_VALID;
}

/* IBA 9.7.5.1.?: the QP must have enabled the remote operation. */
static inline enum resp_state chk_op_valid(struct resp_ctx *c)
{
	unsigned acc = c->qp->attr.qp_access_flags;

	if ((c->flags & RFW_OPF_WRITE) && !(acc & RFW_ACCESS_REMOTE_WRITE))
		return RESPST_ERR_INVALID_REQUEST;
	if ((c->flags & RFW_OPF_READ) && !(acc & RFW_ACCESS_REMOTE_READ))
		return RESPST_ERR_INVALID_REQUEST;
	if ((c->flags & RFW_OPF_ATOMIC) && !(acc & RFW_ACCESS_REMOTE_ATOMIC))
		return RESPST_ERR_INVALID_REQUEST;
	return RESPST_CHK_RESOURCE;
}

/* A receive WQE for a SEND, or for the last packet of a WRITE with immediate. */
static bool needs_rwqe(uint32_t f)
{
	if (f & RFW_OPF_SEND)
		return (f & (RFW_OPF_FIRST | RFW_OPF_ONLY)) != 0;
	return (f & RFW_OPF_WRITE) && (f & RFW_OPF_IMM);
}

__attribute__((always_inline)) static inline enum resp_state chk_resource(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_resp *r = &qp->resp;

	/*
	 * READ/atomic need one of the max_dest_rd_atomic responder resources (IBA 9.7.5.1.3): with
	 * none (0, as rxe's ERR_TOO_MANY_RDMA_ATM_REQ), or with the oldest still answering an
	 * earlier request (the requester has more outstanding than we granted), the request is
	 * invalid: never overwrite a resource in use.
	 */
	if ((c->flags & (RFW_OPF_READ | RFW_OPF_ATOMIC)) &&
	    (qp->attr.max_dest_rd_atomic == 0 || res_busy(qp, next_res(qp))))
		return RESPST_ERR_INVALID_REQUEST;
	if (needs_rwqe(c->flags) && !r->have_rwqe) {
		struct rfw_rwqe *w;

		/* IBA 9.7.5.2.8: no receive WQE -> RNR NAK, nothing consumed. */
		if (rfw_rq_avail(qp, 1) == 0)
			return RESPST_ERR_RNR;
		w = rfw_rq_at(qp, qp->rq_cons);
		if (rfw_sge_check(qp, w->sge, w->num_sge, RFW_ACCESS_LOCAL_WRITE))
			return RESPST_ERR_REMOTE_OP;
		r->have_rwqe = true;
		r->send_off = 0;
	} else if ((c->flags & RFW_OPF_SEND) && r->have_rwqe) {
		/* MIDDLE/LAST: the receive WQE's MRs are looked up again for every packet. */
		struct rfw_rwqe *w = rfw_rq_at(qp, qp->rq_cons);

		if (rfw_sge_check(qp, w->sge, w->num_sge, RFW_ACCESS_LOCAL_WRITE))
			return RESPST_ERR_REMOTE_OP;
	}
	return RESPST_CHK_LENGTH;
}

/* IBA 9.7.5.1.?: FIRST and MIDDLE carry exactly one PMTU, LAST and ONLY at most. */
static inline enum resp_state chk_length(struct resp_ctx *c)
{
	uint32_t f = c->flags;
	uint32_t len = c->pkt->payload_len;
	uint32_t mtu = c->qp->mtu;

	if ((f & (RFW_OPF_FIRST | RFW_OPF_MIDDLE)) && len != mtu)
		return RESPST_ERR_INVALID_REQUEST;
	if ((f & (RFW_OPF_LAST | RFW_OPF_ONLY)) && len > mtu)
		return RESPST_ERR_INVALID_REQUEST;
	/* Only an ONLY may be empty: a LAST carries 1..PMTU bytes (as rxe's check_length). */
	if ((f & RFW_OPF_LAST) && len == 0)
		return RESPST_ERR_INVALID_REQUEST;
	/* A message is at most 2^31 bytes (IBA 9.4): READ and WRITE alike (RETH DMA length). */
	if ((c->pkt->op->hdrs & RFW_HDR_RETH) && c->pkt->reth.dma_len > RFW_MAX_MSG_SIZE)
		return RESPST_ERR_INVALID_REQUEST;
	return RESPST_CHK_RKEY;
}

__attribute__((always_inline)) static inline enum resp_state chk_rkey(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_resp *r = &qp->resp;
	const struct rfw_ib_pkt *p = c->pkt;
	uint32_t f = c->flags;

	if (f & RFW_OPF_WRITE) {
		if (f & (RFW_OPF_FIRST | RFW_OPF_ONLY)) {
			/* IBA 9.7.4.1.?: a zero-length WRITE checks no R_Key. */
			if (p->reth.dma_len) {
				c->mr = rfw_mr_check_remote_inl(qp, p->reth.rkey, p->reth.va,
				                                p->reth.dma_len,
				                                RFW_ACCESS_REMOTE_WRITE);
				if (c->mr == NULL)
					return RESPST_ERR_RKEY_VIOLATION;
			}
			r->wva = p->reth.va;
			r->wrkey = p->reth.rkey;
			r->wleft = r->wtotal = p->reth.dma_len;
			if ((f & RFW_OPF_ONLY) && p->payload_len != p->reth.dma_len)
				return RESPST_ERR_INVALID_REQUEST;
			if ((f & RFW_OPF_FIRST) && p->reth.dma_len <= qp->mtu)
				return RESPST_ERR_INVALID_REQUEST;
		} else {
			/* the packets of a WRITE add up to its DMA length exactly. */
			if (p->payload_len > r->wleft ||
			    ((f & RFW_OPF_LAST) && p->payload_len != r->wleft) ||
			    ((f & RFW_OPF_MIDDLE) && p->payload_len == r->wleft))
				return RESPST_ERR_INVALID_REQUEST;
			/* The MR may have been deregistered or invalidated since the FIRST. */
			if (p->payload_len &&
			    rfw_mr_check_remote_inl(qp, r->wrkey, r->wva, p->payload_len,
			                            RFW_ACCESS_REMOTE_WRITE) == NULL)
				return RESPST_ERR_RKEY_VIOLATION;
		}
		return RESPST_EXECUTE;
	}
	if (f & RFW_OPF_READ) {
		if (p->reth.dma_len &&
		    rfw_mr_check_remote(qp, p->reth.rkey, p->reth.va, p->reth.dma_len,
		                        RFW_ACCESS_REMOTE_READ) == NULL)
			return RESPST_ERR_RKEY_VIOLATION;
		return RESPST_EXECUTE;
	}
	if (f & RFW_OPF_ATOMIC) {
		/* IBA 9.4.5: atomics are 8 bytes on an 8-byte boundary. */
		if (p->atomiceth.va & 7)
			return RESPST_ERR_INVALID_REQUEST;
		c->mr = rfw_mr_check_remote(qp, p->atomiceth.rkey, p->atomiceth.va, 8,
		                            RFW_ACCESS_REMOTE_ATOMIC);
		if (c->mr == NULL)
			return RESPST_ERR_RKEY_VIOLATION;
		return RESPST_EXECUTE;
	}
	/* SEND: the message must fit the receive WQE (IBA 9.7.5.1 -> local length error). */
	if ((uint64_t)r->send_off + p->payload_len > rfw_rq_at(qp, qp->rq_cons)->length)
		return RESPST_ERR_LENGTH;
	/* IBA 10.6: SEND with Invalidate names a fast-registration MR of our PD. */
	if ((f & RFW_OPF_INV) && rfw_mr_invalidatable(qp, p->ieth_rkey) == NULL)
		return RESPST_ERR_INVALID_REQUEST;
	return RESPST_EXECUTE;
}

__attribute__((always_inline)) static inline enum resp_state execute(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_resp *r = &qp->resp;
	const struct rfw_ib_pkt *p = c->pkt;
	uint32_t f = c->flags;
	bool end = (f & (RFW_OPF_LAST | RFW_OPF_ONLY)) != 0;

	if (f & RFW_OPF_READ) {
		rfw_cnt(qp, RFW_CNT_rx_read_requests);
		return RESPST_READ_REPLY;
	}
	if (f & RFW_OPF_ATOMIC) {
		rfw_cnt(qp, RFW_CNT_rx_atomic_requests);
		return RESPST_ATOMIC_REPLY;
	}
	if (f & RFW_OPF_SEND) {
		struct rfw_rwqe *w = rfw_rq_at(qp, qp->rq_cons);

		if (p->payload_len)
			rfw_sge_copy_in(w->sge, w->num_sge, r->send_off, p->payload,
			                p->payload_len);
		r->send_off += p->payload_len;
		r->cls = end ? MSG_NONE : MSG_SEND;
	} else {
		if (f & (RFW_OPF_FIRST | RFW_OPF_ONLY))
			rfw_cnt(qp, RFW_CNT_rx_write_requests);
		if (p->payload_len)
			rfw_copy((uint8_t *)(uintptr_t)r->wva, p->payload, p->payload_len);
		r->wva += p->payload_len;
		r->wleft -= p->payload_len;
		r->cls = end ? MSG_NONE : MSG_WRITE;
	}
	r->psn = rfw_psn_add(r->psn, 1);
	r->ack_psn = r->psn; /* READ and atomic leave it: see duplicate_request */
	return end ? RESPST_COMPLETE : RESPST_ACKNOWLEDGE;
}

static enum resp_state read_reply(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_resp *r = &qp->resp;
	const struct rfw_ib_pkt *p = c->pkt;
	uint32_t n = rfw_msg_npkts(p->reth.dma_len, qp->mtu);
	struct rfw_res *res = new_res(qp);

	/* IBA 9.7.5.1.3: keep what a duplicate of this READ needs to be answered again. */
	*res = (struct rfw_res){.type = RES_READ,
	                        .first_psn = p->bth.psn,
	                        .last_psn = rfw_psn_add(p->bth.psn, n - 1),
	                        .va = p->reth.va,
	                        .rkey = p->reth.rkey,
	                        .len = p->reth.dma_len};
	r->msn = (r->msn + 1) & RFW_MSN_MASK;
	res->msn = r->msn;
	queue_read(qp, p->bth.psn, p->reth.va, p->reth.rkey, p->reth.dma_len, r->msn, false);
	r->psn = rfw_psn_add(r->psn, n);
	return RESPST_EXIT;
}

static enum resp_state atomic_reply(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_resp *r = &qp->resp;
	const struct rfw_ib_pkt *p = c->pkt;
	uint8_t *mem = (uint8_t *)(uintptr_t)p->atomiceth.va;
	struct rfw_res *res = new_res(qp);
	uint64_t orig, v;

	/* Executed exactly once; the result is cached for duplicates (IBA 9.7.5.1.3). */
	memcpy(&orig, mem, 8);
	if (p->bth.opcode == RFW_OP_RC_COMPARE_SWAP)
		v = orig == p->atomiceth.compare ? p->atomiceth.swap_add : orig;
	else
		v = orig + p->atomiceth.swap_add;
	memcpy(mem, &v, 8);
	r->msn = (r->msn + 1) & RFW_MSN_MASK;
	*res = (struct rfw_res){.type = RES_ATOMIC,
	                        .first_psn = p->bth.psn,
	                        .last_psn = p->bth.psn,
	                        .orig = orig,
	                        .msn = r->msn};
	queue_atomic(qp, p->bth.psn, orig, r->msn, false);
	r->psn = rfw_psn_add(r->psn, 1);
	return RESPST_EXIT;
}

static inline enum resp_state complete(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	struct rfw_resp *r = &qp->resp;
	const struct rfw_ib_pkt *p = c->pkt;
	uint32_t f = c->flags;

	r->msn = (r->msn + 1) & RFW_MSN_MASK;
	if (needs_rwqe(f) || ((f & RFW_OPF_SEND) && r->have_rwqe)) {
		struct rfw_rwqe *w = rfw_rq_at(qp, qp->rq_cons);
		unsigned wcf = 0;
		uint32_t inv = 0;

		if (f & RFW_OPF_IMM)
			wcf |= RFW_WC_WITH_IMM;
		if (f & RFW_OPF_INV) {
			struct rfw_mr *mr = rfw_mr_invalidatable(qp, p->ieth_rkey);

			if (mr)
				rfw_mr_invalidate(mr); /* IBA 10.6.5: SEND with Invalidate */
			wcf |= RFW_WC_WITH_INV;
			inv = p->ieth_rkey;
		}
		rfw_qp_complete_rwqe(qp, w, RFW_WC_SUCCESS,
		                     (f & RFW_OPF_SEND) ? RFW_WC_RECV : RFW_WC_RECV_RDMA_WITH_IMM,
		                     (f & RFW_OPF_SEND) ? r->send_off : r->wtotal, wcf, p->imm,
		                     inv);
		qp->rq_cons++;
		r->have_rwqe = false;
		r->send_off = 0;
	}
	return RESPST_ACKNOWLEDGE;
}

static inline enum resp_state acknowledge(struct resp_ctx *c)
{
	/* IBA 9.7.6.1.1: ACK when asked; coalescing happens in queue_ack. */
	if (c->pkt->bth.ackreq)
		queue_ack(c->qp, ACK_SYNDROME, c->pkt->bth.psn);
	return RESPST_EXIT;
}

/*
 * go-back-N: a replay of @res's READ still queued starts again at @psn (@off bytes into the
 * READ) instead of another being queued behind it. Each local ACK timeout of the requester
 * while a long READ is answered sends its request again; queued one after another, the replays
 * grew by up to a whole READ each, the ACKs behind them came later and later, and the requester
 * ran out of retries with nothing lost (fuzz_transport). One replay a READ, restarted where the
 * latest duplicate asks, is what rxe keeps too (its one response resource, reset).
 */
static bool restart_replay(struct rfw_qp *qp, const struct rfw_res *res, uint32_t psn, uint32_t off)
{
	struct rfw_resp *r = &qp->resp;

	for (uint32_t i = r->rsp_cons; i != r->rsp_prod; i++) {
		struct rfw_rsp *t = &r->rsp[i & (RFW_RSP_RING - 1)];

		if (t->kind == RSP_READ && t->replay && rfw_psn_cmp(t->psn, res->first_psn) >= 0 &&
		    rfw_psn_cmp(t->psn, res->last_psn) <= 0) {
			*t =
			    read_rsp(psn, res->va + off, res->rkey, res->len - off, res->msn, true);
			return true;
		}
	}
	return false;
}

/*
 * IBA 9.7.5.1.3: duplicates are not executed again. SEND/WRITE: re-acknowledge the last
 * SEND/WRITE PSN executed (ack_psn - 1), never ePSN - 1: that may be the last PSN of a READ or
 * an atomic, which only their own responses acknowledge (IBA 9.7.6.1.1), and a requester
 * (rxe's) would complete it without data. rxe keeps the same separate ack_psn. READ: answered
 * again from the responder resource (go-back-N: by its replay still queued, restarted). Atomic:
 * the cached original value is returned again.
 */
static enum resp_state duplicate_request(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;
	const struct rfw_ib_pkt *p = c->pkt;
	struct rfw_res *res;

	if (c->flags & (RFW_OPF_SEND | RFW_OPF_WRITE)) {
		rfw_cnt(qp, RFW_CNT_spurious_retransmissions);
		if (p->bth.ackreq)
			queue_ack(qp, ACK_SYNDROME, rfw_psn_add(qp->resp.ack_psn, RFW_PSN_MASK));
		return RESPST_EXIT;
	}
	res = find_res(qp, p->bth.psn);
	if (c->flags & RFW_OPF_READ) {
		uint32_t off;

		/* Its resource reused (a stale duplicate, IBA 9.7.5.1.3 class D): dropped. */
		if (res == NULL || res->type != RES_READ) {
			rfw_cnt(qp, RFW_CNT_dup_no_resource);
			return RESPST_EXIT;
		}
		off = (uint32_t)rfw_psn_diff(p->bth.psn, res->first_psn) * qp->mtu;
		if (off > res->len) {
			rfw_cnt(qp, RFW_CNT_dup_no_resource);
			return RESPST_EXIT;
		}
		rfw_cnt(qp, RFW_CNT_read_replays);
		if (!qp->sr && restart_replay(qp, res, p->bth.psn, off))
			return RESPST_EXIT;
		/* SR asks again for a missing run only: answer that much (transport-sr.md). */
		queue_read(qp, p->bth.psn, res->va + off, res->rkey,
		           qp->sr && p->reth.dma_len < res->len - off ? p->reth.dma_len
		                                                      : res->len - off,
		           res->msn, true);
		return RESPST_EXIT;
	}
	if (res && res->type == RES_ATOMIC && res->first_psn == p->bth.psn) {
		rfw_cnt(qp, RFW_CNT_atomic_replays);
		queue_atomic(qp, p->bth.psn, res->orig, res->msn, true);
	} else {
		rfw_cnt(qp, RFW_CNT_dup_no_resource); /* never executed again: dropped */
	}
	return RESPST_EXIT;
}

/* IBA 9.7.5.1.2: NAK the first out-of-sequence packet only, until ePSN arrives. */
static enum resp_state err_psn_out_of_seq(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	if (!qp->resp.nak_sent) {
		qp->resp.nak_sent = true;
		rfw_cnt(qp, RFW_CNT_nak_seq_err_sent);
		rfw_cnt(qp, RFW_CNT_naks_sent);
		queue_nak(qp, RFW_NAK_PSN_SEQ_ERR, qp->resp.psn);
	}
	return RESPST_EXIT;
}

static enum resp_state err_rnr(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	rfw_cnt(qp, RFW_CNT_rnr_nak_sent);
	/*
	 * Like a sequence NAK, the RNR NAK tells the requester where to resume: the packets
	 * behind it, already in flight, are dropped silently instead of drawing a NAK each.
	 */
	qp->resp.nak_sent = true;
	queue_ack(qp, RFW_AETH_SYNDROME(RFW_AETH_RNR_NAK, qp->attr.min_rnr_timer), c->pkt->bth.psn);
	return RESPST_EXIT;
}

/*
 * IBA 11.6.3.2: invalid request and remote access errors found by the responder are affiliated
 * asynchronous errors of its QP (no WQE may exist to report them). A remote operational error
 * completes the receive WQE in error instead.
 */
void rfw_resp_fatal_event(struct rfw_qp *qp, unsigned code)
{
	if (code == RFW_NAK_INVALID_REQUEST)
		rfw_qp_event(qp, RFW_QP_EV_REQ_ERR);
	else if (code == RFW_NAK_REMOTE_ACCESS_ERR)
		rfw_qp_event(qp, RFW_QP_EV_ACCESS_ERR);
}

/* Responder errors that end the connection: NAK, then ERR (IBA 9.9.3.1, class C/D). */
static void fatal(struct resp_ctx *c, unsigned code)
{
	rfw_qp_error(c->qp);
	queue_nak(c->qp, code, c->pkt->bth.psn);
	rfw_resp_fatal_event(c->qp, code);
}

static enum resp_state err_invalid_request(struct resp_ctx *c)
{
	fatal(c, RFW_NAK_INVALID_REQUEST);
	return RESPST_EXIT;
}

static enum resp_state err_length(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	rfw_cnt(qp, RFW_CNT_resp_local_length_error);
	rfw_qp_complete_rwqe(qp, rfw_rq_at(qp, qp->rq_cons), RFW_WC_LOC_LEN_ERR, RFW_WC_RECV, 0, 0,
	                     0, 0);
	qp->rq_cons++;
	qp->resp.have_rwqe = false;
	fatal(c, RFW_NAK_INVALID_REQUEST);
	return RESPST_EXIT;
}

static enum resp_state err_rkey_violation(struct resp_ctx *c)
{
	rfw_cnt(c->qp, RFW_CNT_resp_remote_access_errors);
	fatal(c, RFW_NAK_REMOTE_ACCESS_ERR);
	return RESPST_EXIT;
}

static enum resp_state err_remote_op(struct resp_ctx *c)
{
	struct rfw_qp *qp = c->qp;

	rfw_qp_complete_rwqe(qp, rfw_rq_at(qp, qp->rq_cons), RFW_WC_LOC_PROT_ERR, RFW_WC_RECV, 0, 0,
	                     0, 0);
	qp->rq_cons++;
	fatal(c, RFW_NAK_REMOTE_OP_ERR);
	return RESPST_EXIT;
}

typedef enum resp_state (*resp_fn)(struct resp_ctx *);
static const resp_fn resp_handlers[RESPST__COUNT] = {
    [RESPST_CHK_PSN] = chk_psn,
    [RESPST_CHK_OP_SEQ] = chk_op_seq,
    [RESPST_CHK_OP_VALID] = chk_op_valid,
    [RESPST_CHK_RESOURCE] = chk_resource,
    [RESPST_CHK_LENGTH] = chk_length,
    [RESPST_CHK_RKEY] = chk_rkey,
    [RESPST_EXECUTE] = execute,
    [RESPST_READ_REPLY] = read_reply,
    [RESPST_ATOMIC_REPLY] = atomic_reply,
    [RESPST_COMPLETE] = complete,
    [RESPST_ACKNOWLEDGE] = acknowledge,
    [RESPST_DUPLICATE_REQUEST] = duplicate_request,
    [RESPST_ERR_PSN_OUT_OF_SEQ] = err_psn_out_of_seq,
    [RESPST_ERR_RNR] = err_rnr,
    [RESPST_ERR_INVALID_REQUEST] = err_invalid_request,
    [RESPST_ERR_LENGTH] = err_length,
    [RESPST_ERR_RKEY_VIOLATION] = err_rkey_violation,
    [RESPST_ERR_REMOTE_OP] = err_remote_op,
};

/*
 * The states every in-order SEND/WRITE passes through are direct calls the compiler inlines
 * (one indirect call and the context's round trip through memory each, otherwise); the rare
 * ones (READ/atomic replies, duplicates, errors) go through the table.
 */
void rfw_resp_run_gbn(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt)
{
	struct resp_ctx c = {.qp = qp, .pkt = pkt, .flags = pkt->op->flags};
	enum resp_state s = RESPST_CHK_PSN;

	while (s != RESPST_EXIT) {
		switch (s) {
		case RESPST_CHK_PSN:
			s = chk_psn(&c);
			break;
		case RESPST_CHK_OP_SEQ:
			s = chk_op_seq(&c);
			break;
		case RESPST_CHK_OP_VALID:
			s = chk_op_valid(&c);
			break;
		case RESPST_CHK_RESOURCE:
			s = chk_resource(&c);
			break;
		case RESPST_CHK_LENGTH:
			s = chk_length(&c);
			break;
		case RESPST_CHK_RKEY:
			s = chk_rkey(&c);
			break;
		case RESPST_EXECUTE:
			s = execute(&c);
			break;
		case RESPST_COMPLETE:
			s = complete(&c);
			break;
		case RESPST_ACKNOWLEDGE:
			s = acknowledge(&c);
			break;
		default:
			s = resp_handlers[s](&c);
			break;
		}
	}
}

void rfw_resp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt)
{
	if (qp->sr)
		rfw_sr_resp_rx(qp, pkt);
	else
		rfw_resp_run_gbn(qp, pkt);
}

void rfw_resp_queue_nak(struct rfw_qp *qp, uint8_t syndrome, uint32_t psn)
{
	queue_ack(qp, syndrome, psn);
}

/*
 * SR: an ACK or SACK NAK, built when it is sent from the state then (so queued ones
 * coalesce), but never acknowledging beyond the ePSN of the last time it was queued: a READ
 * response queued after it must go first.
 */
void rfw_resp_queue_sr_state(struct rfw_qp *qp)
{
	struct rfw_resp *r = &qp->resp;
	struct rfw_rsp *t;

	if (r->rsp_prod != r->rsp_cons && !r->nak_pending) {
		t = &r->rsp[(r->rsp_prod - 1) & (RFW_RSP_RING - 1)];
		if (t->kind == RSP_SR_STATE) {
			t->psn = r->psn;
			t->msn = r->msn;
			return;
		}
	}
	t = rsp_push(qp);
	if (t)
		*t = (struct rfw_rsp){.kind = RSP_SR_STATE, .psn = r->psn, .msn = r->msn};
}

/* ---- output ---- */

bool rfw_resp_has_work(const struct rfw_qp *qp)
{
	return qp->resp.cnp_pending || qp->resp.rsp_prod != qp->resp.rsp_cons ||
	       qp->resp.nak_pending;
}

/* Annex A17.9.3: CNP = BTH (opcode 0x81, BECN set, the sender's QP) + 16 reserved bytes. */
static int send_cnp(struct rfw_qp *qp)
{
	struct rfw_ib_pkt p;
	uint8_t *buf = rfw_tx_begin(qp, &p, RFW_OP_CNP, 0, 0);

	if (buf == NULL)
		return -1;
	p.bth.becn = true;
	qp->resp.cnp_pending = false;
	rfw_cnt(qp, RFW_CNT_np_cnp_sent);
	rfw_tx_end(qp, buf, &p, 0);
	return 1;
}

static int send_read_resp(struct rfw_qp *qp, struct rfw_rsp *t)
{
	uint32_t mtu = qp->mtu;
	uint32_t len = t->left < mtu ? t->left : mtu;
	bool last = t->left <= mtu, ref;
	const struct rfw_ib_opcode_info *oi;
	const uint8_t *src;
	uint8_t op;
	uint8_t *buf;

	/*
	 * The MR may have gone since the request was checked: a NAK remote access error takes
	 * the place of this response packet, at its PSN, with our MSN (IBA 9.7.5.2), and the
	 * QP takes the class C error path (IBA 9.9.3.1): ERR now, so no later request is
	 * processed, and nothing queued behind the NAK is sent after it.
	 */
	if (len && rfw_mr_check_remote(qp, t->rkey, t->va, len, RFW_ACCESS_REMOTE_READ) == NULL) {
		t->kind = RSP_ACK;
		t->syndrome = RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_REMOTE_ACCESS_ERR);
		t->msn = qp->resp.msn;
		qp->resp.rsp_prod = qp->resp.rsp_cons + 1;
		qp->resp.nak_pending = false;
		rfw_cnt(qp, RFW_CNT_resp_remote_access_errors);
		rfw_qp_error(qp);
		rfw_resp_fatal_event(qp, RFW_NAK_REMOTE_ACCESS_ERR);
		return 0;
	}
	if (!t->started)
		op = last ? RFW_OP_RC_RDMA_READ_RESPONSE_ONLY : RFW_OP_RC_RDMA_READ_RESPONSE_FIRST;
	else
		op = last ? RFW_OP_RC_RDMA_READ_RESPONSE_LAST : RFW_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	oi = rfw_ib_opcode_info(op);
	src = (const uint8_t *)(uintptr_t)t->va;
	ref = rfw_tx_ref_len(qp, len);
	buf = ref ? rfw_tx_alloc_ref(qp, oi, 0, src, len) : rfw_tx_alloc(qp, oi, len);
	if (buf == NULL)
		return -1;
	/* Headers written straight (no rfw_ib_pkt to clear and serialize), as the requester's. */
	rfw_ib_put_aeth(buf, oi, rfw_ib_padcnt(len), 0xffff /* IBA 10.9.1.2 */,
	                qp->attr.dest_qp_num, t->psn, ACK_SYNDROME, t->msn);
	rfw_tx_sr_mark(qp, buf);
	/* The data is read now, possibly after later WRITEs were executed: IBA 9.5 allows it,
	 * FENCE on the later WR forbids it (docs/transport.md "Ordering"). */
	if (len && !ref)
		memcpy(buf + oi->hdr_len, src, len);
	rfw_tx_finish(qp, buf, oi, len, false, t->psn, NULL);
	t->started = true;
	t->psn = rfw_psn_add(t->psn, 1);
	t->va += len;
	t->left -= len;
	if (last)
		qp->resp.rsp_cons++;
	return 1;
}

int rfw_resp_tx(struct rfw_qp *qp)
{
	struct rfw_resp *r = &qp->resp;
	struct rfw_ib_pkt p;
	struct rfw_rsp *t;
	uint8_t *buf;

	if (r->cnp_pending)
		return send_cnp(qp);
	rsp_flush_nak(r);
	if (r->rsp_cons == r->rsp_prod)
		return 0;
	t = &r->rsp[r->rsp_cons & (RFW_RSP_RING - 1)];
	if (t->kind == RSP_READ) {
		int n = send_read_resp(qp, t);

		if (n != 0)
			return n;
	}
	if (t->kind == RSP_SR_STATE) {
		/* NAK with SACK while holes are open at the ePSN it was queued for, else ACK. */
		bool nak = t->psn == r->psn && rfw_psn_cmp(qp->sr->rx_high, r->psn) > 0;
		uint32_t slen = nak ? rfw_sr_sack_len(qp) : 0;

		buf = rfw_tx_begin(qp, &p, RFW_OP_RC_ACKNOWLEDGE,
		                   nak ? r->psn : rfw_psn_add(t->psn, RFW_PSN_MASK), slen);
		if (buf == NULL)
			return -1;
		p.aeth.syndrome =
		    nak ? RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_PSN_SEQ_ERR) : ACK_SYNDROME;
		/* The MSN of the ePSN it acknowledges (a NAK: the ePSN now, unchanged since). */
		p.aeth.msn = t->msn;
		if (slen)
			rfw_sr_build_sack(qp, buf + p.op->hdr_len, slen);
		if (nak)
			rfw_cnt(qp, RFW_CNT_naks_sent);
		rfw_cnt(qp, RFW_CNT_tx_acks);
		rfw_tx_end(qp, buf, &p, slen);
		r->rsp_cons++;
		return 1;
	}
	if (t->kind == RSP_ATOMIC) {
		buf = rfw_tx_begin(qp, &p, RFW_OP_RC_ATOMIC_ACKNOWLEDGE, t->psn, 0);
		if (buf == NULL)
			return -1;
		p.aeth.syndrome = ACK_SYNDROME;
		p.aeth.msn = t->msn;
		p.atomic_orig = t->orig;
	} else {
		buf = rfw_tx_begin(qp, &p, RFW_OP_RC_ACKNOWLEDGE, t->psn, 0);
		if (buf == NULL)
			return -1;
		p.aeth.syndrome = t->syndrome;
		p.aeth.msn = t->msn;
	}
	rfw_cnt(qp, RFW_CNT_tx_acks);
	rfw_tx_end(qp, buf, &p, 0);
	r->rsp_cons++;
	return 1;
}
