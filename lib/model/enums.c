/* SPDX-License-Identifier: MIT */
/* Names of the model's enumerations, from the schema's tables. */
#include "model_int.h"

static const char *name_of(const char *const *names, int v)
{
	int n = 0;

	while (names[n])
		n++;
	return v >= 0 && v < n ? names[v] : names[0];
}

static int parse(const char *const *names, const char *what, const char *name, int *out)
{
	int i = name ? enum_index(names, name) : -1;

	if (i < 0)
		return ditto_err(-DITTO_ENOTFOUND, "'%s' is not a %s", name ? name : "(null)", what);
	*out = i;
	return 0;
}

#define ENUM_FUNCS(type, table, what)                                               \
	DITTO_API const char *ditto_##type##_name(enum ditto_##type v)              \
	{                                                                           \
		return name_of(table, (int)v);                                       \
	}                                                                           \
	DITTO_API int ditto_##type##_parse(const char *name, enum ditto_##type *out) \
	{                                                                           \
		int v = 0, err = parse(table, what, name, &v);                           \
		if (!err)                                                           \
			*out = (enum ditto_##type)v;                                 \
		return err;                                                         \
	}

ENUM_FUNCS(framing, enum_framing, "wire framing")
ENUM_FUNCS(role, enum_role, "thread role")
ENUM_FUNCS(io_model, enum_io_model, "I/O model")
ENUM_FUNCS(fd_kind, enum_fd_kind, "fd kind")
ENUM_FUNCS(call_mode, enum_call_mode, "call mode")
ENUM_FUNCS(call_order, enum_call_order, "call order")
ENUM_FUNCS(edge_source, enum_edge_source, "edge source")
