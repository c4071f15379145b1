/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file formats of HPCC's ns-3 simulator (github.com/alibaba-edu/High-Precision-Congestion-
 * Control, simulation/scratch/third.cc), so its topologies, flow files and FCT analysis scripts
 * work with rocefw-ns3 unchanged (docs/ns3.md "File formats"):
 *
 *   topology:  "nodes switches links", then the switch ids, then one "src dst rate delay
 *              error_rate" per link (rate as ns-3 writes it: 100Gbps; delay: 0.001ms, 1us, ...)
 *   flows:     the count, then one "src dst priority dport size start_time_s" per flow
 *   FCT:       one "sip dip sport dport size start_time fct standalone_fct" per finished flow,
 *              addresses in hex, times in ns
 *
 * Both readers are whitespace-token based as HPCC's (iostream >>), but strict: every field is
 * checked, a bad one is reported with its line number, trailing tokens are an error.
 */
#ifndef RFW_TOOLS_NS3_HPCC_FMT_H
#define RFW_TOOLS_NS3_HPCC_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest topology (nodes) and flow file (flows) the readers accept. */
#define RFW_HPCC_MAX_NODES 65536
#define RFW_HPCC_MAX_FLOWS 10000000

struct rfw_topo_link {
	uint32_t src, dst;
	uint64_t rate_bps;
	uint64_t delay_ns;
	double error_rate; /* probability a frame is lost on the link, 0..1 */
};

struct rfw_topo {
	uint32_t nodes, nswitches, nlinks;
	bool *is_switch; /* [nodes] */
	struct rfw_topo_link *link;
};

struct rfw_flow_spec {
	uint32_t src, dst;
	uint32_t pg;    /* priority group 0..7: the 802.1p priority (and DSCP pg << 3) */
	uint32_t dport; /* as given: reported in the FCT file */
	uint64_t size;  /* bytes, one RDMA WRITE */
	uint64_t start_ns;
};

/* 0, or -EINVAL with @err ("line N: ...") filled; -ENOMEM. rfw_topo_free() in every case. */
int rfw_topo_read(FILE *f, struct rfw_topo *t, char *err, size_t errlen);
void rfw_topo_free(struct rfw_topo *t);

/* Flows against topology @t (ends must be hosts, distinct). *out is malloc'd (free() it). */
int rfw_flows_read(FILE *f, const struct rfw_topo *t, struct rfw_flow_spec **out, uint32_t *n,
                   char *err, size_t errlen);

/* "100Gbps", "25Gb/s", "10Mbps", "1000000bps" -> bits/s. 0 or -EINVAL. */
int rfw_parse_rate(const char *s, uint64_t *bps);
/* "0.001ms", "1us", "500ns", "1s" -> ns (rounded). 0 or -EINVAL. */
int rfw_parse_delay(const char *s, uint64_t *ns);

/* HPCC's address of node @id: 11.x.y.1 (0x0b000001 + (id / 256) << 16 + (id % 256) << 8). */
static inline uint32_t rfw_hpcc_node_ip(uint32_t id)
{
	return 0x0b000001u + ((id / 256u) << 16) + ((id % 256u) << 8);
}

/* One FCT line as HPCC's qp_finish writes it (with the newline). */
int rfw_fct_line(char *buf, size_t len, uint32_t sip, uint32_t dip, uint32_t sport, uint32_t dport,
                 uint64_t size, uint64_t start_ns, uint64_t fct_ns, uint64_t standalone_ns);

#ifdef __cplusplus
}
#endif
#endif
