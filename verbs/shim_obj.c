/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exported verbs on PDs, MRs, CQs, QPs, SRQs, AHs and the objects rocefw lacks (multicast, ECE,
 * import): each forwards to the real libibverbs unless the object's context is rocefw's.
 */
#include <errno.h>
#include <stdio.h>

#include "verbs/shim.h"

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.1", ibv_dealloc_pd, pd);
	return rfw_vrb_dealloc_pd(pd);
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.1", ibv_reg_mr, pd, addr, len, access);
	return rfw_vrb_reg_mr(pd, addr, len, (uintptr_t)addr, (unsigned)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.7", ibv_reg_mr_iova, pd, addr, len, iova, access);
	return rfw_vrb_reg_mr(pd, addr, len, iova, (unsigned)access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
                                unsigned int access)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.8", ibv_reg_mr_iova2, pd, addr, len, iova, access);
	return rfw_vrb_reg_mr(pd, addr, len, iova, access);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
                                 int fd, int access)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.12", ibv_reg_dmabuf_mr, pd, offset, len, iova, fd, access);
	errno = rfw_vrb_unsupported("ibv_reg_dmabuf_mr", "dma-buf memory (no device memory)");
	return NULL;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t len,
                 int access)
{
	if (!rfw_vrb_ours(mr->context))
		RFW_FWD("IBVERBS_1.1", ibv_rereg_mr, mr, flags, pd, addr, len, access);
	/* ibv_rereg_mr's errors are enum ibv_rereg_mr_err_code, the cause is in errno. */
	errno = rfw_vrb_unsupported("ibv_rereg_mr", "deregister and register again");
	return IBV_REREG_MR_ERR_INPUT; /* the old MR is still valid */
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	if (!rfw_vrb_ours(mr->context))
		RFW_FWD("IBVERBS_1.1", ibv_dereg_mr, mr);
	return rfw_vrb_dereg_mr(mr);
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (!rfw_vrb_ours(cq->context))
		RFW_FWD("IBVERBS_1.1", ibv_resize_cq, cq, cqe);
	return rfw_vrb_resize_cq(cq, cqe);
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	if (!rfw_vrb_ours(cq->context))
		RFW_FWD("IBVERBS_1.1", ibv_destroy_cq, cq);
	return rfw_vrb_destroy_cq(cq);
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	if (!rfw_vrb_ours(cq->context))
		RFW_FWD("IBVERBS_1.1", ibv_ack_cq_events, cq, n);
	rfw_vrb_ack_cq_events(cq, n);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.1", ibv_create_qp, pd, a);
	return rfw_vrb_create_qp(pd, a);
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.1", ibv_modify_qp, qp, a, mask);
	return rfw_vrb_modify_qp(qp, a, mask);
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.1", ibv_query_qp, qp, a, mask, init);
	return rfw_vrb_query_qp(qp, a, mask, init);
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.1", ibv_destroy_qp, qp);
	return rfw_vrb_destroy_qp(qp);
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.6", ibv_qp_to_qp_ex, qp);
	if (((struct rfw_vrb_qp *)qp)->batch != NULL)
		return &((struct rfw_vrb_qp *)qp)->ibvx;
	errno = EOPNOTSUPP; /* created without send_ops_flags, as libibverbs says */
	return NULL;
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.14", ibv_query_qp_data_in_order, qp, op, flags);
	return 0; /* data is not guaranteed to be written in order before the completion */
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.10", ibv_set_ece, qp, ece);
	return rfw_vrb_unsupported("ibv_set_ece", "enhanced connection establishment");
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.10", ibv_query_ece, qp, ece);
	return rfw_vrb_unsupported("ibv_query_ece", "enhanced connection establishment");
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.1", ibv_create_srq, pd, a);
	return rfw_vrb_create_srq(pd, a);
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	if (!rfw_vrb_ours(srq->context))
		RFW_FWD("IBVERBS_1.1", ibv_modify_srq, srq, a, mask);
	return rfw_vrb_modify_srq(srq, a, mask);
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	if (!rfw_vrb_ours(srq->context))
		RFW_FWD("IBVERBS_1.1", ibv_query_srq, srq, a);
	return rfw_vrb_query_srq(srq, a);
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	if (!rfw_vrb_ours(srq->context))
		RFW_FWD("IBVERBS_1.1", ibv_destroy_srq, srq);
	return rfw_vrb_destroy_srq(srq);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.1", ibv_create_ah, pd, a);
	return rfw_vrb_create_ah(pd, a);
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
                                     uint8_t port)
{
	struct ibv_ah_attr a;

	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.1", ibv_create_ah_from_wc, pd, wc, grh, port);
	if (rfw_vrb_init_ah_from_wc(pd->context, port, wc, grh, &a) != 0)
		return NULL;
	return rfw_vrb_create_ah(pd, &a);
}

int ibv_init_ah_from_wc(struct ibv_context *c, uint8_t port, struct ibv_wc *wc, struct ibv_grh *grh,
                        struct ibv_ah_attr *a)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_init_ah_from_wc, c, port, wc, grh, a);
	return rfw_vrb_init_ah_from_wc(c, port, wc, grh, a);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	if (!rfw_vrb_ours(ah->context))
		RFW_FWD("IBVERBS_1.1", ibv_destroy_ah, ah);
	return rfw_vrb_destroy_ah(ah);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.1", ibv_attach_mcast, qp, gid, lid);
	return rfw_vrb_unsupported("ibv_attach_mcast", "multicast (UD only)");
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	if (!rfw_vrb_ours(qp->context))
		RFW_FWD("IBVERBS_1.1", ibv_detach_mcast, qp, gid, lid);
	return rfw_vrb_unsupported("ibv_detach_mcast", "multicast (UD only)");
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *c, struct ibv_ah_attr *a, uint8_t eth_mac[6],
                                uint16_t *vid)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_resolve_eth_l2_from_gid, c, a, eth_mac, vid);
	return rfw_vrb_unsupported("ibv_resolve_eth_l2_from_gid", "the NIC resolves peers by "
	                                                          "ARP itself");
}

struct ibv_pd *ibv_import_pd(struct ibv_context *c, uint32_t handle)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.10", ibv_import_pd, c, handle);
	errno = rfw_vrb_unsupported("ibv_import_pd", "sharing objects between processes");
	return NULL;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	if (!rfw_vrb_ours(pd->context))
		RFW_FWD("IBVERBS_1.10", ibv_import_mr, pd, handle);
	errno = rfw_vrb_unsupported("ibv_import_mr", "sharing objects between processes");
	return NULL;
}
