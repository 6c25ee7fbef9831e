/* SPDX-License-Identifier: MIT */
/*
 * Turn what the collector saw (per-thread records) and the thread classes
 * into a model: one service, its thread classes, network model, syscalls
 * per class and requests.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "profile_int.h"
#include "syscall_table.h"

static bool any(const unsigned long long *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (b[k])
			return true;
	return false;
}

/* The exact sums beside the log2 buckets, where the buckets have samples:
 * a mean from bucket midpoints reads a 4096-byte call as 6 KiB. */
static int add_totals(struct ditto_syscall *sc, const struct dt_stat_val *v)
{
	int err = 0;

	if (any(v->size, LOG2_BUCKETS))
		err = ditto_syscall_set_size_total(sc, ditto_syscall_size_total(sc) + v->size_sum);
	if (!err && any(v->ret, LOG2_BUCKETS))
		err = ditto_syscall_set_ret_total(sc, ditto_syscall_ret_total(sc) + v->ret_sum);
	if (!err && v->iov_sum)
		err = ditto_syscall_set_iovecs_total(sc, ditto_syscall_iovecs_total(sc) + v->iov_sum);
	return err;
}

static const char *syscall_name(unsigned nr, char *buf, size_t len)
{
	const char *name = syscall_name_of(nr);

	if (name)
		return name;
	snprintf(buf, len, "syscall_%u", nr);
	return buf;
}

static int add_stat(struct ditto_service *svc, const struct classes *c, const struct stat_rec *r,
		    const struct thread_rec *t)
{
	char buf[32];
	const char *name = syscall_name(r->key.nr, buf, sizeof(buf));
	const char *cls = c->cls[t->cls].name;
	enum ditto_fd_kind fd = (enum ditto_fd_kind)r->key.fd_kind;
	struct ditto_syscall *sc = ditto_service_find_syscall(svc, cls, name, fd);
	const struct dt_stat_val *v = &r->val;
	int err;

	if (!sc && !(sc = ditto_service_add_syscall(svc, cls, name, fd)))
		return -ENOMEM;
	ditto_syscall_set_nr(sc, r->key.nr);
	ditto_syscall_set_calls(sc, ditto_syscall_calls(sc) + v->calls);
	ditto_syscall_set_errors(sc, ditto_syscall_errors(sc) + v->errors);
	ditto_syscall_set_sequential(sc, ditto_syscall_sequential(sc) + v->sequential);
	if ((err = hist_add_log2(ditto_syscall_size_ensure(sc), v->size, LOG2_BUCKETS)) ||
	    (err = hist_add_log2(ditto_syscall_ret_ensure(sc), v->ret, LOG2_BUCKETS)) ||
	    (err = add_totals(sc, v)) ||
	    (err = hist_add_lat(ditto_syscall_latency_ensure(sc), v->lat, LAT_BUCKETS)))
		return err;
	if (v->offsets &&
	    (err = hist_add_log2(ditto_syscall_offset_ensure(sc), v->offset, LOG2_BUCKETS)))
		return err;
	for (size_t i = 0; i < MAX_FLAGS && !err; i++)
		if (v->flag_cnt[i])
			err = ditto_hist_add(ditto_syscall_flags_ensure(sc), v->flag_val[i],
					     v->flag_cnt[i]);
	for (size_t i = 0; i < MAX_ERRNOS && !err; i++)
		if (v->errno_cnt[i])
			err = ditto_hist_add(ditto_syscall_errnos_ensure(sc), v->errno_val[i],
					     v->errno_cnt[i]);
	return err;
}

static int add_syscalls(struct ditto_service *svc, const struct snapshot *s,
			const struct classes *c)
{
	int err = 0;

	for (size_t i = 0; i < s->nstats && !err; i++) {
		const struct thread_rec *t = snapshot_thread(s, s->stats[i].key.tid);

		/* Calls to back ends are not the serving path's syscalls: a
		 * clone replaying them on its client connection would answer
		 * twice (services[].outbound has them). */
		if (s->stats[i].key.side == SIDE_OUTBOUND)
			continue;
		if (t && t->cls >= 0)
			err = add_stat(svc, c, &s->stats[i], t);
	}
	return err;
}

static void add_woken_by(struct ditto_service *svc, const struct snapshot *s,
			 const struct classes *c)
{
	for (size_t i = 0; i < s->nwakes; i++) {
		const struct thread_rec *a = snapshot_thread(s, s->wakes[i].key.waker);
		const struct thread_rec *b = snapshot_thread(s, s->wakes[i].key.wakee);

		if (a && b && a->cls >= 0 && b->cls >= 0 && a->cls != b->cls)
			ditto_thread_class_add_woken_by(
				ditto_service_find_thread(svc, c->cls[b->cls].name),
				c->cls[a->cls].name);
	}
}

static int add_threads(struct ditto_service *svc, const struct snapshot *s,
		       const struct classes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct thread_class_rec *r = &c->cls[i];
		struct ditto_thread_class *t = ditto_service_add_thread(svc, r->name);

		if (!t)
			return -ENOMEM;
		ditto_thread_class_set_count(t, r->count);
		ditto_thread_class_set_role(t, r->role);
		ditto_thread_class_set_io_model(t, r->io);
		ditto_thread_class_set_cpu_ns(t, r->cpu_ns);
		ditto_thread_class_set_ctx_switches(t, r->ctx_switches);
		ditto_thread_class_set_wakeups(t, r->wakeups);
		ditto_thread_class_set_threads_created(t, r->threads_created);
		ditto_thread_class_set_processes_created(t, r->processes_created);
	}
	add_woken_by(svc, s, c);
	return 0;
}

static int add_requests(struct ditto_service *svc, const struct snapshot *s,
			const struct build_args *a)
{
	const struct dt_req_stats *q = &s->reqs;
	struct ditto_requests *r = ditto_service_requests_ensure(svc);
	int err;

	ditto_requests_set_count(r, a->requests_override ? a->requests_override : q->requests);
	ditto_requests_set_connections(r, q->connections);
	ditto_requests_set_request_bytes_total(r, q->req_bytes_sum);
	ditto_requests_set_response_bytes_total(r, q->resp_bytes_sum);
	if ((err = hist_add_log2(ditto_requests_request_bytes_ensure(r), q->req_bytes,
				 LOG2_BUCKETS)) ||
	    (err = hist_add_log2(ditto_requests_response_bytes_ensure(r), q->resp_bytes,
				 LOG2_BUCKETS)) ||
	    (err = hist_add_log2(ditto_requests_per_connection_ensure(r), q->per_conn,
				 LOG2_BUCKETS)) ||
	    (err = hist_add_lat(ditto_requests_service_ns_ensure(r), q->service_ns,
				LAT_BUCKETS)) ||
	    (err = hist_add_lat(ditto_requests_after_response_ns_ensure(r), q->after_response_ns,
				LAT_BUCKETS)))
		return err;
	return 0;
}

static void add_service_info(struct ditto_service *svc, const struct snapshot *s,
			     const struct network_rec *n)
{
	ditto_service_set_framing(svc, framing_vote(s->reqs.firsts, s->reqs.nfirst));
	ditto_service_set_processes(svc, n->processes ? n->processes : 1);
	for (size_t i = 0; i < s->nports; i++)
		ditto_service_add_port(svc, s->ports[i]);
}

static void add_network(struct ditto_service *svc, const struct network_rec *n)
{
	struct ditto_network *net = ditto_service_network_ensure(svc);

	ditto_network_set_io_model(net, n->io);
	ditto_network_set_accept_dispatch(net, n->accept_dispatch);
	ditto_network_set_network_dispatch(net, n->network_dispatch);
	ditto_network_set_serial_connections(net, n->serial_connections);
	ditto_network_set_master_process(net, n->master_process);
	ditto_network_set_network_threads(net, n->network_threads);
	ditto_network_set_processes(net, n->processes);
	ditto_network_set_client_connections(net, n->client_connections);
	ditto_network_set_client_mode(net, n->client_mode);
}

/*
 * The serving connections' socket options, known once the window read
 * some connection's: then the list is present even when empty (the
 * service sets none, and its clone must not either). Negative values
 * (no option of the four read from sockets takes one) are left out.
 */
static int add_sockopts(struct ditto_service *svc, const struct dt_req_stats *q)
{
	struct ditto_network *net = ditto_service_network_ensure(svc);
	int err;

	if (!q->sockopt_conns)
		return 0;
	if ((err = ditto_network_set_sockopts_known(net)) ||
	    (err = ditto_network_set_sockopt_connections(net, q->sockopt_conns)))
		return err;
	for (size_t i = 0; i < MAX_SOCKOPTS && !err; i++) {
		const struct dt_sockopt *o = &q->sockopts[i];
		struct ditto_sockopt so = { (uint64_t)o->level, (uint64_t)o->name, (uint64_t)o->value,
					    o->conns, o->calls };

		if (o->used && o->level >= 0 && o->name >= 0 && o->value >= 0)
			err = ditto_network_add_sockopt(net, &so);
	}
	return err;
}

static int fill(struct ditto_model *m, const struct snapshot *s, const struct classes *c,
		const struct build_args *a)
{
	struct ditto_meta *meta = ditto_model_meta_ensure(m);
	struct ditto_service *svc;
	struct network_rec n;
	int err;

	ditto_meta_set_window_s(meta, a->window_s);
	ditto_meta_set_lost_events(meta, s->reqs.dropped);
	host_info_fill(meta);
	svc = ditto_model_add_service(m, a->service_name);
	if (!svc)
		return -ENOMEM;
	network_model(s, c, &n);
	add_service_info(svc, s, &n);
	if ((err = add_threads(svc, s, c)))
		return err;
	add_network(svc, &n);
	if ((err = add_sockopts(svc, &s->reqs)) || (err = add_syscalls(svc, s, c)) ||
	    (err = add_requests(svc, s, a)) || (err = outbound_store(svc, s)))
		return err;
	ditto_observed_set_counters_available(ditto_service_observed_ensure(svc), false);
	return 0;
}

/*
 * What the window could not learn for want of traffic. Without a request
 * the network model and the framing stay unknown and a clone of the model
 * answers every read as a raw request: a plausible model of nothing, the
 * silent wrong answer issue 18 is about. Requests are the ones counted on
 * sockets; a caller's requests override does not make traffic seen.
 */
unsigned model_gaps(const struct snapshot *s, struct ditto_model *m)
{
	struct ditto_service *svc = ditto_model_service(m, 0);
	unsigned gaps = 0;

	if (!s->reqs.requests)
		gaps |= DITTO_GAP_NO_REQUESTS;
	if (!svc || ditto_network_io_model(ditto_service_network(svc)) == DITTO_IO_UNKNOWN)
		gaps |= DITTO_GAP_IO_MODEL;
	if (!svc || ditto_service_framing(svc) == DITTO_FRAMING_UNKNOWN)
		gaps |= DITTO_GAP_FRAMING;
	return gaps;
}

int build_model(const struct snapshot *s, const struct classes *c, const struct build_args *a,
		struct ditto_model **out)
{
	struct ditto_model *m = ditto_model_new();
	int err;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	if ((err = fill(m, s, c, a)) || (err = ditto_model_validate(m, NULL))) {
		ditto_err_prefix("building the model");
		ditto_model_free(m);
		return err;
	}
	*out = m;
	return 0;
}
