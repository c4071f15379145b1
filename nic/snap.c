/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshots for readers on other threads (telemetry, monitors): the owning thread writes a QP
 * slot's state under a sequence counter, a reader copies it and retries if the counter moved.
 * The slot array lives as long as the NIC, so a QP destroyed meanwhile leaves at worst a stale
 * snapshot; a reader never touches a struct rfw_qp.
 */
#include <string.h>

#include "nic/fw_int.h"

void rfw_seq_write_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void rfw_seq_write_end(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

bool rfw_seq_read(const uint32_t *seq, const void *src, void *dst, uint32_t len)
{
	for (unsigned tries = 0; tries < 10000; tries++) {
		uint32_t b = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (b & 1)
			continue;
		memcpy(dst, src, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seq, __ATOMIC_RELAXED) == b)
			return true;
	}
	return false;
}

static void snap_path(struct rfw_fw_snap *s, const struct fw_qp *fq)
{
	const uint8_t *ip = fq->hdr + fq->ip_off;

	s->l2_pending = fq->l2_pending;
	s->ip_ver = fq->ip_ver;
	s->vlan = fq->vlan;
	s->vlan_id = fq->data_tci & 0xfff;
	s->pcp = (uint8_t)(fq->data_tci >> 13);
	s->udp_sport = rfw_get_be16(fq->hdr + fq->udp_off);
	memcpy(s->dst_mac, fq->hdr, 6);
	if (fq->ip_ver == 4) {
		s->dscp = ip[1] >> 2;
		rfw_ip4_to_mapped(s->src_ip, rfw_get_be32(ip + 12));
		rfw_ip4_to_mapped(s->dst_ip, rfw_get_be32(ip + 16));
	} else {
		s->dscp = (uint8_t)(rfw_get_be32(ip) >> 22);
		memcpy(s->src_ip, ip + 8, 16);
		memcpy(s->dst_ip, ip + 24, 16);
	}
}

static void snap_cc(struct rfw_fw_snap *s, const struct rfw_fw *fw, const struct fw_qp *fq)
{
	const struct fw_rate *r = fq->rate;

	s->cc = (uint8_t)fw->cc;
	if (fq->has_np)
		memcpy(s->np_cnt, fq->np.cnt, sizeof(s->np_cnt));
	if (r == NULL)
		return;
	s->scope = r->prof != NULL ? r->prof->scope : DCQCN_SCOPE_QP;
	s->rate_kbps = cc_rate_kbps(&r->flow);
	if (r->flow.algo == CC_ALGO_DCQCN) {
		const struct dcqcn_rp *rp = &r->flow.u.dcqcn;

		s->rp_state = rp->state;
		s->paced = rp->state != DCQCN_RP_IDLE && rp->state != DCQCN_RP_AT_MAX;
		s->target_kbps = dcqcn_rp_target_kbps(rp);
		s->alpha = dcqcn_rp_alpha(rp);
		memcpy(s->rp_cnt, rp->cnt, sizeof(s->rp_cnt));
	} else {
		s->paced = s->rate_kbps < fw->timely->max_kbps;
		s->target_kbps = s->rate_kbps;
	}
}

/*
 * Whether @fq's last snapshot still holds: it sent and received nothing and kept its state (an
 * idle QP's rate machine does no work: fw_rate_kbps runs it lazily), and no other QP moves its
 * rate (a rate shared under rp_scope dst/port may). Else the signature is taken anew.
 */
static bool snap_unchanged(struct fw_qp *fq)
{
	uint64_t tx = rfw_qp_counter(fq->qp, RFW_CNT_tx_packets);
	uint64_t rx = rfw_qp_counter(fq->qp, RFW_CNT_rx_packets);
	uint8_t st = (uint8_t)(rfw_qp_state(fq->qp) + 1);

	if (fq->pub_state == st && fq->pub_tx == tx && fq->pub_rx == rx &&
	    (fq->rate == NULL || fq->rate->refs == 1))
		return true;
	fq->pub_tx = tx;
	fq->pub_rx = rx;
	fq->pub_state = st;
	return false;
}

void rfw_fw_publish(struct rfw_fw *fw, uint32_t slot, uint64_t now_ns)
{
	struct fw_pub *p = &fw->pub[slot];
	struct fw_qp *fq = fw->qps[slot];
	struct rfw_fw_snap *s = &p->s;

	if (fq != NULL && s->attached && s->qpn == rfw_qp_num(fq->qp) && snap_unchanged(fq)) {
		rfw_seq_write_begin(&p->seq);
		s->at_ns = now_ns;
		rfw_seq_write_end(&p->seq);
		fw->ctr[RFW_FW_CTR_snapshots_unchanged]++;
		return;
	}
	rfw_seq_write_begin(&p->seq);
	memset(s, 0, sizeof(*s));
	s->at_ns = now_ns;
	s->attached = fq != NULL;
	if (fq != NULL) {
		struct rfw_qp_attr a;

		(void)rfw_query_qp(fq->qp, &a);
		s->qpn = rfw_qp_num(fq->qp);
		s->state = (uint8_t)a.qp_state;
		s->transport_mode = (uint8_t)a.transport_mode;
		s->path_mtu = rfw_mtu_to_bytes(a.path_mtu);
		s->dest_qpn = a.dest_qp_num;
		s->sq_psn = a.sq_psn;
		s->rq_psn = a.rq_psn;
		snap_path(s, fq);
		snap_cc(s, fw, fq);
		rfw_qp_counters(fq->qp, s->tcnt);
		memcpy(s->ctr, fq->ctr, sizeof(s->ctr));
	}
	rfw_seq_write_end(&p->seq);
	fw->ctr[RFW_FW_CTR_snapshots]++;
}

void rfw_fw_publish_dev(struct rfw_fw *fw, uint64_t now_ns)
{
	struct fw_dev_pub *p = &fw->dev_pub;

	rfw_seq_write_begin(&p->seq);
	p->at_ns = now_ns;
	rfw_dev_counters(fw->dev, p->cnt);
	rfw_seq_write_end(&p->seq);
}

bool rfw_fw_snap_read(const struct rfw_fw *fw, uint32_t slot, struct rfw_fw_snap *out)
{
	const struct fw_pub *p;

	if (slot >= fw->max_qp)
		return false;
	p = &fw->pub[slot];
	if (!rfw_seq_read(&p->seq, &p->s, out, sizeof(*out)))
		return false;
	/* The counters are live (one writer, 64-bit words): newer than the snapshot's copy. */
	for (unsigned k = 0; k < RFW_FW_QP_CTR__COUNT; k++)
		out->ctr[k] = __atomic_load_n(&p->ctr[k], __ATOMIC_RELAXED);
	return true;
}

bool rfw_fw_dev_read(const struct rfw_fw *fw, uint64_t cnt[RFW_CNT__COUNT], uint64_t *at_ns)
{
	struct fw_dev_pub c;

	if (!rfw_seq_read(&fw->dev_pub.seq, &fw->dev_pub, &c, sizeof(c)))
		return false;
	memcpy(cnt, c.cnt, sizeof(c.cnt));
	*at_ns = c.at_ns;
	return true;
}

uint64_t rfw_fw_ctr_read(const struct rfw_fw *fw, enum rfw_fw_ctr c)
{
	return (unsigned)c < RFW_FW_CTR__COUNT ? __atomic_load_n(&fw->ctr[c], __ATOMIC_RELAXED) : 0;
}
