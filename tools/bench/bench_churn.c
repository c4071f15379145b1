/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-bench-churn: connection churn on the firmware core (issue 20, docs/scale.md). Two nic/
 * cores A and B joined by an in-memory wire (no DPDK, no delay); for --seconds, one connection
 * after another: a QP on each NIC created, attached, taken RESET -> INIT -> RTR -> RTS toward
 * the other, used for one 64-byte RDMA WRITE whose bytes are checked at B (every --verify-every
 * connections; 0: none), then detached and destroyed. --live N keeps N connected pairs
 * established beside the churn, so the cost's growth with the number of QPs shows.
 *
 * Prints connections per second (each is one QP connected and destroyed on each NIC), the time
 * of each phase per connection, and the memory of a live QP (malloc'ed bytes per QP, measured
 * while the --live pairs were made) and of the NIC's per-slot tables.
 *
 * usage: rocefw-bench-churn [--seconds S] [--live N] [--max-qp N] [--verify-every K] [--mrs N]
 *                           [--cc P] [--json F]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/dcqcn.h"
#include "cc/dcqcn_params.h"
#include "nic/rfw_fw.h"
#include "tools/common/rfw_clock.h"
#include "tools/common/rfw_opt.h"
#include "wire/frame.h"

#define PROG     "rocefw-bench-churn"
#define FRAME    4352
#define QUEUE    256
#define MEM      (1u << 20)
#define SLOT     64 /* bytes a connection's WRITE moves */
#define SCHEMA   "rocefw-bench-churn/1"
#define STEP_MAX 100000 /* wire steps a WRITE may take before the run fails */

struct opts {
	double seconds;
	uint32_t live, max_qp, verify_every, mrs;
	const char *json;
	const char *cc; /* a DCQCN profile name, or "none" */
};

struct wire;

struct nic {
	struct wire *w;
	int id;
	struct rfw_fw *fw;
	struct rfw_pd *pd;
	struct rfw_cq *cq;
	struct rfw_mr *mr;
	uint8_t *mem;
};

struct frame {
	int to;
	uint32_t len;
	uint8_t data[FRAME];
};

/* Owned by main; the NICs reach it through their host pointer. */
struct wire {
	uint64_t now;
	unsigned head, tail;
	struct frame *q; /* QUEUE frames */
	struct nic nic[2];
	struct dcqcn_prof prof; /* --cc */
	struct rfw_mr **mrs;    /* --mrs at B, one per SLOT of its memory, cyclically */
	uint32_t nmrs;
};

enum phase { PH_CREATE, PH_CONNECT, PH_WRITE, PH_DESTROY, PH__COUNT };
static const char *const phase_names[PH__COUNT] = {"create_attach", "connect_rtr_rts",
                                                   "write_verify", "detach_destroy"};

static uint8_t *w_alloc(void *host, uint32_t len)
{
	struct nic *n = host;
	struct wire *w = n->w;

	if (len > FRAME || w->tail - w->head >= QUEUE)
		return NULL;
	return w->q[w->tail % QUEUE].data;
}

/* The destination is the other NIC (two NICs, one wire). */
static void w_send(void *host, uint8_t *frame, uint32_t len)
{
	struct nic *n = host;
	struct wire *w = n->w;
	struct frame *f = &w->q[w->tail % QUEUE];

	if (frame != f->data)
		abort();
	f->len = len;
	f->to = 1 - n->id;
	w->tail++;
}

static const struct rfw_fw_host_ops w_ops = {.frame_alloc = w_alloc, .frame_send = w_send};

/* Every frame on the wire delivered, then both NICs run; the clock moves 100 ns. */
static void w_step(struct wire *w)
{
	w->now += 100;
	while (w->head != w->tail) {
		struct frame *f = &w->q[w->head % QUEUE];

		(void)rfw_fw_rx_frame(w->nic[f->to].fw, f->data, f->len, w->now);
		w->head++;
	}
	for (int i = 0; i < 2; i++)
		rfw_fw_run(w->nic[i].fw, w->now);
}

static void die(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void nic_init(struct wire *w, int id, const struct opts *o)
{
	struct nic *n = &w->nic[id];
	struct rfw_fw_conf c = {.dev_attr = {.max_qp = o->max_qp, .max_mr = o->mrs + 16},
	                        .cc = RFW_FW_CC_NONE};

	if (strcmp(o->cc, "none") != 0) {
		c.cc = RFW_FW_CC_DCQCN;
		c.dcqcn = &w->prof;
	}

	n->w = w;
	n->id = id;
	n->fw = rfw_fw_create(&c, &w_ops, n);
	if (n->fw == NULL)
		die("rfw_fw_create", errno);
	n->pd = rfw_alloc_pd(rfw_fw_dev(n->fw));
	n->cq = rfw_create_cq(rfw_fw_dev(n->fw), 4096);
	n->mem = calloc(1, MEM);
	if (n->pd == NULL || n->cq == NULL || n->mem == NULL)
		die("NIC set-up", ENOMEM);
	n->mr = rfw_reg_mr(n->pd, n->mem, MEM, RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
	if (n->mr == NULL)
		die("rfw_reg_mr", errno);
}

static void nic_fini(struct nic *n)
{
	rfw_dereg_mr(n->mr);
	rfw_destroy_cq(n->cq);
	rfw_dealloc_pd(n->pd);
	rfw_fw_destroy(n->fw);
	free(n->mem);
}

/* A QP of @n in INIT, attached toward the other NIC (10.0.0.1 <-> 10.0.0.2). NULL on failure. */
static struct rfw_qp *qp_make(struct nic *n)
{
	struct rfw_qp_init_attr ia = {
	    .send_cq = n->cq,
	    .recv_cq = n->cq,
	    .sq_sig_all = true,
	    .qp_type = RFW_QPT_RC,
	    .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_INIT,
	                        .qp_access_flags = RFW_ACCESS_REMOTE_WRITE};
	struct rfw_fw_path p = {.src_mac = {2, 0, 0, 0, 0, (uint8_t)(0x10 + n->id)},
	                        .dst_mac = {2, 0, 0, 0, 0, (uint8_t)(0x11 - n->id)},
	                        .cnp_dscp = 48};
	struct rfw_qp *qp = rfw_create_qp(n->pd, &ia);

	if (qp == NULL)
		return NULL;
	rfw_ip4_to_mapped(p.src_ip, 0x0a000001u + (uint32_t)n->id);
	rfw_ip4_to_mapped(p.dst_ip, 0x0a000002u - (uint32_t)n->id);
	if (rfw_modify_qp(qp, &a, RFW_QP_STATE | RFW_QP_ACCESS_FLAGS) != 0 ||
	    rfw_fw_qp_attach(n->fw, qp, &p) != 0) {
		rfw_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* @qp of NIC @id to RTR and RTS toward QPN @dqpn (IBA 10.3.1: the required attributes). */
static int qp_connect(struct rfw_qp *qp, int id, uint32_t dqpn)
{
	struct rfw_qp_attr a = {.qp_state = RFW_QPS_RTR,
	                        .path_mtu = RFW_MTU_1024,
	                        .dest_qp_num = dqpn,
	                        .max_dest_rd_atomic = 1,
	                        .min_rnr_timer = 1};
	int rc;

	rfw_ip4_to_mapped(a.ah_attr.sgid, 0x0a000001u + (uint32_t)id);
	rfw_ip4_to_mapped(a.ah_attr.dgid, 0x0a000002u - (uint32_t)id);
	rc = rfw_modify_qp(qp, &a,
	                   RFW_QP_STATE | RFW_QP_AV | RFW_QP_PATH_MTU | RFW_QP_DEST_QPN |
	                       RFW_QP_RQ_PSN | RFW_QP_MAX_DEST_RD_ATOMIC | RFW_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;
	a.qp_state = RFW_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return rfw_modify_qp(qp, &a,
	                     RFW_QP_STATE | RFW_QP_SQ_PSN | RFW_QP_TIMEOUT | RFW_QP_RETRY_CNT |
	                         RFW_QP_RNR_RETRY | RFW_QP_MAX_QP_RD_ATOMIC);
}

/* One connected pair: a QP on each NIC, each toward the other. 0, or -1 (message printed). */
static int pair_up(struct wire *w, struct rfw_qp *qp[2], uint64_t t[PH__COUNT])
{
	uint64_t t0 = rfw_mono_ns(), t1;

	qp[0] = qp_make(&w->nic[0]);
	qp[1] = qp_make(&w->nic[1]);
	t1 = rfw_mono_ns();
	t[PH_CREATE] += t1 - t0;
	if (qp[0] == NULL || qp[1] == NULL) {
		fprintf(stderr, PROG ": creating a QP failed: %s (raise --max-qp?)\n",
		        strerror(errno));
		return -1;
	}
	if (qp_connect(qp[0], 0, rfw_qp_num(qp[1])) != 0 ||
	    qp_connect(qp[1], 1, rfw_qp_num(qp[0])) != 0) {
		fprintf(stderr, PROG ": connecting a QP failed\n");
		return -1;
	}
	t[PH_CONNECT] += rfw_mono_ns() - t1;
	return 0;
}

static void pair_down(struct wire *w, struct rfw_qp *qp[2])
{
	for (int i = 0; i < 2; i++) {
		rfw_fw_qp_detach(w->nic[i].fw, qp[i]);
		rfw_destroy_qp(qp[i]);
	}
}

/* Connection @k's WRITE: SLOT bytes stamped with @k from A to B, completed, compared at B. */
static int pair_write(struct wire *w, struct rfw_qp *qa, uint64_t k)
{
	struct nic *a = &w->nic[0], *b = &w->nic[1];
	uint32_t off = (uint32_t)(k % (MEM / SLOT)) * SLOT;
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(a->mem + off), SLOT, rfw_mr_lkey(a->mr)};
	struct rfw_send_wr wr = {.wr_id = k,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = RFW_WR_RDMA_WRITE},
	                   *bad;
	struct rfw_wc wc;
	int n = 0;

	const uint8_t *sge_src = a->mem + off;

	for (uint32_t i = 0; i < SLOT; i += 8)
		memcpy(a->mem + off + i, &(uint64_t){k * 31 + i}, 8);
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(b->mem + off);
	wr.wr.rdma.rkey = rfw_mr_rkey(b->mr);
	if (w->nmrs) { /* one of the --mrs MRs, each over its own slot */
		uint32_t m = (uint32_t)(k % w->nmrs);

		off = (m % (MEM / SLOT)) * SLOT;
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(b->mem + off);
		wr.wr.rdma.rkey = rfw_mr_rkey(w->mrs[m]);
	}
	if (rfw_post_send(qa, &wr, &bad, w->now) != 0)
		return -1;
	for (unsigned s = 0; n == 0 && s < STEP_MAX; s++) {
		w_step(w);
		n = rfw_poll_cq(a->cq, 1, &wc);
	}
	if (n != 1 || wc.status != RFW_WC_SUCCESS || wc.wr_id != k)
		return -1;
	return memcmp(sge_src, b->mem + off, SLOT) == 0 ? 0 : -1;
}

/* Whether glibc's malloc counts our bytes: a sanitizer's allocator replaces it (mallinfo2 then
 * reports nothing), and the memory figures are not measured. */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_MEASURED false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_MEASURED false
#endif
#endif
#ifndef HEAP_MEASURED
#define HEAP_MEASURED true
#endif

/* Bytes malloc holds now (main arena and mmapped chunks). */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

struct result {
	uint64_t conns, verified, live;
	double secs;
	uint64_t t[PH__COUNT];
	double qp_bytes;   /* malloc'ed per live QP (QP, queues, the NIC's attach state) */
	double slot_bytes; /* the NIC's and transport's tables per QP slot (max_qp) */
	double sum_ns; /* one rfw_dev_counters() (what telemetry publishes for the device) with the
	                  live QPs */
	double reg_ns, dereg_ns; /* per MR of --mrs */
};

/* --live pairs, connected and left so; the bytes each QP added. */
static struct rfw_qp **make_live(struct wire *w, uint32_t live, struct result *r)
{
	struct rfw_qp **l = calloc((size_t)live * 2 + 2, sizeof(*l));
	uint64_t t[PH__COUNT] = {0};
	size_t before;

	if (l == NULL)
		die("--live", ENOMEM);
	before = heap_bytes();
	for (uint32_t i = 0; i < live; i++)
		if (pair_up(w, &l[2 * i], t) != 0)
			exit(1);
	r->qp_bytes =
	    live && HEAP_MEASURED ? ((double)heap_bytes() - (double)before) / (2.0 * live) : 0;
	r->live = live;
	return l;
}

/* --mrs MRs at B, each over one SLOT of its memory (cyclically; MRs may overlap), timed. */
static void make_mrs(struct wire *w, uint32_t n, struct result *r)
{
	struct nic *b = &w->nic[1];
	uint64_t t0;

	w->mrs = calloc(n ? n : 1, sizeof(*w->mrs));
	if (w->mrs == NULL)
		die("--mrs", ENOMEM);
	t0 = rfw_mono_ns();
	for (uint32_t m = 0; m < n; m++) {
		w->mrs[m] = rfw_reg_mr(b->pd, b->mem + (m % (MEM / SLOT)) * SLOT, SLOT,
		                       RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE);
		if (w->mrs[m] == NULL)
			die("rfw_reg_mr (--mrs)", errno);
	}
	r->reg_ns = n ? (double)(rfw_mono_ns() - t0) / n : 0;
	w->nmrs = n;
}

static void free_mrs(struct wire *w, struct result *r)
{
	uint64_t t0 = rfw_mono_ns();

	for (uint32_t m = 0; m < w->nmrs; m++)
		if (rfw_dereg_mr(w->mrs[m]) != 0)
			die("rfw_dereg_mr", EBUSY);
	r->dereg_ns = w->nmrs ? (double)(rfw_mono_ns() - t0) / w->nmrs : 0;
	free(w->mrs);
}

/* What one device counter read costs, best of 5 (a copy: the QPs add to the device's counters
 * as they count; it was a sum over every QP slot, docs/scale.md). */
static double dev_sum_ns(struct wire *w)
{
	uint64_t cnt[RFW_CNT__COUNT], best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t t0 = rfw_mono_ns(), t;

		rfw_dev_counters(rfw_fw_dev(w->nic[0].fw), cnt);
		t = rfw_mono_ns() - t0;
		best = t < best ? t : best;
	}
	return (double)best;
}

static void churn(struct wire *w, const struct opts *o, struct result *r)
{
	uint64_t start = rfw_mono_ns(), end = start + (uint64_t)(o->seconds * 1e9);
	struct rfw_qp *qp[2];

	do {
		uint64_t t0;

		if (pair_up(w, qp, r->t) != 0)
			exit(1);
		t0 = rfw_mono_ns();
		if (o->verify_every && r->conns % o->verify_every == 0) {
			if (pair_write(w, qp[0], r->conns) != 0) {
				fprintf(stderr,
				        PROG ": connection %" PRIu64 ": WRITE failed or its "
				             "bytes differ at B\n",
				        r->conns);
				exit(1);
			}
			r->verified++;
		}
		r->t[PH_WRITE] += rfw_mono_ns() - t0;
		t0 = rfw_mono_ns();
		pair_down(w, qp);
		r->t[PH_DESTROY] += rfw_mono_ns() - t0;
		r->conns++;
	} while (rfw_mono_ns() < end);
	r->secs = (double)(rfw_mono_ns() - start) / 1e9;
	r->sum_ns = dev_sum_ns(w);
}

static void print_result(const struct opts *o, const struct result *r)
{
	printf("rocefw-bench-churn: %.2f s, %" PRIu64 " live pairs beside, max_qp %u, cc %s\n",
	       r->secs, r->live, o->max_qp, o->cc);
	printf("  connections      %" PRIu64 " (%.0f per second; each: a QP created, connected "
	       "RESET->RTS and destroyed on each NIC)\n",
	       r->conns, (double)r->conns / r->secs);
	printf("  verified WRITEs  %" PRIu64 " of %" PRIu64 "\n", r->verified, r->conns);
	for (int p = 0; p < PH__COUNT; p++)
		printf("  %-16s %8.0f ns per connection\n", phase_names[p],
		       (double)r->t[p] / (double)r->conns);
	if (HEAP_MEASURED)
		printf("  memory           %.0f B per live QP; %.0f B per QP slot of the tables\n",
		       r->qp_bytes, r->slot_bytes);
	else
		printf(
		    "  memory           not measured: this build's allocator is a sanitizer's\n");
	printf("  device read      %.1f us per rfw_dev_counters() (telemetry), max_qp %u\n",
	       r->sum_ns / 1e3, o->max_qp);
	if (o->mrs)
		printf(
		    "  MRs              %u at B, the WRITEs spread over them: %.0f ns to register, "
		    "%.0f ns to deregister, each\n",
		    o->mrs, r->reg_ns, r->dereg_ns);
}

static int write_json(const struct opts *o, const struct result *r)
{
	FILE *f = fopen(o->json, "w");

	if (f == NULL) {
		fprintf(stderr, PROG ": --json %s: %s\n", o->json, strerror(errno));
		return -1;
	}
	fprintf(f,
	        "{\"schema\": \"%s\", \"seconds\": %.3f, \"live_pairs\": %" PRIu64
	        ", \"max_qp\": %u, \"connections\": %" PRIu64 ", \"per_second\": %.1f, "
	        "\"verified\": %" PRIu64 ", \"qp_bytes\": %.1f, \"slot_bytes\": %.1f, "
	        "\"dev_sum_ns\": %.1f, \"cc\": \"%s\", \"mrs\": %u, \"mr_reg_ns\": %.1f, "
	        "\"mr_dereg_ns\": %.1f, \"memory_measured\": %s",
	        SCHEMA, r->secs, r->live, o->max_qp, r->conns, (double)r->conns / r->secs,
	        r->verified, r->qp_bytes, r->slot_bytes, r->sum_ns, o->cc, o->mrs, r->reg_ns,
	        r->dereg_ns, HEAP_MEASURED ? "true" : "false");
	for (int p = 0; p < PH__COUNT; p++)
		fprintf(f, ", \"%s_ns\": %.1f", phase_names[p], (double)r->t[p] / (double)r->conns);
	fprintf(f, "}\n");
	return fclose(f) == 0 ? 0 : -1;
}

static const struct rfw_opt_num num_opts[] = {
    RFW_OPT_DOUBLE("seconds", struct opts, seconds, 0.01, 3600),
    RFW_OPT_U32("live", struct opts, live, 0, 1u << 20),
    RFW_OPT_U32("max-qp", struct opts, max_qp, 0, 1u << 21),
    RFW_OPT_U32("verify-every", struct opts, verify_every, 0, 1u << 30),
    RFW_OPT_U32("mrs", struct opts, mrs, 0, 1u << 22),
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: " PROG " [--seconds S] [--live N] [--max-qp N] [--verify-every K] "
	        "[--mrs N] [--cc P] [--json FILE]\n"
	        "  --seconds S       churn for S seconds, 0.01..3600 (default 2)\n"
	        "  --live N          connected pairs kept beside the churn, 0..2^20 (default 0)\n"
	        "  --max-qp N        QP table of each NIC, 0..2^21 (default: 2 x live + 64)\n"
	        "  --verify-every K  a checked 64-byte WRITE on every K-th connection, 0: none "
	        "(default 1)\n"
	        "  --mrs N           N MRs registered at B (timed), the WRITEs spread over "
	        "them, 0..2^22 (default 0)\n"
	        "  --cc P            each QP's rate machine: a DCQCN profile (unified, paper, "
	        "mlx5-cx5, hpcc-ns3, shared-port) or none (default unified)\n"
	        "  --json FILE       results as JSON (schema " SCHEMA ")\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"seconds", required_argument, NULL, 1},
	                                   {"live", required_argument, NULL, 1},
	                                   {"max-qp", required_argument, NULL, 1},
	                                   {"verify-every", required_argument, NULL, 1},
	                                   {"mrs", required_argument, NULL, 1},
	                                   {"json", required_argument, NULL, 'j'},
	                                   {"cc", required_argument, NULL, 'c'},
	                                   {"help", no_argument, NULL, 'h'},
	                                   {NULL, 0, NULL, 0}};
	int c, idx = 0, rc;

	*o = (struct opts){.seconds = 2, .verify_every = 1, .cc = "unified"};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, &idx)) != -1) {
		rc = c == 1 ? rfw_opt_num_set(PROG, rfw_opt_num_find(num_opts, 5, lo[idx].name),
		                              optarg, o)
		            : 1;
		if (rc < 0)
			exit(2);
		if (c == 'j') {
			o->json = optarg;
		} else if (c == 'c') {
			o->cc = optarg;
		} else if (c == 'h') {
			usage(stdout);
			exit(0);
		} else if (c != 1) {
			fprintf(stderr, PROG ": unknown option or missing value: %s\n",
			        argv[optind - 1]);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument: %s\n", argv[optind]);
		exit(2);
	}
	if (o->max_qp == 0)
		o->max_qp = 2 * o->live + 64;
	if (o->max_qp < o->live + 1) {
		fprintf(stderr, PROG ": --max-qp %u: below --live + 1 (%u)\n", o->max_qp,
		        o->live + 1);
		exit(2);
	}
}

/* --cc: the profile at 100 Gb/s. 0, or 2 with the option named. */
static int cc_setup(struct wire *w, const struct opts *o)
{
	struct dcqcn_params p;
	char msg[128];
	int id;

	if (strcmp(o->cc, "none") == 0)
		return 0;
	id = dcqcn_profile_lookup(o->cc);
	if (id < 0 || dcqcn_params_init(&p, (enum dcqcn_profile)id) != 0) {
		fprintf(stderr, PROG ": bad value for --cc: '%s' (a DCQCN profile or none)\n",
		        o->cc);
		return 2;
	}
	if (dcqcn_prof_config(&w->prof, &p, 100000, msg, sizeof(msg)) != 0) {
		fprintf(stderr, PROG ": --cc %s: %s\n", o->cc, msg);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct result r = {0};
	struct wire w = {0};
	struct rfw_qp **live;
	size_t before;
	int rc;

	parse(argc, argv, &o);
	if (cc_setup(&w, &o) != 0)
		return 2;
	w.q = calloc(QUEUE, sizeof(*w.q));
	if (w.q == NULL)
		die("wire", ENOMEM);
	before = heap_bytes();
	nic_init(&w, 0, &o);
	/* less the data area and the MR table (a pointer and a free-ring entry per MR slot) */
	if (HEAP_MEASURED)
		r.slot_bytes =
		    ((double)heap_bytes() - (double)before - MEM - 12.0 * (o.mrs + 16)) / o.max_qp;
	nic_init(&w, 1, &o);
	live = make_live(&w, o.live, &r);
	make_mrs(&w, o.mrs, &r);
	churn(&w, &o, &r);
	free_mrs(&w, &r);
	print_result(&o, &r);
	rc = r.verified == (o.verify_every ? (r.conns + o.verify_every - 1) / o.verify_every : 0)
	         ? 0
	         : 1;
	if (o.json != NULL && write_json(&o, &r) != 0)
		rc = 1;
	for (uint32_t i = 0; i < o.live; i++)
		pair_down(&w, &live[2 * i]);
	free(live);
	nic_fini(&w.nic[0]);
	nic_fini(&w.nic[1]);
	free(w.q);
	return rc;
}
