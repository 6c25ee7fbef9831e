/* SPDX-License-Identifier: MIT */
/*
 * Which services to profile when the user names no pid: the processes of
 * a cgroup (a container, a pod), or every process listening on given TCP
 * ports (or on any). Processes group into services by process tree: the
 * roots are the processes whose parent is not in the set, so a master and
 * its workers are one service.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_int.h"

#define MAX_CANDIDATES 4096

struct pidset {
	pid_t *p;
	size_t n;
};

static bool in_set(const struct pidset *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i] == pid)
			return true;
	return false;
}

static int set_add(struct pidset *s, pid_t pid)
{
	/* Never the profiler, nor a process it runs under. */
	if (in_set(s, pid) || pid == getpid() || proc_descends(getpid(), pid))
		return 0;
	if (s->n == MAX_CANDIDATES)
		return ditto_err(-E2BIG, "discover: more than %d processes", MAX_CANDIDATES);
	s->p[s->n++] = pid;
	return 0;
}

static bool has_ancestor_in(const struct pidset *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i] != pid && proc_descends(pid, s->p[i]))
			return true;
	return false;
}

/* cgroup v2: the path as given, or under /sys/fs/cgroup. */
static FILE *open_procs(const char *cgroup, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/cgroup.procs", cgroup);
	if ((f = fopen(path, "re")) || cgroup[0] != '/')
		return f;
	snprintf(path, len, "/sys/fs/cgroup%s/cgroup.procs", cgroup);
	return fopen(path, "re");
}

static int from_cgroup(const char *cgroup, struct pidset *s)
{
	char path[4200];
	FILE *f = open_procs(cgroup, path, sizeof(path));
	int pid, err = 0;

	if (!f)
		return ditto_err(-errno, "discover: cgroup '%s': cannot read %s: %s", cgroup, path,
				 strerror(errno));
	while (!err && fscanf(f, "%d", &pid) == 1)
		if (pid > 0 && !proc_check_user(pid))
			err = set_add(s, pid);
	fclose(f);
	return err;
}

static bool wanted(const uint16_t *ports, size_t nports, const uint16_t *have, size_t nhave)
{
	if (!nports)
		return nhave > 0;
	for (size_t i = 0; i < nports; i++)
		for (size_t j = 0; j < nhave; j++)
			if (ports[i] == have[j])
				return true;
	return false;
}

static int from_ports(const uint16_t *ports, size_t nports, struct pidset *s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int err = 0;

	if (!d)
		return ditto_err(-errno, "discover: /proc: %s", strerror(errno));
	while (!err && (e = readdir(d))) {
		uint16_t have[64];
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || proc_check_user((pid_t)pid))
			continue;
		if (wanted(ports, nports, have, proc_listen_ports((pid_t)pid, have, 64)))
			err = set_add(s, (pid_t)pid);
	}
	closedir(d);
	return err;
}

DITTO_API int ditto_profile_discover(const struct ditto_discover_opts *opts, pid_t *pids,
				     size_t max, size_t *n)
{
	const char *cgroup = OPTS_GET(opts, cgroup, NULL);
	const uint16_t *ports = OPTS_GET(opts, ports, NULL);
	size_t nports = OPTS_GET(opts, nports, 0);
	struct pidset s = { NULL, 0 };
	int err;

	if (!n || !pids || (err = OPTS_CHECK(opts, ditto_discover_opts)))
		return ditto_err(-EINVAL, "discover: NULL argument or bad options");
	*n = 0;
	if (!(s.p = calloc(MAX_CANDIDATES, sizeof(pid_t))))
		return ditto_err(-ENOMEM, "out of memory");
	err = cgroup ? from_cgroup(cgroup, &s) : from_ports(ports, ports ? nports : 0, &s);
	/* Roots only: a process with an ancestor in the set is part of it
	 * (through processes that listen nowhere too). */
	for (size_t i = 0; i < s.n && !err; i++) {
		if (has_ancestor_in(&s, s.p[i]))
			continue;
		if (*n == max)
			err = ditto_err(-E2BIG, "discover: more than %zu services found", max);
		else
			pids[(*n)++] = s.p[i];
	}
	free(s.p);
	if (!err && !*n)
		err = ditto_err(-ESRCH, "discover: no process %s", cgroup ? "in that cgroup" :
				"listens on the given ports");
	return err;
}
