/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events of rocefw contexts: the port going ACTIVE or down (IBV_EVENT_PORT_ACTIVE,
 * IBV_EVENT_PORT_ERR), seen by a check of the port's link every ASYNC_LINK_CHECK_NS from the
 * NIC's progress, and delivered to every open context; an SRQ's limit (IBV_EVENT_SRQ_LIMIT_
 * REACHED) and a QP's affiliated events (communication established, request / access error,
 * last WQE reached: the transport's rfw_qp_event) to the context of their object. A context's
 * async_fd is an eventfd in semaphore mode (one count per queued event), so poll/epoll on it work
 * and each ibv_get_async_event read takes one event.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "verbs/vrb.h"

#define ASYNC_LINK_CHECK_NS 100000000ull /* 100 ms */

/* Open contexts (under ctx_lock). */
static struct rfw_vrb_ctx *ctxs;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
/* The link state last seen (-1: not yet), from the first open on (atomic). */
static int was_up = -1;

void rfw_vrb_async_add(struct rfw_vrb_ctx *x)
{
	struct rfw_eng_port_info pi;
	int unknown = -1;

	rfw_eng_port_info(x->eng, &pi);
	__atomic_compare_exchange_n(&was_up, &unknown, (int)pi.link_up, false, __ATOMIC_SEQ_CST,
	                            __ATOMIC_SEQ_CST);
	pthread_mutex_init(&x->ev_lock, NULL);
	pthread_mutex_lock(&ctx_lock);
	x->next = ctxs;
	ctxs = x;
	pthread_mutex_unlock(&ctx_lock);
}

void rfw_vrb_async_remove(struct rfw_vrb_ctx *x)
{
	struct rfw_vrb_ctx **pp;

	pthread_mutex_lock(&ctx_lock);
	for (pp = &ctxs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	pthread_mutex_unlock(&ctx_lock);
	pthread_mutex_destroy(&x->ev_lock);
}

static void post_ev(struct rfw_vrb_ctx *x, const struct ibv_async_event *ev)
{
	uint64_t one = 1;

	pthread_mutex_lock(&x->ev_lock);
	if (x->ev_n < RFW_VRB_ASYNC_MAX) {
		x->ev[(x->ev_head + x->ev_n) % RFW_VRB_ASYNC_MAX] = *ev;
		x->ev_n++;
		if (write(x->vctx.context.async_fd, &one, sizeof(one)) < 0)
			x->ev_n--; /* cannot happen below 2^64 - 1 counts */
	}
	pthread_mutex_unlock(&x->ev_lock);
}

static void post(struct rfw_vrb_ctx *x, enum ibv_event_type type)
{
	struct ibv_async_event ev = {.event_type = type};

	ev.element.port_num = 1;
	post_ev(x, &ev);
}

/* libibverbs' ibv_ack_async_event counts it in srq->events_completed (the SRQ's mutex/cond). */
void rfw_vrb_async_post_srq(struct rfw_vrb_ctx *x, struct ibv_srq *srq)
{
	struct ibv_async_event ev = {.event_type = IBV_EVENT_SRQ_LIMIT_REACHED};

	ev.element.srq = srq;
	post_ev(x, &ev);
}

void rfw_vrb_async_post_qp(struct rfw_vrb_ctx *x, struct ibv_qp *qp, enum ibv_event_type type)
{
	struct ibv_async_event ev = {.event_type = type};

	ev.element.qp = qp;
	post_ev(x, &ev);
}

void rfw_vrb_async_check(struct rfw_eng *e)
{
	static uint64_t last;
	struct rfw_eng_port_info pi;
	int before = __atomic_load_n(&was_up, __ATOMIC_SEQ_CST);
	uint64_t now = rfw_eng_clock_ns(e);
	struct rfw_vrb_ctx *x;

	if (now - last < ASYNC_LINK_CHECK_NS)
		return;
	last = now;
	rfw_eng_port_info(e, &pi);
	if (before == (int)pi.link_up || before == -1)
		return; /* no change, or no context yet */
	pthread_mutex_lock(&ctx_lock);
	for (x = ctxs; x != NULL; x = x->next)
		post(x, pi.link_up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
	pthread_mutex_unlock(&ctx_lock);
	__atomic_store_n(&was_up, (int)pi.link_up, __ATOMIC_SEQ_CST);
}

int rfw_vrb_get_async_event(struct ibv_context *c, struct ibv_async_event *ev)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(c);
	uint64_t v;
	int ret = -1;

	if (read(c->async_fd, &v, sizeof(v)) != sizeof(v))
		return -1; /* errno from read: EAGAIN on a non-blocking fd, EINTR */
	pthread_mutex_lock(&x->ev_lock);
	if (x->ev_n != 0) {
		*ev = x->ev[x->ev_head];
		x->ev_head = (x->ev_head + 1) % RFW_VRB_ASYNC_MAX;
		x->ev_n--;
		ret = 0;
	}
	pthread_mutex_unlock(&x->ev_lock);
	if (ret != 0)
		errno = EAGAIN;
	return ret;
}
