/* SPDX-License-Identifier: MIT */
/* `ditto synth` (model -> clone tree, built) and `ditto clone` (profile a
 * live service, then synth). */
#ifndef DITTO_CMD_SYNTH_H
#define DITTO_CMD_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

struct ditto_values;

struct synth_args {
	const char *model, *output, *service, *cc;
	const char *deploy;	/* --deploy compose,kubernetes (NULL: none) */
	const char *build_cache;	/* --build-cache DIR|off (NULL: the default) */
	uint64_t seed;
	unsigned port;
	bool force, no_build, no_clamp, quiet;
	struct ditto_values *knobs;	/* --knob: instead of the model's; NULL: its */
	const char *keep[64];		/* --keep NAME=HOST:PORT (graph trees) */
	size_t nkeep;
};

/* Write and (unless no_build) build the clone tree; prints where it is. */
int synth_run(const struct synth_args *a);
int cmd_synth(int argc, char **argv);
int cmd_clone(int argc, char **argv);
int cmd_up(int argc, char **argv);
int cmd_down(int argc, char **argv);

#endif
