/* SPDX-License-Identifier: MIT */
/*
 * Where the clone's children are and how their calls went: each child's
 * address from --upstream NAME=HOST:PORT or DITTO_UPSTREAM_<ENVNAME>
 * (the command line wins), resolved with getaddrinfo at start and again
 * after a connection to it failed (a child that moved or restarted is
 * found), and its counters, printed at exit one line per child.
 */
#include "rt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A failed child is resolved again at most this often. */
#define RESOLVE_AGAIN_NS 1000000000ull

struct child {
	const char *spec;	/* HOST:PORT as given; NULL: none */
	char host[256], port[8];
	pthread_mutex_t lock;	/* the address below */
	struct sockaddr_storage addr;
	socklen_t addrlen;	/* 0: not resolved */
	atomic_bool stale;	/* a connection failed: resolve before the next */
	uint64_t resolved_ns;
	atomic_uint_fast64_t count[RT_UP_NCOUNTS];
};

static struct child *children;

/* "HOST:PORT" or "[V6]:PORT" into c's host and port; -1 if malformed. */
static int split(const char *spec, struct child *c)
{
	const char *colon = strrchr(spec, ':'), *h = spec;
	size_t hl;
	char *end;
	long port;

	if (!colon)
		return -1;
	hl = (size_t)(colon - spec);
	if (*h == '[') {
		if (hl < 3 || colon[-1] != ']')
			return -1;
		h++;
		hl -= 2;
	} else if (memchr(h, ':', hl)) {
		return -1;	/* a bare IPv6 literal is ambiguous: brackets */
	}
	port = strtol(colon + 1, &end, 10);
	if (!hl || hl >= sizeof(c->host) || *end || end == colon + 1 || port < 1 || port > 65535)
		return -1;
	memcpy(c->host, h, hl);
	c->host[hl] = '\0';
	snprintf(c->port, sizeof(c->port), "%ld", port);
	return 0;
}

/* The --upstream argument for child `name`: the last one given wins. */
static const char *from_args(const char *name)
{
	size_t nl = strlen(name);
	const char *found = NULL;

	for (unsigned i = 0; i < rt_opts.nupstream_args; i++) {
		const char *a = rt_opts.upstream_args[i];

		if (!strncmp(a, name, nl) && a[nl] == '=')
			found = a + nl + 1;
	}
	return found;
}

/* Each --upstream must name a child: a typo would otherwise leave the
 * child unconfigured with no word said about the argument. */
static int check_args(void)
{
	for (unsigned i = 0; i < rt_opts.nupstream_args; i++) {
		const char *a = rt_opts.upstream_args[i], *eq = strchr(a, '=');
		bool known = false;

		for (unsigned j = 0; eq && j < rt_config.nupstreams; j++)
			known |= strlen(rt_config.upstreams[j].name) == (size_t)(eq - a) &&
				 !strncmp(rt_config.upstreams[j].name, a, (size_t)(eq - a));
		if (!known) {
			rt_err(0, "--upstream %s: this service calls no child of that name", a);
			return -1;
		}
	}
	return 0;
}

/* Called with c->lock held. */
static void resolve(struct child *c, unsigned i)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
	int rc = getaddrinfo(c->host, c->port, &hints, &res);

	c->resolved_ns = rt_now_ns();
	if (rc || !res || res->ai_addrlen > sizeof(c->addr)) {
		if (!c->addrlen)
			rt_err(0, "upstream %s: cannot resolve %s: %s (tried again on its calls)",
			       rt_config.upstreams[i].name, c->host, rc ? gai_strerror(rc) : "no address");
		freeaddrinfo(res);
		return;
	}
	memcpy(&c->addr, res->ai_addr, res->ai_addrlen);
	c->addrlen = res->ai_addrlen;
	atomic_store(&c->stale, false);
	freeaddrinfo(res);
}

int rt_upstream_init(void)
{
	unsigned n = rt_config.nupstreams;

	if (rt_opts.nupstream_args && check_args())
		return -1;
	if (!n)
		return 0;
	children = calloc(n, sizeof(*children));
	if (!children) {
		rt_err(ENOMEM, "%u upstreams", n);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct rt_upstream *u = &rt_config.upstreams[i];
		struct child *c = &children[i];
		const char *spec = from_args(u->name);

		pthread_mutex_init(&c->lock, NULL);
		atomic_init(&c->stale, false);
		for (int k = 0; k < RT_UP_NCOUNTS; k++)
			atomic_init(&c->count[k], 0);
		if (!spec && u->env)
			spec = getenv(u->env);
		if (!spec || !*spec) {
			rt_err(0, "upstream %s: no address (--upstream %s=HOST:PORT or %s): its calls "
			       "are skipped", u->name, u->name, u->env ? u->env : "");
			continue;
		}
		if (split(spec, c)) {
			rt_err(0, "upstream %s: '%s' is not HOST:PORT ([V6]:PORT for IPv6)", u->name, spec);
			return -1;
		}
		c->spec = spec;
		resolve(c, i);
	}
	return 0;
}

bool rt_upstream_configured(unsigned i)
{
	return children && children[i].spec;
}

void rt_upstream_failed(unsigned i)
{
	if (rt_upstream_configured(i))
		atomic_store(&children[i].stale, true);
}

void rt_upstream_count(unsigned i, enum rt_up_count what)
{
	if (children)
		atomic_fetch_add_explicit(&children[i].count[what], 1, memory_order_relaxed);
}

/* The address to connect to, resolved again when stale (rate-limited). */
static socklen_t address(unsigned i, struct sockaddr_storage *out)
{
	struct child *c = &children[i];
	socklen_t len;

	pthread_mutex_lock(&c->lock);
	if (!c->addrlen || (atomic_load(&c->stale) && rt_now_ns() - c->resolved_ns > RESOLVE_AGAIN_NS))
		resolve(c, i);
	len = c->addrlen;
	memcpy(out, &c->addr, sizeof(*out));
	pthread_mutex_unlock(&c->lock);
	return len;
}

int rt_upstream_connect(unsigned i)
{
	struct sockaddr_storage a;
	socklen_t len;
	int fd, one = 1;

	if (!rt_upstream_configured(i) || !(len = address(i, &a))) {
		errno = ENOENT;
		return -1;
	}
	fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, len) && errno != EINPROGRESS) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

uint16_t rt_upstream_port(unsigned i)
{
	return children && i < rt_config.nupstreams && children[i].spec ?
		(uint16_t)atoi(children[i].port) : 0;
}

/* One write per line: the processes of a pre-forked clone report as they
 * stop, all at once, and lines written in pieces interleaved (a test
 * found no whole line of either). */
void rt_upstream_report(void)
{
	for (unsigned i = 0; children && i < rt_config.nupstreams; i++) {
		struct child *c = &children[i];
		char line[512];
		int n = snprintf(line, sizeof(line), "clone: upstream %.256s: calls %llu, errors %llu, "
				 "timeouts %llu, skipped %llu\n", rt_config.upstreams[i].name,
				 (unsigned long long)atomic_load(&c->count[RT_UP_CALLS]),
				 (unsigned long long)atomic_load(&c->count[RT_UP_ERRORS]),
				 (unsigned long long)atomic_load(&c->count[RT_UP_TIMEOUTS]),
				 (unsigned long long)atomic_load(&c->count[RT_UP_SKIPPED]));

		if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof(line) ?
				   (size_t)n : sizeof(line) - 1) < 0)
			return;
	}
}
