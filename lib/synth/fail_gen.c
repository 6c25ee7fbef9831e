/* SPDX-License-Identifier: MIT */
/*
 * How a replayed call fails in the clone (rt_call.fail): the shares of
 * its calls that failed in the original, by errno, restricted to the
 * errnos the runtime makes for its kind (lib/runtime/rt_replay.c). An
 * errno it cannot make (EACCES needs another user than root, EIO a bad
 * disk) fails as the kind's usual one, named once in a warning; errors
 * the model holds no errno for (the profiler keeps four values per call
 * and thread) fail as the usual one too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "core_int.h"
#include "replay_map.h"
#include "synth_int.h"

/* The errnos of a kind, its usual one first; NULL: the kind never fails. */
static const int *made(const struct replay_entry *e)
{
	static const int open_[] = { ENOENT, ENOTDIR, EEXIST, EISDIR, 0 };
	static const int path[] = { ENOENT, ENOTDIR, 0 };
	static const int offset[] = { EBADF, EINVAL, 0 };
	static const int fd[] = { EBADF, 0 };

	if (!strcmp(e->kind, "RT_REPLAY_OPEN"))
		return open_;
	if (!strcmp(e->kind, "RT_REPLAY_STAT"))
		return e->nr == SYS_fstat ? fd : path;	/* fstat has no path */
	if (!strcmp(e->kind, "RT_REPLAY_LSEEK") || e->nr == SYS_pread64 || e->nr == SYS_pwrite64)
		return offset;
	if (e->file || !strcmp(e->kind, "RT_REPLAY_FSYNC") || !strcmp(e->kind, "RT_REPLAY_CLOSE"))
		return fd;
	return NULL;
}

static bool makes(const int *errs, int err)
{
	for (; *errs; errs++)
		if (*errs == err)
			return true;
	return false;
}

static void add(struct synth_fail *out, unsigned *n, int err, double share)
{
	for (unsigned k = 0; k < *n; k++)
		if (out[k].err == err) {
			out[k].share += share;
			return;
		}
	if (*n < SYNTH_FAILS) {
		out[(*n)++] = (struct synth_fail){ err, share };
		return;
	}
	out[0].share += share;	/* past the list's length: as the first */
}

static const char *errno_name(uint64_t err)
{
	const char *name = err < 4096 ? strerrorname_np((int)err) : NULL;

	return name ? name : "an unknown errno";
}

unsigned synth_fails(const char *svc, const struct ditto_syscall *c, const struct replay_entry *e,
		     struct synth_fail out[SYNTH_FAILS])
{
	uint64_t calls = ditto_syscall_calls(c), errors = ditto_syscall_errors(c), named = 0;
	const struct ditto_hist *h = ditto_syscall_errnos(c);
	const int *errs = made(e);
	uint64_t lo, hi, k;
	unsigned n = 0;

	if (!calls || !errors)
		return 0;
	errors = errors < calls ? errors : calls;
	if (!errs) {
		ditto_warn("synth: %s: %llu failed calls of %s are replayed as successes", svc,
			   (unsigned long long)errors, ditto_syscall_name(c));
		return 0;
	}
	for (size_t i = 0; i < ditto_hist_bucket_count(h); i++) {
		if (ditto_hist_bucket(h, i, &lo, &hi, &k) || !k)
			continue;
		k = k < errors - named ? k : errors - named;
		named += k;
		if (!makes(errs, (int)lo) || lo > 4095) {
			ditto_warn("synth: %s: %llu calls of %s failed with %s, which the clone "
				   "cannot make: they fail with %s", svc, (unsigned long long)k,
				   ditto_syscall_name(c), errno_name(lo), errno_name((uint64_t)errs[0]));
			lo = (uint64_t)errs[0];
		}
		add(out, &n, (int)lo, (double)k / (double)calls);
	}
	if (errors > named)
		add(out, &n, errs[0], (double)(errors - named) / (double)calls);
	return n;
}
