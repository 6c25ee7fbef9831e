/* SPDX-License-Identifier: MIT */
/*
 * The per-process scratch file the replayed file calls work on: created
 * sparse (ftruncate) in the --scratch folder at start, removed at exit.
 * The clone never writes anywhere else.
 */
#include "rt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int rt_scratch_fd = -1;
char rt_scratch_path[4096];
uint64_t rt_scratch_size;

static bool table_needs_file(const struct rt_call *calls, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		switch (calls[i].kind) {
		case RT_REPLAY_FILE_READ:
		case RT_REPLAY_FILE_WRITE:
		case RT_REPLAY_FSYNC:
		case RT_REPLAY_OPEN:
		case RT_REPLAY_STAT:
		case RT_REPLAY_LSEEK:
			return true;
		default:
			break;
		}
	}
	return false;
}

/* The serving class's calls, or a background class's. */
static bool needs_file(void)
{
	if (rt_config.scratch_bytes || table_needs_file(rt_config.calls, rt_config.ncalls))
		return true;
	for (unsigned i = 0; i < rt_config.nbackground; i++)
		if (table_needs_file(rt_config.background[i].calls, rt_config.background[i].ncalls))
			return true;
	return false;
}

int rt_scratch_create(void)
{
	int n;

	if (!needs_file())
		return 0;
	n = snprintf(rt_scratch_path, sizeof(rt_scratch_path), "%s/clone-scratch.%ld",
		     rt_opts.scratch_dir, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(rt_scratch_path)) {
		rt_err(ENAMETOOLONG, "scratch file in %s", rt_opts.scratch_dir);
		return -1;
	}
	rt_scratch_fd = open(rt_scratch_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (rt_scratch_fd < 0) {
		rt_err(errno, "cannot create the scratch file %s", rt_scratch_path);
		rt_scratch_path[0] = 0;
		return -1;
	}
	if (ftruncate(rt_scratch_fd, (off_t)rt_config.scratch_bytes)) {
		rt_err(errno, "cannot size the scratch file %s", rt_scratch_path);
		rt_scratch_remove();
		return -1;
	}
	rt_scratch_size = rt_config.scratch_bytes;
	return 0;
}

void rt_scratch_remove(void)
{
	if (rt_scratch_fd >= 0)
		close(rt_scratch_fd);
	rt_scratch_fd = -1;
	if (rt_scratch_path[0])
		unlink(rt_scratch_path);
	rt_scratch_path[0] = 0;
}
