/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the DCQCN rate machine. Expected values are computed in the test from the
 * published formulas (DCQCN SIGCOMM'15 §3.1, mlx5 parameter semantics as in docs/cc.md), step
 * by step, never copied from the implementation's output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cc/dcqcn.h"

#define US   1000ull
#define MBPS 1000000ull /* b/s per Mb/s */

/* Build a profile from a built-in one plus "name=value[,name=value...]" overrides
 * (NULL-terminated). */
static void make_prof(struct dcqcn_prof *prof, enum dcqcn_profile base, uint32_t line_mbps, ...)
{
	struct dcqcn_params p;
	char msg[256];
	va_list ap;
	const char *kv;

	assert_int_equal(dcqcn_params_init(&p, base), 0);
	va_start(ap, line_mbps);
	while ((kv = va_arg(ap, const char *)) != NULL) {
		char buf[256], *one, *save = NULL;

		snprintf(buf, sizeof(buf), "%s", kv);
		for (one = strtok_r(buf, ",", &save); one != NULL;
		     one = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(one, '=');

			assert_non_null(eq);
			*eq = '\0';
			if (dcqcn_param_set_msg(&p, one, eq + 1, msg, sizeof(msg)) != 0)
				fail_msg("set %s: %s", kv, msg);
		}
	}
	va_end(ap);
	if (dcqcn_prof_config(prof, &p, line_mbps, msg, sizeof(msg)) != 0)
		fail_msg("config: %s", msg);
}

/* The paper's alpha update, alpha in 1/1024, g = 4/1024: (1 - g) alpha (+ g). */
static uint32_t paper_alpha(uint32_t a, int congested)
{
	return a * 1020 / 1024 + (congested ? 4 : 0);
}

/* The same with 48 fraction bits rounded to nearest (rp_alpha_bits 48, rp_alpha_round 1). */
static uint64_t real_alpha(uint64_t a, int congested)
{
	return (a * 1020 + 512) / 1024 + (congested ? 4ull << 38 : 0);
}

/* ---- profiles and parameters ---- */

static void test_every_profile_validates(void **state)
{
	static const uint32_t rates[] = {1000, 10000, 25000, 40000, 100000, 400000};

	(void)state;
	for (unsigned int p = 0; p < DCQCN_PROFILE__COUNT; p++) {
		struct dcqcn_params prm;
		struct dcqcn_prof prof;
		char msg[256] = "";

		assert_non_null(dcqcn_profile_name(p));
		assert_int_equal(dcqcn_profile_lookup(dcqcn_profile_name(p)), (int)p);
		assert_int_equal(dcqcn_params_init(&prm, p), 0);
		if (dcqcn_params_validate(&prm, msg, sizeof(msg)) != 0)
			fail_msg("profile %s: %s", dcqcn_profile_name(p), msg);
		for (unsigned int r = 0; r < sizeof(rates) / sizeof(rates[0]); r++)
			if (dcqcn_prof_config(&prof, &prm, rates[r], msg, sizeof(msg)) != 0)
				fail_msg("profile %s at %u Mb/s: %s", dcqcn_profile_name(p),
				         rates[r], msg);
	}
	assert_int_equal(dcqcn_profile_lookup("no-such"), -ENOENT);
	assert_int_equal(dcqcn_profile_lookup("unified"), DCQCN_PROFILE_UNIFIED);
}

static void test_param_table(void **state)
{
	struct dcqcn_params p;

	(void)state;
	assert_int_equal(dcqcn_params_init(&p, DCQCN_PROFILE_PAPER), 0);
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++) {
		const struct dcqcn_param_info *pi = dcqcn_param_info(i);

		assert_non_null(pi);
		assert_true(strlen(pi->meaning) > 10);
		assert_int_equal(dcqcn_param_lookup(pi->name), (int)i);
		assert_true(pi->min <= pi->max);
		/* mlx5 spelling: rp_ or np_ prefix */
		assert_true(strncmp(pi->name, "rp_", 3) == 0 || strncmp(pi->name, "np_", 3) == 0);
		for (unsigned int j = 0; j < i; j++)
			assert_string_not_equal(pi->name, dcqcn_param_info(j)->name);
		assert_int_equal(dcqcn_param_get(&p, i), pi->def[DCQCN_PROFILE_PAPER]);
	}
	assert_null(dcqcn_param_info(DCQCN_PARAM__COUNT));
	/* Spot-check the table against the published values it claims to carry. */
	assert_int_equal(p.rp_threshold, 5);              /* F = 5 */
	assert_int_equal(p.rp_time_reset, 55);            /* T = 55 us */
	assert_int_equal(p.rp_dce_tcp_g, 1020);           /* g = 1/256 */
	assert_int_equal(p.np_min_time_between_cnps, 50); /* N = 50 us */
	assert_int_equal(dcqcn_params_init(&p, DCQCN_PROFILE_MLX5_CX5), 0);
	assert_int_equal(p.rp_time_reset, 300);
	assert_int_equal(p.rp_ai_rate, 5);
	assert_int_equal(p.rp_hai_rate, 50);
	assert_int_equal(p.rp_dce_tcp_g, 1019);
	assert_int_equal(p.rp_rate_reduce_monitor_period, 4);
	assert_int_equal(p.rp_initial_alpha_value, 1023);
	assert_int_equal(dcqcn_params_init(&p, DCQCN_PROFILE_SHARED_PORT), 0);
	assert_int_equal(p.rp_scope, DCQCN_SCOPE_PORT);
	assert_int_equal(dcqcn_params_init(&p, DCQCN_PROFILE__COUNT), -EINVAL);
}

static void test_set_by_name(void **state)
{
	struct dcqcn_params p;
	char msg[256];

	(void)state;
	dcqcn_params_init(&p, DCQCN_PROFILE_UNIFIED);
	assert_int_equal(dcqcn_param_set(&p, "rp_gd", "7"), 0);
	assert_int_equal(p.rp_gd, 7);
	assert_int_equal(dcqcn_param_set(&p, "rp_byte_reset", "0x100"), 0);
	assert_int_equal(p.rp_byte_reset, 256);
	assert_int_equal(dcqcn_param_set(&p, "rp_scope", "dst"), 0);
	assert_int_equal(p.rp_scope, DCQCN_SCOPE_DST);
	assert_int_equal(dcqcn_param_set(&p, "rp_scope", "port"), 0);
	assert_int_equal(p.rp_scope, DCQCN_SCOPE_PORT);

	assert_int_equal(dcqcn_param_set_msg(&p, "rp_gd", "40", msg, sizeof(msg)), -ERANGE);
	assert_string_equal(msg, "rp_gd: 40 out of range 0..31");
	assert_int_equal(p.rp_gd, 7); /* unchanged on error */
	assert_int_equal(dcqcn_param_set_msg(&p, "rp_gd", "eleven", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "rp_gd"));
	assert_int_equal(dcqcn_param_set_msg(&p, "rp_gd", "", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(dcqcn_param_set_msg(&p, "rp_gd", "11x", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(dcqcn_param_set_msg(&p, "rp_min_rate", "-1", msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "rp_min_rate"));
	assert_int_equal(
	    dcqcn_param_set_msg(&p, "rp_min_rate", "99999999999999999999", msg, sizeof(msg)),
	    -ERANGE);
	assert_int_equal(dcqcn_param_set_msg(&p, "rp_bogus", "1", msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "rp_bogus"));
	assert_int_equal(dcqcn_param_set(&p, "rp_scope", "host"), -EINVAL);
}

/* Every parameter rejects the value just above its maximum (and below its minimum) by name,
 * through set-by-name and through validation of a struct filled by hand. */
static void test_every_param_rejects_out_of_range(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++) {
		const struct dcqcn_param_info *pi = dcqcn_param_info(i);
		struct dcqcn_params p;
		char val[32], msg[256], want[128];

		dcqcn_params_init(&p, DCQCN_PROFILE_UNIFIED);
		snprintf(val, sizeof(val), "%llu", (unsigned long long)pi->max + 1);
		assert_int_equal(dcqcn_param_set_msg(&p, pi->name, val, msg, sizeof(msg)), -ERANGE);
		snprintf(want, sizeof(want), "%s: %s out of range %u..%u", pi->name, val, pi->min,
		         pi->max);
		assert_string_equal(msg, want);
		if (pi->min > 0) {
			snprintf(val, sizeof(val), "%u", pi->min - 1);
			assert_int_equal(dcqcn_param_set_msg(&p, pi->name, val, msg, sizeof(msg)),
			                 -ERANGE);
			assert_true(strncmp(msg, pi->name, strlen(pi->name)) == 0);
		}
		if (pi->max < UINT32_MAX) {
			uint32_t *f = (uint32_t *)(void *)((char *)&p + pi->offset);

			*f = pi->max + 1;
			assert_int_equal(dcqcn_params_validate(&p, msg, sizeof(msg)), -ERANGE);
			assert_true(strncmp(msg, pi->name, strlen(pi->name)) == 0);
		}
	}
}

static void test_cross_param_rules(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_prof prof;
	char msg[256];

	(void)state;
	dcqcn_params_init(&p, DCQCN_PROFILE_PAPER);
	p.rp_time_reset = 0;
	p.rp_byte_reset = 0;
	assert_int_equal(dcqcn_params_validate(&p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "rp_time_reset"));

	dcqcn_params_init(&p, DCQCN_PROFILE_PAPER);
	p.rp_min_rate = 500;
	p.rp_max_rate = 400;
	assert_int_equal(dcqcn_params_validate(&p, msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "rp_min_rate"));

	dcqcn_params_init(&p, DCQCN_PROFILE_HPCC_NS3); /* min rate 1000 Mb/s */
	assert_int_equal(dcqcn_prof_config(&prof, &p, 500, msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "rp_min_rate"));

	dcqcn_params_init(&p, DCQCN_PROFILE_PAPER);
	assert_int_equal(dcqcn_prof_config(&prof, &p, 0, msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "line_rate_mbps"));

	p.rp_rate_to_set_on_first_cnp = 5; /* below rp_min_rate 10 */
	assert_int_equal(dcqcn_prof_config(&prof, &p, 40000, msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "rp_rate_to_set_on_first_cnp"));
}

/* ---- the paper profile, by hand ---- */

/* First CNP at line rate (DCQCN §3.1): RT = RC = line; RC = RC (1 - alpha/2) with alpha = 1. */
static void test_paper_first_cnp_at_line_rate(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	const uint64_t line = 40000 * MBPS;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, NULL);
	dcqcn_rp_init(&rp, &prof);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line);
	assert_int_equal(dcqcn_rp_next_deadline(&rp), DCQCN_NEVER);
	assert_int_equal(rp.state, DCQCN_RP_IDLE);

	/* Bytes before any CNP count for nothing: no byte counter runs at line rate. */
	dcqcn_rp_on_tx(&rp, 4096, 1000);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_byte_events], 0);

	dcqcn_rp_on_cnp(&rp, 1000);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line - line * 1024 / 2048);
	assert_int_equal(dcqcn_rp_rate_mbps(&rp), 20000);
	assert_int_equal(dcqcn_rp_target_bps(&rp), line);
	assert_int_equal(dcqcn_rp_alpha(&rp), 1024);
	assert_int_equal(rp.state, DCQCN_RP_FAST_RECOVERY);
	/* Both the alpha timer K and the increase timer T are 55 us after the CNP. */
	assert_int_equal(dcqcn_rp_next_deadline(&rp), 1000 + 55 * US);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_cnp_handled], 1);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_first_cnp], 1);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_rate_cuts], 1);
}

/* alpha decays as (1 - g) alpha every K = 55 us without a CNP; the next cut uses it. */
static void test_paper_alpha_decay_over_silence(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	uint64_t rc = 20000 * MBPS;
	uint32_t a = 1024;

	(void)state;
	/* Increase timer off so that RC stays put and only alpha moves. The 10-bit machine
	 * (mlx5's alpha), rounding down; the paper's real-valued alpha is checked against the
	 * oracle in tests/cc/ref_compare.py. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_time_reset=0", "rp_alpha_bits=10",
	          "rp_alpha_round=down", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);

	for (int k = 1; k <= 10; k++) {
		a = paper_alpha(a, 0);
		dcqcn_rp_on_timer(&rp, (uint64_t)k * 55 * US);
		assert_int_equal(dcqcn_rp_alpha(&rp), a);
		assert_int_equal(dcqcn_rp_next_deadline(&rp), (uint64_t)(k + 1) * 55 * US);
	}
	/* Not yet due: nothing changes. */
	dcqcn_rp_on_timer(&rp, 11 * 55 * US - 1);
	assert_int_equal(dcqcn_rp_alpha(&rp), a);
	/* Real-number check of the same decay: 1024 (255/256)^10 = 984.9, floors lose < 10. */
	assert_in_range(a, 975, 985);

	/* A CNP 1 ns later: cut with the decayed alpha, RT = RC (paper clamps), then alpha rises.
	 */
	dcqcn_rp_on_cnp(&rp, 10 * 55 * US + 1);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rc);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc - (rc * a >> 11));
	assert_int_equal(dcqcn_rp_alpha(&rp), paper_alpha(a, 1));
	/* The decay timer restarts at the CNP. */
	assert_int_equal(dcqcn_rp_next_deadline(&rp), 10 * 55 * US + 1 + 55 * US);
}

/* Five timer events: fast recovery, then additive, then hyper (timer-only machine, F = 2,
 * i * R_HAI with i = min(T, BC) - F, rp_hai_scale 1). rp_rate_to_set_on_first_cnp keeps RT
 * below the line rate. */
static void test_paper_five_timer_events(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	uint64_t rc, rt;
	const uint64_t ai = 40 * MBPS, hai = 200 * MBPS;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_threshold=2", "rp_byte_reset=0",
	          "rp_rate_to_set_on_first_cnp=10000", "rp_hai_scale=min-f", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	rt = 10000 * MBPS;
	rc = rt / 2;
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt);

	/* event 1, 2: T = 0, 1 < F: fast recovery, RC = (RT + RC) / 2 */
	rc = (rt + rc) / 2; /* 7.5 Gb/s */
	dcqcn_rp_on_timer(&rp, 55 * US);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	assert_int_equal(rp.state, DCQCN_RP_FAST_RECOVERY);
	rc = (rt + rc) / 2; /* 8.75 Gb/s */
	dcqcn_rp_on_timer(&rp, 110 * US);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	assert_int_equal(rp.t_stage, 2);
	/* event 3: T = F: additive, RT += R_AI */
	rt += ai;
	rc = (rt + rc) / 2;
	dcqcn_rp_on_timer(&rp, 165 * US);
	assert_int_equal(rp.state, DCQCN_RP_ADDITIVE);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* event 4: T = 3 > F: hyper, i = 3 - 2 = 1 */
	rt += 1 * hai;
	rc = (rt + rc) / 2;
	dcqcn_rp_on_timer(&rp, 220 * US);
	assert_int_equal(rp.state, DCQCN_RP_HYPER);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* event 5: i = 2 */
	rt += 2 * hai;
	rc = (rt + rc + 1) / 2;
	dcqcn_rp_on_timer(&rp, 275 * US);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	assert_int_equal(rc, 10228750000ull); /* 10.64 and 9.8175 Gb/s averaged, worked in docs */
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_fast_recovery], 2);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_additive_increase], 1);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_hyper_increase], 2);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_timer_events], 5);

	/* Unmodified paper profile: F = 5, so the same five events are all fast recovery. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_rate_to_set_on_first_cnp=10000", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	rt = 10000 * MBPS;
	rc = rt / 2;
	for (int k = 1; k <= 5; k++) {
		rc = (rt + rc + 1) / 2;
		dcqcn_rp_on_timer(&rp, (uint64_t)k * 55 * US);
		assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
		assert_int_equal(rp.state, DCQCN_RP_FAST_RECOVERY);
	}
	/* Sixth: T = 5 = F, BC = 0: additive (hyper needs both counters past F). */
	rt += ai;
	rc = (rt + rc + 1) / 2;
	dcqcn_rp_on_timer(&rp, 6 * 55 * US);
	assert_int_equal(rp.state, DCQCN_RP_ADDITIVE);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
}

/* Byte-counter-driven stages: every B = 10 MB sent is one increase event. */
static void test_paper_byte_counter_stages(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	uint64_t rc, rt, t = 0;
	const uint64_t ai = 40 * MBPS, hai = 200 * MBPS;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_time_reset=0",
	          "rp_rate_to_set_on_first_cnp=10000", "rp_hai_scale=1", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	rt = 10000 * MBPS;
	rc = rt / 2;
	/* 9 999 999 bytes: no event yet. */
	for (int i = 0; i < 9; i++)
		dcqcn_rp_on_tx(&rp, 1000000, ++t);
	dcqcn_rp_on_tx(&rp, 999999, ++t);
	assert_int_equal(rp.bc_stage, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* The 10 000 000th byte: fast recovery. */
	dcqcn_rp_on_tx(&rp, 1, ++t);
	rc = (rt + rc + 1) / 2;
	assert_int_equal(rp.bc_stage, 1);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* One 40 MB send crosses four boundaries: four more fast-recovery events (BC 1..4). */
	dcqcn_rp_on_tx(&rp, 40000000, ++t);
	for (int i = 0; i < 4; i++)
		rc = (rt + rc + 1) / 2;
	assert_int_equal(rp.bc_stage, 5);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* BC = 5 = F: additive. */
	dcqcn_rp_on_tx(&rp, 10000000, ++t);
	rt += ai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(rp.state, DCQCN_RP_ADDITIVE);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* BC = 6 > F, timer off so BC alone decides: hyper, i = 6 - 5 = 1. */
	dcqcn_rp_on_tx(&rp, 10000000, ++t);
	rt += hai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(rp.state, DCQCN_RP_HYPER);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_byte_events], 7);
	/* A cut resets the byte counter: 9.99 MB after it is not an event. */
	dcqcn_rp_on_tx(&rp, 5000000, ++t);
	dcqcn_rp_on_cnp(&rp, ++t);
	assert_int_equal(rp.bc_stage, 0);
	dcqcn_rp_on_tx(&rp, 9999999, ++t);
	assert_int_equal(rp.bc_stage, 0);
}

/* Timer and byte counter together (F = 1): additive while one counter is past F, hyper only
 * once both are, with i = min(T, BC) - F. */
static void test_paper_both_counters(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	uint64_t rc, rt;
	const uint64_t ai = 40 * MBPS, hai = 200 * MBPS;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_threshold=1",
	          "rp_rate_to_set_on_first_cnp=10000", "rp_hai_scale=1", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	rt = 10000 * MBPS;
	rc = rt / 2;
	dcqcn_rp_on_tx(&rp, 10000000, 1 * US); /* T0 BC0: fast recovery */
	rc = (rt + rc + 1) / 2;
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	dcqcn_rp_on_tx(&rp, 10000000, 2 * US); /* T0 BC1: additive */
	rt += ai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	dcqcn_rp_on_timer(&rp, 55 * US); /* T0 BC2: additive */
	rt += ai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	dcqcn_rp_on_timer(&rp, 110 * US); /* T1 BC2: min 1 = F: additive */
	rt += ai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(rp.state, DCQCN_RP_ADDITIVE);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	dcqcn_rp_on_tx(&rp, 10000000, 120 * US); /* T2 BC2: hyper, i = 1 */
	rt += hai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(rp.state, DCQCN_RP_HYPER);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	dcqcn_rp_on_timer(&rp, 165 * US); /* T2 BC3: i = 1 */
	rt += hai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	dcqcn_rp_on_timer(&rp, 220 * US); /* T3 BC3: i = 2 */
	rt += 2 * hai;
	rc = (rt + rc + 1) / 2;
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);

	/* The paper profile's own rp_hai_scale 2 (reference/dcqcn.md: i = min(T, BC) - F + 1):
	 * the same events, the first hyper step is 2 R_HAI. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_threshold=1",
	          "rp_rate_to_set_on_first_cnp=10000", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	dcqcn_rp_on_tx(&rp, 10000000, 1 * US);
	dcqcn_rp_on_tx(&rp, 10000000, 2 * US);
	dcqcn_rp_on_timer(&rp, 110 * US);
	rt = dcqcn_rp_target_bps(&rp);
	dcqcn_rp_on_tx(&rp, 10000000, 120 * US); /* T2 BC2: hyper, i = 2 - 1 + 1 */
	assert_int_equal(rp.state, DCQCN_RP_HYPER);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rt + 2 * hai);
}

/* rp_rate_reduce_monitor_period: a CNP inside a period folds into one cut at its end. */
static void test_cnp_inside_monitor_period(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	const uint64_t line = 40000 * MBPS;

	(void)state;
	/* Immediate: the first CNP cuts at once and opens a 50 us period. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_rate_reduce_monitor_period=50",
	          "rp_time_reset=100", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 2);
	dcqcn_rp_on_cnp(&rp, 10 * US); /* inside: pending, no cut now */
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 2);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_cnp_ignored], 0);
	dcqcn_rp_on_cnp(&rp, 20 * US); /* a cut is already pending: ignored */
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_cnp_ignored], 1);
	assert_int_equal(dcqcn_rp_next_deadline(&rp), 50 * US);
	dcqcn_rp_on_timer(&rp, 50 * US - 1);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 2);
	dcqcn_rp_on_timer(&rp, 50 * US); /* end of period: one cut, alpha still 1 */
	assert_int_equal(dcqcn_rp_alpha(&rp), 1024);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 4);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_rate_cuts], 2);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_cnp_handled], 3);
	/* The cut opened the next period; with no CNP in it, it closes without a cut. */
	dcqcn_rp_on_timer(&rp, 100 * US);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_rate_cuts], 2);
	assert_int_equal(rp.win_end, DCQCN_NEVER);

	/* Deferred (rp_rate_reduce_immediate = 0): the first cut waits for the period end. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_rate_reduce_monitor_period=50",
	          "rp_rate_reduce_immediate=0", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_rate_cuts], 0);
	dcqcn_rp_on_timer(&rp, 50 * US);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 2);
}

/* The HPCC ns-3 Mellanox model (rdma-hw.cc): alpha = 1 at the first CNP, updated every 1 us
 * (UpdateAlphaMlx), the first decrease check 4 us + 1 ns after the CNP (ScheduleDecreaseRateMlx
 * with delta 1) cutting with the alpha of that moment (four decays), RT not clamped while the
 * timer stage is 0. The whole trajectory is compared with a transliteration of rdma-hw.cc in
 * tests/cc/ref_compare.py; this works the first cuts through by hand. */
static void test_hpcc_ns3_first_cut(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	const uint64_t line = 100000 * MBPS;
	uint64_t a = 1ull << 48, rc;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_HPCC_NS3, 100000, NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line);
	assert_int_equal(dcqcn_rp_next_deadline(&rp), 1 * US);
	for (int k = 1; k <= 4; k++)
		a = real_alpha(a, 0);
	assert_int_equal(a, 255ull * 255 * 255 * 255 << 16); /* (255/256)^4 exactly */
	dcqcn_rp_on_timer(&rp, 4 * US);
	assert_int_equal(dcqcn_rp_alpha_raw(&rp), a);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line); /* the check is 1 ns later */
	dcqcn_rp_on_timer(&rp, 4 * US + 1);
	/* line * a / 2 = 10^11 * 255^4 / 2^33 = 5^11 * 255^4 / 2^22 (no 64-bit overflow) */
	rc = line - 48828125ull * (255ull * 255 * 255 * 255) / (1ull << 22);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	assert_int_equal(dcqcn_rp_target_bps(&rp), line);
	/* First timer increase 300 us after the cut: fast recovery (F = 1 event of it). */
	dcqcn_rp_on_timer(&rp, 304 * US + 1);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_fast_recovery], 1);
	rc = (line + rc + 1) / 2;
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	/* A CNP at 305 us: sampled alpha rises at the 306 us tick; the check at 308 us + 1 ns cuts,
	 * and since a timer increase happened since the last cut RT is clamped to RC. */
	dcqcn_rp_on_timer(&rp, 305 * US); /* the 305 us alpha tick runs before the CNP */
	a = dcqcn_rp_alpha_raw(&rp);
	dcqcn_rp_on_cnp(&rp, 305 * US);
	assert_int_equal(dcqcn_rp_alpha_raw(&rp), a);
	dcqcn_rp_on_timer(&rp, 306 * US);
	a = real_alpha(a, 1);
	assert_int_equal(dcqcn_rp_alpha_raw(&rp), a);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), rc);
	a = real_alpha(real_alpha(a, 0), 0); /* 307, 308 */
	dcqcn_rp_on_timer(&rp, 308 * US + 1);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rc);
	/* rc * a >> 49 with the product below 2^64: rc < 2^37, a < 2^48, so split a. */
	assert_int_equal(dcqcn_rp_rate_bps(&rp),
	                 rc - (((rc * (a >> 24)) + ((rc * (a & 0xffffff)) >> 24)) >> 25));
}

/* The cut RC * alpha >> (rp_gd + rp_alpha_bits - 10) needs up to 91 bits (RC < 2^42 b/s, alpha
 * <= 2^48): worked here with exact integers at the extremes of both ranges. */
static void test_cut_precision(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	const uint64_t line = 4000000 * MBPS; /* 4 Tb/s = 4e12 b/s, the largest line rate */

	(void)state;
	/* 48 bits, alpha = 1, gd 11: exactly half. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 4000000, "rp_alpha_bits=48", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 2);
	/* 48 bits, gd 31 (shift 69): cut = RC * 2^48 / 2^69 = RC / 2^21 = 1907348 b/s (floor). */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 4000000, "rp_alpha_bits=48,rp_gd=31", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line - 1907348);
	/* 48 bits, gd 0 (shift 38): alpha = 1 asks for 1024 x RC, the 50 % cap holds. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 4000000, "rp_alpha_bits=48,rp_gd=0", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line / 2);
	/* Odd alpha: initial 1023/1024 at 48 bits is 1023 << 38; cut = RC * 1023 / 2048 with RC =
	 * 4e12: 4e12 * 1023 / 2048 = 1998046875000 exactly. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 4000000,
	          "rp_alpha_bits=48,rp_initial_alpha_value=1023", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line - 1998046875000ull);
	assert_int_equal(dcqcn_rp_alpha(&rp), 1023); /* the first CNP does not also raise it */
}

/* mlx5 cut form: cut = RC * alpha >> gd, at most (100 - min_dec_fac) %, floor rp_min_rate. */
static void test_cut_cap_and_floor(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	const uint64_t line = 40000 * MBPS;

	(void)state;
	/* gd = 10: alpha 1 would cut all of RC; min_dec_fac 30 keeps 30 %. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_gd=10", "rp_min_dec_fac=30", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line * 30 / 100);
	/* gd = 12 cuts a quarter. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_gd=12", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line - line / 4);
	/* Floor: min rate 25 Gb/s stops the first halving. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_min_rate=25000", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), 25000 * MBPS);
	assert_int_equal(rp.cnt[DCQCN_RP_CNT_rp_min_rate_hits], 1);
	/* rp_max_rate below the line rate is the start rate and the ceiling. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_max_rate=30000", NULL);
	dcqcn_rp_init(&rp, &prof);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), 30000 * MBPS);
	/* initial alpha 512: first cut is a quarter. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_initial_alpha_value=512", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), line - line * 512 / 2048);
	assert_int_equal(dcqcn_rp_alpha(&rp), 512);
}

/* Target clamp rules (mlx5 clamp_tgt_rate, clamp_tgt_rate_after_time_inc). */
static void test_clamp_rules(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	const uint64_t line = 40000 * MBPS;
	uint64_t rc;

	(void)state;
	/* No clamp, no increase between two cuts: RT keeps the line rate. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_clamp_tgt_rate=0", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	dcqcn_rp_on_cnp(&rp, 10 * US);
	assert_int_equal(dcqcn_rp_target_bps(&rp), line);
	/* ... but after a timer increase (ati = 1) the next cut sets RT = RC. */
	dcqcn_rp_on_timer(&rp, 65 * US);
	rc = dcqcn_rp_rate_bps(&rp);
	dcqcn_rp_on_cnp(&rp, 70 * US);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rc);
	/* ati = 0: a timer increase does not clamp. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_clamp_tgt_rate=0",
	          "rp_clamp_tgt_rate_ati=0", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	dcqcn_rp_on_timer(&rp, 55 * US);
	dcqcn_rp_on_cnp(&rp, 60 * US);
	assert_int_equal(dcqcn_rp_target_bps(&rp), line);
	/* ... a byte-counter increase always does. */
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "rp_clamp_tgt_rate=0",
	          "rp_clamp_tgt_rate_ati=0", "rp_byte_reset=1000", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	dcqcn_rp_on_tx(&rp, 1000, 1 * US);
	rc = dcqcn_rp_rate_bps(&rp);
	assert_int_equal(rc, (line + line / 2 + 1) / 2);
	dcqcn_rp_on_cnp(&rp, 2 * US);
	assert_int_equal(dcqcn_rp_target_bps(&rp), rc);
}

/* Recovery to the max rate stops the increase machinery; alpha decays to 0 and stops too, so a
 * recovered flow needs no timer at all. */
static void test_recovery_stops_timers(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_rp rp;
	int steps = 0;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, 0);
	while (dcqcn_rp_next_deadline(&rp) != DCQCN_NEVER && steps < 100000) {
		dcqcn_rp_on_timer(&rp, dcqcn_rp_next_deadline(&rp));
		steps++;
	}
	assert_true(steps < 100000);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), 40000 * MBPS);
	assert_int_equal(dcqcn_rp_target_bps(&rp), 40000 * MBPS);
	assert_int_equal(rp.state, DCQCN_RP_AT_MAX);
	assert_int_equal(dcqcn_rp_alpha(&rp), 0);
	/* With alpha 0 a CNP cuts nothing, but restarts the machinery. */
	dcqcn_rp_on_cnp(&rp, 1000000000);
	assert_int_equal(dcqcn_rp_rate_bps(&rp), 40000 * MBPS);
	assert_int_equal(dcqcn_rp_alpha(&rp), 4); /* 0 * (1 - g) + g */
	assert_true(dcqcn_rp_next_deadline(&rp) != DCQCN_NEVER);
}

/* Deterministic generator for event scripts (no libc rand: same sequence everywhere). */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/*
 * Same profile, same events -> identical trajectory, bit for bit. And the trajectory does not
 * depend on when the host runs the timers: RP a gets on_timer exactly at every deadline, RP b
 * never gets on_timer and catches up inside its event calls.
 */
static void test_determinism(void **state)
{
	(void)state;
	for (unsigned int p = 0; p < DCQCN_PROFILE__COUNT; p++) {
		struct dcqcn_prof prof_a, prof_b;
		struct dcqcn_rp a, b, c;
		uint64_t seed = 12345 + p, t = 0;

		make_prof(&prof_a, p, 100000, NULL);
		make_prof(&prof_b, p, 100000, NULL);
		dcqcn_rp_init(&a, &prof_a);
		dcqcn_rp_init(&b, &prof_b);
		dcqcn_rp_init(&c, &prof_a);
		for (int i = 0; i < 20000; i++) {
			uint64_t r = lcg(&seed);

			t += r % (20 * US);
			while (dcqcn_rp_next_deadline(&a) <= t)
				dcqcn_rp_on_timer(&a, dcqcn_rp_next_deadline(&a));
			if (r % 16 == 0) {
				dcqcn_rp_on_cnp(&a, t);
				dcqcn_rp_on_cnp(&b, t);
				dcqcn_rp_on_cnp(&c, t);
			} else {
				uint32_t bytes = (uint32_t)(64 + r % 9000) * 100;

				dcqcn_rp_on_tx(&a, bytes, t);
				dcqcn_rp_on_tx(&b, bytes, t);
				dcqcn_rp_on_tx(&c, bytes, t);
			}
			assert_int_equal(a.rc_bps, b.rc_bps);
			assert_int_equal(a.rt_bps, b.rt_bps);
			assert_int_equal(a.alpha, b.alpha);
			assert_int_equal(a.t_stage, b.t_stage);
			assert_int_equal(a.bc_stage, b.bc_stage);
			assert_int_equal(a.next_deadline, b.next_deadline);
			assert_int_equal(b.rc_bps, c.rc_bps);
		}
		assert_memory_equal(a.cnt, b.cnt, sizeof(a.cnt));
		assert_true(a.cnt[DCQCN_RP_CNT_rp_rate_cuts] > 0);
	}
}

/* ---- notification point ---- */

static void test_np_pacing(void **state)
{
	struct dcqcn_prof prof;
	struct dcqcn_np np;

	(void)state;
	make_prof(&prof, DCQCN_PROFILE_MLX5_CX5, 100000, NULL); /* 4 us gap */
	dcqcn_np_init(&np, &prof);
	assert_true(dcqcn_np_on_ce(&np, 1000));
	assert_false(dcqcn_np_on_ce(&np, 1000));
	assert_false(dcqcn_np_on_ce(&np, 4999));
	assert_true(dcqcn_np_on_ce(&np, 5000));
	assert_true(dcqcn_np_on_ce(&np, 100000));
	assert_int_equal(np.cnt[DCQCN_NP_CNT_np_ecn_marked_roce_packets], 5);
	assert_int_equal(np.cnt[DCQCN_NP_CNT_np_cnp_sent], 3);
	assert_int_equal(np.cnt[DCQCN_NP_CNT_np_cnp_suppressed], 2);
	assert_int_equal(dcqcn_np_cnp_dscp(&np), 48);
	assert_int_equal(dcqcn_np_cnp_prio(&np), 6);

	make_prof(&prof, DCQCN_PROFILE_PAPER, 40000, "np_min_time_between_cnps=0", "np_cnp_dscp=26",
	          "np_cnp_prio=3", NULL);
	dcqcn_np_init(&np, &prof);
	for (int i = 0; i < 10; i++)
		assert_true(dcqcn_np_on_ce(&np, 7));
	assert_int_equal(dcqcn_np_cnp_dscp(&np), 26);
	assert_int_equal(dcqcn_np_cnp_prio(&np), 3);
	for (unsigned int i = 0; i < DCQCN_NP_CNT__COUNT; i++)
		assert_non_null(dcqcn_np_counter_name(i));
	assert_string_equal(dcqcn_np_counter_name(DCQCN_NP_CNT_np_cnp_sent), "np_cnp_sent");
	assert_string_equal(dcqcn_rp_counter_name(DCQCN_RP_CNT_rp_cnp_handled), "rp_cnp_handled");
	assert_string_equal(dcqcn_rp_counter_name(DCQCN_RP_CNT_rp_cnp_ignored), "rp_cnp_ignored");
	assert_null(dcqcn_rp_counter_name(DCQCN_RP_CNT__COUNT));
}

/* ---- every parameter has a visible effect ---- */

#define DIGEST_MAX 4096

struct digest {
	uint64_t v[DIGEST_MAX];
	unsigned int n;
};

static void dput(struct digest *d, uint64_t x)
{
	if (d->n < DIGEST_MAX)
		d->v[d->n++] = x;
}

/* A scenario that reaches every part of the machine: first CNP, CNPs 10 us apart (monitor
 * period, clamp), a CNP after a timer increase, 3 ms of traffic at 40 KB/us with timers running
 * (byte counter, all three stages), and an NP fed CE marks. */
static void run_scenario(const struct dcqcn_prof *prof, struct digest *d)
{
	struct dcqcn_rp rp;
	struct dcqcn_np np;

	memset(d, 0, sizeof(*d));
	dcqcn_rp_init(&rp, prof);
	dcqcn_np_init(&np, prof);
	dput(d, prof->scope);
	dput(d, dcqcn_np_cnp_dscp(&np));
	dput(d, dcqcn_np_cnp_prio(&np));
	dput(d, rp.rc_bps);
	for (uint64_t t = 0; t <= 3000 * US; t += 1 * US) {
		if (t == 0 || t == 100 * US || t == 110 * US || t == 180 * US)
			dcqcn_rp_on_cnp(&rp, t);
		dcqcn_rp_on_tx(&rp, 40960, t);
		if (t % (10 * US) == 0) {
			dput(d, rp.rc_bps);
			dput(d, rp.rt_bps);
			dput(d, rp.alpha);
			dput(d, rp.state);
			dput(d, rp.next_deadline);
		}
		if (t < 200 * US && t % (5 * US) == 0)
			dput(d, dcqcn_np_on_ce(&np, t));
	}
}

static void test_every_param_has_an_effect(void **state)
{
	/* For each parameter: a value different from the base (paper) and, where the parameter
	 * only matters together with another, that companion setting applied to both runs. */
	static const struct {
		const char *name, *value, *companion;
	} alt[] = {
	    {"rp_scope", "port", NULL},
	    {"rp_time_reset", "100", NULL},
	    {"rp_byte_reset", "1000000", NULL},
	    {"rp_threshold", "1", NULL},
	    {"rp_ai_rate", "400", "rp_rate_to_set_on_first_cnp=10000"},
	    {"rp_hai_rate", "1000", NULL},
	    {"rp_hai_scale", "0", NULL},
	    {"rp_min_rate", "25000", NULL},
	    {"rp_max_rate", "30000", NULL},
	    {"rp_min_dec_fac", "90", NULL},
	    {"rp_gd", "12", NULL},
	    {"rp_rate_to_set_on_first_cnp", "10000", NULL},
	    {"rp_initial_alpha_value", "512", NULL},
	    {"rp_dce_tcp_g", "960", NULL},
	    {"rp_dce_tcp_rtt", "20", NULL},
	    {"rp_alpha_bits", "10", NULL},
	    {"rp_alpha_round", "down", NULL},
	    {"rp_alpha_grid", "1",
	     "rp_alpha_on_cnp=0,rp_alpha_bits=10,rp_alpha_round=0,rp_dce_tcp_g=512,"
	     "rp_dce_tcp_rtt=7"},
	    {"rp_rate_reduce_grid", "1",
	     "rp_rate_reduce_monitor_period=30,rp_rate_reduce_immediate=0"},
	    {"rp_rate_reduce_offset", "500",
	     "rp_rate_reduce_monitor_period=30,rp_rate_reduce_immediate=0,rp_rate_reduce_grid=1"},
	    {"rp_alpha_on_cnp", "0", NULL},
	    {"rp_rate_reduce_monitor_period", "50", NULL},
	    {"rp_rate_reduce_immediate", "0", "rp_rate_reduce_monitor_period=50"},
	    {"rp_clamp_tgt_rate", "0", NULL},
	    {"rp_clamp_tgt_rate_ati", "0", "rp_clamp_tgt_rate=0"},
	    {"np_min_time_between_cnps", "4", NULL},
	    {"np_cnp_dscp", "26", NULL},
	    {"np_cnp_prio", "3", NULL},
	};
	static struct digest base, changed;
	bool covered[DCQCN_PARAM__COUNT] = {false};

	(void)state;
	for (unsigned int i = 0; i < sizeof(alt) / sizeof(alt[0]); i++) {
		struct dcqcn_prof pb, pc;
		char kv[128];
		int id = dcqcn_param_lookup(alt[i].name);

		assert_true(id >= 0);
		covered[id] = true;
		snprintf(kv, sizeof(kv), "%s=%s", alt[i].name, alt[i].value);
		make_prof(&pb, DCQCN_PROFILE_PAPER, 40000, alt[i].companion, NULL);
		make_prof(&pc, DCQCN_PROFILE_PAPER, 40000, alt[i].companion ? alt[i].companion : kv,
		          alt[i].companion ? kv : NULL, NULL);
		run_scenario(&pb, &base);
		run_scenario(&pc, &changed);
		if (base.n == changed.n &&
		    memcmp(base.v, changed.v, base.n * sizeof(base.v[0])) == 0)
			fail_msg("%s=%s changed nothing in the scenario", alt[i].name,
			         alt[i].value);
	}
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++)
		if (!covered[i])
			fail_msg("parameter %s has no effect test", dcqcn_param_info(i)->name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_profile_validates),
	    cmocka_unit_test(test_param_table),
	    cmocka_unit_test(test_set_by_name),
	    cmocka_unit_test(test_every_param_rejects_out_of_range),
	    cmocka_unit_test(test_cross_param_rules),
	    cmocka_unit_test(test_paper_first_cnp_at_line_rate),
	    cmocka_unit_test(test_paper_alpha_decay_over_silence),
	    cmocka_unit_test(test_paper_five_timer_events),
	    cmocka_unit_test(test_paper_byte_counter_stages),
	    cmocka_unit_test(test_paper_both_counters),
	    cmocka_unit_test(test_cnp_inside_monitor_period),
	    cmocka_unit_test(test_hpcc_ns3_first_cut),
	    cmocka_unit_test(test_cut_cap_and_floor),
	    cmocka_unit_test(test_cut_precision),
	    cmocka_unit_test(test_clamp_rules),
	    cmocka_unit_test(test_recovery_stops_timers),
	    cmocka_unit_test(test_determinism),
	    cmocka_unit_test(test_np_pacing),
	    cmocka_unit_test(test_every_param_has_an_effect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
