/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-sim: a deterministic discrete-event simulation of two RoCEv2 hosts running the real
 * transport (transport/) over two simulated links (one per direction). Virtual clock; links
 * with rate, propagation delay, an output queue and impairments (random and burst loss,
 * reorder, duplicate, corrupt) drawn from one seeded RNG; frames built with wire/frame.c
 * (Ethernet + IPv4 + UDP + ICRC) and checked by the receiving host like a NIC (bad ICRC ->
 * dropped). A workload posts messages on N QPs with a bounded outstanding depth and verifies
 * every byte delivered. Same configuration and seed: same result, bit for bit.
 */
#ifndef RFW_TOOLS_SIM_H
#define RFW_TOOLS_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cc/dcqcn.h"
#include "transport/estats.h"
#include "transport/rfw_verbs.h"

/* Schema of the JSON result; bump when a field changes meaning or goes away. */
#define RFW_SIM_SCHEMA "rocefw.sim/1"

/* Most flows of the switch topology (--flows / --incast). */
#define RFW_SIM_MAX_FLOWS 128

/* --pcap-point: where --pcap sees the frames. */
enum rfw_sim_pcap_point {
	RFW_SIM_PCAP_TX,       /* every frame as it leaves any host (the original capture) */
	RFW_SIM_PCAP_SENDER,   /* at the senders' NICs: data departures, CNP/ACK arrivals */
	RFW_SIM_PCAP_RECEIVER, /* at the receiver's NIC: data arrivals, CNP/ACK departures */
	RFW_SIM_PCAP_SWITCH,   /* frames leaving the switch's ports (after the marking queue) */
};

/* --op; MIX draws each message's operation from the seed (equal shares). */
enum rfw_sim_op { RFW_SIM_WRITE, RFW_SIM_READ, RFW_SIM_SEND, RFW_SIM_ATOMIC, RFW_SIM_MIX };

struct rfw_sim_cfg {
	enum rfw_sim_op op;
	uint64_t size;     /* message size in bytes (atomics: always 8) */
	uint64_t messages; /* total, spread over the QPs */
	uint32_t qps;
	uint32_t depth; /* outstanding messages per QP */
	uint32_t mtu;   /* path MTU in bytes: 256 .. 4096 */
	double rate_gbps;
	double rtt_us; /* round trip propagation: each link gets rtt/2 */
	double loss, reorder, dup, corrupt;
	double ce;         /* probability an ECT frame is CE-marked on the link (exercises NP/RP) */
	double burst_loss; /* probability a loss burst starts at a frame */
	uint32_t burst_len; /* burst duration in MTU-frame times at the link rate */
	uint32_t start_psn;
	uint64_t seed;
	bool sr;              /* --transport sr: selective repeat (docs/transport-sr.md) */
	int peer_sr;          /* --peer-transport: the responder's mode; -1 = as --transport */
	bool skip_mode_check; /* --skip-mode-check: connect mismatched modes anyway (test) */
	uint64_t bdp_bytes;   /* --bdp-bytes: SR cap on bytes in flight; 0 = derived */
	double rto_low_us, rto_high_us; /* --rto-low-us / --rto-high-us; 0 = transport default */
	uint32_t sr_window;             /* --sr-window PSNs; 0 = transport default */
	uint64_t lose_frame; /* --lose-frame N: lose exactly host 0's Nth frame (0: none) */
	const char *pcap;
	/* transport knobs */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic;
	uint32_t ack_every;
	uint32_t max_unacked_psns;
	uint32_t queue_bytes; /* link output queue capacity */
	uint64_t time_limit_ns;
	enum rfw_sim_pcap_point pcap_point;
	/*
	 * Switch topology (docs/sim.md "Congestion"): --flows N backlogged senders, or --incast N
	 * senders of --messages each, through one switch to one receiver. 0/0: the two-host model.
	 */
	uint32_t flows, incast;
	uint32_t nprofiles; /* --profile / --profiles: assigned round robin to flows */
	uint8_t profile[RFW_SIM_MAX_FLOWS];
	const char *cc_set; /* --cc-set name=value,...: DCQCN parameters over every profile */
	uint32_t nrtt; /* --rtt-us U1,U2,...: base RTT per flow, round robin (rtt_us = first) */
	double rtt_list[RFW_SIM_MAX_FLOWS];
	double kmin_kb, kmax_kb, pmax; /* RED/ECN marking at the switch's output queues */
	double duration_ms;            /* --flows: run length */
	double sample_us;              /* time-series sample interval */
	double start_gap_us;           /* flow i starts at i x this */
	const char *csv_dir, *plot_dir;
	bool estats;               /* --estats: Estats on every host (docs/estats.md) */
	double estats_interval_ms; /* --estats-interval-ms; 0 = transport default (60 s) */
};

/* Estats rows the result keeps (host 0's QPs, current window at the end of the run). */
#define RFW_SIM_ES_ROWS 64

/* Per-flow result of the switch topology. */
struct rfw_sim_flow {
	uint32_t profile; /* enum dcqcn_profile */
	double rtt_us;
	uint64_t start_ns, bytes_verified, messages_completed;
	uint64_t completion_ns; /* --incast: last completion (0: not done) */
	double goodput_gbps;    /* bytes verified / (end - start) */
	double goodput_second_half_gbps;
	double final_rate_gbps; /* the RP's current rate at the end */
	uint64_t cnps_received, cnps_sent, rate_cuts, ce_marked_received;
};

struct rfw_sim_result {
	uint64_t messages_posted, messages_completed, bytes_verified;
	uint64_t corrupt, duplicates_delivered;
	uint64_t error_completions;   /* completions with an error other than a flush */
	uint64_t flushed_completions; /* RFW_WC_WR_FLUSH_ERR */
	uint64_t retransmitted_packets, timeouts, nak_seq_err;
	uint64_t sim_time_ns;
	uint64_t lost_frame_ns; /* --lose-frame: when the lost frame would have arrived */
	double goodput_gbps;
	/* the network */
	uint64_t frames_sent, frames_delivered, frames_lost, frames_duplicated, frames_reordered,
	    frames_corrupted, frames_ce_marked, queue_drops, icrc_drops, parse_drops, events;
	double wall_s;
	uint64_t cnt[RFW_CNT__COUNT]; /* transport counters, both hosts */
	char first_error[128];
	bool completed; /* every message completed successfully */
	/* switch topology (flows == 0: two-host model, the fields below are unset) */
	uint32_t nflows;
	struct rfw_sim_flow flow[RFW_SIM_MAX_FLOWS];
	double jain_index;          /* over the second half of the run, goodput per flow */
	double convergence_time_ms; /* < 0: did not converge */
	double queue_mean_kb, queue_p99_kb, queue_peak_kb; /* bottleneck port, time weighted */
	uint64_t cnps_sent, switch_ce_marked;
	uint32_t nes_rows; /* --estats */
	struct rfw_es_row es_rows[RFW_SIM_ES_ROWS];
};

void rfw_sim_cfg_default(struct rfw_sim_cfg *cfg);
/*
 * Set one option by its command-line name without the dashes ("size", "loss", ...). Returns
 * 0, -ENOENT for an unknown name, -EINVAL for a bad value. Used by the CLI and the INI reader.
 */
int rfw_sim_set(struct rfw_sim_cfg *cfg, const char *name, const char *value);
/* Read "name = value" lines (# comments, [sections] ignored). 0 or -errno; *line on error. */
int rfw_sim_load_ini(struct rfw_sim_cfg *cfg, const char *path, int *line);
/* Check a configuration; NULL if fine, else a message. */
const char *rfw_sim_validate(const struct rfw_sim_cfg *cfg);

/* Run the simulation. 0, or -errno for a setup failure (bad config, no memory, pcap). */
int rfw_sim_run(const struct rfw_sim_cfg *cfg, struct rfw_sim_result *res);

/*
 * The simulator's speed bound for benchmarks: packets per wall-clock second of the per-packet
 * work no simulated data packet avoids (payload copy in, headers, ICRC, receive parse and ICRC
 * check, IB parse, payload copy out) at @mtu, over @iters packets. 0 on failure.
 */
double rfw_sim_frame_path_pps(uint32_t mtu, uint32_t iters);

/* The result (and the configuration) as one JSON object with a "schema" field. */
json_t *rfw_sim_json(const struct rfw_sim_cfg *cfg, const struct rfw_sim_result *res);

#endif
