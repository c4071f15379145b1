/* SPDX-License-Identifier: BSD-3-Clause */
/* --cc-set lists over cc/'s parameter tables. See rfw_ccset.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/rfw_ccset.h"

int rfw_cc_set_apply(struct dcqcn_params *d, struct timely_params *t, const char *list, char *msg,
                     size_t len)
{
	char buf[512], *one, *save = NULL;

	if (list == NULL)
		return 0;
	if (strlen(list) >= sizeof(buf)) {
		snprintf(msg, len, "--cc-set: list longer than %zu bytes", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (one = strtok_r(buf, ",", &save); one; one = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(one, '=');
		int rc;

		if (eq == NULL) {
			snprintf(msg, len, "--cc-set '%s': expected name=value", one);
			return -EINVAL;
		}
		*eq = '\0';
		if (t != NULL && strncmp(one, "timely_", 7) == 0)
			rc = timely_param_set_msg(t, one, eq + 1, msg, len);
		else
			rc = dcqcn_param_set_msg(d, one, eq + 1, msg, len);
		if (rc < 0)
			return -EINVAL;
	}
	return 0;
}
