/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows of the rocefw device (transport/mw.c, IBA 10.6.7): ibv_alloc_mw,
 * ibv_dealloc_mw, ibv_bind_mw for type 1 (a Bind Memory Window WR with the next R_Key, as
 * libibverbs providers post it), and the bind fields of IBV_WR_BIND_MW / ibv_wr_bind_mw.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs/vrb.h"

_Static_assert((int)IBV_ACCESS_MW_BIND == (int)RFW_ACCESS_MW_BIND, "MW bind access flag");

struct ibv_mw *rfw_vrb_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type t)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(pd->context);
	struct rfw_vrb_mw *m;

	if (t != IBV_MW_TYPE_1 && t != IBV_MW_TYPE_2) {
		errno = EINVAL; /* a type no device has (as rxe answers) */
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	rfw_eng_lock(x->eng);
	m->mw = rfw_alloc_mw(((struct rfw_vrb_pd *)pd)->pd, t == IBV_MW_TYPE_1 ? 1 : 2);
	rfw_eng_unlock(x->eng);
	if (m->mw == NULL) {
		free(m);
		return NULL;
	}
	m->ibv.context = pd->context;
	m->ibv.pd = pd;
	m->ibv.rkey = rfw_mr_rkey(m->mw);
	m->ibv.handle = m->ibv.rkey >> 8;
	m->ibv.type = t;
	return &m->ibv;
}

int rfw_vrb_dealloc_mw(struct ibv_mw *mw)
{
	struct rfw_vrb_mw *m = (struct rfw_vrb_mw *)mw;
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(mw->context);
	int rc;

	rfw_eng_lock(x->eng);
	rc = rfw_dealloc_mw(m->mw);
	rfw_eng_unlock(x->eng);
	if (rc == 0)
		free(m);
	return -rc;
}

void rfw_vrb_bind_fields(struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bi,
                         struct rfw_send_wr *r)
{
	r->wr.bind_mw.mw = mw ? ((struct rfw_vrb_mw *)mw)->mw : NULL;
	r->wr.bind_mw.rkey = rkey;
	r->wr.bind_mw.mr = bi->mr ? ((struct rfw_vrb_mr *)bi->mr)->mr : NULL;
	r->wr.bind_mw.addr = bi->addr;
	r->wr.bind_mw.length = bi->length;
	r->wr.bind_mw.access = bi->mw_access_flags;
}

/* ibv_bind_mw (type 1): the bind as a work request with the window's next R_Key. */
int rfw_vrb_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	struct ibv_send_wr wr = {
	    .wr_id = b->wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = b->send_flags};
	struct ibv_send_wr *bad;
	int rc;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL; /* a type 2 window is bound by IBV_WR_BIND_MW */
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = b->bind_info;
	rc = rfw_vrb_post_send(qp, &wr, &bad);
	if (rc == 0)
		mw->rkey = wr.bind_mw.rkey;
	return rc;
}
