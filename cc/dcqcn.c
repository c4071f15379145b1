/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point and notification point: the one rate machine. See cc/dcqcn.h and
 * docs/cc.md for the event semantics; the comments below say where each rule comes from.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cc/dcqcn.h"

/* ---- name tables ---------------------------------------------------------------------- */

static const char *const rp_counter_names[DCQCN_RP_CNT__COUNT] = {
#define X(n, m) [DCQCN_RP_CNT_##n] = #n,
    DCQCN_RP_COUNTERS(X)
#undef X
};

static const char *const rp_counter_descs[DCQCN_RP_CNT__COUNT] = {
#define X(n, m) [DCQCN_RP_CNT_##n] = m,
    DCQCN_RP_COUNTERS(X)
#undef X
};

static const char *const np_counter_names[DCQCN_NP_CNT__COUNT] = {
#define X(n, m) [DCQCN_NP_CNT_##n] = #n,
    DCQCN_NP_COUNTERS(X)
#undef X
};

static const char *const np_counter_descs[DCQCN_NP_CNT__COUNT] = {
#define X(n, m) [DCQCN_NP_CNT_##n] = m,
    DCQCN_NP_COUNTERS(X)
#undef X
};

static const char *const rp_state_names[DCQCN_RP__STATE_COUNT] = {
#define X(e, n) [DCQCN_RP_##e] = n,
    DCQCN_RP_STATES(X)
#undef X
};

static const char *const action_names[DCQCN_ACT__COUNT] = {
#define X(e, n) [DCQCN_ACT_BIT_##e] = n,
    DCQCN_ACTIONS(X)
#undef X
};

_Static_assert(DCQCN_ACT__COUNT <= 32, "actions must fit the 32-bit mask");

const char *dcqcn_rp_counter_name(unsigned int c)
{
	return c < DCQCN_RP_CNT__COUNT ? rp_counter_names[c] : NULL;
}

const char *dcqcn_rp_counter_desc(unsigned int c)
{
	return c < DCQCN_RP_CNT__COUNT ? rp_counter_descs[c] : NULL;
}

const char *dcqcn_np_counter_name(unsigned int c)
{
	return c < DCQCN_NP_CNT__COUNT ? np_counter_names[c] : NULL;
}

const char *dcqcn_np_counter_desc(unsigned int c)
{
	return c < DCQCN_NP_CNT__COUNT ? np_counter_descs[c] : NULL;
}

const char *dcqcn_rp_state_name(enum dcqcn_rp_state s)
{
	return (unsigned int)s < DCQCN_RP__STATE_COUNT ? rp_state_names[s] : NULL;
}

const char *dcqcn_action_name(unsigned int b)
{
	return b < DCQCN_ACT__COUNT ? action_names[b] : NULL;
}

/* ---- profile --------------------------------------------------------------------------- */

#define NS_PER_US          1000ull
#define KBPS_PER_MBPS      1000ull
#define BPS_PER_MBPS       1000000ull
#define LINE_RATE_MAX_MBPS 4000000u /* 4 Tb/s = 2^42 b/s: RC * alpha needs mul_shr() */

int dcqcn_prof_config(struct dcqcn_prof *prof, const struct dcqcn_params *p,
                      uint32_t line_rate_mbps, char *msg, size_t msglen)
{
	int rc = dcqcn_params_validate(p, msg, msglen);
	uint64_t max_mbps;

	if (rc < 0)
		return rc;
	if (line_rate_mbps < 1 || line_rate_mbps > LINE_RATE_MAX_MBPS) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "line_rate_mbps: %u out of range 1..%u",
			         line_rate_mbps, LINE_RATE_MAX_MBPS);
		return -ERANGE;
	}
	/* A NIC cannot send above its line rate, whatever rp_max_rate says. */
	max_mbps = p->rp_max_rate != 0 && p->rp_max_rate < line_rate_mbps ? p->rp_max_rate
	                                                                  : line_rate_mbps;
	if (p->rp_min_rate > max_mbps) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "rp_min_rate: %u above the max rate %llu Mb/s",
			         p->rp_min_rate, (unsigned long long)max_mbps);
		return -ERANGE;
	}
	if (p->rp_rate_to_set_on_first_cnp != 0 &&
	    p->rp_rate_to_set_on_first_cnp < p->rp_min_rate) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
			         "rp_rate_to_set_on_first_cnp: %u below rp_min_rate %u",
			         p->rp_rate_to_set_on_first_cnp, p->rp_min_rate);
		return -ERANGE;
	}

	memset(prof, 0, sizeof(*prof));
	prof->line_kbps = (uint64_t)line_rate_mbps * KBPS_PER_MBPS;
	prof->max_kbps = max_mbps * KBPS_PER_MBPS;
	prof->min_kbps = (uint64_t)p->rp_min_rate * KBPS_PER_MBPS;
	prof->max_bps = max_mbps * BPS_PER_MBPS;
	prof->min_bps = (uint64_t)p->rp_min_rate * BPS_PER_MBPS;
	prof->first_cnp_bps = (uint64_t)p->rp_rate_to_set_on_first_cnp * BPS_PER_MBPS;
	if (prof->first_cnp_bps > prof->max_bps)
		prof->first_cnp_bps = prof->max_bps;
	prof->ai_bps = (uint64_t)p->rp_ai_rate * BPS_PER_MBPS;
	prof->hai_bps = (uint64_t)p->rp_hai_rate * BPS_PER_MBPS;
	prof->alpha_bits = p->rp_alpha_bits;
	prof->alpha_one = 1ull << p->rp_alpha_bits;
	prof->cut_shift = p->rp_gd + p->rp_alpha_bits - 10;
	prof->alpha_round = (uint8_t)p->rp_alpha_round;
	prof->alpha_grid = (uint8_t)p->rp_alpha_grid;
	prof->dec_grid = (uint8_t)p->rp_rate_reduce_grid;
	prof->dec_offset_ns = p->rp_rate_reduce_offset;
	prof->time_reset_ns = (uint64_t)p->rp_time_reset * NS_PER_US;
	prof->byte_reset = p->rp_byte_reset;
	prof->alpha_ns = (uint64_t)p->rp_dce_tcp_rtt * NS_PER_US;
	prof->monitor_ns = (uint64_t)p->rp_rate_reduce_monitor_period * NS_PER_US;
	prof->np_gap_ns = (uint64_t)p->np_min_time_between_cnps * NS_PER_US;
	prof->g = p->rp_dce_tcp_g;
	prof->threshold = p->rp_threshold;
	prof->gd = p->rp_gd;
	prof->min_dec_fac = p->rp_min_dec_fac;
	prof->initial_alpha = p->rp_initial_alpha_value;
	prof->scope = (uint8_t)p->rp_scope;
	prof->alpha_on_cnp = (uint8_t)p->rp_alpha_on_cnp;
	prof->reduce_immediate = (uint8_t)p->rp_rate_reduce_immediate;
	prof->clamp_tgt = (uint8_t)p->rp_clamp_tgt_rate;
	prof->clamp_ati = (uint8_t)p->rp_clamp_tgt_rate_ati;
	prof->hai_scale = (uint8_t)p->rp_hai_scale;
	prof->cnp_dscp = (uint8_t)p->np_cnp_dscp;
	prof->cnp_prio = (uint8_t)p->np_cnp_prio;
	prof->params = *p;
	return 0;
}

/* ---- reaction point -------------------------------------------------------------------- */

#define ACT(rp, bit)  ((rp)->actions |= 1u << DCQCN_ACT_BIT_##bit)
#define CNT(rp, name) ((rp)->cnt[DCQCN_RP_CNT_##name]++)

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

static void rp_update_deadline(struct dcqcn_rp *rp)
{
	rp->next_deadline = min3(rp->alpha_at, rp->win_end, rp->inc_at);
}

void dcqcn_rp_init(struct dcqcn_rp *rp, const struct dcqcn_prof *prof)
{
	memset(rp, 0, sizeof(*rp));
	rp->prof = prof;
	rp->rc_bps = prof->max_bps;
	rp->rt_bps = prof->max_bps;
	rp->alpha = (uint64_t)prof->initial_alpha << (prof->alpha_bits - 10);
	rp->alpha_at = DCQCN_NEVER;
	rp->win_end = DCQCN_NEVER;
	rp->inc_at = DCQCN_NEVER;
	rp->byte_left = DCQCN_NEVER;
	rp->state = DCQCN_RP_IDLE;
	rp_update_deadline(rp);
}

/* alpha <- G/1024 * alpha + (1024 - G)/1024 * congested, alpha with rp_alpha_bits fraction bits
 * (mlx5 dce_tcp_g; the paper's alpha = (1 - g) alpha + g with g = (1024 - G) / 1024). The product
 * is rounded down (mlx5-like 10-bit integer: without congestion alpha reaches 0) or to nearest
 * (a real, as the ns-3 model's double). (1024 - G) << (bits - 10) is exact. */
static uint64_t alpha_next(const struct dcqcn_prof *pf, uint64_t alpha, bool congested)
{
	uint64_t a = alpha * pf->g; /* < 2^(48 + 11) */

	a = (a + (pf->alpha_round ? DCQCN_ALPHA_ONE / 2 : 0)) / DCQCN_ALPHA_ONE;
	if (congested)
		a += (uint64_t)(DCQCN_ALPHA_ONE - pf->g) << (pf->alpha_bits - 10);
	return a;
}

/* floor(a * b / 2^s) for the cut RC * alpha >> cut_shift: RC < 2^42 b/s and alpha <= 2^48 need
 * up to 91 bits, so the product is formed from 32-bit halves (C11 has no 128-bit type). The result
 * fits 64 bits whenever s >= bits(alpha) - 10, which dcqcn_prof_config guarantees. */
static uint64_t mul_shr(uint64_t a, uint64_t b, unsigned int s)
{
	const uint64_t m32 = 0xffffffffull;
	uint64_t p00 = (a & m32) * (b & m32), p01 = (a & m32) * (b >> 32);
	uint64_t p10 = (a >> 32) * (b & m32), p11 = (a >> 32) * (b >> 32);
	uint64_t mid = (p00 >> 32) + (p01 & m32) + (p10 & m32);
	uint64_t lo = (mid << 32) | (p00 & m32);
	uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);

	if (s == 0)
		return lo;
	if (s < 64)
		return (lo >> s) | (hi << (64 - s));
	return hi >> (s - 64);
}

/* Rate decrease (DCQCN SIGCOMM'15 §3.1 "RT = RC; RC = RC (1 - alpha/2)"), in the mlx5 form
 * cut = RC * alpha >> rp_gd capped by rp_min_dec_fac, floored at rp_min_rate. */
static void rp_cut(struct dcqcn_rp *rp, uint64_t t)
{
	const struct dcqcn_prof *pf = rp->prof;
	uint64_t cut, max_cut;

	/* Target clamp, mlx5 clamp_tgt_rate / clamp_tgt_rate_after_time_inc: RT forgets the
	 * pre-congestion rate when told to, or when RC has already been increased since the last
	 * cut (by the byte counter always, by the timer if _ati). Otherwise RT keeps the rate the
	 * flow had before this congestion episode (QCN target memory). */
	if (pf->clamp_tgt || rp->inc_byte_since_cut || (pf->clamp_ati && rp->inc_timer_since_cut))
		rp->rt_bps = rp->rc_bps;

	cut = mul_shr(rp->rc_bps, rp->alpha, pf->cut_shift);
	max_cut = rp->rc_bps - rp->rc_bps * pf->min_dec_fac / 100;
	if (cut > max_cut)
		cut = max_cut;
	rp->rc_bps -= cut;
	if (rp->rc_bps < pf->min_bps) {
		rp->rc_bps = pf->min_bps;
		CNT(rp, rp_min_rate_hits);
	}

	/* A cut restarts the increase machinery: timer, byte counter, both stage counters. */
	rp->t_stage = 0;
	rp->bc_stage = 0;
	rp->inc_timer_since_cut = 0;
	rp->inc_byte_since_cut = 0;
	rp->inc_at = pf->time_reset_ns != 0 ? t + pf->time_reset_ns : DCQCN_NEVER;
	rp->byte_left = pf->byte_reset != 0 ? pf->byte_reset : DCQCN_NEVER;
	rp->state = DCQCN_RP_FAST_RECOVERY;
	CNT(rp, rp_rate_cuts);
	ACT(rp, CUT);
}

/* ---- increase stages: one function per state ---- */

static uint64_t avg_up(uint64_t a, uint64_t b)
{
	/* Rounded up so that RC reaches RT instead of stalling one b/s below it. */
	return (a + b + 1) / 2;
}

static void rp_raise_target(struct dcqcn_rp *rp, uint64_t step)
{
	uint64_t max = rp->prof->max_bps;

	rp->rt_bps = step >= max - rp->rt_bps ? max : rp->rt_bps + step;
}

/* Fast recovery: RC = (RT + RC) / 2 (DCQCN SIGCOMM'15 §3.1, from QCN). */
static void rp_inc_fast_recovery(struct dcqcn_rp *rp, uint32_t lo)
{
	(void)lo;
	rp->rc_bps = avg_up(rp->rt_bps, rp->rc_bps);
	CNT(rp, rp_fast_recovery);
	ACT(rp, FR);
}

/* Additive increase: RT += R_AI; RC = (RT + RC) / 2. */
static void rp_inc_additive(struct dcqcn_rp *rp, uint32_t lo)
{
	(void)lo;
	rp_raise_target(rp, rp->prof->ai_bps);
	rp->rc_bps = avg_up(rp->rt_bps, rp->rc_bps);
	CNT(rp, rp_additive_increase);
	ACT(rp, AI);
}

/* Hyper increase: RT += i * R_HAI; RC = (RT + RC) / 2. rp_hai_scale: 0 i = 1 (HPCC ns-3
 * HyperIncreaseMlx), 1 i = min(T, BC) - F (the QCN round number), 2 i = min(T, BC) - F + 1 (the
 * paper, reference/dcqcn.md). The counts are those before this event (lo > F here). */
static void rp_inc_hyper(struct dcqcn_rp *rp, uint32_t lo)
{
	uint64_t i = 1;

	if (rp->prof->hai_scale != 0)
		i = (uint64_t)(lo - rp->prof->threshold) + (rp->prof->hai_scale == 2);
	rp_raise_target(rp, i * rp->prof->hai_bps);
	rp->rc_bps = avg_up(rp->rt_bps, rp->rc_bps);
	CNT(rp, rp_hyper_increase);
	ACT(rp, HAI);
}

typedef void (*rp_stage_fn)(struct dcqcn_rp *rp, uint32_t lo);

static const rp_stage_fn rp_stage_fns[DCQCN_RP__STATE_COUNT] = {
    [DCQCN_RP_FAST_RECOVERY] = rp_inc_fast_recovery,
    [DCQCN_RP_ADDITIVE] = rp_inc_additive,
    [DCQCN_RP_HYPER] = rp_inc_hyper,
};

enum inc_source { INC_TIMER, INC_BYTES };

/*
 * One rate-increase event. The stage is chosen from the event counts of the enabled counters
 * *before* this event (QCN / HPCC ns-3 convention, so that F events are spent in fast recovery):
 * fast recovery while max(T, BC) < F, hyper once min(T, BC) > F, additive in between. A counter
 * that is switched off (period 0) does not take part, so a timer-only machine reaches hyper.
 */
static void rp_increase(struct dcqcn_rp *rp, enum inc_source src)
{
	const struct dcqcn_prof *pf = rp->prof;
	bool use_t = pf->time_reset_ns != 0, use_b = pf->byte_reset != 0;
	uint32_t hi, lo;
	enum dcqcn_rp_state st;

	if (use_t && use_b) {
		hi = rp->t_stage > rp->bc_stage ? rp->t_stage : rp->bc_stage;
		lo = rp->t_stage < rp->bc_stage ? rp->t_stage : rp->bc_stage;
	} else {
		hi = lo = use_t ? rp->t_stage : rp->bc_stage;
	}
	if (hi < pf->threshold)
		st = DCQCN_RP_FAST_RECOVERY;
	else if (lo > pf->threshold)
		st = DCQCN_RP_HYPER;
	else
		st = DCQCN_RP_ADDITIVE;
	rp->state = (uint8_t)st;
	rp_stage_fns[st](rp, lo);

	if (src == INC_TIMER) {
		if (rp->t_stage != UINT32_MAX)
			rp->t_stage++;
		rp->inc_timer_since_cut = 1;
		CNT(rp, rp_timer_events);
	} else {
		if (rp->bc_stage != UINT32_MAX)
			rp->bc_stage++;
		rp->inc_byte_since_cut = 1;
		CNT(rp, rp_byte_events);
	}

	/* Nothing left to increase: stop both sources until the next cut. Not observable in the
	 * rate (every further event would leave RC = RT = max), and it keeps recovered flows off
	 * the host's timer wheel. The stage counters stay where they are. */
	if (rp->rc_bps >= pf->max_bps) {
		rp->state = DCQCN_RP_AT_MAX;
		rp->inc_at = DCQCN_NEVER;
		rp->byte_left = DCQCN_NEVER;
		ACT(rp, MAX);
	}
}

/* ---- timer work ---- */

static void rp_alpha_tick(struct dcqcn_rp *rp, uint64_t t)
{
	const struct dcqcn_prof *pf = rp->prof;
	/* On-CNP mode (paper): reaching the timer means K passed without a CNP, so decay.
	 * Sampled mode (mlx5 dce_tcp_rtt, ns-3 UpdateAlphaMlx): rise if a CNP came in the period.
	 */
	bool congested = !pf->alpha_on_cnp && rp->alpha_cnp;
	uint64_t old = rp->alpha;

	rp->alpha = alpha_next(pf, old, congested);
	rp->alpha_cnp = 0;
	if (congested) {
		CNT(rp, rp_alpha_increases);
		ACT(rp, ALPHA_UP);
	} else {
		CNT(rp, rp_alpha_decays);
		ACT(rp, ALPHA_DN);
	}
	/* A decay that changed nothing will change nothing again: stop until the next CNP. */
	rp->alpha_at = (!congested && rp->alpha == old) ? DCQCN_NEVER : t + pf->alpha_ns;
}

/* End of a rate-reduce monitor period (mlx5 rate_reduce_monitor_period): apply the cut the CNPs
 * of the period asked for and open the next period, or close the window if there were none. */
static void rp_window_end(struct dcqcn_rp *rp, uint64_t t)
{
	if (rp->cut_pending) {
		rp->cut_pending = 0;
		rp_cut(rp, t);
		rp->win_end = t + rp->prof->monitor_ns;
	} else {
		rp->win_end = DCQCN_NEVER;
	}
}

static void rp_inc_timer(struct dcqcn_rp *rp, uint64_t t)
{
	rp->inc_at = t + rp->prof->time_reset_ns;
	rp_increase(rp, INC_TIMER);
}

/* Run due work in time order; at equal times alpha first, then the increase timer, then the
 * monitor period end. This is the order of HPCC ns-3 (rdma-hw.cc): its decrease check is
 * scheduled 1 ns after the alpha update "to make sure rate decrease is after alpha update", and
 * an increase event due at a check's time was scheduled (CheckRateDecreaseMlx: cut + RPTimer)
 * before that check was (previous check + 4 us), so ns-3's FIFO tie-break runs it first. */
static void rp_advance(struct dcqcn_rp *rp, uint64_t now)
{
	while (rp->next_deadline <= now) {
		uint64_t t = rp->next_deadline;

		if (rp->alpha_at == t)
			rp_alpha_tick(rp, t);
		else if (rp->inc_at == t)
			rp_inc_timer(rp, t);
		else
			rp_window_end(rp, t);
		rp_update_deadline(rp);
	}
}

/* First point of the grid anchor + k * period (k >= 1) strictly after now. */
static uint64_t grid_next(uint64_t anchor, uint64_t period, uint64_t now)
{
	if (now < anchor)
		return anchor + period;
	return anchor + ((now - anchor) / period + 1) * period;
}

void dcqcn_rp_on_timer(struct dcqcn_rp *rp, uint64_t now_ns)
{
	rp_advance(rp, now_ns);
}

/* First CNP of the flow: the rate limiter starts (mlx5 rate_to_set_on_first_cnp,
 * initial_alpha_value; ns-3 RateOnFirstCnp and alpha = 1). */
static void rp_first_cnp(struct dcqcn_rp *rp, uint64_t now)
{
	const struct dcqcn_prof *pf = rp->prof;

	if (pf->first_cnp_bps != 0)
		rp->rc_bps = pf->first_cnp_bps;
	rp->rt_bps = rp->rc_bps;
	rp->alpha = (uint64_t)pf->initial_alpha << (pf->alpha_bits - 10);
	rp->alpha_cnp = 0;
	rp->first_at = now;
	rp->alpha_at = now + pf->alpha_ns;
	rp->state = DCQCN_RP_FAST_RECOVERY;
	CNT(rp, rp_first_cnp);
	ACT(rp, FIRST);
}

void dcqcn_rp_on_cnp(struct dcqcn_rp *rp, uint64_t now_ns)
{
	const struct dcqcn_prof *pf = rp->prof;
	bool first = rp->state == DCQCN_RP_IDLE;

	rp_advance(rp, now_ns);
	CNT(rp, rp_cnp_handled);
	if (first)
		rp_first_cnp(rp, now_ns);

	/* Rate decrease, sampled by the monitor period (mlx5 rate_reduce_monitor_period): at most
	 * one cut per period, extra CNPs fold into it. Period 0: every CNP cuts (paper). */
	if (pf->monitor_ns == 0) {
		rp_cut(rp, now_ns);
	} else if (rp->win_end == DCQCN_NEVER) {
		/* Grid (ns-3 ScheduleDecreaseRateMlx: a check every P from first CNP + offset,
		 * running for ever): the period ends at the next grid point. Otherwise it opens
		 * now. */
		rp->win_end = pf->dec_grid ? grid_next(rp->first_at + pf->dec_offset_ns,
		                                       pf->monitor_ns, now_ns)
		                           : now_ns + pf->monitor_ns;
		if (pf->reduce_immediate) {
			rp_cut(rp, now_ns);
		} else {
			rp->cut_pending = 1;
			ACT(rp, PEND);
		}
	} else if (rp->cut_pending) {
		CNT(rp, rp_cnp_ignored);
		ACT(rp, IGNORE);
	} else {
		rp->cut_pending = 1;
		ACT(rp, PEND);
	}

	/* alpha: the first CNP sets initial_alpha_value and nothing more. After that, either
	 * update now and restart the decay timer K (paper: cut with the old alpha, then
	 * alpha = (1 - g) alpha + g), or note the CNP for the next sampled update (mlx5). */
	if (!first) {
		if (pf->alpha_on_cnp) {
			rp->alpha = alpha_next(pf, rp->alpha, true);
			rp->alpha_at = now_ns + pf->alpha_ns;
			CNT(rp, rp_alpha_increases);
			ACT(rp, ALPHA_UP);
		} else {
			rp->alpha_cnp = 1;
			/* The timer stopped (alpha stuck): restart it, on the first CNP's grid when
			 * rp_alpha_grid (ns-3's UpdateAlphaMlx runs every period for ever; the
			 * updates skipped while stopped would not have changed alpha). */
			if (rp->alpha_at == DCQCN_NEVER)
				rp->alpha_at = pf->alpha_grid
				                   ? grid_next(rp->first_at, pf->alpha_ns, now_ns)
				                   : now_ns + pf->alpha_ns;
		}
	}
	rp_update_deadline(rp);
}

void dcqcn_rp__tx_slow(struct dcqcn_rp *rp, uint64_t bytes, uint64_t now_ns)
{
	rp_advance(rp, now_ns);
	/* A large send may cross several byte-counter boundaries: one event per boundary. */
	while (bytes >= rp->byte_left) {
		bytes -= rp->byte_left;
		rp->byte_left = rp->prof->byte_reset;
		rp_increase(rp, INC_BYTES);
	}
	if (rp->byte_left != DCQCN_NEVER)
		rp->byte_left -= bytes;
	rp_update_deadline(rp);
}

/* ---- notification point ---------------------------------------------------------------- */

void dcqcn_np_init(struct dcqcn_np *np, const struct dcqcn_prof *prof)
{
	memset(np, 0, sizeof(*np));
	np->prof = prof;
	np->next_cnp_ns = 0;
}
