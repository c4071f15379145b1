/* SPDX-License-Identifier: BSD-3-Clause */
/* The firmware object: configuration, QP attach/detach, accessors. See rfw_fw.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nic/fw_int.h"

static const char *const ctr_names[] = {
#define X(name, doc) #name,
    RFW_FOREACH_FW_CTR(X)
#undef X
};
static const char *const ctr_docs[] = {
#define X(name, doc) doc,
    RFW_FOREACH_FW_CTR(X)
#undef X
};
static const char *const qp_ctr_names[] = {
#define X(name, doc) #name,
    RFW_FOREACH_FW_QP_CTR(X)
#undef X
};
static const char *const qp_ctr_docs[] = {
#define X(name, doc) doc,
    RFW_FOREACH_FW_QP_CTR(X)
#undef X
};
_Static_assert(sizeof(ctr_names) / sizeof(ctr_names[0]) == RFW_FW_CTR__COUNT, "names");
_Static_assert(sizeof(qp_ctr_names) / sizeof(qp_ctr_names[0]) == RFW_FW_QP_CTR__COUNT, "names");

const char *rfw_fw_ctr_name(enum rfw_fw_ctr c)
{
	return (unsigned)c < RFW_FW_CTR__COUNT ? ctr_names[c] : NULL;
}
const char *rfw_fw_ctr_doc(enum rfw_fw_ctr c)
{
	return (unsigned)c < RFW_FW_CTR__COUNT ? ctr_docs[c] : NULL;
}
const char *rfw_fw_qp_ctr_name(enum rfw_fw_qp_ctr c)
{
	return (unsigned)c < RFW_FW_QP_CTR__COUNT ? qp_ctr_names[c] : NULL;
}
const char *rfw_fw_qp_ctr_doc(enum rfw_fw_qp_ctr c)
{
	return (unsigned)c < RFW_FW_QP_CTR__COUNT ? qp_ctr_docs[c] : NULL;
}

/* Defaults and ranges of struct rfw_fw_conf (rfw_fw.h). */
static int conf_fill(struct rfw_fw_conf *c, const struct rfw_fw_host_ops *ops)
{
	if (c->pacer_burst_ns > 1000000 || c->quantum > 64 || c->wheel_shift > 16 ||
	    c->timer_wheel_shift > 20 ||
	    (c->frame_max != 0 && (c->frame_max < 256 || c->frame_max > 65535)))
		return -EINVAL;
	/* The payload-from-MR ops: both or neither (rfw_fw_host_ops). */
	if ((ops->frame_alloc_ref == NULL) != (ops->frame_send_ref == NULL))
		return -EINVAL;
	if ((c->cc == RFW_FW_CC_DCQCN && c->dcqcn == NULL) ||
	    (c->cc == RFW_FW_CC_TIMELY && c->timely == NULL) || (unsigned)c->cc > RFW_FW_CC_TIMELY)
		return -EINVAL;
	if (c->pacer_burst_ns == 0 && !c->pacer_burst_set)
		c->pacer_burst_ns = 2000;
	if (c->quantum == 0)
		c->quantum = 16;
	if (!c->wheel_shift_set && c->wheel_shift == 0)
		c->wheel_shift = 8;
	if (!c->timer_wheel_shift_set && c->timer_wheel_shift == 0)
		c->timer_wheel_shift = 16;
	if (c->frame_max == 0)
		c->frame_max = 4352;
	if (c->dev_attr.max_qp == 0)
		c->dev_attr.max_qp = 64;
	if (c->dev_attr.qpn_base == 0)
		c->dev_attr.qpn_base = 17;
	/*
	 * A window that follows the rate can shrink under packets already in flight; unless each
	 * asked for its ACK, none of them may (ack_every, AckReq at the window's edge), and the QP
	 * would wait out its ACK timeout. HPCC's receiver ACKs every packet.
	 */
	if (c->var_win_bytes != 0 && c->dev_attr.ack_every > 1)
		return -EINVAL;
	if (c->var_win_bytes != 0)
		c->dev_attr.ack_every = 1;
	/*
	 * The transport's defaults for these two apply only to a NULL attribute struct, where 0
	 * is a value of its own; a conf left zero means "defaults" as for every other field.
	 */
	if (c->dev_attr.ack_every == 0)
		c->dev_attr.ack_every = 64;
	/* A payload handed over where it is goes out from there with the host's two ops, else it
	   is copied with its ICRC in one pass; the UDP checksum of IPv6 would need a pass of its
	   own over it, which is what both save. */
	if (c->udp6_csum)
		c->dev_attr.tx_ref_min = 0;
	if (c->dev_attr.np_min_time_between_cnps_ns == 0)
		c->dev_attr.np_min_time_between_cnps_ns = 4000;
	return 0;
}

static void fw_free(struct rfw_fw *fw)
{
	free(fw->qps);
	free(fw->rates);
	free(fw->pub);
	free(fw);
}

struct rfw_fw *rfw_fw_create(const struct rfw_fw_conf *conf, const struct rfw_fw_host_ops *ops,
                             void *host)
{
	struct rfw_fw_conf c = conf != NULL ? *conf : (struct rfw_fw_conf){0};
	struct rfw_fw *fw;

	if (ops == NULL || ops->frame_alloc == NULL || ops->frame_send == NULL ||
	    conf_fill(&c, ops) != 0) {
		errno = EINVAL;
		return NULL;
	}
	fw = aligned_alloc(64, (sizeof(*fw) + 63) / 64 * 64);
	if (fw == NULL)
		return NULL;
	memset(fw, 0, sizeof(*fw));
	fw->qps = calloc(c.dev_attr.max_qp, sizeof(fw->qps[0]));
	fw->rates = calloc(c.dev_attr.max_qp, sizeof(fw->rates[0]));
	fw->pub = aligned_alloc(64, sizeof(fw->pub[0]) * c.dev_attr.max_qp);
	if (fw->qps == NULL || fw->rates == NULL || fw->pub == NULL) {
		fw_free(fw);
		errno = ENOMEM;
		return NULL;
	}
	memset(fw->pub, 0, sizeof(fw->pub[0]) * c.dev_attr.max_qp);
	fw->ops = *ops;
	fw->host = host;
	fw->qpn_base = c.dev_attr.qpn_base;
	fw->max_qp = c.dev_attr.max_qp;
	fw->quantum = c.quantum;
	fw->pacer_burst_ns = c.pacer_burst_ns;
	fw->frame_max = c.frame_max;
	fw->var_win_bytes = c.var_win_bytes;
	fw->udp6_csum = c.udp6_csum;
	fw->cc = c.cc;
	fw->dcqcn = c.dcqcn;
	fw->timely = c.timely;
	fw_wheel_init(&fw->wheel, c.wheel_shift, 0);
	fw_wheel_init(&fw->twheel, c.timer_wheel_shift, 0);
	fw->dev = rfw_dev_create(&c.dev_attr, &fw_io_ops, fw);
	if (fw->dev == NULL) {
		int e = errno;

		fw_free(fw);
		errno = e;
		return NULL;
	}
	return fw;
}

void rfw_fw_destroy(struct rfw_fw *fw)
{
	if (fw == NULL)
		return;
	for (uint32_t i = 0; i < fw->max_qp; i++)
		if (fw->qps[i] != NULL)
			rfw_fw_qp_detach(fw, fw->qps[i]->qp);
	rfw_dev_destroy(fw->dev);
	fw_free(fw);
}

struct rfw_dev *rfw_fw_dev(struct rfw_fw *fw)
{
	return fw->dev;
}

int rfw_fw_qp_attach(struct rfw_fw *fw, struct rfw_qp *qp, const struct rfw_fw_path *path)
{
	struct fw_qp *fq;
	uint32_t i;
	int rc;

	if (fw == NULL || qp == NULL || path == NULL)
		return -EINVAL;
	i = rfw_qp_num(qp) - fw->qpn_base;
	if (i >= fw->max_qp || rfw_dev_qp(fw->dev, rfw_qp_num(qp)) != qp)
		return -EINVAL;
	if (fw->qps[i] != NULL)
		return -EEXIST;
	fq = aligned_alloc(64, (sizeof(*fq) + 63) / 64 * 64);
	if (fq == NULL)
		return -ENOMEM;
	memset(fq, 0, sizeof(*fq));
	fq->qp = qp;
	fq->fw = fw;
	fq->l2_pending = path->l2_pending;
	fq->prio = path->prio;
	fw_qp_nodes_init(fq);
	rc = fw_template(fw, fq, path);
	if (rc == 0)
		rc = fw_rate_attach(fw, fq, path);
	if (rc != 0) {
		free(fq);
		return rc;
	}
	memset(fw->pub[i].ctr, 0, sizeof(fw->pub[i].ctr));
	fq->ctr = fw->pub[i].ctr;
	fw->qps[i] = fq;
	fw->prio_qps[fq->prio]++;
	rfw_fw_publish(fw, i, fw->now_ns);
	fw_ready_push(fw, fq); /* work posted before the attach */
	return 0;
}

void rfw_fw_qp_detach(struct rfw_fw *fw, struct rfw_qp *qp)
{
	uint32_t i = rfw_qp_num(qp) - fw->qpn_base;
	struct fw_qp *fq;

	if (i >= fw->max_qp || (fq = fw->qps[i]) == NULL)
		return;
	fw_wheel_remove(&fw->wheel, &fq->dep);
	fw_wheel_remove(&fw->twheel, &fq->tmr);
	fw_ready_remove(fw, fq);
	fw_rate_detach(fw, fq);
	fw->prio_qps[fq->prio]--;
	fw->qps[i] = NULL;
	rfw_fw_publish(fw, i, fw->now_ns); /* the slot now reads "not attached" */
	free(fq);
}

void rfw_fw_qp_set_mac(struct rfw_fw *fw, struct rfw_qp *qp, const uint8_t mac[6])
{
	struct fw_qp *fq = fw_qp_of(fw, qp);

	if (fq == NULL)
		return;
	memcpy(fq->hdr, mac, 6);
	fq->l2_pending = false;
	fw_ready_push(fw, fq);
}

uint64_t rfw_fw_ctr(const struct rfw_fw *fw, enum rfw_fw_ctr c)
{
	return (unsigned)c < RFW_FW_CTR__COUNT ? fw->ctr[c] : 0;
}

uint64_t rfw_fw_qp_ctr(const struct rfw_fw *fw, const struct rfw_qp *qp, enum rfw_fw_qp_ctr c)
{
	struct fw_qp *fq = fw_qp_of(fw, qp);

	return fq != NULL && (unsigned)c < RFW_FW_QP_CTR__COUNT ? fq->ctr[c] : 0;
}

bool rfw_fw_qp_attached(const struct rfw_fw *fw, const struct rfw_qp *qp)
{
	return fw_qp_of(fw, qp) != NULL;
}

uint64_t rfw_fw_qp_rate_kbps(struct rfw_fw *fw, const struct rfw_qp *qp, uint64_t now_ns)
{
	struct fw_qp *fq = fw_qp_of(fw, qp);

	if (fq == NULL || fq->rate == NULL)
		return 0;
	if (cc_next_deadline(&fq->rate->flow) <= now_ns)
		cc_on_timer(&fq->rate->flow, now_ns);
	return cc_rate_kbps(&fq->rate->flow);
}

const struct cc_flow *rfw_fw_qp_flow(const struct rfw_fw *fw, const struct rfw_qp *qp)
{
	struct fw_qp *fq = fw_qp_of(fw, qp);

	return fq != NULL && fq->rate != NULL ? &fq->rate->flow : NULL;
}

const struct dcqcn_np *rfw_fw_qp_np(const struct rfw_fw *fw, const struct rfw_qp *qp)
{
	struct fw_qp *fq = fw_qp_of(fw, qp);

	return fq != NULL && fq->has_np ? &fq->np : NULL;
}

uint32_t rfw_fw_qp_hdr(const struct rfw_fw *fw, const struct rfw_qp *qp, const uint8_t **hdr)
{
	struct fw_qp *fq = fw_qp_of(fw, qp);

	if (fq == NULL)
		return 0;
	*hdr = fq->hdr;
	return fq->hdr_len;
}

uint32_t rfw_fw_qpn_base(const struct rfw_fw *fw)
{
	return fw->qpn_base;
}

uint32_t rfw_fw_max_qp(const struct rfw_fw *fw)
{
	return fw->max_qp;
}
