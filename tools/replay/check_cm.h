/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-replay check's view of Communication Manager MADs (UD SEND to QP1, ctrl/cm_mad.h):
 * counted per attribute and per exchange (one connection's REQ, REP, RTU, REJ, MRA, DREQ,
 * DREP, joined by their communication IDs), with the service ID, QPNs and starting PSNs.
 */
#ifndef RFW_REPLAY_CHECK_CM_H
#define RFW_REPLAY_CHECK_CM_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/ib_hdr.h"

#define CHECK_CM_MAX_EXCHANGES 256

struct check_cm_exchange {
	uint32_t active_id, passive_id; /* communication IDs (REQ's Local, REP's Local) */
	uint64_t service_id;
	uint32_t req_qpn, rep_qpn, req_psn, rep_psn;
	uint64_t by_attr[8]; /* REQ 0x10 .. DREP 0x16, then other */
	uint16_t rej_reason;
};

struct check_cm {
	uint64_t mads, bad, by_attr[8];
	uint32_t n;
	uint64_t exchanges_dropped; /* more exchanges than the table holds */
	struct check_cm_exchange x[CHECK_CM_MAX_EXCHANGES];
};

/* @p is a parsed UD packet to QP1: decode and account it. */
void check_cm_account(struct check_cm *cm, const struct rfw_ib_pkt *p);
json_t *check_cm_json(const struct check_cm *cm);
void check_cm_print(const struct check_cm *cm, FILE *out);

#endif
