/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 ICRC (IBA Annex A17.3.3; masking rule in shared/testdata/icrc/README.md): CRC-32
 * as zlib's over 8 bytes of ones standing in for the LRH, then the IP datagram up to the byte
 * before the ICRC with its variant fields read as ones.
 *
 * Two ways to the same value. The general one copies the headers into a scratch buffer, masks
 * them there and calls ISA-L (twice for long packets). The fast one (x86-64 with PCLMULQDQ)
 * reads the datagram in place: the masking is an OR with a constant vector on the first few
 * 16-byte blocks, and the CRC is folded inline with carry-less multiplies (Intel, "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ", 2009; the constants are those of zlib's
 * and Linux's crc32-pclmul for the reflected polynomial 0xEDB88320). For the ~50-130-byte
 * frames of small messages the general path's fixed cost (scratch copy, byte stores read back
 * by 16-byte loads, ISA-L's call and set-up) was most of the CRC's time.
 */
#include "wire/frame.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <string.h>

#include "wire/ib_hdr.h"

/*
 * Datagrams up to this many bytes are copied whole into the masking scratch and take one CRC
 * call: ISA-L's CRC costs about as much for 6 bytes as for 48 (call and fold set-up), so one
 * call plus a short copy beats two calls.
 */
#define ICRC_ONE_CALL_MAX 256

static uint32_t icrc_general(const uint8_t *l3, size_t len, unsigned ip_ver, size_t iphl)
{
	/* 8 bytes standing in for the LRH, then the datagram (or its headers), masked. */
	uint8_t hdr[8 + ICRC_ONE_CALL_MAX];
	size_t n = len <= ICRC_ONE_CALL_MAX ? len : iphl + RFW_UDP_HLEN + RFW_BTH_LEN;
	uint32_t crc;

	memset(hdr, 0xff, 8);
	memcpy(hdr + 8, l3, n);
	if (ip_ver == 4) {
		hdr[8 + 1] = 0xff;                /* TOS */
		hdr[8 + 8] = 0xff;                /* TTL */
		hdr[8 + 10] = hdr[8 + 11] = 0xff; /* header checksum */
	} else {
		hdr[8 + 0] |= 0x0f; /* traffic class (low nibble of byte 0) */
		hdr[8 + 1] = hdr[8 + 2] = hdr[8 + 3] = 0xff; /* traffic class, flow label */
		hdr[8 + 7] = 0xff;                           /* hop limit */
	}
	hdr[8 + iphl + 6] = hdr[8 + iphl + 7] = 0xff; /* UDP checksum */
	hdr[8 + iphl + RFW_UDP_HLEN + 4] = 0xff;      /* BTH FECN, BECN, Resv6 */
	crc = crc32_gzip_refl(0, hdr, 8 + n);
	return n == len ? crc : crc32_gzip_refl(crc, l3 + n, len - n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define ICRC_CLMUL     1
#define ICRC_TARGET    __attribute__((target("pclmul,sse4.1")))
#define ICRC_FAST_MAX  256 /* longer: the masked head here, the rest by ISA-L's 8-way fold */
#define ICRC_HEAD_BLKS 5   /* blocks that can hold a masked byte (IPv6: BTH byte 4 is byte 56) */
/* Mask bytes for every block of a short stream: each block is ORed with its mask, no branch. */
#define ICRC_MASK_LEN (16 + ICRC_FAST_MAX + 16)

/*
 * The zlib CRC with its initial register of ones over 8 bytes of ones is the CRC with a zero
 * register over 4 bytes of ones (the ones cancel the first four), and leading zero bytes do
 * not move a zero register. So the stream folded here is: @s - 4 zero bytes (to make the
 * stream a whole number of 16-byte blocks), 4 bytes of ones, the datagram. The masks below are
 * that stream's ones from 16 - 4 on (16 zero bytes in front to read them at any shift): the
 * 4 leading ones, then an OR mask per datagram byte (zero past the headers).
 */
static const uint8_t icrc_mask4[ICRC_MASK_LEN] __attribute__((aligned(16))) = {
    [12] = 0xff,      [13] = 0xff,      [14] = 0xff, [15] = 0xff, /* the 4 leading ones */
    [16 + 1] = 0xff,                                              /* TOS */
    [16 + 8] = 0xff,                                              /* TTL */
    [16 + 10] = 0xff, [16 + 11] = 0xff,                           /* header checksum */
    [16 + 26] = 0xff, [16 + 27] = 0xff,                           /* UDP checksum */
    [16 + 32] = 0xff,                                             /* BTH FECN, BECN, Resv6 */
};
static const uint8_t icrc_mask6[ICRC_MASK_LEN] __attribute__((aligned(16))) = {
    [12] = 0xff,      [13] = 0xff,      [14] = 0xff,     [15] = 0xff, /* the 4 leading ones */
    [16 + 0] = 0x0f,                                     /* traffic class, low nibble */
    [16 + 1] = 0xff,  [16 + 2] = 0xff,  [16 + 3] = 0xff, /* traffic class, flow label */
    [16 + 7] = 0xff,                                     /* hop limit */
    [16 + 46] = 0xff, [16 + 47] = 0xff,                  /* UDP checksum */
    [16 + 52] = 0xff,                                    /* BTH FECN, BECN, Resv6 */
};
/* pshufb controls: 16 bytes from @16 - s shift a vector up by s bytes, zeros coming in. */
static const uint8_t icrc_shift[32] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
};

/*
 * Folding forward by n 16-byte blocks multiplies by x^(128n+32) (low half) and x^(128n-32)
 * (high half) mod P; bit-reflected and shifted left by one as in the paper ([1] and [4] are
 * its k3, k4 and k1, k2; the others computed the same way and checked by the tests).
 */
static const uint64_t kfold[7][2] __attribute__((aligned(16))) = {
    [1] = {0x01751997d0, 0x00ccaa009e}, [2] = {0x00f1da05aa, 0x015a546366},
    [3] = {0x003db1ecdc, 0x0174359406}, [4] = {0x0154442bd4, 0x01c6e41596},
    [5] = {0x01c7569e54, 0x00ae0b5394}, [6] = {0x00df068dc2, 0x018cb44e58},
};
/*
 * Barrett reduction of 96 bits: mu = x^96 / P bit-reflected over 65 bits (only the low 64 bits
 * of the quotient's product are kept, so its 65th bit, zero anyway, never matters), and P
 * bit-reflected over 33 bits (the paper's P').
 */
static const uint64_t kbarrett[2] __attribute__((aligned(16))) = {0xb4e5b025f7011641, 0x01db710641};

/* Block @i of the stream at @d (the datagram from l3 - s), ORed with its mask at @m. */
ICRC_TARGET static inline __m128i blk(const uint8_t *d, const uint8_t *m, unsigned i)
{
	return _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + 16 * i)),
	                    _mm_loadu_si128((const __m128i *)(m + 16 * i)));
}

/* Block 0 of the stream: the datagram's first 16 - @s bytes shifted up behind the zeros and
 * ones, ORed with its mask (@m: the masks from the stream's start). */
ICRC_TARGET static inline __m128i blk0(const uint8_t *l3, const uint8_t *m, unsigned s)
{
	const __m128i ctl = _mm_loadu_si128((const __m128i *)(icrc_shift + 16 - s));

	return _mm_or_si128(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)l3), ctl),
	                    _mm_loadu_si128((const __m128i *)m));
}

ICRC_TARGET static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);

	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), next), lo);
}

/*
 * 128 -> 32 bits, the raw register: the low half folded into the high one (96 bits left), then
 * Barrett's quotient (its low 64 bits) and remainder. Three dependent multiplies where the
 * paper's fold to 64 bits first takes four.
 */
ICRC_TARGET static inline uint32_t reduce(__m128i x)
{
	__m128i k = _mm_load_si128((const __m128i *)kfold[1]);
	__m128i b = _mm_load_si128((const __m128i *)kbarrett);
	__m128i q;

	x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k, 0x10));
	q = _mm_clmulepi64_si128(x, b, 0x00);
	q = _mm_clmulepi64_si128(q, b, 0x10);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(x, q), 2);
}

/* @x moved forward by @n > 0 blocks, to be added to the block there. */
ICRC_TARGET static inline __m128i fold_by(__m128i x, unsigned n)
{
	__m128i k = _mm_load_si128((const __m128i *)kfold[n]);

	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/*
 * The raw CRC register (zero initial value) of blocks 0 .. @nb - 1 of the stream. Block 0 is
 * the datagram's first 16 - @s bytes shifted up behind the zeros and ones; block i > 0 is read
 * in place at l3 + 16 i - s. Four accumulators 64 bytes apart while four blocks remain; then
 * each accumulator and each block left is moved straight to the last block by its own
 * distance, so the multiplies of that step run side by side instead of one after the other.
 */
ICRC_TARGET static inline __attribute__((always_inline)) uint32_t
fold_blocks(const uint8_t *l3, const uint8_t *mask, unsigned s, unsigned nb)
{
	const uint8_t *d = l3 - s, *m = mask + 16 - s;
	__m128i x1 = blk0(l3, m, s);
	unsigned i = 1;

	if (nb >= 4) {
		__m128i x2 = blk(d, m, 1), x3 = blk(d, m, 2), x4 = blk(d, m, 3);
		__m128i k4 = _mm_load_si128((const __m128i *)kfold[4]);
		unsigned r;

		for (i = 4; i + 4 <= nb; i += 4) {
			x1 = fold(x1, k4, blk(d, m, i));
			x2 = fold(x2, k4, blk(d, m, i + 1));
			x3 = fold(x3, k4, blk(d, m, i + 2));
			x4 = fold(x4, k4, blk(d, m, i + 3));
		}
		r = nb - i; /* blocks left: 0 .. 3 */
		x1 = _mm_xor_si128(_mm_xor_si128(fold_by(x1, 3 + r), fold_by(x2, 2 + r)),
		                   fold_by(x3, 1 + r));
		x1 = _mm_xor_si128(x1, r != 0 ? fold_by(x4, r) : x4);
	} else if (nb > 1) {
		x1 = fold_by(x1, nb - 1); /* an ACK's 3 blocks: side by side too */
	}
	for (; i < nb; i++) {
		__m128i b = blk(d, m, i);

		x1 = _mm_xor_si128(x1, i + 1 < nb ? fold_by(b, nb - 1 - i) : b);
	}
	return reduce(x1);
}

/* The zero bytes and the 4 ones in front of a short datagram of @len bytes (a multiple of 4):
 * 4 to 16, so that the stream ends on a block (the masks above). */
static inline unsigned short_shift(size_t len)
{
	return 4 + (unsigned)(-(4 + len) & 15);
}

/*
 * The ICRC of a datagram whose length is a multiple of 4 (every RoCEv2 packet: the IB part is
 * padded to 4 bytes, IP and UDP headers are multiples of 4) and whose headers are in the
 * masked blocks. Short: the whole stream folded here, shifted by 4, 8, 12 or 16 to end on a
 * block. Long: the masked head here, the rest chained through ISA-L.
 */
ICRC_TARGET static uint32_t icrc_clmul(const uint8_t *l3, size_t len, const uint8_t *mask)
{
	/* One fold_blocks, inlined here: a call of its own cost as much as a block's fold. */
	bool head = len > ICRC_FAST_MAX;
	unsigned s = head ? 4 : short_shift(len);
	unsigned nb = head ? ICRC_HEAD_BLKS : (unsigned)((s + len) / 16);
	uint32_t crc = ~fold_blocks(l3, mask, s, nb);

	if (!head)
		return crc;
	return crc32_gzip_refl(crc, l3 + 16 * nb - s, len - (16 * nb - s));
}

/*
 * The same fold four blocks to an instruction (VPCLMULQDQ on 512-bit vectors): every block of
 * a short stream (or of a long one's head) is moved straight to the last block by its own
 * distance, four at a time, their constants loaded four at a time from kv. Where the 128-bit
 * fold is bound by the multiplier's throughput (a 64 B WRITE's 8 blocks: 17 multiplies), this
 * takes 4 instructions and the reduction's 3.
 */
#define ICRC_V_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))
#define ICRC_V_MAXD   16 /* the farthest a block of a short stream lies from its last: 17 blocks */

/* kv[j]: kfold's constants for the distance ICRC_V_MAXD - j, computed by the same rule; zero
 * for distances 0 and below, so the last block and lanes past it add nothing to the sum. */
static const uint64_t kv[ICRC_V_MAXD + 4][2] __attribute__((aligned(64))) = {
    {0x011542778a, 0x01322d1430}, /* 16 */
    {0x01db06f64c, 0x01c47d2a9c}, /* 15 */
    {0x019159bb02, 0x0125f17dfc}, /* 14 */
    {0x01b35adb0e, 0x01e7146aac}, /* 13 */
    {0x01821d8bc0, 0x012e958ac4}, /* 12 */
    {0x01816ab61c, 0x010aae2566}, /* 11 */
    {0x00e3543be0, 0x014b57d3f0}, /* 10 */
    {0x01fdc60a7c, 0x003f41287a}, /* 9 */
    {0x01e88ef372, 0x014a7fe880}, /* 8 */
    {0x01ea89367e, 0x01d7cfc6ac}, /* 7 */
    {0x00df068dc2, 0x018cb44e58}, /* 6 */
    {0x01c7569e54, 0x00ae0b5394}, /* 5 */
    {0x0154442bd4, 0x01c6e41596}, /* 4 */
    {0x003db1ecdc, 0x0174359406}, /* 3 */
    {0x00f1da05aa, 0x015a546366}, /* 2 */
    {0x01751997d0, 0x00ccaa009e}, /* 1 */
    {0, 0},
    {0, 0},
    {0, 0},
    {0, 0},
};

/* The lanes of a step with @n blocks from its first on: all four, or the first n. */
static inline __mmask8 fold_lanes(unsigned n)
{
	return n >= 4 ? 0xff : (__mmask8)((1u << (2 * n)) - 1);
}

/* Step @i of fold_v: blocks i .. i + 3 of the stream (@lanes of them there), ORed with their
 * masks (@mk), moved on by their constants (@k) into @acc; block 0 the shifted one. */
ICRC_V_TARGET static inline __attribute__((always_inline)) __m512i
fold_step(__m512i acc, const uint8_t *l3, unsigned s, unsigned i, __mmask8 lanes, __m512i mk,
          __m512i k, const uint8_t *m)
{
	__m512i z = _mm512_maskz_loadu_epi64(i == 0 ? lanes & 0xfc : lanes, l3 - s + 16 * i);

	z = _mm512_or_si512(z, mk);
	if (i == 0)
		z = _mm512_inserti32x4(z, blk0(l3, m, s), 0);
	return _mm512_ternarylogic_epi64(acc, _mm512_clmulepi64_epi128(z, k, 0x00),
	                                 _mm512_clmulepi64_epi128(z, k, 0x11), 0x96);
}

/* fold_v's end: an accumulator's four lanes summed, plus the last block (in place at @l3 - s). */
ICRC_V_TARGET static inline __attribute__((always_inline)) __m128i
fold_end(__m512i acc, const uint8_t *l3, unsigned s, const uint8_t *m, unsigned last)
{
	__m256i y =
	    _mm256_xor_si256(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
	__m128i x = _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));

	return _mm_xor_si128(x, blk(l3 - s, m, last));
}

/*
 * fold_blocks' register before its reduction, @nb >= 2 blocks. Group g holds blocks 4g .. 4g +
 * 3; lanes past the stream are masked out of the load (never read: the stream may end the
 * buffer), and block 0's lane, which would start before the datagram, is the shifted block 0.
 */
ICRC_V_TARGET static inline __attribute__((always_inline)) __m128i
fold_v(const uint8_t *l3, const uint8_t *mask, unsigned s, unsigned nb)
{
	const uint8_t *m = mask + 16 - s;
	__m512i acc = _mm512_setzero_si512();
	unsigned last = nb - 1;

	for (unsigned i = 0; i < last; i += 4)
		acc = fold_step(acc, l3, s, i, fold_lanes(nb - i), _mm512_loadu_si512(m + 16 * i),
		                _mm512_loadu_si512(kv[ICRC_V_MAXD - (last - i)]), m);
	return fold_end(acc, l3, s, m, last);
}

/* A long datagram (> ICRC_FAST_MAX): its masked head folded with fold_v, the rest chained
 * through ISA-L (as icrc_clmul's long case). */
ICRC_V_TARGET static uint32_t icrc_vclmul_long(const uint8_t *l3, size_t len, const uint8_t *mask)
{
	uint32_t crc = ~reduce(fold_v(l3, mask, 4, ICRC_HEAD_BLKS));

	return crc32_gzip_refl(crc, l3 + 16 * ICRC_HEAD_BLKS - 4, len - (16 * ICRC_HEAD_BLKS - 4));
}
_Static_assert((16 + ICRC_FAST_MAX) / 16 <= ICRC_V_MAXD + 1, "kv covers every short stream");

/* One 64-byte line of rfw_crc_copy: loaded at @src, stored at @dst, added to accumulator @a
 * moved forward by 16 blocks (@k16). */
ICRC_V_TARGET static inline __attribute__((always_inline)) __m512i
copy_fold(__m512i a, __m512i k16, uint8_t *dst, const uint8_t *src)
{
	__m512i z = _mm512_loadu_si512(src);

	_mm512_storeu_si512(dst, z);
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k16, 0x00),
	                                 _mm512_clmulepi64_epi128(a, k16, 0x11), z, 0x96);
}

/* Accumulator @a's four lanes moved to the last block by distances @kd's rows give, added to
 * @s. */
ICRC_V_TARGET static inline __attribute__((always_inline)) __m512i
fold_to_last(__m512i s, __m512i a, const uint64_t (*kd)[2])
{
	__m512i k = _mm512_loadu_si512(kd);

	return _mm512_ternarylogic_epi64(s, _mm512_clmulepi64_epi128(a, k, 0x00),
	                                 _mm512_clmulepi64_epi128(a, k, 0x11), 0x96);
}

/*
 * The copy with the CRC folded on the way (rfw_crc_copy), @n a multiple of 256, at least 256:
 * four 512-bit accumulators, one 64-byte line each, hold 16 blocks; each group of 256 bytes
 * loaded is stored at @dst and added to them after moving them forward by 16 blocks (kv[0]).
 * The first four bytes take the register carried in (~@crc), as a CRC's initial value does.
 * At the end the 16 lanes go straight to the last block by their own distances (kv's rows
 * 1 .. 16, as fold_v's), and the reduction gives the register.
 */
ICRC_V_TARGET static uint32_t crc_copy_v(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t n)
{
	const __m512i k16 = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)kv[0]));
	/* Four named registers, not an array: gcc kept an array's in memory at -O2. */
	__m512i a0 = _mm512_loadu_si512(src), a1 = _mm512_loadu_si512(src + 64);
	__m512i a2 = _mm512_loadu_si512(src + 128), a3 = _mm512_loadu_si512(src + 192), s;
	__m256i y;
	__m128i x;

	_mm512_storeu_si512(dst, a0);
	_mm512_storeu_si512(dst + 64, a1);
	_mm512_storeu_si512(dst + 128, a2);
	_mm512_storeu_si512(dst + 192, a3);
	a0 = _mm512_xor_si512(a0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	for (size_t i = 256; i < n; i += 256) {
		a0 = copy_fold(a0, k16, dst + i, src + i);
		a1 = copy_fold(a1, k16, dst + i + 64, src + i + 64);
		a2 = copy_fold(a2, k16, dst + i + 128, src + i + 128);
		a3 = copy_fold(a3, k16, dst + i + 192, src + i + 192);
	}
	/* Lane j of a_g is block 4g + j: distance 15 - 4g - j, kv's row 1 + 4g + j. */
	s = fold_to_last(_mm512_setzero_si512(), a0, &kv[1]);
	s = fold_to_last(s, a1, &kv[5]);
	s = fold_to_last(s, a2, &kv[9]);
	s = fold_to_last(s, a3, &kv[13]);
	y = _mm256_xor_si256(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
	x = _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
	return ~reduce(_mm_xor_si128(x, _mm512_extracti32x4_epi32(a3, 3))); /* distance 0 */
}

/*
 * reduce for four registers at once, one to a 128-bit lane: the same three multiplies, each
 * one instruction for the four, and the four CRCs (inverted) stored together.
 */
ICRC_V_TARGET static inline __attribute__((always_inline)) void
reduce4(__m128i x0, __m128i x1, __m128i x2, __m128i x3, uint32_t crc[4])
{
	const __m512i k = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)kfold[1]));
	const __m512i b = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)kbarrett));
	/* dword 2 of each lane: the register reduce extracts */
	const __m512i pick = _mm512_setr_epi32(2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	__m512i x = _mm512_inserti32x4(_mm512_castsi128_si512(x0), x1, 1), q;

	x = _mm512_inserti32x4(_mm512_inserti32x4(x, x2, 2), x3, 3);
	x = _mm512_xor_si512(_mm512_unpackhi_epi64(x, _mm512_setzero_si512()), /* >> 64 */
	                     _mm512_clmulepi64_epi128(x, k, 0x10));
	q = _mm512_clmulepi64_epi128(x, b, 0x00);
	q = _mm512_clmulepi64_epi128(q, b, 0x10);
	x = _mm512_permutexvar_epi32(pick, _mm512_xor_si512(x, q));
	_mm_storeu_si128((__m128i *)(void *)crc,
	                 _mm_xor_si128(_mm512_castsi512_si128(x), _mm_set1_epi32(-1)));
}

/*
 * fold_v of four datagrams of one length and one mask (a burst of one QP's packets of one
 * size: a 64 B WRITE's stream): the lane masks, the masks' blocks and the constants are loaded
 * once for the four, and each step's four multiplies are independent. Four named registers
 * (an array's stayed in memory).
 */
ICRC_V_TARGET static void icrc_vclmul4_same(const uint8_t *const l3[4], size_t len,
                                            const uint8_t *mask, uint32_t crc[4])
{
	unsigned s = short_shift(len), nb = (unsigned)((s + len) / 16);
	unsigned last = nb - 1;
	const uint8_t *m = mask + 16 - s;
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;

	for (unsigned i = 0; i < last; i += 4) {
		__mmask8 lanes = fold_lanes(nb - i);
		__m512i mk = _mm512_loadu_si512(m + 16 * i);
		__m512i k = _mm512_loadu_si512(kv[ICRC_V_MAXD - (last - i)]);

		a0 = fold_step(a0, l3[0], s, i, lanes, mk, k, m);
		a1 = fold_step(a1, l3[1], s, i, lanes, mk, k, m);
		a2 = fold_step(a2, l3[2], s, i, lanes, mk, k, m);
		a3 = fold_step(a3, l3[3], s, i, lanes, mk, k, m);
	}
	reduce4(fold_end(a0, l3[0], s, m, last), fold_end(a1, l3[1], s, m, last),
	        fold_end(a2, l3[2], s, m, last), fold_end(a3, l3[3], s, m, last), crc);
}

/*
 * Four short datagrams' ICRCs, their folds side by side. One fold is a chain of dependent
 * multiplies (about 50 cycles for a 64 B WRITE's 120 bytes) that the core cannot overlap with
 * the next datagram's on its own; four together keep the multiplier busy (6.8 against 12.5 ns
 * a datagram on the machine of docs/perf.md "2026-11-29 morning").
 */
ICRC_V_TARGET static void icrc_vclmul4(const uint8_t *const l3[4], const size_t len[4],
                                       const uint8_t *const mask[4], uint32_t crc[4])
{
	unsigned s0, s1, s2, s3;

	if (len[0] == len[1] && len[0] == len[2] && len[0] == len[3] && mask[0] == mask[1] &&
	    mask[0] == mask[2] && mask[0] == mask[3]) {
		icrc_vclmul4_same(l3, len[0], mask[0], crc);
		return;
	}
	s0 = short_shift(len[0]);
	s1 = short_shift(len[1]);
	s2 = short_shift(len[2]);
	s3 = short_shift(len[3]);
	reduce4(fold_v(l3[0], mask[0], s0, (unsigned)((s0 + len[0]) / 16)),
	        fold_v(l3[1], mask[1], s1, (unsigned)((s1 + len[1]) / 16)),
	        fold_v(l3[2], mask[2], s2, (unsigned)((s2 + len[2]) / 16)),
	        fold_v(l3[3], mask[3], s3, (unsigned)((s3 + len[3]) / 16)), crc);
}

/* The best this CPU has, set once before main (rfw_icrc_use can change it). */
static enum rfw_icrc_impl icrc_impl;

static bool icrc_impl_ok(enum rfw_icrc_impl impl)
{
	__builtin_cpu_init();
	switch (impl) {
	case RFW_ICRC_GENERAL:
		return true;
	case RFW_ICRC_CLMUL:
		return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	case RFW_ICRC_VCLMUL:
		return icrc_impl_ok(RFW_ICRC_CLMUL) && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
	}
	return false;
}

__attribute__((constructor)) static void icrc_probe(void)
{
	icrc_impl = icrc_impl_ok(RFW_ICRC_VCLMUL)  ? RFW_ICRC_VCLMUL
	            : icrc_impl_ok(RFW_ICRC_CLMUL) ? RFW_ICRC_CLMUL
	                                           : RFW_ICRC_GENERAL;
}
#else
static const enum rfw_icrc_impl icrc_impl = RFW_ICRC_GENERAL;

static bool icrc_impl_ok(enum rfw_icrc_impl impl)
{
	return impl == RFW_ICRC_GENERAL;
}
#endif

int rfw_icrc_use(int impl)
{
	enum rfw_icrc_impl was = icrc_impl;

	if (impl < 0)
		return (int)was;
	if (impl > RFW_ICRC_VCLMUL || !icrc_impl_ok((enum rfw_icrc_impl)impl))
		return -ENOTSUP;
#ifdef ICRC_CLMUL
	icrc_impl = (enum rfw_icrc_impl)impl;
#endif
	return (int)was;
}

#ifdef ICRC_CLMUL
/* The in-place fold's mask for this datagram, or NULL: the masks are laid out for IPv4
 * without options (IHL 5; 40 bytes up to the end of the BTH) and for IPv6 (60 bytes), and
 * every RoCEv2 packet's length is a multiple of 4. */
static inline const uint8_t *fast_mask(const uint8_t *l3, size_t len, unsigned ip_ver)
{
	if ((len & 3) != 0)
		return NULL;
	if (ip_ver == 4)
		return len >= 40 && (l3[0] & 0xf) == 5 ? icrc_mask4 : NULL;
	return ip_ver == 6 && len >= 60 ? icrc_mask6 : NULL;
}

/* Four datagrams, @l3[0..3], by icrc_vclmul4 if all four are short and in-place; else false. */
static bool compute4(const uint8_t *const l3[4], const size_t len[4], const uint8_t ver[4],
                     uint32_t crc[4])
{
	const uint8_t *m[4];

	for (unsigned j = 0; j < 4; j++) {
		m[j] = len[j] <= ICRC_FAST_MAX ? fast_mask(l3[j], len[j], ver[j]) : NULL;
		if (m[j] == NULL)
			return false;
	}
	icrc_vclmul4(l3, len, m, crc);
	return true;
}
#endif

void rfw_icrc_compute_n(const uint8_t *const l3[], const size_t len[], const uint8_t ver[],
                        uint32_t crc[], unsigned n)
{
	unsigned i = 0;

#ifdef ICRC_CLMUL
	if (icrc_impl == RFW_ICRC_VCLMUL) {
		for (; i + 4 <= n; i += 4)
			if (!compute4(l3 + i, len + i, ver + i, crc + i))
				for (unsigned j = i; j < i + 4; j++)
					crc[j] = rfw_icrc_compute(l3[j], len[j], ver[j]);
		if (n - i >= 2) {
			/* Two or three left: padded to four with the last one again. */
			const uint8_t *pl[4];
			size_t plen[4];
			uint8_t pver[4];
			uint32_t pcrc[4];

			for (unsigned j = 0; j < 4; j++) {
				unsigned k = i + j < n ? i + j : n - 1;

				pl[j] = l3[k];
				plen[j] = len[k];
				pver[j] = ver[k];
			}
			if (compute4(pl, plen, pver, pcrc)) {
				for (unsigned j = 0; i + j < n; j++)
					crc[i + j] = pcrc[j];
				i = n;
			}
		}
	}
#endif
	for (; i < n; i++)
		crc[i] = rfw_icrc_compute(l3[i], len[i], ver[i]);
}

uint32_t rfw_icrc_compute(const uint8_t *l3, size_t len, unsigned ip_ver)
{
	size_t iphl;

#ifdef ICRC_CLMUL
	const uint8_t *mask = icrc_impl != RFW_ICRC_GENERAL ? fast_mask(l3, len, ip_ver) : NULL;

	/* One short datagram: the 128-bit fold, whose chain is shorter than the 512-bit one's
	 * (this ICRC's time is that chain: nothing else to interleave). */
	if (mask != NULL)
		return icrc_impl == RFW_ICRC_VCLMUL && len > ICRC_FAST_MAX
		           ? icrc_vclmul_long(l3, len, mask)
		           : icrc_clmul(l3, len, mask);
#endif
	if (len < RFW_IPV4_HLEN + RFW_UDP_HLEN + RFW_BTH_LEN)
		return 0;
	if (ip_ver == 4)
		iphl = (size_t)(l3[0] & 0xf) * 4;
	else
		iphl = RFW_IPV6_HLEN;
	if (iphl < RFW_IPV4_HLEN || iphl > 60 || len < iphl + RFW_UDP_HLEN + RFW_BTH_LEN)
		return 0;
	return icrc_general(l3, len, ip_ver, iphl);
}

/* zlib's CRC continues over a second buffer from the first one's value (both ways above end
 * with ISA-L over the datagram's rest exactly so). */
uint32_t rfw_icrc_extend(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc32_gzip_refl(crc, p, len);
}

uint32_t rfw_crc_copy(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t n = 0;

#ifdef ICRC_CLMUL
	/* Only the 512-bit way has a fused form; the others, and a tail under 256 bytes, copy
	 * and then run ISA-L. */
	if (icrc_impl == RFW_ICRC_VCLMUL && len >= 256) {
		n = len & ~(size_t)255;
		crc = crc_copy_v(crc, dst, src, n);
	}
#endif
	memcpy(dst + n, src + n, len - n);
	return rfw_icrc_extend(crc, src + n, len - n);
}

bool rfw_frame_icrc_ok(const uint8_t *buf, const struct rfw_frame_view *v)
{
	if (v->kind != RFW_FRAME_ROCEV2)
		return false;
	return rfw_icrc_compute(buf + v->l3_off, rfw_frame_icrc_span(v), v->ip_ver) == v->icrc;
}
