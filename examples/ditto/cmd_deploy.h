/* SPDX-License-Identifier: MIT */
/* `ditto deploy DIR`: Docker Compose and Kubernetes files of a graph tree. */
#ifndef DITTO_CMD_DEPLOY_H
#define DITTO_CMD_DEPLOY_H

#include <stdbool.h>

int cmd_deploy(int argc, char **argv);
/* `ditto synth --deploy LIST`: the files of the tree synth just wrote
 * (static binaries built unless no_build); CLI_OK or an exit status. */
int deploy_after_synth(const char *dir, const char *list, bool no_build, bool quiet);

#endif
