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

#include "graph_manifest.h"
#include "graph_run.h"
#include "synth_int.h"

#include <ditto/synth.h>

extern char **environ;

/* The manifest, checked (graph_manifest_read.c); the clones' ports are
 * changed here when one is taken. */
struct upctx {
	struct ditto_synth_run *r;
	struct graph_manifest g;
	double ready_s, max_s;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

	for (size_t i = 0; i < c->g.n; i++) {
		struct manifest_node *u = &c->g.nodes[i];
		unsigned want;

		if (u->kept)
			continue;
		want = base ? base + (unsigned)ci++ : u->port;
		if (want > 65535)
			return ditto_err(-EINVAL, "up: --port-base %u leaves no port for '%s'", base,
					 u->name);
		u->port = want;
		if (!want || !port_free(want)) {
			for (size_t j = 0; j < i; j++)
				used[nu++] = c->g.nodes[j].port;
			if (!(u->port = synth_free_port(used, nu)))
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
static char **tier_env(const struct upctx *c, const struct manifest_node *u)
{
	size_t n = 0, k = 0, nu = u->n_upstreams;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + nu + 1, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "DITTO_UPSTREAM_", 15))
			env[k++] = environ[i];
	for (size_t i = 0; i < nu; i++) {
		const struct manifest_node *ch = &c->g.nodes[u->upstreams[i]];
		char val[GRAPH_ADDR_MAX];

		if (ch->kept)
			snprintf(val, sizeof(val), "%s", ch->address);
		else
			snprintf(val, sizeof(val), "127.0.0.1:%u", ch->port);
		if (!(env[k] = malloc(strlen(ch->env) + strlen(val) + 2))) {
			free_env(env);
			return NULL;
		}
		sprintf(env[k++], "%s=%s", ch->env, val);
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

static int start_tier(struct upctx *c, const struct manifest_node *u)
{
	struct ditto_synth_run *r = c->r;
	struct tier *t = &r->t[r->n];
	char port[16], max[32], cwd[PATH_MAX], log[PATH_MAX], **env;
	char *argv[] = { "clone", "--port", port, "--max-seconds", max, NULL };
	pid_t pid, runner = getpid();

	snprintf(t->name, sizeof(t->name), "%s", u->name);
	/* A clone's directory is its name (the reader holds "dir" to it). */
	if (snprintf(cwd, sizeof(cwd), "%s/%s", r->dir, u->name) >= (int)sizeof(cwd) ||
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
 * too, pids are reused) means the graph is up: refuse. A stale or
 * unreadable up.json is removed (said so when unreadable). */
static int check_not_up(const char *up_json)
{
	struct up_state *s;
	bool up;
	pid_t runner;

	if (access(up_json, F_OK))
		return 0;
	if (!(s = malloc(sizeof(*s))))	/* PATH_MAX per tier: not on the stack */
		return ditto_err(-ENOMEM, "up: out of memory");
	if (up_json_read(up_json, s)) {
		ditto_warn("up: %s removed: %s", up_json, ditto_last_error());
		free(s);
		unlink(up_json);
		return 0;
	}
	runner = s->runner;
	up = s->runner_ticks && proc_start_ticks(runner) == s->runner_ticks;
	free(s);
	if (up)
		return ditto_err(-EBUSY, "up: %s says the graph is already up (runner pid %d): "
				 "`ditto down` it first", up_json, (int)runner);
	unlink(up_json);
	return 0;
}

static int start_all(struct upctx *c)
{
	const struct manifest_node *f = &c->g.nodes[c->g.front];
	int err;

	snprintf(c->r->front, sizeof(c->r->front), "127.0.0.1:%u", f->port);
	for (size_t i = 0; i < c->g.n_order; i++) {
		if ((err = start_tier(c, &c->g.nodes[c->g.order[i]])) ||
		    (err = wait_ready(c, &c->r->t[c->r->n - 1])) || (err = run_write_up_json(c->r)))
			return err;
	}
	return 0;
}

DITTO_API int ditto_synth_up(const char *dir, const struct ditto_synth_up_opts *opts,
			     struct ditto_synth_run **out)
{
	struct upctx c = { 0 };
	char logs[PATH_MAX];
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
	    snprintf(logs, sizeof(logs), "%s/logs", c.r->dir) >= PATH_MAX) {
		err = ditto_err(-ENAMETOOLONG, "up: %s: path too long", dir);
		goto out;
	}
	if ((err = check_not_up(c.r->up_json)) || (err = graph_manifest_read(c.r->dir, &c.g)) ||
	    (err = choose_ports(&c, OPTS_GET(opts, port_base, 0))))
		goto out;
	if (mkdir(logs, 0755) && errno != EEXIST) {
		err = ditto_err(-errno, "up: %s: %s", logs, strerror(errno));
		goto out;
	}
	err = start_all(&c);
out:
	graph_manifest_free(&c.g);
	if (err) {
		run_stop_all(c.r, true);
		free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}
