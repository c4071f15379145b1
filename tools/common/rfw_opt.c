/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/common/rfw_opt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/rfw_num.h"

int rfw_opt_u64(const char *prog, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                uint64_t *out)
{
	if (rfw_num_u64(s, lo, hi, out) == 0)
		return 0;
	fprintf(stderr, "%s: %s: '%s' is not an integer in %" PRIu64 "..%" PRIu64 "\n", prog, opt,
	        s, lo, hi);
	return -EINVAL;
}

int rfw_opt_u32(const char *prog, const char *opt, const char *s, uint32_t lo, uint32_t hi,
                uint32_t *out)
{
	uint64_t v;

	if (rfw_opt_u64(prog, opt, s, lo, hi, &v) != 0)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int rfw_opt_double(const char *prog, const char *opt, const char *s, double lo, double hi,
                   double *out)
{
	if (rfw_num_double(s, lo, hi, out) == 0)
		return 0;
	fprintf(stderr, "%s: %s: '%s' is not a number in %g..%g\n", prog, opt, s, lo, hi);
	return -EINVAL;
}

uint64_t rfw_opt_u64_or_exit(const char *prog, const char *opt, const char *s, uint64_t lo,
                             uint64_t hi)
{
	uint64_t v;

	if (rfw_opt_u64(prog, opt, s, lo, hi, &v) != 0)
		exit(RFW_OPT_EXIT_USAGE);
	return v;
}

uint32_t rfw_opt_u32_or_exit(const char *prog, const char *opt, const char *s, uint32_t lo,
                             uint32_t hi)
{
	return (uint32_t)rfw_opt_u64_or_exit(prog, opt, s, lo, hi);
}

double rfw_opt_double_or_exit(const char *prog, const char *opt, const char *s, double lo,
                              double hi)
{
	double v;

	if (rfw_opt_double(prog, opt, s, lo, hi, &v) != 0)
		exit(RFW_OPT_EXIT_USAGE);
	return v;
}

const struct rfw_opt_num *rfw_opt_num_find(const struct rfw_opt_num *tab, size_t n,
                                           const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].name, name) == 0)
			return &tab[i];
	return NULL;
}

/* Store @u in the field of kind @kind (its range was checked against the row's). */
static void store_uint(uint8_t *field, enum rfw_opt_kind kind, uint64_t u)
{
	uint8_t v8 = (uint8_t)u;
	uint16_t v16 = (uint16_t)u;
	uint32_t v32 = (uint32_t)u;

	if (kind == RFW_OPT_KIND_U8)
		memcpy(field, &v8, sizeof(v8));
	else if (kind == RFW_OPT_KIND_U16)
		memcpy(field, &v16, sizeof(v16));
	else if (kind == RFW_OPT_KIND_U32)
		memcpy(field, &v32, sizeof(v32));
	else
		memcpy(field, &u, sizeof(u));
}

int rfw_opt_num_set(const char *prog, const struct rfw_opt_num *row, const char *s, void *conf)
{
	char opt[64];
	uint8_t *field = (uint8_t *)conf + row->off;
	uint64_t u;
	double d;

	snprintf(opt, sizeof(opt), "--%s", row->name);
	if (row->kind == RFW_OPT_KIND_DOUBLE) {
		if (rfw_opt_double(prog, opt, s, row->dlo, row->dhi, &d) != 0)
			return -EINVAL;
		memcpy(field, &d, sizeof(d));
		return 0;
	}
	if (rfw_opt_u64(prog, opt, s, row->lo, row->hi, &u) != 0)
		return -EINVAL;
	store_uint(field, row->kind, u);
	return 0;
}

int rfw_opt_num_getopt(const char *prog, const struct option *lo, const struct rfw_opt_num *tab,
                       size_t n, int c, int idx, const char *arg, void *conf)
{
	const struct rfw_opt_num *row = NULL;

	if (c == 0) {
		row = rfw_opt_num_find(tab, n, lo[idx].name);
	} else {
		for (const struct option *o = lo; o->name != NULL && row == NULL; o++)
			if (o->flag == NULL && o->val == c)
				row = rfw_opt_num_find(tab, n, o->name);
	}
	if (row == NULL)
		return 1;
	return rfw_opt_num_set(prog, row, arg, conf) == 0 ? 0 : -EINVAL;
}

int rfw_opt_dashdash(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return -1;
}
