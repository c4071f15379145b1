/* SPDX-License-Identifier: BSD-3-Clause */
/* nic/ internals shared by its files (not installed). */
#ifndef RFW_NIC_FW_INT_H
#define RFW_NIC_FW_INT_H

#include "cc/cc.h"
#include "cc/pacer.h"
#include "nic/rfw_fw.h"
#include "nic/wheel.h"

/* Everything in front of the BTH: 14 + 4 + 40 + 8 = 66 bytes at most. */
#define FW_HDR_MAX (RFW_ETH_HLEN + RFW_VLAN_HLEN + RFW_IPV6_HLEN + RFW_UDP_HLEN)

/*
 * One rate machine and its pacer: a QP's own (rp_scope qp), or shared by the QPs of one
 * destination (dst) or of the whole NIC port (port). refs counts the QPs using it.
 */
struct fw_rate {
	struct cc_flow flow;
	struct cc_pacer pacer;
	uint8_t key[16];               /* destination address (scope dst) */
	const struct dcqcn_prof *prof; /* the DCQCN profile it runs (NULL: TIMELY) */
	uint32_t refs;
};

struct fw_qp {
	struct rfw_qp *qp;
	struct rfw_fw *fw;
	struct fw_qp *rnext; /* ready list */
	bool in_ready;
	bool l2_pending;
	bool room_wait; /* this turn met a full host queue of its class (rfw_fw_host_ops.tx_room) */
	uint8_t prio;   /* its class for tx_room (rfw_fw_path.prio) */
	bool has_np;
	bool probe_out;       /* TIMELY: an RTT probe (a request with AckReq) is in flight */
	uint32_t probe_psn;   /*   its PSN */
	uint64_t probe_ns;    /*   when it left */
	uint64_t turn_rate;   /* the rate requests of the current turn are charged at (0: none) */
	struct fw_wnode dep;  /* pacer departure */
	struct fw_wnode tmr;  /* transport timer (rfw_qp_next_deadline) */
	uint64_t tmr_due;     /* that deadline as the QP's last turn left it (UINT64_MAX: none) */
	struct fw_rate *rate; /* NULL: no congestion control */
	/* What its last snapshot saw (rfw_fw_publish): unchanged, the snapshot is only re-dated */
	uint64_t pub_tx, pub_rx;
	uint8_t pub_state; /* enum rfw_qp_state + 1; 0: never published */
	uint64_t *ctr;     /* the slot's counters (struct fw_pub) */
	uint8_t hdr[FW_HDR_MAX + 6] __attribute__((aligned(8)));
	uint8_t hdr_len, ip_off, udp_off, ip_ver;
	uint8_t cnp_tos;
	bool vlan;
	/* The host fills the ICRC at its burst (frame_send_icrc): it has the op, and no IPv6 UDP
	 * checksum, which covers the ICRC, is to follow it (set with the template). */
	bool host_icrc;
	/* IPv4: ones'-complement sums of the template's header with total length and checksum 0,
	 * as sent for data and for CNPs (their TOS differs): a packet adds its length (RFC 1071).
	 */
	uint32_t ip4_sum, ip4_sum_cnp;
	uint16_t data_tci, cnp_tci;
	struct dcqcn_np np;
};

/* A FIFO of QPs linked through fw_qp.rnext (the ready list, the blocked list of a run). */
struct fw_qlist {
	struct fw_qp *head, *tail;
	uint32_t n; /* QPs on it: a run serves the ready ones without walking the list */
};

/* One QP slot as readers on other threads see it. */
struct fw_pub {
	uint32_t seq;
	struct rfw_fw_snap s;
	uint64_t ctr[RFW_FW_QP_CTR__COUNT]; /* live: one writer */
} __attribute__((aligned(64)));

struct fw_dev_pub {
	uint32_t seq;
	uint64_t at_ns;
	uint64_t cnt[RFW_CNT__COUNT];
} __attribute__((aligned(64)));

struct rfw_fw {
	struct rfw_dev *dev;
	struct rfw_fw_host_ops ops;
	void *host;
	uint64_t now_ns; /* of the entry point running (the transport's callbacks need it) */
	uint32_t qpn_base, max_qp;
	uint32_t quantum;
	uint32_t pacer_burst_ns;
	uint32_t frame_max;
	uint32_t var_win_bytes; /* rfw_fw_conf.var_win_bytes: 0 off */
	bool udp6_csum;
	enum rfw_fw_cc cc;
	const struct dcqcn_prof *dcqcn;
	const struct timely_prof *timely;
	unsigned sent; /* frames sent by the entry point running */
	bool no_buf;   /* the host had no frame for a turn of this run: end the run */
	/* tx_room: the classes refused during this run, and the attached QPs of each class; a
	   run ends when every class with QPs has been refused (no later turn could send). */
	uint8_t room_refused;
	uint32_t prio_qps[8];
	struct fw_qlist ready;
	/* During a run: QPs whose class had no room before they sent anything, in ready order;
	   put back at the head of the ready list when the run ends (they keep their turn). */
	struct fw_qlist blocked;
	struct fw_qp **qps;    /* [max_qp] by QPN - qpn_base */
	struct fw_rate *rates; /* [max_qp] */
	struct fw_pub *pub;    /* [max_qp] */
	struct fw_dev_pub dev_pub;
	uint64_t ctr[RFW_FW_CTR__COUNT];
	struct fw_wheel wheel;  /* pacer departures: fine slots, a short lap */
	struct fw_wheel twheel; /* transport timers: coarse slots, a lap longer than they wait */
	/* The frame fw_io_tx_alloc_ref gave out and fw_io_tx_send finishes next: its payload,
	   that payload's length and where its ICRC goes. */
	uint8_t *ref_frame;
	const uint8_t *ref_payload;
	uint32_t ref_len;
	uint8_t *ref_icrc;
};

static inline struct fw_qp *fw_qp_of(const struct rfw_fw *fw, const struct rfw_qp *qp)
{
	uint32_t i = rfw_qp_num(qp) - fw->qpn_base;

	return i < fw->max_qp ? fw->qps[i] : NULL;
}

/* sched.c */

/* @fq at the tail of @l. */
static inline void fw_qlist_append(struct fw_qlist *l, struct fw_qp *fq)
{
	fq->rnext = NULL;
	if (l->tail != NULL)
		l->tail->rnext = fq;
	else
		l->head = fq;
	l->tail = fq;
	l->n++;
}

/* @fq on the ready list, at its tail, unless it is there already. Inline: every packet in and
 * every post calls it. */
static inline void fw_ready_push(struct rfw_fw *fw, struct fw_qp *fq)
{
	if (fq->in_ready)
		return;
	fq->in_ready = true;
	fw_qlist_append(&fw->ready, fq);
}
void fw_ready_remove(struct rfw_fw *fw, struct fw_qp *fq);
void fw_qp_nodes_init(struct fw_qp *fq);
extern const struct rfw_io_ops fw_io_ops;

/* rate.c */
int fw_rate_attach(struct rfw_fw *fw, struct fw_qp *fq, const struct rfw_fw_path *path);
void fw_rate_detach(struct rfw_fw *fw, struct fw_qp *fq);
uint64_t fw_rate_kbps(const struct rfw_fw *fw, struct fw_rate *r, uint64_t now_ns);
void fw_rate_win(const struct rfw_fw *fw, struct fw_qp *fq, uint64_t now_ns);
void fw_rate_probe_rx(struct fw_qp *fq, const struct rfw_ib_pkt *ib, uint64_t now_ns);

/*
 * The rate machine's part in every frame in and out, inline: a call cost about as much as the
 * work of a frame's (a counter under DCQCN).
 *
 * A request frame of @flen bytes leaves: charge the pacer at the turn's rate and feed the rate
 * machine's byte counter. TIMELY: one request asking for an ACK at a time is the RTT probe.
 */
static inline void fw_rate_on_tx(struct fw_qp *fq, uint32_t flen, const struct rfw_tx_meta *m,
                                 uint64_t now_ns)
{
	struct fw_rate *r = fq->rate;

	if (r == NULL || m->kind != RFW_TX_REQUEST)
		return;
	if (fq->turn_rate != 0)
		(void)cc_pacer_depart(&r->pacer, now_ns, flen, fq->turn_rate);
	cc_on_tx(&r->flow, flen, now_ns);
	if (r->flow.algo == CC_ALGO_TIMELY && m->ack_req && !fq->probe_out) {
		fq->probe_out = true;
		fq->probe_psn = m->psn;
		fq->probe_ns = now_ns;
	}
}

/* A packet for @fq arrived: only a probe out has anything to learn from it (fw_rate_probe_rx). */
static inline void fw_rate_on_rx(struct fw_qp *fq, const struct rfw_ib_pkt *ib, uint64_t now_ns)
{
	if (fq->rate != NULL && fq->probe_out)
		fw_rate_probe_rx(fq, ib, now_ns);
}

/* frame_tx.c */
int fw_template(const struct rfw_fw *fw, struct fw_qp *fq, const struct rfw_fw_path *path);
uint8_t *fw_io_tx_alloc(void *io_ctx, struct rfw_qp *qp, uint32_t len);
uint8_t *fw_io_tx_alloc_ref(void *io_ctx, struct rfw_qp *qp, uint32_t hdr_len,
                            const uint8_t *payload, uint32_t payload_len);
void fw_io_tx_send(void *io_ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                   const struct rfw_tx_meta *m);

#endif
