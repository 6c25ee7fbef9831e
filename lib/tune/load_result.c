/* SPDX-License-Identifier: MIT */
/* The result of a load run: counters, the latency histogram, its JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <ditto/tune.h>

#include "loadgen_int.h"

_Static_assert(LOADGEN_ERR_KINDS == DITTO_LOAD_ERR_OTHER,
	       "LOADGEN_ERR_KINDS is the last error kind");

struct ditto_load_result *loadgen_result_new(double offered_qps)
{
	struct ditto_load_result *r = calloc(1, sizeof(*r));

	if (!r || !(r->latency = ditto_hist_new(DITTO_HIST_LOGLIN, 0))) {
		free(r);
		ditto_err(-ENOMEM, "load: out of memory");
		return NULL;
	}
	r->offered_qps = offered_qps;
	return r;
}

int loadgen_result_add(struct ditto_load_result *r, uint64_t latency_ns)
{
	int err = ditto_hist_add(r->latency, latency_ns, 1);

	if (err)
		return err;
	r->completed++;
	r->sum_ns += (double)latency_ns;
	if (latency_ns > r->max_ns)
		r->max_ns = latency_ns;
	return 0;
}

void loadgen_result_error(struct ditto_load_result *r, int kind)
{
	/* an unknown kind is a bug here, but must not go uncounted */
	if (kind < 1 || kind > LOADGEN_ERR_KINDS)
		kind = DITTO_LOAD_ERR_OTHER;
	r->errors++;
	r->errors_by[kind]++;
}

void loadgen_result_kinds(const struct ditto_load_result *r, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 1; k <= LOADGEN_ERR_KINDS && n < len; k++) {
		int w;

		if (!r->errors_by[k])
			continue;
		w = snprintf(buf + n, len - n, "%s%s %llu", n ? ", " : "",
			     ditto_load_error_name((enum ditto_load_error)k),
			     (unsigned long long)r->errors_by[k]);
		n += w > 0 ? (size_t)w : 0;
	}
	if (!n)
		snprintf(buf, len, "none");
}

DITTO_API const char *ditto_load_error_name(enum ditto_load_error kind)
{
	/* the JSON keys and the CLI's words: keep them stable */
	static const char *const names[LOADGEN_ERR_KINDS + 1] = {
		[DITTO_LOAD_ERR_REFUSED] = "refused",
		[DITTO_LOAD_ERR_RESET] = "reset",
		[DITTO_LOAD_ERR_CLOSED] = "closed",
		[DITTO_LOAD_ERR_TIMEOUT] = "timeout",
		[DITTO_LOAD_ERR_UNPARSEABLE] = "unparseable",
		[DITTO_LOAD_ERR_REPLY] = "error_reply",
		[DITTO_LOAD_ERR_OTHER] = "other",
	};

	return (int)kind >= 1 && (int)kind <= LOADGEN_ERR_KINDS ? names[kind] : NULL;
}

DITTO_API void ditto_load_result_free(struct ditto_load_result *r)
{
	if (!r)
		return;
	ditto_hist_free(r->latency);
	free(r);
}

DITTO_API uint64_t ditto_load_result_completed(const struct ditto_load_result *r)
{
	return r ? r->completed : 0;
}

DITTO_API uint64_t ditto_load_result_errors(const struct ditto_load_result *r)
{
	return r ? r->errors : 0;
}

DITTO_API uint64_t ditto_load_result_errors_by(const struct ditto_load_result *r,
					       enum ditto_load_error kind)
{
	return r && (int)kind >= 1 && (int)kind <= LOADGEN_ERR_KINDS ? r->errors_by[kind] : 0;
}

DITTO_API double ditto_load_result_offered_qps(const struct ditto_load_result *r)
{
	return r ? r->offered_qps : 0;
}

DITTO_API double ditto_load_result_achieved_qps(const struct ditto_load_result *r)
{
	return r && r->elapsed_s > 0 ? (double)r->completed / r->elapsed_s : 0;
}

DITTO_API double ditto_load_result_elapsed_s(const struct ditto_load_result *r)
{
	return r ? r->elapsed_s : 0;
}

DITTO_API uint64_t ditto_load_result_bytes_sent(const struct ditto_load_result *r)
{
	return r ? r->bytes_sent : 0;
}

DITTO_API uint64_t ditto_load_result_bytes_received(const struct ditto_load_result *r)
{
	return r ? r->bytes_received : 0;
}

DITTO_API const struct ditto_hist *ditto_load_result_latency(const struct ditto_load_result *r)
{
	return r ? r->latency : NULL;
}

DITTO_API int ditto_load_result_to_json(const struct ditto_load_result *r, char **out)
{
	static const struct {
		const char *name;
		double q;
	} pct[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p99.9", 0.999 } };
	struct dbuf b;

	if (!r || !out)
		return ditto_err(-EINVAL, "load: a result and an output pointer are needed");
	dbuf_init(&b);
	dbuf_printf(&b, "{\"offered_qps\": %.3f, \"achieved_qps\": %.3f, \"completed\": %llu, "
		    "\"errors\": %llu, \"errors_by_kind\": {",
		    r->offered_qps, ditto_load_result_achieved_qps(r), (unsigned long long)r->completed,
		    (unsigned long long)r->errors);
	/* every kind, zeros too: a script reads a key without asking first */
	for (int k = 1; k <= LOADGEN_ERR_KINDS; k++)
		dbuf_printf(&b, "%s\"%s\": %llu", k > 1 ? ", " : "",
			    ditto_load_error_name((enum ditto_load_error)k),
			    (unsigned long long)r->errors_by[k]);
	dbuf_printf(&b, "}, \"elapsed_s\": %.6f, \"bytes_sent\": %llu, \"bytes_received\": %llu, "
		    "\"latency_ns\": {",
		    r->elapsed_s, (unsigned long long)r->bytes_sent, (unsigned long long)r->bytes_received);
	for (size_t i = 0; i < ARRAY_SIZE(pct); i++) {
		/* a bucket's interpolation may pass the exact maximum */
		double v = ditto_hist_quantile(r->latency, pct[i].q);

		dbuf_printf(&b, "\"%s\": %.0f, ", pct[i].name, v < (double)r->max_ns ? v : (double)r->max_ns);
	}
	dbuf_printf(&b, "\"max\": %llu, \"mean\": %.0f}}", (unsigned long long)r->max_ns,
		    r->completed ? r->sum_ns / (double)r->completed : 0.0);
	if (!(*out = dbuf_steal(&b)))
		return ditto_err(-ENOMEM, "load: out of memory");
	return 0;
}
