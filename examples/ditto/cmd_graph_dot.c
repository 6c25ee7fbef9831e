/* SPDX-License-Identifier: MIT */
/* `ditto graph dot`: a model's RPC graph as Graphviz DOT, and SVG. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_graph.h"
#include "graphviz.h"

#define CMD "graph dot"

static void usage(FILE *f)
{
	fputs("Usage: ditto graph dot MODEL [-o FILE.dot] [--svg FILE.svg]\n"
	      "                       [--source kernel|traces|all]\n"
	      "\n"
	      "Write the RPC graph of MODEL as Graphviz DOT: services as boxes,\n"
	      "externals as cylinders (address:port and framing), one arrow per edge\n"
	      "labelled with calls per parent request, sync or async (async dashed),\n"
	      "parallel when its calls overlap others, and mean request and response\n"
	      "sizes. Edges seen in traces are blue, and name their source when both\n"
	      "sources are drawn. The DOT goes to stdout unless -o or --svg is given.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE   write the DOT text to FILE\n"
	      "  -s, --svg FILE      render it to FILE with Graphviz 'dot -Tsvg'\n"
	      "  -S, --source WHICH  edges to draw: kernel, traces or all (default all)\n"
	      "  -h, --help          show this help\n"
	      "\n"
	      "Exit status: 0 written, 1 a model that cannot be read or Graphviz\n"
	      "missing or failing, 2 a usage error.\n",
	      f);
}

static int parse_source(const char *arg, unsigned *sources)
{
	enum ditto_edge_source s;

	if (!strcmp(arg, "all")) {
		*sources = 0;
		return 0;
	}
	if (ditto_edge_source_parse(arg, &s) < 0)
		return -1;
	*sources = 1u << s;
	return 0;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return cli_failf("%s: %s", path, strerror(errno));
	bad = fputs(text, f) == EOF;
	bad |= fclose(f) != 0;
	if (bad) {
		remove(path);
		return cli_failf("%s: write failed", path);
	}
	return CLI_OK;
}

static int draw(const char *model, const char *out, const char *svg, unsigned sources)
{
	DITTO_OPTS(ditto_dot_opts, opts, .sources = sources);
	struct ditto_model *m = NULL;
	char *text = NULL;
	int rc = cli_load(model, true, &m);

	if (rc == CLI_OK && (rc = ditto_graph_write_dot(m, &opts, &text)) < 0)
		rc = cli_fail(model, rc);
	if (rc == CLI_OK && out)
		rc = write_text(out, text);
	if (rc == CLI_OK && svg)
		rc = graphviz_svg(text, svg);
	if (rc == CLI_OK && !out && !svg && (fputs(text, stdout) == EOF || fflush(stdout)))
		rc = cli_failf("stdout: write failed");
	ditto_free(text);
	ditto_model_free(m);
	return rc;
}

int cmd_graph_dot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "svg", required_argument, NULL, 's' },
		{ "source", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *svg = NULL;
	unsigned sources = 0;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":o:s:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 's':
			svg = optarg;
			break;
		case 'S':
			if (parse_source(optarg, &sources) < 0)
				return cli_usage_error(CMD, "--source wants kernel, traces or all, "
						       "got '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(CMD, "expected one MODEL");
	return draw(argv[optind], out, svg, sources);
}
