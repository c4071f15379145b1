/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: rocefw-replay check's per-frame path. Byte 0 picks the link type, byte 1 how
 * much of the frame the "capture" kept (snap length) and whether to repair the ICRC first
 * (so that flow and PSN tracking, behind the ICRC check, are reached), the rest is the frame. One
 * checker lives across inputs (flow table growth, PSN tracking) and is reported and replaced now
 * and then.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wire/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int linktypes[] = {
    RFW_LINKTYPE_ETHERNET, RFW_LINKTYPE_LINUX_SLL, RFW_LINKTYPE_LINUX_SLL2,
    RFW_LINKTYPE_RAW,      RFW_LINKTYPE_IPV4,      RFW_LINKTYPE_IPV6,
    RFW_DLT_RAW,
};

static struct rfw_check *chk;
static unsigned runs;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t caplen, wirelen;
	uint8_t *frame;
	int lt;

	if (size < 2)
		return 0;
	if (chk == NULL) {
		chk = rfw_check_new(&(struct rfw_check_opts){.max_listed = 16});
		if (chk == NULL)
			return 0;
	}
	lt = linktypes[data[0] % (sizeof(linktypes) / sizeof(linktypes[0]))];
	wirelen = (uint32_t)(size - 2);
	caplen = data[1] < 0xf0 ? wirelen : wirelen * (data[1] & 0xf) / 16;
	/* An exact-size copy of what was "captured" so ASan sees any over-read. */
	frame = malloc(caplen ? caplen : 1);
	if (frame == NULL)
		return 0;
	memcpy(frame, data + 2, caplen);
	if (lt == RFW_LINKTYPE_ETHERNET && (data[1] & 0xc0) == 0x40) {
		struct rfw_frame_view v;

		if (rfw_frame_parse_eth(frame, caplen, &v) == RFW_FRAME_ERR_OK &&
		    v.kind == RFW_FRAME_ROCEV2) {
			uint32_t crc =
			    rfw_icrc_compute(frame + v.l3_off, rfw_frame_icrc_span(&v), v.ip_ver);
			uint8_t *w = frame + v.ib_off + v.ib_len;

			for (int i = 0; i < 4; i++)
				w[i] = (uint8_t)(crc >> (8 * i));
		}
	}
	rfw_check_frame(chk, lt, frame, caplen, wirelen, runs);
	free(frame);
	if (++runs % 4096 == 0) {
		FILE *null = fopen("/dev/null", "w");
		json_t *j = rfw_check_json(chk, "fuzz");

		if (null) {
			rfw_check_print(chk, "fuzz", null);
			fclose(null);
		}
		json_decref(j);
		rfw_check_free(chk);
		chk = NULL;
	}
	return 0;
}
