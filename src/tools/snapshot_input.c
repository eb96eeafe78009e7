/*
 * snapshot_input.c - a snapshot converted by snapshot2trace and parsed as
 * it comes out of the converter's pipe (snapshot_input.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapshot_input.h"

bool snapshot_input_is_snapshot(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
	int c = EOF;

	if (f == NULL)
		return false;
	do
		c = fgetc(f);
	while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
	fclose(f);
	/* 0x80: pickle protocol 2 and later; ( } ]: protocols 0 and 1; { [: JSON. */
	return c == 0x80 || (c != EOF && strchr("(}]{[", c) != NULL);
}

static const char *converter(void)
{
	const char *env = getenv("NPUMEM_SNAPSHOT2TRACE");

	if (env && *env)
		return env;
	if (access(NPUMEMFS_S2T_INSTALLED, R_OK) == 0)
		return NPUMEMFS_S2T_INSTALLED;
	return NPUMEMFS_S2T_SOURCE;
}

static pid_t start_converter(const char *path, int *fd)
{
	const char *python = getenv("PYTHON");
	const char *script = converter();
	int fds[2];
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		close(fds[1]);
		python = python && *python ? python : "python3";
		execlp(python, python, script, path, "-o", "-", (char *)NULL);
		fprintf(stderr, "npumem-whatif: cannot run %s %s: %s\n", python, script,
			strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0)
		close(fds[0]);
	*fd = fds[0];
	return pid;
}

/* Its exit status; 0 as well when it was stopped by the pipe the parser
 * closed at a bad line: that line is the message, not the converter. */
static int converter_status(pid_t pid)
{
	int ws;

	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(ws))
		return WTERMSIG(ws) == SIGPIPE ? 0 : -1;
	return WEXITSTATUS(ws);
}

int snapshot_input_load(const char *path, struct wl_trace **out, char *err, size_t errlen)
{
	int fd, status, rc;
	pid_t pid = start_converter(path, &fd);
	FILE *f;

	if (pid < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot start snapshot2trace: %s", path, strerror(-rc));
		return rc;
	}
	f = fdopen(fd, "r");
	rc = f ? wl_trace_parse(f, path, out, err, errlen) : -ENOMEM;
	if (f)
		fclose(f);
	else
		close(fd);
	status = converter_status(pid);
	if (status != 0) {
		if (rc == 0)
			wl_trace_free(*out);
		*out = NULL;
		snprintf(err, errlen, "%s: snapshot2trace could not convert it (exit status %d)",
			 path, status);
		return -EINVAL;
	}
	return rc;
}
