/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control, done once for every host: the rate machine (cc/cc.h's cc_flow: DCQCN or
 * TIMELY) and the pacer (cc/pacer.h) of each QP's scope, the notification point per QP, and the
 * transport's cc hooks. docs/nic.md "Rate and pacing".
 *
 * One byte unit: the rate machine (DCQCN's byte counter) and the pacer both count the frame as
 * it leaves the NIC, Ethernet header to ICRC (no preamble, inter-frame gap or FCS), of every
 * request packet (the packets the rate governs). Responses and CNPs are neither paced nor
 * counted.
 */
#include <errno.h>
#include <string.h>

#include "nic/fw_int.h"

/* Notification point and reaction point behind the transport's hooks. */
static bool cc_np_on_ce(void *cc, uint64_t now_ns)
{
	return dcqcn_np_on_ce(&((struct fw_qp *)cc)->np, now_ns);
}

static void cc_rp_on_cnp(void *cc, uint64_t now_ns)
{
	struct fw_qp *fq = cc;

	if (fq->rate != NULL)
		cc_on_cnp(&fq->rate->flow, now_ns);
}

static const struct rfw_cc_ops fw_cc_ops = {.np_on_ce = cc_np_on_ce, .rp_on_cnp = cc_rp_on_cnp};

/*
 * The rate entry a QP uses: under rp_scope port, the one of the QPs with the same profile;
 * under dst, the one of the QPs with the same profile and destination; else a free one.
 */
static struct fw_rate *rate_find(struct rfw_fw *fw, const struct dcqcn_prof *prof,
                                 const uint8_t dst_ip[16], uint32_t slot)
{
	struct fw_rate *free_r = NULL;
	uint8_t scope = prof != NULL ? prof->scope : DCQCN_SCOPE_QP;
	bool shared = fw->cc == RFW_FW_CC_DCQCN && scope != DCQCN_SCOPE_QP;

	/* A QP's own rate lives at its own slot when that is free (O(1) attach whatever the
	 * number of QPs); it is not only when a shared rate started there outlives its QP. */
	if (!shared && fw->rates[slot].refs == 0)
		return &fw->rates[slot];

	for (uint32_t i = 0; i < fw->max_qp; i++) {
		struct fw_rate *r = &fw->rates[i];

		if (r->refs == 0) {
			if (free_r == NULL)
				free_r = r;
			continue;
		}
		if (shared && r->prof == prof &&
		    (scope == DCQCN_SCOPE_PORT || memcmp(r->key, dst_ip, 16) == 0))
			return r;
	}
	return free_r;
}

static void rate_init(struct rfw_fw *fw, struct fw_rate *r, const struct dcqcn_prof *prof,
                      const uint8_t dst_ip[16])
{
	if (fw->cc == RFW_FW_CC_TIMELY)
		cc_flow_init_timely(&r->flow, fw->timely);
	else
		cc_flow_init_dcqcn(&r->flow, prof);
	cc_pacer_init(&r->pacer, fw->pacer_burst_ns);
	r->prof = fw->cc == RFW_FW_CC_TIMELY ? NULL : prof;
	memcpy(r->key, dst_ip, 16);
}

int fw_rate_attach(struct rfw_fw *fw, struct fw_qp *fq, const struct rfw_fw_path *path)
{
	const struct dcqcn_prof *prof = path->dcqcn != NULL ? path->dcqcn : fw->dcqcn;

	if (prof != NULL) {
		dcqcn_np_init(&fq->np, prof);
		fq->has_np = true;
	}
	if (fw->cc != RFW_FW_CC_NONE) {
		struct fw_rate *r =
		    rate_find(fw, prof, path->dst_ip, rfw_qp_num(fq->qp) - fw->qpn_base);

		if (r == NULL)
			return -ENOMEM;
		if (r->refs++ == 0)
			rate_init(fw, r, prof, path->dst_ip);
		fq->rate = r;
	}
	if (fq->has_np || fq->rate != NULL)
		rfw_qp_set_cc(fq->qp, &fw_cc_ops, fq);
	return 0;
}

void fw_rate_detach(struct rfw_fw *fw, struct fw_qp *fq)
{
	(void)fw;
	if (fq->has_np || fq->rate != NULL)
		rfw_qp_set_cc(fq->qp, NULL, NULL);
	if (fq->rate != NULL)
		fq->rate->refs--;
	fq->rate = NULL;
}

/*
 * The rate to pace requests at now, 0 for none. A DCQCN reaction point at line rate (no CNP
 * yet, or back at the maximum) has no rate limiter, as in DCQCN (SIGCOMM'15 3.1) and mlx5;
 * TIMELY at its maximum rate neither. Due rate-machine work runs first (lazily: an idle QP
 * needs no timer).
 */
uint64_t fw_rate_kbps(const struct rfw_fw *fw, struct fw_rate *r, uint64_t now_ns)
{
	if (r == NULL)
		return 0;
	if (cc_next_deadline(&r->flow) <= now_ns)
		cc_on_timer(&r->flow, now_ns);
	if (r->flow.algo == CC_ALGO_DCQCN) {
		uint8_t st = r->flow.u.dcqcn.state;

		if (st == DCQCN_RP_IDLE || st == DCQCN_RP_AT_MAX)
			return 0;
	} else if (timely_rate_kbps(&r->flow.u.timely) >= fw->timely->max_kbps) {
		return 0;
	}
	return cc_rate_kbps(&r->flow);
}

/*
 * The window of a QP under var_win_bytes, as HPCC's RdmaQueuePair::GetWin: the configured
 * bytes scaled by the rate over the maximum rate, at least one byte; no rate limiter (at the
 * maximum, or not cut yet) means the whole window. The transport counts it in PSNs.
 */
void fw_rate_win(const struct rfw_fw *fw, struct fw_qp *fq, uint64_t now_ns)
{
	uint64_t w = fw->var_win_bytes, rate, max;

	if (fq->rate == NULL)
		return;
	rate = fw_rate_kbps(fw, fq->rate, now_ns);
	max = fq->rate->prof != NULL ? fq->rate->prof->max_kbps : fw->timely->max_kbps;
	if (rate != 0 && rate < max) {
		w = w * rate / max;
		if (w == 0)
			w = 1;
	}
	rfw_qp_set_window_bytes(fq->qp, w);
}

/*
 * fw_rate_on_rx's probe out: TIMELY's, a response acknowledging the probe's PSN (an ACK
 * coalesces every PSN up to its own, IBA 9.7.5.1) completes the RTT sample (TIMELY Fig. 3:
 * completion time minus send time).
 */
void fw_rate_probe_rx(struct fw_qp *fq, const struct rfw_ib_pkt *ib, uint64_t now_ns)
{
	struct fw_rate *r = fq->rate;

	if (r->flow.algo != CC_ALGO_TIMELY || ib->op == NULL)
		return;
	if ((ib->op->flags & (RFW_OPF_REQUEST | RFW_OPF_CNP)) != 0)
		return;
	if (rfw_psn_cmp(ib->bth.psn, fq->probe_psn) < 0)
		return;
	fq->probe_out = false;
	cc_on_rtt(&r->flow, now_ns - fq->probe_ns, now_ns);
}
