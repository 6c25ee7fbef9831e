/* SPDX-License-Identifier: MIT */
/* ditto profile --otlp-listen: the OTLP/HTTP receiver around the window. */
#include <stdio.h>

#include <ditto/model.h>

#include "cli.h"
#include "cmd_profile_otlp.h"

int otlp_cli_start(const struct otlp_args *a, bool quiet, struct ditto_otlp_receiver **out)
{
	DITTO_OPTS(ditto_otlp_opts, o, .allow_remote = a->allow_remote);
	int err;

	*out = NULL;
	if (!a->listen)
		return CLI_OK;
	err = ditto_otlp_receiver_start(a->listen, &o, out);
	if (err)
		return cli_fail("--otlp-listen", err);
	if (!quiet)
		fprintf(stderr,
			"ditto: receiving OTLP spans on %s, port %u (POST /v1/traces)\n", a->listen,
			ditto_otlp_receiver_port(*out));
	return CLI_OK;
}

int otlp_cli_finish(struct ditto_otlp_receiver *r, const struct otlp_args *a,
		    struct ditto_model *m, bool quiet)
{
	DITTO_OPTS(ditto_otlp_stats, st);
	uint64_t refused;
	int err;

	if (!r)
		return CLI_OK;
	err = ditto_otlp_receiver_finish(r, m, a->uncorrected);
	if (ditto_otlp_receiver_stats(r, &st) == 0 && !quiet) {
		refused = st.bad_request + st.not_found + st.bad_method + st.length_required +
			  st.too_large + st.bad_media_type + st.head_too_large + st.busy;
		fprintf(stderr,
			"ditto: OTLP receiver: %llu requests, %llu spans kept, %llu spans rejected, %llu requests refused (400: %llu, 404: %llu, 405: %llu, 411: %llu, 413: %llu, 415: %llu, 431: %llu, 503: %llu), %llu connections timed out\n",
			(unsigned long long)st.requests, (unsigned long long)st.spans,
			(unsigned long long)st.spans_rejected, (unsigned long long)refused,
			(unsigned long long)st.bad_request, (unsigned long long)st.not_found,
			(unsigned long long)st.bad_method, (unsigned long long)st.length_required,
			(unsigned long long)st.too_large, (unsigned long long)st.bad_media_type,
			(unsigned long long)st.head_too_large, (unsigned long long)st.busy,
			(unsigned long long)st.timeouts);
		if (!st.requests)
			fprintf(stderr, "ditto: OTLP receiver: no exporter sent anything to %s\n",
				a->listen);
	}
	if (err)
		return cli_fail("--otlp-listen", err);
	return CLI_OK;
}
