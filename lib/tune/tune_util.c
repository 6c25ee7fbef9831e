/* SPDX-License-Identifier: MIT */
/* Small helpers of the feedback loop: ports and the clone directory. */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_int.h"
#include "tune_int.h"

unsigned tune_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unsigned port = 0;

	if (fd < 0)
		return 0;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static bool dir_empty(const char *dir)
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

int tune_dir_check(const char *dir)
{
	char marker[4200];
	struct stat st;

	if (stat(dir, &st))
		return errno == ENOENT ? 0 : ditto_err(-errno, "tune: %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return ditto_err(-ENOTDIR, "tune: %s is not a directory", dir);
	snprintf(marker, sizeof(marker), "%s/.ditto-clone", dir);
	if (dir_empty(dir) || !access(marker, F_OK))
		return 0;
	return ditto_err(-ENOTEMPTY, "tune: %s holds files that are not a clone tree: "
			 "give an empty or new directory", dir);
}
