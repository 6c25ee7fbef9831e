/* SPDX-License-Identifier: MIT */
/*
 * ditto clone --pid PID -o DIR: profile a live service (`ditto profile`),
 * then write and build its clone (`ditto synth`), in one go.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_profile.h"
#include "cmd_synth.h"

#define CMD "clone"

int synth_option(const char *cmd, int c, const char *arg, struct synth_args *a);

static void usage(FILE *f)
{
	fputs("Usage: ditto clone (--pid PID... | --cgroup PATH) -o DIR [options]\n"
	      "\n"
	      "Profile a live service (as 'ditto profile'), write its model next to DIR,\n"
	      "then write and build its clone into DIR (as 'ditto synth'). Load the\n"
	      "service while it is profiled: the model is what the load made it do.\n"
	      "Several --pid (or --cgroup) profile a graph of services with their calls\n"
	      "(--graph): DIR is then a graph tree, one clone per node and DIR/graph.json,\n"
	      "that 'ditto up DIR' runs.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID         the service's process (repeat for a graph, up to 16)\n"
	      "      --cgroup PATH     every process tree of a cgroup, as a graph\n"
	      "      --keep NAME=HOST:PORT  graph: leave node NAME to the real service at\n"
	      "                        HOST:PORT instead of cloning it (repeatable)\n"
	      "  -d, --duration S      profile window in seconds (default 5)\n"
	      "  -o, --output DIR      clone tree to create (required)\n"
	      "  -m, --model FILE      where to keep the model (default DIR.msgpack)\n"
	      "  -W, --cpu-windows N   CPU windows (default 8; 0: none)\n"
	      "  -I, --cpu-insts N     instructions per CPU window (default 20000)\n"
	      "  -M, --step-mode MODE  how CPU windows run system calls: auto (default),\n"
	      "                        breakpoint or syscall_stops (see ditto profile --help)\n"
	      "  -e, --seed N          generator seed (default 1)\n"
	      "  -P, --port P          the clone's default port (default: the service's)\n"
	      "  -f, --force           replace DIR if it is a clone tree libditto wrote\n"
	      "  -n, --no-build        write the tree only\n"
	      "      --build-cache DIR keep the runtime's compiled objects in DIR (\"off\":\n"
	      "                        none; default $DITTO_BUILD_CACHE, else\n"
	      "                        ~/.cache/ditto/objects)\n"
	      "  -a, --allow-idle      clone a service that saw no traffic in the window\n"
	      "                        (exit 0, still with the profile's warning)\n"
	      "  -q, --quiet           print only errors and where the clone is\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Exit status: 0 the clone is built; 1 failure; 2 usage error; 4 the window\n"
	      "counted no request or could not infer the network model (io_model,\n"
	      "framing): the model is written and a warning says what is missing, but no\n"
	      "clone is made of it (load the service while it is profiled, or give\n"
	      "--allow-idle to clone it all the same).\n",
	      f);
}

#define CLONE_PIDS 16

struct clone_args {
	const char *pids[CLONE_PIDS];
	size_t npids;
	const char *cgroup, *duration, *model, *windows, *insts, *step_mode;
	bool allow_idle;
	struct synth_args s;
};

static int parse(int argc, char **argv, struct clone_args *a)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "keep", required_argument, NULL, 'E' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "model", required_argument, NULL, 'm' },
		{ "cpu-windows", required_argument, NULL, 'W' },
		{ "cpu-insts", required_argument, NULL, 'I' },
		{ "step-mode", required_argument, NULL, 'M' },
		{ "seed", required_argument, NULL, 'e' },
		{ "port", required_argument, NULL, 'P' },
		{ "force", no_argument, NULL, 'f' },
		{ "no-build", no_argument, NULL, 'n' },
		{ "build-cache", required_argument, NULL, 'B' },
		{ "allow-idle", no_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":p:d:o:m:W:I:M:e:P:fnaqh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (a->npids == CLONE_PIDS)
				return cli_usage_error(CMD, "at most %d --pid", CLONE_PIDS);
			a->pids[a->npids++] = optarg;
			continue;
		case 'g': a->cgroup = optarg; continue;
		case 'd': a->duration = optarg; continue;
		case 'm': a->model = optarg; continue;
		case 'W': a->windows = optarg; continue;
		case 'I': a->insts = optarg; continue;
		case 'M': a->step_mode = optarg; continue;
		case 'a': a->allow_idle = true; continue;
		case 'h': usage(stdout); return -1;
		}
		if ((r = synth_option(CMD, c, optarg, &a->s)) < 0)
			return -r;
		if (!r)
			return cli_bad_option(CMD, c, argv);
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (!a->npids == !a->cgroup)
		return cli_usage_error(CMD, "give --pid PID (one or more) or --cgroup PATH");
	if (!a->s.output)
		return cli_usage_error(CMD, "missing --output DIR");
	return CLI_OK;
}

int cmd_clone(int argc, char **argv)
{
	struct clone_args a = { .duration = "5" };
	char *model = NULL, *pv[24 + 2 * CLONE_PIDS];
	int n = 0, rc = parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? CLI_OK : rc;
	if (!a.model) {
		size_t len = strlen(a.s.output);

		while (len > 1 && a.s.output[len - 1] == '/')
			len--;
		if (!(model = malloc(len + 9)))
			return cli_failf("out of memory");
		snprintf(model, len + 9, "%.*s.msgpack", (int)len, a.s.output);
		a.model = model;
	}
	/* The profile is `ditto profile` itself: same options, same checks. */
	pv[n++] = "profile";
	for (size_t i = 0; i < a.npids; i++)
		pv[n++] = "--pid", pv[n++] = (char *)a.pids[i];
	if (a.cgroup)
		pv[n++] = "--cgroup", pv[n++] = (char *)a.cgroup;
	/* A graph needs the calls attributed to requests: edges. */
	if (a.npids > 1 || a.cgroup)
		pv[n++] = "--graph";
	pv[n++] = "--duration", pv[n++] = (char *)a.duration;
	pv[n++] = "--output", pv[n++] = (char *)a.model;
	if (a.windows)
		pv[n++] = "--cpu-windows", pv[n++] = (char *)a.windows;
	if (a.insts)
		pv[n++] = "--cpu-insts", pv[n++] = (char *)a.insts;
	if (a.step_mode)
		pv[n++] = "--step-mode", pv[n++] = (char *)a.step_mode;
	if (a.allow_idle)
		pv[n++] = "--allow-idle";
	if (a.s.quiet)
		pv[n++] = "--quiet";
	pv[n] = NULL;
	rc = cmd_profile(n, pv);
	if (rc == CLI_IDLE)
		fprintf(stderr, "ditto: clone: no clone made of a model of an idle service (kept in "
			"%s)\n", a.model);
	a.s.model = a.model;
	if (!rc)
		rc = synth_run(&a.s);
	free(model);
	return rc;
}
