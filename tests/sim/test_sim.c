/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport through the simulator (tools/sim): every operation x message size x path MTU,
 * PSN wrap, loss / reorder / duplicate / corrupt mixes, a dead link, determinism. Every run
 * verifies every byte delivered (sim.c's workload); these tests check the verdicts and that
 * the impairments really happened, so a pass cannot come from a quiet network.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim.h"

/* The transport mode the shared scenarios run in (the *_sr tests set it). */
static bool g_sr;

static struct rfw_sim_cfg base(void)
{
	struct rfw_sim_cfg c;

	rfw_sim_cfg_default(&c);
	c.timeout = 8; /* 1 ms: keeps lossy runs short in simulated time */
	c.sr = g_sr;
	return c;
}

static void expect_clean(const struct rfw_sim_cfg *c, const struct rfw_sim_result *r)
{
	if (!r->completed)
		print_message("op %d size %llu mtu %u loss %g: %s (completed %llu/%llu)\n", c->op,
		              (unsigned long long)c->size, c->mtu, c->loss, r->first_error,
		              (unsigned long long)r->messages_completed,
		              (unsigned long long)c->messages);
	assert_true(r->completed);
	assert_int_equal(r->messages_posted, c->messages);
	assert_int_equal(r->messages_completed, c->messages);
	assert_int_equal(r->corrupt, 0);
	assert_int_equal(r->duplicates_delivered, 0);
	assert_int_equal(r->error_completions, 0);
}

/* Every operation, sizes around the MTU and 64 KiB, 1 MiB, for each path MTU. */
static void test_ops_sizes_mtus(void **s)
{
	static const enum rfw_sim_op ops[] = {RFW_SIM_WRITE, RFW_SIM_READ, RFW_SIM_SEND};
	static const uint32_t mtus[] = {256, 512, 1024, 2048, 4096};

	(void)s;
	for (size_t mi = 0; mi < 5; mi++) {
		uint32_t m = mtus[mi];
		const uint64_t sizes[] = {0, 1, m - 1, m, m + 1, 65535, 65536, 65537, 1u << 20};

		for (size_t oi = 0; oi < 3; oi++)
			for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
				struct rfw_sim_cfg c = base();
				struct rfw_sim_result r;

				c.op = ops[oi];
				c.mtu = m;
				c.size = sizes[si];
				c.messages = sizes[si] >= (1u << 20) ? 2 : 6;
				c.depth = 3;
				assert_int_equal(rfw_sim_run(&c, &r), 0);
				expect_clean(&c, &r);
				assert_int_equal(r.bytes_verified, c.size * c.messages);
				/* A clean network needs no recovery. */
				assert_int_equal(r.retransmitted_packets, 0);
				assert_int_equal(r.timeouts, 0);
			}
		struct rfw_sim_cfg c = base();
		struct rfw_sim_result r;

		c.op = RFW_SIM_ATOMIC;
		c.mtu = m;
		c.messages = 20;
		assert_int_equal(rfw_sim_run(&c, &r), 0);
		expect_clean(&c, &r);
	}
}

/* Several QPs share the links; every one completes. */
static void test_many_qps(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	(void)s;
	c.qps = 8;
	c.messages = 64;
	c.size = 20000;
	c.loss = 0.01;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	assert_true(r.frames_lost > 0);
}

/* Start PSN 0xFFFFF0 and thousands of packets across the wrap, with losses around it. */
static void test_psn_wrap(void **s)
{
	static const enum rfw_sim_op ops[] = {RFW_SIM_WRITE, RFW_SIM_READ, RFW_SIM_SEND};

	(void)s;
	for (size_t i = 0; i < 3; i++) {
		struct rfw_sim_cfg c = base();
		struct rfw_sim_result r;

		c.op = ops[i];
		c.start_psn = 0xfffff0;
		c.mtu = 256;
		c.size = 4096; /* 16 packets a message */
		c.messages = 400;
		c.loss = 0.005;
		assert_int_equal(rfw_sim_run(&c, &r), 0);
		expect_clean(&c, &r);
		/* Thousands of data packets, so the wrap is crossed by far. */
		assert_true(r.cnt[RFW_CNT_tx_packets] > 6400);
		assert_true(r.frames_lost > 0);
		assert_true(r.retransmitted_packets > 0);
	}
}

struct mix {
	double loss, reorder, dup, corrupt, burst;
};

static void run_mix(enum rfw_sim_op op, const struct mix *m, uint64_t size, uint64_t msgs)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	c.op = op;
	c.size = size;
	c.messages = msgs;
	c.depth = 8;
	c.loss = m->loss;
	c.reorder = m->reorder;
	c.dup = m->dup;
	c.corrupt = m->corrupt;
	c.burst_loss = m->burst;
	c.seed = 42;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	/* The impairments asked for did happen, and were recovered from. */
	/* (checked where at least 5 events are expected, so a short run cannot flake) */
	if ((m->loss + m->burst) * (double)r.frames_sent >= 5)
		assert_true(r.frames_lost > 0);
	if (m->dup * (double)r.frames_sent >= 5)
		assert_true(r.frames_duplicated > 0);
	if (m->reorder * (double)r.frames_sent >= 5)
		assert_true(r.frames_reordered > 0);
	if (m->corrupt * (double)r.frames_sent >= 5) {
		assert_true(r.frames_corrupted > 0);
		assert_true(r.icrc_drops + r.parse_drops > 0);
	}
	if (r.frames_lost + r.icrc_drops > 0)
		assert_true(r.retransmitted_packets > 0 || r.cnt[RFW_CNT_read_replays] > 0 ||
		            r.cnt[RFW_CNT_atomic_replays] > 0);
}

static void test_loss_levels(void **s)
{
	static const double losses[] = {0.001, 0.01, 0.05};

	(void)s;
	for (size_t i = 0; i < 3; i++) {
		struct mix m = {.loss = losses[i]};

		run_mix(RFW_SIM_WRITE, &m, 65536, 60);
		run_mix(RFW_SIM_READ, &m, 65536, 60);
		run_mix(RFW_SIM_SEND, &m, 10000, 200);
		run_mix(RFW_SIM_ATOMIC, &m, 8, 500);
		run_mix(RFW_SIM_MIX, &m, 20000, 200);
	}
}

/* Loss, reorder, duplicates and corruption all at once. */
static void test_impairment_mix(void **s)
{
	static const struct mix mixes[] = {
	    {.loss = 0.01, .reorder = 0.01, .dup = 0.01, .corrupt = 0.01},
	    {.loss = 0.001, .reorder = 0.05, .dup = 0.05, .corrupt = 0.001},
	    {.loss = 0.05, .reorder = 0.02, .dup = 0.02, .corrupt = 0.02},
	    {.burst = 0.002, .reorder = 0.01},
	};

	(void)s;
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		run_mix(RFW_SIM_WRITE, &mixes[i], 32768, 60);
		run_mix(RFW_SIM_READ, &mixes[i], 32768, 60);
		run_mix(RFW_SIM_SEND, &mixes[i], 3000, 200);
		run_mix(RFW_SIM_ATOMIC, &mixes[i], 8, 300);
		run_mix(RFW_SIM_MIX, &mixes[i], 6000, 300);
	}
}

/* A dead link: retries run out, the first WQE fails with retry exceeded, the rest flush. */
static void test_dead_link(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	(void)s;
	c.loss = 1.0;
	c.qps = 2;
	c.messages = 10;
	c.retry_cnt = 2;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	assert_false(r.completed);
	assert_int_equal(r.messages_completed, 0);
	assert_int_equal(r.cnt[RFW_CNT_retry_exceeded], 2);
	/* Per QP: the original and 2 retries each ended by a timeout. */
	assert_int_equal(r.timeouts, 2 * 3);
	/* Per QP depth 4: one RETRY_EXC_ERR, three flushed. */
	assert_int_equal(r.error_completions, 2);
	assert_int_equal(r.flushed_completions, 2 * 3);
	assert_int_equal(r.cnt[RFW_CNT_req_cqe_error], 2);
	assert_int_equal(r.cnt[RFW_CNT_req_cqe_flush_error], 2 * 3);
	assert_non_null(strstr(r.first_error, "retry counter exceeded"));
}

/* Same seed, same result bit for bit; another seed, another run. */
static void test_determinism(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result a, b, d;

	(void)s;
	c.loss = 0.01;
	c.reorder = 0.01;
	c.dup = 0.01;
	c.corrupt = 0.01;
	c.messages = 40;
	c.qps = 2;
	assert_int_equal(rfw_sim_run(&c, &a), 0);
	assert_int_equal(rfw_sim_run(&c, &b), 0);
	assert_true(a.completed && b.completed);
	assert_int_equal(a.sim_time_ns, b.sim_time_ns);
	assert_int_equal(a.events, b.events);
	assert_int_equal(a.frames_lost, b.frames_lost);
	assert_memory_equal(a.cnt, b.cnt, sizeof(a.cnt));
	c.seed = 2;
	assert_int_equal(rfw_sim_run(&c, &d), 0);
	assert_true(d.completed);
	assert_true(d.sim_time_ns != a.sim_time_ns || memcmp(d.cnt, a.cnt, sizeof(a.cnt)) != 0);
}

/* Clean WRITE at 100 Gb/s: goodput near the line-rate bound, never above it. */
static void test_goodput_bound(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;
	double wire, bound;

	(void)s;
	c.size = 1 << 20;
	c.messages = 20;
	c.depth = 8;
	c.mtu = 4096;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	wire = (double)c.size + 256.0 * (14 + 20 + 8 + 12 + 4 + 24) + 16;
	bound = 100.0 * (double)c.size / wire;
	assert_true(r.goodput_gbps <= bound + 1e-6);
	assert_true(r.goodput_gbps > 0.8 * bound);
}

/* CE marks on the link reach the notification point; its CNPs reach the reaction point. */
static void test_ce_cnp(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	(void)s;
	c.ce = 0.05;
	c.messages = 40;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	assert_true(r.frames_ce_marked > 0);
	assert_true(r.cnt[RFW_CNT_np_ecn_marked_roce_packets] > 0);
	assert_true(r.cnt[RFW_CNT_np_ecn_marked_roce_packets] <= r.frames_ce_marked);
	assert_true(r.cnt[RFW_CNT_np_cnp_sent] > 0);
	/* At most one CNP per 4 us per QP (the built-in NP's min_time_between_cnps). */
	assert_true(r.cnt[RFW_CNT_np_cnp_sent] <= r.sim_time_ns / 4000 + 1);
	/* No loss: every CNP sent is handled. */
	assert_int_equal(r.cnt[RFW_CNT_rp_cnp_handled], r.cnt[RFW_CNT_np_cnp_sent]);
}

static void test_config(void **s)
{
	struct rfw_sim_cfg c;

	(void)s;
	rfw_sim_cfg_default(&c);
	assert_int_equal(rfw_sim_set(&c, "op", "read"), 0);
	assert_int_equal(c.op, RFW_SIM_READ);
	assert_int_equal(rfw_sim_set(&c, "op", "bogus"), -EINVAL);
	assert_int_equal(rfw_sim_set(&c, "loss", "1.5"), -EINVAL);
	assert_int_equal(rfw_sim_set(&c, "loss", "0.25"), 0);
	assert_true(c.loss == 0.25);
	assert_int_equal(rfw_sim_set(&c, "start-psn", "0x1000000"), -EINVAL);
	assert_int_equal(rfw_sim_set(&c, "start-psn", "0xfffff0"), 0);
	assert_int_equal(rfw_sim_set(&c, "nope", "1"), -ENOENT);
	assert_int_equal(rfw_sim_set(&c, "mtu", "1000"), 0);
	assert_non_null(rfw_sim_validate(&c));
	assert_int_equal(rfw_sim_set(&c, "mtu", "2048"), 0);
	assert_null(rfw_sim_validate(&c));
	assert_int_equal(rfw_sim_set(&c, "transport", "sr"), 0);
	assert_null(rfw_sim_validate(&c));
	assert_true(c.sr);
	/* One end sr, the other gbn: refused at setup, with the reason. */
	assert_int_equal(rfw_sim_set(&c, "peer-transport", "gbn"), 0);
	assert_non_null(rfw_sim_validate(&c));
	assert_non_null(strstr(rfw_sim_validate(&c), "mismatch"));
	assert_int_equal(rfw_sim_set(&c, "peer-transport", "sr"), 0);
	assert_null(rfw_sim_validate(&c));
	assert_int_equal(rfw_sim_set(&c, "sr-window", "100"), 0);
	assert_non_null(rfw_sim_validate(&c));
	assert_int_equal(rfw_sim_set(&c, "sr-window", "1024"), 0);
	assert_null(rfw_sim_validate(&c));
	assert_int_equal(rfw_sim_set(&c, "peer-transport", "rxe"), -EINVAL);
}

/* ---- the same scenarios in selective-repeat mode (docs/transport-sr.md) ---- */

static void test_ops_sizes_mtus_sr(void **s)
{
	g_sr = true;
	test_ops_sizes_mtus(s);
	g_sr = false;
}

static void test_psn_wrap_sr(void **s)
{
	g_sr = true;
	test_psn_wrap(s);
	g_sr = false;
}

static void test_loss_levels_sr(void **s)
{
	g_sr = true;
	test_loss_levels(s);
	g_sr = false;
}

static void test_impairment_mix_sr(void **s)
{
	g_sr = true;
	test_impairment_mix(s);
	g_sr = false;
}

static void test_many_qps_sr(void **s)
{
	g_sr = true;
	test_many_qps(s);
	g_sr = false;
}

static double goodput(bool sr, double loss, uint64_t *timeouts)
{
	struct rfw_sim_cfg c;
	struct rfw_sim_result r;

	rfw_sim_cfg_default(&c); /* 100 Gb/s, RTT 10 us, MTU 1024 */
	c.sr = sr;
	c.op = RFW_SIM_WRITE;
	c.size = 1u << 20;
	c.messages = 32;
	c.loss = loss;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	assert_int_equal(r.bytes_verified, c.size * c.messages);
	if (timeouts)
		*timeouts = r.timeouts;
	return r.goodput_gbps;
}

/*
 * The "done when": 100 Gb/s, RTT 10 us, MTU 1024, 1 MiB WRITEs. At 1 % random loss sr
 * keeps >= 0.85 of its loss-free goodput and >= 2 x gbn's; at 0 loss sr is within 3 % of gbn.
 */
static void test_done_when_sr_vs_gbn(void **s)
{
	double sr0 = goodput(true, 0, NULL), gbn0 = goodput(false, 0, NULL);
	double sr1 = goodput(true, 0.01, NULL), gbn1 = goodput(false, 0.01, NULL);

	(void)s;
	print_message("goodput Gb/s: sr %.2f / %.2f, gbn %.2f / %.2f (loss 0 / 1%%)\n", sr0, sr1,
	              gbn0, gbn1);
	assert_true(sr1 >= 0.85 * sr0);
	assert_true(sr1 >= 2 * gbn1);
	assert_true(sr0 >= 0.97 * gbn0);
}

/*
 * A dead link in sr: the retries run out as in gbn. retry_cnt is charged once per local ACK
 * timeout without progress (IBA 9.7.6.1.3), while RTO_low / RTO_high expire (backing off) in
 * between: at least retry_cnt + 1 expiries.
 */
static void test_dead_link_sr(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	(void)s;
	c.sr = true;
	c.loss = 1;
	c.messages = 3;
	c.retry_cnt = 2;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	assert_false(r.completed);
	assert_int_equal(r.error_completions, 1);
	assert_int_equal(r.messages_completed, 0);
	assert_non_null(strstr(r.first_error, "retry counter exceeded"));
	assert_true(r.cnt[RFW_CNT_local_ack_timeout_err] >= 3);
	assert_true(r.cnt[RFW_CNT_retry_exceeded] == 1);
}

/* --skip-mode-check: the transport itself refuses sr against gbn on the first packet. */
static void test_mode_mismatch_in_band(void **s)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	(void)s;
	c.sr = true;
	c.peer_sr = 0;
	assert_non_null(rfw_sim_validate(&c));
	c.skip_mode_check = true;
	assert_null(rfw_sim_validate(&c));
	c.messages = 4;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	assert_false(r.completed);
	assert_int_equal(r.bytes_verified, 0);
	assert_int_equal(r.corrupt, 0);
	assert_true(r.cnt[RFW_CNT_rx_transport_mismatch] >= 1);
	assert_true(r.error_completions >= 1);
}

/* ---- Estats (docs/estats.md) ---- */

/* xorshift64*: the test's values, the same every run. */
static uint64_t rnd64(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x * 0x2545f4914f6cdd1dull;
}

/* The histogram: exact below 16 ns, then buckets at most 1/16 of their lower bound wide. */
static void test_estats_hist(void **st)
{
	struct rfw_es_hist h;

	(void)st;
	for (uint64_t v = 0; v < 16; v++)
		assert_int_equal(rfw_es_bucket(v), v);
	for (unsigned i = 1; i < RFW_ES_BUCKETS; i++) {
		uint64_t lo = rfw_es_bucket_lo(i), plo = rfw_es_bucket_lo(i - 1);

		assert_true(lo > plo);
		assert_int_equal(rfw_es_bucket(lo), i);
		assert_int_equal(rfw_es_bucket(lo - 1), i - 1);
		assert_true((lo - plo) * 16 <= (plo > 16 ? plo : 16));
	}
	assert_int_equal(rfw_es_bucket(UINT64_MAX), RFW_ES_BUCKETS - 1);
	/* Against the definition in docs/estats.md, computed another way (frexp: v = m 2^x with
	   m in [0.5, 1)): from 16 ns, 16 buckets per power of two, a value's bucket the sixteenth
	   of its power of two it falls in; exact below 16 ns; from 2^36 ns, the last bucket. */
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t v = i < 64 ? (1ull << (i % 40)) - (i / 40) : rnd64() >> (rnd64() % 64);
		int x;
		double m = frexp((double)v, &x);
		unsigned want = v < 16 ? (unsigned)v
		                : x - 1 > RFW_ES_MAX_EXP
		                    ? RFW_ES_BUCKETS - 1
		                    : (unsigned)(x - 4) * 16 + (unsigned)((2 * m - 1) * 16);

		if (v >= (1ull << 53))
			continue; /* a double holds v exactly only below 2^53 */
		assert_int_equal(rfw_es_bucket(v), want);
	}
	/* 1..1000 us, one sample each: quantiles within a bucket of the exact ones. */
	memset(&h, 0, sizeof(h));
	for (uint64_t v = 1; v <= 1000; v++)
		rfw_es_hist_add(&h, v * 1000);
	assert_int_equal(h.count, 1000);
	assert_int_equal(h.max, 1000000);
	assert_int_equal(rfw_es_bucket(rfw_es_hist_quantile(&h, 0.5)), rfw_es_bucket(500000));
	assert_int_equal(rfw_es_bucket(rfw_es_hist_quantile(&h, 0.99)), rfw_es_bucket(990000));
	assert_int_equal(rfw_es_hist_quantile(&h, 0.999), rfw_es_hist_quantile(&h, 1.0));
	assert_int_equal(rfw_es_hist_quantile(&h, 1.0), 1000000);
}

static const struct rfw_es_row *es_row(const struct rfw_sim_result *r, enum rfw_es_stage k)
{
	for (uint32_t i = 0; i < r->nes_rows; i++)
		if (r->es_rows[i].stage == k && r->es_rows[i].op == RFW_ES_OP_WRITE &&
		    r->es_rows[i].status == RFW_ES_SUCCESS)
			return &r->es_rows[i];
	fail_msg("no Estats row for stage %s", rfw_es_stage_name(k));
	return NULL;
}

/* Whether @got is in the bucket of @want or a neighbouring one. */
static void within_bucket(uint64_t got, uint64_t want, const char *what)
{
	int d = (int)rfw_es_bucket(got) - (int)rfw_es_bucket(want);

	if (d < -1 || d > 1)
		fail_msg("%s: %llu ns, expected %llu ns within one bucket", what,
		         (unsigned long long)got, (unsigned long long)want);
}

/*
 * One WRITE at a time over links of a known delay: T4-T3 (last packet out to its ACK in) and
 * T5-T1 are the RTT plus the serialisation of the data and ACK frames at the link rate; the
 * stages in between are zero in the simulator (the host takes packets at once, the completer
 * runs on the ACK). Two delays, so a right answer cannot be a constant.
 */
static void test_estats_known_delay(void **st)
{
	static const double rtts[] = {20, 200};
	uint64_t p50[2];

	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rfw_sim_cfg c = base();
		struct rfw_sim_result r;
		/* data frame: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + 1024 + ICRC 4; ACK:
		 * Eth 14 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 + ICRC 4 (at 100 Gb/s: 0.08 ns/B) */
		uint64_t want = (uint64_t)(rtts[i] * 1000) + (1098 + 62) * 8 / 100;

		c.op = RFW_SIM_WRITE;
		c.size = 1024;
		c.messages = 200;
		c.depth = 1;
		c.rtt_us = rtts[i];
		c.rate_gbps = 100;
		c.estats = true;
		assert_int_equal(rfw_sim_run(&c, &r), 0);
		expect_clean(&c, &r);
		const struct rfw_es_row *net = es_row(&r, RFW_ES_t4_t3);
		const struct rfw_es_row *nic = es_row(&r, RFW_ES_t5_t1);
		const struct rfw_es_row *all = es_row(&r, RFW_ES_t6_t1);

		assert_int_equal(net->count, c.messages);
		assert_int_equal(nic->count, c.messages);
		assert_int_equal(all->count, c.messages);
		within_bucket(net->p50, want, "t4_t3 p50");
		within_bucket(net->p99, want, "t4_t3 p99");
		within_bucket(net->p999, want, "t4_t3 p99.9");
		within_bucket(net->max, want, "t4_t3 max");
		within_bucket(nic->p50, want, "t5_t1 p50");
		within_bucket(nic->max, want, "t5_t1 max");
		assert_true(nic->p50 <= nic->p99 && nic->p99 <= nic->p999 && nic->p999 <= nic->max);
		assert_int_equal(es_row(&r, RFW_ES_t6_t5)->max, 0);
		assert_int_equal(es_row(&r, RFW_ES_t5_t4)->max, 0);
		p50[i] = net->p50;
	}
	/* Measured, not assumed: ten times the RTT is ten times the stage. */
	assert_true(p50[1] > 9 * p50[0] && p50[1] < 11 * p50[0]);
}

/* Off by default: no rows. On, with a queue: T2-T1 (SQ wait) and T3-T2 (serialisation). */
static void test_estats_off_and_queueing(void **st)
{
	struct rfw_sim_cfg c = base();
	struct rfw_sim_result r;

	(void)st;
	c.op = RFW_SIM_WRITE;
	c.size = 4096;
	c.messages = 64;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	assert_int_equal(r.nes_rows, 0);

	c.estats = true;
	c.depth = 16;
	c.rate_gbps = 10; /* 4 KiB takes ~3.4 us on the wire: a queue builds behind the first */
	c.mtu = 1024;
	assert_int_equal(rfw_sim_run(&c, &r), 0);
	expect_clean(&c, &r);
	assert_int_equal(es_row(&r, RFW_ES_t6_t1)->count, c.messages);
	/* 4 packets of 1098 B at 10 Gb/s: 878 ns each; T3-T2 spans three of them. */
	within_bucket(es_row(&r, RFW_ES_t3_t2)->p50, 3 * 878, "t3_t2 p50");
	/* The 16th of a burst waits for 15 messages = 60 packets before its first leaves. */
	within_bucket(es_row(&r, RFW_ES_t2_t1)->max, 60 * 878, "t2_t1 max");
	assert_true(es_row(&r, RFW_ES_t2_t1)->p50 > 10 * 878);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_ops_sizes_mtus),
	    cmocka_unit_test(test_many_qps),
	    cmocka_unit_test(test_psn_wrap),
	    cmocka_unit_test(test_loss_levels),
	    cmocka_unit_test(test_impairment_mix),
	    cmocka_unit_test(test_dead_link),
	    cmocka_unit_test(test_determinism),
	    cmocka_unit_test(test_goodput_bound),
	    cmocka_unit_test(test_ce_cnp),
	    cmocka_unit_test(test_ops_sizes_mtus_sr),
	    cmocka_unit_test(test_psn_wrap_sr),
	    cmocka_unit_test(test_loss_levels_sr),
	    cmocka_unit_test(test_impairment_mix_sr),
	    cmocka_unit_test(test_many_qps_sr),
	    cmocka_unit_test(test_done_when_sr_vs_gbn),
	    cmocka_unit_test(test_dead_link_sr),
	    cmocka_unit_test(test_mode_mismatch_in_band),
	    cmocka_unit_test(test_estats_hist),
	    cmocka_unit_test(test_estats_known_delay),
	    cmocka_unit_test(test_estats_off_and_queueing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
