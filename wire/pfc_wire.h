/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MAC Control frames on the wire (EtherType 0x8808): IEEE 802.3 Annex 31B PAUSE (opcode 0x0001,
 * one pause_time) and IEEE 802.1Qbb / 802.3 Annex 31D priority-based flow control (opcode
 * 0x0101, a class-enable vector and eight pause times). DPDK-free, like frame.h and neigh_wire.h:
 * the port layer (dataplane/rfw_pfc.c), the unit test and the fuzz target share it.
 *
 * Layout after the 14-byte Ethernet header (no VLAN tag: MAC Control frames are never tagged):
 *   PAUSE: opcode (2) | pause_time (2) | zero padding to the 60-byte minimum frame
 *   PFC:   opcode (2) | class-enable vector (2: reserved octet, then e7..e0) | time[0..7] (2 each)
 *          | zero padding
 * Pause times are in quanta of 512 bit times at the link speed; 0 means resume (XON).
 */
#ifndef RFW_WIRE_PFC_WIRE_H
#define RFW_WIRE_PFC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_ETHERTYPE_MAC_CONTROL 0x8808
#define RFW_MACCTL_OP_PAUSE       0x0001 /* 802.3 Annex 31B */
#define RFW_MACCTL_OP_PFC         0x0101 /* 802.1Qbb 36.1.3, 802.3 Annex 31D */
#define RFW_PFC_PRIOS             8
#define RFW_PAUSE_QUANTUM_BITS    512
#define RFW_PAUSE_BODY_LEN        4  /* opcode + pause_time */
#define RFW_PFC_BODY_LEN          20 /* opcode + class-enable vector + 8 times */
#define RFW_MACCTL_FRAME_LEN      60 /* minimum Ethernet frame without FCS: what the builders write */

/* 01-80-C2-00-00-01, reserved for MAC Control (802.3 Annex 31B.3.1; never forwarded by bridges). */
extern const uint8_t rfw_macctl_dst[6];

/* Why a frame is not a usable PAUSE / PFC frame. Names are stable (telemetry prints them). */
#define RFW_FOREACH_PFC_ERR(X)                                                                     \
	X(OK, "ok")                                                                                \
	X(TRUNC_ETH, "macctl_truncated_ethernet")                                                  \
	X(NOT_MAC_CONTROL, "macctl_not_mac_control")                                               \
	X(VLAN_TAGGED, "macctl_vlan_tagged")                                                       \
	X(TRUNC_OPCODE, "macctl_truncated_opcode")                                                 \
	X(UNSUPPORTED_OPCODE, "macctl_unsupported_opcode")                                         \
	X(TRUNC_PAUSE, "pause_truncated")                                                          \
	X(TRUNC_PFC, "pfc_truncated")                                                              \
	X(BAD_DST, "macctl_bad_destination")                                                       \
	X(MCAST_SRC, "macctl_multicast_source")

enum rfw_pfc_err {
#define RFW_PFC_ERR_ENUM(name, str) RFW_PFC_ERR_##name,
	RFW_FOREACH_PFC_ERR(RFW_PFC_ERR_ENUM)
#undef RFW_PFC_ERR_ENUM
	    RFW_PFC_ERR__COUNT
};

const char *rfw_pfc_err_name(enum rfw_pfc_err err);

/*
 * A parsed PAUSE or PFC frame. A PAUSE frame is reported as what it does to priorities: every
 * class enabled with the one pause_time, so that callers handle both kinds alike.
 */
struct rfw_pfc_msg {
	uint16_t opcode; /* RFW_MACCTL_OP_PAUSE or RFW_MACCTL_OP_PFC */
	uint8_t dst[6];
	uint8_t src[6];
	uint8_t enable;      /* class-enable vector: bit i set = time[i] applies to priority i */
	uint8_t enable_resv; /* the reserved octet of the vector (802.1Qbb: ignored on receipt) */
	uint16_t quanta[RFW_PFC_PRIOS]; /* 0 where the class is not enabled */
};

/*
 * Parse an Ethernet frame (without FCS) as PAUSE or PFC. The destination must be 01-80-C2-00-00-01
 * or @own_mac (802.3 Annex 31B lets a station be paused at its unicast address; NULL: only the
 * multicast one), the source must not be a group address. Bytes after the body (padding) are
 * not looked at: a frame from a software port may come unpadded. Never reads outside
 * [buf, buf + len).
 */
enum rfw_pfc_err rfw_pfc_parse(const uint8_t *buf, size_t len, const uint8_t *own_mac,
                               struct rfw_pfc_msg *m);

/*
 * Builders: a whole frame to 01-80-C2-00-00-01 from @src, zero-padded to RFW_MACCTL_FRAME_LEN.
 * Return the length, or 0 if @cap is smaller than RFW_MACCTL_FRAME_LEN.
 */
size_t rfw_pause_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint16_t quanta);
/* PFC: @quanta[i] is written for every i; receivers look only at those enabled in @enable. */
size_t rfw_pfc_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint8_t enable,
                     const uint16_t quanta[RFW_PFC_PRIOS]);

/* Duration of @quanta pause quanta at @mbps Mb/s, in ns (512 bit times each), rounded up. */
static inline uint64_t rfw_pause_quanta_ns(uint32_t quanta, uint32_t mbps)
{
	uint64_t bits = (uint64_t)quanta * RFW_PAUSE_QUANTUM_BITS * 1000u;

	return mbps ? (bits + mbps - 1) / mbps : 0;
}

/*
 * Priority (0..7) of an outgoing Ethernet frame for PFC: the PCP of its outer VLAN tag if it has
 * one, else the DSCP of its IPv4/IPv6 header mapped through @dscp2prio (64 entries), else 0.
 * -1 for MAC Control frames, which pauses never hold (802.3 Annex 31B: PAUSE does not inhibit
 * MAC Control frames).
 */
int rfw_pfc_frame_prio(const uint8_t *buf, size_t len, const uint8_t dscp2prio[64]);

#ifdef __cplusplus
}
#endif
#endif
