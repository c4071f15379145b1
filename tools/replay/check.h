/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `rocefw-replay check`: decode every frame of a capture, verify every ICRC, and account
 * opcodes, flows, ECN, CNPs, AETH syndromes, PSN gaps and retransmissions. The per-frame entry
 * point is separate from file reading so that fuzzing and tests can drive it directly.
 */
#ifndef RFW_TOOLS_REPLAY_CHECK_H
#define RFW_TOOLS_REPLAY_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* Schema of the JSON report; bump when a field changes meaning or goes away. */
#define RFW_CHECK_SCHEMA "rocefw.replay.check/1"

/* Link-layer types (pcap LINKTYPE_* values) the checker decodes. */
#define RFW_LINKTYPE_ETHERNET   1
#define RFW_LINKTYPE_RAW        101
#define RFW_LINKTYPE_LINUX_SLL  113
#define RFW_LINKTYPE_IPV4       228
#define RFW_LINKTYPE_IPV6       229
#define RFW_LINKTYPE_LINUX_SLL2 276
/* libpcap hands raw-IP captures over as DLT_RAW, whose value differs by platform. */
#define RFW_DLT_RAW     12
#define RFW_DLT_RAW_BSD 14

/* Largest frame a capture record can describe that the checker decodes (jumbo + margin). */
#define RFW_CHECK_MAX_FRAME 65536
struct rfw_check;

struct rfw_check_opts {
	/* At most this many malformed / warned frames are listed individually (all are counted). */
	unsigned max_listed;
};

/* NULL on allocation failure. */
struct rfw_check *rfw_check_new(const struct rfw_check_opts *opts);
void rfw_check_free(struct rfw_check *c);

/* Whether rfw_check_frame() can decode frames of this link type. */
int rfw_check_linktype_supported(int linktype);

/*
 * Account one captured frame: @caplen bytes at @data, @wirelen bytes on the wire, timestamp in
 * ns. Never reads outside [data, data + caplen). Returns 0, or -ENOMEM if a new flow could not
 * be recorded (the frame is still counted).
 */
int rfw_check_frame(struct rfw_check *c, int linktype, const uint8_t *data, uint32_t caplen,
                    uint32_t wirelen, uint64_t ts_ns);

void rfw_check_print(const struct rfw_check *c, const char *file, FILE *out);
/* A new reference the caller owns, or NULL on allocation failure. */
json_t *rfw_check_json(const struct rfw_check *c, const char *file);

#endif
