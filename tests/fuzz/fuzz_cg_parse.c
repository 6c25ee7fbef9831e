/* Fuzz the cachegrind output parser: any bytes give totals or a clean
 * error whose message names the file and line, deterministically; totals
 * of several processes add up or report an overflow. */
#include <ditto/ditto.h>

#include <errno.h>
#include <string.h>

#include "core_int.h"
#include "fuzz.h"
#include "measure_int.h"

#define NAME "cachegrind.out.1"

static bool same(const struct cg_totals *a, const struct cg_totals *b)
{
	return a->have == b->have && memcmp(a->v, b->v, sizeof(a->v)) == 0;
}

static void check_add(const struct cg_totals *t)
{
	struct cg_totals sum = { .have = 0 };
	int err;

	FUZZ_ASSERT(cg_totals_add(&sum, t) == 0 && same(&sum, t));
	err = cg_totals_add(&sum, t);
	FUZZ_ASSERT(err == 0 || err == -ERANGE);
	for (int i = 0; i < CG_N && !err; i++)
		FUZZ_ASSERT(sum.v[i] == 2 * t->v[i]);
	if (err)	/* a failed add leaves the sum as it was */
		FUZZ_ASSERT(same(&sum, t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cg_totals t, again;
	int err = cg_parse((const char *)data, size, NAME, &t);

	FUZZ_ASSERT(cg_parse((const char *)data, size, NAME, &again) == err);
	if (err) {
		FUZZ_ASSERT(err == -DITTO_ECORRUPT || err == -DITTO_ELIMIT);
		FUZZ_ASSERT(strncmp(ditto_last_error(), NAME ": ", strlen(NAME) + 2) == 0);
		return 0;
	}
	FUZZ_ASSERT(same(&t, &again));
	FUZZ_ASSERT(!(t.have & ~CG_ALL));
	for (int i = 0; i < CG_N; i++)
		FUZZ_ASSERT((t.have & (1u << i)) || t.v[i] == 0);
	check_add(&t);
	return 0;
}
