/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Out-of-band connection setup (docs/oob.md): the records two endpoints exchange over a TCP
 * connection on the control path before any RoCE packet moves (QPN, PSN, GID, IP, MAC, path
 * MTU, rkey, buffer addresses, transport mode and the test's parameters), and the records that
 * close a run (result) or refuse it (error).
 *
 * The format is line-oriented ASCII ("key=value\n", first line "rocefw-oob/2 TYPE", last line
 * "end") so that a peer written in plain C with POSIX sockets and libibverbs, without DPDK (the
 * interop peer of issue 7), can speak it with snprintf/strtoul. This file and rfw_oob.c have no
 * DPDK dependency on purpose.
 *
 * Parsing is strict: unknown keys, duplicates, missing keys and values out of range are refused
 * with a message that names the line and the field. A record is at most RFW_OOB_RECORD_MAX
 * bytes.
 */
#ifndef RFW_CTRL_RFW_OOB_H
#define RFW_CTRL_RFW_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: a connection has up to RFW_OOB_MAX_QPS QPs, described RFW_OOB_BATCH_QPS per record (the
 * conn record, then "qps" records); 1 had up to 32, all in the conn record. */
#define RFW_OOB_SCHEMA       "rocefw-oob/2"
#define RFW_OOB_PORT_DEFAULT 18515 /* perftest's default TCP port */
#define RFW_OOB_RECORD_MAX   4096  /* bytes in one record, "end\n" included */
#define RFW_OOB_LINE_MAX     256   /* bytes in one line, '\n' included */
#define RFW_OOB_MAX_QPS      16384 /* QPs of one connection */
#define RFW_OOB_BATCH_QPS    32    /* qp lines in one record (conn or qps) */
#define RFW_OOB_TEXT_MAX     200   /* error reasons and result error texts */
#define RFW_OOB_ERR_MAX      160   /* parse error messages */

enum rfw_oob_type { RFW_OOB_CONN, RFW_OOB_RESULT, RFW_OOB_ERROR, RFW_OOB_QPS, RFW_OOB__TYPES };
enum rfw_oob_test { RFW_OOB_WRITE, RFW_OOB_READ, RFW_OOB_SEND, RFW_OOB_ATOMIC, RFW_OOB__TESTS };
enum rfw_oob_kind { RFW_OOB_BW, RFW_OOB_LAT, RFW_OOB__KINDS };
/* Values equal enum rfw_transport_mode (transport/rfw_verbs.h). */
enum rfw_oob_transport { RFW_OOB_GBN = 0, RFW_OOB_SR = 1, RFW_OOB__TRANSPORTS };

/* One queue pair of the sender: where the peer's requests for this QP go. */
struct rfw_oob_qp {
	uint32_t qpn;  /* 24 bits */
	uint32_t psn;  /* 24 bits: the first PSN this side sends (the peer's rq_psn) */
	uint64_t addr; /* virtual address of this QP's buffer in the sender's MR */
	uint64_t len;  /* its length in bytes */
};

/* "conn": one endpoint's half of the connection. */
struct rfw_oob_conn {
	enum rfw_oob_test test;
	enum rfw_oob_kind kind;
	enum rfw_oob_transport transport;
	uint32_t mtu;        /* path MTU in bytes: 256, 512, 1024, 2048, 4096 */
	uint32_t size;       /* message size in bytes, 1..2^31 */
	uint64_t iters;      /* messages per QP, 0..10^12 (0 with a duration) */
	uint32_t duration_s; /* 0..86400 (0: iters decides) */
	uint32_t depth;      /* outstanding messages per QP, 1..65536 */
	uint8_t gid[16];     /* RoCEv2 GID: IPv4-mapped (::ffff:a.b.c.d) */
	uint32_t ip4;        /* host byte order; must equal the GID's IPv4 part */
	bool has_mac;
	uint8_t mac[6];
	uint32_t rkey; /* R_Key of the MR all qp[].addr lie in */
	uint32_t qps;  /* 1..RFW_OOB_MAX_QPS: QPs of the connection */
	/* The first rfw_oob_conn_lines() QPs; "qps" records carry the others, in order. */
	struct rfw_oob_qp qp[RFW_OOB_BATCH_QPS];
};

/* "qps": QPs first .. first + n - 1 of the sender, after its conn record. */
struct rfw_oob_qps {
	uint32_t first; /* 0..RFW_OOB_MAX_QPS - 1 */
	uint32_t n;     /* 1..RFW_OOB_BATCH_QPS qp lines; first + n <= RFW_OOB_MAX_QPS */
	struct rfw_oob_qp qp[RFW_OOB_BATCH_QPS];
};

/* The qp lines of a conn record: its first min(qps, RFW_OOB_BATCH_QPS) QPs. */
static inline uint32_t rfw_oob_conn_lines(const struct rfw_oob_conn *c)
{
	return c->qps < RFW_OOB_BATCH_QPS ? c->qps : RFW_OOB_BATCH_QPS;
}

/* "result": one endpoint's account of a finished run. */
struct rfw_oob_result {
	uint64_t messages;            /* messages completed (requester) or seen (responder) */
	uint64_t checked_bytes;       /* bytes this side compared equal to what was expected */
	bool verified;                /* every message this side had to check was intact */
	char error[RFW_OOB_TEXT_MAX]; /* "" or the first problem seen */
	/* Optional (has_time), a bandwidth run's account of this side's core: the time of its poll
	 * rounds that did any work, and what of that its own verification took (stamping what it
	 * sends, comparing what lands); ns. A peer that does not measure them leaves them out. */
	bool has_time;
	uint64_t busy_ns;
	uint64_t tool_ns;
};

/* "error": the sender refuses the connection or aborts the run. */
struct rfw_oob_error {
	char reason[RFW_OOB_TEXT_MAX];
};

struct rfw_oob_msg {
	enum rfw_oob_type type;
	union {
		struct rfw_oob_conn conn;
		struct rfw_oob_result result;
		struct rfw_oob_error error;
		struct rfw_oob_qps qps;
	} u;
};

const char *rfw_oob_type_name(enum rfw_oob_type t);
const char *rfw_oob_test_name(enum rfw_oob_test t);
const char *rfw_oob_kind_name(enum rfw_oob_kind k);
const char *rfw_oob_transport_name(enum rfw_oob_transport t);
/* Name -> value; -1 for an unknown name. */
int rfw_oob_test_lookup(const char *s);
int rfw_oob_kind_lookup(const char *s);
int rfw_oob_transport_lookup(const char *s);

/*
 * Encode @m into @buf (NUL-terminated). Returns the record's length without the NUL, or
 * -EINVAL (a field out of the ranges above, a text with a newline) or -ENOSPC.
 */
int rfw_oob_encode(const struct rfw_oob_msg *m, char *buf, size_t cap);

/*
 * Length of the first complete record at the start of @buf (up to and including "end\n"),
 * 0 if more bytes are needed, -E2BIG if RFW_OOB_RECORD_MAX bytes hold no complete record.
 */
int rfw_oob_record_len(const char *buf, size_t len);

/*
 * Decode one complete record (@len bytes, as rfw_oob_record_len measured it; no NUL needed).
 * 0 on success; -EPROTO on any error, with a message in @err naming the line and field, e.g.
 * "line 5: field 'mtu': 1000 is not 256, 512, 1024, 2048 or 4096".
 */
int rfw_oob_decode(const char *buf, size_t len, struct rfw_oob_msg *m, char *err, size_t errlen);

/*
 * Compare the parameters both ends must agree on (test, kind, transport, mtu, qps, size, iters,
 * duration, depth). 0 if they agree; otherwise -EPROTO and a message naming the first field that
 * differs and both values, e.g. "transport mode mismatch: this side sr, peer gbn".
 */
int rfw_oob_conn_compare(const struct rfw_oob_conn *mine, const struct rfw_oob_conn *peer,
                         char *err, size_t errlen);

/* ---- the TCP side (POSIX sockets; no DPDK) ---- */

/* Listen on @port (all IPv4 and IPv6 addresses). Returns the fd or -errno. */
int rfw_oob_listen(uint16_t port);
/*
 * Non-blocking accept: the connected fd, -EAGAIN while nobody has connected, or -errno.
 * The returned socket is non-blocking with TCP_NODELAY.
 */
int rfw_oob_accept(int lfd);
/*
 * Connect to @host (name or address) port @port, retrying until @timeout_ms passes (the server
 * may not be listening yet). Returns a non-blocking fd with TCP_NODELAY, or -errno
 * (-ETIMEDOUT, -EHOSTUNREACH for an unknown name).
 */
int rfw_oob_connect(const char *host, uint16_t port, unsigned timeout_ms);

/* Encode @m and write it whole to @fd (waits for socket space). 0 or -errno. */
int rfw_oob_send(int fd, const struct rfw_oob_msg *m);

/* Incremental receiver: bytes accumulated until a whole record is in. */
struct rfw_oob_rx {
	char buf[RFW_OOB_RECORD_MAX];
	size_t len;
};

/*
 * Read what @fd has (never blocks) and decode the first complete record. Returns 1 with @m
 * filled, 0 while incomplete, -EPIPE if the peer closed, -EPROTO (bad record: @err names the
 * field), -E2BIG or another -errno. Call repeatedly from a poll loop.
 */
int rfw_oob_recv(int fd, struct rfw_oob_rx *rx, struct rfw_oob_msg *m, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
