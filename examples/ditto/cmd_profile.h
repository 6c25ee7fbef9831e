/* SPDX-License-Identifier: MIT */
/* `ditto profile`: profile a live service into a model file. */
#ifndef DITTO_CMD_PROFILE_H
#define DITTO_CMD_PROFILE_H

int cmd_profile(int argc, char **argv);

#endif
