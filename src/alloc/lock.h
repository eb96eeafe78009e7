/*
 * lock.h - the device lock: a futex mutex (Drepper, "Futexes Are Tricky",
 * mutex 3). Uncontended it is one compare-and-swap to take and one exchange
 * to drop, inline; pthread_mutex_lock/unlock are calls into libc that
 * dispatch on the mutex kind and cost more than a cached allocation itself.
 * Contended, waiters sleep in the kernel as with a pthread mutex.
 */
#ifndef NPA_LOCK_H
#define NPA_LOCK_H

#include <stdbool.h>

struct npa_lock {
	int state; /* 0 free, 1 held, 2 held with possible sleepers */
};

#define NPA_LOCK_INIT ((struct npa_lock){ 0 })

void npa_lock_wait(struct npa_lock *l, int seen);
void npa_lock_wake(struct npa_lock *l);

static inline void npa_lock_acquire(struct npa_lock *l)
{
	int seen = 0;

	if (!__atomic_compare_exchange_n(&l->state, &seen, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		npa_lock_wait(l, seen);
}

static inline void npa_lock_release(struct npa_lock *l)
{
	if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
		npa_lock_wake(l);
}

#endif /* NPA_LOCK_H */
