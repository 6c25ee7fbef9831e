/* SPDX-License-Identifier: MIT */
/*
 * Hardware counters of the profiled threads: one counting perf event per
 * thread and counter, encoded by libpfm4 so that a counter with no generic
 * perf name (L2 misses) uses the host PMU's own event.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

#include "core_int.h"
#include "hw_counters.h"

_Static_assert(HW_COUNTERS_N == DITTO_COUNTER_LLC_MISSES + 1,
	       "HW_COUNTERS_N follows enum ditto_counter");

#define HW_COUNTERS_BIT(i) (1u << (i))
/* Without these two the profile has no CPI: no point counting the rest. */
#define HW_COUNTERS_MANDATORY \
	(HW_COUNTERS_BIT(DITTO_COUNTER_CYCLES) | HW_COUNTERS_BIT(DITTO_COUNTER_INSTRUCTIONS))
#define HW_COUNTERS_MAX_NAMES 3

/* libpfm4 names of each counter, tried in order until one opens here. */
static const struct {
	const char *label;
	const char *names[HW_COUNTERS_MAX_NAMES];
} hw_counters_events[HW_COUNTERS_N] = {
	{ "cycles", { "cycles", "PERF_COUNT_HW_CPU_CYCLES" } },
	{ "instructions", { "instructions", "PERF_COUNT_HW_INSTRUCTIONS" } },
	{ "branches", { "branches", "branch-instructions", "PERF_COUNT_HW_BRANCH_INSTRUCTIONS" } },
	{ "branch_misses", { "branch-misses", "PERF_COUNT_HW_BRANCH_MISSES" } },
	{ "l1i_misses", { "L1-icache-load-misses", "PERF_COUNT_HW_CACHE_L1I:READ:MISS" } },
	{ "l1d_misses", { "L1-dcache-load-misses", "PERF_COUNT_HW_CACHE_L1D:READ:MISS" } },
	/* perf has no generic L2 event: Intel, AMD Zen 2-4, Arm names. */
	{ "l2_misses", { "L2_RQSTS:MISS", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C",
			 "L2D_CACHE_REFILL" } },
	{ "llc_misses", { "LLC-load-misses", "PERF_COUNT_HW_CACHE_LL:READ:MISS" } },
};

struct hw_counters_thread {
	pid_t tid;
	int fd[HW_COUNTERS_N];		/* -1 where not counted */
};

struct hw_counters {
	struct perf_event_attr attr[HW_COUNTERS_N];
	uint32_t want;		/* counters that opened on the calling thread */
	struct hw_counters_thread *threads;
	size_t n, cap;
};

/* What read() returns with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING. */
struct hw_counters_value {
	uint64_t value, enabled, running;
};

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_init(void)
{
	pfm_status = pfm_initialize();
}

static int pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init);
	if (pfm_status != PFM_SUCCESS)
		return ditto_err(-EOPNOTSUPP, "libpfm4: pfm_initialize: %s",
				 pfm_strerror(pfm_status));
	return 0;
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t tid)
{
	return (int)syscall(__NR_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* All of these mean "this host cannot count that event". */
static bool unavailable(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL ||
	       err == ENOSYS;
}

static long paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	long v;

	if (!f || fscanf(f, "%ld", &v) != 1)
		v = -99;	/* unknown; the message prints it as is */
	if (f)
		fclose(f);
	return v;
}

static const char *unavailable_hint(int err, pid_t tid)
{
	if (tid)	/* it opened on the probe: this thread is the odd one */
		return "the kernel refuses this event for that thread";
	switch (err) {
	case EINVAL:
		return "the kernel or its PMU rejects this event";
	case ENOSYS:
		return "this kernel has no perf events (CONFIG_PERF_EVENTS)";
	default:
		return "this host exposes no hardware PMU (a VM without counter passthrough?)";
	}
}

/* The error of a failed perf_event_open for counter i (tid 0: probe). */
static int open_error(int err, int i, pid_t tid)
{
	const char *what = hw_counters_events[i].label;
	char on[32] = "";

	if (tid)
		snprintf(on, sizeof(on), " on thread %d", (int)tid);
	if (err == EACCES || err == EPERM)
		return ditto_err(-EACCES, "perf_event_open(%s)%s: %s: counting user space needs "
				 "/proc/sys/kernel/perf_event_paranoid <= 2 (it is %ld) or CAP_PERFMON%s; "
				 "in a container, seccomp may block perf_event_open", what, on,
				 strerror(err), paranoid(),
				 tid ? ", and ptrace access to the profiled process" : "");
	if (unavailable(err))
		return ditto_err(-EOPNOTSUPP, "perf_event_open(%s)%s: %s: %s", what, on,
				 strerror(err), unavailable_hint(err, tid));
	if (err == EMFILE || err == ENFILE)
		return ditto_err(-err, "perf_event_open(%s)%s: %s: hardware counters take %d file "
				 "descriptors per thread (raise ulimit -n)", what, on, strerror(err),
				 HW_COUNTERS_N);
	return ditto_err(-err, "perf_event_open(%s)%s: %s", what, on, strerror(err));
}

/* perf_event attributes of a libpfm4 event name, for counting user space. */
static bool encode(const char *name, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;

	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) != PFM_SUCCESS)
		return false;
	attr->size = sizeof(*attr);
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->disabled = 0;
	attr->inherit = 0;	/* the caller adds threads; inheriting would count them twice */
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return true;
}

/*
 * Find a name for counter i that the kernel opens on the calling thread and
 * keep its attributes: 0, or the errno that rules it out (ENOENT when
 * libpfm4 knows none of the names).
 */
static int probe_counter(struct hw_counters *h, int i)
{
	int err = ENOENT;

	for (int k = 0; k < HW_COUNTERS_MAX_NAMES && hw_counters_events[i].names[k]; k++) {
		int fd;

		if (!encode(hw_counters_events[i].names[k], &h->attr[i]))
			continue;
		fd = sys_perf_event_open(&h->attr[i], 0);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		err = errno;
		if (!unavailable(err))
			break;	/* permissions or resources: another name fares no better */
	}
	return err;
}

/* Which counters this host has, tried on ourselves so that no thread's
 * exit or ptrace rules get in the way of the answer. */
static int probe(struct hw_counters *h)
{
	for (int i = 0; i < HW_COUNTERS_N; i++) {
		int err = probe_counter(h, i);

		if (!err)
			h->want |= HW_COUNTERS_BIT(i);
		else if (HW_COUNTERS_MANDATORY & HW_COUNTERS_BIT(i))
			return open_error(err, i, 0);
		else
			ditto_debug("hw counters: %s not counted here: %s", hw_counters_events[i].label,
				    strerror(err));
	}
	return 0;
}

static void close_thread(struct hw_counters_thread *t)
{
	for (int i = 0; i < HW_COUNTERS_N; i++) {
		if (t->fd[i] >= 0)
			close(t->fd[i]);
		t->fd[i] = -1;
	}
}

/* Stop counting i for every thread: totals never mix counted and uncounted threads. */
static void drop_counter(struct hw_counters *h, int i, int err)
{
	for (size_t t = 0; t < h->n; t++) {
		if (h->threads[t].fd[i] >= 0)
			close(h->threads[t].fd[i]);
		h->threads[t].fd[i] = -1;
	}
	h->want &= ~HW_COUNTERS_BIT(i);
	ditto_debug("hw counters: %s dropped: %s", hw_counters_events[i].label, strerror(err));
}

/* Open the counters on tid into t: 0, 1 when the thread is gone, or -errno. */
static int open_thread(struct hw_counters *h, pid_t tid, struct hw_counters_thread *t)
{
	t->tid = tid;
	for (int i = 0; i < HW_COUNTERS_N; i++)
		t->fd[i] = -1;
	for (int i = 0; i < HW_COUNTERS_N; i++) {
		int err;

		if (!(h->want & HW_COUNTERS_BIT(i)))
			continue;
		t->fd[i] = sys_perf_event_open(&h->attr[i], tid);
		if (t->fd[i] >= 0)
			continue;
		err = errno;
		if (err == ESRCH) {
			close_thread(t);
			return 1;
		}
		if (unavailable(err) && !(HW_COUNTERS_MANDATORY & HW_COUNTERS_BIT(i))) {
			drop_counter(h, i, err);
			continue;
		}
		close_thread(t);
		return open_error(err, i, tid);
	}
	return 0;
}

static bool counted(const struct hw_counters *h, pid_t tid)
{
	for (size_t t = 0; t < h->n; t++)
		if (h->threads[t].tid == tid)
			return true;
	return false;
}

static int reserve(struct hw_counters *h, size_t n)
{
	struct hw_counters_thread *p;
	size_t cap = h->cap ? h->cap : 16;

	if (n <= h->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	p = realloc(h->threads, cap * sizeof(*p));
	if (!p)
		return ditto_err(-ENOMEM, "hw counters: out of memory");
	h->threads = p;
	h->cap = cap;
	return 0;
}

int hw_counters_add_thread(struct hw_counters *h, pid_t tid)
{
	int err;

	if (!h || tid <= 0)
		return ditto_err(-EINVAL, "hw counters: bad thread id %d", (int)tid);
	if (counted(h, tid))
		return 0;
	err = reserve(h, h->n + 1);
	if (err)
		return err;
	err = open_thread(h, tid, &h->threads[h->n]);
	if (err < 0)
		return err;
	if (err == 0)
		h->n++;
	return 0;
}

static void set_why(char *why, size_t whylen, const char *msg)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
}

int hw_counters_open(const pid_t *tids, size_t n, struct hw_counters **out, char *why,
		     size_t whylen)
{
	struct hw_counters *h;
	int err;

	set_why(why, whylen, "");
	if (!out || (n && !tids)) {
		err = ditto_err(-EINVAL, "hw counters: bad arguments");
		goto out;
	}
	*out = NULL;
	err = pfm_ready();
	if (err)
		goto out;
	h = calloc(1, sizeof(*h));
	if (!h) {
		err = ditto_err(-ENOMEM, "hw counters: out of memory");
		goto out;
	}
	err = reserve(h, n);
	if (!err)
		err = probe(h);
	for (size_t i = 0; !err && i < n; i++)
		err = hw_counters_add_thread(h, tids[i]);
	if (err)
		hw_counters_free(h);
	else
		*out = h;
out:
	if (err)
		set_why(why, whylen, ditto_last_error());
	return err;
}

/* One thread's count, extrapolated over the time its event was multiplexed out. */
static uint64_t scaled(const struct hw_counters_value *v)
{
	if (!v->running)
		return 0;
	if (v->running >= v->enabled)
		return v->value;
	return (uint64_t)((double)v->value * (double)v->enabled / (double)v->running);
}

/* Sum of counter i over the threads; false when it never ran while enabled. */
static bool read_counter(const struct hw_counters *h, int i, uint64_t *sum)
{
	uint64_t enabled = 0, running = 0;

	for (size_t t = 0; t < h->n; t++) {
		struct hw_counters_value v;
		int fd = h->threads[t].fd[i];

		if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		enabled += v.enabled;
		running += v.running;
		*sum += scaled(&v);
	}
	return !enabled || running;
}

void hw_counters_read(struct hw_counters *h, uint64_t vals[HW_COUNTERS_N], uint32_t *have)
{
	uint32_t got = 0;

	memset(vals, 0, HW_COUNTERS_N * sizeof(*vals));
	for (int i = 0; h && i < HW_COUNTERS_N; i++)
		if ((h->want & HW_COUNTERS_BIT(i)) && read_counter(h, i, &vals[i]))
			got |= HW_COUNTERS_BIT(i);
	if (have)
		*have = got;
}

void hw_counters_free(struct hw_counters *h)
{
	if (!h)
		return;
	for (size_t t = 0; t < h->n; t++)
		close_thread(&h->threads[t]);
	free(h->threads);
	free(h);
}
