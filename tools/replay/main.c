/* SPDX-License-Identifier: BSD-3-Clause */
/* rocefw-replay: RoCEv2 capture tools. `check` verifies and accounts a capture. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <pcap/pcap.h>

#include "cc_cli.h"
#include "check.h"
#include "wire/ib_hdr.h"
#include "tools/common/rfw_opt.h"

#define PROG "rocefw-replay"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: " PROG " check [--json] [--max-list N] FILE\n"
	        "       " PROG " cc FILE [--profile P] [--set name=value]... [--flow FILTER]\n"
	        "                 [--fit] [--what-if P2] [--csv DIR] [--plot DIR] [--json] ...\n"
	        "       " PROG " opcodes\n"
	        "       " PROG " --help | --version\n"
	        "\n"
	        "check     decode every frame of a pcap or pcapng capture (Ethernet, 802.1Q,\n"
	        "          Linux cooked v1/v2 or raw IP), verify every RoCEv2 ICRC, and count\n"
	        "          opcodes, flows (src, dst, destination QP), ECN codepoints, CNPs, AETH\n"
	        "          syndromes, PSN gaps and retransmissions; list malformed frames.\n"
	        "  --json        one JSON object (schema " RFW_CHECK_SCHEMA ") on stdout\n"
	        "  --max-list N  list at most N malformed/flagged frames (default 100; all are\n"
	        "                counted)\n"
	        "cc        congestion-control validation per flow: observed vs modelled DCQCN\n"
	        "          rate, CNP reaction, NP conformance, --fit ('" PROG " cc --help')\n"
	        "opcodes   print the opcode table (value, name, headers) rocefw decodes\n"
	        "\n"
	        "Exit status: 0 when the file was read, whatever it contains; 1 when it could not\n"
	        "be opened or read; 2 for bad usage.\n");
}

static int cmd_opcodes(void)
{
	for (unsigned op = 0; op < 256; op++) {
		const struct rfw_ib_opcode_info *oi = rfw_ib_opcode_info((uint8_t)op);

		if (oi)
			printf("0x%02x %-30s hdr_len=%u\n", op, oi->name, oi->hdr_len);
	}
	return 0;
}

/* check's options. 0: go on (*@file set); else the exit status (-1: 0 after --help). */
static int check_parse(int argc, char **argv, struct rfw_check_opts *opts, bool *json,
                       const char **file)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"max-list", required_argument, NULL, 'm'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (opt == 'j') {
			*json = true;
		} else if (opt == 'm') {
			if (rfw_opt_u32(PROG " check", "--max-list", optarg, 0, 1000000,
			                &opts->max_listed))
				return 2;
		} else if (opt == 'h') {
			usage(stdout);
			return -1;
		} else {
			fprintf(stderr,
			        opt == ':' ? PROG " check: option '%s' needs a value\n"
			                   : PROG " check: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr,
		        PROG " check: expected exactly one capture file, got %d (see --help)\n",
		        argc - optind);
		return 2;
	}
	*file = argv[optind];
	return 0;
}

/* @file opened as pcap or pcapng with nanosecond timestamps, its link type supported; NULL
 * after saying why. */
static pcap_t *check_open(const char *file)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	FILE *probe;
	pcap_t *pc;
	int lt;

	/* fopen first: its errno names the problem better than libpcap's message does. */
	probe = fopen(file, "rb");
	if (probe == NULL) {
		fprintf(stderr, PROG " check: cannot open '%s': %s\n", file, strerror(errno));
		return NULL;
	}
	fclose(probe);
	pc = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (pc == NULL) {
		fprintf(stderr, PROG " check: cannot read '%s' as pcap or pcapng: %s\n", file,
		        errbuf);
		return NULL;
	}
	lt = pcap_datalink(pc);
	if (!rfw_check_linktype_supported(lt)) {
		fprintf(
		    stderr,
		    PROG " check: '%s': link type %d (%s) is not supported; supported: Ethernet, "
		         "Linux cooked v1/v2, raw IPv4/IPv6\n",
		    file, lt, pcap_datalink_val_to_name(lt) ? pcap_datalink_val_to_name(lt) : "?");
		pcap_close(pc);
		return NULL;
	}
	return pc;
}

/* Every frame of @pc through @c. libpcap's last return (PCAP_ERROR: cut off mid-record). */
static int check_frames(pcap_t *pc, struct rfw_check *c, const char *file)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc, lt = pcap_datalink(pc);

	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;

		if (rfw_check_frame(c, lt, data, h->caplen, h->len, ts) == -ENOMEM) {
			fprintf(stderr, PROG " check: out of memory recording flows\n");
			break;
		}
	}
	if (rc == PCAP_ERROR) {
		/* A capture cut off mid-record: report what was read, say so, and fail. */
		fprintf(stderr, PROG " check: '%s': read error after the frames counted: %s\n",
		        file, pcap_geterr(pc));
	}
	return rc;
}

static int cmd_check(int argc, char **argv)
{
	struct rfw_check_opts opts = {.max_listed = 100};
	struct rfw_check *c;
	const char *file = NULL;
	bool json = false;
	pcap_t *pc;
	int rc = check_parse(argc, argv, &opts, &json, &file);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	pc = check_open(file);
	if (pc == NULL)
		return 1;
	c = rfw_check_new(&opts);
	if (c == NULL) {
		fprintf(stderr, PROG " check: out of memory\n");
		pcap_close(pc);
		return 1;
	}
	rc = check_frames(pc, c, file);
	if (json) {
		json_t *o = rfw_check_json(c, file);

		if (o == NULL || json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
			fprintf(stderr, PROG " check: cannot write JSON\n");
			rc = PCAP_ERROR;
		}
		putchar('\n');
		json_decref(o);
	} else {
		rfw_check_print(c, file, stdout);
	}
	rfw_check_free(c);
	pcap_close(pc);
	return rc == PCAP_ERROR ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf(PROG " %s\n", RFW_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "cc"))
		return rfw_replay_cmd_cc(argc - 1, argv + 1);
	if (!strcmp(argv[1], "opcodes"))
		return cmd_opcodes();
	fprintf(stderr, PROG ": unknown command '%s' (commands: check, cc, opcodes; see --help)\n",
	        argv[1]);
	return 2;
}
