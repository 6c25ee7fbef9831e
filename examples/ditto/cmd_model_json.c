/* SPDX-License-Identifier: MIT */
/*
 * `ditto model json` and `ditto model get`: raw views of a model through
 * the JSON export and the path getters. Neither validates the file, so a
 * model that breaks a rule can still be looked at to see why.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_model.h"

#define JSON_CMD "model json"
#define GET_CMD "model get"

static void json_usage(FILE *f)
{
	fputs("Usage: ditto model json [--compact] [--path PATH] FILE\n"
	      "\n"
	      "Print the model in FILE as JSON, or only the value at PATH, for example\n"
	      "'meta.host', 'services[redis].threads[main]' or\n"
	      "'services[0].syscalls[main:read:tcp].latency_ns'. The file is not\n"
	      "validated.\n"
	      "\n"
	      "Options:\n"
	      "  -c, --compact     one line instead of indented members\n"
	      "  -p, --path PATH   print only the value at PATH\n"
	      "  -h, --help        show this help\n",
	      f);
}

static void get_usage(FILE *f)
{
	fputs("Usage: ditto model get FILE PATH\n"
	      "\n"
	      "Print the value at PATH in the model in FILE: a scalar as plain text,\n"
	      "an array, map or histogram as JSON. The file is not validated.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help   show this help\n",
	      f);
}

/* JSON of the whole model (path NULL) or of one value. */
static int print_json(struct ditto_model *m, const char *file, const char *path, bool pretty)
{
	DITTO_OPTS(ditto_json_opts, jo, .pretty = pretty);
	char *text = NULL;
	int rc = path ? ditto_model_get_json(m, path, &jo, &text) : ditto_model_to_json(m, &jo, &text);

	if (rc < 0)
		return path ? cli_fail_path(file, path, rc) : cli_fail(file, rc);
	puts(text);
	ditto_free(text);
	return CLI_OK;
}

int cmd_model_json(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "compact", no_argument, NULL, 'c' },
		{ "path", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	bool pretty = true;
	struct ditto_model *m = NULL;
	int c, rc;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":cp:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			pretty = false;
			break;
		case 'p':
			path = optarg;
			break;
		case 'h':
			json_usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(JSON_CMD, c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(JSON_CMD, "expected one FILE");
	rc = cli_load(argv[optind], false, &m);
	if (rc == CLI_OK)
		rc = print_json(m, argv[optind], path, pretty);
	ditto_model_free(m);
	return rc;
}

/* ---- get: one typed printer per scalar type ---- */

static int print_bool(const struct ditto_model *m, const char *path)
{
	bool v;
	int rc = ditto_model_get_bool(m, path, &v);

	if (rc == 0)
		puts(v ? "true" : "false");
	return rc;
}

static int print_i64(const struct ditto_model *m, const char *path)
{
	int64_t v;
	int rc = ditto_model_get_i64(m, path, &v);

	if (rc == 0)
		printf("%" PRId64 "\n", v);
	return rc;
}

static int print_u64(const struct ditto_model *m, const char *path)
{
	uint64_t v;
	int rc = ditto_model_get_u64(m, path, &v);

	if (rc == 0)
		printf("%" PRIu64 "\n", v);
	return rc;
}

static int print_f64(const struct ditto_model *m, const char *path)
{
	double v;
	int rc = ditto_model_get_f64(m, path, &v);

	if (rc == 0) {
		cli_print_f64(stdout, v);
		putchar('\n');
	}
	return rc;
}

static int print_str(const struct ditto_model *m, const char *path)
{
	const char *v;
	int rc = ditto_model_get_str(m, path, &v);

	if (rc == 0)
		puts(v);
	return rc;
}

/* Containers, histograms and binary values have no plain-text form. */
static int print_structured(const struct ditto_model *m, const char *path)
{
	DITTO_OPTS(ditto_json_opts, jo, .pretty = true);
	char *text = NULL;
	int rc = ditto_model_get_json(m, path, &jo, &text);

	if (rc == 0)
		puts(text);
	ditto_free(text);
	return rc;
}

static int print_value(const struct ditto_model *m, const char *path)
{
	enum ditto_value_type type;
	int rc = ditto_model_get_type(m, path, &type);

	if (rc < 0)
		return rc;
	switch (type) {
	case DITTO_VALUE_NIL:
		puts("null");
		return 0;
	case DITTO_VALUE_BOOL:
		return print_bool(m, path);
	case DITTO_VALUE_INT:
		return print_i64(m, path);
	case DITTO_VALUE_UINT:
		return print_u64(m, path);
	case DITTO_VALUE_FLOAT:
		return print_f64(m, path);
	case DITTO_VALUE_STRING:
		return print_str(m, path);
	default:
		return print_structured(m, path);
	}
}

int cmd_model_get(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ditto_model *m = NULL;
	int c, rc;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c != 'h')
			return cli_bad_option(GET_CMD, c, argv);
		get_usage(stdout);
		return CLI_OK;
	}
	if (argc - optind != 2)
		return cli_usage_error(GET_CMD, "expected FILE and PATH");
	rc = cli_load(argv[optind], false, &m);
	if (rc == CLI_OK) {
		rc = print_value(m, argv[optind + 1]);
		if (rc < 0)
			rc = cli_fail_path(argv[optind], argv[optind + 1], rc);
	}
	ditto_model_free(m);
	return rc;
}
