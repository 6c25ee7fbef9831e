/* SPDX-License-Identifier: MIT */
#include "tu.h"

#include <ctype.h>

#include "sample_model.h"

int tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

TCase *tu_tcase(const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 50);
	return tc;
}

struct ditto_model *tu_sample(uint64_t seed)
{
	struct ditto_model *m = NULL;
	int rc = sample_model_build(seed, &m);
	ck_assert_msg(rc == 0 && m != NULL, "sample_model_build(%llu) = %d (%s)",
		      (unsigned long long)seed, rc, ditto_last_error());
	return m;
}

void tu_encode(const struct ditto_model *m, void **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int rc = ditto_model_encode(m, buf, len);
	ck_assert_msg(rc == 0, "ditto_model_encode = %d (%s)", rc, ditto_last_error());
	ck_assert_ptr_nonnull(*buf);
	ck_assert_uint_gt(*len, 0);
}

struct ditto_model *tu_decode_ok(const void *buf, size_t len)
{
	struct ditto_model *m = NULL;
	int rc = ditto_model_decode(buf, len, NULL, &m);
	ck_assert_msg(rc == 0, "ditto_model_decode = %d (%s)", rc, ditto_last_error());
	ck_assert_ptr_nonnull(m);
	return m;
}

char *tu_json(const struct ditto_model *m)
{
	char *s = NULL;
	int rc = ditto_model_to_json(m, NULL, &s);
	ck_assert_msg(rc == 0, "ditto_model_to_json = %d (%s)", rc, ditto_last_error());
	ck_assert_ptr_nonnull(s);
	return s;
}

bool tu_encoding_is(const struct ditto_model *m, const void *buf, size_t len)
{
	void *b;
	size_t n;
	tu_encode(m, &b, &n);
	bool same = n == len && memcmp(b, buf, n) == 0;
	ditto_free(b);
	return same;
}

bool tu_same_encoding(const struct ditto_model *a, const struct ditto_model *b)
{
	void *ba;
	size_t na;
	tu_encode(a, &ba, &na);
	bool same = tu_encoding_is(b, ba, na);
	ditto_free(ba);
	return same;
}

/* ------------------------------------------------------------------ */

void mpdoc_from_buf(struct mpdoc *d, const void *buf, size_t len)
{
	size_t off = 0;
	d->bytes = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(d->bytes);
	memcpy(d->bytes, buf, len);
	msgpack_unpacked_init(&d->up);
	msgpack_unpack_return r = msgpack_unpack_next(&d->up, d->bytes, len, &off);
	ck_assert_msg(r == MSGPACK_UNPACK_SUCCESS, "msgpack_unpack_next = %d", (int)r);
	d->root = &d->up.data;
}

void mpdoc_from_model(struct mpdoc *d, const struct ditto_model *m)
{
	void *buf;
	size_t len;
	tu_encode(m, &buf, &len);
	mpdoc_from_buf(d, buf, len);
	ditto_free(buf);
}

void mpdoc_destroy(struct mpdoc *d)
{
	msgpack_unpacked_destroy(&d->up);
	free(d->bytes);
	d->bytes = NULL;
	d->root = NULL;
}

static bool key_is(const msgpack_object *k, const char *key, size_t klen)
{
	return k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
	       memcmp(k->via.str.ptr, key, klen) == 0;
}

static msgpack_object *map_get_n(msgpack_object *map, const char *key, size_t klen)
{
	if (!map || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < map->via.map.size; i++)
		if (key_is(&map->via.map.ptr[i].key, key, klen))
			return &map->via.map.ptr[i].val;
	return NULL;
}

msgpack_object *mp_map_get(msgpack_object *map, const char *key)
{
	return map_get_n(map, key, strlen(key));
}

msgpack_object *mpdoc_get(struct mpdoc *d, const char *path)
{
	msgpack_object *o = d->root;
	const char *p = path;
	while (*p && o) {
		size_t n = strcspn(p, ".[");
		if (n > 0)
			o = map_get_n(o, p, n);
		p += n;
		while (o && *p == '[') {
			char *end;
			unsigned long idx = strtoul(p + 1, &end, 10);
			if (*end != ']' || o->type != MSGPACK_OBJECT_ARRAY || idx >= o->via.array.size)
				return NULL;
			o = &o->via.array.ptr[idx];
			p = end + 1;
		}
		if (*p == '.')
			p++;
	}
	return o;
}

msgpack_object *mpdoc_need(struct mpdoc *d, const char *path)
{
	msgpack_object *o = mpdoc_get(d, path);
	ck_assert_msg(o != NULL, "msgpack path %s not in the encoding", path);
	return o;
}

static void *zalloc(struct mpdoc *d, size_t n)
{
	void *p = msgpack_zone_malloc(d->up.zone, n ? n : 1);
	ck_assert_ptr_nonnull(p);
	return p;
}

msgpack_object *mp_map_put(struct mpdoc *d, msgpack_object *map, const char *key)
{
	ck_assert_int_eq(map->type, MSGPACK_OBJECT_MAP);
	msgpack_object *v = mp_map_get(map, key);
	if (v)
		return v;
	uint32_t n = map->via.map.size;
	msgpack_object_kv *kv = zalloc(d, (n + 1) * sizeof(*kv));
	if (n)
		memcpy(kv, map->via.map.ptr, n * sizeof(*kv));
	memset(&kv[n], 0, sizeof(kv[n]));
	mp_set_str(d, &kv[n].key, key);
	mp_set_nil(&kv[n].val);
	map->via.map.ptr = kv;
	map->via.map.size = n + 1;
	return &kv[n].val;
}

bool mp_map_del(msgpack_object *map, const char *key)
{
	if (!map || map->type != MSGPACK_OBJECT_MAP)
		return false;
	size_t klen = strlen(key);
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		if (key_is(&map->via.map.ptr[i].key, key, klen)) {
			memmove(&map->via.map.ptr[i], &map->via.map.ptr[i + 1],
				(map->via.map.size - i - 1) * sizeof(msgpack_object_kv));
			map->via.map.size--;
			return true;
		}
	}
	return false;
}

msgpack_object *mp_array_append(struct mpdoc *d, msgpack_object *arr)
{
	ck_assert_int_eq(arr->type, MSGPACK_OBJECT_ARRAY);
	uint32_t n = arr->via.array.size;
	msgpack_object *a = zalloc(d, (n + 1) * sizeof(*a));
	if (n)
		memcpy(a, arr->via.array.ptr, n * sizeof(*a));
	mp_set_nil(&a[n]);
	arr->via.array.ptr = a;
	arr->via.array.size = n + 1;
	return &a[n];
}

void mp_set_nil(msgpack_object *o)
{
	memset(o, 0, sizeof(*o));
	o->type = MSGPACK_OBJECT_NIL;
}

void mp_set_bool(msgpack_object *o, bool v)
{
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_BOOLEAN;
	o->via.boolean = v;
}

void mp_set_u64(msgpack_object *o, uint64_t v)
{
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
	o->via.u64 = v;
}

void mp_set_i64(msgpack_object *o, int64_t v)
{
	if (v >= 0) {
		mp_set_u64(o, (uint64_t)v);
		return;
	}
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
	o->via.i64 = v;
}

void mp_set_f64(msgpack_object *o, double v)
{
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_FLOAT64;
	o->via.f64 = v;
}

void mp_set_str(struct mpdoc *d, msgpack_object *o, const char *s)
{
	size_t n = strlen(s);
	char *p = zalloc(d, n);
	memcpy(p, s, n);
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_STR;
	o->via.str.ptr = p;
	o->via.str.size = (uint32_t)n;
}

void mp_set_bin(struct mpdoc *d, msgpack_object *o, const void *src, size_t n)
{
	char *p = zalloc(d, n);
	memcpy(p, src, n);
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_BIN;
	o->via.bin.ptr = p;
	o->via.bin.size = (uint32_t)n;
}

void mp_set_map(msgpack_object *o)
{
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_MAP;
}

void mp_set_array(msgpack_object *o)
{
	mp_set_nil(o);
	o->type = MSGPACK_OBJECT_ARRAY;
}

void mpdoc_pack(struct mpdoc *d, char **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	ck_assert_int_eq(msgpack_pack_object(&pk, *d->root), 0);
	*len = sb.size;
	*buf = msgpack_sbuffer_release(&sb);
	msgpack_sbuffer_destroy(&sb);
}

int mpdoc_decode(struct mpdoc *d, const struct ditto_load_opts *opts, struct ditto_model **out)
{
	char *buf;
	size_t len;
	mpdoc_pack(d, &buf, &len);
	*out = NULL;
	int rc = ditto_model_decode(buf, len, opts, out);
	free(buf);
	return rc;
}

uint64_t tu_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
