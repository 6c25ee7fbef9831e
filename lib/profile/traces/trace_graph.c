/* SPDX-License-Identifier: MIT */
/*
 * Graph edges from spans. The rules (README "Graph from traces"):
 *  - a node is a service (the span's service name);
 *  - a call is a CLIENT or PRODUCER span; its callee is its SERVER or
 *    CONSUMER child, whose service is the edge's other end; with no such
 *    child (a database, an uninstrumented peer) the other end is an
 *    external node "<db.system|peer.service|tcp>-<port>";
 *  - a call's parent request is the nearest SERVER or CONSUMER ancestor of
 *    the same service, walking up through its INTERNAL (and nested CLIENT)
 *    spans; a chain that leaves the service or breaks makes the call
 *    unattributed (counted in calls and unattributed, in no fan-out);
 *  - a CLIENT span whose child is a CLIENT span of its own service is a
 *    wrapper of that inner call (two instrumented layers of one call): only
 *    the inner one, which carries the trace context to the callee, counts;
 *  - Zipkin's client and server halves sharing one id are split: the
 *    server half gets an id of its own and the client half as its parent,
 *    and the spans under the shared id move under the server half;
 *  - the same span (trace, id, kind) read twice counts once; the copies
 *    are counted as rejected.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core_int.h"
#include "trace_graph.h"

/* Spans' clocks and roundings (Zipkin and Jaeger write microseconds)
 * make "ends after" and "overlaps" need a margin: 10 us is far below any
 * real overlap of two calls and above any rounding. */
#define TOL_NS 10000u
/* Exporters that stamp span starts with a millisecond clock (node's SDK:
 * whole milliseconds plus a precise duration): see overlaps(). */
#define COARSE_NS 1000000u
/* Parents walked up from a call at most (a cycle of parents is a
 * malformed file, not a reason to loop). */
#define MAX_WALK 256
/* Later calls a call is compared with for overlap at most (see
 * mark_overlaps()). */
#define MAX_OVERLAP_SCAN 256

struct call {
	size_t span;		/* the CLIENT or PRODUCER span */
	ssize_t callee;		/* its SERVER or CONSUMER child; -1: external */
	ssize_t parent;		/* the parent request; -1: unattributed */
	const char *from, *to;	/* to: the callee's service or ext[] name */
	size_t ext;		/* index in ext names when callee < 0 */
	uint64_t start_ns;	/* the span's, for sorting without the set */
	bool async;
	bool overlapped;
	bool local;		/* no callee span; to: a service of the model */
};

#define LOCAL_MAX 64

struct builder {
	struct trace_set *set;
	ssize_t *pidx;		/* parent's index; -1: none or not in the set */
	ssize_t *callee;
	bool *wrapper;
	struct call *calls;
	size_t ncalls;
	char **ext;		/* external node names, one per call without callee */
	/* the model's services on this host that the spans name too:
	 * a call to one of their ports whose server span is missing */
	struct local_svc {
		uint16_t port;
		const char *name;
	} local[LOCAL_MAX];
	size_t nlocal;
	uint64_t orphans, traces;
	bool coarse;		/* every span starts on a whole millisecond */
};

static int cmp_id(const struct trace_span *a, const struct trace_span *b)
{
	int c = memcmp(a->trace_id, b->trace_id, 16);

	if (c)
		return c;
	return a->span_id < b->span_id ? -1 : a->span_id > b->span_id;
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct trace_span *a = pa, *b = pb;
	int c = cmp_id(a, b);

	return c ? c : (int)a->kind - (int)b->kind;
}

static ssize_t find(const struct trace_set *set, const uint8_t tid[16], uint64_t id)
{
	struct trace_span key;
	size_t lo = 0, hi = set->n;

	memcpy(key.trace_id, tid, 16);
	key.span_id = id;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_id(&set->spans[mid], &key);

		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* An id for a shared span's server half that no real span has, in
 * practice: a mix of the shared id (never 0). */
static uint64_t derived_id(uint64_t id)
{
	uint64_t z = id + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

struct split {
	uint8_t trace_id[16];
	uint64_t shared, derived;
};

static int cmp_split(const void *pa, const void *pb)
{
	const struct split *a = pa, *b = pb;
	int c = memcmp(a->trace_id, b->trace_id, 16);

	return c ? c : a->shared < b->shared ? -1 : a->shared > b->shared;
}

/* Drop copies, split shared client/server ids, move the shared id's
 * children under the server half; leaves the set sorted and its ids
 * unique. */
static int normalize(struct trace_set *set)
{
	struct split *splits = NULL;
	size_t nsplit = 0, out = 0;

	if (!set->n)	/* spans is NULL: nothing for qsort to touch */
		return 0;
	qsort(set->spans, set->n, sizeof(*set->spans), cmp_span);
	for (size_t i = 0; i < set->n;) {
		size_t j = i + 1, client = SIZE_MAX, server = SIZE_MAX;

		while (j < set->n && cmp_id(&set->spans[i], &set->spans[j]) == 0)
			j++;
		for (size_t k = i; k < j; k++) {
			if (set->spans[k].kind == SPAN_CLIENT && client == SIZE_MAX)
				client = k;
			else if (set->spans[k].kind == SPAN_SERVER && server == SIZE_MAX)
				server = k;
		}
		bool pair = client != SIZE_MAX && server != SIZE_MAX;

		for (size_t k = i; k < j; k++) {
			struct trace_span *sp = &set->spans[k];

			if (pair ? k != client && k != server : k != i) {
				trace_span_free(sp);	/* a copy */
				set->rejected++;
				continue;
			}
			if (pair && k == server) {
				struct split *p;

				if (nsplit % 64 == 0) {
					p = realloc(splits, (nsplit + 64) * sizeof(*p));
					if (!p) {
						free(splits);
						return -ENOMEM;
					}
					splits = p;
				}
				p = &splits[nsplit++];
				memcpy(p->trace_id, sp->trace_id, 16);
				p->shared = sp->span_id;
				p->derived = derived_id(sp->span_id);
				sp->parent_id = sp->span_id;
				sp->parent_elsewhere = false;
				sp->span_id = p->derived;
				sp->shared = true;
			}
			set->spans[out++] = *sp;
		}
		i = j;
	}
	set->n = out;
	if (nsplit) {
		qsort(splits, nsplit, sizeof(*splits), cmp_split);
		for (size_t i = 0; i < set->n; i++) {
			struct trace_span *sp = &set->spans[i];
			struct split key, *hit;

			if (!sp->parent_id || (sp->shared && sp->parent_id == sp->span_id))
				continue;
			memcpy(key.trace_id, sp->trace_id, 16);
			key.shared = sp->parent_id;
			hit = bsearch(&key, splits, nsplit, sizeof(*splits), cmp_split);
			if (hit && sp->span_id != hit->derived)
				sp->parent_id = hit->derived;
		}
		qsort(set->spans, set->n, sizeof(*set->spans), cmp_span);
	}
	free(splits);
	return 0;
}

static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool is_call(const struct trace_span *sp)
{
	return sp->kind == SPAN_CLIENT || sp->kind == SPAN_PRODUCER;
}

static bool is_inbound(const struct trace_span *sp)
{
	return sp->kind == SPAN_SERVER || sp->kind == SPAN_CONSUMER;
}

/* Parents, callees, wrappers, orphans and traces. */
static void link_spans(struct builder *b)
{
	struct trace_set *set = b->set;

	for (size_t i = 0; i < set->n; i++) {
		struct trace_span *sp = &set->spans[i];

		b->pidx[i] = -1;
		b->callee[i] = -1;
		if (i == 0 || memcmp(sp->trace_id, set->spans[i - 1].trace_id, 16) != 0)
			b->traces++;
		if (!sp->parent_id)
			continue;
		if (!sp->parent_elsewhere)
			b->pidx[i] = find(set, sp->trace_id, sp->parent_id);
		if (b->pidx[i] < 0 || (size_t)b->pidx[i] == i) {
			b->pidx[i] = -1;
			b->orphans++;
		}
	}
	for (size_t i = 0; i < set->n; i++) {
		ssize_t p = b->pidx[i];
		struct trace_span *sp = &set->spans[i];

		if (p < 0 || !is_call(&set->spans[p]))
			continue;
		if (is_inbound(sp) && b->callee[p] < 0)
			b->callee[p] = (ssize_t)i;
		else if (is_call(sp) && same(sp->service, set->spans[p].service))
			b->wrapper[p] = true;
	}
}

/* The nearest inbound ancestor of the same service (see the header). */
static ssize_t parent_request(const struct builder *b, size_t i)
{
	const struct trace_span *c = &b->set->spans[i];
	ssize_t k = b->pidx[i];

	for (int steps = 0; k >= 0 && steps < MAX_WALK; steps++) {
		const struct trace_span *p = &b->set->spans[k];

		if (!same(p->service, c->service))
			return -1;
		if (is_inbound(p))
			return k;
		k = b->pidx[k];
	}
	return -1;
}

static const char *ext_prefix(const struct trace_span *sp)
{
	if (sp->db_system && *sp->db_system)
		return sp->db_system;
	if (sp->peer_service && *sp->peer_service)
		return sp->peer_service;
	return "tcp";
}

static bool loopback(const char *addr)
{
	return !addr || !*addr || strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 ||
	       strncmp(addr, "::ffff:127.", 11) == 0;
}

/*
 * A call whose server span is not in the set (exported in a batch the
 * window did not get, or by a service that exports none), to a port of
 * a service of the model that the spans name too, on this host: a call
 * to that service, not to an external "tcp-PORT" beside it.
 */
static const char *local_callee(const struct builder *b, const struct trace_span *sp)
{
	if (!sp->peer_port || !loopback(sp->peer_address))
		return NULL;
	for (size_t i = 0; i < b->nlocal; i++)
		if (b->local[i].port == sp->peer_port)
			return b->local[i].name;
	return NULL;
}

static bool names_service(const struct trace_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (same(set->spans[i].service, name))
			return true;
	return false;
}

/* The model's services' ports whose names the spans carry (the first
 * LOCAL_MAX ports). */
static void find_local(struct builder *b, const struct ditto_model *m)
{
	for (size_t i = 0; i < ditto_model_service_count(m); i++) {
		const struct ditto_service *s = ditto_model_service(m, i);
		const char *name = ditto_service_name(s);

		if (!name || !names_service(b->set, name))
			continue;
		for (size_t k = 0; k < ditto_service_port_count(s) && b->nlocal < LOCAL_MAX; k++)
			b->local[b->nlocal++] = (struct local_svc){ ditto_service_port(s, k), name };
	}
}

/* "<prefix>-<port>" (no port: the prefix alone), with control bytes,
 * which no model name may hold, as '_'. */
static char *ext_name(const struct trace_span *sp)
{
	char buf[TRACE_MAX_STR + 16];
	size_t n;

	if (sp->peer_port)
		snprintf(buf, sizeof(buf), "%.200s-%u", ext_prefix(sp), sp->peer_port);
	else
		snprintf(buf, sizeof(buf), "%.200s", ext_prefix(sp));
	n = strlen(buf);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '_';
	return strdup(buf);
}

static enum ditto_framing framing_of(const struct trace_span *sp)
{
	static const struct {
		const char *db;
		enum ditto_framing f;
	} dbs[] = { { "redis", DITTO_FRAMING_RESP },
		    { "memcached", DITTO_FRAMING_MEMCACHE_TEXT },
		    { "postgresql", DITTO_FRAMING_POSTGRES },
		    { "mysql", DITTO_FRAMING_MYSQL },
		    { "mariadb", DITTO_FRAMING_MYSQL } };

	for (size_t i = 0; sp->db_system && i < sizeof(dbs) / sizeof(dbs[0]); i++)
		if (strcmp(sp->db_system, dbs[i].db) == 0)
			return dbs[i].f;
	return sp->http ? DITTO_FRAMING_HTTP1 : DITTO_FRAMING_RAW;
}

/*
 * Async per call: a PRODUCER span, a follows-from link (on the call or
 * its callee), or a call that ends after its parent request's response
 * (the parent did not wait for it). A fire-and-forget call that happens
 * to finish before the response looks sync here: spans carry no "waited
 * for" bit; the edge's majority decides (collect_edge()).
 */
static bool call_async(const struct builder *b, const struct call *c)
{
	const struct trace_span *sp = &b->set->spans[c->span];

	if (sp->kind == SPAN_PRODUCER || sp->follows_from)
		return true;
	if (c->callee >= 0 && b->set->spans[c->callee].follows_from)
		return true;
	return c->parent >= 0 && sp->end_ns > b->set->spans[c->parent].end_ns + TOL_NS;
}

static int find_calls(struct builder *b)
{
	struct trace_set *set = b->set;

	for (size_t i = 0; i < set->n; i++) {
		struct trace_span *sp = &set->spans[i];
		struct call *c;

		if (!is_call(sp) || b->wrapper[i])
			continue;
		c = &b->calls[b->ncalls];
		c->span = i;
		c->start_ns = sp->start_ns;
		c->callee = b->callee[i];
		c->parent = parent_request(b, i);
		c->from = sp->service;
		if (c->callee >= 0) {
			c->to = set->spans[c->callee].service;
		} else if ((c->to = local_callee(b, sp))) {
			c->local = true;
		} else {
			c->ext = b->ncalls;
			b->ext[b->ncalls] = ext_name(sp);
			if (!b->ext[b->ncalls])
				return -ENOMEM;
			c->to = b->ext[b->ncalls];
		}
		c->async = call_async(b, c);
		b->ncalls++;
	}
	return 0;
}

static int cmp_by_parent(const void *pa, const void *pb)
{
	const struct call *a = *(struct call *const *)pa, *b = *(struct call *const *)pb;
	uint64_t sa = a->start_ns, sb = b->start_ns;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	return sa < sb ? -1 : sa > sb;
}

/*
 * Sequential or parallel: a call overlaps another call of its parent
 * request by more than TOL_NS. A sync call counts overlaps with sync calls
 * only (an async call running beside it is the async call's nature, not
 * a parallel pair); an async call counts any. Calls in start order: only
 * later calls starting before a call ends can overlap it, and past
 * MAX_OVERLAP_SCAN of them the call has long been marked if it can be.
 */
/* Whether o, starting no earlier than a, can overlap a or a later one. */
static bool may_overlap(const struct builder *b, const struct trace_span *a,
			const struct trace_span *o)
{
	if (b->coarse)
		return o->start_ns == a->start_ns || o->start_ns + COARSE_NS <= a->end_ns;
	return o->start_ns + TOL_NS < a->end_ns;
}

/*
 * Whether o (starting no earlier) overlaps a. With millisecond starts a
 * span's true start is up to 1 ms after the one written: an overlap is
 * certain only when o starts a millisecond or more before a ends; calls
 * written with one start are taken as made at once (a handler issuing
 * both before either answers), and any other pair as one after the other
 * (a call that starts as its predecessor ends).
 */
static bool overlaps(const struct builder *b, const struct trace_span *a,
		     const struct trace_span *o)
{
	if (!b->coarse)
		return o->start_ns + TOL_NS < a->end_ns;
	return o->start_ns + COARSE_NS <= a->end_ns || o->start_ns == a->start_ns;
}

static int mark_overlaps(struct builder *b)
{
	struct call **v = malloc((b->ncalls ? b->ncalls : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < b->ncalls; i++)
		if (b->calls[i].parent >= 0)
			v[n++] = &b->calls[i];
	qsort(v, n, sizeof(*v), cmp_by_parent);
	for (size_t i = 0; i < n; i++) {
		const struct trace_span *a = &b->set->spans[v[i]->span];

		for (size_t j = i + 1; j < n && j <= i + MAX_OVERLAP_SCAN; j++) {
			const struct trace_span *o = &b->set->spans[v[j]->span];
			uint64_t end = a->end_ns < o->end_ns ? a->end_ns : o->end_ns;

			if (v[j]->parent != v[i]->parent || !may_overlap(b, a, o))
				break;
			if (end <= o->start_ns + TOL_NS || !overlaps(b, a, o))
				continue;
			if (v[i]->async || !v[j]->async)
				v[i]->overlapped = true;
			if (v[j]->async || !v[i]->async)
				v[j]->overlapped = true;
		}
	}
	free(v);
	return 0;
}

static int cmp_by_edge(const void *pa, const void *pb)
{
	const struct call *a = pa, *b = pb;
	int c = strcmp(a->from, b->from);

	if (!c)
		c = strcmp(a->to, b->to);
	if (!c)
		c = a->parent < b->parent ? -1 : a->parent > b->parent;
	return c;
}

/* Inbound requests (SERVER and CONSUMER spans) of a service: the one
 * denominator of all its edges. */
static uint64_t inbound_of(const struct trace_set *set, const char *service)
{
	uint64_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		n += is_inbound(&set->spans[i]) && same(set->spans[i].service, service);
	return n;
}

static uint64_t scaled(uint64_t n, double f)
{
	double v = round((double)n * f);

	return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

static int edge_error(int err, const char *from, const char *to, const char *what)
{
	return ditto_err(err < 0 ? err : -EINVAL, "traces: edge %.100s -> %.100s: %s: %s", from, to,
			 what, ditto_last_error());
}

static int add_external(struct ditto_graph *g, const struct trace_span *sp, const char *name)
{
	struct ditto_external *x = ditto_graph_find_external(g, name);

	if (x)
		return 0;
	x = ditto_graph_add_external(g, name);
	if (!x)
		return ditto_err(-EINVAL, "traces: external node '%.100s': %s", name,
				 ditto_last_error());
	if (trace_is_ip(sp->peer_address))
		ditto_external_set_address(x, sp->peer_address);
	if (sp->peer_port)
		ditto_external_set_port(x, sp->peer_port);
	ditto_external_set_framing(x, framing_of(sp));
	return 0;
}

/* One edge from calls c[0..n), sorted by parent request. */
static int collect_edge(struct builder *b, struct ditto_graph *g, struct call *c, size_t n,
			double factor)
{
	const struct trace_set *set = b->set;
	uint64_t parents = inbound_of(set, c[0].from), unattributed = 0, attributed = 0;
	uint64_t async = 0, overlapped = 0, with_parent = 0;
	struct ditto_edge *e;
	struct ditto_hist *fan, *req, *resp, *lat;
	int err;

	if (c[0].callee < 0 && !c[0].local && (err = add_external(g, &set->spans[c[0].span], c[0].to)))
		return err;
	if ((err = ditto_graph_add_node(g, c[0].to)) < 0)
		return edge_error(err, c[0].from, c[0].to, "node");
	e = ditto_graph_add_source_edge(g, DITTO_EDGE_TRACES, c[0].from, c[0].to);
	if (!e)
		return edge_error(-EINVAL, c[0].from, c[0].to, "cannot add");
	fan = ditto_edge_fanout_ensure(e);
	req = ditto_edge_request_bytes_ensure(e);
	resp = ditto_edge_response_bytes_ensure(e);
	lat = ditto_edge_latency_ns_ensure(e);
	if (!fan || !req || !resp || !lat)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && c[j].parent == c[i].parent)
			j++;
		if (c[i].parent < 0) {
			unattributed += j - i;
		} else {
			ditto_hist_add(fan, j - i, 1);
			with_parent++;
			attributed += j - i;
		}
		for (size_t k = i; k < j; k++) {
			const struct trace_span *sp = &set->spans[c[k].span];
			const struct trace_span *ce = c[k].callee >= 0 ? &set->spans[c[k].callee] : NULL;
			int64_t rq = sp->request_bytes >= 0 ? sp->request_bytes : ce ? ce->request_bytes : -1;
			int64_t rs = sp->response_bytes >= 0 ? sp->response_bytes
						: ce ? ce->response_bytes : -1;

			if (rq >= 0)
				ditto_hist_add(req, (uint64_t)rq, 1);
			if (rs >= 0)
				ditto_hist_add(resp, (uint64_t)rs, 1);
			ditto_hist_add(lat, sp->end_ns - sp->start_ns, 1);
			async += c[k].async;
			overlapped += c[k].parent >= 0 && c[k].overlapped;
		}
		i = j;
	}
	/* Parent requests that made no call on this edge: fan-out 0. */
	if (parents > with_parent)
		ditto_hist_add(fan, 0, parents - with_parent);
	/* Head sampling keeps or drops whole traces, so per-request rates and
	 * the distributions are as the unsampled ones; only totals scale. */
	ditto_edge_set_calls(e, scaled(n, factor));
	ditto_edge_set_parent_requests(e, scaled(parents, factor));
	ditto_edge_set_unattributed(e, scaled(unattributed, factor));
	ditto_edge_set_ambiguous(e, 0);
	/* Majorities over the edge's calls: async when more than half are;
	 * parallel when more than half of the attributed ones overlap. */
	ditto_edge_set_mode(e, async * 2 > n ? DITTO_CALL_ASYNC : DITTO_CALL_SYNC);
	ditto_edge_set_order(e, attributed == 0	       ? DITTO_ORDER_UNKNOWN
				: overlapped * 2 > attributed ? DITTO_ORDER_PARALLEL
							      : DITTO_ORDER_SEQUENTIAL);
	return 0;
}

/* Every service once, from spans sorted by service. */
static int add_nodes(const struct trace_span *spans, size_t n, struct ditto_graph *g)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = spans[i].service;
		int err;

		if (i && same(s, spans[i - 1].service))
			continue;
		if (s && (err = ditto_graph_add_node(g, s)) < 0)
			return ditto_err(err, "traces: service name '%.100s': %s", s,
					 ditto_last_error());
	}
	return 0;
}

static int write_graph(struct builder *b, struct ditto_model *m, const struct trace_graph_opts *opts)
{
	struct trace_set *set = b->set;
	struct ditto_graph *g = ditto_model_graph_ensure(m);
	bool correct = opts && opts->correct_sampling && set->sample_ratio > 0 &&
		       !set->sample_conflict;
	double factor = correct ? 1.0 / set->sample_ratio : 1.0;
	struct ditto_traces *t;
	int err;

	if (!g)
		return -ENOMEM;
	qsort(b->calls, b->ncalls, sizeof(*b->calls), cmp_by_edge);
	for (size_t i = 0; i < b->ncalls;) {
		size_t j = i + 1;

		while (j < b->ncalls && strcmp(b->calls[j].from, b->calls[i].from) == 0 &&
		       strcmp(b->calls[j].to, b->calls[i].to) == 0)
			j++;
		if ((err = collect_edge(b, g, b->calls + i, j - i, factor)))
			return err;
		i = j;
	}
	t = ditto_graph_traces_ensure(g);
	if (!t)
		return -ENOMEM;
	ditto_traces_set_files(t, ditto_traces_files(t) + set->files);
	ditto_traces_set_spans(t, ditto_traces_spans(t) + set->n);
	ditto_traces_set_traces(t, ditto_traces_traces(t) + b->traces);
	ditto_traces_set_orphan_spans(t, ditto_traces_orphan_spans(t) + b->orphans);
	ditto_traces_set_rejected_spans(t, ditto_traces_rejected_spans(t) + set->rejected);
	ditto_traces_set_sample_ratio(t, set->sample_conflict ? 0 : set->sample_ratio);
	ditto_traces_set_corrected(t, correct);
	return 0;
}

/* One import per model: a second one would need the first one's spans to
 * decide modes and fan-outs, which the model does not keep. */
static int no_trace_edges(const struct ditto_model *m)
{
	const struct ditto_graph *g = ditto_model_graph(m);

	for (size_t i = 0; g && i < ditto_graph_edge_count(g); i++)
		if (ditto_edge_source(ditto_graph_edge(g, i)) == DITTO_EDGE_TRACES)
			return ditto_err(-EEXIST, "the model already holds edges from traces: "
					 "import every trace file at once");
	return 0;
}

/* Spans sorted by service, for add_nodes(): a copy of the pointers would
 * do, but the set is the builder's to reorder until the calls are taken. */
static int cmp_service(const void *pa, const void *pb)
{
	const struct trace_span *a = pa, *b = pb;

	if (!a->service || !b->service)
		return !a->service - !b->service;
	return strcmp(a->service, b->service);
}

/* Whether every span starts on a whole millisecond (two or more spans:
 * one may by chance). */
static bool coarse_clock(const struct trace_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->spans[i].start_ns % COARSE_NS)
			return false;
	return set->n > 1;
}

int trace_graph_build(struct trace_set *set, struct ditto_model *m,
		      const struct trace_graph_opts *opts)
{
	struct builder b = { .set = set };
	int err;

	if (!set || !m)
		return -EINVAL;
	if ((err = no_trace_edges(m)))
		return err;
	pthread_mutex_lock(&set->lock);
	err = normalize(set);
	if (!err) {
		size_t n = set->n ? set->n : 1;

		b.pidx = malloc(n * sizeof(*b.pidx));
		b.callee = malloc(n * sizeof(*b.callee));
		b.wrapper = calloc(n, sizeof(*b.wrapper));
		b.calls = calloc(n, sizeof(*b.calls));
		b.ext = calloc(n, sizeof(*b.ext));
		if (!b.pidx || !b.callee || !b.wrapper || !b.calls || !b.ext)
			err = -ENOMEM;
	}
	if (!err) {
		b.coarse = coarse_clock(set);
		find_local(&b, m);
		link_spans(&b);
		err = find_calls(&b);
	}
	if (!err)
		err = mark_overlaps(&b);
	if (!err) {
		/* The calls hold indexes into the set: from here on it is
		 * reordered only through a copy. */
		struct trace_span *copy = malloc((set->n ? set->n : 1) * sizeof(*copy));

		if (!copy) {
			err = -ENOMEM;
		} else {
			struct ditto_graph *g = ditto_model_graph_ensure(m);

			if (set->n) {
				memcpy(copy, set->spans, set->n * sizeof(*copy));
				qsort(copy, set->n, sizeof(*copy), cmp_service);
			}
			err = g ? add_nodes(copy, set->n, g) : -ENOMEM;
			free(copy);
		}
	}
	if (!err)
		err = write_graph(&b, m, opts);
	pthread_mutex_unlock(&set->lock);
	for (size_t i = 0; b.ext && i < b.ncalls; i++)
		free(b.ext[i]);
	free(b.ext);
	free(b.calls);
	free(b.wrapper);
	free(b.callee);
	free(b.pidx);
	return err == -ENOMEM ? ditto_err(err, "traces: out of memory") : err;
}
