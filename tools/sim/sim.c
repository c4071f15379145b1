/* SPDX-License-Identifier: BSD-3-Clause */
/* rocefw-sim engine: events, links, hosts, workload. See sim.h. */
#include "sim.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <pcap/pcap.h>

#include "cc/dcqcn.h"
#include "cc/dcqcn_params.h"
#include "nic/rfw_fw.h"
#include "tools/common/rfw_ccset.h"
#include "wire/frame.h"

#define FRAME_HDR  (RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN)
#define FRAME_MAX  (FRAME_HDR + 4096 + 64 + RFW_ICRC_LEN)
#define WIRE_EXTRA 24 /* preamble 8, FCS 4, inter-frame gap 12 */
#define TX_WINDOW  2  /* frames a host keeps queued on its egress link */
#define MAX_QPS    256
#define NPRIO      8   /* output queues per port, strict priority (802.1p from DSCP >> 3) */
#define QHIST_BIN  256 /* bytes per bin of the queue-length histogram */

/* ---- RNG (splitmix64: small, fast, fully specified, so runs are reproducible) ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
/* Uniform in [0, 1) with 53 bits. */
static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- frames ---- */

struct frame {
	struct frame *next;
	uint32_t len;
	uint8_t prio;
	uint8_t data[FRAME_MAX];
};

/* ---- events: a binary heap ordered by (time, sequence) ---- */

enum ev_type { EV_TX_DONE, EV_ARRIVE, EV_TIMER, EV_SAMPLE, EV_KICK };

struct event {
	uint64_t t;
	uint64_t seq;
	uint8_t type;
	uint32_t idx; /* link or host */
	uint32_t gen;
	struct frame *f;
};

struct sim;

struct link {
	struct sim *sim;
	int idx, to, from; /* to / from: a host index, or -1 for the switch */
	double ns_per_byte;
	uint64_t free_ps; /* when the wire is free, in picoseconds: no rounding drift */
	uint64_t delay_ns;
	struct frame *qh[NPRIO], *qt[NPRIO]; /* FIFO per priority, linked through frame.next */
	uint64_t pbytes[NPRIO];
	uint32_t qcap, qlen;
	uint64_t qbytes;
	bool red; /* a switch port: RED/ECN marking at enqueue */
	bool busy;
	uint64_t burst_until; /* a loss burst drops every frame leaving before this (ns) */
	uint64_t nframes;     /* frames that left this link (--lose-frame counts them) */
};

struct wl_qp; /* workload state of one QP pair */

/*
 * A host is a NIC running the firmware (nic/rfw_fw.h): its scheduler, pacing, congestion
 * control and framing are nic/'s, the same code the DPDK dataplane runs. The simulator gives it
 * frames (struct frame), the virtual clock, and its egress link.
 */
struct host {
	struct sim *sim;
	int idx;
	struct rfw_fw *fw;
	struct rfw_dev *dev; /* rfw_fw_dev(fw) */
	struct rfw_pd *pd;
	struct rfw_cq *scq, *rcq;
	struct rfw_qp *qp[MAX_QPS];
	uint32_t nqp, rr;
	struct link *egress;
	uint64_t timer_at;
	uint32_t timer_gen;
	bool requester;    /* posts the workload (the two-host model's A, the senders) */
	uint32_t wl_first; /* workload index of qp[0] */
};

struct wl_qp {
	uint32_t i;
	uint8_t *abuf, *bbuf; /* depth slots of size bytes on each side */
	struct rfw_mr *amr, *bmr;
	uint64_t *counter; /* atomic target at B */
	struct rfw_mr *cmr;
	uint8_t *rbuf; /* receive buffers at B (SEND) */
	struct rfw_mr *rmr;
	uint8_t *op_of;     /* per slot: the operation of the message in it */
	uint64_t *aidx_of;  /* per slot: which atomic of this QP it is */
	uint64_t *send_seq; /* ring: message number of the k-th SEND (or WRITE with immediate) */
	uint8_t *send_op;   /* ring: its operation */
	uint64_t sends_posted, atomics_posted, atomics_completed;
	uint64_t quota, posted, completed, recv_seq;
	bool dead;
	struct host *ha, *hb; /* requester and responder host */
	struct rfw_qp *aqp, *bqp;
	uint64_t start_ns, bytes_verified, rx_payload, done_ns;
};

struct sim {
	const struct rfw_sim_cfg *cfg;
	struct rfw_sim_result *res;
	uint64_t now, seq;
	uint64_t rng;
	struct event *heap;
	size_t nheap, capheap;
	struct frame *free_frames;
	struct frame **all_chunks;
	size_t nchunks;
	struct link *link;
	struct host *host;
	uint32_t nlinks, nhosts;
	/* switch topology */
	bool fabric;
	uint32_t nflows, rx_host, bn_link; /* the receiver, its switch port (the bottleneck) */
	struct dcqcn_prof prof[DCQCN_PROFILE__COUNT];
	uint64_t end_ns, sample_ns;
	/* bottleneck queue: time-weighted integral and histogram */
	uint64_t q_last_ns, q_peak, q_max_sample;
	double q_integral;
	uint64_t *q_hist;
	uint32_t q_nbins;
	/* time series, one row per sample: per flow rate, delivered bytes, CNPs; queue */
	uint32_t nsamp, capsamp;
	double *ts_rate;   /* [nsamp][nflows] Gb/s */
	uint64_t *ts_rx;   /* [nsamp][nflows] cumulative payload bytes at the receiver */
	uint64_t *ts_ver;  /* [nsamp][nflows] cumulative bytes verified (completions) */
	uint64_t *ts_cnp;  /* [nsamp][nflows] cumulative CNPs at the sender */
	uint64_t *ts_t;    /* [nsamp] time of the sample, ns */
	uint64_t *ts_q;    /* [nsamp] queue bytes at the sample */
	uint64_t *ts_qmax; /* [nsamp] queue peak since the previous sample */
	struct wl_qp *wl;
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	uint64_t active_qps;
	uint64_t last_completion_ns;
	int oom;
};

static int ev_push(struct sim *s, uint64_t t, enum ev_type type, uint32_t idx, uint32_t gen,
                   struct frame *f)
{
	struct event e = {
	    .t = t, .seq = s->seq++, .type = (uint8_t)type, .idx = idx, .gen = gen, .f = f};
	size_t i;

	if (s->nheap == s->capheap) {
		size_t nc = s->capheap ? 2 * s->capheap : 1024;
		struct event *nh = realloc(s->heap, nc * sizeof(*nh));

		if (nh == NULL) {
			s->oom = 1;
			return -ENOMEM;
		}
		s->heap = nh;
		s->capheap = nc;
	}
	i = s->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (s->heap[p].t < e.t || (s->heap[p].t == e.t && s->heap[p].seq < e.seq))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
	return 0;
}

static bool ev_less(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static struct event ev_pop(struct sim *s)
{
	struct event top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct event *mv = &last;

		if (l < s->nheap && ev_less(&s->heap[l], mv)) {
			m = l;
			mv = &s->heap[l];
		}
		if (r < s->nheap && ev_less(&s->heap[r], mv))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static struct frame *frame_get(struct sim *s)
{
	struct frame *f = s->free_frames;

	if (f == NULL) {
		/* Grow by a chunk; frames are recycled, never freed until the end. */
		const size_t n = 256;
		struct frame *chunk = malloc(n * sizeof(*chunk));
		struct frame **nc = realloc(s->all_chunks, (s->nchunks + 1) * sizeof(*nc));

		if (chunk == NULL || nc == NULL) {
			free(chunk);
			if (nc)
				s->all_chunks = nc;
			s->oom = 1;
			return NULL;
		}
		s->all_chunks = nc;
		s->all_chunks[s->nchunks++] = chunk;
		for (size_t i = 0; i < n; i++) {
			chunk[i].next = s->free_frames;
			s->free_frames = &chunk[i];
		}
		f = s->free_frames;
	}
	s->free_frames = f->next;
	return f;
}

static void frame_put(struct sim *s, struct frame *f)
{
	f->next = s->free_frames;
	s->free_frames = f;
}

/* ---- links ---- */

/* Whether --pcap-point wants frames leaving over @l (at the start of their transmission). */
static bool pcap_on_tx(const struct sim *s, const struct link *l)
{
	switch (s->cfg->pcap_point) {
	case RFW_SIM_PCAP_TX:
		return l->from >= 0;
	case RFW_SIM_PCAP_SENDER:
		return l->from >= 0 && s->host[l->from].requester;
	case RFW_SIM_PCAP_RECEIVER:
		return l->from >= 0 && !s->host[l->from].requester;
	case RFW_SIM_PCAP_SWITCH:
		return l->from < 0;
	}
	return false;
}

/* Whether --pcap-point wants frames arriving over @l (a NIC's capture sees both ways). */
static bool pcap_on_rx(const struct sim *s, const struct link *l)
{
	if (l->to < 0)
		return false;
	if (s->cfg->pcap_point == RFW_SIM_PCAP_SENDER)
		return s->host[l->to].requester;
	if (s->cfg->pcap_point == RFW_SIM_PCAP_RECEIVER)
		return !s->host[l->to].requester;
	return false;
}

static void pcap_frame(struct sim *s, const struct frame *f)
{
	struct pcap_pkthdr h = {0};

	h.ts.tv_sec = (time_t)(s->now / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(s->now % 1000000000ull); /* nanosecond pcap */
	h.caplen = h.len = f->len;
	pcap_dump((u_char *)s->dumper, &h, f->data);
}

/*
 * The bottleneck queue's statistics are time weighted: before every change of its length the
 * time spent at the old length is added to the integral (mean) and to the histogram (p99), so
 * they do not depend on when anyone looks.
 */
static void q_account(struct sim *s, const struct link *l)
{
	uint64_t dt;
	uint32_t b;

	if (!s->fabric || (uint32_t)l->idx != s->bn_link)
		return;
	dt = s->now - s->q_last_ns;
	s->q_last_ns = s->now;
	s->q_integral += (double)dt * (double)l->qbytes;
	b = (uint32_t)(l->qbytes / QHIST_BIN);
	if (b >= s->q_nbins)
		b = s->q_nbins - 1;
	s->q_hist[b] += dt;
}

static void q_note_peak(struct sim *s, const struct link *l)
{
	if (!s->fabric || (uint32_t)l->idx != s->bn_link)
		return;
	if (l->qbytes > s->q_peak)
		s->q_peak = l->qbytes;
	if (l->qbytes > s->q_max_sample)
		s->q_max_sample = l->qbytes;
}

/*
 * The next frame onto the wire. @cont: the wire just freed (link_tx_done) with this frame
 * already waiting, so it starts when the last one ended, at l->free_ps exactly, although the
 * event runs at the next whole ns; otherwise it starts now (or when the wire frees).
 */
static void link_start(struct link *l, bool cont)
{
	struct sim *s = l->sim;
	struct frame *f;
	uint64_t start_ps, end_ns;
	int p = NPRIO - 1;

	if (l->busy || l->qlen == 0)
		return;
	/* Strict priority: the highest non-empty queue (CNPs ride np_cnp_prio above the data). */
	while (l->qh[p] == NULL)
		p--;
	f = l->qh[p];
	l->qh[p] = f->next;
	if (l->qh[p] == NULL)
		l->qt[p] = NULL;
	q_account(s, l);
	l->qlen--;
	l->qbytes -= f->len;
	l->pbytes[p] -= f->len;
	l->busy = true;
	s->res->frames_sent++;
	if (s->dumper && pcap_on_tx(s, l))
		pcap_frame(s, f);
	/* Serialisation in picoseconds, carried from frame to frame so back-to-back frames
	 * take exactly their share of the line rate; the event fires at the next whole ns. */
	start_ps = !cont && s->now * 1000 > l->free_ps ? s->now * 1000 : l->free_ps;
	l->free_ps = start_ps + (uint64_t)llround((f->len + WIRE_EXTRA) * l->ns_per_byte * 1000.0);
	end_ns = (l->free_ps + 999) / 1000;
	if (end_ns <= s->now)
		end_ns = s->now + 1;
	ev_push(s, end_ns, EV_TX_DONE, (uint32_t)l->idx, 0, f);
}

static void mark_ce(struct sim *s, struct frame *f);

/*
 * RED marking probability of a switch queue holding @q bytes (DCQCN SIGCOMM'15 §3.1, the CP):
 * 0 up to Kmin, rising linearly to Pmax at Kmax, 1 above Kmax.
 */
static double red_p(const struct rfw_sim_cfg *c, uint64_t q)
{
	double kmin = c->kmin_kb * 1000.0, kmax = c->kmax_kb * 1000.0, qb = (double)q;

	if (qb <= kmin)
		return 0;
	if (qb > kmax)
		return 1;
	return c->pmax * (qb - kmin) / (kmax - kmin);
}

static void link_enqueue(struct link *l, struct frame *f)
{
	struct sim *s = l->sim;
	/* DSCP >> 3 picks the queue (DSCP 48 of a CNP: 6; data at DSCP 0: 0). */
	uint8_t p = (uint8_t)(f->data[RFW_ETH_HLEN + 1] >> 5);

	if (l->qlen == l->qcap || l->qbytes + f->len > s->cfg->queue_bytes) {
		s->res->queue_drops++;
		frame_put(s, f);
		return;
	}
	/* Marking on the queue the frame joins, as seen on arrival (the paper's CP). */
	if (l->red) {
		double pr = red_p(s->cfg, l->pbytes[p]);

		if (pr > 0 && (pr >= 1 || rng_unit(&s->rng) < pr))
			mark_ce(s, f);
	}
	f->prio = p;
	f->next = NULL;
	if (l->qt[p])
		l->qt[p]->next = f;
	else
		l->qh[p] = f;
	l->qt[p] = f;
	q_account(s, l);
	l->qlen++;
	l->qbytes += f->len;
	l->pbytes[p] += f->len;
	q_note_peak(s, l);
	link_start(l, false);
}

static void host_service(struct host *h);

/*
 * A congested switch's ECN mark, as nftables "ip ecn set ce" does: ECT frames become CE; the
 * IPv4 header checksum is updated (the ICRC does not cover TOS).
 */
static void mark_ce(struct sim *s, struct frame *f)
{
	uint8_t *ip = f->data + RFW_ETH_HLEN;
	uint32_t sum = 0;

	if ((ip[1] & 3) == RFW_ECN_NOT_ECT || (ip[1] & 3) == RFW_ECN_CE)
		return;
	ip[1] |= RFW_ECN_CE;
	if (s->fabric)
		s->res->switch_ce_marked++;
	ip[10] = ip[11] = 0;
	for (int i = 0; i < RFW_IPV4_HLEN; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	rfw_put_be16(ip + 10, (uint16_t)~sum);
	s->res->frames_ce_marked++;
}

/* The last bit left the sender: impairments, then propagation to the other end. */
static void link_tx_done(struct link *l, struct frame *f)
{
	struct sim *s = l->sim;
	const struct rfw_sim_cfg *c = s->cfg;
	uint64_t arrive = s->now + l->delay_ns;
	bool lose = false;

	l->busy = false;
	l->nframes++;
	if (c->lose_frame && l->idx == 0 && l->nframes == c->lose_frame) {
		/* --lose-frame N: exactly the Nth frame host 0 sends is lost (recovery timing). */
		lose = true;
		s->res->lost_frame_ns = s->now + l->delay_ns;
	} else if (s->now < l->burst_until) {
		lose = true;
	} else if (c->burst_loss > 0 && rng_unit(&s->rng) < c->burst_loss) {
		/* The link is out for burst_len MTU-frame times: a flap is bounded in time, so a
		 * quiet link is not starved by one burst spread over many retries. */
		l->burst_until =
		    s->now +
		    (uint64_t)llround(c->burst_len * (c->mtu + FRAME_HDR + 40) * l->ns_per_byte);
		lose = true;
	} else if (c->loss > 0 && rng_unit(&s->rng) < c->loss) {
		lose = true;
	}
	if (lose) {
		s->res->frames_lost++;
		frame_put(s, f);
	} else {
		if (c->ce > 0 && rng_unit(&s->rng) < c->ce)
			mark_ce(s, f);
		if (c->corrupt > 0 && rng_unit(&s->rng) < c->corrupt) {
			/* Flip one bit somewhere after the Ethernet header. */
			uint32_t span = f->len - RFW_ETH_HLEN;
			uint32_t at = RFW_ETH_HLEN + (uint32_t)(rng_next(&s->rng) % span);

			f->data[at] ^= (uint8_t)(1u << (rng_next(&s->rng) & 7));
			s->res->frames_corrupted++;
		}
		if (c->reorder > 0 && rng_unit(&s->rng) < c->reorder) {
			/* Held back by 1..8 MTU-frame times: later frames overtake it. */
			uint64_t hold = 1 + rng_next(&s->rng) % 8;

			arrive +=
			    (uint64_t)llround(hold * (c->mtu + FRAME_HDR + 40) * l->ns_per_byte);
			s->res->frames_reordered++;
		}
		if (c->dup > 0 && rng_unit(&s->rng) < c->dup) {
			struct frame *d = frame_get(s);

			if (d) {
				d->len = f->len;
				memcpy(d->data, f->data, f->len);
				ev_push(s, arrive + 1, EV_ARRIVE, (uint32_t)l->idx, 0, d);
				s->res->frames_duplicated++;
			}
		}
		ev_push(s, arrive, EV_ARRIVE, (uint32_t)l->idx, 0, f);
	}
	link_start(l, true);
	if (l->from >= 0)
		host_service(&s->host[l->from]); /* the sender may send more */
}

/* ---- hosts: the seam to transport ---- */

/*
 * Frames for the firmware: from the simulator's pool while the egress link has room (a NIC
 * keeps at most TX_WINDOW frames queued at its port); none otherwise, and the firmware serves
 * the QP again once the link has sent one (link_tx_done -> host_service).
 */
static uint8_t *host_frame_alloc(void *ctx, uint32_t len)
{
	struct host *h = ctx;
	struct link *l = h->egress;
	struct frame *f;

	if (len > FRAME_MAX || l->qlen + (l->busy ? 1 : 0) >= TX_WINDOW)
		return NULL;
	f = frame_get(h->sim);
	return f != NULL ? f->data : NULL;
}

static void host_frame_send(void *ctx, uint8_t *data, uint32_t len)
{
	struct host *h = ctx;
	struct frame *f = (struct frame *)(void *)(data - offsetof(struct frame, data));

	f->len = len;
	link_enqueue(h->egress, f);
}

static const struct rfw_fw_host_ops host_ops = {.frame_alloc = host_frame_alloc,
                                                .frame_send = host_frame_send};

static void wl_poll(struct host *h);

/* One event at the firmware's next timer (pacer departure, transport timer). */
static void host_arm_timer(struct host *h)
{
	uint64_t d = rfw_fw_next_ns(h->fw);

	if (d == UINT64_MAX || d == h->timer_at)
		return;
	if (d < h->sim->now)
		d = h->sim->now;
	h->timer_at = d;
	h->timer_gen++;
	ev_push(h->sim, d, EV_TIMER, (uint32_t)h->idx, h->timer_gen, NULL);
}

/*
 * The firmware runs what is due (timers may complete WRs with errors), the workload reaps
 * completions and posts (posting rings the doorbell), then the firmware runs again while it
 * sent something, QPs are still ready (their quantum ran out) and the link has room.
 */
static void host_service(struct host *h)
{
	struct link *l = h->egress;

	/* A full link calls again when it sent a frame (link_tx_done): nothing could leave now. */
	if (l->qlen + (l->busy ? 1 : 0) >= TX_WINDOW) {
		wl_poll(h);
		return;
	}
	rfw_fw_run(h->fw, h->sim->now);
	wl_poll(h);
	while (rfw_fw_run(h->fw, h->sim->now) != 0 && rfw_fw_ready(h->fw) &&
	       l->qlen + (l->busy ? 1 : 0) < TX_WINDOW)
		;
	host_arm_timer(h);
}

static void host_rx(struct host *h, struct frame *f)
{
	struct sim *s = h->sim;
	struct rfw_frame_view v;
	struct rfw_ib_pkt pkt;

	if (rfw_frame_parse_eth(f->data, f->len, &v) != RFW_FRAME_ERR_OK ||
	    v.kind != RFW_FRAME_ROCEV2) {
		s->res->parse_drops++;
		return;
	}
	/* A NIC drops a frame whose ICRC does not match (IBA Annex A17.3.3). */
	if (!rfw_frame_icrc_ok(f->data, &v)) {
		s->res->icrc_drops++;
		return;
	}
	if (rfw_ib_parse(f->data + v.ib_off, v.ib_len, &pkt) != RFW_IB_ERR_OK) {
		s->res->parse_drops++;
		return;
	}
	s->res->frames_delivered++;
	if (s->fabric && !h->requester && pkt.op && (pkt.op->flags & RFW_OPF_PAYLOAD) &&
	    (pkt.op->flags & RFW_OPF_REQUEST)) {
		uint32_t qi = pkt.bth.dqpn - rfw_qp_num(h->qp[0]);

		if (qi < h->nqp) /* goodput over time: payload reaching the receiver per flow */
			s->wl[h->wl_first + qi].rx_payload += pkt.payload_len;
	}
	rfw_fw_rx(h->fw, &v, &pkt, s->now);
	host_service(h);
}

static void host_timer(struct host *h, uint32_t gen)
{
	if (gen != h->timer_gen)
		return; /* superseded */
	h->timer_at = UINT64_MAX;
	host_service(h); /* the firmware's wheel runs what is due */
}

/* ---- workload: messages with verifiable contents ---- */

/* The bytes of message @seq on QP @qp: a keyed stream, so any misplaced byte shows. */
static void pattern(const struct sim *s, uint32_t qp, uint64_t seq, uint8_t *buf, uint64_t len)
{
	uint64_t st = s->cfg->seed ^ ((uint64_t)qp << 48) ^ (seq * 0x9e3779b97f4a7c15ull);
	uint64_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = rng_next(&st);

		memcpy(buf + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = rng_next(&st);

		memcpy(buf + i, &v, (size_t)(len - i));
	}
}

static bool pattern_ok(const struct sim *s, uint32_t qp, uint64_t seq, const uint8_t *buf,
                       uint64_t len)
{
	uint64_t st = s->cfg->seed ^ ((uint64_t)qp << 48) ^ (seq * 0x9e3779b97f4a7c15ull);
	uint64_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = rng_next(&st);

		if (memcmp(buf + i, &v, 8) != 0)
			return false;
	}
	if (i < len) {
		uint64_t v = rng_next(&st);

		if (memcmp(buf + i, &v, (size_t)(len - i)) != 0)
			return false;
	}
	return true;
}

/* Each slot holds one message; atomics need 8 bytes whatever --size says. */
static uint64_t slot_size(const struct sim *s)
{
	return s->cfg->size < 8 ? 8 : s->cfg->size;
}

static uint8_t *slot(const struct sim *s, uint8_t *base, uint64_t seq)
{
	return base + (seq % s->cfg->depth) * slot_size(s);
}

static uint64_t msg_bytes(const struct sim *s, enum rfw_sim_op op)
{
	return op == RFW_SIM_ATOMIC ? 8 : s->cfg->size;
}

/* The operation of message @seq: fixed, or (--op mix, mixall) drawn from the seed. */
static enum rfw_sim_op op_for(const struct sim *s, const struct wl_qp *w, uint64_t seq)
{
	static const enum rfw_sim_op all[] = {RFW_SIM_WRITE,  RFW_SIM_READ,     RFW_SIM_SEND,
	                                      RFW_SIM_ATOMIC, RFW_SIM_SEND_IMM, RFW_SIM_WRITE_IMM};
	uint64_t st;

	if (s->cfg->op != RFW_SIM_MIX && s->cfg->op != RFW_SIM_MIX_ALL)
		return s->cfg->op;
	st = s->cfg->seed ^ ((uint64_t)w->i << 40) ^ (seq * 0xd1b54a32d192ed03ull);
	return all[rng_next(&st) % (s->cfg->op == RFW_SIM_MIX ? 4 : 6)];
}

/* The immediate data of message @seq: keyed like its bytes, so a stale one shows. */
static uint32_t imm_for(const struct sim *s, const struct wl_qp *w, uint64_t seq)
{
	uint64_t st = s->cfg->seed ^ ((uint64_t)w->i << 32) ^ (seq * 0x9e3779b97f4a7c15ull) ^ 1;

	return (uint32_t)rng_next(&st);
}

/* The completion opcode IBA gives each operation at the requester (IBA 11.4.2). */
static enum rfw_wc_opcode wc_op_for(enum rfw_sim_op op)
{
	switch (op) {
	case RFW_SIM_WRITE:
	case RFW_SIM_WRITE_IMM:
		return RFW_WC_RDMA_WRITE;
	case RFW_SIM_READ:
		return RFW_WC_RDMA_READ;
	case RFW_SIM_ATOMIC:
		return RFW_WC_FETCH_ADD;
	default:
		return RFW_WC_SEND;
	}
}

static void note_error(struct sim *s, const char *what, uint32_t qp, int st)
{
	if (s->res->first_error[0] == 0)
		snprintf(s->res->first_error, sizeof(s->res->first_error), "qp %u: %s (%s)", qp,
		         what, st >= 0 ? rfw_wc_status_str((enum rfw_wc_status)st) : "-");
}

/* Receive k lands in rbuf slot k % depth; the k-th SEND posted fills it. */
static int wl_post_recv(struct sim *s, struct wl_qp *w, uint64_t k)
{
	struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)slot(s, w->rbuf, k),
	                      .length = (uint32_t)s->cfg->size,
	                      .lkey = rfw_mr_lkey(w->rmr)};
	struct rfw_recv_wr wr = {.wr_id = k, .sg_list = &sge, .num_sge = 1};
	struct rfw_recv_wr *bad;

	return rfw_post_recv(w->bqp, &wr, &bad, s->now);
}

static void wl_post(struct sim *s, struct wl_qp *w)
{
	const struct rfw_sim_cfg *c = s->cfg;

	if (s->now < w->start_ns)
		return; /* --start-gap-us: not started yet (an EV_KICK starts it) */
	while (!w->dead && w->posted < w->quota && w->posted - w->completed < c->depth) {
		uint64_t seq = w->posted;
		enum rfw_sim_op op = op_for(s, w, seq);
		struct rfw_sge sge = {.addr = (uint64_t)(uintptr_t)slot(s, w->abuf, seq),
		                      .length = (uint32_t)c->size,
		                      .lkey = rfw_mr_lkey(w->amr)};
		struct rfw_send_wr wr = {
		    .wr_id = seq, .sg_list = &sge, .num_sge = 1, .send_flags = RFW_SEND_SIGNALED};
		struct rfw_send_wr *bad;

		w->op_of[seq % c->depth] = (uint8_t)op;
		switch (op) {
		case RFW_SIM_WRITE:
		case RFW_SIM_WRITE_IMM:
			pattern(s, w->i, seq, slot(s, w->abuf, seq), c->size);
			wr.opcode = RFW_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)slot(s, w->bbuf, seq);
			wr.wr.rdma.rkey = rfw_mr_rkey(w->bmr);
			if (op == RFW_SIM_WRITE)
				break;
			/* consumes a receive WQE at B, as a SEND does */
			wr.opcode = RFW_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = imm_for(s, w, seq);
			w->send_seq[w->sends_posted % c->depth] = seq;
			w->send_op[w->sends_posted % c->depth] = (uint8_t)op;
			w->sends_posted++;
			break;
		case RFW_SIM_READ:
			pattern(s, w->i, seq, slot(s, w->bbuf, seq), c->size);
			memset(slot(s, w->abuf, seq), 0, c->size);
			wr.opcode = RFW_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)slot(s, w->bbuf, seq);
			wr.wr.rdma.rkey = rfw_mr_rkey(w->bmr);
			break;
		case RFW_SIM_SEND:
		case RFW_SIM_SEND_IMM:
			pattern(s, w->i, seq, slot(s, w->abuf, seq), c->size);
			wr.opcode = op == RFW_SIM_SEND ? RFW_WR_SEND : RFW_WR_SEND_WITH_IMM;
			wr.imm_data = imm_for(s, w, seq);
			w->send_seq[w->sends_posted % c->depth] = seq;
			w->send_op[w->sends_posted % c->depth] = (uint8_t)op;
			w->sends_posted++;
			break;
		default:
			sge.length = 8;
			wr.opcode = RFW_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)w->counter;
			wr.wr.atomic.rkey = rfw_mr_rkey(w->cmr);
			wr.wr.atomic.compare_add = 1;
			w->aidx_of[seq % c->depth] = w->atomics_posted++;
			break;
		}
		if (rfw_post_send(w->aqp, &wr, &bad, s->now)) {
			note_error(s, "post_send failed", w->i, -1);
			w->dead = true;
			return;
		}
		w->posted++;
		s->res->messages_posted++;
	}
}

/* A requester completion: in order per QP, exactly once, with the right bytes. */
static void wl_send_done(struct sim *s, struct host *h, const struct rfw_wc *wc)
{
	struct wl_qp *w = &s->wl[h->wl_first + wc->qp_num - rfw_qp_num(h->qp[0])];
	const struct rfw_sim_cfg *c = s->cfg;
	uint64_t seq = wc->wr_id;
	enum rfw_sim_op op;
	bool ok = true;

	if (wc->status != RFW_WC_SUCCESS) {
		if (wc->status == RFW_WC_WR_FLUSH_ERR) {
			s->res->flushed_completions++;
		} else {
			s->res->error_completions++;
			note_error(s, "error completion", w->i, wc->status);
		}
		w->dead = true;
		return;
	}
	if (seq < w->completed) {
		s->res->duplicates_delivered++;
		return;
	}
	if (seq != w->completed) {
		s->res->corrupt++;
		note_error(s, "completion out of order", w->i, -1);
		w->completed = seq;
	}
	op = (enum rfw_sim_op)w->op_of[seq % c->depth];
	if (wc->opcode != wc_op_for(op)) {
		s->res->corrupt++;
		note_error(s, "completion with the wrong opcode", w->i, -1);
	}
	switch (op) {
	case RFW_SIM_WRITE:
	case RFW_SIM_WRITE_IMM:
		ok = pattern_ok(s, w->i, seq, slot(s, w->bbuf, seq), c->size);
		break;
	case RFW_SIM_READ:
		ok = pattern_ok(s, w->i, seq, slot(s, w->abuf, seq), c->size);
		break;
	case RFW_SIM_SEND:
	case RFW_SIM_SEND_IMM:
		ok = true; /* verified at the receiver */
		break;
	default: {
		uint64_t orig;

		/* FETCH_ADD 1, executed in order: the j-th atomic on this QP saw j. */
		memcpy(&orig, slot(s, w->abuf, seq), 8);
		ok = orig == w->aidx_of[seq % c->depth];
		w->atomics_completed++;
		break;
	}
	}
	if (ok) {
		if (op != RFW_SIM_SEND && op != RFW_SIM_SEND_IMM) {
			s->res->bytes_verified += msg_bytes(s, op);
			w->bytes_verified += msg_bytes(s, op);
		}
	} else {
		s->res->corrupt++;
		note_error(s, "data mismatch", w->i, -1);
	}
	w->completed = seq + 1;
	s->res->messages_completed++;
	s->last_completion_ns = s->now;
	if (w->completed == w->quota) {
		s->active_qps--;
		w->done_ns = s->now;
	}
}

/* Whether receive completion @wc is what the k-th receive-consuming message @op must give. */
static bool recv_wc_ok(const struct sim *s, const struct wl_qp *w, const struct rfw_wc *wc,
                       enum rfw_sim_op op, uint64_t seq)
{
	bool imm = op == RFW_SIM_SEND_IMM || op == RFW_SIM_WRITE_IMM;

	/* IBA 11.4.2: RECV_RDMA_WITH_IMM for a WRITE with immediate, its length the WRITE's. */
	if (wc->opcode != (op == RFW_SIM_WRITE_IMM ? RFW_WC_RECV_RDMA_WITH_IMM : RFW_WC_RECV) ||
	    !!(wc->wc_flags & RFW_WC_WITH_IMM) != imm ||
	    (imm && wc->imm_data != imm_for(s, w, seq)))
		return false;
	return wc->byte_len == s->cfg->size;
}

/*
 * A receive completion at B: the next SEND (or WRITE with immediate), in order, intact, once,
 * with its immediate data.
 */
static void wl_recv_done(struct sim *s, struct host *h, const struct rfw_wc *wc)
{
	struct wl_qp *w = &s->wl[h->wl_first + wc->qp_num - rfw_qp_num(h->qp[0])];
	uint64_t k = wc->wr_id, depth = s->cfg->depth;
	uint64_t seq = w->send_seq[k % depth];
	enum rfw_sim_op op = (enum rfw_sim_op)w->send_op[k % depth];
	const uint8_t *buf = slot(s, w->rbuf, k);
	bool data = op == RFW_SIM_SEND || op == RFW_SIM_SEND_IMM;

	if (wc->status != RFW_WC_SUCCESS) {
		if (wc->status != RFW_WC_WR_FLUSH_ERR) {
			s->res->error_completions++;
			note_error(s, "receive error completion", w->i, wc->status);
		}
		return;
	}
	if (k != w->recv_seq || k >= w->sends_posted || !recv_wc_ok(s, w, wc, op, seq) ||
	    (data && !pattern_ok(s, w->i, seq, buf, s->cfg->size))) {
		/* The bytes of the SEND before: that one was delivered twice. */
		if (data && k > 0 && k < w->sends_posted + 1 &&
		    pattern_ok(s, w->i, w->send_seq[(k - 1) % depth], buf, s->cfg->size) &&
		    s->cfg->size > 0)
			s->res->duplicates_delivered++;
		else
			s->res->corrupt++;
		note_error(s, "receive mismatch", w->i, -1);
	} else if (data) {
		s->res->bytes_verified += s->cfg->size;
		w->bytes_verified += s->cfg->size;
	}
	w->recv_seq++;
	wl_post_recv(s, w, k + depth);
}

static void wl_poll(struct host *h)
{
	struct sim *s = h->sim;
	struct rfw_wc wc[32];
	int n;

	if (h->requester) {
		while ((n = rfw_poll_cq_ts(h->scq, 32, wc, s->now)) > 0)
			for (int i = 0; i < n; i++)
				wl_send_done(s, h, &wc[i]);
		for (uint32_t i = 0; i < h->nqp; i++)
			wl_post(s, &s->wl[h->wl_first + i]);
	} else {
		while ((n = rfw_poll_cq(h->rcq, 32, wc)) > 0)
			for (int i = 0; i < n; i++)
				wl_recv_done(s, h, &wc[i]);
		while (rfw_poll_cq(h->scq, 32, wc) > 0)
			;
	}
}

/* At the end of the run: what each QP's completions alone cannot show. */
static void wl_check_end(struct sim *s, struct wl_qp *w)
{
	/* Atomics executed more often than completed: a duplicate was re-executed. */
	if (*w->counter > w->atomics_completed && !w->dead)
		s->res->duplicates_delivered += *w->counter - w->atomics_completed;
	/* Exactly once at B too: every receive-consuming message that completed at A. */
	if (w->rbuf && !w->dead && w->completed == w->quota) {
		wl_poll(w->hb);
		if (w->recv_seq != w->sends_posted) {
			s->res->corrupt++;
			note_error(s, "completed at the requester, never received", w->i, -1);
		}
	}
}

/* ---- configuration ---- */

void rfw_sim_cfg_default(struct rfw_sim_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->op = RFW_SIM_WRITE;
	c->size = 65536;
	c->messages = 100;
	c->qps = 1;
	c->depth = 4;
	c->mtu = 1024;
	c->rate_gbps = 100;
	c->rtt_us = 10;
	c->burst_len = 8;
	c->seed = 1;
	c->timeout = 14; /* perftest's default: 4.096 us * 2^14 = 67 ms */
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 12;
	c->max_rd_atomic = 16;
	c->ack_every = 64;
	c->max_unacked_psns = 1024;
	c->queue_bytes = 1u << 20;
	c->time_limit_ns = 60ull * 1000000000ull;
	c->pcap_point = RFW_SIM_PCAP_TX;
	c->peer_sr = -1;
	/* The paper's marking for its 40G runs (reference/dcqcn.md): Kmin 5 KB, Kmax 200 KB, 1 %.
	 */
	c->kmin_kb = 5;
	c->kmax_kb = 200;
	c->pmax = 0.01;
	c->duration_ms = 50;
	c->sample_us = 100;
}

/* A comma list of profile names into c->profile. */
static int parse_profiles(struct rfw_sim_cfg *c, const char *v)
{
	uint8_t l[RFW_SIM_MAX_FLOWS];
	uint32_t n = 0;
	const char *p = v;

	if (v == NULL || *v == 0)
		return -EINVAL;
	for (;;) {
		char name[64];
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int id;

		if (len == 0 || len >= sizeof(name) || n == RFW_SIM_MAX_FLOWS)
			return -EINVAL;
		memcpy(name, p, len);
		name[len] = 0;
		id = dcqcn_profile_lookup(name);
		if (id < 0)
			return -EINVAL;
		l[n++] = (uint8_t)id;
		if (e == NULL)
			break;
		p = e + 1;
	}
	memcpy(c->profile, l, n);
	c->nprofiles = n;
	return 0;
}

/* A double in [lo, hi] (whole string). */
static int parse_range(const char *v, double lo, double hi, double *out)
{
	char *end;
	double x;

	if (v == NULL || *v == 0)
		return -EINVAL;
	x = strtod(v, &end);
	if (*end || !(x >= lo && x <= hi))
		return -EINVAL;
	*out = x;
	return 0;
}

/* --rtt-us: one value (every flow) or a comma list (per flow, round robin). */
static int parse_rtts(struct rfw_sim_cfg *c, const char *v)
{
	double l[RFW_SIM_MAX_FLOWS];
	uint32_t n = 0;
	const char *p = v;

	if (v == NULL || *v == 0)
		return -EINVAL;
	for (;;) {
		char num[64];
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == 0 || len >= sizeof(num) || n == RFW_SIM_MAX_FLOWS)
			return -EINVAL;
		memcpy(num, p, len);
		num[len] = 0;
		if (parse_range(num, 0, 1e7 - 1e-9, &l[n]))
			return -EINVAL;
		n++;
		if (e == NULL)
			break;
		p = e + 1;
	}
	c->rtt_us = l[0];
	c->nrtt = n > 1 ? n : 0;
	memcpy(c->rtt_list, l, n * sizeof(l[0]));
	return 0;
}

static int parse_u64(const char *v, uint64_t *out, uint64_t max)
{
	char *end;
	unsigned long long x;

	if (v == NULL || *v == 0 || *v == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_frac(const char *v, double *out)
{
	char *end;
	double x;

	if (v == NULL || *v == 0)
		return -EINVAL;
	x = strtod(v, &end);
	if (*end || !(x >= 0 && x <= 1))
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_pos(const char *v, double *out)
{
	char *end;
	double x;

	if (v == NULL || *v == 0)
		return -EINVAL;
	x = strtod(v, &end);
	if (*end || !(x > 0 && x < 1e9))
		return -EINVAL;
	*out = x;
	return 0;
}

int rfw_sim_set(struct rfw_sim_cfg *c, const char *name, const char *v)
{
	uint64_t x;
	int rc;

#define U(key, field, max)                                                                         \
	if (strcmp(name, key) == 0) {                                                              \
		rc = parse_u64(v, &x, max);                                                        \
		if (rc == 0)                                                                       \
			c->field = x;                                                              \
		return rc;                                                                         \
	}
	if (strcmp(name, "op") == 0) {
		if (v && strcmp(v, "write") == 0)
			c->op = RFW_SIM_WRITE;
		else if (v && strcmp(v, "read") == 0)
			c->op = RFW_SIM_READ;
		else if (v && strcmp(v, "send") == 0)
			c->op = RFW_SIM_SEND;
		else if (v && strcmp(v, "atomic") == 0)
			c->op = RFW_SIM_ATOMIC;
		else if (v && strcmp(v, "mix") == 0)
			c->op = RFW_SIM_MIX;
		else if (v && strcmp(v, "send_imm") == 0)
			c->op = RFW_SIM_SEND_IMM;
		else if (v && strcmp(v, "write_imm") == 0)
			c->op = RFW_SIM_WRITE_IMM;
		else if (v && strcmp(v, "mixall") == 0)
			c->op = RFW_SIM_MIX_ALL;
		else
			return -EINVAL;
		return 0;
	}
	if (strcmp(name, "transport") == 0) {
		if (v && strcmp(v, "gbn") == 0)
			c->sr = false;
		else if (v && strcmp(v, "sr") == 0)
			c->sr = true;
		else
			return -EINVAL;
		return 0;
	}
	if (strcmp(name, "peer-transport") == 0) {
		if (v && strcmp(v, "gbn") == 0)
			c->peer_sr = 0;
		else if (v && strcmp(v, "sr") == 0)
			c->peer_sr = 1;
		else
			return -EINVAL;
		return 0;
	}
	if (strcmp(name, "skip-mode-check") == 0) {
		rc = parse_u64(v, &x, 1);
		if (rc == 0)
			c->skip_mode_check = x != 0;
		return rc;
	}
	if (strcmp(name, "rto-low-us") == 0)
		return parse_pos(v, &c->rto_low_us);
	if (strcmp(name, "rto-high-us") == 0)
		return parse_pos(v, &c->rto_high_us);
	if (strcmp(name, "pcap") == 0) {
		c->pcap = v;
		return 0;
	}
	if (strcmp(name, "loss") == 0)
		return parse_frac(v, &c->loss);
	if (strcmp(name, "reorder") == 0)
		return parse_frac(v, &c->reorder);
	if (strcmp(name, "dup") == 0)
		return parse_frac(v, &c->dup);
	if (strcmp(name, "corrupt") == 0)
		return parse_frac(v, &c->corrupt);
	if (strcmp(name, "ce") == 0)
		return parse_frac(v, &c->ce);
	if (strcmp(name, "burst-loss") == 0)
		return parse_frac(v, &c->burst_loss);
	if (strcmp(name, "rate-gbps") == 0)
		return parse_pos(v, &c->rate_gbps);
	if (strcmp(name, "rtt-us") == 0)
		return parse_rtts(c, v);
	if (strcmp(name, "profile") == 0 || strcmp(name, "profiles") == 0)
		return parse_profiles(c, v);
	if (strcmp(name, "cc-set") == 0) {
		c->cc_set = v; /* checked with the profiles, by rfw_cc_set_apply() */
		return 0;
	}
	if (strcmp(name, "kmin-kb") == 0)
		return parse_range(v, 0, 1e6, &c->kmin_kb);
	if (strcmp(name, "kmax-kb") == 0)
		return parse_range(v, 0, 1e6, &c->kmax_kb);
	if (strcmp(name, "pmax") == 0)
		return parse_frac(v, &c->pmax);
	if (strcmp(name, "duration-ms") == 0)
		return parse_range(v, 0.001, 1e5, &c->duration_ms);
	if (strcmp(name, "sample-us") == 0)
		return parse_range(v, 1, 1e6, &c->sample_us);
	if (strcmp(name, "start-gap-us") == 0)
		return parse_range(v, 0, 1e7, &c->start_gap_us);
	if (strcmp(name, "pcap-point") == 0) {
		static const char *const pts[] = {"tx", "sender", "receiver", "switch"};

		for (unsigned i = 0; v && i < 4; i++)
			if (strcmp(v, pts[i]) == 0) {
				c->pcap_point = (enum rfw_sim_pcap_point)i;
				return 0;
			}
		return -EINVAL;
	}
	if (strcmp(name, "csv") == 0 || strcmp(name, "plot") == 0) {
		/* The directory must exist; a quote would break the gnuplot script. */
		if (v == NULL || *v == 0 || strchr(v, '\'') || strlen(v) > 3000)
			return -EINVAL;
		if (name[0] == 'c')
			c->csv_dir = v;
		else
			c->plot_dir = v;
		return 0;
	}
	U("size", size, RFW_MAX_MSG_SIZE)
	U("messages", messages, 1ull << 40)
	U("qps", qps, MAX_QPS)
	U("flows", flows, RFW_SIM_MAX_FLOWS)
	U("incast", incast, RFW_SIM_MAX_FLOWS)
	U("depth", depth, 4096)
	U("mtu", mtu, 4096)
	U("start-psn", start_psn, RFW_PSN_MASK)
	U("seed", seed, UINT64_MAX)
	U("burst-len", burst_len, 1u << 20)
	U("timeout", timeout, 31)
	U("retry-cnt", retry_cnt, 7)
	U("rnr-retry", rnr_retry, 7)
	U("min-rnr-timer", min_rnr_timer, 31)
	U("max-rd-atomic", max_rd_atomic, RFW_MAX_RD_ATOMIC)
	U("ack-every", ack_every, 1u << 20)
	U("max-unacked-psns", max_unacked_psns, 1u << 22)
	U("queue-bytes", queue_bytes, 1u << 30)
	U("bdp-bytes", bdp_bytes, 1ull << 40)
	U("sr-window", sr_window, 65536)
	U("lose-frame", lose_frame, 1ull << 40)
	if (strcmp(name, "estats") == 0) {
		if (v == NULL || (strcmp(v, "0") && strcmp(v, "1")))
			return -EINVAL;
		c->estats = v[0] == '1';
		return 0;
	}
	if (strcmp(name, "estats-interval-ms") == 0) {
		char *e;
		double d = v ? strtod(v, &e) : 0;

		if (v == NULL || *e || !(d >= 1 && d <= 3600000))
			return -EINVAL;
		c->estats_interval_ms = d;
		return 0;
	}
	if (strcmp(name, "time-limit-ms") == 0) {
		rc = parse_u64(v, &x, 1ull << 40);
		if (rc == 0)
			c->time_limit_ns = x * 1000000ull;
		return rc;
	}
#undef U
	return -ENOENT;
}

int rfw_sim_load_ini(struct rfw_sim_cfg *c, const char *path, int *line)
{
	static char strs[16][512]; /* string values (pcap) outlive the file */
	static int nstr;
	char buf[1024];
	FILE *f = fopen(path, "r");
	int ln = 0;

	if (f == NULL)
		return -errno;
	while (fgets(buf, sizeof(buf), f)) {
		char *p = buf, *eq, *k, *v, *e;
		int rc;

		ln++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == ';' || *p == '[' || *p == '\n' || *p == 0)
			continue;
		eq = strchr(p, '=');
		if (eq == NULL) {
			*line = ln;
			fclose(f);
			return -EINVAL;
		}
		*eq = 0;
		k = p;
		v = eq + 1;
		for (e = eq - 1; e >= k && (*e == ' ' || *e == '\t'); e--)
			*e = 0;
		while (*v == ' ' || *v == '\t')
			v++;
		for (e = v + strlen(v) - 1; e >= v && (*e == '\n' || *e == '\r' || *e == ' '); e--)
			*e = 0;
		for (char *u = k; *u; u++)
			if (*u == '_')
				*u = '-';
		if (strcmp(k, "pcap") == 0 || strcmp(k, "csv") == 0 || strcmp(k, "plot") == 0) {
			if (nstr == 16) {
				*line = ln;
				fclose(f);
				return -ENOMEM;
			}
			snprintf(strs[nstr], sizeof(strs[nstr]), "%s", v);
			v = strs[nstr++];
		}
		rc = rfw_sim_set(c, k, v);
		if (rc) {
			*line = ln;
			fclose(f);
			return rc;
		}
	}
	fclose(f);
	return 0;
}

const char *rfw_sim_validate(const struct rfw_sim_cfg *c)
{
	/*
	 * The out-of-band connection exchange carries each end's transport mode and refuses a
	 * mismatch (docs/transport-sr.md "Mode mismatch"); --skip-mode-check connects anyway so
	 * the transport's own first-packet check can be seen.
	 */
	if (c->peer_sr >= 0 && (c->peer_sr != 0) != c->sr && !c->skip_mode_check)
		return c->sr
		           ? "transport mode mismatch: this end is sr, the peer is gbn; both ends "
		             "must be sr (refused at QP setup)"
		           : "transport mode mismatch: this end is gbn, the peer is sr; both ends "
		             "must be sr (refused at QP setup)";
	if (c->sr_window && (c->sr_window < 64 || (c->sr_window & (c->sr_window - 1))))
		return "--sr-window must be a power of two, 64 .. 65536";
	if (c->rto_low_us && c->rto_high_us && c->rto_high_us < c->rto_low_us)
		return "--rto-high-us must not be below --rto-low-us";
	if (c->mtu != 256 && c->mtu != 512 && c->mtu != 1024 && c->mtu != 2048 && c->mtu != 4096)
		return "--mtu must be 256, 512, 1024, 2048 or 4096";
	if (c->qps == 0 || c->depth == 0 || c->messages == 0)
		return "--qps, --depth and --messages must be at least 1";
	if (c->size * c->depth > (1ull << 31))
		return "--size x --depth must stay within 2 GiB of simulated memory per QP side";
	if (c->size > 0xffffffffull)
		return "--size too large";
	if (c->queue_bytes < FRAME_MAX)
		return "--queue-bytes must hold at least one frame";
	if (c->flows && c->incast)
		return "--flows and --incast are two different topologies: give one";
	if (!c->flows && !c->incast) {
		if (c->nprofiles)
			return "--profile/--profiles need the switch topology (--flows or "
			       "--incast)";
		if (c->nrtt)
			return "--rtt-us with a list needs the switch topology (--flows or "
			       "--incast)";
		if (c->pcap_point == RFW_SIM_PCAP_SWITCH)
			return "--pcap-point switch needs the switch topology (--flows or "
			       "--incast)";
		if (c->csv_dir || c->plot_dir)
			return "--csv/--plot need the switch topology (--flows or --incast)";
		if (c->cc_set)
			return "--cc-set needs the switch topology (--flows or --incast): the "
			       "point-to-point link runs no rate machine";
		return NULL;
	}
	if ((c->flows ? c->flows : c->incast) % c->qps)
		return "--qps: QPs per sender host must divide --flows/--incast";
	if (!(c->kmin_kb < c->kmax_kb))
		return "--kmin-kb must be below --kmax-kb";
	if (c->kmax_kb * 1000.0 > (double)c->queue_bytes)
		return "--kmax-kb must not exceed --queue-bytes";
	return NULL;
}

/* ---- run ---- */

static uint32_t host_profile(const struct rfw_sim_cfg *c, uint32_t h);
static uint32_t flow_profile(const struct rfw_sim_cfg *c, uint32_t i);

/*
 * Host @i's NIC. The switch topology runs DCQCN: a sender with its flows' profile (rp_scope
 * port or dst: its QPs share one rate, as the firmware does for any host); the receiver's NP of
 * QP q with flow q's profile. The two-host model has no congestion control (the transport's
 * built-in NP still answers CE). Strict pacing (no burst) and an exact timer wheel: the
 * simulator wakes the firmware exactly when it asks (rfw_fw_next_ns).
 */
static struct rfw_fw *host_fw(struct sim *s, int i, bool requester, const struct rfw_dev_attr *da)
{
	struct rfw_fw_conf fc = {.dev_attr = *da,
	                         .pacer_burst_set = true,
	                         .wheel_shift_set = true,
	                         .frame_max = FRAME_MAX};

	if (s->fabric) {
		fc.cc = RFW_FW_CC_DCQCN;
		fc.dcqcn = &s->prof[requester ? host_profile(s->cfg, (uint32_t)i)
		                              : flow_profile(s->cfg, 0)];
	}
	return rfw_fw_create(&fc, &host_ops, &s->host[i]);
}

/* 02:00:00:00:00:0(i+1), 10.0.0.(i+1); QP q of a host talks to its peer host. */
static int host_attach(struct sim *s, struct host *h, uint32_t q)
{
	uint32_t peer = !s->fabric     ? (uint32_t)(1 - h->idx)
	                : h->requester ? s->rx_host
	                               : q / s->cfg->qps;
	struct rfw_fw_path p = {.src_mac = {2, 0, 0, 0, 0, (uint8_t)(1 + h->idx)},
	                        .dst_mac = {2, 0, 0, 0, 0, (uint8_t)(1 + peer)}};

	rfw_ip4_to_mapped(p.src_ip, 0x0a000001u + (uint32_t)h->idx);
	rfw_ip4_to_mapped(p.dst_ip, 0x0a000001u + peer);
	if (s->fabric) {
		uint32_t flow = h->requester ? (uint32_t)h->idx * s->cfg->qps + q : q;

		/* Both ends of a flow run its profile; a CNP goes out at its np_cnp_dscp. */
		p.dcqcn = &s->prof[flow_profile(s->cfg, flow)];
		p.cnp_dscp = p.dcqcn->cnp_dscp;
		p.cnp_pcp = p.dcqcn->cnp_prio;
	}
	return rfw_fw_qp_attach(h->fw, h->qp[q], &p);
}

static int setup_host(struct sim *s, int i, uint32_t nqp, bool requester)
{
	struct host *h = &s->host[i];
	struct rfw_dev_attr da = {.ack_every = s->cfg->ack_every,
	                          .max_unacked_psns = s->cfg->max_unacked_psns,
	                          .np_min_time_between_cnps_ns = 4000,
	                          .max_qp = MAX_QPS,
	                          .max_mr = 4 * MAX_QPS,
	                          .sr_window = s->cfg->sr_window,
	                          .sr_rto_low_ns = (uint64_t)llround(s->cfg->rto_low_us * 1e3),
	                          .sr_rto_high_ns = (uint64_t)llround(s->cfg->rto_high_us * 1e3),
	                          .sr_bdp_bytes = s->cfg->bdp_bytes,
	                          .link_gbps = (uint32_t)llround(s->cfg->rate_gbps),
	                          .base_rtt_ns = (uint64_t)llround(s->cfg->rtt_us * 1e3),
	                          .estats = s->cfg->estats,
	                          .estats_interval_ns =
	                              (uint64_t)llround(s->cfg->estats_interval_ms * 1e6)};
	struct rfw_qp_init_attr qa = {0};

	h->sim = s;
	h->idx = i;
	h->egress = &s->link[i];
	h->timer_at = UINT64_MAX;
	h->requester = requester;
	h->fw = host_fw(s, i, requester, &da);
	if (h->fw == NULL)
		return -ENOMEM;
	h->dev = rfw_fw_dev(h->fw);
	h->pd = rfw_alloc_pd(h->dev);
	h->scq = rfw_create_cq(h->dev, nqp * s->cfg->depth + 64);
	h->rcq = rfw_create_cq(h->dev, nqp * s->cfg->depth + 64);
	if (!h->pd || !h->scq || !h->rcq)
		return -ENOMEM;
	qa.send_cq = h->scq;
	qa.recv_cq = h->rcq;
	qa.cap.max_send_wr = s->cfg->depth;
	qa.cap.max_recv_wr = s->cfg->depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	for (uint32_t q = 0; q < nqp; q++) {
		h->qp[q] = rfw_create_qp(h->pd, &qa);
		if (h->qp[q] == NULL)
			return -ENOMEM;
		h->nqp = q + 1;
		if (host_attach(s, h, q) != 0)
			return -EINVAL;
	}
	return 0;
}

/* QP @qp of host @me to QP @peer of host @to; the path's addresses are the hosts'. */
static int connect_qp(struct sim *s, struct rfw_qp *qp, struct rfw_qp *peer, bool sr,
                      const struct host *me, const struct host *to)
{
	const struct rfw_sim_cfg *c = s->cfg;
	struct rfw_qp_attr a = {0};
	enum rfw_mtu m = RFW_MTU_256;
	int rc;

	while (rfw_mtu_to_bytes(m) < c->mtu)
		m++;
	a.qp_state = RFW_QPS_INIT;
	a.qp_access_flags =
	    RFW_ACCESS_REMOTE_WRITE | RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC;
	a.transport_mode = sr ? RFW_TRANSPORT_SR : RFW_TRANSPORT_GBN;
	rc = rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS | RFW_QP_TRANSPORT_MODE);
	a.qp_state = RFW_QPS_RTR;
	/* recv.c checks packets against both; the hosts' addresses are host_attach()'s */
	rfw_ip4_to_mapped(a.ah_attr.sgid, 0x0a000001u + (uint32_t)me->idx);
	rfw_ip4_to_mapped(a.ah_attr.dgid, 0x0a000001u + (uint32_t)to->idx);
	a.path_mtu = m;
	a.dest_qp_num = rfw_qp_num(peer);
	a.rq_psn = c->start_psn;
	a.max_dest_rd_atomic = c->max_rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	if (!rc)
		rc = rfw_modify_qp(qp, &a,
		                   RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
		                       RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC |
		                       RFW_QP_MIN_RNR_TIMER);
	a.qp_state = RFW_QPS_RTS;
	a.sq_psn = c->start_psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->max_rd_atomic;
	if (!rc)
		rc =
		    rfw_modify_qp(qp, &a,
		                  RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
		                      RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
	return rc;
}

static void teardown(struct sim *s)
{
	uint32_t nwl = s->fabric ? s->nflows : s->cfg->qps;

	if (s->wl)
		for (uint32_t i = 0; i < nwl; i++) {
			struct wl_qp *w = &s->wl[i];

			if (w->amr)
				rfw_dereg_mr(w->amr);
			if (w->bmr)
				rfw_dereg_mr(w->bmr);
			if (w->cmr)
				rfw_dereg_mr(w->cmr);
			if (w->rmr)
				rfw_dereg_mr(w->rmr);
			free(w->abuf);
			free(w->bbuf);
			free(w->rbuf);
			free(w->counter);
			free(w->op_of);
			free(w->aidx_of);
			free(w->send_seq);
			free(w->send_op);
		}
	free(s->wl);
	for (uint32_t i = 0; s->host && i < s->nhosts; i++) {
		struct host *h = &s->host[i];

		for (uint32_t q = 0; q < h->nqp || (q < MAX_QPS && h->qp[q]); q++) {
			if (h->qp[q] == NULL)
				continue;
			rfw_fw_qp_detach(h->fw, h->qp[q]);
			rfw_destroy_qp(h->qp[q]);
		}
		if (h->scq)
			rfw_destroy_cq(h->scq);
		if (h->rcq)
			rfw_destroy_cq(h->rcq);
		if (h->pd)
			rfw_dealloc_pd(h->pd);
		rfw_fw_destroy(h->fw);
	}
	free(s->host);
	free(s->link);
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->all_chunks[i]);
	free(s->all_chunks);
	free(s->heap);
	free(s->q_hist);
	free(s->ts_rate);
	free(s->ts_rx);
	free(s->ts_ver);
	free(s->ts_cnp);
	free(s->ts_q);
	free(s->ts_qmax);
	free(s->ts_t);
	if (s->dumper)
		pcap_dump_close(s->dumper);
	if (s->pcap)
		pcap_close(s->pcap);
}

/* Base RTT of sender host @h: --rtt-us's list round robin, or the one value. */
static double host_rtt_us(const struct rfw_sim_cfg *c, uint32_t h)
{
	return c->nrtt ? c->rtt_list[h % c->nrtt] : c->rtt_us;
}

static double flow_rtt_us(const struct rfw_sim_cfg *c, uint32_t i)
{
	return host_rtt_us(c, i / c->qps);
}

/* Profile and RTT belong to a sender host (its NIC); its --qps QPs all carry them. */
static uint32_t host_profile(const struct rfw_sim_cfg *c, uint32_t h)
{
	return c->nprofiles ? c->profile[h % c->nprofiles] : DCQCN_PROFILE_UNIFIED;
}

static uint32_t flow_profile(const struct rfw_sim_cfg *c, uint32_t i)
{
	return host_profile(c, i / c->qps);
}

/* Flow @i: QP i % qps of sender host i / qps, and the receiver's QP i. */
static struct host *flow_host(struct sim *s, uint32_t i)
{
	return &s->host[i / s->cfg->qps];
}
static struct rfw_qp *flow_qp(struct sim *s, uint32_t i)
{
	return s->host[i / s->cfg->qps].qp[i % s->cfg->qps];
}

/* CNPs flow @i's sender QP received (the transport counts them; its rate may be shared). */
static uint64_t flow_cnps(struct sim *s, uint32_t i)
{
	uint64_t t[RFW_CNT__COUNT];

	rfw_qp_counters(flow_qp(s, i), t);
	return t[RFW_CNT_rp_cnp_handled];
}

/* Most time-series entries per array (rows x flows) before the series is thinned. */
#define TS_MAX_ENTRIES (1u << 22)

/*
 * Keep memory bounded on long runs (an incast that takes seconds, a 1 us --sample-us): drop
 * every other row and double the interval. The per-flow columns are cumulative or
 * instantaneous, so the kept rows stay exact; the queue peak keeps the max of the pair.
 */
static void thin_samples(struct sim *s)
{
	uint32_t n = s->nflows, k = 0;

	for (uint32_t j = 0; j < s->nsamp; j += 2, k++) {
		uint64_t qm = s->ts_qmax[j];

		if (j > 0 && s->ts_qmax[j - 1] > qm)
			qm = s->ts_qmax[j - 1];
		memmove(&s->ts_rate[(size_t)k * n], &s->ts_rate[(size_t)j * n], n * sizeof(double));
		memmove(&s->ts_rx[(size_t)k * n], &s->ts_rx[(size_t)j * n], n * sizeof(uint64_t));
		memmove(&s->ts_ver[(size_t)k * n], &s->ts_ver[(size_t)j * n], n * sizeof(uint64_t));
		memmove(&s->ts_cnp[(size_t)k * n], &s->ts_cnp[(size_t)j * n], n * sizeof(uint64_t));
		s->ts_t[k] = s->ts_t[j];
		s->ts_q[k] = s->ts_q[j];
		s->ts_qmax[k] = qm;
	}
	s->nsamp = k;
	s->sample_ns *= 2;
}

/* One row of the time series: every flow's rate, delivered and verified bytes, CNPs; queue. */
static void take_sample(struct sim *s)
{
	uint32_t n = s->nflows, k;

	if ((uint64_t)(s->nsamp + 1) * n > TS_MAX_ENTRIES && s->nsamp > 2)
		thin_samples(s);
	k = s->nsamp;

	if (k == s->capsamp) {
		uint32_t nc = s->capsamp ? 2 * s->capsamp : 1024;
		double *r = realloc(s->ts_rate, (size_t)nc * n * sizeof(*r));
		uint64_t *x;

		if (r)
			s->ts_rate = r;
#define GROW(arr, m)                                                                               \
	x = realloc(s->arr, (size_t)nc * (m) * sizeof(*x));                                        \
	if (x)                                                                                     \
		s->arr = x;                                                                        \
	else                                                                                       \
		r = NULL;
		GROW(ts_rx, n)
		GROW(ts_ver, n)
		GROW(ts_cnp, n)
		GROW(ts_q, 1)
		GROW(ts_qmax, 1)
		GROW(ts_t, 1)
#undef GROW
		if (r == NULL) {
			s->oom = 1;
			return;
		}
		s->capsamp = nc;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t kbps = rfw_fw_qp_rate_kbps(flow_host(s, i)->fw, flow_qp(s, i), s->now);

		s->ts_rate[(size_t)k * n + i] = (double)kbps / 1e6;
		s->ts_rx[(size_t)k * n + i] = s->wl[i].rx_payload;
		s->ts_ver[(size_t)k * n + i] = s->wl[i].bytes_verified;
		s->ts_cnp[(size_t)k * n + i] = flow_cnps(s, i);
	}
	s->ts_t[k] = s->now;
	s->ts_q[k] = s->link[s->bn_link].qbytes;
	s->ts_qmax[k] = s->q_max_sample;
	s->q_max_sample = s->link[s->bn_link].qbytes;
	s->nsamp++;
}

static double jain(const double *x, uint32_t n)
{
	double sum = 0, sq = 0;

	for (uint32_t i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq > 0 ? sum * sum / ((double)n * sq) : 0;
}

/* Window of the convergence criterion: Jain's index of the flows' goodput over this much. */
#define CONV_WINDOW_NS 1000000ull
#define CONV_JAIN      0.95

/* Fill the switch topology's results from the flows' state and the time series. */
/*
 * Convergence: from the last flow's start (@last_start), the time in ms after which Jain's
 * index of the flows' goodput over every 1 ms window stays >= 0.95 to the end (backlogged
 * --flows only); -1 if never.
 */
static double convergence_ms(const struct sim *s, uint64_t last_start)
{
	uint32_t n = s->nflows, last = s->nsamp - 1, wk;
	uint64_t conv_at = UINT64_MAX;
	double x[RFW_SIM_MAX_FLOWS];

	if (s->sample_ns == 0)
		return -1;
	wk = (uint32_t)((CONV_WINDOW_NS + s->sample_ns - 1) / s->sample_ns);
	for (uint32_t k = wk; k <= last; k++) {
		if (s->ts_t[k - wk] < last_start)
			continue;
		for (uint32_t i = 0; i < n; i++)
			x[i] = (double)(s->ts_rx[(size_t)k * n + i] -
			                s->ts_rx[(size_t)(k - wk) * n + i]);
		if (jain(x, n) < CONV_JAIN)
			conv_at = UINT64_MAX;
		else if (conv_at == UINT64_MAX)
			conv_at = s->ts_t[k];
	}
	return conv_at != UINT64_MAX ? (double)(conv_at - last_start) / 1e6 : -1;
}

/* The bottleneck queue, time weighted over the whole run: mean, peak, p99. */
static void queue_results(const struct sim *s, struct rfw_sim_result *res)
{
	uint64_t tot = 0, acc = 0;

	for (uint32_t b = 0; b < s->q_nbins; b++)
		tot += s->q_hist[b];
	res->queue_mean_kb = s->q_last_ns ? s->q_integral / (double)s->q_last_ns / 1000.0 : 0;
	res->queue_peak_kb = (double)s->q_peak / 1000.0;
	for (uint32_t b = 0; b < s->q_nbins && tot; b++) {
		acc += s->q_hist[b];
		if (acc * 100 >= tot * 99) {
			/* The bin's upper edge (p99 is known to QHIST_BIN bytes). */
			res->queue_p99_kb = (double)((uint64_t)(b + 1) * QHIST_BIN) / 1000.0;
			break;
		}
	}
}

static void fabric_results(struct sim *s, struct rfw_sim_result *res)
{
	const struct rfw_sim_cfg *c = s->cfg;
	uint32_t n = s->nflows, half = 0, last = s->nsamp - 1;
	uint64_t end = s->ts_t[last], last_start = 0;
	double x[RFW_SIM_MAX_FLOWS];

	res->nflows = n;
	/* The second half of the run: from the first sample at or after its middle. */
	while (half < last && s->ts_t[half] * 2 < end)
		half++;
	for (uint32_t i = 0; i < n; i++) {
		struct rfw_sim_flow *f = &res->flow[i];
		struct wl_qp *w = &s->wl[i];
		const struct host *rx = &s->host[s->rx_host];
		const struct dcqcn_np *np = rfw_fw_qp_np(rx->fw, rx->qp[i]);
		const struct cc_flow *fl = rfw_fw_qp_flow(flow_host(s, i)->fw, flow_qp(s, i));
		uint64_t stop = c->incast && w->done_ns ? w->done_ns : end;
		uint64_t v0 = s->ts_ver[(size_t)half * n + i], v1 = s->ts_ver[(size_t)last * n + i];

		f->profile = flow_profile(c, i);
		f->rtt_us = flow_rtt_us(c, i);
		f->start_ns = w->start_ns;
		f->bytes_verified = w->bytes_verified;
		f->messages_completed = w->completed;
		f->completion_ns = c->incast ? w->done_ns : 0;
		f->goodput_gbps = stop > w->start_ns ? (double)w->bytes_verified * 8.0 /
		                                           (double)(stop - w->start_ns)
		                                     : 0;
		f->goodput_second_half_gbps =
		    end > s->ts_t[half] ? (double)(v1 - v0) * 8.0 / (double)(end - s->ts_t[half])
		                        : 0;
		f->final_rate_gbps = s->ts_rate[(size_t)last * n + i];
		f->cnps_received = flow_cnps(s, i);
		f->rate_cuts = fl != NULL ? fl->u.dcqcn.cnt[DCQCN_RP_CNT_rp_rate_cuts] : 0;
		f->cnps_sent = np != NULL ? np->cnt[DCQCN_NP_CNT_np_cnp_sent] : 0;
		f->ce_marked_received =
		    np != NULL ? np->cnt[DCQCN_NP_CNT_np_ecn_marked_roce_packets] : 0;
		res->cnps_sent += f->cnps_sent;
		x[i] = f->goodput_second_half_gbps;
		if (w->start_ns > last_start)
			last_start = w->start_ns;
	}
	res->jain_index = jain(x, n);
	res->convergence_time_ms = c->incast ? -1 : convergence_ms(s, last_start);
	queue_results(s, res);
}

/* The time series as CSV (units in the column names) into @dir. 0 or -errno. */
static int write_csv(const struct sim *s, const char *dir)
{
	char path[4096];
	uint32_t n = s->nflows;
	FILE *f;

	snprintf(path, sizeof(path), "%s/flows.csv", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "time_us");
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, ",flow%u_rate_gbps,flow%u_goodput_gbps,flow%u_cnps", i, i, i);
	fprintf(f, "\n");
	for (uint32_t k = 0; k < s->nsamp; k++) {
		fprintf(f, "%.3f", (double)s->ts_t[k] / 1e3);
		for (uint32_t i = 0; i < n; i++) {
			size_t j = (size_t)k * n + i;
			/* goodput over the interval that ends at this sample */
			double g = k ? (double)(s->ts_rx[j] - s->ts_rx[j - n]) * 8.0 /
			                   (double)(s->ts_t[k] - s->ts_t[k - 1])
			             : 0;

			fprintf(f, ",%.4f,%.4f,%llu", s->ts_rate[j], g,
			        (unsigned long long)s->ts_cnp[j]);
		}
		fprintf(f, "\n");
	}
	if (fclose(f))
		return -EIO;
	snprintf(path, sizeof(path), "%s/queue.csv", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "time_us,queue_kb,queue_max_kb\n");
	for (uint32_t k = 0; k < s->nsamp; k++)
		fprintf(f, "%.3f,%.3f,%.3f\n", (double)s->ts_t[k] / 1e3, (double)s->ts_q[k] / 1e3,
		        (double)s->ts_qmax[k] / 1e3);
	return fclose(f) ? -EIO : 0;
}

/* sim.png in @dir from the CSVs there: rate and goodput per flow over time, then the queue. */
static int write_plot(const struct sim *s, const char *dir)
{
	char path[4096];
	FILE *g;
	int rc;

	snprintf(path, sizeof(path), "%s/sim.gp", dir);
	g = fopen(path, "w");
	if (g == NULL)
		return -errno;
	fprintf(g,
	        "set terminal pngcairo size 1200,900\n"
	        "set output '%s/sim.png'\n"
	        "set datafile separator ','\n"
	        "set key outside right\n"
	        "set multiplot layout 3,1\n"
	        "set ylabel 'DCQCN rate (Gb/s)'\n"
	        "plot for [i=0:%u] '%s/flows.csv' using 1:(column(2+3*i)) with lines "
	        "title sprintf('flow %%d', i)\n"
	        "set ylabel 'goodput (Gb/s)'\n"
	        "plot for [i=0:%u] '%s/flows.csv' using 1:(column(3+3*i)) with lines "
	        "title sprintf('flow %%d', i)\n"
	        "set xlabel 'time (us)'\n"
	        "set ylabel 'queue (KB)'\n"
	        "plot '%s/queue.csv' using 1:3 with lines title 'peak per sample', "
	        "%g title 'Kmin' dt 2, %g title 'Kmax' dt 2\n"
	        "unset multiplot\n",
	        dir, s->nflows - 1, dir, s->nflows - 1, dir, dir, s->cfg->kmin_kb, s->cfg->kmax_kb);
	if (fclose(g))
		return -EIO;
	/* gnuplot from Debian (tools/install-deps.sh: gnuplot-nox); dir has no quote (validated) */
	snprintf(path, sizeof(path), "gnuplot '%s/sim.gp' </dev/null", dir);
	rc = system(path);
	return rc == 0 ? 0 : -EIO;
}

/* Build the switch topology's links and hosts (senders 0..n-1, receiver n, links below). */
static int setup_fabric(struct sim *s)
{
	const struct rfw_sim_cfg *c = s->cfg;
	uint32_t n = s->nflows, ns = s->rx_host, nh = ns + 1, k = c->qps;
	uint32_t line_mbps = (uint32_t)llround(c->rate_gbps * 1000.0);
	char msg[160];
	int rc;

	/* Each profile used, at the port's line rate (cc/dcqcn.h). */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = flow_profile(c, i);
		struct dcqcn_params prm;

		if (s->prof[p].line_kbps)
			continue;
		if (dcqcn_params_init(&prm, (enum dcqcn_profile)p) ||
		    rfw_cc_set_apply(&prm, NULL, c->cc_set, msg, sizeof(msg)) ||
		    dcqcn_prof_config(&s->prof[p], &prm, line_mbps, msg, sizeof(msg))) {
			fprintf(stderr, "rocefw-sim: profile %s: %s\n",
			        dcqcn_profile_name((enum dcqcn_profile)p), msg);
			return -EINVAL;
		}
	}
	/*
	 * Links 0..ns: host i -> switch; links nh + i: switch port -> host i. The propagation delay
	 * of a sender's base RTT sits on its two links; the receiver's are 0, so the flows share
	 * the bottleneck port (nh + ns) and differ only in their own RTT.
	 */
	for (uint32_t i = 0; i < 2 * nh; i++) {
		struct link *l = &s->link[i];
		uint32_t hi = i < nh ? i : i - nh;

		l->from = i < nh ? (int)i : -1;
		l->to = i < nh ? -1 : (int)hi;
		l->red = i >= nh && c->pmax > 0;
		l->delay_ns = hi == s->rx_host ? 0 : (uint64_t)llround(host_rtt_us(c, hi) * 500.0);
	}
	for (uint32_t i = 0; i < ns; i++) {
		rc = setup_host(s, (int)i, k, true);
		if (rc)
			return rc;
		s->host[i].wl_first = i * k;
	}
	rc = setup_host(s, (int)s->rx_host, n, false);
	if (rc)
		return rc;
	s->q_nbins = c->queue_bytes / QHIST_BIN + 2;
	s->q_hist = calloc(s->q_nbins, sizeof(*s->q_hist));
	return s->q_hist ? 0 : -ENOMEM;
}

/* The run's links and hosts (and the capture); 0 or -errno. */
static int sim_init(struct sim *s, const struct rfw_sim_cfg *cfg, struct rfw_sim_result *res)
{
	int rc = 0;

	s->cfg = cfg;
	s->res = res;
	s->rng = cfg->seed;
	s->fabric = cfg->flows || cfg->incast;
	s->nflows = cfg->flows ? cfg->flows : cfg->incast;
	s->rx_host = s->fabric ? s->nflows / cfg->qps : 1;
	s->nhosts = s->rx_host + 1;
	s->nlinks = s->fabric ? 2 * s->nhosts : 2;
	s->bn_link = s->nhosts + s->rx_host;
	s->end_ns = cfg->time_limit_ns;
	if (cfg->flows && cfg->duration_ms * 1e6 < (double)s->end_ns)
		s->end_ns = (uint64_t)llround(cfg->duration_ms * 1e6);
	s->sample_ns = (uint64_t)llround(cfg->sample_us * 1000.0);
	s->host = calloc(s->nhosts, sizeof(*s->host));
	s->link = calloc(s->nlinks, sizeof(*s->link));
	if (s->host == NULL || s->link == NULL)
		rc = -ENOMEM;
	for (uint32_t i = 0; !rc && i < s->nlinks; i++) {
		struct link *l = &s->link[i];

		l->sim = s;
		l->idx = (int)i;
		l->from = (int)i;
		l->to = !i;
		l->ns_per_byte = 8.0 / cfg->rate_gbps;
		l->delay_ns = (uint64_t)llround(cfg->rtt_us * 500.0);
		l->qcap = cfg->queue_bytes / 64 + 1;
	}
	if (!rc && s->fabric) {
		rc = setup_fabric(s);
	} else if (!rc) {
		rc = setup_host(s, 0, cfg->qps, true);
		if (!rc)
			rc = setup_host(s, 1, cfg->qps, false);
	}
	if (!rc && cfg->pcap) {
		s->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
		                                               PCAP_TSTAMP_PRECISION_NANO);
		s->dumper = s->pcap ? pcap_dump_open(s->pcap, cfg->pcap) : NULL;
		if (s->dumper == NULL)
			rc = -EIO;
	}
	return rc;
}

/* Workload @q: its QP pair connected, buffers and MRs, receives posted; 0 or -errno. */
static int wl_setup(struct sim *s, uint32_t q)
{
	const struct rfw_sim_cfg *cfg = s->cfg;
	const uint64_t ssz = cfg->size < 8 ? 8 : cfg->size;
	struct wl_qp *w = &s->wl[q];
	bool sends =
	    cfg->op != RFW_SIM_WRITE && cfg->op != RFW_SIM_READ && cfg->op != RFW_SIM_ATOMIC;
	bool rdma =
	    cfg->op != RFW_SIM_SEND && cfg->op != RFW_SIM_SEND_IMM && cfg->op != RFW_SIM_ATOMIC;

	w->i = q;
	w->ha = s->fabric ? &s->host[q / cfg->qps] : &s->host[0];
	w->hb = &s->host[s->rx_host];
	w->aqp = s->fabric ? w->ha->qp[q % cfg->qps] : w->ha->qp[q];
	w->bqp = w->hb->qp[q];
	if (connect_qp(s, w->aqp, w->bqp, cfg->sr, w->ha, w->hb) ||
	    connect_qp(s, w->bqp, w->aqp, cfg->peer_sr < 0 ? cfg->sr : cfg->peer_sr != 0, w->hb,
	               w->ha)) {
		return -EINVAL;
	}
	if (cfg->flows)
		w->quota = UINT64_MAX; /* backlogged until --duration-ms */
	else if (cfg->incast)
		w->quota = cfg->messages; /* each sender */
	else
		w->quota = cfg->messages / cfg->qps + (q < cfg->messages % cfg->qps ? 1 : 0);
	if (s->fabric)
		w->start_ns = (uint64_t)llround(cfg->start_gap_us * 1000.0 * q);
	w->abuf = calloc(cfg->depth, ssz);
	w->bbuf = rdma ? calloc(cfg->depth, ssz) : NULL;
	w->rbuf = sends ? calloc(cfg->depth, ssz) : NULL;
	w->counter = calloc(1, 8);
	w->op_of = calloc(cfg->depth, 1);
	w->aidx_of = calloc(cfg->depth, sizeof(*w->aidx_of));
	w->send_seq = calloc(cfg->depth, sizeof(*w->send_seq));
	w->send_op = calloc(cfg->depth, 1);
	if (!w->abuf || (rdma && !w->bbuf) || (sends && !w->rbuf) || !w->counter || !w->op_of ||
	    !w->aidx_of || !w->send_seq || !w->send_op) {
		return -ENOMEM;
	}
	w->amr = rfw_reg_mr(w->ha->pd, w->abuf, cfg->depth * ssz, RFW_ACCESS_LOCAL_WRITE);
	if (rdma)
		w->bmr = rfw_reg_mr(w->hb->pd, w->bbuf, cfg->depth * ssz,
		                    RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
		                        RFW_ACCESS_REMOTE_READ);
	if (sends)
		w->rmr = rfw_reg_mr(w->hb->pd, w->rbuf, cfg->depth * ssz, RFW_ACCESS_LOCAL_WRITE);
	w->cmr =
	    rfw_reg_mr(w->hb->pd, w->counter, 8, RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_ATOMIC);
	if (!w->amr || (rdma && !w->bmr) || (sends && !w->rmr) || !w->cmr) {
		return -ENOMEM;
	}
	if (w->quota)
		s->active_qps++;
	if (sends)
		for (uint64_t k = 0; k < cfg->depth; k++)
			wl_post_recv(s, w, k);
	if (w->start_ns)
		ev_push(s, w->start_ns, EV_KICK, (uint32_t)w->ha->idx, 0, NULL);
	return 0;
}

/* One event. */
static void sim_dispatch(struct sim *s, const struct event *e)
{
	switch (e->type) {
	case EV_TX_DONE:
		link_tx_done(&s->link[e->idx], e->f);
		break;
	case EV_ARRIVE: {
		struct link *l = &s->link[e->idx];

		if (s->dumper && pcap_on_rx(s, l))
			pcap_frame(s, e->f);
		if (l->to >= 0) {
			host_rx(&s->host[l->to], e->f);
			frame_put(s, e->f);
		} else {
			/* The switch forwards on the destination MAC (02:..:host+1). */
			uint32_t dst = (uint32_t)e->f->data[5] - 1;

			if (dst < s->nhosts) {
				link_enqueue(&s->link[s->nhosts + dst], e->f);
			} else {
				s->res->parse_drops++;
				frame_put(s, e->f);
			}
		}
		break;
	}
	case EV_TIMER:
		host_timer(&s->host[e->idx], e->gen);
		break;
	case EV_SAMPLE:
		take_sample(s);
		if (s->now + s->sample_ns <= s->end_ns)
			ev_push(s, s->now + s->sample_ns, EV_SAMPLE, 0, 0, NULL);
		break;
	case EV_KICK:
		host_service(&s->host[e->idx]);
		break;
	}
}

/* The event loop: until the heap runs dry, the time limit, or every workload is done. */
static void sim_loop(struct sim *s, uint32_t nwl)
{
	while (s->nheap && s->active_qps && !s->oom) {
		struct event e = ev_pop(s);
		bool all_dead = true;

		if (e.t > s->end_ns) {
			if (e.f)
				frame_put(s, e.f);
			break;
		}
		s->now = e.t;
		s->res->events++;
		sim_dispatch(s, &e);
		for (uint32_t q = 0; q < nwl && all_dead; q++)
			if (!s->wl[q].dead && s->wl[q].completed < s->wl[q].quota)
				all_dead = false;
		if (all_dead)
			break;
	}
}

/* Completion verdict, transport counters of all hosts, Estats rows, goodput. */
static void sim_results(struct sim *s, uint32_t nwl)
{
	const struct rfw_sim_cfg *cfg = s->cfg;
	struct rfw_sim_result *res = s->res;

	for (uint32_t q = 0; q < nwl; q++)
		wl_check_end(s, &s->wl[q]);
	res->sim_time_ns = s->last_completion_ns && !cfg->flows ? s->last_completion_ns : s->now;
	if (cfg->flows) {
		/* Backlogged: every completion intact and every flow delivered something. */
		bool all = true;

		for (uint32_t q = 0; q < nwl; q++)
			if (s->wl[q].bytes_verified == 0)
				all = false;
		res->completed = all && res->corrupt == 0 && res->duplicates_delivered == 0 &&
		                 res->error_completions == 0 && res->flushed_completions == 0;
	} else {
		res->completed = res->messages_completed ==
		                     (cfg->incast ? cfg->messages * cfg->incast : cfg->messages) &&
		                 res->corrupt == 0 && res->duplicates_delivered == 0 &&
		                 res->error_completions == 0 && res->flushed_completions == 0;
	}
	for (uint32_t i = 0; i < s->nhosts; i++) {
		uint64_t cnt[RFW_CNT__COUNT];

		rfw_dev_counters(s->host[i].dev, cnt);
		for (int k = 0; k < RFW_CNT__COUNT; k++)
			if (k == RFW_CNT_inflight_bytes_hwm) /* a maximum, not a sum */
				res->cnt[k] = cnt[k] > res->cnt[k] ? cnt[k] : res->cnt[k];
			else
				res->cnt[k] += cnt[k];
	}
	if (cfg->estats && s->nhosts > 0)
		for (uint32_t q = 0; q < s->host[0].nqp && res->nes_rows < RFW_SIM_ES_ROWS; q++) {
			int n = rfw_qp_estats_rows(s->host[0].qp[q], RFW_ES_CURRENT, s->now,
			                           res->es_rows + res->nes_rows,
			                           RFW_SIM_ES_ROWS - (int)res->nes_rows);

			if (n > 0)
				res->nes_rows += (uint32_t)n;
		}
	res->retransmitted_packets = res->cnt[RFW_CNT_retransmitted_packets];
	res->timeouts = res->cnt[RFW_CNT_local_ack_timeout_err];
	res->nak_seq_err = res->cnt[RFW_CNT_packet_seq_err];
	if (res->sim_time_ns)
		res->goodput_gbps = (double)res->bytes_verified * 8.0 / (double)res->sim_time_ns;
}

int rfw_sim_run(const struct rfw_sim_cfg *cfg, struct rfw_sim_result *res)
{
	struct sim s;
	struct timespec t0, t1;
	uint32_t nwl;
	int rc;

	memset(res, 0, sizeof(*res));
	if (rfw_sim_validate(cfg))
		return -EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&s, 0, sizeof(s));
	rc = sim_init(&s, cfg, res);
	nwl = s.fabric ? s.nflows : cfg->qps;
	s.wl = rc ? NULL : calloc(nwl, sizeof(*s.wl));
	if (!rc && s.wl == NULL)
		rc = -ENOMEM;
	for (uint32_t q = 0; !rc && q < nwl; q++)
		rc = wl_setup(&s, q);
	if (rc) {
		teardown(&s);
		return rc;
	}
	if (s.fabric)
		take_sample(&s);
	if (s.fabric && s.sample_ns)
		ev_push(&s, s.sample_ns, EV_SAMPLE, 0, 0, NULL);
	for (uint32_t i = 0; i < s.nhosts; i++)
		host_service(&s.host[i]);
	sim_loop(&s, nwl);
	if (cfg->flows && !s.oom && s.now < s.end_ns)
		s.now = s.end_ns; /* nothing else happened before the end of the run */
	if (s.fabric && !s.oom) {
		q_account(&s, &s.link[s.bn_link]);
		if (s.ts_t[s.nsamp - 1] < s.now)
			take_sample(&s);
	}
	sim_results(&s, nwl);
	if (s.fabric && !s.oom && s.nsamp) {
		fabric_results(&s, res);
		if (cfg->csv_dir && !rc)
			rc = write_csv(&s, cfg->csv_dir);
		if (cfg->plot_dir && !rc) {
			rc = write_csv(&s, cfg->plot_dir);
			if (!rc)
				rc = write_plot(&s, cfg->plot_dir);
		}
	}
	if (s.oom && rc == 0)
		rc = -ENOMEM;
	teardown(&s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return rc;
}

double rfw_sim_frame_path_pps(uint32_t mtu, uint32_t iters)
{
	static uint8_t src[4096], dst[4096];
	struct frame *f = malloc(sizeof(*f));
	struct rfw_frame_spec sp = {.ip_ver = 4, .ttl = 64, .tos = RFW_ECN_ECT0};
	struct timespec t0, t1;
	uint64_t sink = 0;
	double dt;

	if (f == NULL || mtu > sizeof(src))
		return 0;
	memset(src, 0x5a, sizeof(src));
	rfw_ip4_to_mapped(sp.src_ip, 0x0a000001);
	rfw_ip4_to_mapped(sp.dst_ip, 0x0a000002);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < iters; i++) {
		struct rfw_ib_pkt p = {0}, q;
		struct rfw_frame_view v;
		uint32_t ib_len = RFW_BTH_LEN + mtu;
		size_t len;

		/* What every simulated data packet costs at least: payload in, headers, ICRC,
		 * parse and ICRC check at the receiver, IB parse, payload out. */
		p.bth.opcode = RFW_OP_RC_RDMA_WRITE_MIDDLE;
		p.bth.psn = i & RFW_PSN_MASK;
		rfw_ib_build(f->data + FRAME_HDR, RFW_BTH_LEN, &p);
		memcpy(f->data + FRAME_HDR + RFW_BTH_LEN, src, mtu);
		rfw_frame_build_hdrs(f->data, FRAME_MAX, &sp, ib_len);
		len = rfw_frame_finalize(f->data, &sp, ib_len);
		if (rfw_frame_parse_eth(f->data, len, &v) == RFW_FRAME_ERR_OK &&
		    rfw_frame_icrc_ok(f->data, &v) &&
		    rfw_ib_parse(f->data + v.ib_off, v.ib_len, &q) == RFW_IB_ERR_OK) {
			memcpy(dst, q.payload, q.payload_len);
			sink += dst[i % mtu];
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	free(f);
	dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return sink == 0 && iters ? 0 : (dt > 0 ? iters / dt : 0);
}

static const char *op_name(enum rfw_sim_op op)
{
	static const char *const n[] = {[RFW_SIM_WRITE] = "write",
	                                [RFW_SIM_READ] = "read",
	                                [RFW_SIM_SEND] = "send",
	                                [RFW_SIM_ATOMIC] = "atomic",
	                                [RFW_SIM_MIX] = "mix",
	                                [RFW_SIM_SEND_IMM] = "send_imm",
	                                [RFW_SIM_WRITE_IMM] = "write_imm",
	                                [RFW_SIM_MIX_ALL] = "mixall"};
	return n[op];
}

#define I(obj, k, v) json_object_set_new(obj, k, json_integer((json_int_t)(v)))
#define R(obj, k, v) json_object_set_new(obj, k, json_real(v))

/* The run's verdict and totals, at the top level of @o. */
static void json_totals(json_t *o, const struct rfw_sim_result *r)
{
	json_object_set_new(o, "schema", json_string(RFW_SIM_SCHEMA));
	json_object_set_new(o, "completed", json_boolean(r->completed));
	I(o, "messages_posted", r->messages_posted);
	I(o, "messages_completed", r->messages_completed);
	I(o, "bytes_verified", r->bytes_verified);
	I(o, "corrupt", r->corrupt);
	I(o, "duplicates_delivered", r->duplicates_delivered);
	I(o, "error_completions", r->error_completions);
	I(o, "flushed_completions", r->flushed_completions);
	R(o, "goodput_gbps", r->goodput_gbps);
	I(o, "retransmitted_packets", r->retransmitted_packets);
	I(o, "timeouts", r->timeouts);
	I(o, "nak_seq_err", r->nak_seq_err);
	I(o, "sim_time_ns", r->sim_time_ns);
	R(o, "wall_time_s", r->wall_s);
	R(o, "sim_packets_per_wall_s", r->wall_s > 0 ? (double)r->frames_sent / r->wall_s : 0);
	json_object_set_new(o, "first_error",
	                    r->first_error[0] ? json_string(r->first_error) : json_null());
}

/* "network": what the links and the switch did. */
static void json_network(json_t *net, const struct rfw_sim_result *r)
{
	I(net, "frames_sent", r->frames_sent);
	I(net, "frames_delivered", r->frames_delivered);
	I(net, "frames_lost", r->frames_lost);
	I(net, "frames_duplicated", r->frames_duplicated);
	I(net, "frames_reordered", r->frames_reordered);
	I(net, "frames_corrupted", r->frames_corrupted);
	I(net, "frames_ce_marked", r->frames_ce_marked);
	I(net, "queue_drops", r->queue_drops);
	I(net, "icrc_drops", r->icrc_drops);
	I(net, "parse_drops", r->parse_drops);
	I(net, "events", r->events);
}

/* "config": the options of the two-host model. */
static void json_config(json_t *cfg, const struct rfw_sim_cfg *c)
{
	json_object_set_new(cfg, "op", json_string(op_name(c->op)));
	I(cfg, "size", c->size);
	I(cfg, "messages", c->messages);
	I(cfg, "qps", c->qps);
	I(cfg, "depth", c->depth);
	I(cfg, "mtu", c->mtu);
	R(cfg, "rate_gbps", c->rate_gbps);
	R(cfg, "rtt_us", c->rtt_us);
	R(cfg, "loss", c->loss);
	R(cfg, "burst_loss", c->burst_loss);
	I(cfg, "burst_len", c->burst_len);
	R(cfg, "reorder", c->reorder);
	R(cfg, "dup", c->dup);
	R(cfg, "corrupt", c->corrupt);
	R(cfg, "ce", c->ce);
	I(cfg, "start_psn", c->start_psn);
	I(cfg, "seed", c->seed);
	json_object_set_new(cfg, "transport", json_string(c->sr ? "sr" : "gbn"));
	json_object_set_new(cfg, "peer_transport",
	                    json_string((c->peer_sr < 0 ? c->sr : c->peer_sr != 0) ? "sr" : "gbn"));
	json_object_set_new(cfg, "bdp_bytes", json_integer((json_int_t)c->bdp_bytes));
	json_object_set_new(cfg, "rto_low_us", json_real(c->rto_low_us));
	json_object_set_new(cfg, "rto_high_us", json_real(c->rto_high_us));
	json_object_set_new(cfg, "sr_window", json_integer(c->sr_window));
	I(cfg, "timeout", c->timeout);
	I(cfg, "retry_cnt", c->retry_cnt);
	I(cfg, "ack_every", c->ack_every);
}

/* One flow of the switch topology. */
static json_t *json_flow(const struct rfw_sim_cfg *c, const struct rfw_sim_flow *f, uint32_t i)
{
	json_t *fo = json_object();

	I(fo, "flow", i);
	json_object_set_new(fo, "profile",
	                    json_string(dcqcn_profile_name((enum dcqcn_profile)f->profile)));
	R(fo, "rtt_us", f->rtt_us);
	R(fo, "start_us", (double)f->start_ns / 1e3);
	R(fo, "goodput_gbps", f->goodput_gbps);
	R(fo, "goodput_second_half_gbps", f->goodput_second_half_gbps);
	R(fo, "final_rate_gbps", f->final_rate_gbps);
	I(fo, "bytes_verified", f->bytes_verified);
	I(fo, "messages_completed", f->messages_completed);
	I(fo, "cnps_received", f->cnps_received);
	I(fo, "rate_cuts", f->rate_cuts);
	I(fo, "cnps_sent", f->cnps_sent);
	I(fo, "ce_marked_received", f->ce_marked_received);
	if (c->incast)
		json_object_set_new(fo, "completion_time_us",
		                    f->completion_ns
		                        ? json_real((double)(f->completion_ns - f->start_ns) / 1e3)
		                        : json_null());
	return fo;
}

/* The switch topology (--flows, --incast): flows, fairness, queue, and its options. */
static void json_fabric(json_t *o, json_t *net, json_t *cfg, const struct rfw_sim_cfg *c,
                        const struct rfw_sim_result *r)
{
	static const char *const pts[] = {"tx", "sender", "receiver", "switch"};
	json_t *fl = json_array(), *prl = json_array();
	uint64_t cnps = 0, cuts = 0;

	for (uint32_t i = 0; i < r->nflows; i++) {
		json_array_append_new(fl, json_flow(c, &r->flow[i], i));
		cnps += r->flow[i].cnps_received;
		cuts += r->flow[i].rate_cuts;
	}
	json_object_set_new(o, "flows", fl);
	R(o, "jain_index", r->jain_index);
	json_object_set_new(o, "convergence_time_ms",
	                    r->convergence_time_ms >= 0 ? json_real(r->convergence_time_ms)
	                                                : json_null());
	R(o, "queue_mean_kb", r->queue_mean_kb);
	R(o, "queue_p99_kb", r->queue_p99_kb);
	R(o, "queue_peak_kb", r->queue_peak_kb);
	I(o, "cnps_received", cnps);
	I(o, "cnps_sent", r->cnps_sent);
	I(o, "rate_cuts", cuts);
	I(net, "switch_ce_marked", r->switch_ce_marked);
	I(cfg, "flows", c->flows);
	I(cfg, "incast", c->incast);
	for (uint32_t i = 0; i < (c->nprofiles ? c->nprofiles : 1); i++)
		json_array_append_new(prl, json_string(dcqcn_profile_name((enum dcqcn_profile)(
		                               c->nprofiles ? c->profile[i] : 0))));
	json_object_set_new(cfg, "profiles", prl);
	R(cfg, "kmin_kb", c->kmin_kb);
	R(cfg, "kmax_kb", c->kmax_kb);
	R(cfg, "pmax", c->pmax);
	if (c->flows)
		R(cfg, "duration_ms", c->duration_ms);
	R(cfg, "sample_us", c->sample_us);
	R(cfg, "start_gap_us", c->start_gap_us);
	I(cfg, "queue_bytes", c->queue_bytes);
	json_object_set_new(cfg, "pcap_point", json_string(pts[c->pcap_point]));
}

/* "estats": the Estats quantile rows (--estats 1). */
static json_t *json_estats(const struct rfw_sim_result *r)
{
	json_t *rows = json_array();

	for (uint32_t i = 0; i < r->nes_rows; i++) {
		const struct rfw_es_row *e = &r->es_rows[i];
		json_t *row = json_object();

		I(row, "qpn", e->qpn);
		json_object_set_new(row, "op", json_string(rfw_es_op_name(e->op)));
		json_object_set_new(row, "status", json_string(rfw_es_status_name(e->status)));
		json_object_set_new(row, "stage", json_string(rfw_es_stage_name(e->stage)));
		I(row, "count", e->count);
		I(row, "p50_ns", e->p50);
		I(row, "p99_ns", e->p99);
		I(row, "p999_ns", e->p999);
		I(row, "max_ns", e->max);
		json_array_append_new(rows, row);
	}
	return rows;
}

json_t *rfw_sim_json(const struct rfw_sim_cfg *c, const struct rfw_sim_result *r)
{
	json_t *o = json_object(), *cfg = json_object(), *net = json_object(), *cnt = json_object();

	json_totals(o, r);
	json_network(net, r);
	json_object_set_new(o, "network", net);
	for (int k = 0; k < RFW_CNT__COUNT; k++)
		I(cnt, rfw_counter_name((enum rfw_counter)k), r->cnt[k]);
	json_object_set_new(o, "counters", cnt);
	json_config(cfg, c);
	if (c->flows || c->incast)
		json_fabric(o, net, cfg, c, r);
	json_object_set_new(o, "config", cfg);
	if (c->estats)
		json_object_set_new(o, "estats", json_estats(r));
	return o;
}
#undef I
#undef R
