/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * TIMELY (Mittal et al., SIGCOMM'15): RTT-gradient rate control, the second algorithm behind the
 * rate-machine interface of cc/cc.h. Same rules as DCQCN: caller-allocated state, time as an
 * argument, integer maths only (rates in kb/s, RTT in ns, weights in 1/1024).
 *
 * Defaults are eRPC's constants (src/cc/timely.h): EWMA 0.02, T_low 50 us, T_high 1000 us,
 * beta 0.8, hyper increase after 5 negative gradients, step 5 MB/s, rate 5 MB/s .. 5 GB/s,
 * minimum RTT for normalisation 2 us.
 */
#ifndef RFW_CC_TIMELY_H
#define RFW_CC_TIMELY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, unit, min, max, default, meaning) */
#define TIMELY_PARAM_TABLE(X)                                                                      \
	X(timely_t_low, "us", 0, 10000000, 50, "RTT below this: additive increase (T_low)")        \
	X(timely_t_high, "us", 1, 10000000, 1000,                                                  \
	  "RTT above this: rate *= 1 - beta * (1 - T_high / rtt) (T_high)")                        \
	X(timely_min_rtt, "us", 1, 10000000, 2, "gradient normalisation: gradient = diff / this")  \
	X(timely_ewma, "1/1024", 1, 1024, 20, "EWMA weight of a new RTT difference (0.02)")        \
	X(timely_beta, "1/1024", 0, 1024, 819, "multiplicative decrease factor beta (0.8)")        \
	X(timely_hai_thresh, "n", 1, 255, 5, "negative gradients in a row before 5x increase")     \
	X(timely_add_rate, "Mb/s", 0, 1000000, 40, "additive step delta (5 MB/s = 40 Mb/s)")       \
	X(timely_min_rate, "Mb/s", 1, 4000000, 40, "rate floor (5 MB/s)")                          \
	X(timely_max_rate, "Mb/s", 0, 4000000, 40000, "rate ceiling (5 GB/s; 0 = line rate)")

enum timely_param_id {
#define X(n, u, lo, hi, d, m) TIMELY_PARAM_##n,
	TIMELY_PARAM_TABLE(X)
#undef X
	    TIMELY_PARAM__COUNT
};

struct timely_params {
#define X(n, u, lo, hi, d, m) uint32_t n;
	TIMELY_PARAM_TABLE(X)
#undef X
};

struct timely_param_info {
	const char *name;
	const char *unit;
	const char *meaning;
	uint32_t min;
	uint32_t max;
	uint32_t def;
	size_t offset;
};

/** Row @p id of the TIMELY table, or NULL. */
const struct timely_param_info *timely_param_info(unsigned int id);
/** Fill @p p with the defaults. */
void timely_params_init(struct timely_params *p);
/** Set one parameter by name; as dcqcn_param_set_msg(). */
int timely_param_set_msg(struct timely_params *p, const char *name, const char *value, char *msg,
                         size_t msglen);
/** Value of parameter @p id. */
uint32_t timely_param_get(const struct timely_params *p, unsigned int id);

/** Fixed-point form, built once. */
struct timely_prof {
	uint64_t t_low_ns;
	uint64_t t_high_ns;
	uint64_t min_rtt_ns;
	uint64_t add_kbps;
	uint64_t min_kbps;
	uint64_t max_kbps;
	uint32_t ewma;
	uint32_t beta;
	uint32_t hai_thresh;
};

/** Validate @p p and build the profile for a port of @p line_rate_mbps. 0 or -ERANGE/-EINVAL. */
int timely_prof_config(struct timely_prof *prof, const struct timely_params *p,
                       uint32_t line_rate_mbps, char *msg, size_t msglen);

/* X(name, meaning) */
/*
 * RTT samples are clamped to this (10 s): no datacenter path has such an RTT, and bounding the
 * input keeps the fixed-point gradient maths far from 64-bit overflow whatever a host feeds in.
 */
#define TIMELY_MAX_RTT_NS 10000000000ull

#define TIMELY_COUNTERS(X)                                                                         \
	X(timely_rtt_samples, "RTT samples processed")                                             \
	X(timely_rtt_clamped, "RTT samples above TIMELY_MAX_RTT_NS, clamped to it")                \
	X(timely_low_rtt_inc, "additive increases because RTT < T_low")                            \
	X(timely_high_rtt_dec, "decreases because RTT > T_high")                                   \
	X(timely_gradient_inc, "increases on a negative or zero gradient")                         \
	X(timely_hai_inc, "of those, hyper (5x) increases")                                        \
	X(timely_gradient_dec, "decreases on a positive gradient")                                 \
	X(timely_cnp_ignored, "CNPs received (TIMELY does not use them)")

enum timely_counter {
#define X(n, m) TIMELY_CNT_##n,
	TIMELY_COUNTERS(X)
#undef X
	    TIMELY_CNT__COUNT
};

const char *timely_counter_name(unsigned int c);

struct timely {
	const struct timely_prof *prof;
	uint64_t rate_kbps;
	uint64_t prev_rtt_ns;
	int64_t rtt_diff_ns; /**< EWMA of RTT differences, ns */
	uint32_t neg_count;  /**< negative gradients in a row */
	uint8_t have_prev;
	uint64_t cnt[TIMELY_CNT__COUNT];
};

/** Start at the max rate. */
void timely_init(struct timely *t, const struct timely_prof *prof);
/** One RTT sample @p rtt_ns (completion time minus send time, as TIMELY Fig. 3). */
void timely_on_rtt(struct timely *t, uint64_t rtt_ns, uint64_t now_ns);

static inline uint64_t timely_rate_kbps(const struct timely *t)
{
	return t->rate_kbps;
}

#ifdef __cplusplus
}
#endif

#endif /* RFW_CC_TIMELY_H */
