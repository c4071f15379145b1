/* SPDX-License-Identifier: BSD-3-Clause */
/* The DPDK host of nic/: internals shared by rfw_nic*.c (not installed). */
#ifndef RFW_DATAPLANE_RFW_NIC_INT_H
#define RFW_DATAPLANE_RFW_NIC_INT_H

#include <pthread.h>
#include <stdalign.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "dataplane/rfw_nic.h"
#include "nic/rfw_fw.h"
#include "transport/es_crec.h"
#include "transport/estats.h"

/* Estats: rows published per window, the republication period (quantiles cost a histogram
 * scan each), in-flight WQEs a dump lists, dumps queued for the writer thread. */
#define NIC_ES_ROWS      256
#define NIC_ES_PUB_NS    100000000ull
#define NIC_ES_DUMP_WQES 64
#define NIC_ES_QUEUE     8

/* Per-QP state of the DPDK host: peer MAC resolution (the firmware knows only "pending"). */
struct nic_l2 {
	struct rfw_qp *qp;
	uint8_t state; /* enum rfw_nic_l2 */
	uint8_t ip_ver;
	bool vlan;
	uint16_t tci;
	uint64_t probe_tsc; /* last tagged ARP/ND probe */
	uint8_t dst_ip[16];
};

/* Estats rows of every attached QP, both windows, under a sequence counter. */
struct nic_es_pub {
	uint32_t seq;
	uint64_t at_ns;
	uint32_t nrows[2]; /* [enum rfw_es_window] */
	bool have_last;
	bool truncated;
	struct rfw_es_row rows[2][NIC_ES_ROWS];
};

/* What a trigger dump says, captured on the poll thread, written by the writer thread. */
struct nic_es_dump {
	int nic_id;
	uint32_t qpn;
	uint64_t now_ns, threshold_ns;
	struct rfw_es_trigger tr;
	struct rfw_qp_attr a;
	struct rfw_es_qp_state st;
	int nw;
	struct rfw_es_wqe w[NIC_ES_DUMP_WQES];
	uint64_t tcnt[RFW_CNT__COUNT];
	bool cc;
	struct rfw_fw_snap snap;
};

/* Estats records from the thread that polls to the Estats thread, which bins them
 * (rfw_nic_es_bin.c): the transport's single-producer single-consumer ring (rfw_dev_estats_ring,
 * transport/es_crec.h), which the transport fills on the polling thread as it polls the CQ, and
 * the histograms per QP slot. 32,768 records of 32 bytes: about 6 ms of 64 B WRITEs at 5 M/s
 * before the ring is full. */
#define NIC_ES_RECS 32768
enum nic_es_mark { NIC_ES_MARK_TICK = 1, NIC_ES_MARK_ATTACH, NIC_ES_MARK_DETACH };
struct nic_es_binner {
	struct rfw_es_ring r; /* r.q: [NIC_ES_RECS], cache-line aligned */
	uint64_t nomem;       /* records not binned: no memory for a slot's histograms */
	alignas(64) uint32_t max_qp;
	struct rfw_es_bins **bins; /* [max_qp], the Estats thread's */
	bool *attached;            /* [max_qp], the Estats thread's view of attached slots */
};

/* Dumps from the poll thread (producer) to the writer thread (consumer): SPSC ring. The same
 * thread bins Estats records (b). */
struct nic_es_writer {
	pthread_t thread;
	bool running;
	uint32_t prod, cons; /* prod written by the poll thread, cons by the writer */
	bool stop;
	uint64_t dumps, errors; /* written by the writer thread only */
	uint64_t dropped;       /* queue full: written by the poll thread only */
	char dir[256];
	struct nic_es_dump q[NIC_ES_QUEUE];
	struct nic_es_binner b;
};

#define NIC_MB_STASH 32
/* rfw_nic_conf.tx_ref_min's default, bytes (docs/nic.md "Payload sent from the MR"). */
#define NIC_TX_REF_MIN_DEFAULT 1024

struct rfw_nic {
	struct rfw_queue *q;
	struct rfw_fw *fw;
	struct rfw_dev *dev;
	struct rte_mempool *pool;
	uint32_t mbuf_off; /* from a frame's first byte back to its mbuf */
	uint64_t now_ns;
	uint64_t tsc0;
	uint64_t ns_mult;                /* ns per TSC cycle, 32.32 fixed point */
	uint64_t (*clock_ns)(void *arg); /* NULL: the TSC */
	void *clock_arg;
	uint32_t qpn_base, max_qp;
	uint32_t quantum, pacer_burst_ns;
	uint8_t dscp, data_pcp, cnp_dscp, cnp_pcp;
	bool vlan, udp6_csum;
	uint16_t vlan_id;
	int id;        /* telemetry registry slot */
	unsigned sent; /* frames queued for TX in this poll (firmware + probes) */
	uint32_t n_resolving;
	uint64_t resolve_next_ns;
	uint64_t snapshot_ns, pub_next_ns;
	uint32_t pub_max_per_s; /* snapshot_max_per_s */
	/* The link-down watch (tx_stall_ms): the PMD's frame count when the wait began, then */
	uint64_t tx_stall_ns, stall_since_ns, stall_taken, stall_look_ns;
	bool stall_armed, tx_down;
	uint32_t pub_cursor;
	uint64_t pub_round_ns; /* when the round under way began */
	uint32_t pub_round_n;  /* snapshots it wrote so far */
	const struct dcqcn_prof *cc_prof;
	const struct timely_prof *timely_prof;
	uint8_t src_mac[6];
	uint8_t gid[16];
	uint8_t ip6[16];
	uint64_t ctr[RFW_NIC_HOST_CTR__COUNT];
	struct nic_l2 *l2;         /* [max_qp] */
	struct nic_es_pub *es_pub; /* NULL when Estats is off */
	struct nic_es_writer *es_w;
	uint64_t es_interval_ns, es_threshold_ns, es_pub_next_ns;
	/* TX mbufs taken from the pool NIC_MB_STASH at a time (mb_alloc): one pool access and the
	   headers' first touches side by side instead of a cache miss in every frame's alloc */
	unsigned mb_n;
	struct rte_mbuf *mb_stash[NIC_MB_STASH];
	/* The shared info of every MR payload attached to a frame (mb_alloc_ref): its count is
	   the frames in flight plus this NIC's own reference, so its free callback never runs. */
	struct rte_mbuf_ext_shared_info ref_shinfo __rte_cache_aligned;
} __rte_cache_aligned;

/* rfw_nic.c */
extern const struct rfw_fw_host_ops nic_host_ops;
int nic_mbuf_off_init(struct rfw_nic *nic);
void nic_ref_init(struct rfw_nic *nic);

/* rfw_nic_l2.c */
int nic_l2_attach(struct rfw_nic *nic, struct rfw_qp *qp, const struct rfw_nic_path *path,
                  struct rfw_fw_path *fp);
void nic_l2_detach(struct rfw_nic *nic, uint32_t slot);
void nic_l2_poll(struct rfw_nic *nic, uint64_t tsc);

/* rfw_nic_estats.c */
int nic_es_start(struct rfw_nic *nic, const char *dir);
void nic_es_stop(struct rfw_nic *nic);
void nic_es_publish(struct rfw_nic *nic);
uint64_t nic_es_dumps(const struct rfw_nic *nic);
uint64_t nic_es_dump_errors(const struct rfw_nic *nic);

/* rfw_nic_es_bin.c */
int nic_es_bin_init(struct nic_es_binner *b, uint32_t max_qp);
void nic_es_bin_free(struct nic_es_binner *b);
void nic_es_mark(struct rfw_nic *nic, enum nic_es_mark m, uint32_t slot, uint64_t now_ns);
uint32_t nic_es_bin_drain(struct rfw_nic *nic); /* records and markers binned */
uint64_t nic_es_records_dropped(const struct rfw_nic *nic);

/* rfw_nic_telemetry.c */
int nic_registry_add(struct rfw_nic *nic);
void nic_registry_remove(struct rfw_nic *nic);

#endif
