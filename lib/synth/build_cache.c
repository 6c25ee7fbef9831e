/* SPDX-License-Identifier: MIT */
/*
 * The build's object cache: every clone tree holds the same runtime
 * sources (rt_*.c), and compiling them is nearly all of a build, paid
 * again at every tuner iteration and every tier of a graph. Their objects
 * are kept in a directory of the user's, each named for a hash of what
 * made it: the compiler's --version, CFLAGS, the Makefile, every header of
 * the tree and the source itself. Before make a hit is copied into the
 * tree (newer than its source, so make leaves it); after make the misses
 * are stored. Only the runtime's files are cached: a model's strings
 * reach clone_config.c and body.S, which are always compiled.
 *
 * A directory that is not the user's own, or is writable by others, is
 * not used (its objects would be linked into the clone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "synth_int.h"

#define FILE_MAX (1u << 20)	/* a runtime source, header or object */
#define VERSION_MAX 4096	/* what the compiler says of itself */
#define STALE_S (30 * 86400)	/* an object unused this long is dropped */

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

/* The whole file into a malloc'd buffer (bounded). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rbe");
	char *buf = f ? malloc(FILE_MAX) : NULL;

	if (!buf) {
		if (f)
			fclose(f);
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

static int mix_file(uint64_t h[2], const char *dir, const char *name)
{
	char path[PATH_MAX];
	size_t len;
	char *buf;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    !(buf = slurp(path, &len)))
		return -1;
	mix(h, name, strlen(name) + 1);
	mix(h, buf, len);
	free(buf);
	return 0;
}

/* What the compiler says of itself: another compiler, or another version
 * of it, makes other objects. */
static int mix_compiler(uint64_t h[2], const char *cc)
{
	char cmd[PATH_MAX + 32], out[VERSION_MAX];
	size_t n;
	FILE *p;

	if (!cc)
		cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	if (snprintf(cmd, sizeof(cmd), "%s --version 2>/dev/null", cc) >= (int)sizeof(cmd) ||
	    !(p = popen(cmd, "re")))
		return -1;
	n = fread(out, 1, sizeof(out), p);
	if (pclose(p) != 0 || n == 0)
		return -1;
	mix(h, cc, strlen(cc) + 1);
	mix(h, out, n);
	return 0;
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

	return n > 5 && !strncmp(e->d_name, "rt_", 3) && !strcmp(e->d_name + n - 2, ".c") &&
	       n < BCACHE_NAME_MAX;
}

/* Hash of everything but the source: compiler, flags, Makefile, headers. */
static int tree_hash(const char *tree, const char *cc, uint64_t h[2])
{
	const char *cflags = getenv("CFLAGS");
	struct dirent **hdr;
	int n, err = 0;

	h[0] = 0xcbf29ce484222325ull;
	h[1] = 0x243f6a8885a308d3ull;
	if (mix_compiler(h, cc) || mix_file(h, tree, "Makefile"))
		return -1;
	mix(h, cflags ? cflags : "", cflags ? strlen(cflags) + 1 : 0);
	if ((n = scandir(tree, &hdr, is_header, by_name)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!err && mix_file(h, tree, hdr[i]->d_name))
			err = -1;
		free(hdr[i]);
	}
	free(hdr);
	return err;
}

/* dir itself, made 0700 if missing; used only when the caller owns it and
 * nobody else may write to it. */
static int cache_dir_usable(const char *dir)
{
	char path[PATH_MAX], *s;
	struct stat st;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return 0;
	for (s = path + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return 0;
		*s = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return 0;
	return !stat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
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

int bcache_open(struct bcache *c, const char *tree, const char *cc, const char *dir)
{
	memset(c, 0, sizeof(*c));
	if (dir ? snprintf(c->dir, sizeof(c->dir), "%s", dir) >= (int)sizeof(c->dir)
		: default_dir(c->dir, sizeof(c->dir)))
		return 0;
	if (!c->dir[0] || !strcmp(c->dir, "off"))
		return 0;
	if (c->dir[0] != '/' || !cache_dir_usable(c->dir)) {
		ditto_warn("synth: build cache %s is not a directory of this user's that only it "
			   "may write to; building without it", c->dir);
		return 0;
	}
	if (tree_hash(tree, cc, c->base))
		return 0;
	c->on = true;
	return 1;
}

/* The cache's name for src's object: the tree's hash with src's. */
static int object_name(const struct bcache *c, const char *tree, const char *src, char *out,
		       size_t len)
{
	uint64_t h[2] = { c->base[0], c->base[1] };

	if (mix_file(h, tree, src))
		return -1;
	return snprintf(out, len, "%s/%016" PRIx64 "%016" PRIx64 ".o", c->dir, h[0], h[1]) >=
			       (int)len ? -1 : 0;
}

/* from to a temporary name beside to, then renamed: a reader never sees
 * a partial object. */
static int copy_file(const char *from, const char *to)
{
	char tmp[PATH_MAX];
	size_t len;
	char *buf = slurp(from, &len);
	int fd, ok;

	if (!buf)
		return -1;
	if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", to, (long)getpid()) >= (int)sizeof(tmp) ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		free(buf);
		return -1;
	}
	ok = write(fd, buf, len) == (ssize_t)len;
	ok = !close(fd) && ok && !rename(tmp, to);
	if (!ok)
		unlink(tmp);
	free(buf);
	return ok ? 0 : -1;
}

static int each_source(const char *tree, struct dirent ***list)
{
	return scandir(tree, list, is_runtime_source, by_name);
}

static void object_of(const char *tree, const char *src, char *out, size_t len)
{
	snprintf(out, len, "%s/%.*s.o", tree, (int)strlen(src) - 2, src);
}

void bcache_restore(struct bcache *c, const char *tree)
{
	char name[PATH_MAX], obj[PATH_MAX];
	struct dirent **src;
	int n;

	if (!c->on || (n = each_source(tree, &src)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		object_of(tree, src[i]->d_name, obj, sizeof(obj));
		if (!object_name(c, tree, src[i]->d_name, name, sizeof(name)) &&
		    !access(name, R_OK) && !copy_file(name, obj)) {
			utimensat(AT_FDCWD, name, NULL, 0);	/* used: not stale */
			c->hits++;
		}
		free(src[i]);
	}
	free(src);
}

/* Objects nobody used for STALE_S go, so the cache does not only grow. */
static void drop_stale(const struct bcache *c)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(c->dir);
	time_t now = time(NULL);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (!lstat(path, &st) && S_ISREG(st.st_mode) && now - st.st_mtime > STALE_S)
			unlink(path);
	}
	if (d)
		closedir(d);
}

void bcache_store(struct bcache *c, const char *tree)
{
	char name[PATH_MAX], obj[PATH_MAX];
	struct dirent **src;
	int n;

	if (!c->on || (n = each_source(tree, &src)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		object_of(tree, src[i]->d_name, obj, sizeof(obj));
		if (!object_name(c, tree, src[i]->d_name, name, sizeof(name)) &&
		    access(name, F_OK) && !copy_file(obj, name))
			c->stored++;
		free(src[i]);
	}
	free(src);
	if (c->stored)
		drop_stale(c);
}

void bcache_forget(struct bcache *c, const char *tree)
{
	char name[PATH_MAX], obj[PATH_MAX];
	struct dirent **src;
	int n;

	if (!c->on || (n = each_source(tree, &src)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		object_of(tree, src[i]->d_name, obj, sizeof(obj));
		unlink(obj);
		if (!object_name(c, tree, src[i]->d_name, name, sizeof(name)))
			unlink(name);
		free(src[i]);
	}
	free(src);
	c->dropped = c->hits;
	c->hits = 0;
}
