/* SPDX-License-Identifier: BSD-3-Clause */
/* One value parser for every cc/ parameter table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc_param.h"

/* Enum units are written "a|b|c": value k may be given as its k-th name. Returns k or -1. */
static long enum_index(const char *unit, const char *value)
{
	size_t vlen = strlen(value);
	long idx = 0;

	if (strchr(unit, '|') == NULL || vlen == 0)
		return -1;
	for (const char *s = unit;; idx++) {
		const char *bar = strchr(s, '|');
		size_t len = bar ? (size_t)(bar - s) : strlen(s);

		if (len == vlen && strncmp(s, value, len) == 0)
			return idx;
		if (bar == NULL)
			return -1;
		s = bar + 1;
	}
}

int cc_param_parse(const char *name, const char *unit, uint32_t lo, uint32_t hi, const char *value,
                   uint32_t *out, char *msg, size_t msglen)
{
	unsigned long long v;
	const char *s = value;
	char *end;
	long e = enum_index(unit, value);

	if (e >= 0 && (uint32_t)e >= lo && (uint32_t)e <= hi) {
		*out = (uint32_t)e;
		return 0;
	}
	while (isspace((unsigned char)*s))
		s++;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (end != s)
		while (isspace((unsigned char)*end))
			end++;
	if (end == s || *end != '\0') {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "%s: '%s' is not a number (range %u..%u)", name,
			         value, lo, hi);
		return -EINVAL;
	}
	/* strtoull accepts "-1" and wraps it: report it as what it is, out of range. */
	if (*s == '-' || errno == ERANGE || v < lo || v > hi) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "%s: %s out of range %u..%u", name, s, lo, hi);
		return -ERANGE;
	}
	*out = (uint32_t)v;
	return 0;
}
