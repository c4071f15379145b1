/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tools' clocks, off the packet path (the NIC has its own, rfw_nic_clock_ns): CLOCK_MONOTONIC
 * for intervals and timeouts, CLOCK_REALTIME for timestamps in reports. DPDK-free.
 */
#ifndef RFW_TOOLS_COMMON_RFW_CLOCK_H
#define RFW_TOOLS_COMMON_RFW_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic time, ns. */
static inline uint64_t rfw_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Monotonic time, s. */
static inline double rfw_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock time, ns since the epoch. */
static inline int64_t rfw_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
