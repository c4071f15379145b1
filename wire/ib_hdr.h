/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * InfiniBand transport headers as carried by RoCEv2 (IBA 1.4 chapter 9, Annex A17).
 *
 * Two layers, as in rxe: raw accessors that read or write one field at a byte pointer
 * (rfw_bth_psn(p), ...), and a parsed packet (struct rfw_ib_pkt) produced by rfw_ib_parse()
 * from one opcode table. Parsing is zero-copy: the parsed packet points into the caller's
 * buffer. Nothing here depends on DPDK or on the network headers in front of the BTH.
 */
#ifndef RFW_WIRE_IB_HDR_H
#define RFW_WIRE_IB_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Header lengths in bytes (IBA 9.2 - 9.3, Annex A17.6.2 for the CNP). */
#define RFW_BTH_LEN          12
#define RFW_RETH_LEN         16
#define RFW_AETH_LEN         4
#define RFW_ATOMICETH_LEN    28
#define RFW_ATOMICACKETH_LEN 8
#define RFW_IMMDT_LEN        4
#define RFW_IETH_LEN         4
#define RFW_DETH_LEN         8
#define RFW_CNP_RSVD_LEN     16 /* the CNP carries 16 reserved bytes after the BTH */
#define RFW_ICRC_LEN         4

#define RFW_PSN_MASK        0xffffffu
#define RFW_QPN_MASK        0xffffffu
#define RFW_MSN_MASK        0xffffffu
#define RFW_TVER            0 /* the only transport header version (IBA 9.2) */
#define RFW_ROCEV2_UDP_PORT 4791

/*
 * rocefw selective-repeat extension (docs/transport-sr.md): every packet of an SR QP carries
 * this value in the BTH Resv7 field (byte 8 bits 6:0), which IBA transmits as zero. An SR
 * ACKNOWLEDGE carries a SACK block as payload; SR SEND/WRITE packets carry an SRETH as the
 * first RFW_SRETH_LEN payload bytes.
 */
#define RFW_SR_MARK        0x53
#define RFW_SRETH_LEN      16
#define RFW_SACK_HDRLEN    4
#define RFW_SACK_MAX_WORDS 64 /* at most 2048 PSNs reported beyond the cumulative ACK */

/* Transport service, the top three bits of the opcode (IBA 9.2, table 38). */
enum rfw_ib_transport {
	RFW_IB_RC = 0,
	RFW_IB_UC = 1,
	RFW_IB_RD = 2,
	RFW_IB_UD = 3,
	RFW_IB_CNP_SVC = 4, /* 0x80-0x9f: congestion notification (Annex A17.9.3) */
	RFW_IB_XRC = 5,
};

/*
 * Every opcode rocefw decodes: name, value. RC, UC and UD as in IBA table 38 (RD and XRC are
 * not decoded: rocefw never speaks them and a frame using them is reported as unsupported),
 * plus the RoCEv2 CNP.
 */
#define RFW_FOREACH_OPCODE(X)                                                                      \
	X(RC_SEND_FIRST, 0x00)                                                                     \
	X(RC_SEND_MIDDLE, 0x01)                                                                    \
	X(RC_SEND_LAST, 0x02)                                                                      \
	X(RC_SEND_LAST_IMM, 0x03)                                                                  \
	X(RC_SEND_ONLY, 0x04)                                                                      \
	X(RC_SEND_ONLY_IMM, 0x05)                                                                  \
	X(RC_RDMA_WRITE_FIRST, 0x06)                                                               \
	X(RC_RDMA_WRITE_MIDDLE, 0x07)                                                              \
	X(RC_RDMA_WRITE_LAST, 0x08)                                                                \
	X(RC_RDMA_WRITE_LAST_IMM, 0x09)                                                            \
	X(RC_RDMA_WRITE_ONLY, 0x0a)                                                                \
	X(RC_RDMA_WRITE_ONLY_IMM, 0x0b)                                                            \
	X(RC_RDMA_READ_REQUEST, 0x0c)                                                              \
	X(RC_RDMA_READ_RESPONSE_FIRST, 0x0d)                                                       \
	X(RC_RDMA_READ_RESPONSE_MIDDLE, 0x0e)                                                      \
	X(RC_RDMA_READ_RESPONSE_LAST, 0x0f)                                                        \
	X(RC_RDMA_READ_RESPONSE_ONLY, 0x10)                                                        \
	X(RC_ACKNOWLEDGE, 0x11)                                                                    \
	X(RC_ATOMIC_ACKNOWLEDGE, 0x12)                                                             \
	X(RC_COMPARE_SWAP, 0x13)                                                                   \
	X(RC_FETCH_ADD, 0x14)                                                                      \
	X(RC_SEND_LAST_INV, 0x16)                                                                  \
	X(RC_SEND_ONLY_INV, 0x17)                                                                  \
	X(UC_SEND_FIRST, 0x20)                                                                     \
	X(UC_SEND_MIDDLE, 0x21)                                                                    \
	X(UC_SEND_LAST, 0x22)                                                                      \
	X(UC_SEND_LAST_IMM, 0x23)                                                                  \
	X(UC_SEND_ONLY, 0x24)                                                                      \
	X(UC_SEND_ONLY_IMM, 0x25)                                                                  \
	X(UC_RDMA_WRITE_FIRST, 0x26)                                                               \
	X(UC_RDMA_WRITE_MIDDLE, 0x27)                                                              \
	X(UC_RDMA_WRITE_LAST, 0x28)                                                                \
	X(UC_RDMA_WRITE_LAST_IMM, 0x29)                                                            \
	X(UC_RDMA_WRITE_ONLY, 0x2a)                                                                \
	X(UC_RDMA_WRITE_ONLY_IMM, 0x2b)                                                            \
	X(UD_SEND_ONLY, 0x64)                                                                      \
	X(UD_SEND_ONLY_IMM, 0x65)                                                                  \
	X(CNP, 0x81)

enum rfw_ib_opcode {
#define RFW_OPC_ENUM(name, val) RFW_OP_##name = (val),
	RFW_FOREACH_OPCODE(RFW_OPC_ENUM)
#undef RFW_OPC_ENUM
};

/* Which extended headers follow the BTH, in wire order (IBA 9.3 and table 38's last column). */
enum rfw_ib_hdr_bit {
	RFW_HDR_RETH = 1u << 0,
	RFW_HDR_AETH = 1u << 1,
	RFW_HDR_ATOMICETH = 1u << 2,
	RFW_HDR_ATOMICACKETH = 1u << 3,
	RFW_HDR_IMMDT = 1u << 4,
	RFW_HDR_IETH = 1u << 5,
	RFW_HDR_DETH = 1u << 6,
	RFW_HDR_CNP_RSVD = 1u << 7,
};

/* Per-opcode properties. */
enum rfw_ib_op_flag {
	RFW_OPF_PAYLOAD = 1u << 0,  /* may carry payload (zero bytes allowed) */
	RFW_OPF_FIRST = 1u << 1,    /* first packet of a multi-packet message */
	RFW_OPF_MIDDLE = 1u << 2,   /* middle packet */
	RFW_OPF_LAST = 1u << 3,     /* last packet */
	RFW_OPF_ONLY = 1u << 4,     /* the whole message in one packet */
	RFW_OPF_REQUEST = 1u << 5,  /* sent by a requester */
	RFW_OPF_RESPONSE = 1u << 6, /* sent by a responder (ACK, READ response, atomic ACK) */
	RFW_OPF_SEND = 1u << 7,
	RFW_OPF_WRITE = 1u << 8,
	RFW_OPF_READ = 1u << 9,
	RFW_OPF_ATOMIC = 1u << 10,
	RFW_OPF_IMM = 1u << 11, /* carries ImmDt */
	RFW_OPF_INV = 1u << 12, /* carries IETH */
	RFW_OPF_ACK = 1u << 13, /* an acknowledge packet (AETH, no payload) */
	RFW_OPF_CNP = 1u << 14,
};

struct rfw_ib_opcode_info {
	const char *name; /* "RC_SEND_ONLY" */
	uint8_t opcode;
	uint8_t transport; /* enum rfw_ib_transport */
	uint16_t hdrs;     /* enum rfw_ib_hdr_bit */
	uint16_t flags;    /* enum rfw_ib_op_flag */
	uint8_t hdr_len;   /* BTH and every extended header, in bytes */
};

/* The one opcode table (IBA table 38); entries without a name are not decoded. */
extern const struct rfw_ib_opcode_info rfw_ib_op_table[256];

/* The table entry for an opcode, or NULL if rocefw does not decode it (reserved, RD, XRC).
   Inline: every packet looks its opcode up two or three times. */
static inline const struct rfw_ib_opcode_info *rfw_ib_opcode_info(uint8_t opcode)
{
	const struct rfw_ib_opcode_info *oi = &rfw_ib_op_table[opcode];

	return oi->name ? oi : NULL;
}
/* Name of an opcode: the table's, or "UNKNOWN". */
const char *rfw_ib_opcode_name(uint8_t opcode);
/* Opcode by table name; -ENOENT if no opcode has that name. */
int rfw_ib_opcode_by_name(const char *name);

/* AETH syndrome (IBA 9.7.5.2.6, table 44): bits 7:5 the type, bits 4:0 the value. */
enum rfw_aeth_type {
	RFW_AETH_ACK = 0,     /* value = credit count (0x1f: invalid / unlimited) */
	RFW_AETH_RNR_NAK = 1, /* value = RNR timer code (IBA table 45) */
	RFW_AETH_RSVD = 2,
	RFW_AETH_NAK = 3, /* value = NAK code, below */
};
enum rfw_aeth_nak_code {
	RFW_NAK_PSN_SEQ_ERR = 0,
	RFW_NAK_INVALID_REQUEST = 1,
	RFW_NAK_REMOTE_ACCESS_ERR = 2,
	RFW_NAK_REMOTE_OP_ERR = 3,
	RFW_NAK_INVALID_RD_REQUEST = 4,
};
#define RFW_AETH_SYNDROME(type, value) ((uint8_t)(((type) << 5) | ((value)&0x1f)))
static inline unsigned rfw_aeth_syndrome_type(uint8_t syndrome)
{
	return syndrome >> 5;
}
static inline unsigned rfw_aeth_syndrome_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}
/* Human name of a syndrome class: "ack", "rnr_nak", "nak_psn_seq_err", ... ("reserved" else). */
const char *rfw_aeth_syndrome_name(uint8_t syndrome);

/* 24-bit serial-number arithmetic (IBA 9.7.1.2): <0 if a precedes b, 0 if equal, >0 after. */
static inline int32_t rfw_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}
static inline uint32_t rfw_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & RFW_PSN_MASK;
}

/* ---- raw accessors over the wire bytes (big-endian) ---- */

static inline uint16_t rfw_get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t rfw_get_be24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}
static inline uint32_t rfw_get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t rfw_get_be64(const uint8_t *p)
{
	return ((uint64_t)rfw_get_be32(p) << 32) | rfw_get_be32(p + 4);
}
static inline void rfw_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void rfw_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static inline void rfw_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void rfw_put_be64(uint8_t *p, uint64_t v)
{
	rfw_put_be32(p, (uint32_t)(v >> 32));
	rfw_put_be32(p + 4, (uint32_t)v);
}
/* @v in wire (big-endian) byte order, a word to store whole with memcpy (not <endian.h>'s
 * htobe32: a strict C11 includer of this header would not have it). */
static inline uint32_t rfw_be32_of(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

/*
 * BTH layout (IBA 9.2):
 *   byte 0     OpCode
 *   byte 1     SE(7) M(6) PadCnt(5:4) TVer(3:0)
 *   bytes 2-3  P_Key
 *   byte 4     FECN(7) BECN(6) Resv6(5:0)   (RoCEv2: Annex A17.3.2; IBA calls it Resv8a)
 *   bytes 5-7  DestQP
 *   byte 8     A(7) Resv7(6:0)
 *   bytes 9-11 PSN
 */
static inline uint8_t rfw_bth_opcode(const uint8_t *bth)
{
	return bth[0];
}
static inline bool rfw_bth_se(const uint8_t *bth)
{
	return bth[1] & 0x80;
}
static inline bool rfw_bth_mig(const uint8_t *bth)
{
	return bth[1] & 0x40;
}
static inline unsigned rfw_bth_padcnt(const uint8_t *bth)
{
	return (bth[1] >> 4) & 3;
}
static inline unsigned rfw_bth_tver(const uint8_t *bth)
{
	return bth[1] & 0xf;
}
static inline uint16_t rfw_bth_pkey(const uint8_t *bth)
{
	return rfw_get_be16(bth + 2);
}
static inline bool rfw_bth_fecn(const uint8_t *bth)
{
	return bth[4] & 0x80;
}
static inline bool rfw_bth_becn(const uint8_t *bth)
{
	return bth[4] & 0x40;
}
static inline uint32_t rfw_bth_dqpn(const uint8_t *bth)
{
	return rfw_get_be24(bth + 5);
}
static inline bool rfw_bth_ackreq(const uint8_t *bth)
{
	return bth[8] & 0x80;
}
static inline uint32_t rfw_bth_psn(const uint8_t *bth)
{
	return rfw_get_be24(bth + 9);
}
static inline void rfw_bth_set_psn(uint8_t *bth, uint32_t psn)
{
	rfw_put_be24(bth + 9, psn & RFW_PSN_MASK);
}
static inline void rfw_bth_set_fecn_becn(uint8_t *bth, bool fecn, bool becn)
{
	bth[4] = (uint8_t)((bth[4] & 0x3f) | (fecn ? 0x80 : 0) | (becn ? 0x40 : 0));
}

/* ---- parsed packet ---- */

struct rfw_bth {
	uint8_t opcode;
	bool se;  /* solicited event */
	bool mig; /* MigReq */
	uint8_t padcnt;
	uint8_t tver;
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint8_t resv6; /* byte 4 bits 5:0: zero on transmit, ignored on receive */
	uint32_t dqpn;
	bool ackreq;   /* the A bit */
	uint8_t resv7; /* byte 8 bits 6:0: zero on transmit, ignored on receive */
	uint32_t psn;
};

struct rfw_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
};

struct rfw_aeth {
	uint8_t syndrome;
	uint32_t msn;
};

struct rfw_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add; /* swap data (CmpSwap) or add data (FetchAdd) */
	uint64_t compare;
};

struct rfw_deth {
	uint32_t qkey;
	uint32_t src_qpn;
};

/* Non-fatal observations from parsing: the packet is usable, but a tool may report these. */
enum rfw_ib_warn {
	RFW_IB_WARN_RESV_BTH = 1u << 0,  /* BTH Resv6 or Resv7 non-zero (IBA: ignored on receive) */
	RFW_IB_WARN_RESV_DETH = 1u << 1, /* DETH reserved byte non-zero */
};

struct rfw_ib_pkt {
	const struct rfw_ib_opcode_info *op;
	struct rfw_bth bth;
	struct rfw_reth reth;           /* valid if op->hdrs & RFW_HDR_RETH */
	struct rfw_aeth aeth;           /* ... RFW_HDR_AETH */
	struct rfw_atomiceth atomiceth; /* ... RFW_HDR_ATOMICETH */
	uint64_t atomic_orig;           /* AtomicAckETH: original remote data */
	uint32_t imm;                   /* ImmDt, as on the wire (big-endian value) */
	uint32_t ieth_rkey;             /* IETH: the R_Key to invalidate */
	struct rfw_deth deth;
	const uint8_t *payload; /* first payload byte, or NULL when payload_len is 0 */
	uint32_t payload_len;   /* excluding the pad bytes */
	uint32_t warnings;      /* enum rfw_ib_warn */
};

/*
 * Reasons rfw_ib_parse() rejects a packet. Names are stable: tools print them and tests and
 * scripts match them.
 */
#define RFW_FOREACH_IB_ERR(X)                                                                      \
	X(OK, "ok")                                                                                \
	X(TRUNC_BTH, "truncated_bth")                                                              \
	X(BAD_TVER, "bad_tver")                                                                    \
	X(RESERVED_OPCODE, "reserved_opcode")                                                      \
	X(TRUNC_RETH, "truncated_reth")                                                            \
	X(TRUNC_AETH, "truncated_aeth")                                                            \
	X(TRUNC_ATOMICETH, "truncated_atomiceth")                                                  \
	X(TRUNC_ATOMICACKETH, "truncated_atomicacketh")                                            \
	X(TRUNC_IMMDT, "truncated_immdt")                                                          \
	X(TRUNC_IETH, "truncated_ieth")                                                            \
	X(TRUNC_DETH, "truncated_deth")                                                            \
	X(TRUNC_CNP, "truncated_cnp")                                                              \
	X(PAD_EXCEEDS_PAYLOAD, "padcnt_exceeds_payload")                                           \
	X(UNEXPECTED_PAYLOAD, "unexpected_payload")

enum rfw_ib_err {
#define RFW_IB_ERR_ENUM(name, str) RFW_IB_ERR_##name,
	RFW_FOREACH_IB_ERR(RFW_IB_ERR_ENUM)
#undef RFW_IB_ERR_ENUM
	    RFW_IB_ERR__COUNT
};

const char *rfw_ib_err_name(enum rfw_ib_err err);

/*
 * Parse the IB part of a packet: @buf points at the BTH, @len counts every byte up to (not
 * including) the ICRC. Never reads outside [buf, buf + len). Returns RFW_IB_ERR_OK and fills
 * @pkt, or the reason the packet is rejected (then @pkt is partially filled: bth and op are
 * valid from the point the BTH was readable).
 */
enum rfw_ib_err rfw_ib_parse(const uint8_t *buf, size_t len, struct rfw_ib_pkt *pkt);

/* All zeros: `*p = rfw_ib_pkt_zero` clears a packet with plain stores on the packet path. */
extern const struct rfw_ib_pkt rfw_ib_pkt_zero;

/*
 * Write the BTH and the extended headers @pkt->bth.opcode calls for, from @pkt's fields, into
 * @buf (capacity @cap). Reserved fields are written as zero (IBA: transmitted as 0); PadCnt is
 * written from @pkt->bth.padcnt. The payload is the caller's (it follows the headers, then
 * padcnt zero bytes, then the ICRC). Returns the header length, -EINVAL for an opcode not in
 * the table, -ENOSPC if @cap is too small.
 */
int rfw_ib_build(uint8_t *buf, size_t cap, const struct rfw_ib_pkt *pkt);
/*
 * rfw_ib_build for a packet whose @oi is rfw_ib_opcode_info(@pkt->bth.opcode) and whose @buf
 * holds oi->hdr_len bytes: the transmit path, which looked both up when it took the buffer.
 */
int rfw_ib_build_op(uint8_t *buf, const struct rfw_ib_opcode_info *oi,
                    const struct rfw_ib_pkt *pkt);

/*
 * A 32-bit word already in wire order into @p, one store. The writers below store their words
 * one by one: an array of words built on the stack and copied out whole was read back 8 or 16
 * bytes at a time over its 4-byte stores, which the store buffer cannot forward (perf put 3 %
 * of a 64 B WRITE's cycles on the BTH's; the rate did not move without it, the stall hid under
 * other work, but 6.5 instructions a message went).
 */
static inline void rfw_put_word(uint8_t *p, uint32_t w)
{
	memcpy(p, &w, sizeof(w));
}

/*
 * The BTH of the direct writers below (M, TVer, FECN, BECN and the reserved bits 0) into @buf.
 * Each word byte-swapped in a register and stored whole: rfw_put_be32's byte stores, inlined
 * into the packet path, were not merged (each byte shifted out and stored on its own).
 */
static inline void rfw_ib_put_bth_words(uint8_t *buf, uint8_t opcode, bool se, uint8_t padcnt,
                                        uint16_t pkey, uint32_t dqpn, bool ackreq, uint32_t psn)
{
	rfw_put_word(buf, rfw_be32_of((uint32_t)opcode << 24 | (uint32_t)se << 23 |
	                              (uint32_t)(padcnt & 3) << 20 | pkey));
	rfw_put_word(buf + 4, rfw_be32_of(dqpn & RFW_QPN_MASK));
	rfw_put_word(buf + 8, rfw_be32_of((uint32_t)ackreq << 31 | (psn & RFW_PSN_MASK)));
}

/* The extended headers rfw_ib_put_sw writes: those of every SEND and RDMA WRITE opcode and of
   the RDMA READ request. */
#define RFW_IB_SW_HDRS (RFW_HDR_RETH | RFW_HDR_IMMDT | RFW_HDR_IETH)

/*
 * The headers of a packet of @oi, whose hdrs are within RFW_IB_SW_HDRS (the SEND and RDMA
 * WRITE opcodes, the RDMA READ request), written from their values: BTH (M, TVer, FECN, BECN and
 * the reserved bits 0), then the RETH (@va, @rkey, @dma_len), ImmDt or IETH (@ext) that @oi has.
 * The bytes rfw_ib_build_op writes for the same fields (test_ib_hdr.c compares the two), without an
 * rfw_ib_pkt to clear, fill and read back: the requester's per-packet path. Returns
 * oi->hdr_len.
 */
static inline uint32_t rfw_ib_put_sw(uint8_t *buf, const struct rfw_ib_opcode_info *oi, bool se,
                                     uint8_t padcnt, uint16_t pkey, uint32_t dqpn, bool ackreq,
                                     uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dma_len,
                                     uint32_t ext)
{
	uint16_t hdrs = oi->hdrs;
	uint32_t off = RFW_BTH_LEN;

	rfw_ib_put_bth_words(buf, oi->opcode, se, padcnt, pkey, dqpn, ackreq, psn);
	if (hdrs & RFW_HDR_RETH) {
		rfw_put_word(buf + off, rfw_be32_of((uint32_t)(va >> 32)));
		rfw_put_word(buf + off + 4, rfw_be32_of((uint32_t)va));
		rfw_put_word(buf + off + 8, rfw_be32_of(rkey));
		rfw_put_word(buf + off + 12, rfw_be32_of(dma_len));
		off += RFW_RETH_LEN;
	}
	if (hdrs & (RFW_HDR_IMMDT | RFW_HDR_IETH)) { /* one of the two at most (IBA table 38) */
		uint32_t v = rfw_be32_of(ext);

		memcpy(buf + off, &v, 4);
	}
	return oi->hdr_len;
}

/* The headers rfw_ib_put_aeth writes: those of READ responses and ACKNOWLEDGE. */
#define RFW_IB_AETH_HDRS RFW_HDR_AETH

/*
 * rfw_ib_put_sw for a packet of @oi whose hdrs are within RFW_IB_AETH_HDRS (READ responses,
 * ACKNOWLEDGE): BTH (AckReq 0, as responses have it), then the AETH (@syndrome, @msn) if @oi
 * has one. The responder's per-packet path. Returns oi->hdr_len.
 */
static inline uint32_t rfw_ib_put_aeth(uint8_t *buf, const struct rfw_ib_opcode_info *oi,
                                       uint8_t padcnt, uint16_t pkey, uint32_t dqpn, uint32_t psn,
                                       uint8_t syndrome, uint32_t msn)
{
	rfw_ib_put_bth_words(buf, oi->opcode, false, padcnt, pkey, dqpn, false, psn);
	if (oi->hdrs & RFW_HDR_AETH) {
		uint32_t a = rfw_be32_of((uint32_t)syndrome << 24 | (msn & RFW_MSN_MASK));

		memcpy(buf + RFW_BTH_LEN, &a, 4);
	}
	return oi->hdr_len;
}

/* Pad bytes needed after @payload_len bytes so the IB payload is 4-byte aligned (IBA 9.2). */
static inline uint8_t rfw_ib_padcnt(uint32_t payload_len)
{
	return (uint8_t)((4 - (payload_len & 3)) & 3);
}

#ifdef __cplusplus
}
#endif
#endif
