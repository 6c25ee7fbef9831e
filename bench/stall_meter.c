/* SPDX-License-Identifier: MIT */
/*
 * How often this machine takes a CPU away: one spinning thread per CPU
 * (pinned) reads the clock in a loop; a gap between two reads is time the
 * thread did not run (the hypervisor's steal, interrupts, the kernel's
 * own threads). Prints, per CPU, the gaps over 100 us, 1 ms and 5 ms per
 * second and the share of time lost. On an idle machine these set the
 * floor under any tail latency measured on it: a 5 ms gap at 28000
 * requests per second delays some 140 requests by up to 5 ms.
 *   stall_meter [SECONDS]   (default 10; SECONDS on every CPU at once)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct cpu_gaps {
	int cpu;
	double seconds;
	unsigned long over[3];	/* 100 us, 1 ms, 5 ms */
	double lost;		/* seconds in gaps over 100 us */
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *spin(void *arg)
{
	static const double limit[3] = { 100e-6, 1e-3, 5e-3 };
	struct cpu_gaps *g = arg;
	cpu_set_t set;
	double start, last, t;

	CPU_ZERO(&set);
	CPU_SET(g->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "stall_meter: CPU %d: not pinned\n", g->cpu);
	start = last = now();
	while ((t = now()) - start < g->seconds) {
		double gap = t - last;

		last = t;
		if (gap < limit[0])
			continue;
		g->lost += gap;
		for (int i = 0; i < 3; i++)
			g->over[i] += gap >= limit[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	struct cpu_gaps *g;
	pthread_t *tid;

	if (!(seconds > 0) || n < 1) {
		fprintf(stderr, "usage: stall_meter [SECONDS]\n");
		return 2;
	}
	g = calloc((size_t)n, sizeof(*g));
	tid = calloc((size_t)n, sizeof(*tid));
	if (!g || !tid)
		return 1;
	for (long i = 0; i < n; i++) {
		g[i] = (struct cpu_gaps){ .cpu = (int)i, .seconds = seconds };
		if (pthread_create(&tid[i], NULL, spin, &g[i]))
			return 1;
	}
	printf("cpu  gaps/s>100us  gaps/s>1ms  gaps/s>5ms  time lost\n");
	for (long i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		printf("%3d  %12.2f  %10.2f  %10.2f  %8.3f%%\n", g[i].cpu, g[i].over[0] / seconds,
		       g[i].over[1] / seconds, g[i].over[2] / seconds, 100 * g[i].lost / seconds);
	}
	free(g);
	free(tid);
	return 0;
}
