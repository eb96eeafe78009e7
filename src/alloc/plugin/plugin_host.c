/*
 * plugin_host.c - starting a plug-in host, calling into it over lanes,
 * and seeing it end.
 *
 * A call takes an idle lane (or makes one), sends PW_CALL and waits for
 * PW_RETURN, serving the ACL calls the plug-in makes meanwhile. The wait
 * is bounded by timeout_ms of silence from the host: time the daemon
 * spends answering the host's own ACL calls does not count. A host that
 * overruns is killed with its whole process group. A watcher thread per
 * host serves the async channel and sees the host end when no call does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <acl/acl_rt.h>

#include "plugin_box.h"
#include "plugin_host_impl.h"
#include "plugin_loader.h"

extern char **environ;

int plugin_host_default_path(char *buf, size_t len)
{
	const char *env = getenv("NPUMEMFS_PLUGIN_HOST");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0])
		return snprintf(buf, len, "%s", env) < (int)len ? 0 : -ENAMETOOLONG;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return snprintf(buf, len, "%s/npumem-plugin-host", exe) < (int)len ? 0 : -ENAMETOOLONG;
}

/*
 * Whether the host has exited, waiting up to wait_ms (-1: as long as it
 * takes). Its pidfd says so; where there is none (valgrind does not know
 * pidfd_open), the kernel is asked every 20 ms without reaping it, since
 * a file descriptor's end could be kept open by a child the plug-in forked.
 */
static bool exited(const struct plugin_host *h, int wait_ms)
{
	struct pollfd p = { .fd = h->pidfd, .events = POLLIN };
	siginfo_t info;

	if (h->pidfd >= 0)
		return poll(&p, 1, wait_ms) == 1;
	for (int waited = 0;; waited += 20) {
		memset(&info, 0, sizeof(info));
		if (waitid(P_PID, (id_t)h->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
		    info.si_pid == h->pid)
			return true;
		if (wait_ms >= 0 && waited >= wait_ms)
			return false;
		usleep(20000);
	}
}

/* h->lock held. How the host ended, once; it is dead or made so. */
static void settle_end(struct plugin_host *h)
{
	int st = 0;

	if (h->ended)
		return;
	if (!exited(h, 1000))
		kill(-h->pid, SIGKILL);
	pid_t r = waitpid(h->pid, &st, 0);
	kill(-h->pid, SIGKILL); /* what it left behind in its group */
	memset(&h->end, 0, sizeof(h->end));
	if (h->timed_out) {
		h->end.end = PLUGIN_END_TIMEOUT;
		h->end.timeout_ms = h->timed_out_ms;
	} else if (r == h->pid && WIFSIGNALED(st)) {
		struct pw_fault told = { 0, 0 };
		h->end.end = PLUGIN_END_SIGNAL;
		h->end.sig = WTERMSIG(st);
		if (recv(h->fault_fd, &told, sizeof(told), MSG_DONTWAIT) == sizeof(told) &&
		    told.sig == h->end.sig && told.sig != SIGABRT) {
			h->end.addr = (void *)(uintptr_t)told.addr;
			h->end.addr_known = true;
		}
	} else if (r == h->pid && WIFEXITED(st)) {
		h->end.end = PLUGIN_END_EXIT;
		h->end.status = WEXITSTATUS(st);
	} else {
		h->end.end = PLUGIN_END_LOST;
		snprintf(h->end.detail, sizeof(h->end.detail), "its host ended (%s)",
			 strerror(errno));
	}
	h->ended = true;
}

bool plugin_host_ended(struct plugin_host *h, struct plugin_fault *f)
{
	pthread_mutex_lock(&h->lock);
	bool ended = h->ended;
	if (ended && f)
		*f = h->end;
	pthread_mutex_unlock(&h->lock);
	return ended;
}

/* The call in flight saw the host go: settle how, and say it. */
static int died(struct plugin_host *h, bool overran, struct plugin_fault *f)
{
	pthread_mutex_lock(&h->lock);
	if (overran && !h->ended) {
		h->timed_out = true;
		h->timed_out_ms = h->timeout_ms;
		kill(-h->pid, SIGKILL);
	}
	settle_end(h);
	*f = h->end;
	pthread_mutex_unlock(&h->lock);
	return -EFAULT;
}

/* h->lock held. */
static void lane_free(struct plugin_host *h, struct ph_lane *l)
{
	for (struct ph_lane **pp = &h->all; *pp; pp = &(*pp)->next_all)
		if (*pp == l) {
			*pp = l->next_all;
			break;
		}
	munmap(l->box, PW_BOX_SIZE);
	free(l->msg);
	free(l);
}

static int send_fd(int sock, int fd)
{
	char byte = 0;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	memset(cbuf, 0, sizeof(cbuf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* h->lock held. A new lane: a box in a memfd both map, given to the host. */
static struct ph_lane *lane_new(struct plugin_host *h)
{
	struct ph_lane *l = calloc(1, sizeof(*l));
	int fd = memfd_create("npumemfs-lane", MFD_CLOEXEC);
	void *box = MAP_FAILED;

	if (fd >= 0 && ftruncate(fd, PW_BOX_SIZE) == 0)
		box = mmap(NULL, PW_BOX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!l || box == MAP_FAILED || !(l->msg = malloc(PW_MSG_MAX)) ||
	    send_fd(h->ctl_fd, fd) != 0) {
		if (box != MAP_FAILED)
			munmap(box, PW_BOX_SIZE);
		if (l)
			free(l->msg);
		free(l);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	l->box = box;
	l->next_all = h->all;
	h->all = l;
	return l;
}

static struct ph_lane *lane_take(struct plugin_host *h)
{
	struct ph_lane *l;

	pthread_mutex_lock(&h->lock);
	l = h->idle;
	if (l)
		h->idle = l->next;
	else if (!h->ended)
		l = lane_new(h);
	h->busy += l != NULL;
	pthread_mutex_unlock(&h->lock);
	return l;
}

static void lane_give(struct plugin_host *h, struct ph_lane *l)
{
	pthread_mutex_lock(&h->lock);
	l->next = h->idle;
	h->idle = l;
	h->busy--;
	pthread_mutex_unlock(&h->lock);
}

/* l->msg into the box, and the host's turn. */
static void post(struct ph_lane *l)
{
	memcpy(&l->box->msg, l->msg, sizeof(*l->msg) + l->msg->len);
	l->seq++;
	pw_box_post(l->box, l->seq);
}

/* The host's message out of the box, its length bounded by what fits. */
static void take(struct ph_lane *l)
{
	memcpy(l->msg, &l->box->msg, sizeof(*l->msg));
	if (l->msg->len > PW_MAX_DATA)
		l->msg->len = PW_MAX_DATA;
	memcpy(l->msg->data, l->box->msg.data, l->msg->len);
}

/* Wait for l's answer, serving the host's requests meanwhile: 1 when it
 * came, 0 when the host went quiet too long, -1 when it ended. */
static int await(struct plugin_host *h, struct ph_lane *l)
{
	for (;;) {
		int r = pw_box_wait(l->box, l->seq + 1, (int)h->timeout_ms);
		if (r != 1)
			return r;
		l->seq++;
		take(l);
		if (l->msg->kind == PW_RETURN)
			return 1;
		if (l->msg->kind != PW_ACL && l->msg->kind != PW_FILTER)
			return -1;
		ph_serve(h, l->msg);
		post(l);
	}
}

/* Post what l->msg holds and wait for its PW_RETURN in l->msg; the
 * caller gives the lane back after reading it. A lane that failed is
 * in no known state: it is dropped. */
static int exchange(struct plugin_host *h, struct ph_lane *l, struct plugin_fault *f)
{
	int r;

	post(l);
	r = await(h, l);
	if (r == 1)
		return 0;
	r = died(h, r == 0, f);
	pthread_mutex_lock(&h->lock);
	lane_free(h, l);
	h->busy--;
	pthread_mutex_unlock(&h->lock);
	return r;
}

int plugin_host_call(struct plugin_host *h, struct plugin_call *c, struct plugin_fault *f)
{
	struct ph_lane *l = lane_take(h);
	int rc;

	if (!l)
		return plugin_host_ended(h, f) ? -EIO : -ENOMEM;
	if (c->fn == PLUGIN_FN_BEGIN_POOL && c->filter)
		ph_filter_allow(h, c->pool, (void *)c->filter, c->arg);
	memset(l->msg, 0, sizeof(*l->msg));
	l->msg->kind = PW_CALL;
	pw_put_call(l->msg, c);
	rc = exchange(h, l, f);
	if (rc == 0) {
		struct plugin_call r;
		memset(&r, 0, sizeof(r));
		pw_get_call(l->msg, &r);
		/* Only results come back: what was asked stays the caller's. */
		c->ret = r.ret;
		c->size_out = r.size_out;
		c->checked = r.checked;
		if (c->fn == PLUGIN_FN_GET_DEVICE_STATS)
			c->stats = r.stats;
		lane_give(h, l);
	}
	if (c->fn == PLUGIN_FN_END_POOL)
		ph_filter_forbid(h, c->pool);
	return rc;
}

int ph_desc_call(struct plugin_host *h, struct pw_msg *m)
{
	struct ph_lane *l = lane_take(h);
	struct plugin_fault f;

	if (!l)
		return -EIO;
	memcpy(l->msg, m, sizeof(*m));
	l->msg->len = 0;
	if (exchange(h, l, &f) != 0) {
		/* No plug-in call saw this end: tell it as the watcher would. */
		pthread_mutex_lock(&h->lock);
		void (*fn)(void *, enum plugin_fn) = h->on_death;
		void *arg = h->death_arg;
		pthread_mutex_unlock(&h->lock);
		if (fn)
			fn(arg, PLUGIN_FN_DESC);
		return -EFAULT;
	}
	memcpy(m->v, l->msg->v, sizeof(m->v));
	lane_give(h, l);
	return 0;
}

void plugin_host_set_on_death(struct plugin_host *h,
			      void (*fn)(void *arg, enum plugin_fn where), void *arg)
{
	pthread_mutex_lock(&h->lock);
	h->on_death = fn;
	h->death_arg = arg;
	pthread_mutex_unlock(&h->lock);
}

/* The async channel's one request, answered. */
static bool serve_async(struct plugin_host *h)
{
	struct pw_msg *m = h->async_msg;
	ssize_t got = recv(h->async_fd, m, PW_MSG_MAX, MSG_DONTWAIT);

	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (got < (ssize_t)sizeof(*m) || (m->kind != PW_ACL && m->kind != PW_FILTER))
		return false;
	if (m->len > (size_t)got - sizeof(*m))
		m->len = (uint32_t)((size_t)got - sizeof(*m));
	ph_serve(h, m);
	return send(h->async_fd, m, sizeof(*m) + m->len, MSG_NOSIGNAL) >= 0;
}

static void *watch(void *arg)
{
	struct plugin_host *h = arg;
	bool open = true;

	for (;;) {
		struct pollfd p[3] = { { .fd = h->stop_fd, .events = POLLIN },
				       { .fd = h->pidfd, .events = POLLIN },
				       { .fd = open ? h->async_fd : -1, .events = POLLIN } };
		int n = poll(p, 3, h->pidfd >= 0 ? -1 : 20);
		if (n < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			return NULL;
		if (p[2].revents & POLLIN)
			open = serve_async(h);
		else if (p[2].revents)
			open = false;
		if (p[1].revents || (h->pidfd < 0 && n == 0 && exited(h, 0)))
			break;
	}
	pthread_mutex_lock(&h->lock);
	/* A call in flight sees the end itself and says in which function. */
	bool told = h->ended || h->busy;
	settle_end(h);
	for (struct ph_lane *l = h->all; l; l = l->next_all)
		pw_box_post(l->box, PW_SEQ_ENDED);
	void (*fn)(void *, enum plugin_fn) = h->on_death;
	void *fn_arg = h->death_arg;
	pthread_mutex_unlock(&h->lock);
	/* A death a call saw is that caller's to tell; one none saw is ours. */
	if (!told && fn)
		fn(fn_arg, PLUGIN_FN_THREAD);
	return NULL;
}

/* The simulator's library: a plug-in links it, so the host loads it too
 * (inert there: the host's own ACL functions come first in the lookup). */
static const char *sim_library(void)
{
	Dl_info info;

	return dladdr((const void *)aclrtMalloc, &info) && info.dli_fname ? info.dli_fname : "";
}

static int spawn(struct plugin_host *h, const char *path, int ctl, int async, int object,
		 int fault)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char *argv[] = { (char *)"npumem-plugin-host", (char *)sim_library(), NULL };
	int src[4] = { ctl, async, object, fault }, rc = 0;

	/* Above the targets first, so that no dup2 overwrites a source. */
	for (int i = 0; i < 4; i++) {
		src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, PW_FD_FAULT + 1);
		if (src[i] < 0)
			rc = -errno;
	}
	ctl = src[0], async = src[1], object = src[2], fault = src[3];
	if (rc)
		goto out;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, ctl, PW_FD_CTL);
	posix_spawn_file_actions_adddup2(&fa, async, PW_FD_ASYNC);
	posix_spawn_file_actions_adddup2(&fa, object, PW_FD_OBJECT);
	posix_spawn_file_actions_adddup2(&fa, fault, PW_FD_FAULT);
	posix_spawn_file_actions_addclosefrom_np(&fa, PW_FD_FAULT + 1);
	/* Its own process group: a timeout kills whatever it started too. */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	rc = -posix_spawn(&h->pid, path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
out:
	for (int i = 0; i < 4; i++)
		if (src[i] >= 0)
			close(src[i]);
	return rc;
}

static void host_free(struct plugin_host *h)
{
	while (h->all)
		lane_free(h, h->all);
	if (h->ctl_fd >= 0)
		close(h->ctl_fd);
	if (h->async_fd >= 0)
		close(h->async_fd);
	if (h->pidfd >= 0)
		close(h->pidfd);
	if (h->stop_fd >= 0)
		close(h->stop_fd);
	if (h->fault_fd >= 0)
		close(h->fault_fd);
	pthread_mutex_destroy(&h->lock);
	free(h->async_msg);
	free(h);
}

/* The process and its watcher: 0, or -errno with err written. */
static int launch(struct plugin_host *h, const char *path, int object_fd, char *err,
		  size_t errlen)
{
	int ctl[2] = { -1, -1 }, async[2] = { -1, -1 }, fault[2] = { -1, -1 }, rc = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, async) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fault) != 0)
		rc = -errno;
	if (!rc)
		rc = spawn(h, path, ctl[1], async[1], object_fd, fault[1]);
	/* The host's ends are the host's now (or nobody's). */
	if (ctl[1] >= 0)
		close(ctl[1]);
	if (async[1] >= 0)
		close(async[1]);
	if (fault[1] >= 0)
		close(fault[1]);
	h->ctl_fd = ctl[0];
	h->async_fd = async[0];
	h->fault_fd = fault[0];
	if (rc) {
		snprintf(err, errlen, "cannot start the plug-in host %s: %s", path, strerror(-rc));
		return rc;
	}
	h->pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	bool no_pidfd = h->pidfd < 0 && errno != ENOSYS;
	h->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (no_pidfd || h->stop_fd < 0 ||
	    (rc = -pthread_create(&h->watcher, NULL, watch, h)) != 0) {
		rc = rc ? rc : -errno;
		snprintf(err, errlen, "cannot watch the plug-in host: %s", strerror(-rc));
		kill(-h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
		return rc;
	}
	return 0;
}

/* PW_LOAD: the host's loader resolves what the spec names. */
static int load(struct plugin_host *h, const char *spec_line, char *err, size_t errlen)
{
	struct ph_lane *l = lane_take(h);
	struct plugin_fault f;
	size_t n = strlen(spec_line) + 1;
	int rc;

	if (!l)
		return -ENOMEM;
	if (n > PW_MAX_DATA)
		n = PW_MAX_DATA;
	memset(l->msg, 0, sizeof(*l->msg));
	l->msg->kind = PW_LOAD;
	l->msg->len = (uint32_t)n;
	memcpy(l->msg->data, spec_line, n);
	l->msg->data[n - 1] = '\0';
	if (exchange(h, l, &f) != 0) {
		char what[160];
		plugin_fault_text(&f, what, sizeof(what));
		snprintf(err, errlen, "the plug-in host died loading the object: %s", what);
		return -EFAULT;
	}
	struct pw_msg *m = l->msg;
	rc = m->rc;
	if (rc && m->len) {
		m->data[m->len < PW_MAX_DATA ? m->len - 1 : PW_MAX_DATA - 1] = '\0';
		snprintf(err, errlen, "%s", m->data);
	}
	lane_give(h, l);
	return rc > 0 ? -EINVAL : rc;
}

int plugin_host_start(const struct plugin_isolation *iso, int object_fd, const char *spec_line,
		      struct plugin_host **out, char *err, size_t errlen)
{
	struct plugin_host *h = calloc(1, sizeof(*h));
	int rc;

	if (!h || !(h->async_msg = malloc(PW_MSG_MAX))) {
		free(h);
		snprintf(err, errlen, "out of memory starting a plug-in host");
		return -ENOMEM;
	}
	h->ctl_fd = h->async_fd = h->pidfd = h->stop_fd = h->fault_fd = -1;
	h->timeout_ms = iso->timeout_ms ? iso->timeout_ms : PLUGIN_TIMEOUT_MS_DEFAULT;
	h->blocks = iso->blocks;
	pthread_mutex_init(&h->lock, NULL);
	rc = launch(h, iso->host_path, object_fd, err, errlen);
	if (rc) {
		host_free(h);
		return rc;
	}
	rc = load(h, spec_line, err, errlen);
	if (rc) {
		plugin_host_stop(h);
		return rc;
	}
	*out = h;
	return 0;
}

void plugin_host_stop(struct plugin_host *h)
{
	uint64_t one = 1;

	if (!h)
		return;
	if (write(h->stop_fd, &one, sizeof(one)) != sizeof(one))
		kill(-h->pid, SIGKILL);
	pthread_join(h->watcher, NULL);
	ph_release_all(h);
	/* Closing ctl is the host's cue to go; the group is killed anyway
	 * so that nothing it started outlives it. */
	close(h->ctl_fd);
	h->ctl_fd = -1;
	pthread_mutex_lock(&h->lock);
	if (!h->ended) {
		if (!exited(h, 200))
			kill(-h->pid, SIGKILL);
		settle_end(h);
	}
	pthread_mutex_unlock(&h->lock);
	host_free(h);
}
