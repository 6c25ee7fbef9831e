/* SPDX-License-Identifier: MIT */
/*
 * A small bounded JSON reader and writer helpers for the graph tree's
 * manifests (graph.json, up.json): the files are ours, but a person may
 * edit them, so the reader bounds size, depth and counts and refuses
 * what it does not understand instead of guessing.
 */
#ifndef DITTO_SYNTH_GRAPH_JSON_H
#define DITTO_SYNTH_GRAPH_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "core_int.h"

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype t;
	bool b;
	double num;
	char *str;		/* J_STR */
	struct jval *items;	/* J_ARR, J_OBJ (values) */
	char **keys;		/* J_OBJ */
	size_t n, cap;
};

#define GJSON_MAX_BYTES (1u << 20)
#define GJSON_MAX_DEPTH 16
#define GJSON_MAX_ITEMS 4096

/* Parse the file at path into *out (gjson_free() it). -DITTO_ECORRUPT with
 * the offset in the message on bad JSON, -DITTO_ELIMIT past a bound. */
int gjson_load(const char *path, struct jval *out);
int gjson_parse(const char *text, size_t len, const char *what, struct jval *out);
void gjson_free(struct jval *v);

/* Member key of an object, or NULL (also when v is no object). */
const struct jval *gjson_get(const struct jval *v, const char *key);
/* The member's string, or NULL when absent or not a string. */
const char *gjson_str(const struct jval *v, const char *key);
/* The member's number, or dflt when absent or not a number. */
double gjson_num(const struct jval *v, const char *key, double dflt);

/* A JSON string literal of s into b, every control character, quote and
 * backslash escaped (bytes >= 0x80 pass: the manifest is UTF-8). */
void gjson_put_str(struct dbuf *b, const char *s);

#endif
