/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communication Manager MADs (IBA vol. 1 ch. 12.6, the MAD base header of 13.4.2): the 256-byte
 * MAD of management class 0x07, class version 2, method Send, and the attributes REQ, MRA,
 * REJ, REP, RTU, DREQ, DREP with the field layouts of IBA tables 106-116, plus the rdma_cm
 * header at the start of a REQ's private data (the "IP CM" service, IBA Annex A11). Decoding
 * never reads outside the buffer and refuses what is not a CM MAD it knows.
 */
#ifndef RFW_CTRL_CM_MAD_H
#define RFW_CTRL_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RFW_MAD_LEN          256
#define RFW_MAD_HDR_LEN      24
#define RFW_MAD_CLASS_CM     0x07
#define RFW_MAD_CM_CLASS_VER 2
#define RFW_MAD_METHOD_SEND  0x03

enum rfw_cm_attr {
	RFW_CM_ATTR_REQ = 0x0010,
	RFW_CM_ATTR_MRA = 0x0011,
	RFW_CM_ATTR_REJ = 0x0012,
	RFW_CM_ATTR_REP = 0x0013,
	RFW_CM_ATTR_RTU = 0x0014,
	RFW_CM_ATTR_DREQ = 0x0015,
	RFW_CM_ATTR_DREP = 0x0016,
};

/* Private data sizes (IBA 12.6.5 - 12.6.11). */
#define RFW_CM_REQ_PDATA  92
#define RFW_CM_REP_PDATA  196
#define RFW_CM_RTU_PDATA  224
#define RFW_CM_REJ_PDATA  148
#define RFW_CM_REJ_ARI    72
#define RFW_CM_MRA_PDATA  222
#define RFW_CM_DREQ_PDATA 220
#define RFW_CM_DREP_PDATA 224

/* REJ reasons used here (IBA table 112). */
enum rfw_cm_rej_reason {
	RFW_CM_REJ_NO_RESOURCES = 3,
	RFW_CM_REJ_TIMEOUT = 4,
	RFW_CM_REJ_INVALID_COMM_ID = 6,
	RFW_CM_REJ_INVALID_SERVICE_ID = 8,
	RFW_CM_REJ_STALE_CONN = 10,
	RFW_CM_REJ_INVALID_MTU = 26,
	RFW_CM_REJ_CONSUMER = 28,
};

/* REJ "Message REJected" and MRA "Message MRAed" (IBA 12.6.7, 12.6.6). */
enum rfw_cm_msg_kind { RFW_CM_MSG_REQ = 0, RFW_CM_MSG_REP = 1, RFW_CM_MSG_OTHER = 2 };

struct rfw_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;        /* 24 bits */
	uint8_t resp_res;          /* responder resources */
	uint8_t init_depth;        /* initiator depth */
	uint8_t remote_cm_timeout; /* 5 bits */
	uint8_t transport;         /* 2 bits: 0 RC, 1 UC, 3 XRC */
	bool flow_control;
	uint32_t start_psn;       /* 24 bits */
	uint8_t local_cm_timeout; /* 5 bits */
	uint8_t retry_count;      /* 3 bits */
	uint16_t pkey;
	uint8_t mtu; /* 4 bits, IBA encoding 1..5 */
	bool rdc_exists;
	uint8_t rnr_retry;      /* 3 bits */
	uint8_t max_cm_retries; /* 4 bits */
	bool srq;
	uint8_t ext_transport; /* 3 bits */
	uint16_t local_lid, remote_lid;
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label; /* 20 bits */
	uint8_t packet_rate; /* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl; /* 4 bits */
	bool subnet_local;
	uint8_t ack_timeout; /* 5 bits: the primary path's Local ACK Timeout */
	/* The alternate path: kept to re-encode what arrived, never used. */
	uint8_t alt[44];
	uint8_t pdata[RFW_CM_REQ_PDATA];
};

struct rfw_cm_rep {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;  /* 24 bits */
	uint32_t local_eecn; /* 24 bits */
	uint32_t start_psn;  /* 24 bits */
	uint8_t resp_res, init_depth;
	uint8_t target_ack_delay; /* 5 bits */
	uint8_t failover;         /* 2 bits */
	bool flow_control;
	uint8_t rnr_retry; /* 3 bits */
	bool srq;
	uint64_t local_ca_guid;
	uint8_t pdata[RFW_CM_REP_PDATA];
};

struct rfw_cm_rej {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t msg_rejected; /* enum rfw_cm_msg_kind */
	uint8_t ari_len;      /* 7 bits */
	uint16_t reason;
	uint8_t ari[RFW_CM_REJ_ARI];
	uint8_t pdata[RFW_CM_REJ_PDATA];
};

struct rfw_cm_mra {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t msg_mraed;       /* enum rfw_cm_msg_kind */
	uint8_t service_timeout; /* 5 bits */
	uint8_t pdata[RFW_CM_MRA_PDATA];
};

/* RTU, DREQ (with the remote QPN) and DREP share one shape. */
struct rfw_cm_simple {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t remote_qpn; /* DREQ only, 24 bits */
	uint8_t pdata[RFW_CM_RTU_PDATA];
};

struct rfw_cm_msg {
	uint8_t method;
	uint16_t status;
	uint64_t tid;
	uint16_t attr; /* enum rfw_cm_attr */
	uint32_t attr_mod;
	union {
		struct rfw_cm_req req;
		struct rfw_cm_rep rep;
		struct rfw_cm_rej rej;
		struct rfw_cm_mra mra;
		struct rfw_cm_simple rtu, dreq, drep;
	};
};

/* Decode @len bytes: 0, -EBADMSG (too short, not a CM MAD of class version 2 and method Send)
   or -EPROTONOSUPPORT (an attribute not listed above: LAP, APR, SIDR). */
int rfw_cm_mad_decode(const uint8_t *buf, size_t len, struct rfw_cm_msg *m);
/* Encode into 256 bytes; reserved fields zero. */
void rfw_cm_mad_encode(const struct rfw_cm_msg *m, uint8_t buf[RFW_MAD_LEN]);
const char *rfw_cm_attr_name(uint16_t attr);

/* The rdma_cm header at the start of a REQ's private data (IP addressing, 36 bytes). */
#define RFW_CMA_HDR_LEN 36
struct rfw_cma_hdr {
	uint8_t version;    /* 0 */
	uint8_t ip_version; /* 4 or 6 */
	uint16_t src_port;  /* host order */
	uint8_t src_ip[16]; /* IPv4 in the last 4 bytes */
	uint8_t dst_ip[16];
};
int rfw_cma_hdr_decode(const uint8_t *pdata, size_t len, struct rfw_cma_hdr *h);
void rfw_cma_hdr_encode(const struct rfw_cma_hdr *h, uint8_t out[RFW_CMA_HDR_LEN]);
/* The service ID of port @port in port space @ps (RDMA_PS_TCP 0x0106): (ps << 16) + port. */
static inline uint64_t rfw_cma_service_id(uint16_t ps, uint16_t port)
{
	return ((uint64_t)ps << 16) | port;
}

#endif
