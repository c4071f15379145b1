/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command-line option values with ranges, for every rocefw tool (and rocefw-sim's parser when
 * it moves over: nothing here exits unless the name says so, nothing depends on DPDK).
 *
 * The numbers are ctrl/rfw_num.h's (decimal or 0x-hex integers, finite reals, closed ranges);
 * a bad value is reported on stderr in one form for every tool, naming the program, the option
 * and the value:
 *     rocefw-cp: --rate-gbps: 'x' is not a number in 0.001..400
 *     rocefw-perf: --qps: '0' is not an integer in 1..64
 * Exit status 2 is the tools' "bad usage".
 */
#ifndef RFW_TOOLS_COMMON_RFW_OPT_H
#define RFW_TOOLS_COMMON_RFW_OPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#define RFW_OPT_EXIT_USAGE 2

/* Parse @s, the value of option @opt of program @prog, into *@out within [@lo, @hi].
 * 0, or -EINVAL after printing the message above (*@out unchanged). */
int rfw_opt_u64(const char *prog, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                uint64_t *out);
int rfw_opt_u32(const char *prog, const char *opt, const char *s, uint32_t lo, uint32_t hi,
                uint32_t *out);
int rfw_opt_double(const char *prog, const char *opt, const char *s, double lo, double hi,
                   double *out);

/* The same, returning the value; on a bad one, the message and exit(RFW_OPT_EXIT_USAGE). */
uint64_t rfw_opt_u64_or_exit(const char *prog, const char *opt, const char *s, uint64_t lo,
                             uint64_t hi);
uint32_t rfw_opt_u32_or_exit(const char *prog, const char *opt, const char *s, uint32_t lo,
                             uint32_t hi);
double rfw_opt_double_or_exit(const char *prog, const char *opt, const char *s, double lo,
                              double hi);

/* DPDK programs' "prog [EAL options] -- [options]": the index of the first "--" in @argv, or
 * -1 when there is none. */
int rfw_opt_dashdash(int argc, char **argv);

/*
 * Numeric options as a table: each row names a long option, its type and range, and where the
 * value goes in the caller's configuration struct (offsetof). A getopt_long loop hands every
 * numeric option to rfw_opt_num_apply() instead of one case each.
 */
enum rfw_opt_kind {
	RFW_OPT_KIND_U8,
	RFW_OPT_KIND_U16,
	RFW_OPT_KIND_U32,
	RFW_OPT_KIND_U64,
	RFW_OPT_KIND_DOUBLE
};
struct rfw_opt_num {
	const char *name; /* the long option without "--" */
	enum rfw_opt_kind kind;
	uint64_t lo, hi; /* integer kinds */
	double dlo, dhi; /* RFW_OPT_KIND_DOUBLE */
	size_t
	    off; /* offsetof(struct conf, field): uint8_t, uint16_t, uint32_t, uint64_t, double */
};
#define RFW_OPT_U8(nm, type, field, l, h)                                                          \
	{                                                                                          \
		.name = (nm), .kind = RFW_OPT_KIND_U8, .lo = (l), .hi = (h),                       \
		.off = offsetof(type, field)                                                       \
	}
#define RFW_OPT_U16(nm, type, field, l, h)                                                         \
	{                                                                                          \
		.name = (nm), .kind = RFW_OPT_KIND_U16, .lo = (l), .hi = (h),                      \
		.off = offsetof(type, field)                                                       \
	}
#define RFW_OPT_U32(nm, type, field, l, h)                                                         \
	{                                                                                          \
		.name = (nm), .kind = RFW_OPT_KIND_U32, .lo = (l), .hi = (h),                      \
		.off = offsetof(type, field)                                                       \
	}
#define RFW_OPT_U64(nm, type, field, l, h)                                                         \
	{                                                                                          \
		.name = (nm), .kind = RFW_OPT_KIND_U64, .lo = (l), .hi = (h),                      \
		.off = offsetof(type, field)                                                       \
	}
#define RFW_OPT_DOUBLE(nm, type, field, l, h)                                                      \
	{                                                                                          \
		.name = (nm), .kind = RFW_OPT_KIND_DOUBLE, .dlo = (l), .dhi = (h),                 \
		.off = offsetof(type, field)                                                       \
	}

/* The row of @tab (@n rows) for long option @name, or NULL. */
const struct rfw_opt_num *rfw_opt_num_find(const struct rfw_opt_num *tab, size_t n,
                                           const char *name);
/* Parse @s as option @row into @conf (the struct the offsets are of). 0, or -EINVAL after
 * printing the message (the field unchanged). */
int rfw_opt_num_set(const char *prog, const struct rfw_opt_num *row, const char *s, void *conf);
/* For one getopt_long() result (@c, and @idx when @c is 0) of option table @lo: when the option
 * is a row of @tab, parse @arg into @conf. A short option is found by its value in @lo, so the
 * message names "--size" for -s too. 1: not a numeric option (the caller's switch takes it);
 * 0: set; -EINVAL: bad value (printed). */
int rfw_opt_num_getopt(const char *prog, const struct option *lo, const struct rfw_opt_num *tab,
                       size_t n, int c, int idx, const char *arg, void *conf);

#endif
