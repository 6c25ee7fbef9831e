/* SPDX-License-Identifier: MIT */
/* (being written) */
#include <stdio.h>

#include "cli.h"
#include "cmd_tune.h"

int cmd_load(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("ditto load: not built yet\n", stderr);
	return CLI_EINPUT;
}
