/* SPDX-License-Identifier: MIT */
/*
 * ditto up DIR: run a graph tree's clone tiers on 127.0.0.1 until Ctrl-C,
 * SIGTERM, --max-seconds, `ditto down DIR` or a tier's death.
 * ditto down DIR: stop it from another shell.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_synth.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void up_usage(FILE *f)
{
	fputs("Usage: ditto up DIR [options]\n"
	      "\n"
	      "Run the graph tree DIR (written by 'ditto synth' from a model of several\n"
	      "services) on 127.0.0.1: every clone tier in the manifest's start order, leaves\n"
	      "first, each told its children's addresses (DITTO_UPSTREAM_<NAME>=HOST:PORT),\n"
	      "each waited for until it says \"ready\" and accepts a connection. Logs go to\n"
	      "DIR/logs/<node>.log; DIR/up.json lets 'ditto down DIR' stop the graph from\n"
	      "another shell. Prints the front tier's address, then runs until Ctrl-C,\n"
	      "SIGTERM, --max-seconds or 'ditto down'. A tier that dies is reported with its\n"
	      "exit status and the end of its log, and the others are stopped. A tier's port\n"
	      "that is taken is replaced by a free one (a warning says which).\n"
	      "\n"
	      "Options:\n"
	      "  -t, --max-seconds S   stop the graph after S seconds\n"
	      "  -b, --port-base P     clone node i (manifest order) listens on P+i instead\n"
	      "                        of the manifest's ports\n"
	      "  -r, --ready-timeout S seconds a tier may take to be ready (default 10)\n"
	      "  -q, --quiet           print only errors and the front tier's address\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Exit status: 0 stopped as asked; 1 a tier died, was not ready or the tree is\n"
	      "bad; 2 usage error.\n",
	      f);
}

static void print_tiers(const struct ditto_synth_run *r)
{
	for (size_t i = 0; i < ditto_synth_up_tier_count(r); i++) {
		const char *name;
		int pid;
		unsigned port;

		if (!ditto_synth_up_tier(r, i, &name, &pid, &port))
			fprintf(stderr, "ditto: up: tier %-20s pid %-8d 127.0.0.1:%u\n", name, pid,
				port);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Until a signal, the deadline, or something the library reports. */
static int run(struct ditto_synth_run *r, double max_s, const char *dir, bool quiet)
{
	double end = now_s() + max_s;
	int err = 0;

	while (!stop_signal && (max_s <= 0 || now_s() < end))
		if ((err = ditto_synth_up_wait(r, 0.1)))
			break;
	if (err == -ECANCELED) {
		if (!quiet)
			fprintf(stderr, "ditto: up: %s stopped by 'ditto down'\n", dir);
		return CLI_OK;
	}
	if (err)
		return cli_fail("up", err);
	ditto_synth_up_stop(r);
	if (!quiet)
		fprintf(stderr, "ditto: up: every tier of %s stopped (%s)\n", dir,
			stop_signal ? strsignal(stop_signal) : "--max-seconds");
	return CLI_OK;
}

int cmd_up(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-seconds", required_argument, NULL, 't' },
		{ "port-base", required_argument, NULL, 'b' },
		{ "ready-timeout", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	DITTO_OPTS(ditto_synth_up_opts, uo);
	struct sigaction sa = { .sa_handler = on_signal };
	struct ditto_synth_run *r = NULL;
	bool quiet = false;
	uint64_t u;
	int c, err, rc;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":t:b:r:qh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!cli_parse_f64(optarg, &uo.max_seconds) || uo.max_seconds <= 0)
				return cli_usage_error("up", "--max-seconds: '%s' is not a positive "
						       "number", optarg);
			break;
		case 'b':
			if (!cli_parse_u64(optarg, &u) || !u || u > 65535)
				return cli_usage_error("up", "--port-base: '%s' is not 1..65535", optarg);
			uo.port_base = (unsigned)u;
			break;
		case 'r':
			if (!cli_parse_f64(optarg, &uo.ready_timeout_s) || uo.ready_timeout_s <= 0)
				return cli_usage_error("up", "--ready-timeout: '%s' is not a positive "
						       "number", optarg);
			break;
		case 'q': quiet = true; break;
		case 'h': up_usage(stdout); return CLI_OK;
		default: return cli_bad_option("up", c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error("up", optind < argc ? "one DIR, please" : "missing DIR");
	/* Before the first tier starts: a Ctrl-C while they start still
	 * stops every one of them. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if ((err = ditto_synth_up(argv[optind], &uo, &r)))
		return cli_fail("up", err);
	if (!quiet)
		print_tiers(r);
	printf("front: %s\n", ditto_synth_up_front(r));
	fflush(stdout);
	rc = run(r, uo.max_seconds, argv[optind], quiet);
	ditto_synth_up_free(r);
	return rc;
}

int cmd_down(int argc, char **argv)
{
	int err;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("Usage: ditto down DIR\n\nStop the graph 'ditto up DIR' runs (from any shell):\n"
		      "SIGTERM to each tier still the process it started, SIGKILL after 3 s.\n"
		      "Exit status: 0 stopped; 1 nothing is up in DIR; 2 usage error.\n", stdout);
		return CLI_OK;
	}
	if (argc != 2 || argv[1][0] == '-')
		return cli_usage_error("down", argc < 2 ? "missing DIR" : "one DIR, please");
	if ((err = ditto_synth_down(argv[1], NULL)))
		return cli_fail("down", err);
	fprintf(stderr, "ditto: down: %s stopped\n", argv[1]);
	return CLI_OK;
}
