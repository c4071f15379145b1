/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw RC transport: the verbs-like API.
 *
 * A user of libibverbs recognises the objects (device, PD, MR, CQ, QP), the work requests
 * (rfw_send_wr / rfw_recv_wr), the completions (rfw_wc) and the QP state machine. What is
 * different is the host seam (docs/design.md "The seams"): transport never reads a clock, never
 * does I/O and never allocates on the packet path.
 *
 *   - time:        every entry point that can change protocol state takes uint64_t now_ns;
 *   - packets in:  the host parses a frame (rfw_ib_parse() on the IB part) and hands
 *                  rfw_dev_rx() a struct rfw_rx_info;
 *   - packets out: rfw_qp_tx_responses() and rfw_qp_tx_requests() write the IB part (BTH ..
 *                  payload .. pad, no ICRC) of up to N packets into buffers obtained through
 *                  struct rfw_io_ops; tx_send says what each packet is (struct rfw_tx_meta);
 *                  the host puts Ethernet/IP/UDP in front and the ICRC after;
 *   - when:        the host's scheduler decides when a QP may send before asking for packets:
 *                  responses (and CNPs) whenever rfw_qp_has_responses(), requests only when its
 *                  pacer allows (rfw_qp_has_requests()); rfw_qp_next_deadline() /
 *                  rfw_qp_timer() run the transport's timers;
 *   - doorbell:    posting a work request is the doorbell: rfw_post_send() / rfw_post_recv()
 *                  call the host's rfw_io_ops.doorbell, as an rdma-core provider's post writes
 *                  the doorbell register (no separate "kick" call).
 *
 * Errors: functions returning int return 0 or a negative errno, except rfw_post_send() and
 * rfw_post_recv() (positive errno and *bad_wr, like ibv_post_send) and rfw_poll_cq() (count
 * or negative errno). Constructors return NULL and set errno.
 */
#ifndef RFW_TRANSPORT_VERBS_H
#define RFW_TRANSPORT_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/ib_hdr.h"
#include "transport/rfw_cc_hook.h"
#include "transport/rfw_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rfw_dev;
struct rfw_pd;
struct rfw_mr;
struct rfw_cq;
struct rfw_qp;
struct rfw_srq;
struct rfw_ah;

/* ---- device and host seam ---- */

/* What an outgoing packet is, so the host never parses it to decide how to treat it. */
enum rfw_tx_kind {
	RFW_TX_REQUEST,  /* requester packet (SEND/WRITE/READ request/atomic): paced */
	RFW_TX_RESPONSE, /* ACK/NAK, READ response, atomic ACK: never paced */
	RFW_TX_CNP,      /* congestion notification (Annex A17.9.3): never paced */
};

struct rfw_tx_meta {
	uint8_t kind; /* enum rfw_tx_kind */
	bool ack_req; /* BTH A bit (a request that asks for an ACK) */
	uint32_t psn; /* BTH PSN */
	/* UD: where this datagram goes (the work request's address handle); NULL for RC, whose
	   packets follow the QP's path. */
	const struct rfw_ah_attr *ah;
};

struct rfw_io_ops {
	/*
	 * A buffer for the IB part of one outgoing packet of at most @len bytes. Return NULL if
	 * none is available now: the burst stops and the packet is produced on a later call.
	 */
	uint8_t *(*tx_alloc)(void *io_ctx, struct rfw_qp *qp, uint32_t len);
	/*
	 * The packet in @buf (the pointer tx_alloc returned: the host finds its own buffer from
	 * it) is complete: @len bytes, BTH to pad; @m says what it is.
	 */
	void (*tx_send)(void *io_ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
	                const struct rfw_tx_meta *m);
	/*
	 * Optional: as tx_alloc, for a packet whose @payload_len bytes at @payload (a registered
	 * MR's, checked against its key just before; a multiple of 4, so no pad) the host sends
	 * from where they are instead of having them copied: the buffer returned holds the
	 * @hdr_len bytes in front of them, and tx_send's length counts both. Asked only for
	 * payloads of at least rfw_dev_attr.tx_ref_min bytes within one SGE. The host must be done
	 * reading @payload before the packet's WQE can complete (its PMD copies at the burst):
	 * docs/nic.md "Payload sent from the MR".
	 */
	uint8_t *(*tx_alloc_ref)(void *io_ctx, struct rfw_qp *qp, uint32_t hdr_len,
	                         const uint8_t *payload, uint32_t payload_len);
	/*
	 * Optional: @qp has new work (rfw_post_send / rfw_post_recv accepted WRs). The host's
	 * scheduler puts the QP on its ready list; called on the posting thread.
	 */
	void (*doorbell)(void *io_ctx, struct rfw_qp *qp);
};

/* Defaults rfw_dev_create gives a 0 in these rfw_dev_attr fields (hosts that report them use
 * these names rather than their own copies of the numbers). */
#define RFW_DEF_MAX_UNACKED_PSNS 1024u
#define RFW_DEF_SR_RTO_LOW_NS    100000ull
#define RFW_DEF_SR_RTO_HIGH_NS   1000000ull
#define RFW_DEF_SR_RTO_LOW_PKTS  3u

struct rfw_dev_attr {
	uint32_t max_qp;           /* QP table size (default 64) */
	uint32_t max_mr;           /* MR table size (default 256) */
	uint32_t qpn_base;         /* first QP number (default 17, as rxe: 0 and 1 are special) */
	uint32_t ack_every;        /* requester sets AckReq every N packets, and on each message's
	                              last packet (default 64, as rxe; 0 = last packet only) */
	uint32_t max_unacked_psns; /* requester window in PSNs (default 1024) */
	uint64_t np_min_time_between_cnps_ns; /* built-in notification point (default 4000) */
	/*
	 * Selective repeat (RFW_TRANSPORT_SR QPs only; docs/transport.md "Tunables"). 0 picks the
	 * default.
	 */
	uint32_t sr_window;       /* PSN window, power of two 64..65536 (default 4096) */
	uint64_t sr_rto_low_ns;   /* short retransmission timeout (default 100 us) */
	uint64_t sr_rto_high_ns;  /* long retransmission timeout (default 1 ms) */
	uint32_t sr_rto_low_pkts; /* RTO_low applies with at most this many in flight (def. 3) */
	uint64_t sr_bdp_bytes;    /* cap on bytes in flight (default: link x RTT, below) */
	uint32_t link_gbps;       /* for the bdp default (default 100) */
	uint64_t base_rtt_ns;     /* for the bdp default (default 10000) */
	/*
	 * Payloads of at least this many bytes in one SGE go to rfw_io_ops.tx_alloc_ref, not
	 * copied (SEND and WRITE packets, READ responses); 0 (default): never. The host sets it,
	 * and only with tx_alloc_ref.
	 */
	uint32_t tx_ref_min;
	/*
	 * Estats (docs/estats.md, transport/estats.h): per-WQE timestamps and latency histograms
	 * on every QP and CQ created on the device. Off by default.
	 */
	bool estats;
	uint64_t estats_interval_ns;  /* histogram interval (default 60 s; 1 ms .. 1 h) */
	uint64_t estats_threshold_ns; /* trigger when T6-T1 (or T5-T1) exceeds it; 0 = off */
};

struct rfw_dev *rfw_dev_create(const struct rfw_dev_attr *attr, const struct rfw_io_ops *ops,
                               void *io_ctx);
void rfw_dev_destroy(struct rfw_dev *dev);

/* What the host saw in front of the BTH, plus the parsed IB part. */
struct rfw_rx_info {
	const struct rfw_ib_pkt *pkt; /* from rfw_ib_parse() == RFW_IB_ERR_OK */
	uint8_t ecn;                  /* enum rfw_ecn of the IP header (3 = CE) */
	uint8_t src_ip[16]; /* IPv4-mapped for IPv4: checked against the QP's ah_attr.dgid */
	uint8_t dst_ip[16]; /* ... and ah_attr.sgid */
	uint64_t rx_ts_ns;  /* when the frame arrived (Estats T4); 0: now_ns */
	uint8_t tclass;     /* IPv4 TOS / IPv6 traffic class as received (a UD receive's GRH) */
	uint8_t ttl;        /* IPv4 TTL / IPv6 hop limit as received (0: 64) */
};

/*
 * One received packet. Never fails in a way the host must handle: anything unexpected is
 * counted (rfw_dev_counters) and dropped. Returns 0 when the packet was accepted by a QP,
 * -ENOENT (no such QP), -EINVAL (dropped as malformed or unexpected).
 */
int rfw_dev_rx(struct rfw_dev *dev, const struct rfw_rx_info *rx, uint64_t now_ns);

/* Device-wide counters: the sum over its QPs, destroyed ones included, plus drops not owned
 * by a QP (inflight_bytes_hwm: the largest). */
void rfw_dev_counters(const struct rfw_dev *dev, uint64_t out[RFW_CNT__COUNT]);

/* ---- protection domains and memory regions ---- */

enum rfw_access_flags {
	RFW_ACCESS_LOCAL_WRITE = 1u << 0,
	RFW_ACCESS_REMOTE_WRITE = 1u << 1,
	RFW_ACCESS_REMOTE_READ = 1u << 2,
	RFW_ACCESS_REMOTE_ATOMIC = 1u << 3,
	RFW_ACCESS_MW_BIND = 1u << 4, /* memory windows may be bound to the MR (IBA 10.6.7) */
};

struct rfw_pd *rfw_alloc_pd(struct rfw_dev *dev);
int rfw_dealloc_pd(struct rfw_pd *pd);

/* Register [addr, addr + length): the I/O virtual address is the pointer value, as in ibv. */
struct rfw_mr *rfw_reg_mr(struct rfw_pd *pd, void *addr, size_t length, unsigned access);
/*
 * As rfw_reg_mr, for an MR that LOCAL_INV and SEND with Invalidate may invalidate: IBA 10.6
 * lets them invalidate fast-registration MRs only (and type 2 memory windows, not
 * implemented), never an MR from rfw_reg_mr. rocefw has no Fast Register work request: the MR
 * is valid at once, and once invalidated stays invalid until deregistered.
 */
struct rfw_mr *rfw_reg_mr_fr(struct rfw_pd *pd, void *addr, size_t length, unsigned access);
/* -EBUSY while memory windows are bound to it (IBA 10.6.7.2.6). */
int rfw_dereg_mr(struct rfw_mr *mr);
/*
 * Memory windows (IBA 10.6.7): a window of type 1 or 2 (2B: bound to one QP) in @pd, unbound;
 * rfw_mr_rkey gives its R_Key. A Bind Memory Window WR (RFW_WR_BIND_MW) binds it to part of an
 * MR with RFW_ACCESS_MW_BIND and gives it the R_Key of the WR (the low 8 bits: the consumer's
 * key); a type 1 window is unbound by a zero-length bind, a type 2 one by LOCAL_INV or a SEND
 * with Invalidate arriving on its QP. Its R_Key is never an L_Key.
 */
struct rfw_mr *rfw_alloc_mw(struct rfw_pd *pd, unsigned type);
int rfw_dealloc_mw(struct rfw_mr *mw);
uint32_t rfw_mr_lkey(const struct rfw_mr *mr);
uint32_t rfw_mr_rkey(const struct rfw_mr *mr);

/* ---- completion queues ---- */

enum rfw_wc_status {
	RFW_WC_SUCCESS,
	RFW_WC_LOC_LEN_ERR,
	RFW_WC_LOC_QP_OP_ERR,
	RFW_WC_LOC_EEC_OP_ERR,
	RFW_WC_LOC_PROT_ERR,
	RFW_WC_WR_FLUSH_ERR,
	RFW_WC_MW_BIND_ERR,
	RFW_WC_BAD_RESP_ERR,
	RFW_WC_LOC_ACCESS_ERR,
	RFW_WC_REM_INV_REQ_ERR,
	RFW_WC_REM_ACCESS_ERR,
	RFW_WC_REM_OP_ERR,
	RFW_WC_RETRY_EXC_ERR,
	RFW_WC_RNR_RETRY_EXC_ERR,
	RFW_WC_LOC_RDD_VIOL_ERR,
	RFW_WC_REM_INV_RD_REQ_ERR,
	RFW_WC_REM_ABORT_ERR,
	RFW_WC_INV_EECN_ERR,
	RFW_WC_INV_EEC_STATE_ERR,
	RFW_WC_FATAL_ERR,
	RFW_WC_RESP_TIMEOUT_ERR,
	RFW_WC_GENERAL_ERR,
	RFW_WC__COUNT
};
/* "success", "retry exceeded", ... as ibv_wc_status_str. */
const char *rfw_wc_status_str(enum rfw_wc_status status);

enum rfw_wc_opcode {
	RFW_WC_SEND,
	RFW_WC_RDMA_WRITE,
	RFW_WC_RDMA_READ,
	RFW_WC_COMP_SWAP,
	RFW_WC_FETCH_ADD,
	RFW_WC_BIND_MW,
	RFW_WC_LOCAL_INV,
	RFW_WC_RECV = 128,
	RFW_WC_RECV_RDMA_WITH_IMM,
};

enum rfw_wc_flags {
	RFW_WC_GRH = 1u << 0, /* UD receive: the first 40 bytes of the buffer hold the GRH */
	RFW_WC_WITH_IMM = 1u << 1,
	RFW_WC_WITH_INV = 1u << 3,
};

struct rfw_wc {
	uint64_t wr_id;
	enum rfw_wc_status status;
	enum rfw_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* the ImmDt value as carried on the wire */
	uint32_t invalidated_rkey;
	uint32_t qp_num;
	uint32_t src_qp; /* UD receive: the sender's QPN (DETH) */
	unsigned wc_flags;
	uint64_t ts_ns; /* when the completion was generated (Estats T5) */
};

struct rfw_cq *rfw_create_cq(struct rfw_dev *dev, uint32_t cqe);
int rfw_destroy_cq(struct rfw_cq *cq);
/* ibv_resize_cq: -EINVAL below the completions it holds, -ENOMEM. */
int rfw_resize_cq(struct rfw_cq *cq, uint32_t cqe);
/* Completions not polled yet. */
uint32_t rfw_cq_count(const struct rfw_cq *cq);
/* Up to @n completions into @wc; returns how many (0 if none), or -EINVAL. */
int rfw_poll_cq(struct rfw_cq *cq, int n, struct rfw_wc *wc);
/* rfw_poll_cq, telling Estats the poll time (T6); same as rfw_poll_cq when Estats is off. */
int rfw_poll_cq_ts(struct rfw_cq *cq, int n, struct rfw_wc *wc, uint64_t now_ns);

/* ---- queue pairs ---- */

enum rfw_qp_state {
	RFW_QPS_RESET,
	RFW_QPS_INIT,
	RFW_QPS_RTR,
	RFW_QPS_RTS,
	RFW_QPS_SQD,
	RFW_QPS_SQE,
	RFW_QPS_ERR,
	RFW_QPS__COUNT
};
const char *rfw_qp_state_str(enum rfw_qp_state s);

/* Path MTU as ibv_mtu: 1 = 256 ... 5 = 4096. */
enum rfw_mtu {
	RFW_MTU_256 = 1,
	RFW_MTU_512 = 2,
	RFW_MTU_1024 = 3,
	RFW_MTU_2048 = 4,
	RFW_MTU_4096 = 5,
};
static inline uint32_t rfw_mtu_to_bytes(enum rfw_mtu m)
{
	return (m >= RFW_MTU_256 && m <= RFW_MTU_4096) ? 128u << m : 0;
}

struct rfw_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/* Service of a QP. */
enum rfw_qp_type {
	RFW_QPT_RC = 0, /* reliable connected: everything else in this header */
	RFW_QPT_UD = 1, /* unreliable datagram (IBA 9.8.4): SEND / SEND with immediate, one packet
	                   per message, addressed per work request (rfw_create_ah) */
	RFW_QPT_UC = 2, /* unreliable connected (IBA 9.8.3): SEND and RDMA WRITE, no ACKs */
};

/*
 * Affiliated asynchronous events of a QP (IBA 11.6.3), values as ibv_event_type's. Errors a
 * completion cannot report: the responder of an RC QP that fails a request has no WQE for a
 * WRITE or READ, so the reason reaches its owner here.
 */
enum rfw_qp_event {
	RFW_QP_EV_FATAL = 1,      /* an error no WQE can report (the host lost the path): ERR */
	RFW_QP_EV_REQ_ERR = 2,    /* responder: invalid request NAKed, QP to ERR */
	RFW_QP_EV_ACCESS_ERR = 3, /* responder: remote access error NAKed, QP to ERR */
	RFW_QP_EV_COMM_EST = 4,   /* the first request arrived while in RTR */
	RFW_QP_EV_LAST_WQE = 16,  /* a QP on an SRQ entered ERR: no WQE of it will complete */
};

struct rfw_qp_init_attr {
	void *qp_context;
	enum rfw_qp_type qp_type;
	/* Optional: affiliated events, on the thread driving the device. */
	void (*event)(void *qp_context, struct rfw_qp *qp, enum rfw_qp_event ev);
	struct rfw_cq *send_cq;
	struct rfw_cq *recv_cq;
	struct rfw_qp_cap cap;
	bool sq_sig_all;
	/* Receive WQEs from this SRQ; cap.max_recv_wr/sge are then ignored and
	   rfw_post_recv on the QP fails with EINVAL. */
	struct rfw_srq *srq;
};

/*
 * The path: addresses and UDP source port the host puts in front of this QP's packets. From
 * RTR on, rfw_dev_rx drops packets not from dgid to sgid (rx_addr_mismatch, as rxe).
 */
struct rfw_ah_attr {
	uint8_t dgid[16];   /* the peer's address, IPv4-mapped for IPv4 */
	uint8_t sgid[16];   /* this end's address on the path, same family */
	uint16_t udp_sport; /* 0: the host picks (e.g. from the QPN, as rxe) */
	uint8_t traffic_class;
	/* UD address handles: the destination MAC the host resolved before rfw_create_ah (an RC
	   QP's path is resolved by the host itself: unused there). */
	uint8_t dmac[6];
};

/* An address handle for UD work requests (IBA 10.2.2), on a PD; the attributes are copied. */
struct rfw_ah *rfw_create_ah(struct rfw_pd *pd, const struct rfw_ah_attr *attr);
/* EINVAL for NULL. Work requests still referring to it must have completed. */
int rfw_destroy_ah(struct rfw_ah *ah);
const struct rfw_ah_attr *rfw_ah_attr_of(const struct rfw_ah *ah);
/* The host resolved the destination MAC later than rfw_create_ah (before a datagram uses it). */
void rfw_ah_set_dmac(struct rfw_ah *ah, const uint8_t dmac[6]);

enum rfw_qp_attr_mask {
	RFW_QP_STATE = 1u << 0,
	RFW_QP_ACCESS_FLAGS = 1u << 3,
	RFW_QP_PKEY_INDEX = 1u << 4,
	RFW_QP_PORT = 1u << 5,
	RFW_QP_QKEY = 1u << 6, /* UD */
	RFW_QP_AV = 1u << 7,
	RFW_QP_PATH_MTU = 1u << 8,
	RFW_QP_TIMEOUT = 1u << 9,
	RFW_QP_RETRY_CNT = 1u << 10,
	RFW_QP_RNR_RETRY = 1u << 11,
	RFW_QP_RQ_PSN = 1u << 12,
	RFW_QP_MAX_QP_RD_ATOMIC = 1u << 13,
	RFW_QP_MIN_RNR_TIMER = 1u << 15,
	RFW_QP_SQ_PSN = 1u << 16,
	RFW_QP_MAX_DEST_RD_ATOMIC = 1u << 17,
	RFW_QP_DEST_QPN = 1u << 20,
	RFW_QP_TRANSPORT_MODE = 1u << 28, /* rocefw extension: rfw_qp_attr.transport_mode */
};

/*
 * Loss recovery of an RC QP (rocefw extension). GBN is IBA go-back-N (IBA 9.7.5.1.2), the
 * only mode toward a peer that is not rocefw. SR is selective repeat with a BDP cap (IRN,
 * SIGCOMM'18); both ends must be SR. Settable in RESET->INIT or INIT->RTR; default GBN.
 */
enum rfw_transport_mode {
	RFW_TRANSPORT_GBN = 0,
	RFW_TRANSPORT_SR = 1,
};

struct rfw_qp_attr {
	enum rfw_qp_state qp_state;
	enum rfw_qp_state cur_qp_state; /* filled by rfw_query_qp */
	enum rfw_mtu path_mtu;
	uint32_t qp_access_flags; /* enum rfw_access_flags: REMOTE_* allowed on this QP */
	uint16_t pkey_index;
	uint8_t port_num;
	struct rfw_ah_attr ah_attr;
	uint32_t dest_qp_num;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint8_t timeout;       /* local ACK timeout 4.096 us * 2^timeout; 0 = infinite */
	uint8_t retry_cnt;     /* 0..7 */
	uint8_t rnr_retry;     /* 0..7, 7 = infinite */
	uint8_t min_rnr_timer; /* IBA table 45 code, 0..31 */
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	enum rfw_transport_mode transport_mode; /* with RFW_QP_TRANSPORT_MODE */
	uint32_t qkey;                          /* UD: the Q_Key datagrams must carry */
	struct rfw_qp_cap cap;
};

struct rfw_qp *rfw_create_qp(struct rfw_pd *pd, const struct rfw_qp_init_attr *attr);
int rfw_destroy_qp(struct rfw_qp *qp);
/* IBA 10.3.1 / table in 11.2.5.1: transitions and required attributes as ibv_modify_qp. */
int rfw_modify_qp(struct rfw_qp *qp, const struct rfw_qp_attr *attr, unsigned attr_mask);
int rfw_query_qp(const struct rfw_qp *qp, struct rfw_qp_attr *attr);
/* The QP's number, as ibv_qp's qp_num: read in place, inline (a host's scheduler asks for it
 * with every packet), from the first member of every struct rfw_qp (rfw_int.h asserts it). */
static inline uint32_t rfw_qp_num(const struct rfw_qp *qp)
{
	uint32_t qpn;

	memcpy(&qpn, (const void *)qp, sizeof(qpn));
	return qpn;
}
/*
 * The host cannot carry the QP any more (its peer's address cannot be resolved): the QP goes
 * to ERR, its WQEs flush, and the QP's event hook gets RFW_QP_EV_FATAL, the catastrophic error
 * of IBA 11.6.3.2 that no completion reports (IBV_EVENT_QP_FATAL).
 */
void rfw_qp_fatal(struct rfw_qp *qp);
void *rfw_qp_context(const struct rfw_qp *qp);
enum rfw_qp_state rfw_qp_state(const struct rfw_qp *qp);
/* Per-QP counters (same table as the device's). */
void rfw_qp_counters(const struct rfw_qp *qp, uint64_t out[RFW_CNT__COUNT]);
/* One of them. */
uint64_t rfw_qp_counter(const struct rfw_qp *qp, enum rfw_counter c);
/* The QP of @qpn on the wire: a slot's QPN, or RFW_GSI_QPN for the GSI QP; NULL if none. */
struct rfw_qp *rfw_dev_qp(struct rfw_dev *dev, uint32_t qpn);

/*
 * The General Services QP (IBA 3.9.2, 13.5.1): QP1, where Communication Manager MADs arrive
 * (IBA 12.2). rfw_qp_set_gsi makes a UD QP in RESET the device's QP1: packets to QPN 1 reach
 * it, its datagrams carry source QPN 1, and its Q_Key is the well-known RFW_GSI_QKEY (a
 * modify_qp to another Q_Key then fails). Internally it keeps its slot and rfw_qp_num().
 * One per device: -EBUSY if another QP is QP1; -EINVAL if @qp is not UD or not in RESET.
 */
#define RFW_GSI_QPN  1u
#define RFW_GSI_QKEY 0x80010000u
int rfw_qp_set_gsi(struct rfw_qp *qp);

/* ---- work requests ---- */

struct rfw_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum rfw_wr_opcode {
	RFW_WR_RDMA_WRITE,
	RFW_WR_RDMA_WRITE_WITH_IMM,
	RFW_WR_SEND,
	RFW_WR_SEND_WITH_IMM,
	RFW_WR_RDMA_READ,
	RFW_WR_ATOMIC_CMP_AND_SWP,
	RFW_WR_ATOMIC_FETCH_AND_ADD,
	RFW_WR_LOCAL_INV,
	RFW_WR_BIND_MW,
	RFW_WR_SEND_WITH_INV,
	RFW_WR__COUNT
};

enum rfw_send_flags {
	RFW_SEND_FENCE = 1u << 0,
	RFW_SEND_SIGNALED = 1u << 1,
	RFW_SEND_SOLICITED = 1u << 2,
	RFW_SEND_INLINE = 1u << 3,
};

struct rfw_send_wr {
	uint64_t wr_id;
	struct rfw_send_wr *next;
	struct rfw_sge *sg_list;
	int num_sge;
	enum rfw_wr_opcode opcode;
	unsigned send_flags;
	uint32_t imm_data;        /* WITH_IMM: the ImmDt value */
	uint32_t invalidate_rkey; /* SEND_WITH_INV and LOCAL_INV */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct rfw_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey; /* high-order bit set: the QP's own Q_Key instead */
		} ud;
		struct {
			struct rfw_mr *mw; /* from rfw_alloc_mw */
			uint32_t rkey;     /* the window's new R_Key */
			struct rfw_mr *mr; /* what it is bound to (NULL with length 0) */
			uint64_t addr, length;
			unsigned access; /* RFW_ACCESS_REMOTE_* */
		} bind_mw;
	} wr;
};

struct rfw_recv_wr {
	uint64_t wr_id;
	struct rfw_recv_wr *next;
	struct rfw_sge *sg_list;
	int num_sge;
};

/* Largest max_rd_atomic / max_dest_rd_atomic (responder resources per QP). */
#define RFW_MAX_RD_ATOMIC 16

/* Largest message (IBA: an RC message carries at most 2^31 bytes). */
#define RFW_MAX_MSG_SIZE (1ull << 31)

/*
 * Post a chain of send WRs. Returns 0, or a positive errno with *bad_wr set to the first WR
 * not posted (ENOMEM: SQ full; EINVAL: bad opcode, sge count, length, inline size or QP
 * state). In ERR the WRs are accepted and completed with RFW_WC_WR_FLUSH_ERR (IBA 10.8.3.3).
 */
int rfw_post_send(struct rfw_qp *qp, struct rfw_send_wr *wr, struct rfw_send_wr **bad_wr,
                  uint64_t now_ns);
int rfw_post_recv(struct rfw_qp *qp, struct rfw_recv_wr *wr, struct rfw_recv_wr **bad_wr,
                  uint64_t now_ns);

/* ---- shared receive queues (ibv_create_srq(3), ibv_modify_srq(3)) ---- */

struct rfw_srq_attr {
	uint32_t max_wr;    /* WQEs, 1..65536 */
	uint32_t max_sge;   /* per WQE, 1..32 (0 = 1) */
	uint32_t srq_limit; /* arm the limit event below this many WQEs; 0 = not armed */
};

struct rfw_srq_init_attr {
	void *srq_context;
	struct rfw_srq_attr attr;
	/*
	 * Optional: the SRQ's WQE count dropped below an armed limit ("SRQ Limit
	 * Reached", IBV_EVENT_SRQ_LIMIT_REACHED); the limit is disarmed until rfw_modify_srq arms
	 * it again. Called on the thread that drives the device (inside rfw_dev_rx).
	 */
	void (*limit_reached)(void *srq_context, struct rfw_srq *srq);
};

enum rfw_srq_attr_mask {
	RFW_SRQ_MAX_WR = 1u << 0, /* resizing: not supported (EOPNOTSUPP) */
	RFW_SRQ_LIMIT = 1u << 1,
};

struct rfw_srq *rfw_create_srq(struct rfw_pd *pd, const struct rfw_srq_init_attr *attr);
/* EBUSY while a QP uses it. */
int rfw_destroy_srq(struct rfw_srq *srq);
int rfw_modify_srq(struct rfw_srq *srq, const struct rfw_srq_attr *attr, unsigned attr_mask);
int rfw_query_srq(const struct rfw_srq *srq, struct rfw_srq_attr *attr);
void *rfw_srq_context(const struct rfw_srq *srq);
/* As rfw_post_recv: 0, or ENOMEM (full) / EINVAL (bad sge list) with *bad_wr set. */
int rfw_post_srq_recv(struct rfw_srq *srq, struct rfw_recv_wr *wr, struct rfw_recv_wr **bad_wr);

/* ---- the host scheduler's view of a QP ---- */

/* Whether the QP has a packet it could produce now (responses, CNPs or requests). */
bool rfw_qp_has_work(const struct rfw_qp *qp, uint64_t now_ns);
/* Whether the QP has a CNP or a responder packet to send (never paced). */
bool rfw_qp_has_responses(const struct rfw_qp *qp);
/* Whether the requester has a packet it could send now (new data, retransmission, probe). */
bool rfw_qp_has_requests(const struct rfw_qp *qp, uint64_t now_ns);
/*
 * Produce up to @max packets through the io ops: a pending CNP first, then responder packets
 * (ACK, NAK, READ responses, atomic ACKs, in PSN order). Returns how many.
 */
unsigned rfw_qp_tx_responses(struct rfw_qp *qp, unsigned max, uint64_t now_ns);
/* Produce up to @max requester packets. Returns how many. */
unsigned rfw_qp_tx_requests(struct rfw_qp *qp, unsigned max, uint64_t now_ns);
/* rfw_qp_tx_responses() then rfw_qp_tx_requests() with what is left of @max (unpaced hosts). */
unsigned rfw_qp_tx_burst(struct rfw_qp *qp, unsigned max, uint64_t now_ns);
/* The earliest time rfw_qp_timer() has something to do (retransmit, RNR), or UINT64_MAX. */
uint64_t rfw_qp_next_deadline(const struct rfw_qp *qp);
/* Run expired timers (local ACK timeout, RNR wait). */
void rfw_qp_timer(struct rfw_qp *qp, uint64_t now_ns);

/* Attach a congestion-control machine (NULL ops: the built-in notification point only). */
void rfw_qp_set_cc(struct rfw_qp *qp, const struct rfw_cc_ops *ops, void *cc);
/*
 * The go-back-N requester window of @qp from now on: @bytes of path MTU packets in flight,
 * ceil(bytes / MTU) PSNs, at most the device's max_unacked_psns; 0: that device window. For
 * a host that scales it with the rate (nic/'s var_win_bytes); selective repeat ignores it.
 */
void rfw_qp_set_window_bytes(struct rfw_qp *qp, uint64_t bytes);

/* IBA table 45: RNR NAK timer code -> nanoseconds. */
uint64_t rfw_rnr_timer_ns(unsigned code);
/* IBA 9.7.6.1.3: local ACK timeout 4.096 us * 2^timeout; UINT64_MAX for 0 (infinite). */
uint64_t rfw_ack_timeout_ns(unsigned timeout);

#ifdef __cplusplus
}
#endif
#endif
