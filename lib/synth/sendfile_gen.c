/* SPDX-License-Identifier: MIT */
/*
 * rt_config.sendfile from the model's sendfile calls on the serving
 * class's sockets: the share of the response bytes they carried and the
 * calls per request. The bytes a clone sends from its scratch file are
 * taken off its writes, so the response stays the model's size.
 */
#include <math.h>
#include <string.h>

#include "model_int.h"
#include "synth_int.h"

#define SENDFILES_MAX 1024.0	/* per request; the runtime's cap too */

static bool counts(const struct ditto_syscall *c, const char *cls)
{
	return !strcmp(ditto_syscall_name(c), "sendfile") &&
	       ditto_syscall_fd_kind(c) == DITTO_FD_TCP &&
	       (!cls || !strcmp(ditto_syscall_thread_class(c), cls));
}

double sendfile_section(const struct ditto_service *s, const char *cls, double requests,
			double resp_mean, struct dbuf *b)
{
	double calls = 0, bytes = 0, per = 0, share = 0;

	for (size_t i = 0; i < ditto_service_syscall_count(s); i++) {
		const struct ditto_syscall *c = ditto_service_syscall(s, i);

		if (counts(c, cls)) {
			calls += (double)ditto_syscall_calls(c);
			bytes += (double)ditto_syscall_ret_total(c);
		}
	}
	/* From the bytes per call: calls per request come out a little over
	 * the responses' (a request read before the window is answered in
	 * it), and the share of a 4096-byte payload behind a 4-byte header
	 * would round up to the whole response, header included. */
	if (calls > 0 && requests > 0 && resp_mean > 0) {
		per = fmin(calls / requests, SENDFILES_MAX);
		share = fmin(bytes / calls * fmax(1, round(per)) / resp_mean, 1);
	}
	if (!isfinite(per) || !isfinite(share) || per < 0 || share < 0)
		per = share = 0;	/* a model's counts are finite; guard the ratios */
	dbuf_printf(b, "\t.sendfile = { .per_request = %.6f, .share = %.6f },\n", per, share);
	return share;
}
