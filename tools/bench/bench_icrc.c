/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-bench-icrc: ICRC throughput (ISA-L, chained, masked headers) beside memcpy and zlib's
 * crc32 over the same bytes on the same core, for frame sizes from 64 B to 9000 B. memcpy of
 * the same bytes is the bound a software NIC's per-byte work is judged against.
 *
 * usage: rocefw-bench-icrc [--seconds S] [--working-set-kb K]
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include <isa-l/crc.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_clock.h"

/* Frames of @size bytes (Ethernet .. ICRC), @n of them, back to back in @buf. */
static void make_frames(uint8_t *buf, size_t size, size_t n)
{
	struct rfw_frame_spec s = {
	    .ip_ver = 4, .tos = 2, .ttl = 64, .df = true, .udp_sport = 49152};
	size_t ib_len = size - 14 - 20 - 8 - 4;
	struct rfw_ib_pkt p = {0};

	rfw_ip4_to_mapped(s.src_ip, 0xc0000201);
	rfw_ip4_to_mapped(s.dst_ip, 0xc0000202);
	p.bth.opcode = RFW_OP_RC_SEND_ONLY;
	p.bth.padcnt = rfw_ib_padcnt((uint32_t)(ib_len - RFW_BTH_LEN));
	for (size_t i = 0; i < n; i++) {
		uint8_t *f = buf + i * size;
		int off = rfw_frame_build_hdrs(f, size, &s, ib_len);

		rfw_ib_build(f + off, size - (size_t)off, &p);
		for (size_t k = (size_t)off + RFW_BTH_LEN; k < size - 4; k++)
			f[k] = (uint8_t)(k * 131 + i);
		rfw_frame_finalize(f, &s, ib_len);
	}
}

enum kind { K_MEMCPY, K_ICRC, K_ISAL, K_ZLIB };

static double run(enum kind k, uint8_t *src, uint8_t *dst, size_t size, size_t n, double secs,
                  uint32_t *sink)
{
	size_t span = size - 14 - 4; /* what the ICRC covers: IP .. byte before the ICRC */
	double t0 = rfw_mono_s(), t;
	uint64_t bytes = 0;

	do {
		for (size_t i = 0; i < n; i++) {
			uint8_t *f = src + i * size;

			switch (k) {
			case K_MEMCPY:
				memcpy(dst + i * size + 14, f + 14, span);
				break;
			case K_ICRC:
				*sink ^= rfw_icrc_compute(f + 14, span, 4);
				break;
			case K_ISAL:
				*sink ^= crc32_gzip_refl(0, f + 14, span);
				break;
			case K_ZLIB:
				*sink ^= (uint32_t)crc32(0, f + 14, (uInt)span);
				break;
			}
		}
		bytes += span * n;
		t = rfw_mono_s() - t0;
	} while (t < secs);
	return (double)bytes / t / 1e9;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {64, 128, 256, 1024, 1078, 4096, 4154, 9000};
	static const struct option longopts[] = {
	    {"seconds", required_argument, NULL, 's'},
	    {"working-set-kb", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	double secs = 0.3;
	size_t ws = 256; /* KiB: cache-resident by default, as a NIC's RX ring mostly is */
	uint32_t sink = 0;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		uint64_t kb;

		switch (opt) {
		case 's':
			if (rfw_opt_double("rocefw-bench-icrc", "--seconds", optarg, 0.001, 60,
			                   &secs) != 0)
				return 2;
			break;
		case 'w':
			if (rfw_opt_u64("rocefw-bench-icrc", "--working-set-kb", optarg, 16,
			                1048576, &kb) != 0)
				return 2;
			ws = (size_t)kb;
			break;
		case 'h':
			printf("usage: rocefw-bench-icrc [--seconds S] [--working-set-kb K]\n");
			return 0;
		default:
			fprintf(stderr, "rocefw-bench-icrc: unknown option '%s'\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	printf("# rocefw-bench-icrc schema 1: GB/s over the ICRC-covered bytes (IP header .. "
	       "payload), one core, working set %zu KiB, %.2f s per cell\n",
	       ws, secs);
	printf("%8s %12s %12s %12s %12s %10s\n", "frame_B", "memcpy_GBps", "icrc_GBps", "isal_GBps",
	       "zlib_GBps", "icrc/memcpy");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i], n = ws * 1024 / size;
		uint8_t *src = aligned_alloc(64, (n * size + 63) / 64 * 64);
		uint8_t *dst = aligned_alloc(64, (n * size + 63) / 64 * 64);
		double m, ic, is, z;

		if (src == NULL || dst == NULL) {
			fprintf(stderr, "rocefw-bench-icrc: out of memory\n");
			return 1;
		}
		make_frames(src, size, n);
		memset(dst, 0, n * size);
		m = run(K_MEMCPY, src, dst, size, n, secs, &sink);
		ic = run(K_ICRC, src, dst, size, n, secs, &sink);
		is = run(K_ISAL, src, dst, size, n, secs, &sink);
		z = run(K_ZLIB, src, dst, size, n, secs, &sink);
		printf("%8zu %12.2f %12.2f %12.2f %12.2f %10.2f\n", size, m, ic, is, z, ic / m);
		free(src);
		free(dst);
	}
	fprintf(stderr, "(checksum sink %08x)\n", sink);
	return 0;
}
