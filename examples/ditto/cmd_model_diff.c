/* SPDX-License-Identifier: MIT */
/* `ditto model diff`: feature-by-feature distance from one model to another. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_model.h"

#define CMD "model diff"

static void usage(FILE *f)
{
	fputs("Usage: ditto model diff [--json] [--min-error X] [--bound X] A B\n"
	      "\n"
	      "Compare model B (a clone) with model A (the original), feature by\n"
	      "feature: scalars as the rates that matter (calls and bytes per request,\n"
	      "loads per instruction, ...) with their relative error, distributions by\n"
	      "the total-variation distance of their histograms (a and b are then\n"
	      "sample totals), elements present on one side only with error 1.\n"
	      "Elements are paired by name, but two models of one service each are\n"
	      "compared whatever their services are named (a line says so).\n"
	      "\n"
	      "Options:\n"
	      "  -j, --json          print the metrics as a JSON array\n"
	      "  -m, --min-error X   keep only metrics whose error exceeds X\n"
	      "  -b, --bound X       the models differ when a metric's error exceeds X\n"
	      "                      (default 0.05, the tuner's; 0: any difference)\n"
	      "  -h, --help          show this help\n"
	      "\n"
	      "Exit status, as diff(1)'s: 0 every metric within the bound, 1 the models\n"
	      "differ beyond it, 2 a usage error or a file that cannot be read or compared.\n",
	      f);
}

/* The names ditto_comparison_to_json() uses, so both outputs read alike. */
static const char *kind_name(enum ditto_metric_kind kind)
{
	switch (kind) {
	case DITTO_METRIC_SCALAR:
		return "scalar";
	case DITTO_METRIC_DISTRIBUTION:
		return "distribution";
	case DITTO_METRIC_ONLY_A:
		return "only_a";
	case DITTO_METRIC_ONLY_B:
		return "only_b";
	}
	return "?";
}

/* Width of the path column: the longest path, so that columns line up. */
static int path_width(const struct ditto_comparison *cmp)
{
	size_t width = strlen("path");

	for (size_t i = 0; i < ditto_comparison_count(cmp); i++) {
		const char *path = NULL;

		if (ditto_comparison_metric(cmp, i, &path, NULL, NULL, NULL, NULL) == 0 && path &&
		    strlen(path) > width)
			width = strlen(path);
	}
	return (int)width;
}

/* A side that lacks the element shows "-" rather than a made-up 0. */
static void print_side(double v, bool present)
{
	if (present)
		printf("  %14.6g", v);
	else
		printf("  %14s", "-");
}

static void print_row(const struct ditto_comparison *cmp, size_t i, int width)
{
	const char *path = NULL;
	enum ditto_metric_kind kind = DITTO_METRIC_SCALAR;
	double a = 0, b = 0, error = 0;

	if (ditto_comparison_metric(cmp, i, &path, &kind, &a, &b, &error) < 0)
		return;
	printf("%-*s  %-12s", width, path ? path : "?", kind_name(kind));
	print_side(a, kind != DITTO_METRIC_ONLY_B);
	print_side(b, kind != DITTO_METRIC_ONLY_A);
	printf("  %8.4f\n", error);
}

/* Exit codes of this command (diff(1)'s): 1 is "they differ", so an
 * unreadable file cannot be taken for a difference. */
enum { DIFF_WITHIN = 0, DIFF_BEYOND = 1, DIFF_TROUBLE = 2 };

static int print_table(const struct ditto_comparison *cmp)
{
	size_t n = ditto_comparison_count(cmp);
	int width = path_width(cmp);

	printf("%-*s  %-12s  %14s  %14s  %8s\n", width, "path", "kind", "a", "b", "error");
	for (size_t i = 0; i < n; i++)
		print_row(cmp, i, width);
	printf("%zu metric%s, max error %.4f\n", n, n == 1 ? "" : "s",
	       ditto_comparison_max_error(cmp));
	return CLI_OK;
}

static int print_json(const struct ditto_comparison *cmp)
{
	char *text = NULL;
	int rc = ditto_comparison_to_json(cmp, &text);

	if (rc < 0)
		return cli_fail("comparison", rc);
	puts(text);
	ditto_free(text);
	return CLI_OK;
}

/* The largest error over every metric, also those --min-error hides:
 * the verdict does not depend on what is shown. */
static int max_error(const struct ditto_model *a, const struct ditto_model *b, double *out,
		     char *path, size_t n)
{
	struct ditto_comparison *all = NULL;
	int err = ditto_model_compare(a, b, NULL, &all);

	*out = 0;
	snprintf(path, n, "-");
	for (size_t i = 0; !err && i < ditto_comparison_count(all); i++) {
		const char *p = NULL;
		double e = 0;

		if (!ditto_comparison_metric(all, i, &p, NULL, NULL, NULL, &e) && e > *out) {
			*out = e;
			snprintf(path, n, "%s", p ? p : "?");
		}
	}
	ditto_comparison_free(all);
	return err;
}

/* A name on one line: tab and newline (the only control characters a
 * valid name holds) as \xNN, as the library's messages show them. */
static void print_name(FILE *f, const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
}

/*
 * Two models of one service each are compared whatever the services are
 * named (ditto_model_compare()); differing names are said, so that nobody
 * wonders whether 'redis-server' was compared with 'clone'. In JSON mode
 * the line goes to stderr, stdout holding the JSON alone.
 */
static void say_pairing(struct ditto_model *a, struct ditto_model *b, bool json)
{
	const char *na, *nb;
	FILE *f = json ? stderr : stdout;

	if (ditto_model_service_count(a) != 1 || ditto_model_service_count(b) != 1)
		return;
	na = ditto_service_name(ditto_model_service(a, 0));
	nb = ditto_service_name(ditto_model_service(b, 0));
	if (!na || !nb || !strcmp(na, nb))
		return;
	fputs("pairing service '", f);
	print_name(f, na);
	fputs("' with '", f);
	print_name(f, nb);
	fputs("' (one service each)\n", f);
}

static int diff_files(const char *fa, const char *fb, double min_error, double bound, bool json)
{
	DITTO_OPTS(ditto_compare_opts, co, .min_error = min_error);
	struct ditto_model *a = NULL, *b = NULL;
	struct ditto_comparison *cmp = NULL;
	double worst = 0;
	char where[512];
	int rc = cli_load(fa, true, &a);

	if (rc == CLI_OK)
		rc = cli_load(fb, true, &b);
	if (rc == CLI_OK && ((rc = ditto_model_compare(a, b, &co, &cmp)) < 0 ||
			     (rc = max_error(a, b, &worst, where, sizeof(where))) < 0))
		rc = cli_failf("comparing %s with %s: %s", fa, fb, cli_message("", rc));
	if (rc == CLI_OK) {
		say_pairing(a, b, json);
		rc = json ? print_json(cmp) : print_table(cmp);
	}
	if (rc == CLI_OK && !json)
		printf(worst > bound ? "models differ beyond the bound %g: max error %.4f at %s\n" :
		       "models within the bound %g: max error %.4f at %s\n", bound, worst, where);
	ditto_comparison_free(cmp);
	ditto_model_free(b);
	ditto_model_free(a);
	if (rc != CLI_OK)
		return DIFF_TROUBLE;
	return worst > bound ? DIFF_BEYOND : DIFF_WITHIN;
}

int cmd_model_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "min-error", required_argument, NULL, 'm' },
		{ "bound", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double min_error = 0, bound = 0.05;
	bool json = false;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":jm:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'm':
			if (!cli_parse_f64(optarg, &min_error) || min_error < 0)
				return cli_usage_error(CMD, "--min-error wants a number >= 0, got '%s'",
						       optarg);
			break;
		case 'b':
			if (!cli_parse_f64(optarg, &bound) || !(bound >= 0))
				return cli_usage_error(CMD, "--bound wants a number >= 0, got '%s'",
						       optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(CMD, "expected two files, A and B");
	return diff_files(argv[optind], argv[optind + 1], min_error, bound, json);
}
