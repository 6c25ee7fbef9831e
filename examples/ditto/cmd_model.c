/* SPDX-License-Identifier: MIT */
/* `ditto model`: dispatch to the subcommands that work on model files. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_model.h"

#define CMD "model"

static const struct cli_command subcommands[] = {
	{ "show", "print a human summary of a model", cmd_model_show },
	{ "json", "print a model, or one value of it, as JSON", cmd_model_json },
	{ "get", "print one value of a model by its path", cmd_model_get },
	{ "validate", "check models against every rule of the schema", cmd_model_validate },
	{ "merge", "add models of several runs or replicas into one", cmd_model_merge },
	{ "diff", "compare two models feature by feature", cmd_model_diff },
	{ "sample", "write a fully populated example model", cmd_model_sample },
};

#define SUBCOMMAND_COUNT (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
	fputs("Usage: ditto model SUBCOMMAND [ARGS...]\n"
	      "\n"
	      "Work on model files (msgpack, as written by libditto).\n"
	      "\n"
	      "Subcommands:\n",
	      f);
	cli_list(f, subcommands, SUBCOMMAND_COUNT);
	fputs("\nRun 'ditto model SUBCOMMAND --help' for its options.\n", f);
}

int cmd_model(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *sub;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		if (c != 'h')
			return cli_bad_option(CMD, c, argv);
		usage(stdout);
		return CLI_OK;
	}
	if (optind >= argc)
		return cli_usage_error(CMD, "missing subcommand");
	sub = cli_find(subcommands, SUBCOMMAND_COUNT, argv[optind]);
	if (!sub)
		return cli_usage_error(CMD, "unknown subcommand '%s'", argv[optind]);
	return sub->run(argc - optind, argv + optind);
}
