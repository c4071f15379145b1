/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_getaddrinfo / rdma_freeaddrinfo for rocefw: names and services through the system's
 * getaddrinfo (IPv4), the RDMA fields from the hints with librdmacm's defaults (RC QP, TCP port
 * space). A passive lookup fills the source address; an active one the destination, and the
 * source as the device's own address (where rdma_resolve_addr will bind). No routes or connect
 * data (ai_route, ai_connect: IB ACM only).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/cma.h"

static struct sockaddr *dup_sin(const struct sockaddr_in *in)
{
	struct sockaddr_in *s = malloc(sizeof(*s));

	if (s)
		*s = *in;
	return (struct sockaddr *)s;
}

static int lookup(const char *node, const char *service, bool passive, bool numeric,
                  struct sockaddr_in *out)
{
	struct addrinfo h = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *r = NULL;
	int rc;

	h.ai_flags = (passive ? AI_PASSIVE : 0) | (numeric ? AI_NUMERICHOST : 0);
	rc = getaddrinfo(node, service, &h, &r);
	if (rc != 0)
		return rc;
	memcpy(out, r->ai_addr, sizeof(*out));
	freeaddrinfo(r);
	return 0;
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
                     struct rdma_addrinfo **res)
{
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	struct sockaddr_in a, own = {.sin_family = AF_INET};
	struct rdma_addrinfo *r;
	int rc;

	if (res == NULL || (node == NULL && service == NULL))
		return EAI_NONAME;
	if (hints && hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET)
		return EAI_FAMILY;
	rc = lookup(node, service, passive, hints && (hints->ai_flags & RAI_NUMERICHOST), &a);
	if (rc != 0)
		return rc;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return EAI_MEMORY;
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = AF_INET;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	if (passive) {
		r->ai_src_addr = dup_sin(&a);
		r->ai_src_len = sizeof(a);
	} else {
		own.sin_addr.s_addr = htonl(rfw_vrb_dev.conf.ip4);
		r->ai_dst_addr = dup_sin(&a);
		r->ai_dst_len = sizeof(a);
		r->ai_src_addr = dup_sin(&own);
		r->ai_src_len = sizeof(own);
	}
	if ((passive && r->ai_src_addr == NULL) ||
	    (!passive && (r->ai_dst_addr == NULL || r->ai_src_addr == NULL))) {
		rdma_freeaddrinfo(r);
		return EAI_MEMORY;
	}
	*res = r;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *n;

	for (; res; res = n) {
		n = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}
