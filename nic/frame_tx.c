/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Framing: each QP's header template (wire/frame.h, built once at attach) and the per-packet
 * fields patched into a copy of it (lengths, IPv4 header checksum, the CNP's DSCP/ECN and PCP,
 * the ICRC, optionally the IPv6 UDP checksum). docs/nic.md "Packets out".
 */
#include <errno.h>
#include <string.h>

#include "nic/fw_int.h"

static int path_check(const struct rfw_fw_path *p)
{
	if (p->vlan && (p->vlan_id == 0 || p->vlan_id > 4094))
		return -EINVAL;
	if (p->pcp > 7 || p->cnp_pcp > 7 || p->dscp > 63 || p->cnp_dscp > 63 || p->prio > 7)
		return -EINVAL;
	if (rfw_ip_is_mapped4(p->dst_ip) != rfw_ip_is_mapped4(p->src_ip))
		return -EINVAL;
	return 0;
}

/*
 * Build @fq's template from the path: IPv4 when the destination is IPv4-mapped, else IPv6; one
 * 802.1Q tag when asked. Data and responses: DSCP << 2 | ECT(0); CNPs: cnp_dscp, Not-ECT (a CNP
 * must never be marked), PCP cnp_pcp (patched per packet from cnp_tos / cnp_tci).
 */
int fw_template(const struct rfw_fw *fw, struct fw_qp *fq, const struct rfw_fw_path *path)
{
	struct rfw_frame_spec sp = {0};
	uint8_t tmp[FW_HDR_MAX + 64];
	bool v4 = rfw_ip_is_mapped4(path->dst_ip);
	int off;

	(void)fw;
	if (path_check(path) != 0)
		return -EINVAL;
	memcpy(sp.dst_mac, path->dst_mac, 6);
	memcpy(sp.src_mac, path->src_mac, 6);
	if (path->vlan) {
		sp.nvlan = 1;
		sp.vlan_tci[0] = (uint16_t)(path->pcp << 13 | path->vlan_id);
	}
	sp.ip_ver = v4 ? 4 : 6;
	sp.tos = (uint8_t)(path->dscp << 2 | RFW_ECN_ECT0);
	sp.ttl = 64;
	sp.df = true;
	memcpy(sp.src_ip, path->src_ip, 16);
	memcpy(sp.dst_ip, path->dst_ip, 16);
	sp.udp_sport = path->udp_sport != 0 ? path->udp_sport
	                                    : (uint16_t)(0xc000 | (rfw_qp_num(fq->qp) & 0x3fff));
	off = rfw_frame_build_hdrs(tmp, sizeof(tmp), &sp, 0);
	if (off < 0 || off > FW_HDR_MAX)
		return -EINVAL;
	memcpy(fq->hdr, tmp, (size_t)off);
	fq->hdr_len = (uint8_t)off;
	fq->ip_off = (uint8_t)(RFW_ETH_HLEN + (path->vlan ? RFW_VLAN_HLEN : 0));
	fq->udp_off = (uint8_t)(fq->ip_off + (v4 ? RFW_IPV4_HLEN : RFW_IPV6_HLEN));
	fq->ip_ver = sp.ip_ver;
	fq->vlan = path->vlan;
	fq->host_icrc = fw->ops.frame_send_icrc != NULL && !(sp.ip_ver == 6 && fw->udp6_csum);
	fq->data_tci = sp.vlan_tci[0];
	fq->cnp_tci = (uint16_t)(path->cnp_pcp << 13 | path->vlan_id);
	fq->cnp_tos = (uint8_t)(path->cnp_dscp << 2);
	if (v4) {
		uint8_t *ip = tmp + fq->ip_off;

		rfw_put_be16(ip + 2, 0);
		rfw_put_be16(ip + 10, 0);
		fq->ip4_sum = rfw_csum_add(0, ip, RFW_IPV4_HLEN);
		ip[1] = fq->cnp_tos;
		fq->ip4_sum_cnp = rfw_csum_add(0, ip, RFW_IPV4_HLEN);
	}
	return 0;
}

/* RFC 8200 8.1: pseudo-header (addresses, upper-layer length, next header) + UDP datagram. */
static void udp6_csum(uint8_t *ip, uint8_t *udp, uint32_t udp_len)
{
	uint32_t sum = rfw_csum_add(0, ip + 8, 32);
	uint16_t c;

	sum += udp_len + RFW_IPPROTO_UDP;
	rfw_put_be16(udp + 6, 0);
	sum = rfw_csum_add(sum, udp, udp_len);
	c = (uint16_t)~rfw_csum_fold(sum);
	rfw_put_be16(udp + 6, c != 0 ? c : 0xffff); /* 0 means "no checksum" (RFC 768) */
}

static inline __attribute__((always_inline)) void ip_lengths(const struct fw_qp *fq, uint8_t *ip,
                                                             uint32_t udp_len, bool cnp)
{
	if (fq->ip_ver == 4) {
		uint16_t tot = (uint16_t)(RFW_IPV4_HLEN + udp_len);
		uint32_t sum = (cnp ? fq->ip4_sum_cnp : fq->ip4_sum) + tot;

		rfw_put_be16(ip + 2, tot);
		if (cnp)
			ip[1] = fq->cnp_tos;
		/* The template's sum plus the one field that changes: no pass over the header. */
		rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(sum));
	} else {
		rfw_put_be16(ip + 4, (uint16_t)udp_len);
		if (cnp) {
			uint32_t w = rfw_get_be32(ip);

			rfw_put_be32(ip, (w & ~(0xffu << 20)) | (uint32_t)fq->cnp_tos << 20);
		}
	}
}

/*
 * A UD datagram goes where its work request's address handle says, not along the QP's path:
 * destination MAC and address patched, the IPv4 header checksum computed again (before the
 * ICRC, which covers the destination). The handle has the template's address family (the host
 * makes both from its port's addresses).
 */
static void ud_dest(const struct fw_qp *fq, uint8_t *f, uint8_t *ip, const struct rfw_ah_attr *ah)
{
	memcpy(f, ah->dmac, 6);
	if (fq->ip_ver == 4) {
		memcpy(ip + 16, ah->dgid + 12, 4);
		rfw_put_be16(ip + 10, 0);
		rfw_put_be16(ip + 10, (uint16_t)~rfw_csum_fold(rfw_csum_add(0, ip, RFW_IPV4_HLEN)));
	} else {
		memcpy(ip + 24, ah->dgid, 16);
	}
}

/*
 * The template's @n bytes (42 .. FW_HDR_MAX = 66) into @f as two or three 32-byte copies, the
 * last one overlapping: a copy of a length known only at run time compiles to `rep movsq`,
 * whose start-up cost about as much as the rest of this function.
 */
static inline void hdr_copy(uint8_t *f, const uint8_t *hdr, size_t n)
{
	_Static_assert(FW_HDR_MAX <= 96 && RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN >= 32,
	               "the template is 32 to 96 bytes");
	memcpy(f, hdr, 32);
	if (n > 64)
		memcpy(f + 32, hdr + 32, 32);
	memcpy(f + n - 32, hdr + n - 32, 32);
}

/*
 * Template copy into @f, then the per-packet fields for an IB part of @len bytes already at
 * f + hdr_len. The UDP checksum (IPv6, when configured) covers the ICRC, so it comes last; the
 * ICRC masks it.
 */
static inline __attribute__((always_inline)) void
fw_frame_finish(const struct rfw_fw *fw, const struct fw_qp *fq, uint8_t *f, uint32_t len, bool cnp,
                const struct rfw_ah_attr *ah, bool icrc)
{
	uint8_t *ip = f + fq->ip_off;
	uint8_t *udp = f + fq->udp_off;
	uint32_t udp_len = RFW_UDP_HLEN + len + RFW_ICRC_LEN;
	uint32_t crc;

	hdr_copy(f, fq->hdr, fq->hdr_len);
	if (cnp && fq->vlan)
		rfw_put_be16(f + RFW_ETH_HLEN, fq->cnp_tci); /* the TCI follows the TPID */
	ip_lengths(fq, ip, udp_len, cnp);
	if (ah != NULL)
		ud_dest(fq, f, ip, ah);
	rfw_put_be16(udp + 4, (uint16_t)udp_len);
	if (!icrc)
		return; /* the host fills it (frame_send_icrc) */
	crc = rfw_icrc_compute(ip, (size_t)(udp - ip) + RFW_UDP_HLEN + len, fq->ip_ver);
	rfw_icrc_put(udp + RFW_UDP_HLEN + len, crc);
	if (fq->ip_ver == 6 && fw->udp6_csum)
		udp6_csum(ip, udp, udp_len);
}

/* Whether @fq's class takes another frame now. A full class stops this QP only: no
 * fw->no_buf, other classes go on. */
static inline bool tx_room(struct rfw_fw *fw, struct fw_qp *fq)
{
	if (fw->ops.tx_room == NULL || fw->ops.tx_room(fw->host, fq->prio))
		return true;
	fw->ctr[RFW_FW_CTR_tx_room_waits]++;
	fq->room_wait = true;
	fw->room_refused |= (uint8_t)(1u << fq->prio);
	return false;
}

/*
 * The frame @f from the host (NULL: none now) given to the transport: the fw_qp goes in the
 * last 8 bytes of the template's room, which fw_io_tx_send reads back before the template
 * covers them: no second lookup by QPN (a call into the transport) for the same QP.
 */
static inline uint8_t *tx_given(struct rfw_fw *fw, struct fw_qp *fq, uint8_t *f)
{
	if (f == NULL) {
		fw->ctr[RFW_FW_CTR_tx_no_buf]++;
		fw->no_buf = true;
		return NULL;
	}
	_Static_assert(RFW_ETH_HLEN + RFW_IPV4_HLEN + RFW_UDP_HLEN >= sizeof(fq), "room for fq");
	memcpy(f + fq->hdr_len - sizeof(fq), &fq, sizeof(fq));
	return f + fq->hdr_len;
}

/* A frame of @len bytes of IB part for @qp: the transport writes it after room for the
 * template's headers, so the payload is copied once. */
uint8_t *fw_io_tx_alloc(void *io_ctx, struct rfw_qp *qp, uint32_t len)
{
	struct rfw_fw *fw = io_ctx;
	struct fw_qp *fq = fw_qp_of(fw, qp);
	uint32_t flen;

	if (fq == NULL || !tx_room(fw, fq))
		return NULL;
	flen = fq->hdr_len + len + RFW_ICRC_LEN;
	return tx_given(fw, fq, flen <= fw->frame_max ? fw->ops.frame_alloc(fw->host, flen) : NULL);
}

/* A host without the payload-from-MR ops (rfw_fw_create takes both or neither): such a
 * payload is copied into a whole frame at fw_io_tx_send, its ICRC folded in the same pass
 * (rfw_crc_copy). */
static inline bool ref_copies(const struct rfw_fw *fw)
{
	return fw->ops.frame_alloc_ref == NULL;
}

/*
 * A frame of @hdr_len bytes of IB headers for @qp, its payload sent from @payload where it
 * is (rfw_io_ops.tx_alloc_ref, the host's frame_alloc_ref): the payload is not copied here.
 * A host without that op gives a whole frame, into which send_ref copies the payload.
 */
uint8_t *fw_io_tx_alloc_ref(void *io_ctx, struct rfw_qp *qp, uint32_t hdr_len,
                            const uint8_t *payload, uint32_t payload_len)
{
	struct rfw_fw *fw = io_ctx;
	struct fw_qp *fq = fw_qp_of(fw, qp);
	uint32_t flen, hlen;
	uint8_t *f = NULL;

	if (fq == NULL || !tx_room(fw, fq))
		return NULL;
	hlen = fq->hdr_len + hdr_len;
	flen = hlen + payload_len + RFW_ICRC_LEN;
	if (flen <= fw->frame_max) {
		if (!ref_copies(fw))
			f = fw->ops.frame_alloc_ref(fw->host, hlen, payload, payload_len,
			                            &fw->ref_icrc);
		else if ((f = fw->ops.frame_alloc(fw->host, flen)) != NULL)
			fw->ref_icrc = f + hlen + payload_len;
	}
	fw->ref_frame = f;
	fw->ref_payload = payload;
	fw->ref_len = payload_len;
	return tx_given(fw, fq, f);
}

/* A frame of @fq's, @flen bytes, leaves: the rate machine and the byte counters told (both
 * ways out of fw_io_tx_send). */
static inline __attribute__((always_inline)) void
tx_account(struct rfw_fw *fw, struct fw_qp *fq, uint32_t flen, const struct rfw_tx_meta *m)
{
	fw_rate_on_tx(fq, flen, m, fw->now_ns);
	fw->ctr[RFW_FW_CTR_tx_frame_bytes] += flen;
	fq->ctr[RFW_FW_QP_CTR_tx_frame_bytes] += flen;
}

/*
 * fw_io_tx_send for the frame fw_io_tx_alloc_ref gave out: @len bytes of IB part, of which the
 * last fw->ref_len are at fw->ref_payload. The ICRC is computed here, over the headers and then
 * on over the payload (CRC-32 carries on from one buffer into the next): where it is, or, for
 * a host that copies, as it is copied into the frame, which reads it once instead of twice.
 * The burst's four-at-a-time ICRCs are for short frames, and these are long.
 */
static __attribute__((noinline)) void send_ref(struct rfw_fw *fw, struct fw_qp *fq, uint8_t *f,
                                               uint32_t len, const struct rfw_tx_meta *m)
{
	uint32_t flen = fq->hdr_len + len + RFW_ICRC_LEN, hl = len - fw->ref_len;
	uint8_t *ip = f + fq->ip_off;
	uint32_t crc;

	fw->ref_frame = NULL;
	fw_frame_finish(fw, fq, f, len, false, m->ah, false);
	crc = rfw_icrc_compute(ip, (size_t)(fq->udp_off - fq->ip_off) + RFW_UDP_HLEN + hl,
	                       fq->ip_ver);
	if (ref_copies(fw))
		crc = rfw_crc_copy(crc, f + fq->hdr_len + hl, fw->ref_payload, fw->ref_len);
	else
		crc = rfw_icrc_extend(crc, fw->ref_payload, fw->ref_len);
	rfw_icrc_put(fw->ref_icrc, crc);
	tx_account(fw, fq, flen, m);
	if (ref_copies(fw)) {
		fw->ctr[RFW_FW_CTR_tx_crc_copy_frames]++;
		fw->ops.frame_send(fw->host, f, flen);
	} else {
		fw->ctr[RFW_FW_CTR_tx_ref_frames]++;
		fw->ops.frame_send_ref(fw->host, f, flen);
	}
	fw->sent++;
}

/* The IB part at @buf (from fw_io_tx_alloc or fw_io_tx_alloc_ref) framed and handed to the
 * host. */
void fw_io_tx_send(void *io_ctx, struct rfw_qp *qp, uint8_t *buf, uint32_t len,
                   const struct rfw_tx_meta *m)
{
	struct rfw_fw *fw = io_ctx;
	struct fw_qp *fq;
	uint8_t *f;
	uint32_t flen;

	(void)qp;
	memcpy(&fq, buf - sizeof(fq), sizeof(fq));
	f = buf - fq->hdr_len;
	flen = fq->hdr_len + len + RFW_ICRC_LEN;
	if (__builtin_expect(f == fw->ref_frame, 0)) {
		send_ref(fw, fq, f, len, m);
		return;
	}
	fw_frame_finish(fw, fq, f, len, m->kind == RFW_TX_CNP, m->ah, !fq->host_icrc);
	tx_account(fw, fq, flen, m);
	if (fq->host_icrc)
		fw->ops.frame_send_icrc(fw->host, f, flen, fq->ip_off, fq->ip_ver);
	else
		fw->ops.frame_send(fw->host, f, flen);
	fw->sent++;
}
