/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles of the rocefw device, for UD work requests: ibv_create_ah takes the GRH's
 * destination GID (RoCE has no LIDs, so is_global must be set: ibv_ud_pingpong -g 0), the
 * neighbour's MAC comes from rocefw's ARP (asked at create, waited for at the first post), and
 * the transport gets a rfw_ah whose attributes the NIC frames datagrams from.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs/vrb.h"
#include "wire/frame.h"

#define AH_RESOLVE_MS 3000 /* ARP retries are the neighbour layer's; this bounds the wait */

/* Wait for the neighbour's MAC: the NIC's RX (progress thread, or here inline) learns it. */
static int resolve(struct rfw_vrb_ctx *x, const uint8_t gid[16], uint8_t mac[6])
{
	const struct timespec ms = {.tv_nsec = 1000000};
	int rc = -EAGAIN;

	for (int i = 0; i < AH_RESOLVE_MS && rc == -EAGAIN; i++) {
		rfw_eng_lock(x->eng);
		rc = rfw_eng_resolve(x->eng, gid, mac);
		if (rc == -EAGAIN && x->inline_progress)
			rfw_vrb_progress_step(x->eng);
		rfw_eng_unlock(x->eng);
		if (rc == -EAGAIN)
			nanosleep(&ms, NULL);
	}
	return rc == -EAGAIN ? -EHOSTUNREACH : rc;
}

/*
 * The MAC is asked for here (one ARP request, no wait) and waited for when the first datagram
 * is posted: with inline progress the peer answers ARP only while it is in a verb, and a
 * program such as ibv_ud_pingpong makes its AH while the peer is blocked in the TCP exchange.
 */
struct ibv_ah *rfw_vrb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(pd->context);
	struct rfw_eng_port_info pi;
	struct rfw_ah_attr r = {0};
	struct rfw_vrb_ah *h;
	int rc;

	if (!a->is_global || a->grh.sgid_index != 0) {
		fprintf(stderr, "rocefw-verbs: ibv_create_ah: RoCE needs a GRH with the peer's GID "
		                "and sgid_index 0 (rocefw's GID table has index 0 only)\n");
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	rfw_eng_port_info(x->eng, &pi);
	memcpy(r.dgid, a->grh.dgid.raw, 16);
	memcpy(r.sgid, pi.gid, 16);
	r.traffic_class = a->grh.traffic_class;
	rfw_eng_lock(x->eng);
	rc = rfw_eng_resolve(x->eng, r.dgid, r.dmac);
	h->ah = rfw_create_ah(((struct rfw_vrb_pd *)pd)->pd, &r);
	rfw_eng_unlock(x->eng);
	if (h->ah == NULL || (rc != 0 && rc != -EAGAIN)) {
		if (h->ah != NULL)
			rfw_destroy_ah(h->ah);
		free(h);
		errno = rc != 0 && rc != -EAGAIN ? -rc : ENOMEM;
		return NULL;
	}
	h->resolved = rc == 0;
	h->ctx = x;
	memcpy(h->dgid, r.dgid, 16);
	h->ibv.context = pd->context;
	h->ibv.pd = pd;
	return &h->ibv;
}

int rfw_vrb_ah_resolve(struct rfw_vrb_ah *h)
{
	uint8_t mac[6];
	int rc;

	if (__atomic_load_n(&h->resolved, __ATOMIC_ACQUIRE))
		return 0;
	rc = resolve(h->ctx, h->dgid, mac);
	if (rc != 0) {
		fprintf(stderr, "rocefw-verbs: ibv_post_send: no MAC for the AH's GID: %s\n",
		        strerror(-rc));
		return -rc;
	}
	rfw_eng_lock(h->ctx->eng);
	rfw_ah_set_dmac(h->ah, mac);
	rfw_eng_unlock(h->ctx->eng);
	__atomic_store_n(&h->resolved, true, __ATOMIC_RELEASE);
	return 0;
}

int rfw_vrb_destroy_ah(struct ibv_ah *ah)
{
	struct rfw_vrb_ah *h = (struct rfw_vrb_ah *)ah;
	struct rfw_vrb_ctx *x = rfw_vrb_ctx_of(ah->context);
	int rc;

	rfw_eng_lock(x->eng);
	rc = rfw_destroy_ah(h->ah);
	rfw_eng_unlock(x->eng);
	if (rc == 0)
		free(h);
	return rc;
}

/* An IPv4 header (the last 20 bytes of a RoCEv2 GRH) whose checksum holds. */
static bool grh_is_ipv4(const uint8_t *g)
{
	const uint8_t *ip = g + 20;

	return ip[0] == 0x45 && rfw_csum_fold(rfw_csum_add(0, ip, RFW_IPV4_HLEN)) == 0xffff;
}

int rfw_vrb_init_ah_from_wc(struct ibv_context *c, uint8_t port, const struct ibv_wc *wc,
                            const struct ibv_grh *grh, struct ibv_ah_attr *a)
{
	const uint8_t *g = (const uint8_t *)grh;
	static const uint8_t v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	(void)c;
	if (!(wc->wc_flags & IBV_WC_GRH) || grh == NULL || port != 1)
		return EINVAL; /* RoCE: the sender is known only from the GRH */
	memset(a, 0, sizeof(*a));
	a->is_global = 1;
	a->port_num = port;
	a->grh.hop_limit = 0xff;
	a->grh.sgid_index = 0;
	if (grh_is_ipv4(g)) {
		memcpy(a->grh.dgid.raw, v4m, 12);
		memcpy(a->grh.dgid.raw + 12, g + 20 + 12, 4); /* the IPv4 source */
		a->grh.traffic_class = g[21];
	} else if ((g[0] >> 4) == 6) {
		memcpy(a->grh.dgid.raw, g + 8, 16); /* the IPv6 source */
		a->grh.traffic_class = (uint8_t)(g[0] << 4 | g[1] >> 4);
	} else {
		return EINVAL;
	}
	return 0;
}
