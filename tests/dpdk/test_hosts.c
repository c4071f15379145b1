/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One firmware, two hosts: rocefw-sim's plain-buffer host and the DPDK host (dataplane/rfw_nic)
 * on ring ports run the same nic/ code, so they must behave the same.
 *
 * usage: test_hosts [EAL options] -- seq write|read SIZE MSGS QPS DEPTH SIM.pcap DPDK.pcap
 *   The same workload (MSGS messages of SIZE bytes over QPS QP pairs, DEPTH outstanding per
 *   QP, MTU 1024, PSNs from 0, no congestion control) through rfw_sim_run() and through two
 *   rfw_nic on a ring pair; every frame of each into its pcap. tests/dpdk/hosts.py compares
 *   the per-QP packet sequences with tshark.
 *
 * usage: test_hosts [EAL options] -- cc
 *   One CC event script (CE-marked data and CNPs arriving at given times) fed as frames to an
 *   rfw_nic on a ring port with a virtual clock and to an rfw_fw on a plain-buffer host: the
 *   CNPs each sends and its reaction point after every event must be identical.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "cc/dcqcn_params.h"
#include "dataplane/rfw_nic.h"
#include "sim.h"

#include "check.h"

#define MEM_LEN (1 << 20)

struct side {
	struct rfw_port *port;
	struct rfw_nic *nic;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	uint8_t *mem;
	struct rfw_qp *qp[8];
};

static void die(const char *what, int err)
{
	fprintf(stderr, "test_hosts: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static uint64_t vclock_ns;
static uint64_t vclock(void *arg)
{
	(void)arg;
	return vclock_ns;
}

static void side_setup(struct side *s, const char *name, struct rte_ring *rx, struct rte_ring *tx,
                       uint32_t ip4, uint8_t mac_last, const struct rfw_nic_conf *nc)
{
	struct rfw_port_conf pc = {.nb_mbufs = 8192};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = ip4};
	int p = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned)rte_socket_id());

	if (p < 0)
		die("rte_eth_from_rings", rte_errno);
	id.mac.addr_bytes[0] = 0x02;
	id.mac.addr_bytes[5] = mac_last;
	s->port = rfw_port_setup((uint16_t)p, &pc, &id);
	if (s->port == NULL)
		die("rfw_port_setup", rte_errno);
	s->nic = rfw_nic_create(s->port->q[0], nc);
	if (s->nic == NULL)
		die("rfw_nic_create", rte_errno);
	s->pd = rfw_alloc_pd(rfw_nic_dev(s->nic));
	s->cq = rfw_create_cq(rfw_nic_dev(s->nic), 4096);
	s->mem = aligned_alloc(4096, MEM_LEN);
	if (s->pd == NULL || s->cq == NULL || s->mem == NULL)
		die("PD/CQ/memory", ENOMEM);
	s->mr = rfw_reg_mr(s->pd, s->mem, MEM_LEN,
	                   RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                       RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC);
	if (s->mr == NULL)
		die("rfw_reg_mr", errno);
}

/* Everything side_setup and make_qp built, in reverse (ASan's leak check runs at exit). */
static void side_teardown(struct side *s)
{
	for (unsigned q = 0; q < RTE_DIM(s->qp); q++)
		if (s->qp[q] != NULL) {
			rfw_nic_qp_detach(s->nic, s->qp[q]);
			rfw_destroy_qp(s->qp[q]);
		}
	rfw_dereg_mr(s->mr);
	rfw_destroy_cq(s->cq);
	rfw_dealloc_pd(s->pd);
	rfw_nic_destroy(s->nic);
	rfw_port_close(s->port);
	free(s->mem);
}

/* A QP of @s attached toward @peer (02:..:@peer_mac, 10.0.0.@peer_ip4 & 0xff), in INIT. */
static struct rfw_qp *make_qp(struct side *s, uint8_t peer_mac, uint32_t peer_ip4)
{
	struct rfw_qp_init_attr ia = {.send_cq = s->cq, .recv_cq = s->cq, .sq_sig_all = true};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT,
	                        .qp_access_flags = RFW_ACCESS_REMOTE_WRITE |
	                                           RFW_ACCESS_REMOTE_READ |
	                                           RFW_ACCESS_REMOTE_ATOMIC};
	struct rfw_nic_path path = {.dst_mac = {.addr_bytes = {2, 0, 0, 0, 0, peer_mac}}};
	struct rfw_qp *qp;

	ia.cap = (struct rfw_qp_cap){
	    .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1};
	qp = rfw_create_qp(s->pd, &ia);
	if (qp == NULL || rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		die("rfw_create_qp", EINVAL);
	rfw_ip4_to_mapped(path.dst_ip, peer_ip4);
	if (rfw_nic_qp_attach(s->nic, qp, &path) != 0)
		die("rfw_nic_qp_attach", EINVAL);
	return qp;
}

/*
 * RTR/RTS as rocefw-sim's connect_qp: PSNs from 0, 16 outstanding READs, MTU 1024; from IPv4
 * @me to @peer (the transport drops packets from elsewhere).
 */
static void connect_qp(struct rfw_qp *qp, uint32_t dqpn, uint32_t me, uint32_t peer)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RTR,
	                        .path_mtu = RFW_MTU_1024,
	                        .dest_qp_num = dqpn,
	                        .max_dest_rd_atomic = 16,
	                        .min_rnr_timer = 12};

	rfw_ip4_to_mapped(a.ah_attr.sgid, me);
	rfw_ip4_to_mapped(a.ah_attr.dgid, peer);
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                      RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER) !=
	    0)
		die("modify RTR", EINVAL);
	a.qp_state = RFW_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                      RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC) != 0)
		die("modify RTS", EINVAL);
}

/* ---- seq: one workload through both hosts ---- */

static pcap_dumper_t *dumper;

/* Frames from one NIC's TX ring to the other's RX ring, each into the pcap. */
static void wire_move(struct rte_ring *from, struct rte_ring *to)
{
	void *objs[64];
	unsigned n = rte_ring_dequeue_burst(from, objs, RTE_DIM(objs), NULL), k;

	for (unsigned i = 0; i < n; i++) {
		const struct rte_mbuf *m = objs[i];
		struct pcap_pkthdr h;

		gettimeofday(&h.ts, NULL);
		h.caplen = h.len = m->data_len;
		pcap_dump((u_char *)dumper, &h, rte_pktmbuf_mtod(m, const u_char *));
	}
	k = rte_ring_enqueue_burst(to, objs, n, NULL);
	for (; k < n; k++)
		rte_pktmbuf_free(objs[k]);
}

/* Message @seq of QP @qi: a WRITE A -> B or a READ A <- B of @size bytes in its own slot. */
static void post_msg(struct side *a, struct side *b, unsigned qi, uint64_t seq, bool read,
                     uint32_t size, uint32_t depth)
{
	uint64_t off = ((uint64_t)qi * depth + seq % depth) * size;
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(a->mem + off), size, rfw_mr_lkey(a->mr)};
	struct rfw_send_wr wr = {.wr_id = seq,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = read ? RFW_WR_RDMA_READ : RFW_WR_RDMA_WRITE},
	                   *bad;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(b->mem + off);
	wr.wr.rdma.rkey = rfw_mr_rkey(b->mr);
	if (rfw_post_send(a->qp[qi], &wr, &bad, rfw_nic_clock_ns(a->nic)) != 0)
		die("post_send", EINVAL);
}

/* The workload on two rfw_nic over a ring pair; every frame into @path. */
static void seq_dpdk(bool read, uint32_t size, uint32_t msgs, uint32_t qps, uint32_t depth,
                     const char *path)
{
	struct rte_ring *ra = rte_ring_create("h_a", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *rb = rte_ring_create("h_b", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *ta = rte_ring_create("h_ta", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *tb = rte_ring_create("h_tb", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rfw_nic_conf nc = {0}; /* no congestion control */
	struct side a = {0}, b = {0};
	uint64_t posted[8] = {0}, done = 0, end = rte_rdtsc() + rte_get_tsc_hz() * 20;
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);

	side_setup(&a, "hostsA", ra, ta, 0x0a000001, 1, &nc);
	side_setup(&b, "hostsB", rb, tb, 0x0a000002, 2, &nc);
	for (uint32_t q = 0; q < qps; q++) {
		a.qp[q] = make_qp(&a, 2, 0x0a000002);
		b.qp[q] = make_qp(&b, 1, 0x0a000001);
	}
	for (uint32_t q = 0; q < qps; q++) {
		connect_qp(a.qp[q], rfw_qp_num(b.qp[q]), 0x0a000001, 0x0a000002);
		connect_qp(b.qp[q], rfw_qp_num(a.qp[q]), 0x0a000002, 0x0a000001);
	}
	dumper = pcap_dump_open(dead, path);
	if (dumper == NULL)
		die(path, EIO);
	while (done < msgs && rte_rdtsc() < end) {
		struct rfw_wc wc[32];
		int k;

		for (uint32_t q = 0; q < qps; q++)
			while (posted[q] < msgs / qps && posted[q] - done / qps < depth &&
			       posted[q] < (done / qps) + depth)
				post_msg(&a, &b, q, posted[q]++, read, size, depth);
		rfw_nic_poll(a.nic);
		rfw_nic_poll(b.nic);
		wire_move(ta, rb);
		wire_move(tb, ra);
		while ((k = rfw_poll_cq(a.cq, 32, wc)) > 0)
			for (int i = 0; i < k; i++)
				done += wc[i].status == RFW_WC_SUCCESS;
	}
	pcap_dump_close(dumper);
	pcap_close(dead);
	CHECK(done == msgs, "DPDK host: %lu of %u messages completed", done, msgs);
	side_teardown(&a);
	side_teardown(&b);
}

static int run_seq(char **av)
{
	bool read = strcmp(av[0], "read") == 0;
	uint32_t size = (uint32_t)atoi(av[1]), msgs = (uint32_t)atoi(av[2]);
	uint32_t qps = (uint32_t)atoi(av[3]), depth = (uint32_t)atoi(av[4]);
	struct rfw_sim_cfg cfg;
	struct rfw_sim_result *res = calloc(1, sizeof(*res));

	if (res == NULL || qps == 0 || qps > 8 || msgs % qps != 0 ||
	    (uint64_t)qps * depth * size > MEM_LEN)
		die("seq arguments", EINVAL);
	rfw_sim_cfg_default(&cfg);
	cfg.op = read ? RFW_SIM_READ : RFW_SIM_WRITE;
	cfg.size = size;
	cfg.messages = msgs;
	cfg.qps = qps;
	cfg.depth = depth;
	cfg.pcap = av[5];
	CHECK(rfw_sim_run(&cfg, res) == 0 && res->completed, "rocefw-sim: %lu messages completed",
	      res->messages_completed);
	free(res);
	seq_dpdk(read, size, msgs, qps, depth, av[6]);
	fprintf(stderr, "%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

/* ---- cc: one event script through both hosts ---- */

enum ev_kind { EV_CE, EV_CNP, EV_NONE };

/* What arrives when (us): CE-marked WRITEs for the NP, CNPs for the RP, quiet periods. */
static const struct {
	uint32_t t_us;
	uint8_t kind;
} script[] = {
    {10, EV_CE},    {12, EV_CE},     {40, EV_CE},     {90, EV_CE},      {100, EV_CNP},
    {105, EV_CNP},  {160, EV_CNP},   {300, EV_CE},    {330, EV_CE},     {400, EV_CNP},
    {700, EV_CNP},  {710, EV_CE},    {1500, EV_CNP},  {1600, EV_CE},    {2500, EV_NONE},
    {3000, EV_CNP}, {4000, EV_NONE}, {8000, EV_NONE}, {20000, EV_NONE},
};
#define NEV (sizeof(script) / sizeof(script[0]))

/* After each event: CNPs sent so far and the reaction point. */
struct cc_row {
	uint32_t cnps;
	uint8_t state;
	uint64_t rc, rt;
	uint32_t alpha;
	uint64_t cuts;
};

/* The frame of event @k from the peer (02:..:02, 10.0.0.2) to QP 17 at 10.0.0.1. */
static uint32_t cc_frame(unsigned k, uint32_t psn, uint64_t va, uint32_t rkey, uint8_t *f)
{
	struct rfw_frame_spec sp = {.src_mac = {2, 0, 0, 0, 0, 2},
	                            .dst_mac = {2, 0, 0, 0, 0, 1},
	                            .ip_ver = 4,
	                            .ttl = 64,
	                            .df = true};
	struct rfw_ib_pkt p = {0};
	uint32_t plen = script[k].kind == EV_CE ? 64 : 0;
	uint32_t ib;
	int off;

	rfw_ip4_to_mapped(sp.src_ip, 0x0a000002);
	rfw_ip4_to_mapped(sp.dst_ip, 0x0a000001);
	sp.tos = script[k].kind == EV_CE ? RFW_ECN_CE : 0;
	p.bth.opcode = script[k].kind == EV_CE ? RFW_OP_RC_RDMA_WRITE_ONLY : RFW_OP_CNP;
	p.op = rfw_ib_opcode_info(p.bth.opcode);
	p.bth.pkey = 0xffff;
	p.bth.dqpn = 17;
	p.bth.psn = script[k].kind == EV_CE ? psn : 0;
	p.bth.ackreq = script[k].kind == EV_CE;
	p.bth.becn = script[k].kind == EV_CNP;
	p.reth = (struct rfw_reth){.va = va, .rkey = rkey, .dma_len = plen};
	ib = p.op->hdr_len + plen;
	off = rfw_frame_build_hdrs(f, 2048, &sp, ib);
	if (off < 0 || rfw_ib_build(f + off, p.op->hdr_len, &p) < 0)
		die("cc_frame", EINVAL);
	memset(f + off + p.op->hdr_len, 0xab, plen);
	return (uint32_t)rfw_frame_finalize(f, &sp, ib);
}

static bool is_cnp(const uint8_t *f, uint32_t len)
{
	struct rfw_frame_view v;

	return rfw_frame_parse_eth(f, len, &v) == RFW_FRAME_ERR_OK && v.kind == RFW_FRAME_ROCEV2 &&
	       f[v.ib_off] == RFW_OP_CNP;
}

static void row_of(struct cc_row *r, uint32_t cnps, const struct dcqcn_rp *rp)
{
	memset(r, 0, sizeof(*r)); /* padding too: rows are compared with memcmp */
	r->cnps = cnps;
	r->state = rp->state;
	r->rc = rp->rc_bps;
	r->rt = rp->rt_bps;
	r->alpha = rp->alpha;
	r->cuts = rp->cnt[DCQCN_RP_CNT_rp_rate_cuts];
}

/* The DPDK host on a ring port, its clock virtual: frames into its RX ring, CNPs from TX. */
static void cc_dpdk(const struct dcqcn_prof *prof, struct cc_row *rows)
{
	struct rte_ring *rx = rte_ring_create("c_rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *tx = rte_ring_create("c_tx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rfw_nic_conf nc = {.cc_prof = prof, .clock_ns = vclock};
	struct side s = {0};
	uint32_t cnps = 0, psn = 0;

	side_setup(&s, "hostsC", rx, tx, 0x0a000001, 1, &nc);
	s.qp[0] = make_qp(&s, 2, 0x0a000002);
	connect_qp(s.qp[0], 17, 0x0a000001, 0x0a000002);
	for (unsigned k = 0; k < NEV; k++) {
		struct rte_mbuf *m = NULL;
		void *objs[64];
		unsigned n;

		vclock_ns = script[k].t_us * 1000ull;
		if (script[k].kind != EV_NONE) {
			m = rte_pktmbuf_alloc(s.port->pool);
			if (m == NULL)
				die("mbuf", ENOMEM);
			m->data_len =
			    (uint16_t)cc_frame(k, psn, (uint64_t)(uintptr_t)s.mem,
			                       rfw_mr_rkey(s.mr), rte_pktmbuf_mtod(m, uint8_t *));
			m->pkt_len = m->data_len;
			psn += script[k].kind == EV_CE;
			if (rte_ring_enqueue(rx, m) != 0)
				die("rx ring", ENOBUFS);
		}
		rfw_nic_poll(s.nic);
		rfw_nic_poll(s.nic); /* the RX burst, then whatever it queued for TX */
		n = rte_ring_dequeue_burst(tx, objs, RTE_DIM(objs), NULL);
		for (unsigned i = 0; i < n; i++) {
			struct rte_mbuf *t = objs[i];

			cnps += is_cnp(rte_pktmbuf_mtod(t, uint8_t *), t->data_len);
			rte_pktmbuf_free(t);
		}
		row_of(&rows[k], cnps, rfw_nic_qp_rp(s.nic, s.qp[0]));
	}
	side_teardown(&s);
}

/* rocefw-sim's kind of host: plain buffers, the same firmware. */
struct plain {
	uint8_t buf[4352];
	uint32_t cnps;
};

static uint8_t *plain_alloc(void *host, uint32_t len)
{
	return len <= sizeof(((struct plain *)host)->buf) ? ((struct plain *)host)->buf : NULL;
}

static void plain_send(void *host, uint8_t *f, uint32_t len)
{
	((struct plain *)host)->cnps += is_cnp(f, len);
}

static void cc_plain(const struct dcqcn_prof *prof, struct cc_row *rows)
{
	static const struct rfw_fw_host_ops ops = {.frame_alloc = plain_alloc,
	                                           .frame_send = plain_send};
	struct rfw_fw_conf fc = {.cc = RFW_FW_CC_DCQCN, .dcqcn = prof};
	struct rfw_fw_path path = {.src_mac = {2, 0, 0, 0, 0, 1},
	                           .dst_mac = {2, 0, 0, 0, 0, 2},
	                           .dscp = 26,
	                           .cnp_dscp = prof->cnp_dscp,
	                           .pcp = 3,
	                           .cnp_pcp = prof->cnp_prio};
	static struct plain h;
	struct rfw_fw *fw = rfw_fw_create(&fc, &ops, &h);
	struct rfw_pd *pd = fw != NULL ? rfw_alloc_pd(rfw_fw_dev(fw)) : NULL;
	struct rfw_cq *cq = pd != NULL ? rfw_create_cq(rfw_fw_dev(fw), 64) : NULL;
	static uint8_t mem[4096];
	struct rfw_mr *mr =
	    cq != NULL
	        ? rfw_reg_mr(pd, mem, sizeof(mem), RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE)
	        : NULL;
	struct rfw_qp_init_attr ia = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT,
	                        .qp_access_flags = RFW_ACCESS_REMOTE_WRITE};
	struct rfw_qp *qp = mr != NULL ? rfw_create_qp(pd, &ia) : NULL;
	uint8_t f[2048];
	uint32_t psn = 0;

	rfw_ip4_to_mapped(path.src_ip, 0x0a000001);
	rfw_ip4_to_mapped(path.dst_ip, 0x0a000002);
	if (qp == NULL || rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0 ||
	    rfw_fw_qp_attach(fw, qp, &path) != 0)
		die("plain host", EINVAL);
	connect_qp(qp, 17, 0x0a000001, 0x0a000002);
	for (unsigned k = 0; k < NEV; k++) {
		uint64_t t = script[k].t_us * 1000ull;

		if (script[k].kind != EV_NONE) {
			uint32_t len =
			    cc_frame(k, psn, (uint64_t)(uintptr_t)mem, rfw_mr_rkey(mr), f);

			psn += script[k].kind == EV_CE;
			CHECK(rfw_fw_rx_frame(fw, f, len, t) == 0, "plain host: frame %u refused",
			      k);
		}
		rfw_fw_run(fw, t);
		row_of(&rows[k], h.cnps, &rfw_fw_qp_flow(fw, qp)->u.dcqcn);
	}
	rfw_fw_qp_detach(fw, qp);
	rfw_destroy_qp(qp);
	rfw_dereg_mr(mr);
	rfw_destroy_cq(cq);
	rfw_dealloc_pd(pd);
	rfw_fw_destroy(fw);
}

/*
 * shared-port on the DPDK host: CNPs for QP 17 only; the snapshots telemetry reads
 * (/rocefw/cc/state) show one rate for QPs 17 and 18, cut below the line rate.
 */
static void cc_shared_port(void)
{
	struct rte_ring *rx = rte_ring_create("s_rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *tx = rte_ring_create("s_tx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct dcqcn_params par;
	struct dcqcn_prof prof;
	struct rfw_nic_conf nc = {.cc_prof = &prof, .clock_ns = vclock};
	struct rfw_fw_snap s17, s18;
	struct side s = {0};
	char msg[128];

	if (dcqcn_params_init(&par, DCQCN_PROFILE_SHARED_PORT) != 0 ||
	    dcqcn_prof_config(&prof, &par, 100000, msg, sizeof(msg)) != 0)
		die(msg, EINVAL);
	side_setup(&s, "hostsS", rx, tx, 0x0a000001, 1, &nc);
	for (int q = 0; q < 2; q++) {
		s.qp[q] = make_qp(&s, 2, 0x0a000002);
		connect_qp(s.qp[q], 17, 0x0a000001, 0x0a000002);
	}
	for (unsigned k = 0; k < NEV; k++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(s.port->pool);

		vclock_ns = script[k].t_us * 1000ull;
		if (m == NULL || script[k].kind != EV_CNP) {
			rte_pktmbuf_free(m);
			continue;
		}
		m->data_len = (uint16_t)cc_frame(k, 0, 0, 0, rte_pktmbuf_mtod(m, uint8_t *));
		m->pkt_len = m->data_len;
		if (rte_ring_enqueue(rx, m) != 0)
			die("rx ring", ENOBUFS);
		rfw_nic_poll(s.nic);
	}
	rfw_nic_publish(s.nic);
	CHECK(rfw_fw_snap_read(rfw_nic_fw(s.nic), 0, &s17) &&
	          rfw_fw_snap_read(rfw_nic_fw(s.nic), 1, &s18),
	      "shared-port: snapshots of QPs 17 and 18");
	printf("shared-port: QP 17 rate %lu kb/s, QP 18 rate %lu kb/s (scope %u)\n", s17.rate_kbps,
	       s18.rate_kbps, s17.scope);
	CHECK(s17.rate_kbps == s18.rate_kbps && s17.rate_kbps < prof.line_kbps &&
	          s17.scope == DCQCN_SCOPE_PORT,
	      "shared-port: one rate for both QPs (%lu, %lu)", s17.rate_kbps, s18.rate_kbps);
	side_teardown(&s);
}

static int run_cc(void)
{
	struct dcqcn_params par;
	struct dcqcn_prof prof;
	struct cc_row d[NEV], p[NEV];
	char msg[128];

	if (dcqcn_params_init(&par, DCQCN_PROFILE_UNIFIED) != 0 ||
	    dcqcn_prof_config(&prof, &par, 100000, msg, sizeof(msg)) != 0)
		die(msg, EINVAL);
	cc_dpdk(&prof, d);
	cc_plain(&prof, p);
	for (unsigned k = 0; k < NEV; k++) {
		printf(
		    "t %6u us %-4s | dpdk cnps %u %s rc %lu rt %lu alpha %u cuts %lu | plain cnps "
		    "%u %s rc %lu rt %lu alpha %u cuts %lu\n",
		    script[k].t_us,
		    script[k].kind == EV_CE    ? "ce"
		    : script[k].kind == EV_CNP ? "cnp"
		                               : "-",
		    d[k].cnps, dcqcn_rp_state_name(d[k].state), d[k].rc, d[k].rt, d[k].alpha,
		    d[k].cuts, p[k].cnps, dcqcn_rp_state_name(p[k].state), p[k].rc, p[k].rt,
		    p[k].alpha, p[k].cuts);
		CHECK(memcmp(&d[k], &p[k], sizeof(d[k])) == 0, "event %u: the hosts differ", k);
	}
	/* The script exercised both machines: some CE answered, some suppressed; cuts, recovery. */
	CHECK(d[NEV - 1].cnps > 0 && d[NEV - 1].cnps < 8, "CNPs sent: %u of 8 CE", d[NEV - 1].cnps);
	CHECK(d[NEV - 1].cuts >= 3 && d[9].rc / 1000 < prof.line_kbps, "rate cuts: %lu",
	      d[NEV - 1].cuts);
	cc_shared_port();
	fprintf(stderr, "%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int n = rfw_eal_init(argc, argv);

	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	if (argc >= 9 && strcmp(argv[1], "seq") == 0)
		return run_seq(argv + 2);
	if (argc >= 2 && strcmp(argv[1], "cc") == 0)
		return run_cc();
	fprintf(stderr, "usage: test_hosts [EAL] -- seq write|read SIZE MSGS QPS DEPTH SIM.pcap "
	                "DPDK.pcap | cc\n");
	return 2;
}
