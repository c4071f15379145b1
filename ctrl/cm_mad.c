/* SPDX-License-Identifier: BSD-3-Clause */
/* CM MAD codec (cm_mad.h). Offsets are into the MAD data, after the 24-byte header. */
#include <errno.h>
#include <string.h>

#include "ctrl/cm_mad.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | get24(p + 1);
}
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	put24(p + 1, v);
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

const char *rfw_cm_attr_name(uint16_t attr)
{
	switch (attr) {
	case RFW_CM_ATTR_REQ:
		return "REQ";
	case RFW_CM_ATTR_MRA:
		return "MRA";
	case RFW_CM_ATTR_REJ:
		return "REJ";
	case RFW_CM_ATTR_REP:
		return "REP";
	case RFW_CM_ATTR_RTU:
		return "RTU";
	case RFW_CM_ATTR_DREQ:
		return "DREQ";
	case RFW_CM_ATTR_DREP:
		return "DREP";
	case 0x0017:
		return "SIDR_REQ";
	case 0x0018:
		return "SIDR_REP";
	case 0x0019:
		return "LAP";
	case 0x001a:
		return "APR";
	default:
		return "unknown";
	}
}

/* IBA table 106 (REQ). */
static void req_decode(const uint8_t *d, struct rfw_cm_req *r)
{
	r->local_comm_id = get32(d);
	r->service_id = get64(d + 8);
	r->local_ca_guid = get64(d + 16);
	r->local_qkey = get32(d + 28);
	r->local_qpn = get24(d + 32);
	r->resp_res = d[35];
	r->init_depth = d[39];
	r->remote_cm_timeout = d[43] >> 3;
	r->transport = (d[43] >> 1) & 3;
	r->flow_control = d[43] & 1;
	r->start_psn = get24(d + 44);
	r->local_cm_timeout = d[47] >> 3;
	r->retry_count = d[47] & 7;
	r->pkey = get16(d + 48);
	r->mtu = d[50] >> 4;
	r->rdc_exists = (d[50] >> 3) & 1;
	r->rnr_retry = d[50] & 7;
	r->max_cm_retries = d[51] >> 4;
	r->srq = (d[51] >> 3) & 1;
	r->ext_transport = d[51] & 7;
	r->local_lid = get16(d + 52);
	r->remote_lid = get16(d + 54);
	memcpy(r->local_gid, d + 56, 16);
	memcpy(r->remote_gid, d + 72, 16);
	r->flow_label = get32(d + 88) >> 12;
	r->packet_rate = d[91] & 0x3f;
	r->traffic_class = d[92];
	r->hop_limit = d[93];
	r->sl = d[94] >> 4;
	r->subnet_local = (d[94] >> 3) & 1;
	r->ack_timeout = d[95] >> 3;
	memcpy(r->alt, d + 96, sizeof(r->alt));
	memcpy(r->pdata, d + 140, RFW_CM_REQ_PDATA);
}

static void req_encode(const struct rfw_cm_req *r, uint8_t *d)
{
	put32(d, r->local_comm_id);
	put64(d + 8, r->service_id);
	put64(d + 16, r->local_ca_guid);
	put32(d + 28, r->local_qkey);
	put24(d + 32, r->local_qpn);
	d[35] = r->resp_res;
	d[39] = r->init_depth;
	d[43] = (uint8_t)((r->remote_cm_timeout & 0x1f) << 3 | (r->transport & 3) << 1 |
	                  (r->flow_control ? 1 : 0));
	put24(d + 44, r->start_psn);
	d[47] = (uint8_t)((r->local_cm_timeout & 0x1f) << 3 | (r->retry_count & 7));
	put16(d + 48, r->pkey);
	d[50] = (uint8_t)((r->mtu & 0xf) << 4 | (r->rdc_exists ? 8 : 0) | (r->rnr_retry & 7));
	d[51] =
	    (uint8_t)((r->max_cm_retries & 0xf) << 4 | (r->srq ? 8 : 0) | (r->ext_transport & 7));
	put16(d + 52, r->local_lid);
	put16(d + 54, r->remote_lid);
	memcpy(d + 56, r->local_gid, 16);
	memcpy(d + 72, r->remote_gid, 16);
	put32(d + 88, (r->flow_label & 0xfffff) << 12 | (r->packet_rate & 0x3f));
	d[92] = r->traffic_class;
	d[93] = r->hop_limit;
	d[94] = (uint8_t)((r->sl & 0xf) << 4 | (r->subnet_local ? 8 : 0));
	d[95] = (uint8_t)((r->ack_timeout & 0x1f) << 3);
	memcpy(d + 96, r->alt, sizeof(r->alt));
	memcpy(d + 140, r->pdata, RFW_CM_REQ_PDATA);
}

/* IBA table 109 (REP). */
static void rep_decode(const uint8_t *d, struct rfw_cm_rep *r)
{
	r->local_comm_id = get32(d);
	r->remote_comm_id = get32(d + 4);
	r->local_qkey = get32(d + 8);
	r->local_qpn = get24(d + 12);
	r->local_eecn = get24(d + 16);
	r->start_psn = get24(d + 20);
	r->resp_res = d[24];
	r->init_depth = d[25];
	r->target_ack_delay = d[26] >> 3;
	r->failover = (d[26] >> 1) & 3;
	r->flow_control = d[26] & 1;
	r->rnr_retry = d[27] >> 5;
	r->srq = (d[27] >> 4) & 1;
	r->local_ca_guid = get64(d + 28);
	memcpy(r->pdata, d + 36, RFW_CM_REP_PDATA);
}

static void rep_encode(const struct rfw_cm_rep *r, uint8_t *d)
{
	put32(d, r->local_comm_id);
	put32(d + 4, r->remote_comm_id);
	put32(d + 8, r->local_qkey);
	put24(d + 12, r->local_qpn);
	put24(d + 16, r->local_eecn);
	put24(d + 20, r->start_psn);
	d[24] = r->resp_res;
	d[25] = r->init_depth;
	d[26] = (uint8_t)((r->target_ack_delay & 0x1f) << 3 | (r->failover & 3) << 1 |
	                  (r->flow_control ? 1 : 0));
	d[27] = (uint8_t)((r->rnr_retry & 7) << 5 | (r->srq ? 0x10 : 0));
	put64(d + 28, r->local_ca_guid);
	memcpy(d + 36, r->pdata, RFW_CM_REP_PDATA);
}

/* IBA table 112 (REJ) and 108 (MRA). */
static void rej_decode(const uint8_t *d, struct rfw_cm_rej *r)
{
	r->local_comm_id = get32(d);
	r->remote_comm_id = get32(d + 4);
	r->msg_rejected = d[8] >> 6;
	r->ari_len = d[9] >> 1;
	r->reason = get16(d + 10);
	memcpy(r->ari, d + 12, RFW_CM_REJ_ARI);
	memcpy(r->pdata, d + 84, RFW_CM_REJ_PDATA);
}

static void rej_encode(const struct rfw_cm_rej *r, uint8_t *d)
{
	put32(d, r->local_comm_id);
	put32(d + 4, r->remote_comm_id);
	d[8] = (uint8_t)((r->msg_rejected & 3) << 6);
	d[9] = (uint8_t)((r->ari_len & 0x7f) << 1);
	put16(d + 10, r->reason);
	memcpy(d + 12, r->ari, RFW_CM_REJ_ARI);
	memcpy(d + 84, r->pdata, RFW_CM_REJ_PDATA);
}

static void mra_decode(const uint8_t *d, struct rfw_cm_mra *r)
{
	r->local_comm_id = get32(d);
	r->remote_comm_id = get32(d + 4);
	r->msg_mraed = d[8] >> 6;
	r->service_timeout = d[9] >> 3;
	memcpy(r->pdata, d + 10, RFW_CM_MRA_PDATA);
}

static void mra_encode(const struct rfw_cm_mra *r, uint8_t *d)
{
	put32(d, r->local_comm_id);
	put32(d + 4, r->remote_comm_id);
	d[8] = (uint8_t)((r->msg_mraed & 3) << 6);
	d[9] = (uint8_t)((r->service_timeout & 0x1f) << 3);
	memcpy(d + 10, r->pdata, RFW_CM_MRA_PDATA);
}

/* IBA tables 113 (RTU), 114 (DREQ), 115 (DREP): DREQ has the remote QPN before its data. */
static void simple_decode(const uint8_t *d, uint16_t attr, struct rfw_cm_simple *r)
{
	size_t off = attr == RFW_CM_ATTR_DREQ ? 12 : 8;

	r->local_comm_id = get32(d);
	r->remote_comm_id = get32(d + 4);
	r->remote_qpn = attr == RFW_CM_ATTR_DREQ ? get24(d + 8) : 0;
	memcpy(r->pdata, d + off, RFW_MAD_LEN - RFW_MAD_HDR_LEN - off);
}

static void simple_encode(const struct rfw_cm_simple *r, uint16_t attr, uint8_t *d)
{
	size_t off = attr == RFW_CM_ATTR_DREQ ? 12 : 8;

	put32(d, r->local_comm_id);
	put32(d + 4, r->remote_comm_id);
	if (attr == RFW_CM_ATTR_DREQ)
		put24(d + 8, r->remote_qpn);
	memcpy(d + off, r->pdata, RFW_MAD_LEN - RFW_MAD_HDR_LEN - off);
}

int rfw_cm_mad_decode(const uint8_t *b, size_t len, struct rfw_cm_msg *m)
{
	const uint8_t *d;

	/* (d only once b is known not to be NULL: an offset on NULL is undefined, UBSan says) */
	if (b == NULL || len < RFW_MAD_LEN || b[0] != 1 || b[1] != RFW_MAD_CLASS_CM ||
	    b[2] != RFW_MAD_CM_CLASS_VER || b[3] != RFW_MAD_METHOD_SEND)
		return -EBADMSG;
	d = b + RFW_MAD_HDR_LEN;
	memset(m, 0, sizeof(*m));
	m->method = b[3];
	m->status = get16(b + 4);
	m->tid = get64(b + 8);
	m->attr = get16(b + 16);
	m->attr_mod = get32(b + 20);
	switch (m->attr) {
	case RFW_CM_ATTR_REQ:
		req_decode(d, &m->req);
		return 0;
	case RFW_CM_ATTR_REP:
		rep_decode(d, &m->rep);
		return 0;
	case RFW_CM_ATTR_REJ:
		rej_decode(d, &m->rej);
		return 0;
	case RFW_CM_ATTR_MRA:
		mra_decode(d, &m->mra);
		return 0;
	case RFW_CM_ATTR_RTU:
	case RFW_CM_ATTR_DREQ:
	case RFW_CM_ATTR_DREP:
		simple_decode(d, m->attr, &m->rtu);
		return 0;
	default:
		return -EPROTONOSUPPORT;
	}
}

void rfw_cm_mad_encode(const struct rfw_cm_msg *m, uint8_t b[RFW_MAD_LEN])
{
	uint8_t *d = b + RFW_MAD_HDR_LEN;

	memset(b, 0, RFW_MAD_LEN);
	b[0] = 1;
	b[1] = RFW_MAD_CLASS_CM;
	b[2] = RFW_MAD_CM_CLASS_VER;
	b[3] = RFW_MAD_METHOD_SEND;
	put16(b + 4, m->status);
	put64(b + 8, m->tid);
	put16(b + 16, m->attr);
	put32(b + 20, m->attr_mod);
	switch (m->attr) {
	case RFW_CM_ATTR_REQ:
		req_encode(&m->req, d);
		break;
	case RFW_CM_ATTR_REP:
		rep_encode(&m->rep, d);
		break;
	case RFW_CM_ATTR_REJ:
		rej_encode(&m->rej, d);
		break;
	case RFW_CM_ATTR_MRA:
		mra_encode(&m->mra, d);
		break;
	case RFW_CM_ATTR_RTU:
	case RFW_CM_ATTR_DREQ:
	case RFW_CM_ATTR_DREP:
		simple_encode(&m->rtu, m->attr, d);
		break;
	default:
		break;
	}
}

int rfw_cma_hdr_decode(const uint8_t *p, size_t len, struct rfw_cma_hdr *h)
{
	if (p == NULL || len < RFW_CMA_HDR_LEN)
		return -EBADMSG;
	h->version = p[0];
	h->ip_version = p[1] >> 4;
	h->src_port = get16(p + 2);
	memcpy(h->src_ip, p + 4, 16);
	memcpy(h->dst_ip, p + 20, 16);
	return h->ip_version == 4 || h->ip_version == 6 ? 0 : -EBADMSG;
}

void rfw_cma_hdr_encode(const struct rfw_cma_hdr *h, uint8_t out[RFW_CMA_HDR_LEN])
{
	out[0] = h->version;
	out[1] = (uint8_t)(h->ip_version << 4);
	put16(out + 2, h->src_port);
	memcpy(out + 4, h->src_ip, 16);
	memcpy(out + 20, h->dst_ip, 16);
}
