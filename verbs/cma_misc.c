/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rest of librdmacm's exported API for rocefw: device lists, event names, and what rocefw
 * does not do (multicast, SRQs through the CM, ECE, rdma_notify), which returns ENOSYS with a
 * line naming the call instead of reaching the real librdmacm (which would look for the
 * kernel's rdma_ucm and fail obscurely).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/rdma_verbs.h>

#include "verbs/cma.h"

static int nosys(const char *fn)
{
	fprintf(stderr, "rocefw-verbs: %s is not supported by rocefw's rdma_cm\n", fn);
	errno = ENOSYS;
	return -1;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct ibv_context **l = calloc(2, sizeof(*l));

	if (l != NULL && cm != NULL)
		l[0] = cm->verbs;
	if (num_devices)
		*num_devices = l && cm ? 1 : 0;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

const char *rdma_event_str(enum rdma_cm_event_type e)
{
	static const char *const n[] = {
	    [RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
	    [RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
	    [RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
	    [RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
	    [RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
	    [RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
	    [RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
	    [RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
	    [RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
	    [RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
	    [RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
	    [RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
	    [RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
	    [RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
	    [RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
	    [RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned)e < sizeof(n) / sizeof(n[0]) && n[e] ? n[e] : "UNKNOWN EVENT";
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id, (void)event;
	return nosys("rdma_notify");
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id, (void)addr, (void)context;
	return nosys("rdma_join_multicast");
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
                           void *context)
{
	(void)id, (void)attr, (void)context;
	return nosys("rdma_join_multicast_ex");
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return nosys("rdma_leave_multicast");
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)id, (void)pd, (void)attr;
	return nosys("rdma_create_srq");
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	return nosys("rdma_create_srq_ex");
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	(void)id;
	nosys("rdma_destroy_srq");
}

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return nosys("rdma_set_local_ece");
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return nosys("rdma_get_remote_ece");
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	return nosys("rdma_reject_ece");
}
