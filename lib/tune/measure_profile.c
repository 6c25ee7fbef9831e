/* SPDX-License-Identifier: MIT */
/*
 * The profile backend: the service runs natively with libditto's own
 * profiler attached once it accepts (so startup is not seen) while the
 * load runs in a second thread; system calls and socket bytes of the
 * model it builds, per answered request.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ditto/model.h>
#include <ditto/profile.h>

#include "core_int.h"
#include "measure_int.h"
#include "syscall_table.h"

#define STEP_MS 100

struct sock_calls {
	uint64_t all, reads, writes, background;
};

static bool is_socket(enum ditto_fd_kind k)
{
	return k == DITTO_FD_TCP || k == DITTO_FD_UDP || k == DITTO_FD_UNIX;
}

/* Whether the calls of class `name` are a background class's. */
static bool in_background(struct ditto_service *s, const char *name)
{
	struct ditto_thread_class *t = name ? ditto_service_find_thread(s, name) : NULL;

	return t && ditto_thread_class_role(t) == DITTO_ROLE_BACKGROUND;
}

/* Every call of every thread class; data calls on sockets by direction,
 * as the syscall table classifies them. */
static void count_calls(struct ditto_service *s, struct sock_calls *n)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < ditto_service_syscall_count(s); i++) {
		struct ditto_syscall *sc = ditto_service_syscall(s, i);
		const struct syscall_desc *d = syscall_by_name(ditto_syscall_name(sc));
		uint64_t calls = ditto_syscall_calls(sc);

		n->all += calls;
		if (in_background(s, ditto_syscall_thread_class(sc)))
			n->background += calls;
		if (!d || !is_socket(ditto_syscall_fd_kind(sc)))
			continue;
		if (d->bits & SD_RECV)
			n->reads += calls;
		else if (d->bits & SD_SEND)
			n->writes += calls;
	}
}

uint64_t measure_service_cpu_ns(const struct ditto_service *s)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < ditto_service_thread_count(s); i++)
		ns += ditto_thread_class_cpu_ns(ditto_service_thread(s, i));
	return ns;
}

int measure_service_metrics(struct ditto_service *s, double requests, struct ditto_metrics *m)
{
	struct ditto_requests *r = ditto_service_requests(s);
	double cpu_ns = (double)measure_service_cpu_ns(s);
	struct sock_calls n;
	int err;

	if (!(requests > 0))
		return ditto_err(-EIO, "measure: profile: %s: no requests counted",
				 ditto_service_name(s));
	count_calls(s, &n);
	if ((err = ditto_metrics_set(m, "syscalls_per_request", (double)n.all / requests)) ||
	    (err = ditto_metrics_set(m, "socket_bytes_per_request",
				     ((double)ditto_requests_request_bytes_total(r) +
				      (double)ditto_requests_response_bytes_total(r)) / requests)) ||
	    (err = ditto_metrics_set(m, "read_calls_per_request", (double)n.reads / requests)) ||
	    (err = ditto_metrics_set(m, "background_calls_per_request",
				     (double)n.background / requests)))
		return err;
	if (cpu_ns > 0 && (err = ditto_metrics_set(m, "cpu_ns_per_request", cpu_ns / requests)))
		return err;
	return ditto_metrics_set(m, "write_calls_per_request", (double)n.writes / requests);
}

/* Divided by the requests the load saw answered: exact, where the
 * model's own count is inferred from socket traffic. */
static int put_metrics(struct ditto_model *model, uint64_t answered, struct ditto_metrics *m)
{
	struct ditto_service *s = ditto_model_service_count(model) ? ditto_model_service(model, 0) : NULL;

	if (!s)
		return ditto_err(-EIO, "measure: profile: the profiler saw no service");
	return measure_service_metrics(s, (double)answered, m);
}

/* A profiler error, its message kept over what joining the load says. */
static int step_failed(struct load_thread *lt, int err)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s", ditto_last_error());
	load_thread_join(lt);
	return ditto_err(err, "measure: profile: %s", msg);
}

/* Step the profiler while the load runs; the caller's stop ends both. */
static int observe(const struct mctx *c, struct ditto_profile *p, struct load_thread *lt)
{
	int r = 1, err;

	while (!load_thread_done(lt) && r > 0) {
		if (c->stop && *c->stop)
			load_thread_stop(lt);
		r = ditto_profile_step(p, STEP_MS);
	}
	if (r <= 0)	/* an error, or every traced process exited */
		load_thread_stop(lt);
	if (r < 0)
		return step_failed(lt, r);
	if ((err = load_thread_join(lt)))
		return err;
	measure_settle();
	ditto_profile_cancel(p);
	while ((r = ditto_profile_step(p, STEP_MS)) > 0)
		;
	if (r < 0)
		ditto_err_prefix("measure: profile");
	return r;
}

static int profile_service(const struct mctx *c, struct ditto_profile *p, struct svc *s,
			   struct ditto_model **model, uint64_t *answered)
{
	struct load_thread lt;
	cpu_set_t saved;
	bool pinned;
	int err, alive;

	if ((err = svc_wait_ready(c, s)))
		return err;
	if ((err = ditto_profile_attach(p, s->pid))) {
		ditto_err_prefix("measure: profile: attach to %s", s->name);
		return err;
	}
	if ((err = load_thread_start(&lt, c)))
		return err;
	pinned = pin_thread(&c->pin, &saved);
	err = observe(c, p, &lt);
	pin_restore(pinned, &saved);
	*answered = lt.answered;
	alive = svc_check_alive(s, "during the load");
	err = alive ? alive : err;
	if (!err && c->stop && *c->stop)
		err = ditto_err(-ECANCELED, "measure: stopped");
	if (!err && (err = ditto_profile_finish(p, model)))
		ditto_err_prefix("measure: profile");
	return err;
}

int measure_profile_model(const struct mctx *c, const struct ditto_profile_opts *po,
			  struct ditto_model **model, uint64_t *answered)
{
	struct ditto_profile *p = NULL;
	char path[PATH_MAX], **argv;
	struct svc s;
	int err, stop_err;

	*model = NULL;
	*answered = 0;
	if ((err = native_argv(c, path, &argv)))
		return err;
	if ((err = ditto_profile_new(po, &p))) {
		ditto_err_prefix("measure: profile");
		free(argv);
		return err;
	}
	if (!(err = svc_start(c, argv, "profile.log", c->argv[0], &s)))
		err = profile_service(c, p, &s, model, answered);
	ditto_profile_free(p);	/* detaches before the service stops */
	stop_err = svc_stop(&s);
	err = err ? err : stop_err;
	if (err) {
		ditto_model_free(*model);
		*model = NULL;
	}
	free(argv);
	return err;
}

/* Pinned (measure_pin.c): the calls per request follow how requests
 * gather per wake-up, which the scheduler decides otherwise. */
int measure_profile(const struct mctx *c, struct ditto_metrics *m)
{
	DITTO_OPTS(ditto_profile_opts, po, .cpu_windows = -1, .sample_hz = -1);
	struct ditto_model *model = NULL;
	uint64_t answered = 0;
	struct mctx pc = *c;
	int err;

	pin_plan(&pc.pin);
	err = measure_profile_model(&pc, &po, &model, &answered);

	if (!err)
		err = put_metrics(model, answered, m);
	ditto_model_free(model);
	return err;
}
