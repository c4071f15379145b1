/* SPDX-License-Identifier: BSD-3-Clause */
/* perftest's keys record (ctrl/perftest_oob.c): the bytes perftest 4.5 writes for a RoCE QP,
 * round trips with and without GID, and refusals naming the field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctrl/perftest_oob.h"

/* What ib_write_bw sends for QPN 0x11, PSN 0xabcdef, rkey 0x1234 on ::ffff:192.0.2.1, spelled
 * out from KEY_PRINT_FMT_GID: 107 characters and a NUL. */
static const char wire[] = "0000:0010:000011:abcdef:00001234:000055d0c8a2b000:"
                           "00:00:00:00:00:00:00:00:00:00:ff:ff:c0:00:02:01:00000000:";

static void sample(struct rfw_pt_dest *d)
{
	static const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};

	memset(d, 0, sizeof(*d));
	d->out_reads = 16;
	d->qpn = 0x11;
	d->psn = 0xabcdef;
	d->rkey = 0x1234;
	d->vaddr = 0x55d0c8a2b000ull;
	d->has_gid = true;
	memcpy(d->gid, gid, 16);
}

static void test_wire_bytes(void **state)
{
	struct rfw_pt_dest d, e;
	uint8_t buf[RFW_PT_KEYS_GID_LEN];
	char err[160];

	(void)state;
	assert_int_equal(sizeof(wire), RFW_PT_KEYS_GID_LEN);
	sample(&d);
	assert_int_equal(rfw_pt_keys_encode(&d, buf, sizeof(buf)), RFW_PT_KEYS_GID_LEN);
	assert_memory_equal(buf, wire, sizeof(wire));
	assert_int_equal(
	    rfw_pt_keys_decode((const uint8_t *)wire, sizeof(wire), &e, err, sizeof(err)), 0);
	assert_memory_equal(&d, &e, sizeof(d));
	/* perftest's %x is lower case, but a peer printing upper case is read too */
	{
		char up[sizeof(wire)];

		memcpy(up, wire, sizeof(wire));
		memcpy(up + 17, "ABCDEF", 6);
		assert_int_equal(
		    rfw_pt_keys_decode((const uint8_t *)up, sizeof(up), &e, err, sizeof(err)), 0);
		assert_int_equal(e.psn, 0xabcdef);
	}
}

static void test_no_gid(void **state)
{
	struct rfw_pt_dest d, e;
	uint8_t buf[RFW_PT_KEYS_GID_LEN];
	char err[160];

	(void)state;
	sample(&d);
	d.has_gid = false;
	memset(d.gid, 0, 16);
	d.srqn = 0x77;
	assert_int_equal(rfw_pt_keys_encode(&d, buf, sizeof(buf)), RFW_PT_KEYS_LEN);
	assert_string_equal((char *)buf,
	                    "0000:0010:000011:abcdef:00001234:000055d0c8a2b000:00000077");
	assert_int_equal(rfw_pt_keys_decode(buf, RFW_PT_KEYS_LEN, &e, err, sizeof(err)), 0);
	assert_memory_equal(&d, &e, sizeof(d));
	d.qpn = 0x1000000;
	assert_int_equal(rfw_pt_keys_encode(&d, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rfw_pt_keys_encode(&d, buf, 10), -EINVAL);
}

static void test_refusals(void **state)
{
	static const struct {
		size_t at;
		char c;
		const char *needle;
	} t[] = {
	    {0, 'x', "'lid'"},         {4, '-', "'lid'"},          {11, 'g', "'qpn'"},
	    {20, ' ', "'psn'"},        {30, 'z', "'rkey'"},        {49, ';', "'vaddr'"},
	    {50, 'q', "'gid' byte 0"}, {95, 'r', "'gid' byte 15"}, {98, 'k', "'srqn'"},
	    {106, '0', "'srqn'"},      {107, 'x', "NUL"},
	};
	struct rfw_pt_dest e;
	char m[sizeof(wire)], err[160];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memcpy(m, wire, sizeof(wire));
		m[t[i].at] = t[i].c;
		err[0] = '\0';
		assert_int_equal(
		    rfw_pt_keys_decode((const uint8_t *)m, sizeof(m), &e, err, sizeof(err)),
		    -EPROTO);
		if (strstr(err, t[i].needle) == NULL)
			fail_msg("case %u: '%s' does not mention %s", i, err, t[i].needle);
	}
	assert_int_equal(rfw_pt_keys_decode((const uint8_t *)wire, 100, &e, err, sizeof(err)),
	                 -EPROTO);
	assert_non_null(strstr(err, "100 bytes"));
}

static void test_versions(void **state)
{
	char v[RFW_PT_VERSION_LEN];

	(void)state;
	memset(v, 0, sizeof(v));
	strcpy(v, "6.10");
	assert_true(rfw_pt_version_at_least(v, 5, 32));
	assert_int_equal(rfw_pt_mtu_len(v), 2);
	strcpy(v, "5.4");
	assert_true(rfw_pt_version_at_least(v, 5, 32)); /* atof: 5.40 */
	strcpy(v, "5.31");
	assert_false(rfw_pt_version_at_least(v, 5, 32));
	assert_int_equal(rfw_pt_mtu_len(v), 2);
	strcpy(v, "5.2");
	assert_false(rfw_pt_version_at_least(v, 5, 31));
	assert_int_equal(rfw_pt_mtu_len(v), sizeof(int));
	strcpy(v, "x");
	assert_false(rfw_pt_version_at_least(v, 1, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wire_bytes),
	    cmocka_unit_test(test_no_gid),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
