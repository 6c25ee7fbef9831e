/* SPDX-License-Identifier: MIT */
/*
 * `ditto model show`: a human summary of a model, meta and model-wide
 * sections here, per-service sections in show_service.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_model.h"
#include "show.h"

#define CMD "model show"

static void usage(FILE *f)
{
	fputs("Usage: ditto model show FILE\n"
	      "\n"
	      "Summarise the model in FILE: host and load, then per service its thread\n"
	      "classes, network model, system calls per request, requests, CPU profile\n"
	      "per thread class and observed performance; then the RPC graph and the\n"
	      "tuning history. The file must be valid (see 'ditto model validate').\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help   show this help\n",
	      f);
}

static void show_meta(struct ditto_model *m, const char *file)
{
	struct ditto_meta *meta = ditto_model_meta(m);
	const char *src = ditto_meta_host_cache_source(meta);

	printf("model %s: schema %d, libditto %s, created %s, %" PRIu64 " source%s, window %.1f s\n",
	       file, ditto_model_schema(m), str_or_dash(ditto_meta_tool_version(meta)),
	       fmt_time(ditto_meta_created(meta)).s, ditto_meta_sources(meta),
	       ditto_meta_sources(meta) == 1 ? "" : "s", ditto_meta_window_s(meta));
	if (!src)
		src = "";
	printf("  host: %s, kernel %s, %s cores, L1d %s, L1i %s, L2 %s, LLC %s%s%s%s\n",
	       str_or_unknown(ditto_meta_host_cpu_model(meta)),
	       str_or_unknown(ditto_meta_host_kernel(meta)),
	       opt_count(m, "meta.host.cores").s, opt_bytes(m, "meta.host.l1d_bytes").s,
	       opt_bytes(m, "meta.host.l1i_bytes").s, opt_bytes(m, "meta.host.l2_bytes").s,
	       opt_bytes(m, "meta.host.llc_bytes").s,
	       *src ? " (caches from " : "", src, *src ? ")" : "");
	printf("  load: %s at %s qps over %s connections\n",
	       str_or_unknown(ditto_meta_load_generator(meta)), opt_rate(m, "meta.load.qps").s,
	       opt_count(m, "meta.load.connections").s);
}

static void show_values(const struct ditto_values *v)
{
	if (ditto_values_size(v) == 0)
		printf(" -");
	for (size_t i = 0; i < ditto_values_size(v); i++) {
		const char *key;
		double value;

		if (ditto_values_entry(v, i, &key, &value) == 0)
			printf("%s %s=%.4g", i ? "," : "", key, value);
	}
	putchar('\n');
}

static void show_iteration(struct ditto_tuning_iter *it)
{
	printf("  iteration %" PRIu64 " (%s): %s\n    knobs:", ditto_tuning_iter_index(it),
	       ditto_tuning_iter_accepted(it) ? "accepted" : "rejected",
	       str_or_dash(ditto_tuning_iter_note(it)));
	show_values(ditto_tuning_iter_knobs(it));
	printf("    errors:");
	show_values(ditto_tuning_iter_errors(it));
}

static void show_tuning(struct ditto_model *m)
{
	struct ditto_tuning *t = ditto_model_tuning(m);

	printf("\ntuning: %zu iteration%s; knobs:", ditto_tuning_iteration_count(t),
	       ditto_tuning_iteration_count(t) == 1 ? "" : "s");
	show_values(ditto_tuning_knobs(t));
	for (size_t i = 0; i < ditto_tuning_iteration_count(t); i++)
		show_iteration(ditto_tuning_iteration(t, i));
}

int cmd_model_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ditto_model *m = NULL;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c != 'h')
			return cli_bad_option(CMD, c, argv);
		usage(stdout);
		return CLI_OK;
	}
	if (argc - optind != 1)
		return cli_usage_error(CMD, "expected one FILE");
	if (cli_load(argv[optind], true, &m) != CLI_OK)
		return CLI_EINPUT;
	show_meta(m, argv[optind]);
	for (size_t i = 0; i < ditto_model_service_count(m); i++)
		show_service(m, i);
	show_graph(m);
	show_tuning(m);
	ditto_model_free(m);
	return CLI_OK;
}
