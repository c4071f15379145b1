/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK-free unit test of wire/neigh_wire.c: ECN CE marking on the independent ICRC
 * vectors (IPv4 header checksum still right, ICRC unchanged, other bytes untouched, VLAN and
 * IPv6, not-ECT and CE left alone, short frames refused), and the ARP/ND codec's validation
 * rules (RFC 826, RFC 4861 7.1) on frames built and then damaged one field at a time.
 *
 * usage: test_neigh_wire VECTORS_PCAP
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "wire/frame.h"
#include "wire/neigh_wire.h"
#include "wire/ib_hdr.h"

#include "check.h"

static void test_ecn(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned n = 0, marked = 0;

	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		exit(1);
	}
	while (pcap_next_ex(p, &h, &d) == 1) {
		uint8_t a[2048], b[2048];
		struct rfw_frame_view v0, v1;
		int before;

		n++;
		memcpy(a, d, h->caplen);
		memcpy(b, d, h->caplen);
		if (rfw_frame_parse_eth(a, h->caplen, &v0) != RFW_FRAME_ERR_OK)
			continue;
		before = rfw_ecn_mark_ce(b, h->caplen);
		CHECK(before == (int)rfw_frame_ecn(&v0), "frame %u: ECN before %d", n, before);
		CHECK(rfw_frame_parse_eth(b, h->caplen, &v1) == RFW_FRAME_ERR_OK,
		      "frame %u still parses (IPv4 checksum right)", n);
		if (before == RFW_ECN_NOT_ECT || before == RFW_ECN_CE) {
			CHECK(memcmp(a, b, h->caplen) == 0, "frame %u untouched", n);
			continue;
		}
		marked++;
		CHECK(rfw_frame_ecn(&v1) == RFW_ECN_CE, "frame %u now CE", n);
		CHECK(rfw_frame_dscp(&v1) == rfw_frame_dscp(&v0), "frame %u DSCP kept", n);
		CHECK(rfw_frame_icrc_ok(b, &v1), "frame %u ICRC still valid (ECN is masked)", n);
		/* Only the TOS/TC byte and the IPv4 checksum may differ. */
		for (size_t i = 0; i < h->caplen; i++) {
			size_t o = i - v0.l3_off;
			bool may = v0.ip_ver == 4 ? (o == 1 || o == 10 || o == 11) : (o == 1);

			if (a[i] != b[i] && !(i >= v0.l3_off && may)) {
				CHECK(0, "frame %u byte %zu changed", n, i);
				break;
			}
		}
	}
	pcap_close(p);
	CHECK(n >= 8 && marked >= 6, "vectors read %u, marked %u", n, marked);

	uint8_t s[20] = {0};
	CHECK(rfw_ecn_mark_ce(s, 13) == -1, "shorter than Ethernet refused");
	rfw_put_be16(s + 12, RFW_ETHERTYPE_IPV4);
	CHECK(rfw_ecn_mark_ce(s, 20) == -1, "truncated IPv4 refused");
	rfw_put_be16(s + 12, RFW_ETHERTYPE_VLAN);
	CHECK(rfw_ecn_mark_ce(s, 17) == -1, "truncated VLAN refused");
}

static void test_arp(void)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 0xbb}, zero[6] = {0};
	struct rfw_l2 l2 = {.dst = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
	struct rfw_neigh_msg m;
	uint8_t f[RFW_NEIGH_FRAME_MAX];
	size_t len;

	memcpy(l2.src, mac, 6);
	len = rfw_arp_build(f, sizeof(f), &l2, 1, mac, 0x0a000002, zero, 0x0a000001);
	CHECK(len == 60, "ARP padded to 60: %zu", len);
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_OK && m.kind == RFW_NEIGH_ARP_REQUEST,
	      "request parses");
	CHECK(rfw_get_be32(m.src_ip + 12) == 0x0a000002 && rfw_ip_is_mapped4(m.target), "IPs");
	CHECK(rfw_neigh_parse(f, 14 + 27, &m) == RFW_NEIGH_ERR_TRUNC, "27-byte ARP truncated");
	f[14 + 1] = 6; /* hardware type 6 */
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_ARP_BAD_HW, "htype");
	f[14 + 1] = 1;
	f[14 + 5] = 16; /* protocol length */
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_ARP_BAD_PROTO, "plen");
	f[14 + 5] = 4;
	f[14 + 7] = 3; /* RARP request */
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_ARP_BAD_OP, "op 3");
	f[14 + 7] = 1;
	f[14 + 8] = 0x01; /* multicast sender */
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_ARP_BAD_SENDER, "multicast sender");
	/* Three tags: one more than the parser accepts. */
	l2.nvlan = 2;
	len = rfw_arp_build(f, sizeof(f), &l2, 1, mac, 1, zero, 2);
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_OK && m.l2.nvlan == 2, "two tags");
	memmove(f + 16, f + 12, len - 12);
	rfw_put_be16(f + 12, RFW_ETHERTYPE_VLAN);
	CHECK(rfw_neigh_parse(f, len + 4, &m) == RFW_NEIGH_ERR_TRUNC, "three tags refused");
}

static void test_nd(void)
{
	static const uint8_t a[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t b[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	struct rfw_l2 l2 = {.src = {2, 0, 0, 0, 0, 0xbb}};
	uint8_t f[RFW_NEIGH_FRAME_MAX], g[RFW_NEIGH_FRAME_MAX], snm[16];
	struct rfw_neigh_msg m;
	uint8_t *icmp = f + 14 + 40;
	size_t len;

	rfw_ip6_solicited_node(snm, a);
	CHECK(snm[0] == 0xff && snm[1] == 2 && snm[11] == 1 && snm[12] == 0xff && snm[15] == 1,
	      "solicited-node address");
	rfw_ip6_mcast_mac(l2.dst, snm);
	CHECK(l2.dst[0] == 0x33 && l2.dst[1] == 0x33 && l2.dst[2] == 0xff && l2.dst[5] == 1,
	      "33:33:ff:00:00:01");
	len = rfw_nd_build_ns(f, sizeof(f), &l2, b, snm, a);
	CHECK(len == 14 + 40 + 32, "NS length %zu", len);
	CHECK(rfw_neigh_parse(f, len, &m) == RFW_NEIGH_ERR_OK && m.kind == RFW_NEIGH_NS &&
	          m.has_lla && memcmp(m.lla, l2.src, 6) == 0,
	      "NS parses with SLLA");
	CHECK(rfw_icmp6_csum(b, snm, icmp, 32) == 0, "checksum verifies to 0");
	memcpy(g, f, len);
	g[14 + 7] = 64;
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_BAD_HOP_LIMIT, "hop limit");
	memcpy(g, f, len);
	g[14 + 40 + 1] = 1;
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_BAD_CODE, "code 1");
	memcpy(g, f, len);
	g[14 + 40 + 20] ^= 1;
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_BAD_CHECKSUM, "checksum");
	CHECK(rfw_neigh_parse(f, len - 1, &m) == RFW_NEIGH_ERR_TRUNC, "cut by one byte");
	/* Option length 0 (RFC 4861 4.6: invalid), checksum fixed up. */
	memcpy(g, f, len);
	g[14 + 40 + 25] = 0;
	g[14 + 40 + 2] = g[14 + 40 + 3] = 0;
	rfw_put_be16(g + 14 + 40 + 2, rfw_icmp6_csum(b, snm, g + 14 + 40, 32));
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_BAD_OPTION, "zero-length option");
	/* A multicast target. */
	len = rfw_nd_build_ns(g, sizeof(g), &l2, b, snm, snm);
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_MCAST_TARGET, "multicast target");
	/* From :: with an SLLA: invalid (7.1.1). */
	len = rfw_nd_build_ns(g, sizeof(g), &l2, (const uint8_t[16]){0}, snm, a);
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_BAD_SOURCE, "DAD with SLLA");
	/* NA: Solicited to a multicast destination is invalid (7.1.2). */
	len = rfw_nd_build_na(g, sizeof(g), &l2, a, snm, RFW_ND_NA_SOLICIT);
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_ND_BAD_DEST, "solicited NA to mcast");
	len = rfw_nd_build_na(g, sizeof(g), &l2, a, b, RFW_ND_NA_SOLICIT | RFW_ND_NA_OVERRIDE);
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_OK && m.kind == RFW_NEIGH_NA &&
	          m.na_flags == (RFW_ND_NA_SOLICIT | RFW_ND_NA_OVERRIDE) &&
	          memcmp(m.target, a, 16) == 0 && memcmp(m.lla, l2.src, 6) == 0,
	      "NA parses");
	/* Not ND: an ICMPv6 echo request, and a UDP packet. */
	g[14 + 40] = 128;
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_NOT_NEIGH, "echo request");
	g[14 + 6] = 17;
	CHECK(rfw_neigh_parse(g, len, &m) == RFW_NEIGH_ERR_NOT_NEIGH, "UDP");
	CHECK(strcmp(rfw_neigh_err_name(RFW_NEIGH_ERR_ND_BAD_CHECKSUM), "nd_bad_checksum") == 0 &&
	          strcmp(rfw_neigh_err_name(RFW_NEIGH_ERR__COUNT), "unknown") == 0,
	      "names");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_neigh_wire VECTORS_PCAP\n");
		return 2;
	}
	test_ecn(argv[1]);
	test_arp();
	test_nd();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_neigh_wire: all checks passed\n");
	return 0;
}
