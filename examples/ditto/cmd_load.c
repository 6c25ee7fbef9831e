/* SPDX-License-Identifier: MIT */
/*
 * ditto load --port P ...: drive a service (an original or a clone) with
 * requests in its wire framing and print throughput and latency.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ditto/model.h>
#include <ditto/tune.h>

#include "cli.h"
#include "cmd_tune.h"

#define CMD "load"

enum { O_HOST = 256, O_FRAMING, O_MODEL, O_SERVICE, O_MODE, O_QPS, O_WARMUP, O_VALUE, O_SHARE,
       O_SEED, O_TIMEOUT, O_DEADLINE, O_JSON, O_PORT, O_PATH };

struct load_args {
	struct ditto_loadgen_opts *o;
	const char *model;
	bool json;
};

static volatile int stop_flag;

static void usage(FILE *f)
{
	fputs("Usage: ditto load --port P [options]\n"
	      "\n"
	      "Drive a service with requests in its wire framing, closed loop (each\n"
	      "connection sends when its answer came) or open loop (arrivals at a target\n"
	      "rate, latency measured from each arrival's intended time), and print the\n"
	      "achieved rate and latency percentiles. Ctrl-C ends the run early.\n"
	      "\n"
	      "Options:\n"
	      "      --port P            TCP port of the service (required)\n"
	      "      --host H            its IPv4 address (default 127.0.0.1)\n"
	      "      --framing F         resp, memcache-text, memcache-binary, http1,\n"
	      "                          length-prefixed, raw, postgres or mysql\n"
	      "                          (default: the model's)\n"
	      "      --model FILE        take framing and request size from a model\n"
	      "      --service NAME      service of the model (default: the first)\n"
	      "      --mode M            closed, poisson or fixed (default closed)\n"
	      "      --qps Q             open-loop target rate over all connections\n"
	      "  -c, --connections N     connections, opened before the clock starts (8)\n"
	      "  -d, --duration S        seconds to record (default 5 unless -n)\n"
	      "  -n, --requests N        stop after N requests answered or failed\n"
	      "      --warmup S          seconds of load before recording\n"
	      "      --value-bytes B     value size of writes (default: model's, else 32)\n"
	      "      --write-share X     share of requests that write, 0..1 (default 0.5)\n"
	      "      --seed N            seed of arrivals and keys (default 1)\n"
	      "      --timeout S         an answer later than this is a timeout error\n"
	      "                          (default 5, or the whole run if shorter)\n"
	      "      --path P            target of HTTP requests (default /)\n"
	      "      --deadline S        end with an error if the run is not done S seconds\n"
	      "                          after it started (default with -n and no -d: 60\n"
	      "                          plus 0.01 per request; else none)\n"
	      "      --json              print the result as JSON\n"
	      "  -h, --help              this help\n"
	      "\n"
	      "Failed requests are counted by kind: refused (a reconnect), reset, closed\n"
	      "(by the service, a request outstanding), timeout, unparseable, error_reply\n"
	      "(the protocol's error answer) and other.\n"
	      "\n"
	      "Exit status: 0 requests were answered (failures, if any, printed by kind);\n"
	      "1 a bad model file or option value; 2 a usage error; 4 the load failed: no\n"
	      "connection could be made, no request was answered (each one failed or none\n"
	      "came back), or the deadline passed first. The result is printed then too.\n",
	      f);
}

static void on_sigint(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int parse_mode(const char *s, enum ditto_load_mode *m)
{
	static const char *const names[] = { "closed", "poisson", "fixed" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			*m = (enum ditto_load_mode)(DITTO_LOAD_CLOSED + i);
			return 0;
		}
	return -1;
}

/* Every real-valued option is a rate, seconds or a share: >= 0. */
static int number(const char *opt, const char *arg, double *d)
{
	return cli_parse_f64(arg, d) && *d >= 0 ? 0 :
	       cli_usage_error(CMD, "%s: '%s' is not a number >= 0", opt, arg);
}

static int integer(const char *opt, const char *arg, uint64_t *u)
{
	return cli_parse_u64(arg, u) ? 0 : cli_usage_error(CMD, "%s: '%s' is not a number", opt, arg);
}

/* One option into a; CLI_OK or a usage error. */
static int option(int c, const char *arg, struct load_args *a)
{
	struct ditto_loadgen_opts *o = a->o;
	enum ditto_framing f;
	uint64_t u = 0;
	int rc = 0;

	switch (c) {
	case O_PORT:
		if ((rc = integer("--port", arg, &u)) || !u || u > 65535)
			return rc ? rc : cli_usage_error(CMD, "--port: '%s' is not 1..65535", arg);
		o->port = (unsigned)u;
		return 0;
	case O_HOST: o->host = arg; return 0;
	case O_FRAMING:
		if (ditto_framing_parse(arg, &f) || f == DITTO_FRAMING_UNKNOWN)
			return cli_usage_error(CMD, "--framing: unknown framing '%s'", arg);
		o->framing = f;
		return 0;
	case O_MODEL: a->model = arg; return 0;
	case O_SERVICE: o->service = arg; return 0;
	case O_MODE:
		return parse_mode(arg, &o->mode) ?
		       cli_usage_error(CMD, "--mode: '%s' is not closed, poisson or fixed", arg) : 0;
	case O_QPS: return number("--qps", arg, &o->qps);
	case 'c':
		if ((rc = integer("--connections", arg, &u)) || !u || u > 100000)
			return rc ? rc : cli_usage_error(CMD, "--connections: '%s' is not 1..100000", arg);
		o->connections = (unsigned)u;
		return 0;
	case 'd': return number("--duration", arg, &o->duration_s);
	case 'n': return integer("--requests", arg, &o->requests);
	case O_WARMUP: return number("--warmup", arg, &o->warmup_s);
	case O_VALUE: return integer("--value-bytes", arg, &o->value_bytes);
	case O_SHARE:
		if ((rc = number("--write-share", arg, &o->write_share)) || o->write_share > 1)
			return rc ? rc : cli_usage_error(CMD, "--write-share: '%s' is not 0..1", arg);
		/* the library reads 0 as "default"; here 0 means no writes */
		o->write_share = o->write_share == 0 ? -1 : o->write_share;
		return 0;
	case O_SEED: return integer("--seed", arg, &o->seed);
	case O_TIMEOUT: return number("--timeout", arg, &o->timeout_s);
	case O_DEADLINE:
		if ((rc = number("--deadline", arg, &o->deadline_s)) || o->deadline_s == 0)
			return rc ? rc : cli_usage_error(CMD, "--deadline: '%s' is not > 0", arg);
		return 0;
	case O_PATH: o->http_path = arg; return 0;
	case O_JSON: a->json = true; return 0;
	default: return -1;
	}
}

/* The number after "key": in the result's JSON (0 when absent). */
static double json_num(const char *json, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(json, pat);
	return p ? strtod(p + strlen(pat), NULL) : 0;
}

/* " (timeout 8, reset 2)": every kind with errors. */
static void print_kinds(const struct ditto_load_result *r)
{
	const char *name;
	int n = 0;

	for (int k = 1; (name = ditto_load_error_name((enum ditto_load_error)k)); k++) {
		uint64_t e = ditto_load_result_errors_by(r, (enum ditto_load_error)k);

		if (e)
			printf("%s%s %llu", n++ ? ", " : " (", name, (unsigned long long)e);
	}
	if (n)
		putchar(')');
}

/* Printed from the JSON so that both outputs show the same numbers (its
 * max is exact, the histogram's top bucket is not). */
static void print_human(const struct ditto_loadgen_opts *o, const char *json,
			const struct ditto_load_result *r)
{
	static const char *const q[] = { "p50", "p90", "p99", "p99.9", "max" };
	const char *lat = strstr(json, "\"latency_ns\"");

	printf("%s:%u, %s, %u connections\n", o->host ? o->host : "127.0.0.1", o->port,
	       o->mode == DITTO_LOAD_POISSON ? "open loop (poisson)" :
	       o->mode == DITTO_LOAD_FIXED ? "open loop (fixed)" : "closed loop",
	       o->connections ? o->connections : 8);
	printf("  completed  %.0f in %.3f s: %.0f qps", json_num(json, "completed"),
	       json_num(json, "elapsed_s"), json_num(json, "achieved_qps"));
	if (json_num(json, "offered_qps") > 0)
		printf(" (offered %.0f)", json_num(json, "offered_qps"));
	printf(", errors %.0f", json_num(json, "errors"));
	print_kinds(r);
	printf("\n  latency us");
	if (!ditto_load_result_completed(r))
		fputs("  (no answers)", stdout);
	for (size_t i = 0; lat && ditto_load_result_completed(r) && i < 5; i++)
		printf("  %s %.1f", q[i], json_num(lat, q[i]) / 1e3);
	putchar('\n');
}

/* Open loop that fell short of its target by more than 5%. */
static void say_shortfall(const struct ditto_load_result *r, FILE *f)
{
	double offered = ditto_load_result_offered_qps(r), got = ditto_load_result_achieved_qps(r);

	if (offered > 0 && got < 0.95 * offered)
		fprintf(f, "could not reach %.0f qps: achieved %.0f\n", offered, got);
}

/* A failed run is the service's doing (4) unless the library refused
 * what it was given (1). */
static int load_failed(int err)
{
	cli_fail(CMD, err);
	if (err == -EINVAL || err == -ENOMEM || err == -DITTO_EOPTS || err == -DITTO_ENOTFOUND)
		return CLI_EINPUT;
	return CLI_LOAD_FAILED;
}

/* The result, as JSON or for people; 0 or the error of making the JSON. */
static int print_result(const struct load_args *a, const struct ditto_load_result *r)
{
	char *json = NULL;
	int err = ditto_load_result_to_json(r, &json);

	if (err)
		return err;
	if (a->json)
		puts(json);
	else
		print_human(a->o, json, r);
	say_shortfall(r, a->json ? stderr : stdout);
	ditto_free(json);
	fflush(stdout);	/* before the error, when there is one */
	return 0;
}

static int run(struct load_args *a)
{
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	struct ditto_load_result *r = NULL;
	struct ditto_model *m = NULL;
	int err, perr, rc;

	if (a->model && (rc = cli_load(a->model, false, &m)))
		return rc;
	a->o->model = m;
	a->o->stop = &stop_flag;
	sigaction(SIGINT, &sa, &old);	/* no SA_RESTART: the loop's wait ends */
	err = ditto_load_run(a->o, &r);
	sigaction(SIGINT, &old, NULL);
	ditto_model_free(m);
	/* a failed run still has a result: its counts by kind go out too
	 * (printing leaves the run's message unless it fails itself) */
	perr = r ? print_result(a, r) : 0;
	ditto_load_result_free(r);
	if (perr)
		return cli_fail(CMD, perr);
	return err ? load_failed(err) : CLI_OK;
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, O_PORT },
		{ "host", required_argument, NULL, O_HOST },
		{ "framing", required_argument, NULL, O_FRAMING },
		{ "model", required_argument, NULL, O_MODEL },
		{ "service", required_argument, NULL, O_SERVICE },
		{ "mode", required_argument, NULL, O_MODE },
		{ "qps", required_argument, NULL, O_QPS },
		{ "connections", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "requests", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "value-bytes", required_argument, NULL, O_VALUE },
		{ "write-share", required_argument, NULL, O_SHARE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "deadline", required_argument, NULL, O_DEADLINE },
		{ "path", required_argument, NULL, O_PATH },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	DITTO_OPTS(ditto_loadgen_opts, o);
	struct load_args a = { .o = &o };
	int c, rc;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":c:d:n:h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if ((rc = option(c, optarg, &a)) < 0)
			return cli_bad_option(CMD, c, argv);
		if (rc)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (!o.port)
		return cli_usage_error(CMD, "missing --port P");
	if (!o.framing && !a.model)
		return cli_usage_error(CMD, "give --framing F or --model FILE");
	if (o.mode && o.mode != DITTO_LOAD_CLOSED && !(o.qps > 0))
		return cli_usage_error(CMD, "open loop (--mode %s) needs --qps Q",
				       o.mode == DITTO_LOAD_POISSON ? "poisson" : "fixed");
	return run(&a);
}
