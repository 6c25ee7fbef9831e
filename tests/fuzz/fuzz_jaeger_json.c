/* Fuzz the Jaeger JSON trace importer and the graph derivation behind it
 * (see fuzz_traces.h for what is checked). */
#include "fuzz_traces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_traces_one(data, size, DITTO_TRACES_JAEGER_JSON);
	return 0;
}
