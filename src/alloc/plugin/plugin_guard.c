/*
 * plugin_guard.c - the fault barrier: per-thread jump buffers and
 * process-wide signal handlers that chain to whatever was installed before.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "plugin_guard.h"

struct barrier {
	sigjmp_buf env;
	struct plugin_fault fault;
};

static __thread struct barrier *volatile current;
/* The thread's signal mask, read at its first plug-in call: put back after
 * a fault, since a sanitizer's handler may run ours with signals blocked. */
static __thread sigset_t thread_mask;
static __thread bool have_mask;

static const int guarded_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NSIGNALS (sizeof(guarded_signals) / sizeof(guarded_signals[0]))
static struct sigaction previous[NSIGNALS];
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t index_of(int sig)
{
	size_t i = 0;

	while (i < NSIGNALS && guarded_signals[i] != sig)
		i++;
	return i;
}

/* Not ours: do what would have happened without the barrier. */
static void chain(int sig, siginfo_t *info, void *uc)
{
	const struct sigaction *old = &previous[index_of(sig)];

	if (old->sa_flags & SA_SIGINFO && old->sa_sigaction != NULL) {
		old->sa_sigaction(sig, info, uc);
		return;
	}
	if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_fault(int sig, siginfo_t *info, void *uc)
{
	struct barrier *b = current;

	if (b == NULL) {
		chain(sig, info, uc);
		return;
	}
	current = NULL;
	b->fault.end = PLUGIN_END_SIGNAL;
	b->fault.sig = sig;
	b->fault.addr = sig == SIGABRT ? NULL : info->si_addr;
	b->fault.addr_known = sig != SIGABRT;
	siglongjmp(b->env, 1);
}

/*
 * Whoever set a handler since (a test harness does, before each test)
 * becomes the one a fault outside plug-ins goes to.
 */
static int install_one(size_t i)
{
	struct sigaction sa, now;

	if (sigaction(guarded_signals[i], NULL, &now) != 0)
		return -errno;
	if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_fault)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	return sigaction(guarded_signals[i], &sa, &previous[i]) == 0 ? 0 : -errno;
}

int plugin_guard_install(void)
{
	int rc = 0;

	pthread_mutex_lock(&install_lock);
	for (size_t i = 0; i < NSIGNALS && rc == 0; i++)
		rc = install_one(i);
	pthread_mutex_unlock(&install_lock);
	return rc;
}

int plugin_guard_call(void (*fn)(void *arg), void *arg, struct plugin_fault *f)
{
	struct barrier b;
	struct barrier *outer = current;

	memset(&b.fault, 0, sizeof(b.fault));
	/* The mask is not saved at each call (a system call every time); the
	 * thread's mask, read once, is put back on the rare fault instead. */
	if (!have_mask) {
		pthread_sigmask(SIG_BLOCK, NULL, &thread_mask);
		have_mask = true;
	}
	if (sigsetjmp(b.env, 0) != 0) {
		pthread_sigmask(SIG_SETMASK, &thread_mask, NULL);
		current = outer;
		*f = b.fault;
		return -EFAULT;
	}
	current = &b;
	fn(arg);
	current = outer;
	return 0;
}
