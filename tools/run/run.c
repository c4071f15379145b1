/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-run: run an unmodified libibverbs program on the rocefw device (docs/verbs.md).
 *
 *   rocefw-run [--eal 'EAL OPTIONS'] [--ip A.B.C.D] [--dev NAME] [--progress thread|inline]
 *              [--max-qp N]
 *              -- PROGRAM [ARGS...]
 *
 * Puts librocefw-verbs.so in front of LD_PRELOAD and hands the configuration to it in the
 * environment (ROCEFW_EAL, ROCEFW_IP, ROCEFW_DEV, ROCEFW_PROGRESS; verbs/conf.h), then execs
 * PROGRAM. A bad option exits 2 naming it; a PROGRAM that cannot be run exits 127.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs/conf.h"

#ifndef RFW_VERBS_INSTALLED
#define RFW_VERBS_INSTALLED "/usr/local/lib/x86_64-linux-gnu/librocefw-verbs.so"
#endif

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: rocefw-run [--eal 'EAL OPTIONS'] [--ip A.B.C.D] [--dev NAME]\n"
	        "                  [--progress thread|inline] [--max-qp N] -- PROGRAM [ARGS...]\n"
	        "  --eal OPTS       DPDK EAL options of the port the device uses (e.g.\n"
	        "                   '--vdev=net_memif0,role=server,socket=/tmp/m.sock'); without\n"
	        "                   it: a built-in loopback port in this process\n"
	        "  --ip A.B.C.D     the port's IPv4 address, GID index 0 (default 10.0.0.1;\n"
	        "                   required with --eal)\n"
	        "  --dev NAME       device name (default rocefw0)\n"
	        "  --progress MODE  thread: a progress thread drives the NIC (default);\n"
	        "                   inline: the program's verb calls drive it\n"
	        "  --max-qp N       QPs the device holds, QP1 included (default 256, 16..65536)\n"
	        "Environment: ROCEFW_VERBS_LIB overrides the library's path.\n");
}

static void bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "rocefw-run: %s%s%s: %s\n", opt, val ? " " : "", val ? val : "", why);
	exit(2);
}

/* The build tree's library beside this binary (build/tools/run -> build/verbs), else the
 * installed one. */
static const char *library_path(char *buf, size_t len)
{
	const char *env = getenv("ROCEFW_VERBS_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env != NULL && *env != '\0')
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(buf, len, "%s/../../verbs/librocefw-verbs.so", exe);
			if (access(buf, R_OK) == 0)
				return buf;
		}
	}
	return RFW_VERBS_INSTALLED;
}

static void set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(len);

	if (v == NULL)
		exit(1);
	snprintf(v, len, "%s%s%s", lib, old && *old ? " " : "", old && *old ? old : "");
	setenv("LD_PRELOAD", v, 1);
	free(v);
}

static void set_or_unset(const char *name, const char *val)
{
	if (val != NULL)
		setenv(name, val, 1);
	else
		unsetenv(name);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"eal", required_argument, NULL, 'e'},
	                                     {"ip", required_argument, NULL, 'i'},
	                                     {"dev", required_argument, NULL, 'd'},
	                                     {"progress", required_argument, NULL, 'p'},
	                                     {"max-qp", required_argument, NULL, 'q'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *eal = NULL, *ip = NULL, *dev = NULL, *prog = NULL, *max_qp = NULL;
	char libbuf[PATH_MAX + 64];
	uint32_t ip4;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			eal = optarg;
			if (strlen(eal) >= RFW_VCONF_EAL_MAX)
				bad("--eal", NULL, "options too long");
			break;
		case 'i':
			ip = optarg;
			if (rfw_vconf_parse_ip4(ip, &ip4) != 0)
				bad("--ip", ip, "not an IPv4 address");
			break;
		case 'd':
			dev = optarg;
			if (*dev == '\0' || strlen(dev) >= RFW_VCONF_NAME_MAX)
				bad("--dev", dev, "name empty or longer than 31 characters");
			break;
		case 'p':
			prog = optarg;
			if (strcmp(prog, "thread") != 0 && strcmp(prog, "inline") != 0)
				bad("--progress", prog, "expected thread or inline");
			break;
		case 'q':
			max_qp = optarg;
			if (rfw_vconf_parse_max_qp(max_qp, &ip4) != 0)
				bad("--max-qp", max_qp, "expected a QP count, 16..65536");
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			bad(argv[optind - 1], NULL, "needs a value");
			break;
		default:
			bad(argv[optind - 1], NULL, "unknown option (see --help)");
		}
	}
	if (optind >= argc)
		bad("--", NULL, "no PROGRAM to run");
	if (eal != NULL && ip == NULL)
		bad("--eal", NULL, "needs --ip (the port's address; the peer's differs)");
	set_or_unset("ROCEFW_EAL", eal);
	set_or_unset("ROCEFW_IP", ip);
	set_or_unset("ROCEFW_DEV", dev);
	set_or_unset("ROCEFW_PROGRESS", prog);
	set_or_unset("ROCEFW_MAX_QP", max_qp);
	set_preload(library_path(libbuf, sizeof(libbuf)));
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "rocefw-run: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
