/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethernet / VLAN / IPv4 / IPv6 / UDP codec for RoCEv2 frames (the ICRC: wire/icrc.c). */
#include "wire/frame.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wire/ib_hdr.h"

static const char *const frame_err_names[] = {
#define RFW_FRAME_ERR_STR(name, str) [RFW_FRAME_ERR_##name] = (str),
    RFW_FOREACH_FRAME_ERR(RFW_FRAME_ERR_STR)
#undef RFW_FRAME_ERR_STR
};

const char *rfw_frame_err_name(enum rfw_frame_err err)
{
	return (unsigned)err < RFW_FRAME_ERR__COUNT ? frame_err_names[err] : "unknown";
}

const char *rfw_ip_to_str(const uint8_t ip[16], char *out, size_t outlen)
{
	if (rfw_ip_is_mapped4(ip))
		inet_ntop(AF_INET, ip + 12, out, (socklen_t)outlen);
	else
		inet_ntop(AF_INET6, ip, out, (socklen_t)outlen);
	return out;
}

/*
 * The UDP header at @l4 of an IP datagram that ends at @end, whose protocol is @proto. Inline,
 * with the offsets in registers: the view is written through, never read back (its byte-sized
 * fields may alias the frame as far as the compiler knows, so reads would be reloads).
 */
static inline enum rfw_frame_err parse_udp(const uint8_t *buf, size_t l4, size_t end, uint8_t proto,
                                           struct rfw_frame_view *v)
{
	const uint8_t *u = buf + l4;
	size_t ulen, ib_len;
	uint16_t dport;
	uint32_t icrc;

	if (proto != RFW_IPPROTO_UDP) {
		v->kind = RFW_FRAME_NOT_UDP;
		return RFW_FRAME_ERR_OK;
	}
	if (end < l4 + RFW_UDP_HLEN)
		return RFW_FRAME_ERR_TRUNC_UDP;
	dport = rfw_get_be16(u + 2);
	ulen = rfw_get_be16(u + 4);
	v->udp_sport = rfw_get_be16(u);
	v->udp_dport = dport;
	v->udp_len = (uint16_t)ulen;
	v->udp_csum = rfw_get_be16(u + 6);
	/* UDP may be shorter than the IP payload (trailing bytes ignored), never longer. */
	if (ulen < RFW_UDP_HLEN || l4 + ulen > end)
		return RFW_FRAME_ERR_UDP_BAD_LENGTH;
	if (dport != RFW_ROCEV2_UDP_PORT) {
		v->kind = RFW_FRAME_NOT_ROCEV2;
		return RFW_FRAME_ERR_OK;
	}
	v->kind = RFW_FRAME_ROCEV2;
	if (ulen < RFW_UDP_HLEN + RFW_ICRC_LEN)
		return RFW_FRAME_ERR_TRUNC_ICRC;
	ib_len = ulen - RFW_UDP_HLEN - RFW_ICRC_LEN;
	v->ib_off = (uint32_t)(l4 + RFW_UDP_HLEN);
	v->ib_len = (uint32_t)ib_len;
	u += RFW_UDP_HLEN + ib_len;
	/* Stored least-significant byte first, like the Ethernet FCS. */
	icrc = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
	v->icrc = icrc;
	return RFW_FRAME_ERR_OK;
}

/*
 * The ones'-complement sum of @sum (at most fifteen 32-bit words added in 64 bits) is all
 * ones. Each fold keeps the value modulo 0xffff (2^16 and 2^32 are 1 there) and a non-zero
 * value non-zero, so any sequence that ends at 16 bits gives the same result. Three suffice:
 * the first leaves at most 2^32 + 13, whose high half is 0x10000 only when its low half is
 * at most 13; the second then leaves at most 0x1fffe, and the third at most 0xffff.
 */
static inline bool csum_folds_to_ones(uint64_t sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * Whether an IPv4 header of @ihl bytes (a multiple of 4) sums to all ones (RFC 791 3.1). The
 * ones'-complement sum is taken over 32-bit words in host order and folded: the sum is the
 * same in either byte order up to a swap of its two bytes (RFC 1071 2.(B)), and all ones
 * swapped are all ones. Five additions instead of ten byte-pair loads on every frame received.
 */
static bool ipv4_csum_ok(const uint8_t *ip, size_t ihl)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < ihl; i += 4) {
		uint32_t w;

		memcpy(&w, ip + i, sizeof(w));
		sum += w;
	}
	return csum_folds_to_ones(sum);
}

/* The same for the 20-byte header every RoCEv2 sender uses: unrolled, no loop. */
static inline bool ipv4_csum20_ok(const uint8_t *ip)
{
	uint32_t w0, w1, w2, w3, w4;

	/* One load each (an array copy went through the stack). */
	memcpy(&w0, ip, 4);
	memcpy(&w1, ip + 4, 4);
	memcpy(&w2, ip + 8, 4);
	memcpy(&w3, ip + 12, 4);
	memcpy(&w4, ip + 16, 4);
	return csum_folds_to_ones((uint64_t)w0 + w1 + w2 + w3 + w4);
}

/*
 * IPv4 (RFC 791) at @l3 of @buf (@len bytes). A header without options (version 4, IHL 5:
 * first byte 0x45, what RoCEv2 senders send) skips the version and IHL checks it passes by
 * construction and has its checksum summed unrolled; errors and fields are the same either way.
 * The view is zero on entry (the callers clear it), so the IPv4-mapped prefix's zero bytes are
 * already in place.
 */
__attribute__((always_inline)) static inline enum rfw_frame_err
parse_ipv4(const uint8_t *buf, size_t len, size_t l3, struct rfw_frame_view *v)
{
	const uint8_t *ip = buf + l3;
	size_t ihl = RFW_IPV4_HLEN, tot, l4;
	uint16_t frag;
	uint8_t proto;

	if (len < l3 + RFW_IPV4_HLEN)
		return RFW_FRAME_ERR_TRUNC_IPV4;
	if (ip[0] != 0x45) {
		if ((ip[0] >> 4) != 4)
			return RFW_FRAME_ERR_IP_BAD_VERSION;
		ihl = (size_t)(ip[0] & 0xf) * 4;
		if (ihl < RFW_IPV4_HLEN)
			return RFW_FRAME_ERR_IPV4_BAD_IHL;
		if (len < l3 + ihl)
			return RFW_FRAME_ERR_TRUNC_IPV4;
	}
	tot = rfw_get_be16(ip + 2);
	if (tot < ihl)
		return RFW_FRAME_ERR_IPV4_BAD_TOTAL_LENGTH;
	if (len < l3 + tot)
		return RFW_FRAME_ERR_TRUNC_IPV4;
	if (!(ihl == RFW_IPV4_HLEN ? ipv4_csum20_ok(ip) : ipv4_csum_ok(ip, ihl)))
		return RFW_FRAME_ERR_IPV4_BAD_CHECKSUM;
	frag = rfw_get_be16(ip + 6);
	proto = ip[9];
	v->ip_ver = 4;
	v->tos = ip[1];
	v->ip_id = rfw_get_be16(ip + 4);
	v->df = frag & 0x4000;
	v->ttl = ip[8];
	v->ip_proto = proto;
	/* IPv4-mapped (::ffff:a.b.c.d): the address bytes are already in network order. */
	v->src_ip[10] = v->src_ip[11] = 0xff;
	v->dst_ip[10] = v->dst_ip[11] = 0xff;
	memcpy(v->src_ip + 12, ip + 12, 4);
	memcpy(v->dst_ip + 12, ip + 16, 4);
	/* The UDP offset as the view keeps it (16 bits), so it is the one UDP is read at. */
	l4 = (uint16_t)(l3 + ihl);
	v->l4_off = (uint16_t)l4;
	if ((frag & 0x3fff) && proto == RFW_IPPROTO_UDP)
		return RFW_FRAME_ERR_IPV4_FRAGMENT; /* RoCEv2 never fragments (DF is set) */
	return parse_udp(buf, l4, l3 + tot, proto, v);
}

static enum rfw_frame_err parse_ipv6(const uint8_t *buf, size_t len, struct rfw_frame_view *v)
{
	const uint8_t *ip = buf + v->l3_off;
	size_t plen;
	uint32_t w0;

	if (len < v->l3_off + (size_t)RFW_IPV6_HLEN)
		return RFW_FRAME_ERR_TRUNC_IPV6;
	w0 = rfw_get_be32(ip);
	if ((w0 >> 28) != 6)
		return RFW_FRAME_ERR_IP_BAD_VERSION;
	plen = rfw_get_be16(ip + 4);
	if (len < v->l3_off + RFW_IPV6_HLEN + plen)
		return RFW_FRAME_ERR_IPV6_BAD_PAYLOAD_LENGTH;
	v->ip_ver = 6;
	v->tos = (uint8_t)(w0 >> 20);
	v->flow_label = w0 & 0xfffff;
	v->ip_proto = ip[6]; /* extension headers are not followed: RoCEv2 does not use them */
	v->ttl = ip[7];
	memcpy(v->src_ip, ip + 8, 16);
	memcpy(v->dst_ip, ip + 24, 16);
	v->l4_off = (uint16_t)(v->l3_off + RFW_IPV6_HLEN);
	return parse_udp(buf, v->l4_off, v->l3_off + RFW_IPV6_HLEN + plen, v->ip_proto, v);
}

static enum rfw_frame_err parse_l3(const uint8_t *buf, size_t len, size_t l3_off,
                                   uint16_t ethertype, struct rfw_frame_view *v)
{
	v->ethertype = ethertype;
	if (l3_off > UINT16_MAX) {
		v->kind = RFW_FRAME_NOT_IP;
		return RFW_FRAME_ERR_OK;
	}
	v->l3_off = (uint16_t)l3_off;
	switch (ethertype) {
	case RFW_ETHERTYPE_IPV4:
		return parse_ipv4(buf, len, l3_off, v);
	case RFW_ETHERTYPE_IPV6:
		return parse_ipv6(buf, len, v);
	default:
		v->kind = RFW_FRAME_NOT_IP;
		return RFW_FRAME_ERR_OK;
	}
}

enum rfw_frame_err rfw_frame_parse_l3(const uint8_t *buf, size_t len, size_t l3_off,
                                      uint16_t ethertype, struct rfw_frame_view *v)
{
	memset(v, 0, sizeof(*v));
	return parse_l3(buf, len, l3_off, ethertype, v);
}

enum rfw_frame_err rfw_frame_parse_at(const uint8_t *buf, size_t len, size_t et_off,
                                      struct rfw_frame_view *v)
{
	size_t off = et_off;
	uint16_t et;

	memset(v, 0, sizeof(*v));
	if (len < off + 2)
		return off == 12 ? RFW_FRAME_ERR_TRUNC_ETH : RFW_FRAME_ERR_TRUNC_LINK;
	et = rfw_get_be16(buf + off);
	while (et == RFW_ETHERTYPE_VLAN || et == RFW_ETHERTYPE_QINQ) {
		if (v->nvlan == RFW_MAX_VLANS)
			return RFW_FRAME_ERR_TOO_MANY_VLANS;
		if (len < off + 2 + RFW_VLAN_HLEN)
			return RFW_FRAME_ERR_TRUNC_VLAN;
		v->vlan_tci[v->nvlan++] = rfw_get_be16(buf + off + 2);
		off += RFW_VLAN_HLEN;
		et = rfw_get_be16(buf + off);
	}
	return parse_l3(buf, len, off + 2, et, v);
}

enum rfw_frame_err rfw_frame_parse_eth(const uint8_t *buf, size_t len, struct rfw_frame_view *v)
{
	if (len < RFW_ETH_HLEN) {
		memset(v, 0, sizeof(*v));
		return RFW_FRAME_ERR_TRUNC_ETH;
	}
	/* Untagged IPv4, the RoCEv2 traffic: what rfw_frame_parse_at() would do (no tag to walk,
	   the L3 offset fits 16 bits), with the IPv4 parser inlined at constant offsets. */
	if (buf[12] == (RFW_ETHERTYPE_IPV4 >> 8) && buf[13] == (RFW_ETHERTYPE_IPV4 & 0xff)) {
		memset(v, 0, sizeof(*v));
		v->ethertype = RFW_ETHERTYPE_IPV4;
		v->l3_off = RFW_ETH_HLEN;
		return parse_ipv4(buf, len, RFW_ETH_HLEN, v);
	}
	return rfw_frame_parse_at(buf, len, 12, v);
}

/* ---- building ---- */

int rfw_frame_build_hdrs(uint8_t *buf, size_t cap, const struct rfw_frame_spec *s, size_t ib_len)
{
	size_t off = 12, iphl = s->ip_ver == 6 ? RFW_IPV6_HLEN : RFW_IPV4_HLEN;
	size_t udp_len = RFW_UDP_HLEN + ib_len + RFW_ICRC_LEN;
	uint8_t *ip, *u;

	if ((s->ip_ver != 4 && s->ip_ver != 6) || s->nvlan > RFW_MAX_VLANS)
		return -EINVAL;
	if (udp_len + (s->ip_ver == 4 ? iphl : 0) > UINT16_MAX)
		return -EMSGSIZE;
	if (cap < RFW_ETH_HLEN + s->nvlan * RFW_VLAN_HLEN + iphl + udp_len)
		return -ENOSPC;
	memcpy(buf, s->dst_mac, 6);
	memcpy(buf + 6, s->src_mac, 6);
	for (unsigned i = 0; i < s->nvlan; i++) {
		/* The outer tag of a double-tagged frame is 802.1ad, the inner one 802.1Q. */
		rfw_put_be16(buf + off,
		             (s->nvlan == 2 && i == 0) ? RFW_ETHERTYPE_QINQ : RFW_ETHERTYPE_VLAN);
		rfw_put_be16(buf + off + 2, s->vlan_tci[i]);
		off += RFW_VLAN_HLEN;
	}
	rfw_put_be16(buf + off, s->ip_ver == 4 ? RFW_ETHERTYPE_IPV4 : RFW_ETHERTYPE_IPV6);
	off += 2;
	ip = buf + off;
	if (s->ip_ver == 4) {
		ip[0] = 0x45;
		ip[1] = s->tos;
		rfw_put_be16(ip + 2, (uint16_t)(iphl + udp_len));
		rfw_put_be16(ip + 4, s->ip_id);
		rfw_put_be16(ip + 6, s->df ? 0x4000 : 0);
		ip[8] = s->ttl;
		ip[9] = RFW_IPPROTO_UDP;
		ip[10] = ip[11] = 0;
		memcpy(ip + 12, s->src_ip + 12, 4);
		memcpy(ip + 16, s->dst_ip + 12, 4);
		rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(rfw_csum_add(0, ip, iphl)));
	} else {
		rfw_put_be32(ip, 6u << 28 | (uint32_t)s->tos << 20 | (s->flow_label & 0xfffff));
		rfw_put_be16(ip + 4, (uint16_t)udp_len);
		ip[6] = RFW_IPPROTO_UDP;
		ip[7] = s->ttl;
		memcpy(ip + 8, s->src_ip, 16);
		memcpy(ip + 24, s->dst_ip, 16);
	}
	u = ip + iphl;
	rfw_put_be16(u, s->udp_sport);
	rfw_put_be16(u + 2, s->udp_dport ? s->udp_dport : RFW_ROCEV2_UDP_PORT);
	rfw_put_be16(u + 4, (uint16_t)udp_len);
	rfw_put_be16(u + 6, 0);
	return (int)(off + iphl + RFW_UDP_HLEN);
}

size_t rfw_frame_finalize(uint8_t *buf, const struct rfw_frame_spec *s, size_t ib_len)
{
	size_t l3 = RFW_ETH_HLEN + s->nvlan * RFW_VLAN_HLEN;
	size_t iphl = s->ip_ver == 6 ? RFW_IPV6_HLEN : RFW_IPV4_HLEN;
	size_t udp_len = RFW_UDP_HLEN + ib_len + RFW_ICRC_LEN;
	uint8_t *ip = buf + l3, *u = ip + iphl, *icrc = u + RFW_UDP_HLEN + ib_len;
	uint32_t crc;

	/* The ICRC is computed with the UDP checksum masked, so its order does not matter; the
	 * UDP checksum covers the ICRC, so the ICRC goes first. */
	crc = rfw_icrc_compute(ip, iphl + RFW_UDP_HLEN + ib_len, s->ip_ver);
	rfw_icrc_put(icrc, crc);
	if (s->udp_csum) {
		uint32_t sum;
		uint16_t c;
		uint8_t ph[4];

		/* Pseudo-header (RFC 768 / RFC 8200 8.1): addresses, length, protocol. */
		if (s->ip_ver == 4)
			sum = rfw_csum_add(0, ip + 12, 8);
		else
			sum = rfw_csum_add(0, ip + 8, 32);
		rfw_put_be16(ph, (uint16_t)udp_len);
		ph[2] = 0;
		ph[3] = RFW_IPPROTO_UDP;
		sum = rfw_csum_add(sum, ph, 4);
		sum = rfw_csum_add(sum, u, udp_len);
		c = (uint16_t)~rfw_csum_fold(sum);
		rfw_put_be16(u + 6, c ? c : 0xffff); /* zero means "no checksum" */
	}
	return l3 + iphl + udp_len;
}
