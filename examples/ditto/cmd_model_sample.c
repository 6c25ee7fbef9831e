/* SPDX-License-Identifier: MIT */
/*
 * `ditto model sample`: write the fully populated example model, a valid
 * input for trying the other subcommands and for tests.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmd_model.h"
#include "sample_model.h"

#define CMD "model sample"

static void usage(FILE *f)
{
	fputs("Usage: ditto model sample [-o FILE] [--seed N]\n"
	      "\n"
	      "Build an example model of two services (redis calling memcached) with\n"
	      "every field set. Equal seeds give equal models. Without -o, print it\n"
	      "as JSON instead of writing the msgpack file.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE   write the model (msgpack) to FILE\n"
	      "  -s, --seed N        seed of the generated values (default 1)\n"
	      "  -h, --help          show this help\n",
	      f);
}

static int print_json(const struct ditto_model *m)
{
	DITTO_OPTS(ditto_json_opts, jo, .pretty = true);
	char *text = NULL;
	int rc = ditto_model_to_json(m, &jo, &text);

	if (rc < 0)
		return cli_fail("sample model", rc);
	puts(text);
	ditto_free(text);
	return CLI_OK;
}

static int write_sample(uint64_t seed, const char *out)
{
	struct ditto_model *m = NULL;
	int rc = sample_model_build(seed, &m);

	if (rc < 0)
		return cli_fail("building the sample model", rc);
	if (!out)
		rc = print_json(m);
	else if ((rc = ditto_model_save(m, out)) < 0)
		rc = cli_fail(out, rc);
	ditto_model_free(m);
	return rc;
}

int cmd_model_sample(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	uint64_t seed = 1;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":o:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 's':
			if (!cli_parse_u64(optarg, &seed))
				return cli_usage_error(CMD, "--seed wants an unsigned integer, got '%s'",
						       optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	return write_sample(seed, out);
}
