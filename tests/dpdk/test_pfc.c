/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC on a librocefw port (issue 9): ports made of ring pairs (rte_eth_from_rings); the test
 * injects PFC / PAUSE frames into a port's RX ring, as a misbehaving peer would, while the port
 * transmits frames of priority 3 (DSCP 26) and priority 0 (DSCP 0) at a fixed rate. Every frame
 * the PMD accepts is timestamped by a TX callback (rte_eth_add_tx_callback), so "nothing left
 * during the pause" is checked against the time the frame left, not the time it was read.
 *
 *   storm:  XOFF for priority 3 every millisecond (each longer than the gap) for 300 ms, watchdog
 *           at 100 ms / restore 100 ms: no priority-3 frame leaves from the first XOFF until the
 *           watchdog fires, which is within [threshold, threshold + the longest poll gap + 1 ms];
 *           priority 0 keeps flowing; one storm counted, the held frames dropped and counted,
 *           XOFFs ignored and priority 3 flowing for the rest of the storm; restored after the
 *           quiet time; then an XOFF is honoured again for exactly its quanta.
 *   quanta: link at 100 Mb/s: XOFF 4000 quanta = 20.48 ms, then XOFF + XON after 10 ms, then an
 *           802.3x PAUSE: no frame of a paused priority leaves during the pause, the held ones
 *           leave in order right after it, the others keep flowing; pause counters and
 *           rx_prio3_pause_duration agree; a held frame whose payload is attached from the
 *           application's memory waits as a copy of its own.
 *
 * The storm port's counters are also read back through telemetry (/rocefw/port/pfc), over the
 * process's own socket: run with --file-prefix, not --no-shconf.
 *
 * usage: test_pfc [EAL options with --file-prefix=NAME]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "dataplane/rfw_port.h"

#include "check.h"

#define MAX_REC 200000
#define PRIO_HI 3 /* DSCP 26 / 8 */

struct rec {
	uint32_t seq;
	uint8_t prio;
	uint64_t tsc;
};

struct side {
	const char *name;
	struct rfw_port *port;
	struct rte_ring *in, *out; /* the port's RX ring (we inject), TX ring (we drain) */
	uint32_t seq[8];           /* next sequence number per priority */
	uint64_t next_gen;         /* TSC of the next generated pair of frames */
	uint64_t period;           /* TSC between generated pairs */
	uint64_t last_poll, max_gap;
	unsigned nrec;
	struct rec *rec;
	const struct rte_eth_rxtx_callback *cb;
	bool own_rings;
};

static struct rte_mempool *gen_pool;
static uint64_t hz;
/* One microsecond of TSC: the test computes pause lengths in floating point, the port in
 * integer cycles rounded up; they may differ by a cycle. */
#define US (hz / 1000000)
/*
 * "Keeps flowing": at least a quarter of the frames the generator would send in @d at one per
 * @period. The generator runs in the poll loop, which a shared machine stalls now and then.
 */
#define FLOWING(d, period) ((unsigned)((d) / (period) / 4))

static uint64_t ms(double v)
{
	return (uint64_t)(v * (double)hz / 1000.0);
}
static double to_ms(uint64_t tsc)
{
	return (double)tsc * 1000.0 / (double)hz;
}

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "test_pfc: %s: %s\n", what, rte_strerror(rte_errno));
	exit(1);
}

/* Every frame the PMD is handed: its sequence number, priority and the time. */
static uint16_t tx_stamp(uint16_t port __rte_unused, uint16_t queue __rte_unused,
                         struct rte_mbuf **pkts, uint16_t nb, void *arg)
{
	struct side *s = arg;
	uint64_t now = rte_rdtsc();

	for (uint16_t i = 0; i < nb; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		uint32_t seq;

		if (pkts[i]->data_len < 38 || d[12] != 0x08 || d[13] != 0x00 || s->nrec == MAX_REC)
			continue;
		memcpy(&seq, d + 34, 4);
		s->rec[s->nrec++] = (struct rec){seq, (uint8_t)(d[15] >> 5), now};
	}
	return nb;
}

/* A ring port; @in / @out NULL: rings of its own (freed by side_close). */
static void side_setup_rings(struct side *s, const char *name, const struct rfw_pfc_conf *pc,
                             struct rte_ring *in, struct rte_ring *out)
{
	struct rfw_port_conf conf = {.nb_mbufs = 2048, .pfc = *pc};
	char rn[32];
	int p;

	s->name = name;
	s->own_rings = in == NULL;
	if (s->own_rings) {
		snprintf(rn, sizeof(rn), "%s_in", name);
		in = rte_ring_create(rn, 1024, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(rn, sizeof(rn), "%s_out", name);
		out =
		    rte_ring_create(rn, 4096, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	}
	s->in = in;
	s->out = out;
	if (s->in == NULL || s->out == NULL)
		die("rte_ring_create");
	p = rte_eth_from_rings(name, &s->in, 1, &s->out, 1, (unsigned)rte_socket_id());
	if (p < 0)
		die("rte_eth_from_rings");
	s->port = rfw_port_setup((uint16_t)p, &conf, NULL);
	if (s->port == NULL)
		die("rfw_port_setup");
	s->cb = rte_eth_add_tx_callback((uint16_t)p, 0, tx_stamp, s);
	if (s->cb == NULL)
		die("rte_eth_add_tx_callback (DPDK built without RTE_ETHDEV_RXTX_CALLBACKS?)");
	s->rec = calloc(MAX_REC, sizeof(*s->rec));
	if (s->rec == NULL)
		die("calloc");
	s->period = hz / 2000; /* a frame of each priority every 500 us */
}

static void side_setup(struct side *s, const char *name, const struct rfw_pfc_conf *pc)
{
	side_setup_rings(s, name, pc, NULL, NULL);
}

static void side_close(struct side *s)
{
	uint16_t port_id = s->port->port_id;

	/* Port ids are reused: the next port must not inherit this callback. */
	rte_eth_remove_tx_callback(port_id, 0, s->cb);
	rfw_port_close(s->port);
	if (s->own_rings) {
		rte_ring_free(s->in);
		rte_ring_free(s->out);
	}
	free(s->rec);
}

/* An IPv4/UDP frame with DSCP @dscp carrying @seq. */
static void gen_one(struct side *s, unsigned dscp)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(gen_pool);
	uint8_t *d;
	unsigned prio = dscp >> 3;

	if (m == NULL || (d = (uint8_t *)rte_pktmbuf_append(m, 64)) == NULL)
		die("generator mbuf");
	memset(d, 0, 64);
	memcpy(d, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	d[14] = 0x45;
	d[15] = (uint8_t)(dscp << 2);
	memcpy(d + 34, &s->seq[prio], 4);
	s->seq[prio]++;
	rfw_tx_one(s->port->q[0], m);
}

static void inject(struct side *s, const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(gen_pool);
	char *d;

	if (m == NULL || (d = rte_pktmbuf_append(m, (uint16_t)len)) == NULL)
		die("injector mbuf");
	memcpy(d, frame, len);
	if (rte_ring_enqueue(s->in, m) != 0)
		die("injector ring full");
}

static void xoff(struct side *s, unsigned prio, uint16_t quanta)
{
	uint16_t q[RFW_PFC_PRIOS] = {0};
	uint8_t f[RFW_MACCTL_FRAME_LEN];
	const uint8_t src[6] = {0x02, 0xee, 0, 0, 0, 1};

	q[prio] = quanta;
	inject(s, f, rfw_pfc_build(f, sizeof(f), src, (uint8_t)(1u << prio), q));
}

/* One poll iteration at @now: RX (pause frames, watchdog), generate, flush, drain the TX ring. */
static void step(struct side *s, uint64_t now)
{
	struct rte_mbuf *pk[RFW_MAX_BURST];
	struct rfw_rx_view v[RFW_MAX_BURST];
	struct rfw_queue *q = s->port->q[0];
	void *out[64];
	unsigned n;

	if (s->last_poll != 0 && now - s->last_poll > s->max_gap)
		s->max_gap = now - s->last_poll;
	s->last_poll = now;
	n = rfw_rx_burst(q, now, pk, v, RFW_MAX_BURST);
	rte_pktmbuf_free_bulk(pk, n);
	if (now >= s->next_gen) {
		gen_one(s, 26);
		gen_one(s, 0);
		s->next_gen = now + s->period;
	}
	rfw_tx_flush(q, now);
	while ((n = rte_ring_dequeue_burst(s->out, out, 64, NULL)) != 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)out, n);
}

/* Poll until @until; returns the last poll time. */
static uint64_t run_until(struct side *s, uint64_t until)
{
	uint64_t now;

	while ((now = rte_rdtsc()) < until)
		step(s, now);
	return now;
}

/* Frames of @prio that left in [from, to). */
static unsigned sent_between(const struct side *s, unsigned prio, uint64_t from, uint64_t to)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->nrec; i++)
		n += s->rec[i].prio == prio && s->rec[i].tsc >= from && s->rec[i].tsc < to;
	return n;
}

/* First frame of @prio that left at or after @from (UINT64_MAX: none). */
static uint64_t first_after(const struct side *s, unsigned prio, uint64_t from)
{
	for (unsigned i = 0; i < s->nrec; i++)
		if (s->rec[i].prio == prio && s->rec[i].tsc >= from)
			return s->rec[i].tsc;
	return UINT64_MAX;
}

/* Each priority's frames left in sequence order, without repeats. */
static void check_order(const struct side *s)
{
	int64_t last[8];

	for (unsigned p = 0; p < 8; p++)
		last[p] = -1;
	for (unsigned i = 0; i < s->nrec; i++) {
		const struct rec *r = &s->rec[i];

		CHECK((int64_t)r->seq > last[r->prio], "%s: priority %u seq %u after %" PRId64,
		      s->name, r->prio, r->seq, last[r->prio]);
		last[r->prio] = r->seq;
	}
}

static uint64_t pctr(const struct side *s, enum rfw_pfc_prio_ctr c, unsigned prio)
{
	return rfw_pfc_prio_ctr(s->port, c, prio);
}

/* /rocefw/port/pfc,<port> over this process's telemetry socket: the reply must carry @want. */
static void check_telemetry(uint16_t port_id, const char *const *want, unsigned nwant)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	static char buf[65536];
	char cmd[64];
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk_telemetry.v2",
	         rte_eal_get_runtime_dir());
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		CHECK(0, "telemetry socket %s: %s (run with --file-prefix)", sa.sun_path,
		      strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	n = recv(fd, buf, sizeof(buf) - 1, 0); /* the server's greeting */
	snprintf(cmd, sizeof(cmd), "/rocefw/port/pfc,%u", port_id);
	if (n > 0 && send(fd, cmd, strlen(cmd), 0) > 0)
		n = recv(fd, buf, sizeof(buf) - 1, 0);
	else
		n = -1;
	close(fd);
	CHECK(n > 0, "no telemetry reply");
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (unsigned i = 0; i < nwant; i++)
		CHECK(strstr(buf, want[i]) != NULL, "telemetry reply lacks '%s': %.300s", want[i],
		      buf);
}

/*
 * The storm: XOFF every ms for 300 ms from @now. The watchdog fires 100 ms in, drops what is
 * held and ignores the rest of the storm; priority 0 flows throughout. Returns the last XOFF.
 */
static uint64_t storm_phase(struct side *s, uint64_t now)
{
	uint64_t t_first = 0, t_fire = 0, t_last_xoff = 0, held_at_fire = 0, slack;
	uint64_t t_end = now + ms(300), next = now;
	unsigned nxoff = 0;

	while ((now = rte_rdtsc()) < t_end) {
		if (now >= next) {
			xoff(s, PRIO_HI, 0xffff);
			nxoff++;
			t_last_xoff = now;
			if (t_first == 0)
				t_first = now;
			next = now + ms(1);
		}
		step(s, now);
		if (t_fire == 0 && pctr(s, RFW_PFC_PCTR_wd_storm, PRIO_HI) != 0) {
			t_fire = now;
			held_at_fire = pctr(s, RFW_PFC_PCTR_tx_pause_held, PRIO_HI);
		}
	}
	slack = s->max_gap + ms(1);
	printf("storm: watchdog fired %.3f ms after the first XOFF (threshold 100 ms, longest "
	       "poll gap %.3f ms); %" PRIu64 " held frames dropped\n",
	       to_ms(t_fire - t_first), to_ms(s->max_gap),
	       pctr(s, RFW_PFC_PCTR_wd_dropped, PRIO_HI));
	CHECK(t_fire != 0, "the watchdog never fired");
	CHECK(t_fire - t_first >= ms(100) && t_fire - t_first <= ms(100) + slack,
	      "fired after %.3f ms", to_ms(t_fire - t_first));
	CHECK(sent_between(s, PRIO_HI, t_first, t_fire) == 0,
	      "%u priority-3 frames left while paused", sent_between(s, PRIO_HI, t_first, t_fire));
	CHECK(sent_between(s, 0, t_first, t_fire) >= FLOWING(t_fire - t_first, s->period),
	      "priority 0 kept flowing: %u frames", sent_between(s, 0, t_first, t_fire));
	CHECK(pctr(s, RFW_PFC_PCTR_wd_storm, PRIO_HI) == 1, "storms %" PRIu64,
	      pctr(s, RFW_PFC_PCTR_wd_storm, PRIO_HI));
	CHECK(held_at_fire >= FLOWING(t_fire - t_first, s->period) &&
	          pctr(s, RFW_PFC_PCTR_wd_dropped, PRIO_HI) == held_at_fire,
	      "held %" PRIu64 ", dropped %" PRIu64, held_at_fire,
	      pctr(s, RFW_PFC_PCTR_wd_dropped, PRIO_HI));
	CHECK(pctr(s, RFW_PFC_PCTR_rx_pause, PRIO_HI) == nxoff, "rx_prio3_pause %" PRIu64 " / %u",
	      pctr(s, RFW_PFC_PCTR_rx_pause, PRIO_HI), nxoff);
	CHECK(pctr(s, RFW_PFC_PCTR_wd_ignored, PRIO_HI) > 0 &&
	          pctr(s, RFW_PFC_PCTR_wd_ignored, PRIO_HI) < nxoff,
	      "ignored XOFFs %" PRIu64, pctr(s, RFW_PFC_PCTR_wd_ignored, PRIO_HI));
	/* During the rest of the storm the pauses are ignored: priority 3 flows. */
	CHECK(sent_between(s, PRIO_HI, t_fire, t_end) >= FLOWING(t_end - t_fire, s->period),
	      "priority 3 during the storm: %u", sent_between(s, PRIO_HI, t_fire, t_end));
	CHECK(rfw_pfc_storm(s->port) == 1u << PRIO_HI, "storm mask %#x", rfw_pfc_storm(s->port));
	return t_last_xoff;
}

/* The storm stops: restored after 100 ms without XOFF, then an XOFF is honoured again. */
static void storm_after(struct side *s, uint64_t t_last_xoff)
{
	uint64_t now, t_restore = 0, slack, pause, first;

	while ((now = rte_rdtsc()) < t_last_xoff + ms(300)) {
		step(s, now);
		if (t_restore == 0 && pctr(s, RFW_PFC_PCTR_wd_restored, PRIO_HI) != 0)
			t_restore = now;
	}
	slack = s->max_gap + ms(1);
	CHECK(t_restore != 0 && t_restore - t_last_xoff >= ms(100) &&
	          t_restore - t_last_xoff <= ms(100) + slack,
	      "restored %.3f ms after the last XOFF", to_ms(t_restore - t_last_xoff));
	CHECK(rfw_pfc_storm(s->port) == 0, "storm mask %#x", rfw_pfc_storm(s->port));
	/* Honoured again: one XOFF of 4000 quanta (20.48 ms at 100 Mb/s). */
	xoff(s, PRIO_HI, 4000);
	now = rte_rdtsc();
	step(s, now);
	run_until(s, now + ms(30));
	pause = (uint64_t)((double)rfw_pause_quanta_ns(4000, 100) * (double)hz / 1e9);
	first = first_after(s, PRIO_HI, now);
	CHECK(sent_between(s, PRIO_HI, now, now + pause - US) == 0,
	      "priority 3 sent during the pause after restore");
	CHECK(first >= now + pause - US && first <= now + pause + s->max_gap + ms(1),
	      "priority 3 resumed %.3f ms after the XOFF (pause %.3f ms)",
	      first == UINT64_MAX ? -1.0 : to_ms(first - now), to_ms(pause));
}

static void test_storm(void)
{
	/* 100 Mb/s: an XOFF of 65535 quanta lasts 335 ms, so the refreshes (every ms) keep the
	 * pause unbroken even when a loaded machine stalls the injector for tens of ms. */
	struct rfw_pfc_conf pc = {.wd_ms = 100, .wd_restore_ms = 100, .link_mbps = 100};
	static const char *const want[] = {
	    "\"schema\":\"rocefw.port.pfc/1\"", "\"link_mbps\":100",
	    "\"rx_prio3_pfc_wd_storm\":1",      "\"rx_prio3_pfc_wd_restored\":1",
	    "\"rx_prio0_pfc_wd_storm\":0",      "\"tx_pause_ctrl_phy\":0"};
	struct side s = {0};
	uint64_t t0, now, sent3_total;

	side_setup(&s, "storm", &pc);
	CHECK(s.port->pfc->link_mbps == 100, "link %u Mb/s", s.port->pfc->link_mbps);
	t0 = rte_rdtsc();
	now = run_until(&s, t0 + ms(30));
	CHECK(sent_between(&s, PRIO_HI, t0, now) >= FLOWING(now - t0, s.period),
	      "priority 3 flows before the storm");
	storm_after(&s, storm_phase(&s, now));
	sent3_total = sent_between(&s, PRIO_HI, 0, UINT64_MAX);
	CHECK(sent3_total + pctr(&s, RFW_PFC_PCTR_wd_dropped, PRIO_HI) +
	              rfw_pfc_held(s.port, PRIO_HI) + s.port->q[0]->txb->length ==
	          s.seq[PRIO_HI],
	      "priority-3 frames: %" PRIu64 " sent + dropped + held != %u generated", sent3_total,
	      s.seq[PRIO_HI]);
	CHECK(pctr(&s, RFW_PFC_PCTR_tx_pause_hold_full, PRIO_HI) == 0, "hold ring overflowed");
	check_telemetry(s.port->port_id, want, RTE_DIM(want));
	check_order(&s);
	side_close(&s);
}

/* 4000 quanta at 100 Mb/s (20.48 ms): priority 3 stops for exactly that, priority 0 not. */
static void quanta_pause(struct side *s)
{
	uint64_t now, t_x, d, first;

	d = (uint64_t)((double)rfw_pause_quanta_ns(4000, 100) * (double)hz / 1e9);
	xoff(s, PRIO_HI, 4000);
	t_x = rte_rdtsc();
	step(s, t_x);
	now = run_until(s, t_x + d + ms(10));
	first = first_after(s, PRIO_HI, t_x);
	printf("quanta: 4000 quanta at 100 Mb/s = %.3f ms; priority 3 resumed after %.3f ms\n",
	       to_ms(d), first == UINT64_MAX ? -1.0 : to_ms(first - t_x));
	CHECK(sent_between(s, PRIO_HI, t_x, t_x + d - US) == 0,
	      "%u priority-3 frames during the pause", sent_between(s, PRIO_HI, t_x, t_x + d - US));
	CHECK(first >= t_x + d - US && first <= t_x + d + s->max_gap + ms(1), "resumed at %.3f ms",
	      first == UINT64_MAX ? -1.0 : to_ms(first - t_x));
	CHECK(sent_between(s, 0, t_x, t_x + d) >= FLOWING(d, s->period),
	      "priority 0 during the pause: %u", sent_between(s, 0, t_x, t_x + d));
	CHECK(sent_between(s, PRIO_HI, t_x + d, now) >= FLOWING(d, s->period),
	      "held frames and new ones after the pause: %u",
	      sent_between(s, PRIO_HI, t_x + d, now));
	CHECK(pctr(s, RFW_PFC_PCTR_rx_pause_duration, PRIO_HI) + 1 >= (d * 1000000 / hz) &&
	          pctr(s, RFW_PFC_PCTR_rx_pause_duration, PRIO_HI) <= (d * 1000000 / hz) + 1,
	      "rx_prio3_pause_duration %" PRIu64 " us", pctr(s, RFW_PFC_PCTR_rx_pause_duration, 3));
}

/* XOFF for 65535 quanta (335 ms), XON after 10 ms: resumes at the XON. */
static void quanta_xon(struct side *s)
{
	uint64_t t_x, t_xon, first;

	xoff(s, PRIO_HI, 0xffff);
	t_x = rte_rdtsc();
	step(s, t_x);
	run_until(s, t_x + ms(10));
	xoff(s, PRIO_HI, 0);
	t_xon = rte_rdtsc();
	step(s, t_xon);
	run_until(s, t_xon + ms(5));
	first = first_after(s, PRIO_HI, t_x);
	CHECK(first >= t_xon && first <= t_xon + s->max_gap + ms(1), "XON: resumed at %.3f ms",
	      first == UINT64_MAX ? -1.0 : to_ms(first - t_x));
	CHECK(pctr(s, RFW_PFC_PCTR_rx_xon, PRIO_HI) == 1 &&
	          pctr(s, RFW_PFC_PCTR_rx_pause_transition, PRIO_HI) == 2,
	      "xon %" PRIu64 " transitions %" PRIu64, pctr(s, RFW_PFC_PCTR_rx_xon, PRIO_HI),
	      pctr(s, RFW_PFC_PCTR_rx_pause_transition, PRIO_HI));
}

/* 802.3x PAUSE, 2000 quanta (10.24 ms): every priority stops. */
static void quanta_global_pause(struct side *s)
{
	const uint8_t src[6] = {0x02, 0xee, 0, 0, 0, 2};
	uint8_t f[RFW_MACCTL_FRAME_LEN];
	uint64_t d = (uint64_t)((double)rfw_pause_quanta_ns(2000, 100) * (double)hz / 1e9);
	uint64_t t_x, first;

	inject(s, f, rfw_pause_build(f, sizeof(f), src, 2000));
	t_x = rte_rdtsc();
	step(s, t_x);
	run_until(s, t_x + d + ms(5));
	CHECK(sent_between(s, 0, t_x, t_x + d - US) == 0 &&
	          sent_between(s, PRIO_HI, t_x, t_x + d - US) == 0,
	      "frames during a global PAUSE");
	first = first_after(s, 0, t_x);
	CHECK(first >= t_x + d - US && first <= t_x + d + s->max_gap + ms(1),
	      "PAUSE: resumed at %.3f ms", first == UINT64_MAX ? -1.0 : to_ms(first - t_x));
	CHECK(rfw_pfc_ctr(s->port, RFW_PFC_CTR_rx_global_pause) == 1 &&
	          rfw_pfc_ctr(s->port, RFW_PFC_CTR_rx_pause_ctrl_phy) == 4 &&
	          rfw_pfc_ctr(s->port, RFW_PFC_CTR_rx_mac_control_phy) == 4,
	      "MAC Control counters");
}

static void no_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

/*
 * A priority-3 frame whose payload is the application's memory, attached where it is (a NIC's
 * payload sent from an MR: docs/nic.md), meets a pause: it is held as a copy of its own
 * (tx_ref_copied), so nothing references that memory after the burst, and leaves at the XON.
 */
static void quanta_held_payload(struct side *s)
{
	static uint8_t app[512];
	static struct rte_mbuf_ext_shared_info sh = {.free_cb = no_free};
	struct rte_mbuf *m = rte_pktmbuf_alloc(gen_pool), *d = rte_pktmbuf_alloc(gen_pool);
	uint32_t seq = s->seq[PRIO_HI]++;
	uint64_t t_x;
	uint8_t *h;

	if (m == NULL || d == NULL || (h = (uint8_t *)rte_pktmbuf_append(m, 64)) == NULL)
		die("payload frame");
	memset(h, 0, 64);
	memcpy(h, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	h[14] = 0x45;
	h[15] = 26 << 2;
	memcpy(h + 34, &seq, 4);
	rte_mbuf_ext_refcnt_set(&sh, 2); /* ours, and the frame's */
	rte_pktmbuf_attach_extbuf(d, app, RTE_BAD_IOVA, sizeof(app), &sh);
	d->data_len = d->pkt_len = sizeof(app);
	if (rte_pktmbuf_chain(m, d) != 0)
		die("rte_pktmbuf_chain");
	xoff(s, PRIO_HI, 0xffff);
	t_x = rte_rdtsc();
	step(s, t_x); /* the XOFF read: priority 3 paused */
	rfw_tx_one(s->port->q[0], m);
	step(s, rte_rdtsc());
	CHECK(rte_mbuf_ext_refcnt_read(&sh) == 1 &&
	          rfw_port_ctr(s->port, RFW_PORT_CTR_tx_ref_copied) == 1,
	      "a held frame still references the application's memory (count %u, copied %" PRIu64
	      ")",
	      rte_mbuf_ext_refcnt_read(&sh), rfw_port_ctr(s->port, RFW_PORT_CTR_tx_ref_copied));
	run_until(s, t_x + ms(5));
	xoff(s, PRIO_HI, 0);
	step(s, rte_rdtsc());
	run_until(s, rte_rdtsc() + ms(5));
	CHECK(first_after(s, PRIO_HI, t_x) != UINT64_MAX, "nothing of priority 3 after the XON");
}

static void test_quanta(void)
{
	struct rfw_pfc_conf pc = {.link_mbps = 100, .wd_ms = 5000};
	struct side s = {0};

	side_setup(&s, "quanta", &pc);
	s.period = hz / 5000; /* every 200 us */
	run_until(&s, rte_rdtsc() + ms(5));
	quanta_pause(&s);
	quanta_xon(&s);
	quanta_global_pause(&s);
	quanta_held_payload(&s);
	CHECK(pctr(&s, RFW_PFC_PCTR_wd_storm, PRIO_HI) == 0, "no storm with a 5 s watchdog");
	CHECK(rfw_pfc_held(s.port, 0) == 0 && rfw_pfc_held(s.port, PRIO_HI) == 0,
	      "frames still held");
	CHECK(pctr(&s, RFW_PFC_PCTR_tx_pause_hold_full, PRIO_HI) == 0 &&
	          pctr(&s, RFW_PFC_PCTR_tx_pause_hold_full, 0) == 0,
	      "hold ring overflowed");
	/* Everything generated left (nothing dropped) once the buffer is flushed. */
	rfw_tx_flush(s.port->q[0], rte_rdtsc());
	CHECK(sent_between(&s, 0, 0, UINT64_MAX) == s.seq[0] &&
	          sent_between(&s, PRIO_HI, 0, UINT64_MAX) == s.seq[PRIO_HI],
	      "sent %u/%u and %u/%u", sent_between(&s, 0, 0, UINT64_MAX), s.seq[0],
	      sent_between(&s, PRIO_HI, 0, UINT64_MAX), s.seq[PRIO_HI]);
	check_order(&s);
	side_close(&s);
}

struct gen_run {
	struct side *S, *R;
	struct rte_ring *r_sr;                /* S -> R */
	uint64_t t0, t_on, t_s_xoff, t_s_xon; /* R's XOFF decision, S's first XOFF and XON */
	uint32_t max_depth;                   /* R's backlog while it did not poll */
};

/* S: pause frames in, frames out (priority 3 every S->period, priority 0 every ms). */
static void gen_sender(struct gen_run *g, uint64_t now, uint64_t *next0)
{
	struct side *S = g->S;
	struct rte_mbuf *pk[RFW_MAX_BURST];
	struct rfw_rx_view v[RFW_MAX_BURST];

	if (S->last_poll != 0 && now - S->last_poll > S->max_gap)
		S->max_gap = now - S->last_poll;
	S->last_poll = now;
	rte_pktmbuf_free_bulk(pk, rfw_rx_burst(S->port->q[0], now, pk, v, RFW_MAX_BURST));
	if (now >= S->next_gen) {
		gen_one(S, 26);
		S->next_gen = now + S->period;
	}
	if (now >= *next0) {
		gen_one(S, 0);
		*next0 = now + ms(1);
	}
	rfw_tx_flush(S->port->q[0], now);
	if (g->t_s_xoff == 0 && pctr(S, RFW_PFC_PCTR_rx_pause, PRIO_HI) != 0)
		g->t_s_xoff = now;
	if (g->t_s_xon == 0 && pctr(S, RFW_PFC_PCTR_rx_xon, PRIO_HI) != 0)
		g->t_s_xon = now;
}

/* Both ends until 20 ms after S saw the XON (or a time limit); R drains 90 ms after XOFF. */
static void gen_loop(struct gen_run *g)
{
	struct rte_mbuf *pk[RFW_MAX_BURST];
	struct rfw_rx_view v[RFW_MAX_BURST];
	uint64_t now, t_drain = 0, t_stop = 0, next0 = 0;
	uint32_t depth;

	for (;;) {
		now = rte_rdtsc();
		gen_sender(g, now, &next0);
		/* R: polls nothing until 90 ms after its XOFF, then drains. */
		if (t_drain != 0)
			rte_pktmbuf_free_bulk(
			    pk, rfw_rx_burst(g->R->port->q[0], now, pk, v, RFW_MAX_BURST));
		depth = rte_ring_count(g->r_sr);
		/* While R does not poll, only priority 0 (and what was in flight) adds to it. */
		if (t_drain == 0 && depth > g->max_depth)
			g->max_depth = depth;
		if (rfw_pfc_rx_backlog(g->R->port->q[0], depth, now) == 1 && g->t_on == 0)
			g->t_on = now;
		if (g->t_on == 0 && now > g->t0 + ms(200))
			break; /* never reached gen_xoff: reported by the caller */
		if (g->t_on != 0 && t_drain == 0 && now >= g->t_on + ms(90))
			t_drain = now;
		if (g->t_s_xon != 0 && t_stop == 0)
			t_stop = now + ms(20);
		if ((t_stop != 0 && now >= t_stop) || (g->t_on != 0 && now > g->t_on + ms(600)))
			break;
	}
	/* The rest of R's ring. */
	while (rfw_rx_burst(g->R->port->q[0], now, pk, v, RFW_MAX_BURST) != 0 ||
	       rte_ring_count(g->r_sr) != 0)
		;
}

/* What S and R counted and when: the pause held from XOFF to XON, nothing lost. */
static void gen_checks(const struct gen_run *g)
{
	struct side *S = g->S, *R = g->R;
	uint64_t t_s_xoff = g->t_s_xoff, t_s_xon = g->t_s_xon;

	printf("generate: XOFF at backlog %u, max backlog %u, %" PRIu64
	       " PFC frames sent (XOFF, refreshes, XON), priority 3 paused %.3f ms at the sender\n",
	       R->port->pfc->gen_xoff, g->max_depth,
	       rfw_pfc_ctr(R->port, RFW_PFC_CTR_tx_pause_ctrl_phy),
	       t_s_xon && t_s_xoff ? to_ms(t_s_xon - t_s_xoff) : -1.0);
	CHECK(g->t_on != 0 && t_s_xoff != 0 && t_s_xon != 0, "XOFF %d, at S %d, XON at S %d",
	      g->t_on != 0, t_s_xoff != 0, t_s_xon != 0);
	CHECK(rfw_pfc_ctr(R->port, RFW_PFC_CTR_tx_pause_ctrl_phy) >= 5,
	      "XOFF + refreshes (90 ms / 25.6 ms) + XON: %" PRIu64,
	      rfw_pfc_ctr(R->port, RFW_PFC_CTR_tx_pause_ctrl_phy));
	CHECK(pctr(S, RFW_PFC_PCTR_rx_pause, PRIO_HI) == pctr(R, RFW_PFC_PCTR_tx_pause, PRIO_HI) &&
	          pctr(S, RFW_PFC_PCTR_rx_pause, 0) == 0,
	      "S received %" PRIu64 " of %" PRIu64 " PFC frames",
	      pctr(S, RFW_PFC_PCTR_rx_pause, PRIO_HI), pctr(R, RFW_PFC_PCTR_tx_pause, PRIO_HI));
	/* The held frames released at the XON may raise R's backlog again: more rounds are fine. */
	CHECK(pctr(S, RFW_PFC_PCTR_rx_xon, PRIO_HI) >= 1, "XON at S: %" PRIu64,
	      pctr(S, RFW_PFC_PCTR_rx_xon, PRIO_HI));
	CHECK(t_s_xon > t_s_xoff && sent_between(S, PRIO_HI, t_s_xoff, t_s_xon) == 0,
	      "%u priority-3 frames left S between XOFF and XON",
	      sent_between(S, PRIO_HI, t_s_xoff, t_s_xon));
	CHECK(t_s_xon - t_s_xoff >= ms(89), "paused only %.3f ms", to_ms(t_s_xon - t_s_xoff));
	CHECK(sent_between(S, 0, t_s_xoff, t_s_xon) >= FLOWING(t_s_xon - t_s_xoff, ms(1)),
	      "priority 0 at S during the pause: %u", sent_between(S, 0, t_s_xoff, t_s_xon));
	CHECK(first_after(S, PRIO_HI, t_s_xon) <= t_s_xon + S->max_gap + ms(1),
	      "priority 3 resumed after the XON");
	CHECK(g->max_depth <= R->port->pfc->gen_xoff + 8 + sent_between(S, 0, t_s_xoff, t_s_xon),
	      "backlog grew to %u", g->max_depth);
	CHECK(pctr(R, RFW_PFC_PCTR_tx_pause_duration, PRIO_HI) >= 89000,
	      "tx_prio3_pause_duration %" PRIu64 " us", pctr(R, RFW_PFC_PCTR_tx_pause_duration, 3));
	CHECK(rfw_pfc_held(S->port, PRIO_HI) == 0 &&
	          pctr(S, RFW_PFC_PCTR_tx_pause_hold_full, 3) == 0,
	      "S still holds frames or dropped some");
	CHECK(rfw_port_ctr(R->port, RFW_PORT_CTR_rx_pkts) ==
	          rfw_port_ctr(S->port, RFW_PORT_CTR_tx_pkts),
	      "R received %" PRIu64 " of the %" PRIu64 " frames S sent",
	      rfw_port_ctr(R->port, RFW_PORT_CTR_rx_pkts),
	      rfw_port_ctr(S->port, RFW_PORT_CTR_tx_pkts));
}

/*
 * Generation: a receiver R that stops polling builds a backlog; at gen_xoff frames it sends
 * XOFF for priority 3 to the sender S, refreshes it every half pause while the backlog stays
 * above gen_xon, and sends XON once it has drained. S honours all of it: no priority-3 frame
 * leaves S from the XOFF to the XON (the pause, 51.2 ms, is shorter than the 90 ms it is held:
 * only the refreshes keep it), priority 0 keeps flowing, the held frames follow in order.
 */
static void test_generate(void)
{
	struct rfw_pfc_conf pr = {.link_mbps = 100,
	                          .gen_prio_mask = 1u << PRIO_HI,
	                          .gen_xoff = 100,
	                          .gen_xon = 20,
	                          .gen_quanta = 10000};
	struct rfw_pfc_conf ps = {.link_mbps = 100, .wd_off = true};
	struct rte_ring *r_sr, *r_rs;
	struct side S = {0}, R = {0};
	struct gen_run g = {.S = &S, .R = &R, .t0 = rte_rdtsc()};

	r_sr = rte_ring_create("gen_sr", 4096, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	r_rs = rte_ring_create("gen_rs", 1024, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r_sr == NULL || r_rs == NULL)
		die("rte_ring_create");
	g.r_sr = r_sr;
	side_setup_rings(&S, "gen_s", &ps, r_rs, r_sr);
	side_setup_rings(&R, "gen_r", &pr, r_sr, r_rs);
	CHECK(rfw_pfc_rx_backlog(S.port->q[0], 1000, rte_rdtsc()) == -ENOTSUP,
	      "generation without gen_prio_mask");
	S.period = hz / 2500; /* priority 3 every 400 us; priority 0 every ms */
	gen_loop(&g);
	gen_checks(&g);
	check_order(&S);
	side_close(&S);
	side_close(&R);
	rte_ring_free(r_sr);
	rte_ring_free(r_rs);
}

int main(int argc, char **argv)
{
	if (rfw_eal_init(argc, argv) < 0)
		return 1;
	hz = rte_get_tsc_hz();
	gen_pool = rte_pktmbuf_pool_create("pfc_gen", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
	                                   (int)rte_socket_id());
	if (gen_pool == NULL)
		die("mempool");
	test_quanta();
	test_storm();
	test_generate();
	rte_mempool_free(gen_pool);
	rfw_eal_cleanup();
	printf("test_pfc: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
