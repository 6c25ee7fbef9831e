/* SPDX-License-Identifier: MIT */
/*
 * What idle time costs a request's working set on this host: a chain of
 * dependent loads through N KiB (one line each, a random cycle, as the
 * clone runtime's synth.footprint_kib walks it) is walked once after
 * sleeping G ms, for each N and G, rounds interleaved. Prints the CPU
 * time of a walk after each gap, its ratio to the walk after 1 ms (the
 * peer in the same run) and the extra per KiB, with the spread (min-max
 * of the rounds' medians).
 *
 *   build/bench/idle_chase [rounds]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LINE 64
#define WALKS 15	/* per round and cell: the median is kept */

static const unsigned sizes_kib[] = { 64, 256, 1024, 4096 };
static const unsigned gaps_ms[] = { 1, 3, 30 };
#define NS (sizeof(sizes_kib) / sizeof(sizes_kib[0]))
#define NG (sizeof(gaps_ms) / sizeof(gaps_ms[0]))

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void nap_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

/* Sattolo's shuffle: one cycle through every line. */
static uint32_t *chain(size_t lines)
{
	uint32_t *a = aligned_alloc(LINE, lines * LINE);
	const size_t step = LINE / sizeof(*a);

	if (!a)
		return NULL;
	for (size_t i = 0; i < lines; i++)
		a[i * step] = (uint32_t)i;
	srand(1);
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)rand() % i;
		uint32_t v = a[i * step];

		a[i * step] = a[j * step];
		a[j * step] = v;
	}
	return a;
}

static double walk(const uint32_t *a, size_t lines)
{
	double t0 = cpu_ns();
	uint32_t at = 0;

	for (size_t i = 0; i < lines; i++)
		at = *(volatile const uint32_t *)(a + (size_t)at * (LINE / sizeof(*a)));
	return cpu_ns() - t0;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	static double med[NS][NG][16];
	double v[WALKS];

	if (rounds < 1 || rounds > 16)
		rounds = 3;
	for (int r = 0; r < rounds; r++)
		for (size_t s = 0; s < NS; s++) {
			size_t lines = (size_t)sizes_kib[s] * 1024 / LINE;
			uint32_t *a = chain(lines);

			if (!a)
				return 1;
			for (size_t g = 0; g < NG; g++) {
				for (int w = 0; w < WALKS; w++) {
					nap_ms(gaps_ms[g]);
					v[w] = walk(a, lines);
				}
				qsort(v, WALKS, sizeof(v[0]), cmp);
				med[s][g][r] = v[WALKS / 2];
			}
			free(a);
		}
	printf("%8s %6s %10s %14s %12s %10s\n", "KiB", "gap_ms", "walk_us", "spread_us",
	       "x_gap_1ms", "extra_ns/KiB");
	for (size_t s = 0; s < NS; s++)
		for (size_t g = 0; g < NG; g++) {
			double m[16], b[16];

			for (int r = 0; r < rounds; r++) {
				m[r] = med[s][g][r];
				b[r] = med[s][0][r];
			}
			qsort(m, rounds, sizeof(m[0]), cmp);
			qsort(b, rounds, sizeof(b[0]), cmp);
			printf("%8u %6u %10.1f %6.1f-%-7.1f %12.2f %10.0f\n", sizes_kib[s], gaps_ms[g],
			       m[rounds / 2] / 1e3, m[0] / 1e3, m[rounds - 1] / 1e3,
			       m[rounds / 2] / b[rounds / 2],
			       (m[rounds / 2] - b[rounds / 2]) / sizes_kib[s]);
		}
	return 0;
}
