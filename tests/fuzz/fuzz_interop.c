/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the two record parsers of the interop harness (interop/case.c, the
 * "rocefw-oob/2 case" record; ctrl/perftest_oob.c, perftest's keys record). The first byte
 * picks the parser (even: case record, odd: perftest keys), the rest is the record. Oracles: a
 * refusal always names its cause; a record that decodes encodes to bytes that decode again and
 * encode to the same bytes (the encoder's output is canonical).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interop/case.h"
#include "ctrl/perftest_oob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_case(const char *in, size_t len)
{
	static char b1[4096], b2[4096];
	struct ic_case c, c2;
	char err[256] = "";
	int n1, n2;

	if (ic_case_decode(in, len, &c, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();
		return;
	}
	n1 = ic_case_encode(&c, b1, sizeof(b1));
	if (n1 <= 0)
		abort(); /* what decodes must encode */
	err[0] = '\0';
	if (ic_case_decode(b1, (size_t)n1, &c2, err, sizeof(err)) != 0)
		abort();
	n2 = ic_case_encode(&c2, b2, sizeof(b2));
	if (n2 != n1 || memcmp(b1, b2, (size_t)n1) != 0)
		abort();
}

static void fuzz_keys(const uint8_t *in, size_t len)
{
	uint8_t b1[RFW_PT_KEYS_GID_LEN], b2[RFW_PT_KEYS_GID_LEN];
	struct rfw_pt_dest d, d2;
	char err[256] = "";
	int n1, n2;

	if (rfw_pt_keys_decode(in, len, &d, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();
		return;
	}
	n1 = rfw_pt_keys_encode(&d, b1, sizeof(b1));
	if (n1 <= 0 || (size_t)n1 != len)
		abort(); /* fixed-width: the same length as what was decoded */
	if (rfw_pt_keys_decode(b1, (size_t)n1, &d2, err, sizeof(err)) != 0)
		abort();
	n2 = rfw_pt_keys_encode(&d2, b2, sizeof(b2));
	if (n2 != n1 || memcmp(b1, b2, (size_t)n1) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_keys(data + 1, size - 1);
	else
		fuzz_case((const char *)data + 1, size - 1);
	return 0;
}
