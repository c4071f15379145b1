/* SPDX-License-Identifier: BSD-3-Clause */
/* CM MADs in rocefw-replay check (check_cm.h). */
#include <inttypes.h>
#include <string.h>

#include "ctrl/cm_mad.h"
#include "check_cm.h"

static unsigned attr_slot(uint16_t attr)
{
	return attr >= RFW_CM_ATTR_REQ && attr <= RFW_CM_ATTR_DREP ? attr - RFW_CM_ATTR_REQ : 7;
}

/* The exchange a message belongs to: by the active side's ID, or the passive side's. */
static struct check_cm_exchange *find(struct check_cm *cm, uint32_t a, uint32_t b)
{
	for (uint32_t i = 0; i < cm->n; i++) {
		struct check_cm_exchange *x = &cm->x[i];

		if ((a && (x->active_id == a || x->passive_id == a)) ||
		    (b && (x->active_id == b || x->passive_id == b)))
			return x;
	}
	return NULL;
}

static struct check_cm_exchange *add(struct check_cm *cm, uint32_t active_id)
{
	if (cm->n == CHECK_CM_MAX_EXCHANGES) {
		cm->exchanges_dropped++;
		return NULL;
	}
	memset(&cm->x[cm->n], 0, sizeof(cm->x[0]));
	cm->x[cm->n].active_id = active_id;
	return &cm->x[cm->n++];
}

static void ids_of(const struct rfw_cm_msg *m, uint32_t *l, uint32_t *r)
{
	switch (m->attr) {
	case RFW_CM_ATTR_REQ:
		*l = m->req.local_comm_id, *r = 0;
		break;
	case RFW_CM_ATTR_REP:
		*l = m->rep.local_comm_id, *r = m->rep.remote_comm_id;
		break;
	case RFW_CM_ATTR_REJ:
		*l = m->rej.local_comm_id, *r = m->rej.remote_comm_id;
		break;
	case RFW_CM_ATTR_MRA:
		*l = m->mra.local_comm_id, *r = m->mra.remote_comm_id;
		break;
	default:
		*l = m->rtu.local_comm_id, *r = m->rtu.remote_comm_id;
		break;
	}
}

void check_cm_account(struct check_cm *cm, const struct rfw_ib_pkt *p)
{
	struct rfw_cm_msg m;
	struct check_cm_exchange *x;
	uint32_t l, r;

	if (rfw_cm_mad_decode(p->payload, p->payload_len, &m) != 0) {
		cm->bad++;
		return;
	}
	cm->mads++;
	cm->by_attr[attr_slot(m.attr)]++;
	ids_of(&m, &l, &r);
	x = find(cm, l, r);
	if (x == NULL)
		x = add(cm, m.attr == RFW_CM_ATTR_REQ ? l : r);
	if (x == NULL)
		return;
	x->by_attr[attr_slot(m.attr)]++;
	if (m.attr == RFW_CM_ATTR_REQ) {
		x->service_id = m.req.service_id;
		x->req_qpn = m.req.local_qpn;
		x->req_psn = m.req.start_psn;
	} else if (m.attr == RFW_CM_ATTR_REP) {
		x->passive_id = m.rep.local_comm_id;
		x->rep_qpn = m.rep.local_qpn;
		x->rep_psn = m.rep.start_psn;
	} else if (m.attr == RFW_CM_ATTR_REJ) {
		x->rej_reason = m.rej.reason;
	}
}

static json_t *attrs_json(const uint64_t by[8])
{
	json_t *o = json_object();

	for (unsigned i = 0; i < 8; i++)
		if (by[i])
			json_object_set_new(
			    o, i < 7 ? rfw_cm_attr_name((uint16_t)(0x10 + i)) : "other",
			    json_integer((json_int_t)by[i]));
	return o;
}

json_t *check_cm_json(const struct check_cm *cm)
{
	json_t *o = json_object(), *xs = json_array();

	json_object_set_new(o, "mads", json_integer((json_int_t)cm->mads));
	json_object_set_new(o, "undecodable", json_integer((json_int_t)cm->bad));
	json_object_set_new(o, "by_attribute", attrs_json(cm->by_attr));
	for (uint32_t i = 0; i < cm->n; i++) {
		const struct check_cm_exchange *x = &cm->x[i];
		json_t *e = json_object();

		json_object_set_new(e, "active_comm_id", json_integer(x->active_id));
		json_object_set_new(e, "passive_comm_id", json_integer(x->passive_id));
		json_object_set_new(e, "service_id", json_integer((json_int_t)x->service_id));
		json_object_set_new(e, "req_qpn", json_integer(x->req_qpn));
		json_object_set_new(e, "rep_qpn", json_integer(x->rep_qpn));
		json_object_set_new(e, "req_start_psn", json_integer(x->req_psn));
		json_object_set_new(e, "rep_start_psn", json_integer(x->rep_psn));
		if (x->by_attr[attr_slot(RFW_CM_ATTR_REJ)])
			json_object_set_new(e, "rej_reason", json_integer(x->rej_reason));
		json_object_set_new(e, "mads", attrs_json(x->by_attr));
		json_array_append_new(xs, e);
	}
	json_object_set_new(o, "exchanges", xs);
	json_object_set_new(o, "exchanges_not_tracked",
	                    json_integer((json_int_t)cm->exchanges_dropped));
	return o;
}

void check_cm_print(const struct check_cm *cm, FILE *out)
{
	if (cm->mads + cm->bad == 0)
		return;
	fprintf(out,
	        "  CM MADs       %" PRIu64 " (undecodable %" PRIu64 "), %" PRIu32 " exchange(s)\n",
	        cm->mads, cm->bad, cm->n);
	for (uint32_t i = 0; i < cm->n; i++) {
		const struct check_cm_exchange *x = &cm->x[i];

		fprintf(out,
		        "    comm 0x%08" PRIx32 "/0x%08" PRIx32 " service 0x%016" PRIx64
		        " QPN 0x%06" PRIx32 " <-> 0x%06" PRIx32 ":",
		        x->active_id, x->passive_id, x->service_id, x->req_qpn, x->rep_qpn);
		for (unsigned a = 0; a < 7; a++)
			if (x->by_attr[a])
				fprintf(out, " %s %" PRIu64, rfw_cm_attr_name((uint16_t)(0x10 + a)),
				        x->by_attr[a]);
		fprintf(out, "\n");
	}
}
