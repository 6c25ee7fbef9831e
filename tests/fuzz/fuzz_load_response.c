/* Fuzz the load generator's response parsers: the first byte picks the
 * framing (its value as an enum ditto_framing; unknown ones must be
 * refused), the rest is what a service sent. A parser stays inside the
 * buffer and says the same about an answer however its bytes are cut. */
#include <ditto/ditto.h>
#include <ditto/model.h>

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "loadgen_int.h"

/* Every strict prefix of a complete answer needs more bytes (raw has no
 * framing: any bytes are an answer). */
static void check_cuts(unsigned framing, const char *p, long e, bool failed, uint64_t seed)
{
	bool again;
	long cuts[8] = { 0, 1, e / 2, e - 1 };

	FUZZ_ASSERT(loadgen_parse(framing, p, (size_t)e, &again) == e && again == failed);
	if (framing == DITTO_FRAMING_RAW)
		return;
	for (int i = 4; i < 8; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		cuts[i] = (long)((seed >> 33) % (uint64_t)e);
	}
	for (int i = 0; i < 8; i++)
		if (cuts[i] >= 0 && cuts[i] < e)
			FUZZ_ASSERT(loadgen_parse(framing, p, (size_t)cuts[i], &again) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned framing;
	size_t n;
	char *p;
	bool failed;
	long e;

	if (!size)
		return 0;
	framing = data[0] % 9;
	n = size - 1;
	/* an exactly sized copy, so that reading past the end is caught */
	if (!(p = malloc(n ? n : 1)))
		return 0;
	memcpy(p, data + 1, n);
	e = loadgen_parse(framing, p, n, &failed);
	FUZZ_ASSERT(e >= -1 && e <= (long)n);
	if (framing < DITTO_FRAMING_RAW || framing > DITTO_FRAMING_MYSQL)
		FUZZ_ASSERT(e == (n ? -1 : 0));
	if (e > 0)
		check_cuts(framing, p, e, failed, size);
	free(p);
	return 0;
}
