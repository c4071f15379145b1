/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_chan: the lifetimes of rdma_cm events and channels (verbs/cma_chan.c), run by rocefw-run
 * on the loopback port. rping's CM thread takes the DISCONNECTED event while its main thread
 * destroys the id and the channel and exits; librdmacm makes that safe, and so must we:
 *   drop     an event not yet got goes with its id: the channel's fd is no longer readable
 *            and a non-blocking rdma_get_cm_event says EAGAIN;
 *   ack      rdma_destroy_id returns only once another thread has acked the id's event it got;
 *   blocked  a thread blocked in rdma_get_cm_event when the channel is destroyed stays
 *            blocked (as in librdmacm's read of the closed fd), no crash.
 * Exit 0 when all hold, 1 naming the first that does not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *ch;
static int got, acked; /* atomic: the ack thread's progress */
static int returned;   /* atomic: the blocked reader came back */

static void fail(const char *what)
{
	fprintf(stderr, "cm_chan: FAIL %s (%s)\n", what, strerror(errno));
	exit(1);
}

/* A new id on @ch with ADDR_RESOLVED queued (our own address: no ARP wait). */
static struct rdma_cm_id *id_with_event(void)
{
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(7471)};
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_id *id;

	inet_pton(AF_INET, "10.0.0.1", &dst.sin_addr);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
		fail("rdma_create_id");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) != 0)
		fail("rdma_resolve_addr");
	if (poll(&p, 1, 5000) != 1)
		fail("no ADDR_RESOLVED within 5 s");
	return id;
}

static void test_drop(void)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *e;
	int fl = fcntl(ch->fd, F_GETFL);

	if (rdma_destroy_id(id_with_event()) != 0)
		fail("drop: rdma_destroy_id");
	if (poll(&p, 1, 0) != 0)
		fail("drop: the channel is still readable after its only id was destroyed");
	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	if (rdma_get_cm_event(ch, &e) == 0 || errno != EAGAIN)
		fail("drop: a non-blocking get found an event of a destroyed id");
	fcntl(ch->fd, F_SETFL, fl);
}

static void *ack_thread(void *arg)
{
	struct rdma_cm_event *e;

	(void)arg;
	if (rdma_get_cm_event(ch, &e) != 0 || e->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		fail("ack: the thread's rdma_get_cm_event");
	__atomic_store_n(&got, 1, __ATOMIC_SEQ_CST);
	usleep(200000); /* the handler, while main destroys the id */
	__atomic_store_n(&acked, 1, __ATOMIC_SEQ_CST);
	rdma_ack_cm_event(e);
	return NULL;
}

static void test_ack(void)
{
	struct rdma_cm_id *id = id_with_event();
	pthread_t t;

	if (pthread_create(&t, NULL, ack_thread, NULL) != 0)
		fail("ack: pthread_create");
	while (!__atomic_load_n(&got, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (rdma_destroy_id(id) != 0)
		fail("ack: rdma_destroy_id");
	if (!__atomic_load_n(&acked, __ATOMIC_SEQ_CST))
		fail("ack: rdma_destroy_id returned before the event it handed out was acked");
	pthread_join(t, NULL);
}

static void *blocked_thread(void *arg)
{
	struct rdma_cm_event *e;

	(void)arg;
	rdma_get_cm_event(ch, &e);
	__atomic_store_n(&returned, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_blocked(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, blocked_thread, NULL) != 0)
		fail("blocked: pthread_create");
	usleep(100000); /* inside rdma_get_cm_event, waiting */
	rdma_destroy_event_channel(ch);
	usleep(200000);
	if (__atomic_load_n(&returned, __ATOMIC_SEQ_CST))
		fail("blocked: the reader of a destroyed channel came back");
	/* it stays blocked: exit ends it, as it ends rping's CM thread */
}

int main(void)
{
	ch = rdma_create_event_channel();
	if (ch == NULL)
		fail("rdma_create_event_channel");
	test_drop();
	test_ack();
	test_blocked();
	printf("cm_chan: drop, ack, blocked: ok\n");
	return 0;
}
