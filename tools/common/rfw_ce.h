/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tools' simplest congestion point: CE on every Nth ECN-capable RoCEv2 frame (rocefw-perf
 * --ce-mark-every, the NIC test's wire). The marking itself is wire/'s rfw_ecn_mark_ce(), the
 * one CE marker (rocefw-cp's RED marks through it too); this only decides which frame.
 * Caller-owned state, DPDK-free.
 */
#ifndef RFW_TOOLS_COMMON_RFW_CE_H
#define RFW_TOOLS_COMMON_RFW_CE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rfw_ce_every {
	uint32_t every;  /* mark the every-th ECN-capable frame; 0: never */
	uint32_t seen;   /* ECN-capable frames since the last mark */
	uint64_t marked; /* frames marked CE */
};

/* Count @frame if it is an ECT(0)/ECT(1) RoCEv2 frame and mark it CE when it is the every-th.
 * True when it was marked. Reads and writes only [frame, frame + len). */
bool rfw_ce_every_frame(struct rfw_ce_every *ce, uint8_t *frame, size_t len);

#endif
