/* SPDX-License-Identifier: MIT */
/*
 * System calls, signals and rep strings in a steady loop: what the stepping
 * mechanisms (hardware breakpoints, syscall stops) must run without
 * single-stepping and without the program noticing.
 *
 *   gt_syscall calls       getppid() and a few adds, forever
 *   gt_syscall rep [SIZE]  rep movsb of SIZE bytes (default 64), each copy
 *                          checked, forever
 *   gt_syscall block       read() of one byte from a pipe that a second
 *                          thread writes every 2 ms, in sequence, while
 *                          SIGALRM (an SA_RESTART handler) fires every ms
 *
 * SIGTERM makes it print "ok READS ALARMS" and exit 0. A wrong byte, a
 * failed read, a read interrupted despite SA_RESTART or a wrong copy
 * prints "bad: ..." and exits 1; a trap it never asked for kills it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "gt_common.h"

static volatile sig_atomic_t stop, alarms;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void finish(unsigned long n)
{
	printf("ok %lu %lu\n", n, (unsigned long)alarms);
	fflush(stdout);
	exit(0);
}

static void bad(const char *what, unsigned long n)
{
	printf("bad: %s after %lu\n", what, n);
	fflush(stdout);
	exit(1);
}

static void run_calls(void)
{
	unsigned long n = 0;

	gt_ready();
	while (!stop) {
		volatile unsigned long x = n;

		if (getppid() < 0)
			bad("getppid", n);
		x += 1; x += 2; x += 3; x += 4;
		n++;
	}
	finish(n);
}

static void copy(unsigned char *dst, const unsigned char *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void run_rep(size_t size)
{
	unsigned char *src = malloc(size), *dst = malloc(size);
	unsigned long n = 0;

	if (!src || !dst)
		bad("malloc", 0);
	memset(src, 7, size);
	gt_ready();
	while (!stop) {
		src[0] = (unsigned char)n;
		src[size - 1] = (unsigned char)(n >> 8);
		copy(dst, src, size);
		if (dst[0] != src[0] || dst[size - 1] != src[size - 1] || dst[size / 2] != 7)
			bad("copy", n);
		n++;
	}
	finish(n);
}

static int pipefd[2];

static void *writer(void *arg)
{
	unsigned char c = 0;

	(void)arg;
	for (;;) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
		if (write(pipefd[1], &c, 1) == 1)
			c++;
	}
	return NULL;
}

static void run_block(void)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	unsigned char want = 0, c;
	unsigned long n = 0;
	sigset_t alrm;
	pthread_t t;

	if (pipe(pipefd))
		bad("pipe", 0);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	/* The writer blocks SIGALRM (inherited), so the reader takes them. */
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	if (pthread_create(&t, NULL, writer, NULL))
		bad("pthread_create", 0);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	gt_ready();
	while (!stop) {
		ssize_t r = read(pipefd[0], &c, 1);

		if (r < 0 && errno == EINTR && stop)
			break;
		if (r != 1)
			bad(r < 0 && errno == EINTR ? "read interrupted despite SA_RESTART" : "read",
			    n);
		if (c != want++)
			bad("byte out of sequence", n);
		n++;
	}
	finish(n);
}

int main(int argc, char **argv)
{
	static const char usage[] = "calls | rep [SIZE] | block";
	struct sigaction term = { .sa_handler = on_term };	/* no SA_RESTART */
	struct gt_args a;

	gt_parse(argc, argv, 64, usage, &a);
	sigaction(SIGTERM, &term, NULL);
	if (!strcmp(a.mode, "calls"))
		run_calls();
	else if (!strcmp(a.mode, "rep") && a.size > 0)
		run_rep(a.size);
	else if (!strcmp(a.mode, "block"))
		run_block();
	fprintf(stderr, "usage: %s %s\n", argv[0], usage);
	return 2;
}
