/*
 * background.c - a daemon that goes to the background, and whose starter
 * returns only once it serves (background.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "background.h"

/* The starter: the child's byte, or the end of the pipe if it died. */
static void wait_for_child(int fds[2])
{
	char ok;
	ssize_t n;

	close(fds[1]);
	do
		n = read(fds[0], &ok, 1);
	while (n < 0 && errno == EINTR);
	_exit(n == 1 ? 0 : 1);
}

static void quiet_stdio(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0)
		return;
	dup2(null, STDIN_FILENO);
	dup2(null, STDOUT_FILENO);
	dup2(null, STDERR_FILENO);
	if (null > STDERR_FILENO)
		close(null);
}

int bg_detach(int *ready)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -errno;
	switch (fork()) {
	case -1: {
		int rc = -errno;
		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	case 0:
		break;
	default:
		wait_for_child(fds);
	}
	close(fds[0]);
	setsid();
	if (chdir("/") != 0) {
		/* "/" always exists; a failure changes nothing that matters */
	}
	quiet_stdio();
	*ready = fds[1];
	return 0;
}

void bg_ready(int ready)
{
	char ok = 1;

	if (ready < 0)
		return;
	while (write(ready, &ok, 1) < 0 && errno == EINTR)
		;
	close(ready);
}
