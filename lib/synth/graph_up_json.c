/* SPDX-License-Identifier: MIT */
/*
 * up.json read back (`ditto down`, and `ditto up` checking that no runner
 * holds the tree): the runner's and each tier's pid, start time and
 * executable, read with jansson under limits (json_bounded.c) and checked,
 * since those pids are about to be signalled.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_run.h"
#include "json_bounded.h"

#define UP_JSON_MAX ((size_t)1 << 20)

static int read_pid(struct json_ctx *c, json_t *obj, const char *key, pid_t *out)
{
	uint64_t v;
	int err = json_get_u64(c, obj, key, true, &v, NULL);

	if (err)
		return err;
	if (v < 1 || v > INT_MAX)
		return json_fail(c, -DITTO_EINVALID, key, "%llu is no pid",
				 (unsigned long long)v);
	*out = (pid_t)v;
	return 0;
}

static int read_tier(struct json_ctx *c, json_t *obj, struct up_tier *t)
{
	const char *exe;
	uint64_t ticks;
	int err;

	if (!json_is_object(obj))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = read_pid(c, obj, "pid", &t->pid)) ||
	    (err = json_get_u64(c, obj, "start_ticks", true, &ticks, NULL)) ||
	    (err = json_get_str(c, obj, "exe", true, &exe)))
		return err;
	if (exe[0] != '/' || strlen(exe) >= sizeof(t->exe))
		return json_fail(c, -DITTO_EINVALID, "exe", "not an absolute path shorter than %zu",
				 sizeof(t->exe));
	t->ticks = ticks;
	snprintf(t->exe, sizeof(t->exe), "%s", exe);
	return 0;
}

static int read_doc(json_t *doc, struct json_ctx *c, void *user)
{
	struct up_state *s = user;
	uint64_t schema, ticks;
	json_t *tiers, *v;
	size_t i, at;
	int err;

	if (!json_is_object(doc))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = json_get_u64(c, doc, "schema", true, &schema, NULL)))
		return err;
	if (schema != 1)
		return json_fail(c, -DITTO_ESCHEMA, "schema", "%llu (this libditto reads 1)",
				 (unsigned long long)schema);
	if ((err = read_pid(c, doc, "runner", &s->runner)) ||
	    (err = json_get_u64(c, doc, "runner_start_ticks", true, &ticks, NULL)) ||
	    (err = json_get_array(c, doc, "tiers", true, &tiers)))
		return err;
	s->runner_ticks = ticks;
	if (json_array_size(tiers) > GRAPH_NODES_MAX)
		return json_fail(c, -DITTO_ELIMIT, "tiers", "more than %d", GRAPH_NODES_MAX);
	json_array_foreach(tiers, i, v) {
		at = json_ctx_key(c, "tiers");
		json_ctx_index(c, i);
		err = read_tier(c, v, &s->tiers[i]);
		json_ctx_restore(c, at);
		if (err)
			return err;
		s->n++;
	}
	return 0;
}

/* Depth 3 is the tiers' members: one more for slack, not for nesting. */
static const struct json_limits up_limits = { .max_bytes = UP_JSON_MAX, .max_depth = 4,
					      .max_values = 1u << 16 };

int up_json_parse(const char *buf, size_t len, const char *name, struct up_state *s)
{
	memset(s, 0, sizeof(*s));
	return json_one_doc(buf, len, name, &up_limits, read_doc, s);
}

int up_json_read(const char *path, struct up_state *s)
{
	char *buf = NULL;
	size_t len;
	int err;

	memset(s, 0, sizeof(*s));
	if ((err = json_read_file(path, UP_JSON_MAX, &buf, &len)))
		return err;
	err = up_json_parse(buf, len, path, s);
	free(buf);
	return err;
}
