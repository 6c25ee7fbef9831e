/* SPDX-License-Identifier: MIT */
/*
 * A thread that exits while it is being stepped: it spins until a
 * wall-clock deadline (1.5 s after "ready"), then ends.
 *
 *   gt_exit process   the main thread spins, then the process exits 0
 *   gt_exit thread    a second thread spins and exits; the main thread
 *                     joins it, prints "joined" and sleeps 60 s
 *
 * "ready" is followed by the spinning thread's id on its own line.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
	double end = now() + 1.5;
	volatile unsigned long n = 0;

	(void)arg;
	printf("ready\n%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (now() < end)
		n++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2 || (strcmp(argv[1], "process") && strcmp(argv[1], "thread"))) {
		fprintf(stderr, "usage: %s process|thread\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "process")) {
		spin(NULL);
		return 0;
	}
	if (pthread_create(&t, NULL, spin, NULL))
		return 1;
	pthread_join(t, NULL);
	printf("joined\n");
	fflush(stdout);
	sleep(60);
	return 0;
}
