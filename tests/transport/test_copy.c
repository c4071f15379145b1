/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfw_copy (transport/rfw_int.h), the inline copy of a small payload, against libc's memcpy:
 * every length from 0 to 96 bytes (its inline range, 16 to 64, and both sides of it) at every
 * alignment of source and destination within 16 bytes. The bytes copied must be the source's
 * and the bytes around the destination untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "transport/rfw_int.h" /* white box: rfw_copy */

#define GUARD 32
#define MAXN  96

static void test_copy_matches_memcpy(void **state)
{
	uint8_t src[16 + MAXN], got[GUARD + 16 + MAXN + GUARD], want[sizeof(got)];
	uint32_t x = 0x9e3779b9u;

	(void)state;
	for (size_t i = 0; i < sizeof(src); i++) {
		x = x * 1664525u + 1013904223u; /* distinct bytes: a misplaced one shows */
		src[i] = (uint8_t)(x >> 24);
	}
	for (size_t n = 0; n <= MAXN; n++) {
		for (size_t so = 0; so < 16; so++) {
			for (size_t d = 0; d < 16; d++) {
				memset(got, 0xa5, sizeof(got));
				memset(want, 0xa5, sizeof(want));
				memcpy(want + GUARD + d, src + so, n);
				rfw_copy(got + GUARD + d, src + so, n);
				if (memcmp(got, want, sizeof(got)) != 0)
					fail_msg(
					    "rfw_copy of %zu bytes (source +%zu, destination +%zu) "
					    "differs from memcpy",
					    n, so, d);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copy_matches_memcpy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
