/* SPDX-License-Identifier: BSD-3-Clause */
/* Interop case records and data pattern (interop/case.c): round trips, refusals naming the
 * field, and the pattern's properties the checkers depend on. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "interop/case.h"

static void sample(struct ic_case *c)
{
	char err[RFW_OOB_ERR_MAX];

	ic_case_init(c);
	assert_int_equal(ic_case_set(c, "name=write-4096-wrap", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "dir=rxe-req", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "op=write_imm", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "size=65537", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "mtu=4096", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "psn=0xfffffe", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "count=3", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "rnr_delay_ms=20", err, sizeof(err)), 0);
	assert_int_equal(ic_case_set(c, "tclass=2", err, sizeof(err)), 0);
}

static void test_round_trip(void **state)
{
	struct ic_case c, d;
	char buf[RFW_OOB_RECORD_MAX], err[RFW_OOB_ERR_MAX];
	int n;

	(void)state;
	sample(&c);
	n = ic_case_encode(&c, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(rfw_oob_record_len(buf, (size_t)n), n);
	assert_int_equal(ic_case_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_string_equal(d.name, "write-4096-wrap");
	assert_int_equal(d.dir, IC_RXE_REQ);
	assert_int_equal(d.op, IC_WRITE_IMM);
	assert_int_equal(d.size, 65537);
	assert_int_equal(d.mtu, 4096);
	assert_int_equal(d.psn, 0xfffffe);
	assert_int_equal(d.count, 3);
	assert_int_equal(d.rnr_delay_ms, 20);
	assert_int_equal(d.tclass, 2);
	assert_memory_equal(&c, &d, sizeof(c));
	assert_int_equal(ic_case_encode(&c, buf, 20), -ENOSPC);
}

/* Replace the line starting with @key in a valid record by @line ("" removes it). */
static int mutate(const char *key, const char *line, char *err)
{
	struct ic_case c, d;
	char buf[RFW_OOB_RECORD_MAX], out[RFW_OOB_RECORD_MAX];
	char *p, *nl;
	int n;

	sample(&c);
	n = ic_case_encode(&c, buf, sizeof(buf));
	assert_true(n > 0);
	p = strstr(buf, key);
	assert_non_null(p);
	nl = strchr(p, '\n');
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(p - buf), buf, line, nl + 1);
	return ic_case_decode(out, strlen(out), &d, err, RFW_OOB_ERR_MAX);
}

static void test_refusals(void **state)
{
	static const struct {
		const char *key, *line, *needle;
	} t[] = {
	    {"mtu=", "mtu=1000\n", "'mtu'"},
	    {"op=", "op=swap\n", "'op'"},
	    {"dir=", "dir=both\n", "'dir'"},
	    {"psn=", "psn=0x1000000\n", "'psn'"},
	    {"count=", "count=0\n", "'count'"},
	    {"count=", "count=65\n", "'count'"},
	    {"size=", "size=16777217\n", "'size'"},
	    {"size=", "size=-1\n", "'size'"},
	    {"size=", "", "missing field 'size'"},
	    {"name=", "name=a b\n", "'name'"},
	    {"seed=", "seed=1\nseed=2\n", "twice"},
	    {"tclass=", "colour=2\n", "unknown field 'colour'"},
	    {"timeout=", "timeout=0\n", "'timeout'"},
	    {"rocefw-oob/2 case", "rocefw-oob/1 case\n", "not a"},
	    {"end", "end\nx=1\n", "after 'end'"},
	};
	char err[RFW_OOB_ERR_MAX];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err[0] = '\0';
		assert_int_equal(mutate(t[i].key, t[i].line, err), -EPROTO);
		if (strstr(err, t[i].needle) == NULL)
			fail_msg("case %u: '%s' does not mention %s", i, err, t[i].needle);
	}
}

static void test_checks(void **state)
{
	struct ic_case c;
	char err[RFW_OOB_ERR_MAX];

	(void)state;
	ic_case_init(&c);
	c.op = IC_CAS;
	assert_int_equal(ic_case_check(&c, err, sizeof(err)), -EINVAL); /* size 1024 */
	c.size = 8;
	assert_int_equal(ic_case_check(&c, err, sizeof(err)), 0);
	c.rnr_delay_ms = 5; /* an atomic consumes no receive: no RNR possible */
	assert_int_equal(ic_case_check(&c, err, sizeof(err)), -EINVAL);
	ic_case_init(&c);
	c.fault = IC_FAULT_OOB;
	assert_int_equal(ic_case_check(&c, err, sizeof(err)), -EINVAL); /* count 4 */
	c.count = 1;
	assert_int_equal(ic_case_check(&c, err, sizeof(err)), 0);
	ic_case_init(&c);
	c.size = 1u << 24;
	c.count = 8; /* 128 MiB */
	assert_int_equal(ic_case_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bytes"));
}

static void test_pattern(void **state)
{
	static uint8_t a[70000];
	unsigned i, same = 0;

	(void)state;
	ic_pattern_fill(a, sizeof(a), 7, 3);
	assert_int_equal(ic_pattern_cmp(a, sizeof(a), 7, 3), -1);
	/* another message or seed differs almost everywhere */
	for (i = 0; i < sizeof(a); i++)
		same += a[i] == ic_pattern(7, 4, i);
	assert_true(same < sizeof(a) / 64);
	same = 0;
	for (i = 0; i < sizeof(a); i++)
		same += a[i] == ic_pattern(8, 3, i);
	assert_true(same < sizeof(a) / 64);
	/* one flipped byte is found where it is */
	a[65536] ^= 1;
	assert_int_equal(ic_pattern_cmp(a, sizeof(a), 7, 3), 65536);
	/* slots are 64-byte aligned and hold the message; atomics have 8-byte slots */
	{
		struct ic_case c;

		ic_case_init(&c);
		c.size = 0;
		assert_int_equal(ic_slot(&c), 64);
		c.size = 1025;
		assert_int_equal(ic_slot(&c), 1088);
		assert_int_equal(ic_mem_len(&c) % 4096, 0);
		assert_true(ic_mem_len(&c) >= 4 * 1088);
		assert_true(ic_atomic_init(&c, 0) != ic_atomic_init(&c, 1));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_checks),
	    cmocka_unit_test(test_pattern),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
