/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocefw PFC: received IEEE 802.1Qbb PFC and 802.3x PAUSE frames pause transmission of the
 * paused priorities on a port for the quanta given, and a PFC watchdog stops a faulty peer
 * from freezing a priority. See docs/pfc.md.
 *
 *   RX: rfw_rx_burst() hands MAC Control frames (EtherType 0x8808) to rfw_pfc_rx(), which
 *       records per priority "paused until" (now + quanta x 512 bit times at the link speed).
 *   TX: the port's TX buffer goes through rfw_pfc_tx_filter() only while some priority is
 *       paused, in watchdog storm mode, or has frames held: a single test of one word per
 *       burst otherwise. Frames of a paused priority are moved to a fixed per-queue,
 *       per-priority ring (allocated at setup: nothing is allocated on the packet path) and sent
 *       first, in order, once the pause ends; other priorities keep flowing.
 *   Watchdog: a priority paused without a break for longer than wd_ms is in a storm: its pauses
 *       are ignored and its held frames dropped (counted) until no XOFF for it has arrived for
 *       wd_restore_ms. Checked from queue 0's rfw_rx_burst(), so it fires at most one poll
 *       after the threshold.
 *
 * Threading: the pause state of a port has one writer, the lcore polling RX queue 0 (where MAC
 * Control frames arrive: RSS leaves non-IP frames there), as for ARP/ND; TX queues on other
 * lcores read it (release/acquire on the state word; a reader may act on a pause one poll late).
 * The held frames of a TX queue belong to that queue's lcore.
 */
#ifndef RFW_DATAPLANE_RFW_PFC_H
#define RFW_DATAPLANE_RFW_PFC_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/pfc_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RFW_PFC_HOLD_MAX              256 /* held frames per TX queue and priority */
#define RFW_PFC_WD_MS_DEFAULT         200 /* SONiC's and Junos' default detection time */
#define RFW_PFC_WD_RESTORE_MS_DEFAULT 200 /* SONiC's and Junos' default restoration time */
#define RFW_PFC_WD_MS_MAX             60000
#define RFW_PFC_LINK_MBPS_FALLBACK    10000 /* when the PMD does not know its speed */
#define RFW_PFC_LINK_MBPS_MAX         800000

/* PFC configuration of a port (part of struct rfw_port_conf). Zero fields take the default. */
struct rfw_pfc_conf {
	bool off;               /* do not honour PAUSE/PFC (still parsed and counted) */
	uint32_t link_mbps;     /* Mb/s for pause quanta; default the PMD's link speed */
	uint32_t wd_ms;         /* watchdog detection time, ms; default 200, 1..60000 */
	bool wd_off;            /* no watchdog: pauses are honoured however long they last */
	uint32_t wd_restore_ms; /* quiet time ending a storm, ms; default 200, 1..60000 */
	/* DSCP -> priority for untagged IP frames, 64 entries 0..7; NULL: DSCP / 8 (mlx5's
	 * default map; RoCE's DSCP 26 -> priority 3). Copied at setup. */
	const uint8_t *dscp2prio;
	/*
	 * Generation (a receiver's side of PFC): when the receive backlog reported to
	 * rfw_pfc_rx_backlog() reaches gen_xoff (in the caller's unit: frames, or KiB as
	 * rocefw-cp reports), send XOFF for the priorities in
	 * gen_prio_mask with gen_quanta, again every half pause while the backlog stays above
	 * gen_xon, and XON once it falls to gen_xon. gen_prio_mask 0: never send (default).
	 * gen_xoff default 256, range 2..65535; gen_xon default gen_xoff / 2, below gen_xoff;
	 * gen_quanta default 65535, range 1..65535.
	 */
	uint8_t gen_prio_mask;
	uint32_t gen_xoff, gen_xon;
	uint16_t gen_quanta;
};

/* Port-wide counters (X(name, meaning)); mlx5 ethtool names where mlx5 has one. */
#define RFW_FOREACH_PFC_CTR(X)                                                                     \
	X(rx_mac_control_phy, "MAC Control frames received (EtherType 0x8808, mlx5 name)")         \
	X(rx_pause_ctrl_phy, "valid PAUSE and PFC frames received (mlx5 name)")                    \
	X(rx_unsupported_op_phy, "MAC Control frames with another opcode: dropped (mlx5 name)")    \
	X(rx_macctl_bad, "PAUSE/PFC frames dropped as invalid (reason in macctl_bad_by_reason)")   \
	X(rx_global_pause, "802.3x PAUSE frames received (mlx5 rx_global_pause)")                  \
	X(rx_pause_not_honoured, "valid PAUSE/PFC frames ignored because PFC is off")              \
	X(tx_pause_ctrl_phy, "PFC frames sent by the backlog thresholds (mlx5 name)")              \
	X(tx_pause_alloc_failed, "PFC frames not sent: mempool empty or PMD refused")

enum rfw_pfc_ctr {
#define RFW_PFC_CTR_ENUM(name, doc) RFW_PFC_CTR_##name,
	RFW_FOREACH_PFC_CTR(RFW_PFC_CTR_ENUM)
#undef RFW_PFC_CTR_ENUM
	    RFW_PFC_CTR__COUNT
};

/*
 * Per-priority counters: X(id, name with %u for the priority, meaning). rx_* and the watchdog
 * state counters are the RX writer's; tx_* are summed over TX queues.
 */
#define RFW_FOREACH_PFC_PRIO_CTR(X)                                                                \
	X(rx_pause, "rx_prio%u_pause", "PFC/PAUSE frames received with this class enabled (mlx5)") \
	X(rx_xon, "rx_prio%u_xon", "of those, with pause time 0 (XON)")                            \
	X(rx_pause_duration, "rx_prio%u_pause_duration",                                           \
	  "time the priority was paused, us, added when each pause ends (mlx5 name)")              \
	X(rx_pause_transition, "rx_prio%u_pause_transition",                                       \
	  "pauses ended: expired, XON, or watchdog (mlx5: XOFF -> XON transitions)")               \
	X(tx_pause_held, "tx_prio%u_pause_held",                                                   \
	  "frames held back because the priority was paused")                                      \
	X(tx_pause_hold_full, "tx_prio%u_pause_hold_full",                                         \
	  "frames dropped: the priority's hold ring (256 per queue) was full")                     \
	X(wd_storm, "rx_prio%u_pfc_wd_storm",                                                      \
	  "PFC storms detected by the watchdog (SONiC DEADLOCK_DETECTED)")                         \
	X(wd_restored, "rx_prio%u_pfc_wd_restored", "storms ended after the quiet time (SONiC)")   \
	X(wd_ignored, "rx_prio%u_pfc_wd_ignored", "XOFF for this priority ignored during a storm") \
	X(wd_dropped, "tx_prio%u_pfc_wd_dropped", "held frames dropped when a storm was detected") \
	X(tx_pause, "tx_prio%u_pause",                                                             \
	  "PFC frames sent with this class enabled, XOFF and XON (mlx5)")                          \
	X(tx_pause_duration, "tx_prio%u_pause_duration",                                           \
	  "time from our first XOFF to our XON, us, added at the XON (mlx5 name)")

enum rfw_pfc_prio_ctr {
#define RFW_PFC_PCTR_ENUM(id, name, doc) RFW_PFC_PCTR_##id,
	RFW_FOREACH_PFC_PRIO_CTR(RFW_PFC_PCTR_ENUM)
#undef RFW_PFC_PCTR_ENUM
	    RFW_PFC_PCTR__COUNT
};

const char *rfw_pfc_ctr_name(enum rfw_pfc_ctr c);
const char *rfw_pfc_ctr_doc(enum rfw_pfc_ctr c);
/* "rx_prio%u_pause": a printf format with one %u for the priority. */
const char *rfw_pfc_prio_ctr_fmt(enum rfw_pfc_prio_ctr c);
const char *rfw_pfc_prio_ctr_doc(enum rfw_pfc_prio_ctr c);

/* Bits of the shared state word: paused priorities in the low byte, storms in the high byte. */
#define RFW_PFC_STATE_PAUSED(s) ((uint8_t)((s)&0xff))
#define RFW_PFC_STATE_STORM(s)  ((uint8_t)((s) >> 8))

/* A port's pause state (rfw_port.pfc). */
struct rfw_pfc {
	uint16_t state;                /* written by the RX writer, read by TX queues */
	uint64_t until[RFW_PFC_PRIOS]; /* TSC when the current pause ends */
	/* configuration */
	bool off, wd_off;
	uint32_t link_mbps;
	uint64_t hz;
	uint64_t wd_tsc, restore_tsc;
	uint8_t dscp2prio[64];
	/* RX writer only */
	uint64_t since[RFW_PFC_PRIOS];     /* start of the unbroken pause */
	uint64_t last_xoff[RFW_PFC_PRIOS]; /* last XOFF received */
	uint64_t ctr[RFW_PFC_CTR__COUNT];
	uint64_t prio_ctr[RFW_PFC_PCTR__COUNT][RFW_PFC_PRIOS];
	uint64_t bad[RFW_PFC_ERR__COUNT];
	/* generation (RX writer only) */
	uint8_t gen_mask;
	uint16_t gen_quanta;
	uint32_t gen_xoff, gen_xon;
	bool gen_on;                  /* XOFF in force toward the peer */
	uint64_t gen_since, gen_next; /* first XOFF; when to refresh it */
};

/* Per TX queue: the held frames, in a ring per priority. */
struct rte_mbuf;
struct rfw_pfc_txq {
	uint32_t held; /* total */
	uint16_t head[RFW_PFC_PRIOS], n[RFW_PFC_PRIOS];
	uint64_t prio_ctr[RFW_PFC_PCTR__COUNT][RFW_PFC_PRIOS];
	struct rte_mbuf *ring[RFW_PFC_PRIOS][RFW_PFC_HOLD_MAX];
};

struct rfw_port;
struct rfw_queue;

/* 0 or -EINVAL. */
int rfw_pfc_conf_check(const struct rfw_pfc_conf *c);
/* Allocate the port's PFC state and each queue's hold rings. 0 or -ENOMEM. */
int rfw_pfc_port_init(struct rfw_port *p, const struct rfw_pfc_conf *c, int socket);
/* The link speed reported by the PMD once the port is up (used unless link_mbps was given). */
void rfw_pfc_port_link(struct rfw_port *p, uint32_t pmd_mbps);
/* Free held frames and the state. */
void rfw_pfc_port_free(struct rfw_port *p);

/* A MAC Control frame received on @q (called by rfw_rx_burst). */
void rfw_pfc_rx(struct rfw_queue *q, const uint8_t *buf, size_t len, uint64_t now_tsc);
/* Expire pauses, run the watchdog (called by rfw_rx_burst on queue 0 while state != 0). */
void rfw_pfc_poll(struct rfw_port *p, uint64_t now_tsc);
/*
 * The TX slow path, called for each burst while the state or the queue's held count is not
 * zero: send held frames whose pause has ended (drop them in a storm), then move frames of
 * paused priorities out of the TX buffer into the hold rings. Reads the TSC itself.
 */
void rfw_pfc_tx_filter(struct rfw_queue *q);

/* Priorities whose pause is honoured and running at @now_tsc, and those in a storm. */
uint8_t rfw_pfc_paused(const struct rfw_port *p, uint64_t now_tsc);
uint8_t rfw_pfc_storm(const struct rfw_port *p);
uint64_t rfw_pfc_ctr(const struct rfw_port *p, enum rfw_pfc_ctr c);
uint64_t rfw_pfc_prio_ctr(const struct rfw_port *p, enum rfw_pfc_prio_ctr c, unsigned prio);
/* Frames currently held on @p's TX queues for @prio. */
uint32_t rfw_pfc_held(const struct rfw_port *p, unsigned prio);

/*
 * Generation: report the receive backlog of @q (frames waiting: rte_eth_rx_queue_count() where
 * the PMD has it, or the application's own queue; any unit, the thresholds' one) at @now_tsc. Sends
 * XOFF / refresh / XON on
 * @q's TX queue directly (never held, never buffered), from the port's pool. Returns 1 if an
 * XOFF is in force after the call, 0 if not, -ENOTSUP if generation is not configured. Call
 * from the lcore that owns queue 0.
 */
int rfw_pfc_rx_backlog(struct rfw_queue *q, uint32_t depth, uint64_t now_tsc);

#ifdef __cplusplus
}
#endif
#endif
