/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame codec and ICRC against the independent vectors in tests/data/icrc: parse, rebuild
 * byte-identically, verify; masked vs unmasked bit flips; every malformed frame's reason;
 * ISA-L's chained CRC against zlib's crc32 on a masked scratch copy; the in-place ICRC against
 * that reference on random datagrams and on random frames from the builders.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/crc.h>
#include <zlib.h>

#include <cmocka.h>

#include "wire/frame.h"
#include "testdata.h"
#include "wire/ib_hdr.h"

static struct td_frame vec[TD_MAX_FRAMES];
static int nvec;

static int load(void **state)
{
	(void)state;
	nvec = td_load_vectors(vec, TD_MAX_FRAMES);
	return nvec == 10 ? 0 : -1;
}

/*
 * Reference ICRC written from the rule in tests/data/icrc/README.md with zlib: mask a copy of
 * the whole datagram, then one crc32 over 8 x 0xff + the copy. Shares no code with
 * rfw_icrc_compute.
 */
static uint32_t ref_icrc(const uint8_t *l3, size_t len, unsigned ver)
{
	uint8_t *d = malloc(8 + len);
	size_t ihl = ver == 4 ? (size_t)(l3[0] & 0xf) * 4 : 40;
	uint32_t c;

	memset(d, 0xff, 8);
	memcpy(d + 8, l3, len);
	if (ver == 4) {
		d[8 + 1] = 0xff;
		d[8 + 8] = 0xff;
		d[8 + 10] = 0xff;
		d[8 + 11] = 0xff;
	} else {
		d[8 + 0] |= 0x0f;
		d[8 + 1] = d[8 + 2] = d[8 + 3] = 0xff;
		d[8 + 7] = 0xff;
	}
	d[8 + ihl + 6] = d[8 + ihl + 7] = 0xff;
	d[8 + ihl + 8 + 4] = 0xff;
	c = (uint32_t)crc32(0, d, (uInt)(8 + len));
	free(d);
	return c;
}

static void test_vectors_parse_and_verify(void **state)
{
	(void)state;
	for (int i = 0; i < nvec; i++) {
		const struct td_frame *f = &vec[i];
		struct rfw_frame_view v;
		struct rfw_ib_pkt p;
		const uint8_t *w = f->data + f->len - 4;

		assert_int_equal(rfw_frame_parse_eth(f->data, f->len, &v), RFW_FRAME_ERR_OK);
		assert_int_equal(v.kind, RFW_FRAME_ROCEV2);
		assert_int_equal(v.ip_ver, strncmp(f->name, "v6", 2) == 0 ? 6 : 4);
		assert_int_equal(v.ib_off + v.ib_len + 4, f->len);
		/* The expected ICRC, as wire bytes, from the vector's own header line. */
		assert_int_equal(rfw_get_be32(w), f->icrc_wire);
		assert_true(rfw_frame_icrc_ok(f->data, &v));
		assert_int_equal(
		    rfw_icrc_compute(f->data + v.l3_off, rfw_frame_icrc_span(&v), v.ip_ver),
		    ref_icrc(f->data + v.l3_off, rfw_frame_icrc_span(&v), v.ip_ver));
		assert_int_equal(rfw_ib_parse(f->data + v.ib_off, v.ib_len, &p), RFW_IB_ERR_OK);
		assert_int_equal(v.udp_dport, 4791);
		assert_int_equal(v.udp_sport, 49152);
	}
}

/* Parse then rebuild from the parsed fields alone: the bytes must come out identical. */
static void test_vectors_rebuild_identical(void **state)
{
	(void)state;
	for (int i = 0; i < nvec; i++) {
		const struct td_frame *f = &vec[i];
		struct rfw_frame_view v;
		struct rfw_ib_pkt p;
		struct rfw_frame_spec s = {0};
		uint8_t out[TD_MAX_LEN];
		size_t ib_len;
		int off, hl;

		assert_int_equal(rfw_frame_parse_eth(f->data, f->len, &v), RFW_FRAME_ERR_OK);
		assert_int_equal(rfw_ib_parse(f->data + v.ib_off, v.ib_len, &p), RFW_IB_ERR_OK);
		memcpy(s.dst_mac, f->data, 6);
		memcpy(s.src_mac, f->data + 6, 6);
		s.nvlan = v.nvlan;
		memcpy(s.vlan_tci, v.vlan_tci, sizeof(s.vlan_tci));
		s.ip_ver = v.ip_ver;
		s.tos = v.tos;
		s.ttl = v.ttl;
		s.ip_id = v.ip_id;
		s.df = v.df;
		s.flow_label = v.flow_label;
		memcpy(s.src_ip, v.src_ip, 16);
		memcpy(s.dst_ip, v.dst_ip, 16);
		s.udp_sport = v.udp_sport;
		s.udp_dport = v.udp_dport;
		/* IPv6: our UDP checksum must reproduce the vector's. IPv4: the vectors carry 0, or
		 * (the masked-fields vector) an arbitrary value, which is copied below. */
		s.udp_csum = v.ip_ver == 6;

		ib_len = p.op->hdr_len + p.payload_len + p.bth.padcnt;
		assert_int_equal(ib_len, v.ib_len);
		memset(out, 0xaa, sizeof(out));
		off = rfw_frame_build_hdrs(out, sizeof(out), &s, ib_len);
		assert_int_equal(off, v.ib_off);
		hl = rfw_ib_build(out + off, sizeof(out) - (size_t)off, &p);
		assert_int_equal(hl, p.op->hdr_len);
		if (p.payload_len)
			memcpy(out + off + hl, p.payload, p.payload_len);
		memset(out + off + hl + p.payload_len, 0, p.bth.padcnt);
		/* The masked BTH bits are not in the parsed packet's build input: copy FECN/BECN.
		 */
		rfw_bth_set_fecn_becn(out + off, p.bth.fecn, p.bth.becn);
		if (v.ip_ver == 4)
			rfw_put_be16(out + v.l4_off + 6, v.udp_csum);
		assert_int_equal(rfw_frame_finalize(out, &s, ib_len), f->len);
		assert_memory_equal(out, f->data, f->len);
	}
}

static bool masked_bit(unsigned ver, size_t l3_byte, unsigned bit)
{
	size_t ihl = ver == 4 ? 20 : 40;

	if (ver == 4 && (l3_byte == 1 || l3_byte == 8 || l3_byte == 10 || l3_byte == 11))
		return true;
	if (ver == 6 && ((l3_byte == 0 && bit < 4) || l3_byte == 1 || l3_byte == 2 ||
	                 l3_byte == 3 || l3_byte == 7))
		return true;
	if (l3_byte == ihl + 6 || l3_byte == ihl + 7)
		return true;
	return l3_byte == ihl + 8 + 4;
}

static void test_bit_flips(void **state)
{
	(void)state;
	for (int i = 0; i < nvec; i++) {
		struct td_frame f = vec[i];
		struct rfw_frame_view v;
		size_t span;
		uint32_t good;

		assert_int_equal(rfw_frame_parse_eth(f.data, f.len, &v), RFW_FRAME_ERR_OK);
		span = rfw_frame_icrc_span(&v);
		good = v.icrc;
		for (size_t b = 0; b < span; b++) {
			for (unsigned bit = 0; bit < 8; bit++) {
				uint8_t *byte = f.data + v.l3_off + b;
				uint32_t c;

				*byte ^= (uint8_t)(1u << bit);
				c = rfw_icrc_compute(f.data + v.l3_off, span, v.ip_ver);
				if (masked_bit(v.ip_ver, b, bit)) {
					assert_int_equal(c, good);
				} else {
					struct rfw_frame_view v2;

					assert_int_not_equal(c, good);
					/* And through the receive path: rejected one way or
					 * another. */
					if (rfw_frame_parse_eth(f.data, f.len, &v2) ==
					        RFW_FRAME_ERR_OK &&
					    v2.kind == RFW_FRAME_ROCEV2)
						assert_false(rfw_frame_icrc_ok(f.data, &v2));
				}
				*byte ^= (uint8_t)(1u << bit);
			}
		}
		/* The ICRC bytes themselves. */
		for (unsigned bit = 0; bit < 32; bit++) {
			f.data[f.len - 4 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
			assert_int_equal(rfw_frame_parse_eth(f.data, f.len, &v), RFW_FRAME_ERR_OK);
			assert_false(rfw_frame_icrc_ok(f.data, &v));
			f.data[f.len - 4 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
}

static void test_masked_vector_same_icrc(void **state)
{
	const struct td_frame *a = NULL, *b = NULL;

	(void)state;
	for (int i = 0; i < nvec; i++) {
		if (strcmp(vec[i].name, "v4_rc_send_only") == 0)
			a = &vec[i];
		if (strcmp(vec[i].name, "v4_rc_send_only_masked_fields_changed") == 0)
			b = &vec[i];
	}
	assert_non_null(a);
	assert_non_null(b);
	assert_memory_not_equal(a->data, b->data, a->len);
	assert_memory_equal(a->data + a->len - 4, b->data + b->len - 4, 4);
}

/* Classify a frame the way a receiver does: frame, then IB headers, then ICRC. */
static const char *classify(const uint8_t *buf, size_t len, uint32_t *warnings)
{
	struct rfw_frame_view v;
	struct rfw_ib_pkt p;
	enum rfw_frame_err fe;
	enum rfw_ib_err ie;

	*warnings = 0;
	fe = rfw_frame_parse_eth(buf, len, &v);
	if (fe != RFW_FRAME_ERR_OK)
		return rfw_frame_err_name(fe);
	if (v.kind != RFW_FRAME_ROCEV2)
		return "not_rocev2";
	ie = rfw_ib_parse(buf + v.ib_off, v.ib_len, &p);
	if (ie != RFW_IB_ERR_OK)
		return rfw_ib_err_name(ie);
	*warnings = p.warnings;
	return rfw_frame_icrc_ok(buf, &v) ? "ok" : "bad_icrc";
}

static void test_malformed_frames(void **state)
{
	static const struct {
		const char *name;
		const char *reason;
		uint32_t warnings;
	} expect[] = {
	    {"bad_icrc_write_only", "bad_icrc", 0},
	    {"truncated_bth_8_bytes", "truncated_bth", 0},
	    {"bth_tver_1", "bad_tver", 0},
	    {"reserved_opcode_0x1f", "reserved_opcode", 0},
	    {"write_only_truncated_reth", "truncated_reth", 0},
	    {"padcnt3_payload1", "padcnt_exceeds_payload", 0},
	    /* Reserved bits are ignored on receive (IBA 9.2) and flagged; these two frames
	     * also carry a zero ICRC, which a receiver rejects. */
	    {"bth_resv8a_nonzero_send", "bad_icrc", RFW_IB_WARN_RESV_BTH},
	    {"bth_resv7_nonzero_send", "bad_icrc", RFW_IB_WARN_RESV_BTH},
	};
	struct td_frame *mf = calloc(TD_MAX_FRAMES, sizeof(*mf));
	int n = td_load_malformed(mf, TD_MAX_FRAMES);

	(void)state;
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++) {
		uint8_t *exact = malloc(mf[i].len); /* exactly sized: ASan sees any over-read */
		uint32_t w;

		memcpy(exact, mf[i].data, mf[i].len);
		assert_string_equal(mf[i].name, expect[i].name);
		assert_string_equal(classify(exact, mf[i].len, &w), expect[i].reason);
		assert_int_equal(w, expect[i].warnings);
		free(exact);
	}
	free(mf);
}

static void test_every_prefix_rejected(void **state)
{
	(void)state;
	for (int i = 0; i < nvec; i++) {
		for (size_t len = 0; len < vec[i].len; len++) {
			uint8_t *b = malloc(len ? len : 1);
			struct rfw_frame_view v;

			memcpy(b, vec[i].data, len);
			assert_int_not_equal(rfw_frame_parse_eth(b, len, &v), RFW_FRAME_ERR_OK);
			free(b);
		}
	}
}

/* Build a frame with our builder around a SEND ONLY of @plen bytes. */
static size_t build_send(uint8_t *out, size_t cap, const struct rfw_frame_spec *s, uint32_t plen)
{
	struct rfw_ib_pkt p = {0};
	size_t ib_len;
	int off, hl;

	p.bth.opcode = RFW_OP_RC_SEND_ONLY;
	p.bth.padcnt = rfw_ib_padcnt(plen);
	p.bth.dqpn = 0x11;
	p.bth.psn = 7;
	ib_len = RFW_BTH_LEN + plen + p.bth.padcnt;
	off = rfw_frame_build_hdrs(out, cap, s, ib_len);
	assert_true(off > 0);
	hl = rfw_ib_build(out + off, cap - (size_t)off, &p);
	for (uint32_t k = 0; k < plen; k++)
		out[off + hl + k] = (uint8_t)k;
	memset(out + off + hl + plen, 0, p.bth.padcnt);
	return rfw_frame_finalize(out, s, ib_len);
}

static struct rfw_frame_spec base_spec(unsigned ver)
{
	struct rfw_frame_spec s = {
	    .ip_ver = (uint8_t)ver, .tos = 0x02, .ttl = 64, .df = true, .udp_sport = 0xc000};

	memcpy(s.dst_mac, "\x02\0\0\0\0\x02", 6);
	memcpy(s.src_mac, "\x02\0\0\0\0\x01", 6);
	if (ver == 4) {
		rfw_ip4_to_mapped(s.src_ip, 0xc0000201);
		rfw_ip4_to_mapped(s.dst_ip, 0xc0000202);
	} else {
		memcpy(s.src_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s.dst_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
		s.udp_csum = true;
	}
	return s;
}

static void test_vlan_tags_and_trailers(void **state)
{
	uint8_t a[256], b[256];

	(void)state;
	for (unsigned ver = 4; ver <= 6; ver += 2) {
		struct rfw_frame_spec s = base_spec(ver);
		size_t la, lb;
		struct rfw_frame_view v;

		la = build_send(a, sizeof(a), &s, 33);
		for (unsigned tags = 1; tags <= 2; tags++) {
			s.nvlan = (uint8_t)tags;
			s.vlan_tci[0] = 0x6064; /* PCP 3, VID 100 */
			s.vlan_tci[1] = 0x0200;
			lb = build_send(b, sizeof(b), &s, 33);
			assert_int_equal(lb, la + 4 * tags);
			assert_int_equal(rfw_frame_parse_eth(b, lb, &v), RFW_FRAME_ERR_OK);
			assert_int_equal(v.nvlan, tags);
			assert_int_equal(v.vlan_tci[0], 0x6064);
			assert_int_equal(v.l3_off, 14 + 4 * tags);
			assert_int_equal(rfw_get_be16(b + 12),
			                 tags == 2 ? RFW_ETHERTYPE_QINQ : RFW_ETHERTYPE_VLAN);
			assert_true(rfw_frame_icrc_ok(b, &v));
			/* Tags are outside the ICRC: same ICRC as the untagged frame. */
			assert_memory_equal(b + lb - 4, a + la - 4, 4);
		}
		/* A trailing FCS or Ethernet padding after the datagram is ignored. */
		memset(a + la, 0x5a, 4);
		assert_int_equal(rfw_frame_parse_eth(a, la + 4, &v), RFW_FRAME_ERR_OK);
		assert_true(rfw_frame_icrc_ok(a, &v));
		assert_int_equal(v.ib_len, 12 + 36);
		/* Three tags are one too many. */
		s.nvlan = 2;
		lb = build_send(b, sizeof(b), &s, 0);
		memmove(b + 16, b + 12, lb - 12);
		rfw_put_be16(b + 12, RFW_ETHERTYPE_VLAN);
		rfw_put_be16(b + 14, 1);
		assert_int_equal(rfw_frame_parse_eth(b, lb + 4, &v), RFW_FRAME_ERR_TOO_MANY_VLANS);
	}
}

static void test_l3_l4_errors_and_kinds(void **state)
{
	uint8_t f[256];
	struct rfw_frame_view v;
	struct rfw_frame_spec s = base_spec(4);
	size_t len = build_send(f, sizeof(f), &s, 8);

	(void)state;
	/* Header checksum wrong. */
	f[14 + 10] ^= 1;
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_IPV4_BAD_CHECKSUM);
	f[14 + 10] ^= 1;
	/* IHL below 5. */
	f[14] = 0x44;
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_IPV4_BAD_IHL);
	f[14] = 0x65;
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_IP_BAD_VERSION);
	f[14] = 0x45;
	/* UDP length longer than the datagram. */
	rfw_put_be16(f + 34 + 4, 200);
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_UDP_BAD_LENGTH);
	rfw_put_be16(f + 34 + 4, 10); /* room for the UDP header and 2 bytes: no ICRC fits */
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_TRUNC_ICRC);
	rfw_put_be16(f + 34 + 4, (uint16_t)(len - 34));
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
	/* Another UDP port: not ours, not an error. */
	rfw_put_be16(f + 34 + 2, 4789);
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
	assert_int_equal(v.kind, RFW_FRAME_NOT_ROCEV2);
	assert_false(rfw_frame_icrc_ok(f, &v));
	/* ARP is not IP. */
	rfw_put_be16(f + 12, 0x0806);
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
	assert_int_equal(v.kind, RFW_FRAME_NOT_IP);
	/* The L3 entry point (Linux cooked / raw IP captures) gives the same view. */
	s = base_spec(6);
	len = build_send(f, sizeof(f), &s, 5);
	assert_int_equal(rfw_frame_parse_l3(f, len, 14, RFW_ETHERTYPE_IPV6, &v), RFW_FRAME_ERR_OK);
	assert_int_equal(v.kind, RFW_FRAME_ROCEV2);
	assert_true(rfw_frame_icrc_ok(f, &v));
	assert_int_equal(v.flow_label, 0);
	assert_int_equal(rfw_frame_ecn(&v), RFW_ECN_ECT0);
	/* IPv6 next header TCP. */
	f[14 + 6] = 6;
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
	assert_int_equal(v.kind, RFW_FRAME_NOT_UDP);
	/* Payload length past the end of the buffer. */
	rfw_put_be16(f + 14 + 4, 1000);
	assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_IPV6_BAD_PAYLOAD_LENGTH);
	/* Builder argument errors. */
	s.ip_ver = 5;
	assert_int_equal(rfw_frame_build_hdrs(f, sizeof(f), &s, 16), -22 /* -EINVAL */);
	s.ip_ver = 4;
	assert_int_equal(rfw_frame_build_hdrs(f, 40, &s, 16), -28 /* -ENOSPC */);
	assert_int_equal(rfw_frame_build_hdrs(f, sizeof(f), &s, 70000), -90 /* -EMSGSIZE */);
}

/* ISA-L's chained reflected CRC-32 equals zlib's crc32 for any split of any buffer. */
static void test_isal_matches_zlib(void **state)
{
	uint8_t *buf = malloc(9000);
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (size_t i = 0; i < 9000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	assert_int_equal(rfw_icrc_compute(buf, 0, 4), 0); /* too short to hold the headers */
	assert_int_equal(rfw_icrc_compute(buf, 59, 6), 0);
	for (size_t len = 0; len < 9000; len = len * 3 + 1) {
		uint32_t z = (uint32_t)crc32(0, buf, (uInt)len);

		for (size_t split = 0; split <= len; split += len / 7 + 1) {
			uint32_t c = crc32_gzip_refl(0, buf, split);

			c = crc32_gzip_refl(c, buf + split, len - split);
			assert_int_equal(c, z);
		}
	}
	/* Random frames of both IP versions and many sizes: ours == reference. */
	for (unsigned ver = 4; ver <= 6; ver += 2) {
		for (uint32_t plen = 0; plen < 4200; plen += 97) {
			uint8_t f[4400];
			struct rfw_frame_spec s = base_spec(ver);
			struct rfw_frame_view v;
			size_t len;

			s.tos = (uint8_t)plen;
			s.ttl = (uint8_t)(plen >> 3);
			s.flow_label = plen * 31;
			len = build_send(f, sizeof(f), &s, plen);
			assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
			assert_int_equal(v.icrc, ref_icrc(f + 14, rfw_frame_icrc_span(&v), ver));
		}
	}
	free(buf);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 16);
}

/*
 * rfw_icrc_compute (in place, PCLMULQDQ-folded on x86-64; the masked scratch copy for IPv4
 * options and lengths that are not a multiple of 4) against ref_icrc on random datagrams:
 * random bytes behind a valid version nibble / IHL, every length residue, both sides of the
 * 256-byte switch to ISA-L, exactly-sized heap buffers (ASan catches a read past either end).
 */
/* A random datagram of IP version @ver for the ICRC tests, exactly @*lenp bytes on the heap. */
static uint8_t *rnd_datagram(unsigned ver, size_t *lenp)
{
	size_t iphl = ver == 6 ? 40 : 4 * (5 + (rnd() % 4 == 0 ? rnd() % 11 : 0));
	size_t min = iphl + RFW_UDP_HLEN + RFW_BTH_LEN, len;
	uint8_t *d;

	switch (rnd() % 4) {
	case 0:
		len = min + rnd() % 64;
		break;
	case 1:
		len = min + rnd() % 400;
		break;
	case 2:
		len = 240 + rnd() % 40;
		break;
	default:
		len = min + rnd() % 9000;
	}
	if (rnd() % 8 != 0)
		len &= ~(size_t)3; /* RoCEv2's own lengths; others take the general path */
	if (len < min)
		len = min;
	d = malloc(len);
	assert_non_null(d);
	for (size_t i = 0; i < len; i++)
		d[i] = (uint8_t)rnd();
	d[0] = ver == 4 ? (uint8_t)(0x40 | iphl / 4) : (uint8_t)(0x60 | (d[0] & 0xf));
	*lenp = len;
	return d;
}

/*
 * @d (@len bytes, IP version @ver) as a frame sent from the MR has it, in two buffers: the
 * headers and a payload elsewhere, split anywhere past the masked headers. rfw_icrc_compute of
 * the first carried on by rfw_icrc_extend over the second against ref_icrc of the whole.
 */
static void two_spans(const uint8_t *d, size_t len, unsigned ver)
{
	size_t head = (ver == 6 ? 40 : (size_t)(d[0] & 0xf) * 4) + RFW_UDP_HLEN + RFW_BTH_LEN;
	uint8_t *tail;

	head += rnd() % (len - head + 1);
	tail = malloc(len - head + 1); /* a buffer of its own: ASan sees a read past it */
	assert_non_null(tail);
	memcpy(tail, d + head, len - head);
	assert_int_equal(rfw_icrc_extend(rfw_icrc_compute(d, head, ver), tail, len - head),
	                 ref_icrc(d, len, ver));
	free(tail);
}

/*
 * rfw_icrc_compute (in place, PCLMULQDQ-folded on x86-64, or four blocks to an instruction
 * with VPCLMULQDQ; the masked scratch copy for IPv4 options and lengths that are not a
 * multiple of 4) against ref_icrc on random datagrams: random bytes behind a valid version
 * nibble / IHL, every length residue, both sides of the 256-byte switch to ISA-L,
 * exactly-sized heap buffers (ASan catches a read past either end). Every way this CPU has.
 * Each datagram also in two buffers (two_spans).
 */
static void test_icrc_random_datagrams(void **state)
{
	int was = rfw_icrc_use(-1);

	(void)state;
	for (int impl = RFW_ICRC_GENERAL; impl <= RFW_ICRC_VCLMUL; impl++) {
		if (rfw_icrc_use(impl) < 0) {
			print_message("ICRC way %d: not on this CPU, not tested\n", impl);
			continue;
		}
		for (unsigned it = 0; it < 20000; it++) {
			unsigned ver = rnd() & 1 ? 6 : 4;
			size_t len;
			uint8_t *d = rnd_datagram(ver, &len);

			assert_int_equal(rfw_icrc_compute(d, len, ver), ref_icrc(d, len, ver));
			two_spans(d, len, ver);
			free(d);
		}
	}
	rfw_icrc_use(was);
}

/*
 * rfw_crc_copy against zlib's crc32 of the source and a memcmp of the copy: random lengths
 * (at, just over and just under every multiple of 256 up to two 4 KiB packets' worth), random
 * alignments of both spans, random CRCs carried in. Each span is its own exact-sized heap
 * buffer (ASan catches a read or write past either end), and the guard bytes around the
 * destination must be unchanged. Every way this CPU has.
 */
static void test_crc_copy(void **state)
{
	int was = rfw_icrc_use(-1);

	(void)state;
	for (int impl = RFW_ICRC_GENERAL; impl <= RFW_ICRC_VCLMUL; impl++) {
		if (rfw_icrc_use(impl) < 0) {
			print_message("CRC copy, ICRC way %d: not on this CPU, not tested\n", impl);
			continue;
		}
		for (unsigned it = 0; it < 4000; it++) {
			static const size_t off[4] = {0, 4, 252, 255};
			size_t len = it < 140 ? 256 * (it / 4) + off[it % 4] : rnd() % 8300;
			size_t so = rnd() % 64, dof = rnd() % 64;
			uint8_t *src = malloc(so + len + 1), *dst = malloc(dof + len + 8);
			uint32_t crc = rnd();

			assert_non_null(src);
			assert_non_null(dst);
			for (size_t i = 0; i < so + len; i++)
				src[i] = (uint8_t)rnd();
			memset(dst, 0x5a, dof + len + 8);
			assert_int_equal(rfw_crc_copy(crc, dst + dof, src + so, len),
			                 (uint32_t)crc32(crc, src + so, (uInt)len));
			assert_memory_equal(dst + dof, src + so, len);
			for (size_t i = 0; i < dof; i++)
				assert_int_equal(dst[i], 0x5a);
			for (size_t i = dof + len; i < dof + len + 8; i++)
				assert_int_equal(dst[i], 0x5a);
			free(src);
			free(dst);
		}
	}
	rfw_icrc_use(was);
}

/*
 * rfw_icrc_compute_n on bursts of 1..40 random datagrams against ref_icrc one by one: runs of
 * short in-place ones (taken four at a time, the last two or three padded), mixed with long
 * ones, IPv4 options and odd lengths (which break a four), both IP versions; and bursts of
 * one length and version (one QP's packets of one size), whose fours share their fold's
 * constants (icrc_vclmul4_same). Every way.
 */
static uint8_t *same_datagram(const uint8_t *first, size_t len)
{
	uint8_t *d = malloc(len);

	assert_non_null(d);
	for (size_t i = 0; i < len; i++)
		d[i] = (uint8_t)rnd();
	d[0] = first[0]; /* its version and IHL */
	return d;
}

static void test_icrc_burst(void **state)
{
	int was = rfw_icrc_use(-1);
	const uint8_t *l3[40];
	size_t len[40];
	uint8_t ver[40];
	uint32_t crc[40];

	(void)state;
	for (int impl = RFW_ICRC_GENERAL; impl <= RFW_ICRC_VCLMUL; impl++) {
		if (rfw_icrc_use(impl) < 0)
			continue;
		for (unsigned it = 0; it < 3000; it++) {
			unsigned n = 1 + rnd() % 40;
			bool short_only = rnd() % 2, same = short_only && rnd() % 2;

			for (unsigned i = 0; i < n; i++) {
				if (same && i > 0) {
					ver[i] = ver[0];
					len[i] = len[0];
					l3[i] = same_datagram(l3[0], len[0]);
					continue;
				}
				ver[i] = rnd() % 4 ? 4 : 6;
				do {
					l3[i] = rnd_datagram(ver[i], &len[i]);
					if (!short_only || (len[i] <= 256 && len[i] % 4 == 0 &&
					                    (ver[i] == 6 || (l3[i][0] & 0xf) == 5)))
						break;
					free((void *)l3[i]);
				} while (1);
			}
			rfw_icrc_compute_n(l3, len, ver, crc, n);
			for (unsigned i = 0; i < n; i++) {
				assert_int_equal(crc[i], ref_icrc(l3[i], len[i], ver[i]));
				free((void *)l3[i]);
			}
		}
	}
	rfw_icrc_use(was);
}

/*
 * Whole frames from our builders (as the NIC sends them) with random opcodes, header fields,
 * payloads, TOS / TTL / flow label, FECN / BECN, 0-2 VLAN tags, IPv4 and IPv6 (with and
 * without the UDP checksum): the receiver's check passes and the ICRC equals ref_icrc.
 */
static void test_icrc_random_frames(void **state)
{
	static uint8_t f[4400];

	(void)state;
	for (unsigned it = 0; it < 5000; it++) {
		struct rfw_frame_spec s = base_spec(rnd() & 1 ? 6 : 4);
		struct rfw_ib_pkt p = {0};
		struct rfw_frame_view v;
		uint32_t plen;
		size_t ib_len, len;
		int off, hl;

		do
			p.op = rfw_ib_opcode_info((uint8_t)rnd());
		while (p.op == NULL);
		plen = !(p.op->flags & RFW_OPF_PAYLOAD) ? 0
		       : rnd() % 4 == 0                 ? rnd() % 4097
		                                        : rnd() % 300;
		p.bth.opcode = p.op->opcode;
		p.bth.padcnt = rfw_ib_padcnt(plen);
		p.bth.fecn = rnd() & 1;
		p.bth.becn = rnd() & 1;
		p.bth.ackreq = rnd() & 1;
		p.bth.pkey = (uint16_t)rnd();
		p.bth.dqpn = rnd() & 0xffffff;
		p.bth.psn = rnd() & 0xffffff;
		s.tos = (uint8_t)rnd();
		s.ttl = (uint8_t)rnd();
		s.ip_id = (uint16_t)rnd();
		s.flow_label = rnd() & 0xfffff;
		s.udp_sport = (uint16_t)(0xc000 | (rnd() & 0x3fff));
		s.udp_csum = s.ip_ver == 6 && (rnd() & 1);
		s.nvlan = (uint8_t)(rnd() % 3);
		s.vlan_tci[0] = (uint16_t)(rnd() & 0xefff);
		s.vlan_tci[1] = (uint16_t)(rnd() & 0xefff);
		ib_len = p.op->hdr_len + plen + p.bth.padcnt;
		off = rfw_frame_build_hdrs(f, sizeof(f), &s, ib_len);
		assert_true(off > 0);
		hl = rfw_ib_build(f + off, sizeof(f) - (size_t)off, &p);
		assert_int_equal(hl, p.op->hdr_len);
		for (size_t k = RFW_BTH_LEN; k < ib_len; k++)
			f[off + k] = (uint8_t)rnd(); /* extended headers, payload, pad */
		len = rfw_frame_finalize(f, &s, ib_len);
		assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
		assert_int_equal(v.kind, RFW_FRAME_ROCEV2);
		assert_true(rfw_frame_icrc_ok(f, &v));
		assert_int_equal(v.icrc, ref_icrc(f + v.l3_off, rfw_frame_icrc_span(&v), v.ip_ver));
	}
}

/*
 * The receiver's IPv4 header checksum check (32-bit words in host order) against RFC 1071's
 * byte-pair sum (rfw_csum_add): random headers of every IHL, with the right checksum or a
 * random one, inside otherwise valid RoCEv2 frames.
 */
static void test_ipv4_checksum_random(void **state)
{
	uint8_t f[14 + 60 + 8 + 12 + 4];

	(void)state;
	for (unsigned it = 0; it < 20000; it++) {
		size_t ihl = 4 * (5 + rnd() % 11), tot = ihl + 8 + 12 + 4;
		uint8_t *ip = f + 14, *u = ip + ihl;
		struct rfw_frame_view v;
		bool good;

		memset(f, 0, sizeof(f));
		rfw_put_be16(f + 12, RFW_ETHERTYPE_IPV4);
		for (size_t i = 0; i < ihl; i++)
			ip[i] = (uint8_t)rnd();
		ip[0] = (uint8_t)(0x40 | ihl / 4);
		rfw_put_be16(ip + 2, (uint16_t)tot);
		ip[6] &= 0x40; /* not a fragment: MF clear, offset 0 (DF random) */
		ip[7] = 0;
		ip[9] = RFW_IPPROTO_UDP;
		rfw_put_be16(u + 2, RFW_ROCEV2_UDP_PORT);
		rfw_put_be16(u + 4, (uint16_t)(tot - ihl));
		if (rnd() & 1) {
			rfw_put_be16(ip + 10, 0);
			rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(rfw_csum_add(0, ip, ihl)));
		}
		good = rfw_csum_fold(rfw_csum_add(0, ip, ihl)) == 0xffff;
		assert_int_equal(rfw_frame_parse_eth(f, 14 + tot, &v),
		                 good ? RFW_FRAME_ERR_OK : RFW_FRAME_ERR_IPV4_BAD_CHECKSUM);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors_parse_and_verify),
	    cmocka_unit_test(test_vectors_rebuild_identical),
	    cmocka_unit_test(test_bit_flips),
	    cmocka_unit_test(test_masked_vector_same_icrc),
	    cmocka_unit_test(test_malformed_frames),
	    cmocka_unit_test(test_every_prefix_rejected),
	    cmocka_unit_test(test_vlan_tags_and_trailers),
	    cmocka_unit_test(test_l3_l4_errors_and_kinds),
	    cmocka_unit_test(test_isal_matches_zlib),
	    cmocka_unit_test(test_icrc_random_datagrams),
	    cmocka_unit_test(test_icrc_burst),
	    cmocka_unit_test(test_crc_copy),
	    cmocka_unit_test(test_icrc_random_frames),
	    cmocka_unit_test(test_ipv4_checksum_random),
	};
	return cmocka_run_group_tests_name("frame", tests, load, NULL);
}
