/* SPDX-License-Identifier: BSD-3-Clause */
/* InfiniBand transport header codec: the opcode table, parse and build (IBA 9.2 - 9.3). */
#include "wire/ib_hdr.h"

#include <errno.h>
#include <string.h>

#define H(x)  RFW_HDR_##x
#define F(x)  RFW_OPF_##x
#define REQ   (F(REQUEST))
#define RSP   (F(RESPONSE))
#define PL    (F(PAYLOAD))
#define SEND  (F(SEND) | REQ | PL)
#define WRITE (F(WRITE) | REQ | PL)
#define RRSP  (F(READ) | RSP | PL)

/*
 * The one opcode table (IBA table 38, Annex A17.9.3 for the CNP). UC repeats the RC
 * SEND/WRITE rows with the UC transport bits; UD has only SEND ONLY [with immediate].
 */
/* A header set's length in bytes, as a constant expression. */
#define HLEN(h)                                                                                    \
	(RFW_BTH_LEN + ((h)&H(RETH) ? RFW_RETH_LEN : 0) + ((h)&H(AETH) ? RFW_AETH_LEN : 0) +       \
	 ((h)&H(ATOMICETH) ? RFW_ATOMICETH_LEN : 0) +                                              \
	 ((h)&H(ATOMICACKETH) ? RFW_ATOMICACKETH_LEN : 0) + ((h)&H(IMMDT) ? RFW_IMMDT_LEN : 0) +   \
	 ((h)&H(IETH) ? RFW_IETH_LEN : 0) + ((h)&H(DETH) ? RFW_DETH_LEN : 0) +                     \
	 ((h)&H(CNP_RSVD) ? RFW_CNP_RSVD_LEN : 0))
#define OPI(nm, hdrs_, flags_)                                                                     \
	[RFW_OP_##nm] = {.name = #nm,                                                              \
	                 .opcode = RFW_OP_##nm,                                                    \
	                 .transport = RFW_OP_##nm >> 5,                                            \
	                 .hdrs = (hdrs_),                                                          \
	                 .flags = (flags_),                                                        \
	                 .hdr_len = HLEN(hdrs_)}
#define SEND_WRITE_ROWS(T)                                                                         \
	OPI(T##_SEND_FIRST, 0, SEND | F(FIRST)), OPI(T##_SEND_MIDDLE, 0, SEND | F(MIDDLE)),        \
	    OPI(T##_SEND_LAST, 0, SEND | F(LAST)),                                                 \
	    OPI(T##_SEND_LAST_IMM, H(IMMDT), SEND | F(LAST) | F(IMM)),                             \
	    OPI(T##_SEND_ONLY, 0, SEND | F(ONLY)),                                                 \
	    OPI(T##_SEND_ONLY_IMM, H(IMMDT), SEND | F(ONLY) | F(IMM)),                             \
	    OPI(T##_RDMA_WRITE_FIRST, H(RETH), WRITE | F(FIRST)),                                  \
	    OPI(T##_RDMA_WRITE_MIDDLE, 0, WRITE | F(MIDDLE)),                                      \
	    OPI(T##_RDMA_WRITE_LAST, 0, WRITE | F(LAST)),                                          \
	    OPI(T##_RDMA_WRITE_LAST_IMM, H(IMMDT), WRITE | F(LAST) | F(IMM)),                      \
	    OPI(T##_RDMA_WRITE_ONLY, H(RETH), WRITE | F(ONLY)),                                    \
	    OPI(T##_RDMA_WRITE_ONLY_IMM, H(RETH) | H(IMMDT), WRITE | F(ONLY) | F(IMM))

const struct rfw_ib_opcode_info rfw_ib_op_table[256] = {
    SEND_WRITE_ROWS(RC),
    OPI(RC_RDMA_READ_REQUEST, H(RETH), REQ | F(READ) | F(ONLY)),
    OPI(RC_RDMA_READ_RESPONSE_FIRST, H(AETH), RRSP | F(FIRST)),
    OPI(RC_RDMA_READ_RESPONSE_MIDDLE, 0, RRSP | F(MIDDLE)),
    OPI(RC_RDMA_READ_RESPONSE_LAST, H(AETH), RRSP | F(LAST)),
    OPI(RC_RDMA_READ_RESPONSE_ONLY, H(AETH), RRSP | F(ONLY)),
    OPI(RC_ACKNOWLEDGE, H(AETH), RSP | F(ACK) | F(ONLY)),
    OPI(RC_ATOMIC_ACKNOWLEDGE, H(AETH) | H(ATOMICACKETH), RSP | F(ATOMIC) | F(ONLY)),
    OPI(RC_COMPARE_SWAP, H(ATOMICETH), REQ | F(ATOMIC) | F(ONLY)),
    OPI(RC_FETCH_ADD, H(ATOMICETH), REQ | F(ATOMIC) | F(ONLY)),
    OPI(RC_SEND_LAST_INV, H(IETH), SEND | F(LAST) | F(INV)),
    OPI(RC_SEND_ONLY_INV, H(IETH), SEND | F(ONLY) | F(INV)),
    SEND_WRITE_ROWS(UC),
    OPI(UD_SEND_ONLY, H(DETH), SEND | F(ONLY)),
    OPI(UD_SEND_ONLY_IMM, H(DETH) | H(IMMDT), SEND | F(ONLY) | F(IMM)),
    OPI(CNP, H(CNP_RSVD), F(CNP)),
};

const char *rfw_ib_opcode_name(uint8_t opcode)
{
	const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(opcode);

	return oi ? oi->name : "UNKNOWN";
}

int rfw_ib_opcode_by_name(const char *name)
{
	for (unsigned i = 0; i < 256; i++)
		if (rfw_ib_op_table[i].name && strcmp(rfw_ib_op_table[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

const char *rfw_aeth_syndrome_name(uint8_t syndrome)
{
	static const char *const nak_names[] = {
	    [RFW_NAK_PSN_SEQ_ERR] = "nak_psn_seq_err",
	    [RFW_NAK_INVALID_REQUEST] = "nak_invalid_request",
	    [RFW_NAK_REMOTE_ACCESS_ERR] = "nak_remote_access_err",
	    [RFW_NAK_REMOTE_OP_ERR] = "nak_remote_op_err",
	    [RFW_NAK_INVALID_RD_REQUEST] = "nak_invalid_rd_request",
	};
	unsigned v = rfw_aeth_syndrome_value(syndrome);

	switch (rfw_aeth_syndrome_type(syndrome)) {
	case RFW_AETH_ACK:
		return "ack";
	case RFW_AETH_RNR_NAK:
		return "rnr_nak";
	case RFW_AETH_NAK:
		return v <= RFW_NAK_INVALID_RD_REQUEST ? nak_names[v] : "nak_reserved";
	default:
		return "reserved";
	}
}

static const char *const ib_err_names[] = {
#define RFW_IB_ERR_STR(name, str) [RFW_IB_ERR_##name] = (str),
    RFW_FOREACH_IB_ERR(RFW_IB_ERR_STR)
#undef RFW_IB_ERR_STR
};

const struct rfw_ib_pkt rfw_ib_pkt_zero;

const char *rfw_ib_err_name(enum rfw_ib_err err)
{
	return (unsigned)err < RFW_IB_ERR__COUNT ? ib_err_names[err] : "unknown";
}

/*
 * The BTH (layout above rfw_bth_opcode), one field from the byte that holds it: shifts and
 * masks of whole words compiled to stores and read-modify-writes of the flag bytes.
 */
static inline void parse_bth(const uint8_t *p, struct rfw_bth *bth)
{
	uint8_t b1 = p[1], b4 = p[4], b8 = p[8];

	bth->opcode = p[0];
	bth->se = (b1 & 0x80) != 0;
	bth->mig = (b1 & 0x40) != 0;
	bth->padcnt = (uint8_t)((b1 >> 4) & 3);
	bth->tver = (uint8_t)(b1 & 0xf);
	bth->pkey = rfw_get_be16(p + 2);
	bth->fecn = (b4 & 0x80) != 0;
	bth->becn = (b4 & 0x40) != 0;
	bth->resv6 = (uint8_t)(b4 & 0x3f);
	bth->dqpn = rfw_get_be32(p + 4) & RFW_QPN_MASK;
	bth->ackreq = (b8 & 0x80) != 0;
	bth->resv7 = (uint8_t)(b8 & 0x7f);
	bth->psn = rfw_get_be32(p + 8) & RFW_PSN_MASK;
}

/* DETH, RETH, AtomicETH (requests), from *@off. */
static enum rfw_ib_err parse_req_ext(const uint8_t *buf, size_t len, uint32_t hdrs, size_t *off,
                                     struct rfw_ib_pkt *pkt)
{
	if (hdrs & RFW_HDR_DETH) {
		if (len < *off + RFW_DETH_LEN)
			return RFW_IB_ERR_TRUNC_DETH;
		pkt->deth.qkey = rfw_get_be32(buf + *off);
		if (buf[*off + 4])
			pkt->warnings |= RFW_IB_WARN_RESV_DETH;
		pkt->deth.src_qpn = rfw_get_be24(buf + *off + 5);
		*off += RFW_DETH_LEN;
	}
	if (hdrs & RFW_HDR_RETH) {
		if (len < *off + RFW_RETH_LEN)
			return RFW_IB_ERR_TRUNC_RETH;
		pkt->reth.va = rfw_get_be64(buf + *off);
		pkt->reth.rkey = rfw_get_be32(buf + *off + 8);
		pkt->reth.dma_len = rfw_get_be32(buf + *off + 12);
		*off += RFW_RETH_LEN;
	}
	if (hdrs & RFW_HDR_ATOMICETH) {
		if (len < *off + RFW_ATOMICETH_LEN)
			return RFW_IB_ERR_TRUNC_ATOMICETH;
		pkt->atomiceth.va = rfw_get_be64(buf + *off);
		pkt->atomiceth.rkey = rfw_get_be32(buf + *off + 8);
		pkt->atomiceth.swap_add = rfw_get_be64(buf + *off + 12);
		pkt->atomiceth.compare = rfw_get_be64(buf + *off + 20);
		*off += RFW_ATOMICETH_LEN;
	}
	return RFW_IB_ERR_OK;
}

/* AETH, AtomicAckETH, ImmDt, IETH, a CNP's reserved bytes, from *@off. */
static enum rfw_ib_err parse_resp_ext(const uint8_t *buf, size_t len, uint32_t hdrs, size_t *off,
                                      struct rfw_ib_pkt *pkt)
{
	if (hdrs & RFW_HDR_AETH) {
		if (len < *off + RFW_AETH_LEN)
			return RFW_IB_ERR_TRUNC_AETH;
		pkt->aeth.syndrome = buf[*off];
		pkt->aeth.msn = rfw_get_be24(buf + *off + 1);
		*off += RFW_AETH_LEN;
	}
	if (hdrs & RFW_HDR_ATOMICACKETH) {
		if (len < *off + RFW_ATOMICACKETH_LEN)
			return RFW_IB_ERR_TRUNC_ATOMICACKETH;
		pkt->atomic_orig = rfw_get_be64(buf + *off);
		*off += RFW_ATOMICACKETH_LEN;
	}
	if (hdrs & RFW_HDR_IMMDT) {
		if (len < *off + RFW_IMMDT_LEN)
			return RFW_IB_ERR_TRUNC_IMMDT;
		pkt->imm = rfw_get_be32(buf + *off);
		*off += RFW_IMMDT_LEN;
	}
	if (hdrs & RFW_HDR_IETH) {
		if (len < *off + RFW_IETH_LEN)
			return RFW_IB_ERR_TRUNC_IETH;
		pkt->ieth_rkey = rfw_get_be32(buf + *off);
		*off += RFW_IETH_LEN;
	}
	if (hdrs & RFW_HDR_CNP_RSVD) {
		if (len < *off + RFW_CNP_RSVD_LEN)
			return RFW_IB_ERR_TRUNC_CNP;
		*off += RFW_CNP_RSVD_LEN;
	}
	return RFW_IB_ERR_OK;
}

/*
 * Zero a packet in two halves: one memset of this size compiles to `rep stosq` (generic
 * tuning), whose start-up was a third of this function's time per packet, and a copy of a
 * zero object to eight loads and eight stores; each half of 64 bytes or less is stored inline
 * from one zero register.
 */
static inline void pkt_clear(struct rfw_ib_pkt *pkt)
{
	_Static_assert(sizeof(*pkt) > 64 && sizeof(*pkt) <= 128, "two halves of 64 bytes at most");
	memset(pkt, 0, 64);
	memset((uint8_t *)pkt + 64, 0, sizeof(*pkt) - 64);
}

/*
 * The extended headers of the RC exchanges that make up the traffic (RETH, AETH, ImmDt), for a
 * packet already known to hold all of its headers: no length check per header.
 */
#define COMMON_EXT (RFW_HDR_RETH | RFW_HDR_AETH | RFW_HDR_IMMDT)

static inline size_t parse_common_ext(const uint8_t *buf, uint32_t hdrs, struct rfw_ib_pkt *pkt)
{
	size_t off = RFW_BTH_LEN;

	/* IBA 9.3 wire order: RETH, then AETH, then ImmDt. */
	if (hdrs & RFW_HDR_RETH) {
		pkt->reth.va = rfw_get_be64(buf + off);
		pkt->reth.rkey = rfw_get_be32(buf + off + 8);
		pkt->reth.dma_len = rfw_get_be32(buf + off + 12);
		off += RFW_RETH_LEN;
	}
	if (hdrs & RFW_HDR_AETH) {
		pkt->aeth.syndrome = buf[off];
		pkt->aeth.msn = rfw_get_be32(buf + off) & RFW_MSN_MASK;
		off += RFW_AETH_LEN;
	}
	if (hdrs & RFW_HDR_IMMDT) {
		pkt->imm = rfw_get_be32(buf + off);
		off += RFW_IMMDT_LEN;
	}
	return off;
}

enum rfw_ib_err rfw_ib_parse(const uint8_t *buf, size_t len, struct rfw_ib_pkt *pkt)
{
	const struct rfw_ib_opcode_info *oi;
	size_t off = RFW_BTH_LEN, rest;
	enum rfw_ib_err err;

	pkt_clear(pkt);
	if (len < RFW_BTH_LEN)
		return RFW_IB_ERR_TRUNC_BTH;
	parse_bth(buf, &pkt->bth);
	/* IBA 9.6.1: a packet whose TVer the receiver does not support is silently dropped. */
	if (pkt->bth.tver != RFW_TVER)
		return RFW_IB_ERR_BAD_TVER;
	oi = rfw_ib_opcode_info(pkt->bth.opcode);
	if (oi == NULL)
		return RFW_IB_ERR_RESERVED_OPCODE;
	pkt->op = oi;
	/* Reserved fields: transmitted as zero, ignored by the receiver (IBA 9.2). */
	if (pkt->bth.resv6 || pkt->bth.resv7)
		pkt->warnings |= RFW_IB_WARN_RESV_BTH;

	/* Extended headers in wire order (IBA 9.3): DETH RETH AtomicETH, then AETH AtomicAckETH
	 * ImmDt IETH (and a CNP's reserved bytes). Every header there (the table's length) and
	 * only common ones: read without checks; otherwise the walk finds which one is short. */
	if (len >= oi->hdr_len && !(oi->hdrs & ~COMMON_EXT)) {
		off = parse_common_ext(buf, oi->hdrs, pkt);
	} else {
		err = parse_req_ext(buf, len, oi->hdrs, &off, pkt);
		if (err == RFW_IB_ERR_OK)
			err = parse_resp_ext(buf, len, oi->hdrs, &off, pkt);
		if (err != RFW_IB_ERR_OK)
			return err;
	}

	rest = len - off;
	if (pkt->bth.padcnt > rest)
		return RFW_IB_ERR_PAD_EXCEEDS_PAYLOAD;
	rest -= pkt->bth.padcnt;
	/* rocefw SR extension: an SR-marked ACKNOWLEDGE carries a SACK block (transport-sr.md). */
	if (rest && !(oi->flags & RFW_OPF_PAYLOAD) &&
	    !(pkt->bth.opcode == RFW_OP_RC_ACKNOWLEDGE && pkt->bth.resv7 == RFW_SR_MARK))
		return RFW_IB_ERR_UNEXPECTED_PAYLOAD;
	pkt->payload_len = (uint32_t)rest;
	pkt->payload = rest ? buf + off : NULL;
	return RFW_IB_ERR_OK;
}

int rfw_ib_build(uint8_t *buf, size_t cap, const struct rfw_ib_pkt *pkt)
{
	const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info(pkt->bth.opcode);

	if (oi == NULL)
		return -EINVAL;
	if (cap < oi->hdr_len)
		return -ENOSPC;
	return rfw_ib_build_op(buf, oi, pkt);
}

int rfw_ib_build_op(uint8_t *buf, const struct rfw_ib_opcode_info *oi, const struct rfw_ib_pkt *pkt)
{
	const struct rfw_bth *b = &pkt->bth;
	size_t off = RFW_BTH_LEN;

	/* The BTH as three big-endian words (layout above rfw_bth_opcode); reserved bits zero. */
	rfw_put_be32(buf, (uint32_t)b->opcode << 24 | (uint32_t)b->se << 23 |
	                      (uint32_t)b->mig << 22 | (uint32_t)(b->padcnt & 3) << 20 |
	                      (uint32_t)(b->tver & 0xf) << 16 | b->pkey);
	rfw_put_be32(buf + 4,
	             (uint32_t)b->fecn << 31 | (uint32_t)b->becn << 30 | (b->dqpn & RFW_QPN_MASK));
	rfw_put_be32(buf + 8, (uint32_t)b->ackreq << 31 | (b->psn & RFW_PSN_MASK));

	if (oi->hdrs & RFW_HDR_DETH) {
		rfw_put_be32(buf + off, pkt->deth.qkey);
		buf[off + 4] = 0;
		rfw_put_be24(buf + off + 5, pkt->deth.src_qpn);
		off += RFW_DETH_LEN;
	}
	if (oi->hdrs & RFW_HDR_RETH) {
		rfw_put_be64(buf + off, pkt->reth.va);
		rfw_put_be32(buf + off + 8, pkt->reth.rkey);
		rfw_put_be32(buf + off + 12, pkt->reth.dma_len);
		off += RFW_RETH_LEN;
	}
	/* Most packets sent end here (SEND/WRITE FIRST, MIDDLE, LAST, ONLY; READ requests; UD
	   SENDs): the other headers' tests skipped. */
	if ((oi->hdrs & ~(uint32_t)(RFW_HDR_DETH | RFW_HDR_RETH)) == 0)
		return (int)off;
	if (oi->hdrs & RFW_HDR_ATOMICETH) {
		rfw_put_be64(buf + off, pkt->atomiceth.va);
		rfw_put_be32(buf + off + 8, pkt->atomiceth.rkey);
		rfw_put_be64(buf + off + 12, pkt->atomiceth.swap_add);
		rfw_put_be64(buf + off + 20, pkt->atomiceth.compare);
		off += RFW_ATOMICETH_LEN;
	}
	if (oi->hdrs & RFW_HDR_AETH) {
		buf[off] = pkt->aeth.syndrome;
		rfw_put_be24(buf + off + 1, pkt->aeth.msn);
		off += RFW_AETH_LEN;
	}
	if (oi->hdrs & RFW_HDR_ATOMICACKETH) {
		rfw_put_be64(buf + off, pkt->atomic_orig);
		off += RFW_ATOMICACKETH_LEN;
	}
	if (oi->hdrs & RFW_HDR_IMMDT) {
		rfw_put_be32(buf + off, pkt->imm);
		off += RFW_IMMDT_LEN;
	}
	if (oi->hdrs & RFW_HDR_IETH) {
		rfw_put_be32(buf + off, pkt->ieth_rkey);
		off += RFW_IETH_LEN;
	}
	if (oi->hdrs & RFW_HDR_CNP_RSVD) {
		memset(buf + off, 0, RFW_CNP_RSVD_LEN);
		off += RFW_CNP_RSVD_LEN;
	}
	return (int)off;
}
