/*
 * npumem_plugin_host.c - the process a plug-in runs in.
 *
 * The daemon starts one per loaded plug-in (plugin_host.c) with three
 * descriptors (plugin_wire.h): ctl, on which it sends the socket of each
 * new lane; async, for the plug-in's own threads' ACL calls; and the
 * plug-in object it checked. Each lane gets a thread that runs one call
 * at a time. Nothing here guards against the plug-in: whatever it does
 * ends at most this process, and the daemon sees how it ended.
 *
 * Process-wide state is unavoidable here: the ACL functions a plug-in
 * calls take no context, so they find the lane of their thread in a
 * thread-local and the async channel in `the_host`.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "alloc/plugin/plugin_loader.h"
#include "alloc/plugin/plugin_box.h"
#include "alloc/plugin/plugin_wire.h"
#include "plugin_host_acl.h"

struct host the_host = { .async_fd = PW_FD_ASYNC, .async_lock = PTHREAD_MUTEX_INITIALIZER };
__thread struct host_lane *host_lane;

/* A fork inside plug-in code: the copy must never answer for the host,
 * nor touch a lane's box, which it shares. */
static volatile sig_atomic_t is_fork_copy;

static void on_fork_child(void)
{
	is_fork_copy = 1;
}

void host_leave_if_copy(void)
{
	if (is_fork_copy)
		_exit(0);
}

static void load(struct pw_msg *m, ssize_t n)
{
	char err[PLUGIN_ERRLEN] = "";
	struct plugin_spec spec;
	size_t len = (size_t)n - sizeof(*m);

	m->data[len < PW_MAX_DATA ? len : PW_MAX_DATA - 1] = '\0';
	m->rc = plugin_spec_parse(m->data, &spec, err, sizeof(err));
	if (!m->rc)
		m->rc = plugin_load_spec(&the_host.plugin, &spec, PW_FD_OBJECT, err, sizeof(err));
	m->len = (uint32_t)strlen(err) + 1;
	memcpy(m->data, err, m->len);
}

static void run_desc(struct pw_msg *m)
{
	void *fn = (void *)(uintptr_t)m->v[0];
	void *obj = (void *)(uintptr_t)m->v[1];

	m->len = 0;
	switch (m->op) {
	case PW_DESC_ALLOC:
		m->v[0] = (uintptr_t)((aclrtAllocatorAllocFunc)fn)(obj, (size_t)m->v[2]);
		break;
	case PW_DESC_FREE:
		((aclrtAllocatorFreeFunc)fn)(obj, (void *)(uintptr_t)m->v[2]);
		break;
	case PW_DESC_ALLOC_ADVISE:
		m->v[0] = (uintptr_t)((aclrtAllocatorAllocAdviseFunc)fn)(
			obj, (size_t)m->v[2], (void *)(uintptr_t)m->v[3]);
		break;
	case PW_DESC_ADDR:
		m->v[0] = (uintptr_t)((aclrtAllocatorGetAddrFromBlockFunc)fn)(obj);
		break;
	}
}

static void run_call(struct pw_msg *m)
{
	struct plugin_call c;

	memset(&c, 0, sizeof(c));
	pw_get_call(m, &c);
	if (c.fn == PLUGIN_FN_BEGIN_POOL)
		host_filter_wrap(&c);
	plugin_call_run(&the_host.plugin, &c);
	m->len = 0;
	m->kind = PW_RETURN;
	pw_put_call(m, &c);
}

static void serve(struct pw_msg *m, ssize_t n)
{
	switch (m->kind) {
	case PW_LOAD:
		load(m, n);
		break;
	case PW_CALL:
		run_call(m);
		break;
	case PW_DESC:
		run_desc(m);
		break;
	default:
		_exit(PW_EXIT_PROTOCOL);
	}
	host_leave_if_copy();
	m->kind = PW_RETURN;
}

/*
 * A fault ends the host as it would without a handler, but first tells
 * the daemon the address, which an exit status cannot carry. It runs on
 * a stack of its own, so a stack overflow is told too.
 */
static void on_fault(int sig, siginfo_t *info, void *uc)
{
	struct pw_fault f = { sig, sig == SIGABRT ? 0 : (uint64_t)(uintptr_t)info->si_addr };

	(void)uc;
	if (send(PW_FD_FAULT, &f, sizeof(f), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		f.sig = sig;
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Each lane's thread gets its own: an alternate stack is per thread. */
static void *alt_stack(void)
{
	stack_t ss = { .ss_size = 64 << 10 };

	ss.ss_sp = malloc(ss.ss_size);
	if (ss.ss_sp && sigaltstack(&ss, NULL) != 0) {
		free(ss.ss_sp);
		ss.ss_sp = NULL;
	}
	return ss.ss_sp;
}

static void tell_faults(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void *lane_main(void *arg)
{
	struct host_lane lane = { arg, 0 };
	struct pw_box *box = lane.box;
	struct pw_msg *m = malloc(PW_MSG_MAX);
	void *stack = alt_stack();

	host_lane = &lane;
	/* The daemon's box: the call is copied out, since the plug-in's ACL
	 * calls reuse the box while it runs. */
	while (m && pw_box_wait(box, lane.seq + 1, -1) == 1) {
		lane.seq++;
		uint32_t len = box->msg.len < PW_MAX_DATA ? box->msg.len : PW_MAX_DATA;
		memcpy(m, &box->msg, sizeof(*m) + len);
		serve(m, (ssize_t)(sizeof(*m) + len));
		memcpy(&box->msg, m, sizeof(*m) + m->len);
		lane.seq++;
		pw_box_post(box, lane.seq);
	}
	stack_t off = { .ss_flags = SS_DISABLE };
	sigaltstack(&off, NULL);
	free(stack);
	free(m);
	return NULL;
}

/* One lane's box (its memfd, mapped), or NULL when the daemon closed ctl. */
static struct pw_box *next_lane(void)
{
	char byte;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;

	void *box;

	if (recvmsg(PW_FD_CTL, &mh, MSG_CMSG_CLOEXEC) <= 0)
		return NULL;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (fd < 0)
		_exit(PW_EXIT_PROTOCOL);
	box = mmap(NULL, PW_BOX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (box == MAP_FAILED)
		_exit(PW_EXIT_PROTOCOL);
	return box;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	struct pw_box *box;
	pthread_t t;

	/* The simulator's library, so that a plug-in's dependency on it is
	 * met; its functions are never reached: ours are found first. */
	if (argc > 1 && argv[1][0])
		dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	pthread_atfork(NULL, NULL, on_fork_child);
	tell_faults();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while ((box = next_lane()))
		if (pthread_create(&t, &attr, lane_main, box) != 0)
			munmap(box, PW_BOX_SIZE);
	/* ctl closed: the daemon unloads the plug-in, or is gone (its end
	 * closes with it, whichever of its threads started us); the plug-in's
	 * threads go with us. */
	_exit(0);
}
