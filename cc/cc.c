/* SPDX-License-Identifier: BSD-3-Clause */
/* Rate-machine dispatch. See cc/cc.h. */
#include <errno.h>
#include <string.h>

#include "cc/cc.h"

static const char *const algo_names[CC_ALGO__COUNT] = {
#define X(e, n) [CC_ALGO_##e] = n,
    CC_ALGOS(X)
#undef X
};

const char *cc_algo_name(enum cc_algo a)
{
	return (unsigned int)a < CC_ALGO__COUNT ? algo_names[a] : NULL;
}

int cc_algo_lookup(const char *name)
{
	for (unsigned int i = 0; i < CC_ALGO__COUNT; i++)
		if (strcmp(algo_names[i], name) == 0)
			return (int)i;
	return -ENOENT;
}

void cc_flow_init_dcqcn(struct cc_flow *f, const struct dcqcn_prof *prof)
{
	f->algo = CC_ALGO_DCQCN;
	dcqcn_rp_init(&f->u.dcqcn, prof);
}

void cc_flow_init_timely(struct cc_flow *f, const struct timely_prof *prof)
{
	f->algo = CC_ALGO_TIMELY;
	timely_init(&f->u.timely, prof);
}

void cc_on_cnp(struct cc_flow *f, uint64_t now_ns)
{
	switch (f->algo) {
	case CC_ALGO_DCQCN:
		dcqcn_rp_on_cnp(&f->u.dcqcn, now_ns);
		break;
	case CC_ALGO_TIMELY:
		f->u.timely.cnt[TIMELY_CNT_timely_cnp_ignored]++;
		break;
	default:
		break;
	}
}

void cc_on_rtt(struct cc_flow *f, uint64_t rtt_ns, uint64_t now_ns)
{
	switch (f->algo) {
	case CC_ALGO_DCQCN:
		/* DCQCN has no RTT input; only run what was due. */
		dcqcn_rp_on_timer(&f->u.dcqcn, now_ns);
		break;
	case CC_ALGO_TIMELY:
		timely_on_rtt(&f->u.timely, rtt_ns, now_ns);
		break;
	default:
		break;
	}
}

void cc_on_timer(struct cc_flow *f, uint64_t now_ns)
{
	if (f->algo == CC_ALGO_DCQCN)
		dcqcn_rp_on_timer(&f->u.dcqcn, now_ns);
}
