/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM MAD codec (ctrl/cm_mad.h) against tshark (tests/unit/cm_tshark.py):
 *   cm_mad_dump FILE.pcap        for each RoCEv2 frame to QP1: the decoded fields under
 *                                tshark's field names, and whether re-encoding the decoded
 *                                message gives the same 256 bytes ("roundtrip=ok")
 *   cm_mad_dump --gen FILE.pcap  write frames of our encoder (REQ, REP, RTU, REJ, MRA, DREQ,
 *                                DREP with distinctive values), to be dumped as above
 * One line per frame: "frame=N key=value ...", values decimal (GIDs of IPv4: dotted).
 */
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/cm_mad.h"
#include "wire/frame.h"
#include "wire/ib_hdr.h"

static void kv(const char *k, uint64_t v)
{
	printf(" %s=%" PRIu64, k, v);
}

static void kv_ip(const char *k, const uint8_t gid[16])
{
	printf(" %s=%u.%u.%u.%u", k, gid[12], gid[13], gid[14], gid[15]);
}

static void dump_req(const struct rfw_cm_req *r)
{
	struct rfw_cma_hdr h;

	kv("infiniband.cm.req.serviceid", r->service_id);
	kv("infiniband.cm.req.localcaguid", r->local_ca_guid);
	kv("infiniband.cm.req.localqkey", r->local_qkey);
	kv("infiniband.cm.req.localqpn", r->local_qpn);
	kv("infiniband.cm.req.responderres", r->resp_res);
	kv("infiniband.cm.req.initdepth", r->init_depth);
	kv("infiniband.cm.req.remoteresptout", r->remote_cm_timeout);
	kv("infiniband.cm.req.transpsvctype", r->transport);
	kv("infiniband.cm.req.e2eflowctrl", r->flow_control);
	kv("infiniband.cm.req.startpsn", r->start_psn);
	kv("infiniband.cm.req.localresptout", r->local_cm_timeout);
	kv("infiniband.cm.req.retrcount", r->retry_count);
	kv("infiniband.cm.req.pkey", r->pkey);
	kv("infiniband.cm.req.pppmtu", r->mtu);
	kv("infiniband.cm.req.rdcexist", r->rdc_exists);
	kv("infiniband.cm.req.rnrretrcount", r->rnr_retry);
	kv("infiniband.cm.req.maxcmretr", r->max_cm_retries);
	kv("infiniband.cm.req.srq", r->srq);
	kv("infiniband.cm.req.prim_locallid", r->local_lid);
	kv("infiniband.cm.req.prim_remotelid", r->remote_lid);
	kv_ip("infiniband.cm.req.prim_localgid_ipv4", r->local_gid);
	kv_ip("infiniband.cm.req.prim_remotegid_ipv4", r->remote_gid);
	kv("infiniband.cm.req.prim_flowlabel", r->flow_label);
	kv("infiniband.cm.req.prim_pktrate", r->packet_rate);
	kv("infiniband.cm.req.prim_tfcclass", r->traffic_class);
	kv("infiniband.cm.req.prim_hoplim", r->hop_limit);
	kv("infiniband.cm.req.prim_sl", r->sl);
	kv("infiniband.cm.req.prim_subnetlocal", r->subnet_local);
	kv("infiniband.cm.req.prim_localacktout", r->ack_timeout);
	if (rfw_cma_hdr_decode(r->pdata, sizeof(r->pdata), &h) == 0 && h.ip_version == 4) {
		kv("infiniband.cm.req.ip_cm.ipv", h.ip_version);
		kv("infiniband.cm.req.ip_cm.sport", h.src_port);
		kv_ip("infiniband.cm.req.ip_cm.sip4", h.src_ip);
		kv_ip("infiniband.cm.req.ip_cm.dip4", h.dst_ip);
	}
}

static void dump_rep(const struct rfw_cm_rep *r)
{
	kv("infiniband.cm.rep.remotecommid", r->remote_comm_id);
	kv("infiniband.cm.rep.localqkey", r->local_qkey);
	kv("infiniband.cm.rep.localqpn", r->local_qpn);
	kv("infiniband.cm.rep.localeecn", r->local_eecn);
	kv("infiniband.cm.rep.startpsn", r->start_psn);
	kv("infiniband.cm.rep.respres", r->resp_res);
	kv("infiniband.cm.rep.initdepth", r->init_depth);
	kv("infiniband.cm.rep.tgtackdelay", r->target_ack_delay);
	kv("infiniband.cm.rep.failoveracc", r->failover);
	kv("infiniband.cm.rep.e2eflowctrl", r->flow_control);
	kv("infiniband.cm.rep.rnrretrcount", r->rnr_retry);
	kv("infiniband.cm.rep.srq", r->srq);
	kv("infiniband.cm.rep.localcaguid", r->local_ca_guid);
}

static void dump_msg(const struct rfw_cm_msg *m)
{
	kv("infiniband.mad.transactionid", m->tid);
	kv("infiniband.mad.attributeid", m->attr);
	switch (m->attr) {
	case RFW_CM_ATTR_REQ:
		dump_req(&m->req);
		break;
	case RFW_CM_ATTR_REP:
		dump_rep(&m->rep);
		break;
	case RFW_CM_ATTR_RTU:
		kv("infiniband.cm.rtu.localcommid", m->rtu.local_comm_id);
		kv("infiniband.cm.rtu.remotecommid", m->rtu.remote_comm_id);
		break;
	case RFW_CM_ATTR_REJ:
		kv("infiniband.cm.rej.localcommid", m->rej.local_comm_id);
		kv("infiniband.cm.rej.remotecommid", m->rej.remote_comm_id);
		kv("infiniband.cm.rej.msgrej", m->rej.msg_rejected);
		kv("infiniband.cm.rej.rejinfolen", m->rej.ari_len);
		kv("infiniband.cm.rej.reason", m->rej.reason);
		break;
	case RFW_CM_ATTR_DREQ:
		kv("infiniband.cm.dreq.localcommid", m->dreq.local_comm_id);
		kv("infiniband.cm.dreq.remotecommid", m->dreq.remote_comm_id);
		kv("infiniband.cm.req.remoteqpneecn", m->dreq.remote_qpn);
		break;
	case RFW_CM_ATTR_DREP:
		kv("infiniband.cm.drsp.localcommid", m->drep.local_comm_id);
		kv("infiniband.cm.drsp.remotecommid", m->drep.remote_comm_id);
		break;
	default:
		break;
	}
}

static int dump(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const uint8_t *d;
	int n = 0;

	if (p == NULL) {
		fprintf(stderr, "cm_mad_dump: %s: %s\n", path, err);
		return 1;
	}
	while (pcap_next_ex(p, &h, &d) == 1) {
		struct rfw_frame_view v;
		struct rfw_ib_pkt ib;
		struct rfw_cm_msg m;
		uint8_t again[RFW_MAD_LEN];

		n++;
		if (rfw_frame_parse_eth(d, h->caplen, &v) != RFW_FRAME_ERR_OK ||
		    v.kind != RFW_FRAME_ROCEV2 || rfw_ib_parse(d + v.ib_off, v.ib_len, &ib) != 0 ||
		    ib.bth.dqpn != 1 || ib.payload_len < RFW_MAD_LEN)
			continue;
		printf("frame=%d", n);
		if (rfw_cm_mad_decode(ib.payload, ib.payload_len, &m) != 0) {
			printf(" decode=FAIL\n");
			continue;
		}
		dump_msg(&m);
		rfw_cm_mad_encode(&m, again);
		printf(" roundtrip=%s\n", memcmp(again, ib.payload, RFW_MAD_LEN) ? "FAIL" : "ok");
	}
	pcap_close(p);
	return 0;
}

/* Messages with a distinct value in every field tshark shows. */
static int gen_msgs(struct rfw_cm_msg *m)
{
	struct rfw_cma_hdr h = {.ip_version = 4, .src_port = 0xa4b3};
	int n = 0;

	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_REQ, .tid = 0x1122334455667788ull};
	m[n].req = (struct rfw_cm_req){.local_comm_id = 0xa1b2c3d4,
	                               .service_id = 0x01061f90ull,
	                               .local_ca_guid = 0x0102030405060708ull,
	                               .local_qkey = 0x11,
	                               .local_qpn = 0xabcdef,
	                               .resp_res = 5,
	                               .init_depth = 3,
	                               .remote_cm_timeout = 21,
	                               .transport = 1,
	                               .flow_control = true,
	                               .start_psn = 0x345678,
	                               .local_cm_timeout = 17,
	                               .retry_count = 6,
	                               .pkey = 0xffff,
	                               .mtu = 5,
	                               .rnr_retry = 4,
	                               .max_cm_retries = 9,
	                               .srq = true,
	                               .local_lid = 0x1234,
	                               .remote_lid = 0x4321,
	                               .flow_label = 0xabcde,
	                               .packet_rate = 0x2a,
	                               .traffic_class = 0x68,
	                               .hop_limit = 0x3f,
	                               .sl = 5,
	                               .subnet_local = true,
	                               .ack_timeout = 19};
	rfw_ip4_to_mapped(m[n].req.local_gid, 0xc0000202);
	rfw_ip4_to_mapped(m[n].req.remote_gid, 0xc0000201);
	h.src_ip[12] = 192, h.src_ip[13] = 0, h.src_ip[14] = 2, h.src_ip[15] = 2;
	h.dst_ip[12] = 192, h.dst_ip[13] = 0, h.dst_ip[14] = 2, h.dst_ip[15] = 1;
	rfw_cma_hdr_encode(&h, m[n++].req.pdata);
	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_REP, .tid = 0x1122334455667788ull};
	m[n++].rep = (struct rfw_cm_rep){.local_comm_id = 0x0badcafe,
	                                 .remote_comm_id = 0xa1b2c3d4,
	                                 .local_qkey = 0x22,
	                                 .local_qpn = 0x00beef,
	                                 .local_eecn = 0x12,
	                                 .start_psn = 0xfedcba,
	                                 .resp_res = 7,
	                                 .init_depth = 2,
	                                 .target_ack_delay = 13,
	                                 .failover = 2,
	                                 .flow_control = true,
	                                 .rnr_retry = 5,
	                                 .srq = true,
	                                 .local_ca_guid = 0x8877665544332211ull};
	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_RTU, .tid = 0x1122334455667788ull};
	m[n++].rtu =
	    (struct rfw_cm_simple){.local_comm_id = 0xa1b2c3d4, .remote_comm_id = 0x0badcafe};
	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_REJ, .tid = 0x99};
	m[n++].rej = (struct rfw_cm_rej){.local_comm_id = 0x77,
	                                 .remote_comm_id = 0x88,
	                                 .msg_rejected = 1,
	                                 .ari_len = 9,
	                                 .reason = 28};
	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_MRA, .tid = 0x9a};
	m[n++].mra = (struct rfw_cm_mra){
	    .local_comm_id = 0x55, .remote_comm_id = 0x66, .msg_mraed = 1, .service_timeout = 20};
	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_DREQ, .tid = 0xabcdef0123ull};
	m[n++].dreq = (struct rfw_cm_simple){
	    .local_comm_id = 0x0badcafe, .remote_comm_id = 0xa1b2c3d4, .remote_qpn = 0xabcdef};
	m[n] = (struct rfw_cm_msg){.attr = RFW_CM_ATTR_DREP, .tid = 0xabcdef0123ull};
	m[n++].drep =
	    (struct rfw_cm_simple){.local_comm_id = 0xa1b2c3d4, .remote_comm_id = 0x0badcafe};
	return n;
}

static size_t frame_of(const struct rfw_cm_msg *m, uint8_t *buf, size_t cap)
{
	struct rfw_frame_spec s = {.ip_ver = 4, .ttl = 64, .udp_sport = 49152};
	struct rfw_ib_pkt ib = {0};
	int off, hl;

	rfw_ip4_to_mapped(s.src_ip, 0xc0000202);
	rfw_ip4_to_mapped(s.dst_ip, 0xc0000201);
	ib.bth.opcode = 0x64; /* UD SEND Only */
	ib.bth.pkey = 0xffff;
	ib.bth.dqpn = 1;
	ib.deth.qkey = 0x80010000u;
	ib.deth.src_qpn = 1;
	off = rfw_frame_build_hdrs(buf, cap, &s, 12 + 8 + RFW_MAD_LEN);
	if (off < 0)
		return 0;
	hl = rfw_ib_build(buf + off, cap - (size_t)off, &ib);
	if (hl < 0)
		return 0;
	rfw_cm_mad_encode(m, buf + off + hl);
	return rfw_frame_finalize(buf, &s, (size_t)hl + RFW_MAD_LEN);
}

static int gen(const char *path)
{
	struct rfw_cm_msg m[8];
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *w = pcap_dump_open(dead, path);
	int n = gen_msgs(m);

	if (w == NULL) {
		fprintf(stderr, "cm_mad_dump: %s: %s\n", path, pcap_geterr(dead));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		uint8_t buf[512];
		struct pcap_pkthdr h = {0};

		h.caplen = h.len = (uint32_t)frame_of(&m[i], buf, sizeof(buf));
		if (h.caplen == 0)
			return 1;
		pcap_dump((uint8_t *)w, &h, buf);
	}
	pcap_dump_close(w);
	pcap_close(dead);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--gen") == 0)
		return gen(argv[2]);
	if (argc == 2)
		return dump(argv[1]);
	fprintf(stderr, "usage: cm_mad_dump FILE.pcap | cm_mad_dump --gen FILE.pcap\n");
	return 2;
}
