/*
 * child_jobs.c - pieces of work in child processes (child_jobs.h).
 *
 * The parent reads every running child's pipe as it fills (poll), so a
 * child with more to say than a pipe holds never waits on a parent that
 * waits on another child.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_jobs.h"

struct child {
	pid_t pid;
	int fd;         /* the read end of its pipe, -1 once at its end */
	unsigned k;
	struct sbuf out;
};

struct pool {
	const struct child_jobs *j;
	struct child *c;   /* [width] */
	unsigned running;
	int status;
};

unsigned child_jobs_cpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? (unsigned)n : 1;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static __attribute__((noreturn)) void child_main(struct pool *p, unsigned k, int fd)
{
	struct sbuf out;
	int status;

	for (unsigned i = 0; i < p->j->width; i++)
		if (p->c[i].fd >= 0)
			close(p->c[i].fd);
	sbuf_init(&out);
	status = p->j->work(p->j->ctx, k, &out);
	if (status == 0 && write_all(fd, out.data ? out.data : "", out.len) != 0)
		status = 1;
	sbuf_release(&out);
	/* exit, not _exit: leak checkers run at exit, and the parent flushed
	 * its streams before the fork, so nothing is written twice. */
	exit(status);
}

static int spawn(struct pool *p, struct child *c, unsigned k)
{
	int fds[2];

	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		perror("fork");
		close(fds[0]);
		close(fds[1]);
		return 1;
	}
	if (c->pid == 0) {
		close(fds[0]);
		child_main(p, k, fds[1]);
	}
	close(fds[1]);
	c->fd = fds[0];
	c->k = k;
	sbuf_init(&c->out);
	p->running++;
	return 0;
}

/* waitpid's status; a child that cannot be waited for exited 1. */
static int wait_status(pid_t pid)
{
	int ws;

	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return W_EXITCODE(1, 0);
	return ws;
}

/* The child's pipe ended: how it ended, and what it wrote, to done. */
static void reap(struct pool *p, struct child *c)
{
	int ws = wait_status(c->pid), status;

	close(c->fd);
	c->fd = -1;
	p->running--;
	status = p->j->done(p->j->ctx, c->k, ws, c->out.data ? c->out.data : "", c->out.len);
	if (status > p->status)
		p->status = status;
	sbuf_release(&c->out);
}

static void drain(struct pool *p, struct child *c)
{
	char buf[65536];
	ssize_t n = read(c->fd, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return;
	if (n > 0 && sbuf_append(&c->out, buf, (size_t)n) == 0)
		return;
	reap(p, c);
}

static void wait_some(struct pool *p)
{
	struct pollfd fds[p->j->width];
	unsigned n = 0;

	for (unsigned i = 0; i < p->j->width; i++)
		if (p->c[i].fd >= 0)
			fds[n++] = (struct pollfd){ .fd = p->c[i].fd, .events = POLLIN };
	if (poll(fds, n, -1) < 0)
		return;
	for (unsigned i = 0, f = 0; i < p->j->width; i++) {
		if (p->c[i].fd < 0)
			continue;
		if (fds[f++].revents)
			drain(p, &p->c[i]);
	}
}

static struct child *idle_slot(struct pool *p)
{
	for (unsigned i = 0; i < p->j->width; i++)
		if (p->c[i].fd < 0)
			return &p->c[i];
	return NULL;
}

int child_jobs_run(const struct child_jobs *j)
{
	struct pool p = { .j = j };
	unsigned next = 0;

	if ((p.c = calloc(j->width, sizeof(*p.c))) == NULL)
		return 1;
	for (unsigned i = 0; i < j->width; i++)
		p.c[i].fd = -1;
	while ((next < j->njobs && p.status == 0) || p.running > 0) {
		struct child *c;
		while (next < j->njobs && p.status == 0 && (c = idle_slot(&p)) != NULL) {
			if (spawn(&p, c, next++) != 0)
				p.status = 1;
		}
		if (p.running > 0)
			wait_some(&p);
	}
	free(p.c);
	return p.status;
}
