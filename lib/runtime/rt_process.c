/* SPDX-License-Identifier: MIT */
/*
 * One clone process from its listen sockets to its exit: stop handling,
 * scratch file, body regions, background threads, the connection cap
 * (rt_conn_cap.c), then the skeleton of rt_config.io; afterwards
 * everything is undone in reverse.
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <stdio.h>
#include <unistd.h>

int rt_ready_fd = -1;

void rt_announce_ready(void)
{
	char one = 1;

	if (rt_ready_fd < 0) {
		fputs("ready\n", stdout);
		fflush(stdout);
		return;
	}
	if (write(rt_ready_fd, &one, 1) < 0) {
		/* the parent is gone: it stops this process too */
	}
	close(rt_ready_fd);
	rt_ready_fd = -1;
}

int rt_process_run(const int *lfd, unsigned nlfd, unsigned proc)
{
	int rc = -1;

	if (rt_stop_init() || rt_scratch_create() || rt_regions_map() || rt_footprint_map() ||
	    rt_background_start() || rt_up_async_start() || rt_spans_start())
		goto out;
	/* after the descriptors above: the cap counts them */
	rt_conn_cap_init();
	rt_empty_reads_open();
	/* blocking: an acceptor starting a thread per connection (threads 0),
	 * a listener handing ready connections to a pool (accept_dispatch),
	 * else, in pre-forked workers, serving threads that accept
	 * themselves. One process without dispatch keeps a thread per
	 * connection: its model's thread count may be the connections its
	 * window saw, and a fixed set of threads would leave further clients
	 * waiting. */
	if (rt_config.fork_per_connection)
		rc = rt_net_forking_run(lfd[0], proc);
	else if (rt_config.serial_connections && rt_config.io != RT_IO_BLOCKING)
		rc = rt_net_accepting_run(lfd[0], proc);
	else if (rt_config.io == RT_IO_BLOCKING && rt_config.threads && rt_config.accept_dispatch)
		rc = rt_net_handoff_run(lfd[0], proc);
	else if (rt_config.io == RT_IO_BLOCKING && (!rt_config.threads || rt_config.processes <= 1))
		rc = rt_net_blocking_run(lfd[0], proc);
	else if (rt_config.io == RT_IO_BLOCKING)
		rc = rt_net_accepting_run(lfd[0], proc);
	else
		rc = rt_net_pool_run(lfd, nlfd, proc);
out:
	rt_stop();
	rt_up_async_stop();
	rt_otlp_stop();		/* after the async calls: their spans too */
	rt_upstream_report();
	if (rt_opts.stats)
		fprintf(stderr, "clone: served %llu requests\n", (unsigned long long)rt_served());
	rt_background_stop();
	rt_regions_unmap();
	rt_footprint_unmap();
	rt_scratch_remove();
	rt_conn_cap_fini();
	for (unsigned i = 0; i < nlfd; i++)
		close(lfd[i]);
	return rc || rt_failed() ? -1 : 0;
}
