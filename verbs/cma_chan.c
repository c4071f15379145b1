/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm event channels: a real fd (an eventfd) that programs poll, epoll or make
 * non-blocking, as they do librdmacm's /dev/infiniband/rdma_cm fd. It is readable while the
 * channel holds an event (each event adds to its count, the queue's emptying clears it, both
 * under the channel's lock); rdma_get_cm_event hands out the oldest event. With inline
 * progress nothing else drives the NIC, so a blocking wait drives it itself.
 *
 * Lifetimes are librdmacm's (the kernel's ucma): rdma_destroy_id drops the id's events not
 * handed out yet and waits until those handed out are acked; a thread in rdma_get_cm_event
 * holds a reference on the channel (memory and fd), so that the channel destroyed meanwhile
 * leaves it waiting on an fd that never becomes readable, as a thread inside librdmacm's read
 * of a closed rdma_cm fd stays blocked. Without these, rping's CM thread, woken by the
 * DISCONNECTED event while the main thread destroyed the id and the channel and exited, took
 * the event from freed memory (SIGSEGV at exit) or ran its handler on the freed id.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "verbs/cma.h"

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rfw_cma_chan *c;

	if (rfw_cma_get() == NULL)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->ch.fd = eventfd(0, EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->acked, NULL);
	c->refs = 1;
	return &c->ch;
}

static void chan_put(struct rfw_cma_chan *c)
{
	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	close(c->ch.fd);
	pthread_cond_destroy(&c->acked);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The queue has just become empty (channel lock held): the fd stops being readable. */
static void chan_emptied(struct rfw_cma_chan *c)
{
	uint64_t v;

	c->tail = NULL;
	if (read(c->ch.fd, &v, sizeof(v)) < 0) /* the count is at least 1: no wait */
		v = 0;
}

void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct rfw_cma_chan *c = (struct rfw_cma_chan *)ch;
	struct rfw_cma_ev *e;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	while ((e = c->head) != NULL) {
		c->head = e->next;
		free(e);
	}
	if (c->tail != NULL)
		chan_emptied(c);
	pthread_mutex_unlock(&c->lock);
	chan_put(c); /* freed now, or by the last rdma_get_cm_event under way */
}

/* Take @c's events out of its channel (lock held): its own, and for a listener the requests
 * not handed out, whose new ids go on @reqs for rfw_cma_chan_forget to destroy. */
static void chan_drop(struct rfw_cma_chan *ch, struct rfw_cma_id *c, struct rfw_cma_ev **reqs)
{
	struct rfw_cma_ev **p = &ch->head, *e, *last = NULL;
	bool had = ch->head != NULL;

	while ((e = *p) != NULL) {
		if (e->owner != c && e->ev.id != &c->id) {
			last = e;
			p = &e->next;
			continue;
		}
		*p = e->next;
		if (e->ev.id != &c->id) { /* a request to listener @c: its new id goes too */
			e->next = *reqs;
			*reqs = e;
		} else {
			free(e);
		}
	}
	ch->tail = last;
	if (had && ch->head == NULL)
		chan_emptied(ch);
}

void rfw_cma_chan_forget(struct rfw_cma_id *c)
{
	struct rfw_cma_chan *ch = (struct rfw_cma_chan *)c->id.channel;
	struct rfw_cma_ev *reqs = NULL, *e;

	pthread_mutex_lock(&ch->lock);
	chan_drop(ch, c, &reqs);
	while (c->ev_out != 0)
		pthread_cond_wait(&ch->acked, &ch->lock);
	pthread_mutex_unlock(&ch->lock);
	while ((e = reqs) != NULL) {
		reqs = e->next;
		rdma_destroy_id(e->ev.id);
		free(e);
	}
}

int rfw_cma_post(struct rfw_cma_id *id, enum rdma_cm_event_type type, int status, const void *pdata,
                 uint8_t pdata_len, struct rfw_cma_id *listener)
{
	/* A connection request goes to the listener's channel (the new id's may be its own). */
	struct rfw_cma_chan *c =
	    (struct rfw_cma_chan *)(listener ? listener->id.channel : id->id.channel);
	struct rfw_cma_ev *e = calloc(1, sizeof(*e));
	uint64_t one = 1;
	int rc = 0;

	if (e == NULL)
		return -ENOMEM;
	e->ev.id = &id->id;
	e->ev.listen_id = listener ? &listener->id : NULL;
	e->owner = listener ? listener : id;
	e->ev.event = type;
	e->ev.status = status;
	if (pdata_len > RFW_CMA_PDATA_MAX)
		pdata_len = RFW_CMA_PDATA_MAX;
	if (pdata_len) {
		memcpy(e->pdata, pdata, pdata_len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = pdata_len;
	}
	/* What the peer asked for (a request) or granted (a reply). */
	e->ev.param.conn.responder_resources = id->remote.init_depth;
	e->ev.param.conn.initiator_depth = id->remote.resp_res;
	e->ev.param.conn.flow_control = id->remote.flow_control;
	e->ev.param.conn.retry_count = id->remote.retry_cnt;
	e->ev.param.conn.rnr_retry_count = id->remote.rnr_retry;
	e->ev.param.conn.srq = id->remote.srq;
	e->ev.param.conn.qp_num = id->remote.qpn;
	pthread_mutex_lock(&c->lock);
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	if (write(c->ch.fd, &one, sizeof(one)) < 0) /* a wake-up per event, as ucma's */
		rc = -errno;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Inline progress: drive the NIC until the channel has an event (or forever). */
static void wait_inline(struct rfw_cma *cm, int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	for (;;) {
		rfw_eng_lock(cm->eng);
		rfw_vrb_progress_step(cm->eng);
		rfw_eng_unlock(cm->eng);
		if (poll(&p, 1, 0) > 0)
			return;
	}
}

/* The oldest event of @c, handed out (counted on its owner until acked), or NULL. */
static struct rfw_cma_ev *chan_pop(struct rfw_cma_chan *c)
{
	struct rfw_cma_ev *e;

	pthread_mutex_lock(&c->lock);
	e = c->head;
	if (e != NULL) {
		c->head = e->next;
		if (c->head == NULL)
			chan_emptied(c);
		e->next = NULL;
		e->owner->ev_out++;
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* Wait until @c's fd is readable: 0, or -1 and errno (EAGAIN on a non-blocking channel). */
static int chan_wait(struct rfw_cma *cm, struct rfw_cma_chan *c)
{
	struct pollfd p = {.fd = c->ch.fd, .events = POLLIN};

	if (fcntl(c->ch.fd, F_GETFL) & O_NONBLOCK) {
		errno = EAGAIN;
		return -1;
	}
	if (cm->ctx->inline_progress)
		wait_inline(cm, c->ch.fd);
	else if (poll(&p, 1, -1) < 0 && errno != EINTR)
		return -1;
	return 0;
}

int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct rfw_cma_chan *c = (struct rfw_cma_chan *)ch;
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_ev *e;

	if (c == NULL || event == NULL || cm == NULL) {
		errno = EINVAL;
		return -1;
	}
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
	while ((e = chan_pop(c)) == NULL && chan_wait(cm, c) == 0)
		;
	chan_put(c);
	if (e == NULL)
		return -1;
	*event = &e->ev; /* id->event is a synchronous id's (rfw_cma_complete) */
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rfw_cma_ev *e = (struct rfw_cma_ev *)event;
	struct rfw_cma_chan *c;

	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* The owner, not ev.id (a request's new id may be gone already): its destruction waits
	   for this ack, so it and its channel are still there. */
	c = (struct rfw_cma_chan *)e->owner->id.channel;
	pthread_mutex_lock(&c->lock);
	if (--e->owner->ev_out == 0)
		pthread_cond_broadcast(&c->acked);
	pthread_mutex_unlock(&c->lock);
	free(e);
	return 0;
}

/*
 * rsocket's rpoll, which rping waits on its channel with: rocefw has no rsockets, so every fd
 * is a plain one; with inline progress the wait drives the NIC in slices.
 */
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct rfw_cma *cm = rfw_cma_get();
	struct timespec t0, t;
	int n;

	if (cm == NULL || !cm->ctx->inline_progress)
		return poll(fds, nfds, timeout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		rfw_eng_lock(cm->eng);
		rfw_vrb_progress_step(cm->eng);
		rfw_eng_unlock(cm->eng);
		n = poll(fds, nfds, 0);
		if (n != 0 || timeout == 0)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout > 0 &&
		    (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= timeout)
			return 0;
	}
}
