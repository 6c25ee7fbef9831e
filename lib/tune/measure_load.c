/* SPDX-License-Identifier: MIT */
/*
 * The load of a measurement: in the calling thread, or in a second one
 * for backends that observe the service while it runs; and the idle
 * connects a run without load makes so that connection costs cancel.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core_int.h"
#include "loadgen_int.h"
#include "measure_int.h"

void measure_nap_ms(unsigned ms)
{
	measure_nap((long)ms * 1000000L);
}

void measure_settle(void)
{
	/* Long enough for a service under valgrind to see the closes. */
	measure_nap(250000000L);
}

int measure_idle_connects(const struct mctx *c)
{
	/* As many as the load opens (its default is 8). */
	unsigned n = c->load.connections ? c->load.connections : 8;
	int fds[256], err = 0;
	unsigned k;

	for (k = 0; k < n && k < ARRAY_SIZE(fds); k++)
		if ((fds[k] = measure_connect(c)) < 0) {
			err = ditto_err(fds[k], "measure: connect to %s:%u: %s", c->host,
					c->load.port, strerror(-fds[k]));
			break;
		}
	while (k--)
		close(fds[k]);
	measure_settle();
	return err;
}

int measure_load(const struct mctx *c, uint64_t *answered)
{
	struct ditto_load_result *r = NULL;
	uint64_t failed;
	char kinds[256];
	int err = ditto_load_run(&c->load, &r);

	/* a failed run (nothing answered: -EIO; its deadline: -ETIMEDOUT)
	 * still has a result; its message names the kinds of the errors */
	*answered = err ? 0 : ditto_load_result_completed(r);
	failed = ditto_load_result_errors(r);
	if (r)
		loadgen_result_kinds(r, kinds, sizeof(kinds));
	ditto_load_result_free(r);
	/* The load's stop is the load thread's, set also when a backend is
	 * done with the service: only the caller's stop is -ECANCELED (the
	 * tuner keeps its best clone on that), so this stays "no answer". */
	if (err == -ECANCELED && !measure_stopped(c))
		return ditto_err(-EIO, "measure: no request to %s:%u was answered before the "
				 "load was stopped", c->host, c->load.port);
	if (err) {
		ditto_err_prefix("measure: load on %s:%u", c->host, c->load.port);
		return err;
	}
	if (failed)
		ditto_warn("measure: %llu of %llu requests failed (%s); rates are per answered "
			   "request", (unsigned long long)failed,
			   (unsigned long long)(failed + *answered), kinds);
	return 0;
}

static void *load_main(void *arg)
{
	struct load_thread *t = arg;
	cpu_set_t saved;

	pin_thread(&t->c.pin, &saved);	/* its own thread: never restored */
	t->err = measure_load(&t->c, &t->answered);
	if (t->err)
		snprintf(t->msg, sizeof(t->msg), "%s", ditto_last_error());
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int load_thread_start(struct load_thread *t, const struct mctx *c)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->c = *c;
	t->c.load.stop = &t->stop;
	if ((err = pthread_create(&t->tid, NULL, load_main, t)))
		return ditto_err(-err, "measure: cannot start the load thread: %s", strerror(err));
	return 0;
}

bool load_thread_done(const struct load_thread *t)
{
	return __atomic_load_n(&t->done, __ATOMIC_ACQUIRE);
}

void load_thread_stop(struct load_thread *t)
{
	t->stop = 1;
}

int load_thread_join(struct load_thread *t)
{
	pthread_join(t->tid, NULL);
	/* Its message was the load thread's: make it this thread's. */
	return t->err ? ditto_err(t->err, "%s", t->msg) : 0;
}
