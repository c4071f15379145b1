/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test data for the tools that move and verify bytes (rocefw-perf, rocefw-demo): a
 * pseudo-random fill from a seed (the same seed, the same bytes: a checker regenerates what it
 * expects instead of keeping a copy). DPDK-free.
 */
#ifndef RFW_TOOLS_COMMON_RFW_PATTERN_H
#define RFW_TOOLS_COMMON_RFW_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* @n bytes at @p from @seed: xorshift64 (13, 7, 17) from seed x the 64-bit golden ratio + 1,
 * one byte (the low eight bits) per step. */
void rfw_pattern_fill(uint8_t *p, size_t n, uint64_t seed);

/* Stamps every this many bytes: the smallest path MTU, so every packet of a message carries one. */
#define RFW_PATTERN_STAMP_GAP 256u

/*
 * @v (its first min(8, bytes left) bytes, host order) at every RFW_PATTERN_STAMP_GAP bytes of
 * the @size bytes at @p: a message number stamped on a reused slot, so that every packet of the
 * message carries bytes no earlier message left there.
 */
static inline void rfw_pattern_stamp(uint8_t *p, uint32_t size, uint64_t v)
{
	for (uint32_t off = 0; off < size; off += RFW_PATTERN_STAMP_GAP)
		memcpy(p + off, &v, size - off < 8 ? size - off : 8);
}

#endif
