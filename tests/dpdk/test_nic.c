/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two rfw_nic endpoints in one process over DPDK ring ports (rte_eth_from_rings), joined by a
 * "wire" in the test that moves frames between the rings, writes each variant's frames to a
 * pcap and marks every 7th ECN-capable frame A -> B CE (so B's notification point sends CNPs
 * and A's reaction point paces). Variants: IPv4, IPv6, IPv4 + 802.1Q, IPv6 + 802.1Q, and the
 * same with the peer MAC resolved by ARP / ND (zero dst_mac); each runs RDMA WRITE, SEND and
 * READ with every byte checked, and per-QP NIC counters are compared with the transport's.
 * Then a QP whose peer never answers ARP must end in ERR with its WR flushed.
 *
 * NIC A computes IPv6 UDP checksums (rfw_nic_conf.udp6_csum), NIC B sends zero (the default,
 * as rxe): tests/dpdk/nic.py checks both with tshark and rocefw-replay.
 *
 * usage: test_nic [EAL options] -- [--pcap-dir DIR] [--hold]
 *   --pcap-dir DIR  write DIR/<variant>.pcap (both directions of the wire)
 *   --hold          afterwards, run one more QP pair with traffic, print one JSON line with the
 *                   counters telemetry must report, then "READY", and keep polling until stdin
 *                   closes (tests/dpdk/telemetry.py reads /rocefw/... meanwhile)
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "cc/dcqcn.h"
#include "wire/neigh_wire.h"
#include "dataplane/rfw_nic.h"

#include "check.h"
#include "tools/common/rfw_ce.h"

#define MEM_LEN   (64 * 1024)
#define WRITE_LEN 10000
#define SEND_LEN  3000
#define READ_LEN  5000
#define VLAN_BASE 100

struct side {
	const char *name;
	struct rfw_port *port;
	struct rfw_nic *nic;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	uint8_t *mem;
	uint8_t ip4m[16], ip6[16];
};

static struct side A = {.name = "A"}, B = {.name = "B"};
static struct rte_ring *r_a_out, *r_b_out, *r_a_in, *r_b_in;
static pcap_t *pcap_dead;
static pcap_dumper_t *dumper;
static struct rfw_ce_every ce7 = {.every = 7};
/* VLAN variants that resolve: the wire drops untagged ARP/ND, as a peer reachable only on
 * the VLAN would never see them, so resolution must work through the NIC's tagged probes. */
static bool drop_untagged_neigh;
static unsigned untagged_neigh_dropped;
static struct dcqcn_prof prof;

static const uint8_t ip6_a[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t ip6_b[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

static void die(const char *what, int err)
{
	fprintf(stderr, "test_nic: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* ---- the wire ---- */

/* ECT -> CE on every 7th ECN-capable RoCEv2 frame (wire/'s marker; the ICRC masks TOS /
 * traffic class). */
static void maybe_mark(struct rte_mbuf *m)
{
	rfw_ce_every_frame(&ce7, rte_pktmbuf_mtod(m, uint8_t *), m->data_len);
}

static void dump(const struct rte_mbuf *m)
{
	struct pcap_pkthdr h;

	if (dumper == NULL)
		return;
	gettimeofday(&h.ts, NULL);
	h.caplen = h.len = m->data_len;
	pcap_dump((u_char *)dumper, &h, rte_pktmbuf_mtod(m, const u_char *));
}

static bool untagged_neigh(const struct rte_mbuf *m)
{
	struct rfw_frame_view v;

	if (rfw_frame_parse_eth(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, &v) !=
	        RFW_FRAME_ERR_OK ||
	    v.nvlan != 0)
		return false;
	return (v.kind == RFW_FRAME_NOT_IP && v.ethertype == RFW_ETHERTYPE_ARP) ||
	       (v.ip_ver == 6 && v.ip_proto == RFW_IPPROTO_ICMPV6);
}

static void wire_move(struct rte_ring *from, struct rte_ring *to, bool mark)
{
	void *objs[64];
	unsigned n = rte_ring_dequeue_burst(from, objs, RTE_DIM(objs), NULL), k, j = 0;

	for (unsigned i = 0; i < n; i++) {
		if (drop_untagged_neigh && untagged_neigh(objs[i])) {
			rte_pktmbuf_free(objs[i]);
			untagged_neigh_dropped++;
			continue;
		}
		if (mark)
			maybe_mark(objs[i]);
		dump(objs[i]);
		objs[j++] = objs[i];
	}
	n = j;
	k = rte_ring_enqueue_burst(to, objs, n, NULL);
	for (; k < n; k++)
		rte_pktmbuf_free(objs[k]);
}

static void pump(void)
{
	rfw_nic_poll(A.nic);
	rfw_nic_poll(B.nic);
	wire_move(r_a_out, r_b_in, true);
	wire_move(r_b_out, r_a_in, false);
}

static void pump_ms(unsigned ms)
{
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * ms;

	while (rte_rdtsc() < end)
		pump();
}

/* Pump until @s's CQ yields a completion (or 3 s pass). */
static bool wait_wc(struct side *s, struct rfw_wc *wc)
{
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() * 3;

	while (rte_rdtsc() < end) {
		if (rfw_poll_cq(s->cq, 1, wc) == 1)
			return true;
		pump();
	}
	return false;
}

/* ---- set-up ---- */

static uint16_t ring_port(const char *name, struct rte_ring *rx, struct rte_ring *tx)
{
	int p = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned)rte_socket_id());

	if (p < 0)
		die("rte_eth_from_rings", rte_errno);
	return (uint16_t)p;
}

static void side_setup(struct side *s, uint16_t port_id, uint32_t ip4, const uint8_t ip6[16],
                       uint8_t mac_last, bool udp6_csum)
{
	struct rfw_port_conf pc = {.nb_mbufs = 4096, .neigh_retrans_ms = 40};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = ip4, .has_ip6 = true};
	struct rfw_nic_conf nc = {.cc_prof = &prof, .udp6_csum = udp6_csum};

	memcpy(id.ip6, ip6, 16);
	memcpy(s->ip6, ip6, 16);
	rfw_ip4_to_mapped(s->ip4m, ip4);
	id.mac.addr_bytes[0] = 0x02;
	id.mac.addr_bytes[5] = mac_last;
	s->port = rfw_port_setup(port_id, &pc, &id);
	if (s->port == NULL)
		die("rfw_port_setup", rte_errno);
	s->nic = rfw_nic_create(s->port->q[0], &nc);
	if (s->nic == NULL)
		die("rfw_nic_create", rte_errno);
	s->pd = rfw_alloc_pd(rfw_nic_dev(s->nic));
	s->cq = rfw_create_cq(rfw_nic_dev(s->nic), 1024);
	s->mem = aligned_alloc(4096, MEM_LEN);
	if (s->pd == NULL || s->cq == NULL || s->mem == NULL)
		die("PD/CQ/memory", ENOMEM);
	s->mr =
	    rfw_reg_mr(s->pd, s->mem, MEM_LEN,
	               RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ);
	if (s->mr == NULL)
		die("rfw_reg_mr", errno);
}

static struct rfw_qp *make_qp(struct side *s)
{
	struct rfw_qp_init_attr ia = {.send_cq = s->cq, .recv_cq = s->cq, .sq_sig_all = true};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT};
	struct rfw_qp *qp;

	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = rfw_create_qp(s->pd, &ia);
	if (qp == NULL)
		die("rfw_create_qp", errno);
	a.qp_access_flags =
	    RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ;
	if (rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		die("modify_qp INIT", EINVAL);
	return qp;
}

/* INIT -> (attach) -> RTR -> RTS toward @dgid / @dqpn. */
static int qp_connect(struct side *s, struct rfw_qp *qp, const struct rfw_nic_path *path,
                      uint32_t dqpn)
{
	struct rfw_qp_attr a = {0};
	int rc = rfw_nic_qp_attach(s->nic, qp, path);

	if (rc != 0)
		return rc;
	a.qp_state = RFW_QPS_RTR;
	memcpy(a.ah_attr.dgid, path->dst_ip, 16);
	/* The source of the same family: the transport drops packets not between the two. */
	memcpy(a.ah_attr.sgid, rfw_ip_is_mapped4(path->dst_ip) ? s->ip4m : s->ip6, 16);
	a.path_mtu = RFW_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	rc = rfw_modify_qp(qp, &a,
	                   RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                       RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;
	a.qp_state = RFW_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return rfw_modify_qp(qp, &a,
	                     RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                         RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static int post(struct side *s, struct rfw_qp *qp, enum rfw_wr_opcode op, uint32_t loff,
                uint32_t len, const struct side *peer, uint32_t roff)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(s->mem + loff), len, rfw_mr_lkey(s->mr)};
	struct rfw_send_wr wr = {.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op}, *bad;

	if (peer != NULL) {
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(peer->mem + roff);
		wr.wr.rdma.rkey = rfw_mr_rkey(peer->mr);
	}
	if (rfw_post_send(qp, &wr, &bad, rfw_nic_clock_ns(s->nic)) != 0)
		return -1;
	return 0;
}

static void post_recv(struct side *s, struct rfw_qp *qp, uint32_t off, uint32_t len)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(s->mem + off), len, rfw_mr_lkey(s->mr)};
	struct rfw_recv_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1}, *bad;

	if (rfw_post_recv(qp, &wr, &bad, rfw_nic_clock_ns(s->nic)) != 0)
		die("post_recv", EINVAL);
}

/* ---- one variant ---- */

struct variant {
	const char *name;
	bool v6, vlan, resolve;
	bool cached; /* resolve: the neighbour is already known from an earlier variant */
	bool flush;  /* empty both neighbour tables first */
};

static void open_pcap(const char *dir, const char *name)
{
	char path[512];

	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s.pcap", dir, name);
	dumper = pcap_dump_open(pcap_dead, path);
	if (dumper == NULL)
		die(path, EIO);
}

static void close_pcap(void)
{
	if (dumper != NULL)
		pcap_dump_close(dumper);
	dumper = NULL;
}

/*
 * The NIC's frame bytes are the transport's IB bytes plus, per packet, the QP's header template
 * and the ICRC: the two layers count one event each, in their own unit.
 */
static void check_qp_counters(const char *vn, struct side *s, struct rfw_qp *qp)
{
	uint64_t t[RFW_CNT__COUNT];
	const uint8_t *hdr;
	uint32_t hl = rfw_fw_qp_hdr(rfw_nic_fw(s->nic), qp, &hdr);
	uint64_t fb = rfw_nic_qp_ctr(s->nic, qp, RFW_NIC_QP_CTR_tx_frame_bytes);

	rfw_qp_counters(qp, t);
	CHECK(hl >= 42 && fb == t[RFW_CNT_tx_bytes] + t[RFW_CNT_tx_packets] * (hl + RFW_ICRC_LEN),
	      "%s %s: NIC tx_frame_bytes %lu = transport tx_bytes %lu + %lu x (%u + 4)", vn,
	      s->name, fb, t[RFW_CNT_tx_bytes], t[RFW_CNT_tx_packets], hl);
}

struct pair {
	struct rfw_qp *qa, *qb;
};

static struct pair connect_pair(const struct variant *v, unsigned idx)
{
	struct rfw_nic_path pa = {0}, pb = {0};
	struct pair p = {make_qp(&A), make_qp(&B)};
	int rc;

	memcpy(pa.dst_ip, v->v6 ? B.ip6 : B.ip4m, 16);
	memcpy(pb.dst_ip, v->v6 ? A.ip6 : A.ip4m, 16);
	if (!v->resolve) {
		pa.dst_mac = B.port->id.mac;
		pb.dst_mac = A.port->id.mac;
	}
	pa.vlan = pb.vlan = v->vlan ? RFW_NIC_VLAN_TAG : RFW_NIC_VLAN_NONE;
	pa.vlan_id = pb.vlan_id = (uint16_t)(VLAN_BASE + idx);
	rc = qp_connect(&A, p.qa, &pa, rfw_qp_num(p.qb));
	CHECK(rc == 0, "%s: connect A: %d", v->name, rc);
	if (v->resolve)
		CHECK(rfw_nic_qp_l2(A.nic, p.qa) ==
		          (v->cached ? RFW_NIC_L2_READY : RFW_NIC_L2_RESOLVING),
		      "%s: A %s after attach (%s)", v->name, v->cached ? "ready" : "resolving",
		      rfw_nic_l2_name(rfw_nic_qp_l2(A.nic, p.qa)));
	rc = qp_connect(&B, p.qb, &pb, rfw_qp_num(p.qa));
	CHECK(rc == 0, "%s: connect B: %d", v->name, rc);
	return p;
}

/* CNPs B's QPs sent and A's QPs handled, over every pair destroyed (the transport's counters
 * live with their QP). */
static uint64_t cnps_sent_b, cnps_handled_a;

static void destroy_pair(struct pair *p)
{
	uint64_t t[RFW_CNT__COUNT];

	rfw_qp_counters(p->qb, t);
	cnps_sent_b += t[RFW_CNT_np_cnp_sent];
	rfw_qp_counters(p->qa, t);
	cnps_handled_a += t[RFW_CNT_rp_cnp_handled];
	pump_ms(2); /* last ACKs */
	rfw_nic_qp_detach(A.nic, p->qa);
	rfw_nic_qp_detach(B.nic, p->qb);
	CHECK(rfw_destroy_qp(p->qa) == 0 && rfw_destroy_qp(p->qb) == 0, "destroy QPs");
}

/* WRITE A -> B, SEND A -> B, READ A <- B, WRITE B -> A: every byte checked. */
static void traffic(const char *vn, struct pair *p, unsigned seed)
{
	struct rfw_wc wc;

	/* WRITE: A[0..] -> B[16K..] */
	fill(A.mem, WRITE_LEN, seed);
	memset(B.mem + 16384, 0, WRITE_LEN);
	CHECK(post(&A, p->qa, RFW_WR_RDMA_WRITE, 0, WRITE_LEN, &B, 16384) == 0, "%s: post", vn);
	CHECK(wait_wc(&A, &wc) && wc.status == RFW_WC_SUCCESS && wc.opcode == RFW_WC_RDMA_WRITE,
	      "%s: WRITE completion (%s)", vn, rfw_wc_status_str(wc.status));
	CHECK(memcmp(A.mem, B.mem + 16384, WRITE_LEN) == 0, "%s: WRITE data", vn);

	/* SEND: A[0..] -> B[32K..] */
	fill(A.mem, SEND_LEN, seed + 1);
	memset(B.mem + 32768, 0, 4096);
	post_recv(&B, p->qb, 32768, 4096);
	CHECK(post(&A, p->qa, RFW_WR_SEND, 0, SEND_LEN, NULL, 0) == 0, "%s: post SEND", vn);
	CHECK(wait_wc(&A, &wc) && wc.status == RFW_WC_SUCCESS && wc.opcode == RFW_WC_SEND,
	      "%s: SEND completion", vn);
	CHECK(wait_wc(&B, &wc) && wc.status == RFW_WC_SUCCESS && wc.opcode == RFW_WC_RECV &&
	          wc.byte_len == SEND_LEN,
	      "%s: RECV completion (%u bytes)", vn, wc.byte_len);
	CHECK(memcmp(A.mem, B.mem + 32768, SEND_LEN) == 0, "%s: SEND data", vn);

	/* READ: B[48K..] -> A[8K..] */
	fill(B.mem + 49152, READ_LEN, seed + 2);
	memset(A.mem + 8192, 0, READ_LEN);
	CHECK(post(&A, p->qa, RFW_WR_RDMA_READ, 8192, READ_LEN, &B, 49152) == 0, "%s: post READ",
	      vn);
	CHECK(wait_wc(&A, &wc) && wc.status == RFW_WC_SUCCESS && wc.opcode == RFW_WC_RDMA_READ,
	      "%s: READ completion", vn);
	CHECK(memcmp(A.mem + 8192, B.mem + 49152, READ_LEN) == 0, "%s: READ data", vn);

	/* WRITE the other way: B's requester path through its template. */
	fill(B.mem, 2000, seed + 3);
	memset(A.mem + 24576, 0, 2000);
	CHECK(post(&B, p->qb, RFW_WR_RDMA_WRITE, 0, 2000, &A, 24576) == 0, "%s: post B", vn);
	CHECK(wait_wc(&B, &wc) && wc.status == RFW_WC_SUCCESS, "%s: B WRITE completion", vn);
	CHECK(memcmp(B.mem, A.mem + 24576, 2000) == 0, "%s: B WRITE data", vn);
}

static void run_variant(const struct variant *v, unsigned idx, const char *dir)
{
	struct pair p;

	if (v->flush) {
		/* Ageing with a clock 1000 s ahead removes every entry. */
		uint64_t later = rte_rdtsc() + rte_get_tsc_hz() * 1000;

		rfw_port_neigh_age(A.port, later);
		rfw_port_neigh_age(B.port, later);
	}
	open_pcap(dir, v->name);
	drop_untagged_neigh = v->vlan && v->resolve;
	p = connect_pair(v, idx);
	traffic(v->name, &p, idx * 10);
	CHECK(rfw_nic_qp_l2(A.nic, p.qa) == RFW_NIC_L2_READY &&
	          rfw_nic_qp_l2(B.nic, p.qb) == RFW_NIC_L2_READY,
	      "%s: both MACs known", v->name);
	pump_ms(2);
	check_qp_counters(v->name, &A, p.qa);
	check_qp_counters(v->name, &B, p.qb);
	destroy_pair(&p);
	drop_untagged_neigh = false;
	close_pcap();
	printf("ok   variant %s\n", v->name);
}

/* A peer that never answers ARP: the QP ends in ERR and its SEND is flushed. */
static void run_unreachable(void)
{
	struct rfw_nic_path pa = {0};
	struct rfw_qp *qa = make_qp(&A);
	uint64_t failed0 = rfw_nic_ctr(A.nic, RFW_NIC_CTR_l2_resolve_failed);
	struct rfw_wc wc = {0};
	int rc;

	rfw_ip4_to_mapped(pa.dst_ip, 0x0a000063); /* 10.0.0.99: nobody */
	rc = qp_connect(&A, qa, &pa, 99);
	CHECK(rc == 0, "unreachable: connect %d", rc);
	CHECK(rfw_nic_qp_l2(A.nic, qa) == RFW_NIC_L2_RESOLVING, "unreachable: resolving");
	fill(A.mem, 100, 1);
	CHECK(post(&A, qa, RFW_WR_SEND, 0, 100, NULL, 0) == 0, "unreachable: post");
	CHECK(wait_wc(&A, &wc) && wc.status == RFW_WC_WR_FLUSH_ERR,
	      "unreachable: SEND flushed (status %s)", rfw_wc_status_str(wc.status));
	CHECK(rfw_nic_qp_l2(A.nic, qa) == RFW_NIC_L2_FAILED, "unreachable: l2 failed");
	CHECK(rfw_qp_state(qa) == RFW_QPS_ERR, "unreachable: QP in ERR");
	CHECK(rfw_nic_ctr(A.nic, RFW_NIC_CTR_l2_resolve_failed) == failed0 + 1,
	      "unreachable: l2_resolve_failed counted");
	CHECK(rfw_nic_qp_ctr(A.nic, qa, RFW_NIC_QP_CTR_tx_frame_bytes) == 0 &&
	          rfw_nic_qp_ctr(A.nic, qa, RFW_NIC_QP_CTR_l2_wait_turns) > 0,
	      "unreachable: nothing sent, turns waited for the MAC");
	CHECK(rfw_port_ctr(A.port, RFW_PORT_CTR_arp_request_sent) >= 3,
	      "unreachable: ARP probes sent");
	rfw_nic_qp_detach(A.nic, qa);
	rfw_destroy_qp(qa);
	printf("ok   unreachable peer -> ERR, WR flushed\n");
}

/*
 * A peer that is gone: a NIC whose port's TX ring (63 frames) is drained for its first polls
 * (the link carried frames) and then by nobody, as a memif peer that exited. Its QP's WRITEs
 * fill the ring; after tx_stall_ms with no frame taken the NIC treats the link as down, drops
 * what the PMD refuses and lets the QP's ACK timer run: the first WR fails with RETRY_EXC_ERR
 * (IBA 9.7.6.1.3), the rest are flushed, the QP is in ERR.
 */
static void run_link_down(void)
{
	struct rte_ring *rx = rte_ring_create("gone_in", 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *tx = rte_ring_create("gone_out", 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct side C = {.name = "C"};
	struct rfw_nic_conf nc = {.cc_prof = &prof, .tx_stall_ms = 50};
	struct rfw_port_conf pc = {.nb_mbufs = 2048};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = 0x0a000003};
	struct rfw_nic_path path = {.dst_mac = {.addr_bytes = {0x02, 0, 0, 0, 0, 0x0e}}};
	struct rfw_wc wc[8];
	unsigned got = 0;
	uint64_t end;
	struct rfw_qp *qc;

	if (rx == NULL || tx == NULL)
		die("link down: rings", rte_errno);
	id.mac.addr_bytes[0] = 0x02;
	id.mac.addr_bytes[5] = 0x0c;
	C.port = rfw_port_setup(ring_port("nicGone", rx, tx), &pc, &id);
	if (C.port == NULL)
		die("link down: port", rte_errno);
	C.nic = rfw_nic_create(C.port->q[0], &nc);
	if (C.nic == NULL)
		die("link down: NIC", rte_errno);
	C.pd = rfw_alloc_pd(rfw_nic_dev(C.nic));
	C.cq = rfw_create_cq(rfw_nic_dev(C.nic), 64);
	C.mem = aligned_alloc(4096, MEM_LEN);
	C.mr = C.pd && C.mem ? rfw_reg_mr(C.pd, C.mem, MEM_LEN, RFW_ACCESS_LOCAL_WRITE) : NULL;
	if (C.cq == NULL || C.mr == NULL)
		die("link down: PD/CQ/MR", ENOMEM);
	rfw_ip4_to_mapped(C.ip4m, 0x0a000003);
	rfw_ip4_to_mapped(path.dst_ip, 0x0a00000e);
	qc = make_qp(&C);
	CHECK(qp_connect(&C, qc, &path, 77) == 0, "link down: connect");
	for (unsigned i = 0; i < 8; i++) /* 80 packets for a ring of 63 */
		CHECK(post(&C, qc, RFW_WR_RDMA_WRITE, 0, WRITE_LEN, &B, 0) == 0, "link down: post");
	end = rte_rdtsc() + rte_get_tsc_hz() * 10;
	for (unsigned polls = 0; got < 8 && rte_rdtsc() < end; polls++) {
		void *m = NULL;

		rfw_nic_poll(C.nic);
		got += (unsigned)rfw_poll_cq(C.cq, 8 - (int)got, wc + got);
		while (polls < 3 && rte_ring_dequeue(tx, &m) == 0) /* the peer, while it lived */
			rte_pktmbuf_free(m);
	}
	CHECK(got == 8 && wc[0].status == RFW_WC_RETRY_EXC_ERR,
	      "link down: %u of 8 completions in 10 s, the first %s", got,
	      got ? rfw_wc_status_str(wc[0].status) : "none");
	for (unsigned i = 1; i < got; i++)
		CHECK(wc[i].status == RFW_WC_WR_FLUSH_ERR, "link down: WR %u flushed", i);
	CHECK(rfw_qp_state(qc) == RFW_QPS_ERR, "link down: QP in ERR");
	CHECK(rfw_nic_ctr(C.nic, RFW_NIC_CTR_tx_link_down) == 1 &&
	          rfw_nic_ctr(C.nic, RFW_NIC_CTR_tx_stall_drops) > 0 &&
	          rfw_nic_ctr(C.nic, RFW_NIC_CTR_tx_backlog_polls) > 0,
	      "link down: counted once (%lu), frames dropped (%lu)",
	      rfw_nic_ctr(C.nic, RFW_NIC_CTR_tx_link_down),
	      rfw_nic_ctr(C.nic, RFW_NIC_CTR_tx_stall_drops));
	rfw_nic_qp_detach(C.nic, qc);
	rfw_destroy_qp(qc);
	rfw_dereg_mr(C.mr);
	rfw_destroy_cq(C.cq);
	rfw_dealloc_pd(C.pd);
	rfw_nic_destroy(C.nic);
	rfw_port_close(C.port);
	free(C.mem);
	printf("ok   peer gone (TX ring drained, then never again) -> link down, RETRY_EXC_ERR, "
	       "WRs flushed\n");
}

/* Create, connect, use and destroy QP pairs for @ms (telemetry reads them meanwhile). */
static unsigned churn(unsigned ms)
{
	static const struct variant cv = {"churn", false, false, false, false};
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * ms;
	unsigned n = 0;

	while (rte_rdtsc() < end) {
		struct pair p = connect_pair(&cv, 60);
		struct rfw_wc wc;

		CHECK(post(&A, p.qa, RFW_WR_RDMA_WRITE, 0, 2048, &B, 16384) == 0, "churn: post");
		CHECK(wait_wc(&A, &wc) && wc.status == RFW_WC_SUCCESS, "churn: WRITE");
		destroy_pair(&p);
		n++;
	}
	return n;
}

/* NIC configurations out of range are refused. */
static void bad_nic_confs(void)
{
	struct rfw_nic_conf conf;

	conf = (struct rfw_nic_conf){.vlan = true, .vlan_id = 0};
	CHECK(rfw_nic_create(A.port->q[0], &conf) == NULL && rte_errno == EINVAL,
	      "NIC conf: VLAN id 0 refused");
	conf = (struct rfw_nic_conf){.pcp = 9};
	CHECK(rfw_nic_create(A.port->q[0], &conf) == NULL, "NIC conf: PCP 9 refused");
	conf = (struct rfw_nic_conf){.snapshot_us = 5};
	CHECK(rfw_nic_create(A.port->q[0], &conf) == NULL, "NIC conf: snapshot_us 5 refused");
	conf = (struct rfw_nic_conf){.snapshot_max_per_s = 999};
	CHECK(rfw_nic_create(A.port->q[0], &conf) == NULL,
	      "NIC conf: snapshot_max_per_s 999 refused");
	conf = (struct rfw_nic_conf){.tx_stall_ms = 3600001};
	CHECK(rfw_nic_create(A.port->q[0], &conf) == NULL, "NIC conf: tx_stall_ms 3600001 refused");
}

/* Bad paths and configurations are refused, nothing half-attached is left behind. */
static void run_bad_input(void)
{
	struct rfw_nic_path ok = {0}, bad;
	struct rfw_qp *qa = make_qp(&A);
	struct rte_ring *rx, *tx;
	struct rfw_port *pc;
	struct rfw_identity id6 = {.has_ip6 = true};
	struct rfw_nic *nc;

	ok.dst_mac = B.port->id.mac;
	memcpy(ok.dst_ip, B.ip4m, 16);
	bad = ok;
	bad.vlan = RFW_NIC_VLAN_TAG; /* vlan_id 0 */
	CHECK(rfw_nic_qp_attach(A.nic, qa, &bad) == -EINVAL, "VLAN id 0 refused");
	bad.vlan_id = 4095;
	CHECK(rfw_nic_qp_attach(A.nic, qa, &bad) == -EINVAL, "VLAN id 4095 refused");
	bad = ok;
	bad.vlan = 7;
	CHECK(rfw_nic_qp_attach(A.nic, qa, &bad) == -EINVAL, "unknown vlan mode refused");
	bad = ok;
	bad.pcp_set = true;
	bad.pcp = 8;
	CHECK(rfw_nic_qp_attach(A.nic, qa, &bad) == -EINVAL, "PCP 8 refused");
	CHECK(rfw_nic_qp_l2(A.nic, qa) == RFW_NIC_L2_FAILED, "nothing attached after refusals");
	CHECK(rfw_nic_qp_attach(A.nic, qa, &ok) == 0 &&
	          rfw_nic_qp_attach(A.nic, qa, &ok) == -EEXIST,
	      "attach once, then -EEXIST");
	rfw_nic_qp_detach(A.nic, qa);
	rfw_destroy_qp(qa);

	bad_nic_confs();

	/* An IPv6-only port: IPv6 paths only, GID = its IPv6 address. */
	rx = rte_ring_create("nic_c_in", 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	tx = rte_ring_create("nic_c_out", 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	memcpy(id6.ip6, ip6_a, 16);
	id6.ip6[15] = 3;
	pc = rfw_port_setup(ring_port("nicC", rx, tx), &(struct rfw_port_conf){.nb_mbufs = 512},
	                    &id6);
	CHECK(pc != NULL, "IPv6-only port");
	if (pc == NULL)
		return;
	nc = rfw_nic_create(pc->q[0], NULL);
	CHECK(nc != NULL && memcmp(rfw_nic_gid(nc), id6.ip6, 16) == 0,
	      "NIC on an IPv6-only port, GID = its address");
	if (nc != NULL) {
		struct rfw_pd *pd = rfw_alloc_pd(rfw_nic_dev(nc));
		struct rfw_cq *cq = rfw_create_cq(rfw_nic_dev(nc), 16);
		struct rfw_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq};
		struct rfw_qp *qc;

		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		qc = rfw_create_qp(pd, &ia);
		CHECK(qc != NULL, "QP on the IPv6-only NIC");
		if (qc != NULL) {
			struct rfw_nic_path p6 = ok;

			CHECK(rfw_nic_qp_attach(nc, qc, &ok) == -EINVAL, "IPv4 path refused");
			memcpy(p6.dst_ip, B.ip6, 16);
			CHECK(rfw_nic_qp_attach(nc, qc, &p6) == 0, "IPv6 path accepted");
			rfw_nic_qp_detach(nc, qc);
			rfw_destroy_qp(qc);
		}
		rfw_destroy_cq(cq);
		rfw_dealloc_pd(pd);
		rfw_nic_destroy(nc);
	}
	rfw_port_close(pc);
	printf("ok   bad input refused\n");
}

/* --hold: a QP pair with traffic left in place for telemetry.py, expectations on stdout. */
static void hold(void)
{
	static const struct variant tv = {"telemetry", false, false, false, false};
	struct pair p = connect_pair(&tv, 50);
	uint64_t t[RFW_CNT__COUNT], tb[RFW_CNT__COUNT], dev[RFW_CNT__COUNT];
	struct rfw_wc wc;
	struct rfw_qp_attr qa_attr;
	struct pollfd pfd = {.fd = 0, .events = POLLIN};

	for (unsigned i = 0; i < 20; i++) {
		CHECK(post(&A, p.qa, RFW_WR_RDMA_WRITE, 0, 4096, &B, 16384) == 0, "hold: post");
		CHECK(wait_wc(&A, &wc) && wc.status == RFW_WC_SUCCESS, "hold: WRITE %u", i);
	}
	traffic("hold", &p, 77);
	pump_ms(5);
	rfw_nic_publish(A.nic);
	rfw_nic_publish(B.nic);
	rfw_qp_counters(p.qa, t);
	rfw_qp_counters(p.qb, tb);
	rfw_query_qp(p.qa, &qa_attr);
	rfw_dev_counters(rfw_nic_dev(A.nic), dev);
	printf("{\"nic_a\": %d, \"nic_b\": %d, \"qpn_a\": %u, \"qpn_b\": %u, "
	       "\"a_qp_tx_frame_bytes\": %lu, \"a_nic_tx_frame_bytes\": %lu, "
	       "\"a_qp_transport_tx_packets\": %lu, \"a_qp_transport_rx_packets\": %lu, "
	       "\"a_dev_tx_packets\": %lu, \"b_qp_np_cnp_sent\": %lu, "
	       "\"a_qp_rp_cnp_handled\": %lu, \"a_sq_psn\": %u}\n",
	       rfw_nic_id(A.nic), rfw_nic_id(B.nic), rfw_qp_num(p.qa), rfw_qp_num(p.qb),
	       rfw_nic_qp_ctr(A.nic, p.qa, RFW_NIC_QP_CTR_tx_frame_bytes),
	       rfw_nic_ctr(A.nic, RFW_NIC_CTR_tx_frame_bytes), t[RFW_CNT_tx_packets],
	       t[RFW_CNT_rx_packets], dev[RFW_CNT_tx_packets], tb[RFW_CNT_np_cnp_sent],
	       t[RFW_CNT_rp_cnp_handled], qa_attr.sq_psn);
	printf("READY\n");
	fflush(stdout);
	/*
	 * Keep polling (snapshots stay fresh) until the reader closes stdin. A line "churn"
	 * creates, uses and destroys QP pairs for 500 ms while the reader queries them, then
	 * prints "CHURNED n".
	 */
	for (;;) {
		char buf[64];
		ssize_t r;

		pump();
		if (poll(&pfd, 1, 1) <= 0)
			continue;
		r = read(0, buf, sizeof(buf) - 1);
		if (r <= 0)
			break;
		buf[r] = '\0';
		if (strstr(buf, "churn") != NULL) {
			printf("CHURNED %u\n", churn(500));
			fflush(stdout);
		}
	}
	destroy_pair(&p);
}

int main(int argc, char **argv)
{
	static const struct variant variants[] = {
	    {"ipv4", false, false, false, false},
	    {"ipv6", true, false, false, false},
	    {"ipv4-vlan", false, true, false, false},
	    {"ipv6-vlan", true, true, false, false},
	    {"ipv4-vlan-resolve", false, true, true, false},
	    {"ipv6-resolve", true, false, true, false},
	    {"ipv4-resolve", false, false, true, true},
	    {"ipv6-vlan-resolve", true, true, true, false, true},
	};
	static const struct option lo[] = {{"pcap-dir", required_argument, NULL, 'd'},
	                                   {"hold", no_argument, NULL, 'H'},
	                                   {NULL, 0, NULL, 0}};
	const char *dir = NULL;
	bool hold_mode = false;
	struct dcqcn_params par;
	char msg[128];
	int n, c;

	n = rfw_eal_init(argc, argv);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'd')
			dir = optarg;
		else if (c == 'H')
			hold_mode = true;
		else
			return 2;
	}
	if (dcqcn_params_init(&par, DCQCN_PROFILE_UNIFIED) != 0 ||
	    dcqcn_prof_config(&prof, &par, 100000, msg, sizeof(msg)) != 0)
		die(msg, EINVAL);
	r_a_out = rte_ring_create("nic_a_out", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_b_out = rte_ring_create("nic_b_out", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_a_in = rte_ring_create("nic_a_in", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_b_in = rte_ring_create("nic_b_in", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!r_a_out || !r_b_out || !r_a_in || !r_b_in)
		die("rte_ring_create", rte_errno);
	side_setup(&A, ring_port("nicA", r_a_in, r_a_out), 0x0a000001, ip6_a, 0x0a, true);
	side_setup(&B, ring_port("nicB", r_b_in, r_b_out), 0x0a000002, ip6_b, 0x0b, false);
	pcap_dead = pcap_open_dead(DLT_EN10MB, 65535);

	for (unsigned i = 0; i < RTE_DIM(variants); i++)
		run_variant(&variants[i], i, dir);
	CHECK(rfw_nic_ctr(A.nic, RFW_NIC_CTR_l2_resolved) == 4 &&
	          rfw_nic_ctr(B.nic, RFW_NIC_CTR_l2_resolved) == 4,
	      "four QPs per side resolved their peer (A %lu, B %lu)",
	      rfw_nic_ctr(A.nic, RFW_NIC_CTR_l2_resolved),
	      rfw_nic_ctr(B.nic, RFW_NIC_CTR_l2_resolved));
	CHECK(cnps_sent_b > 0 && cnps_handled_a > 0,
	      "CE -> CNP -> reaction point (B sent %lu, A handled %lu)", cnps_sent_b,
	      cnps_handled_a);
	CHECK(rfw_port_ctr(A.port, RFW_PORT_CTR_rx_icrc_bad) == 0 &&
	          rfw_port_ctr(B.port, RFW_PORT_CTR_rx_icrc_bad) == 0 &&
	          rfw_port_ctr(A.port, RFW_PORT_CTR_rx_malformed) == 0 &&
	          rfw_port_ctr(B.port, RFW_PORT_CTR_rx_malformed) == 0 &&
	          rfw_port_ctr(A.port, RFW_PORT_CTR_rx_other) == 0 &&
	          rfw_port_ctr(B.port, RFW_PORT_CTR_rx_other) == 0 &&
	          rfw_port_ctr(A.port, RFW_PORT_CTR_rx_not_for_us) == 0 &&
	          rfw_port_ctr(B.port, RFW_PORT_CTR_rx_not_for_us) == 0,
	      "no bad ICRC, malformed, foreign or unknown frame at either port");
	CHECK(rfw_nic_ctr(A.nic, RFW_NIC_CTR_l2_tagged_probes) >= 2 && untagged_neigh_dropped >= 4,
	      "VLAN paths resolved through tagged probes (%lu sent; %u untagged ARP/ND dropped)",
	      rfw_nic_ctr(A.nic, RFW_NIC_CTR_l2_tagged_probes), untagged_neigh_dropped);
	run_unreachable();
	run_link_down();
	run_bad_input();
	if (hold_mode)
		hold();
	pcap_close(pcap_dead);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
