/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-interop-case: the rocefw side of one interop case (docs/interop.md). Sets up one DPDK
 * port (af_packet on the bridge's veth in practice) with the NIC glue (dataplane/rfw_nic.h),
 * connects to the guest peer's TCP port, sends the case, and runs it with the shared engine
 * (interop/case.c) on rfw_verbs.
 *
 *   rocefw-interop-case [EAL] -- --ip A.B.C.D --peer HOST [--port 18515] [--json]
 *                                 [--if-mtu IFACE=MTU] key=value ...  (case fields)
 *   rocefw-interop-case [EAL] -- ... --stdin      (prints "ready", then one case per line
 *                                                  of stdin, one result line each)
 *
 * Prints one line "case NAME: pass|FAIL ..." (with --json, a rocefw.interop.case/1 object)
 * and exits 0 on pass, 1 on fail, 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "dataplane/rfw_nic.h"
#include "ctrl/rfw_oob.h"
#include "dataplane/rfw_port.h"
#include "interop/case.h"
#include "tools/common/rfw_endpoint.h"
#include "tools/common/rfw_opt.h"
#include "transport/rfw_verbs.h"

struct rside {
	struct rfw_port *port;
	struct rfw_nic *nic;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_qp *qp;
	struct rfw_mr *mr;
	uint8_t *mem;
	bool attached;
	uint32_t ip4;
};

static int r_open(void *ctx, const struct ic_case *c, uint8_t **mem, struct rfw_oob_conn *mine)
{
	struct rside *r = ctx;
	size_t len = ic_mem_len(c);
	const char *stage;

	r->mem = aligned_alloc(4096, len);
	if (r->mem == NULL)
		return -ENOMEM;
	memset(r->mem, 0, len);
	r->pd = rfw_alloc_pd(rfw_nic_dev(r->nic));
	r->cq = r->pd ? rfw_create_cq(rfw_nic_dev(r->nic), 4 * IC_COUNT_MAX) : NULL;
	r->mr = r->cq ? rfw_reg_mr(r->pd, r->mem, len,
	                           RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                               RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC)
	              : NULL;
	if (r->mr == NULL)
		return errno ? -errno : -ENOMEM;
	r->qp = rfw_ep_qp_create(r->pd, r->cq, IC_COUNT_MAX, IC_COUNT_MAX,
	                         RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                             RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC,
	                         true, &stage);
	if (r->qp == NULL)
		return errno ? -errno : -ENOMEM;
	memcpy(mine->gid, rfw_nic_gid(r->nic), 16);
	mine->ip4 = r->ip4;
	mine->has_mac = true;
	memcpy(mine->mac, r->port->id.mac.addr_bytes, 6);
	mine->rkey = rfw_mr_rkey(r->mr);
	mine->qp[0].qpn = rfw_qp_num(r->qp);
	*mem = r->mem;
	return 0;
}

/* The peer's MAC: from its conn record, else by ARP with the NIC polled meanwhile. */
static int peer_mac(struct rside *r, const struct rfw_oob_conn *peer, struct rte_ether_addr *mac)
{
	uint64_t t0 = rfw_nic_clock_ns(r->nic);
	int rc;

	if (peer->has_mac) {
		memcpy(mac->addr_bytes, peer->mac, 6);
		return 0;
	}
	for (;;) {
		rc = rfw_port_resolve(r->port->q[0], peer->gid, rte_rdtsc(), mac);
		if (rc == 0 || (rc != -EAGAIN && rc != -EHOSTUNREACH))
			return rc;
		if (rfw_nic_clock_ns(r->nic) - t0 > 5000000000ull)
			return -EHOSTUNREACH;
		rfw_nic_poll(r->nic);
	}
}

static int r_connect(void *ctx, const struct ic_case *c, const struct rfw_oob_conn *peer,
                     bool requester)
{
	struct rside *r = ctx;
	struct rfw_ep_path p = {.mtu = rfw_ep_mtu(c->mtu),
	                        .qpn = peer->qp[0].qpn,
	                        .rq_psn = peer->qp[0].psn,
	                        .sq_psn = c->psn,
	                        .max_rd_atomic = RFW_MAX_RD_ATOMIC,
	                        .max_dest_rd_atomic = RFW_MAX_RD_ATOMIC,
	                        .min_rnr_timer = IC_RNR_TIMER,
	                        .timeout = IC_ACK_TIMEOUT,
	                        .retry_cnt = 7,
	                        .rnr_retry = 7,
	                        .transport = RFW_TRANSPORT_GBN};
	const char *stage;
	int rc;

	(void)requester;
	rc = peer_mac(r, peer, &p.mac);
	if (rc != 0)
		return rc;
	memcpy(p.gid, peer->gid, 16);
	rc = rfw_ep_qp_connect(r->nic, r->qp, &p, &stage);
	/* attached unless the attach itself failed (the QP is detached at the end of the case) */
	r->attached = rc == 0 || strcmp(stage, "rfw_nic_qp_attach") != 0;
	return rc;
}

static int r_post_send(void *ctx, const struct ic_wr *w)
{
	struct rside *r = ctx;
	struct rfw_sge sge = {.addr = w->laddr, .length = w->len, .lkey = rfw_mr_lkey(r->mr)};
	struct rfw_send_wr wr = {0}, *bad;
	int rc;

	wr.wr_id = w->wr_id;
	wr.sg_list = &sge;
	wr.num_sge = w->len ? 1 : 0;
	wr.send_flags = RFW_SEND_SIGNALED;
	switch (w->op) {
	case IC_SEND:
		wr.opcode = RFW_WR_SEND;
		break;
	case IC_SEND_IMM:
		wr.opcode = RFW_WR_SEND_WITH_IMM;
		wr.imm_data = w->imm;
		break;
	case IC_WRITE:
	case IC_WRITE_IMM:
		wr.opcode = w->op == IC_WRITE ? RFW_WR_RDMA_WRITE : RFW_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = w->imm;
		wr.wr.rdma.remote_addr = w->raddr;
		wr.wr.rdma.rkey = w->rkey;
		break;
	case IC_READ:
		wr.opcode = RFW_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = w->raddr;
		wr.wr.rdma.rkey = w->rkey;
		break;
	case IC_CAS:
	case IC_FAA:
		wr.opcode =
		    w->op == IC_CAS ? RFW_WR_ATOMIC_CMP_AND_SWP : RFW_WR_ATOMIC_FETCH_AND_ADD;
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
	rc = rfw_post_send(r->qp, &wr, &bad, rfw_nic_clock_ns(r->nic));
	return -rc;
}

static int r_post_recv(void *ctx, uint64_t wr_id, uint64_t addr, uint32_t len)
{
	struct rside *r = ctx;
	struct rfw_sge sge = {.addr = addr, .length = len, .lkey = rfw_mr_lkey(r->mr)};
	struct rfw_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;
	int rc = rfw_post_recv(r->qp, &wr, &bad, rfw_nic_clock_ns(r->nic));

	return -rc;
}

static int r_poll(void *ctx, struct ic_wc *out)
{
	struct rside *r = ctx;
	struct rfw_wc wc;
	int n;

	rfw_nic_poll(r->nic);
	n = rfw_poll_cq(r->cq, 1, &wc);
	if (n <= 0)
		return n;
	memset(out, 0, sizeof(*out));
	out->wr_id = wc.wr_id;
	out->status = (int)wc.status;
	out->with_imm = (wc.wc_flags & RFW_WC_WITH_IMM) != 0;
	out->imm = wc.imm_data;
	out->byte_len = wc.byte_len;
	return 1;
}

static int r_qp_in_error(void *ctx)
{
	struct rside *r = ctx;

	return rfw_qp_state(r->qp) == RFW_QPS_ERR;
}

static void r_close(void *ctx)
{
	struct rside *r = ctx;
	unsigned i;

	/* let trailing ACKs and responses leave before the QP goes */
	for (i = 0; i < 2000; i++)
		rfw_nic_poll(r->nic);
	if (r->attached)
		rfw_nic_qp_detach(r->nic, r->qp);
	r->attached = false;
	if (r->qp)
		rfw_destroy_qp(r->qp);
	if (r->mr)
		rfw_dereg_mr(r->mr);
	if (r->cq)
		rfw_destroy_cq(r->cq);
	if (r->pd)
		rfw_dealloc_pd(r->pd);
	free(r->mem);
	r->qp = NULL;
	r->mr = NULL;
	r->cq = NULL;
	r->pd = NULL;
	r->mem = NULL;
}

static const char *r_status_str(int s)
{
	return rfw_wc_status_str((enum rfw_wc_status)s);
}

/*
 * net_af_packet in DPDK 22.11 reports max_rx_pktlen 1518, so the port layer sets MTU 1500 and
 * the PMD pushes that to the kernel interface, where the veth would then drop every frame of
 * a 4096-byte path MTU. Put the interface's MTU back (the PMD itself carries frames up to its
 * framesz, 8192 here).
 */
static int set_if_mtu(const char *spec)
{
	char name[IFNAMSIZ];
	const char *eq = strchr(spec, '=');
	struct ifreq ifr = {0};
	int fd, rc = 0;

	if (eq == NULL || (size_t)(eq - spec) >= sizeof(name))
		return -EINVAL;
	memcpy(name, spec, (size_t)(eq - spec));
	name[eq - spec] = '\0';
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_mtu = atoi(eq + 1);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCSIFMTU, &ifr) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: rocefw-interop-case [EAL options] -- --ip A.B.C.D --peer HOST "
	        "[--port N] [--json] key=value...\n"
	        "  keys: name dir(rfw-req|rxe-req) op(send|send_imm|write|write_imm|read|cas|faa)\n"
	        "        fault(none|bad_rkey|oob) size mtu count psn rnr_delay_ms tclass seed "
	        "timeout\n");
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_result(const char *who, const struct rfw_oob_result *r, bool have)
{
	printf("\"%s\": ", who);
	if (!have) {
		printf("null");
		return;
	}
	printf("{\"messages\": %" PRIu64 ", \"checked_bytes\": %" PRIu64 ", \"verified\": %s, "
	       "\"error\": ",
	       r->messages, r->checked_bytes, r->verified ? "true" : "false");
	json_str(r->error);
	putchar('}');
}

/* Connect to the peer, run @c, print the result line; 0 on pass, 1 otherwise. */
static int run_one(struct rside *r, const struct ic_case *c, const char *peer, unsigned port,
                   bool json)
{
	static struct ic_conn cn;
	struct ic_backend b = {
	    .ctx = r,
	    .open = r_open,
	    .connect = r_connect,
	    .post_send = r_post_send,
	    .post_recv = r_post_recv,
	    .poll = r_poll,
	    .qp_in_error = r_qp_in_error,
	    .close = r_close,
	    .status_str = r_status_str,
	};
	struct ic_outcome out;
	uint64_t dev_ctr[RFW_CNT__COUNT], nic0[RFW_NIC_CTR__COUNT];
	int i, rc, fd;

	static uint64_t dev0[RFW_CNT__COUNT];

	/* counters are the device's since start: report this case's share */
	for (i = 0; i < RFW_NIC_CTR__COUNT; i++)
		nic0[i] = rfw_nic_ctr(r->nic, (enum rfw_nic_ctr)i);
	rfw_dev_counters(rfw_nic_dev(r->nic), dev0);
	/* the peer's TCP port, the NIC polled meanwhile (ARP from the guest) */
	fd = rfw_oob_connect(peer, (uint16_t)port, 10000);
	if (fd < 0) {
		fprintf(stderr, "rocefw-interop-case: connect to %s:%u: %s\n", peer, port,
		        strerror(-fd));
		return 1;
	}
	memset(&cn, 0, sizeof(cn));
	cn.fd = fd;
	rc = ic_send_case(&cn, c);
	if (rc != 0) {
		fprintf(stderr, "rocefw-interop-case: sending the case: %s\n", strerror(-rc));
		return 1;
	}
	rc = ic_run(c, true, &cn, &b, &out);
	close(fd);
	rfw_dev_counters(rfw_nic_dev(r->nic), dev_ctr);
	if (json) {
		printf("{\"schema\": \"rocefw.interop.case/1\", \"name\": ");
		json_str(c->name);
		printf(", \"dir\": \"%s\", \"op\": \"%s\", \"fault\": \"%s\", \"size\": %u, "
		       "\"mtu\": %u, \"count\": %u, \"psn\": %u, \"pass\": %s, ",
		       ic_dir_name(c->dir), ic_op_name(c->op), ic_fault_name(c->fault), c->size,
		       c->mtu, c->count, c->psn, out.pass ? "true" : "false");
		json_result("rocefw", &out.mine, true);
		printf(", ");
		json_result("rxe", &out.peer, out.have_peer);
		printf(", \"counters\": {");
		for (i = 0; i < RFW_NIC_CTR__COUNT; i++)
			printf("%s\"nic_%s\": %" PRIu64, i ? ", " : "",
			       rfw_nic_ctr_name((enum rfw_nic_ctr)i),
			       rfw_nic_ctr(r->nic, (enum rfw_nic_ctr)i) - nic0[i]);
		for (i = 0; i < RFW_CNT__COUNT; i++)
			if (dev_ctr[i] != dev0[i])
				printf(", \"%s\": %" PRIu64, rfw_counter_name((enum rfw_counter)i),
				       dev_ctr[i] - dev0[i]);
		printf("}}\n");
	} else {
		printf("case %s: %s rocefw: messages %" PRIu64 " checked %" PRIu64
		       "%s%s; rxe: %s%s\n",
		       c->name, out.pass ? "pass" : "FAIL", out.mine.messages,
		       out.mine.checked_bytes, out.mine.error[0] ? " error: " : "", out.mine.error,
		       !out.have_peer      ? "no result"
		       : out.peer.verified ? "verified"
		                           : "NOT verified ",
		       out.have_peer ? out.peer.error : "");
	}
	return out.pass && rc == 0 ? 0 : 1;
}

/* The command line. */
struct args {
	struct rside side; /* the rocefw side of every case */
	struct ic_case c;
	struct rfw_identity id;
	const char *peer, *if_mtu;
	unsigned port;
	bool json, from_stdin;
};

/* One option. 0: taken; 2: bad usage; -1: --help printed. */
static int case_opt(struct args *a, int opt, const char *arg)
{
	struct in_addr ia;

	switch (opt) {
	case 'i':
		if (inet_pton(AF_INET, arg, &ia) != 1) {
			fprintf(stderr, "rocefw-interop-case: --ip: '%s' is not IPv4\n", arg);
			return 2;
		}
		a->id.ip4 = ntohl(ia.s_addr);
		a->side.ip4 = a->id.ip4;
		return 0;
	case 'p':
		a->peer = arg;
		return 0;
	case 'P':
		return rfw_opt_u32("rocefw-interop-case", "--port", arg, 1, 65535, &a->port) ? 2
		                                                                             : 0;
	case 'j':
		a->json = true;
		return 0;
	case 'm':
		a->if_mtu = arg;
		return 0;
	case 's':
		a->from_stdin = true;
		return 0;
	case 'h':
		usage(stdout);
		return -1;
	default:
		usage(stderr);
		return 2;
	}
}

/* The options after "--" (@argc, @argv from there) and the case's key=value words. 0: go on;
 * else the exit status (-1: 0). */
static int case_parse(int argc, char **argv, struct args *a)
{
	static const struct option lo[] = {
	    {"ip", required_argument, NULL, 'i'},   {"peer", required_argument, NULL, 'p'},
	    {"port", required_argument, NULL, 'P'}, {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},       {"if-mtu", required_argument, NULL, 'm'},
	    {"stdin", no_argument, NULL, 's'},      {NULL, 0, NULL, 0}};
	char err[RFW_OOB_ERR_MAX];
	int opt, rc;

	ic_case_init(&a->c);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		rc = case_opt(a, opt, optarg);
		if (rc != 0)
			return rc;
	}
	for (int i = optind; i < argc; i++)
		if (ic_case_set(&a->c, argv[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "rocefw-interop-case: %s\n", err);
			return 2;
		}
	if (a->peer == NULL || a->id.ip4 == 0 || a->port == 0 || a->port > 65535) {
		usage(stderr);
		return 2;
	}
	if (ic_case_check(&a->c, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocefw-interop-case: %s\n", err);
		return 2;
	}
	return 0;
}

/* The first DPDK port with an mbuf pool for whole 8 KiB frames, --if-mtu, the NIC, link up.
 * 0, or 1 after saying what failed. */
static int nic_up(struct args *a)
{
	struct rfw_port_conf pc = {.nb_mbufs = 4096, .promisc = true};
	/*
	 * The transport's documented defaults, spelled out: rfw_dev_create() applies them only
	 * when it gets no attribute struct, and rfw_nic passes its (zeroed) dev_attr, which would
	 * mean AckReq on last packets only and no CNP spacing at all.
	 */
	struct rfw_nic_conf nc = {
	    .dev_attr = {.ack_every = 64, .np_min_time_between_cnps_ns = 4000}};
	uint16_t pid = RTE_MAX_ETHPORTS, p;
	int rc;

	RTE_ETH_FOREACH_DEV(p)
	{
		pid = p;
		break;
	}
	if (pid == RTE_MAX_ETHPORTS) {
		fprintf(stderr, "rocefw-interop-case: no DPDK port (give one with --vdev, e.g. "
		                "net_af_packet0,iface=vethX,blocksz=8192,framesz=8192)\n");
		return 1;
	}
	/* frames up to the PMD's framesz (af_packet: framesz=8192) in one mbuf */
	pc.pool = rte_pktmbuf_pool_create("iop_pool", 4095, 256, 0, RTE_PKTMBUF_HEADROOM + 8192,
	                                  (int)rte_socket_id());
	if (pc.pool == NULL) {
		fprintf(stderr, "rocefw-interop-case: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	a->side.port = rfw_port_setup(pid, &pc, &a->id);
	if (a->side.port == NULL) {
		fprintf(stderr, "rocefw-interop-case: rfw_port_setup: %s\n",
		        rte_strerror(rte_errno));
		return 1;
	}
	if (a->if_mtu != NULL && (rc = set_if_mtu(a->if_mtu)) != 0) {
		fprintf(stderr, "rocefw-interop-case: --if-mtu %s: %s\n", a->if_mtu, strerror(-rc));
		return 1;
	}
	if (rfw_nic_conf_env(&nc) != 0) /* ROCEFW_ESTATS* (docs/estats.md) */
		return 2;
	a->side.nic = rfw_nic_create(a->side.port->q[0], &nc);
	if (a->side.nic == NULL) {
		fprintf(stderr, "rocefw-interop-case: rfw_nic_create: %s\n",
		        rte_strerror(rte_errno));
		return 1;
	}
	if (rfw_port_link_wait(a->side.port, 5000) != 0) {
		fprintf(stderr, "rocefw-interop-case: link of %s down\n", a->side.port->name);
		return 1;
	}
	return 0;
}

/* --stdin: one case per line ("key=value ..."), one result line each, until EOF. */
static int run_stdin(struct args *a)
{
	char line[1024], err[RFW_OOB_ERR_MAX];
	int rc = 0;

	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *tok, *save = NULL;
		int bad = 0;

		ic_case_init(&a->c);
		for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			if (ic_case_set(&a->c, tok, err, sizeof(err)) != 0)
				bad = 1;
		if (bad || ic_case_check(&a->c, err, sizeof(err)) != 0) {
			printf("{\"schema\": \"rocefw.interop.case/1\", \"pass\": false, "
			       "\"usage_error\": ");
			json_str(err);
			printf("}\n");
			fflush(stdout);
			rc = 1;
			continue;
		}
		if (run_one(&a->side, &a->c, a->peer, a->port, a->json) != 0)
			rc = 1;
		fflush(stdout);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static struct args a = {.id = {.has_ip4 = true}, .port = RFW_OOB_PORT_DEFAULT};
	int dd = rfw_opt_dashdash(argc, argv), rc;

	if (dd < 0) {
		usage(stderr);
		return 2;
	}
	rc = case_parse(argc - dd, argv + dd, &a);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (rfw_eal_init(dd, argv) < 0 || nic_up(&a) != 0)
		return 1;
	rc = a.from_stdin ? run_stdin(&a) : run_one(&a.side, &a.c, a.peer, a.port, a.json);
	rfw_nic_destroy(a.side.nic);
	rfw_port_close(a.side.port);
	rfw_eal_cleanup();
	return rc;
}
