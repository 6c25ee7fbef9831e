/* SPDX-License-Identifier: MIT */
/*
 * ditto synth MODEL -o DIR: write the clone tree of a model and build it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_deploy.h"
#include "cmd_synth.h"

#define CMD "synth"

static void usage(FILE *f)
{
	fputs("Usage: ditto synth MODEL -o DIR [options]\n"
	      "\n"
	      "Write a clone of a modelled service: a self-contained C source tree (runtime,\n"
	      "generated configuration and request body in x86-64 assembly, Makefile) that\n"
	      "needs no libditto, then build it with make into DIR/clone.\n"
	      "A model of several services, or with graph edges, gives a graph tree: one\n"
	      "clone per node in DIR/<node>/ (built into DIR/<node>/clone) and the manifest\n"
	      "DIR/graph.json; `ditto up DIR` runs it (--service NAME: one service only).\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output DIR      directory to create (required)\n"
	      "  -s, --service NAME    service of the model to clone (default: the first)\n"
	      "  -e, --seed N          generator seed (default 1): same model and seed, same tree\n"
	      "  -P, --port P          the clone's default port (default: the model's)\n"
	      "  -f, --force           replace DIR if it is a clone tree libditto wrote\n"
	      "  -n, --no-build        write the tree only\n"
	      "      --no-clamp        lift the limits that protect the host (processes,\n"
	      "                        threads, instructions and calls per request, working\n"
	      "                        set, scratch file): each clamp is named in a warning\n"
	      "  -k, --knob NAME=VALUE a generator knob (repeat for several): the model's\n"
	      "                        tuning.knobs are then ignored, other knobs take\n"
	      "                        their defaults\n"
	      "      --cc CC           C compiler for the build (default: cc)\n"
	      "      --build-cache DIR keep the runtime's compiled objects in DIR between\n"
	      "                        builds (\"off\": none; default $DITTO_BUILD_CACHE, else\n"
	      "                        ~/.cache/ditto/objects)\n"
	      "      --deploy LIST     then write DIR/deploy/ for compose,kubernetes (a graph\n"
	      "                        tree; static binaries built unless --no-build)\n"
	      "      --keep NAME=HOST:PORT  graph trees: do not clone node NAME, its callers\n"
	      "                        reach the real service at HOST:PORT (repeatable)\n"
	      "  -q, --quiet           print only errors\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Knobs (default, range):\n",
	      f);
	for (size_t i = 0; i < ditto_synth_knob_count(); i++) {
		const char *name;
		double d, lo, hi;

		if (!ditto_synth_knob(i, &name, &d, &lo, &hi))
			fprintf(f, "  %-22s %g, %g to %g\n", name, d, lo, hi);
	}
}

/* --knob NAME=VALUE into a->knobs; the library refuses unknown names. */
static int knob_option(const char *arg, struct synth_args *a)
{
	const char *eq = strchr(arg, '=');
	char name[128];
	double v;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name) || !cli_parse_f64(eq + 1, &v))
		return cli_usage_error(CMD, "--knob: '%s' is not NAME=NUMBER", arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	if (!a->knobs && !(a->knobs = ditto_values_new()))
		return cli_fail("--knob", -ENOMEM);
	if (ditto_values_set(a->knobs, name, v))
		return cli_fail("--knob", -EINVAL);
	return 0;
}

/* Options shared with `ditto clone`; 1 when c was one of them, <0 on a
 * usage error. */
int synth_option(const char *cmd, int c, const char *arg, struct synth_args *a);
int synth_option(const char *cmd, int c, const char *arg, struct synth_args *a)
{
	uint64_t u;

	switch (c) {
	case 'o': a->output = arg; return 1;
	case 's': a->service = arg; return 1;
	case 'e':
		if (!cli_parse_u64(arg, &a->seed))
			return -cli_usage_error(cmd, "--seed: '%s' is not a number", arg);
		return 1;
	case 'P':
		if (!cli_parse_u64(arg, &u) || !u || u > 65535)
			return -cli_usage_error(cmd, "--port: '%s' is not 1..65535", arg);
		a->port = (unsigned)u;
		return 1;
	case 'f': a->force = true; return 1;
	case 'n': a->no_build = true; return 1;
	case 'C': a->cc = arg; return 1;
	case 'B': a->build_cache = arg; return 1;
	case 'D': a->deploy = arg; return 1;
	case 'K': a->no_clamp = true; return 1;
	case 'q': a->quiet = true; return 1;
	case 'E':
		if (a->nkeep == sizeof(a->keep) / sizeof(a->keep[0]))
			return -cli_usage_error(cmd, "at most %zu --keep", a->nkeep);
		a->keep[a->nkeep++] = arg;
		return 1;
	default: return 0;
	}
}

/* A graph tree: every node's clone and graph.json, then every build. */
static int synth_graph_run(const struct synth_args *a, const struct ditto_model *m)
{
	DITTO_OPTS(ditto_synth_graph_opts, go, .seed = a->seed, .force = a->force,
		   .no_clamp = a->no_clamp, .knobs = a->knobs, .keep = a->keep,
		   .keep_count = a->nkeep);
	DITTO_OPTS(ditto_build_opts, bo, .cc = a->cc, .cache_dir = a->build_cache);
	int err;

	if (a->port)
		fprintf(stderr, "ditto: synth: --port is ignored for a graph: each node keeps its "
			"model's port (see %s/graph.json)\n", a->output);
	if ((err = ditto_synth_graph_write(m, a->output, &go)))
		return cli_fail(a->output, err);
	if (!a->quiet)
		fprintf(stderr, "ditto: graph tree written to %s (manifest %s/graph.json)\n",
			a->output, a->output);
	if (!a->no_build && (err = ditto_synth_graph_build(a->output, &bo)))
		return cli_fail("build", err);
	if (!a->no_build && !a->quiet)
		printf("graph built: %s\nstart it:    ditto up %s [--max-seconds S]\n", a->output,
		       a->output);
	return a->deploy ? deploy_after_synth(a->output, a->deploy, a->no_build, a->quiet) : CLI_OK;
}

int synth_run(const struct synth_args *a)
{
	DITTO_OPTS(ditto_synth_opts, so, .service = a->service, .seed = a->seed, .port = a->port,
		   .force = a->force, .no_clamp = a->no_clamp, .knobs = a->knobs);
	DITTO_OPTS(ditto_build_opts, bo, .cc = a->cc, .cache_dir = a->build_cache);
	struct ditto_model *m = NULL;
	int err, rc;

	if ((rc = cli_load(a->model, false, &m)))
		return rc;
	if (!a->service && cli_model_is_graph(m)) {
		rc = synth_graph_run(a, m);
		ditto_model_free(m);
		return rc;
	}
	if (a->nkeep) {
		ditto_model_free(m);
		return cli_usage_error(CMD, "--keep is for a graph (a model of several services "
				       "or with edges), not one service");
	}
	err = ditto_synth_write(m, a->output, &so);
	ditto_model_free(m);
	if (err)
		return cli_fail(a->output, err);
	if (!a->quiet)
		fprintf(stderr, "ditto: clone tree written to %s\n", a->output);
	if (a->no_build)
		return a->deploy ? deploy_after_synth(a->output, a->deploy, true, a->quiet) : CLI_OK;
	if ((err = ditto_synth_build(a->output, &bo)))
		return cli_fail("build", err);
	if (!a->quiet)
		printf("clone built: %s/clone\nstart it:    %s/clone [--port P] [--max-seconds S]\n",
		       a->output, a->output);
	return a->deploy ? deploy_after_synth(a->output, a->deploy, a->no_build, a->quiet) : CLI_OK;
}

/* The command line into a: -1 to go on, else the exit status. */
static int parse(int argc, char **argv, const struct option *opts, struct synth_args *a)
{
	int c, r;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":o:s:e:P:fnk:qh", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if (c == 'k') {
			if ((r = knob_option(optarg, a)))
				return r;
			continue;
		}
		if ((r = synth_option(CMD, c, optarg, a)) < 0)
			return -r;
		if (!r)
			return cli_bad_option(CMD, c, argv);
	}
	if (optind + 1 != argc)
		return cli_usage_error(CMD, optind < argc ? "one MODEL file, please" : "missing MODEL");
	a->model = argv[optind];
	if (!a->output)
		return cli_usage_error(CMD, "missing --output DIR");
	return -1;
}

int cmd_synth(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "service", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'e' },
		{ "port", required_argument, NULL, 'P' },
		{ "force", no_argument, NULL, 'f' },
		{ "no-build", no_argument, NULL, 'n' },
		{ "cc", required_argument, NULL, 'C' },
		{ "build-cache", required_argument, NULL, 'B' },
		{ "deploy", required_argument, NULL, 'D' },
		{ "no-clamp", no_argument, NULL, 'K' },
		{ "knob", required_argument, NULL, 'k' },
		{ "keep", required_argument, NULL, 'E' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct synth_args a = { 0 };
	int rc = parse(argc, argv, opts, &a);

	rc = rc < 0 ? synth_run(&a) : rc;
	ditto_values_free(a.knobs);
	return rc;
}
