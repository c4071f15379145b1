/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the pacer maths, TIMELY and the rate-machine dispatch (cc/cc.h). Expected values
 * come from the formulas (token bucket; TIMELY SIGCOMM'15 Algorithm 1), worked in the test.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cc/cc.h"
#include "cc/pacer.h"

#define US 1000ull

/* ---- pacer ---- */

static void test_pacer_strict_spacing(void **state)
{
	struct cc_pacer p;

	(void)state;
	/* 8000 kb/s = 1 byte per us: a 1000-byte packet takes 1 ms on the wire. */
	cc_pacer_init(&p, 0);
	for (uint64_t i = 0; i < 5; i++)
		assert_int_equal(cc_pacer_depart(&p, 0, 1000, 8000), i * 1000000);
	/* A packet ready later than its slot leaves when ready. */
	assert_int_equal(cc_pacer_depart(&p, 9000000, 1000, 8000), 9000000);
	assert_int_equal(cc_pacer_depart(&p, 9000000, 1000, 8000), 10000000);
}

static void test_pacer_bounded_burst(void **state)
{
	struct cc_pacer p;

	(void)state;
	/* Bucket of 2.5 packet times: floor(2.5) + 1 = 3 packets leave back to back after idle. */
	cc_pacer_init(&p, 2500000);
	for (int round = 0; round < 2; round++) {
		uint64_t now = 10000000000ull * (uint64_t)(round + 1); /* long idle before */

		assert_int_equal(cc_pacer_depart(&p, now, 1000, 8000), now);
		assert_int_equal(cc_pacer_depart(&p, now, 1000, 8000), now);
		assert_int_equal(cc_pacer_depart(&p, now, 1000, 8000), now);
		/* 4th: bucket empty, it waits until tat - burst = now + 3 ms - 2.5 ms */
		assert_int_equal(cc_pacer_depart(&p, now, 1000, 8000), now + 500000);
		assert_int_equal(cc_pacer_depart(&p, now, 1000, 8000), now + 1500000);
	}
}

static void test_pacer_exact_long_run_rate(void **state)
{
	struct cc_pacer p;
	uint64_t d = 0;

	(void)state;
	/* 3 kb/s and 1-byte packets: 8/3 ms each, not an integer number of ns. With the
	 * remainder carried, departure i is exactly floor(i * 8e6 / 3) ns: no drift. */
	cc_pacer_init(&p, 0);
	for (uint64_t i = 0; i <= 300; i++) {
		d = cc_pacer_depart(&p, 0, 1, 3);
		assert_int_equal(d, i * 8000000 / 3);
	}
	/* Rate change: 4096 B take 327.68 ns at 100 Gb/s, then 655.36 ns at 50 Gb/s; the third
	 * packet leaves at floor(327.68 + 655.36) = 983 ns, the fourth at floor(1638.40). */
	cc_pacer_init(&p, 0);
	assert_int_equal(cc_pacer_depart(&p, 0, 4096, 100000000), 0);
	assert_int_equal(cc_pacer_depart(&p, 0, 4096, 50000000), 327);
	assert_int_equal(cc_pacer_depart(&p, 0, 4096, 50000000), 983);
	assert_int_equal(cc_pacer_depart(&p, 0, 4096, 50000000), 1638);
}

/* ---- TIMELY ---- */

static void make_timely(struct timely_prof *prof, uint32_t line, ...)
{
	struct timely_params p;
	char msg[256];
	va_list ap;
	const char *kv;

	timely_params_init(&p);
	va_start(ap, line);
	while ((kv = va_arg(ap, const char *)) != NULL) {
		char buf[128], *eq;

		snprintf(buf, sizeof(buf), "%s", kv);
		eq = strchr(buf, '=');
		*eq = '\0';
		if (timely_param_set_msg(&p, buf, eq + 1, msg, sizeof(msg)) != 0)
			fail_msg("%s", msg);
	}
	va_end(ap);
	if (timely_prof_config(prof, &p, line, msg, sizeof(msg)) != 0)
		fail_msg("%s", msg);
}

static void test_timely_defaults_are_erpc(void **state)
{
	struct timely_params p;

	(void)state;
	timely_params_init(&p);
	assert_int_equal(p.timely_t_low, 50);
	assert_int_equal(p.timely_t_high, 1000);
	assert_int_equal(p.timely_hai_thresh, 5);
	assert_true(fabs(p.timely_ewma / 1024.0 - 0.02) < 0.001);
	assert_true(fabs(p.timely_beta / 1024.0 - 0.8) < 0.001);
	assert_int_equal(p.timely_add_rate, 40);    /* 5 MB/s */
	assert_int_equal(p.timely_max_rate, 40000); /* 5 GB/s */
}

static void test_timely_high_and_low_rtt(void **state)
{
	struct timely_prof prof;
	struct timely t;
	uint64_t r;
	uint64_t f;

	(void)state;
	make_timely(&prof, 100000, NULL);
	timely_init(&t, &prof);
	r = 40000000; /* max: 40 Gb/s */
	assert_int_equal(timely_rate_kbps(&t), r);

	/* RTT 2 ms > T_high 1 ms: rate *= 1 - beta (1 - T_high / rtt) = 1 - 0.8 * 0.5 = 0.6 */
	timely_on_rtt(&t, 2000 * US, 0);
	f = 819 * (2000 - 1000) / 2000; /* beta (1 - T_high/rtt) in 1/1024 */
	r = r - (r * f >> 10);
	assert_int_equal(timely_rate_kbps(&t), r);
	assert_true(fabs((double)r / 40000000.0 - 0.6) < 0.001);

	/* RTT 10 us < T_low: + delta (5 MB/s = 40 Mb/s) */
	timely_on_rtt(&t, 10 * US, 1);
	r += 40000;
	assert_int_equal(timely_rate_kbps(&t), r);

	/* Floor: repeated 10 ms RTTs (factor 0.8 * 0.9 = 0.72 each) end at 5 MB/s. */
	for (int i = 0; i < 100; i++)
		timely_on_rtt(&t, 10000 * US, 2);
	assert_int_equal(timely_rate_kbps(&t), 40000);
	assert_int_equal(t.cnt[TIMELY_CNT_timely_high_rtt_dec], 101);
	assert_int_equal(t.cnt[TIMELY_CNT_timely_low_rtt_inc], 1);
}

/* Absurd RTT samples (a broken timestamp) are clamped to 10 s, not allowed to overflow the
 * gradient maths: found by the cc_script fuzz target. */
static void test_timely_absurd_rtt_clamped(void **state)
{
	struct timely_prof prof;
	struct timely t, u;

	(void)state;
	make_timely(&prof, 100000, NULL);
	timely_init(&t, &prof);
	timely_init(&u, &prof);
	timely_on_rtt(&t, 20 * US, 0);
	timely_on_rtt(&u, 20 * US, 0);
	timely_on_rtt(&t, 9001111111110211100ull, 1);
	timely_on_rtt(&u, 10000000000ull, 1);
	assert_int_equal(t.cnt[TIMELY_CNT_timely_rtt_clamped], 1);
	assert_int_equal(u.cnt[TIMELY_CNT_timely_rtt_clamped], 0);
	/* Same state as a sample of exactly the clamp value. */
	assert_int_equal(timely_rate_kbps(&t), timely_rate_kbps(&u));
	assert_true(t.rtt_diff_ns == u.rtt_diff_ns);
	timely_on_rtt(&t, 20 * US, 2);
	timely_on_rtt(&u, 20 * US, 2);
	assert_int_equal(timely_rate_kbps(&t), timely_rate_kbps(&u));
	assert_true(timely_rate_kbps(&t) >= 40000);
}

static void test_timely_gradient(void **state)
{
	struct timely_prof prof;
	struct timely t;
	uint64_t r;

	(void)state;
	/* No smoothing (ewma 1.0) and minRTT 20 us so the gradient is easy to work by hand. */
	make_timely(&prof, 100000, "timely_ewma=1024", "timely_min_rtt=20", NULL);
	timely_init(&t, &prof);
	timely_on_rtt(&t, 2000 * US, 0); /* to 0.6 of max, as above */
	r = timely_rate_kbps(&t);

	/* In band, gradient <= 0: +delta for the first four, +5 delta from the fifth. */
	for (int i = 1; i <= 6; i++) {
		timely_on_rtt(&t, 100 * US, (uint64_t)i);
		r += (i >= 5 ? 5 : 1) * 40000ull;
		assert_int_equal(timely_rate_kbps(&t), r);
	}
	assert_int_equal(t.cnt[TIMELY_CNT_timely_hai_inc], 2);
	/* RTT up by 10 us: gradient = 10 / 20 = 0.5, rate *= 1 - 0.8 * 0.5 */
	timely_on_rtt(&t, 110 * US, 7);
	r = r - (r * (819 * 512 >> 10) >> 10);
	assert_int_equal(timely_rate_kbps(&t), r);
	/* ... which resets the negative-gradient count: the next flat sample adds one delta. */
	timely_on_rtt(&t, 110 * US, 8);
	r += 40000;
	assert_int_equal(timely_rate_kbps(&t), r);

	/* Default EWMA 0.02 smooths: one +10 us step moves rtt_diff by 0.02 * 10 us only. */
	make_timely(&prof, 100000, NULL);
	timely_init(&t, &prof);
	timely_on_rtt(&t, 100 * US, 0);
	timely_on_rtt(&t, 110 * US, 1);
	assert_int_equal(t.rtt_diff_ns, 20 * 10000 / 1024);
}

static void test_timely_params_rejected_by_name(void **state)
{
	struct timely_params p;
	struct timely_prof prof;
	char msg[256];

	(void)state;
	timely_params_init(&p);
	assert_int_equal(timely_param_set_msg(&p, "timely_beta", "2000", msg, sizeof(msg)),
	                 -ERANGE);
	assert_string_equal(msg, "timely_beta: 2000 out of range 0..1024");
	assert_int_equal(timely_param_set_msg(&p, "timely_nope", "1", msg, sizeof(msg)), -ENOENT);
	p.timely_t_low = 2000;
	assert_int_equal(timely_prof_config(&prof, &p, 100000, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "timely_t_low"));
}

/* ---- dispatch ---- */

static void test_cc_dispatch(void **state)
{
	struct dcqcn_params dp;
	struct dcqcn_prof dprof;
	struct timely_prof tprof;
	struct cc_flow f;
	struct dcqcn_rp direct;

	(void)state;
	assert_string_equal(cc_algo_name(CC_ALGO_DCQCN), "dcqcn");
	assert_int_equal(cc_algo_lookup("timely"), CC_ALGO_TIMELY);
	assert_int_equal(cc_algo_lookup("bbr"), -ENOENT);

	/* The DCQCN flow behind the interface is the same machine as a direct one. */
	dcqcn_params_init(&dp, DCQCN_PROFILE_MLX5_CX5);
	assert_int_equal(dcqcn_prof_config(&dprof, &dp, 100000, NULL, 0), 0);
	cc_flow_init_dcqcn(&f, &dprof);
	dcqcn_rp_init(&direct, &dprof);
	for (uint64_t t = 0; t < 2000 * US; t += 3 * US) {
		if (t % (90 * US) == 0) {
			cc_on_cnp(&f, t);
			dcqcn_rp_on_cnp(&direct, t);
		}
		cc_on_tx(&f, 4096, t);
		dcqcn_rp_on_tx(&direct, 4096, t);
		cc_on_rtt(&f, 5 * US, t); /* DCQCN ignores RTT samples */
		assert_int_equal(cc_rate_kbps(&f), dcqcn_rp_rate_kbps(&direct));
		assert_int_equal(cc_next_deadline(&f), dcqcn_rp_next_deadline(&direct));
	}
	assert_true(cc_rate_kbps(&f) < 100000000);

	/* TIMELY ignores CNPs (counted) and has no timers. */
	make_timely(&tprof, 100000, NULL);
	cc_flow_init_timely(&f, &tprof);
	cc_on_cnp(&f, 0);
	cc_on_tx(&f, 4096, 0);
	cc_on_timer(&f, 0);
	assert_int_equal(cc_rate_kbps(&f), 40000000);
	assert_int_equal(cc_next_deadline(&f), UINT64_MAX);
	assert_int_equal(f.u.timely.cnt[TIMELY_CNT_timely_cnp_ignored], 1);
	cc_on_rtt(&f, 2000 * US, 1);
	assert_true(cc_rate_kbps(&f) < 40000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pacer_strict_spacing),
	    cmocka_unit_test(test_pacer_bounded_burst),
	    cmocka_unit_test(test_pacer_exact_long_run_rate),
	    cmocka_unit_test(test_timely_defaults_are_erpc),
	    cmocka_unit_test(test_timely_high_and_low_rtt),
	    cmocka_unit_test(test_timely_gradient),
	    cmocka_unit_test(test_timely_absurd_rtt_clamped),
	    cmocka_unit_test(test_timely_params_rejected_by_name),
	    cmocka_unit_test(test_cc_dispatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
