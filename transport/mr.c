/* SPDX-License-Identifier: BSD-3-Clause */
/* Protection domains, memory regions and scatter/gather access (IBA 10.6, 10.2.3). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rfw_int.h"

struct rfw_pd *rfw_alloc_pd(struct rfw_dev *dev)
{
	struct rfw_pd *pd;

	if (dev == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd)
		pd->dev = dev;
	return pd;
}

int rfw_dealloc_pd(struct rfw_pd *pd)
{
	if (pd == NULL)
		return -EINVAL;
	if (pd->users)
		return -EBUSY;
	free(pd);
	return 0;
}

/*
 * A zeroed MR or window of @pd holding a key: the slot freed longest ago (slots.h) and the next
 * generation in the low byte, so a stale key misses. NULL with errno (ENOMEM).
 */
struct rfw_mr *rfw_key_new(struct rfw_pd *pd)
{
	struct rfw_dev *dev = pd->dev;
	struct rfw_mr *mr;
	uint32_t i;

	if (!rfw_slots_peek(&dev->mr_free, &i)) {
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	dev->mr_gen = (dev->mr_gen % 255) + 1; /* never 0: key 0 is never valid */
	mr->pd = pd;
	mr->key = (i << 8) | dev->mr_gen;
	dev->mrs[i] = mr;
	rfw_slots_take(&dev->mr_free);
	pd->users++;
	return mr;
}

/* Its key back to the free slots, its PD released, and freed. */
void rfw_key_free(struct rfw_mr *mr)
{
	struct rfw_dev *dev = mr->pd->dev;

	dev->mrs[mr->key >> 8] = NULL;
	rfw_slots_put(&dev->mr_free, mr->key >> 8);
	mr->pd->users--;
	free(mr);
}

static struct rfw_mr *reg_mr(struct rfw_pd *pd, void *addr, size_t length, unsigned access,
                             bool fast_reg)
{
	struct rfw_mr *mr;

	if (pd == NULL || (addr == NULL && length) ||
	    (access &
	     ~(unsigned)(RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ |
	                 RFW_ACCESS_REMOTE_ATOMIC | RFW_ACCESS_MW_BIND))) {
		errno = EINVAL;
		return NULL;
	}
	/* IBA 10.6.3.1: remote write or atomic access requires local write. */
	if ((access & (RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & RFW_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	mr = rfw_key_new(pd);
	if (mr == NULL)
		return NULL;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->valid = true;
	mr->fast_reg = fast_reg;
	return mr;
}

struct rfw_mr *rfw_reg_mr(struct rfw_pd *pd, void *addr, size_t length, unsigned access)
{
	return reg_mr(pd, addr, length, access, false);
}

struct rfw_mr *rfw_reg_mr_fr(struct rfw_pd *pd, void *addr, size_t length, unsigned access)
{
	return reg_mr(pd, addr, length, access, true);
}

int rfw_dereg_mr(struct rfw_mr *mr)
{
	if (mr == NULL || mr->mw_type)
		return -EINVAL;
	if (mr->mw_binds)
		return -EBUSY;
	rfw_key_free(mr);
	return 0;
}

uint32_t rfw_mr_lkey(const struct rfw_mr *mr)
{
	return mr->key;
}

uint32_t rfw_mr_rkey(const struct rfw_mr *mr)
{
	return mr->key;
}

struct rfw_mr *rfw_mr_lookup(struct rfw_dev *dev, uint32_t key)
{
	return rfw_mr_lookup_inl(dev, key);
}

/*
 * IBA 10.6: LOCAL_INV and SEND with Invalidate act on fast-registration MRs of the QP's PD
 * (rxe likewise refuses any MR but IB_MR_TYPE_MEM_REG) and on type 2 windows bound to the QP
 * (IBA 10.6.7.2.5); never on a type 1 window.
 */
struct rfw_mr *rfw_mr_invalidatable(struct rfw_qp *qp, uint32_t key)
{
	struct rfw_mr *mr = rfw_mr_lookup_inl(qp->dev, key);

	if (mr == NULL || mr->pd != qp->pd)
		return NULL;
	if (mr->mw_type)
		return mr->mw_type == 2 && mr->valid && mr->mw_qp == qp ? mr : NULL;
	return mr->fast_reg ? mr : NULL;
}

/* IBA 9.7.5.1.4: R_Key, PD, bounds and access rights of a remote request. */
struct rfw_mr *rfw_mr_check_remote(struct rfw_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
                                   unsigned access)
{
	return rfw_mr_check_remote_inl(qp, rkey, va, len, access);
}

int rfw_sge_check(struct rfw_qp *qp, const struct rfw_sge *sge, int n, unsigned access)
{
	return rfw_sge_check_inl(qp, sge, n, access);
}

void rfw_sge_copy_out_sgl(const struct rfw_sge *sge, int n, uint32_t off, uint8_t *dst,
                          uint32_t len)
{
	for (int i = 0; i < n && len; i++) {
		uint32_t take;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		memcpy(dst, (const uint8_t *)(uintptr_t)sge[i].addr + off, take);
		dst += take;
		len -= take;
		off = 0;
	}
}

void rfw_sge_copy_in(const struct rfw_sge *sge, int n, uint32_t off, const uint8_t *src,
                     uint32_t len)
{
	for (int i = 0; i < n && len; i++) {
		uint32_t take;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		memcpy((uint8_t *)(uintptr_t)sge[i].addr + off, src, take);
		src += take;
		len -= take;
		off = 0;
	}
}
