/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-gen-counters: prints docs/counters.md, every counter rocefw keeps, from the X-macro
 * tables themselves (transport, NIC, per-QP NIC, port, PFC, DCQCN RP / NP, the rdma_cm's CM and
 * QP1 agent). With --list it
 * prints "table<TAB>telemetry key" lines instead, for tests that look each counter up in a
 * running process's telemetry (PFC per-priority names keep their "%u").
 *
 * Every table carries its meanings beside the names, so a counter cannot be added without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/dcqcn.h"
#include "ctrl/rfw_cm.h"
#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_pfc.h"
#include "dataplane/rfw_port.h"
#include "transport/rfw_counters.h"
/* Only for RFW_CMA_AGENT_COUNTERS: its includes are plain C (verbs/engine.h, transport/). */
#include "verbs/cma_agent.h"

struct ctr {
	const char *name; /* telemetry key; PFC per-priority: a format with one %u */
	const char *doc;
	int mlx5; /* 1: the name is mlx5's; 0: rocefw's own; -1: see the meaning */
};

/*
 * Unit from the name, as the tables name things: *_bytes / *bytes_hwm in bytes, PFC
 * *_duration in microseconds, *_ns in nanoseconds, *pkts / *packets in packets, the rest are
 * events (frames, CNPs, timer expiries, ...). A meaning that says "us" must agree.
 */
static const char *unit_of(const char *name, const char *doc)
{
	const char *u;
	size_t n = strlen(name);

	if (strstr(name, "bytes") != NULL)
		u = "bytes";
	else if (n > 9 && strcmp(name + n - 9, "_duration") == 0)
		u = "us";
	else if (n > 3 && strcmp(name + n - 3, "_ns") == 0)
		u = "ns";
	else if (strstr(name, "pkts") != NULL || strstr(name, "packets") != NULL)
		u = "packets";
	else
		u = "events";
	if (strstr(doc, ", us,") != NULL && strcmp(u, "us") != 0) {
		fprintf(stderr, "gen_counters: %s: meaning says us, name gives %s\n", name, u);
		exit(1);
	}
	return u;
}

struct table {
	const char *id;        /* --list table name */
	const char *title;     /* section heading */
	const char *source;    /* header and X-macro */
	const char *telemetry; /* where the values are read */
	const struct ctr *c;
	unsigned n;
};

/* mlx5 -1: the meaning says whether the name is mlx5's (the tables write "mlx5" there). */
#define C2(n, d)     {#n, d, -1},
#define C3(id, n, d) {n, d, -1},

static const struct ctr nic_ctrs[] = {RFW_FOREACH_NIC_CTR(C2)};
static const struct ctr nic_qp_ctrs[] = {RFW_FOREACH_NIC_QP_CTR(C2)};
static const struct ctr port_ctrs[] = {RFW_FOREACH_PORT_CTR(C2)};
static const struct ctr pfc_ctrs[] = {RFW_FOREACH_PFC_CTR(C2)};
static const struct ctr pfc_prio_ctrs[] = {RFW_FOREACH_PFC_PRIO_CTR(C3)};
static const struct ctr rp_ctrs[] = {DCQCN_RP_COUNTERS(C2)};
static const struct ctr np_ctrs[] = {DCQCN_NP_COUNTERS(C2)};
static const struct ctr cm_ctrs[] = {RFW_CM_COUNTERS(C2)};
static const struct ctr cm_qp1_ctrs[] = {RFW_CMA_AGENT_COUNTERS(C2)};
#define C3T(n, m, d) {#n, d, m},
static const struct ctr transport_ctrs[] = {RFW_FOREACH_COUNTER(C3T)};

#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

static const struct table tables[] = {
    {"transport", "Transport (per device and per QP)",
     "transport/rfw_counters.h RFW_FOREACH_COUNTER",
     "`/rocefw/nic,N` `dev_counters` (device: sum over its QPs, destroyed ones included, plus "
     "drops of no QP); "
     "`/rocefw/qp/info,N,QPN` `counters`",
     transport_ctrs, N(transport_ctrs)},
    {"nic", "NIC", "dataplane/rfw_nic.h RFW_FOREACH_NIC_CTR", "`/rocefw/nic,N` `counters`",
     nic_ctrs, N(nic_ctrs)},
    {"nic_qp", "NIC, per QP", "dataplane/rfw_nic.h RFW_FOREACH_NIC_QP_CTR",
     "`/rocefw/qp/info,N,QPN` `nic_counters`", nic_qp_ctrs, N(nic_qp_ctrs)},
    {"port", "Port (sum over queues)", "dataplane/rfw_port.h RFW_FOREACH_PORT_CTR",
     "`/rocefw/port/stats,P`; one queue's: `/rocefw/port/queue,P,Q`", port_ctrs, N(port_ctrs)},
    {"pfc", "PFC / PAUSE (per port)", "dataplane/rfw_pfc.h RFW_FOREACH_PFC_CTR",
     "`/rocefw/port/pfc,P` (ports with PFC state)", pfc_ctrs, N(pfc_ctrs)},
    {"pfc_prio", "PFC, per priority (`%u` = 0..7)", "dataplane/rfw_pfc.h RFW_FOREACH_PFC_PRIO_CTR",
     "`/rocefw/port/pfc,P`", pfc_prio_ctrs, N(pfc_prio_ctrs)},
    {"dcqcn_rp", "DCQCN reaction point (per QP)", "cc/dcqcn.h DCQCN_RP_COUNTERS",
     "`/rocefw/cc/state,N,QPN` `rp_counters`", rp_ctrs, N(rp_ctrs)},
    {"dcqcn_np", "DCQCN notification point (per QP)", "cc/dcqcn.h DCQCN_NP_COUNTERS",
     "`/rocefw/cc/state,N,QPN` `np_counters`", np_ctrs, N(np_ctrs)},
    {"cm", "rdma_cm: IBA CM (per process)", "ctrl/rfw_cm.h RFW_CM_COUNTERS",
     "`/rocefw/cm` `cm` (schema rocefw.cm/1; registered once a process using librocefw-verbs "
     "starts its rdma_cm)",
     cm_ctrs, N(cm_ctrs)},
    {"cm_qp1", "rdma_cm: QP1 agent (per process)", "verbs/cma_agent.h RFW_CMA_AGENT_COUNTERS",
     "`/rocefw/cm` `qp1`", cm_qp1_ctrs, N(cm_qp1_ctrs)},
};

static int is_mlx5(const struct ctr *c)
{
	return c->mlx5 >= 0 ? c->mlx5 : strstr(c->doc, "mlx5") != NULL;
}

/* Markdown table cells: '|' would split the cell. */
static void cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void markdown(FILE *out)
{
	unsigned total = 0;

	for (unsigned t = 0; t < N(tables); t++)
		total += tables[t].n;
	fprintf(
	    out,
	    "# Counters\n\n"
	    "<!-- Generated by tools/stat/gen_counters.c from the X-macro tables; do not edit.\n"
	    "     Regenerate: ninja -C build counters-doc (writes docs/counters.md). -->\n\n"
	    "Every counter rocefw keeps (%u names in %u tables), generated from the tables in the\n"
	    "code. Each is readable through DPDK telemetry (`dpdk-telemetry.py -f PREFIX`) under\n"
	    "the command named with its table, and through `rocefw-stat` (docs/stat.md), which\n"
	    "shows them per second with `--watch`. The unit follows from the name: `*bytes*` in\n"
	    "bytes, `*_duration` in microseconds, `*_ns` in nanoseconds, `*pkts*` / `*packets*` "
	    "in\n"
	    "packets, everything else counts events (frames, CNPs, expiries, ...). The\n"
	    "column `named by` says whether the name is the one mlx5 uses (ethtool -S or the RDMA "
	    "hw\n"
	    "counters); `rocefw` marks rocefw's own.\n",
	    total, (unsigned)N(tables));
	for (unsigned t = 0; t < N(tables); t++) {
		const struct table *tb = &tables[t];

		fprintf(out, "\n## %s\n\nSource: `%s`. Telemetry: %s.\n\n", tb->title, tb->source,
		        tb->telemetry);
		fprintf(out, "| counter | meaning | unit | named by |\n|---|---|---|---|\n");
		for (unsigned i = 0; i < tb->n; i++) {
			fprintf(out, "| `%s` | ", tb->c[i].name);
			cell(out, tb->c[i].doc);
			fprintf(out, " | %s | %s |\n", unit_of(tb->c[i].name, tb->c[i].doc),
			        is_mlx5(&tb->c[i]) ? "mlx5" : "rocefw");
		}
	}
}

/* The whole document in memory (for --check and -o). */
static char *render(size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);

	if (out == NULL) {
		perror("open_memstream");
		exit(1);
	}
	markdown(out);
	if (fclose(out) != 0) {
		perror("gen_counters");
		exit(1);
	}
	return buf;
}

static int check(const char *path, const char *doc, size_t len)
{
	FILE *f = fopen(path, "rb");
	char *old = NULL;
	size_t cap = 0, n;
	int same;

	if (f == NULL) {
		fprintf(stderr, "gen_counters: %s: %m\n", path);
		return 1;
	}
	old = malloc(len + 2);
	cap = len + 2;
	n = old ? fread(old, 1, cap, f) : 0;
	fclose(f);
	same = old != NULL && n == len && memcmp(old, doc, len) == 0;
	free(old);
	if (!same) {
		fprintf(stderr,
		        "%s is not what the counter tables give: a counter was added, renamed or "
		        "reworded without regenerating it. Run: ninja -C build counters-doc\n",
		        path);
		return 1;
	}
	printf("%s matches the counter tables\n", path);
	return 0;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
	        "usage: %s              print docs/counters.md\n"
	        "       %s -o FILE      write it to FILE\n"
	        "       %s --check FILE exit 1 if FILE differs from what the tables give\n"
	        "       %s --list       table, telemetry key, unit; one counter a line\n",
	        argv0, argv0, argv0, argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	size_t len;
	char *doc;
	int rc = 0;

	if (argc > 3 ||
	    (argc == 3 && strcmp(argv[1], "-o") != 0 && strcmp(argv[1], "--check") != 0) ||
	    (argc == 2 && strcmp(argv[1], "--list") != 0))
		usage(argv[0]);
	if (argc == 2) {
		for (unsigned t = 0; t < N(tables); t++)
			for (unsigned i = 0; i < tables[t].n; i++)
				printf("%s\t%s\t%s\n", tables[t].id, tables[t].c[i].name,
				       unit_of(tables[t].c[i].name, tables[t].c[i].doc));
		return 0;
	}
	doc = render(&len);
	if (argc == 3 && strcmp(argv[1], "--check") == 0) {
		rc = check(argv[2], doc, len);
	} else if (argc == 3) {
		FILE *f = fopen(argv[2], "wb");

		if (f == NULL || fwrite(doc, 1, len, f) != len || fclose(f) != 0) {
			fprintf(stderr, "gen_counters: %s: %m\n", argv[2]);
			rc = 1;
		}
	} else {
		fwrite(doc, 1, len, stdout);
	}
	free(doc);
	return rc;
}
