/* SPDX-License-Identifier: MIT */
/*
 * Writes a clone tree so that a failure never leaves a half-written or
 * half-replaced directory: files go to a fresh sibling directory that is
 * renamed into place at the end. With force, an existing tree is replaced
 * only if it is empty or one libditto wrote (it holds MARKER): --force
 * must not be a way to wipe an arbitrary directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_int.h"
#include "synth_int.h"

#define MARKER SYNTH_TREE_MARKER

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Also the tuner's way to drop the trees of its iterations. */
void synth_rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int tree_put_file(const char *dir, const struct tree_entry *f)
{
	char path[PATH_MAX];
	size_t off = 0;
	int fd;

	if (strchr(f->name, '/') || snprintf(path, sizeof(path), "%s/%s", dir, f->name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, f->executable ? 0755 : 0644);
	if (fd < 0)
		return -errno;
	while (off < f->len) {
		ssize_t n = write(fd, f->data + off, f->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			close(fd);
			return err;
		}
		off += (size_t)n;
	}
	return close(fd) ? -errno : 0;
}

static bool is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* 0 when dir may be replaced: empty, or a tree libditto wrote (also the
 * tuner's check before it moves its best clone into dir). */
int synth_tree_replaceable(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return ditto_err(-ENOTDIR, "synth: %s exists and is not a directory", dir);
	snprintf(path, sizeof(path), "%s/" MARKER, dir);
	if (!access(path, F_OK) || is_empty(dir))
		return 0;
	return ditto_err(-ENOTEMPTY, "synth: %s is not empty and is not a clone tree libditto "
			 "wrote: not replacing it, even with force", dir);
}

int tree_install(const char *tmp, const char *dir, bool exists)
{
	char old[PATH_MAX];

	if (!exists)
		return rename(tmp, dir) ? -errno : 0;
	if (snprintf(old, sizeof(old), "%s.old.XXXXXX", dir) >= (int)sizeof(old) || !mkdtemp(old))
		return -errno;
	if (rename(dir, old)) {
		int err = -errno;

		rmdir(old);
		return err;
	}
	if (rename(tmp, dir)) {
		int err = -errno;

		rename(old, dir);
		return err;
	}
	synth_rm_tree(old);
	return 0;
}

int tree_write(const char *dir, const struct tree_entry *files, size_t n, bool force)
{
	char tmp[PATH_MAX];
	struct tree_entry marker = { MARKER, "libditto clone tree\n", 20, false };
	bool exists = access(dir, F_OK) == 0;
	int err;

	if (exists && !force)
		return ditto_err(-EEXIST, "synth: %s exists: choose another directory or force "
				 "replacing it (--force)", dir);
	if (exists && (err = synth_tree_replaceable(dir)))
		return err;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", dir) >= (int)sizeof(tmp))
		return ditto_err(-ENAMETOOLONG, "synth: %s: path too long", dir);
	if (!mkdtemp(tmp))
		return ditto_err(-errno, "synth: cannot create a directory next to %s: %s", dir,
				 strerror(errno));
	chmod(tmp, 0755);
	err = tree_put_file(tmp, &marker);
	for (size_t i = 0; !err && i < n; i++)
		if ((err = tree_put_file(tmp, &files[i])))
			ditto_err(err, "synth: cannot write %s in %s: %s", files[i].name, tmp,
				  strerror(-err));
	if (!err && (err = tree_install(tmp, dir, exists)))
		ditto_err(err, "synth: cannot move the new tree into %s: %s", dir, strerror(-err));
	if (err)
		synth_rm_tree(tmp);
	return err;
}
