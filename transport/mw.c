/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (IBA 10.6.7): entries of the key table like MRs (struct rfw_mr with
 * mw_type 1 or 2), bound by a Bind Memory Window WR the requester executes in order, checked
 * on every remote access with their R_Key, unbound by a zero-length bind (type 1), LOCAL_INV
 * or a SEND with Invalidate on their QP (type 2), or deallocation.
 */
#include <errno.h>
#include <stdlib.h>

#include "rfw_int.h"

struct rfw_mr *rfw_alloc_mw(struct rfw_pd *pd, unsigned type)
{
	struct rfw_mr *mw;

	if (pd == NULL || (type != 1 && type != 2)) {
		errno = EINVAL;
		return NULL;
	}
	mw = rfw_key_new(pd);
	if (mw != NULL)
		mw->mw_type = (uint8_t)type;
	return mw;
}

/* Unbind: the window grants nothing, its MR may be deregistered again. */
static void unbind(struct rfw_mr *mw)
{
	if (mw->mw_mr)
		mw->mw_mr->mw_binds--;
	mw->mw_mr = NULL;
	mw->mw_qp = NULL;
	mw->valid = false;
	mw->length = 0;
}

int rfw_dealloc_mw(struct rfw_mr *mw)
{
	if (mw == NULL || mw->mw_type == 0)
		return -EINVAL;
	unbind(mw);
	rfw_key_free(mw);
	return 0;
}

void rfw_mr_invalidate(struct rfw_mr *mr)
{
	if (mr->mw_type)
		unbind(mr);
	else
		mr->valid = false;
}

/* IBA 10.6.7.2.3: what a bind must satisfy; 0 or -EINVAL. */
static int bind_check(const struct rfw_qp *qp, const struct rfw_mr *mw, const struct rfw_mr *mr,
                      uint32_t rkey, uint64_t addr, uint64_t len, unsigned access)
{
	uint64_t base;

	if (mw == NULL || mw->mw_type == 0 || mw->pd != qp->pd || (rkey >> 8) != (mw->key >> 8))
		return -EINVAL;
	if (mw->mw_type == 2 && mw->valid) /* a type 2 window is invalidated before a rebind */
		return -EINVAL;
	if (access & ~(unsigned)(RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                         RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	if (len == 0 && mw->mw_type == 1)
		return 0; /* the unbind */
	if (mr == NULL || mr->mw_type || !mr->valid || mr->pd != qp->pd ||
	    !(mr->access & RFW_ACCESS_MW_BIND))
		return -EINVAL;
	/* Remote write or atomic through the window needs local write on the MR. */
	if ((access & (RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & RFW_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	base = (uint64_t)(uintptr_t)mr->addr;
	if (addr < base || len > mr->length || addr - base > mr->length - len)
		return -EINVAL;
	return 0;
}

int rfw_mw_bind(struct rfw_qp *qp, const struct rfw_send_wr *wr)
{
	struct rfw_mr *mw = wr->wr.bind_mw.mw, *mr = wr->wr.bind_mw.mr;
	uint64_t len = wr->wr.bind_mw.length;

	if (bind_check(qp, mw, mr, wr->wr.bind_mw.rkey, wr->wr.bind_mw.addr, len,
	               wr->wr.bind_mw.access) != 0)
		return -EINVAL;
	unbind(mw);
	mw->key = wr->wr.bind_mw.rkey;
	if (len == 0 && mw->mw_type == 1)
		return 0;
	mw->addr = (uint8_t *)(uintptr_t)wr->wr.bind_mw.addr;
	mw->length = len;
	mw->access = wr->wr.bind_mw.access & ~(unsigned)RFW_ACCESS_LOCAL_WRITE;
	mw->mw_mr = mr;
	mr->mw_binds++;
	mw->mw_qp = mw->mw_type == 2 ? qp : NULL;
	mw->valid = true;
	return 0;
}

bool rfw_mw_check_remote(const struct rfw_mr *mw, const struct rfw_qp *qp, uint64_t va,
                         uint64_t len, unsigned access)
{
	uint64_t base = (uint64_t)(uintptr_t)mw->addr;

	/* IBA 10.6.7.3: a type 1 window serves any QP of its PD, a type 2 one its QP only. */
	if (!mw->valid || mw->pd != qp->pd || (mw->mw_type == 2 && mw->mw_qp != qp))
		return false;
	if ((mw->access & access) != access || (qp->attr.qp_access_flags & access) != access)
		return false;
	return va >= base && len <= mw->length && va - base <= mw->length - len;
}
