/* SPDX-License-Identifier: BSD-3-Clause */
/* Placeholder until ctrl/rfw_cm.h lands: the exchanges are not there yet. */
#include <errno.h>

#include "verbs/cma.h"

int rfw_cma_cm_create(struct rfw_cma *cm, uint64_t now_ns)
{
	(void)cm, (void)now_ns;
	return 0;
}
void rfw_cma_cm_step(struct rfw_cma *cm, uint64_t now_ns)
{
	(void)cm, (void)now_ns;
}
int rfw_cma_cm_connect(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len)
{
	(void)cm, (void)c, (void)pdata, (void)len;
	return -ENOSYS;
}
int rfw_cma_cm_accept(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len)
{
	(void)cm, (void)c, (void)pdata, (void)len;
	return -ENOSYS;
}
int rfw_cma_cm_reject(struct rfw_cma *cm, struct rfw_cma_id *c, const void *pdata, uint8_t len)
{
	(void)cm, (void)c, (void)pdata, (void)len;
	return -ENOSYS;
}
void rfw_cma_cm_reject_req(struct rfw_cma *cm, const struct rfw_cma_req *r)
{
	(void)cm, (void)r;
}
int rfw_cma_cm_rtu(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm, (void)c;
	return -ENOSYS;
}
int rfw_cma_cm_disconnect(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm, (void)c;
	return -ENOSYS;
}
void rfw_cma_bind_conn(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm, (void)c;
}
void rfw_cma_forget(struct rfw_cma *cm, struct rfw_cma_id *c)
{
	(void)cm, (void)c;
}
