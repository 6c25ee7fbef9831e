/* SPDX-License-Identifier: MIT */
/*
 * ditto deploy DIR: write DIR/deploy/ (Dockerfiles, compose.yaml,
 * Kubernetes manifests) for the graph tree in DIR, and say how to run it.
 */
#include <getopt.h>
#include <stdio.h>

#include <ditto/synth.h>

#include "cli.h"
#include "cmd_deploy.h"

#define CMD "deploy"

static void usage(FILE *f)
{
	fputs("Usage: ditto deploy DIR [options]\n"
	      "\n"
	      "Write the deployment files of a graph tree (DIR holds graph.json and a clone\n"
	      "tree per node, as `ditto synth` writes them) into DIR/deploy/:\n"
	      "  docker/<node>.Dockerfile  FROM scratch + the clone's static binary\n"
	      "  compose.yaml              every tier on 127.0.0.1 (host network)\n"
	      "  kubernetes/*.yaml         per tier a ConfigMap, Deployment and Service\n"
	      "\n"
	      "Options:\n"
	      "  -t, --targets LIST      compose,kubernetes (default: both)\n"
	      "  -N, --namespace NS      Kubernetes namespace (default: default)\n"
	      "  -i, --image-prefix P    images are P<node>:latest (default: ditto-)\n"
	      "  -b, --build             build each tier's static binary first\n"
	      "                          (make clone-static)\n"
	      "  -q, --quiet             print only errors\n"
	      "  -h, --help              this help\n"
	      "\n"
	      "Then:  docker-compose -f DIR/deploy/compose.yaml up --build\n"
	      "       kubectl apply -f DIR/deploy/kubernetes/   (images loaded on the nodes)\n",
	      f);
}

static void print_next(const char *dir, unsigned targets)
{
	printf("deployment files written to %s/deploy/\n", dir);
	if (targets & DITTO_DEPLOY_COMPOSE)
		printf("compose:    docker-compose -f %s/deploy/compose.yaml up --build\n", dir);
	if (targets & DITTO_DEPLOY_KUBERNETES)
		printf("kubernetes: kubectl apply -f %s/deploy/kubernetes/\n", dir);
}

static int run(const char *dir, unsigned targets, const char *ns, const char *prefix, bool build,
	       bool quiet)
{
	DITTO_OPTS(ditto_deploy_opts, o, .targets = targets, .k8s_namespace = ns,
		   .image_prefix = prefix, .build = build);
	int err = ditto_synth_deploy(dir, &o);

	if (err)
		return cli_fail(CMD, err);
	if (!quiet)
		print_next(dir, targets ? targets : DITTO_DEPLOY_COMPOSE | DITTO_DEPLOY_KUBERNETES);
	return CLI_OK;
}

int deploy_after_synth(const char *dir, const char *list, bool no_build, bool quiet)
{
	unsigned targets;
	int err = ditto_deploy_targets_parse(list, &targets);

	if (err)
		return cli_usage_error("synth", "--deploy: %s", cli_message(CMD, err));
	return run(dir, targets, NULL, NULL, !no_build, quiet);
}

int cmd_deploy(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "targets", required_argument, NULL, 't' },
		{ "namespace", required_argument, NULL, 'N' },
		{ "image-prefix", required_argument, NULL, 'i' },
		{ "build", no_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ns = NULL, *prefix = NULL;
	bool build = false, quiet = false;
	unsigned targets = 0;
	int c, err;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":t:N:i:bqh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((err = ditto_deploy_targets_parse(optarg, &targets)))
				return cli_usage_error(CMD, "--targets: %s", cli_message(CMD, err));
			break;
		case 'N': ns = optarg; break;
		case 'i': prefix = optarg; break;
		case 'b': build = true; break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error(CMD, optind < argc ? "one DIR, please" : "missing DIR");
	return run(argv[optind], targets, ns, prefix, build, quiet);
}
