/* SPDX-License-Identifier: BSD-3-Clause */
/* HPCC's topology, flow and FCT formats. See hpcc_fmt.h. */
#include "hpcc_fmt.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A whitespace tokenizer that knows the line of each token. */
struct tok {
	FILE *f;
	unsigned line;
	char buf[128];
	char *err;
	size_t errlen;
};

/* The next token into t->buf; false at end of file. A token longer than the buffer is cut and
 * then fails its field's check (no valid field is that long). */
static bool tok_next(struct tok *t)
{
	int c;
	size_t n = 0;

	while ((c = fgetc(t->f)) != EOF && isspace(c))
		if (c == '\n')
			t->line++;
	if (c == EOF)
		return false;
	do {
		if (n + 1 < sizeof(t->buf))
			t->buf[n++] = (char)c;
	} while ((c = fgetc(t->f)) != EOF && !isspace(c));
	if (c == '\n')
		ungetc(c, t->f);
	t->buf[n] = 0;
	return true;
}

static int tok_fail(struct tok *t, const char *fmt, ...)
{
	va_list ap;
	int off = snprintf(t->err, t->errlen, "line %u: ", t->line);

	va_start(ap, fmt);
	if (off >= 0 && (size_t)off < t->errlen)
		vsnprintf(t->err + off, t->errlen - (size_t)off, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An unsigned integer field in [lo, hi]. */
static int tok_u64(struct tok *t, const char *what, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!tok_next(t))
		return tok_fail(t, "%s missing (end of file)", what);
	errno = 0;
	v = strtoull(t->buf, &end, 10);
	if (!isdigit((unsigned char)t->buf[0]) || *end || errno || v < lo || v > hi)
		return tok_fail(t, "%s '%s': expected an integer %" PRIu64 "..%" PRIu64, what,
		                t->buf, lo, hi);
	*out = v;
	return 0;
}

static int tok_u32(struct tok *t, const char *what, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;
	int rc = tok_u64(t, what, lo, hi, &v);

	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

static int tok_end(struct tok *t)
{
	if (tok_next(t))
		return tok_fail(t, "unexpected '%s' after the last entry", t->buf);
	return 0;
}

/* A number with a unit suffix from @units (case-insensitive, longest first). */
static int parse_unit(const char *s, const char *const *units, const double *scale, double *out)
{
	char *end;
	double v;

	if (s == NULL || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; units[i]; i++)
		if (strcasecmp(end, units[i]) == 0) {
			*out = v * scale[i];
			return 0;
		}
	return -EINVAL;
}

int rfw_parse_rate(const char *s, uint64_t *bps)
{
	static const char *const u[] = {"Gbps", "Gb/s", "Mbps", "Mb/s", "Kbps",
	                                "Kb/s", "bps",  "b/s",  NULL};
	static const double k[] = {1e9, 1e9, 1e6, 1e6, 1e3, 1e3, 1, 1};
	double v;

	if (parse_unit(s, u, k, &v) || v < 1 || v > 1e13)
		return -EINVAL;
	*bps = (uint64_t)llround(v);
	return 0;
}

int rfw_parse_delay(const char *s, uint64_t *ns)
{
	static const char *const u[] = {"ms", "us", "ns", "s", NULL};
	static const double k[] = {1e6, 1e3, 1, 1e9};
	double v;

	/* Up to 10 s of propagation: anything longer is a typo in a data-centre topology. */
	if (parse_unit(s, u, k, &v) || v > 1e10)
		return -EINVAL;
	*ns = (uint64_t)llround(v);
	return 0;
}

static int topo_link(struct tok *t, struct rfw_topo *topo, struct rfw_topo_link *l)
{
	char *end;
	int rc;

	rc = tok_u32(t, "link src", 0, topo->nodes - 1, &l->src);
	if (!rc)
		rc = tok_u32(t, "link dst", 0, topo->nodes - 1, &l->dst);
	if (rc)
		return rc;
	if (l->src == l->dst)
		return tok_fail(t, "link %u -> %u: a node linked to itself", l->src, l->dst);
	if (!topo->is_switch[l->src] && !topo->is_switch[l->dst])
		return tok_fail(t,
		                "link %u -> %u: two hosts linked directly (hosts hang off "
		                "switches)",
		                l->src, l->dst);
	if (!tok_next(t) || rfw_parse_rate(t->buf, &l->rate_bps))
		return tok_fail(t, "link rate '%s': expected e.g. 100Gbps", t->buf);
	if (!tok_next(t) || rfw_parse_delay(t->buf, &l->delay_ns))
		return tok_fail(t, "link delay '%s': expected e.g. 0.001ms or 1us", t->buf);
	if (!tok_next(t))
		return tok_fail(t, "link error_rate missing (end of file)");
	l->error_rate = strtod(t->buf, &end);
	if (end == t->buf || *end || !(l->error_rate >= 0 && l->error_rate <= 1))
		return tok_fail(t, "link error_rate '%s': expected 0..1", t->buf);
	return 0;
}

static int topo_body(struct tok *t, struct rfw_topo *topo)
{
	int rc = tok_u32(t, "node count", 2, RFW_HPCC_MAX_NODES, &topo->nodes);

	if (!rc)
		rc = tok_u32(t, "switch count", 1, topo->nodes - 1, &topo->nswitches);
	if (!rc)
		rc = tok_u32(t, "link count", 1, 4 * RFW_HPCC_MAX_NODES, &topo->nlinks);
	if (rc)
		return rc;
	topo->is_switch = calloc(topo->nodes, sizeof(*topo->is_switch));
	topo->link = calloc(topo->nlinks, sizeof(*topo->link));
	if (topo->is_switch == NULL || topo->link == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < topo->nswitches; i++) {
		uint32_t id;

		rc = tok_u32(t, "switch id", 0, topo->nodes - 1, &id);
		if (rc)
			return rc;
		if (topo->is_switch[id])
			return tok_fail(t, "switch id %u given twice", id);
		topo->is_switch[id] = true;
	}
	for (uint32_t i = 0; i < topo->nlinks; i++) {
		rc = topo_link(t, topo, &topo->link[i]);
		if (rc)
			return rc;
	}
	return tok_end(t);
}

int rfw_topo_read(FILE *f, struct rfw_topo *topo, char *err, size_t errlen)
{
	struct tok t = {.f = f, .line = 1, .err = err, .errlen = errlen};

	memset(topo, 0, sizeof(*topo));
	if (errlen)
		err[0] = 0;
	return topo_body(&t, topo);
}

void rfw_topo_free(struct rfw_topo *t)
{
	free(t->is_switch);
	free(t->link);
	memset(t, 0, sizeof(*t));
}

static int flow_one(struct tok *t, const struct rfw_topo *topo, struct rfw_flow_spec *fl)
{
	char *end;
	double st;
	int rc = tok_u32(t, "flow src", 0, topo->nodes - 1, &fl->src);

	if (!rc)
		rc = tok_u32(t, "flow dst", 0, topo->nodes - 1, &fl->dst);
	if (!rc)
		rc = tok_u32(t, "flow priority", 0, 7, &fl->pg);
	if (!rc)
		rc = tok_u32(t, "flow dport", 0, 65535, &fl->dport);
	if (!rc)
		rc = tok_u64(t, "flow size", 1, 1ull << 31, &fl->size);
	if (rc)
		return rc;
	if (topo->is_switch[fl->src] || topo->is_switch[fl->dst])
		return tok_fail(t, "flow %u -> %u: an end is a switch", fl->src, fl->dst);
	if (fl->src == fl->dst)
		return tok_fail(t, "flow %u -> %u: source and destination are the same host",
		                fl->src, fl->dst);
	if (!tok_next(t))
		return tok_fail(t, "flow start_time missing (end of file)");
	st = strtod(t->buf, &end);
	if (end == t->buf || *end || !(st >= 0 && st <= 1e6))
		return tok_fail(t, "flow start_time '%s': expected seconds, 0..1e6", t->buf);
	fl->start_ns = (uint64_t)llround(st * 1e9);
	return 0;
}

int rfw_flows_read(FILE *f, const struct rfw_topo *topo, struct rfw_flow_spec **out, uint32_t *n,
                   char *err, size_t errlen)
{
	struct tok t = {.f = f, .line = 1, .err = err, .errlen = errlen};
	struct rfw_flow_spec *fl;
	uint32_t cnt;
	int rc;

	*out = NULL;
	*n = 0;
	if (errlen)
		err[0] = 0;
	rc = tok_u32(&t, "flow count", 0, RFW_HPCC_MAX_FLOWS, &cnt);
	if (rc)
		return rc;
	fl = calloc(cnt ? cnt : 1, sizeof(*fl));
	if (fl == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < cnt && !rc; i++)
		rc = flow_one(&t, topo, &fl[i]);
	if (!rc)
		rc = tok_end(&t);
	if (rc) {
		free(fl);
		return rc;
	}
	*out = fl;
	*n = cnt;
	return 0;
}

int rfw_fct_line(char *buf, size_t len, uint32_t sip, uint32_t dip, uint32_t sport, uint32_t dport,
                 uint64_t size, uint64_t start_ns, uint64_t fct_ns, uint64_t standalone_ns)
{
	return snprintf(buf, len,
	                "%08x %08x %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", sip,
	                dip, sport, dport, size, start_ns, fct_ns, standalone_ns);
}
