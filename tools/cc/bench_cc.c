/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-bench-cc: cost of the DCQCN rate machine per CNP and per packet accounted, next to
 * two bounds measured in the same run: an empty loop iteration and a dependent 64-bit division.
 * A benchmark, not a test: figures vary with the machine; docs/cc.md records some.
 *
 *   rocefw-bench-cc [ITERATIONS]      (default 10000000)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cc/cc.h"
#include "cc/pacer.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_clock.h"

#define NFLOWS 1024 /* spread over many states so the figures are not one hot cache line */

/* Keep the compiler from deleting or hoisting the measured work. */
#define BARRIER(v) __asm__ volatile("" : "+r"(v))

/* Bound 1: an empty loop iteration, ns. */
static double bench_empty(uint64_t iters)
{
	uint64_t t0 = rfw_mono_ns();

	for (uint64_t i = 0; i < iters; i++)
		BARRIER(i);
	return (double)(rfw_mono_ns() - t0) / (double)iters;
}

/* Bound 2: one dependent 64-bit division per iteration (what a per-packet rate -> ns
 * conversion costs without a precomputed reciprocal), ns. */
static double bench_div(uint64_t iters, uint64_t *acc)
{
	uint64_t x = 0xffffffffffffull, t0 = rfw_mono_ns();

	for (uint64_t i = 0; i < iters; i++) {
		uint64_t d = 1000 + (i & 1023);

		BARRIER(d);
		x = x / d + 0xffffffffffffull;
	}
	*acc += x;
	return (double)(rfw_mono_ns() - t0) / (double)iters;
}

/* Per CNP: flow i % NFLOWS gets a CNP every NFLOWS * 2 us of virtual time, so timers (alpha,
 * monitor period, increase) fire in between as they would in a host. ns per CNP. */
static double bench_cnp(struct dcqcn_rp *rps, uint64_t iters, uint64_t *acc)
{
	uint64_t t0 = rfw_mono_ns();
	double ns;

	for (uint64_t i = 0; i < iters; i++)
		dcqcn_rp_on_cnp(&rps[i % NFLOWS], i * 2000);
	ns = (double)(rfw_mono_ns() - t0) / (double)iters;
	for (unsigned int i = 0; i < NFLOWS; i++)
		*acc += dcqcn_rp_rate_kbps(&rps[i]);
	return ns;
}

/* Per packet accounted: 4096-byte packets round-robin over the flows, 40 ns apart. Byte
 * counter events and due timers run inside, as they would. ns per packet. */
static double bench_tx(struct dcqcn_rp *rps, uint64_t iters, uint64_t *acc)
{
	uint64_t t0 = rfw_mono_ns();
	double ns;

	for (uint64_t i = 0; i < iters; i++)
		dcqcn_rp_on_tx(&rps[i % NFLOWS], 4096, iters * 2000 + i * 40);
	ns = (double)(rfw_mono_ns() - t0) / (double)iters;
	for (unsigned int i = 0; i < NFLOWS; i++)
		*acc += dcqcn_rp_rate_kbps(&rps[i]);
	return ns;
}

/* Pacer: departure time of one packet (includes its 64-bit division), ns. */
static double bench_pace(uint64_t iters, uint64_t *acc)
{
	struct cc_pacer pacer;
	uint64_t t0;

	cc_pacer_init(&pacer, 10000);
	t0 = rfw_mono_ns();
	for (uint64_t i = 0; i < iters; i++)
		*acc += cc_pacer_depart(&pacer, i * 40, 4096, 25000000 + (i & 1023));
	return (double)(rfw_mono_ns() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	static struct dcqcn_rp rps[NFLOWS];
	uint64_t iters = argc > 1 ? rfw_opt_u64_or_exit("rocefw-bench-cc", "ITERATIONS", argv[1], 1,
	                                                UINT64_MAX / 2)
	                          : 10000000ull;
	struct dcqcn_params p;
	struct dcqcn_prof prof;
	char msg[128];
	uint64_t acc = 0;
	double ns_empty, ns_div, ns_cnp, ns_tx, ns_pace;

	if (iters < NFLOWS)
		iters = NFLOWS;
	dcqcn_params_init(&p, DCQCN_PROFILE_UNIFIED);
	if (dcqcn_prof_config(&prof, &p, 100000, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "rocefw-bench-cc: %s\n", msg);
		return 1;
	}
	for (unsigned int i = 0; i < NFLOWS; i++)
		dcqcn_rp_init(&rps[i], &prof);
	ns_empty = bench_empty(iters);
	ns_div = bench_div(iters, &acc);
	ns_cnp = bench_cnp(rps, iters, &acc);
	ns_tx = bench_tx(rps, iters, &acc);
	ns_pace = bench_pace(iters, &acc);
	printf("# rocefw-bench-cc iterations=%" PRIu64 " flows=%d profile=unified line=100G\n",
	       iters, NFLOWS);
	printf("bound empty_loop_iteration_ns %.2f\n", ns_empty);
	printf("bound div64_dependent_ns      %.2f\n", ns_div);
	printf("dcqcn_rp_on_cnp_ns            %.2f\n", ns_cnp);
	printf("dcqcn_rp_on_tx_ns             %.2f\n", ns_tx);
	printf("cc_pacer_depart_ns            %.2f\n", ns_pace);
	printf("sizeof_dcqcn_rp_bytes         %zu\n", sizeof(struct dcqcn_rp));
	printf("sizeof_dcqcn_np_bytes         %zu\n", sizeof(struct dcqcn_np));
	printf("# checksum %" PRIu64 "\n", acc);
	return 0;
}
