/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC's progress thread (the "firmware core" of the device): polls the NIC under the engine
 * lock, sends completion events, and backs off when idle so that two processes each with a NIC
 * fit on a 2-core machine. Idle back-off, by the time since the last poll that did work
 * (docs/verbs.md "Progress"):
 *   - up to PROG_SPIN_NS: poll again at once;
 *   - up to PROG_YIELD_NS: sched_yield() between polls (gives the core to the application or
 *     to the other process, and stays runnable: a program that waits for data by watching
 *     memory, as ib_write_lat does, calls no verb and relies on this thread);
 *   - then sleep on the doorbell eventfd for PROG_SLEEP_MIN_US, doubling to PROG_SLEEP_MAX_US.
 *     Posting a WR rings the doorbell (a write to the eventfd, only while the thread sleeps),
 *     so a sleeping NIC starts sending at once; frames arriving meanwhile wait at most the
 *     current sleep.
 * Any work resets the back-off.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "verbs/cma.h"
#include "verbs/vrb.h"

#define PROG_SPIN_NS      20000ull    /* 20 us */
#define PROG_YIELD_NS     20000000ull /* 20 ms */
#define PROG_SLEEP_MIN_US 20
#define PROG_SLEEP_MAX_US 1000

static pthread_t thread;
static bool started;
static int doorbell_fd = -1;
static int sleeping; /* atomic: the thread sleeps on doorbell_fd */

unsigned rfw_vrb_progress_step(struct rfw_eng *e)
{
	unsigned n = rfw_eng_poll(e);

	/* Every time, not only after work: completions of a post in ERR (flushed at once), and a
	 * CQ armed since the last work. */
	rfw_vrb_cq_collect();
	rfw_vrb_async_check(e);
	rfw_cma_step(e); /* the rdma_cm: QP1, CM timers, ARP for ids */
	return n;
}

static void sleep_on_doorbell(unsigned us)
{
	struct pollfd pfd = {.fd = doorbell_fd, .events = POLLIN};
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)us * 1000};
	uint64_t v;

	__atomic_store_n(&sleeping, 1, __ATOMIC_SEQ_CST);
	if (ppoll(&pfd, 1, &ts, NULL) > 0 && read(doorbell_fd, &v, sizeof(v)) < 0)
		v = 0;
	__atomic_store_n(&sleeping, 0, __ATOMIC_SEQ_CST);
}

static void *progress_main(void *arg)
{
	struct rfw_eng *e = arg;
	unsigned sleep_us = PROG_SLEEP_MIN_US, n;
	uint64_t now, busy = 0;

	for (;;) {
		rfw_eng_lock(e);
		n = rfw_vrb_progress_step(e);
		now = rfw_eng_clock_ns(e);
		rfw_eng_unlock(e);
		if (n != 0) {
			busy = now;
			sleep_us = PROG_SLEEP_MIN_US;
		} else if (now - busy <= PROG_SPIN_NS) {
			continue;
		} else if (now - busy <= PROG_YIELD_NS) {
			sched_yield();
		} else {
			sleep_on_doorbell(sleep_us);
			if (sleep_us < PROG_SLEEP_MAX_US)
				sleep_us *= 2;
		}
	}
	return NULL;
}

int rfw_vrb_progress_start(struct rfw_eng *e)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (!started) {
		doorbell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (doorbell_fd < 0)
			ret = -errno;
		else if ((ret = -pthread_create(&thread, NULL, progress_main, e)) == 0)
			pthread_setname_np(thread, "rocefw-nic");
		started = ret == 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void rfw_vrb_progress_doorbell(void)
{
	uint64_t one = 1;

	if (__atomic_load_n(&sleeping, __ATOMIC_SEQ_CST) &&
	    write(doorbell_fd, &one, sizeof(one)) < 0)
		return; /* the counter is full: the thread is being woken anyway */
}
