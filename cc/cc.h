/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The small rate-machine interface a host (transport/, the dataplane scheduler, the simulator,
 * rocefw-cc) drives, whatever the algorithm: a tagged union with one switch per call, so the
 * DCQCN fast path stays inline and no function pointer is chased per packet.
 *
 *   cc_on_cnp    a CNP arrived                  (DCQCN reacts; TIMELY counts and ignores it)
 *   cc_on_rtt    an RTT sample, ns              (TIMELY reacts; DCQCN ignores it)
 *   cc_on_tx     bytes sent                     (DCQCN byte counter; TIMELY nothing)
 *   cc_on_timer  the deadline passed            (DCQCN timers; TIMELY has none)
 *   cc_rate_kbps the rate to pace at
 *   cc_next_deadline when to call cc_on_timer   (UINT64_MAX: never)
 */
#ifndef RFW_CC_CC_H
#define RFW_CC_CC_H

#include <stdint.h>

#include "cc/dcqcn.h"
#include "cc/timely.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CC_ALGOS(X)                                                                                \
	X(DCQCN, "dcqcn")                                                                          \
	X(TIMELY, "timely")

enum cc_algo {
#define X(e, n) CC_ALGO_##e,
	CC_ALGOS(X)
#undef X
	    CC_ALGO__COUNT
};

/** Name of @p a ("dcqcn", "timely"), or NULL. */
const char *cc_algo_name(enum cc_algo a);
/** Algorithm called @p name, or -ENOENT. */
int cc_algo_lookup(const char *name);

struct cc_flow {
	enum cc_algo algo;
	union {
		struct dcqcn_rp dcqcn;
		struct timely timely;
	} u;
};

void cc_flow_init_dcqcn(struct cc_flow *f, const struct dcqcn_prof *prof);
void cc_flow_init_timely(struct cc_flow *f, const struct timely_prof *prof);

void cc_on_cnp(struct cc_flow *f, uint64_t now_ns);
void cc_on_rtt(struct cc_flow *f, uint64_t rtt_ns, uint64_t now_ns);
void cc_on_timer(struct cc_flow *f, uint64_t now_ns);

static inline void cc_on_tx(struct cc_flow *f, uint32_t bytes, uint64_t now_ns)
{
	if (f->algo == CC_ALGO_DCQCN)
		dcqcn_rp_on_tx(&f->u.dcqcn, bytes, now_ns);
}

static inline uint64_t cc_rate_kbps(const struct cc_flow *f)
{
	return f->algo == CC_ALGO_DCQCN ? dcqcn_rp_rate_kbps(&f->u.dcqcn)
	                                : timely_rate_kbps(&f->u.timely);
}

static inline uint64_t cc_next_deadline(const struct cc_flow *f)
{
	return f->algo == CC_ALGO_DCQCN ? dcqcn_rp_next_deadline(&f->u.dcqcn) : DCQCN_NEVER;
}

#ifdef __cplusplus
}
#endif

#endif /* RFW_CC_CC_H */
