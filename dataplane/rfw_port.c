/* SPDX-License-Identifier: BSD-3-Clause */
/* librocefw port layer: EAL, ports, RX classification, TX buffering, ARP / ND (rfw_port.h). */
#include "dataplane/rfw_port.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "wire/neigh_wire.h"
#include "dataplane/rfw_log.h"
#include "dataplane/rfw_neigh.h"
#include "dataplane/rfw_steer.h"

RTE_LOG_REGISTER_DEFAULT(rfw_logtype, NOTICE);

static const char *const ctr_names[] = {
#define RFW_PORT_CTR_NAME(name, doc) [RFW_PORT_CTR_##name] = #name,
    RFW_FOREACH_PORT_CTR(RFW_PORT_CTR_NAME)
#undef RFW_PORT_CTR_NAME
};
static const char *const ctr_docs[] = {
#define RFW_PORT_CTR_DOC(name, doc) [RFW_PORT_CTR_##name] = doc,
    RFW_FOREACH_PORT_CTR(RFW_PORT_CTR_DOC)
#undef RFW_PORT_CTR_DOC
};
_Static_assert(RTE_DIM(ctr_names) == RFW_PORT_CTR__COUNT, "counter name table");
_Static_assert(RFW_NEIGH_ERR__COUNT <= 32, "rfw_queue.neigh_bad is too small");

const char *rfw_port_ctr_name(enum rfw_port_ctr c)
{
	return (unsigned)c < RFW_PORT_CTR__COUNT ? ctr_names[c] : "unknown";
}

const char *rfw_port_ctr_doc(enum rfw_port_ctr c)
{
	return (unsigned)c < RFW_PORT_CTR__COUNT ? ctr_docs[c] : "unknown";
}

/* Ports set up in this process, for rfw_port_get() and telemetry. */
static struct rfw_port *ports[RTE_MAX_ETHPORTS];

struct rfw_port *rfw_port_get(uint16_t port_id)
{
	return port_id < RTE_MAX_ETHPORTS ? ports[port_id] : NULL;
}

int rfw_eal_init(int argc, char **argv)
{
	int ret = rte_eal_init(argc, argv);

	if (ret < 0) {
		int err = rte_errno ? rte_errno : EINVAL;

		fprintf(stderr,
		        "rocefw: EAL init failed: %s\n"
		        "  without hugepages use: --no-huge -m 512 --no-pci --no-shconf -l <core>\n"
		        "  (--file-prefix=<name> instead of --no-shconf for telemetry; --in-memory "
		        "is rejected with --no-huge)\n",
		        rte_strerror(err));
		return -err;
	}
	return ret;
}

int rfw_eal_cleanup(void)
{
	rte_delay_ms(RFW_EAL_SETTLE_MS);
	return rte_eal_cleanup();
}

struct rte_mempool *rfw_pktmbuf_pool_create(const char *name, unsigned n, int socket)
{
	/* A per-lcore cache as l2fwd's (256), kept below n / 1.5 as rte_mempool requires. */
	unsigned cache = RTE_MIN(256u, n / 2);
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create(name, n, cache, 0, RFW_MBUF_DATA_ROOM,
	                             socket < 0 ? (int)rte_socket_id() : socket);
	if (mp == NULL)
		RFW_LOG(ERR, "mempool %s (%u x %u B) failed: %s (more memory: EAL -m)", name, n,
		        (unsigned)RFW_MBUF_DATA_ROOM, rte_strerror(rte_errno));
	return mp;
}

static void port_free(struct rfw_port *p)
{
	rfw_steer_free(p);
	rfw_pfc_port_free(p);
	for (unsigned i = 0; i < RFW_MAX_QUEUES; i++) {
		if (p->q[i] != NULL)
			rte_free(p->q[i]->txb);
		rte_free(p->q[i]);
	}
	rfw_neigh_free(p->neigh);
	if (p->own_pool)
		rte_mempool_free(p->pool);
	rte_free(p);
}

static int conf_check(const struct rfw_port_conf *c)
{
	if (c->nb_rxq > RFW_MAX_QUEUES || c->nb_txq > RFW_MAX_QUEUES)
		return -EINVAL;
	if (c->tx_drain_us > 100000)
		return -EINVAL;
	if (c->neigh_capacity != 0 && c->neigh_capacity < 8)
		return -EINVAL;
	return rfw_pfc_conf_check(&c->pfc);
}

#define DEF(v, d) ((v) ? (v) : (d))

/*
 * The MTU the PMD admits, at most @mtu. Some PMDs report less than 4200: memif's
 * max_rx_pktlen is 1518 in 22.11 although with bsize=8192 it carries 4 KiB frames.
 * rte_eth_dev_configure() rejects an MTU above max_rx_pktlen minus the L2 overhead, so the port
 * keeps what the PMD admits and we say so (a path MTU of 4096 needs 4196 bytes; whether bigger
 * frames still pass is the PMD's business: memif and net_ring do not enforce the MTU on RX).
 */
static uint16_t mtu_admitted(const struct rfw_port *p, const struct rte_eth_dev_info *di,
                             uint16_t mtu)
{
	uint32_t overhead = (di->max_mtu != UINT16_MAX && di->max_rx_pktlen > di->max_mtu)
	                        ? di->max_rx_pktlen - di->max_mtu
	                        : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	uint32_t lim = RTE_MIN((uint32_t)di->max_mtu, di->max_rx_pktlen - overhead);

	if (mtu <= lim)
		return mtu;
	RFW_LOG(WARNING, "port %u (%s): MTU %u above what the PMD admits (%u): using %u",
	        p->port_id, di->driver_name, mtu, lim, lim);
	return (uint16_t)lim;
}

/* RX queues on the port's pool, TX queues, on @socket. 0 or a negative errno. */
static int queues_setup(struct rfw_port *p, uint16_t nb_rxd, uint16_t nb_txd, int socket)
{
	int ret;

	for (uint16_t q = 0; q < p->nb_rxq; q++) {
		ret =
		    rte_eth_rx_queue_setup(p->port_id, q, nb_rxd, (unsigned)socket, NULL, p->pool);
		if (ret != 0)
			return ret;
	}
	for (uint16_t q = 0; q < p->nb_txq; q++) {
		ret = rte_eth_tx_queue_setup(p->port_id, q, nb_txd, (unsigned)socket, NULL);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static bool memif_zero_copy(uint16_t port_id);

/* rfw_port_tx_ref's answer for @port_id, whose info is @di. */
static bool tx_ref_capable(uint16_t port_id, const struct rte_eth_dev_info *di)
{
	static const char *const copying[] = {"net_memif", "net_af_packet", "net_tap", "net_pcap"};
	bool known = false;

	if (di->driver_name == NULL || !(di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
		return false;
	for (size_t i = 0; i < RTE_DIM(copying); i++)
		known |= strcmp(di->driver_name, copying[i]) == 0;
	return known && !memif_zero_copy(port_id);
}

static int port_configure(struct rfw_port *p, const struct rfw_port_conf *c)
{
	struct rte_eth_conf ec = {0};
	struct rte_eth_dev_info di;
	uint16_t nb_rxd = DEF(c->nb_rxd, RFW_NB_DESC_DEFAULT);
	uint16_t nb_txd = DEF(c->nb_txd, RFW_NB_DESC_DEFAULT);
	uint16_t mtu = DEF(c->mtu, RFW_IP_MTU_DEFAULT);
	int socket = rte_eth_dev_socket_id(p->port_id);
	int ret;

	if (socket < 0)
		socket = (int)rte_socket_id();
	ret = rte_eth_dev_info_get(p->port_id, &di);
	if (ret != 0)
		return ret;
	if (p->nb_rxq > di.max_rx_queues || p->nb_txq > di.max_tx_queues) {
		RFW_LOG(ERR, "port %u (%s): %u/%u queues asked, PMD allows %u/%u", p->port_id,
		        di.driver_name, p->nb_rxq, p->nb_txq, di.max_rx_queues, di.max_tx_queues);
		return -EINVAL;
	}
	if (p->nb_rxq > 1) {
		/* Spread flows by IP addresses and UDP ports (RoCEv2 varies the UDP source port
		 * per QP for this). A PMD without RSS gets none, and says so. */
		ec.rx_adv_conf.rss_conf.rss_hf =
		    (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & di.flow_type_rss_offloads;
		if (ec.rx_adv_conf.rss_conf.rss_hf != 0)
			ec.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		else
			RFW_LOG(INFO,
			        "port %u (%s): no RSS: queue i receives what the PMD gives it "
			        "(memif, ring: what the peer sent on its queue i); the dispatcher "
			        "brings each frame to its owner",
			        p->port_id, di.driver_name);
	}
	p->tx_ref = tx_ref_capable(p->port_id, &di);
	if (p->tx_ref)
		ec.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	mtu = mtu_admitted(p, &di, mtu);
	ec.rxmode.mtu = mtu;
	ret = rte_eth_dev_configure(p->port_id, p->nb_rxq, p->nb_txq, &ec);
	if (ret != 0)
		return ret;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (ret != 0)
		return ret;
	ret = queues_setup(p, nb_rxd, nb_txd, socket);
	if (ret != 0)
		return ret;
	ret = rte_eth_dev_set_mtu(p->port_id, mtu);
	if (ret != 0 && ret != -ENOTSUP)
		RFW_LOG(WARNING, "port %u: set MTU %u: %s", p->port_id, mtu, rte_strerror(-ret));
	if (rte_eth_dev_get_mtu(p->port_id, &p->mtu) != 0)
		p->mtu = mtu;
	ret = rte_eth_dev_start(p->port_id);
	if (ret != 0)
		return ret;
	if (c->promisc) {
		ret = rte_eth_promiscuous_enable(p->port_id);
		if (ret != 0)
			RFW_LOG(WARNING, "port %u: promiscuous: %s", p->port_id,
			        rte_strerror(-ret));
	}
	/* NS for our address go to its solicited-node multicast group (RFC 4861 7.2.2). */
	ret = rte_eth_allmulticast_enable(p->port_id);
	if (ret != 0 && ret != -ENOTSUP)
		RFW_LOG(WARNING, "port %u: all-multicast: %s", p->port_id, rte_strerror(-ret));
	return 0;
}

/* The port's software queues (TX buffers, drain period) on @socket. 0 or -ENOMEM. */
static int queues_alloc(struct rfw_port *p, const struct rfw_port_conf *c, int socket)
{
	uint64_t hz = rte_get_tsc_hz();

	for (uint16_t i = 0; i < RTE_MAX(p->nb_rxq, p->nb_txq); i++) {
		struct rfw_queue *q =
		    rte_zmalloc_socket("rfw_queue", sizeof(*q), RTE_CACHE_LINE_SIZE, socket);

		if (q == NULL)
			return -ENOMEM;
		p->q[i] = q;
		q->port = p;
		q->port_id = p->port_id;
		q->qid = i;
		q->drain_tsc = (hz + 1000000 - 1) / 1000000 * DEF(c->tx_drain_us, RFW_TX_DRAIN_US);
		q->txb =
		    rte_zmalloc_socket("rfw_txb", RTE_ETH_TX_BUFFER_SIZE(RFW_MAX_BURST), 0, socket);
		if (q->txb == NULL)
			return -ENOMEM;
		rte_eth_tx_buffer_init(q->txb, RFW_MAX_BURST);
		rte_eth_tx_buffer_set_err_callback(q->txb, rte_eth_tx_buffer_count_callback,
		                                   &q->ctr[RFW_PORT_CTR_tx_dropped]);
	}
	return 0;
}

struct rte_mbuf *rfw_tx_own(struct rfw_queue *q, struct rte_mbuf *m)
{
	struct rte_mbuf *c;

	if (m->nb_segs == 1)
		return m;
	c = rte_pktmbuf_copy(m, q->port->pool, 0, UINT32_MAX);
	rte_pktmbuf_free(m);
	if (c == NULL)
		q->ctr[RFW_PORT_CTR_tx_ref_copy_failed]++;
	else
		q->ctr[RFW_PORT_CTR_tx_ref_copied]++;
	return c;
}

/* After a burst of which the PMD took only @sent frames: the others move to the front of the
 * buffer, in order, for the next flush (out of line: the PMD's queue is full, rare), each one
 * in mbufs of its own (rfw_tx_own). */
void rfw_tx_keep(struct rfw_queue *q, uint16_t sent)
{
	struct rte_eth_dev_tx_buffer *b = q->txb;
	uint16_t keep = 0;

	for (uint16_t i = sent; i < b->length; i++) {
		struct rte_mbuf *m = rfw_tx_own(q, b->pkts[i]);

		if (m != NULL)
			b->pkts[keep++] = m;
	}
	b->length = keep;
	q->tx_backlog = b->length;
	q->ctr[RFW_PORT_CTR_tx_backlogged] += b->length;
}

/*
 * rfw_tx_one for a frame that fills the buffer (sent at once) or finds it still full of
 * frames the PMD refused (a burst first; lost if the buffer stays full).
 */
void rfw_tx_one_last(struct rfw_queue *q, struct rte_mbuf *m)
{
	struct rte_eth_dev_tx_buffer *b = q->txb;

	if (b->length == b->size) {
		rfw_tx_burst_out(q);
		if (b->length == b->size) {
			q->ctr[RFW_PORT_CTR_tx_dropped]++;
			rte_pktmbuf_free(m);
			return;
		}
	}
	b->pkts[b->length++] = m;
	if (b->length == b->size)
		rfw_tx_burst_out(q);
}

void rfw_tx_one_icrc_last(struct rfw_queue *q, struct rte_mbuf *m, uint8_t *l3, size_t len,
                          uint8_t ip_ver)
{
	struct rte_eth_dev_tx_buffer *b = q->txb;

	if (b->length + 1u == b->size) {
		/* It fills the buffer: its ICRC with the others' (a full burst of 32 is eight
		 * fours; computed alone it took a slower fold, and left three to pad to four),
		 * then the burst. */
		rfw_tx_icrc_queue(q, m, l3, len, ip_ver);
		rfw_tx_burst_out(q);
		return;
	}
	rfw_icrc_put(l3 + len, rfw_icrc_compute(l3, len, ip_ver));
	rfw_tx_one_last(q, m);
}

void rfw_tx_icrc_fill(struct rfw_queue *q)
{
	uint32_t crc[RFW_MAX_BURST];

	rfw_icrc_compute_n(q->icrc_l3, q->icrc_len, q->icrc_ver, crc, q->icrc_n);
	for (uint16_t i = 0; i < q->icrc_n; i++)
		rfw_icrc_put((uint8_t *)(uintptr_t)q->icrc_l3[i] + q->icrc_len[i], crc[i]);
	q->icrc_n = 0;
}

unsigned rfw_tx_drop_held(struct rfw_queue *q)
{
	unsigned n = q->txb->length;

	rte_pktmbuf_free_bulk(q->txb->pkts, n);
	q->txb->length = 0;
	q->icrc_n = 0;
	q->tx_backlog = 0;
	return n;
}

/* The mbuf pool (the caller's, or our own) and the neighbour table. 0, or -1 (rte_errno). */
static int pool_and_neigh(struct rfw_port *p, const struct rfw_port_conf *c, int socket)
{
	uint64_t hz = rte_get_tsc_hz();
	char name[RTE_MEMZONE_NAMESIZE];

	if (c->pool != NULL) {
		p->pool = c->pool;
	} else {
		snprintf(name, sizeof(name), "rfw_pool_%u", p->port_id);
		/* Default: 8192, or 4096 per queue pair (its RX ring, TX ring and dispatch rings
		 * full at once) when that is more. */
		p->pool = rfw_pktmbuf_pool_create(
		    name,
		    DEF(c->nb_mbufs, RTE_MAX((unsigned)RFW_NB_MBUF_DEFAULT, 4096u * p->nb_rxq)),
		    socket);
		if (p->pool == NULL)
			return -1;
		p->own_pool = true;
	}
	snprintf(name, sizeof(name), "rfw_neigh_%u", p->port_id);
	p->neigh =
	    rfw_neigh_create(name, DEF(c->neigh_capacity, 1024), socket,
	                     hz / 1000 * DEF(c->neigh_reachable_ms, 30000),
	                     hz / 1000 * DEF(c->neigh_retrans_ms, 1000),
	                     hz / 1000 * DEF(c->neigh_gc_ms, 120000), DEF(c->neigh_max_probes, 3));
	return p->neigh != NULL ? 0 : -1;
}

struct rfw_port *rfw_port_setup(uint16_t port_id, const struct rfw_port_conf *conf,
                                const struct rfw_identity *id)
{
	static const struct rfw_port_conf defaults;
	const struct rfw_port_conf *c = conf ? conf : &defaults;
	struct rte_eth_link link = {0};
	struct rfw_port *p;
	int socket, ret;

	if (!rte_eth_dev_is_valid_port(port_id)) {
		rte_errno = ENODEV;
		return NULL;
	}
	if (conf_check(c) != 0 || ports[port_id] != NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	socket = rte_eth_dev_socket_id(port_id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	p = rte_zmalloc_socket("rfw_port", sizeof(*p), RTE_CACHE_LINE_SIZE, socket);
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	p->port_id = port_id;
	p->nb_rxq = DEF(c->nb_rxq, 1);
	p->nb_txq = DEF(c->nb_txq, 1);
	p->no_rx_filter = c->no_rx_filter;
	if (rte_eth_dev_get_name_by_port(port_id, p->name) != 0)
		snprintf(p->name, sizeof(p->name), "port%u", port_id);
	if (id != NULL)
		p->id = *id;
	if (rte_is_zero_ether_addr(&p->id.mac) && rte_eth_macaddr_get(port_id, &p->id.mac) != 0) {
		rte_errno = ENODEV;
		goto fail;
	}
	/* RoCEv2 GID: the IPv4-mapped form of the IPv4 address (what rxe lists at index 1),
	 * else the IPv6 address. */
	if (p->id.has_ip4)
		rfw_ip4_to_mapped(p->gid, p->id.ip4);
	else if (p->id.has_ip6)
		memcpy(p->gid, p->id.ip6, 16);

	rte_spinlock_init(&p->neigh_lock);
	if (pool_and_neigh(p, c, socket) != 0)
		goto fail;
	if (queues_alloc(p, c, socket) != 0 ||
	    (p->nb_rxq > 1 && rfw_steer_create(p, socket) != 0)) {
		rte_errno = ENOMEM;
		goto fail;
	}
	if (rfw_pfc_port_init(p, &c->pfc, socket) != 0) {
		rte_errno = ENOMEM;
		goto fail;
	}
	ret = port_configure(p, c);
	if (ret != 0) {
		RFW_LOG(ERR, "port %u (%s): setup failed: %s", port_id, p->name,
		        rte_strerror(-ret));
		rte_errno = -ret;
		goto fail;
	}
	ports[port_id] = p;
	if (rte_eth_link_get_nowait(port_id, &link) == 0)
		RFW_LOG(INFO, "port %u (%s): link %s, %u Mb/s, MTU %u", port_id, p->name,
		        link.link_status ? "up" : "down", link.link_speed, p->mtu);
	rfw_pfc_port_link(p, link.link_speed);
	return p;
fail:
	port_free(p);
	return NULL;
}

void rfw_port_close(struct rfw_port *p)
{
	if (p == NULL)
		return;
	for (unsigned i = 0; i < p->nb_txq; i++) {
		struct rfw_queue *q = p->q[i];

		if (q == NULL)
			continue;
		rfw_tx_flush(q, rte_rdtsc());
		/* What the PMD still refuses (a peer gone) is freed with the port. */
		q->ctr[RFW_PORT_CTR_tx_dropped] += q->txb->length;
		rte_pktmbuf_free_bulk(q->txb->pkts, q->txb->length);
		q->txb->length = 0;
		q->tx_backlog = 0;
	}
	rte_eth_dev_stop(p->port_id);
	rte_eth_dev_close(p->port_id);
	ports[p->port_id] = NULL;
	port_free(p);
}

/* Whether @port_id is a net_memif port (@di filled). */
static bool is_memif(uint16_t port_id, struct rte_eth_dev_info *di)
{
	return rte_eth_dev_info_get(port_id, di) == 0 && di->driver_name != NULL &&
	       strcmp(di->driver_name, "net_memif") == 0;
}

/* The devargs of @port_id when it is a memif port in the client role ("role=client"), else
 * NULL. */
static const char *memif_client_args(uint16_t port_id, struct rte_eth_dev_info *di)
{
	const struct rte_devargs *da;

	if (!is_memif(port_id, di) || di->device == NULL)
		return NULL;
	da = rte_dev_devargs(di->device);
	if (da == NULL || da->args == NULL || strstr(da->args, "role=client") == NULL)
		return NULL;
	return da->args;
}

static bool memif_client(uint16_t port_id, struct rte_eth_dev_info *di)
{
	return memif_client_args(port_id, di) != NULL;
}

/* Whether @port_id is memif's client in zero-copy mode, which hands the peer its mbufs' own
 * memory (DPDK's memif guide; the mode is the client's only). */
static bool memif_zero_copy(uint16_t port_id)
{
	struct rte_eth_dev_info di;
	const char *args = memif_client_args(port_id, &di);

	return args != NULL && strstr(args, "zero-copy=yes") != NULL;
}

bool rfw_port_tx_copies(const struct rfw_port *p)
{
	/* Every other PMD here copies a frame out on TX (memif's copy mode, the kernel's
	 * af_packet, tap and af_xdp copies, pcap's write). */
	return !memif_zero_copy(p->port_id);
}

bool rfw_port_tx_ref(const struct rfw_port *p)
{
	return p->tx_ref;
}

/* While waiting for a memif link, restart the port this often (ms): see rfw_port_link_wait. */
#define MEMIF_RECONNECT_MS 1000

int rfw_port_link_wait(const struct rfw_port *p, unsigned timeout_ms)
{
	struct rte_eth_dev_info di;
	struct rte_eth_link link;
	bool memif = memif_client(p->port_id, &di);

	for (unsigned t = 0;; t += 10) {
		if (rte_eth_link_get_nowait(p->port_id, &link) == 0 && link.link_status)
			return 0;
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		/*
		 * A memif client connects once, at port start, and does not retry. A server accepts
		 * a client only once its own port is started: a client that came between the
		 * server's probe (socket created) and its port start is told "ID not found" and
		 * stays down. Restarting the client port makes it connect again, so the client may
		 * start as soon as the server's socket exists. A server is never restarted: it only
		 * waits, and restarting it could drop a client in mid-handshake.
		 */
		if (memif && t && t % MEMIF_RECONNECT_MS == 0) {
			RFW_LOG(INFO,
			        "port %u: memif link down after %u ms: restarting to reconnect",
			        p->port_id, t);
			if (rte_eth_dev_stop(p->port_id) == 0)
				(void)rte_eth_dev_start(p->port_id);
		}
		rte_delay_ms(10);
	}
}

int rfw_port_peer_gone_wait(const struct rfw_port *p, unsigned timeout_ms)
{
	struct rte_eth_dev_info di;
	struct rte_eth_link link;

	/* Only memif's link follows its peer; elsewhere there is nothing to wait for. */
	if (!is_memif(p->port_id, &di))
		return 0;
	for (unsigned t = 0;; t += 5) {
		if (rte_eth_link_get_nowait(p->port_id, &link) == 0 && !link.link_status)
			return 0;
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		rte_delay_ms(5);
	}
}

uint64_t rfw_port_ctr(const struct rfw_port *p, enum rfw_port_ctr c)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < RFW_MAX_QUEUES; i++)
		if (p->q[i] != NULL)
			sum += p->q[i]->ctr[c];
	return sum;
}

/* ---- ARP / ND ---- */

/* A control frame from the port's pool, copied from @buf, into the TX buffer. */
static void send_ctl(struct rfw_queue *q, const uint8_t *buf, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(q->port->pool);
	char *d;

	if (unlikely(m == NULL)) {
		q->ctr[RFW_PORT_CTR_tx_alloc_failed]++;
		return;
	}
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (unlikely(d == NULL)) {
		rte_pktmbuf_free(m);
		q->ctr[RFW_PORT_CTR_tx_alloc_failed]++;
		return;
	}
	memcpy(d, buf, len);
	rfw_tx_one(q, m);
}

static void l2_reply(struct rfw_l2 *out, const struct rfw_l2 *in, const struct rfw_port *p)
{
	*out = *in; /* same VLAN tags as the request */
	memcpy(out->dst, in->src, 6);
	memcpy(out->src, p->id.mac.addr_bytes, 6);
}

static void l2_new(struct rfw_l2 *out, const struct rfw_port *p, const uint8_t dst[6])
{
	memset(out, 0, sizeof(*out));
	memcpy(out->dst, dst, 6);
	memcpy(out->src, p->id.mac.addr_bytes, 6);
}

static bool is_our_ip(const struct rfw_port *p, const uint8_t ip[16])
{
	if (rfw_ip_is_mapped4(ip))
		return p->id.has_ip4 && rfw_get_be32(ip + 12) == p->id.ip4;
	return p->id.has_ip6 && memcmp(ip, p->id.ip6, 16) == 0;
}

/*
 * A parsed frame's destination is ours. An IPv4 one is tested on the 4 bytes the parse stored
 * whole, just before: a load across its byte stores of the mapped prefix (is_our_ip) cannot
 * take its value from them and waits for them to reach the cache (2.6 % of a 64 B loopback's
 * cycles).
 */
static inline bool is_our_dst(const struct rfw_port *p, const struct rfw_frame_view *v)
{
	if (v->ip_ver == 4)
		return p->id.has_ip4 && rfw_get_be32(v->dst_ip + 12) == p->id.ip4;
	return is_our_ip(p, v->dst_ip);
}

/* Send one probe for @e: broadcast ARP / solicited-node NS, or unicast when @unicast. */
static void send_probe(struct rfw_queue *q, struct rfw_neigh_entry *e, bool unicast,
                       uint64_t now_tsc)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t zero[6];
	const struct rfw_port *p = q->port;
	uint8_t buf[RFW_NEIGH_FRAME_MAX];
	struct rfw_l2 l2;
	size_t len;

	if (rfw_ip_is_mapped4(e->ip)) {
		l2_new(&l2, p, unicast ? e->mac.addr_bytes : bcast);
		len = rfw_arp_build(buf, sizeof(buf), &l2, 1, p->id.mac.addr_bytes, p->id.ip4, zero,
		                    rfw_get_be32(e->ip + 12));
		q->ctr[RFW_PORT_CTR_arp_request_sent]++;
	} else {
		uint8_t dst[16], mac[6];

		if (unicast) {
			memcpy(dst, e->ip, 16);
			memcpy(mac, e->mac.addr_bytes, 6);
		} else {
			rfw_ip6_solicited_node(dst, e->ip);
			rfw_ip6_mcast_mac(mac, dst);
		}
		l2_new(&l2, p, mac);
		len = rfw_nd_build_ns(buf, sizeof(buf), &l2, p->id.ip6, dst, e->ip);
		q->ctr[RFW_PORT_CTR_nd_ns_sent]++;
	}
	send_ctl(q, buf, len);
	e->probes++;
	e->probe_tsc = now_tsc;
}

static int resolve_locked(struct rfw_queue *q, const uint8_t ip[16], uint64_t now_tsc,
                          struct rte_ether_addr *mac)
{
	struct rfw_neigh *n = q->port->neigh;
	struct rfw_neigh_entry *e;

	if (rfw_ip_is_mapped4(ip) ? !q->port->id.has_ip4 : !q->port->id.has_ip6)
		return -EAFNOSUPPORT;
	e = rfw_neigh_find(n, ip);
	if (likely(e != NULL && e->state == RFW_NEIGH_REACHABLE)) {
		if (likely(now_tsc - e->confirmed_tsc < n->reachable_tsc)) {
			*mac = e->mac;
			return 0;
		}
		e->state = RFW_NEIGH_STALE;
		e->probes = 0;
		e->probe_tsc = 0;
	}
	if (e == NULL) {
		e = rfw_neigh_get(n, ip);
		if (e == NULL) {
			q->ctr[RFW_PORT_CTR_neigh_table_full]++;
			return -ENOSPC;
		}
		send_probe(q, e, false, now_tsc);
		return -EAGAIN;
	}
	if (e->state == RFW_NEIGH_STALE) {
		/* Still usable; confirm it with unicast probes (RFC 4861 7.3.3 PROBE), then
		 * fall back to broadcast resolution once they are exhausted. */
		if (now_tsc - e->probe_tsc >= n->retrans_tsc) {
			if (e->probes >= n->max_probes) {
				e->state = RFW_NEIGH_INCOMPLETE;
				e->probes = 0;
				send_probe(q, e, false, now_tsc);
				return -EAGAIN;
			}
			send_probe(q, e, true, now_tsc);
		}
		*mac = e->mac;
		return 0;
	}
	/* INCOMPLETE */
	if (now_tsc - e->probe_tsc < n->retrans_tsc)
		return -EAGAIN;
	if (e->probes >= n->max_probes) {
		rfw_neigh_delete(n, ip);
		q->ctr[RFW_PORT_CTR_neigh_resolve_failed]++;
		return -EHOSTUNREACH;
	}
	send_probe(q, e, false, now_tsc);
	return -EAGAIN;
}

int rfw_port_resolve(struct rfw_queue *q, const uint8_t ip[16], uint64_t now_tsc,
                     struct rte_ether_addr *mac)
{
	int rc;

	rte_spinlock_lock(&q->port->neigh_lock);
	rc = resolve_locked(q, ip, now_tsc, mac);
	rte_spinlock_unlock(&q->port->neigh_lock);
	return rc;
}

void rfw_port_neigh_age(struct rfw_port *p, uint64_t now_tsc)
{
	struct rfw_neigh *n = p->neigh;

	rte_spinlock_lock(&p->neigh_lock);
	for (uint32_t i = 0; i < n->capacity; i++) {
		struct rfw_neigh_entry *e = &n->e[i];

		if (e->state == RFW_NEIGH_REACHABLE || e->state == RFW_NEIGH_STALE) {
			if (now_tsc - e->confirmed_tsc >= n->gc_tsc) {
				uint8_t ip[16];

				memcpy(ip, e->ip, 16);
				rfw_neigh_delete(n, ip);
			}
		}
	}
	rte_spinlock_unlock(&p->neigh_lock);
}

/*
 * Learn from a message about its sender. RFC 826's merge rule: update an existing entry;
 * create one only when the message is addressed to us. A reply / solicited NA confirms
 * reachability (REACHABLE); otherwise the address is only learnt (STALE, RFC 4861 7.2.3).
 */
static void neigh_learn(struct rfw_queue *q, const uint8_t ip[16], const uint8_t mac[6],
                        bool for_us, bool confirm, uint64_t now_tsc)
{
	struct rfw_neigh *n = q->port->neigh;
	struct rfw_neigh_entry *e = rfw_neigh_find(n, ip);

	if (e == NULL) {
		if (!for_us)
			return;
		e = rfw_neigh_get(n, ip);
		if (e == NULL) {
			q->ctr[RFW_PORT_CTR_neigh_table_full]++;
			return;
		}
	}
	/* An unconfirmed learn never downgrades a REACHABLE entry with the same address. */
	if (!confirm && e->state == RFW_NEIGH_REACHABLE && memcmp(e->mac.addr_bytes, mac, 6) == 0)
		return;
	rfw_neigh_set(e, mac, confirm, now_tsc);
	q->ctr[RFW_PORT_CTR_neigh_learned]++;
}

static void neigh_input_locked(struct rfw_queue *q, const uint8_t *buf, size_t len, bool is_arp,
                               uint64_t now_tsc)
{
	const struct rfw_port *p = q->port;
	struct rfw_neigh_msg m;
	enum rfw_neigh_err err;
	uint8_t out[RFW_NEIGH_FRAME_MAX];
	struct rfw_l2 l2;
	bool for_us;

	q->ctr[is_arp ? RFW_PORT_CTR_rx_arp : RFW_PORT_CTR_rx_nd]++;
	err = rfw_neigh_parse(buf, len, &m);
	if (err != RFW_NEIGH_ERR_OK) {
		q->ctr[RFW_PORT_CTR_rx_neigh_bad]++;
		q->neigh_bad[err]++;
		return;
	}
	for_us = is_our_ip(p, m.target);
	switch (m.kind) {
	case RFW_NEIGH_ARP_REQUEST:
	case RFW_NEIGH_ARP_REPLY:
		if (!p->id.has_ip4)
			return;
		/* A sender claiming our own address (or 0.0.0.0, an ARP probe) is not learnt. */
		if (!is_our_ip(p, m.src_ip) && rfw_get_be32(m.src_ip + 12) != 0)
			neigh_learn(q, m.src_ip, m.lla, for_us,
			            m.kind == RFW_NEIGH_ARP_REPLY && for_us, now_tsc);
		if (m.kind == RFW_NEIGH_ARP_REQUEST && for_us) {
			l2_reply(&l2, &m.l2, p);
			len = rfw_arp_build(out, sizeof(out), &l2, 2, p->id.mac.addr_bytes,
			                    p->id.ip4, m.lla, rfw_get_be32(m.src_ip + 12));
			send_ctl(q, out, len);
			q->ctr[RFW_PORT_CTR_arp_reply_sent]++;
		}
		return;
	case RFW_NEIGH_NS:
		if (!p->id.has_ip6 || !for_us)
			return;
		l2_reply(&l2, &m.l2, p);
		if (rfw_ip6_is_unspecified(m.src_ip)) {
			/* DAD probe for our address: answer to all-nodes (RFC 4861 7.2.4). */
			static const uint8_t all_nodes[16] = {0xff, 2, 0, 0, 0, 0, 0, 0,
			                                      0,    0, 0, 0, 0, 0, 0, 1};

			rfw_ip6_mcast_mac(l2.dst, all_nodes);
			len = rfw_nd_build_na(out, sizeof(out), &l2, p->id.ip6, all_nodes,
			                      RFW_ND_NA_OVERRIDE);
		} else {
			if (m.has_lla) {
				neigh_learn(q, m.src_ip, m.lla, true, false, now_tsc);
				memcpy(l2.dst, m.lla, 6);
			}
			len = rfw_nd_build_na(out, sizeof(out), &l2, p->id.ip6, m.src_ip,
			                      RFW_ND_NA_SOLICIT | RFW_ND_NA_OVERRIDE);
		}
		send_ctl(q, out, len);
		q->ctr[RFW_PORT_CTR_nd_na_sent]++;
		return;
	case RFW_NEIGH_NA:
		/* RFC 4861 7.2.5: an NA for an address with no entry is ignored. */
		if (p->id.has_ip6 && m.has_lla && rfw_neigh_find(p->neigh, m.target) != NULL)
			neigh_learn(q, m.target, m.lla, false, m.na_flags & RFW_ND_NA_SOLICIT,
			            now_tsc);
		return;
	}
}

/* ---- RX ---- */

static void neigh_input(struct rfw_queue *q, const uint8_t *buf, size_t len, bool is_arp,
                        uint64_t now_tsc)
{
	rte_spinlock_lock(&q->port->neigh_lock);
	neigh_input_locked(q, buf, len, is_arp, now_tsc);
	rte_spinlock_unlock(&q->port->neigh_lock);
}

static inline bool mac_for_us(const struct rfw_port *p, const uint8_t *dst)
{
	/* Unicast to us, or any group address (multicast RoCEv2 is UD's business). */
	return (dst[0] & 1) || memcmp(dst, p->id.mac.addr_bytes, 6) == 0;
}

enum rx_verdict {
	RX_DROP,    /* counted; the caller frees it */
	RX_MINE,    /* a RoCEv2 frame for this queue's NIC */
	RX_STEERED, /* handed to another queue (rfw_steer.h) */
};

/* A non-RoCEv2 frame: ARP / ND answered and learnt, PAUSE / PFC taken, the rest counted. */
static enum rx_verdict classify_other(struct rfw_queue *q, struct rte_mbuf *m,
                                      const struct rfw_frame_view *v, uint64_t now_tsc,
                                      bool may_steer)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	bool nd = v->kind != RFW_FRAME_NOT_IP && v->ip_ver == 6 &&
	          v->ip_proto == RFW_IPPROTO_ICMPV6 && v->l4_off + 1u <= m->data_len &&
	          (d[v->l4_off] == RFW_ICMP6_NS || d[v->l4_off] == RFW_ICMP6_NA);
	bool ctl =
	    nd || (v->kind == RFW_FRAME_NOT_IP && (v->ethertype == RFW_ETHERTYPE_ARP ||
	                                           v->ethertype == RFW_ETHERTYPE_MAC_CONTROL));

	/* The port's control plane lives on queue 0 (rfw_port.h "Threading"). */
	if (ctl && may_steer && q->qid != 0 && q->port->steer != NULL) {
		rfw_steer_put(q, 0, m);
		return RX_STEERED;
	}
	if (nd)
		neigh_input(q, d, m->data_len, false, now_tsc);
	else if (v->kind != RFW_FRAME_NOT_IP)
		q->ctr[RFW_PORT_CTR_rx_not_rocev2]++;
	else if (v->ethertype == RFW_ETHERTYPE_ARP)
		neigh_input(q, d, m->data_len, true, now_tsc);
	else if (v->ethertype == RFW_ETHERTYPE_MAC_CONTROL)
		rfw_pfc_rx(q, d, m->data_len, now_tsc);
	else
		q->ctr[RFW_PORT_CTR_rx_other]++;
	return RX_DROP;
}

/*
 * Classify one frame. @may_steer: it came from the PMD (a frame another queue handed over is
 * never handed on). A RoCEv2 frame is handed to its owner before its ICRC is checked: the
 * owner checks it, so each frame's CRC is computed once, on the lcore that uses it.
 */
static inline enum rx_verdict classify(struct rfw_queue *q, struct rte_mbuf *m,
                                       struct rfw_rx_view *rv, uint64_t now_tsc, bool may_steer)
{
	const struct rfw_port *p = q->port;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	struct rfw_frame_view *v = &rv->f;
	enum rfw_frame_err err;

	if (unlikely(m->nb_segs != 1)) {
		q->ctr[RFW_PORT_CTR_rx_multiseg]++;
		return RX_DROP;
	}
	err = rfw_frame_parse_eth(d, m->data_len, v);
	if (unlikely(err != RFW_FRAME_ERR_OK)) {
		/* Frame-layer errors on frames that are not RoCEv2 (a truncated TCP segment)
		 * are malformed all the same: nobody else on this port will take them. */
		q->ctr[RFW_PORT_CTR_rx_malformed]++;
		q->malformed_frame[err]++;
		return RX_DROP;
	}
	if (unlikely(v->kind != RFW_FRAME_ROCEV2))
		return classify_other(q, m, v, now_tsc, may_steer);
	if (!p->no_rx_filter && (!mac_for_us(p, d) || !is_our_dst(p, v))) {
		q->ctr[RFW_PORT_CTR_rx_not_for_us]++;
		return RX_DROP;
	}
	/* The ICRC needs IP + UDP + BTH; shorter is malformed, not a CRC mismatch. */
	if (unlikely(v->ib_len < RFW_BTH_LEN)) {
		q->ctr[RFW_PORT_CTR_rx_malformed]++;
		q->malformed_ib[RFW_IB_ERR_TRUNC_BTH]++;
		return RX_DROP;
	}
	if (unlikely(p->steer != NULL) && may_steer) {
		/* BTH bytes 5..7: the destination QP (IBA 9.2). */
		uint16_t to = rfw_steer_owner(p->steer, rfw_get_be32(d + v->ib_off + 4) & 0xffffff);

		if (to != q->qid) {
			rfw_steer_put(q, to, m);
			return RX_STEERED;
		}
	}
	return RX_MINE; /* its ICRC and IB headers: rx_check, with the burst's others */
}

/*
 * The ICRCs of a burst's RoCEv2 frames (@n, in @pkts and @views), computed together: four
 * side by side cost about half of four one by one (rfw_icrc_compute_n). Then each one's IB
 * headers. A frame that fails either is counted and dropped, the rest closed up in order.
 */
static uint16_t rx_check(struct rfw_queue *q, struct rte_mbuf **pkts, struct rfw_rx_view *views,
                         uint16_t n)
{
	const uint8_t *l3[RFW_MAX_BURST];
	size_t len[RFW_MAX_BURST];
	uint8_t ver[RFW_MAX_BURST];
	uint32_t crc[RFW_MAX_BURST];
	uint16_t i, out = 0;

	for (i = 0; i < n; i++) {
		l3[i] = rte_pktmbuf_mtod(pkts[i], const uint8_t *) + views[i].f.l3_off;
		len[i] = rfw_frame_icrc_span(&views[i].f);
		ver[i] = views[i].f.ip_ver;
	}
	rfw_icrc_compute_n(l3, len, ver, crc, n);
	for (i = 0; i < n; i++) {
		struct rfw_rx_view *rv = &views[i];
		enum rfw_ib_err ierr;

		if (unlikely(crc[i] != rv->f.icrc)) {
			q->ctr[RFW_PORT_CTR_rx_icrc_bad]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		ierr = rfw_ib_parse(l3[i] + (rv->f.ib_off - rv->f.l3_off), rv->f.ib_len, &rv->ib);
		if (unlikely(ierr != RFW_IB_ERR_OK)) {
			q->ctr[RFW_PORT_CTR_rx_malformed]++;
			q->malformed_ib[ierr]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		if (out != i) { /* only after a drop */
			pkts[out] = pkts[i];
			views[out] = *rv;
		}
		out++;
	}
	return out;
}

uint16_t rfw_rx_burst(struct rfw_queue *q, uint64_t now_tsc, struct rte_mbuf **pkts,
                      struct rfw_rx_view *views, uint16_t max)
{
	struct rte_mbuf *in[RFW_MAX_BURST];
	uint16_t n = 0, nfwd, i, out = 0;

	max = RTE_MIN(max, (uint16_t)RFW_MAX_BURST);
	/* Pause expiry and the PFC watchdog: queue 0's lcore owns the port's pause state. */
	if (unlikely(__atomic_load_n(q->pfc_state, __ATOMIC_RELAXED) != 0) && q->qid == 0)
		rfw_pfc_poll(q->port, now_tsc);
	if (unlikely(q->port->steer != NULL))
		n = rfw_steer_take(q, in, max);
	nfwd = n;
	n += rte_eth_rx_burst(q->port_id, q->qid, in + n, max - n);
	if (n == 0)
		return 0;
	q->ctr[RFW_PORT_CTR_rx_pkts] += n - nfwd;
	/* As l3fwd: prefetch the first few, then one ahead while working on each. */
	for (i = 0; i < RFW_PREFETCH_AHEAD && i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(in[i], void *));
	for (i = 0; i < n; i++) {
		if (i + RFW_PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(in[i + RFW_PREFETCH_AHEAD], void *));
		/* Bytes as the PMD delivered them: once per frame, on the queue it arrived on. */
		if (i >= nfwd)
			q->ctr[RFW_PORT_CTR_rx_bytes] += in[i]->pkt_len;
		switch (classify(q, in[i], &views[out], now_tsc, i >= nfwd)) {
		case RX_MINE:
			pkts[out++] = in[i];
			break;
		case RX_DROP:
			rte_pktmbuf_free(in[i]);
			break;
		case RX_STEERED:
			break;
		}
	}
	out = rx_check(q, pkts, views, out);
	q->ctr[RFW_PORT_CTR_rx_rocev2] += out;
	return out;
}
