/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK host of the firmware: mbufs as frame buffers, the TSC as the clock, the port's RX
 * and TX bursts. See rfw_nic.h and docs/nic.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dataplane/rfw_nic_int.h"

/* Default 802.1p priority of tagged data frames, and of CNPs without a cc profile (mlx5's
 * default cnp_802p_prio is 6 too). */
#define NIC_PCP_DEFAULT     3
#define NIC_CNP_PCP_NO_PROF 6
/* Telemetry snapshots: QP slots looked at, and snapshots written, per poll iteration. */
#define NIC_PUB_SCAN  64
#define NIC_PUB_BATCH 8

static const char *const nic_ctr_names[] = {
#define X(name, doc) #name,
    RFW_FOREACH_NIC_CTR(X)
#undef X
};
static const char *const nic_ctr_docs[] = {
#define X(name, doc) doc,
    RFW_FOREACH_NIC_CTR(X)
#undef X
};
_Static_assert(RTE_DIM(nic_ctr_names) == RFW_NIC_CTR__COUNT, "counter names");
_Static_assert(RFW_NIC_CTR__COUNT == RFW_FW_CTR__COUNT + RFW_NIC_HOST_CTR__COUNT, "tables");
_Static_assert((int)RFW_NIC_QP_CTR__COUNT == (int)RFW_FW_QP_CTR__COUNT, "per-QP table");

const char *rfw_nic_ctr_name(enum rfw_nic_ctr c)
{
	return (unsigned)c < RFW_NIC_CTR__COUNT ? nic_ctr_names[c] : NULL;
}

const char *rfw_nic_ctr_doc(enum rfw_nic_ctr c)
{
	return (unsigned)c < RFW_NIC_CTR__COUNT ? nic_ctr_docs[c] : NULL;
}

const char *rfw_nic_qp_ctr_name(enum rfw_nic_qp_ctr c)
{
	return rfw_fw_qp_ctr_name((enum rfw_fw_qp_ctr)c);
}

const char *rfw_nic_qp_ctr_doc(enum rfw_nic_qp_ctr c)
{
	return rfw_fw_qp_ctr_doc((enum rfw_fw_qp_ctr)c);
}

static const char *const nic_l2_names[] = {
    [RFW_NIC_L2_READY] = "ready",
    [RFW_NIC_L2_RESOLVING] = "resolving",
    [RFW_NIC_L2_FAILED] = "failed",
};

const char *rfw_nic_l2_name(enum rfw_nic_l2 s)
{
	return (unsigned)s < RTE_DIM(nic_l2_names) ? nic_l2_names[s] : NULL;
}

/* ---- time ---- */

static inline uint64_t tsc_to_ns(const struct rfw_nic *nic, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - nic->tsc0) * nic->ns_mult) >> 32);
}

uint64_t rfw_nic_clock_ns(struct rfw_nic *nic)
{
	if (unlikely(nic->clock_ns != NULL))
		return nic->clock_ns(nic->clock_arg);
	return tsc_to_ns(nic, rte_rdtsc());
}

uint64_t rfw_nic_now_ns(const struct rfw_nic *nic)
{
	return nic->now_ns;
}

/* ---- frames: mbufs ---- */

/*
 * A stash of NIC_MB_STASH mbufs from the pool; out of line, so that mb_alloc's common case (an
 * mbuf from the stash) saves no registers for the pool's bulk get it seldom makes.
 */
static __rte_noinline bool mb_refill(struct rfw_nic *nic)
{
	/* A pool too low for a whole stash still gives single mbufs. */
	if (rte_pktmbuf_alloc_bulk(nic->pool, nic->mb_stash, NIC_MB_STASH) == 0)
		nic->mb_n = NIC_MB_STASH;
	else if ((nic->mb_stash[0] = rte_pktmbuf_alloc(nic->pool)) != NULL)
		nic->mb_n = 1;
	else {
		nic->ctr[RFW_NIC_HOST_CTR_tx_no_mbuf]++;
		return false;
	}
	return true;
}

/* A fresh mbuf's frame: mbuf_off past it (mb_of's inverse), its header not read for it. */
static inline uint8_t *mb_frame(const struct rfw_nic *nic, struct rte_mbuf *m)
{
	return (uint8_t *)m + nic->mbuf_off;
}

static uint8_t *mb_alloc(void *host, uint32_t len)
{
	struct rfw_nic *nic = host;
	struct rte_mbuf *m;

	if (unlikely(len > RFW_FRAME_MAX))
		return NULL;
	if (unlikely(nic->mb_n == 0) && !mb_refill(nic))
		return NULL;
	m = nic->mb_stash[--nic->mb_n];
	if (nic->mb_n != 0) /* the next frame's first line: written by its builder soon */
		rte_prefetch0(mb_frame(nic, nic->mb_stash[nic->mb_n - 1]));
	return mb_frame(nic, m);
}

/*
 * The mbuf of a frame from mb_alloc: a freshly allocated mbuf's data starts RTE_PKTMBUF_HEADROOM
 * into its buffer, which follows the mbuf header and the pool's private area (rte_pktmbuf_init),
 * so the offset back is the same for every mbuf of the pool (checked at create).
 */
static inline struct rte_mbuf *mb_of(const struct rfw_nic *nic, uint8_t *frame)
{
	return (struct rte_mbuf *)(void *)(frame - nic->mbuf_off);
}

static void mb_send(void *host, uint8_t *frame, uint32_t len)
{
	struct rfw_nic *nic = host;
	struct rte_mbuf *m = mb_of(nic, frame);

	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	rfw_tx_one(nic->q, m);
	nic->sent++;
}

/* mb_send for a frame whose ICRC the port fills with its burst's others. */
static void mb_send_icrc(void *host, uint8_t *frame, uint32_t len, uint8_t l3_off, uint8_t ip_ver)
{
	struct rfw_nic *nic = host;
	struct rte_mbuf *m = mb_of(nic, frame);

	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	rfw_tx_one_icrc(nic->q, m, frame, len, l3_off, ip_ver);
	nic->sent++;
}

/* One mbuf from the stash, NULL if the pool has none: mb_alloc's steps, which mb_alloc spells
 * out so that its common case tests nothing after the take (2 instructions a 64 B message). */
static inline struct rte_mbuf *mb_take(struct rfw_nic *nic)
{
	if (unlikely(nic->mb_n == 0) && !mb_refill(nic))
		return NULL;
	return nic->mb_stash[--nic->mb_n];
}

/*
 * frame_alloc_ref: three mbufs chained, the headers in the first, the MR's payload attached to
 * the second as an external buffer where it is, the ICRC in the third. The PMDs that take
 * such frames (rfw_port_tx_ref) read only the virtual address: no IOVA is looked up.
 */
static uint8_t *mb_alloc_ref(void *host, uint32_t hdr_len, const uint8_t *payload,
                             uint32_t payload_len, uint8_t **icrc)
{
	struct rfw_nic *nic = host;
	struct rte_mbuf *h = mb_take(nic), *d = h != NULL ? mb_take(nic) : NULL;
	struct rte_mbuf *t = d != NULL ? mb_take(nic) : NULL;

	if (unlikely(t == NULL)) { /* back to the stash, which they just left */
		if (d != NULL)
			nic->mb_stash[nic->mb_n++] = d;
		if (h != NULL)
			nic->mb_stash[nic->mb_n++] = h;
		return NULL;
	}
	rte_mbuf_ext_refcnt_update(&nic->ref_shinfo, 1);
	rte_pktmbuf_attach_extbuf(d, (void *)(uintptr_t)payload, RTE_BAD_IOVA,
	                          (uint16_t)payload_len, &nic->ref_shinfo);
	d->data_len = (uint16_t)payload_len;
	t->data_len = RFW_ICRC_LEN;
	h->data_len = (uint16_t)hdr_len;
	h->next = d;
	d->next = t;
	h->nb_segs = 3;
	*icrc = mb_frame(nic, t);
	return mb_frame(nic, h);
}

static void mb_send_ref(void *host, uint8_t *frame, uint32_t len)
{
	struct rfw_nic *nic = host;
	struct rte_mbuf *m = mb_of(nic, frame);

	m->pkt_len = len;
	rfw_tx_one(nic->q, m);
	nic->sent++;
}

/* The ext buffers' free callback: never called (the NIC holds a reference for its life). */
static void ref_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

void nic_ref_init(struct rfw_nic *nic)
{
	nic->ref_shinfo.free_cb = ref_free_cb;
	nic->ref_shinfo.fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(&nic->ref_shinfo, 1);
}

/*
 * Room for the QPs' frames while the port's queue took every frame of the last burst. A PMD
 * whose queue fills (memif's ring when the peer is slower) leaves a backlog; the QPs then stay
 * ready in the scheduler (tx_room_waits) instead of sending into a full queue and losing the
 * frames, which go-back-N pays for with ACK timeouts of whole windows (at many QPs at once:
 * retry counts exceeded). One class: @prio is not looked at.
 */
static bool mb_tx_room(void *host, uint8_t prio)
{
	const struct rfw_nic *nic = host;

	(void)prio;
	return nic->q->tx_backlog == 0;
}

const struct rfw_fw_host_ops nic_host_ops = {.frame_alloc = mb_alloc,
                                             .frame_send = mb_send,
                                             .tx_room = mb_tx_room,
                                             .frame_send_icrc = mb_send_icrc,
                                             .frame_alloc_ref = mb_alloc_ref,
                                             .frame_send_ref = mb_send_ref};

int nic_mbuf_off_init(struct rfw_nic *nic)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nic->pool);

	if (m == NULL)
		return -ENOMEM;
	nic->mbuf_off = (uint32_t)(rte_pktmbuf_mtod(m, uint8_t *) - (uint8_t *)m);
	rte_pktmbuf_free(m);
	return 0;
}

/* ---- the poll loop ---- */

/* A slice of the periodic publication: a bounded number of slots per poll. */
static void pub_step(struct rfw_nic *nic)
{
	unsigned scanned = 0, written = 0;

	if (nic->pub_cursor == 0) {
		nic->pub_round_ns = nic->now_ns;
		nic->pub_round_n = 0;
	}
	while (nic->pub_cursor < nic->max_qp && scanned < NIC_PUB_SCAN && written < NIC_PUB_BATCH) {
		uint32_t i = nic->pub_cursor++;

		scanned++;
		if (nic->l2[i].qp != NULL) {
			rfw_fw_publish(nic->fw, i, nic->now_ns);
			written++;
		}
	}
	nic->pub_round_n += written;
	if (nic->pub_cursor >= nic->max_qp) {
		uint64_t min_round = (uint64_t)nic->pub_round_n * NS_PER_S / nic->pub_max_per_s;

		rfw_fw_publish_dev(nic->fw, nic->now_ns);
		if (nic->es_pub != NULL && nic->now_ns >= nic->es_pub_next_ns)
			nic_es_publish(nic);
		nic->pub_cursor = 0;
		nic->pub_next_ns =
		    RTE_MAX(nic->now_ns + nic->snapshot_ns, nic->pub_round_ns + min_round);
	}
}

void rfw_nic_publish(struct rfw_nic *nic)
{
	for (uint32_t i = 0; i < nic->max_qp; i++)
		if (nic->l2[i].qp != NULL)
			rfw_fw_publish(nic->fw, i, nic->now_ns);
	rfw_fw_publish_dev(nic->fw, nic->now_ns);
	if (nic->es_pub != NULL)
		nic_es_publish(nic);
	nic->pub_cursor = 0;
	nic->pub_next_ns = nic->now_ns + nic->snapshot_ns;
}

/*
 * The port's queue still holds refused frames: whether the link is down (tx_stall_ms with no
 * frame taken by the PMD), its frames then dropped so that the QPs run. Out of line: rare.
 * Only a link that once carried frames goes down (a memif peer still connecting at start-up
 * is waited for, as before), and only polls that tried count: a poll loop that paused (the
 * application away from the NIC) starts the wait again rather than finding it long over.
 */
static bool __attribute__((noinline)) nic_tx_down(struct rfw_nic *nic)
{
	uint64_t taken = nic->q->ctr[RFW_PORT_CTR_tx_pkts];
	bool gap = nic->now_ns - nic->stall_look_ns > nic->tx_stall_ns / 4;

	nic->stall_look_ns = nic->now_ns;
	if (taken == 0)
		return false;
	if (!nic->stall_armed || taken != nic->stall_taken || (gap && !nic->tx_down)) {
		/* a wait begins, or the PMD took frames since the last look: the link is up */
		nic->stall_armed = true;
		nic->stall_taken = taken;
		nic->stall_since_ns = nic->now_ns;
		nic->tx_down = false;
		return false;
	}
	if (!nic->tx_down) {
		if (nic->now_ns - nic->stall_since_ns < nic->tx_stall_ns)
			return false;
		nic->tx_down = true;
		nic->ctr[RFW_NIC_HOST_CTR_tx_link_down]++;
	}
	nic->ctr[RFW_NIC_HOST_CTR_tx_stall_drops] += rfw_tx_drop_held(nic->q);
	return true;
}

bool rfw_nic_tx_idle(const struct rfw_nic *nic)
{
	return nic->q->tx_backlog == 0 && nic->q->txb->length == 0;
}

/*
 * The firmware's turns of this poll: one run gives each ready QP one turn of at most quantum
 * packets; while QPs are still ready and this poll has sent less than a TX burst, one more run
 * (RFW_MAX_BURST packets at most, as one run with a larger quantum would, but QPs keep
 * alternating turn by turn). The poll's fixed work (the clock, RX, the flush) is then spread
 * over a burst, not over one QP's turn: +6-20 % of the 64 B rate with one QP (docs/perf.md).
 */
static void nic_fw_runs(struct rfw_nic *nic)
{
	unsigned sent = rfw_fw_run(nic->fw, nic->now_ns);

	while (sent != 0 && sent < RFW_MAX_BURST && rfw_fw_ready(nic->fw))
		sent += rfw_fw_run(nic->fw, nic->now_ns);
}

/*
 * The burst's frames back to their pool, handled: when each is what a PMD's RX (or the peer
 * NIC's TX, over a ring) usually hands over, a direct mbuf of one segment held once, all of
 * one pool, they go into the pool's cache in one put, as a PMD's fast free does; otherwise
 * rte_pktmbuf_free_bulk, whose per-mbuf reset and pool grouping that case does not need (44
 * instructions a frame of the 64 B loopback run, 2026-11-30).
 */
static inline void rx_free(struct rte_mbuf **pkts, unsigned n)
{
	struct rte_mempool *mp = pkts[0]->pool;

	for (unsigned i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];

		if (unlikely(m->pool != mp || !RTE_MBUF_DIRECT(m) || m->nb_segs != 1 ||
		             m->next != NULL || rte_mbuf_refcnt_read(m) != 1)) {
			rte_pktmbuf_free_bulk(pkts, n);
			return;
		}
	}
	rte_mempool_put_bulk(mp, (void **)pkts, n);
}

unsigned rfw_nic_poll(struct rfw_nic *nic)
{
	struct rte_mbuf *pkts[RFW_MAX_BURST];
	struct rfw_rx_view views[RFW_MAX_BURST];
	uint64_t tsc = rte_rdtsc();
	unsigned nrx, i;

	nic->now_ns =
	    unlikely(nic->clock_ns != NULL) ? nic->clock_ns(nic->clock_arg) : tsc_to_ns(nic, tsc);
	nic->sent = 0;
	if (nic->es_pub != NULL)
		rfw_dev_clock(nic->dev,
		              nic->now_ns); /* T6 of completions polled with rfw_poll_cq */
	nrx = rfw_rx_burst(nic->q, tsc, pkts, views, RFW_MAX_BURST);
	for (i = 0; i < nrx; i++)
		rfw_fw_rx(nic->fw, &views[i].f, &views[i].ib, nic->now_ns);
	if (nrx != 0)
		rx_free(pkts, nrx);
	if (unlikely(nic->n_resolving != 0) && nic->now_ns >= nic->resolve_next_ns)
		nic_l2_poll(nic, tsc);
	/*
	 * While the PMD's queue refuses frames, no turn: every QP would meet tx_room's refusal, and
	 * a turn per ready QP per poll (16,384 at once) would slow this loop's RX, the peer's ACKs
	 * included, until their QPs time out. Its timers wait too: nothing could be resent. Unless
	 * the PMD has taken nothing for tx_stall_ms: the link is down, what it refuses is dropped.
	 */
	if (likely(nic->q->tx_backlog == 0) || nic_tx_down(nic))
		nic_fw_runs(nic);
	else
		nic->ctr[RFW_NIC_HOST_CTR_tx_backlog_polls]++;
	/* Flush every iteration that produced frames: the peer's poll loop is waiting for them,
	 * and a burst is already as large as this iteration can make it. */
	if (nic->sent != 0)
		rfw_tx_flush(nic->q, tsc);
	else
		rfw_tx_flush_if_due(nic->q, tsc);
	if (unlikely(nic->now_ns >= nic->pub_next_ns))
		pub_step(nic);
	return nrx + nic->sent;
}
