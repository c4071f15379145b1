/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport/ internals: the objects behind rfw_verbs.h and the functions the requester
 * (req.c), responder (resp.c), completer (comp.c), receive demux (recv.c) and QP code (qp.c)
 * call in one another. Not installed; nothing outside transport/ includes it except the fuzz
 * target and white-box tests.
 */
#ifndef RFW_TRANSPORT_INT_H
#define RFW_TRANSPORT_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "transport/es_crec.h"
#include "transport/estats.h"
#include "transport/rfw_verbs.h"
#include "transport/slots.h"

/*
 * Rings (SQ, RQ, CQ, the response queue) have a power-of-two number of entries at least their
 * capacity, so that a free-running index finds its entry with a mask: a 32-bit divide by the
 * capacity (26 cycles and more on the machines measured, several per message) was on the
 * per-packet path. Capacities (what posting and pushing check) stay what the verbs asked for.
 */
static inline uint32_t rfw_ring_entries(uint32_t capacity)
{
	return capacity <= 1 ? 1 : 1u << (32 - __builtin_clz(capacity - 1));
}

/* The response queue's entries: nrsp (2 x RFW_MAX_RD_ATOMIC + 8) rounded up. */
#define RFW_RSP_RING 64u

struct rfw_dev {
	struct rfw_dev_attr attr;
	struct rfw_io_ops ops;
	void *io_ctx;
	struct rfw_mr **mrs;      /* index = key >> 8 */
	struct rfw_qp **qps;      /* index = qpn - qpn_base */
	struct rfw_slots qp_free; /* free slots of qps[] (slots.h: first freed, first reused) */
	struct rfw_slots mr_free; /* free slots of mrs[], MRs and windows alike */
	struct rfw_qp *gsi;       /* QP1 (rfw_qp_set_gsi), also in qps[] at its slot */
	uint32_t mr_gen;          /* low byte of the next key, so a stale key misses */
	/* attr.tx_ref_min, UINT32_MAX for its 0 (never): one compare per packet decides. */
	uint32_t tx_ref_from;
	rfw_es_sink_fn es_sink; /* Estats records of new QPs go here (rfw_dev_estats_sink) */
	void *es_sink_ctx;
	struct rfw_es_ring *es_ring; /* or here, packed (rfw_dev_estats_ring); NULL: not */
	/* The device's counters: drops no QP owns, and every QP's counts added as they happen
	   (rfw_cnt*), so a read is one copy whatever the number of QPs (a sum over QPs cost
	   18 ms beside 65,536 of them) and a destroyed QP's counts stay. */
	uint64_t cnt[RFW_CNT__COUNT];
	uint64_t now; /* Estats: the host's time from rfw_dev_clock (T6 of rfw_poll_cq) */
};

struct rfw_pd {
	struct rfw_dev *dev;
	uint32_t users; /* MRs and QPs using it */
};

struct rfw_mr {
	struct rfw_pd *pd;
	uint8_t *addr;
	uint64_t length;
	unsigned access;
	uint32_t key;  /* lkey == rkey */
	bool valid;    /* false once invalidated (LOCAL_INV, SEND_WITH_INV); a window: bound */
	bool fast_reg; /* rfw_reg_mr_fr: the only kind that may be invalidated (IBA 10.6) */
	/* Memory windows (IBA 10.6.7, mw.c) share the key table: addr / length / access are
	   then the bound window's, inside the MR it is bound to. */
	uint8_t mw_type;      /* 0: an MR; 1 or 2: a window of that type */
	struct rfw_qp *mw_qp; /* type 2: the QP it is bound to */
	struct rfw_mr *mw_mr; /* a bound window: its MR */
	uint32_t mw_binds;    /* an MR: the windows bound to it (deregistration waits for 0) */
};

struct rfw_cq {
	struct rfw_dev *dev;
	struct rfw_wc *ring; /* mask + 1 entries */
	uint32_t size;       /* capacity (cqe) */
	uint32_t mask;       /* ring entries - 1: a power of two >= size, see rfw_ring_entries */
	uint32_t prod, cons; /* free running */
	uint32_t users;
	/* Estats (NULL: off): per ring entry, the send WQE's T1..T5 packed once at completion
	 * (es_crec.h), T2..T5 whole in es_wide for a record with an offset beyond int32. */
	struct rfw_es_crec *es;
	struct rfw_es_wide *es_wide;
};

enum rfw_swqe_state {
	SWQE_POSTED,  /* not (or not completely) sent */
	SWQE_PENDING, /* every packet sent, waiting for the ACK / response */
	SWQE_DONE,    /* completed (local operations, or ready to report) */
};

/* Estats' timestamps of a send WQE until it completes: in the WQE itself, whose lines posting,
 * sending and completing touch anyway (a separate array cost each a line of its own). */
struct rfw_es_wts {
	uint64_t t[3]; /* T1..T3 */
	uint8_t have;  /* bit i: t[i] is known */
};

struct rfw_swqe {
	struct rfw_send_wr wr; /* sg_list -> sge, next NULL */
	struct rfw_sge *sge;
	uint8_t *inline_buf;
	uint32_t length;
	uint32_t first_psn, last_psn, npkts;
	uint8_t state;
	bool psn_valid; /* PSNs assigned (first send); a retry reuses them */
	bool checked;   /* local keys validated */
	bool signaled;
	uint32_t rsn; /* SR: receive sequence number of a SEND / WRITE_WITH_IMM (SRETH) */
	enum rfw_wc_status status;
	uint64_t atomic_orig;
	struct rfw_es_wts es; /* set when the QP keeps Estats (qp->es), from posting on */
};

struct rfw_rwqe {
	uint64_t wr_id;
	struct rfw_sge *sge;
	int num_sge;
	uint32_t length;
};

/* A READ or atomic the responder executed, kept for duplicate replay (IBA 9.7.5.1.3). */
enum rfw_res_type { RES_NONE, RES_READ, RES_ATOMIC };
struct rfw_res {
	uint8_t type;
	uint32_t first_psn, last_psn;
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint64_t orig; /* atomic: the value before execution (what the ACK carries) */
	uint32_t msn;
};

/* A response the responder has to send, queued in PSN order. */
enum rfw_rsp_kind { RSP_ACK, RSP_READ, RSP_ATOMIC, RSP_SR_STATE };
struct rfw_rsp {
	uint8_t kind;
	uint8_t syndrome;
	uint32_t psn;
	uint32_t msn;
	/* READ: what is left to send */
	uint64_t va;
	uint32_t rkey;
	uint32_t left;
	bool started;
	bool replay; /* READ/atomic: an answer to a duplicate (not the resource's first) */
	uint64_t orig;
};

enum rfw_msg_class { MSG_NONE, MSG_SEND, MSG_WRITE };

/* SR responder: what completing a message needs, kept for its last packet's PSN. */
enum rfw_sr_slot_flag {
	SR_SLOT_END = 1u << 0,  /* the PSN is the last packet of a message */
	SR_SLOT_SEND = 1u << 1, /* ... of a SEND (else a WRITE) */
	SR_SLOT_IMM = 1u << 2,
	SR_SLOT_INV = 1u << 3,
	SR_SLOT_SE = 1u << 4,
};
struct rfw_sr_slot {
	uint8_t flags;
	uint32_t imm;
	uint32_t inv_rkey;
	uint32_t len; /* message length in bytes */
};

/*
 * Selective repeat state (docs/transport-sr.md "Memory"): allocated when the QP is set to
 * RFW_TRANSPORT_SR, never on the packet path. Bitmaps are indexed by PSN & (win - 1).
 */
struct rfw_sr {
	uint32_t win; /* PSN window, a power of two */
	uint32_t seg; /* SEND/WRITE data bytes per packet: MTU - SRETH */
	uint64_t bdp; /* cap on bytes in flight */
	uint64_t rto_low, rto_high;
	uint32_t rto_low_pkts;
	/* responder */
	uint64_t *rx_bits;        /* received, at or beyond ePSN */
	struct rfw_sr_slot *slot; /* per PSN, valid where rx_bits and SR_SLOT_END */
	uint32_t rx_high;         /* one past the highest PSN received */
	uint32_t rx_rsn;          /* RSN of the message the RWQE at rq_cons belongs to */
	uint32_t ooo_since_nak;   /* out-of-order arrivals since the last SACK queued */
	/* requester */
	uint64_t *sack;       /* known received beyond comp.psn (SACK, READ responses) */
	uint64_t *rtxd;       /* retransmitted, and not known received since */
	uint32_t *rtx_mark;   /* per PSN: high_psn when it was last retransmitted */
	uint32_t nsacked;     /* set bits of sack */
	uint32_t sack_high;   /* one past the highest PSN known received */
	uint32_t rtx_scan;    /* next PSN to look at for retransmission */
	bool rtx_active;      /* holes below sack_high wait for retransmission */
	bool timer_low;       /* the armed timer is RTO_low */
	uint64_t timer_start; /* when it was armed */
	bool probe;           /* after a timeout: resend probe_psn first */
	uint8_t backoff;      /* timeouts in a row without progress: the RTO doubles each */
	uint64_t stall_since; /* last progress, or the last retry_cnt charge since */
	uint32_t probe_psn;
	uint32_t tx_rsn; /* RSN of the next SEND / WRITE_WITH_IMM */
};

struct rfw_req {
	uint32_t idx; /* SQ index of the WQE being sent */
	uint32_t psn; /* next PSN to send */
	uint32_t off; /* bytes of wqe idx already sent */
	uint32_t since_ackreq;
	bool rnr_wait; /* waiting for the RNR timer */
	uint64_t rnr_deadline;
	uint32_t rnr_psn;
	uint32_t high_psn; /* one past the highest PSN ever sent: lower ones are retransmits */
	uint32_t win;      /* go-back-N window in PSNs set by the host; 0: max_unacked_psns */
	/* One past the SQ index of the newest READ or atomic the requester has sent whole
	   (rfw_rd_atomic_maybe) */
	uint32_t rd_atomic_end;
	/* The READ requests and atomics outstanding (rd_atomic_in_flight), counted as they go: one
	   past the last PSN of each, oldest first, at rd_end[rd_head .. + rd_n) modulo
	   RFW_MAX_RD_ATOMIC. Kept while rd_ok; a rewind or an error leaves the count to the walk
	   until nothing is in flight (rfw_rd_out_push) */
	uint32_t rd_end[RFW_MAX_RD_ATOMIC];
	uint8_t rd_head, rd_n;
	bool rd_ok;
};

struct rfw_comp {
	uint32_t idx;       /* oldest WQE not completed */
	uint32_t psn;       /* next PSN expected to be acknowledged */
	uint8_t retry_left; /* retry_cnt left (reset on forward progress) */
	uint8_t rnr_left;   /* rnr_retry left; 7 = infinite */
	uint64_t timer;     /* local ACK timeout deadline; 0 = not armed */
	bool retrying;      /* a go-back-N retry from psn is under way: ignore repeats */
	uint32_t retry_psn;
	/* gbn retry probe (comp.c, issue 13.13): a NAKed PSN whose retransmission is lost too */
	uint64_t srtt_ns;  /* smoothed RTT: AckReq packet sent -> acknowledged (0: none yet) */
	uint64_t rtt_t;    /* the sample under way: when the packet left ... */
	uint32_t rtt_psn;  /* ... and its PSN */
	bool rtt_armed;    /* a sample is under way */
	uint64_t probe_at; /* go back again at this time if retry_psn has not moved; 0 = off */
	uint8_t probe_backoff;
};

struct rfw_resp {
	uint32_t psn;     /* expected PSN (ePSN) */
	uint32_t ack_psn; /* one past the last SEND/WRITE packet executed: duplicates re-ACK it */
	uint32_t msn;
	bool nak_sent; /* a PSN sequence NAK is outstanding (IBA 9.7.5.1.2) */
	uint8_t cls;   /* enum rfw_msg_class of the message in progress */
	/* SEND in progress: the receive WQE at rq_cons */
	uint32_t send_off;
	bool have_rwqe;
	/* WRITE in progress */
	uint32_t wrkey; /* its R_Key: checked again on every packet (the MR may go away) */
	uint64_t wva;
	uint32_t wleft, wtotal;
	/* READ/atomic resources (max_dest_rd_atomic) and the response queue */
	struct rfw_res *res;
	uint32_t nres, res_next;
	struct rfw_rsp *rsp;               /* RFW_RSP_RING entries */
	uint32_t nrsp, rsp_prod, rsp_cons; /* nrsp: capacity */
	/* A NAK the full ring could not take: queued first as soon as there is room, replaced by
	   a newer NAK meanwhile (which supersedes it). NAKs are never dropped. */
	struct rfw_rsp nak_pend;
	bool nak_pending;
	/* notification point */
	bool cnp_pending;
	bool cnp_ever;
	uint64_t last_cnp_ns;
};

/*
 * A shared receive queue : a ring of receive WQEs that QPs take from when a message
 * starts. rq[] slots and the attached QPs' private slots hold sge arrays of max_sge entries, so a
 * WQE moves to a QP by swapping the slot, never by copying its scatter list.
 */
struct rfw_srq {
	struct rfw_pd *pd;
	void *context;
	void (*limit_reached)(void *context, struct rfw_srq *srq);
	struct rfw_rwqe *rq;
	uint32_t size, prod, cons;
	uint32_t max_wr, max_sge;
	uint32_t limit; /* armed: the event fires when fewer than this are left */
	bool armed;
	uint32_t users; /* QPs attached */
	/* Selective-repeat QPs whose ePSN waits at a message end for a WQE (sr.c sr_advance):
	 * a post wakes them, since their requester may never resend a SACKed PSN. */
	struct rfw_qp *waiters;
};

struct rfw_ah {
	struct rfw_pd *pd;
	struct rfw_ah_attr attr;
};

struct rfw_qp {
	uint32_t qpn; /* its slot's QPN: first, where rfw_qp_num (rfw_verbs.h) reads it */
	struct rfw_dev *dev;
	struct rfw_pd *pd;
	enum rfw_qp_type type;
	struct rfw_cq *send_cq, *recv_cq;
	struct rfw_srq *srq;     /* receive WQEs come from it; rq[] then holds the ones taken */
	struct rfw_qp *srq_next; /* on srq->waiters (srq_waiting) */
	bool srq_waiting;
	void *context;
	void (*event)(void *qp_context, struct rfw_qp *qp, enum rfw_qp_event ev);
	bool comm_est;     /* RFW_QP_EV_COMM_EST sent since the last RESET */
	uint32_t wire_qpn; /* the QPN on the wire: qpn, or RFW_GSI_QPN for QP1 */
	enum rfw_qp_state state;
	struct rfw_qp_attr attr;
	uint32_t mtu;
	bool sq_sig_all;
	struct rfw_qp_cap cap;
	/* send queue: sq_size entries, a power of two (the capacity is cap.max_send_wr) */
	struct rfw_swqe *sq;
	struct rfw_sge *sq_sge; /* the send WQEs' scatter lists, one array (sq[i].sge into it) */
	uint32_t sq_size, sq_prod;
	/* receive queue: rq_mask + 1 entries (a power of two), rq_size the capacity */
	struct rfw_rwqe *rq;
	uint32_t rq_size, rq_mask, rq_prod, rq_cons;
	struct rfw_req req;
	struct rfw_comp comp;
	struct rfw_resp resp;
	enum rfw_transport_mode mode;
	struct rfw_sr *sr; /* mode SR only */
	const struct rfw_cc_ops *cc_ops;
	void *cc;
	/* The time and the traffic counters (first in the table) share one cache line: every
	 * packet writes both (rfw_create_qp allocates the QP cache-line aligned). */
	_Alignas(64) uint64_t now; /* time of the current entry point */
	uint64_t cnt[RFW_CNT__COUNT];
	struct rfw_es_qp *es; /* Estats state (docs/estats.md); NULL when off */
};

static inline void rfw_cnt(struct rfw_qp *qp, enum rfw_counter c)
{
	qp->cnt[c]++;
	qp->dev->cnt[c]++;
}
static inline void rfw_cnt_add(struct rfw_qp *qp, enum rfw_counter c, uint64_t n)
{
	qp->cnt[c] += n;
	qp->dev->cnt[c] += n;
}
/* rfw_dev_qp, inline for per-completion callers (Estats' record at poll time). */
static inline struct rfw_qp *rfw_dev_qp_at(struct rfw_dev *dev, uint32_t qpn)
{
	uint32_t i = qpn - dev->attr.qpn_base;

	if (qpn == RFW_GSI_QPN)
		return dev->gsi;
	return (qpn >= dev->attr.qpn_base && i < dev->attr.max_qp) ? dev->qps[i] : NULL;
}
static inline struct rfw_swqe *rfw_sq_at(const struct rfw_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_size - 1)];
}
static inline struct rfw_rwqe *rfw_rq_at(const struct rfw_qp *qp, uint32_t idx)
{
	return &qp->rq[idx & qp->rq_mask];
}
static inline bool rfw_wqe_is_rd_atomic(const struct rfw_swqe *w)
{
	return w->wr.opcode == RFW_WR_RDMA_READ || w->wr.opcode == RFW_WR_ATOMIC_CMP_AND_SWP ||
	       w->wr.opcode == RFW_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Checking builds (the sanitizer builds, or -Dinvariants=true) hold a shortcut to what it
 * spares: rfw_invariant(cond, what) aborts, naming @what, where @cond fails. Other builds
 * compile it away.
 */
#ifndef RFW_INVARIANTS
#define RFW_INVARIANTS 0
#endif
__attribute__((noreturn, cold)) void rfw_invariant_fail(const char *what, const char *file,
                                                        int line);
#define rfw_invariant(cond, what)                                                                  \
	do {                                                                                       \
		if (RFW_INVARIANTS && !(cond))                                                     \
			rfw_invariant_fail(what, __FILE__, __LINE__);                              \
	} while (0)

/*
 * Whether a READ or atomic may lie between the oldest WQE and the requester's position,
 * [comp.idx, req.idx). Every WQE there was sent whole, req.idx passing it (a rewind moves
 * req.idx forward only over WQEs acknowledged, so sent), and req.rd_atomic_end is past every
 * READ and atomic that was: when it is not past comp.idx none is there. The walks over that
 * range (rfw_atomic_in_flight, sr_drained, rd_atomic_in_flight) are spared on the SEND and
 * WRITE packets sent while no READ or atomic is outstanding: each was a step per WQE in flight
 * on every packet. Past comp.idx means 1 to sq_size WQEs past it, where the SQ's WQEs are:
 * a mark the completer has left behind reads as stale however far behind, with no upkeep on
 * each completion.
 */
static inline bool rfw_rd_atomic_maybe(const struct rfw_qp *qp)
{
	return qp->req.rd_atomic_end - qp->comp.idx - 1 < qp->sq_size;
}
/* Where a walk over [comp.idx, req.idx) for READs and atomics starts: req.idx (nothing to
   walk) when rfw_rd_atomic_maybe says none is there, but in checking builds, which hold the
   walk's finds to that (rfw_invariant). */
static inline uint32_t rfw_rd_atomic_from(const struct rfw_qp *qp)
{
	return RFW_INVARIANTS || rfw_rd_atomic_maybe(qp) ? qp->comp.idx : qp->req.idx;
}
/* Move req.rd_atomic_end to @end if that is later, or the mark is stale: never back while
   it covers a WQE (a rewind re-sends WQEs). */
static inline void rfw_rd_atomic_mark(struct rfw_qp *qp, uint32_t end)
{
	if (!rfw_rd_atomic_maybe(qp) || (int32_t)(end - qp->req.rd_atomic_end) > 0)
		qp->req.rd_atomic_end = end;
}

/* The count leaves off until the requester has nothing in flight again (rfw_rd_out_push). */
static inline void rfw_rd_out_stop(struct rfw_qp *qp)
{
	qp->req.rd_ok = false;
	qp->req.rd_n = 0;
}
/* How many requests counted PSN @psn leaves unanswered, and in @head where the oldest of
   those is. A request ending at or before @psn is answered, and answered ones are the oldest
   (requests go in PSN order). @psn is recent, so serial comparison holds. */
static inline uint32_t rfw_rd_out_left(const struct rfw_req *r, uint32_t psn, uint32_t *head)
{
	uint32_t n = r->rd_n, h = r->rd_head;

	while (n != 0 && rfw_psn_cmp(r->rd_end[h], psn) <= 0) {
		h = (h + 1) % RFW_MAX_RD_ATOMIC;
		n--;
	}
	*head = h;
	return n;
}
/* The requests answered by PSN @psn leave the count. */
static inline void rfw_rd_out_retire_to(struct rfw_qp *qp, uint32_t psn)
{
	uint32_t h, n = rfw_rd_out_left(&qp->req, psn, &h);

	qp->req.rd_head = (uint8_t)h;
	qp->req.rd_n = (uint8_t)n;
}
/* @w completes: the requests up to its end are answered (the completer retires WQEs in order,
   so theirs completed too). Called only while some are counted. */
static inline void rfw_rd_out_retire(struct rfw_qp *qp, const struct rfw_swqe *w)
{
	rfw_rd_out_retire_to(qp, rfw_psn_add(w->last_psn, 1));
}

/* Whether an atomic between the oldest WQE and the requester's position awaits its response. */
static inline bool rfw_atomic_in_flight(const struct rfw_qp *qp)
{
	for (uint32_t i = rfw_rd_atomic_from(qp); i != qp->req.idx; i++) {
		const struct rfw_swqe *w = rfw_sq_at(qp, i);

		if (rfw_wqe_is_rd_atomic(w) && w->wr.opcode != RFW_WR_RDMA_READ &&
		    w->state != SWQE_DONE) {
			rfw_invariant(rfw_rd_atomic_maybe(qp), "an atomic before rd_atomic_end");
			return true;
		}
	}
	return false;
}
static inline bool rfw_wqe_is_local(const struct rfw_swqe *w)
{
	return w->wr.opcode == RFW_WR_LOCAL_INV || w->wr.opcode == RFW_WR_BIND_MW;
}
/* Signed distance a - b in PSNs (24-bit serial arithmetic). */
static inline int32_t rfw_psn_diff(uint32_t a, uint32_t b)
{
	return rfw_psn_cmp(a, b) / 256;
}
static inline uint32_t rfw_div_up(uint64_t a, uint32_t b) /* b > 0 */
{
	/* Path MTUs are powers of two (IBA 9.7.1): a shift, not a 64-bit divide per message.
	 * Bit 31 in the ctz argument only keeps it defined for b == 0 (callers never pass 0). */
	if ((b & (b - 1)) == 0)
		return (uint32_t)((a + b - 1) >> __builtin_ctz(b | 0x80000000u));
	return (uint32_t)((a + b - 1) / b);
}
/* The go-back-N requester window in PSNs (rfw_qp_set_window_bytes, else the device's). */
static inline uint32_t rfw_req_win(const struct rfw_qp *qp)
{
	return qp->req.win != 0 ? qp->req.win : qp->dev->attr.max_unacked_psns;
}

/* rfw_ack_timeout_ns, inline: the requester arms its timer with it for every message. */
static inline uint64_t rfw_ack_timeout_ns_inl(unsigned timeout)
{
	if (timeout == 0 || timeout > 31)
		return UINT64_MAX;
	return 4096ull << timeout;
}

/* Packets a message of @len bytes takes at MTU @mtu (0 bytes: one). */
static inline uint32_t rfw_msg_npkts(uint64_t len, uint32_t mtu)
{
	return len ? rfw_div_up(len, mtu) : 1;
}

/*
 * PSNs one READ request may span. IBA 9.7.1: fewer than 2^23 PSNs may be outstanding, or the
 * serial arithmetic of both ends breaks; gbn's window (max_unacked_psns <= 2^22) plus one
 * request of at most 2^22 stays below that. SR: half the bitmaps' window, so two requests
 * pipeline and no PSN in flight aliases another (bitmaps indexed psn & (win - 1)). A longer
 * READ goes as several requests, split at multiples of the span from its first PSN.
 */
#define RFW_READ_SPAN_GBN (1u << 22)
static inline uint32_t rfw_read_span(const struct rfw_qp *qp)
{
	return qp->sr ? qp->sr->win / 2 : RFW_READ_SPAN_GBN;
}

/*
 * READ requests of @w outstanding: its chunks (split at multiples of rfw_read_span() PSNs from
 * its first PSN, each a READ request of its own taking a responder resource) that overlap the
 * PSNs requested and not yet answered, [comp.psn, @end). After a go-back-N rewind into the READ
 * both ends are equal: none. Distances are taken from the READ's first PSN modulo 2^24, not in
 * signed serial arithmetic: @end is never before that PSN and a READ spans at most 2^23 PSNs
 * (2^31 bytes at MTU 256), which the signed form took for -2^23 (none outstanding); comp.psn
 * is fewer than 2^23 PSNs before it (IBA 9.7.1), so a distance above 2^23 means before.
 */
static inline __attribute__((always_inline)) uint32_t
rfw_read_chunks_out(const struct rfw_qp *qp, const struct rfw_swqe *w, uint32_t end)
{
	uint32_t span = rfw_read_span(qp);
	uint32_t sent = (end - w->first_psn) & RFW_PSN_MASK;
	uint32_t done = (qp->comp.psn - w->first_psn) & RFW_PSN_MASK;

	if (!w->psn_valid || sent == 0)
		return 0;
	if (done > (1u << 23))
		done = 0; /* comp.psn before the READ's first PSN */
	if (done >= sent)
		return 0;
	/* Within one span (every READ but one longer than a span) both divisions give what is
	   known without them: a message's worth of cycles when each new READ counts the
	   max_rd_atomic ones before it. */
	if (sent <= span)
		return 1;
	return (sent + span - 1) / span - done / span;
}

static inline bool rfw_is_sr(const struct rfw_qp *qp)
{
	return qp->mode == RFW_TRANSPORT_SR;
}
static inline bool rfw_wqe_is_send_write(const struct rfw_swqe *w)
{
	return w->wr.opcode == RFW_WR_SEND || w->wr.opcode == RFW_WR_SEND_WITH_IMM ||
	       w->wr.opcode == RFW_WR_SEND_WITH_INV || w->wr.opcode == RFW_WR_RDMA_WRITE ||
	       w->wr.opcode == RFW_WR_RDMA_WRITE_WITH_IMM;
}
/* Message bytes one packet of @w carries: the MTU, less the SRETH for SR SEND/WRITE. */
static inline uint32_t rfw_wqe_seg(const struct rfw_qp *qp, const struct rfw_swqe *w)
{
	return (qp->sr && rfw_wqe_is_send_write(w)) ? qp->sr->seg : qp->mtu;
}
static inline void rfw_cnt_max(struct rfw_qp *qp, enum rfw_counter c, uint64_t v)
{
	if (v > qp->cnt[c])
		qp->cnt[c] = v;
	if (v > qp->dev->cnt[c])
		qp->dev->cnt[c] = v;
}
static inline bool rfw_bit(const uint64_t *b, uint32_t win, uint32_t psn)
{
	uint32_t i = psn & (win - 1);

	return (b[i >> 6] >> (i & 63)) & 1;
}
static inline void rfw_bit_set(uint64_t *b, uint32_t win, uint32_t psn)
{
	uint32_t i = psn & (win - 1);

	b[i >> 6] |= 1ull << (i & 63);
}
static inline void rfw_bit_clr(uint64_t *b, uint32_t win, uint32_t psn)
{
	uint32_t i = psn & (win - 1);

	b[i >> 6] &= ~(1ull << (i & 63));
}

/*
 * Estats (estats.c, docs/estats.md). Timestamps are indexed 0..5 for T1..T6; bit i of have
 * says t[i] is known (a time may legitimately be 0 in the simulator).
 */
struct rfw_es_qp {
	uint64_t interval_ns, threshold_ns;
	struct rfw_es_bins *bins; /* in-place binning; NULL: records go to sink */
	rfw_es_sink_fn sink;      /* the device's sink when the QP was created */
	void *sink_ctx;
	bool ring; /* records go packed to the device's ring (set when the QP was created) */
	uint64_t twin_end; /* end of the trigger's interval; 0 before the first record */
	/* The entry time and RX time (0: the host gave none) of the last packet received (rx_now
	 * UINT64_MAX: none yet). */
	uint64_t rx_now, rx_ts;
	uint32_t slot;   /* the QP's slot on its device (QPN - qpn_base), for records' meta */
	uint64_t handed; /* records given to the sink (in place, the bins count theirs) */
	uint64_t triggers;
	bool trig_armed, trig_pending;
	struct rfw_es_trigger trig;
};
int rfw_es_qp_alloc(struct rfw_qp *qp);
void rfw_es_qp_free(struct rfw_qp *qp);
/* The requester handed a packet of @w to the host at @now (inline: once per packet sent): its
 * first packet is T2, its last T3. A WQE's first transmission starts at its first packet and
 * goes in order, so the first packet handed is the one with T2 not yet known, and once T3 is
 * known every packet is a retransmission and moves nothing. */
static inline void rfw_es_tx(struct rfw_swqe *w, uint64_t now, bool last)
{
	struct rfw_es_wts *ts = &w->es;
	unsigned have = ts->have;

	if (have & 4)
		return;
	if (!(have & 2))
		ts->t[1] = now;
	ts->t[2] = now; /* T3 only once its bit says so: a later packet may still overwrite it */
	ts->have = (uint8_t)(have | 2 | (unsigned)last << 2);
}
static inline uint8_t rfw_es_status_of(enum rfw_wc_status st)
{
	return st == RFW_WC_SUCCESS        ? RFW_ES_SUCCESS
	       : st == RFW_WC_WR_FLUSH_ERR ? RFW_ES_FLUSH
	                                   : RFW_ES_ERROR;
}

/* Each send opcode's op (enum rfw_es_op) where a record's meta has it (RFW_ES_META): the one
 * table of it, which the completion ORs in as it is (a switch cost a bounds test there: the
 * opcode was checked at post) and estats.c's es_op_of shifts down. */
static const uint32_t rfw_es_op_meta[RFW_WR__COUNT] = {
    [RFW_WR_RDMA_WRITE] = RFW_ES_META(0, 0, RFW_ES_OP_WRITE, 0),
    [RFW_WR_RDMA_WRITE_WITH_IMM] = RFW_ES_META(0, 0, RFW_ES_OP_WRITE, 0),
    [RFW_WR_SEND] = RFW_ES_META(0, 0, RFW_ES_OP_SEND, 0),
    [RFW_WR_SEND_WITH_IMM] = RFW_ES_META(0, 0, RFW_ES_OP_SEND, 0),
    [RFW_WR_SEND_WITH_INV] = RFW_ES_META(0, 0, RFW_ES_OP_SEND, 0),
    [RFW_WR_RDMA_READ] = RFW_ES_META(0, 0, RFW_ES_OP_READ, 0),
    [RFW_WR_ATOMIC_CMP_AND_SWP] = RFW_ES_META(0, 0, RFW_ES_OP_ATOMIC, 0),
    [RFW_WR_ATOMIC_FETCH_AND_ADD] = RFW_ES_META(0, 0, RFW_ES_OP_ATOMIC, 0),
    [RFW_WR_LOCAL_INV] = RFW_ES_META(0, 0, RFW_ES_OP_LOCAL, 0),
    [RFW_WR_BIND_MW] = RFW_ES_META(0, 0, RFW_ES_OP_LOCAL, 0),
};

/* T4 of a WQE sent whole, completing now: the RX time of the packet being processed (its entry
 * time when the host gave none), if this completion comes from one; false, @t4 as it was: it
 * does not. */
static inline bool rfw_es_t4(const struct rfw_es_qp *es, uint64_t now, uint64_t *t4)
{
	if (es->rx_now != now)
		return false;
	*t4 = es->rx_ts ? es->rx_ts : now;
	return true;
}

/* rfw_es_complete_cqe's side entry of a WQE not sent whole (a flush, a local error), at CQ
 * position @i (estats.c). */
void rfw_es_cqe_partial(struct rfw_qp *qp, const struct rfw_swqe *w, enum rfw_wc_status st,
                        uint32_t i);

/*
 * @w, the WQE at comp.idx, completes with the CQE at its send CQ's prod, room for it tested
 * (rfw_cq_slot) and not yet committed: its record is packed once into that CQE's side entry
 * (half a line; T6 offset 0 until polled), with everything the ring's record carries but T6's
 * offset (the QP's slot, and T6's bit, which the poll always sets), so the poll copies it as
 * it is. The usual case, every time T1..T3 known, tests once. Inline: its one caller is the
 * completion (rfw_qp_complete_swqe_inl), behind its test of qp->es.
 */
static inline void rfw_es_complete_cqe(struct rfw_qp *qp, const struct rfw_swqe *w,
                                       enum rfw_wc_status st)
{
	const struct rfw_es_qp *es = qp->es;
	struct rfw_cq *cq = qp->send_cq;
	uint32_t i = cq->prod & cq->mask, meta;
	uint64_t t1 = w->es.t[0], t4 = t1, now = qp->now;

	/* cq->es is there: a QP's CQs are its device's (rfw_create_qp), which gives them side
	 * entries when it gives its QPs Estats. */
	if (__builtin_expect(w->es.have != 7, 0)) {
		rfw_es_cqe_partial(qp, w, st, i);
		return;
	}
	/* T1, T2, T3, T5 known and T6's bit (0x37); T4 when rfw_es_t4 has it. */
	meta = RFW_ES_META(es->slot, 0x37u, 0, rfw_es_status_of(st)) | rfw_es_op_meta[w->wr.opcode];
	if (rfw_es_t4(es, now, &t4))
		meta |= RFW_ES_META(0, 8u, 0, 0);
	rfw_es_cqe_pack(&cq->es[i], &cq->es_wide[i], t1, w->es.t[1], w->es.t[2], t4, now, meta);
}
/* @w, the WQE at comp.idx, completes without a CQE (unsignalled, successful). */
void rfw_es_complete_nocqe(struct rfw_qp *qp, const struct rfw_swqe *w, enum rfw_wc_status st);
void rfw_es_trig_window(struct rfw_es_qp *es, uint64_t now);
/* The records of @n CQEs polled at @now, CQ ring positions @idx.., copied to @wc (estats.c). */
void rfw_es_polled_burst(struct rfw_cq *cq, uint32_t idx, int n, uint64_t now,
                         const struct rfw_wc *wc);

/* mr.c */
struct rfw_mr *rfw_mr_lookup(struct rfw_dev *dev, uint32_t key);
/* The MR @key names if LOCAL_INV / SEND with Invalidate on @qp may invalidate it, else NULL. */
struct rfw_mr *rfw_mr_invalidatable(struct rfw_qp *qp, uint32_t key);
/* Invalidate what rfw_mr_invalidatable found (a window is unbound from its MR). */
void rfw_mr_invalidate(struct rfw_mr *mr);
/* Execute a Bind Memory Window WR on @qp (IBA 10.6.7.2): 0, or -EINVAL (MW_BIND_ERR). */
int rfw_mw_bind(struct rfw_qp *qp, const struct rfw_send_wr *wr);
/* Whether @mr (a window) grants @qp access to [va, va + len) with @access. */
bool rfw_mw_check_remote(const struct rfw_mr *mw, const struct rfw_qp *qp, uint64_t va,
                         uint64_t len, unsigned access);
/* The MR @rkey names, if [va, va + len) is inside it and @access is granted; NULL else. */
struct rfw_mr *rfw_mr_check_remote(struct rfw_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
                                   unsigned access);
/* mr.c: a zeroed MR or window of @pd with a fresh key (NULL, errno ENOMEM), and back. */
struct rfw_mr *rfw_key_new(struct rfw_pd *pd);
void rfw_key_free(struct rfw_mr *mr);
/* Whether every SGE lies in a valid MR of the QP's PD with @access. */
int rfw_sge_check(struct rfw_qp *qp, const struct rfw_sge *sge, int n, unsigned access);
/* The MR or window of @key, else NULL. Inline: every packet looks up an lkey or an rkey. */
static inline struct rfw_mr *rfw_mr_lookup_inl(struct rfw_dev *dev, uint32_t key)
{
	uint32_t i = key >> 8;
	struct rfw_mr *mr;

	if (i >= dev->attr.max_mr)
		return NULL;
	mr = dev->mrs[i];
	return (mr && mr->key == key) ? mr : NULL;
}
/* Whether [va, va + len) lies inside @mr (no overflow). */
static inline bool rfw_mr_contains(const struct rfw_mr *mr, uint64_t va, uint64_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)mr->addr;

	if (va < base || len > mr->length)
		return false;
	return va - base <= mr->length - len;
}
/* rfw_mr_check_remote, inline where the responder checks a WRITE's R_Key. */
static inline struct rfw_mr *rfw_mr_check_remote_inl(struct rfw_qp *qp, uint32_t rkey, uint64_t va,
                                                     uint64_t len, unsigned access)
{
	struct rfw_mr *mr = rfw_mr_lookup_inl(qp->dev, rkey);

	if (mr != NULL && mr->mw_type) /* an R_Key of a memory window */
		return rfw_mw_check_remote(mr, qp, va, len, access) ? mr : NULL;
	if (mr == NULL || !mr->valid || mr->pd != qp->pd)
		return NULL;
	if ((mr->access & access) != access || (qp->attr.qp_access_flags & access) != access)
		return NULL;
	if (!rfw_mr_contains(mr, va, len))
		return NULL;
	return mr;
}
/* rfw_sge_check, inline where the requester validates each new WQE. */
static inline int rfw_sge_check_inl(struct rfw_qp *qp, const struct rfw_sge *sge, int n,
                                    unsigned access)
{
	for (int i = 0; i < n; i++) {
		struct rfw_mr *mr;

		if (sge[i].length == 0)
			continue;
		mr = rfw_mr_lookup_inl(qp->dev, sge[i].lkey);
		if (mr == NULL || mr->mw_type || !mr->valid || mr->pd != qp->pd ||
		    (mr->access & access) != access ||
		    !rfw_mr_contains(mr, sge[i].addr, sge[i].length))
			return -EACCES;
	}
	return 0;
}
/*
 * memcpy(@dst, @src, @n), with 16 to 64 bytes (a small message's payload, on every packet of
 * it) moved inline: two or four 16-byte moves, the last ones overlapping when @n is not a
 * multiple of 16: libc's memcpy is a call through the PLT and a dispatch on the size, more than
 * the moves themselves for such a copy (docs/perf.md "(fifteenth)").
 */
static inline void rfw_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst, a[16], b[16], c[16], e[16];
	const uint8_t *s = src;

	if (n < 16 || n > 64) {
		memcpy(d, s, n);
	} else if (n <= 32) {
		memcpy(a, s, 16);
		memcpy(b, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + n - 16, b, 16);
	} else {
		memcpy(a, s, 16);
		memcpy(b, s + 16, 16);
		memcpy(c, s + n - 32, 16);
		memcpy(e, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + 16, b, 16);
		memcpy(d + n - 32, c, 16);
		memcpy(d + n - 16, e, 16);
	}
}

/* Copy between a scatter/gather list (at byte offset @off) and a flat buffer. */
void rfw_sge_copy_out_sgl(const struct rfw_sge *sge, int n, uint32_t off, uint8_t *dst,
                          uint32_t len);
/* The one-SGE case inline (the common WR: every packet sent copies its payload so): the range
 * inside that SGE, one memcpy; else the walk of the list. */
static inline void rfw_sge_copy_out(const struct rfw_sge *sge, int n, uint32_t off, uint8_t *dst,
                                    uint32_t len)
{
	if (n == 1 && off <= sge->length && len <= sge->length - off)
		rfw_copy(dst, (const uint8_t *)(uintptr_t)sge->addr + off, len);
	else
		rfw_sge_copy_out_sgl(sge, n, off, dst, len);
}
void rfw_sge_copy_in(const struct rfw_sge *sge, int n, uint32_t off, const uint8_t *src,
                     uint32_t len);

/* Keeps the compiler from merging the loads before it and after it into one wide load: a
 * caller's struct written by narrow stores just before it is read would stall store
 * forwarding (see swqe_copy_wr in qp.c). */
#define RFW_NO_LOAD_MERGE() __asm__ volatile("" ::: "memory")

/* cq.c */
/*
 * The CQE @cq fills next, every field set here but the receive-only ones (zero), or NULL: a
 * full CQ loses the completion and counts it (ibv reports an async CQ error). The caller sets
 * what else it has, then rfw_cq_commit. Built in place, not on the stack and copied: the copy's
 * wide loads over the fresh narrow stores of a stack CQE stalled store forwarding on every
 * completion (65 % of the copy's samples in perf).
 */
static inline struct rfw_wc *rfw_cq_slot(struct rfw_qp *qp, struct rfw_cq *cq, uint64_t wr_id,
                                         enum rfw_wc_status st, enum rfw_wc_opcode op)
{
	struct rfw_wc *e;

	if (cq->prod - cq->cons >= cq->size) {
		rfw_cnt(qp, RFW_CNT_cq_overflow);
		return NULL;
	}
	e = &cq->ring[cq->prod & cq->mask];
	e->wr_id = wr_id;
	e->status = st;
	e->opcode = op;
	e->vendor_err = 0;
	e->byte_len = 0;
	e->imm_data = 0;
	e->invalidated_rkey = 0;
	e->qp_num = qp->qpn;
	e->src_qp = 0;
	e->wc_flags = 0;
	e->ts_ns = qp->now;
	return e;
}

static inline void rfw_cq_commit(struct rfw_cq *cq)
{
	cq->prod++;
}

/* qp.c */
void rfw_qp_error(struct rfw_qp *qp);
void rfw_qp_complete_swqe(struct rfw_qp *qp, struct rfw_swqe *w, enum rfw_wc_status st);
/* The send CQE's opcode of each WR opcode. */
static const enum rfw_wc_opcode rfw_wc_op_of[RFW_WR__COUNT] = {
    [RFW_WR_RDMA_WRITE] = RFW_WC_RDMA_WRITE,
    [RFW_WR_RDMA_WRITE_WITH_IMM] = RFW_WC_RDMA_WRITE,
    [RFW_WR_SEND] = RFW_WC_SEND,
    [RFW_WR_SEND_WITH_IMM] = RFW_WC_SEND,
    [RFW_WR_SEND_WITH_INV] = RFW_WC_SEND,
    [RFW_WR_RDMA_READ] = RFW_WC_RDMA_READ,
    [RFW_WR_ATOMIC_CMP_AND_SWP] = RFW_WC_COMP_SWAP,
    [RFW_WR_ATOMIC_FETCH_AND_ADD] = RFW_WC_FETCH_ADD,
    [RFW_WR_LOCAL_INV] = RFW_WC_LOCAL_INV,
    [RFW_WR_BIND_MW] = RFW_WC_BIND_MW,
};

/* rfw_qp_complete_swqe, inline: the completer's row of covered WQEs (comp.c retire_covered),
 * where @st is RFW_WC_SUCCESS and the error paths fold away. */
static inline __attribute__((always_inline)) void
rfw_qp_complete_swqe_inl(struct rfw_qp *qp, struct rfw_swqe *w, enum rfw_wc_status st)
{
	w->state = SWQE_DONE;
	w->status = st;
	if (qp->req.rd_n != 0 && w->psn_valid)
		rfw_rd_out_retire(qp, w);
	if (st != RFW_WC_SUCCESS || w->signaled) {
		struct rfw_wc *wc;

		if (st == RFW_WC_WR_FLUSH_ERR)
			rfw_cnt(qp, RFW_CNT_req_cqe_flush_error);
		else if (st != RFW_WC_SUCCESS)
			rfw_cnt(qp, RFW_CNT_req_cqe_error);
		wc = rfw_cq_slot(qp, qp->send_cq, w->wr.wr_id, st, rfw_wc_op_of[w->wr.opcode]);
		if (wc != NULL) {
			if (st == RFW_WC_SUCCESS && w->wr.opcode == RFW_WR_RDMA_READ)
				wc->byte_len = w->length;
			if (st == RFW_WC_SUCCESS && (w->wr.opcode == RFW_WR_ATOMIC_CMP_AND_SWP ||
			                             w->wr.opcode == RFW_WR_ATOMIC_FETCH_AND_ADD))
				wc->byte_len = 8;
			/* Its record beside the CQE (a CQE lost to a full CQ has none). */
			if (qp->es)
				rfw_es_complete_cqe(qp, w, st);
			rfw_cq_commit(qp->send_cq);
		}
	} else if (qp->es) {
		rfw_es_complete_nocqe(qp, w, st);
	}
	qp->comp.idx++;
	if ((int32_t)(qp->req.idx - qp->comp.idx) < 0) {
		qp->req.idx = qp->comp.idx;
		qp->req.off = 0;
	}
}
static inline void rfw_qp_event(struct rfw_qp *qp, enum rfw_qp_event ev)
{
	if (qp->event != NULL)
		qp->event(qp->context, qp, ev);
}

/* qp.c: a receive WR into @w (a QP's or an SRQ's slot): its scatter list (at most @max_sge
 * entries, RFW_MAX_MSG_SIZE bytes in all) checked, then copied. 0, or EINVAL with @w untouched. */
int rfw_rwqe_set(struct rfw_rwqe *w, const struct rfw_recv_wr *wr, uint32_t max_sge);

/* srq.c: receive WQEs ready at rq_cons (up to @want, taking them from the SRQ if any). */
uint32_t rfw_rq_avail(struct rfw_qp *qp, uint32_t want);
void rfw_srq_wait(struct rfw_qp *qp);   /* wake @qp at the SRQ's next post (srq.c) */
void rfw_srq_unwait(struct rfw_qp *qp); /* off the SRQ's waiters: the QP goes away */

/* Tell the host @qp has something to send, as an rdma-core provider's post_send writes the
 * doorbell record. Inline: every post rings it. */
static inline void rfw_qp_doorbell(struct rfw_qp *qp)
{
	if (qp->dev->ops.doorbell != NULL)
		qp->dev->ops.doorbell(qp->dev->io_ctx, qp);
}

void rfw_qp_complete_rwqe(struct rfw_qp *qp, const struct rfw_rwqe *w, enum rfw_wc_status st,
                          enum rfw_wc_opcode op, uint32_t byte_len, unsigned flags, uint32_t imm,
                          uint32_t inv_rkey);
/* RTS or SQD: the send queue runs. Inline: the requester asks once or twice per packet. */
static inline bool rfw_qp_sq_active(const struct rfw_qp *qp)
{
	return qp->state == RFW_QPS_RTS || qp->state == RFW_QPS_SQD;
}
/* UC and UD: a posted WQE not sent yet (their WQEs complete when sent). */
static inline bool rfw_sq_unsent(const struct rfw_qp *qp)
{
	return rfw_qp_sq_active(qp) && qp->req.idx != qp->sq_prod;
}

/* req.c */
bool rfw_req_has_work(const struct rfw_qp *qp, uint64_t now_ns);
int rfw_req_tx(struct rfw_qp *qp); /* one packet: 1 sent, 0 nothing to send, <0 no buffer */
/* After rfw_req_tx sent a packet: up to @max more in the same call, when they are SEND or
 * WRITE packets, either mode (the rest of that message, then the messages after it that start
 * with nothing for next_wqe to weigh). How many were sent. */
unsigned rfw_req_tx_more(struct rfw_qp *qp, unsigned max);
/* Go back N: resend from @psn (IBA 9.7.5.1.2 / 9.7.6.1.3). */
void rfw_req_rewind(struct rfw_qp *qp, uint32_t psn);
void rfw_req_arm_timer(struct rfw_qp *qp);

/* comp.c */
void rfw_comp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt);
void rfw_comp_timer(struct rfw_qp *qp);
void rfw_comp_probe(struct rfw_qp *qp); /* gbn: comp.probe_at reached */
/* Complete WQEs at the head that need no response (local operations, errors). */
void rfw_comp_drain_done(struct rfw_qp *qp);
/* Its first test inline: the completer runs it twice per WQE retired, and it nearly always
 * finds the head not done (or the SQ empty). */
static inline void rfw_comp_drain(struct rfw_qp *qp)
{
	if (qp->comp.idx != qp->sq_prod && rfw_sq_at(qp, qp->comp.idx)->state == SWQE_DONE)
		rfw_comp_drain_done(qp);
}

/* resp.c */
void rfw_resp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt);
bool rfw_resp_has_work(const struct rfw_qp *qp);
int rfw_resp_tx(struct rfw_qp *qp); /* as rfw_req_tx */
void rfw_resp_reset(struct rfw_qp *qp);

/* sr.c: selective repeat (docs/transport-sr.md) */
int rfw_sr_setup(struct rfw_qp *qp); /* allocate (mode set to SR) */
void rfw_sr_free(struct rfw_qp *qp);
void rfw_sr_reset(struct rfw_qp *qp);      /* both halves (RESET) */
void rfw_sr_reset_resp(struct rfw_qp *qp); /* RQ_PSN set */
void rfw_sr_reset_req(struct rfw_qp *qp);  /* SQ_PSN set */
void rfw_sr_mtu(struct rfw_qp *qp);        /* path MTU set */
void rfw_sr_resp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt);
void rfw_sr_recv_posted(struct rfw_qp *qp); /* a receive WQE posted: a held ePSN goes on (any QP) */
void rfw_sr_comp_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt);
void rfw_sr_timer(struct rfw_qp *qp);
void rfw_sr_rnr_expired(struct rfw_qp *qp);
void rfw_sr_arm_timer(struct rfw_qp *qp, bool restart);
/* The PSN to retransmit next (and its WQE), if any. */
struct rfw_swqe *rfw_sr_next_rtx(struct rfw_qp *qp, uint32_t *psn, uint32_t *npsn);
void rfw_sr_sent_rtx(struct rfw_qp *qp, uint32_t psn, uint32_t npsn);
/* The bytes SR has in flight: PSNs sent and neither acknowledged nor SACKed, at the MTU.
 * Inline: the requester asks up to three times a packet. */
static inline uint64_t rfw_sr_inflight_bytes(const struct rfw_qp *qp)
{
	int32_t n = rfw_psn_diff(qp->req.high_psn, qp->comp.psn) - (int32_t)qp->sr->nsacked;

	return n > 0 ? (uint64_t)n * qp->mtu : 0;
}

/* Whether the BDP cap lets one more new packet go. Out of line: inlined into next_wqe, it
 * cost go-back-N's packets 10 instructions of registers (2026-11-30). */
bool rfw_sr_may_send(const struct rfw_qp *qp);
/* The SACK block of an SR ACK/NAK into @buf (capacity bytes); returns its length. */
uint32_t rfw_sr_build_sack(struct rfw_qp *qp, uint8_t *buf, uint32_t cap);
uint32_t rfw_sr_sack_len(const struct rfw_qp *qp);
/* resp.c helpers SR reuses */
void rfw_resp_run_gbn(struct rfw_qp *qp, const struct rfw_ib_pkt *pkt);
void rfw_resp_queue_sr_state(struct rfw_qp *qp);
void rfw_resp_queue_nak(struct rfw_qp *qp, uint8_t syndrome, uint32_t psn);
/* The responder failed a request with NAK @code: the affiliated error event of that code. */
void rfw_resp_fatal_event(struct rfw_qp *qp, unsigned code);

/* Packet output shared by all three. */
/*
 * rfw_tx_begin: a buffer for one packet (NULL if the host has none) and @p initialised with
 * the BTH; the caller fills the extended headers in @p and the payload at buf + op->hdr_len,
 * then rfw_tx_end builds the headers, zeroes the pad and hands the packet to the host.
 */
uint8_t *rfw_tx_begin(struct rfw_qp *qp, struct rfw_ib_pkt *p, uint8_t opcode, uint32_t psn,
                      uint32_t payload_len);
/* rfw_tx_begin's @p, for a packet of @oi whose buffer the caller took. */
void rfw_tx_pkt_init(const struct rfw_qp *qp, struct rfw_ib_pkt *p,
                     const struct rfw_ib_opcode_info *oi, uint32_t psn, uint32_t payload_len);
void rfw_tx_end(struct rfw_qp *qp, uint8_t *buf, struct rfw_ib_pkt *p, uint32_t payload_len);
/* As rfw_tx_end, a UD datagram to @ah. */
void rfw_tx_end_ah(struct rfw_qp *qp, uint8_t *buf, struct rfw_ib_pkt *p, uint32_t payload_len,
                   const struct rfw_ah_attr *ah);
/* A buffer for a packet of @oi with @payload_len bytes after its headers, and room for their
 * pad (NULL if the host has none): rfw_tx_begin's, for the callers that write the headers
 * straight. */
static inline uint8_t *rfw_tx_alloc(struct rfw_qp *qp, const struct rfw_ib_opcode_info *oi,
                                    uint32_t payload_len)
{
	return qp->dev->ops.tx_alloc(qp->dev->io_ctx, qp,
	                             oi->hdr_len + payload_len + rfw_ib_padcnt(payload_len));
}
/* Whether a payload of @len bytes may go to the host from where it is (rfw_io_ops.tx_alloc_ref):
 * long enough, and a multiple of 4, so it needs no pad. */
static inline bool rfw_tx_ref_len(const struct rfw_qp *qp, uint32_t len)
{
	return len >= qp->dev->tx_ref_from && (len & 3) == 0;
}
/*
 * The bytes [@off, @off + @len) of a message in @sge[0 .. @n) when they lie in one SGE, else
 * NULL (copied): for a payload rfw_tx_ref_len accepted.
 */
static inline const uint8_t *rfw_tx_ref_span(const struct rfw_sge *sge, int n, uint32_t off,
                                             uint32_t len)
{
	for (int i = 0; i < n; i++) {
		if (off < sge[i].length)
			return len <= sge[i].length - off
			           ? (const uint8_t *)(uintptr_t)sge[i].addr + off
			           : NULL;
		off -= sge[i].length;
	}
	return NULL;
}
/* rfw_tx_alloc for a packet of @oi whose @ext bytes after its headers are written and whose
 * @len bytes at @payload the host sends from there (rfw_io_ops.tx_alloc_ref). */
static inline uint8_t *rfw_tx_alloc_ref(struct rfw_qp *qp, const struct rfw_ib_opcode_info *oi,
                                        uint32_t ext, const uint8_t *payload, uint32_t len)
{
	return qp->dev->ops.tx_alloc_ref(qp->dev->io_ctx, qp, oi->hdr_len + ext, payload, len);
}
/* The tail of rfw_tx_end_ah for a packet of @oi whose headers and @payload_len bytes after
 * them are written (@ackreq and @psn as its BTH has them): the pad zeroed, the packet counted
 * and handed to the host. The requester's SEND/WRITE packets and the READ responses come here
 * straight (rfw_ib_put_sw, rfw_ib_put_aeth). */
void rfw_tx_finish(struct rfw_qp *qp, uint8_t *buf, const struct rfw_ib_opcode_info *oi,
                   uint32_t payload_len, bool ackreq, uint32_t psn, const struct rfw_ah_attr *ah);
/* rfw_tx_finish, inline: the requester's every packet (emit). */
static inline __attribute__((always_inline)) void
rfw_tx_finish_inl(struct rfw_qp *qp, uint8_t *buf, const struct rfw_ib_opcode_info *oi,
                  uint32_t payload_len, bool ackreq, uint32_t psn, const struct rfw_ah_attr *ah)
{
	uint32_t pad = rfw_ib_padcnt(payload_len), len = oi->hdr_len + payload_len + pad;
	struct rfw_tx_meta m;

	for (uint32_t i = len - pad; i < len; i++)
		buf[i] = 0;
	rfw_cnt(qp, RFW_CNT_tx_packets);
	rfw_cnt_add(qp, RFW_CNT_tx_bytes, len);
	if ((oi->flags & RFW_OPF_PAYLOAD) && qp->cc_ops && qp->cc_ops->on_tx)
		qp->cc_ops->on_tx(qp->cc, qp->now, len);
	m.kind = (oi->flags & RFW_OPF_CNP)       ? RFW_TX_CNP
	         : (oi->flags & RFW_OPF_REQUEST) ? RFW_TX_REQUEST
	                                         : RFW_TX_RESPONSE;
	m.ack_req = ackreq;
	m.psn = psn & RFW_PSN_MASK;
	m.ah = ah;
	qp->dev->ops.tx_send(qp->dev->io_ctx, qp, buf, len, &m);
}
/* The headers of @w's SEND, WRITE or READ request packet of @oi at @psn, @paylen bytes from
 * byte @off of the message, written straight from the WQE (rfw_ib_put_sw): RC's requester and
 * UC's. @dma_len: the RETH's (a WRITE's whole message, the bytes a READ request asks for). */
static inline __attribute__((always_inline)) void
rfw_tx_put_sw(const struct rfw_qp *qp, uint8_t *buf, const struct rfw_ib_opcode_info *oi,
              const struct rfw_swqe *w, uint32_t psn, uint32_t off, uint32_t paylen, bool se,
              bool ackreq, uint32_t dma_len)
{
	rfw_ib_put_sw(buf, oi, se, rfw_ib_padcnt(paylen), 0xffff /* IBA 10.9.1.2 */,
	              qp->attr.dest_qp_num, ackreq, psn, w->wr.wr.rdma.remote_addr + off,
	              w->wr.wr.rdma.rkey, dma_len,
	              (oi->hdrs & RFW_HDR_IMMDT) ? w->wr.imm_data : w->wr.invalidate_rkey);
}
/* SR marks every packet of its QPs in Resv7 (docs/transport-sr.md). */
static inline void rfw_tx_sr_mark(const struct rfw_qp *qp, uint8_t *buf)
{
	if (qp->sr)
		buf[8] = (uint8_t)((buf[8] & 0x80) | RFW_SR_MARK);
}

/* uc.c: the unreliable connected service. */
int rfw_uc_tx(struct rfw_qp *qp); /* as rfw_req_tx */
int rfw_uc_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *p);

/* ud.c: the unreliable datagram service. */
int rfw_ud_tx(struct rfw_qp *qp); /* as rfw_req_tx */
int rfw_ud_rx(struct rfw_qp *qp, const struct rfw_ib_pkt *p, const struct rfw_rx_info *rx);

#endif
