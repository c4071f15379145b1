/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-perf's pieces shared between its native modes (perf.c) and the perftest-compatible
 * mode (perftest_mode.c). Internal to the rocefw-perf executable.
 */
#ifndef RFW_TOOLS_PERF_H
#define RFW_TOOLS_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_port.h"
#include "tools/common/rfw_endpoint.h"

enum test_op { OP_WRITE, OP_READ, OP_SEND, OP_ATOMIC };

/* --perftest: QPs of perftest's exchange (one keys record each, perftest_mode.c). */
#define PT_MAX_QPS 32u
extern const char *const op_names[4]; /* "write", "read", "send", "atomic" */

struct opts {
	enum test_op op;
	bool lat;
	uint32_t size; /* 0: default for the test */
	bool all;
	uint64_t iters; /* 0: default */
	uint32_t duration_s;
	uint32_t qps;
	uint32_t depth;     /* 0: default */
	uint32_t cq_mod;    /* -Q: a completion every N messages (perftest's --cq-mod), bw; 0: not
	                       given (1, or the post list's length) */
	uint32_t post_list; /* -l: work requests per post (perftest's --post_list), bw; 1 */
	uint32_t mtu;
	const char *cc_profile;
	const char *cc_set; /* --cc-set: "name=value,..." over the profile (NULL: none) */
	uint32_t dscp;
	uint32_t line_gbps;
	bool gbits;
	const char *json;
	bool loopback;
	const char *server;
	bool corrupt_one;  /* test of the checker: damage one delivered byte */
	uint32_t ce_every; /* loopback congestion point: mark every Nth ECT frame A -> B */
	enum rfw_transport_mode transport;
	uint8_t ack_timeout; /* IBA local ACK timeout exponent: 4.096 us * 2^N */
	uint32_t tx_ref_min; /* rfw_nic_conf.tx_ref_min; 0: off */
	/* two-process mode */
	uint16_t tcp_port;
	bool has_ip;
	uint32_t ip4; /* host byte order */
	uint32_t oob_timeout_s;
	bool perftest;    /* --perftest: the peer is an unmodified perftest (perftest_mode.c) */
	const char *dump; /* --perftest-dump: this side's peer-visible memory, after the run */
};

/* One run's state (perf.c); functions that need it take it first. */
struct perf;
/* This process's NIC (two-process modes use side a only). */
struct rfw_ep *perf_side_a(struct perf *P);

/* Print "rocefw-perf: WHAT: strerror" and exit 1. */
void die(const char *what, int err) __attribute__((noreturn));
uint64_t now_ns(struct perf *P);
/* Port, NIC, PD and CQ of one side on DPDK port @port_id with IPv4 address @ip4. */
void side_setup(struct perf *P, struct rfw_ep *s, uint16_t port_id, uint32_t ip4,
                const struct opts *o);
/* An RC QP on @s's PD and CQ, @depth send WRs, 2 x @depth receive WRs, each send signaled as its
 * work request asks (-Q), taken to INIT with local write and every remote access. */
struct rfw_qp *make_qp(struct rfw_ep *s, uint32_t depth);

/* A on the first DPDK port, link up (or exit 1 naming the problem). */
void open_port(struct perf *P, const struct opts *o);
/* The NIC's port counters that tell why a peer is silent (for error messages). */
const char *port_summary(struct perf *P);
/* The MAC of @gid (IPv4-mapped) by ARP on A's port, the NIC polled meanwhile; 0, -ETIMEDOUT. */
int peer_resolve(struct perf *P, const uint8_t gid[16], uint64_t timeout_ns,
                 struct rte_ether_addr *mac);

/* Attach @qp (in INIT) to side @s's NIC toward @pp and take it to RTR and RTS; the local ACK
 * timeout, retries and transport mode come from @o. 0, or a negative errno with *@stage naming
 * the step that failed ("rfw_nic_qp_attach", "rfw_modify_qp(RTR)", "rfw_modify_qp(RTS)"). */
int qp_to_peer(struct rfw_ep *s, struct rfw_qp *qp, struct rfw_ep_path *pp, const struct opts *o,
               const char **stage);

/* One run's figures (bandwidth, latency in us) and its account. */
struct result {
	uint32_t bytes;
	uint64_t iters;
	double bw_peak_gbps, bw_avg_gbps, mpps;
	bool verified;
	uint64_t checked_bytes;
	double bound_gbps;
	/* The byte passes the path must make at least, timed on this core in this run: loopback,
	   both ends' (two copies, two ICRCs); two processes, this side's (two copies, one ICRC:
	   memif copies between the mbuf and its ring). */
	double byte_work_bound_gbps;
	/* The checker's cost per message (ns, timed after the run) and the goodput with every
	   side's verification taken out (perf.c nic_goodput; two processes without the peer's
	   account: the wall-clock goodput). byte_work_ratio is nic_goodput_gbps /
	   byte_work_bound_gbps. */
	double check_ns, nic_goodput_gbps;
	/* bw: a completion every cq_mod messages (-Q, cut to the depth); send completions polled */
	uint32_t cq_mod;
	uint32_t post_list; /* bw: WRs per post (-l, cut to the depth) */
	uint64_t completions;
	/* The sender's stamping cost per message (ns, timed after the run): taken out of
	   nic_goodput_gbps as the checker's is. Two processes: this side's (the client's stamping
	   of what it sends, the server's of its expectation); check_ns too. */
	double stamp_ns;
	/* bw: this side's time in poll rounds that did any work (ns; its rounds that found nothing
	   to do are idle), and the peer's account of its own (two processes, when it gave one:
	   its busy time and its verification's share of it, ns). */
	uint64_t busy_ns;
	bool have_peer_time;
	uint64_t peer_busy_ns, peer_tool_ns;
	/* latency, us */
	double t_min, t_max, t_typ, t_avg, t_stdev, p99, p999;
};
/* bound.c: the rate of @copies copies and @icrcs ICRCs per @mtu packet of @size-byte messages
 * from @nslots slots at @src (Gb/s), packets of at least @fuse_min bytes (0: none) with the
 * first copy and ICRC fused, the second copy into @dslots slots of its own (at least 1); the
 * checker's cost of one @size-byte message (ns). */
double perf_byte_passes_gbps(struct perf *P, const uint8_t *src, uint32_t nslots, uint32_t size,
                             uint32_t mtu, unsigned copies, unsigned icrcs, uint32_t fuse_min,
                             uint32_t dslots);
double perf_check_ns(struct perf *P, const uint8_t *src, uint32_t nslots, uint32_t size, bool hot);
/* bound.c: the sender's stamping cost of one @size-byte message over @nslots slots (ns); the
 * two-process checker's stamping of its expectation, one cache-resident @slot (ns). */
double perf_stamp_ns(struct perf *P, uint8_t *src, uint32_t nslots, uint32_t size);
double perf_restamp_ns(struct perf *P, uint8_t *slot, uint32_t size);

/* Latency columns of @r from @n samples in ns (sorted here). */
void lat_stats(uint64_t *lat, uint64_t n, struct result *r);
int cmp_u64(const void *a, const void *b);

/* The checker's verdict: the first failed check (text, also sent to a peer) and whether any
 * failed. check_fail() records one (the first five also go to stderr). */
bool perf_failed(const struct perf *P);
const char *perf_first_err(const struct perf *P);
void check_fail(struct perf *P, const char *what, uint32_t qi, uint64_t k);

/* --perftest: speak perftest 4.5's exchange to an unmodified perftest peer (docs/perf.md). */
int perftest_run(struct perf *P, const struct opts *o, uint32_t size);

#endif
