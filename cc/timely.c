/* SPDX-License-Identifier: BSD-3-Clause */
/* TIMELY rate machine in integer maths. See cc/timely.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cc/cc_param.h"
#include "cc/timely.h"

static const struct timely_param_info param_table[TIMELY_PARAM__COUNT] = {
#define X(n, u, lo, hi, d, m)                                                                      \
	[TIMELY_PARAM_##n] = {                                                                     \
	    .name = #n,                                                                            \
	    .unit = u,                                                                             \
	    .meaning = m,                                                                          \
	    .min = lo,                                                                             \
	    .max = hi,                                                                             \
	    .def = d,                                                                              \
	    .offset = offsetof(struct timely_params, n),                                           \
	},
    TIMELY_PARAM_TABLE(X)
#undef X
};

static const char *const counter_names[TIMELY_CNT__COUNT] = {
#define X(n, m) [TIMELY_CNT_##n] = #n,
    TIMELY_COUNTERS(X)
#undef X
};

const char *timely_counter_name(unsigned int c)
{
	return c < TIMELY_CNT__COUNT ? counter_names[c] : NULL;
}

const struct timely_param_info *timely_param_info(unsigned int id)
{
	return id < TIMELY_PARAM__COUNT ? &param_table[id] : NULL;
}

static uint32_t *field(struct timely_params *p, unsigned int id)
{
	return (uint32_t *)(void *)((char *)p + param_table[id].offset);
}

uint32_t timely_param_get(const struct timely_params *p, unsigned int id)
{
	return *(const uint32_t *)(const void *)((const char *)p + param_table[id].offset);
}

void timely_params_init(struct timely_params *p)
{
	for (unsigned int i = 0; i < TIMELY_PARAM__COUNT; i++)
		*field(p, i) = param_table[i].def;
}

int timely_param_set_msg(struct timely_params *p, const char *name, const char *value, char *msg,
                         size_t msglen)
{
	for (unsigned int i = 0; i < TIMELY_PARAM__COUNT; i++)
		if (strcmp(param_table[i].name, name) == 0)
			return cc_param_parse(name, param_table[i].unit, param_table[i].min,
			                      param_table[i].max, value, field(p, i), msg, msglen);
	if (msg != NULL && msglen > 0)
		snprintf(msg, msglen, "%s: unknown parameter (rocefw-cc --list-params)", name);
	return -ENOENT;
}

int timely_prof_config(struct timely_prof *prof, const struct timely_params *p,
                       uint32_t line_rate_mbps, char *msg, size_t msglen)
{
	uint64_t max_mbps;

	for (unsigned int i = 0; i < TIMELY_PARAM__COUNT; i++) {
		uint32_t v = timely_param_get(p, i);

		if (v < param_table[i].min || v > param_table[i].max) {
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "%s: %u out of range %u..%u",
				         param_table[i].name, v, param_table[i].min,
				         param_table[i].max);
			return -ERANGE;
		}
	}
	if (line_rate_mbps < 1 || line_rate_mbps > 4000000) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "line_rate_mbps: %u out of range 1..4000000",
			         line_rate_mbps);
		return -ERANGE;
	}
	if (p->timely_t_low >= p->timely_t_high) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "timely_t_low: %u not below timely_t_high %u",
			         p->timely_t_low, p->timely_t_high);
		return -EINVAL;
	}
	max_mbps = p->timely_max_rate != 0 && p->timely_max_rate < line_rate_mbps
	               ? p->timely_max_rate
	               : line_rate_mbps;
	if (p->timely_min_rate > max_mbps) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "timely_min_rate: %u above the max rate %llu Mb/s",
			         p->timely_min_rate, (unsigned long long)max_mbps);
		return -ERANGE;
	}
	prof->t_low_ns = (uint64_t)p->timely_t_low * 1000;
	prof->t_high_ns = (uint64_t)p->timely_t_high * 1000;
	prof->min_rtt_ns = (uint64_t)p->timely_min_rtt * 1000;
	prof->add_kbps = (uint64_t)p->timely_add_rate * 1000;
	prof->min_kbps = (uint64_t)p->timely_min_rate * 1000;
	prof->max_kbps = max_mbps * 1000;
	prof->ewma = p->timely_ewma;
	prof->beta = p->timely_beta;
	prof->hai_thresh = p->timely_hai_thresh;
	return 0;
}

void timely_init(struct timely *t, const struct timely_prof *prof)
{
	memset(t, 0, sizeof(*t));
	t->prof = prof;
	t->rate_kbps = prof->max_kbps;
}

/* rate -= rate * f / 1024 for a factor f in 1/1024 (f >= 1024 empties the rate). */
static uint64_t decrease(uint64_t rate, uint64_t f_q10)
{
	if (f_q10 >= 1024)
		return 0;
	return rate - ((rate * f_q10) >> 10);
}

/* TIMELY SIGCOMM'15 Algorithm 1. */
void timely_on_rtt(struct timely *t, uint64_t rtt_ns, uint64_t now_ns)
{
	const struct timely_prof *pf = t->prof;
	int64_t new_diff;
	uint64_t rate = t->rate_kbps;

	(void)now_ns;
	if (rtt_ns > TIMELY_MAX_RTT_NS) {
		rtt_ns = TIMELY_MAX_RTT_NS;
		t->cnt[TIMELY_CNT_timely_rtt_clamped]++;
	}
	new_diff = t->have_prev ? (int64_t)rtt_ns - (int64_t)t->prev_rtt_ns : 0;
	t->prev_rtt_ns = rtt_ns;
	t->have_prev = 1;
	t->cnt[TIMELY_CNT_timely_rtt_samples]++;
	/* rtt_diff = (1 - a) rtt_diff + a new_diff; C division truncates toward zero, which is
	 * deterministic and keeps a lone sample from leaving a -1 residue forever. */
	t->rtt_diff_ns =
	    ((int64_t)(1024 - pf->ewma) * t->rtt_diff_ns + (int64_t)pf->ewma * new_diff) / 1024;

	if (rtt_ns < pf->t_low_ns) {
		rate += pf->add_kbps;
		t->cnt[TIMELY_CNT_timely_low_rtt_inc]++;
	} else if (rtt_ns > pf->t_high_ns) {
		/* rate *= 1 - beta (1 - T_high / rtt) */
		rate = decrease(rate, (uint64_t)pf->beta * (rtt_ns - pf->t_high_ns) / rtt_ns);
		t->cnt[TIMELY_CNT_timely_high_rtt_dec]++;
	} else {
		/* normalised gradient = rtt_diff / minRTT, in 1/1024 */
		int64_t grad_q10 = t->rtt_diff_ns * 1024 / (int64_t)pf->min_rtt_ns;

		if (grad_q10 <= 0) {
			uint64_t n = 1;

			if (t->neg_count < UINT32_MAX)
				t->neg_count++;
			if (t->neg_count >= pf->hai_thresh) {
				n = 5;
				t->cnt[TIMELY_CNT_timely_hai_inc]++;
			}
			rate += n * pf->add_kbps;
			t->cnt[TIMELY_CNT_timely_gradient_inc]++;
		} else {
			t->neg_count = 0;
			/* rate *= 1 - beta * gradient */
			rate = decrease(rate, ((uint64_t)pf->beta * (uint64_t)grad_q10) >> 10);
			t->cnt[TIMELY_CNT_timely_gradient_dec]++;
		}
	}
	if (rate < pf->min_kbps)
		rate = pf->min_kbps;
	if (rate > pf->max_kbps)
		rate = pf->max_kbps;
	t->rate_kbps = rate;
}
