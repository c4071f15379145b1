/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's TX buffer when the PMD's queue is full (dataplane/rfw_port.h): the frames the PMD
 * refuses stay buffered, in order, and go first at the next flush (tx_backlog, tx_backlogged);
 * only a frame that finds the buffer full of refused ones is lost (tx_dropped); closing the port
 * frees what is still held. The PMD is a ring port whose TX ring holds 63 frames and is drained
 * by the test, as memif's ring is by a slower peer.
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
