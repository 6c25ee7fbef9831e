/* SPDX-License-Identifier: MIT */
/* (being written) */
#include <stdio.h>

#include "cli.h"
#include "cmd_tune.h"

int cmd_measure(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("ditto measure: not built yet\n", stderr);
	return CLI_EINPUT;
}
