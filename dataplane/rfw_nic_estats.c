/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats on the DPDK host (docs/estats.md): the rows of every attached QP published for
 * telemetry under a sequence counter, and trigger dumps. A dump's contents are captured on the
 * poll thread (a copy into a slot of a single-producer single-consumer ring, no I/O) and written
 * as JSON by a thread of its own, so no file is opened or written on the poll thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dataplane/rfw_nic_int.h"

/* How long the writer sleeps when its queue is empty. */
#define NIC_ES_WRITER_SLEEP_NS 1000000

static void json_counters(FILE *f, const char *key, const uint64_t *v, unsigned n,
                          const char *(*name)(unsigned))
{
	fprintf(f, "\"%s\": {", key);
	for (unsigned k = 0; k < n; k++)
		fprintf(f, "%s\"%s\": %lu", k ? ", " : "", name(k), (unsigned long)v[k]);
	fprintf(f, "}");
}
static const char *tcnt_name(unsigned k)
{
	return rfw_counter_name((enum rfw_counter)k);
}
static const char *qp_ctr_name(unsigned k)
{
	return rfw_fw_qp_ctr_name((enum rfw_fw_qp_ctr)k);
}
static const char *rp_cnt_name(unsigned k)
{
	return dcqcn_rp_counter_name((enum dcqcn_rp_counter)k);
}

static void json_head(FILE *f, const struct nic_es_dump *d)
{
	const struct rfw_es_trigger *tr = &d->tr;

	fprintf(f,
	        "{\"schema\": \"rocefw.estats.dump/1\", \"nic\": %d, \"qpn\": %u, "
	        "\"now_ns\": %lu,\n",
	        d->nic_id, d->qpn, (unsigned long)d->now_ns);
	fprintf(f,
	        " \"trigger\": {\"stage\": \"%s\", \"latency_ns\": %lu, \"threshold_ns\": %lu, "
	        "\"at_ns\": %lu, \"op\": \"%s\", \"status\": \"%s\", \"wr_id\": %lu",
	        rfw_es_stage_name(tr->stage), (unsigned long)tr->latency_ns,
	        (unsigned long)d->threshold_ns, (unsigned long)tr->at_ns, rfw_es_op_name(tr->op),
	        rfw_es_status_name(tr->status), (unsigned long)tr->wr_id);
	for (unsigned k = 0; k < 6; k++)
		fprintf(f, ", \"t%u_ns\": %lu", k + 1, (unsigned long)tr->t[k]);
	fprintf(f, "},\n");
	fprintf(f,
	        " \"qp\": {\"state\": \"%s\", \"transport_mode\": \"%s\", \"path_mtu\": %u, "
	        "\"dest_qpn\": %u, \"sq_psn\": %u, \"rq_psn\": %u},\n",
	        rfw_qp_state_str(d->a.qp_state),
	        d->a.transport_mode == RFW_TRANSPORT_SR ? "sr" : "gbn",
	        rfw_mtu_to_bytes(d->a.path_mtu), d->a.dest_qp_num, d->a.sq_psn, d->a.rq_psn);
}

static void json_psn(FILE *f, const struct nic_es_dump *d)
{
	static const char *const wstate[] = {"posted", "pending", "done"};
	const struct rfw_es_qp_state *st = &d->st;

	fprintf(f,
	        " \"psn\": {\"next_psn\": %u, \"acked_psn\": %u, \"high_psn\": %u, \"epsn\": %u, "
	        "\"msn\": %u, \"sq_outstanding\": %u, \"retry_left\": %u, \"rnr_left\": %u, "
	        "\"retrying\": %s, \"rnr_wait\": %s, \"ack_timer_ns\": %lu},\n",
	        st->next_psn, st->acked_psn, st->high_psn, st->epsn, st->msn, st->sq_outstanding,
	        st->retry_left, st->rnr_left, st->retrying ? "true" : "false",
	        st->rnr_wait ? "true" : "false", (unsigned long)st->ack_timer_ns);
	fprintf(f, " \"inflight\": [");
	for (int i = 0; i < d->nw; i++) {
		const struct rfw_es_wqe *w = &d->w[i];

		fprintf(f,
		        "%s\n  {\"wr_id\": %lu, \"op\": \"%s\", \"state\": \"%s\", \"length\": %u, "
		        "\"first_psn\": %d, \"last_psn\": %d, \"t1_ns\": %lu, \"t2_ns\": %lu, "
		        "\"t3_ns\": %lu}",
		        i ? "," : "", (unsigned long)w->wr_id, rfw_es_op_name(w->op),
		        w->state < 3 ? wstate[w->state] : "?", w->length,
		        w->psn_valid ? (int)w->first_psn : -1, w->psn_valid ? (int)w->last_psn : -1,
		        (unsigned long)w->t[0], (unsigned long)w->t[1], (unsigned long)w->t[2]);
	}
	fprintf(f, "],\n \"inflight_truncated\": %s,\n",
	        (uint32_t)d->nw < st->sq_outstanding ? "true" : "false");
}

static void json_rate(FILE *f, const struct nic_es_dump *d)
{
	const struct rfw_fw_snap *s = &d->snap;

	fprintf(f, " \"rate\": {\"cc\": %s", d->cc ? "true" : "false");
	if (d->cc) {
		fprintf(
		    f,
		    ", \"rp_state\": \"%s\", \"rc_kbps\": %lu, \"rt_kbps\": %lu, \"alpha\": %u, ",
		    dcqcn_rp_state_name(s->rp_state), (unsigned long)s->rate_kbps,
		    (unsigned long)s->target_kbps, s->alpha);
		json_counters(f, "counters", s->rp_cnt, DCQCN_RP_CNT__COUNT, rp_cnt_name);
	}
	fprintf(f, "},\n ");
	json_counters(f, "counters", d->tcnt, RFW_CNT__COUNT, tcnt_name);
	fprintf(f, ",\n ");
	json_counters(f, "nic_counters", s->ctr, RFW_FW_QP_CTR__COUNT, qp_ctr_name);
	fprintf(f, "}\n");
}

/* <dir>/rocefw-estats-nic<N>-qp<QPN>-<at_ns>.json, written whole then renamed. */
static int dump_write(const char *dir, const struct nic_es_dump *d)
{
	char path[512], tmp[520];
	int rc = snprintf(path, sizeof(path), "%s/rocefw-estats-nic%d-qp%u-%lu.json", dir,
	                  d->nic_id, d->qpn, (unsigned long)d->tr.at_ns);
	FILE *f;

	if (rc < 0 || (size_t)rc >= sizeof(path))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return -errno;
	json_head(f, d);
	json_psn(f, d);
	json_rate(f, d);
	/* A reader never sees half a dump. */
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		return -EIO;
	}
	return 0;
}

/* The NIC's Estats thread: bins the records the poll thread hands on (rfw_nic_es_bin.c),
 * publishes their rows on its ticks, and writes trigger dumps. */
static void *writer_main(void *arg)
{
	struct rfw_nic *nic = arg;
	struct nic_es_writer *w = nic->es_w;
	const struct timespec nap = {0, NIC_ES_WRITER_SLEEP_NS};

	for (;;) {
		bool stop = __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE);
		/* After stop: what came before it is binned. The thread naps after every pass
		 * unless the ring was a quarter full: drained in batches, the poll thread's lines
		 * (its index, the slots it writes next) are not pulled away on every record. */
		bool busy = nic_es_bin_drain(nic) >= NIC_ES_RECS / 4;
		uint32_t prod = __atomic_load_n(&w->prod, __ATOMIC_ACQUIRE);

		while (w->cons != prod) {
			int rc = dump_write(w->dir, &w->q[w->cons % NIC_ES_QUEUE]);

			__atomic_store_n(rc == 0 ? &w->dumps : &w->errors,
			                 (rc == 0 ? w->dumps : w->errors) + 1, __ATOMIC_RELAXED);
			__atomic_store_n(&w->cons, w->cons + 1, __ATOMIC_RELEASE);
		}
		if (stop)
			return NULL;
		if (!busy)
			nanosleep(&nap, NULL);
	}
}

int nic_es_start(struct rfw_nic *nic, const char *dir)
{
	struct nic_es_writer *w = rte_zmalloc("rfw_nic_es_w", sizeof(*w), RTE_CACHE_LINE_SIZE);
	int rc;

	if (w == NULL)
		return -ENOMEM;
	rc = nic_es_bin_init(&w->b, nic->max_qp);
	if (rc != 0) {
		nic_es_bin_free(&w->b);
		rte_free(w);
		return rc;
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	nic->es_w = w;
	/* A control thread: off the lcores (DPDK's control cpuset), so binning never shares the
	 * polling core; a plain pthread would inherit the creating lcore's affinity. */
	if (rte_ctrl_thread_create(&w->thread, "rfw-estats", NULL, writer_main, nic) != 0) {
		nic->es_w = NULL;
		nic_es_bin_free(&w->b);
		rte_free(w);
		return -EAGAIN;
	}
	w->running = true;
	/* QPs created from now on push their records into the ring instead of binning them. */
	rfw_dev_estats_ring(nic->dev, &w->b.r);
	return 0;
}

/* Stop the thread once it binned and wrote what is queued. */
void nic_es_stop(struct rfw_nic *nic)
{
	struct nic_es_writer *w = nic->es_w;

	if (w == NULL)
		return;
	__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
	if (w->running)
		pthread_join(w->thread, NULL);
	rfw_dev_estats_ring(nic->dev, NULL); /* QPs still alive now drop their records */
	nic->es_w = NULL;
	nic_es_bin_free(&w->b);
	rte_free(w);
}

uint64_t nic_es_dumps(const struct rfw_nic *nic)
{
	return nic->es_w != NULL ? __atomic_load_n(&nic->es_w->dumps, __ATOMIC_RELAXED) : 0;
}

uint64_t nic_es_dump_errors(const struct rfw_nic *nic)
{
	const struct nic_es_writer *w = nic->es_w;

	return w != NULL ? __atomic_load_n(&w->errors, __ATOMIC_RELAXED) +
	                       __atomic_load_n(&w->dropped, __ATOMIC_RELAXED)
	                 : 0;
}

/*
 * A QP crossed the threshold: copy what its dump says into the writer's queue (poll thread,
 * no I/O). At most once per QP per interval (the transport rate-limits triggers).
 */
static void dump_queue(struct rfw_nic *nic, uint32_t slot, const struct rfw_es_trigger *tr)
{
	struct nic_es_writer *w = nic->es_w;
	struct rfw_qp *qp = nic->l2[slot].qp;
	struct nic_es_dump *d;

	if (w->prod - __atomic_load_n(&w->cons, __ATOMIC_ACQUIRE) >= NIC_ES_QUEUE) {
		__atomic_store_n(&w->dropped, w->dropped + 1, __ATOMIC_RELAXED);
		return;
	}
	d = &w->q[w->prod % NIC_ES_QUEUE];
	d->nic_id = nic->id;
	d->qpn = rfw_qp_num(qp);
	d->now_ns = nic->now_ns;
	d->threshold_ns = nic->es_threshold_ns;
	d->tr = *tr;
	(void)rfw_query_qp(qp, &d->a);
	d->nw = rfw_qp_estats_state(qp, &d->st, d->w, NIC_ES_DUMP_WQES);
	rfw_qp_counters(qp, d->tcnt);
	rfw_fw_publish(nic->fw, slot, nic->now_ns);
	if (!rfw_fw_snap_read(nic->fw, slot, &d->snap))
		memset(&d->snap, 0, sizeof(d->snap));
	d->cc = nic->cc_prof != NULL && nic->timely_prof == NULL;
	__atomic_store_n(&w->prod, w->prod + 1, __ATOMIC_RELEASE);
}

/* Every attached QP: queue a pending trigger's dump; then a tick, on which the Estats thread
 * publishes the rows of what it binned up to here. */
void nic_es_publish(struct rfw_nic *nic)
{
	struct rfw_es_trigger tr;

	for (uint32_t i = 0; i < nic->max_qp; i++)
		if (nic->l2[i].qp != NULL && rfw_qp_estats_trigger(nic->l2[i].qp, &tr))
			dump_queue(nic, i, &tr);
	nic_es_mark(nic, NIC_ES_MARK_TICK, 0, nic->now_ns);
	nic->es_pub_next_ns = nic->now_ns + NIC_ES_PUB_NS;
}

int rfw_nic_estats_rows(const struct rfw_nic *nic, enum rfw_es_window window,
                        struct rfw_es_row *rows, int max, uint64_t *at_ns)
{
	struct nic_es_pub *snap;
	int n;

	if (nic == NULL || (unsigned)window > RFW_ES_LAST || max < 0 || (max > 0 && rows == NULL))
		return -EINVAL;
	if (nic->es_pub == NULL)
		return 0;
	snap = malloc(sizeof(*snap));
	if (snap == NULL)
		return -ENOMEM;
	if (!rfw_seq_read(&nic->es_pub->seq, nic->es_pub, snap, sizeof(*snap))) {
		free(snap);
		return -EBUSY;
	}
	n = (int)snap->nrows[window] < max ? (int)snap->nrows[window] : max;
	memcpy(rows, snap->rows[window], sizeof(*rows) * (size_t)n);
	if (at_ns != NULL)
		*at_ns = snap->at_ns;
	free(snap);
	return n;
}
