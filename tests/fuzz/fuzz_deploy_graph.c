/* Fuzz graph.json as the deployment writer reads it: any input is refused
 * with a message or gives a graph whose every node name keeps the name
 * rule and maps to a DNS label, whose start order holds clone nodes only,
 * and whose compose and Kubernetes files render, holding only printable
 * ASCII (every string quoted) and no line a value could have started. */
#include <ditto/ditto.h>

#include <string.h>

#include "deploy_int.h"
#include "fuzz.h"

static void check_text(const struct dbuf *b)
{
	for (size_t i = 0; i < b->len; i++)
		FUZZ_ASSERT(b->data[i] == '\n' || (b->data[i] >= 0x20 && b->data[i] < 0x7f));
}

static void render(const struct deploy_graph *g)
{
	struct deploy_params p = { .k8s_namespace = "default", .image_prefix = "ditto-" };
	struct dbuf b;

	dbuf_init(&b);
	FUZZ_ASSERT(deploy_compose(g, &p, &b) == 0);
	check_text(&b);
	dbuf_free(&b);
	for (size_t k = 0; k < g->n_order; k++) {
		size_t i = g->order[k];

		FUZZ_ASSERT(!g->nodes[i].kept);
		FUZZ_ASSERT(deploy_name_problem(g->nodes[i].name) == NULL);
		FUZZ_ASSERT(deploy_is_dns_label(g->nodes[i].dns));
		dbuf_init(&b);
		FUZZ_ASSERT(deploy_k8s_node(g, i, &p, &b) == 0);
		FUZZ_ASSERT(deploy_dockerfile(g, i, &b) == 0);
		check_text(&b);
		dbuf_free(&b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deploy_graph g;
	int err = deploy_graph_parse((const char *)data, size, "graph.json", &g);

	if (err) {
		FUZZ_ASSERT(err < 0 && ditto_last_error()[0]);
		return 0;
	}
	FUZZ_ASSERT(g.front < g.n && !g.nodes[g.front].kept);
	render(&g);
	deploy_graph_free(&g);
	return 0;
}
