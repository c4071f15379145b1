/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-cc: run the rate machine of a profile on an event script and print the trajectory.
 *
 *   rocefw-cc [--profile NAME] [--profile-file F] [--set name=value]... [--line-rate-mbps R]
 *             [--algo dcqcn|timely] [--counters] [SCRIPT]
 *
 * Script: CSV lines "t_ns,event[,arg]", event one of cnp, tx (arg = bytes), tick, rtt (arg =
 * RTT in ns, TIMELY); '#' comments and blank lines allowed; times must not go backwards. Read
 * from SCRIPT, or standard input when SCRIPT is absent or "-".
 *
 * Output (schema 2, see docs/cc.md): a first comment line "# rocefw-cc schema 2 ...", then a
 * CSV header and one row per script event and per internal timer firing between events.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "ctrl/rfw_num.h"
#include "tools/common/rfw_opt.h"

#define SCHEMA_VERSION         2
#define DEFAULT_LINE_RATE_MBPS 100000u
/* The latest script time, ns (2^62, about 146 years): the machine's deadlines are the event's
 * time plus periods of at most seconds, and must not wrap past 2^64. */
#define SCRIPT_T_MAX (UINT64_C(1) << 62)

static const char *prog = "rocefw-cc";

struct opts {
	enum cc_algo algo;
	const char *profile;
	uint32_t line_rate_mbps;
	bool counters;
	struct dcqcn_params dp;
	struct timely_params tp;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [options] [SCRIPT]\n"
	    "Run a congestion-control rate machine on an event script; print the trajectory "
	    "as CSV.\n\n"
	    "SCRIPT  CSV lines 't_ns,event[,arg]': cnp | tx,BYTES | tick | rtt,RTT_NS;\n"
	    "        '#' comments and blank lines allowed; standard input if absent or '-'.\n\n"
	    "options:\n"
	    "  --profile NAME        built-in DCQCN profile (default unified; --list-profiles)\n"
	    "  --profile-file F      INI file: [dcqcn] / [timely] sections of 'name = value',\n"
	    "                        applied on top of --profile\n"
	    "  --set name=value      set one parameter (repeatable; applied after the file)\n"
	    "  --line-rate-mbps R    port line rate: start rate and max when rp_max_rate is 0\n"
	    "                        (default %u)\n"
	    "  --algo dcqcn|timely   rate machine to run (default dcqcn)\n"
	    "  --counters            print the counters as '# counter NAME VALUE' at the end\n"
	    "  --dump-profile        print the effective parameters (after --profile, files and\n"
	    "                        --set) as an INI file for --profile-file, and exit\n"
	    "  --list-params         print the parameter table (units, ranges, profile values)\n"
	    "  --list-profiles       print the built-in profiles\n"
	    "  --help                this text\n\n"
	    "Output columns (schema %d): t_ns,rc_mbps,rt_mbps,alpha,t_stage,bc_stage,event,state,\n"
	    "actions,cnp_handled,cnp_ignored,rate_cuts (docs/cc.md)\n",
	    prog, DEFAULT_LINE_RATE_MBPS, SCHEMA_VERSION);
}

static void list_profiles(void)
{
	for (unsigned int i = 0; i < DCQCN_PROFILE__COUNT; i++)
		printf("%-12s %s\n", dcqcn_profile_name(i), dcqcn_profile_desc(i));
}

static void list_params(void)
{
	printf("# DCQCN parameters (--profile, --set, [dcqcn] in --profile-file)\n");
	printf("%-30s %-11s %-14s", "name", "unit", "range");
	for (unsigned int p = 0; p < DCQCN_PROFILE__COUNT; p++)
		printf(" %11s", dcqcn_profile_name(p));
	printf("  meaning\n");
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++) {
		const struct dcqcn_param_info *pi = dcqcn_param_info(i);
		char range[32];

		snprintf(range, sizeof(range), "%u..%u", pi->min, pi->max);
		printf("%-30s %-11s %-14s", pi->name, pi->unit, range);
		for (unsigned int p = 0; p < DCQCN_PROFILE__COUNT; p++)
			printf(" %11u", pi->def[p]);
		printf("  %s\n", pi->meaning);
	}
	printf("\n# TIMELY parameters (--algo timely; --set, [timely] in --profile-file)\n");
	printf("%-30s %-11s %-14s %11s  meaning\n", "name", "unit", "range", "default");
	for (unsigned int i = 0; i < TIMELY_PARAM__COUNT; i++) {
		const struct timely_param_info *pi = timely_param_info(i);
		char range[32];

		snprintf(range, sizeof(range), "%u..%u", pi->min, pi->max);
		printf("%-30s %-11s %-14s %11u  %s\n", pi->name, pi->unit, range, pi->def,
		       pi->meaning);
	}
}

/* The effective parameter set as an INI file that --profile-file reads back. */
static void dump_profile(const struct opts *o)
{
	printf("; rocefw-cc profile: base '%s' plus the files and --set options given\n",
	       o->profile);
	printf("[dcqcn]\n");
	for (unsigned int i = 0; i < DCQCN_PARAM__COUNT; i++) {
		const struct dcqcn_param_info *pi = dcqcn_param_info(i);

		printf("%-30s = %-10u ; %s, %s\n", pi->name, dcqcn_param_get(&o->dp, i), pi->unit,
		       pi->meaning);
	}
	printf("\n[timely]\n");
	for (unsigned int i = 0; i < TIMELY_PARAM__COUNT; i++) {
		const struct timely_param_info *pi = timely_param_info(i);

		printf("%-30s = %-10u ; %s, %s\n", pi->name, timely_param_get(&o->tp, i), pi->unit,
		       pi->meaning);
	}
}

/* Set name=value in whichever table knows the name. */
static int set_param(struct opts *o, const char *name, const char *value, char *msg, size_t len)
{
	int rc = dcqcn_param_set_msg(&o->dp, name, value, msg, len);

	if (rc == -ENOENT)
		rc = timely_param_set_msg(&o->tp, name, value, msg, len);
	return rc;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/*
 * A tiny INI reader: [section] lines, "name = value" lines, ';' or '#' comments. The [dcqcn]
 * section sets DCQCN parameters, [timely] TIMELY ones; anything else is an error with its line.
 */
static int load_profile_stream(struct opts *o, FILE *f, const char *path)
{
	char line[1024], msg[256];
	enum { SEC_NONE, SEC_DCQCN, SEC_TIMELY } sec = SEC_NONE;
	unsigned int lineno = 0;
	int rc = 0;

	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *s, *eq, *c;

		lineno++;
		c = strpbrk(line, ";#");
		if (c != NULL)
			*c = '\0';
		s = trim(line);
		if (*s == '\0')
			continue;
		if (*s == '[') {
			if (strcmp(s, "[dcqcn]") == 0) {
				sec = SEC_DCQCN;
			} else if (strcmp(s, "[timely]") == 0) {
				sec = SEC_TIMELY;
			} else {
				fprintf(stderr,
				        "%s: %s:%u: unknown section %s (expected [dcqcn] or "
				        "[timely])\n",
				        prog, path, lineno, s);
				rc = -1;
			}
			continue;
		}
		eq = strchr(s, '=');
		if (eq == NULL) {
			fprintf(stderr, "%s: %s:%u: expected 'name = value'\n", prog, path, lineno);
			rc = -1;
			continue;
		}
		*eq = '\0';
		if (sec == SEC_NONE) {
			fprintf(stderr, "%s: %s:%u: '%s' outside a [dcqcn] or [timely] section\n",
			        prog, path, lineno, trim(s));
			rc = -1;
		} else if ((sec == SEC_DCQCN ? dcqcn_param_set_msg(&o->dp, trim(s), trim(eq + 1),
		                                                   msg, sizeof(msg))
		                             : timely_param_set_msg(&o->tp, trim(s), trim(eq + 1),
		                                                    msg, sizeof(msg))) < 0) {
			fprintf(stderr, "%s: %s:%u: %s\n", prog, path, lineno, msg);
			rc = -1;
		}
	}
	return rc;
}

static int load_profile_file(struct opts *o, const char *path)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (f == NULL) {
		fprintf(stderr, "%s: --profile-file %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	rc = load_profile_stream(o, f, path);
	fclose(f);
	return rc;
}

/* A decimal (or 0x-hex) unsigned integer, nothing else. */
static bool parse_u64(const char *s, uint64_t *out)
{
	return rfw_num_u64(s, 0, UINT64_MAX, out) == 0;
}

/* ---- trajectory output ---- */

struct machine {
	struct cc_flow flow;
	struct dcqcn_prof dprof;
	struct timely_prof tprof;
};

/* A rate in Mb/s with six decimals: exact b/s. */
static void print_mbps(uint64_t bps)
{
	printf("%" PRIu64 ".%06" PRIu64, bps / 1000000, bps % 1000000);
}

/* alpha (@p bits fraction bits) as a decimal fraction with 15 digits, from integers only:
 * floor(alpha * 10^15 / 2^bits), one digit at a time so nothing overflows. */
static void print_alpha(uint64_t alpha, uint32_t bits)
{
	uint64_t one = 1ull << bits, whole = alpha >> bits, rem = alpha & (one - 1);
	char digits[16];

	for (unsigned int i = 0; i < 15; i++) {
		rem *= 10; /* rem < 2^48: times 10 stays far inside 64 bits */
		digits[i] = (char)('0' + (rem >> bits));
		rem &= one - 1;
	}
	digits[15] = '\0';
	printf("%" PRIu64 ".%s", whole, digits);
}

static void print_row(struct machine *m, uint64_t t, const char *event)
{
	struct cc_flow *f = &m->flow;

	printf("%" PRIu64 ",", t);
	if (f->algo == CC_ALGO_DCQCN) {
		struct dcqcn_rp *rp = &f->u.dcqcn;
		uint32_t act = dcqcn_rp_take_actions(rp);
		bool any = false;

		print_mbps(dcqcn_rp_rate_bps(rp));
		putchar(',');
		print_mbps(dcqcn_rp_target_bps(rp));
		putchar(',');
		print_alpha(dcqcn_rp_alpha_raw(rp), dcqcn_rp_alpha_bits(rp));
		printf(",%u,%u,%s,%s,", rp->t_stage, rp->bc_stage, event,
		       dcqcn_rp_state_name(rp->state));
		for (unsigned int b = 0; b < DCQCN_ACT__COUNT; b++) {
			if (act & (1u << b)) {
				printf("%s%s", any ? "+" : "", dcqcn_action_name(b));
				any = true;
			}
		}
		printf("%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", any ? "" : "-",
		       rp->cnt[DCQCN_RP_CNT_rp_cnp_handled], rp->cnt[DCQCN_RP_CNT_rp_cnp_ignored],
		       rp->cnt[DCQCN_RP_CNT_rp_rate_cuts]);
	} else {
		struct timely *tm = &f->u.timely;

		print_mbps(tm->rate_kbps * 1000);
		putchar(',');
		print_mbps(tm->rate_kbps * 1000);
		printf(",0,0,0,%s,-,-,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", event,
		       tm->cnt[TIMELY_CNT_timely_cnp_ignored],
		       tm->cnt[TIMELY_CNT_timely_cnp_ignored],
		       tm->cnt[TIMELY_CNT_timely_high_rtt_dec] +
		           tm->cnt[TIMELY_CNT_timely_gradient_dec]);
	}
}

/* Fire and print every timer due at or before @p t, one row per distinct deadline, so the
 * event row that follows shows only what the event itself did. */
static void run_timers_upto(struct machine *m, uint64_t t)
{
	uint64_t d;

	while ((d = cc_next_deadline(&m->flow)) <= t) {
		cc_on_timer(&m->flow, d);
		print_row(m, d, "timer");
	}
}

/* Split @s on every comma into up to 4 trimmed fields (strtok would merge ",," and hide an
 * empty field). Returns the number of fields, which may exceed 4. */
static unsigned int split_fields(char *s, char *f[4])
{
	unsigned int nf = 0;
	char *save;

	for (char *tok = s;; tok = save + 1) {
		save = strchr(tok, ',');
		if (save != NULL)
			*save = '\0';
		if (nf < 4)
			f[nf] = trim(tok);
		nf++;
		if (save == NULL)
			return nf;
	}
}

/* Check one script line's event and argument (@nf fields in @f); 0, or -1 said on stderr. */
static int check_event(char *const f[4], unsigned int nf, uint64_t *arg, const char *name,
                       unsigned int lineno)
{
	bool tx = strcmp(f[1], "tx") == 0;

	if (tx || strcmp(f[1], "rtt") == 0) {
		if (nf != 3 || !parse_u64(f[2], arg) || (tx && *arg > UINT32_MAX)) {
			fprintf(stderr, "%s: %s:%u: event %s needs an integer argument%s\n", prog,
			        name, lineno, f[1],
			        tx ? " (bytes, at most 4294967295)" : " (RTT in ns)");
			return -1;
		}
	} else if (strcmp(f[1], "cnp") == 0 || strcmp(f[1], "tick") == 0) {
		if (nf != 2) {
			fprintf(stderr, "%s: %s:%u: event %s takes no argument\n", prog, name,
			        lineno, f[1]);
			return -1;
		}
	} else {
		fprintf(stderr, "%s: %s:%u: unknown event '%s' (expected cnp, tx, tick or rtt)\n",
		        prog, name, lineno, f[1]);
		return -1;
	}
	return 0;
}

/* Parse one script line into its time @t (not before @last_t), event and argument. */
static int parse_line(char *s, char *f[4], uint64_t *t, uint64_t *arg, uint64_t last_t,
                      const char *name, unsigned int lineno)
{
	unsigned int nf = split_fields(s, f);

	if (nf < 2 || nf > 3 || *f[1] == '\0') {
		fprintf(stderr, "%s: %s:%u: expected 't_ns,event[,arg]'\n", prog, name, lineno);
		return -1;
	}
	if (!parse_u64(f[0], t)) {
		fprintf(stderr, "%s: %s:%u: bad time '%s' (expected ns, an integer)\n", prog, name,
		        lineno, f[0]);
		return -1;
	}
	if (*t > SCRIPT_T_MAX) {
		fprintf(stderr, "%s: %s:%u: time %" PRIu64 " beyond the latest, %" PRIu64 " ns\n",
		        prog, name, lineno, *t, SCRIPT_T_MAX);
		return -1;
	}
	if (*t < last_t) {
		fprintf(stderr, "%s: %s:%u: time %" PRIu64 " goes back (previous %" PRIu64 ")\n",
		        prog, name, lineno, *t, last_t);
		return -1;
	}
	return check_event(f, nf, arg, name, lineno);
}

static int run_script(struct machine *m, FILE *in, const char *name)
{
	char line[512];
	unsigned int lineno = 0;
	uint64_t last_t = 0;

	while (fgets(line, sizeof(line), in) != NULL) {
		char *s, *f[4];
		uint64_t t, arg = 0;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(in)) {
			fprintf(stderr, "%s: %s:%u: line too long\n", prog, name, lineno);
			return -1;
		}
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		if (parse_line(s, f, &t, &arg, last_t, name, lineno) != 0)
			return -1;
		last_t = t;
		run_timers_upto(m, t);
		if (strcmp(f[1], "cnp") == 0)
			cc_on_cnp(&m->flow, t);
		else if (strcmp(f[1], "tx") == 0)
			cc_on_tx(&m->flow, (uint32_t)arg, t);
		else if (strcmp(f[1], "rtt") == 0)
			cc_on_rtt(&m->flow, arg, t);
		else
			cc_on_timer(&m->flow, t);
		print_row(m, t, f[1]);
	}
	if (ferror(in)) {
		fprintf(stderr, "%s: %s: read error\n", prog, name);
		return -1;
	}
	return 0;
}

static void print_counters(const struct machine *m)
{
	if (m->flow.algo == CC_ALGO_DCQCN) {
		for (unsigned int i = 0; i < DCQCN_RP_CNT__COUNT; i++)
			printf("# counter %s %" PRIu64 "\n", dcqcn_rp_counter_name(i),
			       m->flow.u.dcqcn.cnt[i]);
	} else {
		for (unsigned int i = 0; i < TIMELY_CNT__COUNT; i++)
			printf("# counter %s %" PRIu64 "\n", timely_counter_name(i),
			       m->flow.u.timely.cnt[i]);
	}
}

enum {
	OPT_PROFILE = 256,
	OPT_PROFILE_FILE,
	OPT_SET,
	OPT_LINE_RATE,
	OPT_ALGO,
	OPT_COUNTERS,
	OPT_LIST_PARAMS,
	OPT_DUMP_PROFILE,
	OPT_LIST_PROFILES,
	OPT_HELP,
};

/* The command line besides struct opts: --set and --profile-file are applied after --profile
 * wherever they appear; the script; --dump-profile. */
struct cli {
	const char *sets[256], *files[16];
	unsigned int nsets, nfiles;
	const char *script;
	bool dump;
};

/* Append @arg to @list (@n of @max); 0, or 2 after naming @opt. */
static int cli_push(const char **list, unsigned int *n, size_t max, const char *opt,
                    const char *what, const char *arg)
{
	if (*n == max) {
		fprintf(stderr, "%s: %s: at most %zu%s\n", prog, opt, max, what);
		return 2;
	}
	list[(*n)++] = arg;
	return 0;
}

/* One option (getopt value @c). 0: taken; 2: bad usage; -1: an answer was printed (exit 0). */
static int cli_opt(struct opts *o, struct cli *cl, int c, const char *arg, const char *word)
{
	int rc;

	switch (c) {
	case OPT_PROFILE:
		o->profile = arg;
		return 0;
	case OPT_PROFILE_FILE:
		return cli_push(cl->files, &cl->nfiles, sizeof(cl->files) / sizeof(cl->files[0]),
		                "--profile-file", " files", arg);
	case OPT_SET:
		return cli_push(cl->sets, &cl->nsets, sizeof(cl->sets) / sizeof(cl->sets[0]),
		                "--set", "", arg);
	case OPT_LINE_RATE:
		return rfw_opt_u32(prog, "--line-rate-mbps", arg, 1, 4000000, &o->line_rate_mbps)
		           ? 2
		           : 0;
	case OPT_ALGO:
		rc = cc_algo_lookup(arg);
		if (rc < 0) {
			fprintf(stderr, "%s: --algo: unknown '%s' (dcqcn or timely)\n", prog, arg);
			return 2;
		}
		o->algo = (enum cc_algo)rc;
		return 0;
	case OPT_COUNTERS:
		o->counters = true;
		return 0;
	case OPT_DUMP_PROFILE:
		cl->dump = true;
		return 0;
	case OPT_LIST_PARAMS:
		list_params();
		return -1;
	case OPT_LIST_PROFILES:
		list_profiles();
		return -1;
	case OPT_HELP:
		usage(stdout);
		return -1;
	case ':':
		fprintf(stderr, "%s: option %s needs a value\n", prog, word);
		return 2;
	default:
		fprintf(stderr, "%s: unknown option '%s' (see --help)\n", prog, word);
		return 2;
	}
}

/* 0: go on; else the exit status (-1: 0). */
static int cli_parse(int argc, char **argv, struct opts *o, struct cli *cl)
{
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, OPT_PROFILE},
	    {"profile-file", required_argument, NULL, OPT_PROFILE_FILE},
	    {"set", required_argument, NULL, OPT_SET},
	    {"line-rate-mbps", required_argument, NULL, OPT_LINE_RATE},
	    {"algo", required_argument, NULL, OPT_ALGO},
	    {"counters", no_argument, NULL, OPT_COUNTERS},
	    {"list-params", no_argument, NULL, OPT_LIST_PARAMS},
	    {"dump-profile", no_argument, NULL, OPT_DUMP_PROFILE},
	    {"list-profiles", no_argument, NULL, OPT_LIST_PROFILES},
	    {"help", no_argument, NULL, OPT_HELP},
	    {NULL, 0, NULL, 0},
	};
	int c, rc;

	o->algo = CC_ALGO_DCQCN;
	o->profile = "unified";
	o->line_rate_mbps = DEFAULT_LINE_RATE_MBPS;
	cl->script = "-";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		rc = cli_opt(o, cl, c, optarg, argv[optind - 1]);
		if (rc != 0)
			return rc;
	}
	if (optind < argc)
		cl->script = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "%s: one script at most, got '%s' too\n", prog, argv[optind]);
		return 2;
	}
	return 0;
}

/* The profile, then the profile files, then every --set. 0 or 2. */
static int cli_params(struct opts *o, const struct cli *cl)
{
	char msg[256];
	int prof_id = dcqcn_profile_lookup(o->profile);

	if (prof_id < 0) {
		fprintf(stderr, "%s: --profile: unknown '%s' (see --list-profiles)\n", prog,
		        o->profile);
		return 2;
	}
	dcqcn_params_init(&o->dp, (enum dcqcn_profile)prof_id);
	timely_params_init(&o->tp);
	for (unsigned int i = 0; i < cl->nfiles; i++)
		if (load_profile_file(o, cl->files[i]) < 0)
			return 2;
	for (unsigned int i = 0; i < cl->nsets; i++) {
		char buf[256], *eq;

		snprintf(buf, sizeof(buf), "%s", cl->sets[i]);
		eq = strchr(buf, '=');
		if (eq == NULL) {
			fprintf(stderr, "%s: --set '%s': expected name=value\n", prog, cl->sets[i]);
			return 2;
		}
		*eq = '\0';
		if (set_param(o, trim(buf), trim(eq + 1), msg, sizeof(msg)) < 0) {
			fprintf(stderr, "%s: --set %s\n", prog, msg);
			return 2;
		}
	}
	return 0;
}

/* The rate machine of --algo at the line rate. 0 or 2. */
static int machine_init(struct machine *m, const struct opts *o)
{
	char msg[256];
	int rc;

	if (o->algo == CC_ALGO_DCQCN) {
		rc = dcqcn_prof_config(&m->dprof, &o->dp, o->line_rate_mbps, msg, sizeof(msg));
		if (rc == 0)
			cc_flow_init_dcqcn(&m->flow, &m->dprof);
	} else {
		rc = timely_prof_config(&m->tprof, &o->tp, o->line_rate_mbps, msg, sizeof(msg));
		if (rc == 0)
			cc_flow_init_timely(&m->flow, &m->tprof);
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		return 2;
	}
	return 0;
}

/* The trajectory of @script ("-": stdin) on stdout. The exit status. */
static int run_file(struct machine *m, const struct opts *o, const char *script)
{
	FILE *in;
	int rc;

	if (strcmp(script, "-") == 0) {
		in = stdin;
		script = "<stdin>";
	} else {
		in = fopen(script, "r");
		if (in == NULL) {
			fprintf(stderr, "%s: %s: %s\n", prog, script, strerror(errno));
			return 1;
		}
	}
	printf("# rocefw-cc schema %d algo=%s profile=%s line_rate_mbps=%u\n", SCHEMA_VERSION,
	       cc_algo_name(o->algo), o->algo == CC_ALGO_DCQCN ? o->profile : "-",
	       o->line_rate_mbps);
	printf("t_ns,rc_mbps,rt_mbps,alpha,t_stage,bc_stage,event,state,actions,cnp_handled,"
	       "cnp_ignored,rate_cuts\n");
	rc = run_script(m, in, script);
	if (in != stdin)
		fclose(in);
	if (rc == 0 && o->counters)
		print_counters(m);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		return 1;
	}
	return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	static struct opts o;
	static struct machine m;
	struct cli cl = {.nsets = 0};
	char vmsg[256];
	int rc = cli_parse(argc, argv, &o, &cl);

	if (rc == 0)
		rc = cli_params(&o, &cl);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (cl.dump) {
		if (dcqcn_params_validate(&o.dp, vmsg, sizeof(vmsg)) < 0) {
			fprintf(stderr, "%s: %s\n", prog, vmsg);
			return 2;
		}
		dump_profile(&o);
		return 0;
	}
	if (machine_init(&m, &o) != 0)
		return 2;
	return run_file(&m, &o, cl.script);
}
