/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport counters: one X-macro list gives the enum and the names. mlx5 names where one
 * exists (see docs/transport.md for the meaning of each), rocefw's own otherwise.
 */
#ifndef RFW_TRANSPORT_COUNTERS_H
#define RFW_TRANSPORT_COUNTERS_H

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_FOREACH_COUNTER(X)                                                                     \
	/* responder (mlx5 names) */                                                               \
	X(out_of_sequence)                                                                         \
	X(duplicate_request)                                                                       \
	X(rx_read_requests)                                                                        \
	X(rx_write_requests)                                                                       \
	X(rx_atomic_requests)                                                                      \
	X(resp_local_length_error)                                                                 \
	X(resp_cqe_error)                                                                          \
	X(resp_cqe_flush_error)                                                                    \
	X(resp_remote_access_errors)                                                               \
	X(rnr_nak_sent)                                                                            \
	X(nak_seq_err_sent)                                                                        \
	X(read_replays)                                                                            \
	X(atomic_replays)                                                                          \
	/* requester / completer (mlx5 names) */                                                   \
	X(packet_seq_err)                                                                          \
	X(implied_nak_seq_err)                                                                     \
	X(local_ack_timeout_err)                                                                   \
	X(rnr_nak_retry_err)                                                                       \
	X(req_remote_access_errors)                                                                \
	X(req_remote_invalid_request)                                                              \
	X(req_cqe_error)                                                                           \
	X(req_cqe_flush_error)                                                                     \
	X(retransmitted_packets)                                                                   \
	X(retry_exceeded)                                                                          \
	X(rnr_retry_exceeded)                                                                      \
	X(duplicate_response)                                                                      \
	/* loss recovery, both transport modes (docs/transport-sr.md) */                           \
	X(spurious_retransmissions)                                                                \
	X(naks_sent)                                                                               \
	X(naks_received)                                                                           \
	X(rto_low_timeouts)                                                                        \
	X(rto_high_timeouts)                                                                       \
	X(ooo_accepted)                                                                            \
	X(inflight_bytes_hwm)                                                                      \
	X(rx_transport_mismatch)                                                                   \
	/* congestion control (mlx5 names) */                                                      \
	X(np_ecn_marked_roce_packets)                                                              \
	X(np_cnp_sent)                                                                             \
	X(rp_cnp_handled)                                                                          \
	/* traffic */                                                                              \
	X(tx_packets)                                                                              \
	X(tx_bytes)                                                                                \
	X(rx_packets)                                                                              \
	X(rx_bytes)                                                                                \
	X(tx_acks)                                                                                 \
	X(rx_acks)                                                                                 \
	/* drops */                                                                                \
	X(rx_unknown_qp)                                                                           \
	X(rx_bad_state)                                                                            \
	X(rx_bad_opcode)                                                                           \
	X(rx_ghost_response)                                                                       \
	X(rx_bad_response)                                                                         \
	X(cq_overflow)

enum rfw_counter {
#define RFW_CNT_ENUM(name) RFW_CNT_##name,
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
