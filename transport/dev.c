/* SPDX-License-Identifier: BSD-3-Clause */
/* The device: object tables, counters, name tables and the IBA timer tables. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rfw_int.h"

/* A checking build's shortcut disagreed with what it spares (rfw_invariant): a bug. */
void rfw_invariant_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "rocefw: invariant broken at %s:%d: %s\n", file, line, what);
	abort();
}

static const char *const counter_names[RFW_CNT__COUNT] = {
#define RFW_CNT_NAME(name, mlx5, doc) [RFW_CNT_##name] = #name,
    RFW_FOREACH_COUNTER(RFW_CNT_NAME)
#undef RFW_CNT_NAME
};
_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == RFW_CNT__COUNT,
               "counter name table out of step with the enum");

const char *rfw_counter_name(enum rfw_counter c)
{
	return (unsigned)c < RFW_CNT__COUNT ? counter_names[c] : NULL;
}

static const char *const wc_status_names[RFW_WC__COUNT] = {
    [RFW_WC_SUCCESS] = "success",
    [RFW_WC_LOC_LEN_ERR] = "local length error",
    [RFW_WC_LOC_QP_OP_ERR] = "local QP operation error",
    [RFW_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
    [RFW_WC_LOC_PROT_ERR] = "local protection error",
    [RFW_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
    [RFW_WC_MW_BIND_ERR] = "memory management operation error",
    [RFW_WC_BAD_RESP_ERR] = "bad response error",
    [RFW_WC_LOC_ACCESS_ERR] = "local access error",
    [RFW_WC_REM_INV_REQ_ERR] = "remote invalid request error",
    [RFW_WC_REM_ACCESS_ERR] = "remote access error",
    [RFW_WC_REM_OP_ERR] = "remote operation error",
    [RFW_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
    [RFW_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
    [RFW_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
    [RFW_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
    [RFW_WC_REM_ABORT_ERR] = "aborted error",
    [RFW_WC_INV_EECN_ERR] = "invalid EE context number",
    [RFW_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
    [RFW_WC_FATAL_ERR] = "fatal error",
    [RFW_WC_RESP_TIMEOUT_ERR] = "response timeout error",
    [RFW_WC_GENERAL_ERR] = "general error",
};

const char *rfw_wc_status_str(enum rfw_wc_status s)
{
	return (unsigned)s < RFW_WC__COUNT ? wc_status_names[s] : "unknown";
}

/* IBA table 45: RNR NAK timer field -> minimum wait, in units of 10 ns (code 0 = 655.36 ms). */
static const uint32_t rnr_timer_10ns[32] = {
    65536000, 1000,    2000,    3000,     4000,     6000,     8000,     12000,
    16000,    24000,   32000,   48000,    64000,    96000,    128000,   192000,
    256000,   384000,  512000,  768000,   1024000,  1536000,  2048000,  3072000,
    4096000,  6144000, 8192000, 12288000, 16384000, 24576000, 32768000, 49152000,
};

uint64_t rfw_rnr_timer_ns(unsigned code)
{
	return (uint64_t)rnr_timer_10ns[code & 31] * 10;
}

uint64_t rfw_ack_timeout_ns(unsigned timeout)
{
	return rfw_ack_timeout_ns_inl(timeout);
}

struct rfw_dev *rfw_dev_create(const struct rfw_dev_attr *attr, const struct rfw_io_ops *ops,
                               void *io_ctx)
{
	struct rfw_dev *dev;

	if (ops == NULL || ops->tx_alloc == NULL || ops->tx_send == NULL) {
		errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return NULL;
	if (attr)
		dev->attr = *attr;
	else
		dev->attr =
		    (struct rfw_dev_attr){.ack_every = 64, .np_min_time_between_cnps_ns = 4000};
	if (dev->attr.max_qp == 0)
		dev->attr.max_qp = 64;
	if (dev->attr.max_mr == 0)
		dev->attr.max_mr = 256;
	if (dev->attr.qpn_base == 0)
		dev->attr.qpn_base = 17;
	if (dev->attr.max_unacked_psns == 0)
		dev->attr.max_unacked_psns = RFW_DEF_MAX_UNACKED_PSNS;
	/* Half the PSN space at most: beyond it serial arithmetic cannot tell old from new. */
	if (dev->attr.max_unacked_psns > (1u << 22))
		dev->attr.max_unacked_psns = 1u << 22;
	/* Selective repeat (docs/transport.md "Tunables"). */
	if (dev->attr.sr_window == 0)
		dev->attr.sr_window = 4096;
	if (dev->attr.estats_interval_ns == 0)
		dev->attr.estats_interval_ns = 60000000000ull;
	if (dev->attr.sr_rto_low_ns == 0)
		dev->attr.sr_rto_low_ns = RFW_DEF_SR_RTO_LOW_NS;
	if (dev->attr.sr_rto_high_ns == 0)
		dev->attr.sr_rto_high_ns = RFW_DEF_SR_RTO_HIGH_NS;
	if (dev->attr.sr_rto_low_pkts == 0)
		dev->attr.sr_rto_low_pkts = RFW_DEF_SR_RTO_LOW_PKTS;
	if (dev->attr.link_gbps == 0)
		dev->attr.link_gbps = 100;
	if (dev->attr.base_rtt_ns == 0)
		dev->attr.base_rtt_ns = 10000;
	/* A host without the op sends every payload from its own buffer. */
	if (ops->tx_alloc_ref == NULL)
		dev->attr.tx_ref_min = 0;
	dev->tx_ref_from = dev->attr.tx_ref_min != 0 ? dev->attr.tx_ref_min : UINT32_MAX;
	/* sr_bdp_bytes 0: derived per QP from link_gbps, base_rtt_ns and its MTU (sr.c). */
	if (dev->attr.sr_window < 64 || dev->attr.sr_window > 65536 ||
	    (dev->attr.sr_window & (dev->attr.sr_window - 1)) ||
	    dev->attr.sr_rto_high_ns < dev->attr.sr_rto_low_ns ||
	    dev->attr.estats_interval_ns < 1000000ull ||
	    dev->attr.estats_interval_ns > 3600000000000ull) {
		free(dev);
		errno = EINVAL;
		return NULL;
	}
	if (dev->attr.qpn_base + dev->attr.max_qp > RFW_QPN_MASK || dev->attr.max_mr > (1u << 24)) {
		free(dev);
		errno = EINVAL;
		return NULL;
	}
	dev->ops = *ops;
	dev->io_ctx = io_ctx;
	dev->mrs = calloc(dev->attr.max_mr, sizeof(*dev->mrs));
	dev->qps = calloc(dev->attr.max_qp, sizeof(*dev->qps));
	if (dev->mrs == NULL || dev->qps == NULL ||
	    rfw_slots_init(&dev->qp_free, dev->attr.max_qp) ||
	    rfw_slots_init(&dev->mr_free, dev->attr.max_mr)) {
		free(dev->mrs);
		free(dev->qps);
		rfw_slots_fini(&dev->qp_free);
		rfw_slots_fini(&dev->mr_free);
		free(dev);
		errno = ENOMEM;
		return NULL;
	}
	return dev;
}

void rfw_dev_destroy(struct rfw_dev *dev)
{
	if (dev == NULL)
		return;
	free(dev->mrs);
	free(dev->qps);
	rfw_slots_fini(&dev->qp_free);
	rfw_slots_fini(&dev->mr_free);
	free(dev);
}

/* The device's counters: a copy (struct rfw_dev cnt: QPs add theirs as they count). */
void rfw_dev_counters(const struct rfw_dev *dev, uint64_t out[RFW_CNT__COUNT])
{
	memcpy(out, dev->cnt, sizeof(dev->cnt));
}
