/* SPDX-License-Identifier: MIT */
/*
 * One clone process from its listen sockets to its exit: stop handling,
 * scratch file, body regions, background threads, then the skeleton of
 * rt_config.io; afterwards everything is undone in reverse.
 */
#include "rt_int.h"

#include <stdio.h>
#include <unistd.h>

void rt_announce_ready(void)
{
	fputs("ready\n", stdout);
	fflush(stdout);
}

int rt_process_run(const int *lfd, unsigned nlfd, unsigned proc, bool announce)
{
	int rc = -1;

	if (rt_stop_init() || rt_scratch_create() || rt_regions_map() || rt_background_start())
		goto out;
	if (rt_config.io == RT_IO_BLOCKING)
		rc = rt_net_blocking_run(lfd[0], proc, announce);
	else
		rc = rt_net_pool_run(lfd, nlfd, proc, announce);
out:
	rt_stop();
	rt_background_stop();
	rt_regions_unmap();
	rt_scratch_remove();
	for (unsigned i = 0; i < nlfd; i++)
		close(lfd[i]);
	return rc || rt_failed() ? -1 : 0;
}
