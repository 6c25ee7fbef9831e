/* SPDX-License-Identifier: MIT */
/*
 * Typed accessors of every model section. Handles are tree nodes; the
 * macros below expand to one getter and one setter per field, named as in
 * model.h, so the field names here are the names on the wire.
 *
 * Getters only read: a section the model lacks is NULL, a histogram it
 * lacks the shared read-only empty one of its kind (hist_absent()), and
 * the fields of a NULL section read as 0, "" or false. What creates a
 * missing node is a setter, an add function or an _ensure function.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "model_int.h"

static int nomem(int err)
{
	return err ? err : ditto_err(-ENOMEM, "out of memory");
}

static int check_f64(const char *field, double v)
{
	if (!isfinite(v) || v < 0)
		return ditto_err(-EINVAL, "%s: %g must be finite and not negative", field, v);
	return 0;
}

static int set_f64(struct dnode *map, const char *field, double v)
{
	int err = check_f64(field, v);

	return err ? err : dn_set_f64(map, field, v);
}

static int set_str(struct dnode *map, const char *field, const char *v)
{
	if (!v)
		return ditto_err(-EINVAL, "%s: string is NULL", field);
	return dn_set_str(map, field, v);
}

static int set_enum(struct dnode *map, const char *field, const char *const *names, int v)
{
	int n = 0;

	while (names[n])
		n++;
	if (v < 0 || v >= n)
		return ditto_err(-EINVAL, "%s: %d is not a valid value", field, v);
	return dn_set_str(map, field, names[v]);
}

static int get_enum(const struct dnode *map, const char *field, const char *const *names)
{
	int i = enum_index(names, dn_get_str(map, field));

	return i < 0 ? 0 : i;
}

/* A setter given a NULL handle: what a getter returns for a section the
 * model lacks. */
static int no_section(const char *field)
{
	return ditto_err(-EINVAL, "%s: no section to set it in (a NULL handle: an absent "
			 "section, which its _ensure function creates)", field);
}

/* The histogram field of map, or the read-only empty one of its kind when
 * map has none (map may be NULL). Creates nothing. */
static struct ditto_hist *hist_get(const struct dnode *map, const char *field,
				   enum ditto_hist_kind kind)
{
	const struct dnode *n = dn_get(map, field);

	return n && n->type == DN_HIST ? n->h : hist_absent(kind);
}

/* The histogram field of map, created empty when absent (replacing a value
 * of another type). NULL on no memory or a NULL map. */
static struct ditto_hist *hist_ensure(struct dnode *map, const char *field,
				      enum ditto_hist_kind kind)
{
	struct dnode *n = dn_get(map, field);

	if (n && n->type == DN_HIST)
		return n->h;
	if (!map) {
		no_section(field);
		return NULL;
	}
	n = dn_new(DN_HIST);
	if (!n)
		return NULL;
	n->h = ditto_hist_new(kind, 0);
	if (!n->h) {
		dn_free(n);
		return NULL;
	}
	return dn_set(map, field, n) ? NULL : n->h;
}

#define U64_FIELD(sec, field)                                                       \
	DITTO_API uint64_t ditto_##sec##_##field(const struct ditto_##sec *x)       \
	{                                                                           \
		return dn_get_u64(CNODE(x), #field);                                 \
	}                                                                           \
	DITTO_API int ditto_##sec##_set_##field(struct ditto_##sec *x, uint64_t v)  \
	{                                                                           \
		return dn_set_u64(NODE(x), #field, v);                               \
	}

#define F64_FIELD(sec, field)                                                       \
	DITTO_API double ditto_##sec##_##field(const struct ditto_##sec *x)         \
	{                                                                           \
		return dn_get_f64(CNODE(x), #field);                                 \
	}                                                                           \
	DITTO_API int ditto_##sec##_set_##field(struct ditto_##sec *x, double v)    \
	{                                                                           \
		return set_f64(NODE(x), #field, v);                                  \
	}

#define BOOL_FIELD(sec, field)                                                      \
	DITTO_API bool ditto_##sec##_##field(const struct ditto_##sec *x)           \
	{                                                                           \
		return dn_get_bool(CNODE(x), #field);                                \
	}                                                                           \
	DITTO_API int ditto_##sec##_set_##field(struct ditto_##sec *x, bool v)      \
	{                                                                           \
		return dn_set_bool(NODE(x), #field, v);                              \
	}

#define STR_FIELD(sec, field)                                                       \
	DITTO_API const char *ditto_##sec##_##field(const struct ditto_##sec *x)    \
	{                                                                           \
		return dn_get_str(CNODE(x), #field);                                 \
	}                                                                           \
	DITTO_API int ditto_##sec##_set_##field(struct ditto_##sec *x, const char *v) \
	{                                                                           \
		return set_str(NODE(x), #field, v);                                  \
	}

#define ENUM_FIELD(sec, field, type, table)                                         \
	DITTO_API enum ditto_##type ditto_##sec##_##field(const struct ditto_##sec *x) \
	{                                                                           \
		return (enum ditto_##type)get_enum(CNODE(x), #field, table);         \
	}                                                                           \
	DITTO_API int ditto_##sec##_set_##field(struct ditto_##sec *x, enum ditto_##type v) \
	{                                                                           \
		return set_enum(NODE(x), #field, table, (int)v);                     \
	}

#define KEY_STR(sec, field)                                                         \
	DITTO_API const char *ditto_##sec##_##field(const struct ditto_##sec *x)    \
	{                                                                           \
		return dn_get_str(CNODE(x), #field);                                 \
	}

/* A histogram field named `field` in the API and `wire` in the model. */
#define HIST_FIELD_AS(sec, field, wire, kind)                                       \
	DITTO_API struct ditto_hist *ditto_##sec##_##field(const struct ditto_##sec *x) \
	{                                                                           \
		return hist_get(CNODE(x), wire, kind);                               \
	}                                                                           \
	DITTO_API struct ditto_hist *ditto_##sec##_##field##_ensure(struct ditto_##sec *x) \
	{                                                                           \
		return hist_ensure(NODE(x), wire, kind);                             \
	}

#define HIST_FIELD(sec, field, kind) HIST_FIELD_AS(sec, field, #field, kind)

/* A sub-object (map) `name` of type rtype in a handle of type ptype:
 * ditto_<ptype>_<name>() reads it (NULL when absent), ..._ensure()
 * creates it when absent. */
#define SUB_MAP(ptype, name, rtype)                                                 \
	DITTO_API struct ditto_##rtype *ditto_##ptype##_##name(const struct ditto_##ptype *x) \
	{                                                                           \
		return (struct ditto_##rtype *)dn_sub(CNODE(x), #name, DN_MAP);     \
	}                                                                           \
	DITTO_API struct ditto_##rtype *ditto_##ptype##_##name##_ensure(struct ditto_##ptype *x) \
	{                                                                           \
		if (!x) {                                                           \
			no_section(#name);                                          \
			return NULL;                                                \
		}                                                                   \
		return (struct ditto_##rtype *)dn_child(NODE(x), #name, DN_MAP);    \
	}

/* ---- elements of arrays ---- */

static size_t elem_count(const struct dnode *parent, const char *arr)
{
	const struct dnode *a = dn_get(parent, arr);

	return a && a->type == DN_ARR ? a->a.n : 0;
}

static struct dnode *elem_at(const struct dnode *parent, const char *arr, size_t i)
{
	const struct dnode *a = dn_get(parent, arr);

	return a && a->type == DN_ARR && i < a->a.n ? a->a.items[i] : NULL;
}

/* The element of parent.arr with the key fields of probe, or NULL. */
static struct dnode *elem_find(const struct dnode *parent, const char *arr,
			       const struct section *s, const struct dnode *probe)
{
	return element_match(s, dn_get(parent, arr), probe);
}

/* Append probe (a new element holding its key fields) unless its key is
 * taken; takes ownership of probe. */
static struct dnode *elem_add(struct dnode *parent, const char *arr, const struct section *s,
			      struct dnode *probe)
{
	struct dnode *a;
	struct dbuf label;

	if (!probe)
		return NULL;
	if (!parent) {
		dn_free(probe);
		no_section(arr);
		return NULL;
	}
	if (elem_find(parent, arr, s, probe)) {
		dbuf_init(&label);
		element_label(s, probe, &label);
		ditto_err(-EEXIST, "%s: '%s' exists already", arr, label.data ? label.data : "");
		dbuf_free(&label);
		dn_free(probe);
		return NULL;
	}
	a = dn_child(parent, arr, DN_ARR);
	if (!a) {
		dn_free(probe);
		return NULL;
	}
	return dn_push(a, probe) ? NULL : probe;
}

/* A new map with one string key field; NULL (and an error) if name is empty. */
static struct dnode *probe_str(const char *field, const char *name)
{
	struct dnode *p;

	if (!name || !*name) {
		ditto_err(-EINVAL, "%s must not be empty", field);
		return NULL;
	}
	p = dn_new(DN_MAP);
	if (p && dn_set_str(p, field, name)) {
		dn_free(p);
		return NULL;
	}
	return p;
}

static int list_add(struct dnode *parent, const char *field, struct dnode *v)
{
	struct dnode *l;

	if (!v)
		return nomem(0);
	if (!parent) {
		dn_free(v);
		return no_section(field);
	}
	l = dn_child(parent, field, DN_ARR);
	if (!l) {
		dn_free(v);
		return nomem(0);
	}
	for (size_t i = 0; i < l->a.n; i++)
		if (dn_equal(l->a.items[i], v)) {
			dn_free(v);
			return 0;
		}
	return dn_push(l, v);
}

static const char *list_str(const struct dnode *parent, const char *field, size_t i)
{
	const struct dnode *l = dn_get(parent, field);

	if (!l || l->type != DN_ARR || i >= l->a.n || l->a.items[i]->type != DN_STR)
		return NULL;
	return l->a.items[i]->s.p;
}

/* ---- model ---- */

#define MODEL_SUB(name)                                                             \
	DITTO_API struct ditto_##name *ditto_model_##name(const struct ditto_model *m) \
	{                                                                           \
		return (struct ditto_##name *)dn_sub(m->root, #name, DN_MAP);       \
	}                                                                           \
	DITTO_API struct ditto_##name *ditto_model_##name##_ensure(struct ditto_model *m) \
	{                                                                           \
		return (struct ditto_##name *)dn_child(m->root, #name, DN_MAP);     \
	}

MODEL_SUB(meta)
MODEL_SUB(graph)
MODEL_SUB(tuning)

/* ---- meta ---- */

KEY_STR(meta, tool_version)
U64_FIELD(meta, created)
F64_FIELD(meta, window_s)

U64_FIELD(meta, lost_events)

DITTO_API uint64_t ditto_meta_sources(const struct ditto_meta *meta)
{
	uint64_t n = dn_get_u64(CNODE(meta), "sources");

	return n ? n : 1;
}

static const char *const cache_fields[] = { "l1d_bytes", "l1i_bytes", "l2_bytes", "llc_bytes" };

#define META_SUB(sub, field, type, get, set)                                        \
	DITTO_API type ditto_meta_##sub##_##field(const struct ditto_meta *meta)    \
	{                                                                           \
		return get(dn_get(CNODE(meta), #sub), #field);                       \
	}                                                                           \
	DITTO_API int ditto_meta_set_##sub##_##field(struct ditto_meta *meta, type v) \
	{                                                                           \
		struct dnode *s;                                                    \
		if (!meta)                                                          \
			return no_section(#sub "." #field);                         \
		s = dn_child(NODE(meta), #sub, DN_MAP);                             \
		return s ? set(s, #field, v) : nomem(0);                             \
	}

META_SUB(host, cpu_model, const char *, dn_get_str, set_str)
META_SUB(host, kernel, const char *, dn_get_str, set_str)
META_SUB(host, cores, uint64_t, dn_get_u64, dn_set_u64)
META_SUB(host, cache_source, const char *, dn_get_str, set_str)
META_SUB(load, generator, const char *, dn_get_str, set_str)
META_SUB(load, qps, double, dn_get_f64, set_f64)
META_SUB(load, connections, uint64_t, dn_get_u64, dn_set_u64)

DITTO_API uint64_t ditto_meta_host_cache_bytes(const struct ditto_meta *meta,
					       enum ditto_cache_level l)
{
	if ((unsigned)l >= ARRAY_SIZE(cache_fields))
		return 0;
	return dn_get_u64(dn_get(CNODE(meta), "host"), cache_fields[l]);
}

DITTO_API int ditto_meta_set_host_cache_bytes(struct ditto_meta *meta, enum ditto_cache_level l,
					      uint64_t bytes)
{
	struct dnode *host;

	if ((unsigned)l >= ARRAY_SIZE(cache_fields))
		return ditto_err(-EINVAL, "cache level %d is not valid", (int)l);
	if (!meta)
		return no_section(cache_fields[l]);
	host = dn_child(NODE(meta), "host", DN_MAP);
	return host ? dn_set_u64(host, cache_fields[l], bytes) : nomem(0);
}

/* ---- services ---- */

DITTO_API size_t ditto_model_service_count(const struct ditto_model *m)
{
	return elem_count(m->root, "services");
}

DITTO_API struct ditto_service *ditto_model_service(const struct ditto_model *m, size_t i)
{
	return (struct ditto_service *)elem_at(m->root, "services", i);
}

DITTO_API struct ditto_service *ditto_model_find_service(const struct ditto_model *m,
							 const char *name)
{
	struct dnode *p = probe_str("name", name), *e;

	e = p ? elem_find(m->root, "services", &schema_service, p) : NULL;
	dn_free(p);
	return (struct ditto_service *)e;
}

struct ditto_service *model_pick_service(const struct ditto_model *m, const char *name)
{
	if (name)
		return ditto_model_find_service(m, name);
	return ditto_model_service_count(m) ? ditto_model_service(m, 0) : NULL;
}

DITTO_API struct ditto_service *ditto_model_add_service(struct ditto_model *m, const char *name)
{
	struct dnode *p = probe_str("name", name);

	if (p && dn_set_u64(p, "processes", 1)) {
		dn_free(p);
		return NULL;
	}
	return (struct ditto_service *)elem_add(m->root, "services", &schema_service, p);
}

KEY_STR(service, name)
ENUM_FIELD(service, framing, framing, enum_framing)
U64_FIELD(service, processes)

DITTO_API size_t ditto_service_port_count(const struct ditto_service *s)
{
	return elem_count(CNODE(s), "ports");
}

DITTO_API uint16_t ditto_service_port(const struct ditto_service *s, size_t i)
{
	const struct dnode *l = dn_get(CNODE(s), "ports");

	if (!l || l->type != DN_ARR || i >= l->a.n || l->a.items[i]->type != DN_UINT)
		return 0;
	return (uint16_t)l->a.items[i]->u;
}

DITTO_API int ditto_service_add_port(struct ditto_service *s, uint16_t port)
{
	if (!port)
		return ditto_err(-EINVAL, "ports: 0 is not a port");
	return list_add(NODE(s), "ports", dn_uint(port));
}

DITTO_API double ditto_service_per_request(const struct ditto_service *s, double count)
{
	uint64_t req = dn_get_u64(dn_get(CNODE(s), "requests"), "count");

	return req ? count / (double)req : 0;
}

/* ---- thread classes ---- */

DITTO_API size_t ditto_service_thread_count(const struct ditto_service *s)
{
	return elem_count(CNODE(s), "threads");
}

DITTO_API struct ditto_thread_class *ditto_service_thread(const struct ditto_service *s, size_t i)
{
	return (struct ditto_thread_class *)elem_at(CNODE(s), "threads", i);
}

DITTO_API struct ditto_thread_class *ditto_service_find_thread(const struct ditto_service *s,
							       const char *name)
{
	struct dnode *p = probe_str("name", name), *e;

	e = p ? elem_find(CNODE(s), "threads", &schema_thread, p) : NULL;
	dn_free(p);
	return (struct ditto_thread_class *)e;
}

DITTO_API struct ditto_thread_class *ditto_service_add_thread(struct ditto_service *s,
							      const char *name)
{
	struct dnode *p = probe_str("name", name);

	if (p && dn_set_u64(p, "count", 1)) {
		dn_free(p);
		return NULL;
	}
	return (struct ditto_thread_class *)elem_add(NODE(s), "threads", &schema_thread, p);
}

KEY_STR(thread_class, name)
U64_FIELD(thread_class, count)
ENUM_FIELD(thread_class, role, role, enum_role)
ENUM_FIELD(thread_class, io_model, io_model, enum_io_model)
U64_FIELD(thread_class, cpu_ns)
U64_FIELD(thread_class, ctx_switches)
U64_FIELD(thread_class, wakeups)
U64_FIELD(thread_class, threads_created)
U64_FIELD(thread_class, processes_created)

DITTO_API size_t ditto_thread_class_woken_by_count(const struct ditto_thread_class *t)
{
	return elem_count(CNODE(t), "woken_by");
}

DITTO_API const char *ditto_thread_class_woken_by(const struct ditto_thread_class *t, size_t i)
{
	return list_str(CNODE(t), "woken_by", i);
}

DITTO_API int ditto_thread_class_add_woken_by(struct ditto_thread_class *t, const char *name)
{
	if (!name || !*name)
		return ditto_err(-EINVAL, "woken_by: name must not be empty");
	return list_add(NODE(t), "woken_by", dn_cstr(name));
}

/* ---- network ---- */

SUB_MAP(service, network, network)

ENUM_FIELD(network, io_model, io_model, enum_io_model)
BOOL_FIELD(network, accept_dispatch)
BOOL_FIELD(network, network_dispatch)
BOOL_FIELD(network, serial_connections)
BOOL_FIELD(network, master_process)
U64_FIELD(network, network_threads)
U64_FIELD(network, processes)
U64_FIELD(network, client_connections)
ENUM_FIELD(network, client_mode, call_mode, enum_call_mode)
U64_FIELD(network, sockopt_connections)

DITTO_API bool ditto_network_sockopts_known(const struct ditto_network *n)
{
	const struct dnode *a = dn_get(CNODE(n), "sockopts");

	return a && a->type == DN_ARR;
}

DITTO_API int ditto_network_set_sockopts_known(struct ditto_network *n)
{
	if (!n)
		return no_section("sockopts");
	return dn_child(NODE(n), "sockopts", DN_ARR) ? 0 : nomem(0);
}

DITTO_API size_t ditto_network_sockopt_count(const struct ditto_network *n)
{
	return elem_count(CNODE(n), "sockopts");
}

DITTO_API int ditto_network_sockopt(const struct ditto_network *n, size_t i, struct ditto_sockopt *out)
{
	const struct dnode *e = elem_at(CNODE(n), "sockopts", i);

	if (!e || !out)
		return ditto_err(-EINVAL, "sockopts: no element %zu", i);
	out->level = dn_get_u64(e, "level");
	out->name = dn_get_u64(e, "name");
	out->value = dn_get_u64(e, "value");
	out->connections = dn_get_u64(e, "connections");
	out->calls = dn_get_u64(e, "calls");
	return 0;
}

static struct dnode *sockopt_probe(const struct ditto_sockopt *o)
{
	struct dnode *p = dn_new(DN_MAP);

	if (p && (dn_set_u64(p, "level", o->level) || dn_set_u64(p, "name", o->name) ||
		  dn_set_u64(p, "value", o->value))) {
		dn_free(p);
		return NULL;
	}
	return p;
}

/* Counts add up on an element of the same (level, name, value). */
DITTO_API int ditto_network_add_sockopt(struct ditto_network *n, const struct ditto_sockopt *o)
{
	struct dnode *p, *e;

	if (!o || o->level > INT32_MAX || o->name > INT32_MAX || o->value > INT32_MAX)
		return ditto_err(-EINVAL, "sockopts: level, name and value are ints >= 0");
	if (!n)
		return no_section("sockopts");
	p = sockopt_probe(o);
	if (!p)
		return nomem(0);
	e = elem_find(NODE(n), "sockopts", &schema_sockopt, p);
	if (e)
		dn_free(p);
	else if (!(e = elem_add(NODE(n), "sockopts", &schema_sockopt, p)))
		return nomem(0);
	if (dn_set_u64(e, "connections", dn_get_u64(e, "connections") + o->connections) ||
	    dn_set_u64(e, "calls", dn_get_u64(e, "calls") + o->calls))
		return nomem(0);
	return 0;
}

/* ---- syscalls ---- */

static struct dnode *syscall_probe(const char *thread_class, const char *name,
				   enum ditto_fd_kind fd)
{
	struct dnode *p = probe_str("thread_class", thread_class);

	if (!p)
		return NULL;
	if (!name || !*name) {
		dn_free(p);
		ditto_err(-EINVAL, "syscall name must not be empty");
		return NULL;
	}
	if (dn_set_str(p, "name", name) || set_enum(p, "fd_kind", enum_fd_kind, (int)fd)) {
		dn_free(p);
		return NULL;
	}
	return p;
}

DITTO_API size_t ditto_service_syscall_count(const struct ditto_service *s)
{
	return elem_count(CNODE(s), "syscalls");
}

DITTO_API struct ditto_syscall *ditto_service_syscall(const struct ditto_service *s, size_t i)
{
	return (struct ditto_syscall *)elem_at(CNODE(s), "syscalls", i);
}

DITTO_API struct ditto_syscall *ditto_service_find_syscall(const struct ditto_service *s,
							   const char *thread_class,
							   const char *name, enum ditto_fd_kind fd)
{
	struct dnode *p = syscall_probe(thread_class, name, fd), *e;

	e = p ? elem_find(CNODE(s), "syscalls", &schema_syscall, p) : NULL;
	dn_free(p);
	return (struct ditto_syscall *)e;
}

DITTO_API struct ditto_syscall *ditto_service_add_syscall(struct ditto_service *s,
							  const char *thread_class,
							  const char *name, enum ditto_fd_kind fd)
{
	return (struct ditto_syscall *)elem_add(NODE(s), "syscalls", &schema_syscall,
						syscall_probe(thread_class, name, fd));
}

KEY_STR(syscall, thread_class)
KEY_STR(syscall, name)

DITTO_API enum ditto_fd_kind ditto_syscall_fd_kind(const struct ditto_syscall *c)
{
	return (enum ditto_fd_kind)get_enum(CNODE(c), "fd_kind", enum_fd_kind);
}

U64_FIELD(syscall, nr)
U64_FIELD(syscall, calls)
U64_FIELD(syscall, errors)
U64_FIELD(syscall, sequential)
U64_FIELD(syscall, size_total)
U64_FIELD(syscall, ret_total)
U64_FIELD(syscall, iovecs_total)
HIST_FIELD(syscall, size, DITTO_HIST_LOG2)
HIST_FIELD(syscall, ret, DITTO_HIST_LOG2)
HIST_FIELD(syscall, flags, DITTO_HIST_EXACT)
HIST_FIELD(syscall, errnos, DITTO_HIST_EXACT)
HIST_FIELD(syscall, offset, DITTO_HIST_LOG2)
HIST_FIELD_AS(syscall, latency, "latency_ns", DITTO_HIST_LOGLIN)

/* ---- outbound ---- */

static struct dnode *outbound_probe(const char *address, uint16_t port)
{
	struct dnode *p = probe_str("address", address);

	if (p && !port) {
		ditto_err(-EINVAL, "outbound: port 0 names no endpoint");
		dn_free(p);
		return NULL;
	}
	if (p && dn_set_u64(p, "port", port)) {
		dn_free(p);
		return NULL;
	}
	return p;
}

DITTO_API size_t ditto_service_outbound_count(const struct ditto_service *s)
{
	return elem_count(CNODE(s), "outbound");
}

DITTO_API struct ditto_outbound *ditto_service_outbound(const struct ditto_service *s, size_t i)
{
	return (struct ditto_outbound *)elem_at(CNODE(s), "outbound", i);
}

DITTO_API struct ditto_outbound *ditto_service_find_outbound(const struct ditto_service *s,
							     const char *address, uint16_t port)
{
	struct dnode *p = outbound_probe(address, port), *e;

	e = p ? elem_find(CNODE(s), "outbound", &schema_outbound, p) : NULL;
	dn_free(p);
	return (struct ditto_outbound *)e;
}

DITTO_API struct ditto_outbound *ditto_service_add_outbound(struct ditto_service *s,
							    const char *address, uint16_t port)
{
	return (struct ditto_outbound *)elem_add(NODE(s), "outbound", &schema_outbound,
						 outbound_probe(address, port));
}

KEY_STR(outbound, address)

DITTO_API uint16_t ditto_outbound_port(const struct ditto_outbound *o)
{
	uint64_t p = dn_get_u64(CNODE(o), "port");

	return p <= 65535 ? (uint16_t)p : 0;
}

ENUM_FIELD(outbound, framing, framing, enum_framing)
U64_FIELD(outbound, connections)
U64_FIELD(outbound, calls)
U64_FIELD(outbound, sends)
U64_FIELD(outbound, receives)
U64_FIELD(outbound, request_bytes_total)
U64_FIELD(outbound, response_bytes_total)
HIST_FIELD(outbound, request_bytes, DITTO_HIST_LOG2)
HIST_FIELD(outbound, response_bytes, DITTO_HIST_LOG2)

/* ---- requests ---- */

SUB_MAP(service, requests, requests)

U64_FIELD(requests, count)
U64_FIELD(requests, connections)
U64_FIELD(requests, pipelined)
U64_FIELD(requests, request_bytes_total)
U64_FIELD(requests, response_bytes_total)
HIST_FIELD(requests, request_bytes, DITTO_HIST_LOG2)
HIST_FIELD(requests, response_bytes, DITTO_HIST_LOG2)
HIST_FIELD(requests, per_connection, DITTO_HIST_LOG2)
HIST_FIELD(requests, service_ns, DITTO_HIST_LOGLIN)
HIST_FIELD(requests, after_response_ns, DITTO_HIST_LOGLIN)

/* ---- cpu ---- */

DITTO_API size_t ditto_service_cpu_count(const struct ditto_service *s)
{
	return elem_count(CNODE(s), "cpu");
}

DITTO_API struct ditto_cpu *ditto_service_cpu(const struct ditto_service *s, size_t i)
{
	return (struct ditto_cpu *)elem_at(CNODE(s), "cpu", i);
}

DITTO_API struct ditto_cpu *ditto_service_find_cpu(const struct ditto_service *s,
						   const char *thread_class)
{
	struct dnode *p = probe_str("thread_class", thread_class), *e;

	e = p ? elem_find(CNODE(s), "cpu", &schema_cpu, p) : NULL;
	dn_free(p);
	return (struct ditto_cpu *)e;
}

DITTO_API struct ditto_cpu *ditto_service_add_cpu(struct ditto_service *s, const char *thread_class)
{
	return (struct ditto_cpu *)elem_add(NODE(s), "cpu", &schema_cpu,
					    probe_str("thread_class", thread_class));
}

KEY_STR(cpu, thread_class)
U64_FIELD(cpu, windows)
U64_FIELD(cpu, instructions)
U64_FIELD(cpu, undecoded)
U64_FIELD(cpu, loads)
U64_FIELD(cpu, stores)
U64_FIELD(cpu, chased_loads)
U64_FIELD(cpu, dws_cold)
U64_FIELD(cpu, iws_cold)
U64_FIELD(cpu, jit_instructions)
U64_FIELD(cpu, stepped_ns)
HIST_FIELD(cpu, insts_per_request, DITTO_HIST_LOG2)
HIST_FIELD(cpu, branches, DITTO_HIST_EXACT)
HIST_FIELD(cpu, dws, DITTO_HIST_LOG2)
HIST_FIELD(cpu, iws, DITTO_HIST_LOG2)
HIST_FIELD(cpu, raw, DITTO_HIST_LOG2)
HIST_FIELD(cpu, war, DITTO_HIST_LOG2)
HIST_FIELD(cpu, waw, DITTO_HIST_LOG2)
HIST_FIELD(cpu, mem_raw, DITTO_HIST_LOG2)

SUB_MAP(cpu, mix, counts)
SUB_MAP(cpu, stepping, counts)

struct ditto_cpu *model_main_cpu(const struct ditto_service *s)
{
	struct ditto_cpu *best = NULL;

	for (size_t i = 0; i < ditto_service_cpu_count(s); i++) {
		struct ditto_cpu *c = ditto_service_cpu(s, i);

		if (!best || ditto_cpu_instructions(c) > ditto_cpu_instructions(best))
			best = c;
	}
	return best;
}

/* ---- observed ---- */

SUB_MAP(service, observed, observed)

F64_FIELD(observed, throughput_qps)

static struct dnode *load_probe(double qps)
{
	struct dnode *p;

	if (check_f64("qps", qps))
		return NULL;
	p = dn_new(DN_MAP);
	if (p && dn_set_f64(p, "qps", qps)) {
		dn_free(p);
		return NULL;
	}
	return p;
}

DITTO_API size_t ditto_observed_load_count(const struct ditto_observed *o)
{
	return elem_count(CNODE(o), "loads");
}

DITTO_API struct ditto_load_point *ditto_observed_load(const struct ditto_observed *o, size_t i)
{
	return (struct ditto_load_point *)elem_at(CNODE(o), "loads", i);
}

DITTO_API struct ditto_load_point *ditto_observed_find_load(const struct ditto_observed *o,
							    double qps)
{
	struct dnode *p = load_probe(qps), *e;

	e = p ? elem_find(CNODE(o), "loads", &schema_load_point, p) : NULL;
	dn_free(p);
	return (struct ditto_load_point *)e;
}

DITTO_API struct ditto_load_point *ditto_observed_add_load(struct ditto_observed *o, double qps)
{
	return (struct ditto_load_point *)elem_add(NODE(o), "loads", &schema_load_point,
						   load_probe(qps));
}

DITTO_API double ditto_load_point_qps(const struct ditto_load_point *p)
{
	return dn_get_f64(CNODE(p), "qps");
}

F64_FIELD(load_point, achieved_qps)
U64_FIELD(load_point, connections)

HIST_FIELD_AS(load_point, latency, "latency_ns", DITTO_HIST_LOGLIN)

static const char *const counter_fields[] = { "cycles", "instructions", "branches",
					      "branch_misses", "l1i_misses", "l1d_misses",
					      "l2_misses", "llc_misses" };

DITTO_API bool ditto_observed_counters_available(const struct ditto_observed *o)
{
	return dn_get_bool(dn_get(CNODE(o), "counters"), "available");
}

DITTO_API int ditto_observed_set_counters_available(struct ditto_observed *o, bool v)
{
	struct dnode *c;

	if (!o)
		return no_section("counters.available");
	c = dn_child(NODE(o), "counters", DN_MAP);
	return c ? dn_set_bool(c, "available", v) : nomem(0);
}

DITTO_API uint64_t ditto_observed_counter(const struct ditto_observed *o, enum ditto_counter c)
{
	if ((unsigned)c >= ARRAY_SIZE(counter_fields))
		return 0;
	return dn_get_u64(dn_get(CNODE(o), "counters"), counter_fields[c]);
}

DITTO_API int ditto_observed_set_counter(struct ditto_observed *o, enum ditto_counter c, uint64_t v)
{
	struct dnode *n;

	if ((unsigned)c >= ARRAY_SIZE(counter_fields))
		return ditto_err(-EINVAL, "counter %d is not valid", (int)c);
	if (!o)
		return no_section(counter_fields[c]);
	n = dn_child(NODE(o), "counters", DN_MAP);
	return n ? dn_set_u64(n, counter_fields[c], v) : nomem(0);
}

/* ---- graph ---- */

DITTO_API size_t ditto_graph_node_count(const struct ditto_graph *g)
{
	return elem_count(CNODE(g), "nodes");
}

DITTO_API const char *ditto_graph_node(const struct ditto_graph *g, size_t i)
{
	return list_str(CNODE(g), "nodes", i);
}

DITTO_API int ditto_graph_add_node(struct ditto_graph *g, const char *name)
{
	if (!name || !*name)
		return ditto_err(-EINVAL, "graph.nodes: name must not be empty");
	return list_add(NODE(g), "nodes", dn_cstr(name));
}

static struct dnode *edge_probe(const char *from, const char *to)
{
	struct dnode *p = probe_str("from", from);

	if (!p)
		return NULL;
	if (!to || !*to) {
		dn_free(p);
		ditto_err(-EINVAL, "edge 'to' must not be empty");
		return NULL;
	}
	if (dn_set_str(p, "to", to)) {
		dn_free(p);
		return NULL;
	}
	return p;
}

DITTO_API size_t ditto_graph_edge_count(const struct ditto_graph *g)
{
	return elem_count(CNODE(g), "edges");
}

DITTO_API struct ditto_edge *ditto_graph_edge(const struct ditto_graph *g, size_t i)
{
	return (struct ditto_edge *)elem_at(CNODE(g), "edges", i);
}

static struct dnode *source_edge_probe(enum ditto_edge_source src, const char *from,
				       const char *to)
{
	struct dnode *p;

	if ((int)src < 0 || (int)src > DITTO_EDGE_TRACES) {
		ditto_err(-EINVAL, "edge source %d is out of range", (int)src);
		return NULL;
	}
	p = edge_probe(from, to);
	/* A kernel edge carries no source field: files from before the
	 * field read the same. */
	if (p && src != DITTO_EDGE_KERNEL && dn_set_str(p, "source", enum_edge_source[src])) {
		dn_free(p);
		return NULL;
	}
	return p;
}

DITTO_API struct ditto_edge *ditto_graph_find_source_edge(const struct ditto_graph *g,
							  enum ditto_edge_source src,
							  const char *from, const char *to)
{
	struct dnode *p = source_edge_probe(src, from, to), *e;

	e = p ? elem_find(CNODE(g), "edges", &schema_edge, p) : NULL;
	dn_free(p);
	return (struct ditto_edge *)e;
}

DITTO_API struct ditto_edge *ditto_graph_add_source_edge(struct ditto_graph *g,
							 enum ditto_edge_source src,
							 const char *from, const char *to)
{
	return (struct ditto_edge *)elem_add(NODE(g), "edges", &schema_edge,
					     source_edge_probe(src, from, to));
}

DITTO_API struct ditto_edge *ditto_graph_find_edge(const struct ditto_graph *g, const char *from,
						   const char *to)
{
	return ditto_graph_find_source_edge(g, DITTO_EDGE_KERNEL, from, to);
}

DITTO_API struct ditto_edge *ditto_graph_add_edge(struct ditto_graph *g, const char *from,
						  const char *to)
{
	return ditto_graph_add_source_edge(g, DITTO_EDGE_KERNEL, from, to);
}

DITTO_API enum ditto_edge_source ditto_edge_source(const struct ditto_edge *e)
{
	int i = enum_index(enum_edge_source, dn_get_str(CNODE(e), "source"));

	return i > 0 ? (enum ditto_edge_source)i : DITTO_EDGE_KERNEL;
}

KEY_STR(edge, from)
KEY_STR(edge, to)
ENUM_FIELD(edge, mode, call_mode, enum_call_mode)
ENUM_FIELD(edge, order, call_order, enum_call_order)
U64_FIELD(edge, calls)
U64_FIELD(edge, parent_requests)
U64_FIELD(edge, ambiguous)
U64_FIELD(edge, unattributed)
HIST_FIELD(edge, fanout, DITTO_HIST_EXACT)
HIST_FIELD(edge, request_bytes, DITTO_HIST_LOG2)
HIST_FIELD(edge, response_bytes, DITTO_HIST_LOG2)
HIST_FIELD(edge, latency_ns, DITTO_HIST_LOGLIN)

/* ---- graph.externals ---- */

DITTO_API size_t ditto_graph_external_count(const struct ditto_graph *g)
{
	return elem_count(CNODE(g), "externals");
}

DITTO_API struct ditto_external *ditto_graph_external(const struct ditto_graph *g, size_t i)
{
	return (struct ditto_external *)elem_at(CNODE(g), "externals", i);
}

DITTO_API struct ditto_external *ditto_graph_find_external(const struct ditto_graph *g,
							   const char *name)
{
	struct dnode *p = probe_str("name", name), *e;

	e = p ? elem_find(CNODE(g), "externals", &schema_external, p) : NULL;
	dn_free(p);
	return (struct ditto_external *)e;
}

DITTO_API struct ditto_external *ditto_graph_add_external(struct ditto_graph *g, const char *name)
{
	return (struct ditto_external *)elem_add(NODE(g), "externals", &schema_external,
						 probe_str("name", name));
}

KEY_STR(external, name)
STR_FIELD(external, address)
U64_FIELD(external, port)
ENUM_FIELD(external, framing, framing, enum_framing)

/* ---- graph.traces ---- */

SUB_MAP(graph, traces, traces)
U64_FIELD(traces, files)
U64_FIELD(traces, spans)
U64_FIELD(traces, traces)
U64_FIELD(traces, orphan_spans)
U64_FIELD(traces, rejected_spans)
F64_FIELD(traces, sample_ratio)
BOOL_FIELD(traces, corrected)

/* ---- tuning ---- */

SUB_MAP(tuning, knobs, values)

DITTO_API size_t ditto_tuning_iteration_count(const struct ditto_tuning *t)
{
	return elem_count(CNODE(t), "iterations");
}

DITTO_API struct ditto_tuning_iter *ditto_tuning_iteration(const struct ditto_tuning *t, size_t i)
{
	return (struct ditto_tuning_iter *)elem_at(CNODE(t), "iterations", i);
}

DITTO_API struct ditto_tuning_iter *ditto_tuning_add_iteration(struct ditto_tuning *t)
{
	size_t n = ditto_tuning_iteration_count(t);
	uint64_t next = n ? dn_get_u64(elem_at(NODE(t), "iterations", n - 1), "index") + 1 : 1;
	struct dnode *p = dn_new(DN_MAP);

	if (p && dn_set_u64(p, "index", next)) {
		dn_free(p);
		return NULL;
	}
	return (struct ditto_tuning_iter *)elem_add(NODE(t), "iterations", &schema_iteration, p);
}

DITTO_API uint64_t ditto_tuning_iter_index(const struct ditto_tuning_iter *it)
{
	return dn_get_u64(CNODE(it), "index");
}

BOOL_FIELD(tuning_iter, accepted)
STR_FIELD(tuning_iter, note)

SUB_MAP(tuning_iter, knobs, values)
SUB_MAP(tuning_iter, errors, values)
