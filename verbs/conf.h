/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration rocefw-run hands to the preloaded librocefw-verbs.so, through the
 * environment. Read once, when the device list is first built or the device first opened;
 * never on the fast path. docs/verbs.md "Configuration" lists the variables.
 */
#ifndef RFW_VERBS_CONF_H
#define RFW_VERBS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RFW_VCONF_EAL_MAX  2048
#define RFW_VCONF_NAME_MAX 32

enum rfw_vconf_progress {
	RFW_PROGRESS_THREAD, /* a progress thread drives the NIC (the default) */
	RFW_PROGRESS_INLINE, /* the application's verb calls drive it */
};

struct rfw_vconf {
	/* ROCEFW_EAL: EAL options of a DPDK port; empty = the built-in loopback port. */
	char eal[RFW_VCONF_EAL_MAX];
	/* ROCEFW_IP: the port's IPv4 address, host order; default 10.0.0.1 (loopback only). */
	uint32_t ip4;
	/* ROCEFW_DEV: the device name; default "rocefw0". */
	char dev_name[RFW_VCONF_NAME_MAX];
	/* ROCEFW_PROGRESS: thread (default) or inline. */
	enum rfw_vconf_progress progress;
	/* ROCEFW_STATS=1: print the non-zero port and transport counters to stderr at exit. */
	bool stats;
	/* ROCEFW_MAX_QP: QPs the device holds (ibv_query_device max_qp), QP1 included;
	 * default 256, range RFW_VCONF_MAX_QP_MIN..RFW_VCONF_MAX_QP_MAX. */
	uint32_t max_qp;
};

#define RFW_VCONF_MAX_QP_DEFAULT 256
#define RFW_VCONF_MAX_QP_MIN     16
#define RFW_VCONF_MAX_QP_MAX     65536

/* Parse a QP count in the range above; 0 or -EINVAL. Shared with rocefw-run. */
int rfw_vconf_parse_max_qp(const char *s, uint32_t *max_qp);

/* Default IPv4 address of the built-in loopback port (10.0.0.1). */
#define RFW_VCONF_LOOPBACK_IP4 0x0a000001u

/*
 * Fill @c from the environment. 0, or -EINVAL with a message naming the variable in @err.
 */
int rfw_vconf_read(struct rfw_vconf *c, char *err, size_t errlen);

/* Parse a dotted IPv4 address into host order; 0 or -EINVAL. Shared with rocefw-run. */
int rfw_vconf_parse_ip4(const char *s, uint32_t *ip4);

#endif
