/* SPDX-License-Identifier: BSD-3-Clause */
/* Protection domains and memory regions of the rocefw device: any memory the process can read
 * and write is registrable (no pinning: the NIC is in the process). */
#include <errno.h>
#include <stdlib.h>

#include "verbs/vrb.h"

/* The access bits the transport knows have libibverbs' values (enum ibv_access_flags). */
_Static_assert((int)IBV_ACCESS_LOCAL_WRITE == (int)RFW_ACCESS_LOCAL_WRITE &&
                   (int)IBV_ACCESS_REMOTE_WRITE == (int)RFW_ACCESS_REMOTE_WRITE &&
                   (int)IBV_ACCESS_REMOTE_READ == (int)RFW_ACCESS_REMOTE_READ &&
                   (int)IBV_ACCESS_REMOTE_ATOMIC == (int)RFW_ACCESS_REMOTE_ATOMIC,
               "access flags");
#define MR_ACCESS_KNOWN                                                                            \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)
/* Hints with nothing to do for memory the NIC reaches directly. */
#define MR_ACCESS_IGNORED (IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_HUGETLB)

struct ibv_pd *rfw_vrb_alloc_pd(struct ibv_context *c)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(c);
	struct rfw_vrb_pd *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	rfw_eng_lock(x->eng);
	p->pd = rfw_alloc_pd(rfw_eng_dev(x->eng));
	rfw_eng_unlock(x->eng);
	if (p->pd == NULL) {
		free(p);
		return NULL;
	}
	p->ibv.context = c;
	return &p->ibv;
}

int rfw_vrb_dealloc_pd(struct ibv_pd *pd)
{
	struct rfw_vrb_pd *p = (struct rfw_vrb_pd *)pd;
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(pd->context);
	int ret;

	rfw_eng_lock(x->eng);
	ret = rfw_dealloc_pd(p->pd);
	rfw_eng_unlock(x->eng);
	if (ret != 0)
		return -ret;
	free(p);
	return 0;
}

struct ibv_mr *rfw_vrb_reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
                              unsigned access)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(pd->context);
	struct rfw_vrb_mr *m;

	if (iova != (uintptr_t)addr) {
		errno = rfw_vrb_unsupported("ibv_reg_mr_iova", "an I/O address other than the "
		                                               "buffer's own");
		return NULL;
	}
	if ((access & ~(unsigned)(MR_ACCESS_KNOWN | MR_ACCESS_IGNORED)) != 0) {
		errno = rfw_vrb_unsupported("ibv_reg_mr",
		                            "access flags beyond local/remote "
		                            "read/write/atomic, MW bind (ODP, zero-based)");
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	rfw_eng_lock(x->eng);
	m->mr = rfw_reg_mr(((struct rfw_vrb_pd *)pd)->pd, addr, len, access & MR_ACCESS_KNOWN);
	rfw_eng_unlock(x->eng);
	if (m->mr == NULL) {
		free(m);
		return NULL;
	}
	m->ibv.context = pd->context;
	m->ibv.pd = pd;
	m->ibv.addr = addr;
	m->ibv.length = len;
	m->ibv.lkey = rfw_mr_lkey(m->mr);
	m->ibv.rkey = rfw_mr_rkey(m->mr);
	return &m->ibv;
}

int rfw_vrb_dereg_mr(struct ibv_mr *mr)
{
	struct rfw_vrb_mr *m = (struct rfw_vrb_mr *)mr;
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(mr->context);
	int ret;

	rfw_eng_lock(x->eng);
	ret = rfw_dereg_mr(m->mr);
	rfw_eng_unlock(x->eng);
	if (ret != 0)
		return -ret;
	free(m);
	return 0;
}
