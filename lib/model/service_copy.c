/* SPDX-License-Identifier: MIT */
/* A service of one model added to another whole: a profile of several
 * services builds each as a profile of one would, then joins them. */
#include <errno.h>

#include "model_int.h"

int model_add_service_copy(struct ditto_model *dst, const struct ditto_service *svc)
{
	const char *name = dn_get_str(CNODE(svc), "name");
	struct dnode *arr, *copy;

	if (ditto_model_find_service(dst, name))
		return ditto_err(-EEXIST, "services: '%s' exists already", name);
	arr = dn_child(dst->root, "services", DN_ARR);
	copy = dn_dup(CNODE(svc));
	if (!arr || !copy || dn_push(arr, copy)) {
		dn_free(copy);
		return ditto_err(-ENOMEM, "out of memory");
	}
	return 0;
}
