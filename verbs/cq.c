/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues and completion channels of the rocefw device. A channel's fd is an eventfd
 * in semaphore mode: one count per event, so poll/epoll/select on it work and each
 * ibv_get_cq_event() read takes exactly one event. After each NIC poll the completions of every
 * CQ move into the CQ's ring (struct rfw_vrb_cq), which ibv_poll_cq reads without taking the
 * engine lock, so a program spinning on an empty CQ never keeps the NIC from running; an armed
 * CQ (ibv_req_notify_cq) whose ring is not empty then gets its event.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs/vrb.h"

_Static_assert((int)IBV_WC_GENERAL_ERR == (int)RFW_WC_GENERAL_ERR &&
                   IBV_WC_RETRY_EXC_ERR == (int)RFW_WC_RETRY_EXC_ERR &&
                   (int)IBV_WC_WR_FLUSH_ERR == (int)RFW_WC_WR_FLUSH_ERR,
               "wc status values");
_Static_assert((int)IBV_WC_SEND == (int)RFW_WC_SEND &&
                   (int)IBV_WC_LOCAL_INV == (int)RFW_WC_LOCAL_INV &&
                   (int)IBV_WC_RECV == (int)RFW_WC_RECV &&
                   (int)IBV_WC_RECV_RDMA_WITH_IMM == (int)RFW_WC_RECV_RDMA_WITH_IMM,
               "wc opcode values");
_Static_assert((int)IBV_WC_WITH_IMM == (int)RFW_WC_WITH_IMM &&
                   (int)IBV_WC_WITH_INV == (int)RFW_WC_WITH_INV,
               "wc flags");

#define COLLECT_CHUNK 32
#define RING_MAX      4096 /* ring entries at most; the rest waits in the transport's CQ */

/* Every CQ of the process (under the engine lock). */
static struct rfw_vrb_cq *all_cqs;

struct ibv_comp_channel *rfw_vrb_create_channel(struct ibv_context *c)
{
	struct rfw_vrb_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;
	ch->ibv.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ibv.fd < 0) {
		free(ch);
		return NULL;
	}
	ch->ibv.context = c;
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ibv;
}

int rfw_vrb_destroy_channel(struct ibv_comp_channel *ibv)
{
	struct rfw_vrb_channel *ch = (struct rfw_vrb_channel *)ibv;

	if (ibv->refcnt != 0)
		return EBUSY;
	close(ibv->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

static void channel_post(struct rfw_vrb_cq *q)
{
	struct rfw_vrb_channel *ch = (struct rfw_vrb_channel *)q->ibv.channel;
	uint64_t one = 1;

	pthread_mutex_lock(&ch->lock);
	if (ch->n < RFW_VRB_CHAN_MAX) {
		ch->pending[(ch->head + ch->n) % RFW_VRB_CHAN_MAX] = q;
		ch->n++;
		if (write(ch->ibv.fd, &one, sizeof(one)) < 0)
			ch->n--; /* cannot happen below 2^64 - 1 counts */
	}
	pthread_mutex_unlock(&ch->lock);
}

/* Take @q's pending events off its channel (the CQ is going away). */
static void channel_forget(struct rfw_vrb_cq *q)
{
	struct rfw_vrb_channel *ch = (struct rfw_vrb_channel *)q->ibv.channel;
	uint32_t i, kept = 0;
	uint64_t v;

	pthread_mutex_lock(&ch->lock);
	for (i = 0; i < ch->n; i++) {
		struct rfw_vrb_cq *p = ch->pending[(ch->head + i) % RFW_VRB_CHAN_MAX];

		if (p == q) {
			if (read(ch->ibv.fd, &v, sizeof(v)) < 0)
				v = 0; /* the count was there: it was written with the entry */
			continue;
		}
		ch->pending[(ch->head + kept++) % RFW_VRB_CHAN_MAX] = p;
	}
	ch->n = kept;
	pthread_mutex_unlock(&ch->lock);
}

/* Move what fits of @q's transport completions into its ring. */
static void collect_one(struct rfw_vrb_cq *q)
{
	uint32_t prod = q->prod, cons = __atomic_load_n(&q->cons, __ATOMIC_ACQUIRE);
	uint32_t room = q->mask + 1 - (prod - cons);
	struct rfw_wc w[COLLECT_CHUNK];
	int k, i;

	while (room != 0) {
		k = rfw_poll_cq(q->cq, room < COLLECT_CHUNK ? (int)room : COLLECT_CHUNK, w);
		if (k <= 0)
			break;
		for (i = 0; i < k; i++)
			q->ring[(prod + (uint32_t)i) & q->mask] = w[i];
		prod += (uint32_t)k;
		room -= (uint32_t)k;
		__atomic_store_n(&q->prod, prod, __ATOMIC_RELEASE);
	}
}

void rfw_vrb_cq_collect(void)
{
	struct rfw_vrb_cq *q;

	for (q = all_cqs; q != NULL; q = q->next) {
		collect_one(q);
		if (q->armed && q->prod != __atomic_load_n(&q->cons, __ATOMIC_ACQUIRE)) {
			q->armed = false;
			channel_post(q);
		}
	}
}

static int ring_alloc(struct rfw_vrb_cq *q, int cqe)
{
	uint32_t n = 1;

	while (n < (uint32_t)cqe && n < RING_MAX)
		n <<= 1;
	q->ring = calloc(n, sizeof(*q->ring));
	q->mask = n - 1;
	return q->ring != NULL ? 0 : -ENOMEM;
}

struct ibv_cq *rfw_vrb_create_cq(struct ibv_context *c, int cqe, void *cq_context,
                                 struct ibv_comp_channel *ch, int vector)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(c);
	struct rfw_vrb_cq *q;

	if (cqe <= 0 || vector != 0 || (ch != NULL && ch->context != c)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL || ring_alloc(q, cqe) != 0) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&q->cons_lock, NULL);
	rfw_eng_lock(x->eng);
	q->cq = rfw_create_cq(rfw_eng_dev(x->eng), (uint32_t)cqe);
	if (q->cq != NULL) {
		q->next = all_cqs;
		all_cqs = q;
		if (ch != NULL)
			ch->refcnt++;
	}
	rfw_eng_unlock(x->eng);
	if (q->cq == NULL) {
		pthread_mutex_destroy(&q->cons_lock);
		free(q->ring);
		free(q);
		return NULL;
	}
	q->ctx = x;
	q->ibv.context = c;
	q->ibv.channel = ch;
	q->ibv.cq_context = cq_context;
	q->ibv.cqe = cqe;
	pthread_mutex_init(&q->ibv.mutex, NULL);
	pthread_cond_init(&q->ibv.cond, NULL);
	return &q->ibv;
}

/*
 * ibv_resize_cq: a new ring with the unpolled completions, and the transport's CQ resized,
 * with both the consumers' lock and the engine lock held (no poll and no producer meanwhile).
 * EINVAL below the completions held (ring and transport together), as ibv_resize_cq(3) says.
 */
int rfw_vrb_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct rfw_vrb_cq *q = (struct rfw_vrb_cq *)cq;
	struct rfw_vrb_cq nq = {0};
	uint32_t n;
	int ret = 0;

	if (cqe <= 0 || cqe > (1 << 24))
		return EINVAL;
	if (ring_alloc(&nq, cqe) != 0)
		return ENOMEM;
	pthread_mutex_lock(&q->cons_lock);
	rfw_eng_lock(q->ctx->eng);
	n = q->prod - q->cons;
	if (n + rfw_cq_count(q->cq) > (uint32_t)cqe || n > nq.mask + 1)
		ret = EINVAL;
	else
		ret = -rfw_resize_cq(q->cq, (uint32_t)cqe);
	if (ret == 0) {
		for (uint32_t i = 0; i < n; i++)
			nq.ring[i] = q->ring[(q->cons + i) & q->mask];
		free(q->ring);
		q->ring = nq.ring;
		q->mask = nq.mask;
		__atomic_store_n(&q->cons, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&q->prod, n, __ATOMIC_RELEASE);
		cq->cqe = cqe;
		nq.ring = NULL;
	}
	rfw_eng_unlock(q->ctx->eng);
	pthread_mutex_unlock(&q->cons_lock);
	free(nq.ring);
	return ret;
}

int rfw_vrb_destroy_cq(struct ibv_cq *cq)
{
	struct rfw_vrb_cq *q = (struct rfw_vrb_cq *)cq, **pp;
	struct rfw_eng *e = q->ctx->eng;
	int ret;

	rfw_eng_lock(e);
	ret = rfw_destroy_cq(q->cq);
	if (ret == 0) {
		for (pp = &all_cqs; *pp != NULL; pp = &(*pp)->next)
			if (*pp == q) {
				*pp = q->next;
				break;
			}
		if (cq->channel != NULL)
			cq->channel->refcnt--;
	}
	rfw_eng_unlock(e);
	if (ret != 0)
		return -ret;
	if (cq->channel != NULL)
		channel_forget(q);
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	pthread_mutex_destroy(&q->cons_lock);
	free(q->ring);
	free(q);
	return 0;
}

/* Inline progress: drive the NIC until the channel has an event (or the fd is readable). */
static void inline_wait(struct rfw_vrb_channel *ch)
{
	struct rfw_eng *e = rfw_vrb_ctx_of(ch->ibv.context)->eng;
	struct pollfd pfd = {.fd = ch->ibv.fd, .events = POLLIN};

	while (poll(&pfd, 1, 0) == 0) {
		rfw_eng_lock(e);
		rfw_vrb_progress_step(e);
		rfw_eng_unlock(e);
		sched_yield();
	}
}

int rfw_vrb_get_cq_event(struct ibv_comp_channel *ibv, struct ibv_cq **cq, void **cq_context)
{
	struct rfw_vrb_channel *ch = (struct rfw_vrb_channel *)ibv;
	struct rfw_vrb_cq *q = NULL;
	uint64_t v;

	if (rfw_vrb_ctx_of(ibv->context)->inline_progress)
		inline_wait(ch);
	if (read(ibv->fd, &v, sizeof(v)) != sizeof(v))
		return -1; /* errno from read: EAGAIN on a non-blocking fd, EINTR */
	pthread_mutex_lock(&ch->lock);
	if (ch->n != 0) {
		q = ch->pending[ch->head];
		ch->head = (ch->head + 1) % RFW_VRB_CHAN_MAX;
		ch->n--;
	}
	pthread_mutex_unlock(&ch->lock);
	if (q == NULL) {
		errno = EAGAIN;
		return -1;
	}
	*cq = &q->ibv;
	*cq_context = q->ibv.cq_context;
	return 0;
}

void rfw_vrb_ack_cq_events(struct ibv_cq *cq, unsigned n)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += n;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

void rfw_vrb_wc_of(const struct rfw_wc *r, struct ibv_wc *w)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = r->wr_id;
	w->status = (enum ibv_wc_status)r->status;
	w->opcode = (enum ibv_wc_opcode)r->opcode;
	w->vendor_err = r->vendor_err;
	w->byte_len = r->byte_len;
	if (r->wc_flags & RFW_WC_WITH_INV)
		w->invalidated_rkey = r->invalidated_rkey;
	else
		w->imm_data = htobe32(r->imm_data);
	w->qp_num = r->qp_num;
	w->src_qp = r->src_qp;
	w->wc_flags = r->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
}

void rfw_vrb_cq_drive(struct rfw_vrb_cq *q)
{
	struct rfw_eng *e = q->ctx->eng;

	/*
	 * Inline mode: the poll drives the NIC. Thread mode: a poll that finds the ring empty
	 * drives it too when the progress thread is not doing so right now (trylock): a program
	 * spinning on its CQ then moves its own packets instead of waiting for the progress
	 * thread to be scheduled (docs/verbs.md "Progress").
	 */
	if (q->ctx->inline_progress) {
		rfw_eng_lock(e);
		rfw_vrb_progress_step(e);
		rfw_eng_unlock(e);
	} else if (__atomic_load_n(&q->prod, __ATOMIC_ACQUIRE) ==
	               __atomic_load_n(&q->cons, __ATOMIC_RELAXED) &&
	           rfw_eng_trylock(e)) {
		rfw_vrb_progress_step(e);
		rfw_eng_unlock(e);
	}
}

int rfw_vrb_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct rfw_vrb_cq *q = (struct rfw_vrb_cq *)cq;
	uint32_t cons, avail;
	int got = 0;

	rfw_vrb_cq_drive(q);
	if (n <= 0)
		return n < 0 ? -EINVAL : 0;
	pthread_mutex_lock(&q->cons_lock);
	cons = q->cons;
	avail = __atomic_load_n(&q->prod, __ATOMIC_ACQUIRE) - cons;
	while (got < n && avail != 0) {
		rfw_vrb_wc_of(&q->ring[cons & q->mask], &wc[got++]);
		cons++;
		avail--;
	}
	__atomic_store_n(&q->cons, cons, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&q->cons_lock);
	return got;
}

/* solicited_only is treated as "any": an event for every completion is a superset (docs). */
int rfw_vrb_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct rfw_vrb_cq *q = (struct rfw_vrb_cq *)cq;

	(void)solicited_only;
	if (cq->channel == NULL)
		return EINVAL;
	rfw_eng_lock(q->ctx->eng);
	q->armed = true;
	rfw_eng_unlock(q->ctx->eng);
	return 0;
}
