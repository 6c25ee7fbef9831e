/* SPDX-License-Identifier: MIT */
/*
 * The clone's command line (see rt.h) and the one error printer the
 * runtime's files share.
 */
#include "rt_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_opts rt_opts;

void rt_err(int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, "clone: %s: %s\n", msg, strerror(err));
	else
		fprintf(stderr, "clone: %s\n", msg);
}

/* The service's name is data from the model: it is printed as an
 * argument, verbatim, never used as a format. */
static void usage(const char *prog)
{
	fprintf(stderr, "clone of the service: %s\n", rt_config.service ? rt_config.service : "");
	fprintf(stderr,
		"usage: %s [--port P] [--max-seconds S] [--max-requests N] [--scratch DIR]\n"
		"          [--upstream NAME=HOST:PORT]... [--upstream-timeout-ms N] [--stats]\n"
		"          [--otlp URL]\n"
		"  --port P          listen on 127.0.0.1:P (default %u)\n"
		"  --max-seconds S   stop after S seconds (default 0: no limit)\n"
		"  --max-requests N  stop after N requests (per process when pre-forked; 0: no limit)\n"
		"  --scratch DIR     folder of the scratch file (default $TMPDIR or /tmp)\n"
		"  --upstream NAME=HOST:PORT  address of the child NAME (else the environment's\n"
		"                    DITTO_UPSTREAM_<NAME upper-cased, [^A-Z0-9] as _>)\n"
		"  --upstream-timeout-ms N  bound of a call to a child (default 1000)\n"
		"  --stats           print the requests served at exit\n"
		"  --otlp URL        export spans (OTLP/HTTP JSON) to http://HOST:PORT[/PATH]\n"
		"                    (else $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or\n"
		"                    $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; none: no spans)\n",
		prog, (unsigned)rt_config.port);
	for (unsigned i = 0; i < rt_config.nupstreams; i++) {
		fputs("  child: ", stderr);
		fputs(rt_config.upstreams[i].name, stderr);	/* data, never a format */
		fputs(" (", stderr);
		fputs(rt_config.upstreams[i].env ? rt_config.upstreams[i].env : "", stderr);
		fputs(")\n", stderr);
	}
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

static int bad(const char *prog, const char *opt, const char *val)
{
	rt_err(0, "bad value for %s: '%s'", opt, val);
	usage(prog);
	return -1;
}

int rt_opts_parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "max-seconds", required_argument, NULL, 's' },
		{ "max-requests", required_argument, NULL, 'n' },
		{ "scratch", required_argument, NULL, 'd' },
		{ "upstream", required_argument, NULL, 'u' },
		{ "upstream-timeout-ms", required_argument, NULL, 't' },
		{ "stats", no_argument, NULL, 'S' },
		{ "otlp", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tmp = getenv("TMPDIR");
	uint64_t v;
	int c;

	rt_opts.port = rt_config.port;
	rt_opts.upstream_timeout_ms = 1000;
	rt_opts.upstream_args = calloc((size_t)argc + 1, sizeof(*rt_opts.upstream_args));
	if (!rt_opts.upstream_args) {
		rt_err(ENOMEM, "options");
		return -1;
	}
	rt_opts.scratch_dir = tmp && *tmp ? tmp : "/tmp";
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, 65535, &v) || v == 0)
				return bad(argv[0], "--port", optarg);
			rt_opts.port = (uint16_t)v;
			break;
		case 's':
			if (parse_seconds(optarg, &rt_opts.max_seconds))
				return bad(argv[0], "--max-seconds", optarg);
			break;
		case 'n':
			if (parse_u64(optarg, UINT64_MAX, &rt_opts.max_requests))
				return bad(argv[0], "--max-requests", optarg);
			break;
		case 'd':
			if (!*optarg)
				return bad(argv[0], "--scratch", optarg);
			rt_opts.scratch_dir = optarg;
			break;
		case 'u':
			if (!strchr(optarg, '=') || *optarg == '=')
				return bad(argv[0], "--upstream", optarg);
			rt_opts.upstream_args[rt_opts.nupstream_args++] = optarg;
			break;
		case 't':
			if (parse_u64(optarg, 3600000, &v) || v == 0)
				return bad(argv[0], "--upstream-timeout-ms", optarg);
			rt_opts.upstream_timeout_ms = (uint32_t)v;
			break;
		case 'S':
			rt_opts.stats = true;
			break;
		case 'o':
			rt_opts.otlp_url = optarg;
			break;
		case 'h':
			usage(argv[0]);
			return 1;
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		rt_err(0, "unexpected argument '%s'", argv[optind]);
		usage(argv[0]);
		return -1;
	}
	return 0;
}
