/* SPDX-License-Identifier: MIT */
/* `ditto model`: dispatch to the subcommands that work on model files. */
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
	return cli_group(CMD, usage, subcommands, SUBCOMMAND_COUNT, argc, argv);
}
