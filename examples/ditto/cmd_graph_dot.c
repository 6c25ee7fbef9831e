/* SPDX-License-Identifier: MIT */
/* `ditto graph dot`: a placeholder on the graph-import branch; the real
 * command comes from the branch that writes it, at merge. */
#include <stdio.h>

#include "cli.h"
#include "cmd_graph.h"

int cmd_graph_dot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("ditto: graph dot: not built on this branch\n", stderr);
	return CLI_EUSAGE;
}
