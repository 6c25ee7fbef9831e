/* SPDX-License-Identifier: MIT */
/*
 * The outbound part of `ditto model show`: the calls a service made to
 * other endpoints, per inbound request, apart from the requests it served.
 */
#include <inttypes.h>
#include <stdio.h>

#include "show.h"

static double mean_of(uint64_t total, uint64_t n)
{
	return n ? (double)total / (double)n : 0;
}

static void show_endpoint(struct ditto_outbound *o, double requests)
{
	uint64_t calls = ditto_outbound_calls(o);

	/* The address passed validation as an IP literal: safe to print. */
	printf("    %s port %u (%s): %s calls per request, %" PRIu64 " connections opened\n",
	       ditto_outbound_address(o), (unsigned)ditto_outbound_port(o),
	       ditto_framing_name(ditto_outbound_framing(o)), fmt_ratio((double)calls, requests).s,
	       ditto_outbound_connections(o));
	printf("      per call: sent %s, received %s; %s sends, %s receives\n",
	       calls ? fmt_bytes(mean_of(ditto_outbound_request_bytes_total(o), calls)).s : "-",
	       calls ? fmt_bytes(mean_of(ditto_outbound_response_bytes_total(o), calls)).s : "-",
	       fmt_ratio((double)ditto_outbound_sends(o), (double)calls).s,
	       fmt_ratio((double)ditto_outbound_receives(o), (double)calls).s);
}

void show_outbound(struct ditto_model *m, size_t si)
{
	struct ditto_service *s = ditto_model_service(m, si);
	double requests = (double)ditto_requests_count(ditto_service_requests(s));
	size_t n = ditto_service_outbound_count(s);

	if (!n)
		return;
	printf("  outbound calls (not counted as requests or responses):\n");
	for (size_t i = 0; i < n; i++)
		show_endpoint(ditto_service_outbound(s, i), requests);
}
