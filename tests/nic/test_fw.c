/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nic/ without DPDK: NICs on the plain-buffer host of harness.h. What the firmware promises:
 * posting is the doorbell; requests are built only when the pacer lets them leave, responses
 * are never held behind them; rp_scope port / dst share one rate; TIMELY runs on RTT probes;
 * the rate machine counts frame bytes; the NIC's counters add to the transport's, not repeat
 * them; the timer wheel fires each entry on time, never a lap early; the frames from the
 * per-QP templates are byte for byte those of wire/'s general builder.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "cc/dcqcn_params.h"
#include "harness.h"
#include "nic/wheel.h"

static struct dcqcn_prof prof_of(const char *profile, const char *scope)
{
	struct dcqcn_params par;
	struct dcqcn_prof prof;
	char msg[128];

	assert_int_equal(dcqcn_params_init(&par, (enum dcqcn_profile)dcqcn_profile_lookup(profile)),
	                 0);
	if (scope != NULL)
		assert_int_equal(dcqcn_param_set(&par, "rp_scope", scope), 0);
	assert_int_equal(dcqcn_prof_config(&prof, &par, 100000, msg, sizeof(msg)), 0);
	return prof;
}

static struct h_net *net_new(const struct rfw_fw_conf *a, const struct rfw_fw_conf *b)
{
	struct h_net *net = calloc(1, sizeof(*net));

	assert_non_null(net);
	assert_int_equal(h_nic_init(net, 0, a), 0);
	assert_int_equal(h_nic_init(net, 1, b), 0);
	return net;
}

static void net_free(struct h_net *net, struct rfw_qp **qps, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int nic = rfw_fw_qp_attached(net->nic[0].fw, qps[i]) ? 0 : 1;

		rfw_fw_qp_detach(net->nic[nic].fw, qps[i]);
		rfw_destroy_qp(qps[i]);
	}
	h_nic_fini(&net->nic[0]);
	h_nic_fini(&net->nic[1]);
	free(net);
}

/* A pair of connected QPs, A (NIC 0, 10.0.0.1) -> B (NIC 1, at 10.0.0.(@dst_host + 1)). */
static void pair(struct h_net *net, struct rfw_qp **qa, struct rfw_qp **qb, uint32_t dst_host)
{
	*qa = h_qp(&net->nic[0], 1, 0, dst_host);
	*qb = h_qp(&net->nic[1], 0, dst_host, 0);
	assert_non_null(*qa);
	assert_non_null(*qb);
	assert_int_equal(h_connect(*qa, rfw_qp_num(*qb), 0, dst_host), 0);
	assert_int_equal(h_connect(*qb, rfw_qp_num(*qa), dst_host, 0), 0);
}

/*
 * NIC 0's QP @qa sends WRITEs whose first frames are CE-marked, 200 us apart (more than any
 * profile's np_min_time_between_cnps): B's NP answers with CNPs, A's rate machine cuts.
 */
static void cut_rate(struct h_net *net, struct rfw_qp *qa)
{
	for (int i = 0; i < 6; i++) {
		net->ce_to_1 = 4;
		assert_int_equal(h_write(&net->nic[0], qa, 0, 65536, &net->nic[1], 0), 0);
		assert_int_equal(h_run_until(net, &net->nic[0], 1, 100000000, 100), 1);
		h_run(net, 200000, 1000);
	}
	net->ce_to_1 = 0;
}

/* WRITE delivered byte for byte; posting alone made the QP ready (no kick call exists). */
static void test_write_doorbell(void **state)
{
	struct rfw_fw_conf c = {0};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_qp *q[2];
	uint64_t t[RFW_CNT__COUNT];
	const uint8_t *hdr;

	(void)state;
	pair(net, &q[0], &q[1], 1);
	h_run(net, 10000, 100); /* the attach made them ready once: let that pass */
	assert_false(rfw_fw_ready(a->fw));
	for (uint32_t i = 0; i < 10000; i++)
		a->mem[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(h_write(a, q[0], 0, 10000, b, 4096), 0);
	assert_true(rfw_fw_ready(a->fw));
	h_run(net, 100000, 100);
	assert_int_equal(h_reap(a), 1);
	assert_memory_equal(a->mem, b->mem + 4096, 10000);
	assert_int_equal(rfw_fw_ctr(b->fw, RFW_FW_CTR_rx_bad_frame), 0);
	/* One owner per event: the NIC's frame bytes are the transport's IB bytes plus, per
	 * packet, the header template and the ICRC. */
	rfw_qp_counters(q[0], t);
	assert_int_equal(rfw_fw_qp_hdr(a->fw, q[0], &hdr), 42);
	assert_int_equal(rfw_fw_qp_ctr(a->fw, q[0], RFW_FW_QP_CTR_tx_frame_bytes),
	                 t[RFW_CNT_tx_bytes] + t[RFW_CNT_tx_packets] * (42 + RFW_ICRC_LEN));
	assert_int_equal(t[RFW_CNT_tx_packets], a->nsent);
	net_free(net, q, 2);
}

/*
 * rp_scope port: the two QPs of a port hold one rate machine, so CNPs for either cut the rate
 * both are paced at, and the snapshots telemetry reads show one rate. rp_scope qp: two.
 */
static void scope_case(const char *scope, bool shared)
{
	struct dcqcn_prof prof = prof_of("shared-port", scope);
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_DCQCN, .dcqcn = &prof};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0];
	struct rfw_qp *q[4];
	struct rfw_fw_snap s0, s1;
	uint32_t base = rfw_fw_qpn_base(a->fw);

	pair(net, &q[0], &q[1], 1);
	pair(net, &q[2], &q[3], 1);
	assert_true((rfw_fw_qp_flow(a->fw, q[0]) == rfw_fw_qp_flow(a->fw, q[2])) == shared);
	cut_rate(net, q[0]); /* only QP 0 sends */
	assert_true(rfw_fw_qp_rate_kbps(a->fw, q[0], net->now) < prof.line_kbps);
	assert_true((rfw_fw_qp_rate_kbps(a->fw, q[2], net->now) ==
	             rfw_fw_qp_rate_kbps(a->fw, q[0], net->now)) == shared);
	rfw_fw_publish(a->fw, rfw_qp_num(q[0]) - base, net->now);
	rfw_fw_publish(a->fw, rfw_qp_num(q[2]) - base, net->now);
	assert_true(rfw_fw_snap_read(a->fw, rfw_qp_num(q[0]) - base, &s0));
	assert_true(rfw_fw_snap_read(a->fw, rfw_qp_num(q[2]) - base, &s1));
	assert_true((s0.rate_kbps == s1.rate_kbps) == shared);
	assert_int_equal(s0.scope, shared ? DCQCN_SCOPE_PORT : DCQCN_SCOPE_QP);
	net_free(net, q, 4);
}

static void test_scope_port(void **state)
{
	(void)state;
	scope_case(NULL, true); /* the shared-port profile's own rp_scope: port */
	scope_case("qp", false);
}

/*
 * Telemetry snapshots: an idle QP's (nothing sent or received, same state, its own rate) is only
 * re-dated; one that moved, or whose rate another QP shares, is published again in full.
 */
static void publish_ctrs(struct rfw_fw *fw, uint32_t slot, uint64_t now, uint64_t *full,
                         uint64_t *redated, struct rfw_fw_snap *s)
{
	uint64_t f0 = rfw_fw_ctr(fw, RFW_FW_CTR_snapshots);
	uint64_t r0 = rfw_fw_ctr(fw, RFW_FW_CTR_snapshots_unchanged);

	rfw_fw_publish(fw, slot, now);
	*full = rfw_fw_ctr(fw, RFW_FW_CTR_snapshots) - f0;
	*redated = rfw_fw_ctr(fw, RFW_FW_CTR_snapshots_unchanged) - r0;
	assert_true(rfw_fw_snap_read(fw, slot, s));
	assert_int_equal(s->at_ns, now);
}

static void test_snapshot_unchanged(void **state)
{
	struct dcqcn_prof prof = prof_of("shared-port", NULL); /* rp_scope port */
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_DCQCN, .dcqcn = &prof};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0];
	struct rfw_qp *q[4];
	struct rfw_fw_snap s;
	uint32_t base = rfw_fw_qpn_base(a->fw), s0, s2;
	uint64_t full, redated, tx;

	(void)state;
	pair(net, &q[0], &q[1], 1);
	h_run(net, 10000, 100);
	s0 = rfw_qp_num(q[0]) - base;
	publish_ctrs(a->fw, s0, net->now, &full, &redated, &s);
	assert_true(full == 1 && redated == 0);
	publish_ctrs(a->fw, s0, net->now + 1000, &full, &redated, &s);
	assert_true(full == 0 && redated == 1); /* idle, its own rate: re-dated */
	tx = s.tcnt[RFW_CNT_tx_packets];
	assert_int_equal(h_write(a, q[0], 0, 8192, &net->nic[1], 0), 0);
	assert_int_equal(h_run_until(net, a, 1, 100000000, 100), 1);
	publish_ctrs(a->fw, s0, net->now, &full, &redated, &s);
	assert_true(full == 1 && redated == 0);
	assert_true(s.tcnt[RFW_CNT_tx_packets] > tx); /* the new count is in the snapshot */
	/* a second QP of the port shares the rate: both are published in full from now on */
	pair(net, &q[2], &q[3], 1);
	h_run(net, 10000, 100);
	s2 = rfw_qp_num(q[2]) - base;
	publish_ctrs(a->fw, s2, net->now, &full, &redated, &s);
	publish_ctrs(a->fw, s2, net->now + 1000, &full, &redated, &s);
	assert_true(full == 1 && redated == 0);
	publish_ctrs(a->fw, s0, net->now + 2000, &full, &redated, &s);
	assert_true(full == 1 && redated == 0);
	net_free(net, q, 4);
}

/* rp_scope dst: QPs to one destination share a rate machine, to another they do not. */
static void test_scope_dst(void **state)
{
	struct dcqcn_prof prof = prof_of("unified", "dst");
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_DCQCN, .dcqcn = &prof};
	struct h_net *net = net_new(&c, &c);
	struct rfw_qp *q[6];

	(void)state;
	pair(net, &q[0], &q[1], 1);
	pair(net, &q[2], &q[3], 2); /* 10.0.0.3 (delivered to NIC 1 all the same) */
	pair(net, &q[4], &q[5], 1);
	assert_ptr_equal(rfw_fw_qp_flow(net->nic[0].fw, q[0]),
	                 rfw_fw_qp_flow(net->nic[0].fw, q[4]));
	assert_ptr_not_equal(rfw_fw_qp_flow(net->nic[0].fw, q[0]),
	                     rfw_fw_qp_flow(net->nic[0].fw, q[2]));
	net_free(net, q, 6);
}

/*
 * Paced at a cut rate (strict spacing): the transport builds a request only when it may leave.
 * After every step, the requests the transport built equal the frames that left (nothing built
 * and held), consecutive requests are spaced by their frame time at the rate, and the
 * responses A owes B leave while A's requests wait for the pacer.
 */
static void test_paced_schedule(void **state)
{
	struct dcqcn_prof prof = prof_of("unified", NULL);
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_DCQCN, .dcqcn = &prof, .pacer_burst_set = true};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_qp *q[2];
	uint64_t t[RFW_CNT__COUNT], rate;
	unsigned first, reqs = 0, acks_to_b = 0;

	(void)state;
	pair(net, &q[0], &q[1], 1);
	cut_rate(net, q[0]);
	rate = rfw_fw_qp_rate_kbps(a->fw, q[0], net->now);
	assert_true(rate < prof.line_kbps); /* cut: requests are paced */
	first = a->nsent;
	assert_int_equal(h_write(a, q[0], 0, 32768, b, 0), 0);
	assert_int_equal(h_write(b, q[1], 0, 8192, a, 65536), 0);
	for (unsigned i = 0; i < 1000000 && h_reap(a) == 0; i++) {
		h_run(net, 100, 100);
		rfw_qp_counters(q[0], t);
		assert_int_equal(t[RFW_CNT_tx_packets], a->nsent);
	}
	for (unsigned i = first; i < a->nsent; i++) {
		const struct h_sent *s = &a->sent[i];

		if (s->opcode <= RFW_OP_RC_RDMA_WRITE_ONLY_IMM) {
			const struct h_sent *p = &a->sent[first];
			/* the previous request: its frame time at the rate bounds the gap */
			for (unsigned k = first; k < i; k++)
				if (a->sent[k].opcode <= RFW_OP_RC_RDMA_WRITE_ONLY_IMM)
					p = &a->sent[k];
			if (reqs++ > 0)
				assert_true(s->t - p->t + 100 >= (uint64_t)p->len * 8000000 / rate);
		} else if (s->opcode == RFW_OP_RC_ACKNOWLEDGE && s->qpn_dst == rfw_qp_num(q[1])) {
			acks_to_b++;
		}
	}
	assert_int_equal(reqs, 32);
	assert_true(acks_to_b >= 1);
	assert_int_equal(h_reap(b), 1); /* B's WRITE completed: A's ACK was not held */
	assert_true(rfw_fw_ctr(a->fw, RFW_FW_CTR_pacer_waits) > 0);
	net_free(net, q, 2);
}

/*
 * The oracle: HPCC's RdmaQueuePair::GetWin with m_var_win (simulation/src/point-to-point/
 * model/rdma-queue-pair.cc), in its own integer arithmetic: the window in bytes, the rate
 * over the maximum rate, never 0. A packet may leave while the bytes in flight are below it
 * (IsWinBound), so with full-MTU packets at most ceil(w / MTU) are in flight.
 */
static uint64_t hpcc_var_win_pkts(uint64_t win, uint64_t rate_bps, uint64_t max_bps, uint64_t mtu)
{
	uint64_t w = win * rate_bps / max_bps;

	if (w == 0)
		w = 1;
	return (w + mtu - 1) / mtu;
}

/*
 * A's WRITE of @len after the cut; returns the most request PSNs it had in flight, each
 * checked against @win_bytes at the rate of that moment (the rate only rises after the cut,
 * so the rate after a step bounds the one each packet left at) and, with @var, against the
 * oracle; *@max_allowed: the oracle's largest window seen.
 */
static uint32_t var_win_run(struct h_net *net, struct rfw_qp **q, uint32_t len, bool var,
                            uint64_t win_bytes, const struct dcqcn_prof *prof,
                            uint64_t *max_allowed)
{
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	unsigned first = a->nsent, seen = a->nsent, acks = b->nsent;
	uint32_t psn0 = 0, next = 0, acked = 0, most = 0;
	bool started = false;

	assert_int_equal(h_write(a, q[0], 0, len, b, 0), 0);
	for (unsigned i = 0; i < 10000000 && h_reap(a) == 0; i++) {
		uint64_t rate, allowed;

		h_run(net, 100, 100);
		rate = rfw_fw_qp_rate_kbps(a->fw, q[0], net->now);
		allowed = hpcc_var_win_pkts(win_bytes, (rate ? rate : prof->max_kbps) * 1000,
		                            prof->max_kbps * 1000, 1024);
		if (allowed > *max_allowed)
			*max_allowed = allowed;
		for (; acks < b->nsent && b->sent[acks].t + H_DELAY <= net->now; acks++)
			if (b->sent[acks].opcode == RFW_OP_RC_ACKNOWLEDGE && started)
				acked = b->sent[acks].psn - psn0 + 1;
		for (; seen < a->nsent; seen++) {
			const struct h_sent *s = &a->sent[seen];

			if (s->opcode > RFW_OP_RC_RDMA_WRITE_ONLY_IMM)
				continue;
			if (!started)
				psn0 = s->psn, started = true;
			assert_true(s->ackreq || !var); /* var: every request asks for its ACK */
			next = s->psn - psn0 + 1;
			if (next - acked > most)
				most = next - acked;
			if (var)
				assert_true(next - acked <= allowed);
		}
	}
	assert_int_equal(h_reap(b), 0);
	assert_true(a->nsent > first);
	return most;
}

/*
 * rfw_fw_conf.var_win_bytes: the go-back-N window follows the rate as HPCC's VAR_WIN. After
 * a cut, A may have at most the oracle's window in flight, and does reach it; with the fixed
 * window of the same size it reaches the whole of it. ack_every other than 1 is refused.
 */
static void test_var_win(void **state)
{
	struct dcqcn_prof prof = prof_of("unified", NULL);
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_DCQCN,
	                        .dcqcn = &prof,
	                        .pacer_burst_set = true,
	                        .dev_attr = {.max_unacked_psns = 8}};
	struct rfw_fw_conf cv = c;
	struct rfw_qp *q[2];
	struct h_net *net;
	uint64_t allowed = 0;
	uint32_t most;

	(void)state;
	cv.var_win_bytes = 8 * 1024;
	cv.dev_attr.ack_every = 64;
	assert_null(rfw_fw_create(&cv, &h_ops, NULL));
	cv.dev_attr.ack_every = 0;
	for (int var = 0; var < 2; var++) {
		net = net_new(var ? &cv : &c, &c);
		pair(net, &q[0], &q[1], 1);
		for (int k = 0; k < 4 && !(rfw_fw_qp_rate_kbps(net->nic[0].fw, q[0], net->now) <
		                           prof.max_kbps * 4 / 5);
		     k++)
			cut_rate(net, q[0]);
		assert_true(rfw_fw_qp_rate_kbps(net->nic[0].fw, q[0], net->now) <
		            prof.max_kbps * 4 / 5);
		allowed = 0;
		most = var_win_run(net, q, 128 * 1024, var, 8 * 1024, &prof, &allowed);
		print_message("var_win %d: most in flight %u, oracle's largest window %lu\n", var,
		              most, (unsigned long)allowed);
		if (var) {
			assert_true(allowed < 8);
			assert_int_equal(most, allowed); /* at most the oracle's, and all of it */
		} else {
			assert_int_equal(most, 8);
		}
		net_free(net, q, 2);
	}
}

/* The byte counter counts the frame as it leaves: Ethernet header to ICRC. */
static void test_byte_unit(void **state)
{
	struct dcqcn_prof prof = prof_of("unified", NULL);
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_DCQCN, .dcqcn = &prof};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_qp *q[2];
	const struct dcqcn_rp *rp;
	uint64_t before;

	(void)state;
	pair(net, &q[0], &q[1], 1);
	cut_rate(net, q[0]);
	rp = &rfw_fw_qp_flow(a->fw, q[0])->u.dcqcn;
	assert_true(rp->state != DCQCN_RP_IDLE && rp->byte_left != UINT64_MAX);
	before = rp->byte_left;
	assert_int_equal(h_write(a, q[0], 0, 1000, b, 0), 0); /* one WRITE ONLY: 12 + 16 + 1000 */
	assert_int_equal(h_run_until(net, a, 1, 100000000, 100), 1);
	assert_int_equal(before - rp->byte_left, 42 + 12 + 16 + 1000 + RFW_ICRC_LEN);
	net_free(net, q, 2);
}

/* TIMELY on the NIC: requests with AckReq are RTT probes; their ACKs feed cc_on_rtt. */
static void test_timely(void **state)
{
	struct timely_params tp;
	struct timely_prof prof;
	struct rfw_fw_conf c = {.cc = RFW_FW_CC_TIMELY, .timely = &prof};
	struct h_net *net;
	struct h_nic *a;
	struct rfw_qp *q[2];
	const struct cc_flow *f;
	char msg[128];

	(void)state;
	timely_params_init(&tp);
	assert_int_equal(timely_prof_config(&prof, &tp, 100000, msg, sizeof(msg)), 0);
	net = net_new(&c, &c);
	a = &net->nic[0];
	pair(net, &q[0], &q[1], 1);
	/* One probe in flight at a time: a message at a time gives one sample each. */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(h_write(a, q[0], 0, 8192, &net->nic[1], 0), 0);
		assert_int_equal(h_run_until(net, a, 1, 1000000, 100), 1);
	}
	f = rfw_fw_qp_flow(a->fw, q[0]);
	assert_int_equal(f->algo, CC_ALGO_TIMELY);
	assert_int_equal(f->u.timely.cnt[TIMELY_CNT_timely_rtt_samples], 4);
	/* RTT = two wire delays plus a step or two: TIMELY's low-RTT region, so no decrease. */
	assert_true(f->u.timely.prev_rtt_ns >= 2 * H_DELAY && f->u.timely.prev_rtt_ns < 10000);
	net_free(net, q, 2);
}

struct fired {
	unsigned n;
	uint64_t at[8];
	uint64_t when[8];
	uint64_t now;
};

static void on_fire(void *ctx, struct fw_wnode *n)
{
	struct fired *f = ctx;

	f->at[f->n] = n->at;
	f->when[f->n++] = f->now;
}

/*
 * tx_room: a class without room holds back only its own QPs (they stay ready and go once the
 * host has room again); the other class's WRITE completes meanwhile.
 */
static void test_tx_room(void **state)
{
	struct rfw_fw_conf c = {0};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_qp *q[4];

	(void)state;
	pair(net, &q[0], &q[1], 1);
	q[2] = h_qp_prio(a, 1, 0, 1, 3);
	q[3] = h_qp(b, 0, 1, 0);
	assert_non_null(q[2]);
	assert_non_null(q[3]);
	assert_int_equal(h_connect(q[2], rfw_qp_num(q[3]), 0, 1), 0);
	assert_int_equal(h_connect(q[3], rfw_qp_num(q[2]), 1, 0), 0);
	h_run(net, 10000, 100);
	net->paused = 1u << 3;
	a->nsent = 0;
	assert_int_equal(h_write(a, q[2], 0, 8192, b, 0), 0);
	assert_int_equal(h_write(a, q[0], 8192, 8192, b, 8192), 0);
	assert_int_equal(h_run_until(net, a, 1, 1000000, 100), 1); /* q[0]'s */
	h_run(net, 100000, 100);
	assert_int_equal(h_reap(a), 0); /* q[2]'s is still waiting */
	for (unsigned i = 0; i < a->nsent; i++)
		assert_int_equal(a->sent[i].qpn_dst, rfw_qp_num(q[1]));
	assert_true(rfw_fw_ctr(a->fw, RFW_FW_CTR_tx_room_waits) > 0);
	assert_true(rfw_fw_ready(a->fw));
	net->paused = 0;
	assert_int_equal(h_run_until(net, a, 1, 1000000, 100), 1);
	net_free(net, q, 4);
}

/*
 * Round robin under a full host queue: the host takes one frame per run (a link that drains
 * one frame at a time). A QP whose class was full before it sent keeps its turn, so a short
 * WRITE posted behind a long one goes out interleaved with it, not after it (rocefw-ns3 saw
 * a 7.5 KB flow wait 2.3 ms behind a 28 MB one before this rule).
 */
static void test_tx_room_round_robin(void **state)
{
	struct rfw_fw_conf c = {0};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_qp *q[4];
	int done_short = -1, got = 0;

	(void)state;
	pair(net, &q[0], &q[1], 1);
	pair(net, &q[2], &q[3], 1);
	h_run(net, 10000, 100);
	assert_int_equal(h_write(a, q[0], 0, 65536, b, 0), 0);
	for (int step = 0; step < 400 && got < 2; step++) {
		if (step == 5)
			assert_int_equal(h_write(a, q[2], 65536, 8192, b, 65536), 0);
		net->room = 1;
		net->now += 100;
		h_step(net);
		/* As rocefw-ns3's host: run again while frames still go out. */
		while (rfw_fw_run(a->fw, net->now) != 0 && rfw_fw_ready(a->fw))
			;
		for (int k = h_reap(a); k > 0; k--)
			if (++got == 1)
				done_short = step;
	}
	net->room = -1;
	/* 64 + 8 frames at one per step: the short WRITE (8 frames) is first, within ~2 x 8 steps
	 * of its post (plus the wire's delay for its ACK), not after the long one's 64. */
	assert_int_equal(got, 2);
	print_message("short WRITE done at step %d\n", done_short);

	assert_true(done_short > 5 && done_short < 5 + 2 * 8 + 20);
	net_free(net, q, 4);
}

/*
 * A run ends once every class that has QPs was refused room: with the host's queue full, eight
 * ready QPs of one class cost one refused turn per run, not eight (at 16,384 QPs a turn each
 * per poll slowed the DPDK host's RX until ACKs came too late). They stay ready and all send
 * once there is room.
 */
static void test_tx_room_run_ends(void **state)
{
	struct rfw_fw_conf c = {0};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_qp *q[16];
	uint64_t waits;

	(void)state;
	for (unsigned i = 0; i < 8; i++)
		pair(net, &q[2 * i], &q[2 * i + 1], 1);
	h_run(net, 10000, 100);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(h_write(a, q[2 * i], i * 4096, 4096, b, i * 4096), 0);
	net->room = 0;
	waits = rfw_fw_ctr(a->fw, RFW_FW_CTR_tx_room_waits);
	assert_int_equal(rfw_fw_run(a->fw, net->now), 0);
	assert_int_equal(rfw_fw_ctr(a->fw, RFW_FW_CTR_tx_room_waits), waits + 1);
	assert_true(rfw_fw_ready(a->fw));
	net->room = -1;
	assert_int_equal(h_run_until(net, a, 8, 1000000, 100), 8);
	net_free(net, q, 16);
}

/* Entries fire at the first advance at or after their time, in order, never a lap early. */
static void test_wheel(void **state)
{
	static struct fw_wheel w;
	struct fw_wnode n[4] = {0};
	struct fired f = {0};
	const uint64_t lap = FW_WHEEL_SLOTS << 8;

	(void)state;
	fw_wheel_init(&w, 8, 1000);
	fw_wheel_insert(&w, &n[0], 5000);
	fw_wheel_insert(&w, &n[1], 5000 + lap); /* same slot, next lap */
	fw_wheel_insert(&w, &n[2], 3000);
	fw_wheel_insert(&w, &n[3], 900); /* in the past: the next advance */
	assert_int_equal(fw_wheel_next(&w), 900);
	for (f.now = 1000; f.now < 6000 + lap; f.now += 700)
		fw_wheel_expire(&w, f.now, on_fire, &f);
	assert_int_equal(f.n, 4);
	assert_int_equal(f.at[0], 900);
	assert_int_equal(f.at[1], 3000);
	assert_int_equal(f.at[2], 5000);
	assert_int_equal(f.at[3], 5000 + lap);
	for (unsigned i = 0; i < 4; i++)
		assert_true(f.when[i] >= f.at[i] && f.when[i] < f.at[i] + 700);
	assert_int_equal(fw_wheel_next(&w), UINT64_MAX);
	/* Removal clears the slot's bit: an advance across it finds nothing. */
	fw_wheel_insert(&w, &n[0], f.now + 10000);
	fw_wheel_remove(&w, &n[0]);
	assert_int_equal(fw_wheel_next(&w), UINT64_MAX);
	/* Started at time 0 with 65.5 us slots, an entry due in the first slot fires when its time
	 * comes (the first tick had been taken as visited: a simulator waking at the time
	 * fw_wheel_next() gave found nothing due, asked again, and spun). */
	fw_wheel_init(&w, 16, 0);
	f.n = 0;
	fw_wheel_insert(&w, &n[0], 10000);
	assert_int_equal(fw_wheel_next(&w), 10000);
	f.now = 10000;
	fw_wheel_expire(&w, f.now, on_fire, &f);
	assert_int_equal(f.n, 1);
}

struct wheel_model {
	struct fw_wnode n[64];
	struct fw_wheel *w;
	uint64_t now, seed;
	bool rearm; /* the fire callback re-arms some entries, as the NIC's timers do */
	unsigned early, fired, rearmed;
};

static void model_fire(void *ctx, struct fw_wnode *n)
{
	struct wheel_model *m = ctx;

	m->early += n->at > m->now;
	m->fired++;
	m->seed = m->seed * 6364136223846793005ull + 1442695040888963407ull;
	if (m->rearm && (m->seed >> 60) < 6) {
		/* Due again: already (a slot this advance may have passed), or soon. */
		uint64_t d = m->seed >> 30 & 0xffff;

		fw_wheel_insert(m->w, n,
		                (m->seed >> 59 & 1) && m->now > d ? m->now - d : m->now + d);
		m->rearmed++;
	}
}

/* The earliest armed entry's time by looking at every entry: what fw_wheel_next() must say. */
static uint64_t model_next(const struct wheel_model *m, unsigned *due)
{
	uint64_t best = UINT64_MAX;

	*due = 0;
	for (unsigned i = 0; i < 64; i++) {
		if (!m->n[i].armed)
			continue;
		best = m->n[i].at < best ? m->n[i].at : best;
		*due += m->n[i].at <= m->now;
	}
	return best;
}

/*
 * The wheel against its definition, over random inserts (some already due), removals, advances
 * (steps of a few slots to several laps) and entries re-armed from the fire callback, at slot
 * widths 1 ns to 64 us: after each advance nothing due is left armed (but what a fire re-armed
 * into a passed slot, which the next advance takes) and nothing fired early, and
 * fw_wheel_next() is the earliest armed time.
 */
static void test_wheel_model(void **state)
{
	static struct fw_wheel w;
	static struct wheel_model m;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (unsigned shift = 0; shift <= 16; shift += 4) {
		const uint64_t lap = (uint64_t)FW_WHEEL_SLOTS << shift;

		memset(&m, 0, sizeof(m));
		m.now = 12345;
		m.w = &w;
		m.seed = shift + 1;
		fw_wheel_init(&w, (uint8_t)shift, m.now);
		for (unsigned step = 0; step < 20000; step++) {
			unsigned i, due;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			i = (unsigned)(seed >> 58);
			if ((seed >> 40 & 7) == 0)
				fw_wheel_remove(&w, &m.n[i]);
			else if ((seed >> 40 & 7) < 4)
				fw_wheel_insert(&w, &m.n[i],
				                m.now + (seed >> 20 & 0xfffff) % (3 * lap));
			else if ((seed >> 40 & 7) < 5) /* already due: at the next advance */
				fw_wheel_insert(&w, &m.n[i], m.now - (seed >> 20 & 0xfff) % m.now);
			else
				m.now += (seed >> 8 & 0xffff) %
				         ((seed >> 44 & 1) ? 4 * lap : 64ull << shift);
			/* What a fire re-arms into a slot already passed waits for the next
			 * advance: a second one at the same time, re-arming nothing, must leave
			 * nothing due. */
			m.rearm = true;
			fw_wheel_expire(&w, m.now, model_fire, &m);
			m.rearm = false;
			fw_wheel_expire(&w, m.now, model_fire, &m);
			assert_int_equal(fw_wheel_next(&w), model_next(&m, &due));
			assert_int_equal(due, 0);
		}
		assert_int_equal(m.early, 0);
		assert_true(m.fired > 1000 && m.rearmed > 100);
	}
}

/*
 * The frame the NIC sends from its per-QP template (copied in 32-byte pieces, lengths, IPv4
 * checksum and ICRC patched in) is byte for byte the one wire/'s general builder makes from
 * the same fields, for each template: IPv4 and IPv6 (with and without its UDP checksum),
 * untagged and 802.1Q-tagged (42, 46, 62 and 66 header bytes).
 */
static void frame_case(unsigned ver, bool vlan, bool udp6_csum)
{
	struct rfw_fw_conf c = {.udp6_csum = udp6_csum};
	struct h_net *net = net_new(&c, &c);
	struct h_nic *a = &net->nic[0];
	struct rfw_qp_init_attr ia = {.send_cq = a->cq, .recv_cq = a->cq, .sq_sig_all = true};
	struct rfw_qp_attr init = {.qp_state = RFW_QPS_INIT,
	                           .qp_access_flags = RFW_ACCESS_REMOTE_WRITE};
	struct rfw_fw_path p = {.src_mac = {2, 0, 0, 0, 0, 0x10},
	                        .dst_mac = {2, 0, 0, 0, 0, 0x11},
	                        .vlan = vlan,
	                        .vlan_id = 100,
	                        .pcp = 3,
	                        .dscp = 26,
	                        .cnp_dscp = 48};
	struct rfw_frame_spec sp = {.ip_ver = (uint8_t)ver, .ttl = 64, .df = true};
	static uint8_t out[H_FRAME];
	const struct h_frame *f;
	struct rfw_frame_view v;
	struct rfw_qp *qp;
	int off;

	ia.cap = (struct rfw_qp_cap){.max_send_wr = 8, .max_send_sge = 1, .max_recv_sge = 1};
	qp = rfw_create_qp(a->pd, &ia);
	assert_non_null(qp);
	assert_int_equal(rfw_modify_qp(qp, &init, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS), 0);
	if (ver == 4) {
		rfw_ip4_to_mapped(p.src_ip, 0x0a000001u);
		rfw_ip4_to_mapped(p.dst_ip, 0x0a000002u);
	} else {
		memcpy(p.src_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(p.dst_ip, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	}
	assert_int_equal(rfw_fw_qp_attach(a->fw, qp, &p), 0);
	assert_int_equal(h_connect_gids(qp, 0x42, p.src_ip, p.dst_ip), 0);
	for (uint32_t i = 0; i < 200; i++)
		a->mem[i] = (uint8_t)(i * 13 + ver + vlan);
	memset(net->q[0].data, 0xa5, H_FRAME); /* every byte of the frame must be written */
	assert_int_equal(h_write(a, qp, 0, 61 + 4 * ver, &net->nic[1], 0), 0);
	net->now += 100;
	rfw_fw_run(a->fw, net->now); /* sent, not delivered: the frame stays in the queue */
	assert_int_equal(net->tail, 1);
	f = &net->q[0];
	assert_int_equal(rfw_frame_parse_eth(f->data, f->len, &v), RFW_FRAME_ERR_OK);
	assert_int_equal(v.kind, RFW_FRAME_ROCEV2);
	assert_int_equal(v.nvlan, vlan ? 1 : 0);
	assert_true(rfw_frame_icrc_ok(f->data, &v));

	memcpy(sp.dst_mac, p.dst_mac, 6);
	memcpy(sp.src_mac, p.src_mac, 6);
	sp.nvlan = vlan ? 1 : 0;
	sp.vlan_tci[0] = (uint16_t)(p.pcp << 13 | p.vlan_id);
	sp.tos = (uint8_t)(p.dscp << 2 | RFW_ECN_ECT0);
	memcpy(sp.src_ip, p.src_ip, 16);
	memcpy(sp.dst_ip, p.dst_ip, 16);
	sp.udp_sport = v.udp_sport;
	sp.udp_csum = ver == 6 && udp6_csum;
	off = rfw_frame_build_hdrs(out, sizeof(out), &sp, v.ib_len);
	assert_int_equal(off, v.ib_off);
	memcpy(out + off, f->data + v.ib_off, v.ib_len);
	assert_int_equal(rfw_frame_finalize(out, &sp, v.ib_len), f->len);
	assert_memory_equal(out, f->data, f->len);
	net_free(net, &qp, 1);
}

/* A signaled send WR of @op from @n's memory (@len bytes at @off; with @split, two SGEs: the
 * first @split bytes there, the rest 64 KiB further on) to @peer's memory at @roff. */
static void post_op(struct h_nic *n, struct rfw_qp *qp, enum rfw_wr_opcode op, uint32_t off,
                    uint32_t len, uint32_t split, const struct h_nic *peer, uint32_t roff)
{
	uint32_t lkey = rfw_mr_lkey(n->mr);
	struct rfw_sge sge[2] = {{(uint64_t)(uintptr_t)(n->mem + off), split ? split : len, lkey},
	                         {(uint64_t)(uintptr_t)(n->mem + off + 65536), len - split, lkey}};
	struct rfw_send_wr wr = {.wr_id = off,
	                         .sg_list = sge,
	                         .num_sge = split ? 2 : 1,
	                         .opcode = op},
	                   *bad;

	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(peer->mem + roff);
	wr.wr.rdma.rkey = rfw_mr_rkey(peer->mr);
	assert_int_equal(rfw_post_send(qp, &wr, &bad, n->net->now), 0);
}

/*
 * One workload on a fresh pair, NIC hosts @ops, payloads from @ref_min bytes sent from the MR:
 * every frame both NICs sent captured into @cap[0], @cap[1] (lengths out in @len), the
 * frames each sent from the MR into @refs and those it copied with the ICRC in one pass into
 * @copies.
 */
static void ref_run(const struct rfw_fw_host_ops *ops, uint32_t ref_min, uint8_t *mem[2],
                    uint8_t *cap[2], size_t len[2], uint64_t refs[2], uint64_t copies[2])
{
	struct rfw_fw_conf c = {.dev_attr.tx_ref_min = ref_min};
	struct h_net *net = calloc(1, sizeof(*net));
	struct h_nic *a = &net->nic[0], *b = &net->nic[1];
	struct rfw_recv_wr rw = {.wr_id = 1, .num_sge = 1}, *rbad;
	struct rfw_sge rs;
	struct rfw_qp *q[2];

	assert_non_null(net);
	assert_int_equal(h_nic_init_ops(net, 0, &c, ops), 0);
	assert_int_equal(h_nic_init_ops(net, 1, &c, ops), 0);
	for (int i = 0; i < 2; i++) {
		struct h_nic *n = &net->nic[i];

		/* The same memory in every run: the RETH's addresses, and so the frames, alike. */
		rfw_dereg_mr(n->mr);
		free(n->mem);
		n->mem = mem[i];
		n->mr = rfw_reg_mr(n->pd, n->mem, H_MEM,
		                   RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
		                       RFW_ACCESS_REMOTE_READ);
		assert_non_null(n->mr);
		n->cap = cap[i];
		n->cap_max = 1u << 20;
		for (uint32_t j = 0; j < H_MEM; j++)
			n->mem[j] = (uint8_t)(j * 7 + 3 + 101 * i);
	}
	pair(net, &q[0], &q[1], 1);
	rs = (struct rfw_sge){(uint64_t)(uintptr_t)(b->mem + 200000), 4096, rfw_mr_lkey(b->mr)};
	rw.sg_list = &rs;
	assert_int_equal(rfw_post_recv(q[1], &rw, &rbad, net->now), 0);
	post_op(a, q[0], RFW_WR_RDMA_WRITE, 0, 10000, 0, b, 0);        /* 10 from the MR */
	post_op(a, q[0], RFW_WR_RDMA_WRITE, 20003, 1027, 0, b, 20000); /* 1; 3 bytes + pad copied */
	post_op(a, q[0], RFW_WR_RDMA_WRITE, 30000, 100, 0, b, 30000);  /* below ref_min: copied */
	post_op(a, q[0], RFW_WR_SEND, 40000, 3000, 0, b, 0);           /* 3 */
	post_op(a, q[0], RFW_WR_RDMA_WRITE, 50000, 2048, 1500, b,
	        50000);                                               /* 1; across SGEs: copied */
	post_op(a, q[0], RFW_WR_RDMA_READ, 60000, 5000, 0, b, 60000); /* B's 5 responses */
	assert_int_equal(h_run_until(net, a, 6, 100000000, 100), 6);
	h_run(net, 100000, 100);
	assert_int_equal(h_reap(b), 1);
	assert_memory_equal(b->mem, a->mem, 10000);
	assert_memory_equal(b->mem + 20000, a->mem + 20003, 1027);
	assert_memory_equal(b->mem + 200000, a->mem + 40000, 3000);
	assert_memory_equal(b->mem + 50000, a->mem + 50000, 1500);
	assert_memory_equal(b->mem + 51500, a->mem + 50000 + 65536, 548);
	assert_memory_equal(a->mem + 60000, b->mem + 60000, 5000);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rfw_fw_ctr(net->nic[i].fw, RFW_FW_CTR_rx_bad_frame), 0);
		refs[i] = rfw_fw_ctr(net->nic[i].fw, RFW_FW_CTR_tx_ref_frames);
		copies[i] = rfw_fw_ctr(net->nic[i].fw, RFW_FW_CTR_tx_crc_copy_frames);
		len[i] = net->nic[i].cap_len;
	}
	net->nic[0].mem = net->nic[1].mem = NULL; /* the caller's */
	net_free(net, q, 2);
}

/* The frames of two runs alike, byte for byte. */
static void same_frames(uint8_t *const a[2], const size_t alen[2], uint8_t *const b[2],
                        const size_t blen[2])
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(alen[i], blen[i]);
		assert_memory_equal(a[i], b[i], alen[i]);
	}
}

/*
 * Payloads handed over where they are (tx_alloc_ref): the frames on the wire are byte for
 * byte those of the copying path (the ICRC over headers and payload in two buffers, or folded
 * as the payload is copied, included; every receiver checks it), for exactly the packets the
 * rule names: at least tx_ref_min bytes, a multiple of 4 (no pad), inside one SGE; SEND,
 * WRITE and READ responses. A host with the two ops sends them from the MR; a host without
 * them gets them copied with the ICRC in one pass. A minimum of 0 does neither. A host with
 * one of the two ops and not the other is refused.
 */
static void test_tx_ref(void **state)
{
	static uint8_t mem[2][H_MEM], cap[3][2][1u << 20];
	uint8_t *m[2] = {mem[0], mem[1]}, *c[3][2];
	size_t len[3][2];
	uint64_t refs[2], copies[2];

	(void)state;
	for (int k = 0; k < 3; k++)
		c[k][0] = cap[k][0], c[k][1] = cap[k][1];
	ref_run(&h_ops, 0, m, c[0], len[0], refs, copies); /* every payload copied */
	assert_true(refs[0] == 0 && refs[1] == 0 && copies[0] == 0 && copies[1] == 0);
	ref_run(&h_ops_ref, 0, m, c[1], len[1], refs, copies); /* the ops, a minimum of 0 */
	assert_true(refs[0] == 0 && refs[1] == 0 && copies[0] == 0 && copies[1] == 0);
	ref_run(&h_ops_ref, 256, m, c[1], len[1], refs, copies);
	assert_int_equal(refs[0], 10 + 1 + 3 + 1);
	assert_int_equal(refs[1], 5);
	assert_true(copies[0] == 0 && copies[1] == 0);
	same_frames(c[1], len[1], c[0], len[0]);
	ref_run(&h_ops, 256, m, c[2], len[2], refs, copies); /* a host without the ops */
	assert_true(refs[0] == 0 && refs[1] == 0);
	assert_int_equal(copies[0], 10 + 1 + 3 + 1);
	assert_int_equal(copies[1], 5);
	same_frames(c[2], len[2], c[0], len[0]);
	/* One of the two ops without the other: refused (EINVAL). */
	for (int k = 0; k < 2; k++) {
		struct rfw_fw_host_ops half = h_ops_ref;
		struct rfw_fw_conf conf = {.dev_attr.tx_ref_min = 256};

		if (k == 0)
			half.frame_alloc_ref = NULL;
		else
			half.frame_send_ref = NULL;
		errno = 0;
		assert_null(rfw_fw_create(&conf, &half, NULL));
		assert_int_equal(errno, EINVAL);
	}
}

static void test_frame_bytes(void **state)
{
	(void)state;
	for (unsigned ver = 4; ver <= 6; ver += 2)
		for (int vlan = 0; vlan < 2; vlan++) {
			frame_case(ver, vlan, false);
			if (ver == 6)
				frame_case(ver, vlan, true);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_write_doorbell), cmocka_unit_test(test_scope_port),
	    cmocka_unit_test(test_scope_dst),      cmocka_unit_test(test_snapshot_unchanged),
	    cmocka_unit_test(test_paced_schedule), cmocka_unit_test(test_byte_unit),
	    cmocka_unit_test(test_var_win),        cmocka_unit_test(test_timely),
	    cmocka_unit_test(test_wheel),          cmocka_unit_test(test_wheel_model),
	    cmocka_unit_test(test_tx_room),        cmocka_unit_test(test_tx_room_round_robin),
	    cmocka_unit_test(test_frame_bytes),    cmocka_unit_test(test_tx_room_run_ends),
	    cmocka_unit_test(test_tx_ref),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
