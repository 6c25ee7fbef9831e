/* SPDX-License-Identifier: MIT */
/* ditto profile --otlp-listen: spans received live during the window. */
#ifndef DITTO_CMD_PROFILE_OTLP_H
#define DITTO_CMD_PROFILE_OTLP_H

#include <stdbool.h>

#include <ditto/ditto.h>
#include <ditto/profile.h>

struct otlp_args {
	const char *listen;	/* NULL: no receiver */
	bool allow_remote;
	bool uncorrected;
};

/* Start the receiver (no-op without --otlp-listen): CLI_OK or a failure
 * already reported. */
int otlp_cli_start(const struct otlp_args *a, bool quiet, struct ditto_otlp_receiver **out);
/* Add its spans to m and say what it received: CLI_OK or a failure
 * already reported (m keeps what the profile put there). */
int otlp_cli_finish(struct ditto_otlp_receiver *r, const struct otlp_args *a,
		    struct ditto_model *m, bool quiet);

#endif
