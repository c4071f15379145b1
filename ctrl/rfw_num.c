/* SPDX-License-Identifier: BSD-3-Clause */
#include "ctrl/rfw_num.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static bool is_hex_prefix(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

int rfw_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* strtoull would accept leading spaces and a sign (and negate "-1" into 2^64 - 1). */
	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, is_hex_prefix(s) ? 16 : 10);
	if (end == s || *end != '\0' || (is_hex_prefix(s) && s[2] == '\0'))
		return -EINVAL;
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int rfw_num_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;
	int rc = rfw_num_u64(s, lo, hi, &v);

	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

int rfw_num_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || isnan(v))
		return -EINVAL;
	/* ERANGE on underflow is a tiny finite value, not an error; overflow is infinite. */
	if (!isfinite(v) || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}
