/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `rocefw-replay cc`: command line, file passes, line-rate estimate, --fit search, CSV and
 * plots around the engine in cc_replay.c. docs/replay-cc.md documents every option.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <pcap/pcap.h>

#include "capread.h"
#include "cc_cli.h"
#include "cc_replay.h"
#include "wire/frame.h"
#include "ctrl/rfw_num.h"
#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_clock.h"

#define PROG          "rocefw-replay cc"
#define MAX_CSV_FLOWS 64
#define SCAN_FRAMES   (1u << 17) /* frames the line-rate estimate looks at */
#define NSEARCH       6          /* parameters searched by --fit (np gap is read off the CNPs) */
#define MAX_FIT_HOSTS 16         /* --fit per source host up to this many, else jointly */
#define FIT_STARTS    3          /* --fit searches from the best three named profiles */

struct cli {
	const char *file, *profile, *whatif, *csv_dir, *plot_dir;
	struct dcqcn_params params, wparams;
	uint32_t line_mbps; /* 0 = estimate */
	bool line_estimated, json, fit, progress, progress_set;
	struct rfw_cc_opts o;
	struct dcqcn_prof prof, wprof;
	struct dcqcn_prof named[DCQCN_PROFILE__COUNT];
	/* CSV */
	const char *out_dir;
	FILE *wf[MAX_CSV_FLOWS], *ef[MAX_CSV_FLOWS];
	bool csv_overflow;
	uint64_t t0;
	bool have_t0;
	const uint8_t *fit_src; /* --fit: the source host being fitted, NULL = all */
};

static void cc_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: rocefw-replay cc FILE [options]\n"
	    "Congestion-control validation: per RoCEv2 flow, what the sender and the receiver's\n"
	    "notification point did, and the rate cc/'s DCQCN machine says the sender should\n"
	    "have had (docs/replay-cc.md).\n\n"
	    "  --profile P            DCQCN profile to check against (unified; rocefw-cc\n"
	    "                         --list-profiles)\n"
	    "  --set name=value       override one parameter of it (repeatable)\n"
	    "  --line-rate-gbps G     sender port speed, Gb/s, 1..4000 (default: estimated:\n"
	    "                         the fastest 50 us of one source host, rounded up to\n"
	    "                         1/10/25/40/50/100/200/400/800)\n"
	    "  --flow FILTER          only flows matching src=IP,dst=IP,qpn=N (any subset)\n"
	    "  --window-us U          rate window, us, 1..1000000 (50; and >= 4 packets)\n"
	    "  --react-us U           time allowed from a CNP to a slower rate, us,\n"
	    "                         1..10000000 (200; at least 3 packet gaps)\n"
	    "  --react-block-us U     judge reactions on blocks of packets spanning U us\n"
	    "                         instead of single gaps (bursty senders), 0..1000000\n"
	    "                         (0; 10 for microsecond captures)\n"
	    "  --cut-threshold PCT    a gap this much longer than before the CNP is a cut,\n"
	    "                         %%, 0.1..90 (5)\n"
	    "  --cnp-delay-us U       added to CNP times before the model sees them, us,\n"
	    "                         0..10000000 (0; for captures away from the sender)\n"
	    "  --idle-us U            a longer gap between data packets ends a window\n"
	    "                         unscored, us, 1..100000000 (1000)\n"
	    "  --max-median-err PCT   rp conforms if the median relative error is at most\n"
	    "                         this, %%, 0..100 (10) ...\n"
	    "  --max-p95-err PCT      ... and its 95th percentile at most this, %%, 0..100 (30)\n"
	    "  --min-react-share PCT  under this share of judged CNPs followed by a cut:\n"
	    "                         not_reacting, %%, 0..100 (20)\n"
	    "  --fit                  search rp_ai_rate, rp_time_reset, rp_threshold, rp_gd,\n"
	    "                         rp_min_dec_fac, rp_hai_rate and np_min_time_between_cnps;\n"
	    "                         name the closest built-in profile\n"
	    "  --what-if P2           also replay the signals through profile P2\n"
	    "  --csv DIR              per-flow window CSV and event CSV files in DIR\n"
	    "  --plot DIR             per-flow PNG plots (and their CSV) in DIR (gnuplot)\n"
	    "  --json                 one JSON object (schema " RFW_CC_SCHEMA ") on stdout\n"
	    "  --progress / --no-progress  progress on stderr (default: when stderr is a\n"
	    "                         terminal)\n\n"
	    "Exit status: 0 when the file was read (whatever the verdicts); 1 when it could not\n"
	    "be opened or read to its end, or plots could not be made; 2 for bad usage.\n");
}

/* ---- option parsing ---- */

static int parse_ip(const char *s, uint8_t out[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		rfw_ip4_to_mapped(out, ntohl(a4.s_addr));
		return 0;
	}
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -1;
}

static int parse_filter(const char *arg, struct rfw_cc_filter *f)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			goto bad;
		*eq++ = 0;
		if (!strcmp(tok, "src") && !parse_ip(eq, f->src)) {
			f->has_src = true;
		} else if (!strcmp(tok, "dst") && !parse_ip(eq, f->dst)) {
			f->has_dst = true;
		} else if (!strcmp(tok, "qpn")) {
			if (rfw_num_u32(eq, 0, 0xffffff, &f->qpn) != 0)
				goto bad;
			f->has_qpn = true;
		} else {
			goto bad;
		}
	}
	if (f->has_src || f->has_dst || f->has_qpn)
		return 0;
bad:
	fprintf(stderr,
	        PROG ": --flow: '%s' is not a filter; expected src=IP,dst=IP,qpn=N (any of them)\n",
	        arg);
	return -1;
}

static int set_param(struct dcqcn_params *p, const char *arg)
{
	char buf[128], msg[160], *eq;

	if (strlen(arg) >= sizeof(buf) || (eq = strchr(strcpy(buf, arg), '=')) == NULL) {
		fprintf(stderr, PROG ": --set: expected name=value, got '%s'\n", arg);
		return -1;
	}
	*eq = 0;
	if (dcqcn_param_set_msg(p, buf, eq + 1, msg, sizeof(msg)) < 0) {
		fprintf(stderr, PROG ": --set %s\n", msg);
		return -1;
	}
	return 0;
}

static int profile_params(const char *opt, const char *name, struct dcqcn_params *p)
{
	int id = dcqcn_profile_lookup(name);

	if (id < 0) {
		fprintf(stderr, PROG ": %s: unknown profile '%s' (known:", opt, name);
		for (unsigned i = 0; i < DCQCN_PROFILE__COUNT; i++)
			fprintf(stderr, " %s", dcqcn_profile_name(i));
		fprintf(stderr, ")\n");
		return -1;
	}
	dcqcn_params_init(p, (enum dcqcn_profile)id);
	return 0;
}

/* ---- reading ---- */

struct pass {
	uint64_t frames;
	double secs;
	bool read_error;
	char err[PCAP_ERRBUF_SIZE + 64];
};

/* Open @file; 0, or 1 with a message already printed. */
static int open_capture(const char *file, pcap_t **out, int *lt)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	FILE *probe = fopen(file, "rb");
	struct stat st;
	pcap_t *pc;

	if (probe == NULL) {
		fprintf(stderr, PROG ": cannot open '%s': %s\n", file, strerror(errno));
		return 1;
	}
	fclose(probe);
	if (stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": '%s' is a directory, not a capture file\n", file);
		return 1;
	}
	pc = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (pc == NULL) {
		fprintf(stderr, PROG ": cannot read '%s' as pcap or pcapng: %s\n", file, errbuf);
		return 1;
	}
	*lt = pcap_datalink(pc);
	if (!rfw_cc_linktype_supported(*lt)) {
		const char *n = pcap_datalink_val_to_name(*lt);

		fprintf(stderr,
		        PROG
		        ": '%s': link type %d (%s) is not supported; supported: Ethernet (with "
		        "802.1Q tags), Linux cooked v1/v2, raw IPv4/IPv6\n",
		        file, *lt, n ? n : "?");
		pcap_close(pc);
		return 1;
	}
	*out = pc;
	return 0;
}

/* pcapng interface count, read from the blocks before the first packet (libpcap does not say
 * which interface a packet came from). 0 for classic pcap or on any doubt. */
static unsigned pcapng_interfaces(const char *file)
{
	FILE *f = fopen(file, "rb");
	uint8_t h[8];
	unsigned n = 0;
	bool swap = false;

	if (f == NULL)
		return 0;
	for (int i = 0; i < 64 && fread(h, 1, 8, f) == 8; i++) {
		uint32_t type, len;

		memcpy(&type, h, 4);
		memcpy(&len, h + 4, 4);
		if (i == 0) {
			uint8_t bom[4];

			if (type != 0x0a0d0d0a || fread(bom, 1, 4, f) != 4)
				break;
			swap = bom[0] == 0x1a; /* big-endian section */
			if (fseek(f, -4, SEEK_CUR))
				break;
		}
		if (swap) {
			type = __builtin_bswap32(type);
			len = __builtin_bswap32(len);
		}
		if (type == 1)
			n++;
		else if (type == 6 || type == 3 || type == 2)
			break; /* packets start */
		if (len < 12 || fseek(f, (long)len - 8, SEEK_CUR))
			break;
	}
	fclose(f);
	return n;
}

static void progress_line(uint64_t frames, double share)
{
	fprintf(stderr, "\r" PROG ": %3.0f%%  %" PRIu64 " frames", 100.0 * share, frames);
}

#define READ_BUF (8u << 20) /* refill size of the fast reader; > RFW_PCAP_MAX_CAPLEN */

/* The fast reader's file: a regular file whose first bytes are a classic pcap header of a
 * supported link type. The descriptor; -1 not such a file (use libpcap); -2 an unsupported
 * link type (message printed). */
static int fast_open(const struct cli *cl, uint8_t *buf, struct rfw_capread *r, struct stat *st)
{
	size_t have = 0;
	ssize_t n;
	int fd = open(cl->file, O_RDONLY);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	while (have < RFW_PCAP_HDR_LEN && (n = read(fd, buf + have, READ_BUF - have)) > 0)
		have += (size_t)n;
	if (rfw_capread_open(r, buf, have)) {
		close(fd);
		return -1;
	}
	if (!rfw_cc_linktype_supported(r->linktype)) {
		fprintf(stderr,
		        PROG ": '%s': link type %d is not supported; supported: Ethernet (with "
		             "802.1Q tags), Linux cooked v1/v2, raw IPv4/IPv6\n",
		        cl->file, r->linktype);
		close(fd);
		return -2;
	}
	return fd;
}

/* Keep the partial record, read more behind it. True at the end of the file. */
static bool fast_refill(int fd, uint8_t *buf, struct rfw_capread *r, uint64_t *consumed)
{
	size_t have = r->len - r->off;
	ssize_t n;

	*consumed += r->off;
	memmove(buf, buf + r->off, have);
	while (have < READ_BUF && (n = read(fd, buf + have, READ_BUF - have)) > 0)
		have += (size_t)n;
	rfw_capread_rebase(r, buf, have);
	return have < READ_BUF;
}

/* Classic pcap through the buffered zero-copy reader: 0 done, 1 failed (message printed), -1
 * not a classic pcap (use libpcap). */
static int run_pass_fast(struct cli *cl, struct rfw_cc *c, uint64_t max_frames, bool progress,
                         struct pass *ps)
{
	static uint8_t *buf;
	struct rfw_capread r;
	struct stat st;
	const uint8_t *data;
	uint32_t caplen, wirelen;
	uint64_t ts, consumed = 0;
	bool eof = false;
	int fd, rc = 0;
	double t0;

	if (buf == NULL && (buf = malloc(READ_BUF)) == NULL)
		return -1;
	fd = fast_open(cl, buf, &r, &st);
	if (fd < 0)
		return fd == -2 ? 1 : -1;
	t0 = rfw_mono_s();
	for (;;) {
		while (ps->frames < max_frames &&
		       (rc = rfw_capread_next(&r, &data, &caplen, &wirelen, &ts)) == 1) {
			if (!cl->have_t0) {
				cl->t0 = ts;
				cl->have_t0 = true;
			}
			if (rfw_cc_frame(c, r.linktype, data, caplen, wirelen, ts) == -ENOMEM) {
				fprintf(stderr, PROG ": out of memory recording flows\n");
				close(fd);
				return 1;
			}
			if (++ps->frames % (1u << 20) == 0 && progress && st.st_size > 0)
				progress_line(ps->frames,
				              (double)(consumed + r.off) / (double)st.st_size);
		}
		if (ps->frames >= max_frames || rc == -2 || eof)
			break;
		eof = fast_refill(fd, buf, &r, &consumed);
	}
	ps->secs = rfw_mono_s() - t0;
	close(fd);
	if (progress) {
		progress_line(ps->frames, 1.0);
		fputc('\n', stderr);
	}
	if (ps->frames < max_frames && rc < 0) {
		ps->read_error = true;
		snprintf(ps->err, sizeof(ps->err), "record %" PRIu64 " at byte %" PRIu64 " %s",
		         r.records + 1, consumed + r.off,
		         rc == -2 ? "has an impossible length"
		                  : "announces more bytes than the file holds");
	}
	return 0;
}

static int run_pass(struct cli *cl, struct rfw_cc *c, uint64_t max_frames, bool progress,
                    struct pass *ps)
{
	int mrc;

	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;
	int lt, rc;
	long size = 0;
	FILE *pf;
	double t0;

	memset(ps, 0, sizeof(*ps));
	{
		FILE *probe = fopen(cl->file, "rb");

		if (probe == NULL) {
			fprintf(stderr, PROG ": cannot open '%s': %s\n", cl->file, strerror(errno));
			return 1;
		}
		fclose(probe);
	}
	mrc = run_pass_fast(cl, c, max_frames, progress, ps);
	if (mrc >= 0)
		return mrc;
	if (open_capture(cl->file, &pc, &lt))
		return 1;
	pf = pcap_file(pc);
	if (progress && pf) {
		struct stat st;

		if (stat(cl->file, &st) == 0)
			size = st.st_size;
	}
	t0 = rfw_mono_s();
	while (ps->frames < max_frames && (rc = pcap_next_ex(pc, &h, &data)) == 1) {
		uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;

		if (!cl->have_t0) {
			cl->t0 = ts;
			cl->have_t0 = true;
		}
		if (rfw_cc_frame(c, lt, data, h->caplen, h->len, ts) == -ENOMEM) {
			fprintf(stderr, PROG ": out of memory recording flows\n");
			pcap_close(pc);
			return 1;
		}
		if (++ps->frames % (1u << 20) == 0 && size > 0)
			progress_line(ps->frames, (double)ftell(pf) / (double)size);
	}
	ps->secs = rfw_mono_s() - t0;
	if (size > 0)
		fprintf(stderr, "\r" PROG ": 100%%  %" PRIu64 " frames\n", ps->frames);
	if (ps->frames < max_frames && rc == PCAP_ERROR) {
		ps->read_error = true;
		snprintf(ps->err, sizeof(ps->err), "%s", pcap_geterr(pc));
	}
	pcap_close(pc);
	return 0;
}

/* ---- CSV ---- */

static FILE *csv_open(struct cli *cl, unsigned idx, bool events)
{
	FILE **slot = events ? &cl->ef[idx] : &cl->wf[idx];
	FILE *open_already = *slot;
	char path[4096];

	if (open_already != NULL)
		return open_already;
	snprintf(path, sizeof(path), "%s/flow-%u%s.csv", cl->out_dir, idx, events ? "-events" : "");
	*slot = fopen(path, "w");
	if (*slot == NULL)
		return NULL;
	if (events)
		fprintf(*slot, "# %s events\nt_us,event,reaction_delay_us,cut_share\n",
		        RFW_CC_SCHEMA);
	else
		fprintf(*slot,
		        "# %s windows profile=%s what_if=%s\n"
		        "t_start_us,t_end_us,observed_gbps,model_gbps,whatif_gbps,cnps,ce_marked,"
		        "packets\n",
		        RFW_CC_SCHEMA, cl->profile, cl->whatif ? cl->whatif : "-");
	return *slot;
}

static void on_window(void *ctx, const struct rfw_cc_flow *f, unsigned idx,
                      const struct rfw_cc_window *w)
{
	struct cli *cl = ctx;
	FILE *o;

	(void)f; /* the callback type carries it; the index is enough here */
	if (idx >= MAX_CSV_FLOWS) {
		cl->csv_overflow = true;
		return;
	}
	o = csv_open(cl, idx, false);
	if (o == NULL)
		return;
	fprintf(o, "%.3f,%.3f,%.4f,", (double)(w->t_start_ns - cl->t0) / 1e3,
	        (double)(w->t_end_ns - cl->t0) / 1e3, w->observed_gbps);
	if (isfinite(w->model_gbps[0]))
		fprintf(o, "%.4f", w->model_gbps[0]);
	fputc(',', o);
	if (isfinite(w->model_gbps[1]))
		fprintf(o, "%.4f", w->model_gbps[1]);
	fprintf(o, ",%u,%u,%u\n", w->cnps, w->ce, w->packets);
}

static void on_event(void *ctx, const struct rfw_cc_flow *f, unsigned idx, uint64_t ts,
                     enum rfw_cc_event ev, double delay_ns, double cut)
{
	struct cli *cl = ctx;
	FILE *o;

	(void)f;
	if (idx >= MAX_CSV_FLOWS) {
		cl->csv_overflow = true;
		return;
	}
	o = csv_open(cl, idx, true);
	if (o == NULL)
		return;
	if (ev == RFW_CC_EV_CUT)
		fprintf(o, "%.3f,cut,%.3f,%.4f\n", (double)(ts - cl->t0) / 1e3, delay_ns / 1e3,
		        cut);
	else
		fprintf(o, "%.3f,%s,,\n", (double)(ts - cl->t0) / 1e3,
		        ev == RFW_CC_EV_CNP ? "cnp" : "ce");
}

/* ---- plots (gnuplot) ---- */

/* gnuplot @script with its output in @log (never on our stdout, which may carry JSON). */
static int run_gnuplot(const char *script, const char *log)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {"gnuplot", (char *)script, NULL};
	pid_t pid;
	int st, rc;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return 0;
}

static int plot_flow(struct cli *cl, const struct rfw_cc *c, unsigned i)
{
	char name[160], gp[4096], log[4096];
	const char *npv, *rpv;
	FILE *g;

	/* The script stays beside the PNG (flow-N.gp): edit and rerun `gnuplot flow-N.gp`. */
	snprintf(gp, sizeof(gp), "%s/flow-%u.gp", cl->out_dir, i);
	snprintf(log, sizeof(log), "%s/flow-%u.gnuplot.log", cl->out_dir, i);
	g = fopen(gp, "w");
	if (g == NULL)
		return -1;
	rfw_cc_flow_name(c, i, name, sizeof(name));
	rfw_cc_flow_verdicts(c, i, &npv, &rpv);
	fprintf(g,
	        "set terminal pngcairo noenhanced size 1400,900 font 'sans,11'\n"
	        "set output '%s/flow-%u.png'\n"
	        "set datafile separator ','\n"
	        "set multiplot layout 2,1 title '%s    sender: %s, notification point: %s "
	        "(profile %s)'\n"
	        "set lmargin 12\nset rmargin 10\nset grid\nset key top right\nset yrange [0:*]\n"
	        "set ylabel 'rate (Gb/s, frame bytes)'\n"
	        "set xlabel 'time (ms from the start of the capture)'\n",
	        cl->out_dir, i, name, rpv, npv, cl->profile);
	fprintf(g,
	        "plot '%s/flow-%u.csv' using ($2/1000):3 with steps lw 2 lc rgb '#1f77b4' "
	        "title 'observed', '' using ($2/1000):4 with steps lw 2 dt 2 lc rgb '#d62728' "
	        "title 'model: %s'",
	        cl->out_dir, i, cl->profile);
	if (cl->whatif)
		fprintf(g,
		        ", '' using ($2/1000):5 with steps lw 2 dt 3 lc rgb '#2ca02c' "
		        "title 'what-if: %s'",
		        cl->whatif);
	/* CNPs and CE marks differ by orders of magnitude: one axis each. */
	fprintf(g,
	        "\nset ylabel 'CE-marked data packets per window'\n"
	        "set y2label 'CNPs per window'\nset y2tics\nset ytics nomirror\n"
	        "set y2range [0:*]\n"
	        "plot '%s/flow-%u.csv' using ($2/1000):7 with impulses lw 3 "
	        "lc rgb '#ff7f0e' title 'CE-marked data packets (left)', '' using "
	        "($2/1000):6 axes x1y2 with impulses lw 1 lc rgb '#d62728' "
	        "title 'CNPs (right)'\n"
	        "unset multiplot\n",
	        cl->out_dir, i);
	if (fclose(g))
		return -1;
	return run_gnuplot(gp, log);
}

/* ---- fit ---- */

struct cand {
	struct dcqcn_params p;
	struct dcqcn_prof prof;
	double err; /* joint mean relative error, -1 = not evaluated */
};

static const unsigned search_ids[NSEARCH] = {
    DCQCN_PARAM_rp_ai_rate, DCQCN_PARAM_rp_time_reset,  DCQCN_PARAM_rp_threshold,
    DCQCN_PARAM_rp_gd,      DCQCN_PARAM_rp_min_dec_fac, DCQCN_PARAM_rp_hai_rate,
};
static const uint32_t search_vals[NSEARCH][8] = {
    {1, 2, 5, 10, 20, 40, 80, 160}, {5, 20, 55, 100, 150, 300, 600, 1200},
    {0, 1, 2, 3, 4, 5, 6, 8},       {8, 9, 10, 11, 12, 13, 14, 15},
    {10, 25, 50, 75, 90, 0, 0, 0},  {10, 25, 50, 100, 200, 400, 800, 0},
};

static void param_set_u(struct dcqcn_params *p, unsigned id, uint32_t v)
{
	const struct dcqcn_param_info *pi = dcqcn_param_info(id);

	*(uint32_t *)((char *)p + pi->offset) = v;
}

/* Joint error of model @m over the flows with congestion signals (from @src, or all). */
static double joint_err(const struct rfw_cc *c, unsigned m, const uint8_t *src)
{
	double s = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < rfw_cc_nflows(c); i++) {
		double e;

		if (!rfw_cc_flow_has_signals(c, i) ||
		    (src && memcmp(rfw_cc_flow_src(c, i), src, 16) != 0))
			continue;
		e = rfw_cc_model_mean_err(c, i, m);
		if (e >= 0) {
			s += e;
			n++;
		}
	}
	return n ? s / n : -1;
}

struct fit_result {
	bool done;
	int named_best;
	double named_err[DCQCN_PROFILE__COUNT];
	struct cand best;
	double np_gap_us; /* -1 unknown */
	unsigned passes;
	int starts[FIT_STARTS]; /* named profiles the search started from */
	int best_start;         /* the start the best configuration was reached from */
	int closest;            /* the named profile reported: see do_fit */
	unsigned nstarts;
	uint8_t src[16]; /* the sender fitted */
	bool per_host;   /* false: jointly over every sender */
};

/* One pass with the given profiles as models; errors out in @err. */
static int eval_pass(struct cli *cl, const struct dcqcn_prof *const *profs, unsigned n, double *err)
{
	struct rfw_cc_opts o = cl->o;
	struct rfw_cc *c;
	struct pass ps;

	o.nmodels = n;
	for (unsigned i = 0; i < n; i++)
		o.models[i] = profs[i];
	o.on_window = NULL;
	o.on_event = NULL;
	o.whatif = false;
	if (cl->fit_src) { /* only this sender's flows count (the others run unscored) */
		o.filter.has_src = true;
		memcpy(o.filter.src, cl->fit_src, 16);
	}
	c = rfw_cc_new(&o);
	if (c == NULL || run_pass(cl, c, UINT64_MAX, false, &ps)) {
		rfw_cc_free(c);
		return -1;
	}
	rfw_cc_finish(c);
	for (unsigned i = 0; i < n; i++)
		err[i] = joint_err(c, i, cl->fit_src);
	rfw_cc_free(c);
	return 0;
}

/* The search's scratch: candidate configurations, their profiles and errors. */
struct fit_search {
	struct cand *cands; /* RFW_CC_MAX_MODELS */
	const struct dcqcn_prof *profs[RFW_CC_MAX_MODELS];
	double err[RFW_CC_MAX_MODELS];
	unsigned which[RFW_CC_MAX_MODELS]; /* the searched parameter each candidate changes */
	uint32_t val[RFW_CC_MAX_MODELS];   /* to this value */
};

/* Every named profile's error, the best of them, and the NP spacing the CNPs show. */
static void fit_named(const struct cli *cl, const struct rfw_cc *main_c, unsigned named_base,
                      struct fit_result *fr)
{
	uint64_t gap = UINT64_MAX;

	for (unsigned p = 0; p < DCQCN_PROFILE__COUNT; p++) {
		fr->named_err[p] = joint_err(main_c, named_base + p, cl->fit_src);
		if (fr->named_err[p] >= 0 &&
		    (fr->named_best < 0 || fr->named_err[p] < fr->named_err[fr->named_best] - 1e-9))
			fr->named_best = (int)p;
	}
	/* np_min_time_between_cnps: the NP's spacing shows in the CNPs themselves. */
	for (unsigned i = 0; i < rfw_cc_nflows(main_c); i++)
		if (rfw_cc_flow_has_signals(main_c, i) &&
		    rfw_cc_flow_min_cnp_gap(main_c, i) < gap &&
		    (!cl->fit_src || !memcmp(rfw_cc_flow_src(main_c, i), cl->fit_src, 16)))
			gap = rfw_cc_flow_min_cnp_gap(main_c, i);
	fr->np_gap_us = gap == UINT64_MAX ? -1 : floor((double)gap / 1000.0 + 0.02);
}

/* The start of search @s: the best named profile not used yet (nor one as good as a used
 * one); -1 when none is left. */
static int fit_next_start(const struct fit_result *fr, unsigned s)
{
	int start = -1;

	for (unsigned p = 0; p < DCQCN_PROFILE__COUNT; p++) {
		bool used = false;

		for (unsigned q = 0; q < s; q++)
			used |= fr->starts[q] == (int)p ||
			        fabs(fr->named_err[p] - fr->named_err[fr->starts[q]]) < 1e-9;
		if (!used && fr->named_err[p] >= 0 &&
		    (start < 0 || fr->named_err[p] < fr->named_err[start]))
			start = (int)p;
	}
	return start;
}

/* Candidates around @cur: every other value of every searched parameter. Their count. */
static unsigned fit_candidates(const struct cli *cl, const struct cand *cur, struct fit_search *fs)
{
	unsigned n = 0;
	char msg[128];

	for (unsigned k = 0; k < NSEARCH; k++)
		for (unsigned j = 0; j < 8; j++) {
			uint32_t v = search_vals[k][j];
			struct cand *cd = &fs->cands[n];

			if ((v == 0 && j > 0) || n >= RFW_CC_MAX_MODELS - 1 ||
			    v == dcqcn_param_get(&cur->p, search_ids[k]))
				continue;
			cd->p = cur->p;
			param_set_u(&cd->p, search_ids[k], v);
			if (dcqcn_prof_config(&cd->prof, &cd->p, cl->line_mbps, msg, sizeof(msg)) <
			    0)
				continue;
			fs->which[n] = k;
			fs->val[n] = v;
			fs->profs[n] = &cd->prof;
			n++;
		}
	return n;
}

/* The combination of the per-parameter winners (@next), evaluated; taken when better. */
static int fit_combined(struct cli *cl, const struct dcqcn_params *next, struct cand *cur,
                        struct fit_result *fr, struct fit_search *fs)
{
	char msg[128];

	if (memcmp(next, &cur->p, sizeof(*next)) == 0)
		return 0;
	fs->cands[0].p = *next;
	if (dcqcn_prof_config(&fs->cands[0].prof, next, cl->line_mbps, msg, sizeof(msg)) != 0)
		return 0;
	fs->profs[0] = &fs->cands[0].prof;
	if (eval_pass(cl, fs->profs, 1, fs->err))
		return -1;
	fr->passes++;
	if (fs->err[0] >= 0 && fs->err[0] < cur->err) {
		cur->p = *next;
		cur->err = fs->err[0];
	}
	return 0;
}

/* One pass from @cur: every candidate, then the combination of the winners. -1 on error,
 * 1 when it found nothing better (converged), 0 otherwise. */
static int fit_pass(struct cli *cl, struct cand *cur, struct fit_result *fr, struct fit_search *fs)
{
	struct dcqcn_params next = cur->p;
	double before = cur->err;
	unsigned n = fit_candidates(cl, cur, fs);

	if (eval_pass(cl, fs->profs, n, fs->err))
		return -1;
	fr->passes++;
	for (unsigned k = 0; k < NSEARCH; k++) {
		double be = cur->err;

		for (unsigned j = 0; j < n; j++)
			if (fs->which[j] == k && fs->err[j] >= 0 && fs->err[j] < be - 1e-4) {
				be = fs->err[j];
				param_set_u(&next, search_ids[k], fs->val[j]);
			}
	}
	for (unsigned j = 0; j < n; j++)
		if (fs->err[j] >= 0 && fs->err[j] < cur->err - 1e-9) {
			cur->p = fs->cands[j].p;
			cur->err = fs->err[j];
		}
	if (fit_combined(cl, &next, cur, fr, fs) != 0)
		return -1;
	return cur->err > before - 1e-4 ? 1 : 0;
}

static int do_fit(struct cli *cl, const struct rfw_cc *main_c, unsigned named_base,
                  struct fit_result *fr)
{
	static struct cand cands[RFW_CC_MAX_MODELS];
	struct fit_search fs = {.cands = cands};

	memset(fr, 0, sizeof(*fr));
	fr->named_best = -1;
	fr->closest = -1;
	if (cl->fit_src) {
		memcpy(fr->src, cl->fit_src, 16);
		fr->per_host = true;
	}
	fit_named(cl, main_c, named_base, fr);
	if (fr->named_best < 0)
		return 0;
	/* Coordinate search from each of the best three named profiles (a capture of a modified
	 * profile may sit nearer another one's basin): each pass tries every value of every
	 * searched parameter with the others held, then the combination of the per-parameter
	 * winners; up to three passes per start, fewer when a pass finds nothing better. The best
	 * configuration ever evaluated wins. */
	fr->best.err = -1;
	for (unsigned s = 0; s < FIT_STARTS; s++) {
		int start = fit_next_start(fr, s), rc;
		struct cand cur = {0};

		/* A named profile that explains the flows already (under 0.1 % error) ends it. */
		if (start < 0 || (s > 0 && fr->best.err < 0.001))
			break;
		fr->starts[s] = start;
		fr->nstarts = s + 1;
		dcqcn_params_init(&cur.p, (enum dcqcn_profile)start);
		cur.err = fr->named_err[start];
		if (fr->best.err < 0 || cur.err < fr->best.err) {
			fr->best = cur;
			fr->best_start = start;
		}
		for (unsigned pass = 0; pass < 3; pass++) {
			rc = fit_pass(cl, &cur, fr, &fs);
			if (rc < 0)
				return -1;
			if (cur.err < fr->best.err) {
				fr->best = cur;
				fr->best_start = start;
			}
			if (rc == 1) /* converged */
				break;
		}
	}
	/* The closest named profile: the one the best configuration is a modification of, when
	 * that configuration explains the flows clearly better (by 0.01) than any named profile;
	 * otherwise the named profile with the lowest error. */
	fr->closest =
	    fr->best.err < fr->named_err[fr->named_best] - 0.01 ? fr->best_start : fr->named_best;
	fr->done = true;
	return 0;
}

static json_t *fit_json(const struct fit_result *fr)
{
	json_t *o = json_object(), *pe, *par, *eq;

	if (fr == NULL) {
		json_object_set_new(o, "profile", json_null());
		json_object_set_new(o, "scope",
		                    json_string("no CNPs from this sender: nothing to fit"));
		return o;
	}
	pe = json_object();
	par = json_object();
	eq = json_array();

	json_object_set_new(o, "profile",
	                    fr->closest >= 0 ? json_string(dcqcn_profile_name(fr->closest))
	                                     : json_null());
	json_object_set_new(o, "lowest_error_profile",
	                    fr->named_best >= 0 ? json_string(dcqcn_profile_name(fr->named_best))
	                                        : json_null());
	for (unsigned p = 0; p < DCQCN_PROFILE__COUNT; p++) {
		json_object_set_new(pe, dcqcn_profile_name(p),
		                    fr->named_err[p] >= 0
		                        ? json_real(round(fr->named_err[p] * 1e4) / 1e4)
		                        : json_null());
		if (fr->closest >= 0 && (int)p != fr->closest && fr->named_err[p] >= 0 &&
		    fabs(fr->named_err[p] - fr->named_err[fr->closest]) <= 0.002)
			json_array_append_new(eq, json_string(dcqcn_profile_name(p)));
	}
	json_object_set_new(o, "indistinguishable_from", eq);
	json_object_set_new(o, "profile_rel_err_mean", pe);
	if (fr->done) {
		for (unsigned k = 0; k < NSEARCH; k++)
			json_object_set_new(
			    par, dcqcn_param_info(search_ids[k])->name,
			    json_integer(dcqcn_param_get(&fr->best.p, search_ids[k])));
		json_object_set_new(o, "rel_err_mean", json_real(round(fr->best.err * 1e4) / 1e4));
	}
	json_object_set_new(par, "np_min_time_between_cnps",
	                    fr->np_gap_us >= 0 ? json_integer((json_int_t)fr->np_gap_us)
	                                       : json_null());
	if (fr->done && fr->closest >= 0) {
		/* What the capture shows that the named profile does not: its fitted values. */
		json_t *ch = json_object();
		struct dcqcn_params np;

		dcqcn_params_init(&np, (enum dcqcn_profile)fr->closest);
		for (unsigned k = 0; k < NSEARCH; k++)
			if (dcqcn_param_get(&fr->best.p, search_ids[k]) !=
			    dcqcn_param_get(&np, search_ids[k]))
				json_object_set_new(
				    ch, dcqcn_param_info(search_ids[k])->name,
				    json_integer(dcqcn_param_get(&fr->best.p, search_ids[k])));
		if (fr->np_gap_us >= 0 && (uint32_t)fr->np_gap_us != np.np_min_time_between_cnps)
			json_object_set_new(ch, "np_min_time_between_cnps",
			                    json_integer((json_int_t)fr->np_gap_us));
		json_object_set_new(o, "changed_from_profile", ch);
	}
	json_object_set_new(o, "params", par);
	{
		json_t *st = json_array();

		for (unsigned k = 0; k < fr->nstarts; k++)
			json_array_append_new(st, json_string(dcqcn_profile_name(fr->starts[k])));
		json_object_set_new(o, "search_started_from", st);
	}
	json_object_set_new(o, "passes", json_integer(fr->passes + 1));
	if (fr->per_host) {
		char a[64], sc[96];

		snprintf(sc, sizeof(sc), "the flows with CNPs from %s",
		         rfw_ip_to_str(fr->src, a, sizeof(a)));
		json_object_set_new(o, "scope", json_string(sc));
	} else {
		json_object_set_new(o, "scope", json_string("all flows with CNPs, jointly"));
	}
	return o;
}

/* The fit that covers flow @i: its host's or the joint one; NULL when its host had no CNPs. */
static const struct fit_result *fit_of(const struct fit_result *fits, unsigned n,
                                       const struct rfw_cc *c, unsigned i)
{
	for (unsigned h = 0; h < n; h++)
		if (!fits[h].per_host || !memcmp(fits[h].src, rfw_cc_flow_src(c, i), 16))
			return &fits[h];
	return NULL;
}

/* Nearest standard Ethernet speed at or above @gbps. Frame bytes exclude preamble, IFG and FCS,
 * so a full link shows 1-2 % below its speed; microsecond timestamps can make a 50 us window
 * look a few % faster: up to 5 % over a speed still counts as that speed. */
static uint32_t round_speed(double gbps)
{
	static const uint32_t sp[] = {1, 10, 25, 40, 50, 100, 200, 400, 800};

	for (unsigned i = 0; i < sizeof(sp) / sizeof(sp[0]); i++)
		if (gbps <= sp[i] * 1.05) /* timestamp quantisation: us captures, 50 us windows */
			return sp[i] * 1000;
	return 800000;
}

/* What one `rocefw-replay cc` run holds besides the options: the models, the fits. */
struct cc_run {
	struct cli cl;
	const struct dcqcn_prof *profs[RFW_CC_MAX_MODELS];
	unsigned nm, named_base;
	struct fit_result fits[MAX_FIT_HOSTS];
	unsigned nfits;
	struct rfw_cc_stats st;
	struct pass ps;
	unsigned nifs;
	const char *setv[64];
	unsigned nset;
};

/* A numeric option (getopt value @opt) into @cl. 1: not a numeric option; 0: set; 2: bad. */
static int cc_num_opt(struct cli *cl, int opt, const char *arg)
{
	static const struct {
		int opt;
		const char *name;
		double lo, hi;
	} tab[] = {
	    {'l', "--line-rate-gbps", 1, 4000}, {'w', "--window-us", 1, 1e6},
	    {'r', "--react-us", 1, 1e7},        {'B', "--react-block-us", 0, 1e6},
	    {'c', "--cut-threshold", 0.1, 90},  {'d', "--cnp-delay-us", 0, 1e7},
	    {'i', "--idle-us", 1, 1e8},         {'M', "--max-median-err", 0, 100},
	    {'P', "--max-p95-err", 0, 100},     {'R', "--min-react-share", 0, 100},
	};
	unsigned k;
	double v;

	for (k = 0; k < sizeof(tab) / sizeof(tab[0]) && tab[k].opt != opt; k++)
		;
	if (k == sizeof(tab) / sizeof(tab[0]))
		return 1;
	if (rfw_opt_double(PROG, tab[k].name, arg, tab[k].lo, tab[k].hi, &v))
		return 2;
	switch (opt) {
	case 'l':
		cl->line_mbps = (uint32_t)(v * 1000);
		break;
	case 'w':
		cl->o.window_ns = (uint64_t)(v * 1000);
		break;
	case 'r':
		cl->o.react_ns = (uint64_t)(v * 1000);
		break;
	case 'B':
		cl->o.react_block_ns = (uint64_t)(v * 1000);
		break;
	case 'c':
		cl->o.cut_min = v / 100;
		break;
	case 'd':
		cl->o.cnp_delay_ns = (uint64_t)(v * 1000);
		break;
	case 'i':
		cl->o.idle_ns = (uint64_t)(v * 1000);
		break;
	case 'M':
		cl->o.max_median_err = v / 100;
		break;
	case 'P':
		cl->o.max_p95_err = v / 100;
		break;
	default: /* 'R' */
		cl->o.min_react_share = v / 100;
		break;
	}
	return 0;
}

/* A word or flag option. 0: taken; 2: bad usage; -1: --help printed (exit 0). */
static int cc_other_opt(struct cc_run *r, int opt, const char *arg, const char *word)
{
	struct cli *cl = &r->cl;
	struct dcqcn_params scratch; /* --profile's name check prints the known names */

	switch (opt) {
	case 'p':
		cl->profile = arg;
		if (dcqcn_profile_lookup(arg) < 0) {
			profile_params("--profile", arg, &scratch);
			return 2;
		}
		return 0;
	case 's':
		if (r->nset == 64) {
			fprintf(stderr, PROG ": --set: at most 64\n");
			return 2;
		}
		r->setv[r->nset++] = arg;
		return 0;
	case 'f':
		return parse_filter(arg, &cl->o.filter) ? 2 : 0;
	case 'F':
		cl->fit = true;
		return 0;
	case 'W':
		cl->whatif = arg;
		return profile_params("--what-if", arg, &cl->wparams) ? 2 : 0;
	case 'C':
		cl->csv_dir = arg;
		return 0;
	case 'G':
		cl->plot_dir = arg;
		return 0;
	case 'j':
		cl->json = true;
		return 0;
	case 'g':
	case 'n':
		cl->progress = opt == 'g';
		cl->progress_set = true;
		return 0;
	case 'h':
		cc_usage(stdout);
		return -1;
	case ':':
		fprintf(stderr, PROG ": option '%s' needs a value\n", word);
		return 2;
	default:
		fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", word);
		return 2;
	}
}

/* The command line into @r. 0: go on; else the exit status (-1: 0 after --help). */
static int cc_parse(struct cc_run *r, int argc, char **argv)
{
	static const struct option lo[] = {
	    {"profile", 1, 0, 'p'},
	    {"set", 1, 0, 's'},
	    {"line-rate-gbps", 1, 0, 'l'},
	    {"flow", 1, 0, 'f'},
	    {"window-us", 1, 0, 'w'},
	    {"react-us", 1, 0, 'r'},
	    {"react-block-us", 1, 0, 'B'},
	    {"cut-threshold", 1, 0, 'c'},
	    {"cnp-delay-us", 1, 0, 'd'},
	    {"idle-us", 1, 0, 'i'},
	    {"max-median-err", 1, 0, 'M'},
	    {"max-p95-err", 1, 0, 'P'},
	    {"min-react-share", 1, 0, 'R'},
	    {"fit", 0, 0, 'F'},
	    {"what-if", 1, 0, 'W'},
	    {"csv", 1, 0, 'C'},
	    {"plot", 1, 0, 'G'},
	    {"json", 0, 0, 'j'},
	    {"progress", 0, 0, 'g'},
	    {"no-progress", 0, 0, 'n'},
	    {"help", 0, 0, 'h'},
	    {0, 0, 0, 0},
	};
	int opt, rc;

	rfw_cc_opts_default(&r->cl.o);
	r->cl.profile = "unified";
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		rc = cc_num_opt(&r->cl, opt, optarg);
		if (rc == 1)
			rc = cc_other_opt(r, opt, optarg, argv[optind - 1]);
		if (rc != 0)
			return rc;
	}
	if (optind != argc - 1) {
		/* FILE may also come first: `cc FILE --json`. */
		fprintf(stderr, PROG ": expected exactly one capture file, got %d (see --help)\n",
		        argc - optind);
		return 2;
	}
	r->cl.file = argv[optind];
	return 0;
}

/* The parameters after --set, the progress default, the output directories. 0 or 2. */
static int cc_check(struct cc_run *r)
{
	struct cli *cl = &r->cl;

	profile_params("--profile", cl->profile, &cl->params);
	for (unsigned i = 0; i < r->nset; i++)
		if (set_param(&cl->params, r->setv[i]))
			return 2;
	if (!cl->progress_set)
		cl->progress = isatty(2);
	for (unsigned k = 0; k < 2; k++) {
		const char *d = k ? cl->plot_dir : cl->csv_dir;
		struct stat sb;

		if (d && (stat(d, &sb) || !S_ISDIR(sb.st_mode))) {
			fprintf(stderr, PROG ": %s: '%s' is not a directory\n",
			        k ? "--plot" : "--csv", d);
			return 2;
		}
	}
	cl->out_dir = cl->plot_dir ? cl->plot_dir : cl->csv_dir;
	return 0;
}

/* No --line-rate-gbps: a first pass over SCAN_FRAMES frames estimates it. 0 or 1. */
static int cc_estimate_line_rate(struct cli *cl)
{
	struct rfw_cc_opts so = cl->o;
	struct rfw_cc_stats st;
	struct rfw_cc *c;
	struct pass ps;

	so.nmodels = 0;
	so.estimate_line_rate = true;
	so.on_window = NULL;
	so.on_event = NULL;
	c = rfw_cc_new(&so);
	if (c == NULL)
		return 1;
	if (run_pass(cl, c, SCAN_FRAMES, false, &ps)) {
		rfw_cc_free(c);
		return 1;
	}
	rfw_cc_finish(c);
	rfw_cc_stats(c, &st);
	rfw_cc_free(c);
	cl->line_mbps = round_speed(st.max_host_gbps > 0 ? st.max_host_gbps : 100);
	cl->line_estimated = true;
	cl->have_t0 = false;
	return 0;
}

/* The models the pass runs: the profile, the what-if, every named profile for --fit. 0 or 2. */
static int cc_models(struct cc_run *r)
{
	struct cli *cl = &r->cl;
	char msg[160];

	if (dcqcn_prof_config(&cl->prof, &cl->params, cl->line_mbps, msg, sizeof(msg)) < 0) {
		fprintf(stderr, PROG ": --profile/--set: %s\n", msg);
		return 2;
	}
	r->profs[r->nm++] = &cl->prof;
	if (cl->whatif) {
		if (dcqcn_prof_config(&cl->wprof, &cl->wparams, cl->line_mbps, msg, sizeof(msg)) <
		    0) {
			fprintf(stderr, PROG ": --what-if: %s\n", msg);
			return 2;
		}
		r->profs[r->nm++] = &cl->wprof;
		cl->o.whatif = true;
	}
	r->named_base = r->nm;
	for (unsigned p = 0; cl->fit && p < DCQCN_PROFILE__COUNT; p++) {
		struct dcqcn_params np;

		dcqcn_params_init(&np, (enum dcqcn_profile)p);
		if (dcqcn_prof_config(&cl->named[p], &np, cl->line_mbps, msg, sizeof(msg)) < 0) {
			fprintf(stderr, PROG ": profile %s at %u Mb/s: %s\n", dcqcn_profile_name(p),
			        cl->line_mbps, msg);
			return 2;
		}
		r->profs[r->nm++] = &cl->named[p];
	}
	cl->o.nmodels = r->nm;
	for (unsigned i = 0; i < r->nm; i++)
		cl->o.models[i] = r->profs[i];
	cl->o.np_gap_ns = cl->prof.np_gap_ns;
	if (cl->out_dir) {
		cl->o.on_window = on_window;
		cl->o.on_event = on_event;
		cl->o.cb_ctx = cl;
	}
	return 0;
}

/* The measured pass over the whole capture into @c; CSV files closed. 0, or 1 when a
 * truncated capture was read to where it ends (results stand for what was read). */
static int cc_main_pass(struct cc_run *r, struct rfw_cc *c)
{
	struct cli *cl = &r->cl;
	int ret = 0;

	if (run_pass(cl, c, UINT64_MAX, cl->progress, &r->ps))
		return -1;
	rfw_cc_finish(c);
	rfw_cc_stats(c, &r->st);
	for (unsigned i = 0; i < MAX_CSV_FLOWS; i++) {
		if (cl->wf[i])
			fclose(cl->wf[i]);
		if (cl->ef[i])
			fclose(cl->ef[i]);
	}
	if (r->ps.read_error) {
		/* A capture cut off mid-record: report what was read, say so, and fail. */
		fprintf(stderr,
		        PROG
		        ": '%s': the file ends inside a record (truncated capture?) after %" PRIu64
		        " frames; results cover those frames: %s\n",
		        cl->file, r->ps.frames, r->ps.err);
		ret = 1;
	}
	if (cl->csv_overflow)
		fprintf(stderr, PROG ": CSV and plots written for the first %d flows only\n",
		        MAX_CSV_FLOWS);
	r->nifs = pcapng_interfaces(cl->file);
	return ret;
}

/* --fit: one fit per sending host (one NIC, one configuration), or one for all when there are
 * too many hosts. 0 or 1. */
static int cc_fit_hosts(struct cc_run *r, struct rfw_cc *c)
{
	const uint8_t *hosts[MAX_FIT_HOSTS] = {NULL};
	bool joint = false;
	unsigned n = 0;

	for (unsigned i = 0; i < rfw_cc_nflows(c) && !joint; i++) {
		unsigned h;

		if (!rfw_cc_flow_has_signals(c, i))
			continue;
		for (h = 0; h < n; h++)
			if (!memcmp(hosts[h], rfw_cc_flow_src(c, i), 16))
				break;
		if (h < n)
			continue;
		if (n == MAX_FIT_HOSTS)
			joint = true;
		else
			hosts[n++] = rfw_cc_flow_src(c, i);
	}
	if (joint || n == 0) {
		joint = true;
		n = 1;
	}
	r->nfits = n;
	for (unsigned h = 0; h < n; h++) {
		r->cl.fit_src = joint ? NULL : hosts[h];
		if (do_fit(&r->cl, c, r->named_base, &r->fits[h]))
			return 1;
	}
	r->cl.fit_src = NULL;
	return 0;
}

static json_t *cc_json_thresholds(const struct rfw_cc_opts *o)
{
	json_t *pr = json_object();

	json_object_set_new(pr, "window_us", json_real((double)o->window_ns / 1e3));
	json_object_set_new(pr, "react_us", json_real((double)o->react_ns / 1e3));
	json_object_set_new(pr, "react_block_us", json_real((double)o->react_block_ns / 1e3));
	json_object_set_new(pr, "cut_threshold", json_real(o->cut_min));
	json_object_set_new(pr, "cnp_delay_us", json_real((double)o->cnp_delay_ns / 1e3));
	json_object_set_new(pr, "idle_us", json_real((double)o->idle_ns / 1e3));
	json_object_set_new(pr, "max_median_err", json_real(o->max_median_err));
	json_object_set_new(pr, "max_p95_err", json_real(o->max_p95_err));
	json_object_set_new(pr, "min_react_share", json_real(o->min_react_share));
	return pr;
}

static json_t *cc_json_assumptions(const struct cc_run *r)
{
	json_t *as = json_array();

	json_array_append_new(as, json_string("senders are backlogged: a flow sends as "
	                                      "fast as its rate allows (perftest-like); "
	                                      "gaps over idle_us end a window unscored"));
	json_array_append_new(
	    as, json_string("rate = frame bytes on the wire (Ethernet header to ICRC) per window"));
	json_array_append_new(as, json_string("a CNP to QP Q from host X to Y belongs to "
	                                      "the flow Y->X whose ACKs it shares, "
	                                      "or to the only flow Y->X"));
	if (r->st.coarse_ts)
		json_array_append_new(as, json_string("microsecond timestamps: reactions "
		                                      "judged on blocks of packets spanning "
		                                      "10 us, not single gaps; reaction delays "
		                                      "and fitted parameters are coarser"));
	if (r->cl.line_estimated)
		json_array_append_new(as,
		                      json_string("line rate estimated from the fastest 50 us of "
		                                  "one source host, rounded up "
		                                  "to an Ethernet speed; behind a bottleneck "
		                                  "(capture_point after_marking) "
		                                  "it is the bottleneck's: give --line-rate-gbps"));
	if (r->nifs > 1)
		json_array_append_new(as,
		                      json_string("several capture interfaces: frames taken as "
		                                  "one stream; a data PSN seen "
		                                  "again counts as a repeat, not as new sending"));
	return as;
}

/* The run's header fields of the JSON report. */
static void cc_json_head(json_t *o, const struct cc_run *r)
{
	const struct cli *cl = &r->cl;
	const struct rfw_cc_stats *st = &r->st;

	json_object_set_new(o, "schema", json_string(RFW_CC_SCHEMA));
	json_object_set_new(o, "file", json_string(cl->file));
	json_object_set_new(o, "profile", json_string(cl->profile));
	json_object_set_new(o, "what_if", cl->whatif ? json_string(cl->whatif) : json_null());
	json_object_set_new(o, "line_rate_mbps", json_integer(cl->line_mbps));
	json_object_set_new(o, "line_rate_source",
	                    json_string(cl->line_estimated ? "estimated" : "option"));
	json_object_set_new(o, "frames", json_integer((json_int_t)st->frames));
	json_object_set_new(o, "roce_frames", json_integer((json_int_t)st->roce));
	json_object_set_new(o, "other_frames", json_integer((json_int_t)st->other));
	json_object_set_new(o, "malformed_frames", json_integer((json_int_t)st->malformed));
	json_object_set_new(o, "cnps_unattributed",
	                    json_integer((json_int_t)st->cnps_unattributed));
	json_object_set_new(o, "acks_unattributed",
	                    json_integer((json_int_t)st->acks_unattributed));
	json_object_set_new(o, "out_of_order_timestamps",
	                    json_integer((json_int_t)st->out_of_order_ts));
	json_object_set_new(o, "pcapng_interfaces", json_integer(r->nifs));
	json_object_set_new(o, "timestamp_resolution", json_string(st->coarse_ts ? "us" : "ns"));
	json_object_set_new(o, "truncated", json_boolean(r->ps.read_error));
	json_object_set_new(
	    o, "packets_per_second",
	    json_real(r->ps.secs > 0 ? round((double)r->ps.frames / r->ps.secs) : 0));
}

/* --json: the report on stdout. 0, or 1 when it could not be written. */
static int cc_print_json(const struct cc_run *r, struct rfw_cc *c)
{
	json_t *o = json_object(), *flows = json_array();
	int ret = 0;

	cc_json_head(o, r);
	json_object_set_new(o, "thresholds", cc_json_thresholds(&r->cl.o));
	json_object_set_new(o, "assumptions", cc_json_assumptions(r));
	for (unsigned i = 0; i < rfw_cc_nflows(c); i++) {
		json_t *f;

		if (rfw_cc_flow_filtered(c, i))
			continue;
		f = rfw_cc_flow_json(c, i, r->cl.profile, r->cl.whatif);
		if (r->cl.fit)
			json_object_set_new(f, "fit", fit_json(fit_of(r->fits, r->nfits, c, i)));
		json_array_append_new(flows, f);
	}
	json_object_set_new(o, "flows", flows);
	if (json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) <
	    0)
		ret = 1;
	putchar('\n');
	json_decref(o);
	return ret;
}

/* The text report on stdout. */
static void cc_print_text(const struct cc_run *r, struct rfw_cc *c)
{
	const struct cli *cl = &r->cl;
	const struct rfw_cc_stats *st = &r->st;

	printf("rocefw-replay cc: %s\n", cl->file);
	printf("  profile %s%s%s, line rate %u Mb/s (%s)\n", cl->profile,
	       cl->whatif ? ", what-if " : "", cl->whatif ? cl->whatif : "", cl->line_mbps,
	       cl->line_estimated ? "estimated: --line-rate-gbps to set" : "--line-rate-gbps");
	printf("  frames %" PRIu64 " (RoCEv2 %" PRIu64 ", other %" PRIu64 ", malformed %" PRIu64
	       "), %.2f Mpkt/s\n",
	       st->frames, st->roce, st->other, st->malformed,
	       r->ps.secs > 0 ? (double)r->ps.frames / r->ps.secs / 1e6 : 0.0);
	if (st->cnps_unattributed)
		printf("  CNPs not attributed to a flow: %" PRIu64 "\n", st->cnps_unattributed);
	if (r->nifs > 1)
		printf("  %u capture interfaces: frames taken as one stream, repeated PSNs "
		       "counted once\n",
		       r->nifs);
	printf("\n");
	rfw_cc_print(c, stdout);
	for (unsigned h = 0; cl->fit && h < r->nfits; h++) {
		json_t *fj = fit_json(&r->fits[h]);
		char *s =
		    json_dumps(fj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));

		printf("%sfit: %s\n", h ? "" : "\n", s ? s : "?");
		free(s);
		json_decref(fj);
	}
}

/* --plot: gnuplot over each flow's CSV. 0, or 1 at the first failure. */
static int cc_plots(struct cli *cl, struct rfw_cc *c)
{
	for (unsigned i = 0; i < rfw_cc_nflows(c) && i < MAX_CSV_FLOWS; i++) {
		char path[4096];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/flow-%u.csv", cl->out_dir, i);
		if (stat(path, &sb))
			continue;
		if (plot_flow(cl, c, i)) {
			fprintf(stderr,
			        PROG ": --plot: gnuplot failed for flow %u (is gnuplot installed? "
			             "tools/install-deps.sh installs gnuplot-nox; its output: "
			             "%s/flow-%u.gnuplot.log)\n",
			        i, cl->out_dir, i);
			return 1;
		}
	}
	return 0;
}

/* After the options: estimate, configure, run, fit, report. The exit status. */
static int cc_run(struct cc_run *r)
{
	struct cli *cl = &r->cl;
	struct rfw_cc *c;
	int ret, rc;

	if (cl->line_mbps == 0 && cc_estimate_line_rate(cl) != 0)
		return 1;
	rc = cc_models(r);
	if (rc != 0)
		return rc;
	c = rfw_cc_new(&cl->o);
	if (c == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	ret = cc_main_pass(r, c);
	if (ret < 0 || (cl->fit && cc_fit_hosts(r, c) != 0)) {
		rfw_cc_free(c);
		return 1;
	}
	if (cl->json)
		ret |= cc_print_json(r, c);
	else
		cc_print_text(r, c);
	if (cl->plot_dir)
		ret |= cc_plots(cl, c);
	rfw_cc_free(c);
	return ret;
}

int rfw_replay_cmd_cc(int argc, char **argv)
{
	struct cc_run *r = calloc(1, sizeof(*r));
	int rc;

	if (r == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	rc = cc_parse(r, argc, argv);
	if (rc == 0)
		rc = cc_check(r);
	if (rc == 0)
		rc = cc_run(r);
	free(r);
	return rc < 0 ? 0 : rc;
}
