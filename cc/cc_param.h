/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Shared helper for the parameter tables of cc/ (DCQCN and TIMELY): parse one value.
 */
#ifndef RFW_CC_PARAM_H
#define RFW_CC_PARAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parse @p value for parameter @p name of unit @p unit and range @p lo..@p hi into @p out.
 * Accepts decimal, 0x hex, and for units written "a|b|c" the k-th name for value k.
 *
 * @return 0; -EINVAL not a number; -ERANGE out of range. A message naming the parameter is
 *         written to @p msg when it is not NULL ("rp_gd: 40 out of range 0..31").
 */
int cc_param_parse(const char *name, const char *unit, uint32_t lo, uint32_t hi, const char *value,
                   uint32_t *out, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* RFW_CC_PARAM_H */
