/* SPDX-License-Identifier: MIT */
/*
 * The trace context of each request, so that the tracing pipeline that
 * measured the original measures the clone: an inbound HTTP request's
 * traceparent (rt_traceparent.c) gives the request its trace id and
 * parent span, else a fresh trace begins; its calls carry the trace id
 * with a new span id each. Spans end in rt_span_end() (rt_span_export.c).
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <string.h>

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* n random bytes, never all zero (an all-zero id is invalid). */
static void random_id(struct rt_rng *r, uint8_t *p, size_t n)
{
	do {
		for (size_t i = 0; i < n; i += 8) {
			uint64_t x = rt_rng_next(r);

			memcpy(p + i, &x, n - i < 8 ? n - i : 8);
		}
	} while (all_zero(p, n));
}

/* A clone that calls no child and exports no span has no use for trace
 * context: it does none of this work, which its original did not do
 * either (the CPU profile of the clone must not count it). */
static bool traced(void)
{
	return rt_config.nupstreams || rt_otlp_on();
}

void rt_trace_begin(struct rt_thread *t, const struct rt_req *req)
{
	struct rt_trace *tc = &t->trace;

	if (!traced())
		return;
	tc->remote = false;
	if (!req->traceparent ||
	    rt_traceparent_parse(req->traceparent, req->traceparent_len, tc)) {
		random_id(&t->id_rng, tc->trace_id, 16);
		memset(tc->parent_id, 0, 8);
		tc->flags = 1;	/* sampled: a clone is run to be measured */
	}
	random_id(&t->id_rng, tc->span_id, 8);
	tc->start_ns = rt_now_ns();
}

void rt_trace_end(struct rt_thread *t)
{
	struct rt_span s = { .kind = RT_SPAN_SERVER, .trace_id = t->trace.trace_id,
			     .span_id = t->trace.span_id, .parent_id = t->trace.parent_id,
			     .start_ns = t->trace.start_ns, .upstream = -1 };

	if (!traced())
		return;
	s.end_ns = rt_now_ns();
	rt_span_end(&s);
}

/* A new span id for a call of the current request (the caller's client
 * span, the child's parent). */
void rt_trace_child(struct rt_thread *t, uint8_t span_id[8])
{
	random_id(&t->id_rng, span_id, 8);
}
