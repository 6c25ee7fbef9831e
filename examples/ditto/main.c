/* SPDX-License-Identifier: MIT */
/*
 * ditto: command-line frontend of libditto. This file handles the global
 * options and hands the rest of the command line to a command group.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_deploy.h"
#include "cmd_graph.h"
#include "cmd_model.h"
#include "cmd_profile.h"
#include "cmd_synth.h"
#include "cmd_tune.h"

/* The top level has no name of its own in messages: "ditto: ...". */
#define CMD ""

static const struct cli_command commands[] = {
	{ "model", "inspect, check, merge and compare model files", cmd_model },
	{ "profile", "profile a live service into a model", cmd_profile },
	{ "synth", "write and build the clone of a modelled service", cmd_synth },
	{ "clone", "profile a live service, then write and build its clone", cmd_clone },
	{ "up", "run a graph of clones on 127.0.0.1 (a tree 'synth' wrote)", cmd_up },
	{ "down", "stop the graph 'up' runs", cmd_down },
	{ "graph", "the RPC graph between services: import, compare, draw", cmd_graph },
	{ "deploy", "Docker Compose and Kubernetes files of a graph clone", cmd_deploy },
	{ "load", "drive a service with requests and report its latency", cmd_load },
	{ "measure", "measure a service command under load (cachegrind, profiler)", cmd_measure },
	{ "tune", "bring a clone within bounds of its original, with a report", cmd_tune },
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("Usage: ditto [--version] [--help] COMMAND [ARGS...]\n"
	      "\n"
	      "Clone a networked service from a statistical model of it.\n"
	      "\n"
	      "Commands:\n",
	      f);
	cli_list(f, commands, COMMAND_COUNT);
	fputs("\nRun 'ditto COMMAND --help' for the subcommands of a command.\n"
	      "Exit status: 0 success, 1 bad input, 2 usage error; 3 'tune' did not\n"
	      "converge; 4 'profile' or 'clone' saw no traffic (see their --help).\n",
	      f);
}

static void version(void)
{
	/* Both: a frontend may run against a newer shared library. */
	printf("ditto %s (libditto %s)\n", DITTO_VERSION_STRING, ditto_version());
}

static int dispatch(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (argc < 1)
		return cli_usage_error(CMD, "missing command");
	cmd = cli_find(commands, COMMAND_COUNT, argv[0]);
	if (!cmd)
		return cli_usage_error(CMD, "unknown command '%s'", argv[0]);
	return cmd->run(argc, argv);
}

/* A full disk or a closed pipe must not pass for success. */
static int finish(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ditto: writing output: %s\n", strerror(errno));
		return rc ? rc : CLI_EINPUT;
	}
	return rc;
}

/*
 * The CLI never calls setlocale(): it stays in the "C" locale, so its own
 * printf of numbers and its strtod of options and of the library's JSON
 * (cmd_load.c) agree whatever LC_NUMERIC the user has. The library does
 * not rely on this (lib/core/c_locale.c); the frontend does.
 */
int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	cli_getopt_start();
	/* '+': stop at the command name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return finish(CLI_OK);
		case 'V':
			version();
			return finish(CLI_OK);
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	return finish(dispatch(argc - optind, argv + optind));
}
