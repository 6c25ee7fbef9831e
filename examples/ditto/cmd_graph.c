/* SPDX-License-Identifier: MIT */
/* `ditto graph`: dispatch to the subcommands on the RPC graph of a model. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_graph.h"

#define CMD "graph"

static const struct cli_command subcommands[] = {
	{ "import", "derive the graph from trace exports (OTLP, Jaeger, Zipkin)",
	  cmd_graph_import },
	{ "dot", "write a model's graph as Graphviz DOT (and SVG)", cmd_graph_dot },
	{ "compare", "compare the graph one source saw with another's (kernel, traces)",
	  cmd_graph_compare },
};

#define SUBCOMMAND_COUNT (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
	fputs("Usage: ditto graph SUBCOMMAND [ARGS...]\n"
	      "\n"
	      "The RPC graph between services: from traces, drawn, and compared.\n"
	      "\n"
	      "Subcommands:\n",
	      f);
	cli_list(f, subcommands, SUBCOMMAND_COUNT);
	fputs("\nRun 'ditto graph SUBCOMMAND --help' for its options.\n", f);
}

int cmd_graph(int argc, char **argv)
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
