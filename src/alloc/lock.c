/*
 * lock.c - the device lock's contended paths: sleeping and waking.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

/* Marks the lock contended (2) and sleeps until it is seen free. */
void npa_lock_wait(struct npa_lock *l, int seen)
{
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
