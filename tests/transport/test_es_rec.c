/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK NIC's 32-byte Estats ring record (dataplane/rfw_nic_es_rec.h) against the full
 * struct rfw_es_rec it carries. Oracles: every known timestamp comes back exactly (64-bit
 * arithmetic, not the packer's); a record takes two slots exactly when one of its known
 * offsets from T1 is outside int32; the histograms' rows of the unpacked records equal those
 * of the originals (rfw_es_bins, binned both ways); markers and the largest slot survive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/rfw_nic_es_rec.h"

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
static unsigned pack(struct nic_es_crec q[2], const struct rfw_es_rec *r)
{
	if (nic_es_pack(&q[0], r, r->qpn - QBASE))
		return 1;
	nic_es_pack_wide(&q[0], &q[1], r, r->qpn - QBASE);
	return 2;
}

static void test_round_trip(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	unsigned wide = 0;

	(void)state;
	for (unsigned i = 0; i < NREC; i++) {
		struct nic_es_crec q[2];
		struct rfw_es_rec r, u;
		bool must_wide = false;

		random_rec(&r, &s);
		for (unsigned k = 1; k < 6; k++)
			must_wide |= (r.have >> k & 1) && !fits_int32((int64_t)(r.t[k] - r.t[0]));
		assert_int_equal(pack(q, &r), must_wide ? 2 : 1);
		wide += must_wide;
		nic_es_unpack(&u, &q[0], &q[1], QBASE);
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
		struct nic_es_crec q[2];
		struct rfw_es_rec r, u;

		random_rec(&r, &s);
		r.st = RFW_ES_SUCCESS; /* at most RFW_ES_SLOTS (op, status) pairs are kept */
		r.op = (uint8_t)(i % 4);
		pack(q, &r);
		nic_es_unpack(&u, &q[0], &q[1], QBASE);
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

static void test_marker_and_slots(void **state)
{
	struct nic_es_crec c = {.t1 = 77, .meta = NIC_ES_META(NIC_ES_MAX_SLOTS - 1, 0, 3, 0)};
	struct rfw_es_rec r = {.t = {1, 2, 3, 4, 5, 6}, .have = 63, .op = 4, .st = 2};
	struct nic_es_crec q[2];

	(void)state;
	assert_int_equal(sizeof(struct nic_es_crec), 32);
	assert_int_equal(NIC_ES_META_SLOT(c.meta), NIC_ES_MAX_SLOTS - 1);
	assert_int_equal(NIC_ES_META_HAVE(c.meta), 0);
	assert_int_equal(NIC_ES_META_OP(c.meta), 3);
	assert_true(nic_es_pack(&q[0], &r, NIC_ES_MAX_SLOTS - 1));
	assert_int_equal(NIC_ES_META_SLOT(q[0].meta), NIC_ES_MAX_SLOTS - 1);
	assert_int_equal(NIC_ES_META_HAVE(q[0].meta), 63);
	assert_int_equal(NIC_ES_META_OP(q[0].meta), 4);
	assert_int_equal(NIC_ES_META_ST(q[0].meta), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_same_rows),
	    cmocka_unit_test(test_marker_and_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
