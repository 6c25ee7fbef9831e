/* SPDX-License-Identifier: MIT */
/* `ditto graph`: dispatch to the subcommands on the RPC graph of a model. */
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
	return cli_group(CMD, usage, subcommands, SUBCOMMAND_COUNT, argc, argv);
}
