/* SPDX-License-Identifier: MIT */
/* Shared helpers of the `ditto` CLI (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const struct cli_command *cli_find(const struct cli_command *cmds, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

void cli_list(FILE *f, const struct cli_command *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
}

const char *cli_message(const char *context, int err)
{
	const char *msg = ditto_last_error();
	size_t n = strlen(context);

	/* A failure outside the library (or one it did not describe) still
	 * gets a message. */
	if (!msg || !*msg)
		return ditto_strerror(err);
	if (strncmp(msg, context, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

int cli_fail(const char *context, int err)
{
	fprintf(stderr, "ditto: %s: %s\n", context, cli_message(context, err));
	return CLI_EINPUT;
}

int cli_fail_path(const char *file, const char *path, int err)
{
	const char *msg = cli_message(path, err);

	/* The library's message often names the path already. */
	if (strstr(msg, path))
		fprintf(stderr, "ditto: %s: %s\n", file, msg);
	else
		fprintf(stderr, "ditto: %s: %s: %s\n", file, path, msg);
	return CLI_EINPUT;
}

int cli_failf(const char *fmt, ...)
{
	va_list ap;

	fputs("ditto: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EINPUT;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	const char *sep = *cmd ? " " : "";
	va_list ap;

	fprintf(stderr, "ditto: %s%s", cmd, *cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ditto%s%s --help' for more information.\n", sep, cmd);
	return CLI_EUSAGE;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
	/* optopt names a short option; for a long one it is 0 (unknown) or
	 * the option's value, and argv[optind - 1] holds what was typed. */
	const char *typed = argv[optind - 1];
	bool is_long = strncmp(typed, "--", 2) == 0;
	char short_name[3] = { '-', (char)optopt, '\0' };

	if (!is_long && optopt > 0 && optopt < 128)
		typed = short_name;
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs an argument", typed);
	/* A known long option given "=value" it does not take. */
	if (is_long && optopt)
		return cli_usage_error(cmd, "option '%.*s' takes no argument",
				       (int)strcspn(typed, "="), typed);
	return cli_usage_error(cmd, "unknown option '%s'", typed);
}

void cli_getopt_start(void)
{
	/* 0, not 1: glibc then also forgets the position inside a group of
	 * short options left from the previous vector. */
	optind = 0;
	opterr = 0;
}

bool cli_model_is_graph(const struct ditto_model *m)
{
	return ditto_model_service_count(m) > 1 || ditto_graph_edge_count(ditto_model_graph(m));
}

int cli_load(const char *path, bool validate, struct ditto_model **out)
{
	DITTO_OPTS(ditto_load_opts, lo, .no_validate = !validate);
	int rc = ditto_model_load(path, &lo, out);

	return rc < 0 ? cli_fail(path, rc) : CLI_OK;
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* strtoull accepts "-1" as a huge value: refuse any sign. */
	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool cli_parse_f64(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || errno || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

void cli_print_f64(FILE *f, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
}

int cli_group(const char *cmd, void (*usage)(FILE *f), const struct cli_command *subs, size_t n,
	      int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *sub;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		if (c != 'h')
			return cli_bad_option(cmd, c, argv);
		usage(stdout);
		return CLI_OK;
	}
	if (optind >= argc)
		return cli_usage_error(cmd, "missing subcommand");
	sub = cli_find(subs, n, argv[optind]);
	if (!sub)
		return cli_usage_error(cmd, "unknown subcommand '%s'", argv[optind]);
	return sub->run(argc - optind, argv + optind);
}
