/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire/pfc_wire.c: MAC Control PAUSE (802.3 Annex 31B) and PFC (802.1Qbb) frames built and
 * parsed back, a PFC frame written out byte by byte from the standard's layout, rejections one
 * field at a time, the quanta -> time conversion and the TX priority of a frame (VLAN PCP, else
 * DSCP through the map). tests/wire/pfc_tshark.py checks the builders against tshark.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wire/pfc_wire.h"

static const uint8_t SRC[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t OWN[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};

static void test_pfc_roundtrip(void **state)
{
	const uint16_t q[8] = {0, 1, 2, 0xffff, 4, 5, 6, 7};
	uint8_t buf[128];
	struct rfw_pfc_msg m;
	size_t len;

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	len = rfw_pfc_build(buf, sizeof(buf), SRC, 0x0a /* priorities 1 and 3 */, q);
	assert_int_equal(len, RFW_MACCTL_FRAME_LEN);
	for (size_t i = 14 + RFW_PFC_BODY_LEN; i < len; i++)
		assert_int_equal(buf[i], 0); /* padding */
	assert_int_equal(rfw_pfc_parse(buf, len, NULL, &m), RFW_PFC_ERR_OK);
	assert_int_equal(m.opcode, RFW_MACCTL_OP_PFC);
	assert_memory_equal(m.dst, rfw_macctl_dst, 6);
	assert_memory_equal(m.src, SRC, 6);
	assert_int_equal(m.enable, 0x0a);
	assert_int_equal(m.enable_resv, 0);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(m.quanta[i], (0x0a >> i & 1) ? q[i] : 0);
	/* Frames from a software port may come unpadded: only the body is needed. */
	assert_int_equal(rfw_pfc_parse(buf, 14 + RFW_PFC_BODY_LEN, NULL, &m), RFW_PFC_ERR_OK);
	assert_int_equal(rfw_pfc_build(buf, RFW_MACCTL_FRAME_LEN - 1, SRC, 1, q), 0);
}

static void test_pause_roundtrip(void **state)
{
	uint8_t buf[64];
	struct rfw_pfc_msg m;
	size_t len;

	(void)state;
	len = rfw_pause_build(buf, sizeof(buf), SRC, 0x1234);
	assert_int_equal(len, RFW_MACCTL_FRAME_LEN);
	assert_int_equal(rfw_pfc_parse(buf, len, NULL, &m), RFW_PFC_ERR_OK);
	assert_int_equal(m.opcode, RFW_MACCTL_OP_PAUSE);
	/* A PAUSE pauses every priority for its one pause_time. */
	assert_int_equal(m.enable, 0xff);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(m.quanta[i], 0x1234);
	assert_int_equal(rfw_pause_build(buf, 10, SRC, 1), 0);
}

/* A PFC frame written from 802.1Qbb's figure 36-1, not by the builder. */
static void test_pfc_bytes(void **state)
{
	const uint8_t f[] = {
	    0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,             /* DA */
	    0x02, 0x11, 0x22, 0x33, 0x44, 0x55,             /* SA */
	    0x88, 0x08,                                     /* MAC Control */
	    0x01, 0x01,                                     /* PFC opcode */
	    0x00, 0x88,                                     /* class-enable vector: e7 and e3 */
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, /* time[0..3] */
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* time[4..7] */
	};
	struct rfw_pfc_msg m;

	(void)state;
	assert_int_equal(rfw_pfc_parse(f, sizeof(f), NULL, &m), RFW_PFC_ERR_OK);
	assert_int_equal(m.enable, 0x88);
	assert_int_equal(m.quanta[3], 0x1234);
	assert_int_equal(m.quanta[7], 0); /* enabled with time 0: XON */
	assert_int_equal(m.quanta[0], 0);
}

static void test_rejections(void **state)
{
	const uint16_t q[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	uint8_t good[64], b[64];
	struct rfw_pfc_msg m;
	size_t len;

	(void)state;
	len = rfw_pfc_build(good, sizeof(good), SRC, 0xff, q);
	assert_int_equal(rfw_pfc_parse(good, 13, NULL, &m), RFW_PFC_ERR_TRUNC_ETH);
	assert_int_equal(rfw_pfc_parse(good, 15, NULL, &m), RFW_PFC_ERR_TRUNC_OPCODE);
	assert_int_equal(rfw_pfc_parse(good, 14 + RFW_PFC_BODY_LEN - 1, NULL, &m),
	                 RFW_PFC_ERR_TRUNC_PFC);

	memcpy(b, good, len);
	b[12] = 0x08, b[13] = 0x00;
	assert_int_equal(rfw_pfc_parse(b, len, NULL, &m), RFW_PFC_ERR_NOT_MAC_CONTROL);
	b[12] = 0x81, b[13] = 0x00;
	assert_int_equal(rfw_pfc_parse(b, len, NULL, &m), RFW_PFC_ERR_VLAN_TAGGED);
	b[12] = 0x88, b[13] = 0xa8;
	assert_int_equal(rfw_pfc_parse(b, len, NULL, &m), RFW_PFC_ERR_VLAN_TAGGED);

	memcpy(b, good, len);
	b[15] = 0x02; /* opcode 0x0102 */
	assert_int_equal(rfw_pfc_parse(b, len, NULL, &m), RFW_PFC_ERR_UNSUPPORTED_OPCODE);
	b[14] = 0x00, b[15] = 0x02; /* GATE (802.3 Clause 64) */
	assert_int_equal(rfw_pfc_parse(b, len, NULL, &m), RFW_PFC_ERR_UNSUPPORTED_OPCODE);

	len = rfw_pause_build(b, sizeof(b), SRC, 7);
	assert_int_equal(rfw_pfc_parse(b, 17, NULL, &m), RFW_PFC_ERR_TRUNC_PAUSE);
	assert_int_equal(rfw_pfc_parse(b, 18, NULL, &m), RFW_PFC_ERR_OK);

	/* Destination: the reserved multicast address, or our own unicast one. */
	memcpy(b, good, 60);
	memcpy(b, OWN, 6);
	assert_int_equal(rfw_pfc_parse(b, 60, NULL, &m), RFW_PFC_ERR_BAD_DST);
	assert_int_equal(rfw_pfc_parse(b, 60, OWN, &m), RFW_PFC_ERR_OK);
	b[5] ^= 1;
	assert_int_equal(rfw_pfc_parse(b, 60, OWN, &m), RFW_PFC_ERR_BAD_DST);

	memcpy(b, good, 60);
	b[6] |= 1; /* group source address */
	assert_int_equal(rfw_pfc_parse(b, 60, NULL, &m), RFW_PFC_ERR_MCAST_SRC);

	/* The reserved octet of the vector is ignored on receipt (802.1Qbb), but reported. */
	memcpy(b, good, 60);
	b[16] = 0xff;
	assert_int_equal(rfw_pfc_parse(b, 60, NULL, &m), RFW_PFC_ERR_OK);
	assert_int_equal(m.enable_resv, 0xff);
	assert_int_equal(m.enable, 0xff);

	for (int e = 0; e < RFW_PFC_ERR__COUNT; e++)
		for (int f = e + 1; f < RFW_PFC_ERR__COUNT; f++)
			assert_string_not_equal(rfw_pfc_err_name(e), rfw_pfc_err_name(f));
	assert_string_equal(rfw_pfc_err_name(RFW_PFC_ERR__COUNT), "unknown");
}

static void test_quanta_ns(void **state)
{
	(void)state;
	/* 512 bit times each: 51.2 ns at 10 Gb/s, 5.12 ns at 100 Gb/s. */
	assert_int_equal(rfw_pause_quanta_ns(1, 10000), 52); /* 51.2 rounded up */
	assert_int_equal(rfw_pause_quanta_ns(10, 10000), 512);
	assert_int_equal(rfw_pause_quanta_ns(65535, 10000), 3355392);
	assert_int_equal(rfw_pause_quanta_ns(65535, 100000), 335540);
	assert_int_equal(rfw_pause_quanta_ns(1000, 100), 5120000);
	assert_int_equal(rfw_pause_quanta_ns(0, 100), 0);
	assert_int_equal(rfw_pause_quanta_ns(5, 0), 0);
}

static void test_frame_prio(void **state)
{
	uint8_t map[64], custom[64], f[64] = {0};

	(void)state;
	for (unsigned i = 0; i < 64; i++) {
		map[i] = (uint8_t)(i >> 3);
		custom[i] = 7;
	}
	/* Untagged IPv4, DSCP 26 (RoCE): priority 3 with DSCP / 8. */
	f[12] = 0x08, f[13] = 0x00, f[14] = 0x45, f[15] = 26 << 2 | 2;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), 3);
	assert_int_equal(rfw_pfc_frame_prio(f, 60, custom), 7);
	f[15] = 0;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), 0);
	/* IPv6, traffic class 0xb8 (DSCP 46): priority 5. */
	f[12] = 0x86, f[13] = 0xdd, f[14] = 0x6b, f[15] = 0x80;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), 5);
	/* A VLAN tag's PCP wins over the DSCP inside. */
	f[12] = 0x81, f[13] = 0x00, f[14] = 0xa0, f[15] = 0x05; /* PCP 5, VID 5 */
	f[16] = 0x08, f[17] = 0x00, f[18] = 0x45, f[19] = 0;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), 5);
	f[12] = 0x88, f[13] = 0xa8, f[14] = 0x20;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), 1);
	/* Neither: priority 0; MAC Control: never held. */
	f[12] = 0x08, f[13] = 0x06;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), 0);
	f[12] = 0x88, f[13] = 0x08;
	assert_int_equal(rfw_pfc_frame_prio(f, 60, map), -1);
	assert_int_equal(rfw_pfc_frame_prio(f, 10, map), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pfc_roundtrip), cmocka_unit_test(test_pause_roundtrip),
	    cmocka_unit_test(test_pfc_bytes),     cmocka_unit_test(test_rejections),
	    cmocka_unit_test(test_quanta_ns),     cmocka_unit_test(test_frame_prio),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
