/* SPDX-License-Identifier: MIT */
/*
 * The OTLP/HTTP receiver's public API (include/ditto/profile.h): start
 * its thread, stop it, and its spans into graph edges.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core_int.h"
#include "otlp_recv_int.h"
#include "trace_graph.h"

int ditto_otlp_receiver_start(const char *listen, const struct ditto_otlp_opts *opts,
			      struct ditto_otlp_receiver **out)
{
	struct ditto_otlp_receiver *r;
	sigset_t all, old;
	double timeout_s;
	int err;

	if (!out)
		return ditto_err(-EINVAL, "ditto_otlp_receiver_start: out is NULL");
	*out = NULL;
	err = OPTS_CHECK(opts, ditto_otlp_opts);
	if (err)
		return err;
	timeout_s = OPTS_GET(opts, timeout_s, 0.0);
	if (!(timeout_s >= 0 && timeout_s <= 86400))
		return ditto_err(-DITTO_EOPTS, "ditto_otlp_opts.timeout_s: %g is not 0..86400 seconds",
				 timeout_s);
	r = calloc(1, sizeof(*r));
	if (!r)
		return ditto_err(-ENOMEM, "OTLP receiver: out of memory");
	r->lfd = r->stop_fd = -1;
	r->max_body = OPTS_GET(opts, max_body, 0) ?: OTLP_DEFAULT_MAX_BODY;
	r->max_buffered = OPTS_GET(opts, max_buffered, 0) ?: 4 * r->max_body;
	if (r->max_buffered < r->max_body)
		r->max_buffered = r->max_body;
	r->max_conns = OPTS_GET(opts, max_connections, 0u) ?: OTLP_DEFAULT_MAX_CONNS;
	r->timeout_ms = (int)((timeout_s > 0 ? timeout_s : OTLP_DEFAULT_TIMEOUT_S) * 1000);
	if (r->timeout_ms < 1)
		r->timeout_ms = 1;
	trace_set_init(&r->set);
	if (OPTS_GET(opts, max_spans, 0))
		r->set.max_spans = OPTS_GET(opts, max_spans, 0);
	pthread_mutex_init(&r->stats_lock, NULL);
	r->st.sz = sizeof(r->st);

	err = otlp_listen(listen && *listen ? listen : OTLP_DEFAULT_LISTEN,
			  OPTS_GET(opts, allow_remote, false), &r->lfd, &r->port, r->name,
			  sizeof(r->name));
	if (err)
		goto fail;
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->stop_fd < 0) {
		err = ditto_err(-errno, "OTLP receiver: eventfd: %s", strerror(errno));
		goto fail;
	}
	/* The thread takes no signals: they stay the caller's (the CLI's
	 * SIGINT handler runs on its main thread). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&r->thread, NULL, otlp_http_thread, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		ditto_err(err, "OTLP receiver: cannot start its thread: %s", strerror(-err));
		goto fail;
	}
	r->running = true;
	ditto_debug("OTLP receiver listening on %s", r->name);
	*out = r;
	return 0;
fail:
	ditto_otlp_receiver_free(r);
	return err;
}

uint16_t ditto_otlp_receiver_port(const struct ditto_otlp_receiver *r)
{
	return r ? r->port : 0;
}

int ditto_otlp_receiver_stats(const struct ditto_otlp_receiver *r, struct ditto_otlp_stats *out)
{
	struct ditto_otlp_receiver *rw = (struct ditto_otlp_receiver *)r;
	size_t sz;

	if (!r || !out || out->sz < sizeof(size_t))
		return ditto_err(-DITTO_EOPTS, "ditto_otlp_receiver_stats: NULL or unsized stats");
	/* An older caller's smaller struct gets the fields it knows. */
	sz = out->sz < sizeof(*out) ? out->sz : sizeof(*out);
	pthread_mutex_lock(&rw->stats_lock);
	memcpy((char *)out + sizeof(size_t), (const char *)&r->st + sizeof(size_t),
	       sz - sizeof(size_t));
	pthread_mutex_unlock(&rw->stats_lock);
	return 0;
}

void ditto_otlp_receiver_stop(struct ditto_otlp_receiver *r)
{
	uint64_t one = 1;

	if (!r || !r->running)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
		ditto_warn("OTLP receiver on %s: cannot signal its thread: %s", r->name,
			   strerror(errno));
	pthread_join(r->thread, NULL);
	r->running = false;
}

int ditto_otlp_receiver_finish(struct ditto_otlp_receiver *r, struct ditto_model *m,
			       bool uncorrected)
{
	struct trace_graph_opts go = { .correct_sampling = !uncorrected };
	int err;

	if (!r || !m)
		return ditto_err(-EINVAL, "ditto_otlp_receiver_finish: NULL receiver or model");
	if (r->finished)
		return ditto_err(-EALREADY, "OTLP receiver on %s: already finished", r->name);
	ditto_otlp_receiver_stop(r);
	r->finished = true;
	err = trace_graph_build(&r->set, m, &go);
	if (err)
		ditto_err_prefix("OTLP receiver on %s (%zu spans)", r->name, r->set.n);
	return err;
}

void ditto_otlp_receiver_free(struct ditto_otlp_receiver *r)
{
	if (!r)
		return;
	ditto_otlp_receiver_stop(r);
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	trace_set_free(&r->set);
	pthread_mutex_destroy(&r->stats_lock);
	free(r);
}

/* For the tests of internals: the spans received so far. */
struct trace_set *otlp_receiver_set(struct ditto_otlp_receiver *r)
{
	return &r->set;
}
