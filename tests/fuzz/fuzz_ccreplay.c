/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: `rocefw-replay cc`'s input path. The input is a classic pcap file: the
 * zero-copy record reader (tools/replay/capread.h) walks it and every record goes through the
 * cc engine (flow table, CNP/ACK attribution, windows, reaction tracking, two DCQCN models),
 * then the engine finishes and reports. If the input is not a pcap, byte 0 picks a link type
 * and the rest is one frame, so frame-level mutations are reached too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capread.h"
#include "cc_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int linktypes[] = {1, 113, 276, 101, 228, 229, 12};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dcqcn_prof prof[2];
	static int ready;
	struct rfw_cc_opts o;
	struct rfw_capread r;
	struct rfw_cc *c;
	const uint8_t *fr;
	uint32_t caplen, wirelen;
	uint64_t ts;

	if (!ready) {
		struct dcqcn_params p;

		dcqcn_params_init(&p, DCQCN_PROFILE_UNIFIED);
		dcqcn_prof_config(&prof[0], &p, 100000, NULL, 0);
		dcqcn_params_init(&p, DCQCN_PROFILE_MLX5_CX5);
		dcqcn_prof_config(&prof[1], &p, 100000, NULL, 0);
		ready = 1;
	}
	rfw_cc_opts_default(&o);
	o.window_ns = 2000; /* short windows: closed often on small inputs */
	o.nmodels = 2;
	o.models[0] = &prof[0];
	o.models[1] = &prof[1];
	o.whatif = true;
	c = rfw_cc_new(&o);
	if (c == NULL)
		return 0;
	if (rfw_capread_open(&r, data, size) == 0) {
		while (rfw_capread_next(&r, &fr, &caplen, &wirelen, &ts) == 1) {
			/* An exact-size copy so that ASan sees any over-read. */
			uint8_t *copy = malloc(caplen ? caplen : 1);

			if (copy == NULL)
				break;
			memcpy(copy, fr, caplen);
			rfw_cc_frame(c, r.linktype, copy, caplen, wirelen, ts);
			free(copy);
		}
	} else if (size >= 1) {
		uint8_t *copy = malloc(size);

		if (copy != NULL) {
			memcpy(copy, data + 1, size - 1);
			rfw_cc_frame(c, linktypes[data[0] % 7], copy, (uint32_t)(size - 1),
			             (uint32_t)(size - 1), 1);
			free(copy);
		}
	}
	rfw_cc_finish(c);
	for (unsigned i = 0; i < rfw_cc_nflows(c); i++) {
		json_t *j = rfw_cc_flow_json(c, i, "unified", "mlx5-cx5");

		json_decref(j);
	}
	{
		FILE *null = fopen("/dev/null", "w");

		if (null) {
			rfw_cc_print(c, null);
			fclose(null);
		}
	}
	rfw_cc_free(c);
	return 0;
}
