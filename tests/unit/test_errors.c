/* SPDX-License-Identifier: MIT */
/* Error codes, thread-local messages, logging, versions, options structs. */
#include <errno.h>
#include <pthread.h>
#include <strings.h>

#include "tu.h"

static const int ditto_codes[] = {
	DITTO_ECORRUPT, DITTO_ESCHEMA,	 DITTO_EINVALID, DITTO_ELIMIT,
	DITTO_EMISMATCH, DITTO_ENOTFOUND, DITTO_ETYPE,	  DITTO_EOPTS, DITTO_EBUILD,
};
#define NCODES (sizeof(ditto_codes) / sizeof(ditto_codes[0]))

/* Make the library record a decode error on this thread. */
static int provoke_decode_error(void)
{
	struct ditto_model *m = (struct ditto_model *)0x1;
	static const unsigned char junk[] = { 0xc1 }; /* the never-used msgpack byte */
	int rc = ditto_model_decode(junk, sizeof(junk), NULL, &m);

	ck_assert_int_lt(rc, 0);
	ck_assert_ptr_null(m);
	return rc;
}

/* Make the library record a histogram error on this thread. */
static int provoke_hist_error(void)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_hist *b = ditto_hist_new(DITTO_HIST_EXACT, 0);
	int rc = ditto_hist_merge(a, b);

	ditto_hist_free(a);
	ditto_hist_free(b);
	return rc;
}

START_TEST(test_strerror_names_ditto_codes)
{
	for (size_t i = 0; i < NCODES; i++) {
		const char *s = ditto_strerror(-ditto_codes[i]);

		ck_assert_ptr_nonnull(s);
		ck_assert_str_ne(s, "");
		ck_assert_str_ne(s, "unknown error");
		/* positive codes name the same error */
		ck_assert_str_eq(ditto_strerror(ditto_codes[i]), s);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(ditto_strerror(-ditto_codes[j]), s);
	}
}
END_TEST

/* The codes are ABI: abidiff cannot see enum values no signature uses. */
START_TEST(test_error_code_values_are_stable)
{
	ck_assert_int_eq(DITTO_ECORRUPT, 4000);
	ck_assert_int_eq(DITTO_ESCHEMA, 4001);
	ck_assert_int_eq(DITTO_EINVALID, 4002);
	ck_assert_int_eq(DITTO_ELIMIT, 4003);
	ck_assert_int_eq(DITTO_EMISMATCH, 4004);
	ck_assert_int_eq(DITTO_ENOTFOUND, 4005);
	ck_assert_int_eq(DITTO_ETYPE, 4006);
	ck_assert_int_eq(DITTO_EOPTS, 4007);
	ck_assert_int_eq(DITTO_EBUILD, 4008);
}
END_TEST

START_TEST(test_strerror_names_negative_errno)
{
	static const int errs[] = { ENOMEM, EINVAL, ENOENT, EACCES, EOVERFLOW, ERANGE, EEXIST };

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *s = ditto_strerror(-errs[i]);

		ck_assert_ptr_nonnull(s);
		ck_assert_str_ne(s, "");
		ck_assert_str_ne(s, "unknown error");
		ck_assert_str_eq(ditto_strerror(errs[i]), s);
		for (size_t j = 0; j < NCODES; j++)
			ck_assert_str_ne(ditto_strerror(-ditto_codes[j]), s);
	}
	ck_assert_str_ne(ditto_strerror(-ENOMEM), ditto_strerror(-EINVAL));
	ck_assert_ptr_nonnull(strcasestr(ditto_strerror(-ENOENT), "no such file"));
}
END_TEST

START_TEST(test_strerror_unknown_code)
{
	ck_assert_str_eq(ditto_strerror(-99999), "unknown error");
	ck_assert_str_eq(ditto_strerror(-(DITTO_EBUILD + 1)), "unknown error");
	ck_assert_str_eq(ditto_strerror(-(DITTO_ECORRUPT - 1)), "unknown error");
	ck_assert_ptr_nonnull(ditto_strerror(0));
	ck_assert_ptr_nonnull(ditto_strerror(INT32_MIN + 1));
	ck_assert_ptr_nonnull(ditto_strerror(INT32_MIN));
}
END_TEST

START_TEST(test_last_error_set_on_failure)
{
	provoke_decode_error();
	ck_assert_ptr_nonnull(ditto_last_error());
	ck_assert_str_ne(ditto_last_error(), "");
	ck_assert_int_eq(provoke_hist_error(), -DITTO_EMISMATCH);
	ck_assert_str_ne(ditto_last_error(), "");
}
END_TEST

struct thr_result {
	char before[512];
	char after[512];
	int rc;
};

static void *thread_body(void *arg)
{
	struct thr_result *r = arg;

	snprintf(r->before, sizeof(r->before), "%s", ditto_last_error());
	r->rc = provoke_hist_error();
	snprintf(r->after, sizeof(r->after), "%s", ditto_last_error());
	return NULL;
}

START_TEST(test_last_error_is_thread_local)
{
	char mine[512];
	struct thr_result r;
	pthread_t t;

	memset(&r, 0, sizeof(r));
	provoke_decode_error();
	snprintf(mine, sizeof(mine), "%s", ditto_last_error());
	ck_assert_str_ne(mine, "");

	ck_assert_int_eq(pthread_create(&t, NULL, thread_body, &r), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);

	/* a fresh thread sees no error, not the main thread's */
	ck_assert_str_eq(r.before, "");
	/* its own error is recorded for it ... */
	ck_assert_int_eq(r.rc, -DITTO_EMISMATCH);
	ck_assert_str_ne(r.after, "");
	ck_assert_str_ne(r.after, mine);
	/* ... and does not overwrite the main thread's message */
	ck_assert_str_eq(ditto_last_error(), mine);
}
END_TEST

struct log_capture {
	int calls;
	int max_level_seen;
	char last[1024];
};

static void capture_log(enum ditto_log_level level, const char *msg, void *user)
{
	struct log_capture *c = user;

	c->calls++;
	if ((int)level > c->max_level_seen)
		c->max_level_seen = (int)level;
	snprintf(c->last, sizeof(c->last), "%s", msg ? msg : "(null)");
}

static void other_log(enum ditto_log_level level, const char *msg, void *user)
{
	(void)level;
	(void)msg;
	(void)user;
}

/*
 * Library work that logs: decoding a model with a key the library does
 * not know, loading a missing file, and failed decodes.
 */
static void do_logging_work(void)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_model *back = NULL;
	struct mpdoc d;

	ck_assert_ptr_nonnull(m);
	mpdoc_from_model(&d, m);
	mp_set_str(&d, mp_map_put(&d, d.root, "future_section"), "from a newer writer");
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &back), 0);
	mpdoc_destroy(&d);
	ditto_model_free(back);
	ditto_model_free(m);
	ck_assert_int_lt(ditto_model_load("/nonexistent-dir-ditto/none.msgpack", NULL, &back), 0);
	provoke_decode_error();
}

START_TEST(test_log_callback_receives_messages)
{
	struct log_capture cap;

	memset(&cap, 0, sizeof(cap));
	cap.max_level_seen = -1;
	ck_assert_ptr_null(ditto_set_log(capture_log, &cap, DITTO_LOG_DEBUG));
	do_logging_work();
	ditto_log_fn prev = ditto_set_log(NULL, NULL, DITTO_LOG_WARN);
	ck_assert_ptr_eq(prev, capture_log);
	ck_assert_msg(cap.calls > 0, "no log message reached the callback at DEBUG level");
	ck_assert_str_ne(cap.last, "");
	/* no trailing newline */
	ck_assert_int_ne(cap.last[strlen(cap.last) - 1], '\n');
}
END_TEST

START_TEST(test_log_level_filter_and_null_restores_default)
{
	struct log_capture cap;

	memset(&cap, 0, sizeof(cap));
	cap.max_level_seen = -1;
	ditto_set_log(capture_log, &cap, DITTO_LOG_ERROR);
	do_logging_work();
	/* only errors may arrive at max_level ERROR */
	ck_assert_int_le(cap.max_level_seen, DITTO_LOG_ERROR);

	/* replacing returns the previous callback; NULL restores the default */
	ck_assert_ptr_eq(ditto_set_log(other_log, NULL, DITTO_LOG_DEBUG), capture_log);
	ck_assert_ptr_eq(ditto_set_log(NULL, NULL, DITTO_LOG_DEBUG), other_log);
	int before = cap.calls;
	do_logging_work(); /* default sink: stderr, never our callback */
	ck_assert_int_eq(cap.calls, before);
	ck_assert_ptr_null(ditto_set_log(NULL, NULL, DITTO_LOG_WARN));
}
END_TEST

START_TEST(test_version_matches_header)
{
	char want[32];

	ck_assert_str_eq(ditto_version(), DITTO_VERSION_STRING);
	ck_assert_uint_eq(ditto_version_number(), DITTO_VERSION_NUMBER);
	ck_assert_uint_eq(DITTO_VERSION_NUMBER, DITTO_VERSION_MAJOR * 10000 +
						       DITTO_VERSION_MINOR * 100 +
						       DITTO_VERSION_PATCH);
	snprintf(want, sizeof(want), "%d.%d.%d", DITTO_VERSION_MAJOR, DITTO_VERSION_MINOR,
		 DITTO_VERSION_PATCH);
	ck_assert_str_eq(ditto_version(), want);
	/* a fresh model records the loaded library's version */
	struct ditto_model *m = ditto_model_new();
	ck_assert_str_eq(ditto_meta_tool_version(ditto_model_meta(m)), ditto_version());
	ditto_model_free(m);
}
END_TEST

START_TEST(test_free_null_is_noop)
{
	ditto_free(NULL);
	ditto_model_free(NULL);
	ditto_hist_free(NULL);
	ditto_comparison_free(NULL);
}
END_TEST

START_TEST(test_opts_macro_sets_sz)
{
	DITTO_OPTS(ditto_json_opts, jo, .pretty = true);
	DITTO_OPTS(ditto_load_opts, lo);

	ck_assert_uint_eq(jo.sz, sizeof(struct ditto_json_opts));
	ck_assert(jo.pretty);
	ck_assert_uint_eq(lo.sz, sizeof(struct ditto_load_opts));
	ck_assert_uint_eq(lo.max_bytes, 0);
	ck_assert_uint_eq(lo.max_depth, 0);
	ck_assert(!lo.no_validate);
}
END_TEST

struct json_opts_newer {
	struct ditto_json_opts o;
	uint64_t extra;
};

START_TEST(test_opts_unknown_nonzero_trailing_rejected)
{
	struct ditto_model *m = ditto_model_new();
	struct json_opts_newer big;
	char *out = (char *)0x1;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.pretty = true;
	big.extra = 1;
	ck_assert_int_eq(ditto_model_to_json(m, &big.o, &out), -DITTO_EOPTS);
	ck_assert_str_ne(ditto_last_error(), "");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_opts_zero_trailing_accepted)
{
	struct ditto_model *m = ditto_model_new();
	struct json_opts_newer big;
	char *out = NULL, *plain = NULL;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.pretty = true;
	ck_assert_int_eq(ditto_model_to_json(m, &big.o, &out), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(out[0], '{');
	/* pretty was read: output has newlines, unlike the default */
	ck_assert_ptr_nonnull(strchr(out, '\n'));
	ck_assert_int_eq(ditto_model_to_json(m, NULL, &plain), 0);
	ck_assert_str_ne(out, plain);
	ditto_free(out);
	ditto_free(plain);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_opts_older_smaller_sz_accepted)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_json_opts o;
	char *out = NULL;

	/* a caller built before `pretty` existed: sz covers only sz */
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(size_t);
	o.pretty = true; /* beyond the caller's sz: must be ignored */
	ck_assert_int_eq(ditto_model_to_json(m, &o, &out), 0);
	ck_assert_ptr_nonnull(out);
	ditto_free(out);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_opts_bad_sz_rejected)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_json_opts o;
	char *out = NULL;

	memset(&o, 0, sizeof(o));
	o.sz = 1;
	ck_assert_int_eq(ditto_model_to_json(m, &o, &out), -DITTO_EOPTS);
	o.sz = 0;
	ck_assert_int_eq(ditto_model_to_json(m, &o, &out), -DITTO_EOPTS);
	ditto_model_free(m);
}
END_TEST

struct load_opts_newer {
	struct ditto_load_opts o;
	uint64_t extra[2];
};
struct validate_opts_newer {
	struct ditto_validate_opts o;
	uint64_t extra;
};
struct compare_opts_newer {
	struct ditto_compare_opts o;
	uint64_t extra;
};

START_TEST(test_opts_checked_by_every_entry_point)
{
	struct ditto_model *m = ditto_model_new(), *back = NULL;
	struct ditto_comparison *c = NULL;
	struct load_opts_newer lo;
	struct validate_opts_newer vo;
	struct compare_opts_newer co;
	void *buf;
	size_t len;

	tu_encode(m, &buf, &len);

	memset(&lo, 0, sizeof(lo));
	lo.o.sz = sizeof(lo);
	ck_assert_int_eq(ditto_model_decode(buf, len, &lo.o, &back), 0);
	ditto_model_free(back);
	back = NULL;
	lo.extra[1] = 0x100;
	ck_assert_int_eq(ditto_model_decode(buf, len, &lo.o, &back), -DITTO_EOPTS);
	ck_assert_ptr_null(back);

	memset(&vo, 0, sizeof(vo));
	vo.o.sz = sizeof(vo);
	ck_assert_int_eq(ditto_model_validate(m, &vo.o), 0);
	vo.extra = 1;
	ck_assert_int_eq(ditto_model_validate(m, &vo.o), -DITTO_EOPTS);

	memset(&co, 0, sizeof(co));
	co.o.sz = sizeof(co);
	ck_assert_int_eq(ditto_model_compare(m, m, &co.o, &c), 0);
	ditto_comparison_free(c);
	c = NULL;
	co.extra = 1;
	ck_assert_int_eq(ditto_model_compare(m, m, &co.o, &c), -DITTO_EOPTS);
	ck_assert_ptr_null(c);

	ditto_free(buf);
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tu_tcase("errors");

	tcase_add_test(tc, test_strerror_names_ditto_codes);
	tcase_add_test(tc, test_error_code_values_are_stable);
	tcase_add_test(tc, test_strerror_names_negative_errno);
	tcase_add_test(tc, test_strerror_unknown_code);
	tcase_add_test(tc, test_last_error_set_on_failure);
	tcase_add_test(tc, test_last_error_is_thread_local);
	tcase_add_test(tc, test_log_callback_receives_messages);
	tcase_add_test(tc, test_log_level_filter_and_null_restores_default);
	tcase_add_test(tc, test_version_matches_header);
	tcase_add_test(tc, test_free_null_is_noop);
	tcase_add_test(tc, test_opts_macro_sets_sz);
	tcase_add_test(tc, test_opts_unknown_nonzero_trailing_rejected);
	tcase_add_test(tc, test_opts_zero_trailing_accepted);
	tcase_add_test(tc, test_opts_older_smaller_sz_accepted);
	tcase_add_test(tc, test_opts_bad_sz_rejected);
	tcase_add_test(tc, test_opts_checked_by_every_entry_point);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
