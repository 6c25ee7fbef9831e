/* Fuzz the bounded JSON reader of the graph tree's manifests (graph.json,
 * up.json: a person may edit them). Whatever the input, the reader
 * returns without a crash; what it accepts, written back with the
 * writer's escaping, reads back as the same tree. */
#include <ditto/ditto.h>

#include <string.h>

#include "core_int.h"
#include "fuzz.h"
#include "graph_json.h"

static void emit(const struct jval *v, struct dbuf *b)
{
	switch (v->t) {
	case J_NULL: dbuf_puts(b, "null"); break;
	case J_BOOL: dbuf_puts(b, v->b ? "true" : "false"); break;
	case J_NUM: dbuf_printf(b, "%.17g", v->num); break;
	case J_STR: gjson_put_str(b, v->str); break;
	case J_ARR:
	case J_OBJ:
		dbuf_putc(b, v->t == J_ARR ? '[' : '{');
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				dbuf_putc(b, ',');
			if (v->t == J_OBJ) {
				gjson_put_str(b, v->keys[i]);
				dbuf_putc(b, ':');
			}
			emit(&v->items[i], b);
		}
		dbuf_putc(b, v->t == J_ARR ? ']' : '}');
		break;
	}
}

static bool same(const struct jval *a, const struct jval *b)
{
	if (a->t != b->t || a->n != b->n)
		return false;
	if (a->t == J_BOOL)
		return a->b == b->b;
	if (a->t == J_NUM)
		return a->num == b->num || (a->num != a->num && b->num != b->num);
	if (a->t == J_STR)
		return !strcmp(a->str, b->str);
	for (size_t i = 0; i < a->n; i++)
		if ((a->t == J_OBJ && strcmp(a->keys[i], b->keys[i])) || !same(&a->items[i], &b->items[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jval v, w;
	struct dbuf b;

	if (gjson_parse((const char *)data, size, "fuzz", &v))
		return 0;
	dbuf_init(&b);
	emit(&v, &b);
	FUZZ_ASSERT(!b.oom);
	/* Numbers past a double's range read back as inf, which JSON cannot
	 * write: those trees are not compared. */
	if (!strstr(b.data, "inf") && !strstr(b.data, "nan")) {
		FUZZ_ASSERT(!gjson_parse(b.data, b.len, "fuzz again", &w));
		FUZZ_ASSERT(same(&v, &w));
		gjson_free(&w);
	}
	dbuf_free(&b);
	gjson_free(&v);
	return 0;
}
