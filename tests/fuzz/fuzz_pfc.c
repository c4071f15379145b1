/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the PAUSE / PFC parser (wire/pfc_wire.c), with a rebuild oracle: a frame
 * that parses is built again from the parsed fields and must parse back to the same opcode,
 * source, class-enable vector and pause times. The priority classifier must return -1..7 on
 * any bytes. The input is parsed twice: with no own address and with its own destination as
 * the station's address (the unicast PAUSE path).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/pfc_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size, const uint8_t *own)
{
	uint8_t buf[RFW_MACCTL_FRAME_LEN];
	struct rfw_pfc_msg m, r;
	size_t len;

	if (rfw_pfc_parse(data, size, own, &m) != RFW_PFC_ERR_OK)
		return;
	if (m.opcode == RFW_MACCTL_OP_PAUSE)
		len = rfw_pause_build(buf, sizeof(buf), m.src, m.quanta[0]);
	else if (m.opcode == RFW_MACCTL_OP_PFC)
		len = rfw_pfc_build(buf, sizeof(buf), m.src, m.enable, m.quanta);
	else
		__builtin_trap();
	if (len != RFW_MACCTL_FRAME_LEN || rfw_pfc_parse(buf, len, NULL, &r) != RFW_PFC_ERR_OK)
		__builtin_trap();
	if (r.opcode != m.opcode || r.enable != m.enable || memcmp(r.src, m.src, 6) != 0 ||
	    memcmp(r.quanta, m.quanta, sizeof(r.quanta)) != 0)
		__builtin_trap();
	for (unsigned i = 0; i < RFW_PFC_PRIOS; i++)
		if (!(m.enable >> i & 1) && m.quanta[i] != 0)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t map[64];
	int pr;

	for (unsigned i = 0; i < 64; i++)
		map[i] = (uint8_t)(i >> 3);
	check(data, size, NULL);
	if (size >= 6)
		check(data, size, data);
	pr = rfw_pfc_frame_prio(data, size, map);
	if (pr < -1 || pr > 7)
		__builtin_trap();
	return 0;
}
