/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perftest's out-of-band exchange, Ethernet mode (no rdma_cm), as perftest 4.5-0.17 (Debian 12)
 * speaks it over its TCP connection (port 18515): the per-QP "keys" record of ctx_hand_shake()
 * and the sizes of the other fixed-size exchanges. DPDK-free, so rocefw-perf can speak to
 * unmodified ib_write_bw / ib_read_bw / ib_send_bw / ib_atomic_bw (docs/interop.md
 * "perftest's exchange"). Written from the format description, not from perftest's code.
 *
 * Byte order and framing: every exchange is a fixed number of bytes; the client writes first
 * then reads, the server reads then writes.
 */
#ifndef RFW_CTRL_PERFTEST_OOB_H
#define RFW_CTRL_PERFTEST_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RFW_PT_PORT         18515
#define RFW_PT_VERSION_LEN  16  /* the version string, NUL-padded (MAX_VERSION) */
#define RFW_PT_KEYS_LEN     59  /* keys record without a GID, NUL included */
#define RFW_PT_KEYS_GID_LEN 108 /* keys record with a GID (RoCE), NUL included */
#define RFW_PT_DONE_LEN     5   /* "done" and its NUL, after the closing hand-shake */

/* One side's QP as perftest describes it (struct pingpong_dest). */
struct rfw_pt_dest {
	uint16_t lid;       /* 0 on RoCE */
	uint16_t out_reads; /* max outstanding READ/atomic the sender issues */
	uint32_t qpn;       /* 24 bits */
	uint32_t psn;       /* 24 bits */
	uint32_t rkey;
	uint64_t vaddr; /* the sender's buffer */
	bool has_gid;   /* RoCE: always */
	uint8_t gid[16];
	uint32_t srqn; /* 0 without an SRQ */
};

/* Record length for a dest with or without GID. */
static inline size_t rfw_pt_keys_len(bool has_gid)
{
	return has_gid ? RFW_PT_KEYS_GID_LEN : RFW_PT_KEYS_LEN;
}

/*
 * Encode @d into @buf (at least rfw_pt_keys_len(d->has_gid) bytes): the exact bytes perftest
 * writes, text plus the terminating NUL. Returns the length, or -EINVAL (qpn/psn above 24 bits).
 */
int rfw_pt_keys_encode(const struct rfw_pt_dest *d, uint8_t *buf, size_t cap);

/*
 * Decode a keys record of @len bytes (RFW_PT_KEYS_LEN without GID, RFW_PT_KEYS_GID_LEN with).
 * Strict: fixed-width lower- or upper-case hex fields separated by ':' exactly where perftest
 * puts them, a NUL at the end. 0, or -EPROTO with @err naming the field.
 */
int rfw_pt_keys_decode(const uint8_t *buf, size_t len, struct rfw_pt_dest *d, char *err,
                       size_t errlen);

/* Whether a version string received in the version exchange is >= major.minor ("5.32"). */
bool rfw_pt_version_at_least(const char ver[RFW_PT_VERSION_LEN], unsigned major, unsigned minor);

/* Bytes of the MTU exchange for a peer of version @ver: 2 from 5.31 on, else 4 (sizeof int). */
size_t rfw_pt_mtu_len(const char ver[RFW_PT_VERSION_LEN]);

#endif
