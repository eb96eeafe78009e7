/*
 * lock.c - the device lock's contended paths: sleeping and waking.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

/* About a microsecond: longer than a stats copy holds the lock, far
 * shorter than a futex sleep and wake. */
#define SPINS 200

/* Takes the lock if it comes free within SPINS pauses. */
static bool spin_take(struct npa_lock *l)
{
	for (int i = 0; i < SPINS; i++) {
		int seen = 0;
		if (__atomic_load_n(&l->state, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->state, &seen, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		npa_cpu_pause();
	}
	return false;
}

/* Spins a little, then marks the lock contended (2) and sleeps until it is
 * seen free. */
void npa_lock_wait(struct npa_lock *l, int seen)
{
	if (seen != 2 && spin_take(l))
		return;
	if (seen != 2)
		seen = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	while (seen != 0) {
		syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		seen = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	}
}

void npa_lock_wake(struct npa_lock *l)
{
	syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void npa_lock_release_published(struct npa_lock *l)
{
	if (l->publish)
		l->publish(l);
	if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
		npa_lock_wake(l);
}
