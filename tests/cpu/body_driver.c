/* SPDX-License-Identifier: MIT */
/*
 * Runs a generated request body: body_driver [CALLS] calls it CALLS times
 * (0: forever, after printing "ready") on freshly mapped regions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

extern void ditto_body(void *regions, uint64_t state[2]);
extern const uint64_t ditto_body_region_bytes;

int main(int argc, char **argv)
{
	uint64_t calls = argc > 1 ? strtoull(argv[1], NULL, 0) : 0, state[2] = { 0, 0 };
	void *regions = mmap(NULL, ditto_body_region_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (regions == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	puts("ready");
	fflush(stdout);
	for (uint64_t i = 0; !calls || i < calls; i++)
		ditto_body(regions, state);
	return 0;
}
