/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-sim: run one scenario (command line and/or --config INI file) and print the result,
 * human-readable or as one JSON object (--json); or --bench: the goodput-vs-loss table.
 * Exit status: 0 every message completed intact, 1 not, 2 usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#ifndef RFW_VERSION
#define RFW_VERSION "unknown"
#endif

static void usage(FILE *o)
{
	fprintf(
	    o,
	    "usage: rocefw-sim [options]\n"
	    "  workload:  --op write|read|send|atomic|mix|send_imm|write_imm|mixall\n"
	    "             --size BYTES  --messages N  --qps N\n"
	    "             --depth N (outstanding per QP)  --mtu 256|512|1024|2048|4096\n"
	    "  network:   --rate-gbps G  --rtt-us U  --loss P  --burst-loss P --burst-len N\n"
	    "             --reorder P  --dup P  --corrupt P  (P a fraction: 0.01 = 1%%)\n"
	    "             --ce P (CE-mark ECT frames)  --queue-bytes N\n"
	    "  transport: --transport gbn|sr  --peer-transport gbn|sr  --start-psn N\n"
	    "             --bdp-bytes N  --rto-low-us U  --rto-high-us U  --sr-window N (sr)\n"
	    "             --skip-mode-check 1  --timeout N  --retry-cnt N\n"
	    "             --rnr-retry N  --min-rnr-timer N  --max-rd-atomic N  --ack-every N\n"
	    "             --max-unacked-psns N\n"
	    "  switch:    --flows N (backlogged senders) | --incast N (senders of --messages)\n"
	    "             --profile P | --profiles P1,P2,...  --rtt-us U1,U2,... (per flow)\n"
	    "             --cc-set name=value,... (DCQCN parameters over every profile)\n"
	    "             --kmin-kb K  --kmax-kb K  --pmax P  --duration-ms T  --start-gap-us U\n"
	    "             --sample-us U  --csv DIR  --plot DIR\n"
	    "  run:       --seed N  --time-limit-ms N  --config FILE (INI: name = value)\n"
	    "             --pcap FILE  --pcap-point tx|sender|receiver|switch\n"
	    "             --json  --bench  --bench-transport (gbn vs sr)  --version  --help\n"
	    "             --lose-frame N (lose exactly host 0's Nth frame)\n"
	    "             --estats 0|1, --estats-interval-ms MS (Estats quantiles in --json)\n");
}

static const char *const value_opts[] = {
    "op",
    "size",
    "messages",
    "qps",
    "depth",
    "mtu",
    "rate-gbps",
    "rtt-us",
    "loss",
    "reorder",
    "dup",
    "corrupt",
    "start-psn",
    "seed",
    "transport",
    "peer-transport",
    "bdp-bytes",
    "rto-low-us",
    "rto-high-us",
    "sr-window",
    "lose-frame",
    "estats",
    "estats-interval-ms",
    "skip-mode-check",
    "pcap",
    "burst-loss",
    "burst-len",
    "timeout",
    "retry-cnt",
    "rnr-retry",
    "min-rnr-timer",
    "max-rd-atomic",
    "ack-every",
    "max-unacked-psns",
    "queue-bytes",
    "time-limit-ms",
    "ce",
    "flows",
    "incast",
    "profile",
    "profiles",
    "cc-set",
    "kmin-kb",
    "kmax-kb",
    "pmax",
    "duration-ms",
    "sample-us",
    "start-gap-us",
    "pcap-point",
    "csv",
    "plot",
};
#define N_VALUE_OPTS (sizeof(value_opts) / sizeof(value_opts[0]))

enum { OPT_JSON = 1000, OPT_BENCH, OPT_CONFIG, OPT_VERSION, OPT_HELP, OPT_BENCH_TRANSPORT };

static void print_human(const struct rfw_sim_cfg *c, const struct rfw_sim_result *r)
{
	static const char *const ops[] = {"write", "read",     "send",      "atomic",
	                                  "mix",   "send_imm", "write_imm", "mixall"};

	printf("rocefw-sim %s: %s %llu B x %llu msgs, %u QP(s), depth %u, MTU %u, %.1f Gb/s, "
	       "RTT %.1f us, loss %g, reorder %g, dup %g, corrupt %g, seed %llu\n",
	       c->sr ? "sr" : "gbn", ops[c->op], (unsigned long long)c->size,
	       (unsigned long long)c->messages, c->qps, c->depth, c->mtu, c->rate_gbps, c->rtt_us,
	       c->loss, c->reorder, c->dup, c->corrupt, (unsigned long long)c->seed);
	printf("  result            %s\n",
	       r->completed ? "OK: every message completed intact" : "FAILED");
	if (r->first_error[0])
		printf("  first error       %s\n", r->first_error);
	printf("  messages          %llu posted, %llu completed, %llu error + %llu flushed "
	       "completions\n",
	       (unsigned long long)r->messages_posted, (unsigned long long)r->messages_completed,
	       (unsigned long long)r->error_completions,
	       (unsigned long long)r->flushed_completions);
	printf("  verified          %llu bytes, corrupt %llu, duplicates delivered %llu\n",
	       (unsigned long long)r->bytes_verified, (unsigned long long)r->corrupt,
	       (unsigned long long)r->duplicates_delivered);
	printf("  goodput           %.3f Gb/s over %.3f ms simulated\n", r->goodput_gbps,
	       (double)r->sim_time_ns / 1e6);
	printf("  recovery          %llu retransmitted packets, %llu timeouts, %llu NAK seq err\n",
	       (unsigned long long)r->retransmitted_packets, (unsigned long long)r->timeouts,
	       (unsigned long long)r->nak_seq_err);
	for (uint32_t i = 0; c->estats && i < r->nes_rows; i++) {
		const struct rfw_es_row *e = &r->es_rows[i];

		printf("  estats qp %-5u %s %s %-6s n %-8llu p50 %llu p99 %llu p99.9 %llu max %llu "
		       "ns\n",
		       e->qpn, rfw_es_op_name(e->op), rfw_es_status_name(e->status),
		       rfw_es_stage_name(e->stage), (unsigned long long)e->count,
		       (unsigned long long)e->p50, (unsigned long long)e->p99,
		       (unsigned long long)e->p999, (unsigned long long)e->max);
	}
	printf("  network           %llu frames sent, %llu lost, %llu dup, %llu reordered, "
	       "%llu corrupted (%llu ICRC drops), %llu queue drops\n",
	       (unsigned long long)r->frames_sent, (unsigned long long)r->frames_lost,
	       (unsigned long long)r->frames_duplicated, (unsigned long long)r->frames_reordered,
	       (unsigned long long)r->frames_corrupted, (unsigned long long)r->icrc_drops,
	       (unsigned long long)r->queue_drops);
	printf("  simulator         %.3f s wall, %.0f simulated packets/s\n", r->wall_s,
	       r->wall_s > 0 ? (double)r->frames_sent / r->wall_s : 0);
}

/* The switch topology's per-flow table and fairness / queue figures. */
static void print_flows(const struct rfw_sim_cfg *c, const struct rfw_sim_result *r)
{
	printf("  %-4s %-12s %9s %10s %10s %8s %8s %12s\n", "flow", "profile", "rtt_us", "goodput",
	       "2nd_half", "cnps", "cuts", c->incast ? "done_us" : "final_rate");
	for (uint32_t i = 0; i < r->nflows; i++) {
		const struct rfw_sim_flow *f = &r->flow[i];

		double last =
		    c->incast
		        ? (f->completion_ns ? (double)(f->completion_ns - f->start_ns) / 1e3 : -1)
		        : f->final_rate_gbps;

		printf("  %-4u %-12s %9.1f %10.3f %10.3f %8llu %8llu %12.3f\n", i,
		       dcqcn_profile_name((enum dcqcn_profile)f->profile), f->rtt_us,
		       f->goodput_gbps, f->goodput_second_half_gbps,
		       (unsigned long long)f->cnps_received, (unsigned long long)f->rate_cuts,
		       last);
	}
	if (r->convergence_time_ms < 0)
		printf("  fairness          Jain %.4f over the second half; did not converge\n",
		       r->jain_index);
	else
		printf(
		    "  fairness          Jain %.4f over the second half; converged after %.3f ms\n",
		    r->jain_index, r->convergence_time_ms);
	printf("  bottleneck queue  mean %.1f KB, p99 %.1f KB, peak %.1f KB (Kmin %g, Kmax %g)\n",
	       r->queue_mean_kb, r->queue_p99_kb, r->queue_peak_kb, c->kmin_kb, c->kmax_kb);
}

/*
 * Goodput vs loss for WRITEs (the benchmark). Beside each figure: the line-rate bound
 * for that size and MTU (payload share of the wire bytes, computed from the same frame sizes
 * the simulator sends), and the simulator's own speed.
 */
static int bench(const struct rfw_sim_cfg *base, bool json)
{
	static const double losses[] = {0, 0.0001, 0.001, 0.01, 0.05};
	static const uint64_t sizes[] = {65536, 1048576};
	static const uint32_t mtus[] = {1024, 4096};
	json_t *arr = json ? json_array() : NULL;
	double path_pps[2];
	int bad = 0;

	/* The speed bound, measured in this run: per-packet frame work alone, per MTU. */
	for (size_t mi = 0; mi < 2; mi++)
		path_pps[mi] = rfw_sim_frame_path_pps(mtus[mi], 200000);
	if (!json)
		printf("%8s %5s %7s %10s %10s %8s %8s %9s %8s %10s %10s\n", "#bytes", "mtu", "loss",
		       "goodput", "bound", "retx", "timeouts", "sim_ms", "wall_s", "sim_pps",
		       "path_pps");
	for (size_t si = 0; si < 2; si++)
		for (size_t mi = 0; mi < 2; mi++)
			for (size_t li = 0; li < 5; li++) {
				struct rfw_sim_cfg c = *base;
				struct rfw_sim_result r;
				uint64_t npk;
				double wire, bound;

				c.op = RFW_SIM_WRITE;
				c.size = sizes[si];
				c.mtu = mtus[mi];
				c.loss = losses[li];
				if (c.messages == 100) /* the default: scale to about 64 MiB */
					c.messages = sizes[si] == 65536 ? 1024 : 64;
				if (rfw_sim_run(&c, &r)) {
					fprintf(stderr, "bench: setup failed\n");
					return 2;
				}
				if (!r.completed)
					bad = 1;
				npk = (c.size + c.mtu - 1) / c.mtu;
				/* Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + 24 on the wire; RETH
				 * on the first packet. */
				wire =
				    (double)c.size + (double)npk * (14 + 20 + 8 + 12 + 4 + 24) + 16;
				bound = c.rate_gbps * (double)c.size / wire;
				if (json) {
					json_t *o = rfw_sim_json(&c, &r);

					json_object_set_new(o, "bound_gbps", json_real(bound));
					json_object_set_new(o, "frame_path_pps_bound",
					                    json_real(path_pps[mi]));
					json_array_append_new(arr, o);
				} else {
					printf(
					    "%8llu %5u %7g %10.3f %10.3f %8llu %8llu %9.3f %8.3f "
					    "%10.0f %10.0f%s\n",
					    (unsigned long long)c.size, c.mtu, c.loss,
					    r.goodput_gbps, bound,
					    (unsigned long long)r.retransmitted_packets,
					    (unsigned long long)r.timeouts,
					    (double)r.sim_time_ns / 1e6, r.wall_s,
					    r.wall_s > 0 ? (double)r.frames_sent / r.wall_s : 0,
					    path_pps[mi], r.completed ? "" : "  INCOMPLETE");
					fflush(stdout);
				}
			}
	if (json) {
		json_t *o = json_object();

		json_object_set_new(o, "schema", json_string("rocefw.sim.bench/1"));
		json_object_set_new(o, "runs", arr);
		json_dumpf(o, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(o);
	}
	return bad;
}

static json_t *mode_json(const struct rfw_sim_result *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "goodput_gbps", json_real(r->goodput_gbps));
	json_object_set_new(o, "completed", json_boolean(r->completed));
	json_object_set_new(o, "bytes_verified", json_integer((json_int_t)r->bytes_verified));
	json_object_set_new(o, "retransmitted_packets",
	                    json_integer((json_int_t)r->retransmitted_packets));
	json_object_set_new(o, "timeouts", json_integer((json_int_t)r->timeouts));
	json_object_set_new(o, "naks_received",
	                    json_integer((json_int_t)r->cnt[RFW_CNT_naks_received]));
	json_object_set_new(o, "spurious_retransmissions",
	                    json_integer((json_int_t)r->cnt[RFW_CNT_spurious_retransmissions]));
	json_object_set_new(o, "inflight_bytes_hwm",
	                    json_integer((json_int_t)r->cnt[RFW_CNT_inflight_bytes_hwm]));
	json_object_set_new(o, "sim_time_ns", json_integer((json_int_t)r->sim_time_ns));
	return o;
}

static const double bt_rtts[] = {10, 100};
static const uint32_t bt_mtus[] = {1024, 4096};
static const double bt_losses[] = {0, 0.0001, 0.001, 0.01, 0.05};

/* @base as one bench_transport run: 1 MiB WRITEs, @rtt_us, @mtu, @sr; gbn window >= 2 BDP. */
static struct rfw_sim_cfg bt_cfg(const struct rfw_sim_cfg *base, double rtt_us, uint32_t mtu,
                                 bool sr)
{
	struct rfw_sim_cfg c = *base;
	double bdp_pkts = c.rate_gbps * rtt_us * 1e3 / 8 / mtu;

	c.op = RFW_SIM_WRITE;
	c.size = 1u << 20;
	c.rtt_us = rtt_us;
	c.mtu = mtu;
	c.sr = sr;
	c.peer_sr = -1;
	if (c.max_unacked_psns < 2 * bdp_pkts)
		c.max_unacked_psns = (uint32_t)(2 * bdp_pkts) + 1;
	return c;
}

/* One row of the loss sweep, gbn beside sr, into @runs (JSON) or stdout. */
static void bt_print_row(json_t *runs, double rtt, uint32_t mtu, double loss,
                         const struct rfw_sim_result r[2])
{
	if (runs != NULL) {
		json_t *o = json_object();

		json_object_set_new(o, "rtt_us", json_real(rtt));
		json_object_set_new(o, "mtu", json_integer(mtu));
		json_object_set_new(o, "loss", json_real(loss));
		json_object_set_new(o, "gbn", mode_json(&r[0]));
		json_object_set_new(o, "sr", mode_json(&r[1]));
		json_array_append_new(runs, o);
		return;
	}
	printf("%6g %5u %7g %9.3f %9.3f %7.2f %8llu %8llu %6llu %6llu %s\n", rtt, mtu, loss,
	       r[0].goodput_gbps, r[1].goodput_gbps,
	       r[0].goodput_gbps > 0 ? r[1].goodput_gbps / r[0].goodput_gbps : 0,
	       (unsigned long long)r[0].retransmitted_packets,
	       (unsigned long long)r[1].retransmitted_packets, (unsigned long long)r[0].timeouts,
	       (unsigned long long)r[1].timeouts,
	       r[0].completed && r[1].completed && !r[0].corrupt && !r[1].corrupt ? "yes" : "NO");
	fflush(stdout);
}

/* The loss sweep: every RTT x MTU x loss, gbn and sr. 0, 1 (a run not intact) or 2. */
static int bt_sweep(const struct rfw_sim_cfg *base, json_t *runs)
{
	int bad = 0;

	if (runs == NULL)
		printf("%6s %5s %7s %9s %9s %7s %8s %8s %6s %6s %s\n", "rtt_us", "mtu", "loss",
		       "gbn_gbps", "sr_gbps", "sr/gbn", "gbn_retx", "sr_retx", "gbn_to", "sr_to",
		       "intact");
	for (size_t ri = 0; ri < 2; ri++)
		for (size_t mi = 0; mi < 2; mi++)
			for (size_t li = 0; li < 5; li++) {
				struct rfw_sim_result r[2];

				for (int m = 0; m < 2; m++) {
					struct rfw_sim_cfg c =
					    bt_cfg(base, bt_rtts[ri], bt_mtus[mi], m == 1);

					if (c.messages == 100) /* the default: 32 MiB a run */
						c.messages = 32;
					c.loss = bt_losses[li];
					if (rfw_sim_run(&c, &r[m])) {
						fprintf(stderr, "bench-transport: setup failed\n");
						return 2;
					}
					if (!r[m].completed || r[m].corrupt ||
					    r[m].duplicates_delivered)
						bad = 1;
				}
				bt_print_row(runs, bt_rtts[ri], bt_mtus[mi], bt_losses[li], r);
			}
	return bad;
}

/* What one lost packet costs: a 1 MiB WRITE alone with its middle frame lost, minus the same
 * WRITE without loss, per RTT x MTU x mode. 0, 1 or 2 as bt_sweep. */
static int bt_single_loss(const struct rfw_sim_cfg *base, json_t *rec)
{
	int bad = 0;

	if (rec == NULL)
		printf("\n%6s %5s %5s %12s %12s\n", "rtt_us", "mtu", "mode", "recovery_us", "retx");
	for (size_t ri = 0; ri < 2; ri++)
		for (size_t mi = 0; mi < 2; mi++)
			for (int m = 0; m < 2; m++) {
				struct rfw_sim_cfg c =
				    bt_cfg(base, bt_rtts[ri], bt_mtus[mi], m == 1);
				struct rfw_sim_result r0, r1;
				double us;

				c.messages = 1;
				c.depth = 1;
				c.loss = 0;
				if (rfw_sim_run(&c, &r0))
					return 2;
				c.lose_frame = (c.size / c.mtu) / 2; /* the middle data frame */
				if (rfw_sim_run(&c, &r1))
					return 2;
				if (!r1.completed || r1.corrupt)
					bad = 1;
				us = ((double)r1.sim_time_ns - (double)r0.sim_time_ns) / 1e3;
				if (rec != NULL) {
					json_t *o = json_object();

					json_object_set_new(o, "rtt_us", json_real(bt_rtts[ri]));
					json_object_set_new(o, "mtu", json_integer(bt_mtus[mi]));
					json_object_set_new(o, "mode",
					                    json_string(m ? "sr" : "gbn"));
					json_object_set_new(o, "recovery_us", json_real(us));
					json_object_set_new(
					    o, "retransmitted_packets",
					    json_integer((json_int_t)r1.retransmitted_packets));
					json_array_append_new(rec, o);
				} else {
					printf("%6g %5u %5s %12.2f %12llu\n", bt_rtts[ri],
					       bt_mtus[mi], m ? "sr" : "gbn", us,
					       (unsigned long long)r1.retransmitted_packets);
				}
			}
	return bad;
}

/*
 * gbn vs sr (issue 4's benchmark, docs/transport-sr.md "Benchmark"): 1 MiB WRITEs at the
 * configured rate, RTT 10 and 100 us, MTU 1024 and 4096, random loss 0 .. 5 %; then the time
 * one lost packet costs in each mode (a 1 MiB WRITE alone with its middle frame lost, minus the
 * same WRITE without loss). The gbn window (max_unacked_psns) is raised to twice the BDP so
 * the loss-free figures compare the recovery schemes, not the window.
 */
static int bench_transport(const struct rfw_sim_cfg *base, bool json)
{
	json_t *runs = json ? json_array() : NULL, *rec = json ? json_array() : NULL;
	int bad = bt_sweep(base, runs), bad2;

	if (bad == 2)
		return 2;
	bad2 = bt_single_loss(base, rec);
	if (bad2 == 2)
		return 2;
	if (json) {
		json_t *o = json_object();

		json_object_set_new(o, "schema", json_string("rocefw.sim.bench_transport/1"));
		json_object_set_new(o, "rate_gbps", json_real(base->rate_gbps));
		json_object_set_new(o, "size", json_integer(1 << 20));
		json_object_set_new(o, "runs", runs);
		json_object_set_new(o, "single_loss_recovery", rec);
		json_dumpf(o, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(o);
	}
	return bad | bad2;
}

/* A --config file is read first so the command line can override it. 0, or 2 (said). */
static int load_config_arg(struct rfw_sim_cfg *cfg, int argc, char **argv)
{
	for (int i = 1; i < argc - 1; i++)
		if (strcmp(argv[i], "--config") == 0) {
			int line = 0;
			int rc = rfw_sim_load_ini(cfg, argv[i + 1], &line);

			if (rc) {
				fprintf(stderr, "rocefw-sim: %s:%d: %s\n", argv[i + 1], line,
				        rc == -ENOENT && line ? "unknown option" : strerror(-rc));
				return 2;
			}
		}
	return 0;
}

enum sim_mode { MODE_RUN, MODE_BENCH, MODE_BENCH_TRANSPORT };

/* The command line into @cfg, @json and @mode. -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct rfw_sim_cfg *cfg, bool *json,
                      enum sim_mode *mode)
{
	struct option opts[N_VALUE_OPTS + 7];
	int c, idx;

	for (size_t i = 0; i < N_VALUE_OPTS; i++)
		opts[i] = (struct option){value_opts[i], required_argument, NULL, (int)i};
	opts[N_VALUE_OPTS + 0] = (struct option){"json", no_argument, NULL, OPT_JSON};
	opts[N_VALUE_OPTS + 1] = (struct option){"bench", no_argument, NULL, OPT_BENCH};
	opts[N_VALUE_OPTS + 2] = (struct option){"config", required_argument, NULL, OPT_CONFIG};
	opts[N_VALUE_OPTS + 3] = (struct option){"version", no_argument, NULL, OPT_VERSION};
	opts[N_VALUE_OPTS + 4] = (struct option){"help", no_argument, NULL, OPT_HELP};
	opts[N_VALUE_OPTS + 5] =
	    (struct option){"bench-transport", no_argument, NULL, OPT_BENCH_TRANSPORT};
	opts[N_VALUE_OPTS + 6] = (struct option){0};
	while ((c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		if (c >= 0 && (size_t)c < N_VALUE_OPTS) {
			if (rfw_sim_set(cfg, value_opts[c], optarg)) {
				fprintf(stderr, "rocefw-sim: bad value for --%s: '%s'\n",
				        value_opts[c], optarg);
				return 2;
			}
		} else if (c == OPT_JSON) {
			*json = true;
		} else if (c == OPT_BENCH) {
			*mode = MODE_BENCH;
		} else if (c == OPT_BENCH_TRANSPORT) {
			*mode = MODE_BENCH_TRANSPORT;
		} else if (c == OPT_VERSION) {
			printf("rocefw-sim %s\n", RFW_VERSION);
			return 0;
		} else if (c == OPT_HELP) {
			usage(stdout);
			return 0;
		} else if (c != OPT_CONFIG) {
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rocefw-sim: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct rfw_sim_cfg cfg;
	struct rfw_sim_result res;
	enum sim_mode mode = MODE_RUN;
	bool json = false;
	const char *err;
	int rc;

	rfw_sim_cfg_default(&cfg);
	if (load_config_arg(&cfg, argc, argv) != 0)
		return 2;
	rc = parse_args(argc, argv, &cfg, &json, &mode);
	if (rc >= 0)
		return rc;
	err = rfw_sim_validate(&cfg);
	if (err) {
		fprintf(stderr, "rocefw-sim: %s\n", err);
		return 2;
	}
	if (mode != MODE_RUN && (cfg.flows || cfg.incast)) {
		fprintf(stderr, "rocefw-sim: %s runs the two-host model: no --flows/--incast\n",
		        mode == MODE_BENCH ? "--bench" : "--bench-transport");
		return 2;
	}
	if (mode == MODE_BENCH_TRANSPORT)
		return bench_transport(&cfg, json);
	if (mode == MODE_BENCH)
		return bench(&cfg, json);
	rc = rfw_sim_run(&cfg, &res);
	if (rc) {
		fprintf(stderr, "rocefw-sim: setup failed: %s\n", strerror(-rc));
		return 2;
	}
	if (json) {
		json_t *o = rfw_sim_json(&cfg, &res);

		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		printf("\n");
		json_decref(o);
	} else {
		print_human(&cfg, &res);
		if (cfg.flows || cfg.incast)
			print_flows(&cfg, &res);
	}
	return res.completed ? 0 : 1;
}
