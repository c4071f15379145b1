/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program outside the tree, built against an installed librocefw with nothing but
 *     cc example.c $(pkg-config --cflags --libs rocefw)
 * (tests/install/install_test.py does that). It uses each layer through its public header:
 * wire/ builds a RoCEv2 SEND frame with its ICRC and parses it back, cc/ validates a DCQCN
 * profile, transport/ creates two devices with one RC QP each and connects them to each other
 * (RESET -> INIT -> RTR -> RTS), and, when the library has the DPDK dataplane, the NIC host's
 * entry point links. Prints one line per layer; exit 0 when every step held.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cc/dcqcn_params.h"
#include "transport/rfw_verbs.h"
#include "wire/frame.h"
#include "wire/ib_hdr.h"
#ifdef ROCEFW_EXAMPLE_DPDK
#include "dataplane/rfw_nic.h"
#endif

static int wire_roundtrip(void)
{
	struct rfw_frame_spec s = {.ip_ver = 4, .tos = 26 << 2 | RFW_ECN_ECT0, .ttl = 64};
	struct rfw_ib_pkt p = {0};
	struct rfw_frame_view v;
	uint8_t f[256];
	int off;
	size_t len;

	memcpy(s.dst_mac, "\x02\0\0\0\0\x02", 6);
	memcpy(s.src_mac, "\x02\0\0\0\0\x01", 6);
	rfw_ip4_to_mapped(s.src_ip, 0x0a000001);
	rfw_ip4_to_mapped(s.dst_ip, 0x0a000002);
	p.bth.opcode = RFW_OP_RC_SEND_ONLY;
	p.bth.dqpn = 17;
	p.bth.psn = 42;
	off = rfw_frame_build_hdrs(f, sizeof(f), &s, RFW_BTH_LEN);
	if (off < 0 || rfw_ib_build(f + off, sizeof(f) - (size_t)off, &p) != RFW_BTH_LEN)
		return -1;
	len = rfw_frame_finalize(f, &s, RFW_BTH_LEN);
	if (rfw_frame_parse_eth(f, len, &v) != RFW_FRAME_ERR_OK || v.kind != RFW_FRAME_ROCEV2 ||
	    !rfw_frame_icrc_ok(f, &v) || rfw_frame_dscp(&v) != 26)
		return -1;
	printf("wire: %zu-byte RoCEv2 frame built and parsed, ICRC ok\n", len);
	return 0;
}

static int cc_profile(void)
{
	struct dcqcn_params prm;
	char msg[160];

	int prof = dcqcn_profile_lookup("unified");

	if (prof < 0 || dcqcn_params_init(&prm, (enum dcqcn_profile)prof) != 0 ||
	    dcqcn_params_validate(&prm, msg, sizeof(msg)) != 0)
		return -1;
	printf("cc: DCQCN profile 'unified' valid\n");
	return 0;
}

static uint8_t *no_buf(void *ctx, struct rfw_qp *qp, uint32_t len)
{
	(void)ctx;
	(void)qp;
	(void)len;
	return NULL; /* nothing is posted: no packet is ever asked for */
}

static void no_send(void *ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                    const struct rfw_tx_meta *m)
{
	(void)ctx;
	(void)qp;
	(void)buf;
	(void)len;
	(void)m;
}

static int to_rts(struct rfw_qp *qp, uint32_t dqpn)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT,
	                        .qp_access_flags = RFW_ACCESS_LOCAL_WRITE};

	if (rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0)
		return -1;
	a.qp_state = RFW_QPS_RTR;
	a.path_mtu = RFW_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                      RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER) !=
	    0)
		return -1;
	a.qp_state = RFW_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (rfw_modify_qp(qp, &a,
	                  RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                      RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC) != 0)
		return -1;
	return rfw_qp_state(qp) == RFW_QPS_RTS ? 0 : -1;
}

/* Two devices with one RC QP each, connected to each other, then everything destroyed. */
static int transport_pair(void)
{
	static const struct rfw_io_ops ops = {.tx_alloc = no_buf, .tx_send = no_send};
	struct rfw_qp_init_attr ia = {.sq_sig_all = true};
	struct rfw_dev *dev[2] = {NULL, NULL};
	struct rfw_pd *pd[2] = {NULL, NULL};
	struct rfw_cq *cq[2] = {NULL, NULL};
	struct rfw_qp *qp[2] = {NULL, NULL};
	int rc = -1;

	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	for (int i = 0; i < 2; i++) {
		struct rfw_dev_attr da = {.qpn_base = 17 + 100 * (uint32_t)i};

		dev[i] = rfw_dev_create(&da, &ops, NULL);
		pd[i] = dev[i] ? rfw_alloc_pd(dev[i]) : NULL;
		cq[i] = pd[i] ? rfw_create_cq(dev[i], 64) : NULL;
		ia.send_cq = ia.recv_cq = cq[i];
		qp[i] = cq[i] ? rfw_create_qp(pd[i], &ia) : NULL;
	}
	if (qp[0] && qp[1] && to_rts(qp[0], rfw_qp_num(qp[1])) == 0 &&
	    to_rts(qp[1], rfw_qp_num(qp[0])) == 0) {
		printf("transport: QP %u <-> QP %u in RTS\n", rfw_qp_num(qp[0]), rfw_qp_num(qp[1]));
		rc = 0;
	}
	for (int i = 0; i < 2; i++) {
		if (qp[i])
			rfw_destroy_qp(qp[i]);
		if (cq[i])
			rfw_destroy_cq(cq[i]);
		if (pd[i])
			rfw_dealloc_pd(pd[i]);
		if (dev[i])
			rfw_dev_destroy(dev[i]);
	}
	return rc;
}

int main(void)
{
	if (wire_roundtrip() != 0 || cc_profile() != 0 || transport_pair() != 0) {
		printf("FAIL\n");
		return 1;
	}
#ifdef ROCEFW_EXAMPLE_DPDK
	/* Through a volatile pointer: the symbol must resolve at link time, not be folded away. */
	__typeof__(&rfw_nic_create) volatile create = rfw_nic_create;

	printf("dataplane: rfw_nic_create linked (%s)\n", create != NULL ? "yes" : "no");
#endif
	return 0;
}
