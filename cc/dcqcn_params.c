/* SPDX-License-Identifier: BSD-3-Clause */
/* DCQCN parameter table: lookup, set-by-name, validation. See dcqcn_params.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cc/cc_param.h"
#include "cc/dcqcn_params.h"

static const struct dcqcn_param_info param_table[DCQCN_PARAM__COUNT] = {
#define X(n, u, lo, hi, d0, d1, d2, d3, d4, m)                                                     \
	[DCQCN_PARAM_##n] = {                                                                      \
	    .name = #n,                                                                            \
	    .unit = u,                                                                             \
	    .meaning = m,                                                                          \
	    .min = lo,                                                                             \
	    .max = hi,                                                                             \
	    .def = {d0, d1, d2, d3, d4},                                                           \
	    .offset = offsetof(struct dcqcn_params, n),                                            \
	},
    DCQCN_PARAM_TABLE(X)
#undef X
};

/* Every profile column must lie inside its row's range: checked at compile time. (long long so
 * that a 0 lower bound does not trip -Wtype-limits.) */
#define IN_RANGE(v, lo, hi) ((long long)(v) >= (long long)(lo) && (long long)(v) <= (long long)(hi))
#define X(n, u, lo, hi, d0, d1, d2, d3, d4, m)                                                     \
	_Static_assert(IN_RANGE(d0, lo, hi) && IN_RANGE(d1, lo, hi) && IN_RANGE(d2, lo, hi) &&     \
	                   IN_RANGE(d3, lo, hi) && IN_RANGE(d4, lo, hi),                           \
	               #n ": a profile value is out of range");
DCQCN_PARAM_TABLE(X)
#undef X

static const struct {
	const char *name;
	const char *desc;
} profile_table[DCQCN_PROFILE__COUNT] = {
#define X(e, n, d) [DCQCN_PROFILE_##e] = {n, d},
    DCQCN_PROFILE_TABLE(X)
#undef X
};

const struct dcqcn_param_info *dcqcn_param_info(unsigned int id)
{
	return id < DCQCN_PARAM__COUNT ? &param_table[id] : NULL;
}

int dcqcn_param_lookup(const char *name)
{
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++)
		if (strcmp(param_table[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

const char *dcqcn_profile_name(enum dcqcn_profile p)
{
	return (unsigned int)p < DCQCN_PROFILE__COUNT ? profile_table[p].name : NULL;
}

const char *dcqcn_profile_desc(enum dcqcn_profile p)
{
	return (unsigned int)p < DCQCN_PROFILE__COUNT ? profile_table[p].desc : NULL;
}

int dcqcn_profile_lookup(const char *name)
{
	for (unsigned int i = 0; i < DCQCN_PROFILE__COUNT; i++)
		if (strcmp(profile_table[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

static uint32_t *field(struct dcqcn_params *p, unsigned int id)
{
	return (uint32_t *)(void *)((char *)p + param_table[id].offset);
}

uint32_t dcqcn_param_get(const struct dcqcn_params *p, unsigned int id)
{
	return *(const uint32_t *)(const void *)((const char *)p + param_table[id].offset);
}

int dcqcn_params_init(struct dcqcn_params *p, enum dcqcn_profile prof)
{
	if ((unsigned int)prof >= DCQCN_PROFILE__COUNT)
		return -EINVAL;
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++)
		*field(p, i) = param_table[i].def[prof];
	return 0;
}

int dcqcn_param_set_msg(struct dcqcn_params *p, const char *name, const char *value, char *msg,
                        size_t msglen)
{
	const struct dcqcn_param_info *pi;
	int id = dcqcn_param_lookup(name);

	if (id < 0) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "%s: unknown parameter (rocefw-cc --list-params)",
			         name);
		return -ENOENT;
	}
	pi = &param_table[id];
	return cc_param_parse(pi->name, pi->unit, pi->min, pi->max, value,
	                      field(p, (unsigned int)id), msg, msglen);
}

int dcqcn_param_set(struct dcqcn_params *p, const char *name, const char *value)
{
	return dcqcn_param_set_msg(p, name, value, NULL, 0);
}

int dcqcn_params_validate(const struct dcqcn_params *p, char *msg, size_t msglen)
{
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++) {
		const struct dcqcn_param_info *pi = &param_table[i];
		uint32_t v = dcqcn_param_get(p, i);

		if (v < pi->min || v > pi->max) {
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "%s: %u out of range %u..%u", pi->name, v,
				         pi->min, pi->max);
			return -ERANGE;
		}
	}
	/* Without either increase source a cut flow would never recover (DCQCN SIGCOMM'15 §3.1). */
	if (p->rp_time_reset == 0 && p->rp_byte_reset == 0) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
			         "rp_time_reset: 0 together with rp_byte_reset 0 leaves no rate "
			         "increase event");
		return -EINVAL;
	}
	if (p->rp_max_rate != 0 && p->rp_min_rate > p->rp_max_rate) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "rp_min_rate: %u above rp_max_rate %u",
			         p->rp_min_rate, p->rp_max_rate);
		return -ERANGE;
	}
	return 0;
}
