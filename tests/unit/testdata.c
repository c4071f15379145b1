/* SPDX-License-Identifier: BSD-3-Clause */
#include "testdata.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

const char *td_path(const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", RFW_TESTDATA, rel);
	return buf;
}

static size_t hex_decode(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex);

	assert_int_equal(n % 2, 0);
	assert_true(n / 2 <= cap);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n / 2;
}

int td_load_vectors(struct td_frame *out, int max)
{
	char path[512], line[8192], hex[8192];
	FILE *f = fopen(td_path("icrc/vectors.txt", path, sizeof(path)), "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned len, icrc;

		if (line[0] == '\n' || line[0] == '#')
			continue;
		assert_true(n < max);
		assert_int_equal(sscanf(line, "%63s len=%u icrc_wire=%x", out[n].name, &len, &icrc),
		                 3);
		assert_non_null(fgets(line, sizeof(line), f));
		assert_int_equal(sscanf(line, "%8191s", hex), 1);
		out[n].len = hex_decode(hex, out[n].data, sizeof(out[n].data));
		assert_int_equal(out[n].len, len);
		out[n].icrc_wire = icrc;
		n++;
	}
	fclose(f);
	return n;
}

int td_load_malformed(struct td_frame *out, int max)
{
	char path[512], line[8192], hex[8192];
	FILE *f = fopen(td_path("icrc/malformed.txt", path, sizeof(path)), "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int idx;

		if (line[0] == '\n' || line[0] == '#')
			continue;
		assert_true(n < max);
		assert_int_equal(sscanf(line, "%d %63s %8191s", &idx, out[n].name, hex), 3);
		out[n].len = hex_decode(hex, out[n].data, sizeof(out[n].data));
		n++;
	}
	fclose(f);
	return n;
}
