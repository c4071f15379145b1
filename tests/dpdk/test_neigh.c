/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP and IPv6 ND through librocefw on a ring pair in one process (rte_eth_from_rings): port A
 * is a rocefw port (10.0.0.1, fd00::1), port B plays a Linux peer (10.0.0.2, fd00::2) whose
 * frames the test writes and reads by hand. Checks: an ARP request for our IP is answered with
 * our MAC; resolving an unknown peer emits a request and fills the table on the reply; the
 * same for NS/NA; probes stop after neigh_max_probes; a REACHABLE entry goes STALE and is
 * re-probed by unicast; bad ND frames are counted and not answered.
 *
 * usage: test_neigh [EAL options]    (meson: --no-huge -m 512 --no-pci --no-shconf -l 0)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "wire/neigh_wire.h"
#include "dataplane/rfw_neigh.h"
#include "dataplane/rfw_port.h"

#include "check.h"

static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0xbb};
static const uint8_t ip6_a[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t ip6_b[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
static const uint32_t ip4_a = 0x0a000001, ip4_b = 0x0a000002;

static struct rfw_port *pa;
static uint16_t port_b;
static struct rte_mempool *pool_b;

/* Port B sends one frame. */
static void b_send(const uint8_t *buf, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool_b);

	if (m == NULL) {
		fprintf(stderr, "pool_b empty\n");
		exit(1);
	}
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	if (rte_eth_tx_burst(port_b, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		fprintf(stderr, "ring full\n");
		exit(1);
	}
}

/* Let A receive and answer, then flush its TX buffer. Returns RoCEv2 frames delivered. */
static unsigned a_poll(uint64_t now)
{
	struct rte_mbuf *pk[RFW_MAX_BURST];
	struct rfw_rx_view v[RFW_MAX_BURST];
	unsigned n = rfw_rx_burst(pa->q[0], now, pk, v, RFW_MAX_BURST);

	rte_pktmbuf_free_bulk(pk, n);
	rfw_tx_flush(pa->q[0], now);
	return n;
}

/* Port B receives at most one frame into @buf; returns its length or 0. */
static size_t b_recv(uint8_t *buf, size_t cap)
{
	struct rte_mbuf *m;
	size_t len;

	if (rte_eth_rx_burst(port_b, 0, &m, 1) != 1)
		return 0;
	len = RTE_MIN((size_t)m->data_len, cap);
	memcpy(buf, rte_pktmbuf_mtod(m, void *), len);
	rte_pktmbuf_free(m);
	return len;
}

static void test_arp_reply(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, zero[6] = {0};
	uint8_t buf[256];
	struct rfw_l2 l2 = {0};
	struct rfw_neigh_msg m;
	size_t len;

	memcpy(l2.dst, bcast, 6);
	memcpy(l2.src, mac_b, 6);
	len = rfw_arp_build(buf, sizeof(buf), &l2, 1, mac_b, ip4_b, zero, ip4_a);
	b_send(buf, len);
	a_poll(rte_rdtsc());
	len = b_recv(buf, sizeof(buf));
	CHECK(len == RFW_ETH_MIN_FRAME, "ARP reply length %zu", len);
	CHECK(rfw_neigh_parse(buf, len, &m) == RFW_NEIGH_ERR_OK, "reply parses");
	CHECK(m.kind == RFW_NEIGH_ARP_REPLY, "kind %d", m.kind);
	CHECK(memcmp(m.lla, pa->id.mac.addr_bytes, 6) == 0, "sender hardware address is A's MAC");
	CHECK(memcmp(m.l2.dst, mac_b, 6) == 0 && memcmp(m.l2.src, pa->id.mac.addr_bytes, 6) == 0,
	      "Ethernet addresses");
	CHECK(rfw_get_be32(m.src_ip + 12) == ip4_a && rfw_get_be32(m.dst_ip + 12) == ip4_b,
	      "protocol addresses");
	CHECK(rfw_port_ctr(pa, RFW_PORT_CTR_arp_reply_sent) == 1, "arp_reply_sent");
	/* A request for another address is not answered. */
	len = rfw_arp_build(buf, sizeof(buf), &l2, 1, mac_b, ip4_b, zero, 0x0a000063);
	b_send(buf, len);
	a_poll(rte_rdtsc());
	CHECK(b_recv(buf, sizeof(buf)) == 0, "no reply for someone else's address");
}

static void test_arp_resolve(void)
{
	uint8_t buf[256], ip[16];
	struct rte_ether_addr mac;
	struct rfw_neigh_msg m;
	struct rfw_l2 l2 = {0};
	uint64_t now = rte_rdtsc();
	size_t len;
	int ret;

	rfw_ip4_to_mapped(ip, 0x0a000003);
	ret = rfw_port_resolve(pa->q[0], ip, now, &mac);
	CHECK(ret == -EAGAIN, "first resolve: %d", ret);
	rfw_tx_flush(pa->q[0], now);
	len = b_recv(buf, sizeof(buf));
	CHECK(rfw_neigh_parse(buf, len, &m) == RFW_NEIGH_ERR_OK && m.kind == RFW_NEIGH_ARP_REQUEST,
	      "an ARP request went out");
	CHECK(m.l2.dst[0] == 0xff && rfw_get_be32(m.target + 12) == 0x0a000003,
	      "broadcast, target 10.0.0.3");
	CHECK(rte_is_zero_ether_addr((struct rte_ether_addr *)(buf + 14 + 18)),
	      "target hardware address zero in a request (RFC 826)");
	/* Asking again within the probe interval sends nothing. */
	ret = rfw_port_resolve(pa->q[0], ip, now + 1, &mac);
	CHECK(ret == -EAGAIN, "second resolve: %d", ret);
	rfw_tx_flush(pa->q[0], now);
	CHECK(b_recv(buf, sizeof(buf)) == 0, "no second request within the interval");
	/* The peer answers; A learns. */
	memcpy(l2.dst, pa->id.mac.addr_bytes, 6);
	memcpy(l2.src, mac_b, 6);
	len = rfw_arp_build(buf, sizeof(buf), &l2, 2, mac_b, 0x0a000003, pa->id.mac.addr_bytes,
	                    ip4_a);
	b_send(buf, len);
	a_poll(now);
	ret = rfw_port_resolve(pa->q[0], ip, now + 2, &mac);
	CHECK(ret == 0, "resolved after the reply: %d", ret);
	CHECK(memcmp(mac.addr_bytes, mac_b, 6) == 0, "resolved to B's MAC");
	CHECK(rfw_neigh_find(pa->neigh, ip)->state == RFW_NEIGH_REACHABLE, "REACHABLE");
}

static void test_nd_na(void)
{
	uint8_t buf[256], snm[16];
	struct rfw_l2 l2 = {0};
	struct rfw_neigh_msg m;
	size_t len;

	rfw_ip6_solicited_node(snm, ip6_a);
	rfw_ip6_mcast_mac(l2.dst, snm);
	memcpy(l2.src, mac_b, 6);
	len = rfw_nd_build_ns(buf, sizeof(buf), &l2, ip6_b, snm, ip6_a);
	b_send(buf, len);
	a_poll(rte_rdtsc());
	len = b_recv(buf, sizeof(buf));
	CHECK(rfw_neigh_parse(buf, len, &m) == RFW_NEIGH_ERR_OK, "NA parses (checksum, hop limit)");
	CHECK(m.kind == RFW_NEIGH_NA, "kind %d", m.kind);
	CHECK(memcmp(m.target, ip6_a, 16) == 0 && memcmp(m.dst_ip, ip6_b, 16) == 0,
	      "target fd00::1 to fd00::2");
	CHECK(m.na_flags == (RFW_ND_NA_SOLICIT | RFW_ND_NA_OVERRIDE), "flags S|O: %#x", m.na_flags);
	CHECK(m.has_lla && memcmp(m.lla, pa->id.mac.addr_bytes, 6) == 0, "TLLA is A's MAC");
	CHECK(memcmp(m.l2.dst, mac_b, 6) == 0, "unicast to the solicitor's SLLA");
	/* The solicitor was learnt (STALE, RFC 4861 7.2.3). */
	CHECK(rfw_neigh_find(pa->neigh, ip6_b) != NULL &&
	          rfw_neigh_find(pa->neigh, ip6_b)->state == RFW_NEIGH_STALE,
	      "solicitor learnt as STALE");
	/* A corrupted NS (bad checksum) is dropped and counted, and not answered. */
	len = rfw_nd_build_ns(buf, sizeof(buf), &l2, ip6_b, snm, ip6_a);
	buf[14 + 40 + 2] ^= 0x55;
	b_send(buf, len);
	a_poll(rte_rdtsc());
	CHECK(b_recv(buf, sizeof(buf)) == 0, "no NA for a bad checksum");
	CHECK(pa->q[0]->neigh_bad[RFW_NEIGH_ERR_ND_BAD_CHECKSUM] == 1, "counted as bad checksum");
	/* Hop limit 254: RFC 4861 7.1.1 says discard. */
	len = rfw_nd_build_ns(buf, sizeof(buf), &l2, ip6_b, snm, ip6_a);
	buf[14 + 7] = 254;
	b_send(buf, len);
	a_poll(rte_rdtsc());
	CHECK(b_recv(buf, sizeof(buf)) == 0, "no NA for hop limit 254");
	CHECK(rfw_port_ctr(pa, RFW_PORT_CTR_rx_neigh_bad) == 2, "rx_neigh_bad %lu",
	      (unsigned long)rfw_port_ctr(pa, RFW_PORT_CTR_rx_neigh_bad));
}

static void test_nd_resolve(void)
{
	static const uint8_t ip6_c[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
	uint8_t buf[256], snm[16], mmac[6];
	struct rte_ether_addr mac;
	struct rfw_neigh_msg m;
	struct rfw_l2 l2 = {0};
	uint64_t now = rte_rdtsc();
	size_t len;
	int ret;

	ret = rfw_port_resolve(pa->q[0], ip6_c, now, &mac);
	CHECK(ret == -EAGAIN, "first resolve: %d", ret);
	rfw_tx_flush(pa->q[0], now);
	len = b_recv(buf, sizeof(buf));
	CHECK(rfw_neigh_parse(buf, len, &m) == RFW_NEIGH_ERR_OK && m.kind == RFW_NEIGH_NS,
	      "an NS went out and verifies");
	rfw_ip6_solicited_node(snm, ip6_c);
	rfw_ip6_mcast_mac(mmac, snm);
	CHECK(memcmp(m.dst_ip, snm, 16) == 0, "to the solicited-node address");
	CHECK(memcmp(m.l2.dst, mmac, 6) == 0 && mmac[0] == 0x33 && mmac[2] == 0xff,
	      "to 33:33:ff:..");
	CHECK(memcmp(m.target, ip6_c, 16) == 0 && memcmp(m.src_ip, ip6_a, 16) == 0, "target/src");
	CHECK(m.has_lla && memcmp(m.lla, pa->id.mac.addr_bytes, 6) == 0, "SLLA is A's MAC");
	/* An unsolicited NA for an unknown address is ignored (RFC 4861 7.2.5). */
	memcpy(l2.dst, pa->id.mac.addr_bytes, 6);
	memcpy(l2.src, mac_b, 6);
	len = rfw_nd_build_na(buf, sizeof(buf), &l2, ip6_b, ip6_a, RFW_ND_NA_OVERRIDE);
	b_send(buf, len);
	/* The solicited NA from the target. */
	len = rfw_nd_build_na(buf, sizeof(buf), &l2, ip6_c, ip6_a,
	                      RFW_ND_NA_SOLICIT | RFW_ND_NA_OVERRIDE);
	b_send(buf, len);
	a_poll(now);
	ret = rfw_port_resolve(pa->q[0], ip6_c, now + 1, &mac);
	CHECK(ret == 0 && memcmp(mac.addr_bytes, mac_b, 6) == 0, "resolved: %d", ret);
}

static void test_timeouts(void)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc(), retrans = hz / 1000 * 20;
	uint8_t buf[256], ip[16];
	struct rte_ether_addr mac;
	struct rfw_neigh_msg m;
	unsigned sent = 0;
	int ret = 0;

	/* Nobody answers for 10.0.0.9: 3 probes, one per 20 ms, then -EHOSTUNREACH. */
	rfw_ip4_to_mapped(ip, 0x0a000009);
	for (unsigned i = 0; i < 10 && ret != -EHOSTUNREACH; i++) {
		ret = rfw_port_resolve(pa->q[0], ip, now + i * retrans, &mac);
		rfw_tx_flush(pa->q[0], now);
		while (b_recv(buf, sizeof(buf)))
			sent++;
	}
	CHECK(ret == -EHOSTUNREACH, "gave up: %d", ret);
	CHECK(sent == 3, "3 probes (neigh_max_probes), got %u", sent);
	CHECK(rfw_port_ctr(pa, RFW_PORT_CTR_neigh_resolve_failed) == 1, "neigh_resolve_failed");
	CHECK(rfw_neigh_find(pa->neigh, ip) == NULL, "entry removed");

	/* 10.0.0.3 is REACHABLE; after neigh_reachable_ms (200) it is STALE: still used, and
	 * a unicast ARP request to B's MAC confirms it. */
	rfw_ip4_to_mapped(ip, 0x0a000003);
	ret = rfw_port_resolve(pa->q[0], ip, now + hz / 1000 * 250, &mac);
	CHECK(ret == 0, "stale entry still resolves: %d", ret);
	CHECK(rfw_neigh_find(pa->neigh, ip)->state == RFW_NEIGH_STALE, "STALE");
	rfw_tx_flush(pa->q[0], now);
	CHECK(rfw_neigh_parse(buf, b_recv(buf, sizeof(buf)), &m) == RFW_NEIGH_ERR_OK &&
	          m.kind == RFW_NEIGH_ARP_REQUEST && memcmp(m.l2.dst, mac_b, 6) == 0,
	      "unicast re-probe to B");
	/* Garbage collection after neigh_gc_ms (1000) without confirmation. */
	rfw_port_neigh_age(pa, now + hz * 2);
	CHECK(rfw_neigh_find(pa->neigh, ip) == NULL, "aged out");
}

int main(int argc, char **argv)
{
	struct rte_ring *r_ab, *r_ba;
	struct rfw_port_conf conf = {
	    .nb_mbufs = 1024,
	    .neigh_retrans_ms = 20,
	    .neigh_reachable_ms = 200,
	    .neigh_gc_ms = 1000,
	};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = ip4_a, .has_ip6 = true};
	int port_a;

	if (rfw_eal_init(argc, argv) < 0)
		return 1;
	/* Frames A sends land on r_ab, which B receives from; and the other way. */
	r_ab = rte_ring_create("r_ab", 256, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_ba = rte_ring_create("r_ba", 256, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	pool_b = rfw_pktmbuf_pool_create("pool_b", 512, -1);
	if (r_ab == NULL || r_ba == NULL || pool_b == NULL) {
		fprintf(stderr, "rings/pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	port_a = rte_eth_from_rings("ring_a", &r_ba, 1, &r_ab, 1, (unsigned)rte_socket_id());
	port_b =
	    (uint16_t)rte_eth_from_rings("ring_b", &r_ab, 1, &r_ba, 1, (unsigned)rte_socket_id());
	if (port_a < 0) {
		fprintf(stderr, "rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	memcpy(id.ip6, ip6_a, 16);
	pa = rfw_port_setup((uint16_t)port_a, &conf, &id);
	if (pa == NULL) {
		fprintf(stderr, "rfw_port_setup: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	{
		struct rte_eth_conf ec = {0};

		if (rte_eth_dev_configure(port_b, 1, 1, &ec) != 0 ||
		    rte_eth_rx_queue_setup(port_b, 0, 256, 0, NULL, pool_b) != 0 ||
		    rte_eth_tx_queue_setup(port_b, 0, 256, 0, NULL) != 0 ||
		    rte_eth_dev_start(port_b) != 0) {
			fprintf(stderr, "port B setup failed\n");
			return 1;
		}
	}
	test_arp_reply();
	test_arp_resolve();
	test_nd_na();
	test_nd_resolve();
	test_timeouts();
	rfw_port_close(pa);
	rte_eth_dev_stop(port_b);
	rte_eth_dev_close(port_b);
	rfw_eal_cleanup();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_neigh: all checks passed\n");
	return 0;
}
