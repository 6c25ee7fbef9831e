/* SPDX-License-Identifier: MIT */
/*
 * Placeholder for `ditto graph import`: the trace importers are built on
 * the graph-import branch, which replaces this file at merge. Until then
 * the command says so and fails, rather than write an empty graph.
 */
#include <stdio.h>

#include "cli.h"
#include "cmd_graph.h"

int cmd_graph_import(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("ditto: graph import: not built on this branch (graph-show)\n", stderr);
	return CLI_EUSAGE;
}
