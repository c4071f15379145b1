/* SPDX-License-Identifier: BSD-3-Clause */
/* MAC Control PAUSE (802.3 Annex 31B) and PFC (802.1Qbb) codec. See pfc_wire.h. */
#include "wire/pfc_wire.h"

#include <string.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"

const uint8_t rfw_macctl_dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

static const char *const pfc_err_names[] = {
#define RFW_PFC_ERR_STR(name, str) [RFW_PFC_ERR_##name] = (str),
    RFW_FOREACH_PFC_ERR(RFW_PFC_ERR_STR)
#undef RFW_PFC_ERR_STR
};

const char *rfw_pfc_err_name(enum rfw_pfc_err err)
{
	return (unsigned)err < RFW_PFC_ERR__COUNT ? pfc_err_names[err] : "unknown";
}

enum rfw_pfc_err rfw_pfc_parse(const uint8_t *buf, size_t len, const uint8_t *own_mac,
                               struct rfw_pfc_msg *m)
{
	const uint8_t *b = buf + RFW_ETH_HLEN;
	uint16_t et;

	memset(m, 0, sizeof(*m));
	if (len < RFW_ETH_HLEN)
		return RFW_PFC_ERR_TRUNC_ETH;
	et = rfw_get_be16(buf + 12);
	if (et == RFW_ETHERTYPE_VLAN || et == RFW_ETHERTYPE_QINQ)
		return RFW_PFC_ERR_VLAN_TAGGED;
	if (et != RFW_ETHERTYPE_MAC_CONTROL)
		return RFW_PFC_ERR_NOT_MAC_CONTROL;
	memcpy(m->dst, buf, 6);
	memcpy(m->src, buf + 6, 6);
	if (len < RFW_ETH_HLEN + 2)
		return RFW_PFC_ERR_TRUNC_OPCODE;
	m->opcode = rfw_get_be16(b);
	if (m->opcode != RFW_MACCTL_OP_PAUSE && m->opcode != RFW_MACCTL_OP_PFC)
		return RFW_PFC_ERR_UNSUPPORTED_OPCODE;
	if (m->opcode == RFW_MACCTL_OP_PAUSE) {
		if (len < RFW_ETH_HLEN + RFW_PAUSE_BODY_LEN)
			return RFW_PFC_ERR_TRUNC_PAUSE;
	} else if (len < RFW_ETH_HLEN + RFW_PFC_BODY_LEN) {
		return RFW_PFC_ERR_TRUNC_PFC;
	}
	if (memcmp(m->dst, rfw_macctl_dst, 6) != 0 &&
	    (own_mac == NULL || memcmp(m->dst, own_mac, 6) != 0))
		return RFW_PFC_ERR_BAD_DST;
	/* A group source address is never a station's (802.3 3.2.3): forged or corrupt. */
	if (m->src[0] & 1)
		return RFW_PFC_ERR_MCAST_SRC;
	if (m->opcode == RFW_MACCTL_OP_PAUSE) {
		uint16_t q = rfw_get_be16(b + 2);

		m->enable = 0xff;
		for (unsigned i = 0; i < RFW_PFC_PRIOS; i++)
			m->quanta[i] = q;
		return RFW_PFC_ERR_OK;
	}
	m->enable_resv = b[2];
	m->enable = b[3];
	for (unsigned i = 0; i < RFW_PFC_PRIOS; i++)
		m->quanta[i] = (m->enable >> i & 1) ? rfw_get_be16(b + 4 + 2 * i) : 0;
	return RFW_PFC_ERR_OK;
}

static uint8_t *macctl_hdr(uint8_t *buf, const uint8_t src[6], uint16_t opcode)
{
	memset(buf, 0, RFW_MACCTL_FRAME_LEN);
	memcpy(buf, rfw_macctl_dst, 6);
	memcpy(buf + 6, src, 6);
	rfw_put_be16(buf + 12, RFW_ETHERTYPE_MAC_CONTROL);
	rfw_put_be16(buf + RFW_ETH_HLEN, opcode);
	return buf + RFW_ETH_HLEN + 2;
}

size_t rfw_pause_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint16_t quanta)
{
	if (cap < RFW_MACCTL_FRAME_LEN)
		return 0;
	rfw_put_be16(macctl_hdr(buf, src, RFW_MACCTL_OP_PAUSE), quanta);
	return RFW_MACCTL_FRAME_LEN;
}

size_t rfw_pfc_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint8_t enable,
                     const uint16_t quanta[RFW_PFC_PRIOS])
{
	uint8_t *p;

	if (cap < RFW_MACCTL_FRAME_LEN)
		return 0;
	p = macctl_hdr(buf, src, RFW_MACCTL_OP_PFC);
	p[0] = 0; /* reserved octet of the class-enable vector */
	p[1] = enable;
	for (unsigned i = 0; i < RFW_PFC_PRIOS; i++)
		rfw_put_be16(p + 2 + 2 * i, quanta[i]);
	return RFW_MACCTL_FRAME_LEN;
}

int rfw_pfc_frame_prio(const uint8_t *buf, size_t len, const uint8_t dscp2prio[64])
{
	uint16_t et;

	if (len < RFW_ETH_HLEN)
		return 0;
	et = rfw_get_be16(buf + 12);
	if (et == RFW_ETHERTYPE_MAC_CONTROL)
		return -1;
	/* 802.1Q 6.9.3: the PCP is the top three bits of the TCI of the (outer) tag. */
	if (et == RFW_ETHERTYPE_VLAN || et == RFW_ETHERTYPE_QINQ)
		return len >= RFW_ETH_HLEN + 2 ? buf[14] >> 5 : 0;
	if (et == RFW_ETHERTYPE_IPV4 && len >= RFW_ETH_HLEN + 2)
		return dscp2prio[buf[15] >> 2] & 7;
	if (et == RFW_ETHERTYPE_IPV6 && len >= RFW_ETH_HLEN + 2)
		return dscp2prio[((buf[14] & 0x0f) << 2) | (buf[15] >> 6)] & 7;
	return 0;
}
