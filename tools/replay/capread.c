/* SPDX-License-Identifier: BSD-3-Clause */
#include "capread.h"

#include <errno.h>

int rfw_capread_open(struct rfw_capread *r, const uint8_t *buf, size_t len)
{
	uint32_t magic;

	memset(r, 0, sizeof(*r));
	if (len < RFW_PCAP_HDR_LEN)
		return -EINVAL;
	memcpy(&magic, buf, 4);
	switch (magic) {
	case 0xa1b2c3d4:
		break;
	case 0xa1b23c4d:
		r->nsec = true;
		break;
	case 0xd4c3b2a1:
		r->swap = true;
		break;
	case 0x4d3cb2a1:
		r->swap = r->nsec = true;
		break;
	default:
		return -EINVAL;
	}
	r->base = buf;
	r->len = len;
	r->off = RFW_PCAP_HDR_LEN;
	/* The link-type field's top bits may carry an FCS length (pcap spec, LinkType): mask. */
	r->linktype = (int)(rfw_capread_u32(r, buf + 20) & 0x03ffffff);
	return 0;
}
