/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * DCQCN tunables: the one parameter table, the built-in profiles, set-by-name and validation.
 *
 * Every tunable of the rate machine and the notification point is one row of
 * DCQCN_PARAM_TABLE below. The row carries the mlx5 spelling, the unit, the accepted range,
 * one value per built-in profile and one line of meaning. The struct dcqcn_params fields, the
 * --list-params output, set-by-name and validation are all generated from that one list, so a
 * parameter cannot exist in one place and be missing in another.
 *
 * Parameters are user-facing values in mlx5 units (us, Mb/s, bytes, 1/1024, %). They are turned
 * into the internal fixed-point form (ns, kb/s) once by dcqcn_prof_config() in cc/dcqcn.h.
 */
#ifndef RFW_CC_DCQCN_PARAMS_H
#define RFW_CC_DCQCN_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Built-in profiles, in the order of the value columns of DCQCN_PARAM_TABLE.
 * X(enum suffix, name, one-line description)
 */
#define DCQCN_PROFILE_TABLE(X)                                                                     \
	X(UNIFIED, "unified",                                                                      \
	  "rocefw default: one behaviour robust to NP differences (docs/cc.md)")                   \
	X(PAPER, "paper", "DCQCN SIGCOMM'15 as published (40G sample configuration)")              \
	X(MLX5_CX5, "mlx5-cx5", "ConnectX-5 firmware 16.35 defaults (mlx5 sysfs/debugfs)")         \
	X(HPCC_NS3, "hpcc-ns3", "HPCC ns-3 'Mellanox DCQCN' (run.py dcqcn at 100G)")               \
	X(SHARED_PORT, "shared-port", "mlx5-cx5 values with one RP state per port")

enum dcqcn_profile {
#define X(e, n, d) DCQCN_PROFILE_##e,
	DCQCN_PROFILE_TABLE(X)
#undef X
	    DCQCN_PROFILE__COUNT
};

/* Values of rp_scope: which flows share one reaction-point state (the host does the mapping). */
enum dcqcn_scope {
	DCQCN_SCOPE_QP = 0,   /**< one RP per queue pair (paper, firmware default) */
	DCQCN_SCOPE_DST = 1,  /**< one RP per destination (all QPs to one remote GID) */
	DCQCN_SCOPE_PORT = 2, /**< one RP per local port (all QPs of the port) */
};

#define DCQCN_ALPHA_ONE 1024u /* alpha parameters are in 1/1024 units: 1024 == 1.0 */

/*
 * The parameter table.
 * X(name, unit, min, max, unified, paper, mlx5-cx5, hpcc-ns3, shared-port, meaning)
 *
 * Units: "us" microseconds, "ns" nanoseconds, "Mb/s" megabit per second, "B" bytes, "1/1024"
 * fixed point with 1024 == 1.0, "bits" a count of fraction bits, "%" percent, "log2" a shift
 * count, "bool" 0/1, "n" a count, "a|b|c" an enum whose values may also be given by name. Where a
 * profile column deviates from its source, docs/cc.md says why.
 */
#define DCQCN_PARAM_TABLE(X)                                                                       \
	X(rp_scope, "qp|dst|port", 0, 2, 0, 0, 0, 0, 2,                                            \
	  "flows sharing one RP state: 0 per QP, 1 per destination, 2 per port")                   \
	X(rp_time_reset, "us", 0, 10000000, 55, 55, 300, 300, 300,                                 \
	  "rate-increase timer period after a cut (0 = timer off) [DCQCN T]")                      \
	X(rp_byte_reset, "B", 0, 4000000000u, 0, 10000000, 2097088, 0, 2097088,                    \
	  "bytes sent between byte-counter increase events (0 = counter off) [DCQCN B]")           \
	X(rp_threshold, "n", 0, 255, 5, 5, 1, 1, 1,                                                \
	  "F: increase events per counter spent in fast recovery before additive/hyper")           \
	X(rp_ai_rate, "Mb/s", 0, 1000000, 40, 40, 5, 20, 5, "additive increase step of RT [R_AI]") \
	X(rp_hai_rate, "Mb/s", 0, 1000000, 200, 200, 50, 200, 50,                                  \
	  "hyper increase step of RT [R_HAI]")                                                     \
	X(rp_hai_scale, "fixed|min-f|min-f+1", 0, 2, 0, 2, 0, 0, 0,                                \
	  "hyper step i*R_HAI: 0 i = 1; 1 i = min(T, BC) - F; 2 i = min(T, BC) - F + 1 (paper)")   \
	X(rp_min_rate, "Mb/s", 1, 4000000, 10, 10, 1, 1000, 1, "rate floor of RC")                 \
	X(rp_max_rate, "Mb/s", 0, 4000000, 0, 0, 0, 0, 0, "rate ceiling (0 = line rate)")          \
	X(rp_min_dec_fac, "%", 1, 100, 50, 50, 50, 50, 50,                                         \
	  "a cut leaves at least this share of RC (largest cut = 100 - this %)")                   \
	X(rp_gd, "log2", 0, 31, 11, 11, 11, 11, 11,                                                \
	  "cut = RC * alpha >> rp_gd (alpha in 1/1024, so 11 = RC * alpha / 2)")                   \
	X(rp_rate_to_set_on_first_cnp, "Mb/s", 0, 4000000, 0, 0, 0, 0, 0,                          \
	  "RC and RT at the first CNP, before its cut (0 = keep the current rate)")                \
	X(rp_initial_alpha_value, "1/1024", 0, 1024, 1024, 1024, 1023, 1024, 1023,                 \
	  "alpha set at the first CNP")                                                            \
	X(rp_dce_tcp_g, "1/1024", 0, 1024, 1020, 1020, 1019, 1020, 1019,                           \
	  "G: alpha = G*alpha/1024 (+ 1024-G on congestion); 1020 = paper g of 1/256")             \
	X(rp_alpha_bits, "bits", 10, 48, 48, 48, 10, 48, 10,                                       \
	  "fraction bits of alpha: 10 = 1/1024 units (mlx5), 48 = as exact as a real")             \
	X(rp_alpha_round, "down|nearest", 0, 1, 1, 1, 0, 1, 0,                                     \
	  "rounding of each alpha update: 0 down (reaches 0 in quiet), 1 to nearest")              \
	X(rp_alpha_grid, "bool", 0, 1, 0, 0, 0, 1, 0,                                              \
	  "sampled alpha restarts on the first CNP's grid (k periods after it), not CNP + period") \
	X(rp_dce_tcp_rtt, "us", 1, 10000000, 55, 55, 1, 1, 1,                                      \
	  "alpha update period (sampled mode) or alpha decay time K (on-CNP mode)")                \
	X(rp_alpha_on_cnp, "bool", 0, 1, 0, 1, 0, 0, 0,                                            \
	  "1: alpha rises at each CNP, decays after K without one (paper); 0: sampled per period") \
	X(rp_rate_reduce_monitor_period, "us", 0, 10000000, 50, 0, 4, 4, 4,                        \
	  "at most one cut per period; CNPs inside fold into one (0 = every CNP cuts)")            \
	X(rp_rate_reduce_immediate, "bool", 0, 1, 1, 1, 0, 0, 0,                                   \
	  "1: a CNP outside a monitor period cuts at once; 0: the cut waits for the period end")   \
	X(rp_rate_reduce_grid, "bool", 0, 1, 0, 0, 0, 1, 0,                                        \
	  "monitor periods on a fixed grid from the first CNP; 0: a period opens at the CNP")      \
	X(rp_rate_reduce_offset, "ns", 0, 1000000, 0, 0, 0, 1, 0,                                  \
	  "grid mode: the grid starts this long after the first CNP (ns-3: 1 ns)")                 \
	X(rp_clamp_tgt_rate, "bool", 0, 1, 1, 1, 0, 0, 0, "on every cut set RT = RC")              \
	X(rp_clamp_tgt_rate_ati, "bool", 0, 1, 1, 1, 1, 1, 1,                                      \
	  "also set RT = RC if a timer increase happened since the last cut")                      \
	X(np_min_time_between_cnps, "us", 0, 10000000, 50, 50, 4, 0, 4,                            \
	  "NP: minimum gap between two CNPs of one QP (0 = a CNP per CE packet)")                  \
	X(np_cnp_dscp, "dscp", 0, 63, 48, 48, 48, 48, 48, "NP: DSCP of the CNPs sent")             \
	X(np_cnp_prio, "pcp", 0, 7, 6, 6, 6, 6, 6, "NP: 802.1p priority of the CNPs sent")

enum dcqcn_param_id {
#define X(n, u, lo, hi, d0, d1, d2, d3, d4, m) DCQCN_PARAM_##n,
	DCQCN_PARAM_TABLE(X)
#undef X
	    DCQCN_PARAM__COUNT
};

/** User-facing values of every tunable, in the units of the table. */
struct dcqcn_params {
#define X(n, u, lo, hi, d0, d1, d2, d3, d4, m) uint32_t n;
	DCQCN_PARAM_TABLE(X)
#undef X
};

/** One row of the parameter table, for listing and generic access. */
struct dcqcn_param_info {
	const char *name;
	const char *unit;
	const char *meaning;
	uint32_t min;
	uint32_t max;
	uint32_t def[DCQCN_PROFILE__COUNT]; /**< value in each built-in profile */
	size_t offset;                      /**< of the field in struct dcqcn_params */
};

/** Row @p id of the table, or NULL if out of range. */
const struct dcqcn_param_info *dcqcn_param_info(unsigned int id);

/** Parameter id of @p name, or -ENOENT. */
int dcqcn_param_lookup(const char *name);

/** Name of built-in profile @p p ("unified", ...), or NULL. */
const char *dcqcn_profile_name(enum dcqcn_profile p);

/** One-line description of built-in profile @p p, or NULL. */
const char *dcqcn_profile_desc(enum dcqcn_profile p);

/** Profile id of @p name, or -ENOENT. */
int dcqcn_profile_lookup(const char *name);

/** Fill @p p with the values of built-in profile @p prof. Returns 0 or -EINVAL. */
int dcqcn_params_init(struct dcqcn_params *p, enum dcqcn_profile prof);

/** Value of parameter @p id in @p p (id must be < DCQCN_PARAM__COUNT). */
uint32_t dcqcn_param_get(const struct dcqcn_params *p, unsigned int id);

/**
 * Set one parameter by name from a string ("11", "0x10", or an enum name such as "port").
 * The value is range-checked against the table.
 *
 * @return 0; -ENOENT unknown name; -EINVAL not a number; -ERANGE out of range.
 *         When @p msg is not NULL, a message naming the parameter is written to it
 *         (e.g. "rp_gd: 40 out of range 0..31").
 */
int dcqcn_param_set_msg(struct dcqcn_params *p, const char *name, const char *value, char *msg,
                        size_t msglen);

/** dcqcn_param_set_msg() without a message. */
int dcqcn_param_set(struct dcqcn_params *p, const char *name, const char *value);

/**
 * Check every parameter against its range and the cross-parameter rules.
 *
 * @return 0, or -ERANGE / -EINVAL with a message naming the first offending parameter.
 */
int dcqcn_params_validate(const struct dcqcn_params *p, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* RFW_CC_DCQCN_PARAMS_H */
