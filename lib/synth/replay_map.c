/* SPDX-License-Identifier: MIT */
/*
 * How the clone replays each modelled system call. The argument roles and
 * classes come from the syscall description table (lib/profile/
 * syscall_table.c), the same one the BPF capture is driven by, so a call
 * the profiler learns to describe becomes replayable here.
 */
#include <errno.h>
#include <string.h>

#include "replay_map.h"
#include "syscall_table.h"

static bool is_socket(enum ditto_fd_kind k)
{
	return k == DITTO_FD_TCP || k == DITTO_FD_UDP || k == DITTO_FD_UNIX;
}

bool replay_is_net_read(const char *name)
{
	const struct syscall_desc *d = syscall_by_name(name);

	return d && (d->bits & SD_RECV) && d->offset < 0 && (d->cls == SC_IO || d->cls == SC_NET);
}

bool replay_is_net_write(const char *name)
{
	const struct syscall_desc *d = syscall_by_name(name);

	return d && (d->bits & SD_SEND) && d->offset < 0 && d->size != 3 &&
	       (d->cls == SC_IO || d->cls == SC_NET) && strcmp(name, "sendmmsg") != 0;
}

bool replay_is_vectored(const char *name)
{
	const struct syscall_desc *d = syscall_by_name(name);

	return d && (d->iovcnt >= 0 || (d->bits & SD_MSGHDR));
}

long replay_nr(const char *name)
{
	const struct syscall_desc *d = syscall_by_name(name);

	return d ? d->nr : -1;
}

uint64_t replay_mode(const struct ditto_hist *h, uint64_t dflt)
{
	uint64_t best = 0, v = dflt;

	for (size_t i = 0; h && i < ditto_hist_bucket_count(h); i++) {
		uint64_t lo, hi, c;

		if (!ditto_hist_bucket(h, i, &lo, &hi, &c) && c > best) {
			best = c;
			v = lo;
		}
	}
	return v;
}

uint32_t replay_read_size(const struct ditto_hist *size)
{
	uint64_t v = replay_mode(size, 16384);

	if (v < 512)
		return 16384;
	return v > (1 << 20) ? 1u << 20 : (uint32_t)v;
}

/* The file forms: data calls keep their own number (read, pwrite64,
 * writev...); stat-like calls are grouped by what they take. */
static int file_io(const struct syscall_desc *d, struct replay_entry *e)
{
	if (!(d->bits & (SD_RECV | SD_SEND)) || d->cls != SC_IO || strstr(d->name, "send") ||
	    strstr(d->name, "splice"))
		return -ENOENT;
	e->kind = (d->bits & SD_RECV) ? "RT_REPLAY_FILE_READ" : "RT_REPLAY_FILE_WRITE";
	e->file = true;
	e->positional = d->offset >= 0;
	e->iovcnt = d->iovcnt >= 0 ? 2 : 0;
	return 0;
}

static int fs_call(const struct syscall_desc *d, struct replay_entry *e)
{
	static const struct {
		const char *name, *kind;
	} map[] = {
		{ "open", "RT_REPLAY_OPEN" },	     { "openat", "RT_REPLAY_OPEN" },
		{ "close", "RT_REPLAY_CLOSE" },	     { "stat", "RT_REPLAY_STAT" },
		{ "fstat", "RT_REPLAY_STAT" },	     { "lstat", "RT_REPLAY_STAT" },
		{ "newfstatat", "RT_REPLAY_STAT" },  { "statx", "RT_REPLAY_STAT" },
		{ "lseek", "RT_REPLAY_LSEEK" },	     { "fsync", "RT_REPLAY_FSYNC" },
		{ "fdatasync", "RT_REPLAY_FSYNC" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(d->name, map[i].name)) {
			e->kind = map[i].kind;
			e->file = true;
			return 0;
		}
	return -ENOENT;
}

int replay_map(const char *name, enum ditto_fd_kind k, struct replay_entry *e)
{
	const struct syscall_desc *d = syscall_by_name(name);

	memset(e, 0, sizeof(*e));
	if (!d || is_socket(k) || k == DITTO_FD_EPOLL)
		return -ENOENT;
	e->nr = d->nr;
	switch (d->cls) {
	case SC_IO:
		if (k == DITTO_FD_EVENTFD && (!strcmp(name, "read") || !strcmp(name, "write"))) {
			e->kind = name[0] == 'r' ? "RT_REPLAY_EVENTFD_READ" : "RT_REPLAY_EVENTFD_WRITE";
			return 0;
		}
		return k == DITTO_FD_FILE ? file_io(d, e) : -ENOENT;
	case SC_FS:
		/* close of a socket is the skeleton's; open of anything is a file */
		if (!strcmp(name, "close") && k != DITTO_FD_FILE)
			return -ENOENT;
		return fs_call(d, e);
	case SC_SLEEP:
		e->kind = strcmp(name, "sched_yield") ? "RT_REPLAY_SLEEP" : "RT_REPLAY_YIELD";
		return 0;
	case SC_SYNC:
		e->kind = "RT_REPLAY_FUTEX_WAKE";
		return 0;
	case SC_MEM:
		if (!strcmp(name, "mprotect") || !strcmp(name, "madvise")) {
			e->kind = name[1] == 'p' ? "RT_REPLAY_MPROTECT" : "RT_REPLAY_MADVISE";
			return 0;
		}
		if (strcmp(name, "mmap"))
			return -ENOENT;	/* the mmap replay unmaps what it maps */
		/* a file's mapping maps the scratch file (Apache maps what it sends) */
		e->file = k == DITTO_FD_FILE;
		e->kind = e->file ? "RT_REPLAY_MMAP_FILE" : "RT_REPLAY_MMAP";
		return 0;
	default:
		return -ENOENT;
	}
}
