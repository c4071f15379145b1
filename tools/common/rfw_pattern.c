/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/common/rfw_pattern.h"

void rfw_pattern_fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}
