/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RX classification through librocefw with net_pcap ports: port 0 replays
 * tests/data/icrc/malformed.pcap (every frame must be counted as bad ICRC or malformed, by
 * reason, and none delivered), port 1 replays vectors.pcap (all ten delivered), and an optional
 * port 2 replays gen_ect_pcap --bad-ib (good ICRCs, four IB header errors). The identity is
 * the vectors' destination (02:00:00:00:00:02, 192.0.2.2, 2001:db8::2), so the destination
 * filter is exercised too. Optional ports 3 and 4 replay vectors.pcap again to identities with
 * the vectors' MAC but another IPv4, then another IPv6 address: the frames of that family are
 * dropped as not for us, the others delivered.
 *
 * With --hold it then starts one ARP resolution (so /rocefw/neigh has an entry), prints READY
 * and waits for stdin to close: tests/dpdk/telemetry.py queries it meanwhile.
 *
 * usage: test_rx_classify [EAL options] --vdev=net_pcap0,rx_pcap=malformed.pcap,tx_pcap=X
 *        --vdev=net_pcap1,rx_pcap=vectors.pcap,tx_pcap=Y -- [--hold]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "dataplane/rfw_port.h"

#include "check.h"

/* vectors.pcap: 6 IPv4 frames, then 4 IPv6 (tests/data/icrc/vectors.txt). */
#define VECTORS_V4 6
#define VECTORS_V6 4

/* Poll until the pcap is exhausted: 50 ms without a frame. Returns frames delivered. */
static unsigned drain(struct rfw_queue *q)
{
	struct rte_mbuf *pk[RFW_MAX_BURST];
	struct rfw_rx_view v[RFW_MAX_BURST];
	uint64_t hz = rte_get_tsc_hz(), last = rte_rdtsc();
	unsigned total = 0;

	for (;;) {
		uint64_t now = rte_rdtsc();
		uint64_t before = q->ctr[RFW_PORT_CTR_rx_pkts];
		unsigned n = rfw_rx_burst(q, now, pk, v, RFW_MAX_BURST);

		for (unsigned i = 0; i < n; i++) {
			/* Delivered frames carry a parsed BTH pointing into the mbuf. */
			CHECK(v[i].ib.op != NULL && v[i].f.kind == RFW_FRAME_ROCEV2, "view");
		}
		rte_pktmbuf_free_bulk(pk, n);
		total += n;
		if (q->ctr[RFW_PORT_CTR_rx_pkts] != before)
			last = now;
		else if (now - last > hz / 20)
			return total;
	}
}

/* malformed.pcap's port: nothing delivered, each drop counted by its reason. */
static void check_bad(struct rfw_port *bad)
{
	CHECK(drain(bad->q[0]) == 0, "nothing from malformed.pcap is delivered");
	CHECK(rfw_port_ctr(bad, RFW_PORT_CTR_rx_pkts) == 8, "8 frames read: %lu",
	      (unsigned long)rfw_port_ctr(bad, RFW_PORT_CTR_rx_pkts));
	/* malformed.txt: frame 2 has a BTH cut to 8 bytes (malformed: too short for an ICRC);
	 * every other frame carries a wrong ICRC (1, 7, 8 by design; 3-6, built to exercise the
	 * IB header parser, carry a zero ICRC). The ICRC is checked before the IB headers, as a
	 * NIC does: nothing reads the transport headers of a frame that failed its CRC. */
	CHECK(rfw_port_ctr(bad, RFW_PORT_CTR_rx_icrc_bad) == 7, "icrc_bad %lu",
	      (unsigned long)rfw_port_ctr(bad, RFW_PORT_CTR_rx_icrc_bad));
	CHECK(rfw_port_ctr(bad, RFW_PORT_CTR_rx_malformed) == 1, "malformed %lu",
	      (unsigned long)rfw_port_ctr(bad, RFW_PORT_CTR_rx_malformed));
	CHECK(bad->q[0]->malformed_ib[RFW_IB_ERR_TRUNC_BTH] == 1, "truncated_bth");
	CHECK(rfw_port_ctr(bad, RFW_PORT_CTR_rx_rocev2) == 0, "rx_rocev2 0");
}

/* bad_ib.pcap's port: right ICRCs, bad IB headers: dropped as malformed, by reason. */
static void check_badib(struct rfw_port *badib)
{
	CHECK(drain(badib->q[0]) == 0, "no frame with a bad IB header delivered");
	CHECK(rfw_port_ctr(badib, RFW_PORT_CTR_rx_icrc_bad) == 0, "their ICRCs are right");
	CHECK(rfw_port_ctr(badib, RFW_PORT_CTR_rx_malformed) == 4, "4 malformed: %lu",
	      (unsigned long)rfw_port_ctr(badib, RFW_PORT_CTR_rx_malformed));
	CHECK(badib->q[0]->malformed_ib[RFW_IB_ERR_BAD_TVER] == 1, "bad_tver");
	CHECK(badib->q[0]->malformed_ib[RFW_IB_ERR_RESERVED_OPCODE] == 1, "reserved_opcode");
	CHECK(badib->q[0]->malformed_ib[RFW_IB_ERR_TRUNC_RETH] == 1, "truncated_reth");
	CHECK(badib->q[0]->malformed_ib[RFW_IB_ERR_PAD_EXCEEDS_PAYLOAD] == 1, "padcnt");
}

/* --hold (dpdk_telemetry): an INCOMPLETE neighbour entry (one ARP probe), then wait for EOF
 * on stdin while the test reads telemetry. */
/* vectors.pcap to an identity whose IPv@ver address is not the vectors' destination: the
 * frames of that family dropped as not for us (the MAC is ours), the rest delivered. */
static void check_other(struct rfw_port *p, unsigned ver)
{
	unsigned drop = ver == 4 ? VECTORS_V4 : VECTORS_V6;
	unsigned n = drain(p->q[0]);

	CHECK(n == VECTORS_V4 + VECTORS_V6 - drop, "IPv%u elsewhere: %u delivered", ver, n);
	CHECK(rfw_port_ctr(p, RFW_PORT_CTR_rx_not_for_us) == drop,
	      "IPv%u elsewhere: %lu not for us", ver,
	      (unsigned long)rfw_port_ctr(p, RFW_PORT_CTR_rx_not_for_us));
}

static void hold_for_peer(struct rfw_port *good)
{
	uint8_t ip[16];
	struct rte_ether_addr mac;

	rfw_ip4_to_mapped(ip, 0xc0000263);
	CHECK(rfw_port_resolve(good->q[0], ip, rte_rdtsc(), &mac) == -EAGAIN, "probe");
	rfw_tx_flush(good->q[0], rte_rdtsc());
	printf("READY\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
}

int main(int argc, char **argv)
{
	struct rfw_identity id = {
	    .mac = {.addr_bytes = {0x02, 0, 0, 0, 0, 0x02}},
	    .has_ip4 = true,
	    .ip4 = 0xc0000202,
	    .has_ip6 = true,
	    .ip6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2},
	};
	struct rfw_identity id4 = id, id6 = id;
	struct rfw_port_conf conf = {.nb_mbufs = 1024};
	struct rfw_port *bad, *good, *badib = NULL, *other4 = NULL, *other6 = NULL;
	unsigned nports;
	bool hold = false;
	int ret;

	id4.ip4 = 0xc0000209; /* 192.0.2.9 */
	id6.ip6[15] = 9;      /* 2001:db8::9 */

	ret = rfw_eal_init(argc, argv);
	if (ret < 0)
		return 1;
	for (int i = ret + 1; i < argc; i++)
		hold |= strcmp(argv[i], "--hold") == 0;
	nports = rte_eth_dev_count_avail();
	if (nports < 2 || nports == 4 || nports > 5) {
		fprintf(stderr,
		        "test_rx_classify: needs two, three or five net_pcap ports (--vdev), "
		        "got %u\n",
		        nports);
		return 1;
	}
	bad = rfw_port_setup(0, &conf, &id);
	good = rfw_port_setup(1, &conf, &id);
	if (nports >= 3 && (badib = rfw_port_setup(2, &conf, &id)) == NULL)
		bad = NULL;
	if (nports == 5 && ((other4 = rfw_port_setup(3, &conf, &id4)) == NULL ||
	                    (other6 = rfw_port_setup(4, &conf, &id6)) == NULL))
		bad = NULL;
	if (bad == NULL || good == NULL) {
		fprintf(stderr, "rfw_port_setup: %s\n", rte_strerror(rte_errno));
		return 1;
	}

	check_bad(bad);

	CHECK(drain(good->q[0]) == VECTORS_V4 + VECTORS_V6, "all ten vectors delivered");
	CHECK(rfw_port_ctr(good, RFW_PORT_CTR_rx_icrc_bad) == 0, "no ICRC failures");
	CHECK(rfw_port_ctr(good, RFW_PORT_CTR_rx_malformed) == 0, "nothing malformed");
	CHECK(rfw_port_ctr(good, RFW_PORT_CTR_rx_not_for_us) == 0, "all addressed to us");

	if (badib != NULL) {
		check_badib(badib);
		rfw_port_close(badib);
	}
	if (other4 != NULL) {
		check_other(other4, 4);
		check_other(other6, 6);
		rfw_port_close(other4);
		rfw_port_close(other6);
	}

	if (hold)
		hold_for_peer(good);
	rfw_port_close(bad);
	rfw_port_close(good);
	rfw_eal_cleanup();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_rx_classify: all checks passed\n");
	return 0;
}
