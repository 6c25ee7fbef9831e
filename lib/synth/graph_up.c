/* SPDX-License-Identifier: MIT */
/*
 * ditto_synth_up(): start the clone tiers of a graph tree on 127.0.0.1,
 * leaves first, each told its children's addresses through
 * DITTO_UPSTREAM_<NAME>, and wait until each says "ready" and accepts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "graph_json.h"
#include "graph_run.h"
#include "synth_int.h"

#include <ditto/synth.h>

extern char **environ;

struct upnode {
	const char *name, *dir, *address;
	bool clone;
	unsigned port;
	const struct jval *upstreams;
};

struct upctx {
	struct ditto_synth_run *r;
	struct upnode nodes[GRAPH_NODES_MAX];
	size_t n;
	double ready_s, max_s;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static ssize_t find(const struct upctx *c, const char *name)
{
	for (size_t i = 0; name && i < c->n; i++)
		if (!strcmp(c->nodes[i].name, name))
			return (ssize_t)i;
	return -1;
}

static int read_nodes(struct upctx *c, const struct jval *g, const char *path)
{
	const struct jval *nodes = gjson_get(g, "nodes");

	if (!nodes || nodes->t != J_ARR || !nodes->n || nodes->n > GRAPH_NODES_MAX)
		return ditto_err(-DITTO_ECORRUPT, "%s: nodes is not an array of 1 to %d nodes", path,
				 GRAPH_NODES_MAX);
	for (size_t i = 0; i < nodes->n; i++) {
		const struct jval *j = &nodes->items[i];
		struct upnode *u = &c->nodes[c->n++];
		const char *kind = gjson_str(j, "kind");
		double port = gjson_num(j, "port", -1);

		u->name = gjson_str(j, "name");
		u->dir = gjson_str(j, "dir");
		u->address = gjson_str(j, "address");
		u->clone = kind && !strcmp(kind, "clone");
		u->upstreams = gjson_get(j, "upstreams");
		if (!u->name || !graph_name_ok(u->name) || find(c, u->name) != (ssize_t)c->n - 1)
			return ditto_err(-DITTO_ECORRUPT, "%s: node %zu has no name, a name outside "
					 "[A-Za-z0-9._-] or the name of another node", path, i);
		if (!kind || (!u->clone && strcmp(kind, "kept")) ||
		    (u->clone && (!u->dir || !graph_name_ok(u->dir))) || (!u->clone && !u->address) ||
		    port < 0 || port > 65535 || (u->upstreams && u->upstreams->t != J_ARR))
			return ditto_err(-DITTO_ECORRUPT, "%s: node '%s': kind, dir, address, port "
					 "or upstreams is not as graph.json has them", path, u->name);
		u->port = (unsigned)port;
	}
	return 0;
}

/* Whether a listener could bind 127.0.0.1:port now (as the clone binds:
 * SO_REUSEADDR, so a connection in TIME_WAIT does not count). */
static bool port_free(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	bool ok;

	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = !bind(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

static int choose_ports(struct upctx *c, unsigned base)
{
	unsigned used[GRAPH_NODES_MAX];
	size_t nu = 0, ci = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct upnode *u = &c->nodes[i];
		unsigned want;

		if (!u->clone)
			continue;
		want = base ? base + (unsigned)ci++ : u->port;
		if (want > 65535)
			return ditto_err(-EINVAL, "up: --port-base %u leaves no port for '%s'", base,
					 u->name);
		u->port = want;
		if (!want || !port_free(want)) {
			for (size_t j = 0; j < i; j++)
				used[nu++] = c->nodes[j].port;
			if (!(u->port = graph_free_port(used, nu)))
				return ditto_err(-EADDRNOTAVAIL, "up: no free port for '%s'", u->name);
			nu = 0;
			ditto_warn("up: port %u of tier '%s' is taken on 127.0.0.1: it listens on %u "
				   "instead (its callers are told)", want, u->name, u->port);
		}
	}
	return 0;
}

/* The DITTO_UPSTREAM_ entries are ours (the inherited ones were left
 * out); the others are the caller's environ. */
static void free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], "DITTO_UPSTREAM_", 15))
			free(env[i]);
	free(env);
}

/* The environment of tier k: the caller's, without DITTO_UPSTREAM_*, and
 * one DITTO_UPSTREAM_<NAME>=HOST:PORT per upstream. Built before fork:
 * the child only calls execve. */
static char **tier_env(const struct upctx *c, const struct upnode *u)
{
	size_t n = 0, k = 0, nu = u->upstreams ? u->upstreams->n : 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + nu + 1, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "DITTO_UPSTREAM_", 15))
			env[k++] = environ[i];
	for (size_t i = 0; i < nu; i++) {
		const struct jval *j = &u->upstreams->items[i];
		ssize_t ch = j->t == J_STR ? find(c, j->str) : -1;
		char var[GRAPH_NAME_MAX + 16], val[GRAPH_ADDR_MAX];

		if (ch < 0) {
			ditto_warn("up: tier '%s': upstream %zu names no node: left out", u->name, i);
			continue;
		}
		graph_env_name(c->nodes[ch].name, var, sizeof(var));
		if (c->nodes[ch].clone)
			snprintf(val, sizeof(val), "127.0.0.1:%u", c->nodes[ch].port);
		else
			snprintf(val, sizeof(val), "%s", c->nodes[ch].address);
		if (!(env[k] = malloc(strlen(var) + strlen(val) + 2))) {
			free_env(env);
			return NULL;
		}
		sprintf(env[k++], "%s=%s", var, val);
	}
	return env;
}

/* In the child: its own group (the graph's), dead with its runner, output
 * to the log, nothing else inherited, then the clone. */
static void child(const struct ditto_synth_run *r, const struct tier *t, const char *cwd,
		  pid_t runner, char **argv, char **env)
{
	int fd;

	setpgid(0, r->pgid);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != runner)
		_exit(125);
	fd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(cwd))
		_exit(126);
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		dup2(fd, 0);
	for (int i = 3; i < 1024; i++)
		close(i);
	execve(t->exe, argv, env);
	_exit(127);
}

static bool log_says_ready(const char *log)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(log, "re");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return !strncmp(buf, "ready\n", 6) || strstr(buf, "\nready\n");
}

static bool accepts(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

static int wait_ready(struct upctx *c, struct tier *t)
{
	double end = now_s() + c->ready_s;
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	int err;

	while (now_s() < end) {
		if ((err = run_check(c->r)))
			return err;
		if (log_says_ready(t->log) && accepts(t->port))
			return 0;
		nanosleep(&tick, NULL);
	}
	run_stop_all(c->r, true);
	return ditto_err(-ETIMEDOUT, "up: tier '%s' was not ready on 127.0.0.1:%u within %.1f s "
			 "(see %s); the other tiers were stopped", t->name, t->port, c->ready_s,
			 t->log);
}

static int start_tier(struct upctx *c, const struct upnode *u)
{
	struct ditto_synth_run *r = c->r;
	struct tier *t = &r->t[r->n];
	char port[16], max[32], cwd[PATH_MAX], log[PATH_MAX], **env;
	char *argv[] = { "clone", "--port", port, "--max-seconds", max, NULL };
	pid_t pid, runner = getpid();

	snprintf(t->name, sizeof(t->name), "%s", u->name);
	if (snprintf(cwd, sizeof(cwd), "%s/%s", r->dir, u->dir) >= (int)sizeof(cwd) ||
	    snprintf(t->exe, sizeof(t->exe), "%s/clone", cwd) >= (int)sizeof(t->exe) ||
	    snprintf(log, sizeof(log), "%s/logs/%s.log", r->dir, u->name) >= (int)sizeof(log))
		return ditto_err(-ENAMETOOLONG, "up: %s: path too long", r->dir);
	memcpy(t->log, log, sizeof(log));
	snprintf(port, sizeof(port), "%u", u->port);
	snprintf(max, sizeof(max), "%.0f", c->max_s + 5);
	if (c->max_s <= 0)
		argv[3] = NULL;
	t->port = u->port;
	if (access(t->exe, X_OK))
		return ditto_err(-ENOENT, "up: %s is not built (ditto synth builds it, or "
				 "ditto_synth_graph_build())", t->exe);
	if (!(env = tier_env(c, u)))
		return ditto_err(-ENOMEM, "up: out of memory");
	pid = fork();
	if (pid == 0)
		child(r, t, cwd, runner, argv, env);
	free_env(env);
	if (pid < 0)
		return ditto_err(-errno, "up: fork: %s", strerror(errno));
	if (!r->pgid)
		r->pgid = pid;
	setpgid(pid, r->pgid);	/* also here: whichever runs first */
	t->pid = pid;
	t->start_ticks = proc_start_ticks(pid);
	r->n++;
	return 0;
}

/* A runner alive behind an up.json (the same process: its start time
 * too, pids are reused) means the graph is up: refuse. */
static int check_not_up(const char *up_json)
{
	struct jval j;
	double runner, ticks;

	if (access(up_json, F_OK) || gjson_load(up_json, &j))
		return 0;
	runner = gjson_num(&j, "runner", 0);
	ticks = gjson_num(&j, "runner_start_ticks", 0);
	gjson_free(&j);
	if (runner > 0 && runner < 1e9 && ticks > 0 &&
	    proc_start_ticks((pid_t)runner) == (unsigned long long)ticks)
		return ditto_err(-EBUSY, "up: %s says the graph is already up (runner pid %.0f): "
				 "`ditto down` it first", up_json, runner);
	unlink(up_json);
	return 0;
}

static int start_all(struct upctx *c, const struct jval *g, const char *path)
{
	const struct jval *order = gjson_get(g, "start_order");
	const char *front = gjson_str(g, "front");
	ssize_t f = find(c, front);
	int err;

	if (!order || order->t != J_ARR || f < 0 || !c->nodes[f].clone)
		return ditto_err(-DITTO_ECORRUPT, "%s: no start_order, or front is no clone node",
				 path);
	snprintf(c->r->front, sizeof(c->r->front), "127.0.0.1:%u", c->nodes[f].port);
	for (size_t i = 0; i < order->n; i++) {
		ssize_t k = order->items[i].t == J_STR ? find(c, order->items[i].str) : -1;

		if (k < 0)
			return ditto_err(-DITTO_ECORRUPT, "%s: start_order[%zu] names no node", path, i);
		if (!c->nodes[k].clone)
			continue;
		if ((err = start_tier(c, &c->nodes[k])) || (err = wait_ready(c, &c->r->t[c->r->n - 1])) ||
		    (err = run_write_up_json(c->r)))
			return err;
	}
	return 0;
}

DITTO_API int ditto_synth_up(const char *dir, const struct ditto_synth_up_opts *opts,
			     struct ditto_synth_run **out)
{
	struct upctx c = { 0 };
	char path[PATH_MAX], logs[PATH_MAX];
	struct jval g = { 0 };
	int err = OPTS_CHECK(opts, ditto_synth_up_opts);

	if (err)
		return err;
	if (!dir || !out)
		return ditto_err(-EINVAL, "up: a graph tree and an out pointer are needed");
	*out = NULL;
	if (!(c.r = calloc(1, sizeof(*c.r))))
		return ditto_err(-ENOMEM, "up: out of memory");
	c.ready_s = OPTS_GET(opts, ready_timeout_s, 0) > 0 ? OPTS_GET(opts, ready_timeout_s, 0) : 10;
	c.max_s = OPTS_GET(opts, max_seconds, 0);
	c.r->grace_s = OPTS_GET(opts, grace_s, 0) > 0 ? OPTS_GET(opts, grace_s, 0) : 3;
	if (!realpath(dir, c.r->dir)) {
		err = ditto_err(-errno, "up: %s: %s", dir, strerror(errno));
		goto out;
	}
	if (snprintf(c.r->up_json, sizeof(c.r->up_json), "%s/up.json", c.r->dir) >= PATH_MAX ||
	    snprintf(path, sizeof(path), "%s/graph.json", c.r->dir) >= PATH_MAX ||
	    snprintf(logs, sizeof(logs), "%s/logs", c.r->dir) >= PATH_MAX) {
		err = ditto_err(-ENAMETOOLONG, "up: %s: path too long", dir);
		goto out;
	}
	if ((err = check_not_up(c.r->up_json)) || (err = gjson_load(path, &g)) ||
	    (err = read_nodes(&c, &g, path)) || (err = choose_ports(&c, OPTS_GET(opts, port_base, 0))))
		goto out;
	if (mkdir(logs, 0755) && errno != EEXIST) {
		err = ditto_err(-errno, "up: %s: %s", logs, strerror(errno));
		goto out;
	}
	err = start_all(&c, &g, path);
out:
	gjson_free(&g);
	if (err) {
		run_stop_all(c.r, true);
		free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}
