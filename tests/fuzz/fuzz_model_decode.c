/* Fuzz the model decoder and everything a decoded model feeds: JSON export,
 * re-encoding (must be a fixed point), validation, compare and merge. */
#include <ditto/ditto.h>

#include <errno.h>
#include <string.h>

#include "fuzz.h"

static void check_error(int err, struct ditto_model *m)
{
	FUZZ_ASSERT(err < 0);
	FUZZ_ASSERT(m == NULL);
	FUZZ_ASSERT(ditto_strerror(err) != NULL);
	FUZZ_ASSERT(ditto_last_error()[0] != '\0');
}

/* Encode m, expecting success. */
static void encode(const struct ditto_model *m, void **buf, size_t *len)
{
	int err = ditto_model_encode(m, buf, len);
	FUZZ_ASSERT(err == 0 || err == -ENOMEM);
	if (err)
		*buf = NULL;
}

static bool same_encoding(const struct ditto_model *a, const void *buf, size_t len)
{
	void *b;
	size_t blen;
	encode(a, &b, &blen);
	bool same = !b || (blen == len && memcmp(b, buf, len) == 0);
	ditto_free(b);
	return same;
}

static void exercise(struct ditto_model *m)
{
	char *json = NULL, *whole = NULL;
	DITTO_OPTS(ditto_json_opts, pretty, .pretty = true);
	if (ditto_model_to_json(m, NULL, &json) == 0 &&
	    ditto_model_get_json(m, "", NULL, &whole) == 0)
		FUZZ_ASSERT(strcmp(json, whole) == 0);
	ditto_free(json);
	ditto_free(whole);
	if (ditto_model_to_json(m, &pretty, &json) == 0)
		ditto_free(json);

	/* encode(decode(encode(m))) == encode(m) */
	void *buf;
	size_t len;
	encode(m, &buf, &len);
	if (buf) {
		DITTO_OPTS(ditto_load_opts, raw, .no_validate = true);
		struct ditto_model *again = NULL;
		int err = ditto_model_decode(buf, len, &raw, &again);
		FUZZ_ASSERT(err == 0 || err == -ENOMEM);
		if (again)
			FUZZ_ASSERT(same_encoding(again, buf, len));
		ditto_model_free(again);
	}

	bool valid = ditto_model_validate(m, NULL) == 0;

	struct ditto_comparison *cmp = NULL;
	if (ditto_model_compare(m, m, NULL, &cmp) == 0) {
		FUZZ_ASSERT(ditto_comparison_max_error(cmp) == 0);
		if (ditto_comparison_to_json(cmp, &json) == 0)
			ditto_free(json);
	}
	ditto_comparison_free(cmp);

	/* A failed merge leaves dst as it was. */
	struct ditto_model *dup = NULL;
	if (buf && ditto_model_dup(m, &dup) == 0) {
		FUZZ_ASSERT(same_encoding(dup, buf, len));
		if (ditto_model_merge(dup, m) != 0)
			FUZZ_ASSERT(same_encoding(dup, buf, len));
		else if (valid)
			ditto_model_validate(dup, NULL);
	}
	ditto_model_free(dup);
	ditto_free(buf);
}

static void quiet(enum ditto_log_level level, const char *msg, void *user)
{
	(void)level, (void)msg, (void)user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ditto_set_log(quiet, NULL, DITTO_LOG_DEBUG);

	/* Default limits, validating. */
	struct ditto_model *m = NULL;
	int err = ditto_model_decode(data, size, NULL, &m);
	if (err)
		check_error(err, m);
	else
		exercise(m);
	ditto_model_free(m);

	/* Small limits, types only: more inputs get through to exercise(). */
	size_t max_bytes = size > 1 ? size - size / 4 : 1;
	DITTO_OPTS(ditto_load_opts, small, .max_bytes = max_bytes, .max_depth = 6,
		   .no_validate = true);
	m = NULL;
	err = ditto_model_decode(data, size, &small, &m);
	if (size > max_bytes)
		FUZZ_ASSERT(err == -DITTO_ELIMIT);
	if (err)
		check_error(err, m);
	else
		exercise(m);
	ditto_model_free(m);

	/* Same limits except size: decoding what fits. */
	small.max_bytes = 0;
	m = NULL;
	err = ditto_model_decode(data, size, &small, &m);
	if (err)
		check_error(err, m);
	else
		exercise(m);
	ditto_model_free(m);
	return 0;
}
