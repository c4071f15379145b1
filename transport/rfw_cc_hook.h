/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion-control seam of a QP (docs/design.md "The seams"). Transport calls these
 * hooks; cc/ (DCQCN) implements them later. Every hook is optional.
 *
 *   on_tx      every data-carrying packet the requester or responder sends (bytes = IB part)
 *   np_on_ce   a CE-marked data packet arrived: the notification point; return true to emit a
 *              CNP (opcode 0x81, Annex A17.9.3) to the sender
 *   rp_on_cnp  a CNP arrived for this QP: the reaction point
 *
 * The rate a QP is paced at is not asked of the transport: the host's scheduler (nic/) owns
 * the rate machine and decides when a QP may send before asking it for requests.
 *
 * Without ops, a built-in notification point emits at most one CNP per
 * rfw_dev_attr.np_min_time_between_cnps_ns per QP, and there is no reaction point.
 */
#ifndef RFW_TRANSPORT_CC_HOOK_H
#define RFW_TRANSPORT_CC_HOOK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rfw_cc_ops {
	void (*on_tx)(void *cc, uint64_t now_ns, uint32_t bytes);
	bool (*np_on_ce)(void *cc, uint64_t now_ns);
	void (*rp_on_cnp)(void *cc, uint64_t now_ns);
};

#ifdef __cplusplus
}
#endif
#endif
