/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rocefw port that only answers and resolves neighbours, for tests against a Linux peer
 * (tests/dpdk/linux_peer.py): sets up port 0 with the given identity, polls it for
 * --seconds, resolves the given peers every 50 ms, prints READY once the port is up, and at
 * exit one JSON object (schema rocefw.test.neigh_peer/1) with the port counters and the
 * resolved MACs.
 *
 * usage: neigh_peer [EAL options] -- --ip4 A.B.C.D --ip6 ADDR [--peer4 A.B.C.D]
 *        [--peer6 ADDR] [--seconds S] [--resolve-after S]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "dataplane/rfw_port.h"

struct np_args {
	struct rfw_identity id;
	uint8_t peer[2][16]; /* IPv4-mapped, IPv6 */
	bool has_peer[2];
	double seconds, resolve_after;
};

/* The options after EAL's. 0, or -1 on a bad one. */
static int np_parse(int argc, char **argv, struct np_args *a)
{
	static const struct option opts[] = {
	    {"ip4", required_argument, NULL, '4'},
	    {"ip6", required_argument, NULL, '6'},
	    {"peer4", required_argument, NULL, 'a'},
	    {"peer6", required_argument, NULL, 'b'},
	    {"seconds", required_argument, NULL, 's'},
	    {"resolve-after", required_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	struct in_addr a4;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == '4' && inet_pton(AF_INET, optarg, &a4) == 1) {
			a->id.has_ip4 = true;
			a->id.ip4 = ntohl(a4.s_addr);
		} else if (c == '6' && inet_pton(AF_INET6, optarg, a->id.ip6) == 1) {
			a->id.has_ip6 = true;
		} else if (c == 'a' && inet_pton(AF_INET, optarg, &a4) == 1) {
			rfw_ip4_to_mapped(a->peer[0], ntohl(a4.s_addr));
			a->has_peer[0] = true;
		} else if (c == 'b' && inet_pton(AF_INET6, optarg, a->peer[1]) == 1) {
			a->has_peer[1] = true;
		} else if (c == 's') {
			a->seconds = atof(optarg);
		} else if (c == 'r') {
			a->resolve_after = atof(optarg);
		} else {
			return -1;
		}
	}
	return 0;
}

/* Poll the port for --seconds, resolving the peers every 50 ms from --resolve-after on. */
static void np_run(struct rfw_port *p, const struct np_args *a, bool resolved[2],
                   struct rte_ether_addr mac[2])
{
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
	uint64_t next = t0 + (uint64_t)(a->resolve_after * (double)hz);
	uint64_t end = t0 + (uint64_t)(a->seconds * (double)hz);
	struct rte_mbuf *pk[RFW_MAX_BURST];
	struct rfw_rx_view v[RFW_MAX_BURST];

	for (uint64_t now = t0; now < end; now = rte_rdtsc()) {
		uint16_t n = rfw_rx_burst(p->q[0], now, pk, v, RFW_MAX_BURST);

		rte_pktmbuf_free_bulk(pk, n);
		if (now >= next) {
			for (int i = 0; i < 2; i++)
				if (a->has_peer[i] && !resolved[i])
					resolved[i] = rfw_port_resolve(p->q[0], a->peer[i], now,
					                               &mac[i]) == 0;
			next = now + hz / 20;
		}
		rfw_tx_flush_if_due(p->q[0], now);
	}
}

/* One JSON line: the port's counters, the peers' MACs as resolved, our MAC. */
static void np_report(const struct rfw_port *p, const bool resolved[2],
                      const struct rte_ether_addr mac[2])
{
	char buf[RTE_ETHER_ADDR_FMT_SIZE];

	printf("{\"schema\": \"rocefw.test.neigh_peer/1\"");
	for (unsigned i = 0; i < RFW_PORT_CTR__COUNT; i++)
		printf(", \"%s\": %" PRIu64, rfw_port_ctr_name(i), rfw_port_ctr(p, i));
	for (int i = 0; i < 2; i++) {
		buf[0] = '\0';
		if (resolved[i])
			rte_ether_format_addr(buf, sizeof(buf), &mac[i]);
		printf(", \"peer%d_mac\": \"%s\"", i ? 6 : 4, buf);
	}
	rte_ether_format_addr(buf, sizeof(buf), &p->id.mac);
	printf(", \"mac\": \"%s\"}\n", buf);
}

int main(int argc, char **argv)
{
	struct np_args a = {.seconds = 3};
	bool resolved[2] = {false, false};
	struct rte_ether_addr mac[2];
	struct rfw_port_conf conf = {.nb_mbufs = 2048, .neigh_retrans_ms = 200};
	struct rfw_port *p;
	int ret;

	ret = rfw_eal_init(argc, argv);
	if (ret < 0)
		return 1;
	if (np_parse(argc - ret, argv + ret, &a) != 0) {
		fprintf(stderr,
		        "usage: neigh_peer [EAL] -- --ip4 A --ip6 B [--peer4 C] [--peer6 D] "
		        "[--seconds S]\n");
		return 2;
	}
	if (rte_eth_dev_count_avail() != 1) {
		fprintf(stderr, "neigh_peer: needs exactly one port (--vdev)\n");
		return 1;
	}
	p = rfw_port_setup(0, &conf, &a.id);
	if (p == NULL) {
		fprintf(stderr, "neigh_peer: rfw_port_setup: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (rfw_port_link_wait(p, 5000) != 0)
		fprintf(stderr, "neigh_peer: link down\n");
	printf("READY\n");
	fflush(stdout);
	np_run(p, &a, resolved, mac);
	np_report(p, resolved, mac);
	rfw_port_close(p);
	rfw_eal_cleanup();
	return 0;
}
