/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP (RFC 826) and IPv6 neighbour discovery NS/NA (RFC 4861) codec; ECN CE marking. */
#include "wire/neigh_wire.h"

#include <string.h>

#include "wire/ib_hdr.h"

static const char *const neigh_err_names[] = {
#define RFW_NEIGH_ERR_STR(name, str) [RFW_NEIGH_ERR_##name] = (str),
    RFW_FOREACH_NEIGH_ERR(RFW_NEIGH_ERR_STR)
#undef RFW_NEIGH_ERR_STR
};

const char *rfw_neigh_err_name(enum rfw_neigh_err err)
{
	return (unsigned)err < RFW_NEIGH_ERR__COUNT ? neigh_err_names[err] : "unknown";
}

uint16_t rfw_icmp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *icmp,
                        size_t len)
{
	/* Pseudo-header (RFC 8200 8.1): addresses, upper-layer length, next header 58. */
	uint32_t sum = rfw_csum_add(0, src, 16);

	sum = rfw_csum_add(sum, dst, 16);
	sum += (uint32_t)(len >> 16) + (uint32_t)(len & 0xffff);
	sum += RFW_IPPROTO_ICMPV6;
	sum = rfw_csum_add(sum, icmp, len);
	return (uint16_t)~rfw_csum_fold(sum);
}

void rfw_ip6_solicited_node(uint8_t out[16], const uint8_t ip[16])
{
	static const uint8_t prefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};

	memcpy(out, prefix, sizeof(prefix));
	memcpy(out + 13, ip + 13, 3);
}

void rfw_ip6_mcast_mac(uint8_t mac[6], const uint8_t ip[16])
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, ip + 12, 4);
}

/* Ethernet header and tags; returns the offset of the L3 header and the ethertype. */
static size_t parse_l2(const uint8_t *buf, size_t len, struct rfw_l2 *l2, uint16_t *et)
{
	size_t off = 12;

	memcpy(l2->dst, buf, 6);
	memcpy(l2->src, buf + 6, 6);
	l2->nvlan = 0;
	*et = rfw_get_be16(buf + off);
	while (*et == RFW_ETHERTYPE_VLAN || *et == RFW_ETHERTYPE_QINQ) {
		if (l2->nvlan == RFW_MAX_VLANS || len < off + 2 + RFW_VLAN_HLEN)
			return 0;
		l2->vlan_tpid[l2->nvlan] = *et;
		l2->vlan_tci[l2->nvlan++] = rfw_get_be16(buf + off + 2);
		off += RFW_VLAN_HLEN;
		*et = rfw_get_be16(buf + off);
	}
	return off + 2;
}

static enum rfw_neigh_err parse_arp(const uint8_t *a, size_t len, struct rfw_neigh_msg *m)
{
	uint16_t op;

	if (len < RFW_ARP_LEN)
		return RFW_NEIGH_ERR_TRUNC;
	/* RFC 826: ar$hrd 1 (Ethernet), ar$pro 0x0800, ar$hln 6, ar$pln 4. */
	if (rfw_get_be16(a) != 1 || a[4] != 6)
		return RFW_NEIGH_ERR_ARP_BAD_HW;
	if (rfw_get_be16(a + 2) != RFW_ETHERTYPE_IPV4 || a[5] != 4)
		return RFW_NEIGH_ERR_ARP_BAD_PROTO;
	op = rfw_get_be16(a + 6);
	if (op != 1 && op != 2)
		return RFW_NEIGH_ERR_ARP_BAD_OP;
	/* A multicast/broadcast sender hardware address is never a neighbour's. */
	if (a[8] & 1)
		return RFW_NEIGH_ERR_ARP_BAD_SENDER;
	m->kind = op == 1 ? RFW_NEIGH_ARP_REQUEST : RFW_NEIGH_ARP_REPLY;
	memcpy(m->lla, a + 8, 6);
	m->has_lla = true;
	rfw_ip4_to_mapped(m->src_ip, rfw_get_be32(a + 14));
	rfw_ip4_to_mapped(m->dst_ip, rfw_get_be32(a + 24));
	memcpy(m->target, m->dst_ip, 16);
	return RFW_NEIGH_ERR_OK;
}

static enum rfw_neigh_err parse_nd(const uint8_t *ip, size_t len, struct rfw_neigh_msg *m)
{
	const uint8_t *icmp = ip + RFW_IPV6_HLEN;
	size_t plen, off;
	uint8_t type;

	if (len < RFW_IPV6_HLEN)
		return RFW_NEIGH_ERR_TRUNC;
	if (ip[0] >> 4 != 6 || ip[6] != RFW_IPPROTO_ICMPV6)
		return RFW_NEIGH_ERR_NOT_NEIGH;
	plen = rfw_get_be16(ip + 4);
	if (plen < 4 || len < RFW_IPV6_HLEN + plen)
		return plen < 4 ? RFW_NEIGH_ERR_ND_BAD_LENGTH : RFW_NEIGH_ERR_TRUNC;
	type = icmp[0];
	if (type != RFW_ICMP6_NS && type != RFW_ICMP6_NA)
		return RFW_NEIGH_ERR_NOT_NEIGH;
	/* RFC 4861 7.1.1 / 7.1.2: silently discard unless all of these hold. */
	if (ip[7] != RFW_ND_HOP_LIMIT)
		return RFW_NEIGH_ERR_ND_BAD_HOP_LIMIT;
	if (icmp[1] != 0)
		return RFW_NEIGH_ERR_ND_BAD_CODE;
	if (plen < 24)
		return RFW_NEIGH_ERR_ND_BAD_LENGTH;
	if (rfw_icmp6_csum(ip + 8, ip + 24, icmp, plen) != 0)
		return RFW_NEIGH_ERR_ND_BAD_CHECKSUM;
	memcpy(m->src_ip, ip + 8, 16);
	memcpy(m->dst_ip, ip + 24, 16);
	memcpy(m->target, icmp + 8, 16);
	if (rfw_ip6_is_multicast(m->target))
		return RFW_NEIGH_ERR_ND_MCAST_TARGET;
	m->has_lla = false;
	/* Options: type, length in units of 8 bytes (0 is invalid), value (RFC 4861 4.6). */
	for (off = 24; off < plen;) {
		size_t olen;

		if (plen - off < 2)
			return RFW_NEIGH_ERR_ND_BAD_OPTION;
		olen = (size_t)icmp[off + 1] * 8;
		if (olen == 0 || olen > plen - off)
			return RFW_NEIGH_ERR_ND_BAD_OPTION;
		if (icmp[off] == (type == RFW_ICMP6_NS ? RFW_ND_OPT_SLLA : RFW_ND_OPT_TLLA)) {
			memcpy(m->lla, icmp + off + 2, 6);
			m->has_lla = true;
		}
		off += olen;
	}
	if (type == RFW_ICMP6_NS) {
		m->kind = RFW_NEIGH_NS;
		m->na_flags = 0;
		if (rfw_ip6_is_unspecified(m->src_ip)) {
			/* Duplicate address detection: solicited-node destination, no SLLA. */
			if (m->has_lla)
				return RFW_NEIGH_ERR_ND_BAD_SOURCE;
			if (!rfw_ip6_is_multicast(m->dst_ip))
				return RFW_NEIGH_ERR_ND_BAD_DEST;
		}
	} else {
		m->kind = RFW_NEIGH_NA;
		m->na_flags = icmp[4] & (RFW_ND_NA_ROUTER | RFW_ND_NA_SOLICIT | RFW_ND_NA_OVERRIDE);
		if ((m->na_flags & RFW_ND_NA_SOLICIT) && rfw_ip6_is_multicast(m->dst_ip))
			return RFW_NEIGH_ERR_ND_BAD_DEST;
	}
	if (m->has_lla && (m->lla[0] & 1))
		return RFW_NEIGH_ERR_ND_BAD_OPTION;
	return RFW_NEIGH_ERR_OK;
}

enum rfw_neigh_err rfw_neigh_parse(const uint8_t *buf, size_t len, struct rfw_neigh_msg *m)
{
	size_t off;
	uint16_t et;

	memset(m, 0, sizeof(*m));
	if (len < RFW_ETH_HLEN)
		return RFW_NEIGH_ERR_TRUNC;
	off = parse_l2(buf, len, &m->l2, &et);
	if (off == 0)
		return RFW_NEIGH_ERR_TRUNC;
	if (et == RFW_ETHERTYPE_ARP)
		return parse_arp(buf + off, len - off, m);
	if (et == RFW_ETHERTYPE_IPV6)
		return parse_nd(buf + off, len - off, m);
	return RFW_NEIGH_ERR_NOT_NEIGH;
}

/* Ethernet header with tags; returns the L3 offset or 0 when @cap is too small. */
static size_t put_l2(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, uint16_t et)
{
	size_t off = 12;

	if (l2->nvlan > RFW_MAX_VLANS || cap < RFW_NEIGH_FRAME_MAX)
		return 0;
	memcpy(buf, l2->dst, 6);
	memcpy(buf + 6, l2->src, 6);
	for (unsigned i = 0; i < l2->nvlan; i++) {
		rfw_put_be16(buf + off, l2->vlan_tpid[i] ? l2->vlan_tpid[i] : RFW_ETHERTYPE_VLAN);
		rfw_put_be16(buf + off + 2, l2->vlan_tci[i]);
		off += RFW_VLAN_HLEN;
	}
	rfw_put_be16(buf + off, et);
	return off + 2;
}

static size_t pad(uint8_t *buf, size_t len)
{
	if (len < RFW_ETH_MIN_FRAME) {
		memset(buf + len, 0, RFW_ETH_MIN_FRAME - len);
		len = RFW_ETH_MIN_FRAME;
	}
	return len;
}

size_t rfw_arp_build(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, uint16_t op,
                     const uint8_t sha[6], uint32_t spa, const uint8_t tha[6], uint32_t tpa)
{
	size_t off = put_l2(buf, cap, l2, RFW_ETHERTYPE_ARP);
	uint8_t *a = buf + off;

	if (off == 0)
		return 0;
	rfw_put_be16(a, 1);
	rfw_put_be16(a + 2, RFW_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	rfw_put_be16(a + 6, op);
	memcpy(a + 8, sha, 6);
	rfw_put_be32(a + 14, spa);
	memcpy(a + 18, tha, 6);
	rfw_put_be32(a + 24, tpa);
	return pad(buf, off + RFW_ARP_LEN);
}

/* IPv6 header + ICMPv6 NS/NA with one link-layer address option (32 bytes). */
static size_t put_nd(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, uint8_t type,
                     const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16],
                     uint8_t flags)
{
	size_t off = put_l2(buf, cap, l2, RFW_ETHERTYPE_IPV6);
	uint8_t *ip = buf + off, *icmp = ip + RFW_IPV6_HLEN;
	const size_t ilen = 24 + 8;
	uint16_t ck;

	if (off == 0)
		return 0;
	memset(ip, 0, RFW_IPV6_HLEN + ilen);
	ip[0] = 0x60;
	rfw_put_be16(ip + 4, (uint16_t)ilen);
	ip[6] = RFW_IPPROTO_ICMPV6;
	ip[7] = RFW_ND_HOP_LIMIT;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == RFW_ICMP6_NS ? RFW_ND_OPT_SLLA : RFW_ND_OPT_TLLA;
	icmp[25] = 1;
	memcpy(icmp + 26, l2->src, 6);
	ck = rfw_icmp6_csum(src, dst, icmp, ilen);
	rfw_put_be16(icmp + 2, ck);
	return pad(buf, off + RFW_IPV6_HLEN + ilen);
}

size_t rfw_nd_build_ns(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, const uint8_t src_ip[16],
                       const uint8_t dst_ip[16], const uint8_t target[16])
{
	return put_nd(buf, cap, l2, RFW_ICMP6_NS, src_ip, dst_ip, target, 0);
}

size_t rfw_nd_build_na(uint8_t *buf, size_t cap, const struct rfw_l2 *l2, const uint8_t target[16],
                       const uint8_t dst_ip[16], uint8_t flags)
{
	return put_nd(buf, cap, l2, RFW_ICMP6_NA, target, dst_ip, target, flags);
}

int rfw_ecn_mark_ce(uint8_t *frame, size_t len)
{
	size_t off = 12;
	uint16_t et;
	int ecn;

	if (len < RFW_ETH_HLEN)
		return -1;
	et = rfw_get_be16(frame + off);
	for (unsigned n = 0; et == RFW_ETHERTYPE_VLAN || et == RFW_ETHERTYPE_QINQ; n++) {
		if (n == RFW_MAX_VLANS || len < off + 2 + RFW_VLAN_HLEN + 2)
			return -1;
		off += RFW_VLAN_HLEN;
		et = rfw_get_be16(frame + off);
	}
	off += 2;
	if (et == RFW_ETHERTYPE_IPV4 && len >= off + RFW_IPV4_HLEN && frame[off] >> 4 == 4) {
		uint8_t *ip = frame + off;
		uint16_t old_w = rfw_get_be16(ip), new_w;
		uint32_t sum;

		ecn = ip[1] & 3;
		if (ecn == RFW_ECN_NOT_ECT || ecn == RFW_ECN_CE)
			return ecn;
		ip[1] |= RFW_ECN_CE;
		new_w = rfw_get_be16(ip);
		/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). */
		sum = (uint16_t)~rfw_get_be16(ip + 10);
		sum += (uint16_t)~old_w;
		sum += new_w;
		rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(sum));
		return ecn;
	}
	if (et == RFW_ETHERTYPE_IPV6 && len >= off + RFW_IPV6_HLEN && frame[off] >> 4 == 6) {
		uint8_t *ip = frame + off;

		/* Traffic class straddles bytes 0 and 1: ECN is bits 5:4 of byte 1. */
		ecn = (ip[1] >> 4) & 3;
		if (ecn == RFW_ECN_NOT_ECT || ecn == RFW_ECN_CE)
			return ecn;
		ip[1] |= RFW_ECN_CE << 4;
		return ecn;
	}
	return -1;
}
