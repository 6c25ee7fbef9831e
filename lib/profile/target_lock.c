/* SPDX-License-Identifier: MIT */
/*
 * One profile session per target process (a second would double-count),
 * with a lock no other user can take, plant or leave behind.
 *
 * The lock is flock() on a file named after the target's pid and start
 * time in a directory only the profiler's euid can write: /run/libditto
 * for root, $XDG_RUNTIME_DIR/libditto or /tmp/libditto-<euid> for others.
 * The directory must be a real directory (opened O_NOFOLLOW) owned by the
 * euid with no access for anyone else, or it is refused; files in it are
 * opened O_NOFOLLOW and must be regular files of the euid. A session
 * removes its file when it ends; a file left by a session that was killed
 * holds no flock, so the next session of that euid removes it.
 *
 * Why not an abstract unix socket: abstract names have no permissions, so
 * any user in the network namespace could bind the name first (the pid
 * and start time are public in /proc) and block root again; and a
 * profiler in another network namespace would not see the name at all.
 *
 * Sessions of different euids do not see each other's locks; that is the
 * point (no user can block another). Such sessions may then profile one
 * target at once, each with its own counts; their CPU windows still
 * cannot trace one thread together (the kernel allows one tracer).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile_int.h"

#define PREFIX "pid-"

/* Where this euid's locks live (see the top of the file). */
static int lock_dir_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	uid_t uid = geteuid();

	if (uid == 0)
		return snprintf(buf, len, "/run/libditto") >= (int)len ? -ENAMETOOLONG : 0;
	if (xdg && xdg[0] == '/')
		return snprintf(buf, len, "%s/libditto", xdg) >= (int)len ? -ENAMETOOLONG : 0;
	if (snprintf(buf, len, "/tmp/libditto-%u", (unsigned)uid) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* The lock directory, created 0700 if absent; refused unless it is a
 * directory (not a link to one) of this euid that nobody else may use. */
static int open_lock_dir(char *path, size_t len)
{
	struct stat st;
	int fd, err;

	if ((err = lock_dir_path(path, len)))
		return ditto_err(err, "profile: the lock directory's path is too long");
	if (mkdir(path, 0700) && errno != EEXIST)
		return ditto_err(-errno, "profile: cannot create the lock directory %s: %s", path,
				 strerror(errno));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ditto_err(-errno, "profile: cannot open the lock directory %s: %s%s", path,
				 strerror(errno), errno == ELOOP || errno == ENOTDIR ?
				 " (a symbolic link or not a directory: not followed)" : "");
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return ditto_err(-EPERM, "profile: the lock directory %s is not owned by uid %u "
				 "with mode 0700: refusing to use it (remove it if it is not "
				 "yours)", path, (unsigned)geteuid());
	}
	return fd;
}

/* Field 22 of /proc/pid/stat: with the pid, names one process for good. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after "pid (comm)": state is field 3, starttime field 22 */
	if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			"%*d %*d %*d %*d %llu", &t) != 1)
		t = 0;
	return t;
}

/* Whether fd is still the file called name: a session that ended may have
 * removed it between our open and our flock. */
static bool still_named(int dirfd, const char *name, int fd)
{
	struct stat a, b;

	return !fstat(fd, &a) && !fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Removes lock files that no session holds (left by a killed profiler). */
static void sweep(int dirfd)
{
	int dfd = dup(dirfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		int fd;

		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)))
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB) && still_named(dirfd, e->d_name, fd))
			unlinkat(dirfd, e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

#define OPEN_FLAGS (O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* One attempt: the locked fd, -EAGAIN when the file was removed under us
 * (try again), or another -errno with a message. */
static int try_take(int dirfd, const char *dir, const char *name, pid_t pid)
{
	int fd = openat(dirfd, name, OPEN_FLAGS, 0600), err;
	struct stat st;

	if (fd < 0) {
		err = errno;
		return ditto_err(-err, "profile: cannot open the lock %s/%s: %s%s", dir, name,
				 strerror(err),
				 err == ELOOP ? " (a symbolic link: not followed)" : "");
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return ditto_err(-EPERM, "profile: the lock %s/%s is not a regular file of uid %u: "
				 "refusing it", dir, name, (unsigned)geteuid());
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno;
		close(fd);
		if (err == EWOULDBLOCK)
			return ditto_err(-EBUSY, "process %d is already being profiled by another "
					 "libditto session (lock %s/%s)", (int)pid, dir, name);
		return ditto_err(-err, "profile: cannot lock %s/%s: %s", dir, name, strerror(err));
	}
	if (!still_named(dirfd, name, fd)) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

int target_lock_take(struct target_lock *l, pid_t pid)
{
	char dir[PATH_MAX - 64];
	int dirfd, fd = -EAGAIN;

	l->fd = l->dirfd = -1;
	if ((dirfd = open_lock_dir(dir, sizeof(dir))) < 0)
		return dirfd;
	sweep(dirfd);
	snprintf(l->name, sizeof(l->name), PREFIX "%d-%llu.lock", (int)pid, start_time(pid));
	/* A few turns: each lost race means a session ended or was swept
	 * just now, and the next open sees the name's new file. */
	for (int turn = 0; turn < 16 && fd == -EAGAIN; turn++)
		fd = try_take(dirfd, dir, l->name, pid);
	if (fd < 0) {
		close(dirfd);
		if (fd == -EAGAIN)
			return ditto_err(-EBUSY, "process %d: the lock %s/%s keeps changing: "
					 "other sessions are starting and ending", (int)pid, dir,
					 l->name);
		return fd;
	}
	l->fd = fd;
	l->dirfd = dirfd;
	return 0;
}

/* Removed while still held, so no session can take a file that is about
 * to disappear without noticing (still_named()). */
void target_lock_release(struct target_lock *l)
{
	if (l->fd >= 0) {
		unlinkat(l->dirfd, l->name, 0);
		close(l->fd);
	}
	if (l->dirfd >= 0)
		close(l->dirfd);
	l->fd = l->dirfd = -1;
}
