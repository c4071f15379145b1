/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes a pcap of RoCEv2 RC RDMA WRITE ONLY frames built with wire/frame.h, for the
 * congestion point tests: alternating IPv4 and IPv6, ECT(0) except every NOT_ECT_EVERY-th
 * frame, which is sent not-ECT (0 = never).
 *
 * usage: gen_ect_pcap OUT.pcap COUNT PAYLOAD_BYTES [NOT_ECT_EVERY]
 *        gen_ect_pcap --bad-ib OUT.pcap
 *
 * --bad-ib writes four IPv4 frames whose ICRC is right but whose IB headers are not: TVer 1,
 * reserved opcode 0x1f, an RDMA WRITE ONLY cut inside its RETH, PadCnt 3 with one payload
 * byte. A receiver must count them malformed by reason (after the ICRC check passes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"

static int bad_ib(const char *path)
{
	/* IB parts (BTH .. before the ICRC), written raw. */
	static const uint8_t ib[4][24] = {
	    {0x04, 0x01, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 2, 'a', 'b', 'c', 'd'},
	    {0x1f, 0x00, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 2, 'a', 'b', 'c', 'd'},
	    {0x0a, 0x00, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0},
	    {0x04, 0x30, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 2, 'a', 0, 0, 0},
	};
	static const size_t ib_len[4] = {16, 16, 20, 13};
	uint8_t frame[256];
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, path);

	if (d == NULL) {
		fprintf(stderr, "gen_ect_pcap: %s\n", pcap_geterr(dead));
		return 1;
	}
	for (unsigned i = 0; i < 4; i++) {
		struct rfw_frame_spec s = {
		    .dst_mac = {0x02, 0, 0, 0, 0, 2},
		    .src_mac = {0x02, 0, 0, 0, 0, 1},
		    .ip_ver = 4,
		    .tos = RFW_ECN_ECT0,
		    .ttl = 64,
		    .udp_sport = 0xc001,
		};
		struct pcap_pkthdr h = {0};
		int off;

		rfw_ip4_to_mapped(s.src_ip, 0xc0000201);
		rfw_ip4_to_mapped(s.dst_ip, 0xc0000202);
		off = rfw_frame_build_hdrs(frame, sizeof(frame), &s, ib_len[i]);
		if (off < 0)
			return 1;
		memcpy(frame + off, ib[i], ib_len[i]);
		h.caplen = h.len = (bpf_u_int32)rfw_frame_finalize(frame, &s, ib_len[i]);
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t frame[8192];
	unsigned long count, payload, not_ect_every = 0;
	pcap_dumper_t *d;
	pcap_t *dead;

	if (argc == 3 && strcmp(argv[1], "--bad-ib") == 0)
		return bad_ib(argv[2]);
	if (argc < 4 || argc > 5) {
		fprintf(stderr,
		        "usage: gen_ect_pcap OUT.pcap COUNT PAYLOAD_BYTES [NOT_ECT_EVERY]\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 0);
	payload = strtoul(argv[3], NULL, 0);
	if (argc == 5)
		not_ect_every = strtoul(argv[4], NULL, 0);
	if (count == 0 || payload > 4096) {
		fprintf(stderr, "gen_ect_pcap: COUNT >= 1, PAYLOAD_BYTES <= 4096\n");
		return 2;
	}
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(dead, argv[1]);
	if (d == NULL) {
		fprintf(stderr, "gen_ect_pcap: %s\n", pcap_geterr(dead));
		return 1;
	}
	for (unsigned long i = 0; i < count; i++) {
		struct rfw_frame_spec s = {
		    .dst_mac = {0x02, 0, 0, 0, 0, 2},
		    .src_mac = {0x02, 0, 0, 0, 0, 1},
		    .ip_ver = (i & 1) ? 6 : 4,
		    .tos =
		        (not_ect_every && i % not_ect_every == 0) ? RFW_ECN_NOT_ECT : RFW_ECN_ECT0,
		    .ttl = 64,
		    .df = true,
		    .udp_sport = 0xc001,
		    .udp_csum = (i & 1) != 0,
		};
		struct rfw_ib_pkt p = {0};
		struct pcap_pkthdr h = {0};
		size_t ib_len;
		int off, hl;

		if (s.ip_ver == 4) {
			rfw_ip4_to_mapped(s.src_ip, 0xc0000201);
			rfw_ip4_to_mapped(s.dst_ip, 0xc0000202);
		} else {
			memcpy(s.src_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
			memcpy(s.dst_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
		}
		p.bth.opcode = RFW_OP_RC_RDMA_WRITE_ONLY;
		p.bth.pkey = 0xffff;
		p.bth.dqpn = 0x11;
		p.bth.psn = (uint32_t)i & RFW_PSN_MASK;
		p.bth.padcnt = rfw_ib_padcnt((uint32_t)payload);
		p.reth.va = 0x10000 + i * payload;
		p.reth.rkey = 0x1234;
		p.reth.dma_len = (uint32_t)payload;
		ib_len = RFW_BTH_LEN + RFW_RETH_LEN + payload + p.bth.padcnt;
		off = rfw_frame_build_hdrs(frame, sizeof(frame), &s, ib_len);
		if (off < 0)
			return 1;
		hl = rfw_ib_build(frame + off, sizeof(frame) - (size_t)off, &p);
		if (hl < 0)
			return 1;
		for (unsigned long k = 0; k < payload + p.bth.padcnt; k++)
			frame[(size_t)off + (size_t)hl + k] = k < payload ? (uint8_t)(i + k) : 0;
		h.caplen = h.len = (bpf_u_int32)rfw_frame_finalize(frame, &s, ib_len);
		h.ts.tv_usec = (long)i;
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}
