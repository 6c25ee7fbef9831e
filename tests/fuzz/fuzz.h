/* Shared by the fuzz targets: the libFuzzer entry point and an assertion
 * that stays on in every build type (a failed one is a crash to keep). */
#ifndef DITTO_FUZZ_H
#define DITTO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: assertion failed: %s (%s)\n", \
				__FILE__, __LINE__, #cond, ditto_last_error()); \
			abort();                                              \
		}                                                             \
	} while (0)

#endif
