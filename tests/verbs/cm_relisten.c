/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_relisten: a listener replaced by another on the same port, as perftest -R's server does
 * (its control connection's listener is destroyed; after a sync over that connection a new
 * one listens for the test QPs, and the client connects as soon as the sync is done). Run by
 * rocefw-run on the loopback port, both ends in this process:
 *   1. a listener on port P; a client connects to it (accepted, established); the listener
 *      is destroyed;
 *   2. a second client connects to P at once, and only RELISTEN_MS later a new listener
 *      listens on P: the REQ that came first waits for it (docs/rdma-cm.md, listen grace),
 *      the new listener gets CONNECT_REQUEST and the client ESTABLISHED, not REJECTED with
 *      reason 8 (invalid service ID), which ended perftest 4.5's ib_read_lat -R in loaded
 *      suite runs (its client retries with ids it has freed);
 *   3. a third client connects to a port nobody listens on: REJECTED, reason 8, once the
 *      grace is over.
 * Exit 0 when all hold, 1 naming the first that does not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define PORT        7473
#define RELISTEN_MS 30

static struct rdma_event_channel *ch;

static void fail(const char *what)
{
	fprintf(stderr, "cm_relisten: FAIL %s (%s)\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The next event of the channel, which must be @type; its id and (for REJECTED) status. */
static struct rdma_cm_id *expect(enum rdma_cm_event_type type, int *status, const char *what)
{
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;

	if (rdma_get_cm_event(ch, &e) != 0)
		fail(what);
	if (e->event != type) {
		fprintf(stderr, "cm_relisten: FAIL %s: %s (status %d), not %s\n", what,
		        rdma_event_str(e->event), e->status, rdma_event_str(type));
		exit(1);
	}
	id = e->id;
	if (status)
		*status = e->status;
	rdma_ack_cm_event(e);
	return id;
}

static struct sockaddr_in addr(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};

	inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
	return a;
}

static struct rdma_cm_id *listener(void)
{
	struct sockaddr_in a = addr(PORT);
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(id, (struct sockaddr *)&a) != 0 || rdma_listen(id, 4) != 0)
		fail("listener");
	return id;
}

static struct rdma_cm_id *qp_on(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC};

	if (rdma_create_qp(id, NULL, &qa) != 0)
		fail("rdma_create_qp");
	return id;
}

/* A client id through ROUTE_RESOLVED, its QP made, REQ sent to @port. */
static struct rdma_cm_id *connect_to(uint16_t port)
{
	struct sockaddr_in a = addr(port);
	struct rdma_conn_param p = {.retry_count = 7, .rnr_retry_count = 7};
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 2000) != 0)
		fail("client id");
	expect(RDMA_CM_EVENT_ADDR_RESOLVED, NULL, "client: address");
	if (rdma_resolve_route(id, 2000) != 0)
		fail("rdma_resolve_route");
	expect(RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, "client: route");
	if (rdma_connect(qp_on(id), &p) != 0)
		fail("rdma_connect");
	return id;
}

/* The listener's CONNECT_REQUEST accepted; ESTABLISHED on both ends (in either order). */
static void accept_one(const char *what)
{
	struct rdma_cm_id *child = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, what);
	struct rdma_conn_param p = {.retry_count = 7, .rnr_retry_count = 7};

	if (rdma_accept(qp_on(child), &p) != 0)
		fail("rdma_accept");
	expect(RDMA_CM_EVENT_ESTABLISHED, NULL, what);
	expect(RDMA_CM_EVENT_ESTABLISHED, NULL, what);
}

int main(void)
{
	struct rdma_cm_id *l;
	int status;
	double t0;

	ch = rdma_create_event_channel();
	if (ch == NULL)
		fail("rdma_create_event_channel");
	l = listener();
	connect_to(PORT);
	accept_one("first connection");
	if (rdma_destroy_id(l) != 0)
		fail("rdma_destroy_id (listener)");

	connect_to(PORT); /* its REQ finds no listener for RELISTEN_MS */
	usleep(RELISTEN_MS * 1000);
	l = listener();
	accept_one("a REQ before the new listener");

	t0 = now_ms();
	connect_to(PORT + 1);
	expect(RDMA_CM_EVENT_REJECTED, &status, "nobody listens");
	if (status != 8) {
		fprintf(stderr, "cm_relisten: FAIL nobody listens: REJECTED with %d, not 8\n",
		        status);
		return 1;
	}
	printf("cm_relisten: replaced listener, REQ first: established; nobody listens: REJ 8 "
	       "after %.0f ms: ok\n",
	       now_ms() - t0);
	if (rdma_destroy_id(l) != 0)
		fail("rdma_destroy_id (second listener)");
	return 0;
}
