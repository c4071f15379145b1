/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-perf's yardsticks, timed on the run's own core right after the run (docs/perf.md):
 * the byte passes a path must make at least (copies and ICRCs per path-MTU packet), and the
 * checker's own cost per message, which the loopback run subtracts so that the byte-work ratio
 * charges the NIC only with the NIC's work while every byte is still compared inside the run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dataplane/rfw_port.h"
#include "tools/common/rfw_pattern.h"
#include "tools/perf/perf.h"
#include "wire/frame.h"

#define BOUND_MIN_NS (20ull * 1000 * 1000) /* time each yardstick for at least 20 ms */
#define BATCH        32 /* messages between clock reads: a read costs as much as a 64 B pass */

/* The byte passes of one packet of @n bytes at @off of @msg: @copies (1: into the wire
   buffer; 2: also back out, to @dst: the target MR's message slot, or the PMD's buffer) and
   @icrcs ICRCs of the frame;
   with @fuse, the first copy and the first ICRC in one pass, as the sender makes them
   (rfw_crc_copy: docs/nic.md "Payload sent from the MR"). */
static uint32_t byte_passes(uint8_t *frame, const uint8_t *msg, uint8_t *dst, uint32_t off,
                            uint32_t n, unsigned copies, unsigned icrcs, bool fuse)
{
	const size_t hdr = RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN + RFW_BTH_LEN;
	uint32_t sink = 0;

	if (fuse && icrcs > 0) {
		uint32_t h = rfw_icrc_compute(frame + RFW_ETH_HLEN, hdr - RFW_ETH_HLEN, 4);

		sink += rfw_crc_copy(h, frame + hdr, msg + off, n);
		icrcs--;
	} else {
		memcpy(frame + hdr, msg + off, n);
	}
	for (unsigned i = 0; i < icrcs; i++)
		sink += rfw_icrc_compute(frame + RFW_ETH_HLEN,
		                         RFW_IPV4_HLEN + RFW_UDP_HLEN + RFW_BTH_LEN + n, 4);
	if (copies > 1)
		memcpy(dst + off, frame + hdr, n);
	return sink;
}

/*
 * Walks the run's own source slots (@nslots of @size from @src, in order), so it sees the
 * run's cache footprint rather than one warm buffer. The second copy walks @dslots slots of
 * its own in step, as the receiver's placement walks the target MR's (loopback, 64 KiB WRITEs:
 * 32 of them, 2 MiB, more than this core's L2); @dslots 1: one buffer (the PMD's copy into its
 * ring). Packets of at least @fuse_min bytes (0: none), a multiple of 4, take the fused pass.
 */
double perf_byte_passes_gbps(struct perf *P, const uint8_t *src, uint32_t nslots, uint32_t size,
                             uint32_t mtu, unsigned copies, unsigned icrcs, uint32_t fuse_min,
                             uint32_t dslots)
{
	uint8_t frame[RFW_FRAME_MAX] __rte_aligned(64);
	struct rfw_frame_spec sp = {.ip_ver = 4, .ttl = 64, .df = true};
	uint64_t t0, t, reps = 0, bytes = 0;
	volatile uint32_t sink = 0;
	uint8_t *dst = copies > 1 ? malloc((size_t)dslots * size) : NULL;

	if (copies > 1 && dst == NULL)
		die("byte-work bound buffer", ENOMEM);
	rfw_ip4_to_mapped(sp.src_ip, 0x0a000001);
	rfw_ip4_to_mapped(sp.dst_ip, 0x0a000002);
	rfw_frame_build_hdrs(frame, sizeof(frame), &sp, RFW_BTH_LEN + mtu);
	t0 = now_ns(P);
	do {
		for (unsigned b = 0; b < BATCH; b++, reps++) {
			const uint8_t *msg = src + (reps % nslots) * (size_t)size;
			uint8_t *to = dst != NULL ? dst + (reps % dslots) * (size_t)size : NULL;

			for (uint32_t off = 0; off < size; off += mtu) {
				uint32_t n = size - off < mtu ? size - off : mtu;

				sink += byte_passes(frame, msg, to, off, n, copies, icrcs,
				                    fuse_min != 0 && n >= fuse_min && (n & 3) == 0);
			}
			bytes += size;
		}
		t = now_ns(P);
	} while (t - t0 < BOUND_MIN_NS);
	(void)sink;
	free(dst);
	return (double)bytes * 8.0 / (double)(t - t0);
}

/*
 * The checker's cost of one message of @size: the same full comparison the run makes (memcmp
 * of a landed message against its expectation), over @nslots slots against an equal copy, so
 * that every compare runs to the end as a passing check does. @hot: the expectation is one slot
 * (the two-process checker's, want_msg in perf.c: it stays in cache) and the slots compared
 * with it are copies of it; else each slot is compared with its own copy (loopback: the landed
 * message against the sender's slot). ns.
 */
double perf_check_ns(struct perf *P, const uint8_t *src, uint32_t nslots, uint32_t size, bool hot)
{
	uint8_t *copy = malloc((size_t)nslots * size);
	uint64_t t0, t, n = 0, same = 0;

	if (copy == NULL)
		die("checker cost buffer", ENOMEM);
	for (uint32_t s = 0; s < (hot ? nslots : 1u); s++)
		memcpy(copy + (size_t)s * size, src, hot ? size : (size_t)nslots * size);
	t0 = now_ns(P);
	do {
		for (unsigned b = 0; b < BATCH; b++, n++) {
			size_t at = (n % nslots) * (size_t)size;

			same += memcmp(copy + at, src + (hot ? 0 : at), size) == 0;
		}
		t = now_ns(P);
	} while (t - t0 < BOUND_MIN_NS);
	free(copy);
	if (same != n)
		die("checker cost: a copy compared unequal", EIO);
	return (double)(t - t0) / (double)n;
}

/* Nanoseconds per message of passes over @nslots slots of @size from @src in turn: a copy of
 * each out to @scratch (as the NIC's first pass reads it), stamped first if @stamp. */
static double stamp_pass_ns(struct perf *P, uint8_t *src, uint32_t nslots, uint32_t size,
                            uint8_t *scratch, bool stamp)
{
	uint64_t t0, t, n = 0;

	t0 = now_ns(P);
	do {
		for (unsigned b = 0; b < BATCH; b++, n++) {
			uint8_t *msg = src + (n % nslots) * (size_t)size;

			if (stamp)
				rfw_pattern_stamp(msg, size, n);
			memcpy(scratch, msg, size);
		}
		t = now_ns(P);
	} while (t - t0 < BOUND_MIN_NS);
	return (double)(t - t0) / (double)n;
}

/*
 * The sender's stamping of one message of @size (fill_loop: message k's number every 256 bytes
 * of its source slot, so that no packet can pass with an earlier message's bytes): benchmark
 * work a perftest sender does not do (it sends the same buffer again); ns. Its marginal cost:
 * in the run the stamp meets a slot first and pays for bringing it into the cache, and the
 * NIC's copy that follows finds it there. Timed alone, the stamp would be charged that fetch
 * and the NIC credited with it (a ratio above 1 when the slots do not fit in the cache). So:
 * stamp then copy, less copy alone, over the run's own slots.
 */
double perf_stamp_ns(struct perf *P, uint8_t *src, uint32_t nslots, uint32_t size)
{
	uint8_t *scratch = malloc(size);
	double with, without;

	if (scratch == NULL)
		die("stamp cost buffer", ENOMEM);
	/* The least of three of each, interleaved: a difference of two timings is noisy. */
	with = without = 1e18;
	for (int i = 0; i < 3; i++) {
		double a = stamp_pass_ns(P, src, nslots, size, scratch, false);
		double b = stamp_pass_ns(P, src, nslots, size, scratch, true);

		without = a < without ? a : without;
		with = b < with ? b : with;
	}
	free(scratch);
	return with > without ? with - without : 0;
}

/*
 * The two-process checker's rebuilding of its expectation (want_msg in perf.c): message k's
 * number stamped every 256 bytes into one slot that stays in the cache, the work it does per
 * message before comparing; ns.
 */
double perf_restamp_ns(struct perf *P, uint8_t *slot, uint32_t size)
{
	uint64_t t0, t, n = 0;

	t0 = now_ns(P);
	do {
		for (unsigned b = 0; b < BATCH; b++, n++)
			rfw_pattern_stamp(slot, size, n);
		t = now_ns(P);
	} while (t - t0 < BOUND_MIN_NS);
	return (double)(t - t0) / (double)n;
}
