/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the frame parser (every entry point), the ICRC, and the IB header parser, with
 * an oracle: a packet that parses must rebuild to the same header bytes (reserved bits and
 * the masked BTH bits aside), and its payload must lie inside the input. And the copy that
 * folds the CRC (rfw_crc_copy): the same bytes as the input, and ISA-L's CRC of them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ib(const uint8_t *ib, size_t len)
{
	struct rfw_ib_pkt p;
	uint8_t re[64];
	int hl;

	if (rfw_ib_parse(ib, len, &p) != RFW_IB_ERR_OK)
		return;
	if (p.payload_len && (p.payload < ib || p.payload + p.payload_len > ib + len))
		__builtin_trap();
	if ((size_t)p.op->hdr_len + p.payload_len + p.bth.padcnt != len)
		__builtin_trap();
	hl = rfw_ib_build(re, sizeof(re), &p);
	if (hl != p.op->hdr_len)
		__builtin_trap();
	/* Reserved bits are written as zero; compare everything else. */
	uint8_t orig[64];
	memcpy(orig, ib, (size_t)hl);
	orig[4] &= 0xc0;
	orig[8] &= 0x80;
	if (p.op->hdrs & RFW_HDR_DETH)
		orig[RFW_BTH_LEN + 4] = 0;
	if (p.op->hdrs & RFW_HDR_CNP_RSVD)
		memset(orig + hl - RFW_CNP_RSVD_LEN, 0, RFW_CNP_RSVD_LEN);
	if (memcmp(orig, re, (size_t)hl) != 0)
		__builtin_trap();
}

/* rfw_crc_copy of the input into an exact-size buffer, a CRC from its first bytes carried in:
 * a copy of it, and the CRC ISA-L gives (rfw_icrc_extend). */
static void check_crc_copy(const uint8_t *buf, size_t size)
{
	uint8_t *cp = malloc(size ? size : 1);
	uint32_t seed = 0;

	if (cp == NULL)
		return;
	if (size >= 4)
		memcpy(&seed, buf, 4);
	if (rfw_crc_copy(seed, cp, buf, size) != rfw_icrc_extend(seed, buf, size) ||
	    memcmp(cp, buf, size) != 0)
		__builtin_trap();
	free(cp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rfw_frame_view v;
	/* An exact-size copy so ASan catches any read past the end. */
	uint8_t *buf = malloc(size ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (rfw_frame_parse_eth(buf, size, &v) == RFW_FRAME_ERR_OK && v.kind == RFW_FRAME_ROCEV2) {
		if (v.ib_off + v.ib_len + RFW_ICRC_LEN > size)
			__builtin_trap();
		(void)rfw_frame_icrc_ok(buf, &v);
		check_ib(buf + v.ib_off, v.ib_len);
	}
	(void)rfw_frame_parse_at(buf, size, 14, &v);
	if (rfw_frame_parse_l3(buf, size, 0,
	                       (size && buf[0] >> 4 == 6) ? RFW_ETHERTYPE_IPV6 : RFW_ETHERTYPE_IPV4,
	                       &v) == RFW_FRAME_ERR_OK &&
	    v.kind == RFW_FRAME_ROCEV2)
		(void)rfw_frame_icrc_ok(buf, &v);
	(void)rfw_icrc_compute(buf, size, 4);
	(void)rfw_icrc_compute(buf, size, 6);
	check_ib(buf, size);
	check_crc_copy(buf, size);
	free(buf);
	return 0;
}
