/* SPDX-License-Identifier: MIT */
/*
 * `ditto model validate`: check model files against every rule of the
 * schema and list all problems, not only the first, so one run tells what
 * to fix. Problems go to stderr like compiler diagnostics ("FILE: path:
 * message"), and so do warnings ("FILE: path: warning: message": names
 * this libditto does not use, which a newer writer may have meant);
 * "FILE: ok" goes to stdout.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_model.h"

#define CMD "model validate"

static void usage(FILE *f)
{
	fputs("Usage: ditto model validate [--strict] FILE...\n"
	      "\n"
	      "Decode each FILE and check it against every rule of the schema: types,\n"
	      "enum names, ranges, histogram buckets, unique keys, cross references and\n"
	      "consistency. Prints 'FILE: ok' for a valid model, 'FILE: path: message'\n"
	      "for each problem of an invalid one. Warnings ('FILE: path: warning:\n"
	      "message') name what a valid model holds that this libditto cannot use:\n"
	      "instruction-mix keys not in the func.ops.mem.width.isa format, unknown\n"
	      "tuning knobs. Exit status 1 if any file is not valid, or with --strict\n"
	      "has warnings.\n"
	      "\n"
	      "Options:\n"
	      "  -s, --strict   treat warnings as problems (exit status 1)\n"
	      "  -h, --help     show this help\n",
	      f);
}

struct report {
	const char *file;
	unsigned problems, warnings;
};

static void on_problem(const char *path, const char *msg, void *user)
{
	struct report *rep = user;

	if (path && *path)
		fprintf(stderr, "%s: %s: %s\n", rep->file, path, msg);
	else
		fprintf(stderr, "%s: %s\n", rep->file, msg);
	rep->problems++;
}

static void on_warning(const char *path, const char *msg, void *user)
{
	struct report *rep = user;

	fprintf(stderr, "%s: %s%swarning: %s\n", rep->file, path ? path : "",
		path && *path ? ": " : "", msg);
	rep->warnings++;
}

/* Decoding is split from validation so that a well-formed file gets all
 * its problems listed rather than the first one as a load error. */
static int validate_file(const char *file, bool strict)
{
	DITTO_OPTS(ditto_load_opts, lo, .no_validate = true);
	struct report rep = { .file = file };
	DITTO_OPTS(ditto_validate_opts, vo, .problem = on_problem, .warning = on_warning,
		   .user = &rep);
	struct ditto_model *m = NULL;
	int rc = ditto_model_load(file, &lo, &m);

	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", file, cli_message(file, rc));
		return CLI_EINPUT;
	}
	rc = ditto_model_validate(m, &vo);
	/* A failure with no problem reported still has to be seen. */
	if (rc < 0 && rep.problems == 0)
		fprintf(stderr, "%s: %s\n", file, cli_message(file, rc));
	else if (rc == 0 && rep.problems == 0 && rep.warnings == 0)
		printf("%s: ok\n", file);
	else if (rc == 0 && rep.problems == 0)
		printf("%s: ok, %u warning%s\n", file, rep.warnings, rep.warnings == 1 ? "" : "s");
	ditto_model_free(m);
	return rc < 0 || rep.problems || (strict && rep.warnings) ? CLI_EINPUT : CLI_OK;
}

int cmd_model_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool strict = false;
	int c, rc = CLI_OK;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":sh", opts, NULL)) != -1) {
		if (c == 's') {
			strict = true;
			continue;
		}
		if (c != 'h')
			return cli_bad_option(CMD, c, argv);
		usage(stdout);
		return CLI_OK;
	}
	if (optind >= argc)
		return cli_usage_error(CMD, "expected at least one FILE");
	/* Every file is checked even after a bad one. */
	for (int i = optind; i < argc; i++)
		if (validate_file(argv[i], strict) != CLI_OK)
			rc = CLI_EINPUT;
	return rc;
}
