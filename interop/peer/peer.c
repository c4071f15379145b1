/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-interop-peer: the Linux side of the interop cases (docs/interop.md). Runs in the rxe
 * guest, listens on TCP, and for every connection runs one case (interop/case.h) on the rxe
 * device with libibverbs: the rocefw side sends the case record and its conn record, the
 * peer creates a QP and memory region for it, connects, and plays requester or responder.
 *
 *   rocefw-interop-peer --ip A.B.C.D [--dev rxe0] [--port 18515] [--once]
 *
 * One line per case on stdout: "case NAME: pass|FAIL ..." with this side's account.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "ctrl/rfw_oob.h"
#include "interop/case.h"
#include "tools/common/rfw_opt.h"

struct peer {
	const char *devname;
	uint32_t ip4;
	uint8_t mac[6];
	bool has_mac;
	struct ibv_context *ctx;
	int gid_index;
	/* per case */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t mem_len;
};

static int find_gid(struct peer *p)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(p->ctx, 1, &pa) != 0)
		return -errno;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		uint32_t be = htonl(p->ip4);

		if (ibv_query_gid(p->ctx, 1, i, &g) != 0)
			continue;
		if (memcmp(g.raw, pfx, 12) == 0 && memcmp(g.raw + 12, &be, 4) == 0) {
			p->gid_index = i;
			return 0;
		}
	}
	return -ENOENT;
}

static void read_mac(struct peer *p)
{
	char path[128];
	FILE *f;
	unsigned m[6];
	int i;

	/* the rxe device's netdev: the first one rxe is on is eth0 in the guest */
	snprintf(path, sizeof(path), "/sys/class/net/eth0/address");
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6) {
		for (i = 0; i < 6; i++)
			p->mac[i] = (uint8_t)m[i];
		p->has_mac = true;
	}
	fclose(f);
}

static void p_close(void *ctx)
{
	struct peer *p = ctx;

	if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->mem);
	p->qp = NULL;
	p->mr = NULL;
	p->cq = NULL;
	p->pd = NULL;
	p->mem = NULL;
}

static int p_open(void *ctx, const struct ic_case *c, uint8_t **mem, struct rfw_oob_conn *mine)
{
	struct peer *p = ctx;
	struct ibv_qp_init_attr ia = {0};
	struct ibv_qp_attr a = {0};
	union ibv_gid g;

	p->mem_len = ic_mem_len(c);
	p->mem = aligned_alloc(4096, p->mem_len);
	if (p->mem == NULL)
		return -ENOMEM;
	memset(p->mem, 0, p->mem_len);
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 2 * IC_COUNT_MAX + 8, NULL, NULL, 0) : NULL;
	p->mr = p->cq ? ibv_reg_mr(p->pd, p->mem, p->mem_len,
	                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
	              : NULL;
	if (p->mr == NULL)
		return errno ? -errno : -ENOMEM;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = 1;
	ia.cap.max_send_wr = IC_COUNT_MAX;
	ia.cap.max_recv_wr = IC_COUNT_MAX;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	p->qp = ibv_create_qp(p->pd, &ia);
	if (p->qp == NULL)
		return errno ? -errno : -ENOMEM;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(p->qp, &a,
	                  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -errno;
	if (ibv_query_gid(p->ctx, 1, p->gid_index, &g) != 0)
		return -errno;
	memcpy(mine->gid, g.raw, 16);
	mine->ip4 = p->ip4;
	mine->has_mac = p->has_mac;
	memcpy(mine->mac, p->mac, 6);
	mine->rkey = p->mr->rkey;
	mine->qp[0].qpn = p->qp->qp_num;
	*mem = p->mem;
	return 0;
}

static enum ibv_mtu to_ibv_mtu(uint32_t bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 2048:
		return IBV_MTU_2048;
	case 4096:
		return IBV_MTU_4096;
	default:
		return IBV_MTU_1024;
	}
}

static int p_connect(void *ctx, const struct ic_case *c, const struct rfw_oob_conn *peer,
                     bool requester)
{
	struct peer *p = ctx;
	struct ibv_qp_attr a = {0};

	(void)requester;
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = to_ibv_mtu(c->mtu);
	a.dest_qp_num = peer->qp[0].qpn;
	a.rq_psn = peer->qp[0].psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = IC_RNR_TIMER;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = (uint8_t)c->tclass;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(p->qp, &a,
	                  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	                      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->psn;
	a.timeout = IC_ACK_TIMEOUT;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(p->qp, &a,
	                  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return -errno;
	return 0;
}

static int p_post_send(void *ctx, const struct ic_wr *w)
{
	struct peer *p = ctx;
	struct ibv_sge sge = {.addr = w->laddr, .length = w->len, .lkey = p->mr->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	int rc;

	wr.wr_id = w->wr_id;
	wr.sg_list = &sge;
	wr.num_sge = w->len ? 1 : 0;
	wr.send_flags = IBV_SEND_SIGNALED;
	switch (w->op) {
	case IC_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case IC_SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(w->imm);
		break;
	case IC_WRITE:
	case IC_WRITE_IMM:
		wr.opcode = w->op == IC_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(w->imm);
		wr.wr.rdma.remote_addr = w->raddr;
		wr.wr.rdma.rkey = w->rkey;
		break;
	case IC_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = w->raddr;
		wr.wr.rdma.rkey = w->rkey;
		break;
	case IC_CAS:
	case IC_FAA:
		wr.opcode =
		    w->op == IC_CAS ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = w->raddr;
		wr.wr.atomic.rkey = w->rkey;
		wr.wr.atomic.compare_add = w->compare_add;
		wr.wr.atomic.swap = w->swap;
		sge.length = 8;
		wr.num_sge = 1;
		break;
	default:
		return -EINVAL;
	}
	rc = ibv_post_send(p->qp, &wr, &bad);
	return rc ? -rc : 0;
}

static int p_post_recv(void *ctx, uint64_t wr_id, uint64_t addr, uint32_t len)
{
	struct peer *p = ctx;
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = p->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;
	int rc = ibv_post_recv(p->qp, &wr, &bad);

	return rc ? -rc : 0;
}

static int p_poll(void *ctx, struct ic_wc *out)
{
	struct peer *p = ctx;
	struct ibv_wc wc;
	int n = ibv_poll_cq(p->cq, 1, &wc);

	if (n <= 0)
		return n < 0 ? -EIO : 0;
	memset(out, 0, sizeof(*out));
	out->wr_id = wc.wr_id;
	out->status = (int)wc.status;
	out->with_imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
	out->imm = ntohl(wc.imm_data);
	out->byte_len = wc.byte_len;
	return 1;
}

static int p_qp_in_error(void *ctx)
{
	struct peer *p = ctx;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(p->qp, &a, IBV_QP_STATE, &ia) != 0)
		return -errno;
	return a.qp_state == IBV_QPS_ERR;
}

static const char *p_status_str(int s)
{
	return ibv_wc_status_str((enum ibv_wc_status)s);
}

static void usage(void)
{
	fprintf(stderr, "usage: rocefw-interop-peer --ip A.B.C.D [--dev rxe0] [--port 18515] "
	                "[--once]\n");
}

/* The options into @p, *@port, *@once. 0, or 2 (bad usage, said). */
static int peer_parse(int argc, char **argv, struct peer *p, unsigned *port, bool *once)
{
	static const struct option lo[] = {{"ip", required_argument, NULL, 'i'},
	                                   {"dev", required_argument, NULL, 'd'},
	                                   {"port", required_argument, NULL, 'p'},
	                                   {"once", no_argument, NULL, 'o'},
	                                   {NULL, 0, NULL, 0}};
	struct in_addr ia;
	bool have_ip = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (opt == 'i' && inet_pton(AF_INET, optarg, &ia) == 1) {
			p->ip4 = ntohl(ia.s_addr);
			have_ip = true;
		} else if (opt == 'd') {
			p->devname = optarg;
		} else if (opt == 'p') {
			if (rfw_opt_u32("rocefw-interop-peer", "--port", optarg, 1, 65535, port) !=
			    0)
				return 2;
		} else if (opt == 'o') {
			*once = true;
		} else {
			usage();
			return 2;
		}
	}
	if (!have_ip || *port == 0 || *port > 65535) {
		usage();
		return 2;
	}
	return 0;
}

/* The device named --dev, its RoCEv2 GID of --ip and its MAC. 0, or 1 (said). */
static int peer_open(struct peer *p, struct ibv_device ***list)
{
	int n;

	*list = ibv_get_device_list(&n);
	for (int i = 0; *list != NULL && i < n; i++)
		if (strcmp(ibv_get_device_name((*list)[i]), p->devname) == 0)
			p->ctx = ibv_open_device((*list)[i]);
	if (p->ctx == NULL) {
		fprintf(stderr, "peer: no RDMA device %s\n", p->devname);
		return 1;
	}
	if (find_gid(p) != 0) {
		fprintf(stderr, "peer: %s has no RoCEv2 GID for the given IPv4 address\n",
		        p->devname);
		return 1;
	}
	read_mac(p);
	return 0;
}

/* One connection on @fd: its case record, the case run, the result line. False when the
 * record was bad (answered with an error record; --once keeps waiting then). */
static bool serve_one(struct peer *p, int fd)
{
	struct ic_backend b = {
	    .ctx = p,
	    .open = p_open,
	    .connect = p_connect,
	    .post_send = p_post_send,
	    .post_recv = p_post_recv,
	    .poll = p_poll,
	    .qp_in_error = p_qp_in_error,
	    .close = p_close,
	    .status_str = p_status_str,
	};
	static struct ic_conn cn;
	struct ic_case c;
	struct ic_outcome out;
	char err[RFW_OOB_ERR_MAX];

	memset(&cn, 0, sizeof(cn));
	cn.fd = fd;
	if (ic_recv_case(&cn, &c, 10000, err, sizeof(err)) != 0) {
		struct rfw_oob_msg m = {.type = RFW_OOB_ERROR};

		printf("case ?: FAIL bad case record: %s\n", err);
		snprintf(m.u.error.reason, sizeof(m.u.error.reason), "peer: %s", err);
		rfw_oob_send(fd, &m);
		return false;
	}
	ic_run(&c, false, &cn, &b, &out);
	printf("case %s: %s (%s %s size %u mtu %u count %u psn 0x%06x) messages %" PRIu64
	       " checked %" PRIu64 "%s%s\n",
	       c.name, out.pass ? "pass" : "FAIL", ic_dir_name(c.dir), ic_op_name(c.op), c.size,
	       c.mtu, c.count, c.psn, out.mine.messages, out.mine.checked_bytes,
	       out.mine.error[0] ? " error: " : "", out.mine.error);
	return true;
}

int main(int argc, char **argv)
{
	struct peer p = {.devname = "rxe0"};
	struct ibv_device **list = NULL;
	unsigned port = RFW_OOB_PORT_DEFAULT;
	bool once = false;
	int lfd, rc = peer_parse(argc, argv, &p, &port, &once);

	if (rc != 0)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (peer_open(&p, &list) != 0)
		return 1;
	lfd = rfw_oob_listen((uint16_t)port);
	if (lfd < 0) {
		fprintf(stderr, "peer: listen on %u: %s\n", port, strerror(-lfd));
		return 1;
	}
	printf("peer: listening on %u, %s GID index %d\n", port, p.devname, p.gid_index);
	for (;;) {
		int fd = rfw_oob_accept(lfd);

		if (fd == -EAGAIN) {
			struct pollfd pf = {.fd = lfd, .events = POLLIN};

			poll(&pf, 1, 1000);
			continue;
		}
		if (fd < 0) {
			fprintf(stderr, "peer: accept: %s\n", strerror(-fd));
			continue;
		}
		rc = serve_one(&p, fd);
		close(fd);
		if (once && rc)
			break;
	}
	ibv_close_device(p.ctx);
	ibv_free_device_list(list);
	return 0;
}
