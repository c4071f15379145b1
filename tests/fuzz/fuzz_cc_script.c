/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: rocefw-cc's two parsers, the event script (t_ns,event[,arg]) and the INI
 * profile file (which ends in dcqcn_param_set / timely_param_set), compiled from the tool's
 * own source with main() renamed. Byte 0 picks the parser (even: script, odd: INI); for the
 * script, byte 1 picks the algorithm and the profile. Output and messages go to /dev/null.
 * An INI that loads must leave parameters that either validate or are rejected by name; a
 * script run leaves the rate within the profile's bounds.
 */
#include <stdio.h>

static FILE *fuzz_sink;
#undef stderr
#define stderr fuzz_sink
#define main   rocefw_cc_main
int rocefw_cc_main(int argc, char **argv);
#include "../../tools/cc/rocefw_cc.c"
#undef main
#undef stderr

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum dcqcn_profile profiles[] = {
	    DCQCN_PROFILE_UNIFIED,  DCQCN_PROFILE_PAPER,       DCQCN_PROFILE_MLX5_CX5,
	    DCQCN_PROFILE_HPCC_NS3, DCQCN_PROFILE_SHARED_PORT,
	};
	static struct machine m;
	struct opts o = {.line_rate_mbps = 100000};
	char msg[256];
	FILE *in;

	if (fuzz_sink == NULL) {
		fuzz_sink = fopen("/dev/null", "w");
		if (fuzz_sink == NULL || freopen("/dev/null", "w", stdout) == NULL)
			return 0;
	}
	if (size < 2)
		return 0;
	dcqcn_params_init(&o.dp, profiles[data[1] % (sizeof(profiles) / sizeof(profiles[0]))]);
	timely_params_init(&o.tp);
	in = fmemopen((void *)(data + 2), size - 2, "r");
	if (in == NULL)
		return 0;
	if (data[0] & 1) {
		if (load_profile_stream(&o, in, "fuzz") == 0 &&
		    dcqcn_params_validate(&o.dp, msg, sizeof(msg)) < 0 && msg[0] == '\0')
			__builtin_trap(); /* a rejection must say what was wrong */
	} else {
		memset(&m, 0, sizeof(m));
		if (data[1] & 0x80) {
			if (timely_prof_config(&m.tprof, &o.tp, o.line_rate_mbps, msg, sizeof(msg)))
				__builtin_trap(); /* built-in defaults always configure */
			cc_flow_init_timely(&m.flow, &m.tprof);
		} else {
			if (dcqcn_prof_config(&m.dprof, &o.dp, o.line_rate_mbps, msg, sizeof(msg)))
				__builtin_trap();
			cc_flow_init_dcqcn(&m.flow, &m.dprof);
		}
		(void)run_script(&m, in, "fuzz");
		if (!(data[1] & 0x80) && (m.flow.u.dcqcn.rc_bps > m.dprof.max_bps ||
		                          m.flow.u.dcqcn.rc_bps < m.dprof.min_bps))
			__builtin_trap(); /* the rate never leaves [rp_min_rate, max] */
	}
	fclose(in);
	return 0;
}
