/* SPDX-License-Identifier: MIT */
/* Graphviz's `dot` as a child process, fed on its stdin (graphviz.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "graphviz.h"

/* The child: stdin from the pipe, then dot; an exec failure's errno goes
 * back through errfd (close-on-exec: it closes unwritten when dot runs). */
static void child(int in, int errfd, const char *out)
{
	int e;

	if (dup2(in, STDIN_FILENO) < 0) {
		e = errno;
	} else {
		execlp("dot", "dot", "-Tsvg", "-o", out, (char *)NULL);
		e = errno;
	}
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* All of text to fd; SIGPIPE is ignored meanwhile, so a dot that quits
 * early is an EPIPE here, reported, rather than the end of this process. */
static int write_all(int fd, const char *text)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	size_t len = strlen(text), off = 0;
	int rc = 0;

	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	sigaction(SIGPIPE, &old, NULL);
	return rc;
}

/* What the child's status and the exec error say; CLI_OK or CLI_EINPUT. */
static int verdict(int status, int exec_errno, int write_err)
{
	if (exec_errno == ENOENT)
		return cli_failf("graph dot: Graphviz's 'dot' is not on PATH: install Graphviz "
				 "(Debian: graphviz) for --svg");
	if (exec_errno)
		return cli_failf("graph dot: cannot run 'dot': %s", strerror(exec_errno));
	if (WIFSIGNALED(status))
		return cli_failf("graph dot: 'dot' was killed by signal %d", WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return cli_failf("graph dot: 'dot' failed (exit status %d)", WEXITSTATUS(status));
	if (write_err)
		return cli_failf("graph dot: writing to 'dot': %s", strerror(-write_err));
	return CLI_OK;
}

static int run_dot(const char *text, const char *tmp)
{
	int in[2], err[2], status = 0, exec_errno = 0, werr;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return cli_failf("graph dot: pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(in[0]);
		close(in[1]);
		close(err[0]);
		close(err[1]);
		return cli_failf("graph dot: fork: %s", strerror(e));
	}
	if (pid == 0)
		child(in[0], err[1], tmp);
	close(in[0]);
	close(err[1]);
	werr = write_all(in[1], text);
	close(in[1]);
	while (read(err[0], &exec_errno, sizeof(exec_errno)) < 0 && errno == EINTR)
		;
	close(err[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return cli_failf("graph dot: waitpid: %s", strerror(errno));
	return verdict(status, exec_errno, werr);
}

int graphviz_svg(const char *dot_text, const char *svg_path)
{
	size_t n = strlen(svg_path) + 32;
	char *tmp = malloc(n);
	int rc;

	if (!tmp)
		return cli_failf("graph dot: out of memory");
	snprintf(tmp, n, "%s.tmp-%ld", svg_path, (long)getpid());
	rc = run_dot(dot_text, tmp);
	if (rc == CLI_OK && rename(tmp, svg_path) < 0)
		rc = cli_failf("graph dot: %s: %s", svg_path, strerror(errno));
	if (rc != CLI_OK)
		unlink(tmp);
	free(tmp);
	return rc;
}
