/* SPDX-License-Identifier: MIT */
/*
 * Everything libditto writes for programs to read must parse under any
 * LC_NUMERIC. Each test runs in a comma-decimal locale (de_DE.UTF-8, built
 * into a private LOCPATH with localedef when the host lacks it) and parses
 * the model JSON, a tune report's JSON and SVG plot, a load result's JSON
 * and a clone's generated configuration. It links the static library to
 * build a report and a load result without running services.
 */
#include <check.h>
#include <ctype.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ditto/ditto.h>

#include "core_int.h"
#include "loadgen_int.h"
#include "sample_model.h"
#include "synth_int.h"
#include "tune_int.h"

#define COMMA_LOCALE "de_DE.UTF-8"

/* Build the locale into a private directory: needs the `locales` package's
 * sources but neither root nor a change to the system. Built once, in the
 * runner before it forks a child per test, and removed after the run. */
static char private_dir[] = "/tmp/ditto-locale-XXXXXX";
static bool private_made;

static void build_private_locale(void)
{
	char cmd[256];

	if (setlocale(LC_ALL, COMMA_LOCALE) || !mkdtemp(private_dir))
		return;
	private_made = true;
	snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 %s/%s >/dev/null 2>&1",
		 private_dir, COMMA_LOCALE);
	if (system(cmd) == 0)
		setenv("LOCPATH", private_dir, 1);
	setlocale(LC_ALL, "C");
}

static void remove_private_locale(void)
{
	char cmd[256];

	if (!private_made)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", private_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", private_dir);
}

static void comma_locale(void)
{
	ck_assert_msg(setlocale(LC_ALL, COMMA_LOCALE) != NULL,
		      "no %s locale and localedef could not build one (install `locales`)",
		      COMMA_LOCALE);
	ck_assert_str_eq(localeconv()->decimal_point, ",");
}

/* strtod in the "C" locale, independent of the library's own helper. */
static double c_num(const char *s, char **end)
{
	static locale_t c;

	if (!c)
		c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	ck_assert_ptr_nonnull(c);
	return strtod_l(s, end, c);
}

/* ---- a strict JSON syntax check (RFC 8259), numbers above all ---- */

static const char *json_value(const char *p, int depth);

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *digits(const char *p)
{
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	return p;
}

static const char *json_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = digits(p)))
		return NULL;
	if (*p == '.' && !(p = digits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		p = digits(p);
	}
	return p;
}

static const char *json_string(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && !*++p)
			return NULL;
	return *p == '"' ? p + 1 : NULL;
}

/* Members of an object (pairs) or elements of an array, up to close. */
static const char *json_items(const char *p, int depth, bool pairs, char close)
{
	p = ws(p);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (pairs) {
			if (!(p = json_string(ws(p))) || *(p = ws(p)) != ':')
				return NULL;
			p++;
		}
		if (!(p = json_value(p, depth + 1)))
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	switch (*p) {
	case '{': return json_items(p + 1, depth, true, '}');
	case '[': return json_items(p + 1, depth, false, ']');
	case '"': return json_string(p);
	case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
	default: return json_number(p);
	}
}

static void assert_json(const char *what, const char *text)
{
	const char *end = json_value(text, 0);

	ck_assert_msg(end && *ws(end) == '\0', "%s is not JSON near: %.60s", what,
		      end ? end : text);
}

/* ---- the outputs ---- */

static struct ditto_model *sample(void)
{
	struct ditto_model *m = NULL;

	ck_assert_int_eq(sample_model_build(1, &m), 0);
	/* A fraction that shows the decimal separator at once. */
	ck_assert_int_eq(ditto_meta_set_window_s(ditto_model_meta_ensure(m), 2.5), 0);
	return m;
}

START_TEST(model_json_parses_under_a_comma_locale)
{
	struct ditto_model *m;
	char *text = NULL;

	comma_locale();
	m = sample();
	for (int pretty = 0; pretty < 2; pretty++) {
		DITTO_OPTS(ditto_json_opts, jo, .pretty = pretty);

		ck_assert_int_eq(ditto_model_to_json(m, &jo, &text), 0);
		assert_json("ditto_model_to_json", text);
		if (!pretty)
			ck_assert_ptr_nonnull(strstr(text, "\"window_s\":2.5"));
		ditto_free(text);
	}
	ck_assert_int_eq(ditto_model_get_json(m, "meta.window_s", NULL, &text), 0);
	ck_assert_str_eq(text, "2.5");
	ditto_free(text);
	ditto_model_free(m);
}
END_TEST

static struct ditto_tune_report *report(void)
{
	struct ditto_tune_report *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->iterations = 3;
	ck_assert_int_eq(report_row(r, "d1_miss_rate", 0.0125, 0.0131, 0.1), 0);
	ck_assert_int_eq(report_row(r, "insts_per_request", 1234.5, 1240.25, 0.1), 0);
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < 3; i++)
			r->curve[s][i] = (struct tune_point){
				.qps = 1000.5 * (i + 1), .achieved = 990.25 * (i + 1) + s,
				.p50 = 12345.5 * (i + 1), .p99 = 45678.5 * (i + 1) };
		r->ncurve[s] = 3;
	}
	return r;
}

START_TEST(tune_report_json_parses_under_a_comma_locale)
{
	struct ditto_tune_report *r;
	char *text = NULL;

	comma_locale();
	r = report();
	ck_assert_int_eq(ditto_tune_report_to_json(r, &text), 0);
	assert_json("ditto_tune_report_to_json", text);
	ck_assert_ptr_nonnull(strstr(text, "1234.5"));
	ditto_free(text);
	ditto_tune_report_free(r);
}
END_TEST

/* Attribute values of the plot are numbers ('12.5') or point lists
 * ('12.5,40.1 13.0,41.2 '): each must read whole in the C locale. */
static void assert_svg_numbers(const char *svg)
{
	static const char *const attrs[] = { " x='", " y='", " x1='", " y1='", " x2='", " y2='" };
	unsigned checked = 0;

	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++)
		for (const char *p = strstr(svg, attrs[a]); p; p = strstr(p + 1, attrs[a])) {
			char *end;

			c_num(p + strlen(attrs[a]), &end);
			ck_assert_msg(*end == '\'', "SVG attribute is not a number: %.30s", p);
			checked++;
		}
	for (const char *p = strstr(svg, "points='"); p; p = strstr(p + 1, "points='")) {
		char *end = (char *)p + strlen("points='");

		while (*end != '\'') {
			c_num(end, &end);
			ck_assert_msg(*end == ',', "SVG point has no x,y: %.30s", end);
			c_num(end + 1, &end);
			ck_assert_msg(*end == ' ', "SVG point is not x,y: %.30s", end);
			end++;
			checked++;
		}
	}
	ck_assert_uint_gt(checked, 20);
}

START_TEST(tune_svg_numbers_parse_under_a_comma_locale)
{
	char path[] = "/tmp/ditto-locale-svg-XXXXXX";
	struct ditto_tune_report *r;
	char svg[65536];
	size_t n;
	FILE *f;
	int fd;

	comma_locale();
	r = report();
	ck_assert_int_ge(fd = mkstemp(path), 0);
	close(fd);
	ck_assert_int_eq(ditto_tune_report_plot_svg(r, path), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(svg, 1, sizeof(svg) - 1, f);
	svg[n] = '\0';
	fclose(f);
	unlink(path);
	assert_svg_numbers(svg);
	ditto_tune_report_free(r);
}
END_TEST

START_TEST(load_result_json_parses_under_a_comma_locale)
{
	struct ditto_load_result *r;
	char *text = NULL;

	comma_locale();
	ck_assert_ptr_nonnull(r = loadgen_result_new(1000.5));
	for (uint64_t ns = 1000; ns < 100000; ns += 777)
		ck_assert_int_eq(loadgen_result_add(r, ns), 0);
	r->elapsed_s = 1.25;
	ck_assert_int_eq(ditto_load_result_to_json(r, &text), 0);
	assert_json("ditto_load_result_to_json", text);
	ck_assert_ptr_nonnull(strstr(text, "\"elapsed_s\": 1.250000"));
	ditto_free(text);
	ditto_load_result_free(r);
}
END_TEST

/* In C a decimal comma is no syntax error: "= 0,5000," silently becomes
 * two initializers. So every number after '=' must end at a separator
 * that is not followed by more digits. */
START_TEST(clone_config_numbers_are_c_literals_under_a_comma_locale)
{
	struct config_in in = { .seed = 1, .window_s = 2.5 };
	struct ditto_model *m;
	struct dbuf b;
	unsigned checked = 0;

	comma_locale();
	m = sample();
	dbuf_init(&b);
	ck_assert_int_eq(config_generate(ditto_model_service(m, 0), &in, &b), 0);
	ck_assert_ptr_nonnull(b.data);
	for (const char *p = strstr(b.data, "= "); p; p = strstr(p + 1, "= ")) {
		char *end;

		if (!isdigit((unsigned char)p[2]) && p[2] != '-')
			continue;
		c_num(p + 2, &end);
		ck_assert_msg(!(*end == ',' && isdigit((unsigned char)end[1])),
			      "number split by a comma in the clone's config: %.40s", p);
		checked++;
	}
	ck_assert_uint_gt(checked, 10);
	dbuf_free(&b);
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("locale");
	TCase *tc = tcase_create("comma_decimal");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, model_json_parses_under_a_comma_locale);
	tcase_add_test(tc, tune_report_json_parses_under_a_comma_locale);
	tcase_add_test(tc, tune_svg_numbers_parse_under_a_comma_locale);
	tcase_add_test(tc, load_result_json_parses_under_a_comma_locale);
	tcase_add_test(tc, clone_config_numbers_are_c_literals_under_a_comma_locale);
	suite_add_tcase(s, tc);
	build_private_locale();
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_private_locale();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
