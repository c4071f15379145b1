/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nic/: the firmware of the software NIC, DPDK-free (libc, wire/, cc/, transport/ only). One
 * struct rfw_fw is one NIC: a transport device (transport/rfw_verbs.h), its scheduler (timer
 * wheel + ready list), per-QP pacing and congestion control with the profile's rp_scope (one
 * rate per QP, per destination or per port), framing from per-QP header templates (wire/frame.h:
 * Ethernet, optional 802.1Q tag, IPv4 or IPv6, UDP; ICRC) and the counters of what it owns.
 * docs/nic.md.
 *
 * A host (the DPDK dataplane, rocefw-sim, a test) supplies only what is outside the firmware,
 * in the style of DPDK's rte_meter (caller-owned state, time as an argument):
 *
 *   - frames: rfw_fw_host_ops.frame_alloc / frame_send (an mbuf, a simulator frame, ...);
 *   - time:   every entry point takes now_ns; the firmware never reads a clock;
 *   - frames in: the host parses a frame (wire/frame.h + rfw_ib_parse, and checks the ICRC)
 *     and calls rfw_fw_rx(); rfw_fw_rx_frame() does all of it for plain-buffer hosts;
 *   - work:   rfw_fw_run() runs expired timers and serves ready QPs; rfw_fw_next_ns() says when
 *     it next has something to do (an event-driven host sleeps until then).
 *
 * Posting a work request is the doorbell: rfw_post_send()/rfw_post_recv() on a QP of
 * rfw_fw_dev() put the QP on the ready list (the transport's rfw_io_ops.doorbell).
 *
 * The scheduler decides WHEN before the transport builds WHAT: each turn of a ready QP asks the
 * transport for responses (ACK/NAK, READ responses, atomic ACKs) and CNPs, which are never
 * paced, then for request packets one pacer decision at a time; a QP whose pacer says "not
 * yet" waits in the timer wheel until its departure time. Nothing is built and then held.
 *
 * Threading: one thread owns a struct rfw_fw (calls everything but rfw_fw_snap_read and
 * rfw_fw_ctr_read, which another thread may call: seqlock snapshots and single-writer counters).
 */
#ifndef RFW_NIC_RFW_FW_H
#define RFW_NIC_RFW_FW_H

#include <stdbool.h>
#include <stdint.h>

#include "cc/cc.h"
#include "cc/dcqcn.h"
#include "cc/timely.h"
#include "transport/rfw_verbs.h"
#include "wire/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * NIC counters, one owner per event (docs/nic.md "Counters"). Packets and bytes per QP, CE
 * marks, CNPs sent and handled are the transport's (rfw_dev_counters / rfw_qp_counters): the
 * firmware does not count them again. X(name, meaning)
 */
#define RFW_FOREACH_FW_CTR(X)                                                                      \
	X(sched_turns, "scheduler turns given to ready QPs")                                       \
	X(pacer_waits, "turns that ended with requests waiting for the pacer's departure time")    \
	X(timer_fired, "transport timers that came due (rfw_qp_timer called)")                     \
	X(tx_no_buf, "frames the host could not give a buffer for (the QP retries next turn)")     \
	X(tx_room_waits,                                                                           \
	  "frames held back: the host's queue of the QP's class was full (tx_room)")               \
	X(tx_ref_frames, "frames whose payload the host sent from the MR, not copied "             \
	                 "(frame_alloc_ref)")                                                      \
	X(tx_crc_copy_frames, "frames whose payload was copied from the MR with its ICRC folded "  \
	                      "in the same pass (a host without frame_alloc_ref)")                 \
	X(tx_frame_bytes, "bytes of frames sent, Ethernet header to ICRC (the rate machine's "     \
	                  "unit)")                                                                 \
	X(rx_dev_dropped, "RoCEv2 frames the transport dropped (unknown QP, bad state, ...)")      \
	X(pkey_violations, "RoCEv2 frames dropped: P_Key not the default partition (IBA 10.9.3)")  \
	X(rx_bad_frame, "frames rfw_fw_rx_frame() refused: not RoCEv2, bad ICRC or bad IB "        \
	                "headers")                                                                 \
	X(snapshots, "per-QP snapshots published for readers on other threads")                    \
	X(snapshots_unchanged, "per-QP snapshots only re-dated: the QP sent and received nothing " \
	                       "and kept its state since its last one")

/* Per-QP NIC counters. X(name, meaning) */
#define RFW_FOREACH_FW_QP_CTR(X)                                                                   \
	X(pacer_waits, "turns of this QP that ended waiting for the pacer")                        \
	X(tx_frame_bytes, "bytes of this QP's frames sent, Ethernet header to ICRC")               \
	X(l2_wait_turns, "scheduler turns skipped while the peer MAC was being resolved")

enum rfw_fw_ctr {
#define RFW_FW_CTR_ENUM(name, doc) RFW_FW_CTR_##name,
	RFW_FOREACH_FW_CTR(RFW_FW_CTR_ENUM)
#undef RFW_FW_CTR_ENUM
	    RFW_FW_CTR__COUNT
};
enum rfw_fw_qp_ctr {
#define RFW_FW_QP_CTR_ENUM(name, doc) RFW_FW_QP_CTR_##name,
	RFW_FOREACH_FW_QP_CTR(RFW_FW_QP_CTR_ENUM)
#undef RFW_FW_QP_CTR_ENUM
	    RFW_FW_QP_CTR__COUNT
};
const char *rfw_fw_ctr_name(enum rfw_fw_ctr c);
const char *rfw_fw_ctr_doc(enum rfw_fw_ctr c);
const char *rfw_fw_qp_ctr_name(enum rfw_fw_qp_ctr c);
const char *rfw_fw_qp_ctr_doc(enum rfw_fw_qp_ctr c);

/* What the host gives the firmware. */
struct rfw_fw_host_ops {
	/*
	 * A frame buffer with room for @len bytes: returns its first byte (the host finds its
	 * own buffer from this pointer, e.g. an mbuf at a fixed offset). NULL if none now: the
	 * QP keeps its work and is served again at the next rfw_fw_run().
	 */
	uint8_t *(*frame_alloc)(void *host, uint32_t len);
	/* The frame at @frame (from frame_alloc) is complete: @len bytes, Ethernet to ICRC. */
	void (*frame_send)(void *host, uint8_t *frame, uint32_t len);
	/*
	 * Optional: whether the host's egress queue of class @prio (rfw_fw_path.prio: a PFC
	 * priority, a traffic class) takes another frame now. Asked before each frame of a QP of
	 * that class; "no" ends that QP's turn only (it stays ready), so a paused class never
	 * holds back the others. The host calls rfw_fw_run() again when room frees up.
	 */
	bool (*tx_room)(void *host, uint8_t prio);
	/*
	 * Optional: frame_send for a frame whose ICRC the host fills before the frame leaves, as
	 * a NIC's MAC does: its last 4 bytes, over the IP datagram at @l3_off (IP version
	 * @ip_ver) up to them, least significant byte first. A host that sends a burst at a time
	 * computes the burst's ICRCs together (rfw_icrc_compute_n: four side by side, about half
	 * the cost of one by one). Frames whose UDP checksum covers the ICRC (IPv6 with
	 * udp6_csum) come complete through frame_send all the same.
	 */
	void (*frame_send_icrc)(void *host, uint8_t *frame, uint32_t len, uint8_t l3_off,
	                        uint8_t ip_ver);
	/*
	 * Optional, both or neither (docs/nic.md "Payload sent from the MR"): a frame whose
	 * @payload_len bytes of payload the host sends from @payload, a registered MR's, where
	 * they are. Returned: a buffer for the @hdr_len bytes in front of them (Ethernet to the
	 * last IB header), as frame_alloc's; *@icrc: where the 4 bytes of ICRC after them go.
	 * NULL if none now. The host must be done reading @payload before it hands the firmware
	 * its next received frame (rfw_fw_rx): only an ACK or a response completes the WQE whose
	 * bytes these are, after which the application may change or free them. A PMD that
	 * copies the frame at its burst meets that; a frame the PMD refuses and the host keeps is
	 * copied first. Asked for payloads of at least rfw_fw_conf.dev_attr.tx_ref_min bytes.
	 * Without them, such payloads are copied into a frame_alloc frame at tx_send with their
	 * ICRC in the same pass (rfw_crc_copy; counter tx_crc_copy_frames).
	 */
	uint8_t *(*frame_alloc_ref)(void *host, uint32_t hdr_len, const uint8_t *payload,
	                            uint32_t payload_len, uint8_t **icrc);
	/* The frame at @frame (from frame_alloc_ref) is complete: @len bytes, Ethernet to ICRC. */
	void (*frame_send_ref)(void *host, uint8_t *frame, uint32_t len);
};

/* Rate machine of the NIC (cc/cc.h's cc_flow). */
enum rfw_fw_cc {
	RFW_FW_CC_NONE,   /* no reaction point, no pacing (the transport's NP still sends CNPs) */
	RFW_FW_CC_DCQCN,  /* cc/dcqcn.h, scope from the profile's rp_scope */
	RFW_FW_CC_TIMELY, /* cc/timely.h, RTT from the firmware's own probes (docs/nic.md) */
};

/* Configuration. Zero fields take the default named beside them. */
struct rfw_fw_conf {
	/* Transport device attributes (0: the transport's default for each; ack_every 64,
	 * np_min_time_between_cnps_ns 4000). */
	struct rfw_dev_attr dev_attr;
	enum rfw_fw_cc cc;
	/* RFW_FW_CC_DCQCN: the profile (also the notification point's with TIMELY when set). */
	const struct dcqcn_prof *dcqcn;
	const struct timely_prof *timely; /* RFW_FW_CC_TIMELY */
	/* Pacer burst tolerance, ns of transmission time at the rate; default 2000, 0..1e6 (0
	 * with pacer_burst_set: strict spacing). */
	uint32_t pacer_burst_ns;
	bool pacer_burst_set;
	/* Packets a QP may send per scheduler turn; default 16, range 1..64. */
	uint32_t quantum;
	/* Timer wheel slot width, log2 ns; default 8 (256 ns), range 0..16 (0: exact, for
	 * simulators that wake exactly at rfw_fw_next_ns()). */
	uint8_t wheel_shift;
	bool wheel_shift_set;
	/* The transport timers' wheel slot width, log2 ns; default 16 (65.5 us: a lap of 268 ms,
	 * so the usual ACK timeouts never wait out a lap in their slot), range 0..20. An entry
	 * still fires at the first rfw_fw_run() at or after its time whatever the width. */
	uint8_t timer_wheel_shift;
	bool timer_wheel_shift_set;
	/* IPv6: compute the UDP checksum (RFC 8200 8.1); default off (0, as Linux rxe). */
	bool udp6_csum;
	/* Largest frame the host can carry, bytes; default 4352 (4096-byte MTU payload + the
	 * largest headers), range 256..65535. */
	uint32_t frame_max;
	/*
	 * A go-back-N requester window that follows the rate (HPCC's VAR_WIN, its DCQCN+win):
	 * each turn a QP with a rate machine may have var_win_bytes x rate / max rate bytes in
	 * flight (at least 1 byte; the whole window at the maximum rate), counted in PSNs of its
	 * path MTU and never more than dev_attr.max_unacked_psns. Bytes; default 0 (off: the
	 * fixed window max_unacked_psns), range 0..2^32-1. Selective repeat keeps its own cap.
	 */
	uint32_t var_win_bytes;
};

/* Where a QP's frames go: everything in front of the BTH, resolved by the host. */
struct rfw_fw_path {
	uint8_t dst_mac[6]; /* may be updated later with rfw_fw_qp_set_mac() */
	uint8_t src_mac[6];
	uint8_t src_ip[16]; /* IPv4-mapped (::ffff:a.b.c.d) for IPv4, else IPv6; same family */
	uint8_t dst_ip[16]; /*   as dst_ip. Also the destination key of rp_scope dst. */
	uint16_t udp_sport; /* 0: 0xc000 | (QPN & 0x3fff), one flow per QP as rxe */
	bool vlan;          /* one 802.1Q tag */
	uint16_t vlan_id;   /* 1..4094 */
	uint8_t pcp;        /* data/response PCP when tagged, 0..7 */
	uint8_t dscp;       /* data/response DSCP (sent ECT(0)), 0..63 */
	uint8_t cnp_dscp;   /* CNP DSCP (sent Not-ECT), 0..63 */
	uint8_t cnp_pcp;    /* CNP PCP when tagged, 0..7 */
	uint8_t prio;       /* the host's class of this QP's frames for tx_room, 0..7 (0) */
	bool l2_pending;    /* dst_mac not known yet: the QP sends nothing until set */
	/* This QP's DCQCN profile (notification point, and reaction point with
	 * RFW_FW_CC_DCQCN), NULL: the NIC's. QPs share a scope's rate only with the same profile.
	 */
	const struct dcqcn_prof *dcqcn;
};

struct rfw_fw;

/* A NIC with its transport device. NULL with errno (EINVAL, ENOMEM, or the transport's). */
struct rfw_fw *rfw_fw_create(const struct rfw_fw_conf *conf, const struct rfw_fw_host_ops *ops,
                             void *host);
/* The caller destroys QPs, CQs, MRs and PDs first (or detaches them: rfw_fw_qp_detach). */
void rfw_fw_destroy(struct rfw_fw *fw);
struct rfw_dev *rfw_fw_dev(struct rfw_fw *fw);

/*
 * Attach @qp (of this device) with its path: header template, rate machine of its scope,
 * notification point. 0, -EINVAL (not this device's QP, bad path), -EEXIST, -ENOMEM.
 */
int rfw_fw_qp_attach(struct rfw_fw *fw, struct rfw_qp *qp, const struct rfw_fw_path *path);
void rfw_fw_qp_detach(struct rfw_fw *fw, struct rfw_qp *qp);
/* The peer's MAC is now known (l2_pending QPs start sending). */
void rfw_fw_qp_set_mac(struct rfw_fw *fw, struct rfw_qp *qp, const uint8_t mac[6]);

/*
 * One received RoCEv2 frame, parsed by the host (@f: the frame view, ICRC already checked;
 * @ib: its IB part) at @now_ns: P_Key check, the transport, the QP goes on the ready list.
 */
void rfw_fw_rx(struct rfw_fw *fw, const struct rfw_frame_view *f, const struct rfw_ib_pkt *ib,
               uint64_t now_ns);
/* Parse + ICRC check + IB parse of @len bytes at @frame, then rfw_fw_rx. 0 or -EINVAL. */
int rfw_fw_rx_frame(struct rfw_fw *fw, const uint8_t *frame, uint32_t len, uint64_t now_ns);

/* Expired timers, then one turn for each QP ready now. Returns the frames sent. */
unsigned rfw_fw_run(struct rfw_fw *fw, uint64_t now_ns);
/* Whether a QP is on the ready list (rfw_fw_run() has work now). */
bool rfw_fw_ready(const struct rfw_fw *fw);
/* The earliest timer (pacer departure, transport timer), or UINT64_MAX: when an event-driven
 * host must call rfw_fw_run() next if nothing else happens. Scans the wheel's occupied slots:
 * for simulators, not for poll loops. */
uint64_t rfw_fw_next_ns(const struct rfw_fw *fw);

/* ---- what the firmware shows ---- */

uint64_t rfw_fw_ctr(const struct rfw_fw *fw, enum rfw_fw_ctr c);
uint64_t rfw_fw_qp_ctr(const struct rfw_fw *fw, const struct rfw_qp *qp, enum rfw_fw_qp_ctr c);
bool rfw_fw_qp_attached(const struct rfw_fw *fw, const struct rfw_qp *qp);
/* The rate of @qp's rate machine (its scope's) at @now_ns (due timer work runs first), kb/s:
 * line rate until the first cut; 0 without congestion control. */
uint64_t rfw_fw_qp_rate_kbps(struct rfw_fw *fw, const struct rfw_qp *qp, uint64_t now_ns);
/* @qp's rate machine (NULL if none): read-only, from the owning thread. */
const struct cc_flow *rfw_fw_qp_flow(const struct rfw_fw *fw, const struct rfw_qp *qp);
/* @qp's notification point (NULL without a DCQCN profile). */
const struct dcqcn_np *rfw_fw_qp_np(const struct rfw_fw *fw, const struct rfw_qp *qp);
/* @qp's header template: its length, 0 if not attached. */
uint32_t rfw_fw_qp_hdr(const struct rfw_fw *fw, const struct rfw_qp *qp, const uint8_t **hdr);

/* What a reader on another thread may see of one QP slot (seqlock snapshot). */
struct rfw_fw_snap {
	uint64_t at_ns;
	uint32_t qpn, dest_qpn, sq_psn, rq_psn, path_mtu;
	uint8_t attached, state, transport_mode, l2_pending;
	uint8_t ip_ver, vlan, pcp, dscp, cc, rp_state, paced, scope;
	uint16_t vlan_id, udp_sport;
	uint8_t dst_mac[6];
	uint8_t src_ip[16], dst_ip[16];
	uint64_t rate_kbps, target_kbps;
	uint32_t alpha;
	uint64_t rp_cnt[DCQCN_RP_CNT__COUNT];
	uint64_t np_cnt[DCQCN_NP_CNT__COUNT];
	uint64_t tcnt[RFW_CNT__COUNT]; /* the transport's per-QP counters */
	uint64_t ctr[RFW_FW_QP_CTR__COUNT];
};

/* Slots: QPN - qpn_base, 0..max_qp-1. */
uint32_t rfw_fw_qpn_base(const struct rfw_fw *fw);
uint32_t rfw_fw_max_qp(const struct rfw_fw *fw);
/* Publish slot @slot's snapshot now (owning thread). */
void rfw_fw_publish(struct rfw_fw *fw, uint32_t slot, uint64_t now_ns);
/* Publish the device counters (owning thread). */
void rfw_fw_publish_dev(struct rfw_fw *fw, uint64_t now_ns);
/* A consistent copy of slot @slot (any thread); false if it kept changing. */
bool rfw_fw_snap_read(const struct rfw_fw *fw, uint32_t slot, struct rfw_fw_snap *out);
/* The device counters as last published (any thread); false if busy. */
bool rfw_fw_dev_read(const struct rfw_fw *fw, uint64_t cnt[RFW_CNT__COUNT], uint64_t *at_ns);
/* A counter read from another thread (one writer, 64-bit: never torn). */
uint64_t rfw_fw_ctr_read(const struct rfw_fw *fw, enum rfw_fw_ctr c);

/*
 * A sequence counter around a copy (the seqlock idiom): the writer makes *seq odd, writes,
 * makes it even; the reader retries until it copied between two equal even values.
 */
void rfw_seq_write_begin(uint32_t *seq);
void rfw_seq_write_end(uint32_t *seq);
bool rfw_seq_read(const uint32_t *seq, const void *src, void *dst, uint32_t len);

#ifdef __cplusplus
}
#endif
#endif
