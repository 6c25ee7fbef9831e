/* SPDX-License-Identifier: MIT */
/*
 * Loader of the BPF collector: opens and loads the skeleton, fills the
 * syscall descriptions from the shared table, attaches, marks processes
 * as traced, and reads the maps back when the window ends.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profile_int.h"
#include "syscall_table.h"
#include "collector.skel.h"

struct collector {
	struct collector_bpf *skel;
	bool attached;
	struct ring_buffer *events;	/* graph events, NULL unless asked for */
};

/* libbpf's first warning on this thread since the load began: the cause
 * named in our error (later ones say what failed because of it). */
static __thread char libbpf_last[256];

/*
 * Everything libbpf says goes to the log callback at debug level: its
 * warnings are the details of a failure we report ourselves, with what to
 * do, through ditto_last_error(); printed as they come they were raw
 * "libbpf:" lines on the caller's stderr.
 */
/* fmt is libbpf's own literal, passed through (never model data). */
__attribute__((format(printf, 2, 0)))
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg, *save = NULL;

	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	/* Verifier logs come as one message of many lines: keep the lines. */
	for (char *line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ditto_debug("%s", line);
		if (level == LIBBPF_WARN && !libbpf_last[0])
			snprintf(libbpf_last, sizeof(libbpf_last), "%s",
				 strncmp(line, "libbpf: ", 8) ? line : line + 8);
	}
	free(msg);
	return 0;
}

/* A collector that does not load is missing something of the kernel's
 * (BTF, tp_btf, task storage), whatever errno libbpf chose for it (-ESRCH
 * when it finds no kernel BTF): -EOPNOTSUPP, as profile.h says. */
static int load_error(int err)
{
	const char *btf = profile_btf_override();

	if (err == -EPERM || err == -EACCES || err == -ENOMEM)
		return ditto_err(err, "cannot load the BPF collector: %s%s%s", strerror(-err),
				 libbpf_last[0] ? ": " : "", libbpf_last);
	return ditto_err(-EOPNOTSUPP, "cannot load the BPF collector into this kernel (%s%s%s): "
			 "it needs kernel BTF (%s%s), tp_btf programs, task storage and BPF "
			 "functions taking pointers (Linux 5.12 or newer); run on such a kernel, "
			 "or set DITTO_BTF_PATH to a file "
			 "with this kernel's vmlinux BTF", strerror(-err),
			 libbpf_last[0] ? ": " : "", libbpf_last,
			 btf ? btf : "/sys/kernel/btf/vmlinux", btf ? ", from DITTO_BTF_PATH" : "");
}

static int fill_descs(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.descs);

	for (size_t i = 0; i < syscall_table_len; i++) {
		const struct syscall_desc *sd = &syscall_table[i];
		struct dt_desc d = { sd->fd, sd->size, sd->iov, sd->iovcnt, sd->flags, sd->offset,
				     sd->bits };
		__u32 nr = sd->nr;

		if (bpf_map_update_elem(fd, &nr, &d, BPF_ANY))
			return ditto_err(-errno, "BPF map descs: %s", strerror(errno));
	}
	return 0;
}

void collector_graph_events(struct collector *c, bool on)
{
	c->skel->bss->graph_events = on;
}

int collector_open(struct collector **out)
{
	struct collector *c = calloc(1, sizeof(*c));
	int err;
	DECLARE_LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = profile_btf_override());

	*out = NULL;
	if (!c)
		return ditto_err(-ENOMEM, "out of memory");
	libbpf_set_print(libbpf_log);
	libbpf_last[0] = '\0';
	c->skel = collector_bpf__open_opts(&oo);
	if (!c->skel) {
		err = -errno;
		free(c);
		return ditto_err(err, "cannot open the BPF collector: %s", strerror(-err));
	}
	err = collector_bpf__load(c->skel);
	if (err) {
		collector_free(c);
		return load_error(err);
	}
	if ((err = fill_descs(c))) {
		collector_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int collector_trace(struct collector *c, pid_t tgid, unsigned svc)
{
	__u32 k = (__u32)tgid;
	__u8 v = (__u8)svc;

	if (svc >= MAX_SERVICES)
		return ditto_err(-EINVAL, "service index %u is out of range", svc);
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.traced), &k, &v, BPF_ANY))
		return ditto_err(-errno, "cannot trace process %d: %s", tgid, strerror(errno));
	return 0;
}

bool collector_is_traced(const struct collector *c, pid_t tgid)
{
	__u32 k = (__u32)tgid;
	__u8 v;

	return bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.traced), &k, &v) == 0;
}

int collector_attach(struct collector *c)
{
	int err = collector_bpf__attach(c->skel);

	if (err)
		return ditto_err(err, "cannot attach the BPF collector: %s", strerror(-err));
	c->attached = true;
	return 0;
}

void collector_detach(struct collector *c)
{
	if (c && c->attached) {
		collector_bpf__detach(c->skel);
		c->attached = false;
	}
}

int collector_events_open(struct collector *c, int (*fn)(void *ctx, void *data, size_t len),
			  void *ctx)
{
	c->events = ring_buffer__new(bpf_map__fd(c->skel->maps.events), fn, ctx, NULL);
	if (!c->events)
		return ditto_err(-errno, "BPF ring buffer events: %s", strerror(errno));
	return 0;
}

int collector_events_fd(const struct collector *c)
{
	return c->events ? ring_buffer__epoll_fd(c->events) : -1;
}

int collector_events_drain(struct collector *c)
{
	int n = c->events ? ring_buffer__consume(c->events) : 0;

	return n < 0 ? ditto_err(n, "BPF ring buffer events: %s", strerror(-n)) : 0;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	collector_detach(c);
	ring_buffer__free(c->events);
	collector_bpf__destroy(c->skel);
	free(c);
}

/* One CPU's socket option slots into the sum, by (level, name, value). */
static void merge_sockopts(struct dt_req_stats *out, const struct dt_req_stats *cpu)
{
	for (size_t i = 0; i < MAX_SOCKOPTS; i++) {
		const struct dt_sockopt *o = &cpu->sockopts[i];
		size_t j;

		if (!o->used)
			continue;
		for (j = 0; j < MAX_SOCKOPTS && out->sockopts[j].used; j++)
			if (out->sockopts[j].level == o->level && out->sockopts[j].name == o->name &&
			    out->sockopts[j].value == o->value)
				break;
		if (j == MAX_SOCKOPTS) {
			out->sockopt_other += o->conns + o->calls;
			continue;
		}
		out->sockopts[j].used = 1;
		out->sockopts[j].level = o->level;
		out->sockopts[j].name = o->name;
		out->sockopts[j].value = o->value;
		out->sockopts[j].conns += o->conns;
		out->sockopts[j].calls += o->calls;
	}
}

/* The CPUs' first-request samples, taken in turn from each while room
 * is left: every CPU's connections get a say in the framing. */
static void merge_firsts(struct dt_req_stats *out, const struct dt_req_stats *per, int ncpu)
{
	for (unsigned i = 0; i < FIRST_SAMPLES; i++)
		for (int cpu = 0; cpu < ncpu && out->nfirst < FIRST_SAMPLES; cpu++)
			if (i < per[cpu].nfirst && i < FIRST_SAMPLES)
				out->firsts[out->nfirst++] = per[cpu].firsts[i];
}

/* reqs is per CPU and service: add one service's counters up, collect
 * its first-request samples. */
static int read_reqs(struct collector *c, unsigned svc, struct dt_req_stats *out)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t counters = offsetof(struct dt_req_stats, firsts) / sizeof(uint64_t);
	struct dt_req_stats *per;
	__u32 z = svc;

	memset(out, 0, sizeof(*out));
	if (ncpu <= 0)
		return ditto_err(ncpu ? ncpu : -EINVAL, "cannot count CPUs");
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return ditto_err(-ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.reqs), &z, per)) {
		free(per);
		return ditto_err(-errno, "BPF map reqs: %s", strerror(errno));
	}
	for (int cpu = 0; cpu < ncpu; cpu++) {
		const uint64_t *src = (const uint64_t *)&per[cpu];
		uint64_t *dst = (uint64_t *)out;

		for (size_t i = 0; i < counters; i++)
			dst[i] += src[i];
		merge_sockopts(out, &per[cpu]);
	}
	merge_firsts(out, per, ncpu);
	free(per);
	return 0;
}

void collector_progress(struct collector *c, uint64_t *syscalls, uint64_t *requests)
{
	struct dt_req_stats r;

	*syscalls = *requests = 0;
	for (unsigned svc = 0; svc < MAX_SERVICES; svc++) {
		/* One read of the per-CPU map for both numbers. */
		if (read_reqs(c, svc, &r))
			memset(&r, 0, sizeof(r));
		*syscalls += r.syscalls;
		*requests += r.requests;
	}
}

/* Read every entry of a hash map into a growing array of records made of
 * key then value, each ksz + vsz bytes. */
static int dump_map(int fd, size_t ksz, size_t vsz, void **out, size_t *n)
{
	size_t cap = 0, rec = ksz + vsz;
	char key[64], next[64];
	void *prev = NULL;
	char *arr = NULL;

	*n = 0;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (*n == cap) {
			char *p;

			cap = cap ? cap * 2 : 64;
			p = realloc(arr, cap * rec);
			if (!p) {
				free(arr);
				return ditto_err(-ENOMEM, "out of memory");
			}
			arr = p;
		}
		memcpy(arr + *n * rec, next, ksz);
		if (bpf_map_lookup_elem(fd, next, arr + *n * rec + ksz) == 0)
			(*n)++;
		memcpy(key, next, ksz);
		prev = key;
	}
	*out = arr;
	return 0;
}

static int dump_threads(int fd, struct snapshot *out)
{
	const size_t ksz = sizeof(__u32), vsz = sizeof(struct dt_thread);
	char *raw;
	size_t n;
	int err = dump_map(fd, ksz, vsz, (void **)&raw, &n);

	if (err)
		return err;
	out->threads = calloc(n ? n : 1, sizeof(*out->threads));
	if (!out->threads) {
		free(raw);
		return ditto_err(-ENOMEM, "out of memory");
	}
	/* The raw records are packed (4-byte key): copy, do not cast. */
	for (size_t i = 0; i < n; i++) {
		memcpy(&out->threads[i].tid, raw + i * (ksz + vsz), ksz);
		memcpy(&out->threads[i].info, raw + i * (ksz + vsz) + ksz, vsz);
		out->threads[i].cls = -1;
	}
	out->nthreads = n;
	free(raw);
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	free(s->threads);
	free(s->stats);
	free(s->wakes);
	free(s->outbound);
	free(s->reqs_by_svc);
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

const struct thread_rec *snapshot_thread(const struct snapshot *s, uint32_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

/* Every service's request statistics; the first is also out->reqs. */
static int read_all_reqs(struct collector *c, struct snapshot *out)
{
	int err = 0;

	out->reqs_by_svc = calloc(MAX_SERVICES, sizeof(*out->reqs_by_svc));
	if (!out->reqs_by_svc)
		return ditto_err(-ENOMEM, "out of memory");
	for (unsigned svc = 0; svc < MAX_SERVICES && !err; svc++)
		err = read_reqs(c, svc, &out->reqs_by_svc[svc]);
	if (!err)
		out->reqs = out->reqs_by_svc[0];
	return err;
}

/* The traced processes and the service each serves. */
static int dump_procs(int fd, struct snapshot *out)
{
	char *raw;
	size_t n;
	int err = dump_map(fd, sizeof(__u32), sizeof(__u8), (void **)&raw, &n);

	if (err)
		return err;
	out->procs = calloc(n ? n : 1, sizeof(*out->procs));
	if (!out->procs) {
		free(raw);
		return ditto_err(-ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(&out->procs[i].tgid, raw + i * 5, sizeof(__u32));
		out->procs[i].svc = (uint8_t)raw[i * 5 + 4];
	}
	out->nprocs = n;
	free(raw);
	return 0;
}

int collector_snapshot(struct collector *c, struct snapshot *out)
{
	struct collector_bpf *s = c->skel;
	int err;

	memset(out, 0, sizeof(*out));
	/* Records are laid out as key then value, matching the structs. */
	_Static_assert(sizeof(struct stat_rec) ==
		       sizeof(struct dt_stat_key) + sizeof(struct dt_stat_val), "stat_rec");
	_Static_assert(sizeof(struct wake_rec) == sizeof(struct dt_wake_key) + 8, "wake_rec");
	if ((err = dump_map(bpf_map__fd(s->maps.stats), sizeof(struct dt_stat_key),
			    sizeof(struct dt_stat_val), (void **)&out->stats, &out->nstats)) ||
	    (err = dump_map(bpf_map__fd(s->maps.wakes), sizeof(struct dt_wake_key), 8,
			    (void **)&out->wakes, &out->nwakes)) ||
	    (err = read_all_reqs(c, out)) ||
	    (err = outbound_read(bpf_map__fd(s->maps.outbound), out)) ||
	    (err = dump_procs(bpf_map__fd(s->maps.traced), out)))
		goto fail;
	if ((err = dump_threads(bpf_map__fd(s->maps.threads), out)))
		goto fail;
	return 0;
fail:
	snapshot_free(out);
	return err;
}

bool collector_any_alive(const struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.traced);
	__u32 key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (proc_alive((pid_t)next))
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

int collector_add_thread(struct collector *c, pid_t tid, pid_t tgid, const char *comm)
{
	struct dt_thread t = { .tgid = (__u32)tgid };
	__u32 k = (__u32)tid;

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	/* BPF_NOEXIST: the kernel side may have seen the thread first. */
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.threads), &k, &t, BPF_NOEXIST) &&
	    errno != EEXIST)
		return ditto_err(-errno, "cannot record thread %d: %s", tid, strerror(errno));
	return 0;
}

int collector_listen_port(struct collector *c, uint16_t port)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.listen_ports), &port, &one, BPF_ANY))
		return ditto_err(-errno, "BPF map listen_ports: %s", strerror(errno));
	return 0;
}
