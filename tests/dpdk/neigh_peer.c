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

int main(int argc, char **argv)
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
	struct rfw_identity id = {0};
	uint8_t peer[2][16];
	bool has_peer[2] = {false, false}, resolved[2] = {false, false};
	struct rte_ether_addr mac[2];
	struct rfw_port_conf conf = {.nb_mbufs = 2048, .neigh_retrans_ms = 200};
	double seconds = 3, resolve_after = 0;
	struct rfw_port *p;
	struct in_addr a4;
	int ret, c;

	ret = rfw_eal_init(argc, argv);
	if (ret < 0)
		return 1;
	argc -= ret;
	argv += ret;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case '4':
			if (inet_pton(AF_INET, optarg, &a4) != 1)
				goto usage;
			id.has_ip4 = true;
			id.ip4 = ntohl(a4.s_addr);
			break;
		case '6':
			if (inet_pton(AF_INET6, optarg, id.ip6) != 1)
				goto usage;
			id.has_ip6 = true;
			break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &a4) != 1)
				goto usage;
			rfw_ip4_to_mapped(peer[0], ntohl(a4.s_addr));
			has_peer[0] = true;
			break;
		case 'b':
			if (inet_pton(AF_INET6, optarg, peer[1]) != 1)
				goto usage;
			has_peer[1] = true;
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'r':
			resolve_after = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (rte_eth_dev_count_avail() != 1) {
		fprintf(stderr, "neigh_peer: needs exactly one port (--vdev)\n");
		return 1;
	}
	p = rfw_port_setup(0, &conf, &id);
	if (p == NULL) {
		fprintf(stderr, "neigh_peer: rfw_port_setup: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (rfw_port_link_wait(p, 5000) != 0)
		fprintf(stderr, "neigh_peer: link down\n");
	printf("READY\n");
	fflush(stdout);
	{
		uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
		uint64_t next = t0 + (uint64_t)(resolve_after * (double)hz);
		uint64_t end = t0 + (uint64_t)(seconds * (double)hz);
		struct rte_mbuf *pk[RFW_MAX_BURST];
		struct rfw_rx_view v[RFW_MAX_BURST];

		for (uint64_t now = t0; now < end; now = rte_rdtsc()) {
			uint16_t n = rfw_rx_burst(p->q[0], now, pk, v, RFW_MAX_BURST);

			rte_pktmbuf_free_bulk(pk, n);
			if (now >= next) {
				for (int i = 0; i < 2; i++)
					if (has_peer[i] && !resolved[i])
						resolved[i] = rfw_port_resolve(p->q[0], peer[i],
						                               now, &mac[i]) == 0;
				next = now + hz / 20;
			}
			rfw_tx_flush_if_due(p->q[0], now);
		}
	}
	printf("{\"schema\": \"rocefw.test.neigh_peer/1\"");
	for (unsigned i = 0; i < RFW_PORT_CTR__COUNT; i++)
		printf(", \"%s\": %" PRIu64, rfw_port_ctr_name(i), rfw_port_ctr(p, i));
	for (int i = 0; i < 2; i++) {
		char buf[RTE_ETHER_ADDR_FMT_SIZE] = "";

		if (resolved[i])
			rte_ether_format_addr(buf, sizeof(buf), &mac[i]);
		printf(", \"peer%d_mac\": \"%s\"", i ? 6 : 4, buf);
	}
	{
		char buf[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(buf, sizeof(buf), &p->id.mac);
		printf(", \"mac\": \"%s\"}\n", buf);
	}
	rfw_port_close(p);
	rfw_eal_cleanup();
	return 0;
usage:
	fprintf(stderr, "usage: neigh_peer [EAL] -- --ip4 A --ip6 B [--peer4 C] [--peer6 D] "
	                "[--seconds S]\n");
	return 2;
}
