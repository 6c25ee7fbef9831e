/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the unit tests: Check runner boilerplate, sample models,
 * and a tiny msgpack "DOM" (msgpack-c objects in a zone) that lets a test
 * encode a model, patch one field by path, and re-pack it to craft inputs
 * that the typed setters would refuse.
 */
#ifndef DITTO_TESTS_UNIT_TU_H
#define DITTO_TESTS_UNIT_TU_H

#include <check.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ditto/ditto.h>

/* Run one suite; returns the process exit status. */
int tu_run(Suite *s);
/* A test case with a generous timeout (sanitizer builds are slow). */
TCase *tu_tcase(const char *name);

/* sample_model_build() that must succeed. */
struct ditto_model *tu_sample(uint64_t seed);
/* ditto_model_encode() that must succeed; free *buf with ditto_free(). */
void tu_encode(const struct ditto_model *m, void **buf, size_t *len);
/* ditto_model_decode() of buf with default options that must succeed. */
struct ditto_model *tu_decode_ok(const void *buf, size_t len);
/* Whole-model JSON that must succeed; free with ditto_free(). */
char *tu_json(const struct ditto_model *m);
/* True when both models encode to identical bytes. */
bool tu_same_encoding(const struct ditto_model *a, const struct ditto_model *b);
/* Byte-compare an encoding against a saved one. */
bool tu_encoding_is(const struct ditto_model *m, const void *buf, size_t len);

/* ck_assert that ditto_last_error() contains needle. */
#define tu_assert_err_has(needle)                                                    \
	do {                                                                          \
		const char *tu_e_ = ditto_last_error();                               \
		ck_assert_msg(tu_e_ != NULL && strstr(tu_e_, (needle)) != NULL,        \
			      "ditto_last_error() = \"%s\" lacks \"%s\"",              \
			      tu_e_ ? tu_e_ : "(null)", (needle));                    \
	} while (0)

/* ------------------------------------------------------------------ */
/* msgpack DOM                                                          */
/* ------------------------------------------------------------------ */

struct mpdoc {
	msgpack_unpacked up;
	msgpack_object *root;
	char *bytes; /* the unpacked objects point into this copy */
};

/* Encode m and unpack it; ck_asserts on failure. */
void mpdoc_from_model(struct mpdoc *d, const struct ditto_model *m);
/* Unpack one msgpack object from buf (must succeed). */
void mpdoc_from_buf(struct mpdoc *d, const void *buf, size_t len);
void mpdoc_destroy(struct mpdoc *d);

/*
 * Object at path: "" is the root; segments separated by '.', each a map
 * key optionally followed by [N] array indexes ("services[0].threads[1]").
 * NULL when absent.
 */
msgpack_object *mpdoc_get(struct mpdoc *d, const char *path);
/* mpdoc_get() that must find the object. */
msgpack_object *mpdoc_need(struct mpdoc *d, const char *path);

msgpack_object *mp_map_get(msgpack_object *map, const char *key);
/* Value slot of key in map (appended as nil when absent). */
msgpack_object *mp_map_put(struct mpdoc *d, msgpack_object *map, const char *key);
/* Remove key from map; false when absent. */
bool mp_map_del(msgpack_object *map, const char *key);
/* Append a nil element to an array and return it. */
msgpack_object *mp_array_append(struct mpdoc *d, msgpack_object *arr);

void mp_set_nil(msgpack_object *o);
void mp_set_bool(msgpack_object *o, bool v);
void mp_set_u64(msgpack_object *o, uint64_t v);
void mp_set_i64(msgpack_object *o, int64_t v); /* negative -> NEGATIVE_INTEGER */
void mp_set_f64(msgpack_object *o, double v);
void mp_set_str(struct mpdoc *d, msgpack_object *o, const char *s);
void mp_set_bin(struct mpdoc *d, msgpack_object *o, const void *p, size_t n);
void mp_set_map(msgpack_object *o);   /* empty map */
void mp_set_array(msgpack_object *o); /* empty array */

/* Pack the root into a new malloc'd buffer (free()). */
void mpdoc_pack(struct mpdoc *d, char **buf, size_t *len);
/* Pack the root and ditto_model_decode() it; returns its code. */
int mpdoc_decode(struct mpdoc *d, const struct ditto_load_opts *opts, struct ditto_model **out);

/* Deterministic PRNG (splitmix64). */
uint64_t tu_rand(uint64_t *state);

#endif
