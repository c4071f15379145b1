/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-stat: reads the counters, congestion-control state and Estats latency quantiles of
 * running rocefw processes over DPDK telemetry (the /rocefw/ commands, docs/dataplane.md,
 * docs/nic.md, docs/pfc.md, docs/rdma-cm.md): ports and, on ports of several queues, each
 * queue; NICs and their QPs; the rdma_cm. It prints them as a table, one JSON object (schema
 * rocefw-stat/2) or CSV; --watch prints rates per second, like `watch ethtool -S`. See
 * docs/stat.md.
 *
 * The telemetry socket (DPDK lib/telemetry): /var/run/dpdk/PREFIX/dpdk_telemetry.v2 for root,
 * $XDG_RUNTIME_DIR/dpdk/PREFIX (or /tmp/dpdk/PREFIX) otherwise, as EAL picks its runtime
 * directory. SOCK_SEQPACKET: on connect the server sends one JSON object (version, pid,
 * max_output_len); each command written gets one JSON reply {"CMD": value}.
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "tools/common/rfw_opt.h"
#include "tools/common/rfw_clock.h"

#define PROG "rocefw-stat"

/* /2: ports[].rx_queues, tx_queues, queues[]; processes[].cm (docs/stat.md) */
#define STAT_SCHEMA       "rocefw-stat/2"
#define STAT_RATES_SCHEMA "rocefw-stat.rates/1"
#define MAX_PROCS         64

struct proc {
	char prefix[256];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
	long pid;
	size_t max_len;
	char *buf;
	json_t *cmds; /* reply to "/": the registered commands */
	bool sampled; /* read once already: cmds is re-read (a command may come later) */
	bool gone;
};

/* One flattened value: key ("nic0.qp17.tx_pkts"), value, and whether a rate means anything. */
struct flat {
	char **key;
	double *val;
	bool *counter;
	size_t n, cap;
};

enum fmt { FMT_TABLE, FMT_JSON, FMT_CSV };

/* The command line. */
struct stat_opts {
	enum fmt fmt;
	bool all;
	double watch_s;
	long count;
	int timeout_ms;
	const char *runtime_dir;
	/* which processes */
	const char *prefixes[MAX_PROCS];
	unsigned nprefixes;
	bool all_procs;
	/* the directory the sockets are under: --runtime-dir, or DPDK's default */
	char base[4096];
};

/* DPDK's runtime directory for this user, unless --runtime-dir said. */
static void runtime_base(struct stat_opts *opt)
{
	const char *x = getenv("XDG_RUNTIME_DIR");

	if (opt->runtime_dir != NULL)
		snprintf(opt->base, sizeof(opt->base), "%s", opt->runtime_dir);
	else if (geteuid() == 0)
		snprintf(opt->base, sizeof(opt->base), "/var/run/dpdk");
	else
		snprintf(opt->base, sizeof(opt->base), "%s/dpdk", x != NULL ? x : "/tmp");
}

static void proc_close(struct proc *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->buf);
	p->buf = NULL;
	json_decref(p->cmds);
	p->cmds = NULL;
}

/* The reply to CMD (a new reference; JSON null when the command gave nothing), NULL on error. */
static json_t *query(struct proc *p, const char *cmd)
{
	char name[256];
	json_error_t err;
	json_t *r, *v;
	ssize_t n;
	size_t k = strcspn(cmd, ",");

	if (p->fd < 0 || k >= sizeof(name))
		return NULL;
	memcpy(name, cmd, k);
	name[k] = '\0';
	if (send(p->fd, cmd, strlen(cmd), 0) < 0) {
		fprintf(stderr, "rocefw-stat: %s: send %s: %s\n", p->prefix, cmd, strerror(errno));
		return NULL;
	}
	n = recv(p->fd, p->buf, p->max_len, 0);
	if (n <= 0) {
		fprintf(stderr, "rocefw-stat: %s: no reply to %s: %s\n", p->prefix, cmd,
		        n == 0 ? "connection closed" : strerror(errno));
		return NULL;
	}
	r = json_loadb(p->buf, (size_t)n, 0, &err);
	if (r == NULL || (v = json_object_get(r, name)) == NULL) {
		fprintf(stderr, "rocefw-stat: %s: bad reply to %s: %s\n", p->prefix, cmd,
		        r == NULL ? err.text : "command missing");
		json_decref(r);
		return NULL;
	}
	json_incref(v);
	json_decref(r);
	return v;
}

static int proc_open(struct proc *p, bool quiet, int timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	char greet[4096];
	json_error_t err;
	json_t *g;
	ssize_t n;

	p->fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (p->fd < 0) {
		perror("rocefw-stat: socket");
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->path);
	setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (!quiet)
			fprintf(stderr, "rocefw-stat: --file-prefix %s: cannot connect to %s: %s\n",
			        p->prefix, p->path, strerror(errno));
		goto fail;
	}
	n = recv(p->fd, greet, sizeof(greet) - 1, 0);
	g = n > 0 ? json_loadb(greet, (size_t)n, 0, &err) : NULL;
	if (g == NULL) {
		fprintf(stderr, "rocefw-stat: %s: no telemetry greeting on %s\n", p->prefix,
		        p->path);
		goto fail;
	}
	p->pid = (long)json_integer_value(json_object_get(g, "pid"));
	p->max_len = (size_t)json_integer_value(json_object_get(g, "max_output_len"));
	json_decref(g);
	if (p->max_len < 1024)
		p->max_len = 16384;
	p->buf = malloc(p->max_len + 1);
	if (p->buf == NULL)
		goto fail;
	p->cmds = query(p, "/");
	if (p->cmds == NULL)
		goto fail;
	return 0;
fail:
	proc_close(p);
	return -1;
}

static bool has_cmd(const struct proc *p, const char *cmd)
{
	size_t i;
	json_t *v;

	json_array_foreach(p->cmds, i, v) if (json_is_string(v) &&
	                                      strcmp(json_string_value(v), cmd) == 0) return true;
	return false;
}

/* A copy of OBJ without the keys in SKIP (NULL-terminated): the counters of a reply. */
static json_t *counters_of(json_t *obj, const char *const *skip)
{
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach(obj, k, v)
	{
		bool drop = !json_is_integer(v);

		for (unsigned i = 0; skip != NULL && skip[i] != NULL && !drop; i++)
			drop = strcmp(k, skip[i]) == 0;
		if (!drop)
			json_object_set(out, k, v);
	}
	return out;
}

static json_t *obj_or_empty(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_object(v) ? json_incref(v) : json_object();
}

static bool truthy(json_t *v)
{
	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

static json_t *estats_row(json_t *row)
{
	static const char *const q[][2] = {
	    {"p50_ns", "p50"}, {"p99_ns", "p99"}, {"p999_ns", "p999"}, {"max_ns", "max"}};
	static const char *const keep[] = {"qpn", "op", "status", "stage", "count"};
	json_t *r = json_object();

	for (unsigned k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
		if (json_object_get(row, keep[k]) != NULL)
			json_object_set(r, keep[k], json_object_get(row, keep[k]));
	for (unsigned k = 0; k < 4; k++)
		if (json_object_get(row, q[k][0]) != NULL)
			json_object_set(r, q[k][1], json_object_get(row, q[k][0]));
	return r;
}

/*
 * Estats quantiles of a NIC (/rocefw/estats, schema rocefw.estats/1), the quantiles renamed
 * p50 .. max. DPDK 22.11 telemetry has no booleans and no dicts inside arrays: "enabled" may be
 * 0/1 and "rows" a dict keyed "QPN/op/status/stage"; both shapes are read.
 */
static json_t *collect_estats(struct proc *p, long nic, int *err)
{
	static const char *const copy[] = {"interval_ns", "threshold_ns", "window", "at_ns",
	                                   "error"};
	json_t *e, *out = json_object(), *rows, *in, *row;
	const char *key;
	char cmd[64];
	size_t i;

	if (!has_cmd(p, "/rocefw/estats")) {
		json_object_set_new(out, "available", json_false());
		json_object_set_new(out, "enabled", json_false());
		return out;
	}
	snprintf(cmd, sizeof(cmd), "/rocefw/estats,%ld", nic);
	e = query(p, cmd);
	if (e == NULL) {
		*err = 1;
		return out;
	}
	json_object_set_new(out, "available", json_true());
	json_object_set_new(out, "enabled", json_boolean(truthy(json_object_get(e, "enabled"))));
	if (json_object_get(e, "schema") != NULL)
		json_object_set(out, "source_schema", json_object_get(e, "schema"));
	for (unsigned k = 0; k < sizeof(copy) / sizeof(copy[0]); k++)
		if (json_object_get(e, copy[k]) != NULL)
			json_object_set(out, copy[k], json_object_get(e, copy[k]));
	if (json_object_get(e, "truncated") != NULL)
		json_object_set_new(out, "truncated",
		                    json_boolean(truthy(json_object_get(e, "truncated"))));
	rows = json_array();
	in = json_object_get(e, "rows");
	if (json_is_array(in)) {
		json_array_foreach(in, i, row) json_array_append_new(rows, estats_row(row));
	} else if (json_is_object(in)) {
		json_object_foreach(in, key, row) json_array_append_new(rows, estats_row(row));
	}
	json_object_set_new(out, "rows", rows);
	json_decref(e);
	return out;
}

static json_t *collect_qp(struct proc *p, long nic, long qpn, int *err)
{
	static const char *const cc_keys[] = {"cc",        "rp_state",    "paced",
	                                      "rate_kbps", "target_kbps", "alpha"};
	static const char *const info_keys[] = {"state",    "transport_mode", "path_mtu",
	                                        "dest_qpn", "sq_psn",         "rq_psn",
	                                        "l2",       "paced_rate_kbps"};
	json_t *qp = json_object(), *qi, *cs, *cc;
	char cmd[64];

	json_object_set_new(qp, "qpn", json_integer(qpn));
	snprintf(cmd, sizeof(cmd), "/rocefw/qp/info,%ld,%ld", nic, qpn);
	qi = query(p, cmd);
	if (qi == NULL) {
		*err = 1;
		return qp;
	}
	/* A QP destroyed between the list and the read answers null: keep it out. */
	if (json_is_null(qi)) {
		json_decref(qi);
		json_decref(qp);
		return NULL;
	}
	for (unsigned k = 0; k < sizeof(info_keys) / sizeof(info_keys[0]); k++)
		if (json_object_get(qi, info_keys[k]) != NULL)
			json_object_set(qp, info_keys[k], json_object_get(qi, info_keys[k]));
	json_object_set_new(qp, "nic_counters", obj_or_empty(qi, "nic_counters"));
	json_object_set_new(qp, "counters", obj_or_empty(qi, "counters"));
	json_decref(qi);
	snprintf(cmd, sizeof(cmd), "/rocefw/cc/state,%ld,%ld", nic, qpn);
	cs = query(p, cmd);
	if (cs == NULL) {
		*err = 1;
		return qp;
	}
	cc = json_object();
	for (unsigned k = 0; k < sizeof(cc_keys) / sizeof(cc_keys[0]); k++)
		if (json_object_get(cs, cc_keys[k]) != NULL)
			json_object_set(cc, cc_keys[k], json_object_get(cs, cc_keys[k]));
	json_object_set_new(qp, "cc", cc);
	json_object_set_new(qp, "rp_counters", obj_or_empty(cs, "rp_counters"));
	json_object_set_new(qp, "np_counters", obj_or_empty(cs, "np_counters"));
	json_decref(cs);
	return qp;
}

static json_t *collect_nic(struct proc *p, long id, int *err)
{
	static const char *const cfg_keys[] = {"port",
	                                       "queue",
	                                       "qpn_base",
	                                       "max_qp",
	                                       "qps_attached",
	                                       "dscp",
	                                       "pcp",
	                                       "vlan_id",
	                                       "cc",
	                                       "quantum",
	                                       "pacer_burst_ns",
	                                       "snapshot_us",
	                                       "snapshot_max_per_s",
	                                       "tx_stall_ms",
	                                       "tx_down"};
	json_t *nic = json_object(), *r, *cfg, *list, *qps, *v;
	char cmd[64];
	size_t i;

	json_object_set_new(nic, "nic", json_integer(id));
	snprintf(cmd, sizeof(cmd), "/rocefw/nic,%ld", id);
	r = query(p, cmd);
	if (r == NULL) {
		*err = 1;
		return nic;
	}
	cfg = json_object();
	for (unsigned k = 0; k < sizeof(cfg_keys) / sizeof(cfg_keys[0]); k++)
		if (json_object_get(r, cfg_keys[k]) != NULL)
			json_object_set(cfg, cfg_keys[k], json_object_get(r, cfg_keys[k]));
	json_object_set_new(nic, "config", cfg);
	json_object_set_new(nic, "counters", obj_or_empty(r, "counters"));
	json_object_set_new(nic, "dev_counters", obj_or_empty(r, "dev_counters"));
	json_decref(r);
	snprintf(cmd, sizeof(cmd), "/rocefw/qp/list,%ld", id);
	list = query(p, cmd);
	if (list == NULL) {
		*err = 1;
		return nic;
	}
	qps = json_array();
	json_array_foreach(list, i, v)
	{
		json_t *qp = collect_qp(p, id, (long)json_integer_value(v), err);

		if (qp != NULL)
			json_array_append_new(qps, qp);
	}
	json_decref(list);
	json_object_set_new(nic, "qps", qps);
	json_object_set_new(nic, "estats", collect_estats(p, id, err));
	return nic;
}

/* PFC state of port @id into @port, when the process has /rocefw/port/pfc. */
static void collect_port_pfc(struct proc *p, long id, json_t *port, int *err)
{
	static const char *const pfc_skip[] = {"port", "link_mbps", "paused_mask", "storm_mask",
	                                       NULL};
	json_t *r;
	char cmd[64];

	if (!has_cmd(p, "/rocefw/port/pfc"))
		return;
	snprintf(cmd, sizeof(cmd), "/rocefw/port/pfc,%ld", id);
	r = query(p, cmd);
	if (r == NULL) {
		*err = 1;
		return;
	}
	if (json_is_object(r)) {
		json_object_set_new(port, "pfc", counters_of(r, pfc_skip));
		json_object_set(port, "pfc_paused_mask", json_object_get(r, "paused_mask"));
		json_object_set(port, "pfc_storm_mask", json_object_get(r, "storm_mask"));
	}
	json_decref(r);
}

/* One queue (/rocefw/port/queue,P,Q, schema rocefw.port.queue/1): its counters and the QPN
 * range its NIC owns; NULL when the queue does not exist (the command answers null). */
static json_t *collect_queue(struct proc *p, long id, long qid, int *err)
{
	static const char *const skip[] = {"port", "queue", "qpn_lo", "qpn_count", NULL};
	json_t *q, *r;
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "/rocefw/port/queue,%ld,%ld", id, qid);
	r = query(p, cmd);
	if (r == NULL) {
		*err = 1;
		return NULL;
	}
	if (!json_is_object(r)) {
		json_decref(r);
		return NULL;
	}
	q = json_object();
	json_object_set_new(q, "queue", json_integer(qid));
	/* only a port of several queues has a dispatcher, hence owners */
	if (json_object_get(r, "qpn_count") != NULL) {
		json_object_set(q, "qpn_lo", json_object_get(r, "qpn_lo"));
		json_object_set(q, "qpn_count", json_object_get(r, "qpn_count"));
	}
	json_object_set_new(q, "counters", counters_of(r, skip));
	json_decref(r);
	return q;
}

/*
 * The queue counts (/rocefw/port/info) and, for a port of several RX queues, every queue's
 * counters: the port's are their sums, and which queue drops or hands frames on is what an
 * operator of such a port asks. One queue: nothing more (its counters are the port's).
 */
static void collect_port_queues(struct proc *p, long id, json_t *port, int *err)
{
	json_t *r, *arr;
	long rxq, txq;
	char cmd[64];

	if (!has_cmd(p, "/rocefw/port/info"))
		return;
	snprintf(cmd, sizeof(cmd), "/rocefw/port/info,%ld", id);
	r = query(p, cmd);
	if (r == NULL) {
		*err = 1;
		return;
	}
	rxq = (long)json_integer_value(json_object_get(r, "rx_queues"));
	txq = (long)json_integer_value(json_object_get(r, "tx_queues"));
	json_decref(r);
	json_object_set_new(port, "rx_queues", json_integer(rxq));
	json_object_set_new(port, "tx_queues", json_integer(txq));
	if (rxq <= 1 || !has_cmd(p, "/rocefw/port/queue"))
		return;
	arr = json_array();
	/* queues exist up to the larger count (rfw_port.c): a TX-only one has TX counters */
	for (long q = 0; q < (rxq > txq ? rxq : txq) && !*err; q++) {
		json_t *o = collect_queue(p, id, q, err);

		if (o != NULL)
			json_array_append_new(arr, o);
	}
	json_object_set_new(port, "queues", arr);
}

static json_t *collect_port(struct proc *p, long id, int *err)
{
	static const char *const skip[] = {"port", NULL};
	json_t *port = json_object(), *r;
	char cmd[64];

	json_object_set_new(port, "port", json_integer(id));
	snprintf(cmd, sizeof(cmd), "/rocefw/port/stats,%ld", id);
	r = query(p, cmd);
	if (r == NULL) {
		*err = 1;
		return port;
	}
	json_object_set_new(port, "counters", counters_of(r, skip));
	json_object_set_new(port, "malformed_by_reason", obj_or_empty(r, "malformed_by_reason"));
	json_decref(r);
	collect_port_queues(p, id, port, err);
	collect_port_pfc(p, id, port, err);
	return port;
}

/*
 * The rdma_cm of a process using librocefw-verbs (/rocefw/cm, schema rocefw.cm/1): the IBA
 * CM's counters ("cm") and its QP1 agent's ("qp1"). "available": the command is registered
 * (it is once the rdma_cm starts); without it the process has no rdma_cm to show.
 */
static json_t *collect_cm(struct proc *p, int *err)
{
	json_t *out = json_object(), *r;
	bool on;

	json_object_set_new(out, "available", json_boolean(has_cmd(p, "/rocefw/cm")));
	if (!has_cmd(p, "/rocefw/cm"))
		return out;
	r = query(p, "/rocefw/cm");
	if (r == NULL) {
		*err = 1;
		return out;
	}
	if (json_object_get(r, "schema") != NULL)
		json_object_set(out, "source_schema", json_object_get(r, "schema"));
	on = truthy(json_object_get(r, "started"));
	json_object_set_new(out, "started", json_boolean(on));
	if (on) {
		json_object_set_new(out, "cm", obj_or_empty(r, "cm"));
		json_object_set_new(out, "qp1", obj_or_empty(r, "qp1"));
	}
	json_decref(r);
	return out;
}

/* Everything one process exposes, as the "processes" entry of rocefw-stat/2. */
static json_t *collect(struct proc *p, int *err)
{
	json_t *o = json_object(), *ids, *arr, *v;
	size_t i;

	/* --watch: a command registered since the last read (the rdma_cm starts with the
	   program's first rdma_cm call) is read from now on */
	if (p->sampled) {
		v = query(p, "/");
		if (v == NULL)
			*err = 1;
		else {
			json_decref(p->cmds);
			p->cmds = v;
		}
	}
	p->sampled = true;
	json_object_set_new(o, "file_prefix", json_string(p->prefix));
	json_object_set_new(o, "socket", json_string(p->path));
	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "rocefw", json_boolean(has_cmd(p, "/rocefw/ports")));
	arr = json_array();
	ids = has_cmd(p, "/rocefw/ports") ? query(p, "/rocefw/ports") : json_array();
	if (ids == NULL)
		*err = 1;
	json_array_foreach(ids, i, v)
	    json_array_append_new(arr, collect_port(p, (long)json_integer_value(v), err));
	json_decref(ids);
	json_object_set_new(o, "ports", arr);
	arr = json_array();
	ids = has_cmd(p, "/rocefw/nics") ? query(p, "/rocefw/nics") : json_array();
	if (ids == NULL)
		*err = 1;
	json_array_foreach(ids, i, v)
	    json_array_append_new(arr, collect_nic(p, (long)json_integer_value(v), err));
	json_decref(ids);
	json_object_set_new(o, "nics", arr);
	json_object_set_new(o, "cm", collect_cm(p, err));
	return o;
}

/* ---- flattening: "port0.rx_pkts", "port0.q1.rx_steered", "nic0.dev.tx_packets",
 *      "nic0.qp17.rp.rp_cnp_handled", "cm.established", "cm.qp1.mad_rx" ---- */

static void flat_add(struct flat *f, const char *key, double v, bool counter)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 256;
		f->key = realloc(f->key, f->cap * sizeof(*f->key));
		f->val = realloc(f->val, f->cap * sizeof(*f->val));
		f->counter = realloc(f->counter, f->cap * sizeof(*f->counter));
		if (f->key == NULL || f->val == NULL || f->counter == NULL) {
			fprintf(stderr, "rocefw-stat: out of memory\n");
			exit(1);
		}
	}
	f->key[f->n] = strdup(key);
	f->val[f->n] = v;
	f->counter[f->n] = counter;
	f->n++;
}

static void flat_free(struct flat *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->key[i]);
	free(f->key);
	free(f->val);
	free(f->counter);
	memset(f, 0, sizeof(*f));
}

static void flat_dict(struct flat *f, const char *prefix, json_t *d, bool counter)
{
	const char *k;
	json_t *v;
	char key[512];

	json_object_foreach(d, k, v)
	{
		if (!json_is_number(v))
			continue;
		snprintf(key, sizeof(key), "%s%s", prefix, k);
		flat_add(f, key, json_number_value(v), counter);
	}
}

static void flatten_ports(struct flat *f, json_t *proc)
{
	json_t *port, *q;
	size_t i, j;
	char pre[256];

	json_array_foreach(json_object_get(proc, "ports"), i, port)
	{
		long id = (long)json_integer_value(json_object_get(port, "port"));

		snprintf(pre, sizeof(pre), "port%ld.", id);
		flat_dict(f, pre, json_object_get(port, "counters"), true);
		snprintf(pre, sizeof(pre), "port%ld.malformed.", id);
		flat_dict(f, pre, json_object_get(port, "malformed_by_reason"), true);
		snprintf(pre, sizeof(pre), "port%ld.pfc.", id);
		flat_dict(f, pre, json_object_get(port, "pfc"), true);
		json_array_foreach(json_object_get(port, "queues"), j, q)
		{
			char key[300];

			snprintf(pre, sizeof(pre), "port%ld.q%lld.", id,
			         (long long)json_integer_value(json_object_get(q, "queue")));
			flat_dict(f, pre, json_object_get(q, "counters"), true);
			/* the owned range is a setting, not a count: no rate */
			if (json_object_get(q, "qpn_count") == NULL)
				continue;
			snprintf(key, sizeof(key), "%sqpn_lo", pre);
			flat_add(f, key, json_number_value(json_object_get(q, "qpn_lo")), false);
			snprintf(key, sizeof(key), "%sqpn_count", pre);
			flat_add(f, key, json_number_value(json_object_get(q, "qpn_count")), false);
		}
	}
}

static void flatten(struct flat *f, json_t *proc)
{
	json_t *nic, *qp, *row, *cm = json_object_get(proc, "cm");
	size_t i, j;
	char pre[256];

	flatten_ports(f, proc);
	json_array_foreach(json_object_get(proc, "nics"), i, nic)
	{
		long id = (long)json_integer_value(json_object_get(nic, "nic"));

		snprintf(pre, sizeof(pre), "nic%ld.", id);
		flat_dict(f, pre, json_object_get(nic, "counters"), true);
		snprintf(pre, sizeof(pre), "nic%ld.dev.", id);
		flat_dict(f, pre, json_object_get(nic, "dev_counters"), true);
		json_array_foreach(json_object_get(nic, "qps"), j, qp)
		{
			long q = (long)json_integer_value(json_object_get(qp, "qpn"));

			snprintf(pre, sizeof(pre), "nic%ld.qp%ld.", id, q);
			flat_dict(f, pre, json_object_get(qp, "nic_counters"), true);
			snprintf(pre, sizeof(pre), "nic%ld.qp%ld.dev.", id, q);
			flat_dict(f, pre, json_object_get(qp, "counters"), true);
			snprintf(pre, sizeof(pre), "nic%ld.qp%ld.rp.", id, q);
			flat_dict(f, pre, json_object_get(qp, "rp_counters"), true);
			snprintf(pre, sizeof(pre), "nic%ld.qp%ld.np.", id, q);
			flat_dict(f, pre, json_object_get(qp, "np_counters"), true);
			snprintf(pre, sizeof(pre), "nic%ld.qp%ld.cc.", id, q);
			flat_dict(f, pre, json_object_get(qp, "cc"), false);
		}
		json_array_foreach(json_object_get(json_object_get(nic, "estats"), "rows"), j, row)
		{
			snprintf(pre, sizeof(pre), "nic%ld.estats.qp%lld.%s.%s.%s.", id,
			         (long long)json_integer_value(json_object_get(row, "qpn")),
			         json_string_value(json_object_get(row, "op")) ?: "?",
			         json_string_value(json_object_get(row, "status")) ?: "?",
			         json_string_value(json_object_get(row, "stage")) ?: "?");
			/* count and the quantiles; qpn is in the name */
			for (unsigned k = 0; k < 5; k++) {
				static const char *const qk[] = {"count", "p50", "p99", "p999",
				                                 "max"};
				char key[512];

				snprintf(key, sizeof(key), "%s%s", pre, qk[k]);
				flat_add(f, key, json_number_value(json_object_get(row, qk[k])),
				         false);
			}
		}
	}
	flat_dict(f, "cm.", json_object_get(cm, "cm"), true);
	flat_dict(f, "cm.qp1.", json_object_get(cm, "qp1"), true);
}

static double flat_get(const struct flat *f, const char *key, bool *found)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->key[i], key) == 0) {
			*found = true;
			return f->val[i];
		}
	*found = false;
	return 0;
}

/* ---- output ---- */

static void print_estats_table(json_t *proc)
{
	json_t *nic, *row;
	size_t i, j;

	json_array_foreach(json_object_get(proc, "nics"), i, nic)
	{
		json_t *e = json_object_get(nic, "estats");
		long id = (long)json_integer_value(json_object_get(nic, "nic"));

		if (!json_is_true(json_object_get(e, "available"))) {
			printf("  nic%ld estats: absent (no /rocefw/estats in this process)\n", id);
			continue;
		}
		if (!json_is_true(json_object_get(e, "enabled"))) {
			printf("  nic%ld estats: not enabled\n", id);
			continue;
		}
		printf("  nic%ld estats (ns):\n  %8s %-8s %-10s %-8s %10s %10s %10s %10s %10s\n",
		       id, "qpn", "op", "status", "stage", "count", "p50", "p99", "p999", "max");
		json_array_foreach(json_object_get(e, "rows"), j, row)
		{
			printf("  %8lld %-8s %-10s %-8s %10lld %10lld %10lld %10lld %10lld\n",
			       (long long)json_integer_value(json_object_get(row, "qpn")),
			       json_string_value(json_object_get(row, "op")) ?: "?",
			       json_string_value(json_object_get(row, "status")) ?: "?",
			       json_string_value(json_object_get(row, "stage")) ?: "?",
			       (long long)json_integer_value(json_object_get(row, "count")),
			       (long long)json_integer_value(json_object_get(row, "p50")),
			       (long long)json_integer_value(json_object_get(row, "p99")),
			       (long long)json_integer_value(json_object_get(row, "p999")),
			       (long long)json_integer_value(json_object_get(row, "max")));
		}
	}
}

static void print_qps_table(json_t *proc)
{
	json_t *nic, *qp;
	size_t i, j;

	json_array_foreach(json_object_get(proc, "nics"), i, nic)
	{
		json_array_foreach(json_object_get(nic, "qps"), j, qp)
		{
			json_t *cc = json_object_get(qp, "cc");

			printf("  nic%lld qp%lld: %s %s psn sq %lld rq %lld, cc %s",
			       (long long)json_integer_value(json_object_get(nic, "nic")),
			       (long long)json_integer_value(json_object_get(qp, "qpn")),
			       json_string_value(json_object_get(qp, "state")) ?: "?",
			       json_string_value(json_object_get(qp, "transport_mode")) ?: "?",
			       (long long)json_integer_value(json_object_get(qp, "sq_psn")),
			       (long long)json_integer_value(json_object_get(qp, "rq_psn")),
			       json_string_value(json_object_get(cc, "cc")) ?: "?");
			if (json_object_get(cc, "rp_state") != NULL)
				printf(
				    " rp_state %s rate %lld kbit/s target %lld kbit/s alpha %lld",
				    json_string_value(json_object_get(cc, "rp_state")) ?: "?",
				    (long long)json_integer_value(json_object_get(cc, "rate_kbps")),
				    (long long)json_integer_value(
				        json_object_get(cc, "target_kbps")),
				    (long long)json_integer_value(json_object_get(cc, "alpha")));
			printf("\n");
		}
	}
}

/* Ports of several queues: a row per queue with the QPNs its NIC owns and where frames went. */
static void print_queues_table(json_t *proc)
{
	static const char *const col[] = {"rx_pkts",     "rx_rocev2",     "rx_steered",
	                                  "rx_steer_in", "rx_steer_full", "tx_pkts"};
	json_t *port, *q;
	size_t i, j;

	json_array_foreach(json_object_get(proc, "ports"), i, port)
	{
		long id = (long)json_integer_value(json_object_get(port, "port"));
		long rxq = (long)json_integer_value(json_object_get(port, "rx_queues"));

		if (rxq <= 1)
			continue;
		if (json_object_get(port, "queues") == NULL) {
			printf("  port%ld queues (%ld RX): absent (no /rocefw/port/queue in this "
			       "process)\n",
			       id, rxq);
			continue;
		}
		printf("  port%ld queues (%ld RX, %lld TX):\n  %6s %-17s", id, rxq,
		       (long long)json_integer_value(json_object_get(port, "tx_queues")), "queue",
		       "qpns");
		for (unsigned k = 0; k < sizeof(col) / sizeof(col[0]); k++)
			printf(" %14s", col[k]);
		printf("\n");
		json_array_foreach(json_object_get(port, "queues"), j, q)
		{
			long long lo = json_integer_value(json_object_get(q, "qpn_lo"));
			long long n = json_integer_value(json_object_get(q, "qpn_count"));
			char qpns[48] = "-";

			if (n > 0)
				snprintf(qpns, sizeof(qpns), "%lld..%lld", lo, lo + n - 1);
			printf("  %6lld %-17s",
			       (long long)json_integer_value(json_object_get(q, "queue")), qpns);
			for (unsigned k = 0; k < sizeof(col) / sizeof(col[0]); k++)
				printf(" %14lld", (long long)json_integer_value(json_object_get(
				                      json_object_get(q, "counters"), col[k])));
			printf("\n");
		}
	}
}

static long long cnt_of(json_t *cm, const char *table, const char *name)
{
	return (long long)json_integer_value(json_object_get(json_object_get(cm, table), name));
}

/* The rdma_cm in one line (every counter is in the flat list too, by its cm.* name). */
static void print_cm_line(json_t *proc)
{
	json_t *cm = json_object_get(proc, "cm");

	if (!json_is_true(json_object_get(cm, "available"))) {
		printf("  rdma_cm: absent (no /rocefw/cm in this process)\n");
		return;
	}
	if (!json_is_true(json_object_get(cm, "started"))) {
		printf("  rdma_cm: not started\n");
		return;
	}
	printf(
	    "  rdma_cm: established %lld, timeouts %lld, REJ sent %lld received %lld; CM MADs rx "
	    "%lld tx %lld resent %lld; QP1 MADs rx %lld tx %lld dropped %lld no_arp %lld\n",
	    cnt_of(cm, "cm", "established"), cnt_of(cm, "cm", "timeouts"),
	    cnt_of(cm, "cm", "rejected_tx"), cnt_of(cm, "cm", "rejected_rx"),
	    cnt_of(cm, "cm", "mad_rx"), cnt_of(cm, "cm", "mad_tx"), cnt_of(cm, "cm", "mad_resent"),
	    cnt_of(cm, "qp1", "mad_rx"), cnt_of(cm, "qp1", "mad_tx"),
	    cnt_of(cm, "qp1", "mad_tx_dropped"), cnt_of(cm, "qp1", "mad_tx_no_arp"));
}

static void print_table(json_t *proc, bool all)
{
	struct flat f = {0};
	unsigned shown = 0;

	printf("%s (pid %lld, %s)\n", json_string_value(json_object_get(proc, "file_prefix")),
	       (long long)json_integer_value(json_object_get(proc, "pid")),
	       json_string_value(json_object_get(proc, "socket")));
	print_qps_table(proc);
	print_queues_table(proc);
	print_cm_line(proc);
	flatten(&f, proc);
	for (size_t i = 0; i < f.n; i++) {
		if (!f.counter[i] || (!all && f.val[i] == 0))
			continue;
		printf("  %-44s %20.0f\n", f.key[i], f.val[i]);
		shown++;
	}
	if (shown == 0)
		printf("  (no %scounters)\n", all ? "" : "non-zero ");
	print_estats_table(proc);
	flat_free(&f);
}

static void print_csv(json_t *proc, bool all)
{
	struct flat f = {0};

	flatten(&f, proc);
	for (size_t i = 0; i < f.n; i++)
		if (all || f.val[i] != 0 || !f.counter[i])
			printf("%s,%s,%.0f\n",
			       json_string_value(json_object_get(proc, "file_prefix")), f.key[i],
			       f.val[i]);
	flat_free(&f);
}

/* Reads every live process; a process whose socket fails is marked gone (reported once). */
static json_t *sample(struct proc *ps, unsigned n, int *err)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < n; i++) {
		int e = 0;
		json_t *o;

		if (ps[i].gone)
			continue;
		o = collect(&ps[i], &e);
		if (e) {
			fprintf(stderr, "rocefw-stat: %s: telemetry read failed (process ended?)\n",
			        ps[i].prefix);
			ps[i].gone = true;
			*err = 1;
			json_decref(o);
			continue;
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *find_proc(json_t *arr, const char *prefix)
{
	json_t *o;
	size_t i;

	json_array_foreach(arr, i,
	                   o) if (strcmp(json_string_value(json_object_get(o, "file_prefix")),
	                                 prefix) == 0) return o;
	return NULL;
}

/*
 * Rates between two samples: (now - before) / dt for counters; a counter that went down (a QP
 * destroyed and its number reused) counts from zero. Gauges (cc state, quantiles) are left out.
 */
static void print_rates(const struct stat_opts *opt, json_t *before, json_t *now, double dt,
                        double t_rel)
{
	json_t *out = NULL, *plist = NULL, *proc;
	size_t i;

	if (opt->fmt == FMT_JSON) {
		out = json_object();
		json_object_set_new(out, "schema", json_string(STAT_RATES_SCHEMA));
		json_object_set_new(out, "time_ns", json_integer(rfw_real_ns()));
		json_object_set_new(out, "interval_s", json_real(dt));
		plist = json_array();
	}
	json_array_foreach(now, i, proc)
	{
		const char *prefix = json_string_value(json_object_get(proc, "file_prefix"));
		json_t *old = find_proc(before, prefix), *rates = NULL, *values = NULL;
		struct flat a = {0}, b = {0};
		unsigned shown = 0;

		if (old == NULL)
			continue;
		flatten(&a, old);
		flatten(&b, proc);
		if (opt->fmt == FMT_TABLE)
			printf("%s (pid %lld): rates over %.3f s\n", prefix,
			       (long long)json_integer_value(json_object_get(proc, "pid")), dt);
		if (opt->fmt == FMT_JSON) {
			rates = json_object();
			values = json_object();
		}
		for (size_t k = 0; k < b.n; k++) {
			bool found;
			double v0 = flat_get(&a, b.key[k], &found), d, r;

			if (!b.counter[k])
				continue;
			d = b.val[k] >= v0 ? b.val[k] - v0 : b.val[k];
			r = dt > 0 ? d / dt : 0;
			if (!opt->all && r == 0)
				continue;
			shown++;
			if (opt->fmt == FMT_TABLE)
				printf("  %-44s %20.0f %16.1f/s\n", b.key[k], b.val[k], r);
			else if (opt->fmt == FMT_CSV)
				printf("%.3f,%s,%s,%.0f,%.3f\n", t_rel, prefix, b.key[k], b.val[k],
				       r);
			else {
				json_object_set_new(rates, b.key[k], json_real(r));
				json_object_set_new(values, b.key[k],
				                    json_integer((json_int_t)b.val[k]));
			}
		}
		if (opt->fmt == FMT_TABLE && shown == 0)
			printf("  (no counter moved)\n");
		if (opt->fmt == FMT_JSON) {
			json_t *po = json_object();

			json_object_set_new(po, "file_prefix", json_string(prefix));
			json_object_set(po, "pid", json_object_get(proc, "pid"));
			json_object_set_new(po, "rates", rates);
			json_object_set_new(po, "values", values);
			json_array_append_new(plist, po);
		}
		flat_free(&a);
		flat_free(&b);
	}
	if (opt->fmt == FMT_JSON) {
		json_object_set_new(out, "processes", plist);
		json_dumpf(out, stdout, JSON_COMPACT);
		printf("\n");
		json_decref(out);
	}
	fflush(stdout);
}

static int one_shot(const struct stat_opts *opt, struct proc *ps, unsigned n)
{
	int err = 0;
	json_t *arr = sample(ps, n, &err), *proc;
	size_t i;

	if (opt->fmt == FMT_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "schema", json_string(STAT_SCHEMA));
		json_object_set_new(o, "time_ns", json_integer(rfw_real_ns()));
		json_object_set_new(o, "processes", arr);
		json_dumpf(o, stdout, JSON_INDENT(1));
		printf("\n");
		json_decref(o);
		return err;
	}
	if (opt->fmt == FMT_CSV)
		printf("file_prefix,counter,value\n");
	json_array_foreach(arr, i, proc)
	{
		if (opt->fmt == FMT_CSV)
			print_csv(proc, opt->all);
		else
			print_table(proc, opt->all);
	}
	json_decref(arr);
	return err;
}

static int watch(const struct stat_opts *opt, struct proc *ps, unsigned n)
{
	int err = 0;
	double t0 = rfw_mono_s(), t_prev = t0, t;
	json_t *prev = sample(ps, n, &err), *cur;

	if (opt->fmt == FMT_CSV)
		printf("time_s,file_prefix,counter,value,rate_per_s\n");
	for (long it = 0; opt->count == 0 || it < opt->count; it++) {
		struct timespec ts = {(time_t)opt->watch_s,
		                      (long)((opt->watch_s - floor(opt->watch_s)) * 1e9)};

		nanosleep(&ts, NULL);
		cur = sample(ps, n, &err);
		t = rfw_mono_s();
		if (json_array_size(cur) == 0) {
			fprintf(stderr, "rocefw-stat: no process left to read\n");
			json_decref(cur);
			break;
		}
		print_rates(opt, prev, cur, t - t_prev, t - t0);
		json_decref(prev);
		prev = cur;
		t_prev = t;
	}
	json_decref(prev);
	return err;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: rocefw-stat [--file-prefix PREFIX]... [--all-processes] [--json | --csv]\n"
	    "                   [--watch SEC [--count N]] [--all] [--runtime-dir DIR]\n"
	    "                   [--timeout-ms MS]\n"
	    "  --file-prefix P  the process started with EAL --file-prefix P (repeatable;\n"
	    "                   default: rte, EAL's default prefix)\n"
	    "  --all-processes  every process with a socket DIR/*/dpdk_telemetry.v2\n"
	    "  --json           one JSON object, schema " STAT_SCHEMA "; with --watch one\n"
	    "                   " STAT_RATES_SCHEMA " object a line\n"
	    "  --csv            file_prefix,counter,value (with --watch: time_s first, rate last)\n"
	    "  --watch SEC      rates per second between reads SEC apart (0.05..3600)\n"
	    "  --count N        with --watch: stop after N intervals (default: run until killed)\n"
	    "  --all            also counters that are zero / did not move\n"
	    "  --runtime-dir D  DPDK runtime base directory (default /var/run/dpdk for root,\n"
	    "                   $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk otherwise)\n"
	    "  --timeout-ms MS  wait this long for each telemetry reply (default 2000)\n");
}

/* One option (getopt value @c). 0: taken; 2: bad usage; -1: --help printed. */
static int stat_opt(struct stat_opts *opt, int c, const char *arg, bool *json, bool *csv,
                    bool *count_set)
{
	uint64_t u;

	switch (c) {
	case 'f':
		if (opt->nprefixes == MAX_PROCS || *arg == '\0' || strchr(arg, '/') != NULL) {
			fprintf(stderr, "rocefw-stat: --file-prefix '%s': %s\n", arg,
			        opt->nprefixes == MAX_PROCS ? "too many processes"
			                                    : "not a file prefix");
			return 2;
		}
		opt->prefixes[opt->nprefixes++] = arg;
		return 0;
	case 'A':
		opt->all_procs = true;
		return 0;
	case 'j':
		*json = true;
		return 0;
	case 'c':
		*csv = true;
		return 0;
	case 'w':
		return rfw_opt_double(PROG, "--watch", arg, 0.05, 3600, &opt->watch_s) ? 2 : 0;
	case 'n':
		if (rfw_opt_u64(PROG, "--count", arg, 1, 1000000000, &u) != 0)
			return 2;
		opt->count = (long)u;
		*count_set = true;
		return 0;
	case 'a':
		opt->all = true;
		return 0;
	case 'r':
		opt->runtime_dir = arg;
		return 0;
	case 't':
		if (rfw_opt_u64(PROG, "--timeout-ms", arg, 1, 600000, &u) != 0)
			return 2;
		opt->timeout_ms = (int)u;
		return 0;
	case 'h':
		usage(stdout);
		return -1;
	default:
		usage(stderr);
		return 2;
	}
}

/* 0: go on; else the exit status (-1: 0). */
static int stat_parse(int argc, char **argv, struct stat_opts *opt)
{
	static const struct option lo[] = {{"file-prefix", required_argument, NULL, 'f'},
	                                   {"all-processes", no_argument, NULL, 'A'},
	                                   {"json", no_argument, NULL, 'j'},
	                                   {"csv", no_argument, NULL, 'c'},
	                                   {"watch", required_argument, NULL, 'w'},
	                                   {"count", required_argument, NULL, 'n'},
	                                   {"all", no_argument, NULL, 'a'},
	                                   {"runtime-dir", required_argument, NULL, 'r'},
	                                   {"timeout-ms", required_argument, NULL, 't'},
	                                   {"help", no_argument, NULL, 'h'},
	                                   {NULL, 0, NULL, 0}};
	bool json = false, csv = false, count_set = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "f:h", lo, NULL)) != -1) {
		rc = stat_opt(opt, c, optarg, &json, &csv, &count_set);
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "rocefw-stat: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (json && csv) {
		fprintf(stderr, "rocefw-stat: --json and --csv exclude each other\n");
		return 2;
	}
	if (count_set && opt->watch_s == 0) {
		fprintf(stderr, "rocefw-stat: --count needs --watch\n");
		return 2;
	}
	opt->fmt = json ? FMT_JSON : csv ? FMT_CSV : FMT_TABLE;
	if (opt->nprefixes == 0 && !opt->all_procs)
		opt->prefixes[opt->nprefixes++] = "rte";
	runtime_base(opt);
	return 0;
}

/* The processes named with --file-prefix (or "rte"), into @ps from *@n. 0, or 1 when one has
 * no socket or does not answer. */
static int open_named(const struct stat_opts *opt, struct proc *ps, unsigned *n)
{
	for (unsigned i = 0; i < opt->nprefixes; i++) {
		struct proc *p = &ps[*n];

		snprintf(p->prefix, sizeof(p->prefix), "%s", opt->prefixes[i]);
		if (snprintf(p->path, sizeof(p->path), "%s/%s/dpdk_telemetry.v2", opt->base,
		             opt->prefixes[i]) >= (int)sizeof(p->path)) {
			fprintf(stderr, "rocefw-stat: --file-prefix %s: socket path too long\n",
			        p->prefix);
			return 1;
		}
		if (access(p->path, F_OK) != 0) {
			fprintf(stderr,
			        "rocefw-stat: --file-prefix %s: no telemetry socket %s: %s\n",
			        p->prefix, p->path, strerror(errno));
			return 1;
		}
		if (proc_open(p, false, opt->timeout_ms) < 0)
			return 1;
		(*n)++;
	}
	return 0;
}

/* --all-processes: every live socket under the runtime directory not named already. 0, or 1
 * when there is none at all. */
static int open_all(const struct stat_opts *opt, struct proc *ps, unsigned *n)
{
	char pat[4200];
	glob_t g;
	unsigned found = 0;

	snprintf(pat, sizeof(pat), "%s/*/dpdk_telemetry.v2", opt->base);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && *n < MAX_PROCS; i++) {
			struct proc *p = &ps[*n];
			const char *s = g.gl_pathv[i] + strlen(opt->base) + 1;
			bool dup = false;

			snprintf(p->prefix, sizeof(p->prefix), "%.*s", (int)strcspn(s, "/"), s);
			for (unsigned k = 0; k < *n; k++)
				dup |= strcmp(ps[k].prefix, p->prefix) == 0;
			if (dup)
				continue;
			snprintf(p->path, sizeof(p->path), "%s", g.gl_pathv[i]);
			/* A socket left by a process that ended: skipped, said on stderr. */
			if (proc_open(p, true, opt->timeout_ms) < 0) {
				fprintf(stderr, "rocefw-stat: %s: stale socket, skipped\n",
				        p->path);
				continue;
			}
			(*n)++;
			found++;
		}
		globfree(&g);
	}
	if (found == 0 && *n == 0) {
		fprintf(stderr, "rocefw-stat: --all-processes: no live telemetry socket %s\n", pat);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct stat_opts opt = {.timeout_ms = 2000};
	static struct proc ps[MAX_PROCS];
	unsigned n = 0;
	int rc = stat_parse(argc, argv, &opt);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (open_named(&opt, ps, &n) != 0 || (opt.all_procs && open_all(&opt, ps, &n) != 0))
		return 1;
	rc = opt.watch_s > 0 ? watch(&opt, ps, n) : one_shot(&opt, ps, n);
	for (unsigned i = 0; i < n; i++)
		proc_close(&ps[i]);
	return rc ? 1 : 0;
}
