/* SPDX-License-Identifier: MIT */
/* `ditto profile`: profile a live service into a model file. */
#ifndef DITTO_CMD_PROFILE_H
#define DITTO_CMD_PROFILE_H

int cmd_profile(int argc, char **argv);

/* The usage error of a second --pid to clone: a later --pid used to
 * replace the earlier one without a word. */
#define ONE_PID \
	"one --pid per clone: cloning a graph of services is not implemented yet (profile " \
	"several with 'ditto profile --pid A --pid B')"

#endif
