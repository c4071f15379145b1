/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scheduler: a ready list of QPs with work, a timer wheel (pacer departures and transport
 * timers), and each ready QP's turn, which decides WHEN before the transport builds WHAT:
 * responses and CNPs always, requests one pacer decision at a time. docs/nic.md "When to send".
 */
#include <errno.h>
#include <string.h>

#include "nic/fw_int.h"

enum { WN_DEP, WN_TMR };

/* @front's QPs ahead of @l's, in their order; @front is left empty. */
static void qlist_splice_front(struct fw_qlist *l, struct fw_qlist *front)
{
	if (front->head == NULL)
		return;
	front->tail->rnext = l->head;
	l->head = front->head;
	if (l->tail == NULL)
		l->tail = front->tail;
	l->n += front->n;
	front->head = front->tail = NULL;
	front->n = 0;
}

/* Back at the head: a QP whose turn found no frame keeps its place for the next run. */
static void ready_push_head(struct rfw_fw *fw, struct fw_qp *fq)
{
	struct fw_qlist one = {NULL, NULL, 0};

	if (fq->in_ready)
		return;
	fq->in_ready = true;
	fw_qlist_append(&one, fq);
	qlist_splice_front(&fw->ready, &one);
}

/* A QP blocked by its class before it sent anything (see struct rfw_fw's blocked). */
static void blocked_push(struct rfw_fw *fw, struct fw_qp *fq)
{
	fq->in_ready = true;
	fw_qlist_append(&fw->blocked, fq);
}

static struct fw_qp *ready_pop(struct rfw_fw *fw)
{
	struct fw_qp *fq = fw->ready.head;

	if (fq == NULL)
		return NULL;
	fw->ready.head = fq->rnext;
	if (fw->ready.head == NULL)
		fw->ready.tail = NULL;
	fw->ready.n--;
	fq->in_ready = false;
	return fq;
}

void fw_ready_remove(struct rfw_fw *fw, struct fw_qp *fq)
{
	struct fw_qp *prev = NULL;

	if (!fq->in_ready)
		return;
	for (struct fw_qp **pp = &fw->ready.head; *pp != NULL; prev = *pp, pp = &(*pp)->rnext) {
		if (*pp == fq) {
			*pp = fq->rnext;
			if (fw->ready.tail == fq)
				fw->ready.tail = prev;
			fw->ready.n--;
			break;
		}
	}
	fq->in_ready = false;
}

/* ---- the transport's I/O: frames from the host (frame_tx.c), the doorbell ---- */

/* Posting is the doorbell: the QP goes on the ready list. */
static void io_doorbell(void *io_ctx, struct rfw_qp *qp)
{
	struct rfw_fw *fw = io_ctx;
	struct fw_qp *fq = fw_qp_of(fw, qp);

	if (fq != NULL)
		fw_ready_push(fw, fq);
}

const struct rfw_io_ops fw_io_ops = {.tx_alloc = fw_io_tx_alloc,
                                     .tx_send = fw_io_tx_send,
                                     .tx_alloc_ref = fw_io_tx_alloc_ref,
                                     .doorbell = io_doorbell};

/* ---- a QP's turn ---- */

/*
 * The transport's next deadline into the wheel. An entry already armed at or before it stays:
 * the ACK timer moves later with every ACK, and moving the entry each turn would cost more than
 * the early wake-up it saves (rfw_qp_timer then does nothing and this turn re-arms it).
 */
static void rearm_timer(struct rfw_fw *fw, struct fw_qp *fq)
{
	uint64_t d = rfw_qp_next_deadline(fq->qp);

	fq->tmr_due = d;
	if (d != UINT64_MAX && (!fq->tmr.armed || fq->tmr.at > d))
		fw_wheel_insert(&fw->twheel, &fq->tmr, d);
}

/*
 * Requests, up to @budget packets: unpaced in one call; paced one at a time, each only once the
 * pacer says it may leave now. Returns false if the QP now waits for its departure time.
 */
static bool serve_requests(struct rfw_fw *fw, struct fw_qp *fq, unsigned budget, uint64_t now)
{
	for (;;) {
		uint64_t rate, at;

		if (fw->var_win_bytes != 0)
			fw_rate_win(fw, fq, now); /* the window at this packet's rate, as HPCC */
		if (budget == 0 || !rfw_qp_has_requests(fq->qp, now))
			break;
		rate = fw_rate_kbps(fw, fq->rate, now);

		fq->turn_rate = rate;
		if (rate == 0)
			return rfw_qp_tx_requests(fq->qp, budget, now), true;
		at = cc_pacer_earliest(&fq->rate->pacer);
		if (at > now) {
			fw_wheel_insert(&fw->wheel, &fq->dep, at);
			fw->ctr[RFW_FW_CTR_pacer_waits]++;
			fq->ctr[RFW_FW_QP_CTR_pacer_waits]++;
			return false;
		}
		if (rfw_qp_tx_requests(fq->qp, 1, now) == 0)
			break;
		budget--;
	}
	return true;
}

/* One turn of a ready QP. */
static void serve(struct rfw_fw *fw, struct fw_qp *fq, uint64_t now)
{
	unsigned sent0 = fw->sent;
	bool waiting = false;
	unsigned n;

	fw->ctr[RFW_FW_CTR_sched_turns]++;
	/* No MAC yet: the transport keeps the packets; rfw_fw_qp_set_mac() re-queues the QP. */
	if (fq->l2_pending) {
		fq->ctr[RFW_FW_QP_CTR_l2_wait_turns]++;
		rearm_timer(fw, fq);
		return;
	}
	fq->room_wait = false;
	n = rfw_qp_tx_responses(fq->qp, fw->quantum, now);
	/* Requests only once every response is out (one without a buffer keeps them behind it). */
	if (!rfw_qp_has_responses(fq->qp))
		waiting = !serve_requests(fw, fq, fw->quantum - n, now);
	/*
	 * Out of frames before sending anything: this QP keeps the head of the list, or the QP
	 * served before it, refilling the host's queue each time a frame drains, starves it.
	 */
	if (fw->no_buf && fw->sent == sent0)
		ready_push_head(fw, fq);
	else if (fq->room_wait && fw->sent == sent0)
		blocked_push(fw, fq); /* its class is full: first again at the host's next run */
	else if (fq->room_wait)
		fw_ready_push(fw, fq); /* sent some, then full: behind the others of the list */
	else if (rfw_qp_has_responses(fq->qp) || (!waiting && rfw_qp_has_requests(fq->qp, now)))
		fw_ready_push(fw, fq);
	rearm_timer(fw, fq);
}

static void fire(void *ctx, struct fw_wnode *n)
{
	struct rfw_fw *fw = ctx;
	struct fw_qp *fq = n->owner;

	if (n->kind == WN_TMR) {
		uint64_t d = fq->tmr_due;

		/*
		 * The entry keeps the deadline it was armed with; ACKs since moved the transport's
		 * later: file it there, no turn. The QP's last turn saw that deadline (every
		 * packet in gives a turn, and a turn that moves it earlier moves the entry), so the
		 * QP's own state, cold with thousands of QPs, is read only when it looks due.
		 */
		if (d <= fw->now_ns)
			d = rfw_qp_next_deadline(fq->qp);
		if (d == UINT64_MAX)
			return;
		if (d > fw->now_ns) {
			fw_wheel_insert(&fw->twheel, &fq->tmr, d);
			return;
		}
		fw->ctr[RFW_FW_CTR_timer_fired]++;
		rfw_qp_timer(fq->qp, fw->now_ns);
	}
	fw_ready_push(fw, fq);
}

void fw_qp_nodes_init(struct fw_qp *fq)
{
	fq->dep.owner = fq;
	fq->dep.kind = WN_DEP;
	fq->tmr.owner = fq;
	fq->tmr.kind = WN_TMR;
}

/* Every class that has QPs refused room in this run: a turn of any ready QP would be refused. */
static bool all_classes_refused(const struct rfw_fw *fw)
{
	for (unsigned p = 0; p < 8; p++)
		if (fw->prio_qps[p] != 0 && !(fw->room_refused >> p & 1))
			return false;
	return true;
}

unsigned rfw_fw_run(struct rfw_fw *fw, uint64_t now_ns)
{
	unsigned nready;
	struct fw_qp *fq;

	fw->now_ns = now_ns;
	fw->sent = 0;
	fw->no_buf = false;
	fw->room_refused = 0;
	fw_wheel_expire(&fw->twheel, now_ns, fire, fw);
	fw_wheel_expire(&fw->wheel, now_ns, fire, fw);
	/* Each QP ready now gets one turn; QPs it re-queues wait for the next run. The run ends
	 * when the host is out of frames, or its queues of every class in use are full: no later
	 * QP would get one either (and 16,384 refused turns per run would slow the host's RX). */
	nready = fw->ready.n;
	while (nready-- != 0 && !fw->no_buf && (fq = ready_pop(fw)) != NULL) {
		serve(fw, fq, now_ns);
		if (fw->room_refused != 0 && all_classes_refused(fw))
			break;
	}
	/* The blocked QPs back at the head of the ready list, in the order they were served. */
	qlist_splice_front(&fw->ready, &fw->blocked);
	return fw->sent;
}

bool rfw_fw_ready(const struct rfw_fw *fw)
{
	return fw->ready.head != NULL;
}

uint64_t rfw_fw_next_ns(const struct rfw_fw *fw)
{
	uint64_t d = fw_wheel_next(&fw->wheel), t = fw_wheel_next(&fw->twheel);

	return d < t ? d : t;
}

/* ---- packets in ---- */

void rfw_fw_rx(struct rfw_fw *fw, const struct rfw_frame_view *f, const struct rfw_ib_pkt *ib,
               uint64_t now_ns)
{
	struct rfw_rx_info rx = {.pkt = ib, .ecn = (uint8_t)rfw_frame_ecn(f), .rx_ts_ns = now_ns};
	uint32_t qi = ib->bth.dqpn - fw->qpn_base;
	struct fw_qp *fq;

	fw->now_ns = now_ns;
	memcpy(rx.src_ip, f->src_ip, 16); /* the transport's source check (recv.c) */
	memcpy(rx.dst_ip, f->dst_ip, 16);
	rx.tclass = f->tos; /* a UD receive's GRH */
	rx.ttl = f->ttl;
	/*
	 * P_Key check (IBA 10.9.3): the partition table holds only the default partition 0xffff
	 * (full member, what the transport sends), so a packet matches when its low 15 bits are
	 * 0x7fff; anything else is dropped before the transport, as PortInfo:P_KeyViolations.
	 */
	if ((ib->bth.pkey & 0x7fff) != 0x7fff) {
		fw->ctr[RFW_FW_CTR_pkey_violations]++;
		return;
	}
	if (rfw_dev_rx(fw->dev, &rx, now_ns) != 0)
		fw->ctr[RFW_FW_CTR_rx_dev_dropped]++;
	/* The packet may have produced responses or opened the window: serve the QP. */
	if (qi < fw->max_qp && (fq = fw->qps[qi]) != NULL) {
		fw_rate_on_rx(fq, ib, now_ns);
		fw_ready_push(fw, fq);
	}
}

int rfw_fw_rx_frame(struct rfw_fw *fw, const uint8_t *frame, uint32_t len, uint64_t now_ns)
{
	struct rfw_frame_view v;
	struct rfw_ib_pkt ib;

	/* A NIC drops a frame whose ICRC does not match (IBA Annex A17.3.3). */
	if (rfw_frame_parse_eth(frame, len, &v) != RFW_FRAME_ERR_OK || v.kind != RFW_FRAME_ROCEV2 ||
	    !rfw_frame_icrc_ok(frame, &v) ||
	    rfw_ib_parse(frame + v.ib_off, v.ib_len, &ib) != RFW_IB_ERR_OK) {
		fw->ctr[RFW_FW_CTR_rx_bad_frame]++;
		return -EINVAL;
	}
	rfw_fw_rx(fw, &v, &ib, now_ns);
	return 0;
}
