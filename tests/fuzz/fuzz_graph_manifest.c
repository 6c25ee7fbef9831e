/* Fuzz the graph tree's two files as libditto reads them back. graph.json
 * (ditto up, the graph build, the deployment writer): any input is refused
 * with a message or gives a graph whose every node name keeps the name
 * rule and maps to a DNS label, whose ports and upstreams are in range,
 * whose start order holds every clone node once, children first, and
 * whose compose and Kubernetes files render, holding only printable ASCII
 * (every string quoted) and no line a value could have started. up.json
 * (ditto down): refused with a message, or pids and absolute executable
 * paths within bounds. */
#include <ditto/ditto.h>

#include <stdlib.h>
#include <string.h>

#include "deploy_int.h"
#include "graph_run.h"
#include "fuzz.h"

static void check_text(const struct dbuf *b)
{
	for (size_t i = 0; i < b->len; i++)
		FUZZ_ASSERT(b->data[i] == '\n' || (b->data[i] >= 0x20 && b->data[i] < 0x7f));
}

static void render(const struct graph_manifest *g)
{
	struct deploy_params p = { .k8s_namespace = "default", .image_prefix = "ditto-" };
	struct dbuf b;

	dbuf_init(&b);
	FUZZ_ASSERT(deploy_compose(g, &p, &b) == 0);
	check_text(&b);
	dbuf_free(&b);
	for (size_t k = 0; k < g->n_order; k++) {
		size_t i = g->order[k];

		FUZZ_ASSERT(i < g->n && !g->nodes[i].kept);
		FUZZ_ASSERT(g->nodes[i].port >= 1 && g->nodes[i].port <= 65535);
		for (size_t j = 0; j < g->nodes[i].n_upstreams; j++) {
			size_t to = g->nodes[i].upstreams[j];

			FUZZ_ASSERT(to < g->n && to != i);
			for (size_t e = k; !g->nodes[to].kept && e < g->n_order; e++)
				FUZZ_ASSERT(g->order[e] != to);	/* started before i */
		}
		FUZZ_ASSERT(deploy_name_problem(g->nodes[i].name) == NULL);
		FUZZ_ASSERT(deploy_is_dns_label(g->nodes[i].dns));
		dbuf_init(&b);
		FUZZ_ASSERT(deploy_k8s_node(g, i, &p, &b) == 0);
		FUZZ_ASSERT(deploy_dockerfile(g, i, &b) == 0);
		check_text(&b);
		dbuf_free(&b);
	}
}

static void graph_json(const uint8_t *data, size_t size)
{
	struct graph_manifest g;
	int err = graph_manifest_parse((const char *)data, size, "graph.json", &g);

	if (err) {
		FUZZ_ASSERT(err < 0 && ditto_last_error()[0]);
		return;
	}
	FUZZ_ASSERT(g.n >= 1 && g.n <= MANIFEST_MAX_NODES);
	FUZZ_ASSERT(g.front < g.n && !g.nodes[g.front].kept);
	render(&g);
	graph_manifest_free(&g);
}

static void up_json(const uint8_t *data, size_t size)
{
	struct up_state *s = malloc(sizeof(*s));
	int err;

	FUZZ_ASSERT(s);
	err = up_json_parse((const char *)data, size, "up.json", s);
	if (err) {
		FUZZ_ASSERT(err < 0 && ditto_last_error()[0]);
	} else {
		FUZZ_ASSERT(s->runner > 0 && s->n <= GRAPH_NODES_MAX);
		for (size_t i = 0; i < s->n; i++)
			FUZZ_ASSERT(s->tiers[i].pid > 0 && s->tiers[i].exe[0] == '/' &&
				    memchr(s->tiers[i].exe, 0, sizeof(s->tiers[i].exe)));
	}
	free(s);
}

/* Every input goes to both readers: the files share a shape (an object
 * with schema 1), so one corpus serves both. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	graph_json(data, size);
	up_json(data, size);
	return 0;
}
