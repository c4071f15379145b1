/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tools/common/rfw_ce.c: the every-Nth CE policy of rocefw-perf --ce-mark-every and the NIC
 * test. Frames are built by wire/ (headers, BTH, ICRC); after marking, the IPv4 header checksum
 * still verifies (rfw_frame_parse_eth refuses a bad one) and the ICRC is unchanged (it masks
 * the ECN bits, IBA A17.3.3). Not-ECT and non-RoCEv2 frames are neither counted nor marked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tools/common/rfw_ce.h"
#include "wire/frame.h"
#include "wire/ib_hdr.h"

static size_t build(uint8_t *out, size_t cap, unsigned ver, uint8_t tos, uint16_t dport)
{
	struct rfw_frame_spec s = {.ip_ver = (uint8_t)ver,
	                           .tos = tos,
	                           .ttl = 64,
	                           .df = true,
	                           .udp_sport = 0xc000,
	                           .udp_dport = dport};
	struct rfw_ib_pkt p;
	int off, hl;

	memcpy(s.dst_mac, "\x02\0\0\0\0\x02", 6);
	memcpy(s.src_mac, "\x02\0\0\0\0\x01", 6);
	rfw_ip4_to_mapped(s.src_ip, 0xc0000201);
	rfw_ip4_to_mapped(s.dst_ip, 0xc0000202);
	if (ver == 6)
		memcpy(s.src_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	if (ver == 6)
		memcpy(s.dst_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	memset(&p, 0, sizeof(p));
	p.bth.opcode = RFW_OP_RC_SEND_ONLY;
	p.bth.dqpn = 0x11;
	off = rfw_frame_build_hdrs(out, cap, &s, RFW_BTH_LEN);
	assert_true(off > 0);
	hl = rfw_ib_build(out + off, cap - (size_t)off, &p);
	assert_int_equal(hl, RFW_BTH_LEN);
	return rfw_frame_finalize(out, &s, RFW_BTH_LEN);
}

static void check_every(unsigned ver)
{
	struct rfw_ce_every ce = {.every = 3};
	uint8_t f[128];
	struct rfw_frame_view v;

	for (unsigned k = 1; k <= 9; k++) {
		size_t len = build(f, sizeof(f), ver, 26 << 2 | RFW_ECN_ECT0, 0);

		assert_int_equal(rfw_ce_every_frame(&ce, f, len), k % 3 == 0);
		assert_int_equal(rfw_frame_parse_eth(f, len, &v), RFW_FRAME_ERR_OK);
		assert_int_equal(rfw_frame_ecn(&v), k % 3 == 0 ? RFW_ECN_CE : RFW_ECN_ECT0);
		assert_int_equal(rfw_frame_dscp(&v), 26);
		assert_true(rfw_frame_icrc_ok(f, &v));
	}
	assert_int_equal(ce.marked, 3);
}

static void test_every_ipv4(void **state)
{
	(void)state;
	check_every(4);
}

static void test_every_ipv6(void **state)
{
	(void)state;
	check_every(6);
}

static void test_not_counted(void **state)
{
	struct rfw_ce_every ce = {.every = 1};
	uint8_t f[128];
	size_t len;

	(void)state;
	len = build(f, sizeof(f), 4, 26 << 2 | RFW_ECN_NOT_ECT, 0);
	assert_false(rfw_ce_every_frame(&ce, f, len));
	len = build(f, sizeof(f), 4, RFW_ECN_ECT0, 4792); /* not RoCEv2 */
	assert_false(rfw_ce_every_frame(&ce, f, len));
	len = build(f, sizeof(f), 4, RFW_ECN_CE, 0); /* already marked */
	assert_false(rfw_ce_every_frame(&ce, f, len));
	assert_false(rfw_ce_every_frame(&ce, f, 10)); /* short */
	ce.every = 0;
	len = build(f, sizeof(f), 4, RFW_ECN_ECT1, 0);
	assert_false(rfw_ce_every_frame(&ce, f, len)); /* off */
	assert_int_equal(ce.seen, 0);
	assert_int_equal(ce.marked, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_ipv4),
	    cmocka_unit_test(test_every_ipv6),
	    cmocka_unit_test(test_not_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
