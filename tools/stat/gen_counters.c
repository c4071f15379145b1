/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-gen-counters: prints docs/counters.md, every counter rocefw keeps, from the X-macro
 * tables themselves (transport, NIC, per-QP NIC, port, PFC, DCQCN RP / NP). With --list it
 * prints "table<TAB>telemetry key" lines instead, for tests that look each counter up in a
 * running process's telemetry (PFC per-priority names keep their "%u").
 *
 * The transport table carries names only (its meanings live in docs/transport.md); the side
 * table below gives them here, as a switch without default so that -Werror=switch rejects a
 * counter added to transport/rfw_counters.h without a meaning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/dcqcn.h"
#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_pfc.h"
#include "dataplane/rfw_port.h"
#include "transport/rfw_counters.h"

struct ctr {
	const char *name; /* telemetry key; PFC per-priority: a format with one %u */
	const char *doc;
	int mlx5; /* 1: the name is mlx5's; 0: rocefw's own; -1: see the meaning */
};

/* Transport counters: meaning and whether mlx5 has the name (docs/transport.md). */
static struct ctr transport_ctr(enum rfw_counter c)
{
	switch (c) {
#define T(n, m, d)                                                                                 \
	case RFW_CNT_##n:                                                                          \
		return (struct ctr){#n, d, m};
		T(out_of_sequence, 1, "request packets with a PSN ahead of the expected one")
		T(duplicate_request, 1, "request packets with a PSN behind the expected one")
		T(rx_read_requests, 1, "READ requests executed (duplicates not counted)")
		T(rx_write_requests, 1, "WRITE messages started (FIRST/ONLY accepted)")
		T(rx_atomic_requests, 1, "atomics executed")
		T(resp_local_length_error, 1, "SENDs longer than the receive WQE")
		T(resp_cqe_error, 1, "receive completions with an error other than flush")
		T(resp_cqe_flush_error, 1, "receive completions flushed")
		T(resp_remote_access_errors, 1, "requests NAKed with remote access error")
		T(rnr_nak_sent, 0, "RNR NAKs sent (no receive WQE)")
		T(nak_seq_err_sent, 0, "PSN sequence error NAKs sent")
		T(read_replays, 0, "duplicate READs answered again from a resource")
		T(atomic_replays, 0, "duplicate atomics answered from the cached result")
		T(packet_seq_err, 1, "NAK sequence error packets received")
		T(implied_nak_seq_err, 1,
		  "implied NAKs: acknowledgement/response beyond a missing READ/atomic response")
		T(local_ack_timeout_err, 1, "local ACK timer expiries with requests outstanding")
		T(rnr_nak_retry_err, 1, "RNR NAKs received")
		T(req_remote_access_errors, 1, "remote access error NAKs received")
		T(req_remote_invalid_request, 1, "invalid request NAKs received")
		T(req_cqe_error, 1, "send completions with an error other than flush")
		T(req_cqe_flush_error, 1, "send completions flushed")
		T(retransmitted_packets, 0,
		  "request packets sent with a PSN below the highest already sent")
		T(retry_exceeded, 0, "QPs failed with RETRY_EXC_ERR")
		T(rnr_retry_exceeded, 0, "QPs failed with RNR_RETRY_EXC_ERR")
		T(duplicate_response, 0, "responses for PSNs already acknowledged (dropped)")
		T(spurious_retransmissions, 0,
		  "SEND/WRITE packets that arrived already received (needless retransmissions plus "
		  "network duplicates)")
		T(naks_sent, 0, "PSN sequence NAKs sent (gbn: as nak_seq_err_sent; sr: SACK NAKs)")
		T(naks_received, 0,
		  "PSN sequence NAKs received (gbn: as packet_seq_err; sr: SACK NAKs)")
		T(rto_low_timeouts, 0, "sr: RTO_low expiries (gbn: always 0)")
		T(rto_high_timeouts, 0, "sr: RTO_high expiries; gbn: every local ACK timeout")
		T(ooo_accepted, 0, "sr: packets accepted out of order; gbn: 0")
		T(inflight_bytes_hwm, 0,
		  "high-water mark of bytes in flight (a gauge; the device value is the largest "
		  "over the QPs)")
		T(rx_transport_mismatch, 0,
		  "packets refused because the peer's transport mode differs "
		  "(docs/transport-sr.md)")
		T(np_ecn_marked_roce_packets, 1, "CE-marked data packets received")
		T(np_cnp_sent, 1, "CNPs sent")
		T(rp_cnp_handled, 1, "CNPs received and handed to the reaction point")
		T(tx_packets, 0, "packets produced")
		T(tx_bytes, 0, "IB bytes (BTH to pad) produced")
		T(rx_packets, 0, "packets accepted by a QP's demux")
		T(rx_bytes, 0, "IB bytes (BTH to pad) accepted by a QP's demux")
		T(tx_acks, 0, "ACK/NAK/atomic ACK packets sent")
		T(rx_acks, 0, "ACK-type packets received")
		T(rx_unknown_qp, 0, "packets for a QP number that does not exist")
		T(rx_bad_state, 0, "packets the QP's state does not accept (RESET/INIT/ERR)")
		T(rx_bad_opcode, 0, "non-RC (UC/UD) packets on an RC QP, or no opcode")
		T(rx_ghost_response, 0, "responses while nothing is outstanding")
		T(rx_bad_response, 0,
		  "responses that do not fit the WQE (wrong type, size, PSN never sent)")
		T(cq_overflow, 0, "completions lost to a full CQ")
#undef T
	case RFW_CNT__COUNT:
		break;
	}
	return (struct ctr){NULL, NULL, 0};
}

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
static struct ctr transport_ctrs[RFW_CNT__COUNT];

#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

static const struct table tables[] = {
    {"transport", "Transport (per device and per QP)",
     "transport/rfw_counters.h RFW_FOREACH_COUNTER",
     "`/rocefw/nic,N` `dev_counters` (device: sum over QPs plus drops of no QP); "
     "`/rocefw/qp/info,N,QPN` `counters`",
     transport_ctrs, N(transport_ctrs)},
    {"nic", "NIC", "dataplane/rfw_nic.h RFW_FOREACH_NIC_CTR", "`/rocefw/nic,N` `counters`",
     nic_ctrs, N(nic_ctrs)},
    {"nic_qp", "NIC, per QP", "dataplane/rfw_nic.h RFW_FOREACH_NIC_QP_CTR",
     "`/rocefw/qp/info,N,QPN` `nic_counters`", nic_qp_ctrs, N(nic_qp_ctrs)},
    {"port", "Port (sum over queues)", "dataplane/rfw_port.h RFW_FOREACH_PORT_CTR",
     "`/rocefw/port/stats,P`", port_ctrs, N(port_ctrs)},
    {"pfc", "PFC / PAUSE (per port)", "dataplane/rfw_pfc.h RFW_FOREACH_PFC_CTR",
     "`/rocefw/port/pfc,P` (ports with PFC state)", pfc_ctrs, N(pfc_ctrs)},
    {"pfc_prio", "PFC, per priority (`%u` = 0..7)", "dataplane/rfw_pfc.h RFW_FOREACH_PFC_PRIO_CTR",
     "`/rocefw/port/pfc,P`", pfc_prio_ctrs, N(pfc_prio_ctrs)},
    {"dcqcn_rp", "DCQCN reaction point (per QP)", "cc/dcqcn.h DCQCN_RP_COUNTERS",
     "`/rocefw/cc/state,N,QPN` `rp_counters`", rp_ctrs, N(rp_ctrs)},
    {"dcqcn_np", "DCQCN notification point (per QP)", "cc/dcqcn.h DCQCN_NP_COUNTERS",
     "`/rocefw/cc/state,N,QPN` `np_counters`", np_ctrs, N(np_ctrs)},
};

static int is_mlx5(const struct ctr *c)
{
	return c->mlx5 >= 0 ? c->mlx5 : strstr(c->doc, "mlx5") != NULL;
}

/* Markdown table cells: '|' would split the cell. */
static FILE *out;

static void cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void markdown(void)
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
			cell(tb->c[i].doc);
			fprintf(out, " | %s | %s |\n", unit_of(tb->c[i].name, tb->c[i].doc),
			        is_mlx5(&tb->c[i]) ? "mlx5" : "rocefw");
		}
	}
}

/* The whole document in memory (for --check and -o). */
static char *render(size_t *len)
{
	char *buf = NULL;

	out = open_memstream(&buf, len);
	if (out == NULL) {
		perror("open_memstream");
		exit(1);
	}
	markdown();
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
	for (unsigned i = 0; i < RFW_CNT__COUNT; i++) {
		transport_ctrs[i] = transport_ctr((enum rfw_counter)i);
		if (transport_ctrs[i].name == NULL) {
			fprintf(stderr, "gen_counters: transport counter %u has no meaning\n", i);
			return 1;
		}
	}
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
