/* SPDX-License-Identifier: MIT */
/*
 * The graph from the attributed calls (edges.c): one kernel edge per
 * calling service and callee, the callee being a profiled service when
 * the call went to one of its listening ports on this host or to a Unix
 * socket it served a request on, else an external node named after the
 * framing its first request spoke ("redis-6379"). Per edge: calls, parent requests, fan-out, latency,
 * sizes, and two decisions by majority of the calls that have a parent
 * request: sync when the parent's response was written after the call's
 * answer was read (async otherwise), parallel when the call overlapped
 * another call of the same parent request (sequential otherwise).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "edges_int.h"

#define MAX_FANOUT 4096		/* calls per request counted apart; more share the last */
#define MAX_PAIRS 64		/* calls of one request checked for overlaps */

struct edge_acc {
	uint8_t svc;
	char to[128];
	bool external;
	struct dt_ep_key ep;		/* an endpoint of the callee */
	enum ditto_framing framing;
	uint64_t calls, ambiguous, unattributed, sync, async, parallel, sequential;
	uint64_t with_calls;		/* parent requests with at least one call */
	uint64_t fanout[MAX_FANOUT + 1];
	uint64_t cur;			/* calls of the request being walked */
	struct ditto_hist *latency;
};

struct store {
	const struct edges *e;
	const struct edge_service *svcs;
	size_t nsvcs;
	uint16_t own[32];		/* ports the profiler itself listens on */
	size_t nown;
	struct edge_acc *acc;
	size_t nacc;
	struct dt_ep_key *eps;		/* distinct endpoints ... */
	uint32_t *ep_acc;		/* ... and their edge */
	size_t neps;
};

static bool loopback(const struct dt_ep_key *k)
{
	const unsigned char *a = (const unsigned char *)k->addr;
	static const unsigned char v6[16] = { [15] = 1 };
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (k->family == AF_INET)
		return a[0] == 127;
	/* ::1, and ::ffff:127.x.x.x (a dual-stack socket's IPv4 peer) */
	return k->family == AF_INET6 &&
	       (memcmp(a, v6, 16) == 0 || (memcmp(a, mapped, 12) == 0 && a[12] == 127));
}

/* A call to the profiler's own listener (its OTLP receiver, which the
 * services export their spans to) is the observer's traffic, not the
 * services' graph. */
static bool to_profiler(const struct store *st, const struct dt_ep_key *k)
{
	for (size_t i = 0; i < st->nown && loopback(k); i++)
		if (st->own[i] == k->port)
			return true;
	return false;
}

/* The profiled service a Unix client's call reached, by the address of
 * the listener it connected to (NONE: a listener of no profiled service,
 * whose calls make no edge: only Unix sockets served within the profile
 * are in the graph). */
static uint32_t unix_callee(const struct store *st, const struct dt_ep_key *k)
{
	uint32_t svc;

	if (!idmap_get(&st->e->unix_listener, k->addr[0], &svc) || svc >= st->nsvcs)
		return NONE;
	return svc;
}

static const struct outbound_rec *outbound_of(const struct store *st, const struct dt_ep_key *k)
{
	const struct snapshot *part = k->svc < st->nsvcs ? st->svcs[k->svc].part : NULL;

	for (size_t i = 0; part && i < part->noutbound; i++)
		if (memcmp(&part->outbound[i].key, k, sizeof(*k)) == 0)
			return &part->outbound[i];
	return NULL;
}

static const char *kind_of(enum ditto_framing f)
{
	switch (f) {
	case DITTO_FRAMING_RESP:
		return "redis";
	case DITTO_FRAMING_MEMCACHE_TEXT:
	case DITTO_FRAMING_MEMCACHE_BINARY:
		return "memcached";
	case DITTO_FRAMING_HTTP1:
		return "http";
	case DITTO_FRAMING_POSTGRES:
		return "postgresql";
	case DITTO_FRAMING_MYSQL:
		return "mysql";
	default:
		return "tcp";
	}
}

/* The callee's node name: a profiled service listening there, else an
 * external one named by framing and port. */
static void callee_name(const struct store *st, const struct dt_ep_key *k, struct edge_acc *a)
{
	const struct outbound_rec *o = outbound_of(st, k);
	unsigned char first[16] = { 0 };

	if (k->family == AF_UNIX) {
		snprintf(a->to, sizeof(a->to), "%s", st->svcs[unix_callee(st, k)].name);
		return;
	}
	for (size_t i = 0; i < st->nsvcs && loopback(k); i++)
		for (size_t j = 0; j < st->svcs[i].nports; j++)
			if (st->svcs[i].ports[j] == k->port) {
				snprintf(a->to, sizeof(a->to), "%s", st->svcs[i].name);
				return;
			}
	if (o)
		memcpy(first, o->val.first_bytes, sizeof(first));
	a->framing = o ? framing_detect(first, o->val.first_len) : DITTO_FRAMING_UNKNOWN;
	a->external = true;
	snprintf(a->to, sizeof(a->to), "%s-%u", kind_of(a->framing), (unsigned)k->port);
}

/* The edge of an endpoint, created on first sight. */
static int edge_of(struct store *st, const struct dt_ep_key *k, uint32_t *out)
{
	struct edge_acc probe = { .svc = (uint8_t)k->svc, .ep = *k };
	size_t i;
	void *p;

	for (i = 0; i < st->neps; i++)
		if (memcmp(&st->eps[i], k, sizeof(*k)) == 0) {
			*out = st->ep_acc[i];
			return 0;
		}
	callee_name(st, k, &probe);
	for (i = 0; i < st->nacc; i++)
		if (st->acc[i].svc == probe.svc && strcmp(st->acc[i].to, probe.to) == 0)
			break;
	if (i == st->nacc) {
		if (!(p = realloc(st->acc, (st->nacc + 1) * sizeof(*st->acc))))
			return -ENOMEM;
		st->acc = p;
		st->acc[st->nacc] = probe;
		st->acc[st->nacc].latency = ditto_hist_new(DITTO_HIST_LOGLIN, 0);
		if (!st->acc[st->nacc++].latency)
			return -ENOMEM;
	}
	if (!(p = realloc(st->eps, (st->neps + 1) * sizeof(*st->eps))))
		return -ENOMEM;
	st->eps = p;
	if (!(p = realloc(st->ep_acc, (st->neps + 1) * sizeof(*st->ep_acc))))
		return -ENOMEM;
	st->ep_acc = p;
	st->eps[st->neps] = *k;
	st->ep_acc[st->neps++] = (uint32_t)i;
	*out = (uint32_t)i;
	return 0;
}

static bool overlap(const struct ev_call *a, const struct ev_call *b, uint64_t open_end)
{
	uint64_t ae = a->end ? a->end : open_end, be = b->end ? b->end : open_end;

	return a->begin < be && b->begin < ae;
}

/* Whether call i of request r overlaps another of its calls. */
static bool overlaps_sibling(const struct edges *e, const struct ev_req *r, uint32_t i)
{
	unsigned checked = 0;

	for (uint32_t j = r->first_call; j != NONE && checked < MAX_PAIRS;
	     j = e->calls[j].next, checked++)
		if (j != i && overlap(&e->calls[i], &e->calls[j], UINT64_MAX))
			return true;
	return false;
}

static int add_calls(struct store *st, uint32_t *acc_of_call)
{
	const struct edges *e = st->e;
	int err;

	for (size_t i = 0; i < e->ncalls; i++) {
		const struct ev_call *c = &e->calls[i];
		struct edge_acc *a;

		acc_of_call[i] = NONE;
		/* A service index the session did not give (never, unless the
		 * kernel side and the session disagree): no edge to make. */
		if (c->ep.svc >= st->nsvcs || to_profiler(st, &c->ep) ||
		    (c->ep.family == AF_UNIX && unix_callee(st, &c->ep) == NONE))
			continue;
		if ((err = edge_of(st, &c->ep, &acc_of_call[i])))
			return err;
		a = &st->acc[acc_of_call[i]];
		a->calls++;
		a->ambiguous += c->ambiguous;
		if (c->end && (err = ditto_hist_add(a->latency, c->end - c->begin, 1)))
			return err;
		if (c->req == NONE) {
			a->unattributed++;
			continue;
		}
		if (e->reqs[c->req].respond) {
			if (c->end && c->end <= e->reqs[c->req].respond)
				a->sync++;
			else
				a->async++;
		}
		if (overlaps_sibling(e, &e->reqs[c->req], (uint32_t)i))
			a->parallel++;
		else
			a->sequential++;
	}
	return 0;
}

/* Calls per request, per edge, into the fan-out counts. */
static void add_fanout(struct store *st, const uint32_t *acc_of_call)
{
	const struct edges *e = st->e;

	for (size_t r = 0; r < e->nreqs; r++) {
		uint32_t first = e->reqs[r].first_call;

		for (uint32_t j = first; j != NONE; j = e->calls[j].next)
			if (acc_of_call[j] != NONE)
				st->acc[acc_of_call[j]].cur++;
		for (uint32_t j = first; j != NONE; j = e->calls[j].next) {
			struct edge_acc *a;

			if (acc_of_call[j] == NONE)
				continue;
			a = &st->acc[acc_of_call[j]];
			if (!a->cur)
				continue;
			a->fanout[a->cur < MAX_FANOUT ? a->cur : MAX_FANOUT]++;
			a->with_calls++;
			a->cur = 0;
		}
	}
}

static uint64_t requests_of(const struct edges *e, uint8_t svc)
{
	uint64_t n = 0;

	for (size_t r = 0; r < e->nreqs; r++)
		n += e->reqs[r].svc == svc;
	return n;
}

static int write_external(struct ditto_graph *g, const struct edge_acc *a)
{
	char addr[INET6_ADDRSTRLEN] = "";
	struct ditto_external *x;
	int err;

	if (ditto_graph_find_external(g, a->to))
		return 0;
	if (!(x = ditto_graph_add_external(g, a->to)))
		return -EINVAL;	/* the message is in ditto_last_error() */
	inet_ntop(a->ep.family == AF_INET6 ? AF_INET6 : AF_INET, a->ep.addr, addr, sizeof(addr));
	if ((err = ditto_external_set_address(x, addr)) ||
	    (err = ditto_external_set_port(x, a->ep.port)))
		return err;
	return ditto_external_set_framing(x, a->framing);
}

static int write_sizes(const struct store *st, const struct edge_acc *a, struct ditto_edge *ed)
{
	int err = 0;

	for (size_t i = 0; i < st->neps && !err; i++) {
		const struct outbound_rec *o;

		if (&st->acc[st->ep_acc[i]] != a || !(o = outbound_of(st, &st->eps[i])))
			continue;
		if (!(err = hist_add_log2(ditto_edge_request_bytes_ensure(ed), o->val.req_bytes,
					  LOG2_BUCKETS)))
			err = hist_add_log2(ditto_edge_response_bytes_ensure(ed),
					    o->val.resp_bytes, LOG2_BUCKETS);
	}
	return err;
}

static int write_edge(const struct store *st, struct ditto_graph *g, const struct edge_acc *a)
{
	const char *from = st->svcs[a->svc].name;
	uint64_t parents = requests_of(st->e, a->svc);
	struct ditto_edge *ed;
	struct ditto_hist *fan;
	int err;

	if ((err = ditto_graph_add_node(g, a->to)) || (a->external && (err = write_external(g, a))))
		return err;
	if (!(ed = ditto_graph_add_edge(g, from, a->to)) || !(fan = ditto_edge_fanout_ensure(ed)))
		return -EINVAL;	/* the message is in ditto_last_error() */
	if ((err = ditto_edge_set_calls(ed, a->calls)) ||
	    (err = ditto_edge_set_parent_requests(ed, parents)) ||
	    (err = ditto_edge_set_ambiguous(ed, a->ambiguous)) ||
	    (err = ditto_edge_set_unattributed(ed, a->unattributed)) ||
	    (err = ditto_hist_merge(ditto_edge_latency_ns_ensure(ed), a->latency)) ||
	    (err = write_sizes(st, a, ed)))
		return err;
	if (parents > a->with_calls && (err = ditto_hist_add(fan, 0, parents - a->with_calls)))
		return err;
	for (uint64_t k = 1; k <= MAX_FANOUT && !err; k++)
		if (a->fanout[k])
			err = ditto_hist_add(fan, k, a->fanout[k]);
	if (!err && (a->sync || a->async))
		err = ditto_edge_set_mode(ed, a->async > a->sync ? DITTO_CALL_ASYNC : DITTO_CALL_SYNC);
	if (!err && (a->parallel || a->sequential))
		err = ditto_edge_set_order(ed, a->parallel > a->sequential ? DITTO_ORDER_PARALLEL :
									   DITTO_ORDER_SEQUENTIAL);
	return err;
}

static int write_graph(struct store *st, struct ditto_model *m)
{
	struct ditto_graph *g = ditto_model_graph_ensure(m);
	int err = g ? 0 : -EINVAL;

	for (size_t i = 0; i < st->nsvcs && !err; i++)
		err = ditto_graph_add_node(g, st->svcs[i].name);
	for (size_t i = 0; i < st->nacc && !err; i++)
		err = write_edge(st, g, &st->acc[i]);
	return err;
}

int edges_store(const struct edges *e, const struct edge_service *svcs, size_t n,
		struct ditto_model *m)
{
	struct store st = { .e = e, .svcs = svcs, .nsvcs = n };
	uint32_t *acc_of_call = malloc((e->ncalls ? e->ncalls : 1) * sizeof(*acc_of_call));
	int err = acc_of_call ? 0 : -ENOMEM;

	st.nown = proc_listen_ports(getpid(), st.own, ARRAY_SIZE(st.own));
	if (!err && !(err = add_calls(&st, acc_of_call))) {
		add_fanout(&st, acc_of_call);
		err = write_graph(&st, m);
	}
	for (size_t i = 0; i < st.nacc; i++)
		ditto_hist_free(st.acc[i].latency);
	free(st.acc);
	free(st.eps);
	free(st.ep_acc);
	free(acc_of_call);
	return err == -ENOMEM ? ditto_err(err, "out of memory") : err;
}
