/* SPDX-License-Identifier: MIT */
/*
 * random_model SEED FRAMING OUT: a random valid one-service model with the
 * given framing ("resp", "http1", ...), for fuzzing the synthesizer: any
 * network model, thread classes, a syscall table drawn from calls the
 * clone replays and calls it must leave alone, response sizes, and a cpu
 * section whose mix mixes real class keys with unknown ones. Every clone
 * of such a model must build and serve.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ditto/ditto.h>

static uint64_t state;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static uint64_t range(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

#define PICK(a) (a)[rnd() % (sizeof(a) / sizeof((a)[0]))]
#define CHECK(x)                                                                  \
	do {                                                                      \
		if (!(x)) {                                                       \
			fprintf(stderr, "random_model: %s: %s\n", #x, ditto_last_error()); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

static void spread(struct ditto_hist *h, uint64_t lo, uint64_t hi, uint64_t n)
{
	for (int i = 0; i < 6; i++)
		CHECK(!ditto_hist_add(h, range(lo, hi), n / 6 + 1));
}

static void network(struct ditto_service *s)
{
	static const enum ditto_io_model io[] = { DITTO_IO_EPOLL, DITTO_IO_POLL, DITTO_IO_SELECT,
						  DITTO_IO_BLOCKING, DITTO_IO_NONBLOCKING,
						  DITTO_IO_UNKNOWN };
	struct ditto_network *n = ditto_service_network_ensure(s);
	enum ditto_io_model m = PICK(io);
	uint64_t threads = m == DITTO_IO_EPOLL || m == DITTO_IO_NONBLOCKING ? range(1, 3) : 1;

	CHECK(!ditto_network_set_io_model(n, m));
	CHECK(!ditto_network_set_network_threads(n, threads));
	CHECK(!ditto_network_set_processes(n, rnd() % 4 == 0 ? 2 : 1));
	CHECK(!ditto_network_set_accept_dispatch(n, m == DITTO_IO_EPOLL && threads > 1 && rnd() % 2));
	struct ditto_thread_class *t = ditto_service_add_thread(s, "serve");
	CHECK(t);
	CHECK(!ditto_thread_class_set_count(t, threads));
	CHECK(!ditto_thread_class_set_role(t, DITTO_ROLE_NETWORK));
	CHECK(!ditto_thread_class_set_io_model(t, m));
	if (rnd() % 2) {
		struct ditto_thread_class *b = ditto_service_add_thread(s, "bg");

		CHECK(b);
		CHECK(!ditto_thread_class_set_count(b, range(1, 3)));
		CHECK(!ditto_thread_class_set_role(b, DITTO_ROLE_BACKGROUND));
		CHECK(!ditto_thread_class_set_wakeups(b, range(0, 200)));
		CHECK(!ditto_thread_class_set_cpu_ns(b, range(0, 50000000)));
	}
}

static void syscalls(struct ditto_service *s, uint64_t requests)
{
	static const struct {
		const char *name;
		enum ditto_fd_kind fd;
	} calls[] = {
		{ "pread64", DITTO_FD_FILE },	{ "pwrite64", DITTO_FD_FILE }, { "read", DITTO_FD_FILE },
		{ "writev", DITTO_FD_FILE },	{ "fsync", DITTO_FD_FILE },    { "openat", DITTO_FD_NONE },
		{ "close", DITTO_FD_FILE },	{ "fstat", DITTO_FD_FILE },    { "lseek", DITTO_FD_FILE },
		{ "nanosleep", DITTO_FD_NONE }, { "futex", DITTO_FD_NONE },    { "mmap", DITTO_FD_NONE },
		{ "sched_yield", DITTO_FD_NONE }, { "getpid", DITTO_FD_NONE }, { "ioctl", DITTO_FD_OTHER },
		{ "kill", DITTO_FD_NONE },	{ "exit_group", DITTO_FD_NONE }, { "munmap", DITTO_FD_NONE },
	};
	struct ditto_syscall *c = ditto_service_add_syscall(s, "serve", "read", DITTO_FD_TCP);

	CHECK(c);
	CHECK(!ditto_syscall_set_calls(c, requests));
	CHECK(!ditto_hist_add(ditto_syscall_size_ensure(c), 1u << range(9, 16), requests));
	CHECK(c = ditto_service_add_syscall(s, "serve", rnd() % 2 ? "write" : "sendmsg", DITTO_FD_TCP));
	CHECK(!ditto_syscall_set_calls(c, requests * range(100, 200) / 100));
	for (int i = 0, n = (int)range(0, 8); i < n; i++) {
		int k = (int)(rnd() % (sizeof(calls) / sizeof(calls[0])));
		uint64_t ncalls = requests * range(1, 300) / 100;

		if (ditto_service_find_syscall(s, "serve", calls[k].name, calls[k].fd))
			continue;
		CHECK(c = ditto_service_add_syscall(s, "serve", calls[k].name, calls[k].fd));
		CHECK(!ditto_syscall_set_calls(c, ncalls));
		CHECK(!ditto_syscall_set_sequential(c, ncalls * range(0, 100) / 100));
		/* sleeps of up to 20 us per call: the clone must still serve */
		spread(ditto_syscall_size_ensure(c), 1,
		       strstr(calls[k].name, "sleep") ? 20000 : 65536, ncalls);
		spread(ditto_syscall_offset_ensure(c), 0, 1u << 22, ncalls);
	}
}

static void cpu(struct ditto_service *s)
{
	static const char *const keys[] = {
		"alu.rr.none.64.base", "mov.rm.r.64.base", "mov.mr.w.32.base", "jcc.i.none.64.base",
		"div.r.none.64.base",  "call.i.w.64.base", "ret.-.r.64.base",  "str.mm.rw.8.base",
		"vfp.rr.none.256.avx", "vint.rm.r.128.sse2", "atomic.mr.rw.32.base", "x87.m.r.80.x87",
		"cvt.rr.none.64.sse2", "bit.rr.none.64.bmi", "sys.-.none.64.base", "nop.-.none.64.base",
		"vint.rr.none.512.avx512", "crc32.rr.none.64.sse4.2", "push.r.w.64.base",
		"mov.m.rw.64.base", "mov.r.w.64.base", "mov.m.r.64.base", "calli.m.rw.64.base",
		"future.rrr.none.64.base", "mov.xx.none.7.weird", "jmpi.r.none.64.base",
	};
	struct ditto_cpu *c = ditto_service_add_cpu(s, "serve");
	uint64_t insts = range(1000, 200000);

	CHECK(c);
	CHECK(!ditto_cpu_set_instructions(c, insts));
	for (int i = 0, n = (int)range(1, 12); i < n; i++)
		CHECK(!ditto_counts_add(ditto_cpu_mix_ensure(c), PICK(keys), range(1, 1000)));
	spread(ditto_cpu_insts_per_request_ensure(c), 100, range(200, 40000), 50);
	spread(ditto_cpu_dws_ensure(c), 0, 1ull << range(6, 30), insts / 3);
	spread(ditto_cpu_raw_ensure(c), 1, 1u << range(1, 11), insts);
	spread(ditto_cpu_waw_ensure(c), 1, 1u << range(1, 11), insts);
	for (int i = 0; i < 4; i++)
		CHECK(!ditto_hist_add(ditto_cpu_branches_ensure(c), range(0, 8) * 16 + range(0, 8), 10));
}

int main(int argc, char **argv)
{
	struct ditto_model *m;
	struct ditto_service *s;
	enum ditto_framing f;
	uint64_t requests = 100000;

	if (argc != 4 || ditto_framing_parse(argv[2], &f)) {
		fprintf(stderr, "usage: random_model SEED FRAMING OUT\n");
		return 2;
	}
	state = strtoull(argv[1], NULL, 0) * 0x9e3779b97f4a7c15ull | 1;
	CHECK(m = ditto_model_new());
	CHECK(!ditto_meta_set_window_s(ditto_model_meta_ensure(m), 5));
	CHECK(s = ditto_model_add_service(m, "random"));
	CHECK(!ditto_service_set_framing(s, f));
	CHECK(!ditto_service_add_port(s, 9));
	network(s);
	CHECK(!ditto_requests_set_count(ditto_service_requests_ensure(s), requests));
	spread(ditto_requests_response_bytes_ensure(ditto_service_requests_ensure(s)), 1,
	       1u << range(3, 17), requests);
	spread(ditto_requests_request_bytes_ensure(ditto_service_requests_ensure(s)), 16, 256,
	       requests);
	syscalls(s, requests);
	if (rnd() % 8)
		cpu(s);
	if (ditto_model_validate(m, NULL) || ditto_model_save(m, argv[3])) {
		fprintf(stderr, "random_model: %s\n", ditto_last_error());
		return 1;
	}
	ditto_model_free(m);
	return 0;
}
