/* SPDX-License-Identifier: MIT */
/* What /proc says about processes: existence, names, descendants. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile_int.h"

bool proc_exists(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

pid_t proc_parent(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* The comm may hold spaces and parentheses: parse after the last ')'. */
	if (fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')))
		sscanf(close_paren + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

bool proc_descends(pid_t pid, pid_t anc)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		pid = proc_parent(pid);
		if (pid == anc)
			return true;
	}
	return false;
}

int proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Parent of pid from /proc/PID/stat (the field after the last ')'). */
static pid_t proc_ppid(pid_t pid)
{
	char path[64], line[512], *p;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

struct pidpair {
	pid_t pid, ppid;
};

static int list_processes(struct pidpair **out, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return ditto_err(-errno, "/proc: %s", strerror(errno));
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);

		if (pid <= 0)
			continue;
		if (*n == cap) {
			struct pidpair *p = realloc(*out, (cap = cap ? cap * 2 : 256) * sizeof(*p));

			if (!p) {
				closedir(d);
				free(*out);
				return ditto_err(-ENOMEM, "out of memory");
			}
			*out = p;
		}
		(*out)[*n].pid = pid;
		(*out)[(*n)++].ppid = proc_ppid(pid);
	}
	closedir(d);
	return 0;
}

int proc_descendants(pid_t pid, int (*fn)(pid_t child, void *user), void *user)
{
	struct pidpair *all;
	size_t n, found = 0;
	pid_t *queue;
	int err;

	if ((err = list_processes(&all, &n)))
		return err;
	queue = malloc((n + 1) * sizeof(*queue));
	if (!queue) {
		free(all);
		return ditto_err(-ENOMEM, "out of memory");
	}
	/* Breadth-first from pid: children, grandchildren, ... */
	queue[found++] = pid;
	for (size_t head = 0; head < found && !err; head++)
		for (size_t i = 0; i < n && !err; i++)
			if (all[i].ppid == queue[head] && all[i].pid != pid) {
				queue[found++] = all[i].pid;
				err = fn(all[i].pid, user);
			}
	free(queue);
	free(all);
	return err;
}

/* Inodes of the sockets pid holds open. */
static size_t socket_inodes(pid_t pid, unsigned long *inodes, size_t max)
{
	char path[64], link[64];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)) && n < max) {
		char fdpath[320];
		ssize_t len;

		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, e->d_name);
		len = readlink(fdpath, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &inodes[n]) == 1)
			n++;
	}
	closedir(d);
	return n;
}

/* Listening sockets of table (/proc/PID/net/tcp or tcp6) among inodes:
 * their ports and inodes appended at n, without duplicates. */
static size_t listen_in(const char *table, const unsigned long *inodes, size_t ninodes,
			struct proc_listener *out, size_t n, size_t max)
{
	char line[512];
	FILE *f = fopen(table, "re");

	if (!f)
		return n;
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned port, state;
		unsigned long inode;
		char local[128];

		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %127s %*s %x %*s %*s %*s %*u %*u %lu", local, &state,
			   &inode) != 3 || state != 0x0a)
			continue;
		if (!strchr(local, ':') || sscanf(strchr(local, ':') + 1, "%x", &port) != 1)
			continue;
		for (size_t i = 0; i < ninodes; i++)
			if (inodes[i] == inode) {
				bool dup = false;

				for (size_t j = 0; j < n; j++)
					dup |= out[j].inode == inode;
				if (!dup)
					out[n++] = (struct proc_listener){ (uint16_t)port, inode };
				break;
			}
	}
	fclose(f);
	return n;
}

size_t proc_listeners(pid_t pid, struct proc_listener *out, size_t max)
{
	unsigned long inodes[1024];
	char path[64];
	size_t ni = socket_inodes(pid, inodes, ARRAY_SIZE(inodes)), n;

	snprintf(path, sizeof(path), "/proc/%d/net/tcp", (int)pid);
	n = listen_in(path, inodes, ni, out, 0, max);
	snprintf(path, sizeof(path), "/proc/%d/net/tcp6", (int)pid);
	return listen_in(path, inodes, ni, out, n, max);
}

/* __SO_ACCEPTCON in /proc/net/unix's flags: a listening socket. */
#define UNIX_ACCEPTCON 0x10000UL

bool proc_unix_listening(pid_t pid)
{
	unsigned long inodes[1024];
	size_t ni = socket_inodes(pid, inodes, ARRAY_SIZE(inodes));
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)pid);
	if (!ni || !(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long flags, inode;

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*x %*x %lx %*x %*x %lu", &flags, &inode) != 2 ||
		    !(flags & UNIX_ACCEPTCON))
			continue;
		for (size_t i = 0; i < ni && !found; i++)
			found = inodes[i] == inode;
	}
	fclose(f);
	return found;
}

size_t proc_listen_ports(pid_t pid, uint16_t *ports, size_t max)
{
	struct proc_listener l[64];
	size_t n = proc_listeners(pid, l, ARRAY_SIZE(l)), k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		bool dup = false;

		for (size_t j = 0; j < k; j++)
			dup |= ports[j] == l[i].port;
		if (!dup)
			ports[k++] = l[i].port;
	}
	return k;
}

/* PF_KTHREAD in the flags field (9) of /proc/PID/stat. */
#define PF_KTHREAD_FLAG 0x00200000UL

int proc_check_user(pid_t pid)
{
	char path[64], line[512], comm[32] = "?", *p;
	unsigned long flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;	/* gone: the caller's next step says so */
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')'))) {
		char *open = strchr(line, '(');

		if (open && p - open - 1 < (long)sizeof(comm))
			snprintf(comm, sizeof(comm), "%.*s", (int)(p - open - 1), open + 1);
		sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags);
	}
	fclose(f);
	if (flags & PF_KTHREAD_FLAG)
		return ditto_err(-EINVAL, "process %d (%s) is a kernel thread: it has no user space "
				 "to profile", (int)pid, comm);
	return 0;
}

bool proc_alive(pid_t pid)
{
	char path[64], line[256], *p, state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		sscanf(p + 1, " %c", &state);
	fclose(f);
	return state && state != 'Z' && state != 'X';
}

int proc_threads(pid_t pid, int (*fn)(pid_t tid, const char *comm, void *user), void *user)
{
	char path[64], comm[32];
	struct dirent *e;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0; /* gone meanwhile: nothing to add */
	while (!err && (e = readdir(d))) {
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

		if (tid <= 0 || proc_comm(tid, comm, sizeof(comm)))
			continue;
		err = fn(tid, comm, user);
	}
	closedir(d);
	return err;
}

unsigned long proc_fd_inode(pid_t pid, int fd)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	return stat(path, &st) ? 0 : (unsigned long)st.st_ino;
}
