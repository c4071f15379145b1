/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `rocefw-replay cc` engine: flows, congestion signals, observed behaviour, models, verdicts.
 * See cc_replay.h for the contract and docs/replay-cc.md for the method.
 */
#include "cc_replay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wire/frame.h"
#include "wire/ib_hdr.h"
#include "flow_index.h"

#define HBINS           201   /* relative-error histogram: 0.5 % bins, last one is ">= 100 %" */
#define HBIN_WIDTH      0.005 /* 0.5 % */
#define CNPQ            32    /* CNPs waiting for --cnp-delay-us before the models see them */
#define NGAPS           4     /* gaps averaged as "the rate before the CNP" */
#define MAX_BIND_TRIES  64
#define COARSE_BLOCK_NS 10000 /* 10 timestamp ticks of a microsecond capture */

struct group;

struct model {
	struct dcqcn_rp rp;   /* the flow's own RP (rp_scope qp) */
	struct dcqcn_rp *rpp; /* the RP that runs: &rp, or the group's (rp_scope port / dst) */
	struct group *grp;    /* the group sharing *rpp, NULL for qp scope */
	double acc;           /* ns the pacer of this RP has charged so far (own RP) */
	double mark;          /* *acc when this flow's previous packet left; < 0 none yet */
	uint64_t t;           /* timers run up to */
	/* ns the model's pacer would have taken for the open window's gaps. cc/pacer.h charges each
	 * packet at the rate of its departure; under a shared RP the gap between two packets of a
	 * flow also holds the group's packets sent in between. */
	double exp_ns;
	double err_sum;
	uint64_t n;
	uint32_t hist[HBINS];
	/* recovery segments (model 0 only, as observed): rate at the segment start */
	double seg_start;
};

struct stat1 { /* running min / max / sum */
	double sum, min, max;
	uint64_t n;
};

struct rfw_cc_flow {
	uint8_t src[16], dst[16];
	uint32_t dqpn;
	uint16_t udp_sport;
	uint32_t idx;  /* position in the flow list */
	int32_t rkey;  /* index of the reverse key (CNP/ACK) bound to this flow, -1 none */
	bool filtered; /* excluded by --flow */
	bool rev_seen; /* some reverse-direction RoCE packet was seen between the two hosts */
	uint64_t data_pkts, data_bytes, repeats, ce, ecn[4], cnps, acks, naks;
	uint64_t first_ts, last_ts;
	bool have_psn;
	uint32_t max_psn, first_psn;
	/* windows */
	bool have_data;
	uint64_t last_data_ts, win_start, win_bytes;
	uint32_t win_pkts, win_cnps, win_ce;
	uint64_t windows;
	double max_win_gbps;
	/* gaps before a CNP: per packet, or per block of packets spanning at least
	 * rfw_cc.blk_ns when timestamps are coarse (microsecond captures) */
	double gaps[NGAPS];
	unsigned ngaps, gap_i;
	uint64_t blk_start;
	uint32_t blk_pkts;
	/* reaction tracking: the first CNP not yet followed by a slower gap */
	bool pend;
	uint64_t pend_t;
	double pend_gap;
	uint32_t pend_cnps, slow_run, pend_pkts;
	uint64_t pend_mstart, pend_mmin; /* model 0's rate at the CNP and its lowest since, kb/s */
	uint64_t cnps_no_cut_expected;   /* not judged: no model cut (floor, folded CNPs) or no
	                                  * reference rate before the CNP */
	uint64_t slow_start;
	double slow_gap;
	uint64_t cnps_reacted, cnps_unreacted;
	struct stat1 react_delay_ns, cut_size;
	/* recovery segments: from the first window after a cut to the window before the next */
	bool seg_open;
	uint64_t seg_t0, seg_t1;
	double seg_r0, seg_r1, seg_m1;
	struct stat1 slope, mslope; /* Gb/s per ms, observed and model 0 */
	/* notification point */
	uint64_t last_cnp;
	uint64_t cnp_gaps, cnp_gaps_short, min_gap;
	bool ce_pend;
	uint64_t ce_pend_first, ce_pend_n, ce_unanswered, ce_answered;
	/* CNPs for the models, delayed by --cnp-delay-us */
	uint64_t cnpq[CNPQ];
	unsigned cq_h, cq_t;
	uint64_t cnpq_dropped;
	/* verdicts (rfw_cc_finish) */
	const char *np_verdict, *rp_verdict, *capture_point;
	char why[160];
	unsigned nmodels;
	struct model m[]; /* nmodels */
};

/* Flows sharing one RP state under rp_scope port (same source) or dst (same source and
 * destination): the shared-port behaviour operators reported on some NICs. One group per
 * (key, model); its RP gets every CNP and every byte of its flows. */
struct group {
	uint8_t src[16], dst[16]; /* dst all-zero for port scope */
	unsigned model;
	struct dcqcn_rp rp;
	double acc; /* ns the group's pacer has charged so far */
};

struct rkey { /* reverse direction: CNPs and ACKs X->Y to dqpn Q (the sender's QP) */
	uint8_t src[16], dst[16];
	uint32_t dqpn;
	int32_t flow; /* bound forward flow, -1 not yet */
	uint32_t tries;
	uint64_t cnps, acks;
};

struct rfw_cc {
	struct rfw_cc_opts o;
	uint64_t frames, roce, other, malformed, cnps_unattr, acks_unattr, ooo_ts;
	uint64_t last_ts;
	struct rfw_cc_flow **flows;
	uint32_t nflows, cap_flows;
	struct rfw_flow_index fix; /* (src, dst, dqpn) -> index in flows */
	struct rkey *rk;
	uint32_t nrk, cap_rk;
	struct group **groups;
	uint32_t ngroups;
	/* Line-rate estimate (opts.estimate_line_rate): bytes per source host in fixed windows;
	 * flows of one host share its port, so the port speed shows in their sum. */
	struct host_rate {
		uint8_t src[16];
		uint64_t win_start, bytes;
	} hosts[64];
	uint32_t nhosts;
	double max_host_gbps;
	struct rfw_flow_index rix; /* (src, dst, dqpn) -> index in rk */
	bool finished;
	/* Timestamps all whole microseconds so far (pcap's default resolution): a packet gap at
	 * 100 Gb/s is a third of that, so reactions are judged on blocks of packets spanning at
	 * least blk_ns instead of single gaps. */
	bool coarse_ts;
	uint64_t blk_ns;
	/* A frame cut by the snap length is parsed from this zero-filled copy at its wire length,
	 * so IP and UDP length checks hold; only captured bytes are read past the parse. Kept
	 * zero between frames (the copied bytes are cleared again). */
	uint8_t snapbuf[65536];
};

void rfw_cc_opts_default(struct rfw_cc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->window_ns = 50000;
	o->window_min_pkts = 4;
	o->idle_ns = 1000000;
	o->react_ns = 200000;
	o->cut_min = 0.05;
	o->np_slack_ns = 10000;
	o->max_median_err = 0.10;
	o->max_p95_err = 0.30;
	o->min_react_share = 0.20;
}

struct rfw_cc *rfw_cc_new(const struct rfw_cc_opts *o)
{
	struct rfw_cc *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->o = *o;
	c->coarse_ts = true;
	c->blk_ns = c->o.react_block_ns > COARSE_BLOCK_NS ? c->o.react_block_ns : COARSE_BLOCK_NS;
	if (c->o.nmodels > RFW_CC_MAX_MODELS)
		c->o.nmodels = RFW_CC_MAX_MODELS;
	return c;
}

void rfw_cc_free(struct rfw_cc *c)
{
	if (c == NULL)
		return;
	for (uint32_t i = 0; i < c->nflows; i++)
		free(c->flows[i]);
	free(c->flows);
	rfw_flow_index_free(&c->fix);
	free(c->rk);
	rfw_flow_index_free(&c->rix);
	for (uint32_t i = 0; i < c->ngroups; i++)
		free(c->groups[i]);
	free(c->groups);
	free(c);
}

int rfw_cc_linktype_supported(int linktype)
{
	return rfw_check_linktype_supported(linktype);
}

static bool filter_match(const struct rfw_cc_filter *fl, const uint8_t *src, const uint8_t *dst,
                         uint32_t qpn)
{
	return (!fl->has_src || !memcmp(fl->src, src, 16)) &&
	       (!fl->has_dst || !memcmp(fl->dst, dst, 16)) && (!fl->has_qpn || fl->qpn == qpn);
}

static struct rfw_cc_flow *flow_find(const struct rfw_cc *c, const uint8_t *src, const uint8_t *dst,
                                     uint32_t qpn)
{
	int64_t i = rfw_flow_index_find(&c->fix, src, dst, qpn);

	return i >= 0 ? c->flows[i] : NULL;
}

/* The group of model @mi for a flow src->dst; groups are few (one per host), so a list. */
static struct group *group_get(struct rfw_cc *c, unsigned mi, const uint8_t *src,
                               const uint8_t *dst)
{
	const struct dcqcn_prof *pf = c->o.models[mi];
	uint8_t zero[16] = {0};
	const uint8_t *d = pf->scope == DCQCN_SCOPE_DST ? dst : zero;
	struct group *g, **ng;

	for (uint32_t i = 0; i < c->ngroups; i++) {
		g = c->groups[i];
		if (g->model == mi && !memcmp(g->src, src, 16) && !memcmp(g->dst, d, 16))
			return g;
	}
	g = calloc(1, sizeof(*g));
	ng = g ? realloc(c->groups, (c->ngroups + 1) * sizeof(*ng)) : NULL;
	if (ng == NULL) {
		free(g);
		return NULL;
	}
	c->groups = ng;
	memcpy(g->src, src, 16);
	memcpy(g->dst, d, 16);
	g->model = mi;
	dcqcn_rp_init(&g->rp, pf);
	c->groups[c->ngroups++] = g;
	return g;
}

static struct rfw_cc_flow *flow_get(struct rfw_cc *c, const struct rfw_frame_view *v, uint32_t qpn,
                                    uint64_t ts)
{
	struct rfw_cc_flow *f = flow_find(c, v->src_ip, v->dst_ip, qpn);
	unsigned nm = c->o.nmodels;

	if (f != NULL)
		return f;
	/* A flow of another sender than the filter's runs no models: RP state is per QP, per
	 * destination or per port of one sender, never shared across senders. */
	if (c->o.filter.has_src && memcmp(c->o.filter.src, v->src_ip, 16) != 0)
		nm = 0;
	if (c->nflows == c->cap_flows) {
		uint32_t ncap = c->cap_flows ? c->cap_flows * 2 : 16;
		struct rfw_cc_flow **nf = realloc(c->flows, ncap * sizeof(*nf));

		if (nf == NULL)
			return NULL;
		c->flows = nf;
		c->cap_flows = ncap;
	}
	f = calloc(1, sizeof(*f) + nm * sizeof(f->m[0]));
	if (f == NULL)
		return NULL;
	memcpy(f->src, v->src_ip, 16);
	memcpy(f->dst, v->dst_ip, 16);
	f->dqpn = qpn;
	f->idx = c->nflows;
	f->udp_sport = v->udp_sport;
	f->rkey = -1;
	f->filtered = !filter_match(&c->o.filter, v->src_ip, v->dst_ip, qpn);
	f->min_gap = UINT64_MAX;
	f->first_ts = ts;
	f->nmodels = nm;
	for (unsigned i = 0; i < nm; i++) {
		struct model *m = &f->m[i];

		dcqcn_rp_init(&m->rp, c->o.models[i]);
		m->rpp = &m->rp;
		m->t = ts;
		if (c->o.models[i]->scope != DCQCN_SCOPE_QP) {
			m->grp = group_get(c, i, v->src_ip, v->dst_ip);
			if (m->grp == NULL) {
				free(f);
				return NULL;
			}
			m->rpp = &m->grp->rp;
		}
		m->mark = -1;
	}
	if (rfw_flow_index_insert(&c->fix, f->src, f->dst, qpn) < 0) {
		free(f);
		return NULL;
	}
	c->flows[c->nflows++] = f;
	return f;
}

static struct rkey *rk_get(struct rfw_cc *c, const struct rfw_frame_view *v, uint32_t qpn)
{
	int64_t i = rfw_flow_index_find(&c->rix, v->src_ip, v->dst_ip, qpn);
	struct rkey *r;

	if (i >= 0)
		return &c->rk[i];
	if (c->nrk == c->cap_rk) {
		uint32_t ncap = c->cap_rk ? c->cap_rk * 2 : 16;
		struct rkey *n = realloc(c->rk, ncap * sizeof(*n));

		if (n == NULL)
			return NULL;
		c->rk = n;
		c->cap_rk = ncap;
	}
	if (rfw_flow_index_insert(&c->rix, v->src_ip, v->dst_ip, qpn) < 0)
		return NULL;
	r = &c->rk[c->nrk++];
	memset(r, 0, sizeof(*r));
	memcpy(r->src, v->src_ip, 16);
	memcpy(r->dst, v->dst_ip, 16);
	r->dqpn = qpn;
	r->flow = -1;
	return r;
}

/*
 * Which forward flow does a CNP or ACK X->Y to QP Q belong to? The BTH of a CNP carries the
 * sender's QP number, the data packets the receiver's (IBA A17.9.3), so the two are paired by
 * evidence: an ACK whose PSN lies in the PSN range a forward flow Y->X has sent binds its key to
 * that flow; failing that, the only forward flow Y->X not yet bound to another key is taken.
 */
static void rk_bind(struct rfw_cc *c, struct rkey *r, bool have_psn, uint32_t psn)
{
	int32_t cand = -1, unbound = 0;
	uint32_t idx = (uint32_t)(r - c->rk);

	if (r->tries >= MAX_BIND_TRIES)
		return;
	r->tries++;
	for (uint32_t i = 0; i < c->nflows; i++) {
		struct rfw_cc_flow *f = c->flows[i];

		if (memcmp(f->src, r->dst, 16) || memcmp(f->dst, r->src, 16) || f->data_pkts == 0)
			continue;
		f->rev_seen = true;
		if (f->rkey >= 0)
			continue;
		if (have_psn && f->have_psn && rfw_psn_cmp(psn, f->first_psn) >= 0 &&
		    rfw_psn_cmp(psn, f->max_psn) <= 0) {
			cand = (int32_t)i;
			unbound = 1;
			break;
		}
		if (!have_psn) {
			cand = (int32_t)i;
			unbound++;
		}
	}
	if (cand >= 0 && unbound == 1) {
		r->flow = cand;
		c->flows[cand]->rkey = (int32_t)idx;
	}
}

/* ---- models ---- */

/* Run model @m's timers due up to @t, at the times they were due. */
static void model_advance(struct model *m, uint64_t t)
{
	if (t <= m->t)
		return;
	if (dcqcn_rp_next_deadline(m->rpp) <= t)
		dcqcn_rp_on_timer(m->rpp, t);
	m->t = t;
}

static void models_cnp(struct rfw_cc_flow *f, uint64_t t)
{
	for (unsigned i = 0; i < f->nmodels; i++) {
		model_advance(&f->m[i], t);
		dcqcn_rp_on_cnp(f->m[i].rpp, t);
	}
	if (f->nmodels && f->pend && dcqcn_rp_rate_kbps(f->m[0].rpp) < f->pend_mmin)
		f->pend_mmin = dcqcn_rp_rate_kbps(f->m[0].rpp);
}

/* Hand the models every delayed CNP due at or before @t. */
static void cnpq_run(struct rfw_cc_flow *f, uint64_t t)
{
	while (f->cq_h != f->cq_t && f->cnpq[f->cq_h % CNPQ] <= t)
		models_cnp(f, f->cnpq[f->cq_h++ % CNPQ]);
}

static double hist_quantile(const uint32_t *h, uint64_t n, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)n), acc = 0;

	if (n == 0)
		return NAN;
	if (want == 0)
		want = 1;
	for (unsigned b = 0; b < HBINS; b++) {
		acc += h[b];
		if (acc >= want)
			return b == HBINS - 1 ? 1.0 : (b + 0.5) * HBIN_WIDTH;
	}
	return 1.0;
}

/* ---- observed behaviour ---- */

static void stat_add(struct stat1 *s, double v)
{
	if (s->n == 0 || v < s->min)
		s->min = v;
	if (s->n == 0 || v > s->max)
		s->max = v;
	s->sum += v;
	s->n++;
}

static void seg_close(struct rfw_cc_flow *f)
{
	/* A recovery segment spans at least four windows, so the slope is not one window's noise.
	 */
	if (f->seg_open && f->seg_t1 > f->seg_t0 && f->windows >= 4) {
		double ms = (double)(f->seg_t1 - f->seg_t0) / 1e6;

		if (ms > 0) {
			stat_add(&f->slope, (f->seg_r1 - f->seg_r0) / ms);
			if (f->nmodels)
				stat_add(&f->mslope, (f->seg_m1 - f->m[0].seg_start) / ms);
		}
	}
	f->seg_open = false;
}

static void window_close(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, uint64_t t)
{
	double span = (double)(t - f->win_start);
	double obs = (double)f->win_bytes * 8.0 / span; /* bits per ns = Gb/s */
	struct rfw_cc_window w = {f->win_start, t,         obs,        {NAN, NAN},
	                          f->win_cnps,  f->win_ce, f->win_pkts};

	f->windows++;
	if (obs > f->max_win_gbps)
		f->max_win_gbps = obs;
	for (unsigned i = 0; i < f->nmodels; i++) {
		struct model *m = &f->m[i];
		double mod, err;
		unsigned b;

		/* The rate the model's pacer would have sent this window's bytes at. */
		mod = m->exp_ns > 0 ? (double)f->win_bytes * 8.0 / m->exp_ns : 0;
		m->exp_ns = 0;
		err = mod > 0 ? fabs(obs - mod) / mod : 1.0;
		if (err > 1.0)
			err = 1.0;
		b = (unsigned)(err / HBIN_WIDTH);
		m->hist[b < HBINS ? b : HBINS - 1]++;
		m->err_sum += err;
		m->n++;
		if (i < 2)
			w.model_gbps[i] = mod;
	}
	if (!c->o.whatif)
		w.model_gbps[1] = NAN;
	/* recovery segment bookkeeping */
	if (f->seg_open) {
		if (f->seg_t0 == 0) {
			f->seg_t0 = t;
			f->seg_r0 = obs;
			if (f->nmodels)
				f->m[0].seg_start = w.model_gbps[0];
		}
		f->seg_t1 = t;
		f->seg_r1 = obs;
		f->seg_m1 = w.model_gbps[0];
	}
	if (c->o.on_window && !f->filtered)
		c->o.on_window(c->o.cb_ctx, f, idx, &w);
	f->win_start = t;
	f->win_bytes = 0;
	f->win_pkts = 0;
	f->win_cnps = 0;
	f->win_ce = 0;
}

static void window_discard(struct rfw_cc_flow *f, uint64_t t)
{
	for (unsigned i = 0; i < f->nmodels; i++) {
		model_advance(&f->m[i], t);
		f->m[i].exp_ns = 0;
	}
	f->win_start = t;
	f->win_bytes = 0;
	f->win_pkts = 0;
	f->win_cnps = 0;
	f->win_ce = 0;
}

static double gap_mean(const struct rfw_cc_flow *f)
{
	double s = 0;

	if (f->ngaps == 0)
		return 0;
	for (unsigned i = 0; i < f->ngaps; i++)
		s += f->gaps[i];
	return s / f->ngaps;
}

static void ce_expire(struct rfw_cc *c, struct rfw_cc_flow *f, uint64_t t)
{
	if (f->ce_pend && t > f->ce_pend_first + c->o.np_gap_ns + c->o.np_slack_ns) {
		f->ce_unanswered += f->ce_pend_n;
		f->ce_pend = false;
	}
}

static void react_expire(struct rfw_cc *c, struct rfw_cc_flow *f, uint64_t t)
{
	/* At low rates a packet takes longer than --react-us: allow three of its gaps. */
	if (f->pend && t > f->pend_t + c->o.react_ns &&
	    t > f->pend_t + (uint64_t)(3 * f->pend_gap) && t > f->pend_t + 3 * c->blk_ns) {
		/* Judged only with a reference rate before the CNP and if the model cut too: a
		 * sender at its rate floor, or whose CNPs fold into a cut already made, has
		 * nothing to show. */
		if (f->pend_gap > 0 && f->pend_pkts >= 3 &&
		    (f->nmodels == 0 ||
		     (double)f->pend_mmin <= (double)f->pend_mstart * (1.0 - c->o.cut_min)))
			f->cnps_unreacted += f->pend_cnps;
		else
			f->cnps_no_cut_expected += f->pend_cnps;
		f->pend = false;
	}
}

static void host_rate(struct rfw_cc *c, const uint8_t *src, uint32_t bytes, uint64_t t)
{
	struct host_rate *h = NULL;

	for (uint32_t i = 0; i < c->nhosts; i++)
		if (!memcmp(c->hosts[i].src, src, 16)) {
			h = &c->hosts[i];
			break;
		}
	if (h == NULL) {
		if (c->nhosts == sizeof(c->hosts) / sizeof(c->hosts[0]))
			return;
		h = &c->hosts[c->nhosts++];
		memcpy(h->src, src, 16);
		h->win_start = t;
		h->bytes = 0;
	}
	if (t - h->win_start >= c->o.window_ns) {
		double r = (double)h->bytes * 8.0 / (double)(t - h->win_start);

		if (t - h->win_start < 2 * c->o.window_ns && r > c->max_host_gbps)
			c->max_host_gbps = r;
		h->win_start = t;
		h->bytes = 0;
	}
	h->bytes += bytes;
}

/* A CE-marked data packet: counted, and answered by a CNP sent within the NP gap before it
 * (the mark was folded into that CNP, as mlx5 min_time_between_cnps does) or one that follows
 * it. */
static void data_ce(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, uint64_t t)
{
	f->ce++;
	f->win_ce++;
	if (c->o.on_event && !f->filtered)
		c->o.on_event(c->o.cb_ctx, f, idx, t, RFW_CC_EV_CE, 0, 0);
	if (f->cnps && t - f->last_cnp < c->o.np_gap_ns + c->o.np_slack_ns) {
		f->ce_answered++;
	} else if (!f->ce_pend) {
		f->ce_pend = true;
		f->ce_pend_first = t;
		f->ce_pend_n = 1;
	} else {
		f->ce_pend_n++;
	}
}

/* The models up to @t; the gap that ends with this packet, as each model's pacer would have
 * made it. */
static void models_advance(struct rfw_cc_flow *f, uint64_t t)
{
	cnpq_run(f, t);
	for (unsigned i = 0; i < f->nmodels; i++) {
		struct model *m = &f->m[i];

		model_advance(m, t);
		if (m->mark >= 0)
			m->exp_ns += (m->grp ? m->grp->acc : m->acc) - m->mark;
	}
	if (f->nmodels && f->pend && dcqcn_rp_rate_kbps(f->m[0].rpp) < f->pend_mmin)
		f->pend_mmin = dcqcn_rp_rate_kbps(f->m[0].rpp);
}

/* The packet of @bytes leaves each model's pacer: its departure mark and the byte counter. */
static void models_tx(struct rfw_cc_flow *f, uint32_t bytes, uint64_t t)
{
	for (unsigned i = 0; i < f->nmodels; i++) {
		struct model *m = &f->m[i];
		double *acc = m->grp ? &m->grp->acc : &m->acc;

		/* bytes * 8 / kb/s = bytes * 8e6 / rate ns; rate is never 0 (rp_min_rate >= 1) */
		m->mark = *acc;
		*acc += (double)bytes * 8e6 / (double)dcqcn_rp_rate_kbps(m->rpp);
		dcqcn_rp_on_tx(m->rpp, bytes, t);
	}
}

/* A new window of @bytes at @t (first data, or after the sender went idle). */
static void window_restart(struct rfw_cc_flow *f, uint32_t bytes, uint64_t t)
{
	window_discard(f, t);
	f->win_bytes = bytes;
	f->win_pkts = 1;
	f->blk_start = t;
	f->blk_pkts = 0;
}

/* The packet goes into the current window (closed first when it is long enough). */
static void window_add(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, uint32_t bytes,
                       uint64_t t)
{
	f->pend_pkts++;
	react_expire(c, f, t);
	if (t - f->win_start >= c->o.window_ns && f->win_pkts + 1 >= c->o.window_min_pkts)
		window_close(c, f, idx, t);
	f->win_bytes += bytes;
	f->win_pkts++;
}

/* Reaction: two gaps (or blocks) in a row longer than before the CNP by cut_min, the first
 * starting after the CNP (DCQCN paces: the packet already scheduled leaves at the old spacing,
 * the next one at the new). @g is the gap (per packet of the block) starting at @g_start. */
static void react_check(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, double g,
                        uint64_t g_start)
{
	double pg = f->pend_gap;

	if (!(f->pend && pg > 0 && g_start >= f->pend_t && g >= pg * (1.0 + c->o.cut_min))) {
		f->slow_run = 0;
		return;
	}
	if (f->slow_run++ == 0) {
		f->slow_start = g_start;
		f->slow_gap = g;
	}
	if (f->slow_run < 2)
		return;
	stat_add(&f->react_delay_ns, (double)(f->slow_start - f->pend_t));
	stat_add(&f->cut_size, 1.0 - pg / f->slow_gap);
	if (c->o.on_event && !f->filtered)
		c->o.on_event(c->o.cb_ctx, f, idx, f->slow_start, RFW_CC_EV_CUT,
		              (double)(f->slow_start - f->pend_t), 1.0 - pg / f->slow_gap);
	f->cnps_reacted += f->pend_cnps;
	f->pend = false;
	f->slow_run = 0;
	seg_close(f);
	f->seg_open = true;
	f->seg_t0 = 0;
}

/* The gap (or block of packets, with coarse timestamps) this packet ends. */
static void data_gap(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, uint32_t bytes,
                     uint64_t t)
{
	uint64_t gap = t - f->last_data_ts, g_start;
	double g;

	if (gap > c->o.idle_ns) {
		/* The sender went idle (application-limited): this window says nothing about cc. */
		window_restart(f, bytes, t);
		f->ngaps = 0;
		f->slow_run = 0;
		seg_close(f);
		return;
	}
	if (++f->blk_pkts, t - f->blk_start < c->blk_ns) {
		/* coarse timestamps: the block goes on */
		window_add(c, f, idx, bytes, t);
		return;
	}
	g = (double)(t - f->blk_start) / f->blk_pkts;
	g_start = f->blk_start;
	f->blk_start = t;
	f->blk_pkts = 0;
	react_check(c, f, idx, g, g_start);
	f->pend_pkts++;
	react_expire(c, f, t);
	f->gaps[f->gap_i] = g;
	f->gap_i = (f->gap_i + 1) % NGAPS;
	if (f->ngaps < NGAPS)
		f->ngaps++;
	if (t - f->win_start >= c->o.window_ns && f->win_pkts + 1 >= c->o.window_min_pkts)
		window_close(c, f, idx, t);
	f->win_bytes += bytes;
	f->win_pkts++;
}

static void on_data(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, uint32_t psn,
                    unsigned ecn, uint32_t bytes, uint64_t t)
{
	/* A PSN at or below the highest seen: a retransmission, or the same packet seen again on
	 * another interface of a merged capture. Counted, but not as new sending. */
	if (f->have_psn && rfw_psn_cmp(psn, f->max_psn) <= 0) {
		f->repeats++;
		return;
	}
	if (c->coarse_ts && t % 1000 != 0) {
		c->coarse_ts = false;
		c->blk_ns = c->o.react_block_ns;
	}
	if (!f->have_psn)
		f->first_psn = psn;
	f->have_psn = true;
	f->max_psn = psn;
	f->data_pkts++;
	f->data_bytes += bytes;
	if (c->o.estimate_line_rate)
		host_rate(c, f->src, bytes, t);
	f->ecn[ecn]++;
	f->last_ts = t;
	ce_expire(c, f, t);
	if (ecn == RFW_ECN_CE)
		data_ce(c, f, idx, t);
	models_advance(f, t);
	if (!f->have_data) {
		f->have_data = true;
		window_restart(f, bytes, t);
	} else {
		data_gap(c, f, idx, bytes, t);
	}
	f->last_data_ts = t;
	models_tx(f, bytes, t);
}

static void on_cnp(struct rfw_cc *c, struct rfw_cc_flow *f, unsigned idx, uint64_t t)
{
	if (f->cnps) {
		uint64_t g = t - f->last_cnp;

		f->cnp_gaps++;
		/* np_min_time_between_cnps, less 1 % for timestamp noise. */
		if ((double)g < (double)c->o.np_gap_ns * 0.99)
			f->cnp_gaps_short++;
		if (g < f->min_gap)
			f->min_gap = g;
	}
	f->cnps++;
	f->win_cnps++;
	f->last_cnp = t;
	if (c->o.on_event && !f->filtered)
		c->o.on_event(c->o.cb_ctx, f, idx, t, RFW_CC_EV_CNP, 0, 0);
	/* CE marks waiting for an answer: this CNP answers them if it is in time. */
	if (f->ce_pend) {
		if (t <= f->ce_pend_first + c->o.np_gap_ns + c->o.np_slack_ns)
			f->ce_answered += f->ce_pend_n;
		else
			f->ce_unanswered += f->ce_pend_n;
		f->ce_pend = false;
	}
	react_expire(c, f, t);
	if (!f->pend) {
		f->pend = true;
		f->pend_t = t;
		f->pend_gap = f->ngaps == NGAPS ? gap_mean(f) : 0;
		f->pend_cnps = 1;
		f->pend_pkts = 0;
		f->slow_run = 0;
		f->pend_mstart = f->pend_mmin = f->nmodels ? dcqcn_rp_rate_kbps(f->m[0].rpp) : 0;
	} else {
		f->pend_cnps++;
	}
	if (f->nmodels == 0)
		return;
	if (c->o.cnp_delay_ns == 0) {
		models_cnp(f, t);
	} else if (f->cq_t - f->cq_h < CNPQ) {
		f->cnpq[f->cq_t++ % CNPQ] = t + c->o.cnp_delay_ns;
	} else {
		f->cnpq_dropped++;
	}
}

/* ---- frames ---- */

/* The frame under its link header into @v. A frame cut by the snap length is parsed as if
 * whole (zero-filled), so its headers' lengths check against the wire length; what the frame
 * is still comes from captured bytes (rfw_cc_frame). -EPROTONOSUPPORT for an unknown link. */
static int parse_link(struct rfw_cc *c, int linktype, const uint8_t *data, uint32_t caplen,
                      uint32_t wirelen, struct rfw_frame_view *v)
{
	const uint8_t *pd = data;
	uint32_t plen = caplen;
	int fe;

	if (caplen < wirelen && wirelen <= sizeof(c->snapbuf)) {
		memcpy(c->snapbuf, data, caplen);
		pd = c->snapbuf;
		plen = wirelen;
	}
	switch (linktype) {
	case RFW_LINKTYPE_ETHERNET:
		fe = rfw_frame_parse_eth(pd, plen, v);
		break;
	case RFW_LINKTYPE_LINUX_SLL:
		fe = rfw_frame_parse_at(pd, plen, 14, v);
		break;
	case RFW_LINKTYPE_LINUX_SLL2:
		fe = caplen < 20 ? RFW_FRAME_ERR_TRUNC_LINK
		                 : rfw_frame_parse_l3(pd, plen, 20, rfw_get_be16(pd), v);
		break;
	case RFW_LINKTYPE_RAW:
	case RFW_DLT_RAW:
	case RFW_DLT_RAW_BSD:
	case RFW_LINKTYPE_IPV4:
	case RFW_LINKTYPE_IPV6:
		fe = rfw_frame_parse_l3(
		    pd, plen, 0,
		    linktype == RFW_LINKTYPE_IPV6 ||
		            (linktype != RFW_LINKTYPE_IPV4 && caplen && (pd[0] >> 4) == 6)
		        ? RFW_ETHERTYPE_IPV6
		        : RFW_ETHERTYPE_IPV4,
		    v);
		break;
	default:
		return -EPROTONOSUPPORT;
	}
	if (pd == c->snapbuf)
		memset(c->snapbuf, 0, caplen);
	return fe;
}

/* A CNP: to the flow whose sender's QP it names. 0, or -ENOMEM. */
static int frame_cnp(struct rfw_cc *c, const struct rfw_frame_view *v, const uint8_t *bth,
                     uint64_t ts)
{
	struct rkey *r = rk_get(c, v, rfw_bth_dqpn(bth));

	if (r == NULL)
		return -ENOMEM;
	r->cnps++;
	if (r->flow < 0)
		rk_bind(c, r, false, 0);
	if (r->flow < 0) {
		c->cnps_unattr++;
		return 0;
	}
	on_cnp(c, c->flows[r->flow], (unsigned)r->flow, ts);
	return 0;
}

/* ACK / NAK / atomic ACK: reverse direction of a flow, to the requester's QP. 0 or -ENOMEM. */
static int frame_ack(struct rfw_cc *c, const struct rfw_frame_view *v, const uint8_t *bth,
                     uint32_t caplen)
{
	struct rkey *r = rk_get(c, v, rfw_bth_dqpn(bth));
	struct rfw_cc_flow *f;

	if (r == NULL)
		return -ENOMEM;
	r->acks++;
	if (r->flow < 0)
		rk_bind(c, r, true, rfw_bth_psn(bth));
	if (r->flow < 0) {
		c->acks_unattr++;
		return 0;
	}
	f = c->flows[r->flow];
	if ((uint64_t)v->ib_off + RFW_BTH_LEN + RFW_AETH_LEN <= caplen &&
	    rfw_aeth_syndrome_type(bth[RFW_BTH_LEN]) != RFW_AETH_ACK)
		f->naks++;
	else
		f->acks++;
	return 0;
}

int rfw_cc_frame(struct rfw_cc *c, int linktype, const uint8_t *data, uint32_t caplen,
                 uint32_t wirelen, uint64_t ts)
{
	struct rfw_frame_view v;
	const struct rfw_ib_opcode_info *oi;
	const uint8_t *bth;
	int fe;

	c->frames++;
	if (ts < c->last_ts) {
		/* Merged captures can be slightly out of order; time never goes back here. */
		c->ooo_ts++;
		ts = c->last_ts;
	}
	c->last_ts = ts;
	fe = parse_link(c, linktype, data, caplen, wirelen, &v);
	if (fe < 0)
		return fe;
	/* What the frame is must come from captured bytes, not from the zero fill. */
	if (fe != RFW_FRAME_ERR_OK ||
	    (v.kind != RFW_FRAME_NOT_IP && (uint64_t)v.l4_off + RFW_UDP_HLEN > caplen)) {
		c->malformed++;
		return 0;
	}
	if (v.kind != RFW_FRAME_ROCEV2) {
		c->other++;
		return 0;
	}
	if (v.ib_len < RFW_BTH_LEN || (uint64_t)v.ib_off + RFW_BTH_LEN > caplen) {
		c->malformed++;
		return 0;
	}
	c->roce++;
	bth = data + v.ib_off;
	oi = rfw_ib_opcode_info(rfw_bth_opcode(bth));
	if (oi == NULL) {
		c->malformed++;
		return 0;
	}
	if (oi->flags & RFW_OPF_CNP)
		return frame_cnp(c, &v, bth, ts);
	if ((oi->hdrs & RFW_HDR_AETH) && !(oi->flags & RFW_OPF_PAYLOAD))
		return frame_ack(c, &v, bth, caplen);
	if ((oi->flags & RFW_OPF_PAYLOAD) && (oi->flags & (RFW_OPF_REQUEST | RFW_OPF_READ))) {
		/* Data: requests with payload (SEND, WRITE) and READ responses. */
		struct rfw_cc_flow *f = flow_get(c, &v, rfw_bth_dqpn(bth), ts);

		if (f == NULL)
			return -ENOMEM;
		on_data(c, f, f->idx, rfw_bth_psn(bth), rfw_frame_ecn(&v), wirelen, ts);
	}
	return 0; /* READ requests, atomics: neither data nor signals */
}

/* ---- verdicts ---- */

static const char *capture_point(const struct rfw_cc_flow *f)
{
	if (f->data_pkts == 0)
		return "reverse_only";
	if (!f->rev_seen && f->rkey < 0)
		return "data_only";
	if (f->ce)
		return "after_marking";
	if (f->cnps)
		return "sender_side";
	return "no_signals";
}

/* The notification point's verdict; @rev: any reverse traffic between the hosts seen. */
static const char *np_verdict(const struct rfw_cc_flow *f, bool rev)
{
	if (f->cnp_gaps >= 1 && f->cnp_gaps_short > f->cnp_gaps / 100)
		return "cnp_too_frequent";
	if (f->ce == 0)
		/* Nothing to answer here: either the marks come after this capture point (CNPs
		 * seen, sender side) or there were none. */
		return f->cnps == 0 && rev ? "ok" : "not_visible";
	if (!rev)
		return "not_visible";
	if ((double)f->ce_unanswered > 0.1 * (double)f->ce)
		return "no_cnp_for_ce";
	return "ok";
}

/* The reaction point's verdict against the model, once it reacted: conforms, or why not. */
static const char *rp_model_verdict(const struct rfw_cc *c, struct rfw_cc_flow *f)
{
	double med = hist_quantile(f->m[0].hist, f->m[0].n, 0.5);
	double p95 = hist_quantile(f->m[0].hist, f->m[0].n, 0.95);

	if (med <= c->o.max_median_err && p95 <= c->o.max_p95_err)
		return "conforms";
	if (f->ce) {
		snprintf(f->why, sizeof(f->why),
		         "data seen after the marking queue: its rate is the queue's, not "
		         "the sender's; capture nearer the sender");
		return "not_visible";
	}
	snprintf(f->why, sizeof(f->why),
	         "relative error median %.1f %% (max %.1f), p95 %.1f %% (max %.1f)", med * 100,
	         c->o.max_median_err * 100, p95 * 100, c->o.max_p95_err * 100);
	return "deviates";
}

/* The reaction point's verdict (and f->why). */
static const char *rp_verdict(const struct rfw_cc *c, struct rfw_cc_flow *f, bool rev)
{
	uint64_t judged = f->cnps_reacted + f->cnps_unreacted;

	f->why[0] = 0;
	if (f->data_pkts < 16 || f->windows == 0) {
		snprintf(f->why, sizeof(f->why), "too few data packets or windows");
		return "not_visible";
	}
	if (f->cnps == 0)
		return f->ce && !rev ? "not_visible" : "no_congestion_signals";
	if (judged == 0) {
		snprintf(f->why, sizeof(f->why), "no CNP could be judged");
		return "no_congestion_signals";
	}
	if ((double)f->cnps_reacted < c->o.min_react_share * (double)judged &&
	    (f->ce == 0 || (double)f->ce >= 0.9 * (double)f->data_pkts)) {
		/* After the marking queue, the arrival rate is the queue's drain rate: a sender
		 * that did cut may not show it. Not reacting there only if congestion never
		 * cleared (nearly every packet CE-marked: the queue never drained). */
		snprintf(f->why, sizeof(f->why),
		         "%" PRIu64 " of %" PRIu64 " CNPs followed by a slower sending rate",
		         f->cnps_reacted, judged);
		return "not_reacting";
	}
	return f->nmodels == 0 ? "conforms" : rp_model_verdict(c, f);
}

void rfw_cc_finish(struct rfw_cc *c)
{
	if (c->finished)
		return;
	c->finished = true;
	for (uint32_t i = 0; i < c->nflows; i++) {
		struct rfw_cc_flow *f = c->flows[i];
		bool rev = f->rev_seen || f->rkey >= 0;

		/* Did any reverse traffic between the two hosts show up at all? */
		for (uint32_t k = 0; k < c->nrk && !rev; k++)
			if (!memcmp(c->rk[k].src, f->dst, 16) && !memcmp(c->rk[k].dst, f->src, 16))
				rev = true;
		f->rev_seen = rev;
		ce_expire(c, f, c->last_ts);
		if (f->pend) /* the capture ended before the reaction could show */
			f->cnps_no_cut_expected += f->pend_cnps;
		f->pend = false;
		seg_close(f);
		f->capture_point = capture_point(f);
		f->np_verdict = np_verdict(f, rev);
		f->rp_verdict = rp_verdict(c, f, rev);
	}
}

/* ---- results ---- */

void rfw_cc_stats(const struct rfw_cc *c, struct rfw_cc_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->frames = c->frames;
	s->roce = c->roce;
	s->other = c->other;
	s->malformed = c->malformed;
	s->cnps_unattributed = c->cnps_unattr;
	s->acks_unattributed = c->acks_unattr;
	s->out_of_order_ts = c->ooo_ts;
	for (uint32_t i = 0; i < c->nflows; i++)
		if (!c->flows[i]->filtered && c->flows[i]->max_win_gbps > s->max_window_gbps)
			s->max_window_gbps = c->flows[i]->max_win_gbps;
	s->max_host_gbps = c->max_host_gbps;
	s->coarse_ts = c->coarse_ts && c->nflows > 0;
}

unsigned rfw_cc_nflows(const struct rfw_cc *c)
{
	return c->nflows;
}

double rfw_cc_model_mean_err(const struct rfw_cc *c, unsigned i, unsigned m)
{
	const struct rfw_cc_flow *f = c->flows[i];

	if (m >= f->nmodels || f->m[m].n == 0)
		return -1;
	return f->m[m].err_sum / (double)f->m[m].n;
}

uint64_t rfw_cc_flow_windows(const struct rfw_cc *c, unsigned i)
{
	return c->flows[i]->windows;
}

bool rfw_cc_flow_has_signals(const struct rfw_cc *c, unsigned i)
{
	const struct rfw_cc_flow *f = c->flows[i];

	return !f->filtered && f->cnps > 0 && f->windows > 0;
}

uint64_t rfw_cc_flow_min_cnp_gap(const struct rfw_cc *c, unsigned i)
{
	return c->flows[i]->min_gap;
}

const char *rfw_cc_flow_name(const struct rfw_cc *c, unsigned i, char *buf, size_t len)
{
	const struct rfw_cc_flow *f = c->flows[i];
	char a[64], b[64];

	snprintf(buf, len, "%s -> %s qpn %u", rfw_ip_to_str(f->src, a, sizeof(a)),
	         rfw_ip_to_str(f->dst, b, sizeof(b)), f->dqpn);
	return buf;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null();
}

static json_t *stat_json(const struct stat1 *s, double scale)
{
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "mean", s->n ? jnum(s->sum / (double)s->n * scale) : json_null());
	json_object_set_new(o, "min", s->n ? jnum(s->min * scale) : json_null());
	json_object_set_new(o, "max", s->n ? jnum(s->max * scale) : json_null());
	return o;
}

static json_t *model_json(const struct rfw_cc_flow *f, unsigned i, const char *profile)
{
	const struct model *m = &f->m[i];
	json_t *o = json_object();

	json_object_set_new(o, "profile", json_string(profile));
	json_object_set_new(o, "windows", json_integer((json_int_t)m->n));
	json_object_set_new(o, "rel_err_median", jnum(hist_quantile(m->hist, m->n, 0.5)));
	json_object_set_new(o, "rel_err_p95", jnum(hist_quantile(m->hist, m->n, 0.95)));
	json_object_set_new(o, "rel_err_mean",
	                    m->n ? jnum(m->err_sum / (double)m->n) : json_null());
	json_object_set_new(o, "model_rate_cuts",
	                    json_integer((json_int_t)m->rpp->cnt[DCQCN_RP_CNT_rp_rate_cuts]));
	json_object_set_new(o, "model_cnp_handled",
	                    json_integer((json_int_t)m->rpp->cnt[DCQCN_RP_CNT_rp_cnp_handled]));
	json_object_set_new(o, "model_final_rate_gbps",
	                    jnum((double)dcqcn_rp_rate_kbps(m->rpp) / 1e6));
	return o;
}

json_t *rfw_cc_flow_json(const struct rfw_cc *c, unsigned i, const char *profile,
                         const char *whatif)
{
	const struct rfw_cc_flow *f = c->flows[i];
	json_t *o = json_object(), *ecn = json_object(), *np = json_object(), *obs = json_object();
	json_t *conf;
	char a[64];
	uint64_t judged = f->cnps_reacted + f->cnps_unreacted;
	double dur = f->last_ts > f->first_ts ? (double)(f->last_ts - f->first_ts) : 0;

	json_object_set_new(o, "src", json_string(rfw_ip_to_str(f->src, a, sizeof(a))));
	json_object_set_new(o, "dst", json_string(rfw_ip_to_str(f->dst, a, sizeof(a))));
	json_object_set_new(o, "dst_qpn", json_integer(f->dqpn));
	json_object_set_new(o, "udp_sport", json_integer(f->udp_sport));
	json_object_set_new(o, "src_qpn",
	                    f->rkey >= 0 ? json_integer(c->rk[f->rkey].dqpn) : json_null());
	json_object_set_new(o, "capture_point", json_string(f->capture_point));
	json_object_set_new(o, "data_packets", json_integer((json_int_t)f->data_pkts));
	json_object_set_new(o, "data_bytes", json_integer((json_int_t)f->data_bytes));
	json_object_set_new(o, "repeats", json_integer((json_int_t)f->repeats));
	json_object_set_new(ecn, "not_ect", json_integer((json_int_t)f->ecn[RFW_ECN_NOT_ECT]));
	json_object_set_new(ecn, "ect0", json_integer((json_int_t)f->ecn[RFW_ECN_ECT0]));
	json_object_set_new(ecn, "ect1", json_integer((json_int_t)f->ecn[RFW_ECN_ECT1]));
	json_object_set_new(ecn, "ce", json_integer((json_int_t)f->ecn[RFW_ECN_CE]));
	json_object_set_new(o, "ecn", ecn);
	json_object_set_new(o, "ce_marked", json_integer((json_int_t)f->ce));
	json_object_set_new(o, "cnps", json_integer((json_int_t)f->cnps));
	json_object_set_new(o, "acks", json_integer((json_int_t)f->acks));
	json_object_set_new(o, "naks", json_integer((json_int_t)f->naks));
	json_object_set_new(o, "duration_ns", json_integer((json_int_t)dur));
	json_object_set_new(o, "mean_rate_gbps",
	                    dur > 0 ? jnum((double)f->data_bytes * 8.0 / dur) : json_null());
	json_object_set_new(o, "np_verdict", json_string(f->np_verdict));
	json_object_set_new(o, "rp_verdict", json_string(f->rp_verdict));
	json_object_set_new(o, "reason", f->why[0] ? json_string(f->why) : json_null());

	json_object_set_new(np, "np_min_time_between_cnps_us", jnum((double)c->o.np_gap_ns / 1e3));
	json_object_set_new(np, "cnp_gaps", json_integer((json_int_t)f->cnp_gaps));
	json_object_set_new(np, "cnp_gaps_below_min", json_integer((json_int_t)f->cnp_gaps_short));
	json_object_set_new(np, "min_cnp_gap_us",
	                    f->min_gap != UINT64_MAX ? jnum((double)f->min_gap / 1e3)
	                                             : json_null());
	json_object_set_new(np, "ce_answered", json_integer((json_int_t)f->ce_answered));
	json_object_set_new(np, "ce_unanswered", json_integer((json_int_t)f->ce_unanswered));
	json_object_set_new(np, "cnps_per_ce_marked",
	                    f->ce ? jnum((double)f->cnps / (double)f->ce) : json_null());
	json_object_set_new(o, "np", np);

	json_object_set_new(obs, "windows", json_integer((json_int_t)f->windows));
	json_object_set_new(obs, "max_window_rate_gbps", jnum(f->max_win_gbps));
	json_object_set_new(obs, "cnps_followed_by_cut", json_integer((json_int_t)f->cnps_reacted));
	json_object_set_new(obs, "cnps_not_followed_by_cut",
	                    json_integer((json_int_t)f->cnps_unreacted));
	json_object_set_new(obs, "cnps_not_judged",
	                    json_integer((json_int_t)f->cnps_no_cut_expected));
	json_object_set_new(obs, "reaction_delay_us", stat_json(&f->react_delay_ns, 1e-3));
	json_object_set_new(obs, "cut_size", stat_json(&f->cut_size, 1));
	json_object_set_new(obs, "recovery_slope_gbps_per_ms", stat_json(&f->slope, 1));
	json_object_set_new(o, "observed", obs);

	conf = f->nmodels ? model_json(f, 0, profile) : json_object();
	json_object_set_new(conf, "cnps_followed_by_cut_share",
	                    judged ? jnum((double)f->cnps_reacted / (double)judged) : json_null());
	json_object_set_new(conf, "model_recovery_slope_gbps_per_ms", stat_json(&f->mslope, 1));
	json_object_set_new(o, "conformance", conf);
	if (whatif && f->nmodels > 1)
		json_object_set_new(o, "what_if", model_json(f, 1, whatif));
	return o;
}

void rfw_cc_print(const struct rfw_cc *c, FILE *out)
{
	char name[160];

	fprintf(out, "%-44s %9s %7s %6s %8s %8s %8s  %-14s %s\n", "flow (src -> dst qpn)", "data",
	        "CE", "CNPs", "Gb/s", "med_err", "p95_err", "np_verdict", "rp_verdict");
	for (uint32_t i = 0; i < c->nflows; i++) {
		const struct rfw_cc_flow *f = c->flows[i];
		double dur = f->last_ts > f->first_ts ? (double)(f->last_ts - f->first_ts) : 0;

		if (f->filtered)
			continue;
		fprintf(out,
		        "%-44s %9" PRIu64 " %7" PRIu64 " %6" PRIu64
		        " %8.2f %7.1f%% %7.1f%%  %-14s %s\n",
		        rfw_cc_flow_name(c, i, name, sizeof(name)), f->data_pkts, f->ce, f->cnps,
		        dur > 0 ? (double)f->data_bytes * 8.0 / dur : 0.0,
		        f->nmodels ? hist_quantile(f->m[0].hist, f->m[0].n, 0.5) * 100 : NAN,
		        f->nmodels ? hist_quantile(f->m[0].hist, f->m[0].n, 0.95) * 100 : NAN,
		        f->np_verdict, f->rp_verdict);
		if (f->why[0])
			fprintf(out, "    %s\n", f->why);
		fprintf(out, "    capture point %s; src QP ", f->capture_point);
		if (f->rkey >= 0)
			fprintf(out, "%u", c->rk[f->rkey].dqpn);
		else
			fprintf(out, "unknown");
		fprintf(out, "; ACKs %" PRIu64 ", NAKs %" PRIu64 ", repeats %" PRIu64 "\n", f->acks,
		        f->naks, f->repeats);
		fprintf(out,
		        "    sender: CNPs followed by a cut %" PRIu64 "/%" PRIu64
		        " (not judged %" PRIu64 ")",
		        f->cnps_reacted, f->cnps_reacted + f->cnps_unreacted,
		        f->cnps_no_cut_expected);
		if (f->react_delay_ns.n)
			fprintf(out, ", reaction delay mean %.2f us, cut mean %.1f %%",
			        f->react_delay_ns.sum / (double)f->react_delay_ns.n / 1e3,
			        f->cut_size.sum / (double)f->cut_size.n * 100);
		if (f->slope.n)
			fprintf(out, ", recovery %+.2f Gb/s per ms (model %+.2f)",
			        f->slope.sum / (double)f->slope.n,
			        f->mslope.n ? f->mslope.sum / (double)f->mslope.n : NAN);
		fprintf(out, "\n    NP: %" PRIu64 " CNP gaps, %" PRIu64 " below %.1f us",
		        f->cnp_gaps, f->cnp_gaps_short, (double)c->o.np_gap_ns / 1e3);
		if (f->min_gap != UINT64_MAX)
			fprintf(out, ", smallest %.2f us", (double)f->min_gap / 1e3);
		if (f->ce)
			fprintf(out,
			        "; CE marks answered %" PRIu64 "/%" PRIu64 ", CNPs per CE %.3f",
			        f->ce_answered, f->ce_answered + f->ce_unanswered,
			        (double)f->cnps / (double)f->ce);
		fprintf(out, "\n");
	}
}

const uint8_t *rfw_cc_flow_src(const struct rfw_cc *c, unsigned i)
{
	return c->flows[i]->src;
}

void rfw_cc_flow_verdicts(const struct rfw_cc *c, unsigned i, const char **np, const char **rp)
{
	*np = c->flows[i]->np_verdict ? c->flows[i]->np_verdict : "-";
	*rp = c->flows[i]->rp_verdict ? c->flows[i]->rp_verdict : "-";
}

bool rfw_cc_flow_filtered(const struct rfw_cc *c, unsigned i)
{
	return c->flows[i]->filtered;
}
