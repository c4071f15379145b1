/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-perf --perftest: the bw tests against an unmodified perftest peer (ib_write_bw,
 * ib_read_bw, ib_send_bw, ib_atomic_bw of perftest 4.5, Ethernet mode without rdma_cm), in
 * either role. This side speaks perftest's TCP exchange (docs/interop.md "perftest's
 * exchange"; the keys record is ctrl/perftest_oob.[ch]) and addresses the peer's memory
 * the way perftest does (message k at slot k mod n of a cycle buffer), so perftest needs no
 * change and no option it would not need against another perftest.
 *
 * What can be checked here, beside the transport's own completion statuses:
 *   READ (this side the client): every message compared byte for byte with the first copy
 *     read from the same remote slot (perftest's buffer does not change during the run);
 *   SEND (this side the server): every received message's length, and its bytes compared
 *     with the first message sent from the same source slot of the client;
 *   atomic (this side the server): the values left in memory add up to the atomics executed
 *     (fetch-and-add of 1, perftest's default) or stay zero (compare-and-swap 0 -> 0);
 *   atomic (this side the client): the values fetched from one slot count up by one;
 *   WRITE into this side, and anything this side sends: perftest's data is random and its
 *     side checks nothing, so only the capture can tell (interop/run checks every pcap).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_random.h>

#include "ctrl/rfw_oob.h"
#include "ctrl/perftest_oob.h"
#include "tools/perf/perf.h"
#include "tools/common/rfw_pattern.h"

/*
 * The version this side announces: perftest 4.5-0.17 calls itself 6.06. It decides the peer's
 * framing (sys data from 5.32, a 2-byte MTU from 5.31, 8-byte iterations from 5.33) and
 * perftest refuses peers below 5.70; this side speaks exactly that dialect.
 */
#define PT_VERSION        "6.06"
#define PT_PEER_MIN_MAJOR 5
#define PT_PEER_MIN_MINOR 70
#define PT_CYCLE_BUFFER   4096u /* perftest's default: the page size */
#define PT_CACHE_LINE     64u
#define PT_RX_DEPTH       512u        /* receives posted by a SEND server (perftest's --rx-depth) */
#define PT_AREA_MAX       (16u << 20) /* per QP landing / receive area: depth is cut to fit */
#define PT_STALL_NS       (5ull * NS_PER_S)
#define PT_MIN_RNR_TIMER  12 /* as perftest sets it (MIN_RNR_TIMER) */

struct pt_qp {
	struct rfw_qp *qp;
	struct rfw_pt_dest my, rem;
	uint8_t *src;    /* nslots source slots (WRITE / SEND data), this side's client */
	uint8_t *remote; /* what the peer addresses: my.vaddr (cycle buffer) */
	uint8_t *land;   /* depth (client READ/atomic) or rx slots (server SEND) */
	uint8_t *ref;    /* checker: the first copy of each source slot */
	uint8_t *ref_set;
	uint64_t *fetched; /* client atomics: the last value fetched per slot */
	uint64_t posted, done;
};

/* One --perftest run (perftest_run owns it). */
struct pt {
	struct perf *p;   /* rocefw-perf's run (perf.c), given to perftest_run */
	struct rfw_ep *a; /* its side: this process's NIC */
	int fd;
	bool client;
	enum test_op op;
	bool lat; /* ib_write_lat's ping-pong instead of a bw test */
	char rem_ver[RFW_PT_VERSION_LEN];
	uint32_t cycle_buffer, cache_line, mtu;
	uint32_t size, inc, nslots, depth, rx_slots;
	uint64_t iters;
	uint32_t nq;
	struct pt_qp q[PT_MAX_QPS];
	uint64_t checked_bytes, checked_msgs;
	bool corrupt_one; /* --check-corrupt-one: damage the middle message of QP 0 */
};

static const char *const pt_tool[] = {"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw"};

static const char *pt_name(struct pt *T)
{
	return T->lat ? "ib_write_lat" : pt_tool[T->op];
}

static void pt_die(struct pt *T, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void pt_die(struct pt *T, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rocefw-perf: perftest %s: ", T->client ? "client" : "server");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- perftest's TCP exchange: fixed-size raw records, client writes first ---- */

static void pt_write(struct pt *T, const void *buf, size_t n, const char *what)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t w = send(T->fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			pt_die(T, "sending %s to the perftest peer: %s", what,
			       w < 0 ? strerror(errno) : "connection closed");
		p += w;
		n -= (size_t)w;
	}
}

/* Read exactly @n bytes, polling the NIC meanwhile (the peer's requests keep arriving). */
static void pt_read(struct pt *T, void *buf, size_t n, const char *what, uint64_t timeout_ns)
{
	uint8_t *p = buf;
	size_t got = 0;
	uint64_t t0 = now_ns(T->p);

	while (got < n) {
		ssize_t r = recv(T->fd, p + got, n - got, MSG_DONTWAIT);

		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0)
			pt_die(T,
			       "the perftest peer closed the connection while this side waited for "
			       "%s (%zu of %zu bytes)",
			       what, got, n);
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			pt_die(T, "reading %s from the perftest peer: %s", what, strerror(errno));
		rfw_nic_poll(T->a->nic);
		if (timeout_ns != 0 && now_ns(T->p) - t0 > timeout_ns)
			pt_die(T, "no %s from the perftest peer in %.0f s (%zu of %zu bytes; %s)",
			       what, (double)timeout_ns / 1e9, got, n, port_summary(T->p));
	}
}

/* perftest's ctx_xchg_data: the client writes then reads, the server reads then writes. */
static void pt_xchg(struct pt *T, const void *mine, void *theirs, size_t n, const char *what,
                    uint64_t timeout_ns)
{
	if (T->client) {
		pt_write(T, mine, n, what);
		pt_read(T, theirs, n, what, timeout_ns);
	} else {
		pt_read(T, theirs, n, what, timeout_ns);
		pt_write(T, mine, n, what);
	}
}

/* perftest's ctx_hand_shake for QP @qi: the keys record both ways. The first round carries
 * the peer's QP; later rounds are barriers (the same records again), checked all the same. */
static void pt_hand_shake(struct pt *T, uint32_t qi, const char *what, uint64_t timeout_ns)
{
	uint8_t mine[RFW_PT_KEYS_GID_LEN], theirs[RFW_PT_KEYS_GID_LEN];
	struct rfw_pt_dest d;
	char err[128];

	if (rfw_pt_keys_encode(&T->q[qi].my, mine, sizeof(mine)) != RFW_PT_KEYS_GID_LEN)
		pt_die(T, "encoding this side's keys record failed");
	pt_xchg(T, mine, theirs, sizeof(theirs), what, timeout_ns);
	if (rfw_pt_keys_decode(theirs, sizeof(theirs), &d, err, sizeof(err)) != 0)
		pt_die(T, "bad keys record from the perftest peer (%s): %s", what, err);
	T->q[qi].rem = d;
}

/* The bw report exchange (xchg_bw_reports): size, iterations, peak, average, message rate,
 * each a separate exchange, big-endian; iterations 8 bytes from peer version 5.33, else 4. */
struct pt_report {
	uint64_t size, iters;
	double bw_peak, bw_avg, msg_rate;
};

static uint64_t be_double(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return rte_cpu_to_be_64(u);
}

static double from_be_double(uint64_t be)
{
	uint64_t u = rte_be_to_cpu_64(be);
	double d;

	memcpy(&d, &u, 8);
	return d;
}

static void pt_reports(struct pt *T, const struct pt_report *mine, struct pt_report *theirs,
                       uint64_t tmo)
{
	uint64_t m, t = 0;
	bool iters64 = rfw_pt_version_at_least(T->rem_ver, 5, 33);

	m = rte_cpu_to_be_64(mine->size);
	pt_xchg(T, &m, &t, 8, "the report's size", tmo);
	theirs->size = rte_be_to_cpu_64(t);
	if (iters64) {
		m = rte_cpu_to_be_64(mine->iters);
		pt_xchg(T, &m, &t, 8, "the report's iterations", tmo);
		theirs->iters = rte_be_to_cpu_64(t);
	} else {
		uint32_t m4 = rte_cpu_to_be_32((uint32_t)mine->iters), t4 = 0;

		pt_xchg(T, &m4, &t4, 4, "the report's iterations", tmo);
		theirs->iters = rte_be_to_cpu_32(t4);
	}
	m = be_double(mine->bw_peak);
	pt_xchg(T, &m, &t, 8, "the report's peak bandwidth", tmo);
	theirs->bw_peak = from_be_double(t);
	m = be_double(mine->bw_avg);
	pt_xchg(T, &m, &t, 8, "the report's average bandwidth", tmo);
	theirs->bw_avg = from_be_double(t);
	m = be_double(mine->msg_rate);
	pt_xchg(T, &m, &t, 8, "the report's message rate", tmo);
	theirs->msg_rate = from_be_double(t);
}

/* ---- setup ---- */

static uint32_t round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* Largest path MTU the port carries: IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4 bytes. */
static uint32_t port_path_mtu(struct pt *T)
{
	uint32_t m = 4096;

	while (m > 256 && m + 60u > T->a->port->mtu)
		m /= 2;
	return m;
}

static bool gid_v4mapped(const uint8_t g[16])
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g, pfx, 12) == 0;
}

static void pt_connect_tcp(struct pt *T, const struct opts *o)
{
	if (T->client) {
		T->fd = rfw_oob_connect(o->server, o->tcp_port, o->oob_timeout_s * 1000);
		if (T->fd < 0)
			pt_die(T, "cannot connect to %s port %u: %s", o->server, o->tcp_port,
			       strerror(-T->fd));
		return;
	}
	int lfd = rfw_oob_listen(o->tcp_port);

	if (lfd < 0)
		pt_die(T, "cannot listen on TCP port %u: %s", o->tcp_port, strerror(-lfd));
	printf("rocefw-perf: perftest server waiting for %s on TCP port %u\n", pt_name(T),
	       o->tcp_port);
	fflush(stdout);
	/* No timeout, as perftest's server; the NIC answers ARP meanwhile. */
	while ((T->fd = rfw_oob_accept(lfd)) == -EAGAIN) {
		rfw_nic_poll(T->a->nic);
		usleep(100);
	}
	close(lfd);
	if (T->fd < 0)
		pt_die(T, "accept: %s", strerror(-T->fd));
}

/* Versions, system data (cycle buffer, cache line: both take the larger), path MTU (both
 * take the smaller): exchange_versions, check_sys_data, check_mtu. */
static void pt_negotiate(struct pt *T, const struct opts *o, uint64_t tmo)
{
	char mine[RFW_PT_VERSION_LEN] = PT_VERSION, mtu_s[4] = {0}, rem_mtu_s[5] = {0};
	uint32_t cb = rte_cpu_to_be_32(PT_CYCLE_BUFFER), cl = rte_cpu_to_be_32(PT_CACHE_LINE);
	uint32_t rcb = 0, rcl = 0;
	long rem_mtu;
	size_t mlen;
	int mine_mtu;

	pt_xchg(T, mine, T->rem_ver, sizeof(mine), "the version", tmo);
	T->rem_ver[RFW_PT_VERSION_LEN - 1] = '\0';
	if (!rfw_pt_version_at_least(T->rem_ver, PT_PEER_MIN_MAJOR, PT_PEER_MIN_MINOR))
		pt_die(T,
		       "the peer announces version '%s': this mode speaks the exchange of perftest "
		       ">= %d.%d (perftest 4.5-0.17 announces 6.06)",
		       T->rem_ver, PT_PEER_MIN_MAJOR, PT_PEER_MIN_MINOR);
	pt_xchg(T, &cb, &rcb, 4, "the cycle buffer size", tmo);
	pt_xchg(T, &cl, &rcl, 4, "the cache line size", tmo);
	rcb = rte_be_to_cpu_32(rcb);
	rcl = rte_be_to_cpu_32(rcl);
	if (rcb == 0 || rcb > (64u << 20) || rcl == 0 || rcl > 4096 || (rcl & (rcl - 1)))
		pt_die(T, "the peer's cycle buffer %u / cache line %u bytes are out of range", rcb,
		       rcl);
	T->cycle_buffer = rcb > PT_CYCLE_BUFFER ? rcb : PT_CYCLE_BUFFER;
	T->cache_line = rcl > PT_CACHE_LINE ? rcl : PT_CACHE_LINE;

	T->mtu = o->mtu < port_path_mtu(T) ? o->mtu : port_path_mtu(T);
	mine_mtu = (int)rfw_ep_mtu(T->mtu);
	snprintf(mtu_s, sizeof(mtu_s), "%d", mine_mtu);
	mlen = rfw_pt_mtu_len(T->rem_ver);
	pt_xchg(T, mtu_s, rem_mtu_s, mlen, "the path MTU", tmo);
	rem_mtu = strtol(rem_mtu_s, NULL, 10);
	if (rem_mtu >= RFW_MTU_256 && rem_mtu <= RFW_MTU_4096 && rem_mtu < mine_mtu)
		T->mtu = rfw_mtu_to_bytes((enum rfw_mtu)rem_mtu);
}

/* Bytes of each QP's peer-visible cycle buffer: perftest's BUFF_SIZE, cache-line aligned. */
static uint32_t pt_half(struct pt *T)
{
	return round_up(T->size > T->cycle_buffer ? T->size : T->cycle_buffer, T->cache_line);
}

/* Memory per QP: the cycle buffer the peer addresses, the source slots, the landing or
 * receive area and the checker's reference copies; one MR over all of it. */
static void pt_memory(struct pt *T)
{
	uint32_t half = pt_half(T);
	size_t area, per_qp, off = 0;
	uint32_t qi;

	T->inc = T->size > T->cache_line ? round_up(T->size, T->cache_line) : T->cache_line;
	/* Latency tests do not cycle: one slot, at the start of each buffer. */
	T->nslots = T->size <= T->cycle_buffer / 2 && !T->lat ? T->cycle_buffer / T->inc : 1;
	if ((uint64_t)T->depth * T->size > PT_AREA_MAX)
		T->depth = (PT_AREA_MAX / T->size) ? PT_AREA_MAX / T->size : 1;
	T->rx_slots = PT_RX_DEPTH;
	if ((uint64_t)T->rx_slots * T->size > PT_AREA_MAX)
		T->rx_slots = PT_AREA_MAX / T->size > 2 ? PT_AREA_MAX / T->size : 2;
	area = (size_t)(T->depth > T->rx_slots ? T->depth : T->rx_slots) * T->size;
	per_qp = round_up((uint32_t)(3 * (size_t)half + area + T->nslots), 4096);
	T->a->mem_len = (size_t)T->nq * per_qp;
	T->a->mem = aligned_alloc(4096, T->a->mem_len);
	if (T->a->mem == NULL)
		die("memory", ENOMEM);
	memset(T->a->mem, 0, T->a->mem_len);
	for (qi = 0; qi < T->nq; qi++, off += per_qp) {
		struct pt_qp *q = &T->q[qi];

		q->src = T->a->mem + off;
		q->remote = q->src + half;
		q->ref = q->remote + half;
		q->land = q->ref + half;
		q->ref_set = q->land + area;
		rfw_pattern_fill(q->src, half, rte_rand());
		/* Atomics land on zeroes (the server's sum check), READs read random bytes;
		 * write_lat: both buffers zero but for the last byte (perftest's ping-pong). */
		if (T->lat)
			memset(q->src, 0, half);
		else if (T->op != OP_ATOMIC)
			rfw_pattern_fill(q->remote, half, rte_rand());
		if (T->op == OP_ATOMIC && T->client) {
			q->fetched = calloc(T->nslots, sizeof(uint64_t));
			if (q->fetched == NULL)
				die("memory", ENOMEM);
		}
	}
	T->a->mr = rfw_reg_mr(T->a->pd, T->a->mem, T->a->mem_len,
	                      RFW_ACCESS_LOCAL_WRITE | RFW_ACCESS_REMOTE_WRITE |
	                          RFW_ACCESS_REMOTE_READ | RFW_ACCESS_REMOTE_ATOMIC);
	if (T->a->mr == NULL)
		die("rfw_reg_mr", errno);
}

static void pt_qps(struct pt *T)
{
	uint32_t qi, need = T->depth > T->rx_slots / 2 ? T->depth : T->rx_slots / 2;

	for (qi = 0; qi < T->nq; qi++) {
		struct pt_qp *q = &T->q[qi];
		q->qp = make_qp(T->a, need);
		/* perftest's pingpong_dest: LID 0 on RoCE, random 24-bit PSN, the buffer the
		 * peer addresses, this side's RoCEv2 GID (IPv4-mapped), no SRQ. */
		q->my = (struct rfw_pt_dest){.lid = 0,
		                             .out_reads = RFW_MAX_RD_ATOMIC,
		                             .qpn = rfw_qp_num(q->qp),
		                             .psn = (uint32_t)rte_rand() & 0xffffff,
		                             .rkey = rfw_mr_rkey(T->a->mr),
		                             .vaddr = (uint64_t)(uintptr_t)q->remote,
		                             .has_gid = true,
		                             .srqn = 0};
		memcpy(q->my.gid, rfw_nic_gid(T->a->nic), 16);
	}
}

static void pt_qps_connect(struct pt *T, const struct opts *o)
{
	struct rte_ether_addr mac;
	const uint8_t *g = T->q[0].rem.gid;
	uint32_t qi;
	int rc;

	for (qi = 0; qi < T->nq; qi++)
		if (!gid_v4mapped(T->q[qi].rem.gid) || memcmp(T->q[qi].rem.gid, g, 16) != 0)
			pt_die(
			    T,
			    "the peer's GID of QP %u is not one IPv4-mapped address: this mode is "
			    "RoCEv2 over IPv4 (give perftest the IPv4 GID index with -x)",
			    qi);
	rc = peer_resolve(T->p, g, (uint64_t)o->oob_timeout_s * NS_PER_S, &mac);
	if (rc != 0)
		pt_die(T, "no ARP reply from %u.%u.%u.%u: %s (%s)", g[12], g[13], g[14], g[15],
		       strerror(-rc), port_summary(T->p));
	for (qi = 0; qi < T->nq; qi++) {
		struct pt_qp *q = &T->q[qi];
		struct rfw_ep_path pp = {.mac = mac,
		                         .mtu = rfw_ep_mtu(T->mtu),
		                         .qpn = q->rem.qpn,
		                         .rq_psn = q->rem.psn,
		                         .sq_psn = q->my.psn,
		                         .max_dest_rd_atomic = RFW_MAX_RD_ATOMIC,
		                         .min_rnr_timer = PT_MIN_RNR_TIMER};
		const char *stage;

		/* perftest: max_rd_atomic = the responder's out_reads (IBA 9.5: never more
		 * outstanding READs/atomics than the responder takes). */
		pp.max_rd_atomic =
		    (uint8_t)(q->rem.out_reads == 0                  ? 1
		              : q->rem.out_reads < RFW_MAX_RD_ATOMIC ? q->rem.out_reads
		                                                     : RFW_MAX_RD_ATOMIC);
		memcpy(pp.gid, q->rem.gid, 16);
		rc = qp_to_peer(T->a, q->qp, &pp, o, &stage);
		if (rc != 0)
			pt_die(T, "QP %u: %s: %s", qi, stage, strerror(-rc));
	}
}

/* ---- the run ---- */

static uint64_t slot_off(struct pt *T, uint64_t k)
{
	return (k % T->nslots) * (uint64_t)T->inc;
}

static int pt_post(struct pt *T, struct pt_qp *q, uint64_t k)
{
	struct rfw_sge sge = {0, T->size, rfw_mr_lkey(T->a->mr)};
	struct rfw_send_wr wr = {0}, *bad;
	uint8_t *land = q->land + (k % T->depth) * (uint64_t)T->size;

	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = RFW_SEND_SIGNALED;
	switch (T->op) {
	case OP_WRITE:
		sge.addr = (uint64_t)(uintptr_t)(q->src + slot_off(T, k));
		wr.opcode = RFW_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = q->rem.vaddr + slot_off(T, k);
		wr.wr.rdma.rkey = q->rem.rkey;
		break;
	case OP_READ:
		sge.addr = (uint64_t)(uintptr_t)land;
		wr.opcode = RFW_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = q->rem.vaddr + slot_off(T, k);
		wr.wr.rdma.rkey = q->rem.rkey;
		break;
	case OP_SEND:
		sge.addr = (uint64_t)(uintptr_t)(q->src + slot_off(T, k));
		wr.opcode = RFW_WR_SEND;
		break;
	case OP_ATOMIC:
		sge.addr = (uint64_t)(uintptr_t)(q->land + (k % T->depth) * 8);
		sge.length = 8;
		wr.opcode = RFW_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = q->rem.vaddr + slot_off(T, k);
		wr.wr.atomic.compare_add = 1; /* perftest's ATOMIC_ADD_VALUE */
		wr.wr.atomic.rkey = q->rem.rkey;
		break;
	}
	return rfw_post_send(q->qp, &wr, &bad, now_ns(T->p));
}

/* Compare @got with the first copy of source slot @slot (taking that copy if it is the first). */
static void pt_compare(struct pt *T, struct pt_qp *q, uint64_t slot, const uint8_t *got,
                       uint32_t qi, uint64_t k)
{
	uint8_t *ref = q->ref + slot * T->inc;

	if (T->corrupt_one && qi == 0 && k == T->iters / 2)
		((uint8_t *)(uintptr_t)got)[T->size / 2] ^= 1;
	if (!q->ref_set[slot]) {
		memcpy(ref, got, T->size);
		q->ref_set[slot] = 1;
		return;
	}
	if (memcmp(ref, got, T->size) != 0) {
		check_fail(T->p, "data differs from the first copy of the same source slot", qi, k);
		return;
	}
	T->checked_bytes += T->size;
	T->checked_msgs++;
}

static int qp_index(struct pt *T, uint32_t qpn)
{
	for (uint32_t i = 0; i < T->nq; i++)
		if (rfw_qp_num(T->q[i].qp) == qpn)
			return (int)i;
	return -1;
}

/* The requester's loop: iters messages per QP, depth outstanding, every completion checked. */
static void pt_client_run(struct pt *T, double *secs)
{
	uint64_t total = T->iters * T->nq, done = 0, t0 = now_ns(T->p), last = t0;
	struct rfw_wc wc[32];

	while (done < total) {
		for (uint32_t qi = 0; qi < T->nq; qi++) {
			struct pt_qp *q = &T->q[qi];

			while (q->posted < T->iters && q->posted - q->done < T->depth) {
				int rc = pt_post(T, q, q->posted);

				if (rc == ENOMEM)
					break;
				if (rc != 0)
					pt_die(T, "post_send on QP %u: %s", qi, strerror(rc));
				q->posted++;
			}
		}
		rfw_nic_poll(T->a->nic);
		int n = rfw_poll_cq(T->a->cq, 32, wc);

		for (int i = 0; i < n; i++) {
			int qi = qp_index(T, wc[i].qp_num);
			struct pt_qp *q;
			uint64_t k = wc[i].wr_id;

			if (qi < 0)
				pt_die(T, "a completion for unknown QP 0x%06x", wc[i].qp_num);
			q = &T->q[qi];
			if (wc[i].status != RFW_WC_SUCCESS)
				pt_die(T, "QP %d message %" PRIu64 " completed with %s", qi, k,
				       rfw_wc_status_str(wc[i].status));
			if (k != q->done)
				check_fail(T->p, "completion out of order", (uint32_t)qi, k);
			if (T->op == OP_READ)
				pt_compare(T, q, k % T->nslots,
				           q->land + (k % T->depth) * (uint64_t)T->size,
				           (uint32_t)qi, k);
			else if (T->op == OP_ATOMIC) {
				uint64_t v, s = k % T->nslots;

				memcpy(&v, q->land + (k % T->depth) * 8, 8);
				if (q->ref_set[s] && v != q->fetched[s] + 1)
					check_fail(T->p,
					           "fetch-and-add returned a value that is not the "
					           "previous one plus 1",
					           (uint32_t)qi, k);
				else if (q->ref_set[s]) {
					T->checked_bytes += 8;
					T->checked_msgs++;
				}
				q->ref_set[s] = 1;
				q->fetched[s] = v;
			}
			q->done++;
			done++;
			last = now_ns(T->p);
		}
		if (now_ns(T->p) - last > PT_STALL_NS)
			pt_die(T, "no completion for %.0f s (%" PRIu64 " of %" PRIu64 " done; %s)",
			       (double)PT_STALL_NS / 1e9, done, total, port_summary(T->p));
	}
	*secs = (double)(last - t0) / 1e9;
}

static void pt_post_recv(struct pt *T, struct pt_qp *q, uint32_t qi, uint64_t slot)
{
	struct rfw_sge sge = {(uint64_t)(uintptr_t)(q->land + slot * T->size), T->size,
	                      rfw_mr_lkey(T->a->mr)};
	struct rfw_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;
	int rc = rfw_post_recv(q->qp, &wr, &bad, now_ns(T->p));

	if (rc != 0)
		pt_die(T, "post_recv on QP %u: %s", qi, strerror(rc));
}

/* SEND responder: iters receives per QP, each checked, its WQE posted again. */
static void pt_server_recv(struct pt *T, double *secs)
{
	uint64_t total = T->iters * T->nq, done = 0, t0 = 0, last = now_ns(T->p);
	struct rfw_wc wc[32];

	while (done < total) {
		rfw_nic_poll(T->a->nic);
		int n = rfw_poll_cq(T->a->cq, 32, wc);

		for (int i = 0; i < n; i++) {
			int qi = qp_index(T, wc[i].qp_num);
			struct pt_qp *q;

			if (qi < 0)
				pt_die(T, "a completion for unknown QP 0x%06x", wc[i].qp_num);
			q = &T->q[qi];
			if (wc[i].status != RFW_WC_SUCCESS)
				pt_die(T, "QP %d receive %" PRIu64 " completed with %s", qi,
				       q->done, rfw_wc_status_str(wc[i].status));
			if (wc[i].byte_len != T->size)
				check_fail(T->p, "received length differs from -s", (uint32_t)qi,
				           q->done);
			else
				pt_compare(T, q, q->done % T->nslots,
				           q->land + wc[i].wr_id * T->size, (uint32_t)qi, q->done);
			if (t0 == 0)
				t0 = now_ns(T->p);
			q->done++;
			done++;
			last = now_ns(T->p);
			/* Post again while fewer than iters are posted (none left over). */
			if (q->posted < T->iters) {
				pt_post_recv(T, q, (uint32_t)qi, wc[i].wr_id);
				q->posted++;
			}
		}
		/* The client may take a while to start (its handshake comes first): the stall
		 * clock runs from the first message on. */
		if (t0 != 0 && now_ns(T->p) - last > PT_STALL_NS)
			pt_die(T, "no message for %.0f s (%" PRIu64 " of %" PRIu64 " received; %s)",
			       (double)PT_STALL_NS / 1e9, done, total, port_summary(T->p));
	}
	*secs = t0 ? (double)(last - t0) / 1e9 : 0;
}

/*
 * ib_write_lat's ping-pong (run_iter_lat_write): each side WRITEs size bytes, zero but for
 * the last, which carries the iteration number (mod 256), to the same remote address, and
 * waits until the peer's WRITE has put that number into the last byte of its own buffer
 * (RC places a message's packets in order, so the last byte comes last). The server sends
 * first. Every received message is checked whole: zeros and the number.
 */
static void pt_lat_run(struct pt *T, double *secs, uint64_t *half_rtt_ns)
{
	struct pt_qp *q = &T->q[0];
	const volatile uint8_t *poll = q->remote + T->size - 1;
	uint8_t *post = q->src + T->size - 1;
	uint64_t scnt = 0, ccnt = 0, rcnt = 0, t0 = now_ns(T->p), prev = 0, last;
	struct rfw_wc wc;

	while (scnt < T->iters || ccnt < T->iters || rcnt < T->iters) {
		if (rcnt < T->iters && !(scnt < 1 && !T->client)) {
			rcnt++;
			last = now_ns(T->p);
			while (*poll != (uint8_t)rcnt) {
				rfw_nic_poll(T->a->nic);
				if (now_ns(T->p) - last > PT_STALL_NS)
					pt_die(T,
					       "no WRITE %" PRIu64 " from the peer for %.0f s (%s)",
					       rcnt, (double)PT_STALL_NS / 1e9, port_summary(T->p));
			}
			if (T->corrupt_one && rcnt == T->iters / 2)
				q->remote[0] ^= 1;
			bool zero = true;

			for (uint32_t i = 0; i + 1 < T->size; i++)
				zero &= q->remote[i] == 0;
			if (!zero)
				check_fail(T->p,
				           "a write_lat message is not zero but for its last byte",
				           0, rcnt);
			else {
				T->checked_bytes += T->size;
				T->checked_msgs++;
			}
			if (T->corrupt_one && rcnt == T->iters / 2)
				q->remote[0] ^= 1;
		}
		if (scnt < T->iters) {
			uint64_t t = now_ns(T->p);

			if (scnt > 0)
				half_rtt_ns[scnt - 1] = (t - prev) / 2;
			prev = t;
			*post = (uint8_t)++scnt;
			int rc = pt_post(T, q, scnt);

			if (rc != 0)
				pt_die(T, "post_send: %s", strerror(rc));
		}
		if (ccnt < T->iters) {
			int n;

			last = now_ns(T->p);
			while ((n = rfw_poll_cq(T->a->cq, 1, &wc)) == 0) {
				rfw_nic_poll(T->a->nic);
				if (now_ns(T->p) - last > PT_STALL_NS)
					pt_die(T,
					       "no completion for WRITE %" PRIu64 " in %.0f s (%s)",
					       scnt, (double)PT_STALL_NS / 1e9, port_summary(T->p));
			}
			if (n < 0 || wc.status != RFW_WC_SUCCESS)
				pt_die(T, "WRITE %" PRIu64 " completed with %s", ccnt + 1,
				       n < 0 ? "a CQ error" : rfw_wc_status_str(wc.status));
			ccnt++;
		}
	}
	*secs = (double)(now_ns(T->p) - t0) / 1e9;
}

/* Server of atomics: every executed fetch-and-add of 1 is in the sum of the slots. */
static void pt_server_atomic_check(struct pt *T)
{
	uint64_t sum = 0, executed = 0, c[RFW_CNT__COUNT];

	for (uint32_t qi = 0; qi < T->nq; qi++) {
		for (uint32_t s = 0; s < T->nslots; s++) {
			uint64_t v;

			memcpy(&v, T->q[qi].remote + (uint64_t)s * T->inc, 8);
			sum += v;
		}
		rfw_qp_counters(T->q[qi].qp, c);
		executed += c[RFW_CNT_rx_atomic_requests];
	}
	if (sum == executed && executed > 0) {
		T->checked_bytes = executed * 8;
		T->checked_msgs = executed;
	} else if (sum != 0) {
		char m[160];

		snprintf(m, sizeof(m),
		         "the slots add up to %" PRIu64 " after %" PRIu64 " atomics executed", sum,
		         executed);
		check_fail(T->p, m, 0, executed);
	}
}

/* ---- the whole test ---- */

static const char *pt_check_what(struct pt *T)
{
	if (T->lat)
		return "every message received whole: zero but for its last byte, the iteration "
		       "number";
	if (T->op == OP_READ && T->client)
		return "every READ compared with the first read of its remote slot";
	if (T->op == OP_SEND && !T->client)
		return "every SEND's length, and its bytes compared with the first message from "
		       "its source slot";
	if (T->op == OP_ATOMIC && T->client)
		return "the values fetched from each slot count up by one";
	if (T->op == OP_ATOMIC)
		return "the slots add up to the atomics executed";
	return "nothing checkable here (perftest's data is random and perftest checks "
	       "nothing): the capture is the check";
}

static bool pt_checkable(struct pt *T)
{
	return T->lat || (T->op == OP_READ && T->client) || (T->op == OP_SEND && !T->client) ||
	       T->op == OP_ATOMIC;
}

/* --perftest-dump: each QP's peer-visible cycle buffer, in QP order (pt_json lists them). */
static int pt_dump(struct pt *T, const char *path)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (f == NULL)
		return -errno;
	for (uint32_t qi = 0; qi < T->nq; qi++)
		if (fwrite(T->q[qi].remote, 1, pt_half(T), f) != pt_half(T))
			rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

static void pt_json(struct pt *T, const struct opts *o, double secs, const struct pt_report *peer,
                    bool verified, double lat_typ, double lat_avg)
{
	FILE *f = fopen(o->json, "w");

	if (f == NULL) {
		fprintf(stderr, "rocefw-perf: cannot write %s: %s\n", o->json, strerror(errno));
		return;
	}
	fprintf(f,
	        "{\"schema\": \"rocefw-perf-perftest/1\", \"role\": \"%s\", \"test\": \"%s\", "
	        "\"peer_version\": \"%s\", \"size\": %u, \"iters\": %" PRIu64 ", \"qps\": %u, "
	        "\"mtu\": %u, \"cycle_buffer\": %u, \"cache_line\": %u, \"seconds\": %.6f, "
	        "\"bw_avg_MBps\": %.3f, \"msg_rate_Mpps\": %.6f, \"check\": \"%s\", "
	        "\"checkable\": %s, \"checked_messages\": %" PRIu64 ", \"checked_bytes\": %" PRIu64
	        ", \"verified\": %s, \"error\": \"%s\", \"peer_report\": {\"size\": %" PRIu64
	        ", \"iters\": %" PRIu64 ", \"bw_avg_MBps\": %.3f, \"msg_rate_Mpps\": %.6f}",
	        T->client ? "client" : "server", pt_name(T), T->rem_ver, T->size, T->iters, T->nq,
	        T->mtu, T->cycle_buffer, T->cache_line, secs,
	        secs > 0 ? (double)T->size * T->iters * T->nq / secs / 1048576.0 : 0.0,
	        secs > 0 ? (double)T->iters * T->nq / secs / 1e6 : 0.0, pt_check_what(T),
	        pt_checkable(T) ? "true" : "false", T->checked_msgs, T->checked_bytes,
	        verified ? "true" : "false", perf_first_err(T->p), peer->size, peer->iters,
	        peer->bw_avg, peer->msg_rate);
	fprintf(f, ", \"regions\": [");
	for (uint32_t qi = 0; qi < T->nq; qi++)
		fprintf(f,
		        "%s{\"qpn\": %u, \"peer_qpn\": %u, \"vaddr\": %" PRIu64 ", \"bytes\": %u}",
		        qi ? ", " : "", T->q[qi].my.qpn, T->q[qi].rem.qpn, T->q[qi].my.vaddr,
		        pt_half(T));
	fprintf(f, "], \"t_typical_us\": %.3f, \"t_avg_us\": %.3f, \"dump\": ", lat_typ, lat_avg);
	if (o->dump != NULL)
		fprintf(f, "\"%s\"}\n", o->dump);
	else
		fprintf(f, "null}\n");
	fclose(f);
}

/* The rounds before the run, in the order of perftest's main() of each test (write_bw.c,
 * read_bw.c, atomic_bw.c, send_bw.c, write_lat.c): Ethernet exchange, RC, one-sided run (not
 * --bidirectional). write_lat starts with one more round. */
static void pt_rounds_before(struct pt *T, const struct opts *o, uint64_t tmo)
{
	uint32_t qi;

	if (T->lat)
		pt_hand_shake(T, 0, "the first hand-shake", tmo);
	for (qi = 0; qi < T->nq; qi++)
		pt_hand_shake(T, qi, "the keys record", tmo);
	pt_qps_connect(T, o);
	if (T->op == OP_SEND)
		pt_hand_shake(T, 0, "the hand-shake after connecting", tmo);
	for (qi = 0; qi < T->nq; qi++)
		pt_hand_shake(T, qi, "the keys record (second round)", tmo);
	if (T->op == OP_SEND && !T->client)
		for (qi = 0; qi < T->nq; qi++)
			for (uint64_t s = 0; s < T->rx_slots && s < T->iters; s++) {
				pt_post_recv(T, &T->q[qi], qi, s);
				T->q[qi].posted++;
			}
	pt_hand_shake(T, 0, "the hand-shake before the run", tmo);
}

static void pt_print_header(struct pt *T)
{
	printf("---------------------------------------------------------------------------------"
	       "-------\n"
	       "                    %s (rocefw-perf --perftest, %s of perftest %s)\n"
	       " Number of qps   : %u\t\tTransport type : IB (RoCEv2, rocefw)\n"
	       " Mtu             : %u[B]\t\tTX depth       : %u\n"
	       " Cycle buffer    : %u\t\tCache line     : %u\n"
	       " Check           : %s\n"
	       " local  QPN 0x%06x PSN 0x%06x RKey 0x%08x VAddr 0x%016" PRIx64 "\n"
	       " remote QPN 0x%06x PSN 0x%06x RKey 0x%08x VAddr 0x%016" PRIx64 "\n"
	       "---------------------------------------------------------------------------------"
	       "-------\n",
	       pt_name(T), T->client ? "client" : "server", T->rem_ver, T->nq, T->mtu, T->depth,
	       T->cycle_buffer, T->cache_line, pt_check_what(T), T->q[0].my.qpn, T->q[0].my.psn,
	       T->q[0].my.rkey, T->q[0].my.vaddr, T->q[0].rem.qpn, T->q[0].rem.psn,
	       T->q[0].rem.rkey, T->q[0].rem.vaddr);
	fflush(stdout);
}

/* The measured part: latency samples into @lat, or the bandwidth run; its length in *@secs. */
static void pt_measure(struct pt *T, double *secs, struct result *lat)
{
	if (T->lat) {
		uint64_t *half_rtt = calloc(T->iters, sizeof(uint64_t));

		if (half_rtt == NULL)
			die("memory", ENOMEM);
		pt_lat_run(T, secs, half_rtt);
		/* perftest's samples: half the time between two consecutive posts */
		if (T->iters > 1)
			lat_stats(half_rtt, T->iters - 1, lat);
		free(half_rtt);
	} else if (T->client) {
		pt_client_run(T, secs);
	} else if (T->op == OP_SEND) {
		pt_server_recv(T, secs);
	}
}

/* The rounds after the run: reports (bandwidth tests but SEND), the closing hand-shake and
 * "done" (write_lat ends without them: perftest just exits). */
static void pt_rounds_after(struct pt *T, struct pt_report *mine, struct pt_report *peer,
                            double secs, uint64_t tmo)
{
	if (T->client) {
		mine->size = T->size;
		mine->iters = T->iters;
		mine->bw_avg = secs > 0 ? (double)T->size * T->iters * T->nq / secs / 1048576.0 : 0;
		mine->bw_peak = mine->bw_avg;
		mine->msg_rate = secs > 0 ? (double)T->iters * T->nq / secs / 1e6 : 0;
	}
	if (T->op != OP_SEND && !T->lat) {
		/* The server waits here while the client runs: no timeout, as perftest's. */
		pt_hand_shake(T, 0, "the hand-shake after the run", T->client ? tmo : 0);
		pt_reports(T, mine, peer, tmo);
	}
	if (!T->lat) {
		pt_hand_shake(T, 0, "the closing hand-shake",
		              T->client || T->op == OP_SEND ? tmo : 0);
		pt_write(T, "done", RFW_PT_DONE_LEN, "the closing \"done\"");
	}
}

/*
 * The peer's "done" too, so that closing does not reset a connection it still writes to. The
 * client then also waits for the server's close: the server closes its port before its socket
 * (pt_close), so the client never closes its port while the server's is going down
 * (net_memif, DPDK 22.11, crashed so; perftest closes at once anyway).
 */
static void pt_hangup(struct pt *T)
{
	size_t got = 0;
	uint64_t t0 = now_ns(T->p);
	char done_s[RFW_PT_DONE_LEN], more[64];

	while (!T->lat && got < sizeof(done_s) && now_ns(T->p) - t0 < 2 * NS_PER_S) {
		ssize_t r = recv(T->fd, done_s + got, sizeof(done_s) - got, MSG_DONTWAIT);

		if (r > 0)
			got += (size_t)r;
		else if (r == 0)
			break;
		else
			rfw_nic_poll(T->a->nic);
	}
	if (!T->client)
		return;
	/* until EOF (or a reset): anything else the server sends is not read */
	t0 = now_ns(T->p);
	while (now_ns(T->p) - t0 < 5ull * NS_PER_S) {
		ssize_t r = recv(T->fd, more, sizeof(more), MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			break;
		usleep(1000);
	}
	if (rfw_port_peer_gone_wait(T->a->port, 2000) != 0)
		fprintf(stderr, "rocefw-perf: perftest client: the port did not see the "
		                "server go within 2 s; closing anyway\n");
}

static const char *pt_verdict(struct pt *T, bool verified)
{
	return !pt_checkable(T) ? "n/a" : verified ? "yes" : "NO";
}

/* The result lines, in perftest's columns plus what rocefw checked. */
static void pt_print_result(struct pt *T, double secs, const struct result *lat,
                            const struct pt_report *mine, const struct pt_report *peer,
                            bool verified)
{
	bool send = T->op == OP_SEND;

	if (T->lat) {
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		       "t_avg[usec]   checked messages   verified\n"
		       " %-6u %-14" PRIu64 " %-14.2f %-12.2f %-18.2f %-13.2f %-18" PRIu64 " %s\n",
		       T->size, T->iters, lat->t_min, lat->t_max, lat->t_typ, lat->t_avg,
		       T->checked_msgs, verified ? "yes" : "NO");
		return;
	}
	printf(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]   checked "
	       "messages   verified\n");
	if (T->client)
		printf(" %-10u %-14" PRIu64 " %-20.2f %-15.6f %-18" PRIu64 " %s\n", T->size,
		       T->iters, mine->bw_avg, mine->msg_rate, T->checked_msgs,
		       pt_verdict(T, verified));
	else
		printf(
		    " %-10u %-14" PRIu64 " %-20.2f %-15.6f %-18" PRIu64 " %s   (figures: the "
		    "perftest client's%s)\n",
		    T->size, send ? T->iters : peer->iters,
		    send ? (secs > 0 ? (double)T->size * T->iters * T->nq / secs / 1048576.0 : 0)
		         : peer->bw_avg,
		    send ? (secs > 0 ? (double)T->iters * T->nq / secs / 1e6 : 0) : peer->msg_rate,
		    T->checked_msgs, pt_verdict(T, verified), send ? "; measured here" : " report");
}

/* QPs, memory, NIC, port; the socket after the port (see pt_hangup); EAL. */
static void pt_close(struct pt *T)
{
	for (uint32_t qi = 0; qi < T->nq; qi++) {
		rfw_nic_qp_detach(T->a->nic, T->q[qi].qp);
		rfw_destroy_qp(T->q[qi].qp);
		free(T->q[qi].fetched);
	}
	rfw_dereg_mr(T->a->mr);
	rfw_destroy_cq(T->a->cq);
	rfw_dealloc_pd(T->a->pd);
	rfw_nic_destroy(T->a->nic);
	rfw_port_close(T->a->port);
	close(T->fd);
	free(T->a->mem);
	rfw_eal_cleanup();
}

int perftest_run(struct perf *P, const struct opts *o, uint32_t size)
{
	static struct pt run = {.fd = -1};
	struct pt *T = &run;
	uint64_t tmo = (uint64_t)o->oob_timeout_s * NS_PER_S;
	struct pt_report mine = {0}, peer = {0};
	double secs = 0;
	struct result lat = {0};
	bool verified;

	T->p = P;
	T->a = perf_side_a(P);
	T->client = o->server != NULL;
	T->op = o->op;
	T->lat = o->lat;
	T->size = o->op == OP_ATOMIC ? 8 : size;
	/* perftest's DEF_ITERS_WB / DEF_ITERS, DEF_TX_BW / DEF_TX_LAT */
	T->iters = o->iters ? o->iters : T->lat ? 1000 : 5000;
	T->depth = T->lat ? 1 : o->depth ? o->depth : 128;
	T->nq = o->qps;
	T->corrupt_one = o->corrupt_one;
	open_port(T->p, o);
	pt_connect_tcp(T, o);
	pt_negotiate(T, o, tmo);
	pt_memory(T);
	pt_qps(T);
	pt_rounds_before(T, o, tmo);
	pt_print_header(T);
	pt_measure(T, &secs, &lat);
	pt_rounds_after(T, &mine, &peer, secs, tmo);
	pt_hangup(T);
	if (T->op == OP_ATOMIC && !T->client)
		pt_server_atomic_check(T);
	if (pt_checkable(T) && T->checked_msgs == 0 && !perf_failed(T->p))
		check_fail(T->p,
		           "nothing was compared (too few messages for a second copy of a slot)", 0,
		           0);
	verified = !perf_failed(T->p);
	pt_print_result(T, secs, &lat, &mine, &peer, verified);
	if (perf_failed(T->p))
		fprintf(stderr, "rocefw-perf: perftest %s: check failed: %s\n",
		        T->client ? "client" : "server", perf_first_err(T->p));
	if (o->dump != NULL && pt_dump(T, o->dump) != 0) {
		fprintf(stderr, "rocefw-perf: --perftest-dump %s: cannot write it\n", o->dump);
		verified = false;
	}
	if (o->json != NULL)
		pt_json(T, o, secs, &peer, verified, lat.t_typ, lat.t_avg);
	pt_close(T);
	return verified ? 0 : 1;
}
