/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/common/rfw_ce.h"

#include "wire/frame.h"
#include "wire/neigh_wire.h"

bool rfw_ce_every_frame(struct rfw_ce_every *ce, uint8_t *frame, size_t len)
{
	struct rfw_frame_view v;
	unsigned ecn;

	if (ce->every == 0 || rfw_frame_parse_eth(frame, len, &v) != RFW_FRAME_ERR_OK ||
	    v.kind != RFW_FRAME_ROCEV2)
		return false;
	ecn = rfw_frame_ecn(&v);
	if (ecn != RFW_ECN_ECT0 && ecn != RFW_ECN_ECT1)
		return false;
	if (++ce->seen < ce->every)
		return false;
	ce->seen = 0;
	if (rfw_ecn_mark_ce(frame, len) < 0)
		return false;
	ce->marked++;
	return true;
}
