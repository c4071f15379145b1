/* SPDX-License-Identifier: BSD-3-Clause */
/* The DPDK test programs' soft assertion: report and count a failure, keep going. Each
 * program ends with `return failures ? 1 : 0`. */
#ifndef RFW_TESTS_DPDK_CHECK_H
#define RFW_TESTS_DPDK_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#endif
