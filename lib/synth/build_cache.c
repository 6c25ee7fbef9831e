/* SPDX-License-Identifier: MIT */
/*
 * The build's object cache: every clone tree holds the same runtime
 * sources (rt_*.c), and compiling them is nearly all of a build, paid
 * again at every tuner iteration and every tier of a graph. Their objects
 * are kept in a directory of the user's, each named for a hash of what
 * made it: the compiler (its --version, target and predefined macros
 * under CFLAGS, which -march=native or -m32 change), the environment make
 * and the compiler read, the Makefile, every header of the tree and the
 * source itself. Before make, the tree's runtime objects and its linked
 * binaries are removed and the hits copied in (newer than their sources,
 * so make leaves them); after make the misses are stored. So every object
 * stored was compiled by that make or came from the cache under the same
 * name. Only the runtime's files are cached: a model's strings reach
 * clone_config.c and body.S, which are always compiled.
 *
 * The directory is opened once, without following a symbolic link, and
 * used only if it is the user's own and nobody else may write to it: its
 * objects are linked into the clone. Entries are reached through that
 * descriptor, so the path cannot be swapped under the build.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "synth_int.h"

#define FILE_MAX (1u << 20)	/* a runtime source, header or object */
#define STALE_S (30 * 86400)	/* an object unused this long is dropped */
#define KEY_LEN 32		/* hex digits of an entry's name, then ".o" */

/* Read by make or the compiler: another value can make another object. */
static const char *const env_inputs[] = { "CFLAGS",	     "MAKEFLAGS",     "MAKEFILES",
					  "CPATH",	     "C_INCLUDE_PATH", "GCC_EXEC_PREFIX",
					  "COMPILER_PATH", "PATH" };

static void mix(uint64_t h[2], const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h[0] = (h[0] ^ b[i]) * 0x100000001b3ull;	/* FNV-1a */
		h[1] = (h[1] + b[i] + 1) * 0x9e3779b97f4a7c15ull;
		h[1] ^= h[1] >> 29;
	}
	/* the length too, so that no concatenation of parts is another's */
	h[0] = (h[0] ^ n) * 0x100000001b3ull;
	h[1] = (h[1] + n) * 0x9e3779b97f4a7c15ull;
}

static void mix_str(uint64_t h[2], const char *s)
{
	mix(h, s ? s : "", s ? strlen(s) + 1 : 0);	/* unset is not empty */
}

/* The whole file (at dirfd/name) into a malloc'd buffer, bounded. */
static char *slurp_at(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
	char *buf = f ? malloc(FILE_MAX) : NULL;

	if (!buf) {
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = fread(buf, 1, FILE_MAX, f);
	if (ferror(f) || !feof(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int mix_file(uint64_t h[2], int dirfd, const char *name)
{
	size_t len;
	char *buf = slurp_at(dirfd, name, &len);

	if (!buf)
		return -1;
	mix_str(h, name);
	mix(h, buf, len);
	free(buf);
	return 0;
}

/* What the compiler says of itself and predefines under the Makefile's
 * flags ($CFLAGS, else its default): another compiler, version, target
 * or -march makes other objects. make runs $(CC) through the shell, so
 * does this. */
static int mix_compiler(uint64_t h[2], const char *cc)
{
	char cmd[3 * PATH_MAX], chunk[4096];
	size_t n, total = 0;
	FILE *p;

	if (!cc)
		cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	if (snprintf(cmd, sizeof(cmd),
		     "%s --version && %s -dumpmachine && "
		     "%s ${CFLAGS--O2 -g} -std=gnu11 -pthread -E -dM -x c /dev/null",
		     cc, cc, cc) >= (int)sizeof(cmd) ||
	    !(p = popen(cmd, "re")))
		return -1;
	mix_str(h, cc);
	/* fread fills each chunk but the last: the same output, the same mix */
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		mix(h, chunk, n);
		total += n;
	}
	return pclose(p) != 0 || total == 0 ? -1 : 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_header(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 2 && !strcmp(e->d_name + n - 2, ".h");
}

static int is_runtime_source(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 5 && n < BCACHE_NAME_MAX && !strncmp(e->d_name, "rt_", 3) &&
	       !strcmp(e->d_name + n - 2, ".c");
}

/* Hash of everything but the source: compiler, environment, Makefile,
 * headers. */
static int tree_hash(const char *tree, int treefd, const char *cc, uint64_t h[2])
{
	struct dirent **hdr;
	int n, err = 0;

	h[0] = 0xcbf29ce484222325ull;
	h[1] = 0x243f6a8885a308d3ull;
	if (mix_compiler(h, cc) || mix_file(h, treefd, "Makefile"))
		return -1;
	for (size_t i = 0; i < sizeof(env_inputs) / sizeof(env_inputs[0]); i++)
		mix_str(h, getenv(env_inputs[i]));
	if ((n = scandir(tree, &hdr, is_header, by_name)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!err && mix_file(h, treefd, hdr[i]->d_name))
			err = -1;
		free(hdr[i]);
	}
	free(hdr);
	return err;
}

/* mkdir -p, each new directory 0700. */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX], *s;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -1;
	for (s = path + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

/* The directory's descriptor when it is the caller's own, not a link,
 * and nobody else may write to it; else -1. */
static int open_cache_dir(const char *dir)
{
	struct stat st;
	int fd;

	if (dir[0] != '/' || make_dirs(dir) ||
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int default_dir(char *out, size_t len)
{
	const char *env = getenv("DITTO_BUILD_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (env)
		return snprintf(out, len, "%s", env) >= (int)len ? -1 : 0;
	if (xdg && xdg[0] == '/')
		return snprintf(out, len, "%s/ditto/objects", xdg) >= (int)len ? -1 : 0;
	if (home && home[0] == '/')
		return snprintf(out, len, "%s/.cache/ditto/objects", home) >= (int)len ? -1 : 0;
	return -1;
}

/* Once per process: a tuning run builds a clone per iteration, and the
 * directory's owner and mode do not change in between (build.log says
 * so at each build). */
static atomic_bool refusal_warned;

void bcache_open(struct bcache *c, const char *tree, const char *cc, const char *dir)
{
	int treefd;

	memset(c, 0, sizeof(*c));
	c->dfd = -1;
	if (dir ? snprintf(c->dir, sizeof(c->dir), "%s", dir) >= (int)sizeof(c->dir)
		: default_dir(c->dir, sizeof(c->dir)))
		return;
	if (!c->dir[0] || !strcmp(c->dir, "off"))
		return;
	if ((c->dfd = open_cache_dir(c->dir)) < 0) {
		c->refused = true;
		if (!atomic_exchange(&refusal_warned, true))
			ditto_warn("synth: build cache %s is not a directory of this user's that "
				   "only it may write to; building without it (said once per "
				   "process)", c->dir);
		return;
	}
	treefd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c->on = treefd >= 0 && !tree_hash(tree, treefd, cc, c->base);
	if (treefd >= 0)
		close(treefd);
}

void bcache_close(struct bcache *c)
{
	if (c->dfd >= 0)
		close(c->dfd);
	c->dfd = -1;
	c->on = false;
}

/* The cache's name for src's object: the tree's hash with src's. */
static int entry_name(const struct bcache *c, int treefd, const char *src, char *out, size_t len)
{
	uint64_t h[2] = { c->base[0], c->base[1] };

	if (mix_file(h, treefd, src))
		return -1;
	snprintf(out, len, "%016" PRIx64 "%016" PRIx64 ".o", h[0], h[1]);
	return 0;
}

/* Tags of temporary names: other processes and threads draw others, and
 * O_EXCL settles the rest. */
static unsigned temp_tag(void)
{
	static _Atomic unsigned n;
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = ((uint64_t)getpid() << 32 | (uint64_t)gettid()) ^ (uint64_t)ts.tv_nsec ^
	    (uint64_t)n++ * 0x9e3779b97f4a7c15ull;
	x *= 0xff51afd7ed558ccdull;
	return (unsigned)(x >> 32);
}

/* from_dir/from to a fresh temporary file in to_dir, renamed to `to`: a
 * reader never sees a partial object, and two writers never share one. */
static int copy_at(int from_dir, const char *from, int to_dir, const char *to, mode_t mode)
{
	char tmp[BCACHE_NAME_MAX + 16];
	size_t len;
	char *buf = slurp_at(from_dir, from, &len);
	int fd = -1, ok = 0;

	for (unsigned i = 0; buf && fd < 0 && i < 16; i++) {
		snprintf(tmp, sizeof(tmp), ".tmp-%08x.o", temp_tag());
		fd = openat(to_dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	}
	if (fd >= 0) {
		ok = write(fd, buf, len) == (ssize_t)len;
		ok = !close(fd) && ok && !renameat(to_dir, tmp, to_dir, to);
		if (!ok)
			unlinkat(to_dir, tmp, 0);
	}
	free(buf);
	return ok ? 0 : -1;
}

/* src's object name in the tree ("rt_x.c" -> "rt_x.o"). */
static void object_of(const char *src, char *out, size_t len)
{
	snprintf(out, len, "%.*s.o", (int)strlen(src) - 2, src);
}

typedef void (*source_fn)(struct bcache *c, int treefd, const char *src, const char *obj);

/* fn for each runtime source of the tree, with its object's name. */
static void each_source(struct bcache *c, const char *tree, source_fn fn)
{
	char obj[BCACHE_NAME_MAX];
	struct dirent **src;
	int n, treefd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (treefd < 0 || (n = scandir(tree, &src, is_runtime_source, by_name)) < 0) {
		if (treefd >= 0)
			close(treefd);
		c->on = false;
		return;
	}
	for (int i = 0; i < n; i++) {
		object_of(src[i]->d_name, obj, sizeof(obj));
		fn(c, treefd, src[i]->d_name, obj);
		free(src[i]);
	}
	free(src);
	close(treefd);
}

static void restore_one(struct bcache *c, int treefd, const char *src, const char *obj)
{
	char name[BCACHE_NAME_MAX];

	unlinkat(treefd, obj, 0);	/* whoever made it, it is not stored */
	if (!entry_name(c, treefd, src, name, sizeof(name)) &&
	    !copy_at(c->dfd, name, treefd, obj, 0644)) {
		utimensat(c->dfd, name, NULL, 0);	/* used: not stale */
		c->hits++;
	}
}

void bcache_restore(struct bcache *c, const char *tree)
{
	if (!c->on)
		return;
	each_source(c, tree, restore_one);
	/* linked from other objects, maybe within make's timestamp step */
	if (c->on) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/clone", tree);
		unlink(path);
		snprintf(path, sizeof(path), "%s/clone-static", tree);
		unlink(path);
	}
}

static void store_one(struct bcache *c, int treefd, const char *src, const char *obj)
{
	char name[BCACHE_NAME_MAX];

	/* after a dropped hit the entry is replaced by what make built */
	if (!entry_name(c, treefd, src, name, sizeof(name)) &&
	    (c->dropped || faccessat(c->dfd, name, F_OK, 0)) &&
	    !copy_at(treefd, obj, c->dfd, name, 0600))
		c->stored++;
}

/* An entry of ours: KEY_LEN hex digits and ".o", or a temporary file. */
static bool is_entry(const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(name, ".tmp-", 5))
		return n == 5 + 8 + 2 && !strcmp(name + n - 2, ".o");
	return n == KEY_LEN + 2 && strspn(name, "0123456789abcdef") == KEY_LEN &&
	       !strcmp(name + KEY_LEN, ".o");
}

/* Entries nobody used for STALE_S go, so the cache does not only grow;
 * nothing else in the directory is touched. */
static void drop_stale(const struct bcache *c)
{
	int fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	time_t now = time(NULL);
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (is_entry(e->d_name) &&
		    !fstatat(c->dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && now - st.st_mtime > STALE_S)
			unlinkat(c->dfd, e->d_name, 0);
	closedir(d);
}

void bcache_store(struct bcache *c, const char *tree)
{
	if (!c->on)
		return;
	each_source(c, tree, store_one);
	if (c->stored)
		drop_stale(c);
}

static void forget_one(struct bcache *c, int treefd, const char *src, const char *obj)
{
	(void)c;
	(void)src;
	unlinkat(treefd, obj, 0);
}

void bcache_forget(struct bcache *c, const char *tree)
{
	if (!c->on)
		return;
	each_source(c, tree, forget_one);
	c->dropped = c->hits;
	c->hits = 0;
}
