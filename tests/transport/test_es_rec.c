/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK NIC's 32-byte Estats ring record (transport/es_crec.h) against the full
 * struct rfw_es_rec it carries. Oracles: every known timestamp comes back exactly (64-bit
 * arithmetic, not the packer's); a record takes two slots exactly when one of its known
 * offsets from T1 is outside int32; the histograms' rows of the unpacked records equal those
 * of the originals (rfw_es_bins, binned both ways); markers and the largest slot survive. The
 * same oracles for the path a polled CQE's record takes: packed once into the CQ's side entry at
 * completion (T1..T5), T6 added at poll and the entry copied into a ring as it is, or, wide,
 * unpacked whole and pushed in two slots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "transport/es_crec.h"

#define NREC  200000
#define QBASE 0x300u

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* An offset from T1: mostly microseconds, some near and beyond int32's ends, some seconds. */
static int64_t offset(uint64_t *s)
{
	uint64_t r = rng_next(s);
	int64_t sign = (r & 1) ? -1 : 1;

	switch (r >> 1 & 7) {
	case 0:
		return sign * (INT64_C(2147483647) + (int64_t)(r >> 40 & 3) - 1);
	case 1:
		return sign * (int64_t)(r >> 20 & 0x3ffffffffull); /* up to 17 s */
	default:
		return (int64_t)(r >> 20 & 0xfffff) - 1000; /* up to 1 ms, a few negative */
	}
}

static bool fits_int32(int64_t v)
{
	return v >= INT64_C(-2147483648) && v <= INT64_C(2147483647);
}

static void random_rec(struct rfw_es_rec *r, uint64_t *s)
{
	r->t[0] = UINT64_C(1) << 50 | (rng_next(s) >> 20);
	r->have = (uint8_t)(rng_next(s) % 63 + 1);
	if (rng_next(s) & 1)
		r->have = 63; /* the usual case: all six */
	for (unsigned k = 1; k < 6; k++)
		r->t[k] = (r->have >> k & 1) ? r->t[0] + (uint64_t)offset(s) : rng_next(s);
	r->op = (uint8_t)(rng_next(s) % RFW_ES__OPS);
	r->st = (uint8_t)(rng_next(s) % RFW_ES__STATUSES);
	r->qpn = QBASE + (uint32_t)(rng_next(s) % 4);
	r->wr_id = rng_next(s);
}

/* Pack @r as the NIC does into @q (two slots if it must); the slots used. */
static unsigned pack(struct rfw_es_crec q[2], const struct rfw_es_rec *r)
{
	if (rfw_es_pack(&q[0], r, r->qpn - QBASE))
		return 1;
	rfw_es_pack_wide(&q[0], &q[1], r, r->qpn - QBASE);
	return 2;
}

static void test_round_trip(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	unsigned wide = 0;

	(void)state;
	for (unsigned i = 0; i < NREC; i++) {
		struct rfw_es_crec q[2];
		struct rfw_es_rec r, u;
		bool must_wide = false;

		random_rec(&r, &s);
		for (unsigned k = 1; k < 6; k++)
			must_wide |= (r.have >> k & 1) && !fits_int32((int64_t)(r.t[k] - r.t[0]));
		assert_int_equal(pack(q, &r), must_wide ? 2 : 1);
		wide += must_wide;
		rfw_es_unpack(&u, &q[0], &q[1], QBASE);
		assert_int_equal(u.have, r.have);
		assert_int_equal(u.op, r.op);
		assert_int_equal(u.st, r.st);
		assert_int_equal(u.qpn, r.qpn);
		for (unsigned k = 0; k < 6; k++)
			if (r.have >> k & 1)
				assert_true(u.t[k] == r.t[k]);
	}
	/* The generator must have exercised both forms. */
	assert_true(wide > NREC / 50 && wide < NREC - NREC / 50);
}

/* Rows of @b's current window, after binning. */
static int rows(struct rfw_es_bins *b, struct rfw_es_row *out, int max)
{
	return rfw_es_bins_rows(b, QBASE, RFW_ES_CURRENT, UINT64_C(1) << 51, out, max);
}

static void test_same_rows(void **state)
{
	uint64_t s = 12345;
	struct rfw_es_bins *a = rfw_es_bins_create(UINT64_C(1) << 60);
	struct rfw_es_bins *b = rfw_es_bins_create(UINT64_C(1) << 60);
	struct rfw_es_row ra[64], rb[64];
	int na, nb;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (unsigned i = 0; i < NREC / 4; i++) {
		struct rfw_es_crec q[2];
		struct rfw_es_rec r, u;

		random_rec(&r, &s);
		r.st = RFW_ES_SUCCESS; /* at most RFW_ES_SLOTS (op, status) pairs are kept */
		r.op = (uint8_t)(i % 4);
		pack(q, &r);
		rfw_es_unpack(&u, &q[0], &q[1], QBASE);
		assert_true(rfw_es_bins_add(a, &r, UINT64_C(1) << 51));
		assert_true(rfw_es_bins_add(b, &u, UINT64_C(1) << 51));
	}
	na = rows(a, ra, 64);
	nb = rows(b, rb, 64);
	assert_true(na > 4);
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++) {
		assert_int_equal(ra[i].stage, rb[i].stage);
		assert_true(ra[i].count == rb[i].count && ra[i].max == rb[i].max);
		assert_true(ra[i].p50 == rb[i].p50 && ra[i].p99 == rb[i].p99);
		assert_true(ra[i].p999 == rb[i].p999);
	}
	rfw_es_bins_destroy(a);
	rfw_es_bins_destroy(b);
}

/* A completion's record as the transport packs it into the CQ's side entry (times not known
 * are T1 there), then its poll at T6 into @ring (the poll's two ways, es_polled_one in
 * transport/estats.c); the full record the poll rebuilt for the slow way into @full (wr_id and
 * QPN from the CQE). */
static void cqe_path(struct rfw_es_ring *ring, const struct rfw_es_rec *r, struct rfw_es_rec *full,
                     bool *slow)
{
	struct rfw_es_crec e;
	struct rfw_es_wide w;
	uint64_t t[5];
	uint32_t meta;

	for (unsigned k = 0; k < 5; k++)
		t[k] = (r->have >> k & 1) ? r->t[k] : r->t[0];
	memset(&w, 0xa5, sizeof(w));
	rfw_es_cqe_pack(&e, &w, t[0], t[1], t[2], t[3], t[4],
	                RFW_ES_META(0, r->have & 31, r->op, r->st));
	meta = e.meta;
	assert_true(rfw_es_cqe_t5(&e, meta, &w) == r->t[4]);
	*slow = !rfw_es_cqe_to_ring(ring, &e, meta, r->t[5], r->qpn - QBASE);
	if (*slow) {
		rfw_es_cqe_unpack(full, &e, meta, &w, r->t[5], r->qpn, r->wr_id);
		assert_true(rfw_es_ring_push_rec(ring, full, r->qpn - QBASE));
	}
}

static void test_cqe_round_trip(void **state)
{
	static struct rfw_es_crec q[4];
	struct rfw_es_ring ring = {.q = q, .mask = 3};
	uint64_t s = 0x243f6a8885a308d3ull;
	unsigned wide = 0;
	struct rfw_es_bins *a = rfw_es_bins_create(UINT64_C(1) << 60);
	struct rfw_es_bins *b = rfw_es_bins_create(UINT64_C(1) << 60);
	struct rfw_es_row ra[64], rb[64];
	int na, nb;

	(void)state;
	for (unsigned i = 0; i < NREC; i++) {
		struct rfw_es_rec r, u, full;
		bool must_wide = false, slow;
		uint32_t before = ring.prod;

		random_rec(&r, &s);
		r.have |= 1 | 16 | 32; /* T1 posted, T5 completed, T6 polled */
		r.op = (uint8_t)(i % 2 ? RFW_ES_OP_WRITE : RFW_ES_OP_READ);
		r.st = (uint8_t)(i / 2 % 2); /* RFW_ES_SLOTS (op, status) pairs are binned */
		for (unsigned k = 1; k < 6; k++)
			must_wide |= (r.have >> k & 1) && !fits_int32((int64_t)(r.t[k] - r.t[0]));
		cqe_path(&ring, &r, &full, &slow);
		if (slow) { /* the whole record the slow way carries: exact, unknown times 0 */
			assert_true(full.wr_id == r.wr_id && full.qpn == r.qpn &&
			            full.have == r.have);
			for (unsigned k = 0; k < 6; k++)
				assert_true(full.t[k] == ((r.have >> k & 1) ? r.t[k] : 0));
		}
		assert_int_equal(ring.prod - before, must_wide ? 2 : 1);
		assert_true(slow || !must_wide);
		wide += must_wide;
		rfw_es_unpack(&u, &q[before & 3], &q[(before + 1) & 3], QBASE);
		ring.cons = ring.prod; /* consumed */
		assert_int_equal(u.have, r.have);
		assert_int_equal(u.op, r.op);
		assert_int_equal(u.st, r.st);
		assert_int_equal(u.qpn, r.qpn);
		for (unsigned k = 0; k < 6; k++)
			if (r.have >> k & 1)
				assert_true(u.t[k] == r.t[k]);
		assert_true(rfw_es_bins_add(a, &r, UINT64_C(1) << 51));
		assert_true(rfw_es_bins_add(b, &u, UINT64_C(1) << 51));
	}
	assert_true(wide > NREC / 50 && wide < NREC - NREC / 50);
	assert_true(ring.dropped == 0);
	na = rows(a, ra, 64);
	nb = rows(b, rb, 64);
	assert_true(na > 8);
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++) {
		assert_true(ra[i].op == rb[i].op && ra[i].status == rb[i].status);
		assert_int_equal(ra[i].stage, rb[i].stage);
		assert_true(ra[i].count == rb[i].count && ra[i].max == rb[i].max);
		assert_true(ra[i].p50 == rb[i].p50 && ra[i].p99 == rb[i].p99);
		assert_true(ra[i].p999 == rb[i].p999);
	}
	rfw_es_bins_destroy(a);
	rfw_es_bins_destroy(b);
}

/* A full ring drops (and counts) a record; the slot after a wide record's first wraps. */
static void test_ring_full(void **state)
{
	static struct rfw_es_crec q[2];
	struct rfw_es_ring ring = {.q = q, .mask = 1};
	struct rfw_es_rec r = {.t = {1, 2, 3, 4, 5, 6}, .have = 63, .qpn = QBASE};
	struct rfw_es_crec e;
	struct rfw_es_wide w;

	(void)state;
	rfw_es_cqe_pack(&e, &w, 1, 2, 3, 4, 5, RFW_ES_META(0, 31, 1, 0));
	assert_true(rfw_es_cqe_to_ring(&ring, &e, e.meta, 6, 0));
	assert_true(rfw_es_ring_push_rec(&ring, &r, 0));
	assert_true(rfw_es_cqe_to_ring(&ring, &e, e.meta, 6, 0));
	assert_int_equal(ring.prod, 2);
	assert_true(ring.dropped == 1);
	r.t[5] = UINT64_C(1) << 40; /* wide: needs both slots */
	ring.cons = 1;
	assert_false(rfw_es_ring_push_rec(&ring, &r, 0));
	assert_true(ring.dropped == 2);
	ring.cons = 2;
	assert_true(rfw_es_ring_push_rec(&ring, &r, 0));
	assert_int_equal(ring.prod, 4);
}

static void test_marker_and_slots(void **state)
{
	struct rfw_es_crec c = {.t1 = 77, .meta = RFW_ES_META(RFW_ES_MAX_SLOTS - 1, 0, 3, 0)};
	struct rfw_es_rec r = {.t = {1, 2, 3, 4, 5, 6}, .have = 63, .op = 4, .st = 2};
	struct rfw_es_crec q[2];

	(void)state;
	assert_int_equal(sizeof(struct rfw_es_crec), 32);
	assert_int_equal(RFW_ES_META_SLOT(c.meta), RFW_ES_MAX_SLOTS - 1);
	assert_int_equal(RFW_ES_META_HAVE(c.meta), 0);
	assert_int_equal(RFW_ES_META_OP(c.meta), 3);
	assert_true(rfw_es_pack(&q[0], &r, RFW_ES_MAX_SLOTS - 1));
	assert_int_equal(RFW_ES_META_SLOT(q[0].meta), RFW_ES_MAX_SLOTS - 1);
	assert_int_equal(RFW_ES_META_HAVE(q[0].meta), 63);
	assert_int_equal(RFW_ES_META_OP(q[0].meta), 4);
	assert_int_equal(RFW_ES_META_ST(q[0].meta), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_same_rows),
	    cmocka_unit_test(test_marker_and_slots), cmocka_unit_test(test_cqe_round_trip),
	    cmocka_unit_test(test_ring_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
