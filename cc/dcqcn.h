/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * DCQCN reaction point (RP, the sender's rate machine) and notification point (NP, the
 * receiver's CNP generator). One machine; every published variant is a parameter set
 * (cc/dcqcn_params.h).
 *
 * Model: DPDK rte_meter.h. The caller allocates every object, the configuration is validated
 * once (dcqcn_prof_config), time is an argument (uint64_t now_ns, any monotonic origin), the
 * per-packet calls are inline, nothing allocates and nothing reads a clock.
 *
 * Fixed point: rates in b/s (uint64_t), alpha with rp_alpha_bits fraction bits (1 << bits ==
 * 1.0), times in ns. No floating point, so two RPs with the same profile fed the same events are
 * bit-for-bit identical.
 *
 * Host contract for timers: dcqcn_rp_next_deadline() is the earliest time at which the RP has
 * work (alpha update, end of a rate-reduce monitor period, rate-increase timer); UINT64_MAX when
 * none. Call dcqcn_rp_on_timer() at or after it. Every entry point first runs the work that was
 * due before its now_ns, at the time it was due, so the trajectory does not depend on how late
 * the host's timer wheel fires, only on the order of CNP / tx events. Times stay below 2^62 ns
 * (deadlines are a time plus a period and must not wrap; rocefw-cc refuses later script times).
 */
#ifndef RFW_CC_DCQCN_H
#define RFW_CC_DCQCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc/dcqcn_params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DCQCN_NEVER UINT64_MAX /**< "no deadline" */

/** Validated, fixed-point form of a parameter set plus the port's line rate. Read-only. */
struct dcqcn_prof {
	uint64_t line_kbps;     /**< port line rate */
	uint64_t max_kbps;      /**< rp_max_rate, or the line rate when 0; start rate */
	uint64_t min_kbps;      /**< rp_min_rate */
	uint64_t max_bps;       /**< max_kbps in b/s: the machine's own unit */
	uint64_t min_bps;       /**< rp_min_rate */
	uint64_t first_cnp_bps; /**< rp_rate_to_set_on_first_cnp (0 = keep) */
	uint64_t ai_bps;        /**< rp_ai_rate */
	uint64_t hai_bps;       /**< rp_hai_rate */
	uint64_t alpha_one;     /**< 1.0 in alpha units: 1 << rp_alpha_bits */
	uint64_t dec_offset_ns; /**< rp_rate_reduce_offset */
	uint64_t time_reset_ns; /**< rp_time_reset, 0 = timer off */
	uint64_t byte_reset;    /**< rp_byte_reset, 0 = byte counter off */
	uint64_t alpha_ns;      /**< rp_dce_tcp_rtt */
	uint64_t monitor_ns;    /**< rp_rate_reduce_monitor_period, 0 = every CNP cuts */
	uint64_t np_gap_ns;     /**< np_min_time_between_cnps */
	uint32_t g;             /**< rp_dce_tcp_g */
	uint32_t threshold;     /**< rp_threshold (F) */
	uint32_t gd;            /**< rp_gd */
	uint32_t min_dec_fac;   /**< rp_min_dec_fac */
	uint32_t initial_alpha; /**< rp_initial_alpha_value */
	uint32_t alpha_bits;    /**< rp_alpha_bits */
	uint32_t cut_shift;     /**< cut = RC * alpha >> this: rp_gd + rp_alpha_bits - 10 */
	uint8_t scope;          /**< enum dcqcn_scope */
	uint8_t alpha_on_cnp;
	uint8_t reduce_immediate;
	uint8_t clamp_tgt;
	uint8_t clamp_ati;
	uint8_t hai_scale;
	uint8_t alpha_round;
	uint8_t alpha_grid;
	uint8_t dec_grid;
	uint8_t cnp_dscp;
	uint8_t cnp_prio;
	struct dcqcn_params params; /**< the values it was built from */
};

/**
 * Validate @p p and build the fixed-point profile for a port of @p line_rate_mbps.
 *
 * @return 0, or -ERANGE / -EINVAL with a message naming the parameter in @p msg (may be NULL).
 */
int dcqcn_prof_config(struct dcqcn_prof *prof, const struct dcqcn_params *p,
                      uint32_t line_rate_mbps, char *msg, size_t msglen);

/*
 * Reaction point counters, mlx5 names where mlx5 has one. X(name, meaning)
 */
#define DCQCN_RP_COUNTERS(X)                                                                       \
	X(rp_cnp_handled, "CNPs received by this reaction point")                                  \
	X(rp_cnp_ignored, "CNPs folded into a cut already pending in the current monitor period")  \
	X(rp_first_cnp, "first CNPs: rate limiting started (rate_to_set_on_first_cnp, alpha)")     \
	X(rp_rate_cuts, "rate decreases applied")                                                  \
	X(rp_min_rate_hits, "rate decreases that stopped at rp_min_rate")                          \
	X(rp_timer_events, "rate-increase events from the timer (rp_time_reset)")                  \
	X(rp_byte_events, "rate-increase events from the byte counter (rp_byte_reset)")            \
	X(rp_fast_recovery, "increase events handled in fast recovery")                            \
	X(rp_additive_increase, "increase events handled in additive increase")                    \
	X(rp_hyper_increase, "increase events handled in hyper increase")                          \
	X(rp_alpha_increases, "alpha updates with congestion (alpha rises)")                       \
	X(rp_alpha_decays, "alpha updates without congestion (alpha decays)")

enum dcqcn_rp_counter {
#define X(n, m) DCQCN_RP_CNT_##n,
	DCQCN_RP_COUNTERS(X)
#undef X
	    DCQCN_RP_CNT__COUNT
};

/** Name of RP counter @p c ("rp_cnp_handled", ...), or NULL. */
const char *dcqcn_rp_counter_name(unsigned int c);
/** Meaning of RP counter @p c, or NULL. */
const char *dcqcn_rp_counter_desc(unsigned int c);

/*
 * RP states (DCQCN SIGCOMM'15 §3.1 Fig. 5 stages, plus the two ends).
 */
#define DCQCN_RP_STATES(X)                                                                         \
	X(IDLE, "idle")        /* no CNP yet: line rate, no timers */                              \
	X(FAST_RECOVERY, "fr") /* after a cut, RC moves half way to RT per event */                \
	X(ADDITIVE, "ai")      /* RT grows by rp_ai_rate per event */                              \
	X(HYPER, "hai")        /* RT grows by rp_hai_rate (times i) per event */                   \
	X(AT_MAX, "max")       /* RC == RT == max rate: increase events stopped */

enum dcqcn_rp_state {
#define X(e, n) DCQCN_RP_##e,
	DCQCN_RP_STATES(X)
#undef X
	    DCQCN_RP__STATE_COUNT
};

/** Name of @p s ("idle", "fr", "ai", "hai", "max"), or NULL. */
const char *dcqcn_rp_state_name(enum dcqcn_rp_state s);

/*
 * What the last calls did, as bits; for tracing (rocefw-cc's action column). X(bit, name)
 */
#define DCQCN_ACTIONS(X)                                                                           \
	X(FIRST, "first")       /* first CNP: rate limiting starts */                              \
	X(CUT, "cut")           /* rate decrease */                                                \
	X(PEND, "pend")         /* cut deferred to the end of the monitor period */                \
	X(IGNORE, "ignore")     /* CNP folded into a pending cut (rp_cnp_ignored) */               \
	X(ALPHA_UP, "alpha_up") /* alpha update with congestion */                                 \
	X(ALPHA_DN, "alpha_dn") /* alpha update without congestion */                              \
	X(FR, "fr")             /* fast recovery increase */                                       \
	X(AI, "ai")             /* additive increase */                                            \
	X(HAI, "hai")           /* hyper increase */                                               \
	X(MAX, "max")           /* reached the max rate; increase events stop */

enum dcqcn_action_bit {
#define X(e, n) DCQCN_ACT_BIT_##e,
	DCQCN_ACTIONS(X)
#undef X
	    DCQCN_ACT__COUNT
};

/** Name of action bit @p b, or NULL. */
const char *dcqcn_action_name(unsigned int b);

/** Reaction point state of one flow (or destination, or port: see rp_scope). ~200 bytes. */
struct dcqcn_rp {
	uint64_t next_deadline; /**< min of the three below */
	uint64_t byte_left;     /**< bytes until the next byte-counter event; UINT64_MAX = off */
	const struct dcqcn_prof *prof;
	uint64_t rc_bps;   /**< current rate RC, b/s */
	uint64_t rt_bps;   /**< target rate RT, b/s */
	uint64_t alpha;    /**< alpha, prof->alpha_one == 1.0 */
	uint64_t first_at; /**< time of the first CNP: anchor of the grids */
	uint64_t alpha_at; /**< next alpha update */
	uint64_t win_end;  /**< end of the open rate-reduce monitor period */
	uint64_t inc_at;   /**< next timer increase event */
	uint32_t t_stage;  /**< timer increase events since the last cut */
	uint32_t bc_stage; /**< byte-counter increase events since the last cut */
	uint32_t actions;  /**< DCQCN_ACT_BIT_* bits since the last dcqcn_rp_take_actions() */
	uint8_t state;     /**< enum dcqcn_rp_state */
	uint8_t alpha_cnp; /**< a CNP arrived in this alpha period (sampled mode) */
	uint8_t cut_pending;
	uint8_t inc_timer_since_cut; /**< for rp_clamp_tgt_rate_ati */
	uint8_t inc_byte_since_cut;
	uint64_t cnt[DCQCN_RP_CNT__COUNT];
};

/** Initialise @p rp at the profile's max rate, state idle. @p prof must outlive @p rp. */
void dcqcn_rp_init(struct dcqcn_rp *rp, const struct dcqcn_prof *prof);

/** A CNP arrived for this RP at @p now_ns. */
void dcqcn_rp_on_cnp(struct dcqcn_rp *rp, uint64_t now_ns);

/** Run every piece of work due at or before @p now_ns. */
void dcqcn_rp_on_timer(struct dcqcn_rp *rp, uint64_t now_ns);

/** Slow path of dcqcn_rp_on_tx(): not for direct use. */
void dcqcn_rp__tx_slow(struct dcqcn_rp *rp, uint64_t bytes, uint64_t now_ns);

/**
 * Account @p bytes sent at @p now_ns (byte counter, DCQCN SIGCOMM'15 §3.1 "BC"). Inline fast
 * path: one subtraction unless a byte-counter event or a deadline is due.
 */
static inline void dcqcn_rp_on_tx(struct dcqcn_rp *rp, uint32_t bytes, uint64_t now_ns)
{
	if (__builtin_expect(now_ns < rp->next_deadline && bytes < rp->byte_left, 1)) {
		rp->byte_left -= bytes;
		return;
	}
	dcqcn_rp__tx_slow(rp, bytes, now_ns);
}

/** Earliest time the RP needs dcqcn_rp_on_timer(); DCQCN_NEVER when none. */
static inline uint64_t dcqcn_rp_next_deadline(const struct dcqcn_rp *rp)
{
	return rp->next_deadline;
}

/** Current rate RC in b/s (exact). */
static inline uint64_t dcqcn_rp_rate_bps(const struct dcqcn_rp *rp)
{
	return rp->rc_bps;
}

/** Current rate RC in kb/s (rounded down). */
static inline uint64_t dcqcn_rp_rate_kbps(const struct dcqcn_rp *rp)
{
	return rp->rc_bps / 1000;
}

/** Current rate RC in Mb/s (rounded down). */
static inline uint64_t dcqcn_rp_rate_mbps(const struct dcqcn_rp *rp)
{
	return rp->rc_bps / 1000000;
}

/** Target rate RT in b/s (exact). */
static inline uint64_t dcqcn_rp_target_bps(const struct dcqcn_rp *rp)
{
	return rp->rt_bps;
}

/** Target rate RT in kb/s (rounded down). */
static inline uint64_t dcqcn_rp_target_kbps(const struct dcqcn_rp *rp)
{
	return rp->rt_bps / 1000;
}

/** alpha in 1/1024 (rounded down from rp_alpha_bits fraction bits). */
static inline uint32_t dcqcn_rp_alpha(const struct dcqcn_rp *rp)
{
	return (uint32_t)(rp->alpha >> (rp->prof->alpha_bits - 10));
}

/** alpha exactly: the value with dcqcn_rp_alpha_bits() fraction bits. */
static inline uint64_t dcqcn_rp_alpha_raw(const struct dcqcn_rp *rp)
{
	return rp->alpha;
}

/** Fraction bits of dcqcn_rp_alpha_raw() (rp_alpha_bits). */
static inline uint32_t dcqcn_rp_alpha_bits(const struct dcqcn_rp *rp)
{
	return rp->prof->alpha_bits;
}

/** Action bits gathered since the previous call, then clears them (tracing). */
static inline uint32_t dcqcn_rp_take_actions(struct dcqcn_rp *rp)
{
	uint32_t a = rp->actions;

	rp->actions = 0;
	return a;
}

/*
 * Notification point counters. X(name, meaning)
 */
#define DCQCN_NP_COUNTERS(X)                                                                       \
	X(np_ecn_marked_roce_packets, "CE-marked RoCE packets received (dcqcn_np_on_ce calls)")    \
	X(np_cnp_sent, "CNPs the NP asked its host to send")                                       \
	X(np_cnp_suppressed, "CE packets that produced no CNP (np_min_time_between_cnps)")

enum dcqcn_np_counter {
#define X(n, m) DCQCN_NP_CNT_##n,
	DCQCN_NP_COUNTERS(X)
#undef X
	    DCQCN_NP_CNT__COUNT
};

/** Name of NP counter @p c, or NULL. */
const char *dcqcn_np_counter_name(unsigned int c);
/** Meaning of NP counter @p c, or NULL. */
const char *dcqcn_np_counter_desc(unsigned int c);

/** Notification point state of one QP (receiver side). */
struct dcqcn_np {
	const struct dcqcn_prof *prof;
	uint64_t next_cnp_ns; /**< earliest time of the next CNP */
	uint64_t cnt[DCQCN_NP_CNT__COUNT];
};

/** Initialise @p np: the first CE packet will produce a CNP. */
void dcqcn_np_init(struct dcqcn_np *np, const struct dcqcn_prof *prof);

/**
 * A CE-marked RoCE data packet of this QP arrived at @p now_ns.
 *
 * @return true if the host should send a CNP now (at most one per np_min_time_between_cnps;
 *         the first mark is answered at once and later ones inside the gap are folded into it,
 *         DCQCN SIGCOMM'15 §3.1 NP, mlx5 min_time_between_cnps).
 */
static inline bool dcqcn_np_on_ce(struct dcqcn_np *np, uint64_t now_ns)
{
	np->cnt[DCQCN_NP_CNT_np_ecn_marked_roce_packets]++;
	if (now_ns >= np->next_cnp_ns) {
		np->next_cnp_ns = now_ns + np->prof->np_gap_ns;
		np->cnt[DCQCN_NP_CNT_np_cnp_sent]++;
		return true;
	}
	np->cnt[DCQCN_NP_CNT_np_cnp_suppressed]++;
	return false;
}

/** DSCP to put on this NP's CNPs (np_cnp_dscp). */
static inline uint8_t dcqcn_np_cnp_dscp(const struct dcqcn_np *np)
{
	return np->prof->cnp_dscp;
}

/** 802.1p priority to put on this NP's CNPs (np_cnp_prio). */
static inline uint8_t dcqcn_np_cnp_prio(const struct dcqcn_np *np)
{
	return np->prof->cnp_prio;
}

#ifdef __cplusplus
}
#endif

#endif /* RFW_CC_DCQCN_H */
