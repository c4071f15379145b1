/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input on the wire at line rate (issue 6): two rfw_nic endpoints A and B over a ring pair
 * (rte_eth_from_rings, as rocefw-perf --loopback) move valid RC traffic both ways (A->B WRITE,
 * SEND and READ; B->A WRITE and SEND), every byte checked, while an injector puts hostile frames
 * straight into both RX rings, interleaved with the valid frames, as fast as the rings take
 * them (a reserve of ring slots is kept for the valid frames, so that the peer's TX never finds
 * a full ring: the test is about classification, not about loss recovery).
 *
 * Hostile classes, and the counter each must land in:
 *   pcap       every frame of tests/data/icrc/malformed.pcap (B only: it is addressed to
 *              192.0.2.2) -> port rx_icrc_bad (7 per replay) and rx_malformed
 *              (truncated_bth, 1 per replay), as in test_rx_classify
 *   random     random length, random bytes -> one of the port's drop counters
 *   rand_ib    valid Ethernet/IPv4/UDP 4791 headers to us, random IB part -> rx_icrc_bad
 *   qpn        valid ICRC, destination QP that does not exist -> transport rx_unknown_qp
 *   pkey       valid ICRC, P_Key 0x1234 / 0x8001 -> NIC pkey_violations
 *   psn_ahead  WRITE ONLY into the peer's live buffer, PSN 2^22 ahead -> out_of_sequence
 *   psn_behind SEND ONLY, PSN 2^22 behind (no AckReq) -> duplicate_request
 *   resp_far   ACK and READ RESPONSE ONLY with a PSN 2^22 ahead -> rx_bad_response /
 *              rx_ghost_response
 *   ud_opcode  UD SEND ONLY to the RC QP -> rx_bad_opcode (IBA 9.6)
 *   init_qp    SEND ONLY and ACK to a QP in INIT -> rx_bad_state (IBA 10.3.1)
 *   bad_icrc   a well-formed WRITE ONLY with one ICRC bit flipped -> rx_icrc_bad
 *   macctl     PFC frames damaged one way each (truncated, other opcode, other destination,
 *              group source, VLAN-tagged) -> rx_macctl_bad / rx_unsupported_op_phy, and
 *              nothing paused
 *
 * Asserted: exact counts for the classes whose counter nothing else touches, at-least counts
 * for the sequence classes (the NAKs they provoke make go-back-N retransmissions, which the
 * valid traffic's own duplicates also count), the frame balance of each port (every hostile
 * frame counted exactly once: received = peer's sent + injected, and the drops add up), every
 * message completed with success and its bytes equal, every QP still in RTS, every injected
 * mbuf back in the injector's pool (a NIC frees each burst it received into the frames' own
 * pools). Prints the hostile-frame rate reached.
 *
 * usage: test_badinput [EAL options] -- tests/data/icrc/malformed.pcap
 */
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_port.h"

#include "check.h"

#define MTU_BYTES   1024
#define MSG         4096 /* 4 packets per message */
#define NMSG        512  /* messages per operation and direction */
#define DEPTH       16   /* outstanding send WRs per QP */
#define RING_SIZE   4096
#define RING_KEEP   1024 /* ring slots the injector leaves for valid frames */
#define TIME_LIMIT  15   /* s */
#define MIN_PER_CLS 100  /* hostile frames per class and target at least */
#define MAX_PCAP    16

enum cls {
	C_PCAP,
	C_RANDOM,
	C_RAND_IB,
	C_QPN,
	C_PKEY,
	C_PSN_AHEAD,
	C_PSN_BEHIND,
	C_RESP_FAR,
	C_UD_OPCODE,
	C_INIT_QP,
	C_BAD_ICRC,
	C_MACCTL,
	C__COUNT
};
static const char *const cls_name[C__COUNT] = {
    "pcap",       "random",   "rand_ib",   "qpn",     "pkey",     "psn_ahead",
    "psn_behind", "resp_far", "ud_opcode", "init_qp", "bad_icrc", "macctl",
};

/* Regions of an endpoint's memory, NMSG x MSG bytes each. */
enum { R_WSRC, R_SSRC, R_RDST, R_RECV, R_WDST, R_RSRC, R__COUNT };

struct ep {
	const char *name;
	struct rfw_port *port;
	struct rfw_nic *nic;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_qp *qp, *idle_qp;
	struct rfw_mr *mr;
	uint8_t *mem;
	struct rte_ring *rx_ring; /* where the injector puts frames for this endpoint */
	struct ep *peer;
	unsigned nops;          /* operations this side posts: 3 (A) or 2 (B) */
	uint64_t posted, done;  /* send WRs */
	uint64_t recvd;         /* receive completions */
	uint64_t inj[C__COUNT]; /* hostile frames injected, by class */
	uint64_t pcap_replays;
};

static struct ep A = {.name = "A", .nops = 3}, B = {.name = "B", .nops = 2};
static struct rte_mempool *inj_pool;
static uint8_t pcap_frames[MAX_PCAP][RFW_FRAME_MAX];
static uint16_t pcap_len[MAX_PCAP];
static unsigned npcap;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static inline uint8_t *region(const struct ep *e, unsigned r, uint64_t k)
{
	return e->mem + ((size_t)r * NMSG + k) * MSG;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "test_badinput: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* ---- endpoints ---- */

static void ep_setup(struct ep *e, uint16_t port_id, uint8_t last)
{
	struct rfw_identity id = {
	    .mac = {.addr_bytes = {0x02, 0, 0, 0, 0, last}},
	    .has_ip4 = true,
	    .ip4 = 0xc0000200u | last,
	    .has_ip6 = true,
	    .ip6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last},
	};
	struct rfw_port_conf pc = {.nb_mbufs = 8192};
	struct rfw_nic_conf nc = {0};
	struct rfw_qp_init_attr ia = {0};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT,
	                        .qp_access_flags = RFW_ACCESS_REMOTE_WRITE};
	size_t len = (size_t)R__COUNT * NMSG * MSG;

	e->port = rfw_port_setup(port_id, &pc, &id);
	if (e->port == NULL)
		die("rfw_port_setup", rte_errno);
	e->nic = rfw_nic_create(e->port->q[0], &nc);
	if (e->nic == NULL)
		die("rfw_nic_create", rte_errno);
	e->pd = rfw_alloc_pd(rfw_nic_dev(e->nic));
	e->cq = rfw_create_cq(rfw_nic_dev(e->nic), 4096);
	e->mem = aligned_alloc(4096, len);
	if (e->pd == NULL || e->cq == NULL || e->mem == NULL)
		die("PD/CQ/memory", ENOMEM);
	for (size_t i = 0; i < len; i++)
		e->mem[i] = (uint8_t)rnd();
	e->mr =
	    rfw_reg_mr(e->pd, e->mem, len,
	               RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ);
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.cap.max_send_wr = DEPTH;
	ia.cap.max_recv_wr = NMSG;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.sq_sig_all = true;
	e->qp = rfw_create_qp(e->pd, &ia);
	/* A QP that stays in INIT: requests and responses to it are wrong for its state. */
	e->idle_qp = rfw_create_qp(e->pd, &ia);
	if (e->mr == NULL || e->qp == NULL || e->idle_qp == NULL)
		die("MR/QP", errno);
	if (rfw_modify_qp(e->idle_qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		die("idle QP INIT", EINVAL);
}

static void qp_connect(struct ep *e)
{
	struct rfw_qp_attr a = {0};
	struct rfw_nic_path path = {0};
	struct rfw_qp *qp = e->qp;

	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags =
	    RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ;
	if (rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		die("modify_qp INIT", EINVAL);
	path.dst_mac = e->peer->port->id.mac;
	memcpy(path.dst_ip, rfw_nic_gid(e->peer->nic), 16);
	if (rfw_nic_qp_attach(e->nic, qp, &path) != 0)
		die("rfw_nic_qp_attach", EINVAL);
	a.qp_state = RFW_QPS_RTR;
	memcpy(a.ah_attr.dgid, rfw_nic_gid(e->peer->nic), 16);
	memcpy(a.ah_attr.sgid, rfw_nic_gid(e->nic), 16);
	a.path_mtu = RFW_MTU_1024;
	a.dest_qp_num = rfw_qp_num(e->peer->qp);
	a.rq_psn = 0;
	a.max_dest_rd_atomic = RFW_MAX_RD_ATOMIC;
	a.min_rnr_timer = 1;
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                      RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER) !=
	    0)
		die("modify_qp RTR", EINVAL);
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14; /* 67 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = RFW_MAX_RD_ATOMIC;
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                      RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC) != 0)
		die("modify_qp RTS", EINVAL);
	/* Every receive buffer up front: SEND j lands in R_RECV slot j. */
	for (uint64_t j = 0; j < NMSG; j++) {
		struct rfw_sge sge = {(uint64_t)(uintptr_t)region(e, R_RECV, j), MSG,
		                      rfw_mr_lkey(e->mr)};
		struct rfw_recv_wr wr = {.wr_id = j, .sg_list = &sge, .num_sge = 1}, *bad;

		if (rfw_post_recv(qp, &wr, &bad, rfw_nic_clock_ns(e->nic)) != 0)
			die("rfw_post_recv", EINVAL);
	}
}

/* ---- valid traffic ---- */

/* Send WR k of @e: operation k % nops (WRITE, SEND, READ), message k / nops. */
static void post_one(struct ep *e)
{
	uint64_t k = e->posted, m = k / e->nops;
	struct ep *p = e->peer;
	struct rfw_send_wr wr = {.wr_id = k, .num_sge = 1}, *bad;
	struct rfw_sge sge = {0, MSG, rfw_mr_lkey(e->mr)};

	wr.sg_list = &sge;
	switch (k % e->nops) {
	case 0:
		sge.addr = (uint64_t)(uintptr_t)region(e, R_WSRC, m);
		wr.opcode = RFW_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)region(p, R_WDST, m);
		wr.wr.rdma.rkey = rfw_mr_rkey(p->mr);
		break;
	case 1:
		sge.addr = (uint64_t)(uintptr_t)region(e, R_SSRC, m);
		wr.opcode = RFW_WR_SEND;
		break;
	default:
		sge.addr = (uint64_t)(uintptr_t)region(e, R_RDST, m);
		wr.opcode = RFW_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)region(p, R_RSRC, m);
		wr.wr.rdma.rkey = rfw_mr_rkey(p->mr);
		break;
	}
	if (rfw_post_send(e->qp, &wr, &bad, rfw_nic_clock_ns(e->nic)) != 0)
		die("rfw_post_send", EINVAL);
	e->posted++;
}

static void reap(struct ep *e)
{
	struct rfw_wc wc[32];
	struct ep *p = e->peer;
	int n;

	while ((n = rfw_poll_cq(e->cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct rfw_wc *w = &wc[i];

			CHECK(w->status == RFW_WC_SUCCESS, "%s: completion %s (wr %" PRIu64 ")",
			      e->name, rfw_wc_status_str(w->status), w->wr_id);
			if (w->opcode == RFW_WC_RECV) {
				CHECK(w->wr_id == e->recvd && w->byte_len == MSG,
				      "%s: receive %" PRIu64 " of %u bytes, expected %" PRIu64,
				      e->name, w->wr_id, w->byte_len, e->recvd);
				CHECK(w->wr_id < NMSG &&
				          memcmp(region(e, R_RECV, w->wr_id),
				                 region(p, R_SSRC, w->wr_id), MSG) == 0,
				      "%s: SEND %" PRIu64 " data differs", e->name, w->wr_id);
				e->recvd++;
				continue;
			}
			uint64_t k = w->wr_id, m = k / e->nops;

			CHECK(k == e->done, "%s: completion %" PRIu64 " out of order (%" PRIu64 ")",
			      e->name, k, e->done);
			if (k % e->nops == 0)
				CHECK(memcmp(region(p, R_WDST, m), region(e, R_WSRC, m), MSG) == 0,
				      "%s: WRITE %" PRIu64 " data differs at the responder",
				      e->name, m);
			else if (k % e->nops == 2)
				CHECK(memcmp(region(e, R_RDST, m), region(p, R_RSRC, m), MSG) == 0,
				      "%s: READ %" PRIu64 " data differs at the requester", e->name,
				      m);
			e->done++;
		}
	}
	CHECK(n >= 0, "%s: rfw_poll_cq %d", e->name, n);
	while (e->posted < (uint64_t)e->nops * NMSG && e->posted - e->done < DEPTH)
		post_one(e);
}

static bool traffic_done(const struct ep *e)
{
	return e->done == (uint64_t)e->nops * NMSG && e->peer->recvd == NMSG;
}

/* ---- hostile frames ---- */

static void spec_to(struct rfw_frame_spec *s, const struct ep *t)
{
	const struct ep *p = t->peer;

	memset(s, 0, sizeof(*s));
	memcpy(s->dst_mac, t->port->id.mac.addr_bytes, 6);
	memcpy(s->src_mac, p->port->id.mac.addr_bytes, 6);
	s->ip_ver = 4;
	s->tos = 26 << 2 | RFW_ECN_ECT0;
	s->ttl = 64;
	s->df = true;
	memcpy(s->src_ip, p->port->gid, 16);
	memcpy(s->dst_ip, t->port->gid, 16);
	s->udp_sport = (uint16_t)(0xc000 | (rnd() & 0x3fff));
}

/* A RoCEv2 frame to @t from its peer's addresses with a valid ICRC; returns its length. */
static size_t roce_frame(uint8_t *buf, const struct ep *t, const struct rfw_ib_pkt *pk,
                         uint32_t payload)
{
	struct rfw_frame_spec s;
	size_t ib_len = rfw_ib_opcode_info(pk->bth.opcode)->hdr_len + payload + pk->bth.padcnt;
	int off, hl;

	spec_to(&s, t);
	off = rfw_frame_build_hdrs(buf, RFW_FRAME_MAX, &s, ib_len);
	if (off < 0)
		die("rfw_frame_build_hdrs", off);
	hl = rfw_ib_build(buf + off, RFW_FRAME_MAX - (size_t)off, pk);
	if (hl < 0)
		die("rfw_ib_build", hl);
	for (uint32_t i = 0; i < payload + pk->bth.padcnt; i++)
		buf[(size_t)off + (size_t)hl + i] = i < payload ? (uint8_t)rnd() : 0;
	return rfw_frame_finalize(buf, &s, ib_len);
}

/* Random bytes: a whole frame, or (@ib) a RoCEv2 frame to @t whose IB part is random. */
static size_t hostile_random(uint8_t *buf, struct ep *t, bool ib)
{
	struct rfw_frame_spec s;
	size_t len, ib_len;
	int off;

	if (!ib) {
		len = 1 + rnd() % 1514;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		return len;
	}
	ib_len = RFW_BTH_LEN + rnd() % 1024;
	spec_to(&s, t);
	off = rfw_frame_build_hdrs(buf, RFW_FRAME_MAX, &s, ib_len);
	for (size_t i = 0; i < ib_len + 4; i++)
		buf[(size_t)off + i] = (uint8_t)rnd();
	return (size_t)off + ib_len + 4;
}

/* PAUSE/PFC frames that must not pause anything: each damaged in one way. */
static size_t hostile_macctl(uint8_t *buf, struct ep *t)
{
	const uint16_t q[RFW_PFC_PRIOS] = {0xffff, 0xffff, 0xffff, 0xffff,
	                                   0xffff, 0xffff, 0xffff, 0xffff};
	size_t len = rfw_pfc_build(buf, RFW_FRAME_MAX, t->peer->port->id.mac.addr_bytes, 0xff, q);

	switch (rnd() % 5) {
	case 0: /* truncated inside the PFC body */
		return 14 + 2 + rnd() % (RFW_PFC_BODY_LEN - 2);
	case 1: /* opcode neither PAUSE nor PFC */
		buf[15] = (uint8_t)(2 + rnd() % 200);
		return len;
	case 2: /* to some other station */
		memcpy(buf, "\x02\x99\x99\x99\x99\x99", 6);
		return len;
	case 3: /* from a group address */
		buf[6] |= 1;
		return len;
	default: /* VLAN-tagged */
		memmove(buf + 16, buf + 12, len - 12);
		buf[12] = 0x81, buf[13] = 0x00, buf[14] = 0x60, buf[15] = 0x01;
		return len + 4;
	}
}

static size_t hostile(uint8_t *buf, struct ep *t, enum cls c)
{
	struct rfw_ib_pkt pk = {0};
	uint32_t far = 0x400000u + (uint32_t)(rnd() & 0xfff);
	uint32_t payload = 64;
	size_t len;

	pk.bth.pkey = 0xffff;
	pk.bth.dqpn = rfw_qp_num(t->qp);
	pk.bth.opcode = RFW_OP_RC_RDMA_WRITE_ONLY;
	/* Requests aim at a live buffer of the target, so an accepted one would show up as a
	 * data mismatch. */
	pk.reth.va = (uint64_t)(uintptr_t)region(t, R_WDST, rnd() % NMSG);
	pk.reth.rkey = rfw_mr_rkey(t->mr);
	pk.reth.dma_len = payload;
	switch (c) {
	case C_RANDOM:
	case C_RAND_IB:
		return hostile_random(buf, t, c == C_RAND_IB);
	case C_QPN:
		pk.bth.dqpn = (rnd() & 1) ? rfw_qp_num(t->qp) + 40 : 0xfffff0;
		pk.bth.psn = far;
		break;
	case C_PKEY:
		pk.bth.pkey = (rnd() & 1) ? 0x1234 : 0x8001;
		pk.bth.psn = far;
		break;
	case C_PSN_AHEAD:
		pk.bth.psn = far;
		pk.bth.ackreq = true;
		break;
	case C_PSN_BEHIND:
		pk.bth.opcode = RFW_OP_RC_SEND_ONLY;
		pk.bth.psn = (uint32_t)(0xc00000u - (rnd() & 0xfff)) & RFW_PSN_MASK;
		break;
	case C_RESP_FAR:
		if (rnd() & 1) {
			pk.bth.opcode = RFW_OP_RC_ACKNOWLEDGE;
			payload = 0;
		} else {
			pk.bth.opcode = RFW_OP_RC_RDMA_READ_RESPONSE_ONLY;
		}
		pk.bth.psn = far;
		break;
	case C_UD_OPCODE:
		pk.bth.opcode = RFW_OP_UD_SEND_ONLY;
		pk.deth.qkey = 0x11111111;
		pk.deth.src_qpn = rfw_qp_num(t->peer->qp);
		pk.bth.psn = far;
		break;
	case C_INIT_QP:
		pk.bth.dqpn = rfw_qp_num(t->idle_qp);
		if (rnd() & 1) {
			pk.bth.opcode = RFW_OP_RC_ACKNOWLEDGE;
			payload = 0;
		} else {
			pk.bth.opcode = RFW_OP_RC_SEND_ONLY;
		}
		break;
	case C_MACCTL:
		return hostile_macctl(buf, t);
	case C_BAD_ICRC:
		pk.bth.psn = far;
		len = roce_frame(buf, t, &pk, payload);
		buf[len - 1 - rnd() % 4] ^= (uint8_t)(1u << (rnd() % 8));
		return len;
	default:
		return 0;
	}
	pk.bth.padcnt = rfw_ib_padcnt(payload);
	return roce_frame(buf, t, &pk, payload);
}

static struct rte_mbuf *mbuf_of(const uint8_t *buf, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(inj_pool);
	char *d;

	if (m == NULL)
		return NULL;
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, buf, len);
	return m;
}

/* Fill @t's RX ring with hostile frames down to RING_KEEP free slots; returns frames added. */
static unsigned inject(struct ep *t)
{
	static uint8_t buf[RFW_FRAME_MAX];
	struct rte_mbuf *m[RFW_MAX_BURST + MAX_PCAP];
	unsigned room = rte_ring_free_count(t->rx_ring), n = 0, sent;
	enum cls cls[RFW_MAX_BURST + MAX_PCAP];

	if (room <= RING_KEEP)
		return 0;
	room -= RING_KEEP;
	while (n < RFW_MAX_BURST && n < room) {
		enum cls c = (enum cls)(rnd() % C__COUNT);

		if (c == C_PCAP) {
			/* malformed.pcap is addressed to B; a whole replay at a time. */
			unsigned i;

			if (t != &B || n + npcap > room)
				continue;
			for (i = 0; i < npcap; i++) {
				m[n + i] = mbuf_of(pcap_frames[i], pcap_len[i]);
				if (m[n + i] == NULL)
					break;
				cls[n + i] = C_PCAP;
			}
			if (i != npcap) { /* pool empty: no partial replay */
				rte_pktmbuf_free_bulk(m + n, i);
				break;
			}
			n += npcap;
			continue;
		}
		m[n] = mbuf_of(buf, hostile(buf, t, c));
		if (m[n] == NULL)
			break;
		cls[n++] = c;
	}
	sent = rte_ring_enqueue_burst(t->rx_ring, (void **)m, n, NULL);
	for (unsigned i = 0; i < sent; i++)
		t->inj[cls[i]]++;
	if (sent != n)
		rte_pktmbuf_free_bulk(m + sent, n - sent);
	return sent;
}

static void load_pcap(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *d;

	if (pc == NULL) {
		fprintf(stderr, "test_badinput: %s: %s\n", path, err);
		exit(1);
	}
	while (npcap < MAX_PCAP && pcap_next_ex(pc, &h, &d) == 1) {
		if (h->caplen > RFW_FRAME_MAX)
			continue;
		memcpy(pcap_frames[npcap], d, h->caplen);
		pcap_len[npcap++] = (uint16_t)h->caplen;
	}
	pcap_close(pc);
	if (npcap != 8) {
		fprintf(stderr, "test_badinput: %s: %u frames, expected 8\n", path, npcap);
		exit(1);
	}
}

/* ---- checks ---- */

static uint64_t pctr(const struct ep *e, enum rfw_port_ctr c)
{
	return rfw_port_ctr(e->port, c);
}

/* Frame balance: each frame counted once, by exactly one counter. */
static void check_balance(struct ep *e, uint64_t injected, uint64_t pass)
{
	uint64_t drops;

	CHECK(pctr(e->peer, RFW_PORT_CTR_tx_dropped) == 0, "%s: valid frames lost in the ring",
	      e->peer->name);
	CHECK(pctr(e, RFW_PORT_CTR_rx_pkts) == pctr(e->peer, RFW_PORT_CTR_tx_pkts) + injected,
	      "%s: rx_pkts %" PRIu64 " != peer tx %" PRIu64 " + injected %" PRIu64, e->name,
	      pctr(e, RFW_PORT_CTR_rx_pkts), pctr(e->peer, RFW_PORT_CTR_tx_pkts), injected);
	drops = pctr(e, RFW_PORT_CTR_rx_icrc_bad) + pctr(e, RFW_PORT_CTR_rx_malformed) +
	        pctr(e, RFW_PORT_CTR_rx_multiseg) + pctr(e, RFW_PORT_CTR_rx_not_for_us) +
	        pctr(e, RFW_PORT_CTR_rx_not_rocev2) + pctr(e, RFW_PORT_CTR_rx_other) +
	        pctr(e, RFW_PORT_CTR_rx_arp) + pctr(e, RFW_PORT_CTR_rx_nd) +
	        rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_mac_control_phy);
	CHECK(drops == injected - pass, "%s: port drops %" PRIu64 " != %" PRIu64, e->name, drops,
	      injected - pass);
	CHECK(pctr(e, RFW_PORT_CTR_rx_rocev2) == pctr(e->peer, RFW_PORT_CTR_tx_pkts) + pass,
	      "%s: rx_rocev2 %" PRIu64, e->name, pctr(e, RFW_PORT_CTR_rx_rocev2));
}

/* The port-level classes with a counter of their own: ICRC, truncated BTH, MAC Control. */
static void check_port_classes(struct ep *e, const uint64_t *n)
{
	struct rfw_queue *q = e->port->q[0];

	CHECK(pctr(e, RFW_PORT_CTR_rx_icrc_bad) ==
	          7 * e->pcap_replays + n[C_RAND_IB] + n[C_BAD_ICRC],
	      "%s: rx_icrc_bad %" PRIu64, e->name, pctr(e, RFW_PORT_CTR_rx_icrc_bad));
	CHECK(q->malformed_ib[RFW_IB_ERR_TRUNC_BTH] == e->pcap_replays,
	      "%s: truncated_bth %" PRIu64, e->name, q->malformed_ib[RFW_IB_ERR_TRUNC_BTH]);
	CHECK(rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_mac_control_phy) == n[C_MACCTL] &&
	          rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_macctl_bad) +
	                  rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_unsupported_op_phy) ==
	              n[C_MACCTL] &&
	          rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_pause_ctrl_phy) == 0 &&
	          rfw_pfc_storm(e->port) == 0 && rfw_pfc_paused(e->port, rte_rdtsc()) == 0,
	      "%s: MAC Control: %" PRIu64 " received, %" PRIu64 " bad, %" PRIu64
	      " unsupported, %" PRIu64 " accepted",
	      e->name, rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_mac_control_phy),
	      rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_macctl_bad),
	      rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_unsupported_op_phy),
	      rfw_pfc_ctr(e->port, RFW_PFC_CTR_rx_pause_ctrl_phy));
}

/* The transport-level classes: P_Key, QPN, opcode, state, PSN, responses. */
static void check_transport_classes(struct ep *e, const uint64_t *n, const uint64_t *dc)
{
	CHECK(rfw_nic_ctr(e->nic, RFW_NIC_CTR_pkey_violations) == n[C_PKEY],
	      "%s: pkey_violations %" PRIu64, e->name,
	      rfw_nic_ctr(e->nic, RFW_NIC_CTR_pkey_violations));
	CHECK(dc[RFW_CNT_rx_unknown_qp] == n[C_QPN], "%s: rx_unknown_qp %" PRIu64, e->name,
	      dc[RFW_CNT_rx_unknown_qp]);
	CHECK(dc[RFW_CNT_rx_bad_opcode] == n[C_UD_OPCODE], "%s: rx_bad_opcode %" PRIu64, e->name,
	      dc[RFW_CNT_rx_bad_opcode]);
	CHECK(dc[RFW_CNT_rx_bad_state] == n[C_INIT_QP], "%s: rx_bad_state %" PRIu64, e->name,
	      dc[RFW_CNT_rx_bad_state]);
	CHECK(rfw_nic_ctr(e->nic, RFW_NIC_CTR_rx_dev_dropped) ==
	          n[C_QPN] + n[C_UD_OPCODE] + n[C_INIT_QP],
	      "%s: rx_dev_dropped %" PRIu64, e->name,
	      rfw_nic_ctr(e->nic, RFW_NIC_CTR_rx_dev_dropped));
	CHECK(dc[RFW_CNT_out_of_sequence] >= n[C_PSN_AHEAD], "%s: out_of_sequence %" PRIu64,
	      e->name, dc[RFW_CNT_out_of_sequence]);
	CHECK(dc[RFW_CNT_duplicate_request] >= n[C_PSN_BEHIND], "%s: duplicate_request %" PRIu64,
	      e->name, dc[RFW_CNT_duplicate_request]);
	CHECK(dc[RFW_CNT_rx_bad_response] + dc[RFW_CNT_rx_ghost_response] +
	              dc[RFW_CNT_duplicate_response] >=
	          n[C_RESP_FAR],
	      "%s: bad/ghost/duplicate responses %" PRIu64, e->name,
	      dc[RFW_CNT_rx_bad_response] + dc[RFW_CNT_rx_ghost_response] +
	          dc[RFW_CNT_duplicate_response]);
}

/* Nothing accepted later overwrote a buffer already checked; the QPs are where they were. */
static void check_buffers(struct ep *e)
{
	for (uint64_t m = 0; m < NMSG; m++) {
		CHECK(memcmp(region(e, R_RECV, m), region(e->peer, R_SSRC, m), MSG) == 0,
		      "%s: receive buffer %" PRIu64 " changed after its check", e->name, m);
		CHECK(memcmp(region(e->peer, R_WDST, m), region(e, R_WSRC, m), MSG) == 0,
		      "%s: WRITE %" PRIu64 " target changed after its check", e->name, m);
		if (e->nops == 3)
			CHECK(memcmp(region(e, R_RDST, m), region(e->peer, R_RSRC, m), MSG) == 0,
			      "%s: READ %" PRIu64 " buffer changed after its check", e->name, m);
	}
	CHECK(rfw_qp_state(e->qp) == RFW_QPS_RTS, "%s: QP in %s", e->name,
	      rfw_qp_state_str(rfw_qp_state(e->qp)));
	CHECK(rfw_qp_state(e->idle_qp) == RFW_QPS_INIT, "%s: idle QP in %s", e->name,
	      rfw_qp_state_str(rfw_qp_state(e->idle_qp)));
}

static void print_ep(struct ep *e, const uint64_t *dc)
{
	printf("  %s: rx_pkts %" PRIu64 " rx_rocev2 %" PRIu64 " icrc_bad %" PRIu64
	       " malformed %" PRIu64 " other %" PRIu64 " not_rocev2 %" PRIu64 " not_for_us %" PRIu64
	       " pkey_violations %" PRIu64 " unknown_qp %" PRIu64 " bad_opcode %" PRIu64
	       " bad_state %" PRIu64 " out_of_sequence %" PRIu64 " duplicate_request %" PRIu64
	       " nak_seq_err_sent %" PRIu64 " bad_response %" PRIu64 " ghost_response %" PRIu64
	       " retransmitted %" PRIu64 "\n",
	       e->name, pctr(e, RFW_PORT_CTR_rx_pkts), pctr(e, RFW_PORT_CTR_rx_rocev2),
	       pctr(e, RFW_PORT_CTR_rx_icrc_bad), pctr(e, RFW_PORT_CTR_rx_malformed),
	       pctr(e, RFW_PORT_CTR_rx_other), pctr(e, RFW_PORT_CTR_rx_not_rocev2),
	       pctr(e, RFW_PORT_CTR_rx_not_for_us),
	       rfw_nic_ctr(e->nic, RFW_NIC_CTR_pkey_violations), dc[RFW_CNT_rx_unknown_qp],
	       dc[RFW_CNT_rx_bad_opcode], dc[RFW_CNT_rx_bad_state], dc[RFW_CNT_out_of_sequence],
	       dc[RFW_CNT_duplicate_request], dc[RFW_CNT_nak_seq_err_sent],
	       dc[RFW_CNT_rx_bad_response], dc[RFW_CNT_rx_ghost_response],
	       dc[RFW_CNT_retransmitted_packets]);
}

static void check_ep(struct ep *e)
{
	uint64_t dc[RFW_CNT__COUNT], injected = 0, pass = 0;
	const uint64_t *n = e->inj;

	rfw_dev_counters(rfw_nic_dev(e->nic), dc);
	for (int c = 0; c < C__COUNT; c++) {
		injected += n[c];
		if (c >= C_QPN && c <= C_INIT_QP)
			pass += n[c];
		printf("  %s <- %-10s %8" PRIu64 "\n", e->name, cls_name[c], n[c]);
		if (c != C_PCAP || e == &B)
			CHECK(n[c] >= MIN_PER_CLS, "%s: only %" PRIu64 " %s frames", e->name, n[c],
			      cls_name[c]);
	}
	check_balance(e, injected, pass);
	check_port_classes(e, n);
	check_transport_classes(e, n, dc);
	check_buffers(e);
	print_ep(e, dc);
}

static void ep_teardown(struct ep *e)
{
	rfw_nic_qp_detach(e->nic, e->qp);
	rfw_destroy_qp(e->qp);
	rfw_destroy_qp(e->idle_qp);
	rfw_dereg_mr(e->mr);
	rfw_destroy_cq(e->cq);
	rfw_dealloc_pd(e->pd);
	rfw_nic_destroy(e->nic);
	rfw_port_close(e->port);
	free(e->mem);
}

/*
 * Valid traffic both ways with hostile frames injected at both ends until each class reached
 * its minimum and the hostile frames outnumber the valid ones; then drain the rings and 10 ms
 * of quiet. Returns when the injector stopped (0: the time limit came first).
 */
static uint64_t run(struct rte_ring *r_ab, struct rte_ring *r_ba, uint64_t *hostile_total)
{
	uint64_t hz = rte_get_tsc_hz(), t_end = rte_rdtsc() + TIME_LIMIT * hz, t_stop = 0;

	for (;;) {
		uint64_t now = rte_rdtsc(), valid;
		bool enough = true;

		if (now > t_end) {
			CHECK(0,
			      "valid traffic not done within %d s (A %" PRIu64 "/%u, B %" PRIu64
			      "/%u)",
			      TIME_LIMIT, A.done, 3 * NMSG, B.done, 2 * NMSG);
			return t_stop;
		}
		for (int c = 0; c < C__COUNT; c++)
			enough &=
			    (c == C_PCAP || A.inj[c] >= MIN_PER_CLS) && B.inj[c] >= MIN_PER_CLS;
		valid = pctr(&A, RFW_PORT_CTR_tx_pkts) + pctr(&B, RFW_PORT_CTR_tx_pkts);
		if (t_stop == 0 && traffic_done(&A) && traffic_done(&B) && enough &&
		    *hostile_total >= valid)
			t_stop = now;
		if (t_stop == 0) {
			*hostile_total += inject(&A);
			*hostile_total += inject(&B);
		}
		rfw_nic_poll(A.nic);
		rfw_nic_poll(B.nic);
		reap(&A);
		reap(&B);
		if (t_stop != 0 && rte_ring_count(r_ab) == 0 && rte_ring_count(r_ba) == 0 &&
		    now - t_stop > hz / 100)
			return t_stop;
	}
}

/*
 * Every injected frame back in the injector's pool: freed by the NIC that received it, whose
 * burst free (rfw_nic_poll) must hand a frame of another pool, as these are, to that pool, or
 * left in a ring (freed here; a NIC's own frames there too, before the NICs go).
 */
static void check_inj_pool(struct rte_ring *r1, struct rte_ring *r2)
{
	struct rte_ring *rings[] = {r1, r2};
	void *m = NULL;

	for (unsigned i = 0; i < 2; i++)
		while (rte_ring_dequeue(rings[i], &m) == 0)
			rte_pktmbuf_free(m);
	CHECK(rte_mempool_avail_count(inj_pool) == inj_pool->size,
	      "injector's pool: %u of %u mbufs back", rte_mempool_avail_count(inj_pool),
	      inj_pool->size);
}

int main(int argc, char **argv)
{
	struct rte_ring *r_ab, *r_ba;
	uint64_t hz, t0, t_stop, hostile_total = 0, valid;
	int ret, pa, pb;
	double secs;

	ret = rfw_eal_init(argc, argv);
	if (ret < 0)
		return 1;
	if (argc - ret < 2) {
		fprintf(stderr, "usage: test_badinput [EAL options] -- malformed.pcap\n");
		return 1;
	}
	load_pcap(argv[ret + 1]);
	inj_pool = rte_pktmbuf_pool_create("inj", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
	                                   (int)rte_socket_id());
	r_ab = rte_ring_create("bad_ab", RING_SIZE, (int)rte_socket_id(),
	                       RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_ba = rte_ring_create("bad_ba", RING_SIZE, (int)rte_socket_id(),
	                       RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (inj_pool == NULL || r_ab == NULL || r_ba == NULL)
		die("pool/rings", rte_errno);
	/* A receives from r_ba and sends into r_ab; B the other way round. */
	pa = rte_eth_from_rings("bad_a", &r_ba, 1, &r_ab, 1, (unsigned)rte_socket_id());
	pb = rte_eth_from_rings("bad_b", &r_ab, 1, &r_ba, 1, (unsigned)rte_socket_id());
	if (pa < 0 || pb < 0)
		die("rte_eth_from_rings", rte_errno);
	A.peer = &B;
	B.peer = &A;
	A.rx_ring = r_ba;
	B.rx_ring = r_ab;
	/* The identities of tests/data/icrc: malformed.pcap is addressed to B. */
	ep_setup(&A, (uint16_t)pa, 1);
	ep_setup(&B, (uint16_t)pb, 2);
	qp_connect(&A);
	qp_connect(&B);

	hz = rte_get_tsc_hz();
	t0 = rte_rdtsc();
	t_stop = run(r_ab, r_ba, &hostile_total);
	B.pcap_replays = B.inj[C_PCAP] / npcap;
	CHECK(B.inj[C_PCAP] % npcap == 0, "partial malformed.pcap replay");
	secs = (double)((t_stop ? t_stop : rte_rdtsc()) - t0) / (double)hz;
	valid = pctr(&A, RFW_PORT_CTR_tx_pkts) + pctr(&B, RFW_PORT_CTR_tx_pkts);
	printf("test_badinput: %" PRIu64 " hostile frames and %" PRIu64
	       " valid frames in %.3f s: hostile %.3f Mpps, valid %.3f Mpps; %u+%u messages "
	       "verified (%u bytes each)\n",
	       hostile_total, valid, secs, (double)hostile_total / secs / 1e6,
	       (double)valid / secs / 1e6, 3 * NMSG + NMSG, 2 * NMSG + NMSG, MSG);
	CHECK(traffic_done(&A) && traffic_done(&B), "valid traffic incomplete");
	CHECK(hostile_total >= valid, "fewer hostile frames (%" PRIu64 ") than valid ones",
	      hostile_total);
	check_ep(&A);
	check_ep(&B);
	check_inj_pool(r_ab, r_ba);

	ep_teardown(&A);
	ep_teardown(&B);
	rte_ring_free(r_ab);
	rte_ring_free(r_ba);
	rte_mempool_free(inj_pool);
	rfw_eal_cleanup();
	printf("test_badinput: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
