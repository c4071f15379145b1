/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interop test cases (docs/interop.md): one RC connection between rocefw and a Linux rxe
 * device, one operation, a few messages, and both sides checking what they own.
 *
 * This file has neither DPDK nor libibverbs in it: the case record codec, the data pattern
 * and the case engine (the protocol both sides run over the out-of-band TCP connection) are
 * shared by the rocefw side (interop/rfw_case.c, DPDK + rfw_verbs) and the guest peer
 * (interop/peer/peer.c, libibverbs). Each side plugs its verbs in through struct ic_backend.
 *
 * Records on the TCP connection are rocefw-oob/2 records (docs/oob.md): the two types
 * defined here, `case` and `ready`, and rfw_oob.c's `conn` and `result`.
 */
#ifndef RFW_INTEROP_CASE_H
#define RFW_INTEROP_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/rfw_oob.h"

#define IC_NAME_MAX    64
#define IC_SIZE_MAX    (1u << 24)  /* 16 MiB: the largest message a case may use */
#define IC_COUNT_MAX   64          /* messages per case */
#define IC_MEM_MAX     (64u << 20) /* bytes of memory per side */
#define IC_TIMEOUT_DEF 60          /* seconds a case may take, default */
#define IC_ACK_TIMEOUT 14          /* local ACK timeout exponent both sides use (67 ms) */
#define IC_RNR_TIMER                                                                               \
	14 /* min RNR NAK timer code the responder advertises (IBA table 45: 1.28 ms) */

/* Who is the requester. */
enum ic_dir { IC_RFW_REQ, IC_RXE_REQ, IC__DIRS };
enum ic_op { IC_SEND, IC_SEND_IMM, IC_WRITE, IC_WRITE_IMM, IC_READ, IC_CAS, IC_FAA, IC__OPS };
/* Faults the requester injects: a wrong R_Key, or a remote range past the end of the MR. */
enum ic_fault { IC_FAULT_NONE, IC_FAULT_BAD_RKEY, IC_FAULT_OOB, IC__FAULTS };

/* ibv_wc_status values the engine names (rfw_wc_status has the same numbering). */
enum {
	IC_WC_SUCCESS = 0,
	IC_WC_WR_FLUSH_ERR = 5,
	IC_WC_REM_ACCESS_ERR = 10,
};

struct ic_case {
	char name[IC_NAME_MAX]; /* [A-Za-z0-9._-]+ */
	enum ic_dir dir;
	enum ic_op op;
	enum ic_fault fault;
	uint32_t size;         /* message bytes, 0..IC_SIZE_MAX (atomics: 8) */
	uint32_t mtu;          /* path MTU: 256, 512, 1024, 2048, 4096 */
	uint32_t count;        /* messages, 1..IC_COUNT_MAX */
	uint32_t psn;          /* first PSN of both directions, 24 bits */
	uint32_t rnr_delay_ms; /* responder posts its receives this long after `ready` */
	uint32_t tclass;       /* GRH traffic class of the rxe side's QP (2 = ECT(0)) */
	uint32_t seed;         /* data pattern seed */
	uint32_t timeout_s;    /* whole case, 1..3600 */
};

const char *ic_dir_name(enum ic_dir d);
const char *ic_op_name(enum ic_op o);
const char *ic_fault_name(enum ic_fault f);
int ic_dir_lookup(const char *s);
int ic_op_lookup(const char *s);
int ic_fault_lookup(const char *s);

/* Defaults for everything but the name, dir and op. */
void ic_case_init(struct ic_case *c);
/* Range checks; 0 or -EINVAL with a message naming the field. */
int ic_case_check(const struct ic_case *c, char *err, size_t errlen);

/*
 * Set one field from "key=value" (the record's keys: name dir op fault size mtu count psn
 * rnr_delay_ms tclass seed timeout). 0 or -EINVAL with a message.
 */
int ic_case_set(struct ic_case *c, const char *kv, char *err, size_t errlen);

/* "rocefw-oob/2 case" record: encode (length or -ENOSPC/-EINVAL), decode (0 or -EPROTO). */
int ic_case_encode(const struct ic_case *c, char *buf, size_t cap);
int ic_case_decode(const char *buf, size_t len, struct ic_case *c, char *err, size_t errlen);

/* Byte @i of message @k of the case's pattern. */
uint8_t ic_pattern(uint32_t seed, uint32_t k, uint32_t i);
/* Fill / compare a message; compare returns the first differing offset or -1. */
void ic_pattern_fill(uint8_t *p, uint32_t len, uint32_t seed, uint32_t k);
long ic_pattern_cmp(const uint8_t *p, uint32_t len, uint32_t seed, uint32_t k);
/* ImmDt of message @k (host order; the backends convert to their wire convention). */
uint32_t ic_imm(const struct ic_case *c, uint32_t k);
/* Atomics: the responder's initial value of slot k, and the operands of message k. */
uint64_t ic_atomic_init(const struct ic_case *c, uint32_t k);
uint64_t ic_atomic_add(uint32_t k);

/* Bytes between consecutive message slots, and the memory each side registers. */
uint32_t ic_slot(const struct ic_case *c);
size_t ic_mem_len(const struct ic_case *c);

/* ---- the engine ---- */

struct ic_wr {
	enum ic_op op;
	uint64_t wr_id;
	uint64_t laddr;
	uint32_t len;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;
	uint64_t compare_add;
	uint64_t swap;
};

/* wr_id bit of receive WRs (a flushed completion's opcode is undefined, IBA 11.4.2.1) */
#define IC_RECV_WRID (1ull << 32)

struct ic_wc {
	uint64_t wr_id;
	int status; /* ibv_wc_status numbering */
	bool recv;  /* a receive completion (the engine sets it from wr_id) */
	bool with_imm;
	uint32_t imm; /* host order */
	uint32_t byte_len;
};

struct ic_backend {
	void *ctx;
	/*
	 * Allocate ic_mem_len(c) bytes, register them, create the QP and take it to INIT; fill
	 * @mine's gid, ip4, mac, rkey, qp[0].qpn. *mem receives the memory.
	 */
	int (*open)(void *ctx, const struct ic_case *c, uint8_t **mem, struct rfw_oob_conn *mine);
	/* INIT -> RTR -> RTS toward @peer (sq_psn = rq_psn = c->psn). */
	int (*connect)(void *ctx, const struct ic_case *c, const struct rfw_oob_conn *peer,
	               bool requester);
	int (*post_send)(void *ctx, const struct ic_wr *wr);
	int (*post_recv)(void *ctx, uint64_t wr_id, uint64_t addr, uint32_t len);
	/* One completion (1), none (0) or -errno; also drives the device (rocefw: NIC poll). */
	int (*poll)(void *ctx, struct ic_wc *wc);
	/* 1 if the QP is in the error state. */
	int (*qp_in_error)(void *ctx);
	void (*close)(void *ctx);
	const char *(*status_str)(int status);
};

/* One TCP connection: the fd (non-blocking) and bytes received but not yet consumed. */
struct ic_conn {
	int fd;
	size_t len;
	char buf[2 * RFW_OOB_RECORD_MAX];
};

/* Outcome of one case on one side. */
struct ic_outcome {
	struct rfw_oob_result mine, peer;
	bool have_peer;
	bool pass; /* both verified */
};

/*
 * Run @c on an established connection. @is_rfw: this is the rocefw side, which sent the case
 * record and sends its conn record first; with c->dir it decides who is the requester.
 * Returns 0 when the protocol completed (see out->pass), -errno when it did not
 * (out->mine.error says why; the peer is sent an error record if possible).
 */
int ic_run(const struct ic_case *c, bool is_rfw, struct ic_conn *cn, const struct ic_backend *b,
           struct ic_outcome *out);

/* Receive the case record on a fresh connection (peer side), waiting up to @timeout_ms. */
int ic_recv_case(struct ic_conn *cn, struct ic_case *c, unsigned timeout_ms, char *err,
                 size_t errlen);
/* Send it (rocefw side). */
int ic_send_case(struct ic_conn *cn, const struct ic_case *c);

#endif
