/* SPDX-License-Identifier: BSD-3-Clause */
#include "check.h"
#include "check_cm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"
#include "wire/ib_hdr.h"
#include "flow_index.h"

#define MAX_REASONS 48

struct flow {
	uint8_t src[16];
	uint8_t dst[16];
	uint32_t dqpn;
	uint16_t udp_sport; /* first seen */
	uint64_t packets, payload_bytes, requests, responses;
	uint64_t ce, cnps, acks, rnr_naks, naks;
	uint64_t psn_gaps, psn_missing, retransmissions, resp_retransmissions;
	uint64_t first_ts, last_ts;
	uint32_t first_psn, last_psn;
	bool have_psn;
	/* Requests: the PSN range the next new request may start at (a READ of unknown path MTU
	 * spans a range). A request below it was sent before; one above it means PSNs missing. */
	bool have_req;
	uint32_t front_lo, front_hi;
	/* READ responses: the PSN after the highest one seen. */
	bool have_rresp;
	uint32_t rresp_next;
};

struct listed {
	uint64_t frame;
	const char *reason; /* NULL: not malformed, only warnings */
	uint32_t warnings;
};

struct reason_count {
	const char *name;
	uint64_t n;
};

struct rfw_check {
	struct rfw_check_opts opts;
	uint64_t frames, roce, not_ip, not_udp, not_rocev2;
	uint64_t icrc_ok, icrc_bad, icrc_unchecked, snap_truncated;
	uint64_t malformed, warned, cnps, bytes;
	uint64_t first_ts, last_ts;
	uint64_t ecn[4];
	uint64_t by_opcode[256];
	uint64_t by_syndrome[256];
	uint32_t pmtu; /* largest FIRST/MIDDLE payload seen: those packets are exactly one MTU */
	struct reason_count reasons[MAX_REASONS];
	unsigned nreasons;
	struct listed *list;
	unsigned nlist;
	struct flow *flows;
	uint32_t nflows, cap_flows;
	struct rfw_flow_index ix; /* (src, dst, dqpn) -> index in flows */
	/* A frame cut by the snap length is parsed from a zero-filled copy of its wire length,
	 * so the lengths in its headers hold; only bytes below caplen are ever used. */
	uint8_t snapbuf[RFW_CHECK_MAX_FRAME];
	struct check_cm cm; /* MADs to QP1 (check_cm.c) */
};

struct rfw_check *rfw_check_new(const struct rfw_check_opts *opts)
{
	struct rfw_check *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->opts = *opts;
	if (c->opts.max_listed) {
		c->list = calloc(c->opts.max_listed, sizeof(*c->list));
		if (c->list == NULL) {
			free(c);
			return NULL;
		}
	}
	return c;
}

void rfw_check_free(struct rfw_check *c)
{
	if (c == NULL)
		return;
	free(c->list);
	free(c->flows);
	rfw_flow_index_free(&c->ix);
	free(c);
}

int rfw_check_linktype_supported(int linktype)
{
	switch (linktype) {
	case RFW_LINKTYPE_ETHERNET:
	case RFW_LINKTYPE_RAW:
	case RFW_DLT_RAW:
	case RFW_DLT_RAW_BSD:
	case RFW_LINKTYPE_LINUX_SLL:
	case RFW_LINKTYPE_IPV4:
	case RFW_LINKTYPE_IPV6:
	case RFW_LINKTYPE_LINUX_SLL2:
		return 1;
	default:
		return 0;
	}
}

/* ---- flow table ---- */

static struct flow *flow_get(struct rfw_check *c, const struct rfw_frame_view *v, uint32_t qpn)
{
	int64_t i = rfw_flow_index_find(&c->ix, v->src_ip, v->dst_ip, qpn);
	struct flow *f;

	if (i >= 0)
		return &c->flows[i];
	if (c->nflows == c->cap_flows) {
		uint32_t ncap = c->cap_flows ? c->cap_flows * 2 : 16;
		struct flow *nf = realloc(c->flows, ncap * sizeof(*nf));

		if (nf == NULL)
			return NULL;
		c->flows = nf;
		c->cap_flows = ncap;
	}
	if (rfw_flow_index_insert(&c->ix, v->src_ip, v->dst_ip, qpn) < 0)
		return NULL;
	f = &c->flows[c->nflows++];
	memset(f, 0, sizeof(*f));
	memcpy(f->src, v->src_ip, 16);
	memcpy(f->dst, v->dst_ip, 16);
	f->dqpn = qpn;
	f->udp_sport = v->udp_sport;
	return f;
}

/* ---- per-frame accounting ---- */

static void note(struct rfw_check *c, const char *reason, uint32_t warnings)
{
	if (reason) {
		unsigned i;

		c->malformed++;
		for (i = 0; i < c->nreasons && strcmp(c->reasons[i].name, reason) != 0; i++)
			;
		if (i == c->nreasons && i < MAX_REASONS) {
			c->reasons[i].name = reason;
			c->nreasons++;
		}
		if (i < MAX_REASONS)
			c->reasons[i].n++;
	} else {
		c->warned++;
	}
	if (c->nlist < c->opts.max_listed)
		c->list[c->nlist++] = (struct listed){c->frames, reason, warnings};
}

/* How many PSNs a READ request of @len bytes consumes (IBA 9.7.4.1.2: one per response). */
static void read_span(const struct rfw_check *c, uint32_t len, uint32_t *lo, uint32_t *hi)
{
	if (c->pmtu) {
		*lo = *hi = len ? (len + c->pmtu - 1) / c->pmtu : 1;
		return;
	}
	/* Path MTU unknown so far: anything from 4096 down to 256 bytes per packet. */
	*lo = len ? (len + 4095) / 4096 : 1;
	*hi = len ? (len + 255) / 256 : 1;
}

static void track_psn(struct rfw_check *c, struct flow *f, const struct rfw_ib_pkt *p)
{
	uint32_t q = p->bth.psn, lo = 1, hi = 1;
	unsigned fl = p->op->flags;

	/* first_psn / last_psn: the first PSN seen and the highest new one, in either role. */
	if (!f->have_psn) {
		f->have_psn = true;
		f->first_psn = f->last_psn = q;
	}
	if (fl & RFW_OPF_REQUEST) {
		f->requests++;
		if (fl & RFW_OPF_READ)
			read_span(c, p->reth.dma_len, &lo, &hi);
		if (!f->have_req) {
			f->have_req = true;
		} else if (rfw_psn_cmp(q, f->front_lo) < 0) {
			f->retransmissions++;
			return;
		} else if (rfw_psn_cmp(q, f->front_hi) > 0) {
			f->psn_gaps++;
			f->psn_missing += (uint32_t)rfw_psn_cmp(q, f->front_hi) >> 8;
		}
		f->front_lo = rfw_psn_add(q, lo);
		f->front_hi = rfw_psn_add(q, hi);
		f->last_psn = q;
	} else if (fl & RFW_OPF_RESPONSE) {
		f->responses++;
		if (rfw_psn_cmp(q, f->last_psn) > 0)
			f->last_psn = q;
		if (!(fl & RFW_OPF_READ))
			return;
		if (f->have_rresp && rfw_psn_cmp(q, f->rresp_next) < 0) {
			f->resp_retransmissions++;
			return;
		}
		f->have_rresp = true;
		f->rresp_next = rfw_psn_add(q, 1);
	}
}

/* A frame cut by the snap length: whether enough of its headers were captured to go on
 * (otherwise counted, and only its opcode when the BTH is there). */
static bool snapped_usable(struct rfw_check *c, const uint8_t *buf, const struct rfw_frame_view *v,
                           uint32_t caplen)
{
	const struct rfw_ib_opcode_info *oi;

	c->snap_truncated++;
	/* Without the whole BTH and extended headers, only what was captured counts. */
	if (v->ib_len < RFW_BTH_LEN || v->ib_off + RFW_BTH_LEN > caplen) {
		c->icrc_unchecked++;
		return false;
	}
	oi = rfw_ib_opcode_info(rfw_bth_opcode(buf + v->ib_off));
	if (oi == NULL || v->ib_off + oi->hdr_len > caplen) {
		c->by_opcode[rfw_bth_opcode(buf + v->ib_off)]++;
		c->icrc_unchecked++;
		return false;
	}
	return true;
}

/* The ICRC, when the whole datagram and at least IP + UDP + BTH are there. Whether it held. */
static bool icrc_check(struct rfw_check *c, const uint8_t *buf, const struct rfw_frame_view *v,
                       bool snapped)
{
	if (snapped || v->ib_len < RFW_BTH_LEN) {
		c->icrc_unchecked++;
		return false;
	}
	if (rfw_frame_icrc_ok(buf, v)) {
		c->icrc_ok++;
		return true;
	}
	c->icrc_bad++;
	return false;
}

/* The parsed packet into its flow: counts, ACK/NAK kinds, PSN tracking. */
static void flow_account(struct rfw_check *c, const struct rfw_frame_view *v,
                         const struct rfw_ib_pkt *p, uint64_t ts)
{
	struct flow *f = flow_get(c, v, p->bth.dqpn);

	if (f == NULL)
		return;
	if (f->packets == 0)
		f->first_ts = ts;
	f->last_ts = ts;
	f->packets++;
	f->payload_bytes += p->payload_len;
	if (rfw_frame_ecn(v) == RFW_ECN_CE)
		f->ce++;
	if (p->op->flags & RFW_OPF_CNP) {
		f->cnps++;
		return;
	}
	if (p->op->hdrs & RFW_HDR_AETH) {
		switch (rfw_aeth_syndrome_type(p->aeth.syndrome)) {
		case RFW_AETH_ACK:
			/* READ responses carry an AETH too; only count explicit ACK packets. */
			if (p->op->flags & (RFW_OPF_ACK | RFW_OPF_ATOMIC))
				f->acks++;
			break;
		case RFW_AETH_RNR_NAK:
			f->rnr_naks++;
			break;
		default:
			f->naks++;
			break;
		}
	}
	track_psn(c, f, p);
}

static void account_roce(struct rfw_check *c, const uint8_t *buf, const struct rfw_frame_view *v,
                         uint32_t caplen, bool snapped, uint64_t ts)
{
	struct rfw_ib_pkt p;
	enum rfw_ib_err ie;
	bool icrc_good;

	c->roce++;
	c->ecn[rfw_frame_ecn(v)]++;
	if (snapped && !snapped_usable(c, buf, v, caplen))
		return;
	if (v->ib_len >= RFW_BTH_LEN)
		c->by_opcode[rfw_bth_opcode(buf + v->ib_off)]++;
	icrc_good = icrc_check(c, buf, v, snapped);
	ie = rfw_ib_parse(buf + v->ib_off, v->ib_len, &p);
	if (ie != RFW_IB_ERR_OK) {
		if (!snapped)
			note(c, rfw_ib_err_name(ie), 0);
		return;
	}
	if (!icrc_good && !snapped) {
		note(c, "bad_icrc", p.warnings);
		return; /* a receiver drops it: it belongs to no flow */
	}
	if (p.warnings)
		note(c, NULL, p.warnings);
	if (p.op->flags & (RFW_OPF_FIRST | RFW_OPF_MIDDLE) && p.payload_len > c->pmtu)
		c->pmtu = p.payload_len;
	if (p.op->hdrs & RFW_HDR_AETH)
		c->by_syndrome[p.aeth.syndrome]++;
	if (p.op->flags & RFW_OPF_CNP)
		c->cnps++;
	if (p.bth.dqpn == 1 && p.op->transport == RFW_IB_UD)
		check_cm_account(&c->cm, &p); /* the Communication Manager on QP1 */
	flow_account(c, v, &p, ts);
}

int rfw_check_frame(struct rfw_check *c, int linktype, const uint8_t *data, uint32_t caplen,
                    uint32_t wirelen, uint64_t ts_ns)
{
	struct rfw_frame_view v;
	enum rfw_frame_err fe;
	bool snapped = caplen < wirelen;
	uint32_t caplen_used = caplen;

	if (snapped && wirelen <= sizeof(c->snapbuf)) {
		memcpy(c->snapbuf, data, caplen);
		memset(c->snapbuf + caplen, 0, wirelen - caplen);
		data = c->snapbuf;
		caplen = wirelen;
	}

	c->frames++;
	c->bytes += wirelen;
	if (c->frames == 1)
		c->first_ts = ts_ns;
	c->last_ts = ts_ns;

	switch (linktype) {
	case RFW_LINKTYPE_ETHERNET:
		fe = rfw_frame_parse_eth(data, caplen, &v);
		break;
	case RFW_LINKTYPE_LINUX_SLL: /* 16-byte header, protocol in its last two bytes */
		fe = rfw_frame_parse_at(data, caplen, 14, &v);
		break;
	case RFW_LINKTYPE_LINUX_SLL2: /* 20-byte header, protocol in its first two bytes */
		fe = caplen < 20 ? RFW_FRAME_ERR_TRUNC_LINK
		                 : rfw_frame_parse_l3(data, caplen, 20, rfw_get_be16(data), &v);
		break;
	case RFW_LINKTYPE_RAW:
	case RFW_DLT_RAW:
	case RFW_DLT_RAW_BSD:
	case RFW_LINKTYPE_IPV4:
	case RFW_LINKTYPE_IPV6: {
		uint16_t et = RFW_ETHERTYPE_IPV4;

		if (linktype == RFW_LINKTYPE_IPV6 ||
		    (linktype != RFW_LINKTYPE_IPV4 && caplen && (data[0] >> 4) == 6))
			et = RFW_ETHERTYPE_IPV6;
		fe = rfw_frame_parse_l3(data, caplen, 0, et, &v);
		break;
	}
	default:
		return -EPROTONOSUPPORT;
	}

	if (fe != RFW_FRAME_ERR_OK) {
		/* Cut by the capture's snap length, not by the sender: not the frame's fault. */
		if (snapped)
			c->snap_truncated++;
		else
			note(c, rfw_frame_err_name(fe), 0);
		return 0;
	}
	if (snapped && v.kind != RFW_FRAME_NOT_IP &&
	    v.l4_off + (uint32_t)RFW_UDP_HLEN > caplen_used) {
		/* What the frame is was decided from zero fill, not from captured bytes. */
		c->snap_truncated++;
		return 0;
	}
	switch (v.kind) {
	case RFW_FRAME_NOT_IP:
		c->not_ip++;
		break;
	case RFW_FRAME_NOT_UDP:
		c->not_udp++;
		break;
	case RFW_FRAME_NOT_ROCEV2:
		c->not_rocev2++;
		break;
	case RFW_FRAME_ROCEV2:
		account_roce(c, data, &v, caplen_used, snapped, ts_ns);
		break;
	}
	return 0;
}

/* ---- reports ---- */

static void opcode_key(uint8_t op, char *buf, size_t len)
{
	if (rfw_ib_opcode_info(op))
		snprintf(buf, len, "%s", rfw_ib_opcode_name(op));
	else
		snprintf(buf, len, "UNKNOWN_0x%02x", op);
}

static void warnings_str(uint32_t w, char *buf, size_t len)
{
	buf[0] = 0;
	if (w & RFW_IB_WARN_RESV_BTH)
		snprintf(buf, len, "bth_reserved_bits_set");
	if (w & RFW_IB_WARN_RESV_DETH)
		snprintf(buf + strlen(buf), len - strlen(buf), "%sdeth_reserved_bits_set",
		         buf[0] ? "," : "");
}

/* AETH counts folded by syndrome class name ("ack", "rnr_nak", "nak_psn_seq_err", ...). */
static json_t *aeth_json(const struct rfw_check *c)
{
	json_t *o = json_object();

	for (unsigned s = 0; s < 256; s++) {
		const char *name;
		json_t *cur;

		if (!c->by_syndrome[s])
			continue;
		name = rfw_aeth_syndrome_name((uint8_t)s);
		cur = json_object_get(o, name);
		json_object_set_new(o, name,
		                    json_integer((cur ? json_integer_value(cur) : 0) +
		                                 (json_int_t)c->by_syndrome[s]));
	}
	return o;
}

static json_t *ecn_json(const struct rfw_check *c)
{
	json_t *ecn = json_object();

	json_object_set_new(ecn, "not_ect", json_integer((json_int_t)c->ecn[RFW_ECN_NOT_ECT]));
	json_object_set_new(ecn, "ect0", json_integer((json_int_t)c->ecn[RFW_ECN_ECT0]));
	json_object_set_new(ecn, "ect1", json_integer((json_int_t)c->ecn[RFW_ECN_ECT1]));
	json_object_set_new(ecn, "ce", json_integer((json_int_t)c->ecn[RFW_ECN_CE]));
	return ecn;
}

static json_t *opcodes_json(const struct rfw_check *c)
{
	json_t *ops = json_object();
	char buf[64];

	for (unsigned op = 0; op < 256; op++) {
		if (!c->by_opcode[op])
			continue;
		opcode_key((uint8_t)op, buf, sizeof(buf));
		json_object_set_new(ops, buf, json_integer((json_int_t)c->by_opcode[op]));
	}
	return ops;
}

/* malformed_by_reason, malformed_frames (the listed ones), listed_truncated. */
static void malformed_json(json_t *o, const struct rfw_check *c)
{
	json_t *mal = json_array(), *reasons = json_object();
	char buf[64];

	for (unsigned i = 0; i < c->nreasons; i++)
		json_object_set_new(reasons, c->reasons[i].name,
		                    json_integer((json_int_t)c->reasons[i].n));
	json_object_set_new(o, "malformed_by_reason", reasons);
	for (unsigned i = 0; i < c->nlist; i++) {
		const struct listed *l = &c->list[i];
		json_t *e = json_object();

		json_object_set_new(e, "frame", json_integer((json_int_t)l->frame));
		json_object_set_new(e, "reason", l->reason ? json_string(l->reason) : json_null());
		warnings_str(l->warnings, buf, sizeof(buf));
		json_object_set_new(e, "warnings", json_string(buf));
		json_array_append_new(mal, e);
	}
	json_object_set_new(o, "malformed_frames", mal);
	json_object_set_new(o, "listed_truncated",
	                    json_boolean(c->malformed + c->warned > c->nlist));
}

static json_t *flow_json(const struct flow *f)
{
	json_t *e = json_object();
	char s1[64], s2[64];

	json_object_set_new(e, "src", json_string(rfw_ip_to_str(f->src, s1, sizeof(s1))));
	json_object_set_new(e, "dst", json_string(rfw_ip_to_str(f->dst, s2, sizeof(s2))));
	json_object_set_new(e, "dst_qpn", json_integer(f->dqpn));
	json_object_set_new(e, "udp_sport", json_integer(f->udp_sport));
	json_object_set_new(e, "packets", json_integer((json_int_t)f->packets));
	json_object_set_new(e, "payload_bytes", json_integer((json_int_t)f->payload_bytes));
	json_object_set_new(e, "requests", json_integer((json_int_t)f->requests));
	json_object_set_new(e, "responses", json_integer((json_int_t)f->responses));
	json_object_set_new(e, "first_psn", json_integer(f->first_psn));
	json_object_set_new(e, "last_psn", json_integer(f->last_psn));
	json_object_set_new(e, "psn_gaps", json_integer((json_int_t)f->psn_gaps));
	json_object_set_new(e, "psn_missing", json_integer((json_int_t)f->psn_missing));
	json_object_set_new(e, "retransmissions", json_integer((json_int_t)f->retransmissions));
	json_object_set_new(e, "response_retransmissions",
	                    json_integer((json_int_t)f->resp_retransmissions));
	json_object_set_new(e, "ecn_ce", json_integer((json_int_t)f->ce));
	json_object_set_new(e, "cnps", json_integer((json_int_t)f->cnps));
	json_object_set_new(e, "acks", json_integer((json_int_t)f->acks));
	json_object_set_new(e, "rnr_naks", json_integer((json_int_t)f->rnr_naks));
	json_object_set_new(e, "naks", json_integer((json_int_t)f->naks));
	json_object_set_new(e, "first_ts_ns", json_integer((json_int_t)f->first_ts));
	json_object_set_new(e, "last_ts_ns", json_integer((json_int_t)f->last_ts));
	return e;
}

json_t *rfw_check_json(const struct rfw_check *c, const char *file)
{
	json_t *o = json_object(), *flows = json_array();

	json_object_set_new(o, "schema", json_string(RFW_CHECK_SCHEMA));
	json_object_set_new(o, "file", json_string(file));
	json_object_set_new(o, "frames", json_integer((json_int_t)c->frames));
	json_object_set_new(o, "bytes", json_integer((json_int_t)c->bytes));
	json_object_set_new(o, "duration_ns",
	                    json_integer((json_int_t)(c->frames ? c->last_ts - c->first_ts : 0)));
	json_object_set_new(o, "roce", json_integer((json_int_t)c->roce));
	json_object_set_new(o, "not_ip", json_integer((json_int_t)c->not_ip));
	json_object_set_new(o, "not_udp", json_integer((json_int_t)c->not_udp));
	json_object_set_new(o, "udp_not_rocev2", json_integer((json_int_t)c->not_rocev2));
	json_object_set_new(o, "icrc_ok", json_integer((json_int_t)c->icrc_ok));
	json_object_set_new(o, "icrc_bad", json_integer((json_int_t)c->icrc_bad));
	json_object_set_new(o, "icrc_unchecked", json_integer((json_int_t)c->icrc_unchecked));
	json_object_set_new(o, "snap_truncated", json_integer((json_int_t)c->snap_truncated));
	json_object_set_new(o, "malformed", json_integer((json_int_t)c->malformed));
	json_object_set_new(o, "warnings", json_integer((json_int_t)c->warned));
	json_object_set_new(o, "cnps", json_integer((json_int_t)c->cnps));
	json_object_set_new(o, "path_mtu_estimate", json_integer(c->pmtu));

	json_object_set_new(o, "ecn", ecn_json(c));
	json_object_set_new(o, "by_opcode", opcodes_json(c));
	json_object_set_new(o, "aeth", aeth_json(c));
	malformed_json(o, c);
	for (uint32_t i = 0; i < c->nflows; i++)
		json_array_append_new(flows, flow_json(&c->flows[i]));
	json_object_set_new(o, "flows", flows);
	json_object_set_new(o, "cm", check_cm_json(&c->cm));
	return o;
}

void rfw_check_print(const struct rfw_check *c, const char *file, FILE *out)
{
	char buf[64], s1[64], s2[64];
	json_t *aeth = aeth_json(c);

	fprintf(out, "rocefw-replay check: %s\n", file);
	fprintf(out, "  frames        %" PRIu64 "  (RoCEv2 %" PRIu64 ", other %" PRIu64 ")\n",
	        c->frames, c->roce, c->not_ip + c->not_udp + c->not_rocev2);
	fprintf(out, "  ICRC          ok %" PRIu64 ", bad %" PRIu64 ", unchecked %" PRIu64 "\n",
	        c->icrc_ok, c->icrc_bad, c->icrc_unchecked);
	fprintf(out,
	        "  malformed     %" PRIu64 "   warnings %" PRIu64 "   snap-truncated %" PRIu64 "\n",
	        c->malformed, c->warned, c->snap_truncated);
	fprintf(out,
	        "  ECN           not-ECT %" PRIu64 ", ECT(0) %" PRIu64 ", ECT(1) %" PRIu64
	        ", CE %" PRIu64 "\n",
	        c->ecn[0], c->ecn[2], c->ecn[1], c->ecn[3]);
	fprintf(out, "  CNPs          %" PRIu64 "\n", c->cnps);
	fprintf(out, "  AETH         ");
	if (json_object_size(aeth) == 0)
		fprintf(out, " none");
	for (void *it = json_object_iter(aeth); it; it = json_object_iter_next(aeth, it))
		fprintf(out, " %s %" JSON_INTEGER_FORMAT, json_object_iter_key(it),
		        json_integer_value(json_object_iter_value(it)));
	fprintf(out, "\n");
	json_decref(aeth);
	if (c->pmtu)
		fprintf(out, "  path MTU      %u (largest FIRST/MIDDLE payload)\n", c->pmtu);

	fprintf(out, "\nby opcode\n");
	for (unsigned op = 0; op < 256; op++) {
		if (!c->by_opcode[op])
			continue;
		opcode_key((uint8_t)op, buf, sizeof(buf));
		fprintf(out, "  0x%02x %-32s %10" PRIu64 "\n", op, buf, c->by_opcode[op]);
	}

	fprintf(out, "\nflows (source -> destination, destination QP)\n");
	fprintf(out, "  %-15s %-15s %8s %8s %10s %8s %8s %5s %7s %7s %4s %4s %5s %4s\n", "src",
	        "dst", "dqpn", "packets", "bytes", "1st_psn", "last_psn", "gaps", "missing",
	        "retrans", "CE", "CNPs", "acks", "naks");
	for (uint32_t i = 0; i < c->nflows; i++) {
		const struct flow *f = &c->flows[i];

		fprintf(
		    out,
		    "  %-15s %-15s %8u %8" PRIu64 " %10" PRIu64 " %8u %8u %5" PRIu64 " %7" PRIu64
		    " %7" PRIu64 " %4" PRIu64 " %4" PRIu64 " %5" PRIu64 " %4" PRIu64 "\n",
		    rfw_ip_to_str(f->src, s1, sizeof(s1)), rfw_ip_to_str(f->dst, s2, sizeof(s2)),
		    f->dqpn, f->packets, f->payload_bytes, f->first_psn, f->last_psn, f->psn_gaps,
		    f->psn_missing, f->retransmissions + f->resp_retransmissions, f->ce, f->cnps,
		    f->acks, f->naks + f->rnr_naks);
	}

	if (c->nlist) {
		fprintf(out, "\nmalformed and flagged frames (frame numbers from 1)\n");
		for (unsigned i = 0; i < c->nlist; i++) {
			warnings_str(c->list[i].warnings, buf, sizeof(buf));
			fprintf(out, "  frame %-8" PRIu64 " %-26s %s\n", c->list[i].frame,
			        c->list[i].reason ? c->list[i].reason : "(accepted)", buf);
		}
		if (c->malformed + c->warned > c->nlist)
			fprintf(out, "  ... %" PRIu64 " more not listed (--max-list)\n",
			        c->malformed + c->warned - c->nlist);
	}
	check_cm_print(&c->cm, out);
}
