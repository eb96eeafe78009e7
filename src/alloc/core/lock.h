/*
 * lock.h - the device lock: a futex mutex (Drepper, "Futexes Are Tricky",
 * mutex 3). Uncontended it is one compare-and-swap to take and one exchange
 * to drop, inline; pthread_mutex_lock/unlock are calls into libc that
 * dispatch on the mutex kind and cost more than a cached allocation itself.
 * Contended, waiters spin a little (a reader's copy of the stats holds it
 * for less than a sleep and a wake cost), then sleep in the kernel as with
 * a pthread mutex.
 *
 * A lock can carry a publisher: a reader that finds the lock held sets
 * `wanted` instead of waiting, and the holder runs `publish` just before it
 * lets go, while what the lock guards is whole (stats_block.h). Unwanted, a
 * release costs one load more, of a line the holder owns anyway.
 */
#ifndef NPA_LOCK_H
#define NPA_LOCK_H

#include <stdbool.h>

struct npa_lock {
	int state;  /* 0 free, 1 held, 2 held with possible sleepers */
	int wanted; /* a reader waits for `publish`; atomic */
	void (*publish)(struct npa_lock *l); /* set before the lock is shared */
};

#define NPA_LOCK_INIT ((struct npa_lock){ 0 })

void npa_lock_wait(struct npa_lock *l, int seen);
void npa_lock_wake(struct npa_lock *l);
/* npa_lock_release once a reader wants the stats: out of line, so the
 * common release makes no call. */
void npa_lock_release_published(struct npa_lock *l);

static inline void npa_lock_acquire(struct npa_lock *l)
{
	int seen = 0;

	if (!__atomic_compare_exchange_n(&l->state, &seen, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		npa_lock_wait(l, seen);
}

/* A spinning thread's pause: lets the other hyperthread run. */
static inline void npa_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline bool npa_lock_try(struct npa_lock *l)
{
	int seen = 0;

	return __atomic_compare_exchange_n(&l->state, &seen, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline bool npa_lock_held(struct npa_lock *l)
{
	return __atomic_load_n(&l->state, __ATOMIC_RELAXED) != 0;
}

static inline void npa_lock_release(struct npa_lock *l)
{
	if (__builtin_expect(__atomic_load_n(&l->wanted, __ATOMIC_RELAXED), 0))
		npa_lock_release_published(l);
	else if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
		npa_lock_wake(l);
}

#endif /* NPA_LOCK_H */
