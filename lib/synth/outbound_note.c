/* SPDX-License-Identifier: MIT */
/*
 * What a clone does not reproduce of the original's outbound calls (to a
 * back end, a database, a cache) when its model has no graph edges from
 * the service (a profile without --graph): then the clone connects
 * nowhere. It says so once at synth time and in the tree's README, rather
 * than serving as if the original did too. With edges, upstream_gen.c
 * makes the calls.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

#include <ditto/model.h>

/* "address:port", IPv6 in brackets; the address is an IP literal (the
 * model's validation refuses anything else). */
static void endpoint(struct dbuf *b, const struct ditto_outbound *o)
{
	const char *a = ditto_outbound_address(o);

	dbuf_printf(b, strchr(a, ':') ? "[%s]:%u" : "%s:%u", a, (unsigned)ditto_outbound_port(o));
}

/* "10.0.0.2:5432 (1.00 calls per request), ..." into b; "port 5432 (...)"
 * without the address for the README, which promises no addresses. */
static void endpoints(struct dbuf *b, const struct ditto_service *s, bool address)
{
	double requests = (double)ditto_requests_count(ditto_service_requests(s));

	for (size_t i = 0; i < ditto_service_outbound_count(s); i++) {
		const struct ditto_outbound *o = ditto_service_outbound(s, i);
		double calls = (double)ditto_outbound_calls(o);

		dbuf_puts(b, i ? ", " : "");
		if (address)
			endpoint(b, o);
		else
			dbuf_printf(b, "port %u", (unsigned)ditto_outbound_port(o));
		if (requests > 0)
			dbuf_printf(b, " (%.2f calls per request)", calls / requests);
		else
			dbuf_printf(b, " (%.0f calls)", calls);
	}
}

void outbound_warn(const struct ditto_service *s)
{
	struct dbuf b;

	if (!ditto_service_outbound_count(s))
		return;
	dbuf_init(&b);
	endpoints(&b, s, true);
	ditto_warn("synth: %s: the original calls other endpoints: %s; the clone drops these "
		   "calls (it connects nowhere until the graph is cloned)",
		   ditto_service_name(s), b.data ? b.data : "");
	dbuf_free(&b);
}

void outbound_readme(struct dbuf *b, const struct ditto_service *s)
{
	if (!ditto_service_outbound_count(s))
		return;
	dbuf_puts(b, "\nThe original made outbound calls, which this clone does not make (it\n"
		     "connects nowhere; its responses do not wait for any back end):\n\n    ");
	endpoints(b, s, false);
	dbuf_puts(b, "\n");
}
