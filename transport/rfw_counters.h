/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport counters: one X-macro list X(name, mlx5, meaning) gives the enum, the names and
 * what docs/counters.md says of each. mlx5 is 1 where the name is mlx5's (same meaning), 0 for
 * rocefw's own.
 */
#ifndef RFW_TRANSPORT_COUNTERS_H
#define RFW_TRANSPORT_COUNTERS_H

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_FOREACH_COUNTER(X)                                                                     \
	/* traffic: first, on rfw_qp.now's cache line (every packet counts) */                     \
	X(tx_packets, 0, "packets produced")                                                       \
	X(tx_bytes, 0, "IB bytes (BTH to pad) produced")                                           \
	X(rx_packets, 0, "packets accepted by a QP's demux")                                       \
	X(rx_bytes, 0, "IB bytes (BTH to pad) accepted by a QP's demux")                           \
	X(tx_acks, 0, "ACK/NAK/atomic ACK packets sent")                                           \
	X(rx_acks, 0, "ACK-type packets received")                                                 \
	/* responder (mlx5 names) */                                                               \
	X(out_of_sequence, 1, "request packets with a PSN ahead of the expected one")              \
	X(duplicate_request, 1, "request packets with a PSN behind the expected one")              \
	X(rx_read_requests, 1, "READ requests executed (duplicates not counted)")                  \
	X(rx_write_requests, 1, "WRITE messages started (FIRST/ONLY accepted)")                    \
	X(rx_atomic_requests, 1, "atomics executed")                                               \
	X(resp_local_length_error, 1, "SENDs longer than the receive WQE")                         \
	X(resp_cqe_error, 1, "receive completions with an error other than flush")                 \
	X(resp_cqe_flush_error, 1, "receive completions flushed")                                  \
	X(resp_remote_access_errors, 1, "requests NAKed with remote access error")                 \
	X(rnr_nak_sent, 0, "RNR NAKs sent (no receive WQE)")                                       \
	X(nak_seq_err_sent, 0, "PSN sequence error NAKs sent")                                     \
	X(read_replays, 0, "duplicate READs answered again from a resource")                       \
	X(atomic_replays, 0, "duplicate atomics answered from the cached result")                  \
	X(dup_no_resource, 0,                                                                      \
	  "duplicate READ/atomic requests dropped: their responder resource was reused (a stale "  \
	  "duplicate, or a requester beyond max_dest_rd_atomic)")                                  \
	X(resp_queue_full, 0,                                                                      \
	  "ACKs and READ/atomic responses not queued, the response ring being full (the "          \
	  "requester's retry recovers; NAKs are never dropped)")                                   \
	/* requester / completer (mlx5 names) */                                                   \
	X(packet_seq_err, 1, "NAK sequence error packets received")                                \
	X(implied_nak_seq_err, 1,                                                                  \
	  "implied NAKs: acknowledgement/response beyond a missing READ/atomic "                   \
	  "response")                                                                              \
	X(local_ack_timeout_err, 1, "local ACK timer expiries with requests outstanding")          \
	X(rnr_nak_retry_err, 1, "RNR NAKs received")                                               \
	X(req_remote_access_errors, 1, "remote access error NAKs received")                        \
	X(req_remote_invalid_request, 1, "invalid request NAKs received")                          \
	X(req_cqe_error, 1, "send completions with an error other than flush")                     \
	X(req_cqe_flush_error, 1, "send completions flushed")                                      \
	X(retransmitted_packets, 0,                                                                \
	  "request packets sent with a PSN below the highest already sent")                        \
	X(retry_probes, 0,                                                                         \
	  "gbn: go-back-N restarted again at a NAKed PSN not acknowledged within 2 x RTT "         \
	  "(doubling): its retransmission was lost too")                                           \
	X(retry_exceeded, 0, "QPs failed with RETRY_EXC_ERR")                                      \
	X(rnr_retry_exceeded, 0, "QPs failed with RNR_RETRY_EXC_ERR")                              \
	X(duplicate_response, 0, "responses for PSNs already acknowledged (dropped)")              \
	/* loss recovery, both transport modes (docs/transport-sr.md) */                           \
	X(spurious_retransmissions, 0,                                                             \
	  "SEND/WRITE packets that arrived already received (needless "                            \
	  "retransmissions plus network duplicates)")                                              \
	X(naks_sent, 0, "PSN sequence NAKs sent (gbn: as nak_seq_err_sent; sr: SACK NAKs)")        \
	X(naks_received, 0, "PSN sequence NAKs received (gbn: as packet_seq_err; sr: SACK NAKs)")  \
	X(rto_low_timeouts, 0, "sr: RTO_low expiries (gbn: always 0)")                             \
	X(rto_high_timeouts, 0, "sr: RTO_high expiries; gbn: every local ACK timeout")             \
	X(ooo_accepted, 0, "sr: packets accepted out of order; gbn: 0")                            \
	X(inflight_bytes_hwm, 0,                                                                   \
	  "high-water mark of bytes in flight (a gauge; the device value is the "                  \
	  "largest over the QPs)")                                                                 \
	X(rx_transport_mismatch, 0,                                                                \
	  "packets refused because the peer's transport mode differs "                             \
	  "(docs/transport-sr.md)")                                                                \
	/* congestion control (mlx5 names) */                                                      \
	X(np_ecn_marked_roce_packets, 1, "CE-marked data packets received")                        \
	X(np_cnp_sent, 1, "CNPs sent")                                                             \
	X(rp_cnp_handled, 1, "CNPs received and handed to the reaction point")                     \
	/* drops */                                                                                \
	X(rx_unknown_qp, 0, "packets for a QP number that does not exist")                         \
	X(rx_addr_mismatch, 0,                                                                     \
	  "packets whose IP source is not the QP's path destination (ah_attr.dgid) or whose IP "   \
	  "destination is not its source (ah_attr.sgid), from RTR on (dropped, as rxe's "          \
	  "check_addr)")                                                                           \
	X(rx_bad_state, 0, "packets the QP's state does not accept (RESET/INIT/ERR)")              \
	X(rx_bad_opcode, 0,                                                                        \
	  "packets of another service than the QP's (UC/UD on RC, ...), or no opcode")             \
	X(rx_ghost_response, 0, "responses while nothing is outstanding")                          \
	X(rx_bad_response, 0,                                                                      \
	  "responses that do not fit the WQE (wrong type, size, PSN never sent)")                  \
	X(cq_overflow, 0, "completions lost to a full CQ")                                         \
	X(ud_qkey_mismatch, 0, "UD datagrams dropped: Q_Key not the QP's")                         \
	X(ud_no_rwqe, 0, "UD datagrams dropped: no receive WQE (UD has no RNR)")                   \
	X(ud_too_long, 0,                                                                          \
	  "UD datagrams dropped: longer than the receive WQE with its 40-byte GRH")                \
	X(uc_msgs_dropped, 0,                                                                      \
	  "UC messages dropped: a sequence gap, no receive WQE, too long, or outside the MR")

enum rfw_counter {
#define RFW_CNT_ENUM(name, mlx5, doc) RFW_CNT_##name,
	RFW_FOREACH_COUNTER(RFW_CNT_ENUM)
#undef RFW_CNT_ENUM
	    RFW_CNT__COUNT
};

/* The counter's name ("out_of_sequence"), or NULL out of range. */
const char *rfw_counter_name(enum rfw_counter c);

#ifdef __cplusplus
}
#endif
#endif
