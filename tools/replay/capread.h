/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zero-copy reader of classic pcap records in a memory buffer: the fast path of
 * `rocefw-replay cc`, which fills the buffer with large read() calls (cc_cli.c). libpcap copies
 * every record through stdio twice (header, then data); on large captures that costs more than
 * the analysis. pcapng and anything else goes through libpcap.
 *
 * Untrusted input: every length is checked against the buffer, nothing is read outside it.
 * Fuzzed by tests/fuzz/fuzz_ccreplay.c.
 */
#ifndef RFW_TOOLS_REPLAY_CAPREAD_H
#define RFW_TOOLS_REPLAY_CAPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RFW_PCAP_HDR_LEN 24
#define RFW_PCAP_REC_LEN 16
/* Largest record accepted: beyond any link's frame; a bigger one means a corrupt file. */
#define RFW_PCAP_MAX_CAPLEN (256u * 1024u)

struct rfw_capread {
	const uint8_t *base;
	size_t len, off;
	bool swap; /* file written on a host of the other byte order */
	bool nsec; /* nanosecond timestamps (magic a1b23c4d) */
	int linktype;
	uint64_t records;
};

static inline uint32_t rfw_capread_u32(const struct rfw_capread *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

/* Continue over a new buffer holding the rest of the file from the current record on. */
static inline void rfw_capread_rebase(struct rfw_capread *r, const uint8_t *buf, size_t len)
{
	r->base = buf;
	r->len = len;
	r->off = 0;
}

/*
 * Recognise a classic pcap header at @buf. Returns 0 (then rfw_capread_next() may be called),
 * -EINVAL when @buf does not start with a classic pcap header (pcapng, not a capture: let
 * libpcap decide and word the error).
 */
int rfw_capread_open(struct rfw_capread *r, const uint8_t *buf, size_t len);

/*
 * Next record: 1 and the frame; 0 when the buffer ends exactly at a record boundary; -1 when
 * the buffer ends inside a record (refill, or at end of file: truncated); -2 when a record's
 * length is impossible (corrupt). r->off says where.
 */
static inline int rfw_capread_next(struct rfw_capread *r, const uint8_t **data, uint32_t *caplen,
                                   uint32_t *wirelen, uint64_t *ts_ns)
{
	const uint8_t *h;
	uint32_t cl, sec, frac;

	if (r->off == r->len)
		return 0;
	if (r->len - r->off < RFW_PCAP_REC_LEN)
		return -1;
	h = r->base + r->off;
	cl = rfw_capread_u32(r, h + 8);
	if (cl > RFW_PCAP_MAX_CAPLEN)
		return -2;
	if (r->len - r->off - RFW_PCAP_REC_LEN < cl)
		return -1;
	sec = rfw_capread_u32(r, h);
	frac = rfw_capread_u32(r, h + 4);
	*ts_ns = (uint64_t)sec * 1000000000ull + (r->nsec ? frac : (uint64_t)frac * 1000ull);
	*caplen = cl;
	*wirelen = rfw_capread_u32(r, h + 12);
	if (*wirelen < cl)
		*wirelen = cl;
	*data = h + RFW_PCAP_REC_LEN;
	r->off += RFW_PCAP_REC_LEN + (size_t)cl;
	r->records++;
	return 1;
}

#endif
