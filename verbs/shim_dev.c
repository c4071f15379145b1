/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exported verbs on devices and contexts: the device list (the real devices plus rocefw0),
 * open/close, the queries, async events. Each one forwards to the real libibverbs unless the
 * device or context is rocefw's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs/shim.h"

/* Not in the public headers: libibverbs' private ABI (driver.h), as exported by rdma-core 44
 * at IBVERBS_PRIVATE_34. The type values are those of sysfs' gid_attrs/types. */
enum rfw_gid_type_sysfs { RFW_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, RFW_GID_TYPE_SYSFS_ROCE_V2 = 1 };
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
                       enum rfw_gid_type_sysfs *type);

struct rfw_vrb_device rfw_vrb_dev;

/*
 * The next definition after ours (RTLD_NEXT) is libibverbs' when the program links it. A
 * program that reaches libibverbs through a dlopen'ed module (Python's pyverbs: extension
 * modules are loaded RTLD_LOCAL) has it outside the global scope, where RTLD_NEXT does not
 * look: then ask libibverbs.so.1 itself (already loaded, or loaded now).
 */
void *rfw_vrb_real(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version), *h;

	if (f == NULL && (h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL)) != NULL)
		f = dlvsym(h, name, version);
	if (f == NULL) {
		fprintf(stderr,
		        "rocefw-verbs: the real libibverbs has no %s@%s (%s): not the "
		        "rdma-core this library was built for\n",
		        name, version, dlerror());
		abort();
	}
	return f;
}

static void device_setup(void)
{
	struct ibv_device *d = &rfw_vrb_dev.ibv;
	char err[256];

	if (rfw_vconf_read(&rfw_vrb_dev.conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocefw-verbs: %s: no rocefw device\n", err);
		return;
	}
	rfw_vrb_dev.conf_ok = true;
	d->node_type = IBV_NODE_CA;
	d->transport_type = IBV_TRANSPORT_IB;
	snprintf(d->name, sizeof(d->name), "%s", rfw_vrb_dev.conf.dev_name);
	snprintf(d->dev_name, sizeof(d->dev_name), "uverbs-%s", rfw_vrb_dev.conf.dev_name);
	/* No kernel device: paths that exist nowhere, so sysfs reads fail cleanly. */
	snprintf(d->dev_path, sizeof(d->dev_path), "/nonexistent/rocefw/%s", d->dev_name);
	snprintf(d->ibdev_path, sizeof(d->ibdev_path), "/nonexistent/rocefw/%s", d->name);
}

bool rfw_vrb_device_ready(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, device_setup);
	return rfw_vrb_dev.conf_ok;
}

static bool is_dev(const struct ibv_device *d)
{
	return d == &rfw_vrb_dev.ibv;
}

/* The lists handed out, each with the real list it extends (freed with it). */
struct dev_list {
	struct ibv_device **mine, **real;
	struct dev_list *next;
};
static struct dev_list *lists;
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;

static struct ibv_device **real_get_device_list(int *n)
{
	RFW_FWD("IBVERBS_1.1", ibv_get_device_list, n);
}

struct ibv_device **ibv_get_device_list(int *num)
{
	int n = 0, i;
	struct ibv_device **real = real_get_device_list(&n);
	struct dev_list *l = calloc(1, sizeof(*l));
	bool mine = rfw_vrb_device_ready();

	if (real == NULL)
		n = 0; /* no kernel RDMA here: only rocefw */
	if (l == NULL || (l->mine = calloc((size_t)n + 2, sizeof(*l->mine))) == NULL) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		l->mine[i] = real[i];
	if (mine)
		l->mine[n++] = &rfw_vrb_dev.ibv;
	l->real = real;
	pthread_mutex_lock(&lists_lock);
	l->next = lists;
	lists = l;
	pthread_mutex_unlock(&lists_lock);
	if (num != NULL)
		*num = n;
	return l->mine;
}

static void real_free_device_list(struct ibv_device **list)
{
	RFW_FWD("IBVERBS_1.1", ibv_free_device_list, list);
}

void ibv_free_device_list(struct ibv_device **list)
{
	struct dev_list **pp, *l = NULL;

	pthread_mutex_lock(&lists_lock);
	for (pp = &lists; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->mine == list) {
			l = *pp;
			*pp = l->next;
			break;
		}
	pthread_mutex_unlock(&lists_lock);
	if (l == NULL) {
		real_free_device_list(list);
		return;
	}
	if (l->real != NULL)
		real_free_device_list(l->real);
	free(l->mine);
	free(l);
}

const char *ibv_get_device_name(struct ibv_device *d)
{
	if (is_dev(d))
		return d->name;
	RFW_FWD("IBVERBS_1.1", ibv_get_device_name, d);
}

__be64 ibv_get_device_guid(struct ibv_device *d)
{
	if (is_dev(d))
		return rfw_vrb_node_guid();
	RFW_FWD("IBVERBS_1.1", ibv_get_device_guid, d);
}

int ibv_get_device_index(struct ibv_device *d)
{
	if (is_dev(d))
		return 1000; /* no kernel ibdev index: one beyond any real one */
	RFW_FWD("IBVERBS_1.9", ibv_get_device_index, d);
}

struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	if (is_dev(d))
		return rfw_vrb_open();
	RFW_FWD("IBVERBS_1.1", ibv_open_device, d);
}

/* A rocefw context's cmd_fd (RFW_VRB_CMD_FD_NAME) cannot be imported: rocefw's objects live
 * in the process that created them. Any other fd goes to libibverbs. */
struct ibv_context *ibv_import_device(int fd)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		if (strstr(target, "memfd:" RFW_VRB_CMD_FD_NAME) != NULL) {
			errno =
			    rfw_vrb_unsupported("ibv_import_device", "sharing a context between "
			                                             "processes");
			return NULL;
		}
	}
	RFW_FWD("IBVERBS_1.10", ibv_import_device, fd);
}

int ibv_close_device(struct ibv_context *c)
{
	if (rfw_vrb_ours(c))
		return rfw_vrb_close(c);
	RFW_FWD("IBVERBS_1.1", ibv_close_device, c);
}

int ibv_get_async_event(struct ibv_context *c, struct ibv_async_event *ev)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_get_async_event, c, ev);
	return rfw_vrb_get_async_event(c, ev);
}

int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_query_device, c, a);
	return rfw_vrb_query_device(c, a);
}

/* The exported (pre-verbs_context) entry: old callers pass the older, shorter struct, which
 * ends with link_layer. */
int ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *a)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_query_port, c, port, a);
	return rfw_vrb_query_port(c, port, (struct ibv_port_attr *)(void *)a,
	                          offsetof(struct ibv_port_attr, flags));
}

int ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_query_gid, c, port, index, gid);
	return rfw_vrb_query_gid(c, port, index, gid);
}

int _ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index, struct ibv_gid_entry *e,
                      uint32_t flags, size_t entry_size)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.11", _ibv_query_gid_ex, c, port, index, e, flags, entry_size);
	if (flags != 0)
		return EINVAL;
	return rfw_vrb_query_gid_ex(c, port, index, e, entry_size);
}

ssize_t _ibv_query_gid_table(struct ibv_context *c, struct ibv_gid_entry *e, size_t max,
                             uint32_t flags, size_t entry_size)
{
	int ret;

	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.11", _ibv_query_gid_table, c, e, max, flags, entry_size);
	if (flags != 0 || entry_size < sizeof(*e))
		return -EINVAL;
	if (max == 0)
		return -EINVAL; /* the table has one entry */
	ret = rfw_vrb_query_gid_ex(c, 1, 0, e, entry_size);
	return ret != 0 ? -ret : 1;
}

int ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index,
                       enum rfw_gid_type_sysfs *type)
{
	union ibv_gid gid;

	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_PRIVATE_34", ibv_query_gid_type, c, port, index, type);
	if (rfw_vrb_query_gid(c, port, (int)index, &gid) != 0)
		return -1;
	if (index != 0) {
		errno = ENODATA;
		return -1;
	}
	*type = RFW_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

int ibv_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_query_pkey, c, port, index, pkey);
	return rfw_vrb_query_pkey(c, port, index, pkey);
}

int ibv_get_pkey_index(struct ibv_context *c, uint8_t port, __be16 pkey)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.5", ibv_get_pkey_index, c, port, pkey);
	return port == 1 && be16toh(pkey) == 0xffff ? 0 : -1;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *c)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.0", ibv_create_comp_channel, c);
	return rfw_vrb_create_channel(c);
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	if (!rfw_vrb_ours(ch->context))
		RFW_FWD("IBVERBS_1.0", ibv_destroy_comp_channel, ch);
	return rfw_vrb_destroy_channel(ch);
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_alloc_pd, c);
	return rfw_vrb_alloc_pd(c);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *cq_context,
                             struct ibv_comp_channel *ch, int vector)
{
	if (!rfw_vrb_ours(c))
		RFW_FWD("IBVERBS_1.1", ibv_create_cq, c, cqe, cq_context, ch, vector);
	return rfw_vrb_create_cq(c, cqe, cq_context, ch, vector);
}

int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	if (!rfw_vrb_ours(ch->context))
		RFW_FWD("IBVERBS_1.1", ibv_get_cq_event, ch, cq, cq_context);
	return rfw_vrb_get_cq_event(ch, cq, cq_context);
}
