/* SPDX-License-Identifier: BSD-3-Clause */
/* IB transport header codec: opcode table, parse/build round trips, truncation, PSN maths. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/ib_hdr.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const uint8_t all_opcodes[] = {
#define X(name, val) val,
    RFW_FOREACH_OPCODE(X)
#undef X
};
static const char *const all_names[] = {
#define X(name, val) #name,
    RFW_FOREACH_OPCODE(X)
#undef X
};
#define N_OPCODES (sizeof(all_opcodes) / sizeof(all_opcodes[0]))

/* Header lengths written out from IBA table 38, independent of the codec's own sums. */
static void test_header_lengths_match_iba(void **state)
{
	static const struct {
		uint8_t op;
		uint8_t len;
	} expect[] = {
	    {RFW_OP_RC_SEND_FIRST, 12},
	    {RFW_OP_RC_SEND_LAST_IMM, 16},
	    {RFW_OP_RC_SEND_ONLY, 12},
	    {RFW_OP_RC_RDMA_WRITE_FIRST, 28},
	    {RFW_OP_RC_RDMA_WRITE_MIDDLE, 12},
	    {RFW_OP_RC_RDMA_WRITE_LAST_IMM, 16},
	    {RFW_OP_RC_RDMA_WRITE_ONLY, 28},
	    {RFW_OP_RC_RDMA_WRITE_ONLY_IMM, 32},
	    {RFW_OP_RC_RDMA_READ_REQUEST, 28},
	    {RFW_OP_RC_RDMA_READ_RESPONSE_FIRST, 16},
	    {RFW_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 12},
	    {RFW_OP_RC_RDMA_READ_RESPONSE_LAST, 16},
	    {RFW_OP_RC_RDMA_READ_RESPONSE_ONLY, 16},
	    {RFW_OP_RC_ACKNOWLEDGE, 16},
	    {RFW_OP_RC_ATOMIC_ACKNOWLEDGE, 24},
	    {RFW_OP_RC_COMPARE_SWAP, 40},
	    {RFW_OP_RC_FETCH_ADD, 40},
	    {RFW_OP_RC_SEND_LAST_INV, 16},
	    {RFW_OP_RC_SEND_ONLY_INV, 16},
	    {RFW_OP_UC_RDMA_WRITE_ONLY_IMM, 32},
	    {RFW_OP_UD_SEND_ONLY, 20},
	    {RFW_OP_UD_SEND_ONLY_IMM, 24},
	    {RFW_OP_CNP, 28},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(expect[i].op);

		assert_non_null(oi);
		assert_int_equal(oi->hdr_len, expect[i].len);
	}
}

static void test_opcode_table_consistent(void **state)
{
	unsigned known = 0;

	(void)state;
	for (size_t i = 0; i < N_OPCODES; i++) {
		const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(all_opcodes[i]);
		unsigned pos;

		assert_non_null(oi);
		assert_string_equal(oi->name, all_names[i]);
		assert_int_equal(oi->opcode, all_opcodes[i]);
		assert_int_equal(oi->transport, all_opcodes[i] >> 5);
		assert_int_equal(rfw_ib_opcode_by_name(all_names[i]), all_opcodes[i]);
		/* Every packet is exactly one of first/middle/last/only, except the CNP. */
		pos = oi->flags & (RFW_OPF_FIRST | RFW_OPF_MIDDLE | RFW_OPF_LAST | RFW_OPF_ONLY);
		if (all_opcodes[i] == RFW_OP_CNP)
			assert_int_equal(pos, 0);
		else
			assert_true(pos && !(pos & (pos - 1)));
		/* Requests and responses are disjoint. */
		assert_false((oi->flags & RFW_OPF_REQUEST) && (oi->flags & RFW_OPF_RESPONSE));
		/* Immediate data iff ImmDt header; invalidate iff IETH. */
		assert_int_equal(!!(oi->flags & RFW_OPF_IMM), !!(oi->hdrs & RFW_HDR_IMMDT));
		assert_int_equal(!!(oi->flags & RFW_OPF_INV), !!(oi->hdrs & RFW_HDR_IETH));
	}
	for (unsigned op = 0; op < 256; op++)
		if (rfw_ib_opcode_info((uint8_t)op))
			known++;
	assert_int_equal(known, N_OPCODES);
	assert_int_equal(rfw_ib_opcode_by_name("RC_NOPE"), -2 /* -ENOENT */);
	assert_string_equal(rfw_ib_opcode_name(0x1f), "UNKNOWN");
	/* RD (0x40-0x5f) and XRC (0xa0-0xbf) are not decoded. */
	assert_null(rfw_ib_opcode_info(0x40));
	assert_null(rfw_ib_opcode_info(0xa4));
	assert_null(rfw_ib_opcode_info(0x15));
}

static void fill_random(struct rfw_ib_pkt *p, uint8_t opcode)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = opcode;
	p->bth.se = rnd() & 1;
	p->bth.mig = rnd() & 1;
	p->bth.pkey = (uint16_t)rnd();
	p->bth.fecn = rnd() & 1;
	p->bth.becn = rnd() & 1;
	p->bth.dqpn = (uint32_t)rnd() & RFW_QPN_MASK;
	p->bth.ackreq = rnd() & 1;
	p->bth.psn = (uint32_t)rnd() & RFW_PSN_MASK;
	p->reth.va = rnd();
	p->reth.rkey = (uint32_t)rnd();
	p->reth.dma_len = (uint32_t)rnd();
	p->aeth.syndrome = (uint8_t)rnd();
	p->aeth.msn = (uint32_t)rnd() & RFW_MSN_MASK;
	p->atomiceth.va = rnd();
	p->atomiceth.rkey = (uint32_t)rnd();
	p->atomiceth.swap_add = rnd();
	p->atomiceth.compare = rnd();
	p->atomic_orig = rnd();
	p->imm = (uint32_t)rnd();
	p->ieth_rkey = (uint32_t)rnd();
	p->deth.qkey = (uint32_t)rnd();
	p->deth.src_qpn = (uint32_t)rnd() & RFW_QPN_MASK;
}

/*
 * rfw_ib_put_sw, the requester's direct writer, against the codec's serializer (whose bytes
 * test_bth_bit_positions and the tshark tests hold to the spec): the same bytes for every
 * SEND and RDMA WRITE opcode of RC and UC (IBA table 38: 8 + 6 of RC, 6 + 6 of UC) and RC's
 * RDMA READ request, and random fields, with M, TVer, FECN, BECN 0 as it writes them; nothing
 * written past the headers.
 */
static void test_put_sw_matches_build(void **state)
{
	unsigned nops = 0;

	(void)state;
	for (size_t i = 0; i < N_OPCODES; i++) {
		const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(all_opcodes[i]);

		if (!(oi->flags & (RFW_OPF_SEND | RFW_OPF_WRITE | RFW_OPF_READ)) ||
		    !(oi->flags & RFW_OPF_REQUEST) || (oi->hdrs & ~RFW_IB_SW_HDRS))
			continue;
		nops++;
		for (int iter = 0; iter < 200; iter++) {
			uint8_t want[96], got[96];
			struct rfw_ib_pkt p;
			uint32_t ext;

			fill_random(&p, oi->opcode);
			p.bth.mig = p.bth.fecn = p.bth.becn = 0;
			p.bth.padcnt = (uint8_t)(rnd() & 3);
			ext = (oi->hdrs & RFW_HDR_IMMDT) ? p.imm : p.ieth_rkey;
			memset(want, 0xa5, sizeof(want));
			memset(got, 0xa5, sizeof(got));
			assert_int_equal(rfw_ib_build_op(want, oi, &p), oi->hdr_len);
			assert_int_equal(rfw_ib_put_sw(got, oi, p.bth.se, p.bth.padcnt, p.bth.pkey,
			                               p.bth.dqpn, p.bth.ackreq, p.bth.psn,
			                               p.reth.va, p.reth.rkey, p.reth.dma_len, ext),
			                 oi->hdr_len);
			assert_memory_equal(got, want, sizeof(want));
		}
	}
	assert_int_equal(nops, 27);
}

/*
 * rfw_ib_put_aeth, the responder's direct writer, against the codec's serializer as above:
 * the same bytes for RC's READ responses (FIRST, MIDDLE, LAST, ONLY) and ACKNOWLEDGE, the
 * opcodes whose only extended header is an AETH or none (IBA table 38), AckReq 0.
 */
static void test_put_aeth_matches_build(void **state)
{
	unsigned nops = 0;

	(void)state;
	for (size_t i = 0; i < N_OPCODES; i++) {
		const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(all_opcodes[i]);

		if (!(oi->flags & RFW_OPF_RESPONSE) || (oi->hdrs & ~RFW_IB_AETH_HDRS))
			continue;
		nops++;
		for (int iter = 0; iter < 200; iter++) {
			uint8_t want[64], got[64];
			struct rfw_ib_pkt p;

			fill_random(&p, oi->opcode);
			p.bth.se = p.bth.mig = p.bth.fecn = p.bth.becn = p.bth.ackreq = 0;
			p.bth.padcnt = (uint8_t)(rnd() & 3);
			memset(want, 0x5a, sizeof(want));
			memset(got, 0x5a, sizeof(got));
			assert_int_equal(rfw_ib_build_op(want, oi, &p), oi->hdr_len);
			assert_int_equal(rfw_ib_put_aeth(got, oi, p.bth.padcnt, p.bth.pkey,
			                                 p.bth.dqpn, p.bth.psn, p.aeth.syndrome,
			                                 p.aeth.msn),
			                 oi->hdr_len);
			assert_memory_equal(got, want, sizeof(want));
		}
	}
	assert_int_equal(nops, 5);
}

static void test_roundtrip_every_opcode(void **state)
{
	uint8_t buf[512];

	(void)state;
	for (int iter = 0; iter < 50; iter++) {
		for (size_t i = 0; i < N_OPCODES; i++) {
			const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(all_opcodes[i]);
			struct rfw_ib_pkt in, out;
			uint32_t plen = 0;
			int hl;

			fill_random(&in, all_opcodes[i]);
			if (oi->flags & RFW_OPF_PAYLOAD)
				plen = (uint32_t)(rnd() % 300);
			in.bth.padcnt = rfw_ib_padcnt(plen);
			hl = rfw_ib_build(buf, sizeof(buf), &in);
			assert_int_equal(hl, oi->hdr_len);
			for (uint32_t k = 0; k < plen; k++)
				buf[hl + k] = (uint8_t)(k * 7 + 1);
			memset(buf + hl + plen, 0, in.bth.padcnt);

			assert_int_equal(rfw_ib_parse(buf, hl + plen + in.bth.padcnt, &out),
			                 RFW_IB_ERR_OK);
			assert_ptr_equal(out.op, oi);
			assert_int_equal(out.warnings, 0);
			assert_int_equal(out.bth.opcode, in.bth.opcode);
			assert_int_equal(out.bth.se, in.bth.se);
			assert_int_equal(out.bth.mig, in.bth.mig);
			assert_int_equal(out.bth.padcnt, in.bth.padcnt);
			assert_int_equal(out.bth.tver, 0);
			assert_int_equal(out.bth.pkey, in.bth.pkey);
			assert_int_equal(out.bth.fecn, in.bth.fecn);
			assert_int_equal(out.bth.becn, in.bth.becn);
			assert_int_equal(out.bth.dqpn, in.bth.dqpn);
			assert_int_equal(out.bth.ackreq, in.bth.ackreq);
			assert_int_equal(out.bth.psn, in.bth.psn);
			assert_int_equal(out.payload_len, plen);
			if (plen)
				assert_ptr_equal(out.payload, buf + hl);
			else
				assert_null(out.payload);
			if (oi->hdrs & RFW_HDR_RETH) {
				assert_int_equal(out.reth.va, in.reth.va);
				assert_int_equal(out.reth.rkey, in.reth.rkey);
				assert_int_equal(out.reth.dma_len, in.reth.dma_len);
			}
			if (oi->hdrs & RFW_HDR_AETH) {
				assert_int_equal(out.aeth.syndrome, in.aeth.syndrome);
				assert_int_equal(out.aeth.msn, in.aeth.msn);
			}
			if (oi->hdrs & RFW_HDR_ATOMICETH) {
				assert_int_equal(out.atomiceth.va, in.atomiceth.va);
				assert_int_equal(out.atomiceth.rkey, in.atomiceth.rkey);
				assert_int_equal(out.atomiceth.swap_add, in.atomiceth.swap_add);
				assert_int_equal(out.atomiceth.compare, in.atomiceth.compare);
			}
			if (oi->hdrs & RFW_HDR_ATOMICACKETH)
				assert_int_equal(out.atomic_orig, in.atomic_orig);
			if (oi->hdrs & RFW_HDR_IMMDT)
				assert_int_equal(out.imm, in.imm);
			if (oi->hdrs & RFW_HDR_IETH)
				assert_int_equal(out.ieth_rkey, in.ieth_rkey);
			if (oi->hdrs & RFW_HDR_DETH) {
				assert_int_equal(out.deth.qkey, in.deth.qkey);
				assert_int_equal(out.deth.src_qpn, in.deth.src_qpn);
			}
		}
	}
}

/* Field positions checked against hand-laid bytes (IBA 9.2 figure), not against the builder. */
static void test_bth_bit_positions(void **state)
{
	/* opcode 0x0a, SE M PadCnt=2 TVer=0, P_Key 0xabcd, FECN BECN, QP 0x123456, A, PSN */
	const uint8_t b[12] = {0x0a, 0xe0, 0xab, 0xcd, 0xc0, 0x12,
	                       0x34, 0x56, 0x80, 0xfe, 0xdc, 0xba};
	(void)state;
	assert_int_equal(rfw_bth_opcode(b), 0x0a);
	assert_true(rfw_bth_se(b));
	assert_true(rfw_bth_mig(b));
	assert_int_equal(rfw_bth_padcnt(b), 2);
	assert_int_equal(rfw_bth_tver(b), 0);
	assert_int_equal(rfw_bth_pkey(b), 0xabcd);
	assert_true(rfw_bth_fecn(b));
	assert_true(rfw_bth_becn(b));
	assert_int_equal(rfw_bth_dqpn(b), 0x123456);
	assert_true(rfw_bth_ackreq(b));
	assert_int_equal(rfw_bth_psn(b), 0xfedcba);

	uint8_t c[12];
	memcpy(c, b, sizeof(c));
	rfw_bth_set_fecn_becn(c, false, true);
	assert_int_equal(c[4], 0x40);
	rfw_bth_set_psn(c, 0x1000001); /* masked to 24 bits */
	assert_int_equal(rfw_bth_psn(c), 0x000001);
	assert_int_equal(c[8], 0x80); /* the A bit is not disturbed */
}

/* First header (in wire order) that a @len-byte prefix does not hold, as a parse error. */
static enum rfw_ib_err expected_trunc(const struct rfw_ib_opcode_info *oi, size_t len)
{
	static const struct {
		uint16_t bit;
		uint8_t size;
		enum rfw_ib_err err;
	} order[] = {
	    {RFW_HDR_DETH, RFW_DETH_LEN, RFW_IB_ERR_TRUNC_DETH},
	    {RFW_HDR_RETH, RFW_RETH_LEN, RFW_IB_ERR_TRUNC_RETH},
	    {RFW_HDR_ATOMICETH, RFW_ATOMICETH_LEN, RFW_IB_ERR_TRUNC_ATOMICETH},
	    {RFW_HDR_AETH, RFW_AETH_LEN, RFW_IB_ERR_TRUNC_AETH},
	    {RFW_HDR_ATOMICACKETH, RFW_ATOMICACKETH_LEN, RFW_IB_ERR_TRUNC_ATOMICACKETH},
	    {RFW_HDR_IMMDT, RFW_IMMDT_LEN, RFW_IB_ERR_TRUNC_IMMDT},
	    {RFW_HDR_IETH, RFW_IETH_LEN, RFW_IB_ERR_TRUNC_IETH},
	    {RFW_HDR_CNP_RSVD, RFW_CNP_RSVD_LEN, RFW_IB_ERR_TRUNC_CNP},
	};
	size_t need = RFW_BTH_LEN;

	if (len < need)
		return RFW_IB_ERR_TRUNC_BTH;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(oi->hdrs & order[i].bit))
			continue;
		need += order[i].size;
		if (len < need)
			return order[i].err;
	}
	return RFW_IB_ERR_OK;
}

/* Every prefix of every opcode's headers, in an exactly sized heap block so ASan sees any
 * read past the end. */
static void test_truncation_every_prefix(void **state)
{
	uint8_t full[64];

	(void)state;
	for (size_t i = 0; i < N_OPCODES; i++) {
		const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(all_opcodes[i]);
		struct rfw_ib_pkt in, out;
		int hl;

		fill_random(&in, all_opcodes[i]);
		hl = rfw_ib_build(full, sizeof(full), &in);
		assert_int_equal(hl, oi->hdr_len);
		for (int len = 0; len < hl; len++) {
			uint8_t *b = malloc(len ? (size_t)len : 1);

			memcpy(b, full, (size_t)len);
			assert_int_equal(rfw_ib_parse(b, (size_t)len, &out),
			                 expected_trunc(oi, (size_t)len));
			free(b);
		}
		assert_int_equal(rfw_ib_build(full, (size_t)hl - 1, &in), -28 /* -ENOSPC */);
	}
}

static void test_payload_rules(void **state)
{
	uint8_t buf[64] = {0};
	struct rfw_ib_pkt p, out;
	int hl;

	(void)state;
	/* An ACK with trailing bytes carries a payload it must not have. */
	fill_random(&p, RFW_OP_RC_ACKNOWLEDGE);
	hl = rfw_ib_build(buf, sizeof(buf), &p);
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl + 4, &out), RFW_IB_ERR_UNEXPECTED_PAYLOAD);
	/* PadCnt larger than what follows the headers. */
	fill_random(&p, RFW_OP_RC_SEND_ONLY);
	p.bth.padcnt = 3;
	hl = rfw_ib_build(buf, sizeof(buf), &p);
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl + 2, &out), RFW_IB_ERR_PAD_EXCEEDS_PAYLOAD);
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl + 3, &out), RFW_IB_ERR_OK);
	assert_int_equal(out.payload_len, 0);
	/* A zero-length SEND is legal. */
	p.bth.padcnt = 0;
	hl = rfw_ib_build(buf, sizeof(buf), &p);
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl, &out), RFW_IB_ERR_OK);
	assert_null(out.payload);
	/* TVer other than 0. */
	buf[1] |= 0x01;
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl, &out), RFW_IB_ERR_BAD_TVER);
	/* Reserved bits: decoded, flagged, not rejected (IBA 9.2: ignored on receive). */
	buf[1] &= 0xf0;
	buf[4] |= 0x01;
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl, &out), RFW_IB_ERR_OK);
	assert_int_equal(out.warnings, RFW_IB_WARN_RESV_BTH);
	assert_int_equal(out.bth.resv6, 1);
	buf[4] = 0;
	buf[8] |= 0x01;
	assert_int_equal(rfw_ib_parse(buf, (size_t)hl, &out), RFW_IB_ERR_OK);
	assert_int_equal(out.bth.resv7, 1);
	assert_int_equal(out.warnings, RFW_IB_WARN_RESV_BTH);
	/* Every byte value in the opcode position: decoded or rejected as reserved, no crash. */
	for (unsigned op = 0; op < 256; op++) {
		enum rfw_ib_err e;

		buf[0] = (uint8_t)op;
		e = rfw_ib_parse(buf, sizeof(buf), &out);
		if (rfw_ib_opcode_info((uint8_t)op) == NULL)
			assert_int_equal(e, RFW_IB_ERR_RESERVED_OPCODE);
		else
			assert_int_not_equal(e, RFW_IB_ERR_RESERVED_OPCODE);
	}
	assert_int_equal(rfw_ib_build(buf, sizeof(buf), &(struct rfw_ib_pkt){.bth.opcode = 0x1f}),
	                 -22 /* -EINVAL */);
}

static void test_psn_serial_arithmetic(void **state)
{
	(void)state;
	assert_true(rfw_psn_cmp(1, 0) > 0);
	assert_true(rfw_psn_cmp(0, 1) < 0);
	assert_int_equal(rfw_psn_cmp(5, 5), 0);
	/* Across the 24-bit wrap: 0 comes after 0xffffff. */
	assert_true(rfw_psn_cmp(0, 0xffffff) > 0);
	assert_true(rfw_psn_cmp(0xfffff0, 0x10) < 0);
	/* Half the space away is "before" (2^23 is the ambiguity point). */
	assert_true(rfw_psn_cmp(0x7fffff, 0) > 0);
	assert_true(rfw_psn_cmp(0x800001, 0) < 0);
	assert_int_equal(rfw_psn_add(0xffffff, 1), 0);
	assert_int_equal(rfw_psn_add(0xfffff0, 0x20), 0x10);
}

static void test_aeth_syndromes(void **state)
{
	(void)state;
	assert_string_equal(rfw_aeth_syndrome_name(0x1f), "ack");
	assert_string_equal(rfw_aeth_syndrome_name(0x00), "ack");
	assert_string_equal(rfw_aeth_syndrome_name(0x2e), "rnr_nak");
	assert_string_equal(rfw_aeth_syndrome_name(0x60), "nak_psn_seq_err");
	assert_string_equal(rfw_aeth_syndrome_name(0x61), "nak_invalid_request");
	assert_string_equal(rfw_aeth_syndrome_name(0x62), "nak_remote_access_err");
	assert_string_equal(rfw_aeth_syndrome_name(0x63), "nak_remote_op_err");
	assert_string_equal(rfw_aeth_syndrome_name(0x64), "nak_invalid_rd_request");
	assert_string_equal(rfw_aeth_syndrome_name(0x65), "nak_reserved");
	assert_string_equal(rfw_aeth_syndrome_name(0x40), "reserved");
	assert_int_equal(RFW_AETH_SYNDROME(RFW_AETH_NAK, RFW_NAK_PSN_SEQ_ERR), 0x60);
	assert_int_equal(RFW_AETH_SYNDROME(RFW_AETH_RNR_NAK, 14), 0x2e);
	assert_string_equal(rfw_ib_err_name(RFW_IB_ERR_PAD_EXCEEDS_PAYLOAD),
	                    "padcnt_exceeds_payload");
	assert_string_equal(rfw_ib_err_name((enum rfw_ib_err)999), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_header_lengths_match_iba),
	    cmocka_unit_test(test_opcode_table_consistent),
	    cmocka_unit_test(test_roundtrip_every_opcode),
	    cmocka_unit_test(test_put_sw_matches_build),
	    cmocka_unit_test(test_put_aeth_matches_build),
	    cmocka_unit_test(test_bth_bit_positions),
	    cmocka_unit_test(test_truncation_every_prefix),
	    cmocka_unit_test(test_payload_rules),
	    cmocka_unit_test(test_psn_serial_arithmetic),
	    cmocka_unit_test(test_aeth_syndromes),
	};
	return cmocka_run_group_tests_name("ib_hdr", tests, NULL, NULL);
}
