/* SPDX-License-Identifier: MIT */
/*
 * The clone's entry point: options, the listen sockets, then one process
 * (rt_process.c; it may fork one per connection) or pre-forked ones
 * (rt_prefork.c). Exit status: 0 after
 * a clean stop, 1 on a failure, 2 on a bad option, 3 when the port is in
 * use.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned procs = rt_config.processes && !rt_config.fork_per_connection ?
			 rt_config.processes : 1, n;
	int rc = rt_opts_parse(argc, argv), *fds;

	if (rc)
		return rc < 0 ? 2 : 0;
	if (rt_upstream_init())
		return 2;
	n = rt_listen_count(procs);
	fds = calloc(n, sizeof(*fds));
	if (!fds) {
		rt_err(ENOMEM, "%u listen sockets", n);
		return 1;
	}
	rc = rt_listen_open(rt_opts.port, n, fds);
	if (rc) {
		free(fds);
		return rc == -EADDRINUSE ? 3 : 1;
	}
	if (procs > 1 || (rt_config.master_process && !rt_config.fork_per_connection))
		rc = rt_prefork_run(fds, n);
	else
		rc = rt_process_run(fds, n, 0);
	free(fds);
	return rc ? 1 : 0;
}
