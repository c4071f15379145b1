/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the out-of-band record parser (ctrl/rfw_oob.c). Oracles: the framing never
 * claims more bytes than it was given; a record that decodes is encoded again and must decode
 * to the same message, and encoding that message once more must give the same bytes (the
 * encoder's output is canonical); a refused record always comes with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/rfw_oob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct rfw_oob_msg *a, const struct rfw_oob_msg *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case RFW_OOB_CONN: {
		const struct rfw_oob_conn *x = &a->u.conn, *y = &b->u.conn;

		return x->test == y->test && x->kind == y->kind && x->transport == y->transport &&
		       x->mtu == y->mtu && x->size == y->size && x->iters == y->iters &&
		       x->duration_s == y->duration_s && x->depth == y->depth &&
		       memcmp(x->gid, y->gid, 16) == 0 && x->ip4 == y->ip4 &&
		       x->has_mac == y->has_mac &&
		       (!x->has_mac || memcmp(x->mac, y->mac, 6) == 0) && x->rkey == y->rkey &&
		       x->qps == y->qps &&
		       memcmp(x->qp, y->qp, sizeof(x->qp[0]) * rfw_oob_conn_lines(x)) == 0;
	}
	case RFW_OOB_QPS:
		return a->u.qps.first == b->u.qps.first && a->u.qps.n == b->u.qps.n &&
		       memcmp(a->u.qps.qp, b->u.qps.qp, sizeof(a->u.qps.qp[0]) * a->u.qps.n) == 0;
	case RFW_OOB_RESULT:
		return a->u.result.messages == b->u.result.messages &&
		       a->u.result.checked_bytes == b->u.result.checked_bytes &&
		       a->u.result.verified == b->u.result.verified &&
		       a->u.result.has_time == b->u.result.has_time &&
		       (!a->u.result.has_time || (a->u.result.busy_ns == b->u.result.busy_ns &&
		                                  a->u.result.tool_ns == b->u.result.tool_ns)) &&
		       strcmp(a->u.result.error, b->u.result.error) == 0;
	case RFW_OOB_ERROR:
		return strcmp(a->u.error.reason, b->u.error.reason) == 0;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rfw_oob_msg m, m2;
	static char buf[RFW_OOB_RECORD_MAX + 1], buf2[RFW_OOB_RECORD_MAX + 1];
	char err[RFW_OOB_ERR_MAX];
	int rl, n, n2;

	rl = rfw_oob_record_len((const char *)data, size);
	if (rl > 0 && (size_t)rl > size)
		abort();
	/* Decode the input whole (not only a framed prefix), as a peer's bytes could be. */
	if (rfw_oob_decode((const char *)data, size, &m, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort(); /* every refusal names its cause */
		return 0;
	}
	n = rfw_oob_encode(&m, buf, sizeof(buf));
	if (n < 0)
		abort(); /* whatever decodes must encode */
	if (rfw_oob_record_len(buf, (size_t)n) != n)
		abort();
	if (rfw_oob_decode(buf, (size_t)n, &m2, err, sizeof(err)) != 0 || !same(&m, &m2))
		abort();
	n2 = rfw_oob_encode(&m2, buf2, sizeof(buf2));
	if (n2 != n || memcmp(buf, buf2, (size_t)n) != 0)
		abort();
	return 0;
}
