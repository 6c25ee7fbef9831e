/* SPDX-License-Identifier: MIT */
/* `ditto graph import`: the RPC graph from trace exports into a model. */
#include <getopt.h>
#include <stdio.h>

#include <ditto/profile.h>

#include "cli.h"
#include "cmd_graph.h"

#define CMD "graph import"

static void usage(FILE *f)
{
	fputs("Usage: ditto graph import [--format F] [--uncorrected] [--into MODEL] -o OUT FILE...\n"
	      "\n"
	      "Derive the RPC graph between services from distributed-tracing exports:\n"
	      "OTLP JSON (one document or JSON Lines, as the OpenTelemetry collector's\n"
	      "file exporter writes), Jaeger JSON (/api/traces) or Zipkin v2 JSON span\n"
	      "lists. Client spans paired with their server spans give edges between\n"
	      "services; client spans with no server span give external nodes\n"
	      "(\"redis-6379\"). Each edge gets calls per parent request, fan-out, sizes,\n"
	      "latency, sync/async and sequential/parallel (README \"Graph from traces\").\n"
	      "\n"
	      "Options:\n"
	      "  -f, --format F     auto (by content, the default), otlp-json, jaeger-json,\n"
	      "                     zipkin-json; a file whose content is another format\n"
	      "                     is an error\n"
	      "  -u, --uncorrected  leave call totals as sampled even when the exports\n"
	      "                     declare a sampling ratio\n"
	      "  -i, --into MODEL   add the graph to this model (default: a new model)\n"
	      "  -o, --output OUT   model file to write (required; may be MODEL)\n"
	      "  -h, --help         show this help\n",
	      f);
}

/* One line: what was read and derived, and whether totals are estimates. */
static void summary(const struct ditto_model *m)
{
	const struct ditto_graph *g = ditto_model_graph(m);
	const struct ditto_traces *t = g ? ditto_graph_traces(g) : NULL;
	size_t edges = 0;

	for (size_t i = 0; g && i < ditto_graph_edge_count(g); i++)
		edges += ditto_edge_source(ditto_graph_edge(g, i)) == DITTO_EDGE_TRACES;
	if (!t)
		return;
	printf("traces: %llu spans, %llu traces, %zu edges, %zu externals, %llu orphan spans, "
	       "%llu rejected; ",
	       (unsigned long long)ditto_traces_spans(t), (unsigned long long)ditto_traces_traces(t),
	       edges, ditto_graph_external_count(g),
	       (unsigned long long)ditto_traces_orphan_spans(t),
	       (unsigned long long)ditto_traces_rejected_spans(t));
	if (ditto_traces_sample_ratio(t) <= 0)
		printf("no sampling ratio declared (totals as sampled)\n");
	else {
		printf("sampling ratio ");
		cli_print_f64(stdout, ditto_traces_sample_ratio(t));
		printf(ditto_traces_corrected(t) ? " (totals corrected)\n"
						 : " (totals uncorrected)\n");
	}
}

static int import(const char *into, const char *out, const struct ditto_trace_opts *o,
		  char **files, int n)
{
	struct ditto_model *m = NULL;
	int rc = CLI_OK;

	if (into)
		rc = cli_load(into, true, &m);
	else if (!(m = ditto_model_new()))
		rc = cli_failf("out of memory");
	if (rc != CLI_OK)
		return rc;
	rc = ditto_profile_import_traces(m, (const char *const *)files, (size_t)n, o);
	if (rc < 0)
		rc = cli_fail("graph import", rc);
	else if ((rc = ditto_model_validate(m, NULL)) < 0)
		rc = cli_failf("the model with the graph is not valid: %s", cli_message("", rc));
	else if ((rc = ditto_model_save(m, out)) < 0)
		rc = cli_fail(out, rc);
	else {
		summary(m);
		rc = CLI_OK;
	}
	ditto_model_free(m);
	return rc;
}

int cmd_graph_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "uncorrected", no_argument, NULL, 'u' },
		{ "into", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	DITTO_OPTS(ditto_trace_opts, to);
	const char *out = NULL, *into = NULL;
	enum ditto_trace_format fmt;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":f:ui:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (ditto_trace_format_parse(optarg, &fmt) < 0)
				return cli_usage_error(CMD, "%s", ditto_last_error());
			to.format = fmt;
			break;
		case 'u':
			to.uncorrected = true;
			break;
		case 'i':
			into = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (!out)
		return cli_usage_error(CMD, "missing -o OUT");
	if (optind >= argc)
		return cli_usage_error(CMD, "expected at least one FILE");
	return import(into, out, &to, argv + optind, argc - optind);
}
