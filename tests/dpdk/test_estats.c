/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats on the DPDK NIC (docs/estats.md): two rfw_nic endpoints in one process over ring
 * ports, Estats switched on through the environment as a program that knows nothing of it
 * would get it (ROCEFW_ESTATS=1, ..._THRESHOLD_US, ..._DUMP_DIR, set by tests/dpdk/estats.py).
 * N signalled 64-byte WRITEs, one at a time, polled with plain rfw_poll_cq; then the C API's
 * rows are checked, one JSON line with what telemetry must show is printed, then "READY", and
 * the NICs keep polling (publishing) until stdin closes.
 *
 * usage: test_estats [EAL options] -- ITERATIONS
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "cc/dcqcn.h"
#include "dataplane/rfw_nic.h"
#include "transport/estats.h"

#include "check.h"

#define MEM_LEN 8192

struct side {
	struct rfw_port *port;
	struct rfw_nic *nic;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	uint8_t *mem;
	uint8_t ip4m[16];
};

static struct side A, B;
static struct rte_ring *r_a_out, *r_b_out, *r_a_in, *r_b_in;
static struct dcqcn_prof prof;

static void die(const char *what, int err)
{
	fprintf(stderr, "test_estats: %s: %s\n", what, strerror(err));
	exit(1);
}

static void wire_move(struct rte_ring *from, struct rte_ring *to)
{
	void *objs[64];
	unsigned n = rte_ring_dequeue_burst(from, objs, RTE_DIM(objs), NULL);
	unsigned k = rte_ring_enqueue_burst(to, objs, n, NULL);

	for (; k < n; k++)
		rte_pktmbuf_free(objs[k]);
}

static void pump(void)
{
	rfw_nic_poll(A.nic);
	rfw_nic_poll(B.nic);
	wire_move(r_a_out, r_b_in);
	wire_move(r_b_out, r_a_in);
}

static void side_setup(struct side *s, const char *name, struct rte_ring *rx, struct rte_ring *tx,
                       uint32_t ip4, uint8_t mac_last)
{
	struct rfw_port_conf pc = {.nb_mbufs = 2048};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = ip4};
	struct rfw_nic_conf nc = {.cc_prof = &prof};
	int p = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned)rte_socket_id());

	if (p < 0)
		die("rte_eth_from_rings", rte_errno);
	rfw_ip4_to_mapped(s->ip4m, ip4);
	id.mac.addr_bytes[0] = 0x02;
	id.mac.addr_bytes[5] = mac_last;
	s->port = rfw_port_setup((uint16_t)p, &pc, &id);
	if (s->port == NULL)
		die("rfw_port_setup", rte_errno);
	if (rfw_nic_conf_env(&nc) != 0) /* Estats from the environment */
		exit(2);
	s->nic = rfw_nic_create(s->port->q[0], &nc);
	if (s->nic == NULL)
		die("rfw_nic_create", rte_errno);
	s->pd = rfw_alloc_pd(rfw_nic_dev(s->nic));
	s->cq = rfw_create_cq(rfw_nic_dev(s->nic), 256);
	s->mem = aligned_alloc(4096, MEM_LEN);
	if (s->pd == NULL || s->cq == NULL || s->mem == NULL)
		die("PD/CQ/memory", ENOMEM);
	s->mr =
	    rfw_reg_mr(s->pd, s->mem, MEM_LEN, RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
	if (s->mr == NULL)
		die("rfw_reg_mr", errno);
}

/* Everything side_setup made, the NIC last (its Estats thread stops, its histograms go). */
static void side_teardown(struct side *s)
{
	rfw_dereg_mr(s->mr);
	rfw_destroy_cq(s->cq);
	rfw_dealloc_pd(s->pd);
	rfw_nic_destroy(s->nic);
	free(s->mem);
}

static struct rfw_qp *make_qp(struct side *s, struct side *peer)
{
	struct rfw_qp_init_attr ia = {.send_cq = s->cq, .recv_cq = s->cq, .sq_sig_all = true};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT};
	struct rfw_nic_path path = {.dst_mac = peer->port->id.mac};
	struct rfw_qp *qp;

	ia.cap = (struct rfw_qp_cap){
	    .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1};
	qp = rfw_create_qp(s->pd, &ia);
	if (qp == NULL)
		die("rfw_create_qp", errno);
	a.qp_access_flags = RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE;
	if (rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		die("modify_qp INIT", EINVAL);
	memcpy(path.dst_ip, peer->ip4m, 16);
	if (rfw_nic_qp_attach(s->nic, qp, &path) != 0)
		die("rfw_nic_qp_attach", EINVAL);
	return qp;
}

static void connect_qp(struct rfw_qp *qp, const struct side *me, const struct side *peer,
                       uint32_t dqpn)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RTR,
	                        .path_mtu = RFW_MTU_1024,
	                        .dest_qp_num = dqpn,
	                        .max_dest_rd_atomic = 1,
	                        .min_rnr_timer = 1};

	memcpy(a.ah_attr.dgid, peer->ip4m, 16);
	memcpy(a.ah_attr.sgid, me->ip4m, 16);
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                      RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER))
		die("modify_qp RTR", EINVAL);
	a = (struct rfw_qp_attr){.qp_state = RFW_QPS_RTS,
	                         .timeout = 14,
	                         .retry_cnt = 7,
	                         .rnr_retry = 7,
	                         .max_rd_atomic = 1};
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                      RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS", EINVAL);
}

static bool write_one(struct rfw_qp *qp, uint64_t id)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)A.mem, 64, rfw_mr_lkey(A.mr)};
	struct rfw_send_wr wr = {.wr_id = id,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE},
	                   *bad;
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() * 3;
	struct rfw_wc wc;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)B.mem;
	wr.wr.rdma.rkey = rfw_mr_rkey(B.mr);
	if (rfw_post_send(qp, &wr, &bad, rfw_nic_clock_ns(A.nic)) != 0)
		return false;
	while (rte_rdtsc() < end) {
		if (rfw_poll_cq(A.cq, 1, &wc) == 1)
			return wc.status == RFW_WC_SUCCESS && wc.wr_id == id;
		pump();
	}
	return false;
}

/*
 * The rows A's NIC published (rfw_nic_estats_rows) once its Estats thread has binned what was
 * polled before rfw_nic_publish: the publication's time reaches the tick's (at most 2 s).
 */
static int published_rows(struct rfw_es_row *rows, int max)
{
	uint64_t tick, at, end = rte_rdtsc() + rte_get_tsc_hz() * 2;
	int n = 0;

	rfw_nic_publish(A.nic);
	rfw_nic_publish(B.nic);
	tick = rfw_nic_now_ns(A.nic);
	do {
		at = UINT64_MAX; /* left so when Estats is off */
		n = rfw_nic_estats_rows(A.nic, RFW_ES_CURRENT, rows, max, &at);
		if (n >= 0 && at >= tick)
			return n;
		rte_delay_us_sleep(1000);
	} while (rte_rdtsc() < end);
	return n;
}

int main(int argc, char **argv)
{
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	struct rfw_es_row rows[64];
	struct dcqcn_params par;
	struct rfw_qp *qa, *qb;
	unsigned iters, ok = 0;
	char msg[128];
	int n, nrows;

	n = rfw_eal_init(argc, argv);
	if (n < 0)
		return 1;
	if (argc - n < 2)
		die("usage: test_estats [EAL options] -- ITERATIONS", EINVAL);
	iters = (unsigned)strtoul(argv[n + 1], NULL, 10);
	if (dcqcn_params_init(&par, DCQCN_PROFILE_UNIFIED) != 0 ||
	    dcqcn_prof_config(&prof, &par, 100000, msg, sizeof(msg)) != 0)
		die(msg, EINVAL);
	r_a_out = rte_ring_create("es_a_out", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_b_out = rte_ring_create("es_b_out", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_a_in = rte_ring_create("es_a_in", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_b_in = rte_ring_create("es_b_in", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!r_a_out || !r_b_out || !r_a_in || !r_b_in)
		die("rte_ring_create", rte_errno);
	side_setup(&A, "esA", r_a_in, r_a_out, 0x0a000001, 0x0a);
	side_setup(&B, "esB", r_b_in, r_b_out, 0x0a000002, 0x0b);
	qa = make_qp(&A, &B);
	qb = make_qp(&B, &A);
	connect_qp(qa, &A, &B, rfw_qp_num(qb));
	connect_qp(qb, &B, &A, rfw_qp_num(qa));
	for (unsigned i = 0; i < iters; i++)
		ok += write_one(qa, i);
	CHECK(ok == iters, "%u of %u WRITEs completed", ok, iters);
	for (unsigned i = 0; i < 20; i++)
		pump();
	nrows = published_rows(rows, 64);
	/* Off (no ROCEFW_ESTATS=1), the QP has no Estats state and so no rows. */
	if (getenv("ROCEFW_ESTATS") == NULL || strcmp(getenv("ROCEFW_ESTATS"), "1") != 0)
		CHECK(nrows == 0, "Estats off: %d rows", nrows);
	else
		CHECK(nrows == RFW_ES__STAGES, "rows %d (want one per stage)", nrows);
	/* binned on the NIC's Estats thread, not in the QP */
	CHECK(rfw_qp_estats_rows(qa, RFW_ES_CURRENT, rfw_nic_now_ns(A.nic), rows + 32, 32) == 0,
	      "the QP itself bins nothing");
	CHECK(rfw_nic_ctr(A.nic, RFW_NIC_CTR_estats_records_dropped) == 0, "no record dropped");
	for (int i = 0; i < nrows; i++)
		CHECK(rows[i].count == iters && rows[i].op == RFW_ES_OP_WRITE &&
		          rows[i].status == RFW_ES_SUCCESS,
		      "row %d: count %lu op %u status %u", i, rows[i].count, rows[i].op,
		      rows[i].status);
	printf("{\"nic_a\": %d, \"nic_b\": %d, \"qpn_a\": %u, \"iterations\": %u, "
	       "\"dumps\": %lu}\n",
	       rfw_nic_id(A.nic), rfw_nic_id(B.nic), rfw_qp_num(qa), iters,
	       rfw_nic_ctr(A.nic, RFW_NIC_CTR_estats_dumps));
	printf("READY\n");
	fflush(stdout);
	for (;;) {
		char buf[64];

		pump();
		if (poll(&pfd, 1, 1) <= 0)
			continue;
		if (read(0, buf, sizeof(buf)) <= 0)
			break;
	}
	rfw_nic_qp_detach(A.nic, qa);
	rfw_nic_qp_detach(B.nic, qb);
	CHECK(rfw_destroy_qp(qa) == 0 && rfw_destroy_qp(qb) == 0, "destroy QPs");
	side_teardown(&A);
	side_teardown(&B);
	fprintf(stderr, "%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
