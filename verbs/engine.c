/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs/engine.h on dataplane/rfw_nic.h: EAL in the application's process, one DPDK port (the
 * first one the EAL options create, or a ring port looped back onto itself), a NIC on queue 0.
 * The only file of verbs/ that knows about DPDK.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "dataplane/rfw_nic.h"
#include "dataplane/rfw_port.h"
#include "verbs/engine.h"

#define ENG_MAX_ARGS 64
/* How long open waits for the link before going on with the port DOWN (a memif server's link
 * comes up only when its client connects; a memif client is restarted meanwhile so that it
 * retries a server that was not there yet). */
#define ENG_LINK_WAIT_MS 1000

struct rfw_eng {
	pthread_mutex_t lock;
	struct rfw_port *port;
	struct rfw_nic *nic;
	bool loopback;
	bool memif; /* net_memif: the link is the peer process's presence, not a cable */
};

static struct rfw_eng eng = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static bool opened;
static pid_t eng_pid;       /* the process that opened the engine (eng_linger) */
static bool eng_linger_off; /* rfw_eng_linger_skip: the rdma_cm settles at exit instead */

/* eng_linger: at most this long at exit, until the NIC has been quiet for ENG_LINGER_QUIET_NS. */
#define ENG_LINGER_NS       50000000ull
#define ENG_LINGER_QUIET_NS 2000000ull

static bool has_opt(char **argv, int argc, const char *a, const char *b)
{
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], a, strlen(a)) == 0 ||
		    (b && strncmp(argv[i], b, strlen(b)) == 0))
			return true;
	return false;
}

/*
 * EAL's argument vector: the user's options (split on blanks) after the defaults this machine
 * needs without hugepages; a default is left out when the user gave the option.
 */
static int eal_argv(const struct rfw_vconf *c, char *buf, char **argv)
{
	int argc = 0, user;
	char *save = NULL, *tok;

	argv[argc++] = "rocefw-verbs";
	user = argc;
	strcpy(buf, c->eal);
	for (tok = strtok_r(buf, " \t\n", &save); tok && argc < ENG_MAX_ARGS - 12;
	     tok = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = tok;
	if (!has_opt(argv + user, argc - user, "--huge", "--no-huge"))
		argv[argc++] = "--no-huge";
	if (!has_opt(argv + user, argc - user, "-m", "--socket-mem"))
		argv[argc++] = "-m512";
	if (!has_opt(argv + user, argc - user, "--no-pci", "-a"))
		argv[argc++] = "--no-pci";
	/* Private memory and no telemetry socket unless the user names a prefix (telemetry). */
	if (!has_opt(argv + user, argc - user, "--file-prefix", "--no-shconf")) {
		argv[argc++] = "--no-shconf";
		if (!has_opt(argv + user, argc - user, "--telemetry", "--no-telemetry"))
			argv[argc++] = "--no-telemetry";
	}
	if (!has_opt(argv + user, argc - user, "-l", "--lcores") &&
	    !has_opt(argv + user, argc - user, "-c", NULL))
		argv[argc++] = "-l0";
	if (!has_opt(argv + user, argc - user, "--log-level", NULL))
		argv[argc++] = "--log-level=lib.eal:error";
	argv[argc] = NULL;
	return argc;
}

/*
 * rte_eal_init() pins the calling thread (the application's) to the main lcore's CPU; give it
 * back the CPUs it had, so that two processes on a small machine are not pinned to one core.
 */
static int eal_start(const struct rfw_vconf *c)
{
	static char buf[RFW_VCONF_EAL_MAX];
	char *argv[ENG_MAX_ARGS];
	int argc = eal_argv(c, buf, argv), ret;
	cpu_set_t cpus;
	bool have = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;

	ret = rfw_eal_init(argc, argv);
	if (have)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	return ret < 0 ? ret : 0;
}

/* The built-in port: one ring that is both RX and TX, so every frame comes back. */
static int loopback_port(void)
{
	struct rte_ring *r =
	    rte_ring_create("rocefw_lo", 4096, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	int p;

	if (r == NULL)
		return -rte_errno;
	p = rte_eth_from_rings("rocefw_lo", &r, 1, &r, 1, (unsigned)rte_socket_id());
	return p < 0 ? -rte_errno : p;
}

static int first_port(void)
{
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p)
	return p;
	fprintf(stderr, "rocefw-verbs: the EAL options (--eal) created no DPDK port "
	                "(add e.g. --vdev=net_memif0,...)\n");
	return -ENODEV;
}

static bool is_memif(uint16_t port)
{
	struct rte_eth_dev_info di;

	return rte_eth_dev_info_get(port, &di) == 0 && di.driver_name != NULL &&
	       strcmp(di.driver_name, "net_memif") == 0;
}

static int eng_setup(struct rfw_eng *e, const struct rfw_vconf *c)
{
	struct rfw_port_conf pc = {.nb_mbufs = 8192};
	struct rfw_identity id = {.has_ip4 = true, .ip4 = c->ip4};
	struct rfw_nic_conf nc = {0};
	int ret = eal_start(c), port;

	if (ret < 0)
		return ret;
	e->loopback = c->eal[0] == '\0';
	port = e->loopback ? loopback_port() : first_port();
	if (port < 0)
		return port;
	if (e->loopback) {
		/* The ring PMD has an all-zero MAC: give the port a locally administered one. */
		const uint8_t mac[6] = {0x02,
		                        'r',
		                        (uint8_t)(c->ip4 >> 24),
		                        (uint8_t)(c->ip4 >> 16),
		                        (uint8_t)(c->ip4 >> 8),
		                        (uint8_t)c->ip4};

		memcpy(id.mac.addr_bytes, mac, 6);
	}
	e->port = rfw_port_setup((uint16_t)port, &pc, &id);
	if (e->port == NULL) {
		fprintf(stderr, "rocefw-verbs: port set-up failed: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	nc.dev_attr.max_qp = c->max_qp;
	nc.dev_attr.max_mr = 1024;
	e->nic = rfw_nic_create(e->port->q[0], &nc);
	if (e->nic == NULL) {
		fprintf(stderr, "rocefw-verbs: NIC creation failed: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	e->memif = is_memif((uint16_t)port);
	(void)rfw_port_link_wait(e->port, ENG_LINK_WAIT_MS); /* DOWN is reported by query_port */
	return 0;
}

/* ROCEFW_STATS=1: the counters a run leaves, for diagnosis (telemetry needs --file-prefix). */
static void print_stats(void)
{
	uint64_t c[RFW_CNT__COUNT];

	rfw_eng_lock(&eng);
	rfw_dev_counters(rfw_nic_dev(eng.nic), c);
	for (unsigned i = 0; i < RFW_CNT__COUNT; i++)
		if (c[i] != 0)
			fprintf(stderr, "rocefw-verbs: %s %" PRIu64 "\n",
			        rfw_counter_name((enum rfw_counter)i), c[i]);
	for (unsigned i = 0; i < RFW_PORT_CTR__COUNT; i++)
		if (rfw_port_ctr(eng.port, (enum rfw_port_ctr)i) != 0)
			fprintf(stderr, "rocefw-verbs: port %s %" PRIu64 "\n",
			        rfw_port_ctr_name((enum rfw_port_ctr)i),
			        rfw_port_ctr(eng.port, (enum rfw_port_ctr)i));
	for (unsigned i = 0; i < RFW_NIC_CTR__COUNT; i++)
		if (rfw_nic_ctr(eng.nic, (enum rfw_nic_ctr)i) != 0)
			fprintf(stderr, "rocefw-verbs: nic %s %" PRIu64 "\n",
			        rfw_nic_ctr_name((enum rfw_nic_ctr)i),
			        rfw_nic_ctr(eng.nic, (enum rfw_nic_ctr)i));
	rfw_eng_unlock(&eng);
}

uint64_t rfw_eng_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * At exit. The NIC lives in this process: what it has queued leaves only while the process is
 * still here. A responder's last ACK above all: a peer whose last SEND goes unacknowledged
 * retries into the void and fails (RETRY_EXC_ERR; ibv_rc_pingpong's server saw it when its
 * client exited right after its last completion). The kernel's NIC outlives a process; ours
 * drives itself here until nothing is left to send and its port's TX buffer has stayed empty
 * for ENG_LINGER_QUIET_NS (a peer reads a memif ring before it sees us gone), for at most
 * ENG_LINGER_NS. A trylock: exit may come from code that holds the engine lock; the progress
 * thread, if any, runs meanwhile. Not in a forked child: the NIC is its parent's.
 */
static void eng_linger(void)
{
	uint64_t t0 = rfw_eng_mono_ns(), quiet = t0;

	if (getpid() != eng_pid || __atomic_load_n(&eng_linger_off, __ATOMIC_RELAXED))
		return;
	for (uint64_t now = t0; now - t0 < ENG_LINGER_NS; now = rfw_eng_mono_ns()) {
		bool idle = false;

		if (rfw_eng_trylock(&eng)) {
			idle = rfw_eng_poll(&eng) == 0 && rfw_eng_tx_idle(&eng);
			rfw_eng_unlock(&eng);
		}
		if (!idle)
			quiet = now;
		else if (now - quiet >= ENG_LINGER_QUIET_NS)
			return;
		sched_yield();
	}
}

void rfw_eng_linger_skip(void)
{
	__atomic_store_n(&eng_linger_off, true, __ATOMIC_RELAXED);
}

struct rfw_eng *rfw_eng_open(const struct rfw_vconf *conf)
{
	static int err;

	pthread_mutex_lock(&open_lock);
	if (!opened) {
		err = eng_setup(&eng, conf);
		opened = true;
		if (err == 0) {
			eng_pid = getpid();
			atexit(eng_linger);
		}
		if (err == 0 && conf->stats)
			atexit(print_stats);
	}
	pthread_mutex_unlock(&open_lock);
	if (err != 0) {
		errno = -err;
		return NULL;
	}
	return &eng;
}

void rfw_eng_lock(struct rfw_eng *e)
{
	pthread_mutex_lock(&e->lock);
}

void rfw_eng_unlock(struct rfw_eng *e)
{
	pthread_mutex_unlock(&e->lock);
}

bool rfw_eng_trylock(struct rfw_eng *e)
{
	return pthread_mutex_trylock(&e->lock) == 0;
}

struct rfw_dev *rfw_eng_dev(struct rfw_eng *e)
{
	return rfw_nic_dev(e->nic);
}

void rfw_eng_port_info(struct rfw_eng *e, struct rfw_eng_port_info *pi)
{
	struct rte_eth_link link;

	memset(pi, 0, sizeof(*pi));
	if (rte_eth_link_get_nowait(e->port->port_id, &link) == 0) {
		/* A memif port is "plugged in" once started: its link comes up only when the peer
		 * process attaches, and programs (perftest) refuse a DOWN port at start-up, before
		 * they exchange anything with that peer. Frames sent before it attaches are lost
		 * and retransmitted like frames to a host that is not up yet. */
		pi->link_up = link.link_status == RTE_ETH_LINK_UP || e->memif;
		pi->speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
	}
	pi->ip_mtu = e->port->mtu;
	memcpy(pi->mac, e->port->id.mac.addr_bytes, 6);
	memcpy(pi->gid, e->port->gid, 16);
}

int rfw_eng_qp_attach(struct rfw_eng *e, struct rfw_qp *qp, const uint8_t dgid[16],
                      uint8_t traffic_class)
{
	struct rfw_nic_path path = {0};

	(void)traffic_class; /* the NIC's DSCP applies to every QP (rfw_nic_conf.dscp) */
	memcpy(path.dst_ip, dgid, 16);
	/* A QP of this device: frames to our own MAC come back on the loopback ring. */
	if (memcmp(dgid, e->port->gid, 16) == 0)
		path.dst_mac = e->port->id.mac;
	rfw_nic_qp_detach(e->nic, qp);
	return rfw_nic_qp_attach(e->nic, qp, &path);
}

int rfw_eng_resolve(struct rfw_eng *e, const uint8_t ip[16], uint8_t mac[6])
{
	if (memcmp(ip, e->port->gid, 16) == 0) {
		memcpy(mac, e->port->id.mac.addr_bytes, 6);
		return 0;
	}
	return rfw_nic_resolve(e->nic, ip, mac);
}

void rfw_eng_qp_detach(struct rfw_eng *e, struct rfw_qp *qp)
{
	rfw_nic_qp_detach(e->nic, qp);
}

unsigned rfw_eng_poll(struct rfw_eng *e)
{
	return rfw_nic_poll(e->nic);
}

bool rfw_eng_tx_idle(struct rfw_eng *e)
{
	return rfw_nic_tx_idle(e->nic);
}

uint64_t rfw_eng_clock_ns(struct rfw_eng *e)
{
	return rfw_nic_clock_ns(e->nic);
}
