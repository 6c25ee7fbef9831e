/* SPDX-License-Identifier: MIT */
/*
 * body_tool MODEL OUT.S [SEED]: the request body of services[0].cpu[0] of
 * a model as assembly (lib/synth/body_gen.c), for the body tests.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ditto/model.h>

#include "core_int.h"
#include "synth_int.h"

int main(int argc, char **argv)
{
	struct ditto_model *m = NULL;
	struct ditto_service *s;
	struct ditto_cpu *c;
	struct dbuf out;
	struct body_info info;
	FILE *f;

	if (argc < 3)
		return 2;
	if (ditto_model_load(argv[1], NULL, &m) || !(s = ditto_model_service(m, 0)) ||
	    !(c = ditto_service_cpu(s, 0))) {
		fprintf(stderr, "body_tool: %s: no cpu section (%s)\n", argv[1], ditto_last_error());
		return 1;
	}
	dbuf_init(&out);
	if (body_generate(c, argc > 3 ? strtoull(argv[3], NULL, 0) : 1, NULL, NULL, "ditto_body", &out, &info)) {
		fprintf(stderr, "body_tool: %s\n", ditto_last_error());
		return 1;
	}
	if (!(f = fopen(argv[2], "w")) || fwrite(out.data, 1, out.len, f) != out.len || fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	printf("%llu\n", (unsigned long long)info.region_bytes);
	dbuf_free(&out);
	ditto_model_free(m);
	return 0;
}
