/* Fuzz the synthesizer's generators: any model that decodes and validates
 * must give a clone configuration and a request body for every service
 * (or a clean error), deterministically for a seed. */
#include <ditto/ditto.h>

#include <errno.h>
#include <string.h>

#include "core_int.h"
#include "fuzz.h"
#include "synth_int.h"

static void generate(struct ditto_model *m, struct ditto_service *s, uint64_t seed)
{
	struct config_in in = { .seed = seed, .body_name = "ditto_body", .model = m };
	struct body_info info, again;
	struct dbuf a, b, cfg;
	struct ditto_cpu *c = ditto_service_cpu_count(s) ? ditto_service_cpu(s, 0) : NULL;

	dbuf_init(&a);
	dbuf_init(&b);
	dbuf_init(&cfg);
	in.window_s = ditto_meta_window_s(ditto_model_meta(m));
	if (c && body_generate(c, seed, NULL, NULL, "ditto_body", &a, &info) == 0) {
		FUZZ_ASSERT(body_generate(c, seed, NULL, NULL, "ditto_body", &b, &again) == 0);
		FUZZ_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
		FUZZ_ASSERT(info.region_bytes == again.region_bytes && info.loop_insts);
		in.body_loop_insts = info.loop_insts;
	}
	FUZZ_ASSERT(config_generate(s, &in, &cfg) == 0 || cfg.oom);
	dbuf_free(&a);
	dbuf_free(&b);
	dbuf_free(&cfg);
}

static void quiet(enum ditto_log_level level, const char *msg, void *user)
{
	(void)level, (void)msg, (void)user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ditto_model *m = NULL;

	ditto_set_log(quiet, NULL, DITTO_LOG_DEBUG);
	if (ditto_model_decode(data, size, NULL, &m) == 0) {
		for (size_t i = 0; i < ditto_model_service_count(m) && i < 4; i++)
			generate(m, ditto_model_service(m, i), size + i);
		ditto_model_free(m);
	}
	return 0;
}
