/* SPDX-License-Identifier: MIT */
/*
 * Sampling target with known thread classes: spin-a1 and spin-a2 spin in
 * a() on the same code path, spin-b spins in b(), sleep-c mostly sleeps in
 * c() with a little work. Build it like production code without frame
 * pointers:  gcc -O2 -fomit-frame-pointer -pthread spin_target.c
 *   spin_target [seconds]   (default: run until killed)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t a_step(uint64_t x)
{
	for (int i = 0; i < 4096; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static void a_loop(void)
{
	uint64_t x = 1;

	for (;;)
		sink = x = a_step(x);
}

/* Distinct call chains, as real services have, above each role's loop. */
__attribute__((noinline)) static void a_serve(void)
{
	a_loop();
	sink++;
}

__attribute__((noinline)) static void a(void)
{
	a_serve();
	sink++;
}

__attribute__((noinline)) static uint64_t b_step(uint64_t x)
{
	for (int i = 0; i < 1024; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		x += (uint64_t)i / 3;
	}
	return x;
}

__attribute__((noinline)) static void b_loop(void)
{
	uint64_t x = 88172645463325252ull;

	for (;;)
		sink = x = b_step(x);
}

__attribute__((noinline)) static void b_serve(void)
{
	b_loop();
	sink++;
}

__attribute__((noinline)) static void b(void)
{
	b_serve();
	sink++;
}

__attribute__((noinline)) static void c_work(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 2000000; i++)
		x = x * 31 + (uint64_t)i;
	sink = x;
}

__attribute__((noinline)) static void c(void)
{
	const struct timespec nap = { 0, 20 * 1000 * 1000 };

	for (;;) {
		c_work();
		nanosleep(&nap, NULL);
	}
}

struct role {
	const char *name;
	void (*body)(void);
};

static void *run(void *arg)
{
	const struct role *r = arg;

	pthread_setname_np(pthread_self(), r->name);
	r->body();
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct role roles[] = {
		{ "spin-a1", a }, { "spin-a2", a }, { "spin-b", b }, { "sleep-c", c },
	};
	pthread_t t;

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (pthread_create(&t, NULL, run, (void *)&roles[i]) != 0)
			return 1;
	if (argc > 1)
		sleep((unsigned)atoi(argv[1]));
	else
		for (;;)
			pause();
	return 0;
}
