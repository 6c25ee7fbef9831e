/* SPDX-License-Identifier: MIT */
/* `ditto model diff`: feature-by-feature distance from one model to another. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_model.h"
#include "diff_print.h"

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

/* The largest error over every metric, also those --min-error hides:
 * the verdict does not depend on what is shown. */
static int max_error(const struct ditto_model *a, const struct ditto_model *b, double *out,
		     char *path, size_t n)
{
	struct ditto_comparison *all = NULL;
	int err = ditto_model_compare(a, b, NULL, &all);

	diff_worst(all, out, path, n);
	ditto_comparison_free(all);
	return err;
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
	diff_print_name(f, na);
	fputs("' with '", f);
	diff_print_name(f, nb);
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
		rc = diff_print(cmp, json);
	}
	if (rc == CLI_OK && !json)
		diff_verdict("models", bound, worst, where);
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
