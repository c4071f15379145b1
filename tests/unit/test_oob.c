/* SPDX-License-Identifier: BSD-3-Clause */
/* Out-of-band records (ctrl/rfw_oob.c): round trips, refusals that name the field,
 * framing, parameter comparison and an exchange over a real TCP connection on loopback. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctrl/rfw_oob.h"

static void sample_conn(struct rfw_oob_msg *m)
{
	struct rfw_oob_conn *c = &m->u.conn;
	static const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
	unsigned i;

	memset(m, 0, sizeof(*m));
	m->type = RFW_OOB_CONN;
	c->test = RFW_OOB_WRITE;
	c->kind = RFW_OOB_BW;
	c->transport = RFW_OOB_GBN;
	c->mtu = 4096;
	c->size = 65536;
	c->iters = 5000;
	c->depth = 128;
	memcpy(c->gid, gid, 16);
	c->ip4 = 0x0a000001;
	c->has_mac = true;
	memcpy(c->mac, (uint8_t[6]){2, 0, 0, 0, 0, 1}, 6);
	c->rkey = 0x101;
	c->qps = 3;
	for (i = 0; i < c->qps; i++)
		c->qp[i] = (struct rfw_oob_qp){0x11 + i, 0xabcdef - i,
		                               0x7f0000000000ull + ((uint64_t)i << 24), 1u << 24};
}

static void test_conn_round_trip(void **state)
{
	struct rfw_oob_msg m, d;
	char buf[RFW_OOB_RECORD_MAX + 1], err[RFW_OOB_ERR_MAX];
	int n;

	(void)state;
	sample_conn(&m);
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(rfw_oob_record_len(buf, (size_t)n), n);
	assert_non_null(strstr(buf, "rocefw-oob/2 conn\n"));
	assert_non_null(strstr(buf, "\ngid=00000000000000000000ffff0a000001\n"));
	assert_non_null(strstr(buf, "\nqp=0x000012,0xabcdee,0x00007f0001000000,16777216\n"));
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(d.type, RFW_OOB_CONN);
	assert_memory_equal(&d.u.conn, &m.u.conn, sizeof(m.u.conn));

	/* Without a MAC (the peer resolves it by ARP), SR, a duration instead of iterations. */
	m.u.conn.has_mac = false;
	memset(m.u.conn.mac, 0, 6);
	m.u.conn.transport = RFW_OOB_SR;
	m.u.conn.iters = 0;
	m.u.conn.duration_s = 3;
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_null(strstr(buf, "mac="));
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_memory_equal(&d.u.conn, &m.u.conn, sizeof(m.u.conn));
}

static void test_result_error_round_trip(void **state)
{
	struct rfw_oob_msg m = {.type = RFW_OOB_RESULT}, d;
	char buf[RFW_OOB_RECORD_MAX + 1], err[RFW_OOB_ERR_MAX];
	int n;

	(void)state;
	m.u.result.messages = 12345678901ull;
	m.u.result.checked_bytes = 1ull << 40;
	m.u.result.verified = true;
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_string_equal(buf, "rocefw-oob/2 result\nmessages=12345678901\n"
	                         "checked_bytes=1099511627776\nverified=1\nend\n");
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_true(d.u.result.verified);
	assert_int_equal(d.u.result.checked_bytes, 1ull << 40);
	strcpy(m.u.result.error, "qp 0 message 7: data differs");
	m.u.result.verified = false;
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_false(d.u.result.verified);
	assert_string_equal(d.u.result.error, "qp 0 message 7: data differs");
	assert_false(d.u.result.has_time);

	m = (struct rfw_oob_msg){.type = RFW_OOB_ERROR};
	strcpy(m.u.error.reason, "transport mode mismatch: this side gbn, peer sr");
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_int_equal(d.type, RFW_OOB_ERROR);
	assert_string_equal(d.u.error.reason, m.u.error.reason);
	/* A newline inside a text would break the framing: refused. */
	strcpy(m.u.error.reason, "two\nlines");
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	m.u.error.reason[0] = '\0';
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
}

/* The optional account of a side's core: both times or neither, exact to the nanosecond. */
static void test_result_times(void **state)
{
	static const char *const bad[][2] = {
	    {"busy_ns=5\n", "field 'tool_ns': missing (busy_ns is given)"},
	    {"tool_ns=5\n", "field 'busy_ns': missing (tool_ns is given)"},
	    {"busy_ns=5\nbusy_ns=6\ntool_ns=1\n", "field 'busy_ns': given twice"},
	    {"busy_ns=-1\ntool_ns=1\n", "field 'busy_ns'"},
	    {"busy_ns=18446744073709551616\ntool_ns=1\n", "field 'busy_ns'"},
	};
	struct rfw_oob_msg m = {.type = RFW_OOB_RESULT}, d;
	char buf[RFW_OOB_RECORD_MAX + 1], err[RFW_OOB_ERR_MAX];
	int n;

	(void)state;
	m.u.result.messages = 3;
	m.u.result.checked_bytes = 192;
	m.u.result.verified = true;
	m.u.result.has_time = true;
	m.u.result.busy_ns = UINT64_MAX;
	m.u.result.tool_ns = 1234567;
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_string_equal(buf, "rocefw-oob/2 result\nmessages=3\nchecked_bytes=192\nverified=1\n"
	                         "busy_ns=18446744073709551615\ntool_ns=1234567\nend\n");
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_true(d.u.result.has_time);
	assert_true(d.u.result.busy_ns == UINT64_MAX);
	assert_int_equal(d.u.result.tool_ns, 1234567);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = snprintf(
		    buf, sizeof(buf),
		    "rocefw-oob/2 result\nmessages=3\nchecked_bytes=192\nverified=1\n%send\n",
		    bad[i][0]);
		assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), -EPROTO);
		if (strstr(err, bad[i][1]) == NULL)
			fail_msg("%s: got '%s', want '%s'", bad[i][0], err, bad[i][1]);
	}
}

static void test_encode_refuses_bad_fields(void **state)
{
	struct rfw_oob_msg m;
	char buf[RFW_OOB_RECORD_MAX + 1];

	(void)state;
	sample_conn(&m);
	m.u.conn.mtu = 1000;
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	sample_conn(&m);
	m.u.conn.qp[1].qpn = 1u << 24;
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	sample_conn(&m);
	m.u.conn.qps = RFW_OOB_MAX_QPS + 1;
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	sample_conn(&m);
	assert_int_equal(rfw_oob_encode(&m, buf, 40), -ENOSPC);
	/* The largest conn record (its 32 qp lines, every number at its longest) fits. */
	m.u.conn.qps = RFW_OOB_MAX_QPS;
	for (unsigned i = 0; i < RFW_OOB_BATCH_QPS; i++)
		m.u.conn.qp[i] = (struct rfw_oob_qp){0xffffff, 0xffffff, 0, UINT64_MAX};
	m.u.conn.iters = 1000000000000ull;
	assert_true(rfw_oob_encode(&m, buf, sizeof(buf)) > 0);
}

static void sample_qps(struct rfw_oob_msg *m, uint32_t first, uint32_t n)
{
	memset(m, 0, sizeof(*m));
	m->type = RFW_OOB_QPS;
	m->u.qps.first = first;
	m->u.qps.n = n;
	for (uint32_t i = 0; i < n; i++)
		m->u.qps.qp[i] =
		    (struct rfw_oob_qp){0x31 + i, i, 0x7f0000000000ull + i * 4096, 4096};
}

/* qps records: QPs after the conn record's 32, up to RFW_OOB_MAX_QPS. */
static void test_qps_record(void **state)
{
	static const struct {
		const char *rec, *want;
	} bad[] = {
	    {"rocefw-oob/2 qps\nqp=1,0,0,0\nend\n", "field 'first': missing"},
	    {"rocefw-oob/2 qps\nfirst=32\nend\n", "field 'qp': missing"},
	    {"rocefw-oob/2 qps\nfirst=16384\nqp=1,0,0,0\nend\n", "field 'first': 16384"},
	    {"rocefw-oob/2 qps\nfirst=16383\nqp=1,0,0,0\nqp=2,0,0,0\nend\n",
	     "field 'first': QPs 16383..16384: beyond 16384"},
	    {"rocefw-oob/2 qps\nfirst=1\nfirst=2\nqp=1,0,0,0\nend\n", "field 'first': given twice"},
	    {"rocefw-oob/2 qps\nfirst=1\nqp=1,0x1000000,0,0\nend\n", "field 'qp.psn'"},
	    {"rocefw-oob/2 qps\nfirst=1\nmtu=4096\nend\n", "field 'mtu': unknown field in a qps"},
	};
	struct rfw_oob_msg m, d;
	char buf[RFW_OOB_RECORD_MAX + 1], err[RFW_OOB_ERR_MAX];
	int n;

	(void)state;
	sample_qps(&m, 32, 5);
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "rocefw-oob/2 qps\nfirst=32\nqp=0x000031,"));
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_int_equal(d.type, RFW_OOB_QPS);
	assert_memory_equal(&d.u.qps, &m.u.qps, sizeof(m.u.qps));
	/* The largest: 32 lines, every number at its longest, the last QPs of 16,384. */
	sample_qps(&m, RFW_OOB_MAX_QPS - RFW_OOB_BATCH_QPS, RFW_OOB_BATCH_QPS);
	for (unsigned i = 0; i < RFW_OOB_BATCH_QPS; i++)
		m.u.qps.qp[i] = (struct rfw_oob_qp){0xffffff, 0xffffff, 0, UINT64_MAX};
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(rfw_oob_decode(buf, (size_t)n, &d, err, sizeof(err)), 0);
	assert_memory_equal(&d.u.qps, &m.u.qps, sizeof(m.u.qps));
	/* The encoder refuses what the decoder would. */
	sample_qps(&m, RFW_OOB_MAX_QPS - 1, 2);
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	sample_qps(&m, 0, 0);
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	sample_qps(&m, 0, RFW_OOB_BATCH_QPS + 1);
	assert_int_equal(rfw_oob_encode(&m, buf, sizeof(buf)), -EINVAL);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = rfw_oob_decode(bad[i].rec, strlen(bad[i].rec), &d, err, sizeof(err));

		if (rc != -EPROTO || strstr(err, bad[i].want) == NULL)
			fail_msg("qps case %u: rc %d, error '%s', wanted '%s'", i, rc, err,
			         bad[i].want);
	}
	/* 33 qp lines: one too many for a record. */
	strcpy(buf, "rocefw-oob/2 qps\nfirst=0\n");
	for (unsigned i = 0; i <= RFW_OOB_BATCH_QPS; i++)
		strcat(buf, "qp=1,0,0,0\n");
	strcat(buf, "end\n");
	assert_int_equal(rfw_oob_decode(buf, strlen(buf), &d, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "more than 32 qp lines"));
}

/* Replace line @key=... of the sample conn record with @line (NULL: delete it). */
static int mutate(const char *key, const char *line, char *err, size_t errlen)
{
	struct rfw_oob_msg m, d;
	char buf[RFW_OOB_RECORD_MAX + 1], out[RFW_OOB_RECORD_MAX + 300], *p;
	size_t klen = strlen(key);
	int n;

	sample_conn(&m);
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	out[0] = '\0';
	for (p = strtok(buf, "\n"); p != NULL; p = strtok(NULL, "\n")) {
		if (strncmp(p, key, klen) == 0 &&
		    (p[klen] == '=' || p[klen] == ' ' || p[klen] == '\0')) {
			if (line != NULL) {
				strcat(out, line);
				strcat(out, "\n");
			}
			key = "\x01"; /* only the first occurrence */
			klen = 1;
			continue;
		}
		strcat(out, p);
		strcat(out, "\n");
	}
	return rfw_oob_decode(out, strlen(out), &d, err, errlen);
}

static void test_refusals_name_the_field(void **state)
{
	static const struct {
		const char *key, *line, *want;
	} cases[] = {
	    {"rocefw-oob/2", "rocefw-oob/1 conn",
	     "field 'schema': unsupported version 'rocefw-oob/1': the peer speaks it, this side "
	     "speaks rocefw-oob/2"},
	    {"rocefw-oob/2", "rocefw-oob/3 conn", "unsupported version 'rocefw-oob/3'"},
	    {"rocefw-oob/2", "hello", "field 'schema'"},
	    {"rocefw-oob/2", "rocefw-oob/2 hello", "unknown record type"},
	    {"test", "test=copy", "field 'test'"},
	    {"kind", "kind=both", "field 'kind'"},
	    {"transport", "transport=irn", "field 'transport'"},
	    {"transport", NULL, "field 'transport': missing"},
	    {"mtu", "mtu=1000", "field 'mtu'"},
	    {"mtu", "mtu=-1024", "field 'mtu'"},
	    {"size", "size=0", "field 'size': 0 is out of range"},
	    {"size", "size=4294967296", "field 'size'"},
	    {"size", "size= 1", "field 'size'"},
	    {"iters", "iters=0", "field 'iters': 0 without a duration"},
	    {"duration", "duration=5", "field 'duration': both iters and duration"},
	    {"depth", "depth=0", "field 'depth'"},
	    {"qps", "qps=16385", "field 'qps': 16385 is out of range 1..16384"},
	    {"qps", "qps=2", "field 'qp': 3 qp lines for qps=2"},
	    {"qps", "qps=33", "field 'qp': 3 qp lines for qps=33 (the first 32 QPs go here)"},
	    {"gid", "gid=00", "field 'gid': expected 32 hex digits"},
	    {"gid", "gid=0000000000000000000000000a000001", "field 'gid': not an IPv4-mapped"},
	    {"gid", "gid=00000000000000000000ffff0a000002", "field 'gid': its IPv4 part differs"},
	    {"gid", "gid=00000000000000000000ffff0a0000zz", "field 'gid': 'zz'"},
	    {"ip", "ip=10.0.0", "field 'ip'"},
	    {"ip", "ip=10.0.0.256", "field 'ip'"},
	    {"mac", "mac=02:00:00:00:00", "field 'mac'"},
	    {"rkey", "rkey=0x100000000", "field 'rkey'"},
	    {"rkey", "rkey=0x", "field 'rkey'"},
	    {"qp", "qp=0x1000000,0,0,0", "field 'qp.qpn'"},
	    {"qp", "qp=1,0x1000000,0,0", "field 'qp.psn'"},
	    {"qp", "qp=1,2,3", "field 'qp': expected QPN,PSN,ADDR,LEN"},
	    {"qp", "qp=1,2,0xffffffffffffffff,2", "field 'qp.len': address + length wraps"},
	    {"rkey", "colour=blue", "field 'colour': unknown field"},
	    {"rkey", "no equals sign", "expected key=value"},
	    {"ip", "mtu=4096", "field 'mtu': given twice"},
	    {"end", NULL, "not terminated by 'end'"},
	};
	char err[RFW_OOB_ERR_MAX];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = mutate(cases[i].key, cases[i].line, err, sizeof(err));

		if (rc != -EPROTO || strstr(err, cases[i].want) == NULL)
			fail_msg("case %u (%s): rc %d, error '%s', wanted '%s'", i,
			         cases[i].line ? cases[i].line : "(deleted)", rc, err,
			         cases[i].want);
		/* The message names the line too. */
		assert_true(strncmp(err, "line ", 5) == 0);
	}
}

static void test_framing(void **state)
{
	struct rfw_oob_msg d;
	char big[RFW_OOB_RECORD_MAX + 16], err[RFW_OOB_ERR_MAX];
	const char *two = "rocefw-oob/2 error\nreason=x\nend\nrocefw-oob/2 error\n";

	(void)state;
	assert_int_equal(rfw_oob_record_len("rocefw-oob/2 error\nreason=x\nen", 31), 0);
	assert_int_equal(rfw_oob_record_len(two, strlen(two)), 32);
	/* "end" must be a whole line: "sendend\n" is not a terminator. */
	assert_int_equal(rfw_oob_record_len("a\nxend\n", 7), 0);
	memset(big, 'a', sizeof(big));
	assert_int_equal(rfw_oob_record_len(big, sizeof(big)), -E2BIG);
	/* Bytes after end, a line without newline, NUL bytes, CR line ends. */
	assert_int_equal(rfw_oob_decode(two, strlen(two), &d, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "after 'end'"));
	assert_int_equal(rfw_oob_decode("rocefw-oob/2 error\nreason=x", 27, &d, err, sizeof(err)),
	                 -EPROTO);
	assert_non_null(strstr(err, "not terminated by a newline"));
	assert_int_equal(
	    rfw_oob_decode("rocefw-oob/2 error\nreason=a\0b\nend\n", 33, &d, err, sizeof(err)),
	    -EPROTO);
	assert_non_null(strstr(err, "NUL"));
	assert_int_equal(
	    rfw_oob_decode("rocefw-oob/2 error\r\nreason=x\r\nend\r\n", 35, &d, err, sizeof(err)),
	    -EPROTO);
	assert_int_equal(rfw_oob_decode("", 0, &d, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "empty record"));
}

static void test_compare(void **state)
{
	struct rfw_oob_msg a, b;
	char err[RFW_OOB_ERR_MAX];

	(void)state;
	sample_conn(&a);
	sample_conn(&b);
	b.u.conn.qp[0].qpn = 99; /* per-side fields do not have to agree */
	b.u.conn.ip4 = 0x0a000002;
	assert_int_equal(rfw_oob_conn_compare(&a.u.conn, &b.u.conn, err, sizeof(err)), 0);
	b.u.conn.transport = RFW_OOB_SR;
	assert_int_equal(rfw_oob_conn_compare(&a.u.conn, &b.u.conn, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "transport mode mismatch: this side gbn, peer sr");
	assert_int_equal(rfw_oob_conn_compare(&b.u.conn, &a.u.conn, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "transport mode mismatch: this side sr, peer gbn");
	sample_conn(&b);
	b.u.conn.mtu = 1024;
	assert_int_equal(rfw_oob_conn_compare(&a.u.conn, &b.u.conn, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "path MTU mismatch: this side 4096, peer 1024");
}

/* A conn record each way and a result back over a real TCP connection on 127.0.0.1. */
static void test_tcp_exchange(void **state)
{
	struct sockaddr_in6 a;
	socklen_t al = sizeof(a);
	struct rfw_oob_rx rxs = {0}, rxc = {0};
	struct rfw_oob_msg m, got;
	char err[RFW_OOB_ERR_MAX];
	int lfd, cfd, sfd = -EAGAIN, rc, i;

	(void)state;
	lfd = rfw_oob_listen(0);
	assert_true(lfd >= 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	assert_int_equal(rfw_oob_accept(lfd), -EAGAIN); /* nobody yet, and it does not block */
	cfd = rfw_oob_connect("127.0.0.1", ntohs(a.sin6_port), 2000);
	assert_true(cfd >= 0);
	for (i = 0; i < 200 && sfd == -EAGAIN; i++) {
		sfd = rfw_oob_accept(lfd);
		if (sfd == -EAGAIN)
			usleep(5000);
	}
	assert_true(sfd >= 0);
	/* Nothing sent yet: the receiver says "incomplete" without blocking. */
	assert_int_equal(rfw_oob_recv(sfd, &rxs, &got, err, sizeof(err)), 0);
	sample_conn(&m);
	assert_int_equal(rfw_oob_send(cfd, &m), 0);
	for (i = 0, rc = 0; i < 200 && rc == 0; i++) {
		rc = rfw_oob_recv(sfd, &rxs, &got, err, sizeof(err));
		if (rc == 0)
			usleep(5000);
	}
	assert_int_equal(rc, 1);
	assert_memory_equal(&got.u.conn, &m.u.conn, sizeof(m.u.conn));
	m = (struct rfw_oob_msg){.type = RFW_OOB_RESULT};
	m.u.result.messages = 7;
	assert_int_equal(rfw_oob_send(sfd, &m), 0);
	for (i = 0, rc = 0; i < 200 && rc == 0; i++) {
		rc = rfw_oob_recv(cfd, &rxc, &got, err, sizeof(err));
		if (rc == 0)
			usleep(5000);
	}
	assert_int_equal(rc, 1);
	assert_int_equal(got.type, RFW_OOB_RESULT);
	assert_int_equal(got.u.result.messages, 7);
	/* A bad record is refused with the field named; a closed peer is -EPIPE. */
	assert_int_equal(write(cfd, "rocefw-oob/2 result\nmessages=x\nend\n", 35), 35);
	for (i = 0, rc = 0; i < 200 && rc == 0; i++) {
		rc = rfw_oob_recv(sfd, &rxs, &got, err, sizeof(err));
		if (rc == 0)
			usleep(5000);
	}
	assert_int_equal(rc, -EPROTO);
	assert_non_null(strstr(err, "field 'messages'"));
	close(cfd);
	rxs.len = 0;
	for (i = 0, rc = 0; i < 200 && rc == 0; i++) {
		rc = rfw_oob_recv(sfd, &rxs, &got, err, sizeof(err));
		if (rc == 0)
			usleep(5000);
	}
	assert_int_equal(rc, -EPIPE);
	close(sfd);
	close(lfd);
	assert_true(rfw_oob_connect("no-such-host.invalid", 1, 100) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_conn_round_trip),
	    cmocka_unit_test(test_result_error_round_trip),
	    cmocka_unit_test(test_result_times),
	    cmocka_unit_test(test_encode_refuses_bad_fields),
	    cmocka_unit_test(test_qps_record),
	    cmocka_unit_test(test_refusals_name_the_field),
	    cmocka_unit_test(test_framing),
	    cmocka_unit_test(test_compare),
	    cmocka_unit_test(test_tcp_exchange),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
