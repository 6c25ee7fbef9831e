/* SPDX-License-Identifier: MIT */
/*
 * A fully populated example model: two services (redis calling memcached)
 * with every field and histogram of the schema set, built through the
 * public setters only. The CLI writes it (`ditto model sample`), the unit
 * tests and the fuzz-corpus generator use it as a realistic valid input,
 * so this file depends on nothing but <ditto/ditto.h> and the C library.
 */
#ifndef DITTO_EXAMPLES_SAMPLE_MODEL_H
#define DITTO_EXAMPLES_SAMPLE_MODEL_H

#include <stdint.h>

#include <ditto/ditto.h>

/*
 * Build the sample model into *out (free with ditto_model_free()). Every
 * value derives from seed alone, so equal seeds give equal models and
 * different seeds give different ones, all of them valid. Returns 0 or the
 * negative code of the first library call that failed (its message is in
 * ditto_last_error()); *out is NULL on error.
 */
int sample_model_build(uint64_t seed, struct ditto_model **out);

#endif /* DITTO_EXAMPLES_SAMPLE_MODEL_H */
