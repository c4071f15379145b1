/* SPDX-License-Identifier: BSD-3-Clause */
/* The environment rocefw-run sets, parsed once (verbs/conf.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/conf.h"

int rfw_vconf_parse_ip4(const char *s, uint32_t *ip4)
{
	struct in_addr a;

	if (s == NULL || inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*ip4 = ntohl(a.s_addr);
	return 0;
}

int rfw_vconf_parse_max_qp(const char *s, uint32_t *max_qp)
{
	char *end;
	unsigned long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < RFW_VCONF_MAX_QP_MIN || v > RFW_VCONF_MAX_QP_MAX)
		return -EINVAL;
	*max_qp = (uint32_t)v;
	return 0;
}

static int bad(char *err, size_t errlen, const char *var, const char *val, const char *why)
{
	snprintf(err, errlen, "%s=%s: %s", var, val, why);
	return -EINVAL;
}

int rfw_vconf_read(struct rfw_vconf *c, char *err, size_t errlen)
{
	const char *eal = getenv("ROCEFW_EAL");
	const char *ip = getenv("ROCEFW_IP");
	const char *dev = getenv("ROCEFW_DEV");
	const char *prog = getenv("ROCEFW_PROGRESS");
	const char *stats = getenv("ROCEFW_STATS");
	const char *max_qp = getenv("ROCEFW_MAX_QP");

	memset(c, 0, sizeof(*c));
	c->ip4 = RFW_VCONF_LOOPBACK_IP4;
	strcpy(c->dev_name, "rocefw0");
	if (eal != NULL) {
		if (strlen(eal) >= sizeof(c->eal))
			return bad(err, errlen, "ROCEFW_EAL", "...", "too long");
		strcpy(c->eal, eal);
	}
	if (ip != NULL && *ip != '\0' && rfw_vconf_parse_ip4(ip, &c->ip4) != 0)
		return bad(err, errlen, "ROCEFW_IP", ip, "not an IPv4 address");
	if (dev != NULL && *dev != '\0') {
		if (strlen(dev) >= sizeof(c->dev_name))
			return bad(err, errlen, "ROCEFW_DEV", dev, "name too long");
		strcpy(c->dev_name, dev);
	}
	c->stats = stats != NULL && strcmp(stats, "1") == 0;
	c->max_qp = RFW_VCONF_MAX_QP_DEFAULT;
	if (max_qp != NULL && *max_qp != '\0' && rfw_vconf_parse_max_qp(max_qp, &c->max_qp) != 0)
		return bad(err, errlen, "ROCEFW_MAX_QP", max_qp, "expected a QP count, 16..65536");
	if (prog == NULL || *prog == '\0' || strcmp(prog, "thread") == 0)
		c->progress = RFW_PROGRESS_THREAD;
	else if (strcmp(prog, "inline") == 0)
		c->progress = RFW_PROGRESS_INLINE;
	else
		return bad(err, errlen, "ROCEFW_PROGRESS", prog, "expected thread or inline");
	return 0;
}
