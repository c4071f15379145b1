/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The programs' --cc-set "name=value,name=value": parameters of the one DCQCN machine
 * (cc/dcqcn_params.h) and, where a program runs TIMELY, of TIMELY (cc/timely.h, names
 * timely_*), set over a built-in profile by cc/'s set-by-name, so names, units, ranges and
 * messages are cc/'s.
 */
#ifndef RFW_TOOLS_CCSET_H
#define RFW_TOOLS_CCSET_H

#include <stddef.h>

#include "cc/dcqcn_params.h"
#include "cc/timely.h"

/*
 * Apply @list (NULL: nothing) to @d, and its timely_* names to @t (NULL: those names are
 * refused as DCQCN's unknown names are). 0, or -EINVAL with @msg naming the entry and why.
 */
int rfw_cc_set_apply(struct dcqcn_params *d, struct timely_params *t, const char *list, char *msg,
                     size_t len);

#endif
