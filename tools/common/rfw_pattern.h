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

/* @n bytes at @p from @seed: xorshift64 (13, 7, 17) from seed x the 64-bit golden ratio + 1,
 * one byte (the low eight bits) per step. */
void rfw_pattern_fill(uint8_t *p, size_t n, uint64_t seed);

#endif
