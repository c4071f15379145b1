/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the ARP / ND parser and the ECN marker (wire/neigh_wire.c), with oracles:
 * a message that parses is rebuilt with the builders and must parse back to the same fields;
 * marking CE never touches bytes outside the frame, and an IPv4 frame whose header checksum
 * was right before marking is still right after.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"
#include "wire/neigh_wire.h"
#include "wire/ib_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void rebuild(const struct rfw_neigh_msg *m)
{
	uint8_t buf[RFW_NEIGH_FRAME_MAX];
	struct rfw_neigh_msg r;
	size_t len;

	switch (m->kind) {
	case RFW_NEIGH_ARP_REQUEST:
	case RFW_NEIGH_ARP_REPLY:
		len = rfw_arp_build(buf, sizeof(buf), &m->l2,
		                    m->kind == RFW_NEIGH_ARP_REQUEST ? 1 : 2, m->lla,
		                    rfw_get_be32(m->src_ip + 12), (const uint8_t[6]){0},
		                    rfw_get_be32(m->dst_ip + 12));
		break;
	case RFW_NEIGH_NS:
		/* The builder always adds an SLLA, equal to the frame's source address. */
		if (!m->has_lla || rfw_ip6_is_unspecified(m->src_ip) ||
		    memcmp(m->lla, m->l2.src, 6) != 0)
			return;
		len = rfw_nd_build_ns(buf, sizeof(buf), &m->l2, m->src_ip, m->dst_ip, m->target);
		break;
	case RFW_NEIGH_NA:
		if (!m->has_lla)
			return;
		/* The builder sends from the target address with a TLLA = the frame source. */
		if (memcmp(m->src_ip, m->target, 16) != 0 || memcmp(m->lla, m->l2.src, 6) != 0)
			return;
		len = rfw_nd_build_na(buf, sizeof(buf), &m->l2, m->target, m->dst_ip, m->na_flags);
		break;
	default:
		__builtin_trap();
	}
	if (len == 0 || rfw_neigh_parse(buf, len, &r) != RFW_NEIGH_ERR_OK)
		__builtin_trap();
	if (r.kind != m->kind || memcmp(r.src_ip, m->src_ip, 16) ||
	    memcmp(r.dst_ip, m->dst_ip, 16) || memcmp(r.target, m->target, 16) ||
	    r.l2.nvlan != m->l2.nvlan || memcmp(r.l2.dst, m->l2.dst, 6) ||
	    memcmp(r.l2.src, m->l2.src, 6))
		__builtin_trap();
	for (unsigned i = 0; i < r.l2.nvlan; i++)
		if (r.l2.vlan_tci[i] != m->l2.vlan_tci[i])
			__builtin_trap();
	if (m->kind != RFW_NEIGH_NS && memcmp(r.lla, m->lla, 6))
		__builtin_trap();
	if (m->kind == RFW_NEIGH_NA && r.na_flags != m->na_flags)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rfw_neigh_msg m;
	struct rfw_frame_view v;
	/* Exact-size copies so ASan catches any access past the end. */
	uint8_t *buf = malloc(size ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (rfw_neigh_parse(buf, size, &m) == RFW_NEIGH_ERR_OK)
		rebuild(&m);
	if (memcmp(buf, data, size) != 0)
		__builtin_trap(); /* the parser is read-only */
	{
		bool sum_ok =
		    rfw_frame_parse_eth(buf, size, &v) == RFW_FRAME_ERR_OK && v.ip_ver == 4;
		int before = rfw_ecn_mark_ce(buf, size);

		if (before == RFW_ECN_ECT0 || before == RFW_ECN_ECT1) {
			if (rfw_frame_parse_eth(buf, size, &v) == RFW_FRAME_ERR_OK &&
			    rfw_frame_ecn(&v) != RFW_ECN_CE)
				__builtin_trap();
			if (sum_ok && rfw_frame_parse_eth(buf, size, &v) != RFW_FRAME_ERR_OK)
				__builtin_trap(); /* checksum broken by the incremental update */
		} else if (memcmp(buf, data, size) != 0) {
			__builtin_trap(); /* nothing to mark: nothing may change */
		}
	}
	free(buf);
	return 0;
}
