/* SPDX-License-Identifier: MIT */
/*
 * One software cpu-clock perf event per online CPU, system wide, sampling
 * user registers and a copy of the user stack: the unwinding happens here,
 * later, not in the kernel (redis has no frame pointers; the kernel's own
 * callchain would give ~2.5 frames). Filtering by process happens in user
 * space, which costs far less than one event per thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "threads_int.h"

#define RING_PAGES_MAX 256	/* 1 MiB: ~60 samples of 16 KiB, 0.6 s at 99 Hz */
#define RING_PAGES_MIN 8
#define BOUNCE_BYTES 65536	/* a record's size is 16 bits */

/* AX..IP then R8..R15 (perf's bit numbers): what libunwind asks for on x86-64. */
#define SAMPLE_REGS (((1ull << 9) - 1) | (((1ull << 8) - 1) << 16))

static void fill_attr(struct perf_event_attr *a, int hz, bool exclude_kernel, size_t ring)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = (uint64_t)hz;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = SAMPLE_REGS;
	a->sample_stack_user = THREAD_SAMPLER_STACK_BYTES;
	a->disabled = 1;
	a->exclude_kernel = exclude_kernel;
	a->exclude_hv = 1;
	a->exclude_idle = 1;	/* idle CPUs would only sample the idle task */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;	/* comparable with the BPF collectors' timestamps */
	a->comm = 1;		/* for the COMM records execve emits */
	a->comm_exec = 1;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring / 4);
}

static int perf_open(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int push_cpu(int **v, size_t *n, size_t *cap, int cpu)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		int *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return ditto_err(-ENOMEM, "threads: out of memory");
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = cpu;
	return 0;
}

/* "0-3,5,8-9" from /sys/devices/system/cpu/online (offline CPUs refuse events). */
static int online_cpus(int **out, size_t *n)
{
	char line[4096], *p = line, *end;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!f || !fgets(line, sizeof(line), f)) {
		err = ditto_err(-ENODEV, "threads: cannot read /sys/devices/system/cpu/online");
		goto done;
	}
	while (!err && *p >= '0' && *p <= '9') {
		long lo = strtol(p, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; !err && c <= hi; c++)
			err = push_cpu(out, n, &cap, (int)c);
		p = *end == ',' ? end + 1 : end;
	}
	if (!err && !*n)
		err = ditto_err(-ENODEV, "threads: no online CPU listed");
done:
	if (f)
		fclose(f);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Smaller rings when the locked-memory budget (perf_event_mlock_kb) is short. */
static int map_ring(struct perf_ring *r)
{
	for (size_t pages = RING_PAGES_MAX; pages >= RING_PAGES_MIN; pages /= 2) {
		size_t len = (pages + 1) * page_size();
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);

		if (p != MAP_FAILED) {
			r->base = p;
			r->len = len;
			r->data_size = pages * page_size();
			return 0;
		}
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	return ditto_err(-errno, "threads: cannot map the perf ring of cpu %d: %s (raise "
			 "kernel.perf_event_mlock_kb or ulimit -l)", r->cpu, strerror(errno));
}

/* Kernel-mode samples first; user-only when the kernel refuses them. */
static int open_cpu(struct perf_sampler *ps, struct perf_ring *r, int hz)
{
	struct perf_event_attr a;

	fill_attr(&a, hz, ps->exclude_kernel, RING_PAGES_MAX * page_size());
	r->fd = perf_open(&a, r->cpu);
	if (r->fd < 0 && (errno == EACCES || errno == EPERM) && !ps->exclude_kernel) {
		ps->exclude_kernel = true;
		fill_attr(&a, hz, true, RING_PAGES_MAX * page_size());
		r->fd = perf_open(&a, r->cpu);
	}
	if (r->fd < 0)
		return perf_open_error(errno, r->cpu, hz);
	return map_ring(r);
}

static int watch(struct perf_sampler *ps, const struct perf_ring *r)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)r->cpu };

	if (epoll_ctl(ps->epfd, EPOLL_CTL_ADD, r->fd, &ev) != 0)
		return ditto_err(-errno, "threads: epoll_ctl: %s", strerror(errno));
	return 0;
}

static int open_all(struct perf_sampler *ps, const int *cpus, size_t ncpu, int hz)
{
	int err;

	ps->rings = calloc(ncpu, sizeof(*ps->rings));
	ps->bounce = malloc(BOUNCE_BYTES);
	ps->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!ps->rings || !ps->bounce)
		return ditto_err(-ENOMEM, "threads: out of memory");
	if (ps->epfd < 0)
		return ditto_err(-errno, "threads: epoll_create1: %s", strerror(errno));
	for (size_t i = 0; i < ncpu; i++) {
		struct perf_ring *r = &ps->rings[ps->nrings];

		*r = (struct perf_ring){ .fd = -1, .cpu = cpus[i] };
		ps->nrings++;
		if ((err = open_cpu(ps, r, hz)) || (err = watch(ps, r)))
			return err;
	}
	for (size_t i = 0; i < ps->nrings; i++)
		if (ioctl(ps->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
			return ditto_err(-errno, "threads: cannot enable perf on cpu %d: %s",
					 ps->rings[i].cpu, strerror(errno));
	return 0;
}

int perf_sampler_open(struct perf_sampler *ps, int hz)
{
	int *cpus = NULL;
	size_t ncpu;
	int err;

	*ps = (struct perf_sampler){ .epfd = -1 };
	if ((err = perf_check_access(hz)) || (err = online_cpus(&cpus, &ncpu)))
		return err;
	err = open_all(ps, cpus, ncpu, hz);
	free(cpus);
	if (err)
		perf_sampler_close(ps);
	return err;
}

struct cursor {
	const uint8_t *p, *end;
};

static const void *take(struct cursor *c, size_t n)
{
	const void *at = c->p;

	if ((size_t)(c->end - c->p) < n)
		return NULL;
	c->p += n;
	return at;
}

static bool take_u64(struct cursor *c, uint64_t *v)
{
	const void *at = take(c, sizeof(*v));

	if (at)
		memcpy(v, at, sizeof(*v));
	return at != NULL;
}

/* Layout for our sample_type: ip, pid/tid, time, abi + regs, size + stack + dyn_size. */
static bool parse_sample(const struct perf_event_header *h, struct sample *s)
{
	struct cursor c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	uint64_t ip, abi, size, dyn = 0;
	const uint32_t *ids;

	memset(s, 0, sizeof(*s));
	if (!take_u64(&c, &ip) || !(ids = take(&c, 8)) || !take_u64(&c, &s->time) ||
	    !take_u64(&c, &abi))
		return false;
	s->tgid = (int)ids[0];
	s->tid = (int)ids[1];
	s->kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE && !(s->regs = take(&c, SR_COUNT * 8)))
		return false;
	if (!take_u64(&c, &size) || !(s->stack = take(&c, size)) || (size && !take_u64(&c, &dyn)))
		return false;
	/* 64-bit only: 32-bit processes would need other registers and unwind rules. */
	if (abi != PERF_SAMPLE_REGS_ABI_64)
		s->regs = NULL;
	s->stack_len = dyn < size ? dyn : size;
	return true;
}

/* The record at tail, contiguous: in place, or copied out when it wraps the end. */
static const struct perf_event_header *record_at(struct perf_sampler *ps,
						  const struct perf_ring *r, uint64_t tail)
{
	const uint8_t *data = r->base + page_size();
	size_t off = tail % r->data_size;
	const struct perf_event_header *h = (const void *)(data + off);
	size_t first;

	if (off + h->size <= r->data_size)
		return h;
	first = r->data_size - off;
	memcpy(ps->bounce, data + off, first);
	memcpy(ps->bounce + first, data, h->size - first);
	return (const void *)ps->bounce;
}

static int handle(struct perf_sampler *ps, const struct perf_event_header *h,
		  const struct perf_handlers *fn)
{
	struct sample s;
	const uint64_t *u = (const uint64_t *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		ps->read++;
		return parse_sample(h, &s) ? fn->sample(fn->arg, &s) : 0;
	case PERF_RECORD_COMM:		/* pid, tid, comm */
		if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && h->size >= sizeof(*h) + 8)
			fn->exec(fn->arg, (int)*(const uint32_t *)(h + 1));
		return 0;
	case PERF_RECORD_LOST:		/* id, lost */
		if (h->size >= sizeof(*h) + 16)
			ps->lost += u[1];
		return 0;
	case PERF_RECORD_LOST_SAMPLES:	/* lost */
		if (h->size >= sizeof(*h) + 8)
			ps->lost += u[0];
		return 0;
	default:
		return 0;
	}
}

static int read_ring(struct perf_sampler *ps, struct perf_ring *r, const struct perf_handlers *fn)
{
	struct perf_event_mmap_page *mp = (void *)r->base;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	int err = 0;

	while (!err && tail < head) {
		const struct perf_event_header *h = record_at(ps, r, tail);

		if (h->size < sizeof(*h) || h->size > head - tail) {
			tail = head;	/* corrupt: drop the rest rather than loop */
			break;
		}
		err = handle(ps, h, fn);
		tail += h->size;
		/* Hand the space back record by record: unwinding takes a while. */
		__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

int perf_sampler_read(struct perf_sampler *ps, const struct perf_handlers *fn)
{
	for (size_t i = 0; i < ps->nrings; i++) {
		int err = ps->rings[i].base ? read_ring(ps, &ps->rings[i], fn) : 0;

		if (err)
			return err;
	}
	return 0;
}

void perf_sampler_disable(struct perf_sampler *ps)
{
	for (size_t i = 0; i < ps->nrings; i++)
		if (ps->rings[i].fd >= 0)
			ioctl(ps->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
}

void perf_sampler_close(struct perf_sampler *ps)
{
	for (size_t i = 0; i < ps->nrings; i++) {
		struct perf_ring *r = &ps->rings[i];

		if (r->base)
			munmap(r->base, r->len);
		if (r->fd >= 0)
			close(r->fd);
	}
	if (ps->epfd >= 0)
		close(ps->epfd);
	free(ps->rings);
	free(ps->bounce);
	ps->rings = NULL;
	ps->bounce = NULL;
	ps->nrings = 0;
	ps->epfd = -1;
}
