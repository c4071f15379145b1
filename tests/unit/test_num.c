/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrl/rfw_num.c and tools/common/rfw_opt.c: the one number parser of the tools, the oob
 * records and the interop case keys. Checked against what C's own strtoull/strtod read for the
 * accepted forms, and against the forms strtoull accepts but the parser must refuse (a sign,
 * leading spaces, octal, trailing junk, a bare "0x").
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ctrl/rfw_num.h"
#include "tools/common/rfw_opt.h"

static void test_u64_accepts(void **state)
{
	static const char *const ok[] = {"0",      "7",    "4791",
	                                 "0x12b7", "0XFF", "18446744073709551615"};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(rfw_num_u64(ok[i], 0, UINT64_MAX, &v), 0);
		assert_true(v == strtoull(ok[i], NULL, 0));
	}
	/* Not octal: a leading zero is decimal. */
	assert_int_equal(rfw_num_u64("010", 0, 100, &v), 0);
	assert_int_equal(v, 10);
}

static void test_u64_refuses(void **state)
{
	static const char *const bad[] = {"",   "-1", "+1", " 1",  "1 ",
	                                  "1x", "0x", "x1", "1.0", "0x1g"};
	uint64_t v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rfw_num_u64(bad[i], 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(rfw_num_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(rfw_num_u64("9", 10, 20, &v), -ERANGE);
	assert_int_equal(rfw_num_u64("21", 10, 20, &v), -ERANGE);
	assert_int_equal(v, 42); /* untouched on error */
	assert_int_equal(rfw_num_u64("20", 10, 20, &v), 0);
	assert_int_equal(v, 20);
}

static void test_double(void **state)
{
	double d = -1;

	(void)state;
	assert_int_equal(rfw_num_double("2.5e-3", 0, 1, &d), 0);
	assert_true(d == strtod("2.5e-3", NULL));
	assert_int_equal(rfw_num_double("1", 1, 1, &d), 0);
	assert_int_equal(rfw_num_double("nan", 0, 1, &d), -EINVAL);
	assert_int_equal(rfw_num_double("inf", 0, INFINITY, &d), -ERANGE);
	assert_int_equal(rfw_num_double("1e999", 0, INFINITY, &d), -ERANGE);
	assert_int_equal(rfw_num_double("0.5s", 0, 1, &d), -EINVAL);
	assert_int_equal(rfw_num_double("", 0, 1, &d), -EINVAL);
	assert_int_equal(rfw_num_double("1.0001", 0, 1, &d), -ERANGE);
}

struct conf {
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d;
	double e;
};

static void test_table(void **state)
{
	static const struct rfw_opt_num tab[] = {
	    RFW_OPT_U8("a", struct conf, a, 1, 31),
	    RFW_OPT_U16("b", struct conf, b, 1, 65535),
	    RFW_OPT_U32("c", struct conf, c, 0, 7),
	    RFW_OPT_U64("d", struct conf, d, 1, UINT64_MAX),
	    RFW_OPT_DOUBLE("e", struct conf, e, 0.5, 2),
	};
	static const struct option lo[] = {
	    {"a", required_argument, NULL, 'a'},
	    {"b", required_argument, NULL, 0},
	    {"c", required_argument, NULL, 0},
	    {"d", required_argument, NULL, 0},
	    {"e", required_argument, NULL, 0},
	    {"flag", no_argument, NULL, 'f'},
	    {NULL, 0, NULL, 0},
	};
	struct conf c = {0};

	(void)state;
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 'a', 0, "31", &c), 0);
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 0, 1, "65535", &c), 0);
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 0, 2, "7", &c), 0);
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 0, 3, "0xffffffffffffffff", &c), 0);
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 0, 4, "1.25", &c), 0);
	assert_int_equal(c.a, 31);
	assert_int_equal(c.b, 65535);
	assert_int_equal(c.c, 7);
	assert_true(c.d == UINT64_MAX);
	assert_true(c.e == 1.25);
	/* A bad value leaves the field alone; a flag is not a numeric option. */
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 'a', 0, "32", &c), -EINVAL);
	assert_int_equal(c.a, 31);
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 'f', 0, NULL, &c), 1);
	assert_int_equal(rfw_opt_num_getopt("t", lo, tab, 5, 0, 2, "8", &c), -EINVAL);
	assert_int_equal(c.c, 7);
}

static void test_dashdash(void **state)
{
	char a0[] = "prog", a1[] = "--no-huge", a2[] = "--", a3[] = "--size", a4[] = "--";
	char *with[] = {a0, a1, a2, a3, a4}, *without[] = {a0, a1, a3};

	(void)state;
	assert_int_equal(rfw_opt_dashdash(5, with), 2); /* the first one */
	assert_int_equal(rfw_opt_dashdash(3, without), -1);
	assert_int_equal(rfw_opt_dashdash(1, with), -1); /* argv[0] is never it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_u64_accepts), cmocka_unit_test(test_u64_refuses),
	    cmocka_unit_test(test_double),      cmocka_unit_test(test_table),
	    cmocka_unit_test(test_dashdash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
