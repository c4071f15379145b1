/* SPDX-License-Identifier: BSD-3-Clause */
/* perftest's Ethernet-mode keys record (ctrl/perftest_oob.h). */
#include "ctrl/perftest_oob.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rfw_pt_keys_encode(const struct rfw_pt_dest *d, uint8_t *buf, size_t cap)
{
	size_t need = rfw_pt_keys_len(d->has_gid);
	char tmp[RFW_PT_KEYS_GID_LEN + 8];
	int n, i;

	if (d->qpn > 0xffffff || d->psn > 0xffffff || cap < need)
		return -EINVAL;
	/* LID:OUT_READS:QPN:PSN:RKEY:VADDR: then the GID bytes, then SRQN */
	n = snprintf(tmp, sizeof(tmp), "%04x:%04x:%06x:%06x:%08x:%016llx", d->lid, d->out_reads,
	             d->qpn, d->psn, d->rkey, (unsigned long long)d->vaddr);
	if (d->has_gid) {
		for (i = 0; i < 16; i++)
			n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ":%02x", d->gid[i]);
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ":%08x:", d->srqn);
	} else {
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ":%08x", d->srqn);
	}
	if ((size_t)n + 1 != need)
		return -EINVAL;
	memcpy(buf, tmp, need); /* the NUL is part of the record */
	return (int)need;
}

static int bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

/* @w hex digits at @p, then @sep (0: none). */
static int hexfield(const uint8_t *p, unsigned w, char sep, uint64_t *v)
{
	unsigned i;
	uint64_t x = 0;

	for (i = 0; i < w; i++) {
		uint8_t c = p[i];

		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (uint64_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (uint64_t)(c - 'A' + 10);
		else
			return -1;
	}
	if (sep && p[w] != (uint8_t)sep)
		return -1;
	*v = x;
	return 0;
}

int rfw_pt_keys_decode(const uint8_t *buf, size_t len, struct rfw_pt_dest *d, char *err,
                       size_t errlen)
{
	static const struct {
		const char *name;
		unsigned w;
	} f[6] = {{"lid", 4}, {"out_reads", 4}, {"qpn", 6}, {"psn", 6}, {"rkey", 8}, {"vaddr", 16}};
	uint64_t v[6], x;
	size_t off = 0;
	unsigned i;

	memset(d, 0, sizeof(*d));
	if (len != RFW_PT_KEYS_LEN && len != RFW_PT_KEYS_GID_LEN)
		return bad(err, errlen, "keys record of %zu bytes (expected %d or %d)", len,
		           RFW_PT_KEYS_LEN, RFW_PT_KEYS_GID_LEN);
	d->has_gid = len == RFW_PT_KEYS_GID_LEN;
	if (buf[len - 1] != '\0')
		return bad(err, errlen, "keys record not NUL-terminated");
	for (i = 0; i < 6; i++) {
		if (hexfield(buf + off, f[i].w, ':', &v[i]) != 0)
			return bad(err, errlen, "field '%s' at byte %zu: not %u hex digits and ':'",
			           f[i].name, off, f[i].w);
		off += f[i].w + 1;
	}
	d->lid = (uint16_t)v[0];
	d->out_reads = (uint16_t)v[1];
	d->qpn = (uint32_t)v[2];
	d->psn = (uint32_t)v[3];
	d->rkey = (uint32_t)v[4];
	d->vaddr = v[5];
	if (d->has_gid) {
		for (i = 0; i < 16; i++) {
			if (hexfield(buf + off, 2, ':', &x) != 0)
				return bad(err, errlen,
				           "field 'gid' byte %u at byte %zu: not 2 hex digits "
				           "and ':'",
				           i, off);
			d->gid[i] = (uint8_t)x;
			off += 3;
		}
		if (hexfield(buf + off, 8, ':', &x) != 0)
			return bad(err, errlen,
			           "field 'srqn' at byte %zu: not 8 hex digits and ':'", off);
		off += 9;
	} else {
		if (hexfield(buf + off, 8, 0, &x) != 0)
			return bad(err, errlen, "field 'srqn' at byte %zu: not 8 hex digits", off);
		off += 8;
	}
	d->srqn = (uint32_t)x;
	if (off != len - 1)
		return bad(err, errlen, "%zu bytes after the last field", len - 1 - off);
	return 0;
}

bool rfw_pt_version_at_least(const char ver[RFW_PT_VERSION_LEN], unsigned major, unsigned minor)
{
	char tmp[RFW_PT_VERSION_LEN + 1], *end;
	unsigned long ma, mi = 0;

	memcpy(tmp, ver, RFW_PT_VERSION_LEN);
	tmp[RFW_PT_VERSION_LEN] = '\0';
	if (tmp[0] < '0' || tmp[0] > '9')
		return false;
	ma = strtoul(tmp, &end, 10);
	/* perftest compares with atof(): "5.4" is 5.40, above 5.32 */
	if (*end == '.') {
		unsigned digits = 0;
		const char *p = end + 1;

		while (*p >= '0' && *p <= '9' && digits < 2) {
			mi = mi * 10 + (unsigned long)(*p - '0');
			p++;
			digits++;
		}
		if (digits == 1)
			mi *= 10;
	}
	return ma > major || (ma == major && mi >= (minor < 10 ? minor * 10 : minor));
}

size_t rfw_pt_mtu_len(const char ver[RFW_PT_VERSION_LEN])
{
	return rfw_pt_version_at_least(ver, 5, 31) ? 2 : sizeof(int);
}
