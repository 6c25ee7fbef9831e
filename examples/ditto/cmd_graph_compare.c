/* SPDX-License-Identifier: MIT */
/*
 * `ditto graph compare`: the edges one source saw against those another
 * saw, in one model (the kernel's against the traces') or in two.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_graph.h"
#include "diff_print.h"

#define CMD "graph compare"

static void usage(FILE *f)
{
	fputs("Usage: ditto graph compare [--sources A,B] [--json] [--min-error X]\n"
	      "                           [--bound X] MODEL [MODEL_B]\n"
	      "\n"
	      "Compare the RPC graph as source B saw it with the graph as source A saw\n"
	      "it (sources: kernel, traces; default kernel,traces): in MODEL alone, or\n"
	      "MODEL's source A against MODEL_B's source B. Edges are paired by their\n"
	      "ends; per edge: mode and order (error 0 or 1), calls per parent request\n"
	      "(relative error), ambiguous and unattributed shares, fan-out, request\n"
	      "and response sizes (distance and mean), latency (distance, p50, p99).\n"
	      "An edge or node one side lacks is a row with error 1. Rows are named\n"
	      "graph.edges[FROM:TO:A/B].\n"
	      "\n"
	      "Options:\n"
	      "  -s, --sources A,B   the two sources (kernel or traces each)\n"
	      "  -j, --json          print the metrics as a JSON array\n"
	      "  -m, --min-error X   keep only metrics whose error exceeds X\n"
	      "  -b, --bound X       the graphs differ when a metric's error exceeds X\n"
	      "                      (default 0.05; 0: any difference)\n"
	      "  -h, --help          show this help\n"
	      "\n"
	      "Exit status, as diff(1)'s: 0 every metric within the bound, 1 the graphs\n"
	      "differ beyond it (also when a side has no edge at all while the other\n"
	      "has some), 2 a usage error or a file that cannot be read.\n",
	      f);
}

static int parse_sources(const char *arg, enum ditto_edge_source out[2])
{
	const char *comma = strchr(arg, ',');
	char first[16];

	if (!comma || (size_t)(comma - arg) >= sizeof(first))
		return -1;
	memcpy(first, arg, (size_t)(comma - arg));
	first[comma - arg] = '\0';
	if (ditto_edge_source_parse(first, &out[0]) < 0 ||
	    ditto_edge_source_parse(comma + 1, &out[1]) < 0)
		return -1;
	return 0;
}

struct request {
	const char *fa, *fb;
	enum ditto_edge_source src[2];
	double min_error, bound;
	bool json;
};

static int compare(const struct request *r)
{
	DITTO_OPTS(ditto_compare_opts, co, .min_error = r->min_error);
	struct ditto_model *a = NULL, *b = NULL;
	struct ditto_comparison *shown = NULL, *all = NULL;
	double worst = 0;
	char where[512];
	int rc = cli_load(r->fa, true, &a);

	if (rc == CLI_OK && r->fb)
		rc = cli_load(r->fb, true, &b);
	if (rc == CLI_OK &&
	    ((rc = ditto_graph_compare(a, r->src[0], b ? b : a, r->src[1], &co, &shown)) < 0 ||
	     (rc = ditto_graph_compare(a, r->src[0], b ? b : a, r->src[1], NULL, &all)) < 0))
		rc = cli_failf("comparing graphs: %s", cli_message("", rc));
	if (rc == CLI_OK)
		rc = diff_print(shown, r->json);
	if (rc == CLI_OK) {
		/* The verdict counts every row, also those --min-error hides. */
		diff_worst(all, &worst, where, sizeof(where));
		if (!r->json)
			diff_verdict("graphs", r->bound, worst, where);
	}
	ditto_comparison_free(all);
	ditto_comparison_free(shown);
	ditto_model_free(b);
	ditto_model_free(a);
	if (rc != CLI_OK)
		return DIFF_TROUBLE;
	return worst > r->bound ? DIFF_BEYOND : DIFF_WITHIN;
}

int cmd_graph_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sources", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "min-error", required_argument, NULL, 'm' },
		{ "bound", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct request r = { .src = { DITTO_EDGE_KERNEL, DITTO_EDGE_TRACES }, .bound = 0.05 };
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":s:jm:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_sources(optarg, r.src) < 0)
				return cli_usage_error(CMD, "--sources wants A,B with A and B kernel "
						       "or traces, got '%s'", optarg);
			break;
		case 'j':
			r.json = true;
			break;
		case 'm':
			if (!cli_parse_f64(optarg, &r.min_error) || r.min_error < 0)
				return cli_usage_error(CMD, "--min-error wants a number >= 0, got '%s'",
						       optarg);
			break;
		case 'b':
			if (!cli_parse_f64(optarg, &r.bound) || !(r.bound >= 0))
				return cli_usage_error(CMD, "--bound wants a number >= 0, got '%s'",
						       optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return cli_usage_error(CMD, "expected MODEL, or MODEL and MODEL_B");
	r.fa = argv[optind];
	r.fb = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (!r.fb && r.src[0] == r.src[1])
		return cli_usage_error(CMD, "one model with one source compares nothing: give two "
				       "sources or two models");
	return compare(&r);
}
