/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA Estats (docs/estats.md): per work request timestamps and latency histograms.
 *
 * Timestamps of a send WQE, all from the time the host hands the transport (now_ns):
 *   T1 posted (rfw_post_send)            T2 first packet handed to the host (tx_send)
 *   T3 last packet handed to the host    T4 the acknowledging packet received (its rx_ts_ns)
 *   T5 CQE written (rfw_wc.ts_ns)        T6 CQE polled (rfw_poll_cq_ts, or rfw_poll_cq with the
 *                                           time the host last gave rfw_dev_clock)
 * T2/T3 are first transmissions only (a retransmission does not move them).
 *
 * Histograms are log-linear: values below 16 ns have their own bucket; above, each power of
 * two is split in 16 equal buckets, so a bucket is at most 1/16 (6.25 %) of its lower bound
 * wide. Values from 2^36 ns (68.7 s) on share the last bucket (max stays exact). One histogram
 * per QP x operation x completion status x stage x window (current, last complete interval).
 *
 * Off (rfw_dev_attr.estats == 0) the cost is one not-taken branch on qp->es per hook. On,
 * the state is allocated with the QP / CQ (never on the packet path); its size is
 * RFW_ES_QP_BYTES per QP plus 64 bytes per CQ entry (a send WQE keeps its T1..T3 in itself).
 */
#ifndef RFW_TRANSPORT_ESTATS_H
#define RFW_TRANSPORT_ESTATS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rfw_qp;
struct rfw_dev;

#define RFW_ES_SUB_BITS 4 /* 16 sub-buckets per power of two */
#define RFW_ES_SUB      (1u << RFW_ES_SUB_BITS)
#define RFW_ES_MAX_EXP  35 /* highest power of two with its own buckets: 2^35 .. 2^36 - 1 */
#define RFW_ES_BUCKETS  ((RFW_ES_MAX_EXP - RFW_ES_SUB_BITS + 2) * RFW_ES_SUB) /* 528 */

struct rfw_es_hist {
	uint64_t count;
	uint64_t max;
	uint32_t b[RFW_ES_BUCKETS];
};

/*
 * Bucket of a value in ns (inline and branch-free: seven of them per completed WQE). With sh
 * the top bit of max(v, 16) less 4, a value's bucket is sh x 16 plus v >> sh (its top five
 * bits): below 32 that is v itself, above it 16 buckets per power of two. The index grows with
 * v, so values from 2^36 ns on land in the last bucket by capping the index.
 */
static inline unsigned rfw_es_bucket(uint64_t v)
{
	unsigned sh = 63u - (unsigned)__builtin_clzll(v | RFW_ES_SUB) - RFW_ES_SUB_BITS;
	unsigned idx = (sh << RFW_ES_SUB_BITS) + (unsigned)(v >> sh);

	return idx < RFW_ES_BUCKETS - 1 ? idx : RFW_ES_BUCKETS - 1;
}

/* The first value of a bucket. */
uint64_t rfw_es_bucket_lo(unsigned idx);

static inline void rfw_es_hist_add(struct rfw_es_hist *h, uint64_t v)
{
	h->b[rfw_es_bucket(v)]++;
	h->count++;
	h->max = v > h->max ? v : h->max; /* a conditional move, not a branch to mispredict */
}

/* The q quantile (0 < q <= 1): the highest value of the bucket holding rank ceil(q x count),
 * capped at max; 0 if empty. */
uint64_t rfw_es_hist_quantile(const struct rfw_es_hist *h, double q);

#define RFW_FOREACH_ES_STAGE(X)                                                                    \
	X(t6_t1, "posted to polled: what the consumer sees")                                       \
	X(t5_t1, "posted to CQE written: what the NIC sees")                                       \
	X(t2_t1, "posted to first packet out: SQ wait (pacing, window, earlier WQEs)")             \
	X(t3_t2, "first to last packet out: serialisation and pacing of the message")              \
	X(t4_t3, "last packet out to acknowledging packet in: the network round trip + peer")      \
	X(t5_t4, "acknowledging packet in to CQE written: completer processing")                   \
	X(t6_t5, "CQE written to CQE polled: the consumer's polling delay")

enum rfw_es_stage {
#define RFW_ES_STAGE_ENUM(name, doc) RFW_ES_##name,
	RFW_FOREACH_ES_STAGE(RFW_ES_STAGE_ENUM)
#undef RFW_ES_STAGE_ENUM
	    RFW_ES__STAGES
};
const char *rfw_es_stage_name(enum rfw_es_stage s);

/* Operation classes (rows' "op"). */
enum rfw_es_op {
	RFW_ES_OP_SEND,
	RFW_ES_OP_WRITE,
	RFW_ES_OP_READ,
	RFW_ES_OP_ATOMIC,
	RFW_ES_OP_LOCAL,
	RFW_ES__OPS
};
const char *rfw_es_op_name(enum rfw_es_op op);
/* Completion status classes (rows' "status"). */
enum rfw_es_status { RFW_ES_SUCCESS, RFW_ES_FLUSH, RFW_ES_ERROR, RFW_ES__STATUSES };
const char *rfw_es_status_name(enum rfw_es_status st);

/* (op, status) combinations a QP keeps histograms for; WQEs of a further one are counted in
 * rfw_es_info.unrecorded. */
#define RFW_ES_SLOTS 4

enum rfw_es_window { RFW_ES_CURRENT = 0, RFW_ES_LAST = 1 };

struct rfw_es_row {
	uint32_t qpn;
	uint8_t op;     /* enum rfw_es_op */
	uint8_t status; /* enum rfw_es_status */
	uint8_t stage;  /* enum rfw_es_stage */
	uint64_t count, p50, p99, p999, max;
};

struct rfw_es_info {
	bool enabled;
	uint64_t interval_ns, threshold_ns;
	uint64_t window_start_ns; /* start of the current interval */
	bool have_last;           /* a complete interval is in the last window */
	uint64_t recorded;        /* WQEs recorded (all windows) */
	uint64_t unrecorded;      /* WQEs with no free (op, status) slot */
	uint64_t triggers;        /* threshold crossings reported (rate-limited) */
};

/* Approximate size of one QP's Estats state (histograms of RFW_ES_SLOTS combinations). */
#define RFW_ES_QP_BYTES                                                                            \
	((unsigned long)RFW_ES_SLOTS * 2 * RFW_ES__STAGES * sizeof(struct rfw_es_hist))

/*
 * Rows of @qp's @window with a nonzero count, in slot x stage order, into @rows (at most
 * @max); returns how many, 0 when Estats is off. Rotates the windows first if @now_ns is past
 * the current interval (from the thread that owns the QP).
 */
int rfw_qp_estats_rows(struct rfw_qp *qp, enum rfw_es_window window, uint64_t now_ns,
                       struct rfw_es_row *rows, int max);
int rfw_qp_estats_info(const struct rfw_qp *qp, struct rfw_es_info *info);

/* A completed send WQE's timestamps as Estats records them (T6 set when its CQE was polled). */
struct rfw_es_rec {
	uint64_t t[6]; /* T1..T6 */
	uint64_t wr_id;
	uint32_t qpn;
	uint8_t have;   /* bit i: t[i] is known */
	uint8_t op, st; /* enum rfw_es_op, enum rfw_es_status */
};

/* The time a record is binned at: T6 when its CQE was polled, else T5 (no CQE, or none kept). */
static inline uint64_t rfw_es_rec_time(const struct rfw_es_rec *r)
{
	return (r->have & 32) ? r->t[5] : r->t[4];
}

/*
 * The histograms of one QP: two windows of @interval_ns x (op, status) slots x stages. One
 * thread at a time may use one; the QP's own (in-place binning, the default) or, for QPs
 * created after rfw_dev_estats_sink, whichever thread the host bins on.
 */
struct rfw_es_bins;
struct rfw_es_bins *rfw_es_bins_create(uint64_t interval_ns); /* NULL: no memory, or 0 */
void rfw_es_bins_destroy(struct rfw_es_bins *b);
/* Bin @r at @now (its window first moved to the interval of @now); false, and counted in
 * unrecorded, when its (op, status) has no slot left. */
bool rfw_es_bins_add(struct rfw_es_bins *b, const struct rfw_es_rec *r, uint64_t now);
/* Like rfw_qp_estats_rows, for the histograms in @b (rows named @qpn). */
int rfw_es_bins_rows(struct rfw_es_bins *b, uint32_t qpn, enum rfw_es_window window,
                     uint64_t now_ns, struct rfw_es_row *rows, int max);
/* interval_ns, window_start_ns, have_last, recorded and unrecorded of @b into @info. */
void rfw_es_bins_info(const struct rfw_es_bins *b, struct rfw_es_info *info);

/*
 * Hand each recorded WQE of QPs created from now on to @fn(@ctx, record) instead of binning it
 * in the QP: on the thread that polls the CQ (the record is the caller's: copy it), so that a
 * host can bin elsewhere (rfw_es_bins_add) and keep the seven histogram adds of every WQE off
 * its polling thread. The trigger stays with the QP. Such QPs report no rows
 * (rfw_qp_estats_rows: 0) and count in rfw_es_info.recorded the records handed on. NULL: bin in
 * place again. -EINVAL without @dev.
 */
typedef void (*rfw_es_sink_fn)(void *ctx, const struct rfw_es_rec *r);
int rfw_dev_estats_sink(struct rfw_dev *dev, rfw_es_sink_fn fn, void *ctx);

/*
 * Like rfw_dev_estats_sink, but QPs created from now on push each record, packed (32 bytes,
 * transport/es_crec.h: slot QPN - qpn_base, no wr_id), straight into @ring, the host's
 * single-producer single-consumer ring, on the thread that polls the CQ: a completion packs
 * its record once into the CQ's side entry and the poll adds T6 and copies it on, with no call,
 * lookup or repacking per record. A full ring counts the record in ring->dropped. NULL: such
 * QPs drop their records from now on (the host's ring is going away); QPs created later bin in
 * place (or go to the sink, if one is set). Takes precedence over a sink. -EINVAL without @dev.
 */
struct rfw_es_ring;
int rfw_dev_estats_ring(struct rfw_dev *dev, struct rfw_es_ring *ring);

/* A threshold crossing, reported once by rfw_qp_estats_trigger(). */
struct rfw_es_trigger {
	uint64_t at_ns;      /* when the crossing WQE was recorded */
	uint64_t latency_ns; /* its T6-T1, or T5-T1 when it produced no CQE */
	uint8_t stage;       /* RFW_ES_t6_t1 or RFW_ES_t5_t1 */
	uint8_t op, status;
	uint64_t wr_id;
	uint64_t t[6]; /* T1..T6 (0 where not known) */
};
/* Whether a crossing is pending (at most one per QP per interval); clears it. */
bool rfw_qp_estats_trigger(struct rfw_qp *qp, struct rfw_es_trigger *tr);

/* What a trigger dump shows of a QP's transport state (docs/estats.md "Dump"). */
struct rfw_es_qp_state {
	uint32_t next_psn;                  /* requester: next PSN to send */
	uint32_t acked_psn;                 /* completer: next PSN expected to be acknowledged */
	uint32_t high_psn;                  /* one past the highest PSN ever sent */
	uint32_t epsn, msn;                 /* responder: expected PSN, MSN */
	uint32_t sq_posted, sq_outstanding; /* WQEs posted ever (mod 2^32), not yet completed */
	uint8_t retry_left, rnr_left;
	bool retrying, rnr_wait;
	uint64_t ack_timer_ns; /* local ACK timeout deadline; 0 = not armed */
};
struct rfw_es_wqe {
	uint64_t wr_id;
	uint8_t op;    /* enum rfw_es_op */
	uint8_t state; /* 0 posted (not all sent), 1 pending (all sent, awaiting ACK), 2 done */
	bool psn_valid;
	uint32_t first_psn, last_psn, length;
	uint64_t t[3]; /* T1..T3, 0 where not known */
};
/* @qp's PSNs and up to @max outstanding send WQEs (oldest first); returns how many. */
int rfw_qp_estats_state(const struct rfw_qp *qp, struct rfw_es_qp_state *st,
                        struct rfw_es_wqe *wqes, int max);

/* The host's current time, for T6 of completions polled with plain rfw_poll_cq(). */
void rfw_dev_clock(struct rfw_dev *dev, uint64_t now_ns);

#ifdef __cplusplus
}
#endif
#endif
