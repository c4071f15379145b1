/* SPDX-License-Identifier: BSD-3-Clause */
/* librocefw logging: one DPDK log type, "rocefw" (RTE_LOG_REGISTER_DEFAULT in rfw_port.c);
 * raise it with the EAL option --log-level=rocefw:debug. */
#ifndef RFW_DATAPLANE_RFW_LOG_H
#define RFW_DATAPLANE_RFW_LOG_H

#include <rte_log.h>

extern int rfw_logtype;

#define RFW_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, rfw_logtype, "rocefw: " fmt "\n", ##__VA_ARGS__)

#endif
