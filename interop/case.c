/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interop test cases: the `case` record codec, the data pattern and the engine both sides run
 * (docs/interop.md "Protocol"). No DPDK, no libibverbs: each side supplies its verbs.
 */
#include "interop/case.h"
#include "ctrl/rfw_num.h"
#include "tools/common/rfw_clock.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *const dir_names[IC__DIRS] = {"rfw-req", "rxe-req"};
static const char *const op_names[IC__OPS] = {"send", "send_imm", "write", "write_imm",
                                              "read", "cas",      "faa"};
static const char *const fault_names[IC__FAULTS] = {"none", "bad_rkey", "oob"};

static int lookup(const char *const *t, unsigned n, const char *s)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i], s) == 0)
			return (int)i;
	return -1;
}

const char *ic_dir_name(enum ic_dir d)
{
	return (unsigned)d < IC__DIRS ? dir_names[d] : "?";
}
const char *ic_op_name(enum ic_op o)
{
	return (unsigned)o < IC__OPS ? op_names[o] : "?";
}
const char *ic_fault_name(enum ic_fault f)
{
	return (unsigned)f < IC__FAULTS ? fault_names[f] : "?";
}
int ic_dir_lookup(const char *s)
{
	return lookup(dir_names, IC__DIRS, s);
}
int ic_op_lookup(const char *s)
{
	return lookup(op_names, IC__OPS, s);
}
int ic_fault_lookup(const char *s)
{
	return lookup(fault_names, IC__FAULTS, s);
}

static bool is_atomic(enum ic_op o)
{
	return o == IC_CAS || o == IC_FAA;
}
/* Operations that consume a receive WQE at the responder. */
static bool uses_recv(enum ic_op o)
{
	return o == IC_SEND || o == IC_SEND_IMM || o == IC_WRITE_IMM;
}

void ic_case_init(struct ic_case *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->name, "case");
	c->size = 1024;
	c->mtu = 1024;
	c->count = 4;
	c->seed = 1;
	c->timeout_s = IC_TIMEOUT_DEF;
}

static int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int ic_case_check(const struct ic_case *c, char *err, size_t errlen)
{
	size_t i, n = strnlen(c->name, IC_NAME_MAX);

	if (n == 0 || n == IC_NAME_MAX)
		return errf(err, errlen, "field 'name': empty or longer than %d bytes",
		            IC_NAME_MAX - 1);
	for (i = 0; i < n; i++) {
		char ch = c->name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return errf(err, errlen,
			            "field 'name': character '%c' not in [A-Za-z0-9._-]", ch);
	}
	if ((unsigned)c->dir >= IC__DIRS || (unsigned)c->op >= IC__OPS ||
	    (unsigned)c->fault >= IC__FAULTS)
		return errf(err, errlen, "field 'dir', 'op' or 'fault' out of range");
	if (c->size > IC_SIZE_MAX)
		return errf(err, errlen, "field 'size': %u above %u", c->size, IC_SIZE_MAX);
	if (is_atomic(c->op) && c->size != 8)
		return errf(err, errlen, "field 'size': atomics move 8 bytes, not %u", c->size);
	if (c->mtu != 256 && c->mtu != 512 && c->mtu != 1024 && c->mtu != 2048 && c->mtu != 4096)
		return errf(err, errlen, "field 'mtu': %u is not 256, 512, 1024, 2048 or 4096",
		            c->mtu);
	if (c->count < 1 || c->count > IC_COUNT_MAX)
		return errf(err, errlen, "field 'count': %u not in 1..%u", c->count, IC_COUNT_MAX);
	if (c->psn > 0xffffff)
		return errf(err, errlen, "field 'psn': 0x%x is more than 24 bits", c->psn);
	if (c->rnr_delay_ms > 10000)
		return errf(err, errlen, "field 'rnr_delay_ms': %u above 10000", c->rnr_delay_ms);
	if (c->rnr_delay_ms && !uses_recv(c->op))
		return errf(err, errlen, "field 'rnr_delay_ms': %s consumes no receive WQE",
		            ic_op_name(c->op));
	if (c->tclass > 255)
		return errf(err, errlen, "field 'tclass': %u above 255", c->tclass);
	if (c->timeout_s < 1 || c->timeout_s > 3600)
		return errf(err, errlen, "field 'timeout': %u not in 1..3600", c->timeout_s);
	if (c->fault != IC_FAULT_NONE && (c->count != 1 || c->size == 0))
		return errf(err, errlen, "fault cases need count=1 and a size above 0");
	if (ic_mem_len(c) > IC_MEM_MAX)
		return errf(err, errlen, "size x count needs %zu bytes, above %u", ic_mem_len(c),
		            IC_MEM_MAX);
	return 0;
}

int ic_case_set(struct ic_case *c, const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char key[32];
	const char *val;
	uint64_t v = 0;
	int e;
	size_t kl;

	if (eq == NULL || (kl = (size_t)(eq - kv)) == 0 || kl >= sizeof(key))
		return errf(err, errlen, "'%s' is not key=value", kv);
	memcpy(key, kv, kl);
	key[kl] = '\0';
	val = eq + 1;
	if (strcmp(key, "name") == 0) {
		if (strlen(val) >= IC_NAME_MAX)
			return errf(err, errlen, "field 'name': too long");
		strcpy(c->name, val);
		return 0;
	}
	if (strcmp(key, "dir") == 0 || strcmp(key, "op") == 0 || strcmp(key, "fault") == 0) {
		e = key[0] == 'd'   ? ic_dir_lookup(val)
		    : key[0] == 'o' ? ic_op_lookup(val)
		                    : ic_fault_lookup(val);
		if (e < 0)
			return errf(err, errlen, "field '%s': unknown value '%s'", key, val);
		if (key[0] == 'd')
			c->dir = (enum ic_dir)e;
		else if (key[0] == 'o')
			c->op = (enum ic_op)e;
		else
			c->fault = (enum ic_fault)e;
		return 0;
	}
	if (rfw_num_u64(val, 0, UINT32_MAX, &v) != 0)
		return errf(err, errlen, "field '%s': '%s' is not a 32-bit number", key, val);
	if (strcmp(key, "size") == 0)
		c->size = (uint32_t)v;
	else if (strcmp(key, "mtu") == 0)
		c->mtu = (uint32_t)v;
	else if (strcmp(key, "count") == 0)
		c->count = (uint32_t)v;
	else if (strcmp(key, "psn") == 0)
		c->psn = (uint32_t)v;
	else if (strcmp(key, "rnr_delay_ms") == 0)
		c->rnr_delay_ms = (uint32_t)v;
	else if (strcmp(key, "tclass") == 0)
		c->tclass = (uint32_t)v;
	else if (strcmp(key, "seed") == 0)
		c->seed = (uint32_t)v;
	else if (strcmp(key, "timeout") == 0)
		c->timeout_s = (uint32_t)v;
	else
		return errf(err, errlen, "unknown field '%s'", key);
	return 0;
}

int ic_case_encode(const struct ic_case *c, char *buf, size_t cap)
{
	int n;

	if (ic_case_check(c, NULL, 0) != 0)
		return -EINVAL;
	n = snprintf(buf, cap,
	             RFW_OOB_SCHEMA " case\nname=%s\ndir=%s\nop=%s\nfault=%s\nsize=%u\nmtu=%u\n"
	                            "count=%u\npsn=0x%06x\nrnr_delay_ms=%u\ntclass=%u\nseed=%u\n"
	                            "timeout=%u\nend\n",
	             c->name, ic_dir_name(c->dir), ic_op_name(c->op), ic_fault_name(c->fault),
	             c->size, c->mtu, c->count, c->psn, c->rnr_delay_ms, c->tclass, c->seed,
	             c->timeout_s);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}

#define IC_NKEYS 12

int ic_case_decode(const char *buf, size_t len, struct ic_case *c, char *err, size_t errlen)
{
	static const char *const keys[IC_NKEYS] = {"name",         "dir",    "op",    "fault",
	                                           "size",         "mtu",    "count", "psn",
	                                           "rnr_delay_ms", "tclass", "seed",  "timeout"};
	const char head[] = RFW_OOB_SCHEMA " case\n";
	char line[RFW_OOB_LINE_MAX], msg[RFW_OOB_ERR_MAX];
	bool seen[IC_NKEYS] = {false};
	size_t pos, lno = 1;
	bool ended = false;
	int i;

	ic_case_init(c);
	if (len < sizeof(head) - 1 || memcmp(buf, head, sizeof(head) - 1) != 0) {
		errf(err, errlen, "line 1: not a '" RFW_OOB_SCHEMA " case' record");
		return -EPROTO;
	}
	pos = sizeof(head) - 1;
	while (pos < len && !ended) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t ll;

		lno++;
		if (nl == NULL) {
			errf(err, errlen, "line %zu: no line end", lno);
			return -EPROTO;
		}
		ll = (size_t)(nl - (buf + pos));
		if (ll >= sizeof(line) || memchr(buf + pos, '\0', ll) != NULL ||
		    memchr(buf + pos, '\r', ll) != NULL) {
			errf(err, errlen, "line %zu: too long or holds NUL/CR", lno);
			return -EPROTO;
		}
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos += ll + 1;
		if (strcmp(line, "end") == 0) {
			ended = true;
			break;
		}
		for (i = 0; i < IC_NKEYS; i++) {
			size_t kl = strlen(keys[i]);

			if (strncmp(line, keys[i], kl) == 0 && line[kl] == '=')
				break;
		}
		if (i == IC_NKEYS) {
			char *eq = strchr(line, '=');

			if (eq != NULL)
				*eq = '\0';
			errf(err, errlen, "line %zu: unknown field '%.40s'", lno, line);
			return -EPROTO;
		}
		if (seen[i]) {
			errf(err, errlen, "line %zu: field '%s' given twice", lno, keys[i]);
			return -EPROTO;
		}
		seen[i] = true;
		if (ic_case_set(c, line, msg, sizeof(msg)) != 0) {
			errf(err, errlen, "line %zu: %s", lno, msg);
			return -EPROTO;
		}
	}
	if (!ended || pos != len) {
		errf(err, errlen, "line %zu: %s", lno,
		     ended ? "bytes after 'end'" : "no 'end' line");
		return -EPROTO;
	}
	for (i = 0; i < IC_NKEYS; i++)
		if (!seen[i]) {
			errf(err, errlen, "missing field '%s'", keys[i]);
			return -EPROTO;
		}
	if (ic_case_check(c, msg, sizeof(msg)) != 0) {
		errf(err, errlen, "%s", msg);
		return -EPROTO;
	}
	return 0;
}

/* ---- data pattern ---- */

/* splitmix64 of (seed, k, i / 8): 8 pattern bytes per call, every byte depends on all three. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t word(uint32_t seed, uint32_t k, uint32_t w)
{
	return mix(((uint64_t)seed << 40) ^ ((uint64_t)k << 24) ^ w ^ mix(w));
}

uint8_t ic_pattern(uint32_t seed, uint32_t k, uint32_t i)
{
	return (uint8_t)(word(seed, k, i / 8) >> (8 * (i % 8)));
}

void ic_pattern_fill(uint8_t *p, uint32_t len, uint32_t seed, uint32_t k)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = ic_pattern(seed, k, i);
}

long ic_pattern_cmp(const uint8_t *p, uint32_t len, uint32_t seed, uint32_t k)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != ic_pattern(seed, k, i))
			return (long)i;
	return -1;
}

uint32_t ic_imm(const struct ic_case *c, uint32_t k)
{
	return 0x1d000000u ^ (c->seed << 8) ^ k;
}

uint64_t ic_atomic_init(const struct ic_case *c, uint32_t k)
{
	return word(c->seed, k, 0xffffffu);
}

uint64_t ic_atomic_add(uint32_t k)
{
	return 0x0101010101010101ull * (k + 1);
}

uint32_t ic_slot(const struct ic_case *c)
{
	uint32_t s = c->size < 8 ? 8 : c->size;

	return (s + 63) & ~63u;
}

size_t ic_mem_len(const struct ic_case *c)
{
	return ((size_t)ic_slot(c) * c->count + 4095) & ~(size_t)4095;
}

/* ---- records on the connection ---- */

static uint64_t mono_ms(void)
{
	return rfw_mono_ns() / 1000000;
}

static int send_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};

			poll(&p, 1, 100);
			continue;
		}
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

int ic_send_case(struct ic_conn *cn, const struct ic_case *c)
{
	char buf[RFW_OOB_RECORD_MAX];
	int n = ic_case_encode(c, buf, sizeof(buf));

	return n < 0 ? n : send_all(cn->fd, buf, (size_t)n);
}

static int send_ready(struct ic_conn *cn)
{
	static const char r[] = RFW_OOB_SCHEMA " ready\nend\n";

	return send_all(cn->fd, r, sizeof(r) - 1);
}

/*
 * The next complete record into @rec (NUL-terminated), without blocking: its length, 0 while
 * incomplete, -EPIPE when the peer closed, -E2BIG or -errno.
 */
static int take_record(struct ic_conn *cn, char *rec)
{
	for (;;) {
		int rl = rfw_oob_record_len(cn->buf, cn->len);
		ssize_t n;

		if (rl < 0)
			return rl;
		if (rl > 0) {
			memcpy(rec, cn->buf, (size_t)rl);
			rec[rl] = '\0';
			memmove(cn->buf, cn->buf + rl, cn->len - (size_t)rl);
			cn->len -= (size_t)rl;
			return rl;
		}
		if (cn->len == sizeof(cn->buf))
			return -E2BIG;
		n = recv(cn->fd, cn->buf + cn->len, sizeof(cn->buf) - cn->len, 0);
		if (n == 0)
			return -EPIPE;
		if (n < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0
			                                                                   : -errno;
		cn->len += (size_t)n;
	}
}

static bool is_type(const char *rec, const char *type)
{
	size_t hl = strlen(RFW_OOB_SCHEMA);

	return strncmp(rec, RFW_OOB_SCHEMA " ", hl + 1) == 0 &&
	       strncmp(rec + hl + 1, type, strlen(type)) == 0 && rec[hl + 1 + strlen(type)] == '\n';
}

int ic_recv_case(struct ic_conn *cn, struct ic_case *c, unsigned timeout_ms, char *err,
                 size_t errlen)
{
	char rec[RFW_OOB_RECORD_MAX + 1];
	uint64_t end = mono_ms() + timeout_ms;
	int rl;

	for (;;) {
		rl = take_record(cn, rec);
		if (rl < 0) {
			errf(err, errlen, "connection: %s", strerror(-rl));
			return rl;
		}
		if (rl > 0)
			break;
		if (mono_ms() > end) {
			errf(err, errlen, "no case record within %u ms", timeout_ms);
			return -ETIMEDOUT;
		}
		struct pollfd p = {.fd = cn->fd, .events = POLLIN};
		poll(&p, 1, 50);
	}
	return ic_case_decode(rec, (size_t)rl, c, err, errlen);
}

/* ---- the engine ---- */

struct eng {
	const struct ic_case *c;
	const struct ic_backend *b;
	struct ic_conn *cn;
	struct ic_outcome *out;
	bool requester;
	uint8_t *mem;
	struct rfw_oob_conn mine, peer;
	uint64_t deadline_ms;
	/* what arrived on the connection while waiting for something else */
	bool got_ready, got_result, got_conn;
	/* completions */
	uint32_t send_done, recv_done;
	int first_bad_status;
	struct ic_wc rwc[IC_COUNT_MAX]; /* receive completions by wr_id */
	bool rwc_seen[IC_COUNT_MAX];
	uint64_t sent_at_ms;
};

static int fail_local(struct eng *e, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_local(struct eng *e, int rc, const char *fmt, ...)
{
	va_list ap;

	if (e->out->mine.error[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(e->out->mine.error, sizeof(e->out->mine.error), fmt, ap);
		va_end(ap);
	}
	e->out->mine.verified = false;
	return rc;
}

/* Note a problem this side found in the data (the run goes on to exchange results). */
static void problem(struct eng *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct eng *e, const char *fmt, ...)
{
	va_list ap;

	e->out->mine.verified = false;
	if (e->out->mine.error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(e->out->mine.error, sizeof(e->out->mine.error), fmt, ap);
	va_end(ap);
}

static enum rfw_oob_test oob_test(enum ic_op o)
{
	switch (o) {
	case IC_SEND:
	case IC_SEND_IMM:
		return RFW_OOB_SEND;
	case IC_WRITE:
	case IC_WRITE_IMM:
		return RFW_OOB_WRITE;
	case IC_READ:
		return RFW_OOB_READ;
	default:
		return RFW_OOB_ATOMIC;
	}
}

/* Take completions and records until @done(e) or the deadline. */
static int pump(struct eng *e, bool (*done)(struct eng *))
{
	char rec[RFW_OOB_RECORD_MAX + 1], err[RFW_OOB_ERR_MAX];
	unsigned idle = 0;

	while (!done(e)) {
		struct ic_wc wc;
		int rc = e->b->poll(e->b->ctx, &wc), rl;

		if (rc < 0)
			return fail_local(e, rc, "poll: %s", strerror(-rc));
		if (rc > 0) {
			idle = 0;
			/* flushed WQEs carry no valid opcode: the wr_id says which queue it was */
			wc.recv = (wc.wr_id & IC_RECV_WRID) != 0;
			wc.wr_id &= ~IC_RECV_WRID;
			if (wc.recv) {
				if (wc.wr_id < IC_COUNT_MAX && !e->rwc_seen[wc.wr_id]) {
					e->rwc[wc.wr_id] = wc;
					e->rwc_seen[wc.wr_id] = true;
				}
				e->recv_done++;
			} else {
				e->send_done++;
			}
			if (wc.status != IC_WC_SUCCESS && e->first_bad_status < 0)
				e->first_bad_status = wc.status;
			continue;
		}
		rl = take_record(e->cn, rec);
		if (rl < 0)
			return fail_local(e, rl, "connection to the peer: %s", strerror(-rl));
		if (rl > 0) {
			struct rfw_oob_msg m;

			if (is_type(rec, "ready")) {
				e->got_ready = true;
				continue;
			}
			if (rfw_oob_decode(rec, (size_t)rl, &m, err, sizeof(err)) != 0)
				return fail_local(e, -EPROTO, "bad record from the peer: %s", err);
			if (m.type == RFW_OOB_ERROR)
				return fail_local(e, -ECONNABORTED, "peer aborted: %s",
				                  m.u.error.reason);
			if (m.type == RFW_OOB_CONN) {
				e->peer = m.u.conn;
				e->got_conn = true;
			} else {
				e->out->peer = m.u.result;
				e->out->have_peer = true;
				e->got_result = true;
			}
			continue;
		}
		if (mono_ms() > e->deadline_ms)
			return fail_local(e, -ETIMEDOUT,
			                  "timeout (%u s): %u send and %u receive completions",
			                  e->c->timeout_s, e->send_done, e->recv_done);
		/* The rocefw backend must be polled continuously; the guest's may rest a little. */
		if (++idle > 1000)
			usleep(200);
	}
	return 0;
}

static bool have_conn(struct eng *e)
{
	return e->got_conn;
}
static bool have_ready(struct eng *e)
{
	return e->got_ready;
}
static bool have_result(struct eng *e)
{
	return e->got_result;
}
static bool sends_done(struct eng *e)
{
	return e->send_done >= e->c->count;
}
static bool recvs_and_result(struct eng *e)
{
	return e->got_result && e->recv_done >= e->c->count;
}
static bool sleep_done(struct eng *e)
{
	return mono_ms() >= e->sent_at_ms;
}

static void abort_peer(struct eng *e)
{
	struct rfw_oob_msg m = {.type = RFW_OOB_ERROR};

	snprintf(m.u.error.reason, sizeof(m.u.error.reason), "%s",
	         e->out->mine.error[0] ? e->out->mine.error : "aborted");
	rfw_oob_send(e->cn->fd, &m);
}

static int exchange_conns(struct eng *e, bool is_rfw)
{
	struct rfw_oob_msg m = {.type = RFW_OOB_CONN};
	char err[RFW_OOB_ERR_MAX];
	int rc;

	rc = e->b->open(e->b->ctx, e->c, &e->mem, &e->mine);
	if (rc != 0)
		return fail_local(e, rc, "setting up the QP and memory: %s", strerror(-rc));
	e->mine.test = oob_test(e->c->op);
	e->mine.kind = RFW_OOB_BW;
	e->mine.transport = RFW_OOB_GBN;
	e->mine.mtu = e->c->mtu;
	e->mine.size = e->c->size ? e->c->size : 1; /* the case record has the real size */
	e->mine.iters = e->c->count;
	e->mine.depth = e->c->count;
	e->mine.qps = 1;
	e->mine.qp[0].psn = e->c->psn;
	e->mine.qp[0].addr = (uint64_t)(uintptr_t)e->mem;
	e->mine.qp[0].len = ic_mem_len(e->c);
	m.u.conn = e->mine;
	if (is_rfw && (rc = rfw_oob_send(e->cn->fd, &m)) != 0)
		return fail_local(e, rc, "sending conn: %s", strerror(-rc));
	if ((rc = pump(e, have_conn)) != 0)
		return rc;
	if (rfw_oob_conn_compare(&e->mine, &e->peer, err, sizeof(err)) != 0)
		return fail_local(e, -EPROTO, "%s", err);
	rc = e->b->connect(e->b->ctx, e->c, &e->peer, e->requester);
	if (rc != 0)
		return fail_local(e, rc, "connecting the QP: %s", strerror(-rc));
	if (!is_rfw && (rc = rfw_oob_send(e->cn->fd, &m)) != 0)
		return fail_local(e, rc, "sending conn: %s", strerror(-rc));
	return 0;
}

static int post_receives(struct eng *e)
{
	uint32_t k, slot = ic_slot(e->c);
	int rc;

	for (k = 0; k < e->c->count; k++) {
		rc = e->b->post_recv(e->b->ctx, k | IC_RECV_WRID,
		                     (uint64_t)(uintptr_t)(e->mem + (size_t)k * slot), slot);
		if (rc != 0)
			return fail_local(e, rc, "post_recv %u: %s", k, strerror(-rc));
	}
	return 0;
}

/* Sources (SEND, WRITE) carry the pattern; READ/atomic destinations start poisoned. */
static void req_fill(struct eng *e)
{
	const struct ic_case *c = e->c;
	uint32_t slot = ic_slot(c);

	for (uint32_t k = 0; k < c->count; k++) {
		uint8_t *p = e->mem + (size_t)k * slot;

		if (c->op == IC_READ || c->op == IC_CAS || c->op == IC_FAA)
			memset(p, 0xa5, slot);
		else
			ic_pattern_fill(p, c->size, c->seed, k);
	}
}

/* Work request @k of the case, with the fault (bad rkey, out of bounds) applied. */
static void req_wr(const struct eng *e, uint32_t k, struct ic_wr *w)
{
	const struct ic_case *c = e->c;
	uint32_t slot = ic_slot(c);

	memset(w, 0, sizeof(*w));
	w->op = c->op;
	w->wr_id = k;
	w->laddr = (uint64_t)(uintptr_t)(e->mem + (size_t)k * slot);
	w->len = c->size;
	w->raddr = e->peer.qp[0].addr + (uint64_t)k * slot;
	w->rkey = e->peer.rkey;
	w->imm = ic_imm(c, k);
	if (c->op == IC_CAS) {
		w->compare_add = ic_atomic_init(c, k);
		w->swap = ~ic_atomic_init(c, k);
	} else if (c->op == IC_FAA) {
		w->compare_add = ic_atomic_add(k);
	}
	if (c->fault == IC_FAULT_BAD_RKEY)
		w->rkey = e->peer.rkey ^ 0x00ff5a00u;
	else if (c->fault == IC_FAULT_OOB)
		/* half the message past the MR's end; an atomic (8-byte aligned, IBA 9.4.5) just
		 * past it */
		w->raddr = e->peer.qp[0].addr + e->peer.qp[0].len -
		           (is_atomic(c->op) ? 0 : (w->len > 1 ? w->len / 2 : 0));
}

/* What came back to the requester: READ data, atomics' original values. Bytes checked. */
static uint64_t req_check(struct eng *e)
{
	const struct ic_case *c = e->c;
	uint32_t slot = ic_slot(c);
	uint64_t checked = 0, v;

	for (uint32_t k = 0; k < c->count; k++) {
		uint8_t *p = e->mem + (size_t)k * slot;
		long at;

		if (c->op == IC_READ) {
			at = ic_pattern_cmp(p, c->size, c->seed, k);
			if (at >= 0) {
				problem(e, "READ %u: byte %ld differs", k, at);
				break;
			}
			checked += c->size;
		} else if (c->op == IC_CAS || c->op == IC_FAA) {
			memcpy(&v, p, 8);
			if (v != ic_atomic_init(c, k)) {
				problem(e,
				        "%s %u: returned 0x%016" PRIx64 ", expected 0x%016" PRIx64,
				        ic_op_name(c->op), k, v, ic_atomic_init(c, k));
				break;
			}
			checked += 8;
		}
	}
	return checked;
}

static int run_requester(struct eng *e)
{
	const struct ic_case *c = e->c;
	int rc;

	req_fill(e);
	if ((rc = pump(e, have_ready)) != 0)
		return rc;
	for (uint32_t k = 0; k < c->count; k++) {
		struct ic_wr w;

		req_wr(e, k, &w);
		rc = e->b->post_send(e->b->ctx, &w);
		if (rc != 0)
			return fail_local(e, rc, "post_send %u: %s", k, strerror(-rc));
	}
	if ((rc = pump(e, sends_done)) != 0)
		return rc;
	e->out->mine.messages = e->send_done;
	e->out->mine.verified = true;
	if (c->fault != IC_FAULT_NONE) {
		if (e->first_bad_status != IC_WC_REM_ACCESS_ERR)
			problem(e, "%s: completion status %s, expected %s", ic_fault_name(c->fault),
			        e->b->status_str(e->first_bad_status < 0 ? 0 : e->first_bad_status),
			        e->b->status_str(IC_WC_REM_ACCESS_ERR));
		return 0;
	}
	if (e->first_bad_status >= 0) {
		problem(e, "send completion status %s", e->b->status_str(e->first_bad_status));
		return 0;
	}
	e->out->mine.checked_bytes = req_check(e);
	return 0;
}

/* IBA 9.9.3.1.2 class C: NAK, then the responder's QP goes to the error state and any posted
 * receive is flushed (IBA 10.8.3.3). */
static void resp_check_fault(struct eng *e)
{
	const struct ic_case *c = e->c;

	if (e->b->qp_in_error(e->b->ctx) != 1)
		problem(e, "%s: responder QP not in the error state", ic_fault_name(c->fault));
	for (uint32_t k = 0; k < IC_COUNT_MAX; k++)
		if (e->rwc_seen[k] && e->rwc[k].status != IC_WC_WR_FLUSH_ERR)
			problem(e, "%s: receive %u completed with %s", ic_fault_name(c->fault), k,
			        e->b->status_str(e->rwc[k].status));
	e->out->mine.messages = e->recv_done;
}

/* Receive completion @k: there, successful, the size and immediate of the case. */
static bool resp_recv_ok(struct eng *e, uint32_t k)
{
	const struct ic_case *c = e->c;
	const struct ic_wc *w = &e->rwc[k];

	if (!e->rwc_seen[k]) {
		problem(e, "receive %u: no completion", k);
		return false;
	}
	if (w->status != IC_WC_SUCCESS) {
		problem(e, "receive %u: status %s", k, e->b->status_str(w->status));
		return false;
	}
	if (w->byte_len != c->size) {
		problem(e, "receive %u: byte_len %u, expected %u", k, w->byte_len, c->size);
		return false;
	}
	if ((c->op != IC_SEND) != w->with_imm || (w->with_imm && w->imm != ic_imm(c, k))) {
		problem(e, "receive %u: immediate %s0x%08x, expected %s0x%08x", k,
		        w->with_imm ? "" : "none ", w->imm, c->op != IC_SEND ? "" : "none ",
		        ic_imm(c, k));
		return false;
	}
	return true;
}

/* Message @k in the responder's memory: written data, atomic results, READ sources intact.
 * Adds the bytes checked to *@checked; false at the first difference. */
static bool resp_mem_ok(struct eng *e, uint32_t k, uint64_t *checked)
{
	const struct ic_case *c = e->c;
	uint8_t *p = e->mem + (size_t)k * ic_slot(c);
	uint64_t v, want;
	long at;

	if (c->op == IC_SEND || c->op == IC_SEND_IMM || c->op == IC_WRITE ||
	    c->op == IC_WRITE_IMM) {
		at = ic_pattern_cmp(p, c->size, c->seed, k);
		if (at >= 0) {
			problem(e, "message %u: byte %ld of %u differs", k, at, c->size);
			return false;
		}
		*checked += c->size;
	} else if (c->op == IC_CAS || c->op == IC_FAA) {
		memcpy(&v, p, 8);
		want = c->op == IC_CAS ? ~ic_atomic_init(c, k)
		                       : ic_atomic_init(c, k) + ic_atomic_add(k);
		if (v != want) {
			problem(e, "%s %u: memory holds 0x%016" PRIx64 ", expected 0x%016" PRIx64,
			        ic_op_name(c->op), k, v, want);
			return false;
		}
		*checked += 8;
	} else if (c->op == IC_READ) {
		at = ic_pattern_cmp(p, c->size, c->seed, k);
		if (at >= 0) {
			problem(e, "READ source %u changed at byte %ld", k, at);
			return false;
		}
	}
	return true;
}

static void check_responder(struct eng *e)
{
	const struct ic_case *c = e->c;
	uint64_t checked = 0;

	e->out->mine.verified = true;
	if (c->fault != IC_FAULT_NONE) {
		resp_check_fault(e);
		return;
	}
	for (uint32_t k = 0; k < c->count; k++) {
		if (uses_recv(c->op) && !resp_recv_ok(e, k))
			break;
		if (!resp_mem_ok(e, k, &checked))
			break;
	}
	e->out->mine.messages = e->recv_done;
	e->out->mine.checked_bytes = checked;
}

static bool grace_over(struct eng *e)
{
	return e->recv_done >= e->c->count || mono_ms() >= e->sent_at_ms;
}

static int run_responder(struct eng *e)
{
	const struct ic_case *c = e->c;
	uint32_t k, slot = ic_slot(c);
	int rc;

	for (k = 0; k < c->count; k++) {
		uint8_t *p = e->mem + (size_t)k * slot;

		if (c->op == IC_READ)
			ic_pattern_fill(p, c->size, c->seed, k);
		else if (c->op == IC_CAS || c->op == IC_FAA) {
			uint64_t v = ic_atomic_init(c, k);

			memcpy(p, &v, 8);
		} else
			memset(p, 0x5a, slot);
	}
	/* A fault case posts one receive: it must be flushed when the QP goes to error. */
	if ((uses_recv(c->op) || c->fault != IC_FAULT_NONE) && c->rnr_delay_ms == 0 &&
	    (rc = post_receives(e)) != 0)
		return rc;
	if ((rc = send_ready(e->cn)) != 0)
		return fail_local(e, rc, "sending ready: %s", strerror(-rc));
	if (c->rnr_delay_ms) {
		/* the requester's first SEND meets an empty receive queue: RNR NAK (IBA 9.7.5.2.8)
		 */
		e->sent_at_ms = mono_ms() + c->rnr_delay_ms;
		if ((rc = pump(e, sleep_done)) != 0)
			return rc;
		if ((rc = post_receives(e)) != 0)
			return rc;
	}
	if (uses_recv(c->op) && c->fault == IC_FAULT_NONE)
		rc = pump(e, recvs_and_result);
	else
		rc = pump(e, have_result);
	if (rc != 0)
		return rc;
	if (c->fault != IC_FAULT_NONE) {
		/* give the flush completions a moment to arrive */
		e->sent_at_ms = mono_ms() + 500;
		if ((rc = pump(e, grace_over)) != 0)
			return rc;
	}
	check_responder(e);
	return 0;
}

int ic_run(const struct ic_case *c, bool is_rfw, struct ic_conn *cn, const struct ic_backend *b,
           struct ic_outcome *out)
{
	struct eng *e = calloc(1, sizeof(*e));
	struct rfw_oob_msg m = {.type = RFW_OOB_RESULT};
	int rc;

	memset(out, 0, sizeof(*out));
	if (e == NULL) {
		snprintf(out->mine.error, sizeof(out->mine.error), "out of memory");
		return -ENOMEM;
	}
	e->c = c;
	e->b = b;
	e->cn = cn;
	e->out = out;
	e->first_bad_status = -1;
	e->requester = (c->dir == IC_RFW_REQ) == is_rfw;
	e->deadline_ms = mono_ms() + (uint64_t)c->timeout_s * 1000;
	rc = exchange_conns(e, is_rfw);
	if (rc == 0)
		rc = e->requester ? run_requester(e) : run_responder(e);
	if (rc != 0) {
		abort_peer(e);
		goto out;
	}
	/* the requester's account first; the responder checks its memory after it */
	m.u.result = out->mine;
	if (e->requester) {
		if ((rc = rfw_oob_send(cn->fd, &m)) != 0) {
			fail_local(e, rc, "sending result: %s", strerror(-rc));
			goto out;
		}
		rc = pump(e, have_result);
	} else {
		rc = rfw_oob_send(cn->fd, &m);
		if (rc != 0)
			fail_local(e, rc, "sending result: %s", strerror(-rc));
	}
out:
	out->pass = rc == 0 && out->mine.verified && out->have_peer && out->peer.verified;
	if (e->mem != NULL || b->close != NULL)
		b->close(b->ctx);
	free(e);
	return rc;
}
