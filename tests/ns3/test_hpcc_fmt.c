/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HPCC's file formats (tools/ns3/hpcc_fmt.h): inputs written as HPCC's simulation/mix/
 * topology.txt and flow.txt are (first lines "66 1 65", "0", "0 1 100Gbps 0.001ms 0"; "2",
 * "2 1 3 100 200000000 2") parse to the values HPCC's third.cc reads from them; every kind of bad
 * input is refused with its line number and the field named; the FCT line is byte for byte what
 * HPCC's qp_finish printf ("%08x %08x %u %u %lu %lu %lu %lu\n") writes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hpcc_fmt.h"

static int topo_from(const char *text, struct rfw_topo *t, char *err, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = rfw_topo_read(f, t, err, len);
	fclose(f);
	return rc;
}

static int flows_from(const char *text, const struct rfw_topo *t, struct rfw_flow_spec **fl,
                      uint32_t *n, char *err, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = rfw_flows_read(f, t, fl, n, err, len);
	fclose(f);
	return rc;
}

/* HPCC's own layout: switch 0, hosts 1..3; a trailing newline and blank line are fine. */
static const char good_topo[] = "4 1 3\n0\n0 1 100Gbps 0.001ms 0\n0 2 25Gbps 1us 0\n"
                                "0 3 400Gbps 500ns 0.001\n\n";

static void test_topo_good(void **state)
{
	struct rfw_topo t;
	char err[160];

	(void)state;
	assert_int_equal(topo_from(good_topo, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nodes, 4);
	assert_int_equal(t.nswitches, 1);
	assert_int_equal(t.nlinks, 3);
	assert_true(t.is_switch[0]);
	assert_false(t.is_switch[1]);
	assert_int_equal(t.link[0].rate_bps, 100000000000ull);
	assert_int_equal(t.link[0].delay_ns, 1000);
	assert_int_equal(t.link[1].rate_bps, 25000000000ull);
	assert_int_equal(t.link[1].delay_ns, 1000);
	assert_int_equal(t.link[2].delay_ns, 500);
	assert_true(t.link[2].error_rate > 0.0009 && t.link[2].error_rate < 0.0011);
	rfw_topo_free(&t);
}

struct bad {
	const char *text, *want; /* the error must contain @want */
};

static void test_topo_bad(void **state)
{
	static const struct bad cases[] = {
	    {"", "line 1: node count missing"},
	    {"x 1 1\n", "line 1: node count 'x'"},
	    {"-3 1 1\n", "node count '-3'"},
	    {"4 0 3\n", "switch count '0'"},
	    {"4 4 3\n", "switch count '4'"},
	    {"4 1 0\n0\n", "link count '0'"},
	    {"4 1 3\n7\n", "line 2: switch id '7'"},
	    {"4 2 3\n0 0\n", "switch id 0 given twice"},
	    {"4 1 3\n0\n0 1 100Gbps 0.001ms 0\n", "line 4: link src missing"},
	    {"4 1 1\n0\n0 9 100Gbps 1us 0\n", "line 3: link dst '9'"},
	    {"4 1 1\n0\n0 0 100Gbps 1us 0\n", "linked to itself"},
	    {"4 1 1\n0\n1 2 100Gbps 1us 0\n", "two hosts linked directly"},
	    {"4 1 1\n0\n0 1 100Gbs 1us 0\n", "line 3: link rate '100Gbs'"},
	    {"4 1 1\n0\n0 1 0Gbps 1us 0\n", "link rate '0Gbps'"},
	    {"4 1 1\n0\n0 1 100Gbps 1 0\n", "link delay '1'"},
	    {"4 1 1\n0\n0 1 100Gbps -1us 0\n", "link delay '-1us'"},
	    {"4 1 1\n0\n0 1 100Gbps 1us 1.5\n", "link error_rate '1.5'"},
	    {"4 1 1\n0\n0 1 100Gbps 1us\n", "link error_rate missing"},
	    {"4 1 1\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n", "line 4: unexpected '0'"},
	    {"4 1 1\n0\n0 1 100Gbps 1us 0 x\n", "line 3: unexpected 'x'"},
	    {"99999999999 1 1\n", "node count"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rfw_topo t;
		char err[200];
		int rc = topo_from(cases[i].text, &t, err, sizeof(err));

		if (rc != -EINVAL || strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: rc %d, error '%s', want '%s'", i, rc, err,
			         cases[i].want);
		rfw_topo_free(&t);
	}
}

static void test_flows_good(void **state)
{
	struct rfw_topo t;
	struct rfw_flow_spec *fl;
	uint32_t n;
	char err[160];

	(void)state;
	assert_int_equal(topo_from(good_topo, &t, err, sizeof(err)), 0);
	assert_int_equal(flows_from("2\n2 1 3 100 200000000 2\n3 1 3 100 1000 0.000001\n", &t, &fl,
	                            &n, err, sizeof(err)),
	                 0);
	assert_int_equal(n, 2);
	assert_int_equal(fl[0].src, 2);
	assert_int_equal(fl[0].dst, 1);
	assert_int_equal(fl[0].pg, 3);
	assert_int_equal(fl[0].dport, 100);
	assert_int_equal(fl[0].size, 200000000);
	assert_int_equal(fl[0].start_ns, 2000000000ull);
	assert_int_equal(fl[1].start_ns, 1000);
	free(fl);
	rfw_topo_free(&t);
}

static void test_flows_bad(void **state)
{
	static const struct bad cases[] = {
	    {"", "line 1: flow count missing"},
	    {"2\n2 1 3 100 1000 0\n", "line 3: flow src missing (end of file)"},
	    {"1\n2 1 3 100 1000 0\n3 1 3 100 1000 0\n", "line 3: unexpected '3'"},
	    {"1\n0 1 3 100 1000 0\n", "an end is a switch"},
	    {"1\n1 1 3 100 1000 0\n", "same host"},
	    {"1\n1 7 3 100 1000 0\n", "flow dst '7'"},
	    {"1\n1 2 8 100 1000 0\n", "flow priority '8'"},
	    {"1\n1 2 3 70000 1000 0\n", "flow dport '70000'"},
	    {"1\n1 2 3 100 0 0\n", "flow size '0'"},
	    {"1\n1 2 3 100 4294967296 0\n", "flow size '4294967296'"},
	    {"1\n1 2 3 100 1000 abc\n", "flow start_time 'abc'"},
	    {"1\n1 2 3 100 1000 -1\n", "flow start_time '-1'"},
	    {"1\n1 2 3 100 1000\n", "flow start_time missing"},
	    {"1\n1 2 3 100 1e3 0\n", "flow size '1e3'"},
	};
	struct rfw_topo t;
	char err[200];

	(void)state;
	assert_int_equal(topo_from(good_topo, &t, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rfw_flow_spec *fl = (void *)1;
		uint32_t n = 9;
		int rc = flows_from(cases[i].text, &t, &fl, &n, err, sizeof(err));

		if (rc != -EINVAL || strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: rc %d, error '%s', want '%s'", i, rc, err,
			         cases[i].want);
		assert_null(fl);
		assert_int_equal(n, 0);
	}
	rfw_topo_free(&t);
}

static void test_units(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rfw_parse_rate("400Gbps", &v), 0);
	assert_int_equal(v, 400000000000ull);
	assert_int_equal(rfw_parse_rate("10Mb/s", &v), 0);
	assert_int_equal(v, 10000000ull);
	assert_int_equal(rfw_parse_rate("100", &v), -EINVAL);
	assert_int_equal(rfw_parse_rate("Gbps", &v), -EINVAL);
	assert_int_equal(rfw_parse_delay("0.001ms", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(rfw_parse_delay("2s", &v), 0);
	assert_int_equal(v, 2000000000ull);
	assert_int_equal(rfw_parse_delay("11s", &v), -EINVAL);
	assert_int_equal(rfw_parse_delay("1 us", &v), -EINVAL);
}

/* HPCC's node_id_to_ip and qp_finish, for node 1 -> node 300. */
static void test_fct_line(void **state)
{
	char buf[160];

	(void)state;
	assert_int_equal(rfw_hpcc_node_ip(1), 0x0b000101);
	assert_int_equal(rfw_hpcc_node_ip(300), 0x0b012c01);
	rfw_fct_line(buf, sizeof(buf), rfw_hpcc_node_ip(1), rfw_hpcc_node_ip(300), 49169, 100,
	             200000000, 2000000000ull, 16123456, 16000000);
	assert_string_equal(buf,
	                    "0b000101 0b012c01 49169 100 200000000 2000000000 16123456 16000000\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_topo_good),  cmocka_unit_test(test_topo_bad),
	    cmocka_unit_test(test_flows_good), cmocka_unit_test(test_flows_bad),
	    cmocka_unit_test(test_units),      cmocka_unit_test(test_fct_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
