/* SPDX-License-Identifier: MIT */
/* `ditto model merge`: add models of several runs or replicas into one. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_model.h"

#define CMD "model merge"

static void usage(FILE *f)
{
	fputs("Usage: ditto model merge -o OUT FILE...\n"
	      "\n"
	      "Merge every FILE into the first one, as models of replicas or runs of\n"
	      "the same services: counts and histograms add, elements are matched by\n"
	      "their keys, configuration must agree. The result is validated and\n"
	      "written to OUT (which may be one of the inputs).\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output OUT   file to write (required)\n"
	      "  -h, --help         show this help\n",
	      f);
}

/* Merge files[1..n-1] into dst; stops at the first that fails. */
static int merge_rest(struct ditto_model *dst, char **files, int n)
{
	for (int i = 1; i < n; i++) {
		struct ditto_model *src = NULL;
		int rc = cli_load(files[i], true, &src);

		if (rc != CLI_OK)
			return rc;
		rc = ditto_model_merge(dst, src);
		ditto_model_free(src);
		if (rc < 0)
			return cli_failf("merging %s into %s: %s", files[i], files[0],
					 cli_message(files[i], rc));
	}
	return CLI_OK;
}

/* Valid inputs must merge into a valid model; if they do not, say so
 * rather than write a file every reader will refuse. */
static int check_and_save(const struct ditto_model *m, const char *out)
{
	int rc = ditto_model_validate(m, NULL);

	if (rc < 0)
		return cli_failf("merged model is not valid: %s", cli_message("", rc));
	rc = ditto_model_save(m, out);
	return rc < 0 ? cli_fail(out, rc) : CLI_OK;
}

static int merge_files(const char *out, char **files, int n)
{
	struct ditto_model *m = NULL;
	int rc = cli_load(files[0], true, &m);

	if (rc == CLI_OK)
		rc = merge_rest(m, files, n);
	if (rc == CLI_OK)
		rc = check_and_save(m, out);
	ditto_model_free(m);
	return rc;
}

int cmd_model_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (!out)
		return cli_usage_error(CMD, "missing -o OUT");
	if (optind >= argc)
		return cli_usage_error(CMD, "expected at least one FILE");
	return merge_files(out, argv + optind, argc - optind);
}
