/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocefw port layer: EAL start-up, one DPDK port of any PMD set up for RoCEv2 with 4096-byte
 * path MTU frames, per-queue RX/TX burst helpers (l2fwd style: TX buffered and flushed on a TSC
 * deadline), RX classification with wire/frame.h (parse, ICRC, BTH), the local identity
 * (MAC, IPv4, IPv6, GID) and ARP / IPv6 neighbour discovery so a Linux peer on the same L2
 * segment can reach us. See docs/dataplane.md.
 *
 * Threading: a struct rfw_queue belongs to one lcore (its RX and TX queue and its counters).
 * On a port of several RX queues, every queue's lcore hands the frames it does not own to
 * their owner (rfw_steer.h): RoCEv2 frames by destination QPN to the queue of the NIC that
 * owns it, ARP / ND / PAUSE to queue 0, so that queue 0's lcore alone answers and learns
 * neighbours and keeps the pause state. Any queue's lcore may resolve (rfw_port_resolve):
 * the neighbour table is under a lock no packet takes. Telemetry reads counters from its own
 * thread; they are 64-bit words written by one lcore, so a read is never torn, only slightly
 * stale.
 */
#ifndef RFW_DATAPLANE_RFW_PORT_H
#define RFW_DATAPLANE_RFW_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "wire/frame.h"
#include "dataplane/rfw_pfc.h"
#include "wire/ib_hdr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_MAX_BURST      32  /* packets per rx_burst / tx flush, as l2fwd's MAX_PKT_BURST */
#define RFW_PREFETCH_AHEAD 3   /* prefetch this many packets ahead while classifying */
#define RFW_MAX_QUEUES     8   /* queue pairs per port */
#define RFW_TX_DRAIN_US    100 /* default TX buffer flush deadline (l2fwd BURST_TX_DRAIN_US) */
#define RFW_PATH_MTU_MAX   4096
/*
 * Largest frame: 4096-byte payload, BTH + RETH or AtomicETH (12 + 28), ICRC, UDP, IPv6, two
 * VLAN tags, Ethernet: 4096 + 40 + 4 + 8 + 40 + 8 + 14 = 4210, rounded up with spare room.
 */
#define RFW_FRAME_MAX      4352
#define RFW_MBUF_DATA_ROOM (RTE_PKTMBUF_HEADROOM + RFW_FRAME_MAX)
/* IP MTU that carries the largest RoCEv2 packet of a 4096-byte path MTU (IPv6: 4196). */
#define RFW_IP_MTU_DEFAULT  4200
#define RFW_NB_MBUF_DEFAULT 8192
#define RFW_NB_DESC_DEFAULT 1024

/*
 * Per-queue counters: name (telemetry key), meaning. Per port they are the sum over queues.
 * Extend here only: the enum, the names and the telemetry output follow.
 */
#define RFW_FOREACH_PORT_CTR(X)                                                                    \
	X(rx_pkts, "frames received from the PMD")                                                 \
	X(rx_bytes, "bytes received (frame length without FCS)")                                   \
	X(rx_rocev2, "RoCEv2 frames for us with a good ICRC and BTH, handed to the caller")        \
	X(rx_icrc_bad, "RoCEv2 frames dropped for a wrong ICRC")                                   \
	X(rx_malformed, "frames dropped as malformed (see malformed_by_reason)")                   \
	X(rx_multiseg, "frames dropped because they span several mbufs (larger than the pool)")    \
	X(rx_not_for_us, "RoCEv2 frames dropped: destination MAC or IP not ours")                  \
	X(rx_not_rocev2, "IP frames that are not RoCEv2 and not neighbour discovery: dropped")     \
	X(rx_other, "non-IP frames other than ARP: dropped")                                       \
	X(rx_arp, "ARP frames received")                                                           \
	X(rx_nd, "IPv6 neighbour solicitations and advertisements received")                       \
	X(rx_neigh_bad, "ARP / ND frames dropped as invalid (RFC 826, RFC 4861 7.1)")              \
	X(arp_reply_sent, "ARP replies sent for our IPv4 address")                                 \
	X(arp_request_sent, "ARP requests sent to resolve a peer")                                 \
	X(nd_na_sent, "neighbour advertisements sent for our IPv6 address")                        \
	X(nd_ns_sent, "neighbour solicitations sent to resolve a peer")                            \
	X(neigh_learned, "neighbour entries created or updated from received ARP/ND")              \
	X(neigh_resolve_failed, "resolutions abandoned after the last unanswered probe")           \
	X(neigh_table_full, "neighbours not recorded because the table was full")                  \
	X(rx_steered, "frames handed to the queue of the NIC owning them (rfw_steer.h)")           \
	X(rx_steer_in, "frames other queues handed to this one (classified here as received)")     \
	X(rx_steer_full, "frames dropped: the owning queue's dispatch ring was full")              \
	X(tx_pkts, "frames handed to the PMD and accepted")                                        \
	X(tx_dropped, "frames lost: the TX buffer was full and the PMD accepted none (freed)")     \
	X(tx_backlogged,                                                                           \
	  "frames the PMD did not accept at a burst, kept for the next (each time)")               \
	X(tx_alloc_failed, "control frames (ARP/ND) not sent: mempool empty")                      \
	X(tx_ref_copied, "frames with a payload attached from an MR copied into mbufs of their "   \
	                 "own: the PMD did not take them, or a pause held them (rfw_tx_own)")      \
	X(tx_ref_copy_failed, "such frames lost: no mbuf for the copy (freed)")

enum rfw_port_ctr {
#define RFW_PORT_CTR_ENUM(name, doc) RFW_PORT_CTR_##name,
	RFW_FOREACH_PORT_CTR(RFW_PORT_CTR_ENUM)
#undef RFW_PORT_CTR_ENUM
	    RFW_PORT_CTR__COUNT
};

const char *rfw_port_ctr_name(enum rfw_port_ctr c);
const char *rfw_port_ctr_doc(enum rfw_port_ctr c);

/* Local identity. IPv4 addresses in host byte order. */
struct rfw_identity {
	struct rte_ether_addr mac; /* all zero: use the port's own MAC */
	bool has_ip4;
	uint32_t ip4;
	bool has_ip6;
	uint8_t ip6[16];
};

/* Port configuration. Zero fields take the default named beside them. */
struct rfw_port_conf {
	uint16_t nb_rxq;   /* RX queues, default 1, range 1..RFW_MAX_QUEUES */
	uint16_t nb_txq;   /* TX queues, default 1, range 1..RFW_MAX_QUEUES */
	uint16_t nb_rxd;   /* RX descriptors per queue, default 1024 (adjusted to the PMD) */
	uint16_t nb_txd;   /* TX descriptors per queue, default 1024 (adjusted to the PMD) */
	uint16_t mtu;      /* IP MTU in bytes, default 4200; lowered to what the PMD admits */
	uint32_t nb_mbufs; /* mbufs in the pool it creates, default 8192 */
	struct rte_mempool *pool; /* use this pool instead of creating one */
	bool promisc;             /* promiscuous mode (af_packet on a shared veth, a bridge port) */
	bool no_rx_filter;        /* deliver RoCEv2 frames whatever their destination MAC / IP */
	uint32_t tx_drain_us;     /* TX buffer flush deadline, default 100 us, range 1..100000 */
	/* Neighbour table: capacity (default 1024), REACHABLE lifetime in ms (default 30000,
	 * RFC 4861 REACHABLE_TIME), probe interval in ms (default 1000, RFC 4861 RETRANS_TIMER),
	 * probes before giving up (default 3, RFC 4861 MAX_MULTICAST_SOLICIT), lifetime of an
	 * entry not confirmed, in ms (default 120000). */
	uint32_t neigh_capacity;
	uint32_t neigh_reachable_ms;
	uint32_t neigh_retrans_ms;
	uint32_t neigh_max_probes;
	uint32_t neigh_gc_ms;
	struct rfw_pfc_conf pfc; /* PAUSE / PFC and the PFC watchdog (docs/pfc.md) */
};

struct rfw_port;
struct rfw_neigh;
struct rfw_steer;

/* One RX/TX queue pair and its counters, owned by one lcore. */
struct rfw_queue {
	struct rfw_port *port;
	uint16_t port_id;
	uint16_t qid;
	uint64_t drain_tsc; /* TX flush deadline, in TSC cycles */
	uint64_t last_flush_tsc;
	struct rte_eth_dev_tx_buffer *txb;
	uint64_t ctr[RFW_PORT_CTR__COUNT];
	uint64_t malformed_frame[RFW_FRAME_ERR__COUNT];
	uint64_t malformed_ib[RFW_IB_ERR__COUNT];
	uint64_t neigh_bad[32]; /* by enum rfw_neigh_err */
	/* PFC (rfw_pfc.h): the port's pause state word, and this queue's held frames. */
	const uint16_t *pfc_state;
	uint32_t pfc_held;
	struct rfw_pfc_txq *pfc_txq;
	/* Frames the PMD did not accept at the last burst, kept in order at the front of txb and
	 * offered again at every flush; while there are any, the NIC holds back requests
	 * (rfw_fw_host_ops.tx_room) instead of losing them. */
	uint16_t tx_backlog;
	/* Frames in txb whose ICRC is filled at the next burst, all together (rfw_tx_one_icrc):
	 * the IP datagram and its length up to the ICRC, and its IP version. */
	uint16_t icrc_n;
	const uint8_t *icrc_l3[RFW_MAX_BURST];
	size_t icrc_len[RFW_MAX_BURST];
	uint8_t icrc_ver[RFW_MAX_BURST];
} __rte_cache_aligned;

struct rfw_port {
	uint16_t port_id;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rfw_identity id;
	uint8_t gid[16]; /* RoCEv2 GID: IPv4-mapped (::ffff:a.b.c.d) if IPv4, else the IPv6 */
	struct rte_mempool *pool;
	bool own_pool;
	bool no_rx_filter;
	/* The PMD copies a frame out at its burst and takes chained mbufs: frames may carry a
	   payload attached from an MR (rfw_port_tx_ref). */
	bool tx_ref;
	uint16_t nb_rxq, nb_txq;
	uint16_t mtu;
	struct rfw_neigh *neigh;
	/* The neighbour table is looked up and probed from every queue's lcore (a NIC resolving a
	 * peer) and learnt into from queue 0's: never on the per-packet path, so a lock. */
	rte_spinlock_t neigh_lock;
	struct rfw_queue *q[RFW_MAX_QUEUES];
	struct rfw_pfc *pfc;
	struct rfw_steer *steer; /* several RX queues: the software dispatcher (rfw_steer.h) */
};

/* RoCEv2 frames handed out by rfw_rx_burst(): the parsed frame and IB headers (pointing into
 * the mbuf's data). */
struct rfw_rx_view {
	struct rfw_frame_view f;
	struct rfw_ib_pkt ib;
};

/*
 * rte_eal_init() with a message that names the flags this machine needs when it fails
 * (`--no-huge -m 512 --no-pci --no-shconf -l N`, `--file-prefix=P` instead of --no-shconf when
 * telemetry is wanted). Returns the number of arguments EAL consumed, or -errno.
 */
int rfw_eal_init(int argc, char **argv);
/*
 * rte_eal_cleanup(), after the ports are closed: first lets EAL's interrupt thread finish
 * what the closes queued for it (RFW_EAL_SETTLE_MS). DPDK 22.11's net_memif unregisters its
 * socket callbacks lazily; rte_eal_cleanup() then unmaps the memory those sources live in,
 * and an interrupt thread still walking them died with SIGSEGV in rte_intr_fd_get()
 * (rocefw-cp, rocefw-perf: seen in CI and reproduced, about 1 exit in 15).
 */
#define RFW_EAL_SETTLE_MS 100
int rfw_eal_cleanup(void);

/* A packet mbuf pool whose mbufs hold a whole RFW_FRAME_MAX frame in one segment. NULL and
 * rte_errno on failure (ENOMEM: give EAL more memory with -m). */
struct rte_mempool *rfw_pktmbuf_pool_create(const char *name, unsigned n, int socket);

/*
 * Configure and start @port_id: queues, pool, MTU, promiscuous / all-multicast (so that
 * solicited-node multicast NS reach us), link status logged. Registers the port for telemetry.
 * Returns the port or NULL with rte_errno set (EINVAL bad conf, ENODEV no such port,
 * ENOMEM, or the PMD's error).
 */
struct rfw_port *rfw_port_setup(uint16_t port_id, const struct rfw_port_conf *conf,
                                const struct rfw_identity *id);
/* Stop, close and free a port set up by rfw_port_setup (flushes TX buffers first). */
void rfw_port_close(struct rfw_port *p);
/* The port registered for @port_id, or NULL. */
struct rfw_port *rfw_port_get(uint16_t port_id);
/*
 * Wait up to @timeout_ms for link up; 0 when up, -ETIMEDOUT otherwise. A memif client port
 * is restarted every second while its link is down, so that a client that connected before
 * its server's port was started (and was refused) connects again.
 */
int rfw_port_link_wait(const struct rfw_port *p, unsigned timeout_ms);
/*
 * After the peer has closed its end: on a memif port, wait up to @timeout_ms until the
 * disconnect has been handled (link down) by the PMD's control thread, so that closing this
 * port does not race that thread (net_memif, DPDK 22.11, was seen to crash when both tear the
 * regions down at once). 0 at once for ports whose link does not follow the peer; -ETIMEDOUT.
 */
int rfw_port_peer_gone_wait(const struct rfw_port *p, unsigned timeout_ms);
/* Whether the PMD copies a frame's bytes out of its mbuf on TX (false: memif's client with
 * zero-copy=yes, whose peer reads the mbufs' memory): a pass of the byte-work bound. */
bool rfw_port_tx_copies(const struct rfw_port *p);
/*
 * Whether frames on this port may carry their payload attached where it is, in a registered
 * MR, rather than copied into the mbuf (docs/nic.md "Payload sent from the MR"): the PMD must
 * copy the frame out at its burst (so the MR is not read after the burst: the WQE may then
 * complete) and take chained mbufs. memif in its copy mode, af_packet, tap and pcap; not the
 * ring PMD (it passes the mbuf itself) nor hardware (DMA after the burst).
 */
bool rfw_port_tx_ref(const struct rfw_port *p);
/* Sum of a counter over a port's queues. */
uint64_t rfw_port_ctr(const struct rfw_port *p, enum rfw_port_ctr c);

/*
 * Receive up to @max (<= RFW_MAX_BURST) frames from queue @q, classify them and return the
 * RoCEv2 ones for us with a good ICRC and a parseable BTH in @pkts / @views. ARP and ND are
 * answered and learnt from here (replies go to this queue's TX buffer); every other frame is
 * counted and freed. Never allocates except replies from the port's pool.
 */
uint16_t rfw_rx_burst(struct rfw_queue *q, uint64_t now_tsc, struct rte_mbuf **pkts,
                      struct rfw_rx_view *views, uint16_t max);

/*
 * Hand the TX buffer to the PMD. While a PFC pause or watchdog storm is in force on the port, or
 * frames are held on this queue, the burst goes through rfw_pfc_tx_filter() first; otherwise
 * this costs one load and test per burst.
 */
void rfw_tx_keep(struct rfw_queue *q, uint16_t sent);
/* A frame the PMD did not take and the queue keeps past this burst, in mbufs of its own: a
 * chained frame's bytes copied into the port's pool and the chain freed (its payload may be
 * an MR's, which must not be read after this poll: rfw_port_tx_ref). NULL if no mbuf
 * (tx_ref_copy_failed, the frame freed). */
struct rte_mbuf *rfw_tx_own(struct rfw_queue *q, struct rte_mbuf *m);
/* Free the frames the PMD refused (the link is down: rfw_nic's tx_stall_ms). Returns how many;
 * the caller counts them (the port's tx_dropped does not). */
unsigned rfw_tx_drop_held(struct rfw_queue *q);

/* Fill the ICRCs rfw_tx_one_icrc left to the burst. */
void rfw_tx_icrc_fill(struct rfw_queue *q);

static inline void rfw_tx_burst_out(struct rfw_queue *q)
{
	struct rte_eth_dev_tx_buffer *b = q->txb;
	uint16_t sent;

	if (q->icrc_n != 0)
		rfw_tx_icrc_fill(q);
	if (unlikely((__atomic_load_n(q->pfc_state, __ATOMIC_RELAXED) | q->pfc_held) != 0))
		rfw_pfc_tx_filter(q);
	if (b->length == 0) {
		q->tx_backlog = 0;
		return;
	}
	sent = rte_eth_tx_burst(q->port_id, q->qid, b->pkts, b->length);
	q->ctr[RFW_PORT_CTR_tx_pkts] += sent;
	if (likely(sent == b->length)) {
		b->length = 0;
		q->tx_backlog = 0;
		return;
	}
	rfw_tx_keep(q, sent); /* the PMD's queue is full: keep the rest for the next flush */
}

/*
 * Buffer one frame for transmission on @q; sent when the buffer fills or at the deadline. Frames
 * the PMD refused stay buffered (tx_backlog: the NIC's QPs wait, rfw_nic.c tx_room); a frame
 * that finds the buffer still full of them is lost (tx_dropped).
 */
void rfw_tx_one_last(struct rfw_queue *q, struct rte_mbuf *m);
/* rfw_tx_one_icrc's frame that fills the buffer or finds it full (@l3: its IP datagram of @len
 * bytes up to the ICRC). */
void rfw_tx_one_icrc_last(struct rfw_queue *q, struct rte_mbuf *m, uint8_t *l3, size_t len,
                          uint8_t ip_ver);

/* @m into the buffer (which has room), its ICRC (over @len bytes at @l3) left to the burst. */
static inline void rfw_tx_icrc_queue(struct rfw_queue *q, struct rte_mbuf *m, const uint8_t *l3,
                                     size_t len, uint8_t ip_ver)
{
	q->icrc_l3[q->icrc_n] = l3;
	q->icrc_len[q->icrc_n] = len;
	q->icrc_ver[q->icrc_n++] = ip_ver;
	q->txb->pkts[q->txb->length++] = m;
}

static inline void rfw_tx_one(struct rfw_queue *q, struct rte_mbuf *m)
{
	struct rte_eth_dev_tx_buffer *b = q->txb;

	/* Out of line whenever the frame fills the buffer or finds it full: the burst inlined
	   here made every caller save registers for it. */
	if (unlikely(b->length + 1u >= b->size)) {
		rfw_tx_one_last(q, m);
		return;
	}
	b->pkts[b->length++] = m;
}

/*
 * rfw_tx_one for a RoCEv2 frame whose ICRC is still to be computed (its last 4 bytes, over the
 * IP datagram at @l3_off of IP version @ip_ver): filled when the burst goes, with the burst's
 * others (rfw_icrc_compute_n), the frame that fills the buffer too. @frame and @flen are
 * m's data and its length, as the caller knows them: the mbuf's header, written just before, is
 * not read back for them.
 */
static inline void rfw_tx_one_icrc(struct rfw_queue *q, struct rte_mbuf *m, uint8_t *frame,
                                   uint32_t flen, uint8_t l3_off, uint8_t ip_ver)
{
	struct rte_eth_dev_tx_buffer *b = q->txb;
	uint8_t *l3 = frame + l3_off;
	size_t len = flen - l3_off - RFW_ICRC_LEN;

	if (unlikely(b->length + 1u >= b->size)) {
		rfw_tx_one_icrc_last(q, m, l3, len, ip_ver);
		return;
	}
	rfw_tx_icrc_queue(q, m, l3, len, ip_ver);
}

/* Send whatever is buffered now. */
static inline void rfw_tx_flush(struct rfw_queue *q, uint64_t now_tsc)
{
	rfw_tx_burst_out(q);
	q->last_flush_tsc = now_tsc;
}

/*
 * Flush if the drain deadline has passed (call once per poll iteration); every iteration while
 * PFC holds frames on the queue, so that they leave as soon as their pause ends.
 */
static inline void rfw_tx_flush_if_due(struct rfw_queue *q, uint64_t now_tsc)
{
	if (now_tsc - q->last_flush_tsc >= q->drain_tsc ||
	    unlikely((q->pfc_held | q->tx_backlog) != 0))
		rfw_tx_flush(q, now_tsc);
}

/*
 * Resolve @ip (16 bytes; IPv4 in mapped form) to a MAC for transmission on @q's port (RFC 826
 * and RFC 4861 7.2, simplified: INCOMPLETE -> REACHABLE -> STALE). Returns 0 and fills @mac
 * when known (a STALE entry also triggers a unicast re-probe per probe interval); -EAGAIN
 * while a request/solicitation is outstanding (sent from here, one per probe interval);
 * -EHOSTUNREACH once the probes are exhausted (the entry is removed: a later call starts
 * again); -ENOSPC if the table is full; -EAFNOSUPPORT if the port has no address of @ip's
 * family. Any queue's lcore may call it (probes go out on @q).
 */
int rfw_port_resolve(struct rfw_queue *q, const uint8_t ip[16], uint64_t now_tsc,
                     struct rte_ether_addr *mac);

/* Remove neighbour entries not confirmed for neigh_gc_ms. Call now and then (every ~100 ms). */
void rfw_port_neigh_age(struct rfw_port *p, uint64_t now_tsc);

#ifdef __cplusplus
}
#endif
#endif
