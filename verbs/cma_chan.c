/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm event channels: a real fd (an eventfd in semaphore mode, one count per queued event)
 * that programs poll, epoll or make non-blocking, as they do librdmacm's /dev/infiniband/rdma_cm
 * fd; rdma_get_cm_event reads one count and hands out the oldest event. With inline progress
 * nothing else drives the NIC, so a blocking wait drives it itself.
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
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct rfw_cma_chan *c = (struct rfw_cma_chan *)ch;
	struct rfw_cma_ev *e;

	if (c == NULL)
		return;
	while ((e = c->head) != NULL) {
		c->head = e->next;
		free(e);
	}
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int rfw_cma_post(struct rfw_cma_id *id, enum rdma_cm_event_type type, int status, const void *pdata,
                 uint8_t pdata_len, struct rfw_cma_id *listener)
{
	/* A connection request goes to the listener's channel (the new id's may be its own). */
	struct rfw_cma_chan *c =
	    (struct rfw_cma_chan *)(listener ? listener->id.channel : id->id.channel);
	struct rfw_cma_ev *e = calloc(1, sizeof(*e));
	uint64_t one = 1;

	if (e == NULL)
		return -ENOMEM;
	e->ev.id = &id->id;
	e->ev.listen_id = listener ? &listener->id : NULL;
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
	pthread_mutex_unlock(&c->lock);
	if (write(c->ch.fd, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
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

int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct rfw_cma_chan *c = (struct rfw_cma_chan *)ch;
	struct rfw_cma *cm = rfw_cma_get();
	struct rfw_cma_ev *e;
	uint64_t v;

	if (c == NULL || event == NULL || cm == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (cm->ctx->inline_progress && !(fcntl(ch->fd, F_GETFL) & O_NONBLOCK))
		wait_inline(cm, ch->fd);
	if (read(ch->fd, &v, sizeof(v)) != sizeof(v))
		return -1; /* errno from read: EAGAIN on a non-blocking channel */
	pthread_mutex_lock(&c->lock);
	e = c->head;
	c->head = e->next;
	if (c->head == NULL)
		c->tail = NULL;
	pthread_mutex_unlock(&c->lock);
	e->next = NULL;
	*event = &e->ev; /* id->event is a synchronous id's (rfw_cma_complete) */
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	free(event); /* the event's id may be gone already (a request's new id): not touched */
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
