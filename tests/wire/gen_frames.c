/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes a pcap with frames built by rocefw's builders (every opcode in the table, IPv4, IPv6
 * and VLAN-tagged), and on stdout one TSV line per frame with the field values it wrote, named
 * as tshark names them. tests/wire/tshark_fields.py decodes the pcap with tshark and compares.
 *
 * usage: gen_frames OUT.pcap [SEED]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"

static uint64_t rs;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static const uint8_t opcodes[] = {
#define X(name, val) val,
    RFW_FOREACH_OPCODE(X)
#undef X
};

/* Random frame headers for @variant (0: IPv4, 1: IPv6, 2: IPv4 with a VLAN tag). */
static void random_spec(unsigned variant, struct rfw_frame_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->ip_ver = variant == 1 ? 6 : 4;
	s->nvlan = variant == 2 ? 1 : 0;
	s->vlan_tci[0] = (uint16_t)(0x2000 | (rnd() & 0xfff));
	memcpy(s->dst_mac, "\x02\0\0\0\0\x02", 6);
	memcpy(s->src_mac, "\x02\0\0\0\0\x01", 6);
	if (s->ip_ver == 4) {
		rfw_ip4_to_mapped(s->src_ip, 0xc0000201);
		rfw_ip4_to_mapped(s->dst_ip, 0xc0000202);
	} else {
		memcpy(s->src_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s->dst_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
		s->udp_csum = true;
	}
	s->tos = (uint8_t)(rnd() & 3);
	s->ttl = 64;
	s->df = true;
	s->udp_sport = (uint16_t)(0xc000 | (rnd() & 0x3fff));
	s->flow_label = (uint32_t)rnd() & 0xfffff;
}

/* Random values in every header field of @opcode's packet. */
static void random_pkt(uint8_t opcode, struct rfw_ib_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = opcode;
	p->bth.se = rnd() & 1;
	p->bth.mig = rnd() & 1;
	p->bth.pkey = (uint16_t)rnd();
	p->bth.dqpn = (uint32_t)rnd() & RFW_QPN_MASK;
	p->bth.ackreq = rnd() & 1;
	p->bth.psn = (uint32_t)rnd() & RFW_PSN_MASK;
	p->reth.va = rnd();
	p->reth.rkey = (uint32_t)rnd();
	p->reth.dma_len = (uint32_t)rnd() & 0xffff;
	/* A valid syndrome: ACK with credits, RNR NAK, or one of the NAK codes. */
	switch (rnd() % 3) {
	case 0:
		p->aeth.syndrome = (uint8_t)(rnd() & 0x1f);
		break;
	case 1:
		p->aeth.syndrome = (uint8_t)(0x20 | (rnd() & 0x1f));
		break;
	default:
		p->aeth.syndrome = (uint8_t)(0x60 | (rnd() % 5));
	}
	p->aeth.msn = (uint32_t)rnd() & RFW_MSN_MASK;
	p->atomiceth.va = rnd() & ~7ull;
	p->atomiceth.rkey = (uint32_t)rnd();
	p->atomiceth.swap_add = rnd();
	p->atomiceth.compare = rnd();
	p->atomic_orig = rnd();
	p->imm = (uint32_t)rnd();
	p->ieth_rkey = (uint32_t)rnd();
	p->deth.qkey = (uint32_t)rnd();
	p->deth.src_qpn = (uint32_t)rnd() & RFW_QPN_MASK;
}

/* The row tshark must print for frame @n: what was built, "-" for absent headers. */
static void print_expect(unsigned n, const struct rfw_frame_spec *s, const struct rfw_ib_pkt *p,
                         const struct rfw_ib_opcode_info *oi, uint32_t crc)
{
#define HDR(bit) (oi->hdrs & RFW_HDR_##bit)
	printf("%u\t%u\t%u\t%u\t%d\t%d\t%u\t0\t%u\t%u\t%d\t%u", n, s->ip_ver, s->nvlan,
	       p->bth.opcode, p->bth.se, p->bth.mig, p->bth.padcnt, p->bth.pkey, p->bth.dqpn,
	       p->bth.ackreq, p->bth.psn);
	if (HDR(RETH))
		printf("\t%" PRIu64 "\t%u\t%u", p->reth.va, p->reth.rkey, p->reth.dma_len);
	else if (HDR(ATOMICETH)) /* tshark files AtomicETH VA/R_Key as reth.* */
		printf("\t%" PRIu64 "\t%u\t-", p->atomiceth.va, p->atomiceth.rkey);
	else
		printf("\t-\t-\t-");
	if (HDR(AETH))
		printf("\t%u\t%u", p->aeth.syndrome, p->aeth.msn);
	else
		printf("\t-\t-");
	if (HDR(ATOMICETH))
		printf("\t%" PRIu64 "\t%" PRIu64, p->atomiceth.swap_add, p->atomiceth.compare);
	else
		printf("\t-\t-");
	if (HDR(ATOMICACKETH))
		printf("\t%" PRIu64, p->atomic_orig);
	else
		printf("\t-");
	printf(HDR(IMMDT) ? "\t%08x" : "\t-", p->imm);
	printf(HDR(IETH) ? "\t%08x" : "\t-", p->ieth_rkey);
	if (HDR(DETH))
		printf("\t%u\t%u", p->deth.qkey, p->deth.src_qpn);
	else
		printf("\t-\t-");
	/* tshark stops at the BTH of opcode 0x81 (unknown to it): no ICRC field. */
	if (p->bth.opcode == RFW_OP_CNP)
		printf("\t-\t%u\n", (unsigned)(s->tos & 3));
	else
		printf("\t%u\t%u\n", crc, (unsigned)(s->tos & 3));
#undef HDR
}

/* One frame of @opcode in @variant into @d as frame @n, and its expected row. 0 or 1. */
static int gen_one(pcap_dumper_t *d, unsigned variant, uint8_t opcode, unsigned n)
{
	static uint8_t frame[2048];
	const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(opcode);
	struct rfw_frame_spec s;
	struct rfw_ib_pkt p;
	struct pcap_pkthdr h = {0};
	uint32_t plen = 0, crc;
	size_t ib_len, total;
	int off, hl;

	random_spec(variant, &s);
	random_pkt(opcode, &p);
	if (oi->flags & RFW_OPF_PAYLOAD)
		plen = (uint32_t)(rnd() % 200);
	p.bth.padcnt = rfw_ib_padcnt(plen);
	ib_len = oi->hdr_len + plen + p.bth.padcnt;
	off = rfw_frame_build_hdrs(frame, sizeof(frame), &s, ib_len);
	hl = rfw_ib_build(frame + off, sizeof(frame) - (size_t)off, &p);
	if (off < 0 || hl < 0) {
		fprintf(stderr, "gen_frames: build failed for opcode 0x%02x\n", opcode);
		return 1;
	}
	for (uint32_t k = 0; k < plen; k++)
		frame[off + hl + k] = (uint8_t)rnd();
	memset(frame + off + hl + plen, 0, p.bth.padcnt);
	total = rfw_frame_finalize(frame, &s, ib_len);
	crc = rfw_get_be32(frame + total - 4); /* as the bytes read, big-endian */
	h.ts.tv_sec = 1700000000;
	h.ts.tv_usec = (suseconds_t)n;
	h.caplen = h.len = (bpf_u_int32)total;
	pcap_dump((u_char *)d, &h, frame);
	print_expect(n + 1, &s, &p, oi, crc);
	return 0;
}

int main(int argc, char **argv)
{
	pcap_t *dead;
	pcap_dumper_t *d;
	unsigned n = 0;
	int rc = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gen_frames OUT.pcap [SEED]\n");
		return 2;
	}
	rs = argc == 3 ? strtoull(argv[2], NULL, 0) : 0x5eed;
	if (rs == 0)
		rs = 1;
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(dead, argv[1]);
	if (d == NULL) {
		fprintf(stderr, "gen_frames: %s\n", pcap_geterr(dead));
		return 1;
	}
	printf("frame\tip\tvlan\tinfiniband.bth.opcode\tinfiniband.bth.se\tinfiniband.bth.m"
	       "\tinfiniband.bth.padcnt\tinfiniband.bth.tver\tinfiniband.bth.p_key"
	       "\tinfiniband.bth.destqp\tinfiniband.bth.a\tinfiniband.bth.psn"
	       "\tinfiniband.reth.va\tinfiniband.reth.r_key\tinfiniband.reth.dmalen"
	       "\tinfiniband.aeth.syndrome\tinfiniband.aeth.msn"
	       "\tinfiniband.atomiceth.swapdt\tinfiniband.atomiceth.cmpdt"
	       "\tinfiniband.atomicacketh.origremdt\tinfiniband.immdt\tinfiniband.ieth"
	       "\tinfiniband.deth.q_key\tinfiniband.deth.srcqp\tinfiniband.invariant.crc"
	       "\tip.dsfield.ecn\n");
	for (unsigned variant = 0; variant < 3 && rc == 0; variant++)
		for (size_t i = 0; i < sizeof(opcodes) && rc == 0; i++)
			rc = gen_one(d, variant, opcodes[i], n++);
	pcap_dump_close(d);
	pcap_close(dead);
	return rc;
}
