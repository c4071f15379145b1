/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 frames on the wire: Ethernet, 802.1Q / 802.1ad tags, IPv4, IPv6, UDP and the ICRC
 * (IBA Annex A17). DPDK-free: zero-copy views over a byte buffer, used by the dataplane, the
 * simulator and the pcap tools alike.
 */
#ifndef RFW_WIRE_FRAME_H
#define RFW_WIRE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_ETH_HLEN       14
#define RFW_VLAN_HLEN      4
#define RFW_IPV4_HLEN      20
#define RFW_IPV6_HLEN      40
#define RFW_UDP_HLEN       8
#define RFW_ETHERTYPE_IPV4 0x0800
#define RFW_ETHERTYPE_IPV6 0x86dd
#define RFW_ETHERTYPE_VLAN 0x8100
#define RFW_ETHERTYPE_QINQ 0x88a8
#define RFW_IPPROTO_UDP    17
#define RFW_MAX_VLANS      2

/* ECN codepoints (RFC 3168), the low two bits of TOS / traffic class. */
enum rfw_ecn { RFW_ECN_NOT_ECT = 0, RFW_ECN_ECT1 = 1, RFW_ECN_ECT0 = 2, RFW_ECN_CE = 3 };

/* What a parsed frame is. Only RFW_FRAME_ROCEV2 frames have the ib_* fields set. */
enum rfw_frame_kind {
	RFW_FRAME_NOT_IP,     /* ARP, LLDP, ...: not ours, not an error */
	RFW_FRAME_NOT_UDP,    /* IP but not UDP (TCP, ICMP, IPv6 extension headers, ...) */
	RFW_FRAME_NOT_ROCEV2, /* UDP to a port other than 4791 */
	RFW_FRAME_ROCEV2,     /* UDP destination port 4791 */
};

/* Why a frame is rejected before the IB headers. Names are stable (tools print them). */
#define RFW_FOREACH_FRAME_ERR(X)                                                                   \
	X(OK, "ok")                                                                                \
	X(TRUNC_LINK, "truncated_link_header")                                                     \
	X(TRUNC_ETH, "truncated_ethernet")                                                         \
	X(TRUNC_VLAN, "truncated_vlan")                                                            \
	X(TOO_MANY_VLANS, "too_many_vlan_tags")                                                    \
	X(TRUNC_IPV4, "truncated_ipv4")                                                            \
	X(IPV4_BAD_IHL, "ipv4_bad_ihl")                                                            \
	X(IPV4_BAD_TOTAL_LENGTH, "ipv4_bad_total_length")                                          \
	X(IPV4_BAD_CHECKSUM, "ipv4_bad_checksum")                                                  \
	X(IPV4_FRAGMENT, "ipv4_fragment")                                                          \
	X(TRUNC_IPV6, "truncated_ipv6")                                                            \
	X(IPV6_BAD_PAYLOAD_LENGTH, "ipv6_bad_payload_length")                                      \
	X(IP_BAD_VERSION, "ip_bad_version")                                                        \
	X(TRUNC_UDP, "truncated_udp")                                                              \
	X(UDP_BAD_LENGTH, "udp_bad_length")                                                        \
	X(TRUNC_ICRC, "truncated_icrc")

enum rfw_frame_err {
#define RFW_FRAME_ERR_ENUM(name, str) RFW_FRAME_ERR_##name,
	RFW_FOREACH_FRAME_ERR(RFW_FRAME_ERR_ENUM)
#undef RFW_FRAME_ERR_ENUM
	    RFW_FRAME_ERR__COUNT
};

const char *rfw_frame_err_name(enum rfw_frame_err err);

/*
 * A parsed frame. Offsets are from the start of the buffer handed to the parser. Addresses are
 * kept as 16 bytes; IPv4 ones in IPv4-mapped form (::ffff:a.b.c.d), as RoCEv2 GIDs are.
 */
struct rfw_frame_view {
	enum rfw_frame_kind kind;
	uint16_t ethertype; /* of the L3 header (after any VLAN tags) */
	uint8_t nvlan;
	uint16_t vlan_tci[RFW_MAX_VLANS];
	uint16_t l3_off;
	uint16_t l4_off;
	uint8_t ip_ver;   /* 4 or 6 */
	uint8_t tos;      /* IPv4 TOS or IPv6 traffic class: DSCP << 2 | ECN */
	uint8_t ttl;      /* or hop limit */
	uint8_t ip_proto; /* or next header */
	uint16_t ip_id;
	bool df;
	uint32_t flow_label;
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
	uint16_t udp_sport;
	uint16_t udp_dport;
	uint16_t udp_len;
	uint16_t udp_csum;
	/* RoCEv2 only: the IB part from the BTH to the byte before the ICRC, and the ICRC. */
	uint32_t ib_off;
	uint32_t ib_len;
	uint32_t icrc; /* the received ICRC as a CRC value (wire bytes are little-endian) */
};

/* RFC 1071 ones'-complement sum of @len bytes added to @sum: not folded, not inverted. */
static inline uint32_t rfw_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Fold a sum from rfw_csum_add() to 16 bits (not inverted). */
static inline uint16_t rfw_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static inline unsigned rfw_frame_ecn(const struct rfw_frame_view *v)
{
	return v->tos & 3;
}
static inline unsigned rfw_frame_dscp(const struct rfw_frame_view *v)
{
	return v->tos >> 2;
}
/* Length of the L3 part covered by the ICRC computation (IP header .. byte before the ICRC). */
static inline uint32_t rfw_frame_icrc_span(const struct rfw_frame_view *v)
{
	return v->ib_off + v->ib_len - v->l3_off;
}

/*
 * Parse an Ethernet frame (optionally with up to two 802.1Q/802.1ad tags). @len is the number
 * of bytes available; bytes past the IP datagram (Ethernet padding, an FCS) are ignored. Never
 * reads outside [buf, buf + len). On RFW_FRAME_ERR_OK, v->kind says what the frame is.
 */
enum rfw_frame_err rfw_frame_parse_eth(const uint8_t *buf, size_t len, struct rfw_frame_view *v);

/*
 * Parse a frame whose 16-bit ethertype field sits at @et_off, followed by optional tags and
 * the L3 header (Ethernet: 12; Linux cooked capture v1: 14). Same contract as above.
 */
enum rfw_frame_err rfw_frame_parse_at(const uint8_t *buf, size_t len, size_t et_off,
                                      struct rfw_frame_view *v);

/*
 * Parse from an L3 header at @l3_off whose ethertype is known from elsewhere (Linux cooked
 * captures, raw IP captures, an mbuf's packet type). Same contract as rfw_frame_parse_eth.
 */
enum rfw_frame_err rfw_frame_parse_l3(const uint8_t *buf, size_t len, size_t l3_off,
                                      uint16_t ethertype, struct rfw_frame_view *v);

/* ---- ICRC (IBA Annex A17.3.3; masking rule in shared/testdata/icrc/README.md) ---- */

/*
 * ICRC over an IP datagram: @l3 points at the IP header, @len covers it up to the byte before
 * the ICRC. Variant fields are treated as ones: IPv4 TOS, TTL and header checksum; IPv6
 * traffic class, flow label and hop limit; the UDP checksum; BTH FECN, BECN and Resv6. Needs
 * @len >= IP header + UDP + BTH; returns 0 otherwise. Reads the datagram in place on x86-64
 * with PCLMULQDQ (the masks an OR on the first 16-byte blocks, the CRC folded inline, ISA-L
 * for the rest of a long packet), four blocks to an instruction with AVX-512 VPCLMULQDQ;
 * elsewhere a masked scratch copy of the headers and ISA-L. wire/icrc.c.
 */
uint32_t rfw_icrc_compute(const uint8_t *l3, size_t len, unsigned ip_ver);

/*
 * The ICRC of a datagram whose bytes follow in a second span: @crc (rfw_icrc_compute of the
 * first span, which must hold at least the headers the mask covers) carried on over @len bytes
 * at @p. None of those bytes is masked. A frame sent from two buffers, its headers and a
 * registered MR's payload (docs/nic.md "Payload sent from the MR"), gets its ICRC this way.
 */
uint32_t rfw_icrc_extend(uint32_t crc, const uint8_t *p, size_t len);

/*
 * memcpy(@dst, @src, @len) that also returns rfw_icrc_extend(@crc, @src, @len), reading @src
 * once: with VPCLMULQDQ each 256 bytes are loaded, stored and folded in one pass (a tail under
 * 256 bytes is copied, then chained through ISA-L); elsewhere a memcpy, then ISA-L. The spans
 * must not overlap. A payload copied from the MR into its frame gets its ICRC this way
 * (docs/nic.md "Payload sent from the MR").
 */
uint32_t rfw_crc_copy(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len);

/*
 * rfw_icrc_compute of @n datagrams (@l3[i], @len[i], IP version @ver[i]) into @crc[i]. With
 * VPCLMULQDQ short datagrams go four at a time, their folds interleaved: a burst's ICRCs cost
 * about half what one call each does.
 */
void rfw_icrc_compute_n(const uint8_t *const l3[], const size_t len[], const uint8_t ver[],
                        uint32_t crc[], unsigned n);

/* rfw_icrc_compute's ways to the same value; the best the CPU has is chosen at load time. */
enum rfw_icrc_impl {
	RFW_ICRC_GENERAL, /* masked scratch copy and ISA-L */
	RFW_ICRC_CLMUL,   /* in place, PCLMULQDQ and SSE4.1 */
	RFW_ICRC_VCLMUL,  /* in place, AVX-512F/VL and VPCLMULQDQ */
};

/* For tests and benchmarks: use @impl from now on (< 0: keep). Returns the one in use before,
 * or -ENOTSUP when this CPU or build lacks @impl. Not thread-safe: set it before traffic. */
int rfw_icrc_use(int impl);

/* Store ICRC @crc at @p as the wire carries it: least significant byte first (one store on a
 * little-endian host). */
static inline void rfw_icrc_put(uint8_t *p, uint32_t crc)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	crc = __builtin_bswap32(crc);
#endif
	memcpy(p, &crc, 4);
}

/* Whether the ICRC of a parsed RoCEv2 frame is right. */
bool rfw_frame_icrc_ok(const uint8_t *buf, const struct rfw_frame_view *v);

/* ---- building ---- */

/* Everything in front of the BTH. IPv4 addresses in IPv4-mapped form, like the view. */
struct rfw_frame_spec {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t nvlan;
	uint16_t vlan_tci[RFW_MAX_VLANS];
	uint8_t ip_ver;
	uint8_t tos; /* DSCP << 2 | ECN; traffic class for IPv6 */
	uint8_t ttl;
	uint16_t ip_id;
	bool df;
	uint32_t flow_label;
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
	uint16_t udp_sport;
	uint16_t udp_dport; /* 0 means 4791 */
	/* Compute the UDP checksum (IPv6 needs one, RFC 8200 8.1); otherwise it is left zero. */
	bool udp_csum;
};

/*
 * Write Ethernet, tags, IP and UDP headers for a RoCEv2 frame whose IB part (BTH .. pad,
 * without the ICRC) is @ib_len bytes. Returns the BTH offset, or -ENOSPC / -EINVAL / -EMSGSIZE.
 * The IPv4 header checksum is final; the UDP checksum and ICRC are written by
 * rfw_frame_finalize() once the IB part is in place.
 */
int rfw_frame_build_hdrs(uint8_t *buf, size_t cap, const struct rfw_frame_spec *s, size_t ib_len);

/*
 * With the IB part written at the offset rfw_frame_build_hdrs() returned, compute the UDP
 * checksum (if asked for) and append the ICRC. Returns the total frame length.
 */
size_t rfw_frame_finalize(uint8_t *buf, const struct rfw_frame_spec *s, size_t ib_len);

/* Helpers for addresses in IPv4-mapped form (::ffff:a.b.c.d; inline: two per frame parsed). */
static inline void rfw_ip4_to_mapped(uint8_t out[16], uint32_t ip_host_order)
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	out[12] = (uint8_t)(ip_host_order >> 24);
	out[13] = (uint8_t)(ip_host_order >> 16);
	out[14] = (uint8_t)(ip_host_order >> 8);
	out[15] = (uint8_t)ip_host_order;
}
static inline bool rfw_ip_is_mapped4(const uint8_t ip[16])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(ip, prefix, sizeof(prefix)) == 0;
}
/* Format @ip as text (dotted quad for mapped IPv4); @out needs 46 bytes. */
const char *rfw_ip_to_str(const uint8_t ip[16], char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif
