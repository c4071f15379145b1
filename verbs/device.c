/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rocefw device: open/close and the queries (device, port, GID, P_Key). Attributes are the
 * transport's real limits (transport/rfw_verbs.h, transport/qp.c) so that programs sizing
 * their queues from them get what they ask for.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs/vrb.h"

/* Limits of the transport (transport/qp.c rfw_create_qp, transport/cq.c rfw_create_cq). */
#define DEV_MAX_MR       1024  /* rfw_dev_attr.max_mr */
#define DEV_MAX_QP_WR    65536 /* max_send_wr / max_recv_wr */
#define DEV_MAX_SGE      32
#define DEV_MAX_CQE      (1 << 24)
#define DEV_MAX_CQ       65536 /* no table: bounded by memory */
#define DEV_MAX_PD       65536
#define DEV_MAX_AH       65536  /* no table: bounded by memory */
#define DEV_MAX_SRQ      65536  /* no table: bounded by memory */
#define DEV_PKEY_DEFAULT 0xffff /* the default partition, the only one (IBA 10.9.1.2) */
/* GID table length: index 0 is the port's address, the others are empty (as unused entries of
 * a kernel device's table: query_gid gives a zero GID, query_gid_ex ENODATA). */
#define DEV_GID_TBL_LEN 16

/* Node GUID: locally administered, from the configured IPv4 address (known before the port
 * exists, so ibv_devices and ibv_devinfo agree without starting the NIC). */
__be64 rfw_vrb_node_guid(void)
{
	uint32_t ip = rfw_vrb_dev.conf.ip4;
	uint8_t g[8] = {
	    0x02,       'r', 'f', 'w', (uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8),
	    (uint8_t)ip};
	__be64 v;

	memcpy(&v, g, sizeof(v));
	return v;
}

int rfw_vrb_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	(void)c;
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "rocefw 0.1.0");
	a->node_guid = rfw_vrb_node_guid();
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = RFW_MAX_MSG_SIZE;
	a->page_size_cap = 0xfffff000; /* any power of two from 4 KiB: MRs are byte-granular */
	a->vendor_id = 0xffffff;       /* no IEEE OUI of our own (rxe uses the same) */
	a->max_qp = (int)rfw_vrb_dev.conf.max_qp; /* what the engine asked the NIC for */
	a->max_qp_wr = DEV_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_CURR_QP_STATE_MOD |
	                      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_MEM_WINDOW |
	                      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = DEV_MAX_SGE;
	a->max_sge_rd = DEV_MAX_SGE;
	a->max_cq = DEV_MAX_CQ;
	a->max_cqe = DEV_MAX_CQE;
	a->max_mr = DEV_MAX_MR;
	a->max_mw = DEV_MAX_MR; /* windows share the key table with MRs */
	a->max_pd = DEV_MAX_PD;
	a->max_qp_rd_atom = RFW_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = RFW_MAX_RD_ATOMIC;
	a->max_res_rd_atom = RFW_MAX_RD_ATOMIC * a->max_qp;
	a->atomic_cap = IBV_ATOMIC_HCA; /* atomics are atomic with respect to this NIC only */
	a->max_ah = DEV_MAX_AH;
	a->max_srq = DEV_MAX_SRQ;
	a->max_srq_wr = DEV_MAX_QP_WR;
	a->max_srq_sge = DEV_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15; /* 4.096 us * 2^15 = 134 ms: a software NIC can be late */
	a->phys_port_cnt = 1;
	return 0;
}

static int query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
                           struct ibv_device_attr_ex *a, size_t size)
{
	struct ibv_device_attr_ex ex;
	int ret;

	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	memset(&ex, 0, sizeof(ex));
	ret = rfw_vrb_query_device(c, &ex.orig_attr);
	ex.phys_port_cnt_ex = 1;
	memcpy(a, &ex, size < sizeof(ex) ? size : sizeof(ex));
	return ret;
}

/* IBA 14.2.5.6 PortInfo: link width and speed codes for the port's Ethernet speed. */
static void width_speed(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct {
		uint32_t mbps;
		uint8_t width, speed;
	} t[] = {
	    {400000, 2, 64}, /* 4X HDR */
	    {200000, 2, 64}, /* 4X HDR (2X NDR would be 16/128) */
	    {100000, 2, 32}, /* 4X EDR */
	    {50000, 1, 64},  /* 1X HDR */
	    {40000, 2, 4},   /* 4X QDR */
	    {25000, 1, 32},  /* 1X EDR */
	    {10000, 1, 4},   /* 1X QDR */
	    {0, 1, 1},       /* 1X SDR */
	};
	unsigned i = 0;

	while (t[i].mbps > mbps)
		i++;
	*width = t[i].width;
	*speed = t[i].speed;
}

/* The largest path MTU whose RoCEv2 packets fit the port's IP MTU (IPv4 + UDP + BTH/RETH +
 * ICRC need 20 + 8 + 40 + 4 more than the payload). */
enum ibv_mtu rfw_vrb_mtu_of(uint32_t ip_mtu)
{
	enum ibv_mtu m = IBV_MTU_4096;

	while (m > IBV_MTU_256 && (128u << m) + 72 > ip_mtu)
		m--;
	return m;
}

int rfw_vrb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *out, size_t len)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(c);
	struct rfw_eng_port_info pi;
	struct ibv_port_attr a;

	if (port != 1)
		return EINVAL;
	rfw_eng_port_info(x->eng, &pi);
	memset(&a, 0, sizeof(a));
	a.state = pi.link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = rfw_vrb_mtu_of(pi.ip_mtu);
	a.gid_tbl_len = DEV_GID_TBL_LEN;
	a.port_cap_flags = IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = (uint32_t)RFW_MAX_MSG_SIZE;
	a.pkey_tbl_len = 1;
	a.max_vl_num = 1;
	width_speed(pi.speed_mbps, &a.active_width, &a.active_speed);
	a.phys_state = pi.link_up ? 5 : 3; /* LinkUp : Disabled (IBA 14.2.5.6) */
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(out, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

int rfw_vrb_query_gid(struct ibv_context *c, uint32_t port, int index, union ibv_gid *gid)
{
	struct rfw_eng_port_info pi;

	if (port != 1 || index < 0 || index >= DEV_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (index != 0) {
		memset(gid->raw, 0, 16);
		return 0;
	}
	rfw_eng_port_info(rfw_vrb_ctx_of(c)->eng, &pi);
	memcpy(gid->raw, pi.gid, 16);
	return 0;
}

int rfw_vrb_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index,
                         struct ibv_gid_entry *e, size_t entry_size)
{
	struct ibv_gid_entry g = {0};

	if (entry_size < sizeof(g) || rfw_vrb_query_gid(c, port, (int)index, &g.gid) != 0)
		return EINVAL;
	if (index != 0)
		return ENODATA; /* an empty entry */
	g.gid_index = index;
	g.port_num = port;
	g.gid_type = IBV_GID_TYPE_ROCE_V2;
	g.ndev_ifindex = 0; /* no kernel netdev */
	memcpy(e, &g, sizeof(g));
	return 0;
}

int rfw_vrb_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey)
{
	(void)c;
	if (port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(DEV_PKEY_DEFAULT);
	return 0;
}

static int ctx_init(struct rfw_vrb_ctx *x, struct rfw_eng *e)
{
	struct ibv_context *c = &x->vctx.context;

	x->eng = e;
	x->inline_progress = rfw_vrb_dev.conf.progress == RFW_PROGRESS_INLINE;
	c->device = &rfw_vrb_dev.ibv;
	/* No kernel uverbs file: a memfd named for us, so that programs that dup or pass it on
	 * (ibv_import_device) hold a real fd, and ibv_import_device can tell it is ours. */
	c->cmd_fd = memfd_create(RFW_VRB_CMD_FD_NAME, MFD_CLOEXEC);
	if (c->cmd_fd < 0)
		return -errno;
	c->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->async_fd < 0) {
		close(c->cmd_fd);
		return -errno;
	}
	c->num_comp_vectors = 1;
	pthread_mutex_init(&c->mutex, NULL);
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	x->vctx.sz = sizeof(x->vctx);
	x->vctx.query_port = rfw_vrb_query_port;
	x->vctx.query_device_ex = query_device_ex;
	rfw_vrb_ctx_ops(x);
	rfw_vrb_async_add(x);
	return 0;
}

struct ibv_context *rfw_vrb_open(void)
{
	struct rfw_vrb_ctx *x;
	struct rfw_eng *e;
	int ret;

	if (!rfw_vrb_dev.conf_ok) {
		errno = EINVAL;
		return NULL;
	}
	e = rfw_eng_open(&rfw_vrb_dev.conf);
	if (e == NULL)
		return NULL;
	if (rfw_vrb_dev.conf.progress == RFW_PROGRESS_THREAD && (ret = rfw_vrb_progress_start(e))) {
		errno = -ret;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	ret = ctx_init(x, e);
	if (ret != 0) {
		free(x);
		errno = -ret;
		return NULL;
	}
	return &x->vctx.context;
}

/* The engine (EAL, port, NIC, progress thread) stays for the life of the process. */
int rfw_vrb_close(struct ibv_context *c)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(c);

	rfw_vrb_async_remove(x);
	close(c->async_fd);
	close(c->cmd_fd);
	pthread_mutex_destroy(&c->mutex);
	free(x);
	return 0;
}
