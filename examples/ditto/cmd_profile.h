/* SPDX-License-Identifier: MIT */
/* `ditto profile`: profile a live service into a model file. */
#ifndef DITTO_CMD_PROFILE_H
#define DITTO_CMD_PROFILE_H

int cmd_profile(int argc, char **argv);

/* The usage error of a second --pid (profile and clone): a later --pid
 * used to replace the earlier one without a word. */
#define ONE_PID \
	"one --pid per profile: profiling several processes at once is not implemented yet"

#endif
