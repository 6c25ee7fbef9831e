/* SPDX-License-Identifier: MIT */
/* msgpack codec: round trips, files, unknown keys, and hostile input. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tu.h"

static const uint64_t seeds[] = { 1, 2, 3, 17, 12345, 0xdeadbeefULL };
#define NSEEDS (sizeof(seeds) / sizeof(seeds[0]))

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Decode that must fail: returns the code, checks *out stays NULL and a
 * message was recorded. */
static int decode_fails(const void *buf, size_t len, const struct ditto_load_opts *opts)
{
	struct ditto_model *m = (struct ditto_model *)0x1;
	int rc = ditto_model_decode(buf, len, opts, &m);

	ck_assert_msg(rc < 0, "decode of %zu hostile bytes succeeded", len);
	ck_assert_ptr_null(m);
	ck_assert_str_ne(ditto_last_error(), "");
	return rc;
}

/* A temporary directory, removed (with its files) by rm_tmpdir. */
static void make_tmpdir(char *dir, size_t n)
{
	snprintf(dir, n, "/tmp/ditto-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void rm_tmpdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n ? (size_t)n : 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* ------------------------------------------------------------------ */

START_TEST(test_new_model_round_trips)
{
	struct ditto_model *m = ditto_model_new(), *back;
	void *buf;
	size_t len;

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(ditto_model_schema(m), DITTO_MODEL_SCHEMA);
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	tu_encode(m, &buf, &len);
	back = tu_decode_ok(buf, len);
	ck_assert_int_eq(ditto_model_schema(back), DITTO_MODEL_SCHEMA);
	ck_assert(tu_encoding_is(back, buf, len));
	ditto_free(buf);
	ditto_model_free(back);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_sample_round_trip_identical_bytes_and_json)
{
	for (size_t i = 0; i < NSEEDS; i++) {
		struct ditto_model *m = tu_sample(seeds[i]), *back;
		void *buf, *buf2;
		size_t len, len2;
		char *j1, *j2;

		ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
		tu_encode(m, &buf, &len);
		back = tu_decode_ok(buf, len);
		tu_encode(back, &buf2, &len2);
		ck_assert_msg(len == len2 && memcmp(buf, buf2, len) == 0,
			      "seed %llu: decode(encode(m)) re-encodes differently (%zu vs %zu bytes)",
			      (unsigned long long)seeds[i], len, len2);
		j1 = tu_json(m);
		j2 = tu_json(back);
		ck_assert_str_eq(j1, j2);
		ditto_free(j1);
		ditto_free(j2);
		ditto_free(buf);
		ditto_free(buf2);
		ditto_model_free(back);
		ditto_model_free(m);
	}
}
END_TEST

START_TEST(test_sample_is_deterministic_per_seed)
{
	struct ditto_model *a = tu_sample(5), *b = tu_sample(5), *c = tu_sample(6);

	ditto_meta_set_created(ditto_model_meta(a), 1);
	ditto_meta_set_created(ditto_model_meta(b), 1);
	ditto_meta_set_created(ditto_model_meta(c), 1);
	ck_assert(tu_same_encoding(a, b));
	ck_assert(!tu_same_encoding(a, c));
	ditto_model_free(a);
	ditto_model_free(b);
	ditto_model_free(c);
}
END_TEST

START_TEST(test_dup_encodes_identically)
{
	struct ditto_model *m = tu_sample(3), *d = NULL;

	ck_assert_int_eq(ditto_model_dup(m, &d), 0);
	ck_assert_ptr_nonnull(d);
	ck_assert(tu_same_encoding(m, d));
	/* independent: changing the copy leaves the original alone */
	ditto_meta_set_host_cores(ditto_model_meta(d), 999);
	ck_assert_uint_ne(ditto_meta_host_cores(ditto_model_meta(m)), 999);
	ditto_model_free(m);
	ditto_model_free(d);
}
END_TEST

START_TEST(test_json_pretty_and_compact)
{
	struct ditto_model *m = tu_sample(2);
	DITTO_OPTS(ditto_json_opts, pretty, .pretty = true);
	char *a = NULL, *b = NULL;

	ck_assert_int_eq(ditto_model_to_json(m, NULL, &a), 0);
	ck_assert_int_eq(ditto_model_to_json(m, &pretty, &b), 0);
	ck_assert_int_eq(a[0], '{');
	ck_assert_int_eq(b[0], '{');
	ck_assert_ptr_null(strchr(a, '\n'));
	ck_assert_ptr_nonnull(strstr(b, "\n  \""));
	ck_assert_ptr_nonnull(strstr(a, "\"schema\""));
	ck_assert_ptr_nonnull(strstr(a, "\"services\""));
	ck_assert_ptr_nonnull(strstr(a, "\"buckets\""));
	ditto_free(a);
	ditto_free(b);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_save_load_temp_file)
{
	char dir[64], path[128];
	struct ditto_model *m = tu_sample(11), *back = NULL;
	void *buf, *fbuf;
	size_t len, flen;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/model.msgpack", dir);
	ck_assert_int_eq(ditto_model_save(m, path), 0);
	ck_assert_uint_eq(dir_entries(dir), 1); /* no temporary left behind */
	tu_encode(m, &buf, &len);
	fbuf = read_file(path, &flen);
	ck_assert_uint_eq(flen, len);
	ck_assert_mem_eq(fbuf, buf, len);
	ck_assert_int_eq(ditto_model_load(path, NULL, &back), 0);
	ck_assert_ptr_nonnull(back);
	ck_assert(tu_encoding_is(back, buf, len));
	ditto_model_free(back);

	/* saving again replaces the file */
	struct ditto_model *m2 = tu_sample(12);
	ck_assert_int_eq(ditto_model_save(m2, path), 0);
	ck_assert_int_eq(ditto_model_load(path, NULL, &back), 0);
	ck_assert(tu_same_encoding(back, m2));
	ck_assert_uint_eq(dir_entries(dir), 1);

	free(fbuf);
	ditto_free(buf);
	ditto_model_free(back);
	ditto_model_free(m2);
	ditto_model_free(m);
	rm_tmpdir(dir);
}
END_TEST

START_TEST(test_load_missing_file_enoent)
{
	struct ditto_model *m = (struct ditto_model *)0x1;

	ck_assert_int_eq(ditto_model_load("/nonexistent-ditto-dir/x.msgpack", NULL, &m), -ENOENT);
	ck_assert_ptr_null(m);
	tu_assert_err_has("/nonexistent-ditto-dir/x.msgpack");
}
END_TEST

START_TEST(test_load_bad_file_message_has_path)
{
	char dir[64], path[128];
	struct ditto_model *m = (struct ditto_model *)0x1;
	static const unsigned char junk[] = { 0x92, 0x01 }; /* truncated array */

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/junk.msgpack", dir);
	write_file(path, junk, sizeof(junk));
	ck_assert_int_eq(ditto_model_load(path, NULL, &m), -DITTO_ECORRUPT);
	ck_assert_ptr_null(m);
	tu_assert_err_has(path);
	rm_tmpdir(dir);
}
END_TEST

START_TEST(test_save_into_missing_dir_fails_and_leaves_nothing)
{
	char dir[64], path[160], sub[128];
	struct ditto_model *m = tu_sample(1);

	make_tmpdir(dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/no-such-dir", dir);
	snprintf(path, sizeof(path), "%s/model.msgpack", sub);
	int rc = ditto_model_save(m, path);
	ck_assert_int_lt(rc, 0);
	ck_assert_int_eq(rc, -ENOENT);
	ck_assert_str_ne(ditto_last_error(), "");
	ck_assert_uint_eq(dir_entries(dir), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	ditto_model_free(m);
	rm_tmpdir(dir);
}
END_TEST

START_TEST(test_failed_save_keeps_existing_file_intact)
{
	char dir[64], path[128];
	struct ditto_model *small = ditto_model_new(), *big = tu_sample(4);
	struct rlimit old, lim;
	void *want, *got;
	size_t wlen, glen;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/model.msgpack", dir);
	ck_assert_int_eq(ditto_model_save(small, path), 0);
	want = read_file(path, &wlen);

	/* make every write past a few bytes fail (works as root too) */
	ck_assert_uint_gt(wlen, 8);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 8;
	void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int rc = ditto_model_save(big, path);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, oldsig);

	ck_assert_int_lt(rc, 0);
	ck_assert_str_ne(ditto_last_error(), "");
	got = read_file(path, &glen);
	ck_assert_uint_eq(glen, wlen);
	ck_assert_mem_eq(got, want, wlen);
	/* and no partial temporary file is left next to it */
	ck_assert_uint_eq(dir_entries(dir), 1);

	free(want);
	free(got);
	ditto_model_free(small);
	ditto_model_free(big);
	rm_tmpdir(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* unknown keys                                                          */
/* ------------------------------------------------------------------ */

static void pack_cstr(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* The "future_section" value of a newer writer. */
static void pack_future_section(msgpack_packer *pk)
{
	static const unsigned char bin[] = { 0xde, 0xad, 0xbe, 0xef };
	static const unsigned char bin3[] = { 0x00, 0x01, 0x02 };

	msgpack_pack_map(pk, 8);
	pack_cstr(pk, "nested");
	msgpack_pack_map(pk, 1);
	pack_cstr(pk, "deep");
	msgpack_pack_map(pk, 1);
	pack_cstr(pk, "list");
	msgpack_pack_array(pk, 8);
	msgpack_pack_uint64(pk, 1);
	msgpack_pack_int64(pk, -5);
	msgpack_pack_double(pk, 2.5);
	msgpack_pack_bin(pk, sizeof(bin3));
	msgpack_pack_bin_body(pk, bin3, sizeof(bin3));
	msgpack_pack_ext(pk, 3, 7);
	msgpack_pack_ext_body(pk, "xyz", 3);
	msgpack_pack_nil(pk);
	msgpack_pack_true(pk);
	pack_cstr(pk, "s");
	pack_cstr(pk, "neg");
	msgpack_pack_int64(pk, -123456789012LL);
	pack_cstr(pk, "big");
	msgpack_pack_uint64(pk, UINT64_MAX);
	pack_cstr(pk, "f");
	msgpack_pack_double(pk, 3.25);
	pack_cstr(pk, "bin");
	msgpack_pack_bin(pk, sizeof(bin));
	msgpack_pack_bin_body(pk, bin, sizeof(bin));
	pack_cstr(pk, "ext");
	msgpack_pack_ext(pk, 4, -3);
	msgpack_pack_ext_body(pk, "\x01\x02\x03\x04", 4);
	pack_cstr(pk, "arr");
	msgpack_pack_array(pk, 3);
	msgpack_pack_map(pk, 0);
	msgpack_pack_array(pk, 0);
	pack_cstr(pk, "x");
	pack_cstr(pk, "weird key.with dots");
	msgpack_pack_uint64(pk, 5);
}

/* Sample model + top-level "future_section" + services[0].x_unknown. */
static void build_with_unknown_keys(char **out, size_t *outlen)
{
	struct ditto_model *m = tu_sample(7);
	struct mpdoc d;
	msgpack_sbuffer sb;
	msgpack_packer pk;

	mpdoc_from_model(&d, m);
	msgpack_object *svc = mpdoc_need(&d, "services[0]");
	msgpack_object *x = mp_map_put(&d, svc, "x_unknown");
	mp_set_map(x);
	mp_set_u64(mp_map_put(&d, x, "hint"), 42);
	msgpack_object *f32 = mp_map_put(&d, x, "f32");
	f32->type = MSGPACK_OBJECT_FLOAT32;
	f32->via.f64 = 1.5;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, d.root->via.map.size + 1);
	for (uint32_t i = 0; i < d.root->via.map.size; i++) {
		msgpack_pack_object(&pk, d.root->via.map.ptr[i].key);
		msgpack_pack_object(&pk, d.root->via.map.ptr[i].val);
	}
	pack_cstr(&pk, "future_section");
	pack_future_section(&pk);
	*outlen = sb.size;
	*out = msgpack_sbuffer_release(&sb);
	mpdoc_destroy(&d);
	ditto_model_free(m);
}

/* msgpack_object_equal, except that a float32 may come back as a float64
 * of the same value. */
static bool mp_same(const msgpack_object *a, const msgpack_object *b)
{
	bool fa = a->type == MSGPACK_OBJECT_FLOAT32 || a->type == MSGPACK_OBJECT_FLOAT64;
	bool fb = b->type == MSGPACK_OBJECT_FLOAT32 || b->type == MSGPACK_OBJECT_FLOAT64;

	if (fa || fb)
		return fa && fb && a->via.f64 == b->via.f64;
	if (a->type != b->type)
		return false;
	if (a->type == MSGPACK_OBJECT_ARRAY) {
		if (a->via.array.size != b->via.array.size)
			return false;
		for (uint32_t i = 0; i < a->via.array.size; i++)
			if (!mp_same(&a->via.array.ptr[i], &b->via.array.ptr[i]))
				return false;
		return true;
	}
	if (a->type == MSGPACK_OBJECT_MAP) {
		if (a->via.map.size != b->via.map.size)
			return false;
		for (uint32_t i = 0; i < a->via.map.size; i++)
			if (!mp_same(&a->via.map.ptr[i].key, &b->via.map.ptr[i].key) ||
			    !mp_same(&a->via.map.ptr[i].val, &b->via.map.ptr[i].val))
				return false;
		return true;
	}
	return msgpack_object_equal(*a, *b);
}

static void check_unknown_visible(const struct ditto_model *m)
{
	enum ditto_value_type t;
	int64_t i64;
	uint64_t u64;
	double f;
	bool b;
	const char *s;
	size_t n;

	ck_assert_int_eq(ditto_model_get_type(m, "future_section", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_MAP);
	ck_assert_int_eq(ditto_model_get_len(m, "future_section", &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(ditto_model_get_i64(m, "future_section.neg", &i64), 0);
	ck_assert_int_eq(i64, -123456789012LL);
	ck_assert_int_eq(ditto_model_get_type(m, "future_section.neg", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_INT);
	ck_assert_int_eq(ditto_model_get_u64(m, "future_section.neg", &u64), -ERANGE);
	ck_assert_int_eq(ditto_model_get_u64(m, "future_section.big", &u64), 0);
	ck_assert_uint_eq(u64, UINT64_MAX);
	ck_assert_int_eq(ditto_model_get_i64(m, "future_section.big", &i64), -ERANGE);
	ck_assert_int_eq(ditto_model_get_f64(m, "future_section.f", &f), 0);
	ck_assert_double_eq(f, 3.25);
	ck_assert_int_eq(ditto_model_get_type(m, "future_section.bin", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_BINARY);
	ck_assert_int_eq(ditto_model_get_len(m, "future_section.bin", &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(ditto_model_get_type(m, "future_section.ext", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_BINARY);
	ck_assert_int_eq(ditto_model_get_type(m, "future_section.nested.deep.list", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_ARRAY);
	ck_assert_int_eq(ditto_model_get_len(m, "future_section.nested.deep.list", &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(ditto_model_get_u64(m, "future_section.nested.deep.list[0]", &u64), 0);
	ck_assert_uint_eq(u64, 1);
	ck_assert_int_eq(ditto_model_get_i64(m, "future_section.nested.deep.list[1]", &i64), 0);
	ck_assert_int_eq(i64, -5);
	ck_assert_int_eq(ditto_model_get_f64(m, "future_section.nested.deep.list[2]", &f), 0);
	ck_assert_double_eq(f, 2.5);
	ck_assert_int_eq(ditto_model_get_type(m, "future_section.nested.deep.list[3]", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_BINARY);
	ck_assert_int_eq(ditto_model_get_type(m, "future_section.nested.deep.list[5]", &t), 0);
	ck_assert_int_eq(t, DITTO_VALUE_NIL);
	ck_assert_int_eq(ditto_model_get_bool(m, "future_section.nested.deep.list[6]", &b), 0);
	ck_assert(b);
	ck_assert_int_eq(ditto_model_get_str(m, "future_section.nested.deep.list[7]", &s), 0);
	ck_assert_str_eq(s, "s");
	ck_assert_int_eq(ditto_model_get_len(m, "future_section.arr[0]", &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(ditto_model_get_u64(m, "future_section[\"weird key.with dots\"]", &u64),
			 0);
	ck_assert_uint_eq(u64, 5);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].x_unknown.hint", &u64), 0);
	ck_assert_uint_eq(u64, 42);
	ck_assert_int_eq(ditto_model_get_f64(m, "services[0].x_unknown.f32", &f), 0);
	ck_assert_double_eq(f, 1.5);
}

START_TEST(test_unknown_keys_visible_after_decode)
{
	char *buf;
	size_t len;

	build_with_unknown_keys(&buf, &len);
	struct ditto_model *m = tu_decode_ok(buf, len);
	check_unknown_visible(m);
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ditto_model_free(m);
	free(buf);
}
END_TEST

START_TEST(test_unknown_keys_survive_decode_encode)
{
	char *buf;
	size_t len;
	void *enc, *enc2;
	size_t elen, elen2;
	struct mpdoc orig, again;

	build_with_unknown_keys(&buf, &len);
	struct ditto_model *m = tu_decode_ok(buf, len);
	tu_encode(m, &enc, &elen);

	mpdoc_from_buf(&orig, buf, len);
	mpdoc_from_buf(&again, enc, elen);
	msgpack_object *fa = mpdoc_need(&orig, "future_section");
	msgpack_object *fb = mpdoc_get(&again, "future_section");
	ck_assert_msg(fb != NULL, "future_section dropped on encode");
	ck_assert_msg(mp_same(fa, fb), "future_section changed on encode");
	msgpack_object *xa = mpdoc_need(&orig, "services[0].x_unknown");
	msgpack_object *xb = mpdoc_get(&again, "services[0].x_unknown");
	ck_assert_msg(xb != NULL, "services[0].x_unknown dropped on encode");
	ck_assert_msg(mp_same(xa, xb), "services[0].x_unknown changed on encode");

	/* a second cycle, and dup, keep them too, byte for byte */
	struct ditto_model *m2 = tu_decode_ok(enc, elen), *d = NULL;
	check_unknown_visible(m2);
	tu_encode(m2, &enc2, &elen2);
	ck_assert_uint_eq(elen, elen2);
	ck_assert_mem_eq(enc, enc2, elen);
	ck_assert_int_eq(ditto_model_dup(m2, &d), 0);
	check_unknown_visible(d);
	ck_assert(tu_encoding_is(d, enc, elen));

	/* JSON shows them, binary as {"$bin": hex} */
	char *json = tu_json(m2);
	ck_assert_ptr_nonnull(strstr(json, "\"future_section\""));
	ck_assert_ptr_nonnull(strstr(json, "\"x_unknown\""));
	ck_assert_ptr_nonnull(strstr(json, "\"$bin\""));
	ck_assert_ptr_nonnull(strstr(json, "deadbeef"));
	ditto_free(json);

	mpdoc_destroy(&orig);
	mpdoc_destroy(&again);
	ditto_free(enc);
	ditto_free(enc2);
	ditto_model_free(m);
	ditto_model_free(m2);
	ditto_model_free(d);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* hostile input                                                        */
/* ------------------------------------------------------------------ */

START_TEST(test_empty_buffer_is_corrupt)
{
	static const char one = 0;

	ck_assert_int_eq(decode_fails(&one, 0, NULL), -DITTO_ECORRUPT);
}
END_TEST

/* Every prefix of buf must fail as corrupt; step > 1 samples them. */
static void check_truncations(const void *buf, size_t len, size_t step)
{
	for (size_t n = 0; n < len; n += (n + 64 >= len ? 1 : step)) {
		/* copy so that reading past n is caught by ASan */
		unsigned char *p = malloc(n ? n : 1);
		memcpy(p, buf, n);
		struct ditto_model *out = (struct ditto_model *)0x1;
		int rc = ditto_model_decode(p, n, NULL, &out);
		ck_assert_msg(rc == -DITTO_ECORRUPT, "prefix %zu/%zu: got %d (%s)", n, len, rc,
			      ditto_last_error());
		ck_assert_ptr_null(out);
		free(p);
	}
}

START_TEST(test_every_truncation_fails)
{
	/* a small model with every section, every prefix */
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	void *buf;
	size_t len;

	ditto_service_add_port(s, 80);
	ditto_thread_class_set_count(ditto_service_add_thread(s, "main"), 2);
	struct ditto_syscall *c = ditto_service_add_syscall(s, "main", "read", DITTO_FD_TCP);
	ditto_syscall_set_calls(c, 300);
	ditto_hist_add(ditto_syscall_size_ensure(c), 4096, 300);
	ditto_hist_add(ditto_syscall_latency_ensure(c), 12345, 300);
	ditto_counts_add(ditto_cpu_mix_ensure(ditto_service_add_cpu(s, "main")), "int.add", 7);
	ditto_observed_add_load(ditto_service_observed_ensure(s), 1000.5);
	ditto_graph_add_node(ditto_model_graph_ensure(m), "svc");
	ditto_values_set(ditto_tuning_knobs_ensure(ditto_model_tuning_ensure(m)), "k", 0.5);
	tu_encode(m, &buf, &len);
	ck_assert_uint_gt(len, 200);
	check_truncations(buf, len, 1);
	ditto_free(buf);
	ditto_model_free(m);

	/* the full sample: a spread of prefixes and the last 64 */
	m = tu_sample(9);
	tu_encode(m, &buf, &len);
	check_truncations(buf, len, 13);
	ditto_free(buf);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_random_garbage_fails)
{
	uint64_t st = 2024;

	for (int i = 0; i < 3000; i++) {
		size_t n = 1 + tu_rand(&st) % 300;
		unsigned char *p = malloc(n);
		for (size_t k = 0; k < n; k++)
			p[k] = (unsigned char)tu_rand(&st);
		if (i % 2)
			p[0] = 0x80 | (p[0] & 0x0f); /* start like a map */
		decode_fails(p, n, NULL);
		free(p);
	}
}
END_TEST

START_TEST(test_mutated_encoding_never_crashes)
{
	struct ditto_model *m = tu_sample(10);
	void *buf;
	size_t len;
	uint64_t st = 77;

	tu_encode(m, &buf, &len);
	for (int i = 0; i < 2000; i++) {
		unsigned char *p = malloc(len);
		memcpy(p, buf, len);
		int flips = 1 + (int)(tu_rand(&st) % 4);
		for (int k = 0; k < flips; k++)
			p[tu_rand(&st) % len] = (unsigned char)tu_rand(&st);
		struct ditto_model *out = NULL;
		int rc = ditto_model_decode(p, len, NULL, &out);
		if (rc == 0) {
			ck_assert_ptr_nonnull(out);
			ck_assert_int_eq(ditto_model_validate(out, NULL), 0);
			ditto_model_free(out);
		} else {
			ck_assert_int_lt(rc, 0);
			ck_assert_ptr_null(out);
		}
		free(p);
	}
	ditto_free(buf);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_wrong_top_level_type_invalid)
{
	static const unsigned char arr[] = { 0x92, 0x01, 0x02 };
	static const unsigned char str[] = { 0xa2, 'h', 'i' };
	static const unsigned char nil[] = { 0xc0 };
	static const unsigned char num[] = { 0x07 };

	ck_assert_int_eq(decode_fails(arr, sizeof(arr), NULL), -DITTO_EINVALID);
	ck_assert_int_eq(decode_fails(str, sizeof(str), NULL), -DITTO_EINVALID);
	ck_assert_int_eq(decode_fails(nil, sizeof(nil), NULL), -DITTO_EINVALID);
	ck_assert_int_eq(decode_fails(num, sizeof(num), NULL), -DITTO_EINVALID);
}
END_TEST

START_TEST(test_wrong_field_type_names_path)
{
	struct ditto_model *m = tu_sample(1), *out;
	DITTO_OPTS(ditto_load_opts, nv, .no_validate = true);
	struct mpdoc d;

	mpdoc_from_model(&d, m);
	mp_set_str(&d, mpdoc_need(&d, "services[0].threads[0].count"), "many");
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &out), -DITTO_EINVALID);
	ck_assert_ptr_null(out);
	tu_assert_err_has("services[0].threads[0].count");
	/* types are checked even without validation */
	ck_assert_int_eq(mpdoc_decode(&d, &nv, &out), -DITTO_EINVALID);
	ck_assert_ptr_null(out);
	tu_assert_err_has("services[0].threads[0].count");
	mpdoc_destroy(&d);

	/* a negative integer where a count belongs, a map where a string does */
	mpdoc_from_model(&d, m);
	mp_set_i64(mpdoc_need(&d, "services[0].requests.count"), -3);
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &out), -DITTO_EINVALID);
	tu_assert_err_has("services[0].requests.count");
	mpdoc_destroy(&d);

	mpdoc_from_model(&d, m);
	mp_set_map(mpdoc_need(&d, "services[0].name"));
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &out), -DITTO_EINVALID);
	tu_assert_err_has("services[0].name");
	mpdoc_destroy(&d);

	/* an array where a histogram (map) belongs */
	mpdoc_from_model(&d, m);
	mp_set_array(mpdoc_need(&d, "services[0].requests.request_bytes"));
	ck_assert_int_eq(mpdoc_decode(&d, &nv, &out), -DITTO_EINVALID);
	tu_assert_err_has("services[0].requests.request_bytes");
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_schema_2_refused)
{
	struct ditto_model *m = ditto_model_new(), *out;
	struct mpdoc d;

	mpdoc_from_model(&d, m);
	mp_set_u64(mpdoc_need(&d, "schema"), 2);
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &out), -DITTO_ESCHEMA);
	ck_assert_ptr_null(out);
	tu_assert_err_has("schema");
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_schema_string_invalid)
{
	struct ditto_model *m = ditto_model_new(), *out;
	struct mpdoc d;

	mpdoc_from_model(&d, m);
	mp_set_str(&d, mpdoc_need(&d, "schema"), "1");
	int rc = mpdoc_decode(&d, NULL, &out);
	/* a wrong type (EINVALID) or an unreadable version (ESCHEMA) */
	ck_assert_msg(rc == -DITTO_EINVALID || rc == -DITTO_ESCHEMA, "got %d", rc);
	ck_assert_ptr_null(out);
	tu_assert_err_has("schema");
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_schema_missing_refused)
{
	struct ditto_model *m = ditto_model_new(), *out;
	struct mpdoc d;

	mpdoc_from_model(&d, m);
	ck_assert(mp_map_del(d.root, "schema"));
	int rc = mpdoc_decode(&d, NULL, &out);
	/* model.h does not say which; either is a clear refusal */
	ck_assert_msg(rc == -DITTO_ESCHEMA || rc == -DITTO_EINVALID, "got %d", rc);
	ck_assert_ptr_null(out);
	tu_assert_err_has("schema");
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

/* Lower the address-space limit around a decode, where that is possible
 * (not under AddressSanitizer, whose shadow memory needs terabytes). */
struct as_guard {
	struct rlimit old;
	bool set;
};

static void as_limit(struct as_guard *g)
{
	g->set = false;
#if !defined(__SANITIZE_ADDRESS__)
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;

	if (!f)
		return;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	if (!pages || getrlimit(RLIMIT_AS, &g->old) != 0)
		return;
	struct rlimit lim = g->old;
	rlim_t want = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1ull << 30);
	if (lim.rlim_max != RLIM_INFINITY && want > lim.rlim_max)
		return;
	lim.rlim_cur = want;
	g->set = setrlimit(RLIMIT_AS, &lim) == 0;
#endif
}

static void as_restore(struct as_guard *g)
{
	if (g->set)
		setrlimit(RLIMIT_AS, &g->old);
}

/* A valid minimal model with one more top-level key whose value is raw. */
static unsigned char *with_raw_value(const void *raw, size_t rawlen, size_t *outlen)
{
	struct ditto_model *m = ditto_model_new();
	struct mpdoc d;
	msgpack_sbuffer sb;
	msgpack_packer pk;

	mpdoc_from_model(&d, m);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, d.root->via.map.size + 1);
	for (uint32_t i = 0; i < d.root->via.map.size; i++) {
		msgpack_pack_object(&pk, d.root->via.map.ptr[i].key);
		msgpack_pack_object(&pk, d.root->via.map.ptr[i].val);
	}
	pack_cstr(&pk, "future");
	msgpack_sbuffer_write(&sb, raw, rawlen);
	*outlen = sb.size;
	unsigned char *out = (unsigned char *)msgpack_sbuffer_release(&sb);
	mpdoc_destroy(&d);
	ditto_model_free(m);
	return out;
}

static void huge_header_case(const unsigned char *hdr, size_t hlen, const char *what)
{
	struct as_guard g;
	size_t len;
	unsigned char *buf = with_raw_value(hdr, hlen, &len);
	double t0 = now_s();

	as_limit(&g);
	int rc1 = decode_fails(buf, len, NULL);
	int rc2 = decode_fails(hdr, hlen, NULL); /* at top level too */
	as_restore(&g);
	double dt = now_s() - t0;
	ck_assert_msg(rc1 == -DITTO_ECORRUPT || rc1 == -DITTO_ELIMIT, "%s: got %d (%s)", what,
		      rc1, ditto_strerror(rc1));
	ck_assert_msg(rc2 != -ENOMEM, "%s at top level: -ENOMEM", what);
	ck_assert_msg(dt < 1.0, "%s: took %.2f s", what, dt);
	free(buf);
}

START_TEST(test_huge_array32_length_fails_fast)
{
	static const unsigned char h[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03 };

	huge_header_case(h, sizeof(h), "array32 0xffffffff");
}
END_TEST

START_TEST(test_huge_map32_length_fails_fast)
{
	static const unsigned char h[] = { 0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'a', 0x01 };

	huge_header_case(h, sizeof(h), "map32 0xffffffff");
}
END_TEST

START_TEST(test_huge_str32_length_fails_fast)
{
	static const unsigned char h[] = { 0xdb, 0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c' };

	huge_header_case(h, sizeof(h), "str32 0xffffffff");
}
END_TEST

START_TEST(test_huge_bin32_and_ext32_length_fails_fast)
{
	static const unsigned char b[] = { 0xc6, 0xff, 0xff, 0xff, 0xff, 0x00, 0x01 };
	static const unsigned char e[] = { 0xc9, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00, 0x01 };

	huge_header_case(b, sizeof(b), "bin32 0xffffffff");
	huge_header_case(e, sizeof(e), "ext32 0xffffffff");
}
END_TEST

START_TEST(test_huge_key_length_fails_fast)
{
	/* a map whose first key claims 4 GiB */
	static const unsigned char h[] = { 0x81, 0xdb, 0xff, 0xff, 0xff, 0xf0, 's', 'c' };
	struct as_guard g;
	double t0 = now_s();

	as_limit(&g);
	int rc = decode_fails(h, sizeof(h), NULL);
	as_restore(&g);
	ck_assert_msg(rc == -DITTO_ECORRUPT || rc == -DITTO_ELIMIT, "got %d", rc);
	ck_assert(now_s() - t0 < 1.0);
}
END_TEST

static unsigned char *nested_arrays(size_t depth, size_t *len)
{
	unsigned char *p = malloc(depth + 1);

	memset(p, 0x91, depth); /* fixarray of 1 */
	p[depth] = 0x90;	/* innermost: empty array */
	*len = depth + 1;
	return p;
}

START_TEST(test_deep_nesting_hits_limit)
{
	size_t rawlen, len;
	unsigned char *raw = nested_arrays(10000, &rawlen);
	unsigned char *buf = with_raw_value(raw, rawlen, &len);

	ck_assert_int_eq(decode_fails(buf, len, NULL), -DITTO_ELIMIT);
	/* at top level too (never recursing 10000 deep; an array is also the
	 * wrong top-level type, so either refusal is right) */
	int rc = decode_fails(raw, rawlen, NULL);
	ck_assert_msg(rc == -DITTO_ELIMIT || rc == -DITTO_EINVALID, "got %d", rc);
	free(buf);
	free(raw);

	/* nested maps as well */
	unsigned char *maps = malloc(3 * 10000 + 1);
	for (size_t i = 0; i < 10000; i++) {
		maps[3 * i] = 0x81;
		maps[3 * i + 1] = 0xa1;
		maps[3 * i + 2] = 'k';
	}
	maps[3 * 10000] = 0xc0;
	buf = with_raw_value(maps, 3 * 10000 + 1, &len);
	ck_assert_int_eq(decode_fails(buf, len, NULL), -DITTO_ELIMIT);
	free(buf);
	free(maps);
}
END_TEST

START_TEST(test_max_depth_option)
{
	size_t rawlen, len;
	unsigned char *raw = nested_arrays(20, &rawlen);
	unsigned char *buf = with_raw_value(raw, rawlen, &len);
	DITTO_OPTS(ditto_load_opts, shallow, .max_depth = 10);
	DITTO_OPTS(ditto_load_opts, roomy, .max_depth = 40);
	struct ditto_model *m = NULL;

	/* 20 levels fit the default limit of 64 */
	ck_assert_int_eq(ditto_model_decode(buf, len, NULL, &m), 0);
	ditto_model_free(m);
	m = NULL;
	ck_assert_int_eq(ditto_model_decode(buf, len, &roomy, &m), 0);
	ditto_model_free(m);
	ck_assert_int_eq(decode_fails(buf, len, &shallow), -DITTO_ELIMIT);
	free(buf);
	free(raw);

	/* 70 levels do not */
	raw = nested_arrays(70, &rawlen);
	buf = with_raw_value(raw, rawlen, &len);
	ck_assert_int_eq(decode_fails(buf, len, NULL), -DITTO_ELIMIT);
	free(buf);
	free(raw);
}
END_TEST

START_TEST(test_trailing_bytes_corrupt)
{
	struct ditto_model *m = tu_sample(2);
	void *buf;
	size_t len;

	tu_encode(m, &buf, &len);
	unsigned char *p = malloc(2 * len);
	memcpy(p, buf, len);
	p[len] = 0xc0;
	ck_assert_int_eq(decode_fails(p, len + 1, NULL), -DITTO_ECORRUPT);
	/* two models back to back are not one model */
	memcpy(p + len, buf, len);
	ck_assert_int_eq(decode_fails(p, 2 * len, NULL), -DITTO_ECORRUPT);
	free(p);
	ditto_free(buf);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_non_string_map_keys_rejected)
{
	struct ditto_model *m = tu_sample(3), *out;
	struct mpdoc d;
	int rc;

	/* at top level */
	mpdoc_from_model(&d, m);
	msgpack_object *v = mp_map_put(&d, d.root, "placeholder");
	mp_set_u64(v, 2);
	msgpack_object_kv *kv = &d.root->via.map.ptr[d.root->via.map.size - 1];
	mp_set_u64(&kv->key, 1);
	rc = mpdoc_decode(&d, NULL, &out);
	ck_assert_msg(rc == -DITTO_ECORRUPT || rc == -DITTO_EINVALID, "top level: got %d", rc);
	ck_assert_ptr_null(out);
	ck_assert_str_ne(ditto_last_error(), "");
	mpdoc_destroy(&d);

	/* inside a service, and inside an unknown map */
	mpdoc_from_model(&d, m);
	msgpack_object *svc = mpdoc_need(&d, "services[0]");
	mp_set_u64(mp_map_put(&d, svc, "placeholder"), 2);
	mp_set_bin(&d, &svc->via.map.ptr[svc->via.map.size - 1].key, "k", 1);
	rc = mpdoc_decode(&d, NULL, &out);
	ck_assert_msg(rc == -DITTO_ECORRUPT || rc == -DITTO_EINVALID, "service: got %d", rc);
	ck_assert_ptr_null(out);
	tu_assert_err_has("key");
	mpdoc_destroy(&d);

	mpdoc_from_model(&d, m);
	msgpack_object *fut = mp_map_put(&d, d.root, "future");
	mp_set_map(fut);
	mp_set_nil(mp_map_put(&d, fut, "x"));
	mp_set_f64(&fut->via.map.ptr[0].key, 1.5);
	rc = mpdoc_decode(&d, NULL, &out);
	ck_assert_msg(rc == -DITTO_ECORRUPT || rc == -DITTO_EINVALID, "unknown map: got %d", rc);
	ck_assert_ptr_null(out);
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_duplicate_map_key_rejected)
{
	struct ditto_model *m = tu_sample(3), *out = (struct ditto_model *)0x1;
	struct mpdoc d;

	mpdoc_from_model(&d, m);
	msgpack_object meta = *mpdoc_need(&d, "meta");
	/* append a second "meta" key by hand: mp_map_put would find the first */
	msgpack_object *slot = mp_map_put(&d, d.root, "meta2");
	*slot = meta;
	mp_set_str(&d, &d.root->via.map.ptr[d.root->via.map.size - 1].key, "meta");
	int rc = mpdoc_decode(&d, NULL, &out);
	ck_assert_msg(rc == -DITTO_ECORRUPT || rc == -DITTO_EINVALID, "got %d", rc);
	ck_assert_ptr_null(out);
	tu_assert_err_has("meta");
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_max_bytes_option)
{
	struct ditto_model *m = tu_sample(4), *out = NULL;
	void *buf;
	size_t len;

	tu_encode(m, &buf, &len);
	DITTO_OPTS(ditto_load_opts, exact, .max_bytes = len);
	DITTO_OPTS(ditto_load_opts, tight, .max_bytes = len - 1);
	ck_assert_int_eq(ditto_model_decode(buf, len, &exact, &out), 0);
	ditto_model_free(out);
	ck_assert_int_eq(decode_fails(buf, len, &tight), -DITTO_ELIMIT);
	ditto_free(buf);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_no_validate_skips_rules_only)
{
	struct ditto_model *m = tu_sample(5), *out = NULL;
	DITTO_OPTS(ditto_load_opts, nv, .no_validate = true);
	struct mpdoc d;

	/* a rule violation with correct types: errors > calls */
	mpdoc_from_model(&d, m);
	msgpack_object *calls = mpdoc_need(&d, "services[0].syscalls[0].calls");
	mp_set_u64(mpdoc_need(&d, "services[0].syscalls[0].errors"), calls->via.u64 + 1);
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &out), -DITTO_EINVALID);
	ck_assert_ptr_null(out);
	tu_assert_err_has("services[0].syscalls[0]");
	ck_assert_int_eq(mpdoc_decode(&d, &nv, &out), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(ditto_model_validate(out, NULL), -DITTO_EINVALID);
	ditto_model_free(out);
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_bad_histogram_encoding_rejected)
{
	struct ditto_model *m = tu_sample(6), *out = NULL;
	struct mpdoc d;

	/* a histogram that is a map but not a histogram */
	mpdoc_from_model(&d, m);
	msgpack_object *h = mpdoc_need(&d, "services[0].requests.request_bytes");
	mp_set_map(h);
	mp_set_str(&d, mp_map_put(&d, h, "kind"), "cubic");
	int rc = mpdoc_decode(&d, NULL, &out);
	ck_assert_int_eq(rc, -DITTO_EINVALID);
	ck_assert_ptr_null(out);
	tu_assert_err_has("services[0].requests.request_bytes");
	mpdoc_destroy(&d);
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tu_tcase("codec");

	tcase_add_test(tc, test_new_model_round_trips);
	tcase_add_test(tc, test_sample_round_trip_identical_bytes_and_json);
	tcase_add_test(tc, test_sample_is_deterministic_per_seed);
	tcase_add_test(tc, test_dup_encodes_identically);
	tcase_add_test(tc, test_json_pretty_and_compact);
	tcase_add_test(tc, test_save_load_temp_file);
	tcase_add_test(tc, test_load_missing_file_enoent);
	tcase_add_test(tc, test_load_bad_file_message_has_path);
	tcase_add_test(tc, test_save_into_missing_dir_fails_and_leaves_nothing);
	tcase_add_test(tc, test_failed_save_keeps_existing_file_intact);
	tcase_add_test(tc, test_unknown_keys_visible_after_decode);
	tcase_add_test(tc, test_unknown_keys_survive_decode_encode);
	tcase_add_test(tc, test_empty_buffer_is_corrupt);
	tcase_add_test(tc, test_every_truncation_fails);
	tcase_add_test(tc, test_random_garbage_fails);
	tcase_add_test(tc, test_mutated_encoding_never_crashes);
	tcase_add_test(tc, test_wrong_top_level_type_invalid);
	tcase_add_test(tc, test_wrong_field_type_names_path);
	tcase_add_test(tc, test_schema_2_refused);
	tcase_add_test(tc, test_schema_string_invalid);
	tcase_add_test(tc, test_schema_missing_refused);
	tcase_add_test(tc, test_huge_array32_length_fails_fast);
	tcase_add_test(tc, test_huge_map32_length_fails_fast);
	tcase_add_test(tc, test_huge_str32_length_fails_fast);
	tcase_add_test(tc, test_huge_bin32_and_ext32_length_fails_fast);
	tcase_add_test(tc, test_huge_key_length_fails_fast);
	tcase_add_test(tc, test_deep_nesting_hits_limit);
	tcase_add_test(tc, test_max_depth_option);
	tcase_add_test(tc, test_trailing_bytes_corrupt);
	tcase_add_test(tc, test_non_string_map_keys_rejected);
	tcase_add_test(tc, test_duplicate_map_key_rejected);
	tcase_add_test(tc, test_max_bytes_option);
	tcase_add_test(tc, test_no_validate_skips_rules_only);
	tcase_add_test(tc, test_bad_histogram_encoding_rejected);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
