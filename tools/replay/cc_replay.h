/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `rocefw-replay cc`: congestion-control validation from a capture. One streaming pass over the
 * frames identifies RoCEv2 flows, their data packets, the CNPs and ACK/NAKs that belong to them,
 * measures what each sender did (windowed rate, reaction to CNPs, cut sizes, recovery slope) and
 * what its notification point did (CNP spacing, CE marks left unanswered), and runs cc/'s DCQCN
 * reaction point, the code the dataplane runs, on each flow's CNP arrivals and transmitted bytes
 * under one or more profiles, to compare the rate it should have had with the rate it had.
 *
 * Memory is per flow and fixed once the flow exists (its models and histograms); nothing is
 * allocated per packet. The per-frame entry point is separate from file reading so that fuzzing
 * and tests can drive it directly. docs/replay-cc.md describes the method and its assumptions.
 */
#ifndef RFW_TOOLS_REPLAY_CC_REPLAY_H
#define RFW_TOOLS_REPLAY_CC_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "cc/dcqcn.h"

/* Schema of the JSON report and of the CSV files; bump when a field changes meaning. */
#define RFW_CC_SCHEMA "rocefw.replay.cc/1"

#define RFW_CC_MAX_MODELS 48 /* profiles run side by side on every flow */

/* What `--flow` keeps; unset parts match anything. */
struct rfw_cc_filter {
	bool has_src, has_dst, has_qpn;
	uint8_t src[16], dst[16];
	uint32_t qpn;
};

/* One closed rate window of a flow, for CSV and plots. */
struct rfw_cc_window {
	uint64_t t_start_ns, t_end_ns;
	double observed_gbps;
	double model_gbps[2]; /* model 0 (the profile) and model 1 (what-if), NaN when absent */
	uint32_t cnps, ce, packets;
};

struct rfw_cc_flow;
typedef void (*rfw_cc_window_cb)(void *ctx, const struct rfw_cc_flow *f, unsigned flow_index,
                                 const struct rfw_cc_window *w);
/* Events of a flow, for event CSVs. */
enum rfw_cc_event {
	RFW_CC_EV_CNP, /* a CNP arrived */
	RFW_CC_EV_CE,  /* a CE-marked data packet */
	RFW_CC_EV_CUT, /* a reaction: at the start of the first slower gap (delay, size set) */
};
typedef void (*rfw_cc_event_cb)(void *ctx, const struct rfw_cc_flow *f, unsigned flow_index,
                                uint64_t ts_ns, enum rfw_cc_event ev, double delay_ns, double cut);

struct rfw_cc_opts {
	uint64_t window_ns;       /* rate window: at least this long ... */
	uint32_t window_min_pkts; /* ... and at least this many packets */
	uint64_t idle_ns;         /* a gap longer than this ends a window unscored */
	uint64_t react_ns;        /* a CNP not followed by a slower gap within this: no reaction */
	uint64_t react_block_ns;  /* judge reactions on blocks of packets this long (0: per gap;
	                           * microsecond captures use at least 10 us) */
	double cut_min;           /* a gap this much longer (0.05 = 5 %) than before is "slower" */
	uint64_t cnp_delay_ns;    /* added to CNP times before the models see them */
	uint64_t np_gap_ns;       /* np_min_time_between_cnps to check the NP against */
	uint64_t np_slack_ns;     /* a CE mark is answered by a CNP within np gap + this */
	double max_median_err;    /* rp conforms: median relative error at most this ... */
	double max_p95_err;       /* ... and p95 at most this ... */
	double min_react_share;   /* ... ; fewer CNPs than this followed by a cut: not_reacting */
	struct rfw_cc_filter filter;
	unsigned nmodels; /* 0..RFW_CC_MAX_MODELS */
	const struct dcqcn_prof *models[RFW_CC_MAX_MODELS];
	bool whatif;             /* model 1 is a what-if profile (windows carry it) */
	bool estimate_line_rate; /* measure per-host window rates (rfw_cc_stats max_host_gbps) */
	rfw_cc_window_cb on_window;
	rfw_cc_event_cb on_event;
	void *cb_ctx;
};

/* Defaults of every option above (the documented ones), no models. */
void rfw_cc_opts_default(struct rfw_cc_opts *o);

struct rfw_cc;

/* NULL on allocation failure. @o is copied; the profiles it points at must outlive the object. */
struct rfw_cc *rfw_cc_new(const struct rfw_cc_opts *o);
void rfw_cc_free(struct rfw_cc *c);

/* Whether rfw_cc_frame() decodes frames of this pcap link type. */
int rfw_cc_linktype_supported(int linktype);

/*
 * One captured frame: @caplen bytes at @data, @wirelen on the wire, timestamp in ns. Frames
 * must come in capture order. Never reads outside [data, data + caplen). Returns 0, -ENOMEM
 * when a new flow could not be recorded, -EPROTONOSUPPORT for an unknown link type.
 */
int rfw_cc_frame(struct rfw_cc *c, int linktype, const uint8_t *data, uint32_t caplen,
                 uint32_t wirelen, uint64_t ts_ns);

/* Close open windows and pending checks, compute verdicts. Call once, after the last frame. */
void rfw_cc_finish(struct rfw_cc *c);

/* ---- results ---- */

struct rfw_cc_stats {
	uint64_t frames, roce, other, malformed, cnps_unattributed, acks_unattributed;
	uint64_t out_of_order_ts;
	double max_window_gbps; /* highest observed window rate of any flow */
	double max_host_gbps;   /* highest rate of one source host (estimate_line_rate) */
	bool coarse_ts;         /* every data timestamp a whole microsecond */
};
void rfw_cc_stats(const struct rfw_cc *c, struct rfw_cc_stats *s);

unsigned rfw_cc_nflows(const struct rfw_cc *c);
/* Mean relative error (windows, each clamped at 1) of model @m on flow @i; -1 if unscored. */
double rfw_cc_model_mean_err(const struct rfw_cc *c, unsigned i, unsigned m);
/* Scored windows of flow @i. */
uint64_t rfw_cc_flow_windows(const struct rfw_cc *c, unsigned i);
/* Whether flow @i had CNPs (and so a model to fit). */
bool rfw_cc_flow_has_signals(const struct rfw_cc *c, unsigned i);
/* Smallest gap between two CNPs of flow @i (ns), or UINT64_MAX. */
uint64_t rfw_cc_flow_min_cnp_gap(const struct rfw_cc *c, unsigned i);
/* Source address of flow @i (16 bytes, IPv4-mapped for IPv4). */
const uint8_t *rfw_cc_flow_src(const struct rfw_cc *c, unsigned i);
/* np_verdict and rp_verdict of flow @i (after rfw_cc_finish). */
void rfw_cc_flow_verdicts(const struct rfw_cc *c, unsigned i, const char **np, const char **rp);
/* Whether flow @i is excluded by --flow. */
bool rfw_cc_flow_filtered(const struct rfw_cc *c, unsigned i);
/* "src dst qpn" of flow @i, for messages. */
const char *rfw_cc_flow_name(const struct rfw_cc *c, unsigned i, char *buf, size_t len);

/* Flow @i as a JSON object (schema RFW_CC_SCHEMA, docs/replay-cc.md). New reference. */
json_t *rfw_cc_flow_json(const struct rfw_cc *c, unsigned i, const char *profile,
                         const char *whatif);
/* A text line per flow. */
void rfw_cc_print(const struct rfw_cc *c, FILE *out);

#endif
