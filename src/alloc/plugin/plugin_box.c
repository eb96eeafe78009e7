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

/* An answer that comes within this costs no system call on either side.
 * Bounded by the clock, not by a count of pauses: a pause lasts from a few
 * cycles to over a hundred, depending on the processor, so 4,000 of them
 * were 20 microseconds on one machine and 120 on another, a core burnt
 * after every call while the other side had nothing to say. */
#define SPIN_NS 20000
/* Pauses between looks at the clock (a look costs about as much as one). */
#define SPINS_PER_LOOK 64

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

/* 1 for `want`, -1 for the end, 0 for neither yet. */
static inline int arrived(struct pw_box *b, uint32_t want)
{
	uint32_t v = atomic_load_explicit(&b->seq, memory_order_acquire);

	return v == want ? 1 : v == PW_SEQ_ENDED ? -1 : 0;
}

/* What arrived within SPIN_NS of `start`, or 0. */
static int spin(struct pw_box *b, uint32_t want, int64_t start)
{
	int got;

	for (int64_t until = start + SPIN_NS; now_ns() < until;) {
		for (int i = 0; i < SPINS_PER_LOOK; i++) {
			if ((got = arrived(b, want)) != 0)
				return got;
			relax();
		}
	}
	return 0;
}

int pw_box_wait(struct pw_box *b, uint32_t want, int timeout_ms)
{
	/* An answer already there costs no look at the clock. */
	int got = arrived(b, want);

	if (got != 0)
		return got;
	int64_t start = now_ns();
	int64_t deadline = timeout_ms < 0 ? INT64_MAX : start + (int64_t)timeout_ms * 1000000;

	if ((got = spin(b, want, start)) != 0)
		return got;
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
		if ((got = arrived(b, want)) != 0)
			return got;
	}
}
