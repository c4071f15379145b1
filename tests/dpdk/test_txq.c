/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's TX buffer when the PMD's queue is full (dataplane/rfw_port.h): the frames the PMD
 * refuses stay buffered, in order, and go first at the next flush (tx_backlog, tx_backlogged);
 * only a frame that finds the buffer full of refused ones is lost (tx_dropped); closing the port
 * frees what is still held. The PMD is a ring port whose TX ring holds 63 frames and is drained
 * by the test, as memif's ring is by a slower peer. A refused frame whose payload is attached
 * from the application's memory waits as a copy of its own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/rfw_port.h"

#include "check.h"

#define TX_RING 64 /* rte_ring of 64: 63 frames */

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "test_txq: %s: %s\n", what, rte_strerror(rte_errno));
	exit(1);
}

/* A 64-byte frame carrying @seq in its first 4 bytes. */
static struct rte_mbuf *frame(struct rfw_port *p, uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	char *d;

	if (m == NULL || (d = rte_pktmbuf_append(m, 64)) == NULL)
		die("frame");
	memset(d, 0, 64);
	memcpy(d, &seq, 4);
	return m;
}

/* Take every frame out of the TX ring: they must be @from, @from + 1, ... Returns how many. */
static unsigned drain(struct rte_ring *out, uint32_t from)
{
	void *m = NULL;
	unsigned n = 0;

	while (rte_ring_dequeue(out, &m) == 0) {
		uint32_t seq;

		memcpy(&seq, rte_pktmbuf_mtod((struct rte_mbuf *)m, void *), 4);
		CHECK(seq == from + n, "frame %u of the drain carries %" PRIu32 ", want %" PRIu32,
		      n, seq, from + n);
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

static void no_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

/* frame(@seq) with @len bytes at @payload attached behind it where they are (an external
 * buffer of @sh), as rfw_nic sends a payload from an MR. */
static struct rte_mbuf *ref_frame(struct rfw_port *p, uint32_t seq, uint8_t *payload, uint16_t len,
                                  struct rte_mbuf_ext_shared_info *sh)
{
	struct rte_mbuf *h = frame(p, seq), *d = rte_pktmbuf_alloc(p->pool);

	if (d == NULL)
		die("ref_frame");
	rte_mbuf_ext_refcnt_update(sh, 1);
	rte_pktmbuf_attach_extbuf(d, payload, RTE_BAD_IOVA, len, sh);
	d->data_len = len;
	d->pkt_len = len;
	if (rte_pktmbuf_chain(h, d) != 0)
		die("rte_pktmbuf_chain");
	return h;
}

/*
 * Frames whose payload is the application's memory, attached: those the PMD refuses wait in
 * mbufs of their own (rfw_tx_own), so that memory is not read after the burst (the WQE may
 * complete and the application change it). @seq: the next sequence number; returns it after.
 */
static uint32_t ref_backlog(struct rfw_port *p, struct rfw_queue *q, struct rte_ring *out,
                            uint32_t seq)
{
	static uint8_t app[8][256];
	struct rte_mbuf_ext_shared_info sh = {.free_cb = no_free};
	uint32_t first = seq + TX_RING - 1;
	void *m = NULL;

	rte_mbuf_ext_refcnt_set(&sh, 1);
	for (unsigned i = 0; i < TX_RING; i++) /* the ring's 63 and one that waits */
		rfw_tx_one(q, frame(p, seq++));
	for (unsigned i = 0; i < 8; i++) {
		memset(app[i], (int)(i + 1), sizeof(app[i]));
		rfw_tx_one(q, ref_frame(p, seq++, app[i], sizeof(app[i]), &sh));
	}
	rfw_tx_flush(q, rte_rdtsc());
	CHECK(q->tx_backlog == 9, "backlog %u with attached payloads", q->tx_backlog);
	CHECK(rte_mbuf_ext_refcnt_read(&sh) == 1, "attached payloads still referenced: %u",
	      rte_mbuf_ext_refcnt_read(&sh) - 1u);
	CHECK(rfw_port_ctr(p, RFW_PORT_CTR_tx_ref_copied) == 8, "tx_ref_copied %" PRIu64,
	      rfw_port_ctr(p, RFW_PORT_CTR_tx_ref_copied));
	memset(app, 0xee, sizeof(app)); /* the application's next use of its buffers */
	CHECK(drain(out, first - (TX_RING - 1)) == TX_RING - 1, "drain before the copies");
	rfw_tx_flush(q, rte_rdtsc());
	for (unsigned i = 0; rte_ring_dequeue(out, &m) == 0; i++) {
		struct rte_mbuf *f = m;
		const uint8_t *d = rte_pktmbuf_mtod(f, const uint8_t *);
		uint32_t got;
		bool same = f->pkt_len == (i == 0 ? 64u : 64u + 256u);

		memcpy(&got, d, 4);
		for (uint32_t j = 64; same && j < f->pkt_len; j++)
			same = f->nb_segs == 1 && d[j] == i;
		CHECK(got == first + i && same,
		      "waiting frame %u: seq %" PRIu32 ", %u segments, "
		      "payload %s",
		      i, got, f->nb_segs, same ? "as sent" : "changed");
		rte_pktmbuf_free(f);
	}
	return seq;
}

int main(int argc, char **argv)
{
	struct rfw_port_conf conf = {.nb_mbufs = 2048};
	struct rte_ring *in, *out;
	struct rfw_port *p;
	struct rfw_queue *q;
	uint32_t seq = 0;
	int pid;

	if (rfw_eal_init(argc, argv) < 0)
		return 1;
	in = rte_ring_create("txq_in", 64, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	out = rte_ring_create("txq_out", TX_RING, (int)rte_socket_id(),
	                      RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (in == NULL || out == NULL)
		die("rte_ring_create");
	pid = rte_eth_from_rings("txq", &in, 1, &out, 1, (unsigned)rte_socket_id());
	if (pid < 0)
		die("rte_eth_from_rings");
	p = rfw_port_setup((uint16_t)pid, &conf, NULL);
	if (p == NULL)
		die("rfw_port_setup");
	q = p->q[0];

	/* 80 frames into a ring of 63: 63 go, 17 wait in the buffer, none is lost. */
	for (unsigned i = 0; i < 80; i++)
		rfw_tx_one(q, frame(p, seq++));
	rfw_tx_flush(q, rte_rdtsc());
	CHECK(rfw_port_ctr(p, RFW_PORT_CTR_tx_pkts) == TX_RING - 1, "tx_pkts %" PRIu64,
	      rfw_port_ctr(p, RFW_PORT_CTR_tx_pkts));
	CHECK(q->tx_backlog == 80 - (TX_RING - 1), "backlog %u", q->tx_backlog);
	CHECK(rfw_port_ctr(p, RFW_PORT_CTR_tx_backlogged) > 0, "tx_backlogged 0");
	CHECK(rfw_port_ctr(p, RFW_PORT_CTR_tx_dropped) == 0, "tx_dropped %" PRIu64,
	      rfw_port_ctr(p, RFW_PORT_CTR_tx_dropped));

	/* The peer drains: the held frames go at the next poll's flush, whatever the deadline,
	 * in order after the first 63. */
	CHECK(drain(out, 0) == TX_RING - 1, "first drain");
	rfw_tx_flush_if_due(q, q->last_flush_tsc);
	CHECK(q->tx_backlog == 0, "backlog %u after the flush", q->tx_backlog);
	CHECK(drain(out, TX_RING - 1) == 80 - (TX_RING - 1), "second drain");

	/* A ring that stays full: 63 go, 32 fill the buffer, the 5 after them are lost. */
	for (unsigned i = 0; i < TX_RING - 1 + 32 + 5; i++)
		rfw_tx_one(q, frame(p, seq++));
	CHECK(q->tx_backlog == 32, "backlog %u with the ring full", q->tx_backlog);
	CHECK(rfw_port_ctr(p, RFW_PORT_CTR_tx_dropped) == 5, "tx_dropped %" PRIu64 ", want 5",
	      rfw_port_ctr(p, RFW_PORT_CTR_tx_dropped));
	CHECK(drain(out, 80) == TX_RING - 1, "third drain");
	rfw_tx_flush(q, rte_rdtsc());
	CHECK(q->tx_backlog == 0 && drain(out, 80 + TX_RING - 1) == 32,
	      "the 32 held frames after the third drain");

	seq = ref_backlog(p, q, out, seq);

	/* Closing with frames held (a peer gone): counted as lost and freed with the port
	 * (before rfw_port_close freed them, the mbufs leaked; visible under ASan's leak check). */
	for (unsigned i = 0; i < TX_RING - 1 + 10; i++)
		rfw_tx_one(q, frame(p, seq++));
	rfw_tx_flush(q, rte_rdtsc());
	CHECK(q->tx_backlog == 10, "backlog %u before the close", q->tx_backlog);
	/* The ring stays full: its frames go with the port's pool (not touched after this). */
	rfw_port_close(p);
	rte_ring_free(in);
	rte_ring_free(out);
	rfw_eal_cleanup();
	printf("test_txq: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
