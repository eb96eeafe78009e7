/*
 * plugin_box.c - posting to and waiting on a lane's mailbox.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "plugin_box.h"

/* About 20 microseconds here: an answer that comes sooner costs no
 * system call on either side. */
#define SPINS 4000

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void pw_box_post(struct pw_box *b, uint32_t to)
{
	atomic_store_explicit(&b->seq, to, memory_order_seq_cst);
	if (atomic_load_explicit(&b->sleepers, memory_order_seq_cst))
		syscall(SYS_futex, &b->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int pw_box_wait(struct pw_box *b, uint32_t want, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? INT64_MAX : now_ns() + (int64_t)timeout_ms * 1000000;

	for (int i = 0; i < SPINS; i++) {
		uint32_t v = atomic_load_explicit(&b->seq, memory_order_acquire);
		if (v == want || v == PW_SEQ_ENDED)
			return v == want ? 1 : -1;
		relax();
	}
	for (;;) {
		int64_t left = deadline - now_ns();
		struct timespec ts = { left / 1000000000, left % 1000000000 };

		if (left <= 0)
			return 0;
		atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
		uint32_t v = atomic_load_explicit(&b->seq, memory_order_seq_cst);
		if (v != want && v != PW_SEQ_ENDED)
			syscall(SYS_futex, &b->seq, FUTEX_WAIT, v,
				deadline == INT64_MAX ? NULL : &ts, NULL, 0);
		atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_seq_cst);
		v = atomic_load_explicit(&b->seq, memory_order_acquire);
		if (v == want || v == PW_SEQ_ENDED)
			return v == want ? 1 : -1;
	}
}
