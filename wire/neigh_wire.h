/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address resolution on the wire: ARP for IPv4 over Ethernet (RFC 826) and IPv6 neighbour
 * discovery NS/NA (RFC 4861 sections 4.3, 4.4, 7). DPDK-free, like frame.h: the parser and the
 * builders work on byte buffers so the fuzz target, the unit tests and the DPDK neighbour
 * table (dataplane/rfw_neigh.c) share them.
 */
#ifndef RFW_WIRE_NEIGH_WIRE_H
#define RFW_WIRE_NEIGH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_ETHERTYPE_ARP  0x0806
#define RFW_ARP_LEN        28 /* Ethernet/IPv4 ARP body (RFC 826 with hln 6, pln 4) */
#define RFW_IPPROTO_ICMPV6 58
#define RFW_ICMP6_NS       135
#define RFW_ICMP6_NA       136
#define RFW_ND_HOP_LIMIT   255 /* RFC 4861 7.1.1: NS/NA must arrive with hop limit 255 */
#define RFW_ND_OPT_SLLA    1   /* source link-layer address option (RFC 4861 4.6.1) */
#define RFW_ND_OPT_TLLA    2   /* target link-layer address option */
#define RFW_ND_NA_ROUTER   0x80u
#define RFW_ND_NA_SOLICIT  0x40u
#define RFW_ND_NA_OVERRIDE 0x20u
#define RFW_ETH_MIN_FRAME  60 /* without FCS: shorter frames are padded (IEEE 802.3) */
/* Largest frame the builders write: Ethernet, two tags, IPv6, NA with a TLLA option. */
#define RFW_NEIGH_FRAME_MAX (RFW_ETH_HLEN + 2 * RFW_VLAN_HLEN + RFW_IPV6_HLEN + 24 + 8)

/* Why a frame is not a usable ARP / NS / NA message. Names are stable (telemetry prints them). */
#define RFW_FOREACH_NEIGH_ERR(X)                                                                   \
	X(OK, "ok")                                                                                \
	X(NOT_NEIGH, "not_neigh")                                                                  \
	X(TRUNC, "truncated")                                                                      \
	X(ARP_BAD_HW, "arp_bad_hardware")                                                          \
	X(ARP_BAD_PROTO, "arp_bad_protocol")                                                       \
	X(ARP_BAD_OP, "arp_bad_op")                                                                \
	X(ARP_BAD_SENDER, "arp_bad_sender")                                                        \
	X(ND_BAD_HOP_LIMIT, "nd_bad_hop_limit")                                                    \
	X(ND_BAD_CODE, "nd_bad_code")                                                              \
	X(ND_BAD_LENGTH, "nd_bad_length")                                                          \
	X(ND_BAD_CHECKSUM, "nd_bad_checksum")                                                      \
	X(ND_BAD_OPTION, "nd_bad_option")                                                          \
	X(ND_MCAST_TARGET, "nd_multicast_target")                                                  \
	X(ND_BAD_SOURCE, "nd_bad_source")                                                          \
	X(ND_BAD_DEST, "nd_bad_destination")

enum rfw_neigh_err {
#define RFW_NEIGH_ERR_ENUM(name, str) RFW_NEIGH_ERR_##name,
	RFW_FOREACH_NEIGH_ERR(RFW_NEIGH_ERR_ENUM)
#undef RFW_NEIGH_ERR_ENUM
	    RFW_NEIGH_ERR__COUNT
};

const char *rfw_neigh_err_name(enum rfw_neigh_err err);

enum rfw_neigh_kind {
	RFW_NEIGH_ARP_REQUEST,
	RFW_NEIGH_ARP_REPLY,
	RFW_NEIGH_NS,
	RFW_NEIGH_NA,
};

/* Link-layer framing of a message: addresses and the VLAN tags it came with (or goes out with). */
struct rfw_l2 {
	uint8_t dst[6];
	uint8_t src[6];
	uint8_t nvlan;
	uint16_t vlan_tci[RFW_MAX_VLANS];
	uint16_t vlan_tpid[RFW_MAX_VLANS]; /* 0x8100 or 0x88a8 */
};

/*
 * A parsed ARP or ND message. IPv4 addresses are kept IPv4-mapped (::ffff:a.b.c.d) so that
 * both families share one neighbour table key, as RoCEv2 GIDs do.
 */
struct rfw_neigh_msg {
	enum rfw_neigh_kind kind;
	struct rfw_l2 l2;
	uint8_t src_ip[16]; /* ARP: sender protocol address; ND: IPv6 source */
	uint8_t dst_ip[16]; /* ARP: target protocol address; ND: IPv6 destination */
	uint8_t target[16]; /* ARP: = dst_ip; ND: the target address field */
	uint8_t lla[6];     /* ARP: sender hardware address; ND: SLLA (NS) or TLLA (NA) */
	bool has_lla;       /* always true for ARP */
	uint8_t na_flags;   /* NA: RFW_ND_NA_* */
};

/*
 * Parse an Ethernet frame (up to two 802.1Q/802.1ad tags) carrying ARP (RFC 826: hardware
 * type 1, protocol 0x0800, lengths 6 and 4, op 1 or 2) or an ICMPv6 NS/NA directly after the
 * IPv6 header (no extension headers), validated as RFC 4861 7.1.1 / 7.1.2 require: hop limit
 * 255, code 0, ICMP length >= 24, a correct checksum, a non-multicast target, options with a
 * non-zero length inside the message, no SLLA when the source is unspecified, a multicast
 * destination when the source is unspecified, and no Solicited flag on an NA sent to a
 * multicast address. Never reads outside [buf, buf + len). Returns RFW_NEIGH_ERR_NOT_NEIGH
 * for frames that are neither.
 */
enum rfw_neigh_err rfw_neigh_parse(const uint8_t *buf, size_t len, struct rfw_neigh_msg *m);

/*
 * Builders. Each writes a whole Ethernet frame into @buf (capacity @cap, at least
 * RFW_NEIGH_FRAME_MAX is always enough), padded to RFW_ETH_MIN_FRAME, and returns its length,
 * or 0 if @cap is too small. @l2 gives addresses and tags.
 */
/* ARP (RFC 826): @op 1 request, 2 reply; IPs in host byte order; @tha all zero in a request. */
size_t rfw_arp_build(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, uint16_t op,
                     const uint8_t sha[6], uint32_t spa, const uint8_t tha[6], uint32_t tpa);
/*
 * Neighbour solicitation for @target from @src_ip with an SLLA option = l2->src (RFC 4861 4.3).
 * The IPv6 destination is @dst_ip: the target's solicited-node multicast address to resolve,
 * the target itself for a unicast reachability probe.
 */
size_t rfw_nd_build_ns(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, const uint8_t src_ip[16],
                       const uint8_t dst_ip[16], const uint8_t target[16]);
/* Neighbour advertisement for @target (also the IPv6 source) with a TLLA option = l2->src. */
size_t rfw_nd_build_na(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, const uint8_t target[16],
                       const uint8_t dst_ip[16], uint8_t flags);

/* ff02::1:ffXX:XXXX for @ip (RFC 4291 2.7.1). */
void rfw_ip6_solicited_node(uint8_t out[16], const uint8_t ip[16]);
/* 33:33:xx:xx:xx:xx for an IPv6 multicast address (RFC 2464 7). */
void rfw_ip6_mcast_mac(uint8_t mac[6], const uint8_t ip[16]);
/* ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and @len bytes at @icmp, checksum field
 * included as it is: 0 (as computed, before inversion 0xffff) means a received message verifies. */
uint16_t rfw_icmp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *icmp,
                        size_t len);

static inline bool rfw_ip6_is_multicast(const uint8_t ip[16])
{
	return ip[0] == 0xff;
}
static inline bool rfw_ip6_is_unspecified(const uint8_t ip[16])
{
	for (int i = 0; i < 16; i++)
		if (ip[i])
			return false;
	return true;
}

/*
 * Set CE on an ECN-capable IP packet inside an Ethernet frame (RFC 3168 6.1.1). IPv4's header
 * checksum is updated incrementally (RFC 1624 eqn. 3). The RoCEv2 ICRC masks the ECN bits, so
 * it stays valid; the UDP checksum does not cover them. Returns the ECN codepoint found before
 * (RFW_ECN_*; CE means it was already set, NOT_ECT means nothing was changed), or -1 when the
 * frame is not IPv4/IPv6 or is too short. Reads and writes only [frame, frame + len).
 */
int rfw_ecn_mark_ce(uint8_t *frame, size_t len);

#ifdef __cplusplus
}
#endif
#endif
