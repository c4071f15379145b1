/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Out-of-band connection records (docs/oob.md): codec and the TCP side. No DPDK here: the
 * interop peer (plain C + libibverbs) implements the same format, and the fuzz target links
 * this file alone.
 */
#include "ctrl/rfw_oob.h"
#include "ctrl/rfw_num.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static const char *const type_names[RFW_OOB__TYPES] = {"conn", "result", "error", "qps"};
static const char *const test_names[RFW_OOB__TESTS] = {"write", "read", "send", "atomic"};
static const char *const kind_names[RFW_OOB__KINDS] = {"bw", "lat"};
static const char *const transport_names[RFW_OOB__TRANSPORTS] = {"gbn", "sr"};

static const char *name_of(const char *const *t, unsigned n, unsigned v)
{
	return v < n ? t[v] : "?";
}

const char *rfw_oob_type_name(enum rfw_oob_type t)
{
	return name_of(type_names, RFW_OOB__TYPES, (unsigned)t);
}
const char *rfw_oob_test_name(enum rfw_oob_test t)
{
	return name_of(test_names, RFW_OOB__TESTS, (unsigned)t);
}
const char *rfw_oob_kind_name(enum rfw_oob_kind k)
{
	return name_of(kind_names, RFW_OOB__KINDS, (unsigned)k);
}
const char *rfw_oob_transport_name(enum rfw_oob_transport t)
{
	return name_of(transport_names, RFW_OOB__TRANSPORTS, (unsigned)t);
}

static int lookup(const char *const *t, unsigned n, const char *s)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i], s) == 0)
			return (int)i;
	return -1;
}

int rfw_oob_test_lookup(const char *s)
{
	return lookup(test_names, RFW_OOB__TESTS, s);
}
int rfw_oob_kind_lookup(const char *s)
{
	return lookup(kind_names, RFW_OOB__KINDS, s);
}
int rfw_oob_transport_lookup(const char *s)
{
	return lookup(transport_names, RFW_OOB__TRANSPORTS, s);
}

/* ---- limits, shared by the encoder and the decoder ---- */

#define SIZE_MAX_MSG (1ull << 31) /* IBA: an RC message is at most 2^31 bytes */
#define ITERS_MAX    1000000000000ull
#define DURATION_MAX 86400u
#define DEPTH_MAX    65536u
#define PSN_QPN_MASK 0xffffffu

static bool mtu_ok(uint64_t v)
{
	return v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096;
}

static bool text_ok(const char *s, size_t cap)
{
	size_t i;

	for (i = 0; i < cap && s[i] != '\0'; i++)
		if (s[i] == '\n' || s[i] == '\r')
			return false;
	return i < cap;
}

/* ---- encoder ---- */

struct out {
	char *p;
	size_t cap, len;
	bool full;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->full = true;
		return;
	}
	o->len += (size_t)n;
}

static bool qp_valid(const struct rfw_oob_qp *q)
{
	return q->qpn <= PSN_QPN_MASK && q->psn <= PSN_QPN_MASK && q->addr + q->len >= q->addr;
}

static int conn_valid(const struct rfw_oob_conn *c)
{
	uint32_t i;

	if ((unsigned)c->test >= RFW_OOB__TESTS || (unsigned)c->kind >= RFW_OOB__KINDS ||
	    (unsigned)c->transport >= RFW_OOB__TRANSPORTS || !mtu_ok(c->mtu) || c->size == 0 ||
	    c->size > SIZE_MAX_MSG || c->iters > ITERS_MAX || c->duration_s > DURATION_MAX ||
	    c->depth == 0 || c->depth > DEPTH_MAX || c->qps == 0 || c->qps > RFW_OOB_MAX_QPS)
		return -EINVAL;
	for (i = 0; i < rfw_oob_conn_lines(c); i++)
		if (!qp_valid(&c->qp[i]))
			return -EINVAL;
	return 0;
}

static int qps_valid(const struct rfw_oob_qps *b)
{
	uint32_t i;

	if (b->n == 0 || b->n > RFW_OOB_BATCH_QPS || b->first >= RFW_OOB_MAX_QPS ||
	    b->first + b->n > RFW_OOB_MAX_QPS)
		return -EINVAL;
	for (i = 0; i < b->n; i++)
		if (!qp_valid(&b->qp[i]))
			return -EINVAL;
	return 0;
}

static void put_qps(struct out *o, const struct rfw_oob_qp *q, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		put(o, "qp=0x%06x,0x%06x,0x%016" PRIx64 ",%" PRIu64 "\n", q[i].qpn, q[i].psn,
		    q[i].addr, q[i].len);
}

int rfw_oob_encode(const struct rfw_oob_msg *m, char *buf, size_t cap)
{
	struct out o = {.p = buf, .cap = cap};
	unsigned i;

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if ((unsigned)m->type >= RFW_OOB__TYPES)
		return -EINVAL;
	put(&o, "%s %s\n", RFW_OOB_SCHEMA, type_names[m->type]);
	switch (m->type) {
	case RFW_OOB_CONN: {
		const struct rfw_oob_conn *c = &m->u.conn;

		if (conn_valid(c) != 0)
			return -EINVAL;
		put(&o,
		    "test=%s\nkind=%s\ntransport=%s\nmtu=%u\nsize=%u\niters=%" PRIu64
		    "\nduration=%u\ndepth=%u\nqps=%u\n",
		    test_names[c->test], kind_names[c->kind], transport_names[c->transport], c->mtu,
		    c->size, c->iters, c->duration_s, c->depth, c->qps);
		put(&o, "gid=");
		for (i = 0; i < 16; i++)
			put(&o, "%02x", c->gid[i]);
		put(&o, "\nip=%u.%u.%u.%u\n", c->ip4 >> 24, (c->ip4 >> 16) & 0xff,
		    (c->ip4 >> 8) & 0xff, c->ip4 & 0xff);
		if (c->has_mac)
			put(&o, "mac=%02x:%02x:%02x:%02x:%02x:%02x\n", c->mac[0], c->mac[1],
			    c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
		put(&o, "rkey=0x%08x\n", c->rkey);
		put_qps(&o, c->qp, rfw_oob_conn_lines(c));
		break;
	}
	case RFW_OOB_QPS:
		if (qps_valid(&m->u.qps) != 0)
			return -EINVAL;
		put(&o, "first=%u\n", m->u.qps.first);
		put_qps(&o, m->u.qps.qp, m->u.qps.n);
		break;
	case RFW_OOB_RESULT: {
		const struct rfw_oob_result *r = &m->u.result;

		if (!text_ok(r->error, sizeof(r->error)))
			return -EINVAL;
		put(&o, "messages=%" PRIu64 "\nchecked_bytes=%" PRIu64 "\nverified=%d\n",
		    r->messages, r->checked_bytes, r->verified ? 1 : 0);
		if (r->error[0] != '\0')
			put(&o, "error=%s\n", r->error);
		if (r->has_time)
			put(&o, "busy_ns=%" PRIu64 "\ntool_ns=%" PRIu64 "\n", r->busy_ns,
			    r->tool_ns);
		break;
	}
	case RFW_OOB_ERROR:
		if (!text_ok(m->u.error.reason, sizeof(m->u.error.reason)) ||
		    m->u.error.reason[0] == '\0')
			return -EINVAL;
		put(&o, "reason=%s\n", m->u.error.reason);
		break;
	default:
		return -EINVAL;
	}
	put(&o, "end\n");
	if (o.full || o.len > RFW_OOB_RECORD_MAX)
		return -ENOSPC;
	return (int)o.len;
}

/* ---- framing ---- */

int rfw_oob_record_len(const char *buf, size_t len)
{
	size_t i, line = 0;

	/* A record ends at the first line that is exactly "end". */
	for (i = 0; i < len && i < RFW_OOB_RECORD_MAX; i++) {
		if (buf[i] != '\n')
			continue;
		if (i - line == 3 && memcmp(buf + line, "end", 3) == 0)
			return (int)(i + 1);
		line = i + 1;
	}
	return i >= RFW_OOB_RECORD_MAX ? -E2BIG : 0;
}

/* ---- decoder ---- */

struct dec {
	char *err;
	size_t errlen;
	unsigned line;
};

static int fail(struct dec *d, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct dec *d, const char *field, const char *fmt, ...)
{
	char msg[RFW_OOB_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->errlen != 0) {
		if (field != NULL)
			snprintf(d->err, d->errlen, "line %u: field '%s': %s", d->line, field, msg);
		else
			snprintf(d->err, d->errlen, "line %u: %s", d->line, msg);
	}
	return -EPROTO;
}

static int num(struct dec *d, const char *field, const char *s, uint64_t lo, uint64_t hi,
               uint64_t *v)
{
	int rc = rfw_num_u64(s, 0, UINT64_MAX, v);

	if (rc != 0)
		return fail(d, field, "'%.40s' is not an unsigned integer", s);
	if (*v < lo || *v > hi)
		return fail(d, field, "%" PRIu64 " is out of range %" PRIu64 "..%" PRIu64, *v, lo,
		            hi);
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_ip4(const char *s, uint32_t *ip)
{
	unsigned part = 0, digits = 0, val = 0;
	uint32_t r = 0;

	for (;; s++) {
		if (*s >= '0' && *s <= '9') {
			val = val * 10 + (unsigned)(*s - '0');
			if (++digits > 3 || val > 255)
				return -1;
		} else if (*s == '.' || *s == '\0') {
			if (digits == 0)
				return -1;
			r = (r << 8) | val;
			part++;
			if (*s == '\0')
				break;
			if (part == 4)
				return -1;
			val = 0;
			digits = 0;
		} else {
			return -1;
		}
	}
	if (part != 4)
		return -1;
	*ip = r;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned i;

	if (strlen(s) != 17)
		return -1;
	for (i = 0; i < 6; i++) {
		int h = hexval(s[3 * i]), l = hexval(s[3 * i + 1]);

		if (h < 0 || l < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -1;
		mac[i] = (uint8_t)(h << 4 | l);
	}
	return 0;
}

/* qp=QPN,PSN,ADDR,LEN */
static int parse_qp(struct dec *d, char *s, struct rfw_oob_qp *q)
{
	char *f[4];
	unsigned n = 0;
	uint64_t v;
	char *p = s;

	for (;;) {
		char *c = strchr(p, ',');

		if (n == 4)
			return fail(d, "qp", "more than 4 comma-separated values");
		f[n++] = p;
		if (c == NULL)
			break;
		*c = '\0';
		p = c + 1;
	}
	if (n != 4)
		return fail(d, "qp", "expected QPN,PSN,ADDR,LEN (4 values), got %u", n);
	if (num(d, "qp.qpn", f[0], 0, PSN_QPN_MASK, &v) != 0)
		return -EPROTO;
	q->qpn = (uint32_t)v;
	if (num(d, "qp.psn", f[1], 0, PSN_QPN_MASK, &v) != 0)
		return -EPROTO;
	q->psn = (uint32_t)v;
	if (num(d, "qp.addr", f[2], 0, UINT64_MAX, &q->addr) != 0)
		return -EPROTO;
	if (num(d, "qp.len", f[3], 0, UINT64_MAX, &q->len) != 0)
		return -EPROTO;
	if (q->addr + q->len < q->addr)
		return fail(d, "qp.len", "address + length wraps around");
	return 0;
}

/* Keys of a "conn" record, in encoding order; bit i of 'seen' is key i. */
enum conn_key {
	K_TEST,
	K_KIND,
	K_TRANSPORT,
	K_MTU,
	K_SIZE,
	K_ITERS,
	K_DURATION,
	K_DEPTH,
	K_QPS,
	K_GID,
	K_IP,
	K_MAC,
	K_RKEY,
	K_QP,
	K__COUNT
};
static const char *const conn_keys[K__COUNT] = {
    "test",  "kind", "transport", "mtu", "size", "iters", "duration",
    "depth", "qps",  "gid",       "ip",  "mac",  "rkey",  "qp",
};

/* A number field in [@lo, @hi] into a uint32_t. */
static int num32(struct dec *d, const char *field, const char *s, uint64_t lo, uint64_t hi,
                 uint32_t *out)
{
	uint64_t v;

	if (num(d, field, s, lo, hi, &v) != 0)
		return -EPROTO;
	*out = (uint32_t)v;
	return 0;
}

/* gid: 32 hex digits. */
static int parse_gid(struct dec *d, const char *val, uint8_t gid[16])
{
	if (strlen(val) != 32)
		return fail(d, "gid", "expected 32 hex digits, got %zu characters", strlen(val));
	for (int i = 0; i < 16; i++) {
		int h = hexval(val[2 * i]), l = hexval(val[2 * i + 1]);

		if (h < 0 || l < 0)
			return fail(d, "gid", "'%c%c' is not a hex byte", val[2 * i],
			            val[2 * i + 1]);
		gid[i] = (uint8_t)(h << 4 | l);
	}
	return 0;
}

/* test, kind, transport: names from their tables. */
static int conn_word(struct dec *d, struct rfw_oob_conn *c, enum conn_key k, const char *val)
{
	int i;

	if (k == K_TEST) {
		if ((i = rfw_oob_test_lookup(val)) < 0)
			return fail(d, "test", "'%.40s' is not write, read, send or atomic", val);
		c->test = (enum rfw_oob_test)i;
	} else if (k == K_KIND) {
		if ((i = rfw_oob_kind_lookup(val)) < 0)
			return fail(d, "kind", "'%.40s' is not bw or lat", val);
		c->kind = (enum rfw_oob_kind)i;
	} else {
		if ((i = rfw_oob_transport_lookup(val)) < 0)
			return fail(d, "transport", "'%.40s' is not gbn or sr", val);
		c->transport = (enum rfw_oob_transport)i;
	}
	return 0;
}

static int conn_field(struct dec *d, struct rfw_oob_conn *c, unsigned k, char *val, unsigned *nqp)
{
	uint64_t v;

	switch ((enum conn_key)k) {
	case K_TEST:
	case K_KIND:
	case K_TRANSPORT:
		return conn_word(d, c, (enum conn_key)k, val);
	case K_MTU:
		if (rfw_num_u64(val, 0, UINT64_MAX, &v) != 0 || !mtu_ok(v))
			return fail(d, "mtu", "'%.40s' is not 256, 512, 1024, 2048 or 4096", val);
		c->mtu = (uint32_t)v;
		return 0;
	case K_SIZE:
		return num32(d, "size", val, 1, SIZE_MAX_MSG, &c->size);
	case K_ITERS:
		return num(d, "iters", val, 0, ITERS_MAX, &c->iters);
	case K_DURATION:
		return num32(d, "duration", val, 0, DURATION_MAX, &c->duration_s);
	case K_DEPTH:
		return num32(d, "depth", val, 1, DEPTH_MAX, &c->depth);
	case K_QPS:
		return num32(d, "qps", val, 1, RFW_OOB_MAX_QPS, &c->qps);
	case K_GID:
		return parse_gid(d, val, c->gid);
	case K_IP:
		if (parse_ip4(val, &c->ip4) != 0)
			return fail(d, "ip", "'%.40s' is not a dotted IPv4 address", val);
		return 0;
	case K_MAC:
		if (parse_mac(val, c->mac) != 0)
			return fail(d, "mac", "'%.40s' is not xx:xx:xx:xx:xx:xx", val);
		c->has_mac = true;
		return 0;
	case K_RKEY:
		return num32(d, "rkey", val, 0, UINT32_MAX, &c->rkey);
	case K_QP:
		if (*nqp == RFW_OOB_BATCH_QPS)
			return fail(d, "qp", "more than %u qp lines", RFW_OOB_BATCH_QPS);
		if (parse_qp(d, val, &c->qp[*nqp]) != 0)
			return -EPROTO;
		(*nqp)++;
		return 0;
	default:
		return fail(d, NULL, "internal: key %u", k);
	}
}

static int conn_finish(struct dec *d, struct rfw_oob_conn *c, uint32_t seen, unsigned nqp)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	unsigned k;
	uint32_t gip;

	for (k = 0; k < K__COUNT; k++)
		if (k != K_MAC && k != K_QP && !(seen & (1u << k)))
			return fail(d, conn_keys[k], "missing");
	if (nqp != rfw_oob_conn_lines(c))
		return fail(d, "qp", "%u qp lines for qps=%u (the first %u QPs go here)", nqp,
		            c->qps, rfw_oob_conn_lines(c));
	if (memcmp(c->gid, prefix, 12) != 0)
		return fail(d, "gid", "not an IPv4-mapped GID (::ffff:a.b.c.d)");
	gip = (uint32_t)c->gid[12] << 24 | (uint32_t)c->gid[13] << 16 | (uint32_t)c->gid[14] << 8 |
	      c->gid[15];
	if (gip != c->ip4)
		return fail(d, "gid", "its IPv4 part differs from field 'ip'");
	if (c->iters == 0 && c->duration_s == 0)
		return fail(d, "iters", "0 without a duration");
	if (c->iters != 0 && c->duration_s != 0)
		return fail(d, "duration", "both iters and duration are set");
	return 0;
}

/* The next line of @buf from *@pos into @line (NUL-terminated, the newline dropped). Its length,
 * or -EPROTO (message in @d). */
static int next_line(struct dec *d, const char *buf, size_t len, size_t *pos,
                     char line[RFW_OOB_LINE_MAX])
{
	const char *nl = memchr(buf + *pos, '\n', len - *pos);
	size_t n = nl != NULL ? (size_t)(nl - (buf + *pos)) : len - *pos;

	if (nl == NULL)
		return fail(d, NULL, "line not terminated by a newline");
	if (n >= RFW_OOB_LINE_MAX)
		return fail(d, NULL, "line longer than %u bytes", RFW_OOB_LINE_MAX - 1);
	memcpy(line, buf + *pos, n);
	line[n] = '\0';
	*pos += n + 1;
	if (memchr(line, '\0', n) != NULL)
		return fail(d, NULL, "NUL byte in line");
	if (memchr(line, '\r', n) != NULL)
		return fail(d, NULL, "carriage return in line (lines end in \\n only)");
	return (int)n;
}

/* The first line, "rocefw-oob/1 TYPE" (@n bytes): the record's type into @m. */
static int decode_schema(struct dec *d, const char *line, size_t n, struct rfw_oob_msg *m)
{
	size_t hdr = strlen(RFW_OOB_SCHEMA);
	int t;

	if (n < hdr + 2 || memcmp(line, RFW_OOB_SCHEMA, hdr) != 0 || line[hdr] != ' ') {
		/* A peer of another version: say which, so the older side is the one updated. */
		if (strncmp(line, "rocefw-oob/", 11) == 0)
			return fail(d, "schema",
			            "unsupported version '%.*s': the peer speaks it, this side "
			            "speaks %s",
			            (int)strcspn(line, " "), line, RFW_OOB_SCHEMA);
		return fail(d, "schema", "expected '%s TYPE'", RFW_OOB_SCHEMA);
	}
	t = lookup(type_names, RFW_OOB__TYPES, line + hdr + 1);
	if (t < 0)
		return fail(d, "schema", "unknown record type '%.20s' (conn, qps, result, error)",
		            line + hdr + 1);
	m->type = (enum rfw_oob_type)t;
	return 0;
}

/* Mark field bit @bit of @key seen; -EPROTO when it was already. */
static int once(struct dec *d, const char *key, uint32_t *seen, uint32_t bit)
{
	if (*seen & bit)
		return fail(d, key, "given twice");
	*seen |= bit;
	return 0;
}

/* result: messages (bit 0), checked_bytes (1), verified (2), error (3), busy_ns (4), tool_ns
 * (5). */
static int result_field(struct dec *d, struct rfw_oob_result *r, const char *key, const char *val,
                        uint32_t *seen)
{
	uint64_t v;

	if (strcmp(key, "messages") == 0)
		return once(d, key, seen, 1) ? -EPROTO
		                             : num(d, "messages", val, 0, UINT64_MAX, &r->messages);
	if (strcmp(key, "checked_bytes") == 0)
		return once(d, key, seen, 2)
		           ? -EPROTO
		           : num(d, "checked_bytes", val, 0, UINT64_MAX, &r->checked_bytes);
	if (strcmp(key, "verified") == 0) {
		if (once(d, key, seen, 4) || num(d, "verified", val, 0, 1, &v) != 0)
			return -EPROTO;
		r->verified = v == 1;
		return 0;
	}
	if (strcmp(key, "error") == 0) {
		if (once(d, key, seen, 8))
			return -EPROTO;
		if (strlen(val) >= sizeof(r->error))
			return fail(d, "error", "longer than %u bytes", RFW_OOB_TEXT_MAX - 1);
		strcpy(r->error, val);
		return 0;
	}
	if (strcmp(key, "busy_ns") == 0)
		return once(d, key, seen, 16) ? -EPROTO
		                              : num(d, "busy_ns", val, 0, UINT64_MAX, &r->busy_ns);
	if (strcmp(key, "tool_ns") == 0)
		return once(d, key, seen, 32) ? -EPROTO
		                              : num(d, "tool_ns", val, 0, UINT64_MAX, &r->tool_ns);
	return fail(d, key, "unknown field in a result record");
}

/* error: reason (bit 0). */
static int error_field(struct dec *d, struct rfw_oob_error *e, const char *key, const char *val,
                       uint32_t *seen)
{
	if (strcmp(key, "reason") != 0)
		return fail(d, key, "unknown field in an error record");
	if (once(d, key, seen, 1))
		return -EPROTO;
	if (val[0] == '\0' || strlen(val) >= sizeof(e->reason))
		return fail(d, "reason", "empty or longer than %u bytes", RFW_OOB_TEXT_MAX - 1);
	strcpy(e->reason, val);
	return 0;
}

/* qps: first (bit 0), qp (repeated). */
static int qps_field(struct dec *d, struct rfw_oob_qps *b, const char *key, char *val,
                     uint32_t *seen)
{
	if (strcmp(key, "first") == 0)
		return once(d, key, seen, 1)
		           ? -EPROTO
		           : num32(d, "first", val, 0, RFW_OOB_MAX_QPS - 1, &b->first);
	if (strcmp(key, "qp") != 0)
		return fail(d, key, "unknown field in a qps record");
	if (b->n == RFW_OOB_BATCH_QPS)
		return fail(d, "qp", "more than %u qp lines", RFW_OOB_BATCH_QPS);
	if (parse_qp(d, val, &b->qp[b->n]) != 0)
		return -EPROTO;
	b->n++;
	return 0;
}

/* One "key=value" line (@line, modified) of a record of @m's type. */
static int decode_field(struct dec *d, char *line, struct rfw_oob_msg *m, uint32_t *seen,
                        unsigned *nqp)
{
	char *eq = strchr(line, '=');
	unsigned k;

	if (eq == NULL || eq == line)
		return fail(d, NULL, "expected key=value, got '%.40s'", line);
	*eq = '\0';
	switch (m->type) {
	case RFW_OOB_CONN:
		for (k = 0; k < K__COUNT; k++)
			if (strcmp(line, conn_keys[k]) == 0)
				break;
		if (k == K__COUNT)
			return fail(d, line, "unknown field in a conn record");
		if (k != K_QP && once(d, line, seen, 1u << k))
			return -EPROTO;
		*seen |= 1u << k;
		return conn_field(d, &m->u.conn, k, eq + 1, nqp) != 0 ? -EPROTO : 0;
	case RFW_OOB_RESULT:
		return result_field(d, &m->u.result, line, eq + 1, seen);
	case RFW_OOB_ERROR:
		return error_field(d, &m->u.error, line, eq + 1, seen);
	case RFW_OOB_QPS:
		return qps_field(d, &m->u.qps, line, eq + 1, seen);
	default:
		return fail(d, NULL, "internal: type %d", (int)m->type);
	}
}

/* After "end": every required field of the record was there. */
static int decode_finish(struct dec *d, struct rfw_oob_msg *m, uint32_t seen, unsigned nqp)
{
	switch (m->type) {
	case RFW_OOB_CONN:
		return conn_finish(d, &m->u.conn, seen, nqp);
	case RFW_OOB_RESULT:
		if (!(seen & 1))
			return fail(d, "messages", "missing");
		if (!(seen & 2))
			return fail(d, "checked_bytes", "missing");
		if (!(seen & 4))
			return fail(d, "verified", "missing");
		/* The two times go together: one without the other is no account of the core. */
		if ((seen & 48) == 16)
			return fail(d, "tool_ns", "missing (busy_ns is given)");
		if ((seen & 48) == 32)
			return fail(d, "busy_ns", "missing (tool_ns is given)");
		m->u.result.has_time = (seen & 48) == 48;
		return 0;
	case RFW_OOB_ERROR:
		if (!(seen & 1))
			return fail(d, "reason", "missing");
		return 0;
	case RFW_OOB_QPS:
		if (!(seen & 1))
			return fail(d, "first", "missing");
		if (m->u.qps.n == 0)
			return fail(d, "qp", "missing (a qps record has 1..%u)", RFW_OOB_BATCH_QPS);
		if (m->u.qps.first + m->u.qps.n > RFW_OOB_MAX_QPS)
			return fail(d, "first", "QPs %u..%u: beyond %u", m->u.qps.first,
			            m->u.qps.first + m->u.qps.n - 1, RFW_OOB_MAX_QPS);
		return 0;
	default:
		return -EPROTO;
	}
}

int rfw_oob_decode(const char *buf, size_t len, struct rfw_oob_msg *m, char *err, size_t errlen)
{
	struct dec d = {.err = err, .errlen = errlen, .line = 1};
	char line[RFW_OOB_LINE_MAX];
	size_t pos = 0;
	uint32_t seen = 0;
	unsigned nqp = 0;
	bool ended = false;
	int n;

	if (errlen != 0)
		err[0] = '\0';
	memset(m, 0, sizeof(*m));
	if (len > RFW_OOB_RECORD_MAX)
		return fail(&d, NULL, "record longer than %u bytes", RFW_OOB_RECORD_MAX);
	for (d.line = 1; pos < len; d.line++) {
		if (memchr(buf + pos, '\n', len - pos) != NULL && ended)
			return fail(&d, NULL, "bytes after 'end'");
		n = next_line(&d, buf, len, &pos, line);
		if (n < 0)
			return n;
		if (d.line == 1) {
			if (decode_schema(&d, line, (size_t)n, m) != 0)
				return -EPROTO;
		} else if (strcmp(line, "end") == 0) {
			ended = true;
		} else if (decode_field(&d, line, m, &seen, &nqp) != 0) {
			return -EPROTO;
		}
	}
	if (d.line == 1)
		return fail(&d, "schema", "empty record");
	if (!ended)
		return fail(&d, NULL, "record not terminated by 'end'");
	d.line--;
	return decode_finish(&d, m, seen, nqp);
}

int rfw_oob_conn_compare(const struct rfw_oob_conn *mine, const struct rfw_oob_conn *peer,
                         char *err, size_t errlen)
{
#define DIFF_STR(field, names, what)                                                               \
	if (mine->field != peer->field) {                                                          \
		snprintf(err, errlen, "%s mismatch: this side %s, peer %s", what,                  \
		         names(mine->field), names(peer->field));                                  \
		return -EPROTO;                                                                    \
	}
#define DIFF_NUM(field, what)                                                                      \
	if (mine->field != peer->field) {                                                          \
		snprintf(err, errlen, "%s mismatch: this side %" PRIu64 ", peer %" PRIu64, what,   \
		         (uint64_t)mine->field, (uint64_t)peer->field);                            \
		return -EPROTO;                                                                    \
	}
	DIFF_STR(transport, rfw_oob_transport_name, "transport mode")
	DIFF_STR(test, rfw_oob_test_name, "test")
	DIFF_STR(kind, rfw_oob_kind_name, "test kind")
	DIFF_NUM(mtu, "path MTU")
	DIFF_NUM(qps, "number of QPs")
	DIFF_NUM(size, "message size")
	DIFF_NUM(iters, "iterations")
	DIFF_NUM(duration_s, "duration")
	DIFF_NUM(depth, "tx depth")
#undef DIFF_STR
#undef DIFF_NUM
	return 0;
}

/* ---- TCP ---- */

static int set_nonblock_nodelay(int fd)
{
	int one = 1, fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

int rfw_oob_listen(uint16_t port)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	int fd, one = 1, zero = 0, rc;

	a.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* One socket for IPv4 (mapped) and IPv6 clients. */
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = fcntl(fd, F_GETFL);
	if (rc < 0 || fcntl(fd, F_SETFL, rc | O_NONBLOCK) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int rfw_oob_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), rc;

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	rc = set_nonblock_nodelay(fd);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int rfw_oob_connect(const char *host, uint16_t port, unsigned timeout_ms)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	char ps[8];
	uint64_t t0 = mono_ms();
	int rc, fd = -1;

	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host, ps, &hints, &res);
	if (rc != 0)
		return -EHOSTUNREACH;
	for (;;) {
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (fd < 0)
				continue;
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			close(fd);
			fd = -1;
		}
		if (fd >= 0 || mono_ms() - t0 >= timeout_ms)
			break;
		usleep(100 * 1000); /* the server may still be starting */
	}
	freeaddrinfo(res);
	if (fd < 0)
		return -ETIMEDOUT;
	rc = set_nonblock_nodelay(fd);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int rfw_oob_send(int fd, const struct rfw_oob_msg *m)
{
	char buf[RFW_OOB_RECORD_MAX + 1];
	int len = rfw_oob_encode(m, buf, sizeof(buf)), off = 0;

	if (len < 0)
		return len;
	while (off < len) {
		ssize_t n = send(fd, buf + off, (size_t)(len - off), MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};

			poll(&p, 1, 100);
			continue;
		}
		if (n < 0)
			return -errno;
		off += (int)n;
	}
	return 0;
}

int rfw_oob_recv(int fd, struct rfw_oob_rx *rx, struct rfw_oob_msg *m, char *err, size_t errlen)
{
	int rl;

	for (;;) {
		ssize_t n;

		rl = rfw_oob_record_len(rx->buf, rx->len);
		if (rl != 0)
			break;
		if (rx->len == sizeof(rx->buf))
			return -E2BIG;
		n = recv(fd, rx->buf + rx->len, sizeof(rx->buf) - rx->len, 0);
		if (n == 0)
			return -EPIPE;
		if (n < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0
			                                                                   : -errno;
		rx->len += (size_t)n;
	}
	if (rl < 0)
		return rl;
	if (rfw_oob_decode(rx->buf, (size_t)rl, m, err, errlen) != 0)
		return -EPROTO;
	memmove(rx->buf, rx->buf + rl, rx->len - (size_t)rl);
	rx->len -= (size_t)rl;
	return 1;
}
