/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Pacer maths: the departure time of each packet of a flow sent at a given rate, with a bounded
 * burst. A token bucket written as a virtual-time scheduler (GCRA): the bucket holds at most
 * burst_ns of transmission time at the current rate, and everything is integer ns.
 *
 * The scheduler that owns the queues (nic/) asks cc_pacer_earliest() when a flow may send next,
 * waits in its timer wheel until then, and charges each packet that leaves with
 * cc_pacer_depart(). The rate may change between any two packets (it comes from the rate
 * machine).
 */
#ifndef RFW_CC_PACER_H
#define RFW_CC_PACER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cc_pacer {
	uint64_t tat_ns;    /**< theoretical arrival time: when the bucket would be empty again */
	uint64_t frac;      /**< carried remainder, in 1/frac_rate ns: exact long-run rate */
	uint64_t frac_rate; /**< rate (kb/s) the remainder is expressed in */
	uint64_t burst_ns;  /**< burst tolerance: bucket depth in ns of transmission time */
};

/** Initialise with a bucket of @p burst_ns (0 = strict spacing, no burst). */
static inline void cc_pacer_init(struct cc_pacer *p, uint64_t burst_ns)
{
	p->tat_ns = 0;
	p->frac = 0;
	p->frac_rate = 0;
	p->burst_ns = burst_ns;
}

/** Transmission time in ns of @p bytes at @p rate_kbps, with @p frac carrying the remainder. */
static inline uint64_t cc_pacer_tx_ns(uint64_t bytes, uint64_t rate_kbps, uint64_t *frac)
{
	/* bytes * 8 bits / (rate_kbps * 1000 b/s) s = bytes * 8e6 / rate_kbps ns */
	uint64_t num = bytes * 8000000ull + *frac;
	uint64_t ns = num / rate_kbps;

	*frac = num - ns * rate_kbps;
	return ns;
}

/**
 * The earliest time the next packet may leave (before it is charged with cc_pacer_depart()):
 * a scheduler that decides when before building what asks this first.
 */
static inline uint64_t cc_pacer_earliest(const struct cc_pacer *p)
{
	return p->tat_ns > p->burst_ns ? p->tat_ns - p->burst_ns : 0;
}

/**
 * Departure time of a packet of @p bytes that is ready at @p now_ns, for a flow paced at
 * @p rate_kbps (> 0). The packet may leave early by at most burst_ns (a burst of at most
 * burst_ns worth of data at the current rate after an idle period), never earlier than now.
 * Charges the packet to the flow: call once per packet, in order. 0 < rate_kbps < 2^32 (4 Tb/s).
 */
static inline uint64_t cc_pacer_depart(struct cc_pacer *p, uint64_t now_ns, uint32_t bytes,
                                       uint64_t rate_kbps)
{
	uint64_t earliest = p->tat_ns > p->burst_ns ? p->tat_ns - p->burst_ns : 0;
	uint64_t depart = now_ns > earliest ? now_ns : earliest;

	/* An idle flow does not bank more than burst_ns of credit: restart the clock at depart. */
	if (p->tat_ns < depart) {
		p->tat_ns = depart;
		p->frac = 0;
	}
	/* The remainder is a fraction of a ns in units of the old rate: rescale it (both < 2^32, so
	 * the product fits) so a rate change neither loses nor invents time. */
	if (p->frac_rate != rate_kbps) {
		p->frac = p->frac_rate != 0 ? p->frac * rate_kbps / p->frac_rate : 0;
		p->frac_rate = rate_kbps;
	}
	p->tat_ns += cc_pacer_tx_ns(bytes, rate_kbps, &p->frac);
	return depart;
}

#ifdef __cplusplus
}
#endif

#endif /* RFW_CC_PACER_H */
