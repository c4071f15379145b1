/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Numbers in text, strictly: the one parser behind command-line options (tools/common/rfw_opt.h
 * names the option in its message), rocefw-oob records, interop case keys and INI files.
 *
 * Integers are unsigned, decimal or hexadecimal with "0x" (never octal: "010" is ten); no
 * sign, no spaces, nothing after the digits. Reals are what strtod reads, finite, nothing after.
 * Both check a closed range [lo, hi]. libc only, no allocation, no output: the caller words
 * the error (rfw_num_err() gives the reason).
 */
#ifndef RFW_CTRL_RFW_NUM_H
#define RFW_CTRL_RFW_NUM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 and *@out set; -EINVAL when @s is not an unsigned integer; -ERANGE when it is one outside
 * [@lo, @hi] (or above 2^64 - 1). *@out is left alone on error. */
int rfw_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* As rfw_num_u64 for a uint32_t. */
int rfw_num_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
/* 0 and *@out set; -EINVAL when @s is not a finite real number; -ERANGE outside [@lo, @hi]. */
int rfw_num_double(const char *s, double lo, double hi, double *out);

#ifdef __cplusplus
}
#endif
#endif
