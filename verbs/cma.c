/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process's rdma_cm: opened on the first rdma_* call (the rocefw device's context, QP1 and
 * the CM), stepped by the NIC's thread (rfw_vrb_progress_step) for QP1's MADs, the CM's
 * timers and pending address resolutions.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "verbs/cma.h"
#include "verbs/cma_agent.h"

/* How long rfw_cma_settle waits for what the CM owes its peers: a few CM round trips on a
   live peer, and short enough to go unnoticed when the peer is gone. */
#define CMA_LINGER_NS 200000000ull

static struct rfw_cma *the_cma; /* set once (pthread_once), then read-only */
static int the_err;
static pid_t the_pid; /* the process the CM was set up in (a forked child's exit is not its) */
/* What waiting for DREPs may take in all in this process (atomic): a peer that is gone costs
   it once, not once per id (cmtime destroys thousands); then only QP1 and the port are waited
   for. */
static uint64_t drep_budget_ns = CMA_LINGER_NS;

/*
 * What the CM and the NIC committed to send must be out before the process (and with it its CM
 * and NIC) is gone. The kernel's CM outlives a process that calls rdma_disconnect, destroys its
 * id and exits: its DREQ (and the DREQ's resends) still reach the peer. Ours lives in this
 * process: rdma_disconnect only posts the DREQ on QP1, and a process that exits before its
 * NIC's next poll takes the DREQ down with it; over memif, a DREQ in the ring as the process
 * exits is lost too when the peer's port sees the disconnect before its NIC reads the ring.
 * The peer then never sees DISCONNECTED (rping's server waits for ever). So rdma_destroy_id
 * (for its connection) and exit (for every other) drive the NIC here until QP1 has sent every
 * MAD, the DREQ has had its DREP (the peer has read all we sent before it: the RC QPs' last
 * ACKs too, on the same in-order port) and the port's TX buffer is empty; for at most
 * CMA_LINGER_NS, and DREPs for at most drep_budget_ns in all, so that nothing hangs on a peer
 * that is gone. The NIC's thread, if any, still runs meanwhile: both take the engine lock.
 */
void rfw_cma_settle(struct rfw_cma *cm, uint32_t conn)
{
	uint64_t t0 = rfw_eng_mono_ns(), now = t0, spent, left;
	uint64_t budget = __atomic_load_n(&drep_budget_ns, __ATOMIC_RELAXED);
	bool owed = true;

	while (owed && now - t0 < CMA_LINGER_NS) {
		if (rfw_eng_trylock(cm->eng)) {
			/* At exit, a REQ held for a listener (ctrl/cm_rx.c) would never be
			   answered: REJ 8 it, and any that comes meanwhile (a trylock: exit may
			   come from code that holds the lock). */
			if (conn == 0)
				rfw_cma_cm_stop_holding(cm, rfw_eng_clock_ns(cm->eng));
			rfw_vrb_progress_step(cm->eng);
			owed = rfw_cma_cm_owes(cm, conn, now - t0 < budget) ||
			       !rfw_eng_tx_idle(cm->eng);
			rfw_eng_unlock(cm->eng);
		}
		if (owed)
			sched_yield();
		now = rfw_eng_mono_ns();
	}
	spent = now - t0;
	left = __atomic_load_n(&drep_budget_ns, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&drep_budget_ns, &left, left > spent ? left - spent : 0,
	                                    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* At exit (atexit). Not in a forked child: the NIC is its parent's. */
static void cma_linger(void)
{
	struct rfw_cma *cm = __atomic_load_n(&the_cma, __ATOMIC_ACQUIRE);

	if (cm != NULL && getpid() == the_pid)
		rfw_cma_settle(cm, 0);
}

static void cma_setup(void)
{
	struct rfw_cma *cm;

	if (!rfw_vrb_device_ready()) {
		the_err = ENODEV;
		return;
	}
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL || (cm->verbs = rfw_vrb_open()) == NULL) {
		the_err = errno ? errno : ENOMEM;
		free(cm);
		return;
	}
	cm->ctx = rfw_vrb_ctx_of(cm->verbs);
	cm->eng = cm->ctx->eng;
	rfw_eng_lock(cm->eng);
	if (rfw_cma_cm_create(cm, rfw_eng_clock_ns(cm->eng)) != 0)
		the_err = EIO;
	rfw_eng_unlock(cm->eng);
	if (the_err) {
		fprintf(stderr, "rocefw-verbs: rdma_cm: no CM on %s\n", rfw_vrb_dev.conf.dev_name);
		return;
	}
	the_pid = getpid();
	__atomic_store_n(&the_cma, cm, __ATOMIC_RELEASE);
	atexit(cma_linger);
	rfw_eng_linger_skip(); /* cma_linger settles the NIC too, with the CM's debts */
}

struct rfw_cma *rfw_cma_get(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, cma_setup);
	if (the_cma == NULL)
		errno = the_err ? the_err : ENODEV;
	return the_cma;
}

/* Address resolution: the MAC of the destination by ARP, or ADDR_ERROR at the deadline. */
static void addr_step(struct rfw_cma *cm, struct rfw_cma_id *c, uint64_t now)
{
	uint8_t gid[16], mac[6];
	int rc;

	rfw_cma_gid_of(rfw_cma_dst_ip(c), gid);
	rc = rfw_eng_resolve(cm->eng, gid, mac);
	/* ARP gives up after its probes; the caller's timeout is what counts, as for the
	   kernel's rdma_cm: ask again (a new entry, new probes) until then */
	if ((rc == -EAGAIN || rc == -EHOSTUNREACH) && now < c->addr_deadline_ns)
		return;
	c->state = rc == 0 ? RFW_CMA_ADDR_BOUND : RFW_CMA_ERROR;
	rfw_cma_post(c, rc == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED : RDMA_CM_EVENT_ADDR_ERROR,
	             rc == 0 ? 0 : (rc == -EAGAIN || rc == -EHOSTUNREACH ? -ETIMEDOUT : rc), NULL,
	             0, NULL);
}

void rfw_cma_step(struct rfw_eng *e)
{
	struct rfw_cma *cm = __atomic_load_n(&the_cma, __ATOMIC_ACQUIRE);
	uint64_t now;

	if (cm == NULL || cm->eng != e)
		return;
	now = rfw_eng_clock_ns(e);
	if (cm->addr_queries != 0) {
		uint32_t still = 0;

		for (struct rfw_cma_id *c = cm->ids; c; c = c->next)
			if (c->state == RFW_CMA_ADDR_QUERY) {
				addr_step(cm, c, now);
				still += c->state == RFW_CMA_ADDR_QUERY;
			}
		cm->addr_queries = still;
	}
	rfw_cma_cm_step(cm, now);
}
