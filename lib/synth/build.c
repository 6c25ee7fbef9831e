/* SPDX-License-Identifier: MIT */
/*
 * ditto_synth_build(): run make in a clone tree, its output kept in
 * build.log, and on failure put the log's tail in the error message.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_int.h"
#include "synth_int.h"

#include <ditto/synth.h>

#define TAIL SYNTH_LOG_TAIL

void synth_log_tail(const char *log, char *out, size_t len)
{
	FILE *f = fopen(log, "re");
	long size;
	size_t n;
	char *nl;

	out[0] = '\0';
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > TAIL ? size - TAIL : 0, SEEK_SET);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	if (size > TAIL && (nl = strchr(out, '\n')))
		memmove(out, nl + 1, strlen(nl + 1) + 1);
}

/* make -j with a compiler per online CPU: the clone's sources compile
 * side by side (the tuner builds one clone per iteration). */
static void child(const char *dir, const char *log, const char *cc, bool static_link)
{
	char ccvar[PATH_MAX + 4], jobs[16];
	char *argv[] = { "make", "--no-print-directory", jobs, "clone", ccvar, NULL };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || chdir(dir) || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	snprintf(jobs, sizeof(jobs), "-j%ld", ncpu < 1 ? 1 : ncpu > 64 ? 64 : ncpu);
	if (static_link)
		argv[3] = "clone-static";
	if (cc)
		snprintf(ccvar, sizeof(ccvar), "CC=%s", cc);
	else
		argv[4] = NULL;
	execvp("make", argv);
	_exit(127);
}

/* make in dir; 0, or the status that says why not. */
static int run_make(const char *dir, const char *log, const char *cc, bool static_link,
		    int *status)
{
	pid_t pid = fork();

	if (pid < 0)
		return ditto_err(-errno, "synth: fork: %s", strerror(errno));
	if (pid == 0)
		child(dir, log, cc, static_link);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return ditto_err(-errno, "synth: waitpid: %s", strerror(errno));
	return 0;
}

static bool made(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool no_make(int status)
{
	return WIFEXITED(status) && (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126);
}

/* What the cache did, at the end of build.log. */
static void log_cache(const char *log, const struct bcache *c)
{
	FILE *f;

	if (c->dir[0] && (f = fopen(log, "ae"))) {
		if (c->refused)
			fprintf(f, "ditto: build cache %s refused (not this user's directory, or "
				"others may write to it): built without it", c->dir);
		else
			fprintf(f, "ditto: build cache %s: %u objects reused, %u stored",
				c->on ? c->dir : "off", c->hits, c->stored);
		if (c->dropped)
			fprintf(f, " (%u cached objects failed the build and were dropped)",
				c->dropped);
		fputc('\n', f);
		fclose(f);
	}
}

DITTO_API int ditto_synth_build(const char *dir, const struct ditto_build_opts *opts)
{
	char log[PATH_MAX], tail[TAIL + 1];
	const char *cc = OPTS_GET(opts, cc, NULL);
	bool static_link = OPTS_GET(opts, static_link, false);
	int err = OPTS_CHECK(opts, ditto_build_opts), status;
	struct bcache cache;

	if (err)
		return err;
	if (!dir || access(dir, F_OK))
		return ditto_err(-ENOENT, "synth: no clone tree at %s", dir ? dir : "(null)");
	if (snprintf(log, sizeof(log), "%s/build.log", dir) >= (int)sizeof(log))
		return ditto_err(-ENAMETOOLONG, "synth: %s: path too long", dir);
	bcache_open(&cache, dir, cc, OPTS_GET(opts, cache_dir, NULL));
	bcache_restore(&cache, dir);
	err = run_make(dir, log, cc, static_link, &status);
	/* A bad object in the cache must not fail a good tree: once more
	 * without the cache's objects (make itself missing is no such case). */
	if (!err && !made(status) && cache.hits && !no_make(status)) {
		bcache_forget(&cache, dir);
		err = run_make(dir, log, cc, static_link, &status);
	}
	if (!err && made(status)) {
		bcache_store(&cache, dir);
		log_cache(log, &cache);
	}
	bcache_close(&cache);
	if (err || made(status))
		return err;
	if (no_make(status))
		return ditto_err(-ENOENT, "synth: cannot run make (install the Debian package make)");
	synth_log_tail(log, tail, sizeof(tail));
	return ditto_err(-DITTO_EBUILD, "synth: building the clone in %s failed (%s/build.log):\n%s",
			 dir, dir, tail);
}
