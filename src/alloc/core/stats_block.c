/*
 * stats_block.c - stats copied for readers without holding up the holder
 * of the device lock (stats_block.h).
 *
 * The sequence follows Boehm, "Can seqlocks get along with programming
 * language memory models?" (MSPC 2012): every word is an atomic access, so
 * a torn copy is retried rather than a data race. Words are stored with
 * release and loaded with acquire rather than fenced (TSan does not model
 * fences; on x86 both are plain moves): a reader that sees one word of a
 * new publication then sees its odd sequence too.
 */
#include <sched.h>
#include <string.h>

#include "stats_block.h"

_Static_assert(sizeof(struct npa_stats) % sizeof(int64_t) == 0,
	       "struct npa_stats is a whole number of 64-bit words");

/* A waiting reader reads the block's sequence, a line only publications
 * write, and looks at the lock's line (the holder's, written by every
 * acquire and release) only every LOCK_LOOK spins; it yields the processor
 * to the holder every YIELD spins. */
#define LOCK_LOOK 16
#define YIELD 4096

void npa_stats_block_write(struct npa_stats_block *b, const struct npa_stats *from)
{
	int64_t w[NPA_STATS_WORDS];
	unsigned seq = __atomic_load_n(&b->seq, __ATOMIC_RELAXED);

	memcpy(w, from, sizeof(w));
	__atomic_store_n(&b->seq, seq + 1, __ATOMIC_RELAXED);
	for (size_t i = 0; i < NPA_STATS_WORDS; i++)
		__atomic_store_n(&b->word[i], w[i], __ATOMIC_RELEASE);
	__atomic_store_n(&b->seq, seq + 2, __ATOMIC_RELEASE);
}

/* A whole publication newer than `since` into `out`: false if there is
 * none yet or it changed while copied. */
static bool read_block(struct npa_stats_block *b, unsigned since, struct npa_stats *out)
{
	int64_t w[NPA_STATS_WORDS];
	unsigned seq = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);

	if (seq == since || (seq & 1))
		return false;
	for (size_t i = 0; i < NPA_STATS_WORDS; i++)
		w[i] = __atomic_load_n(&b->word[i], __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&b->seq, __ATOMIC_RELAXED) != seq)
		return false;
	memcpy(out, w, sizeof(w));
	return true;
}

/*
 * Free: copy under the lock, which holds it for the copy alone. Held: ask
 * the holder and wait for a publication begun after asking (so it shows a
 * moment after this call began), or for the lock to come free (the holder
 * let go before it saw the request).
 */
void npa_stats_copy(struct npa_lock *lock, void (*complete)(struct npa_lock *lock),
		    const struct npa_stats *stats, struct npa_stats_block *b,
		    struct npa_stats *out)
{
	for (;;) {
		if (npa_lock_try(lock)) {
			complete(lock);
			*out = *stats;
			npa_lock_release(lock);
			return;
		}
		unsigned since = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);
		__atomic_store_n(&lock->wanted, 1, __ATOMIC_SEQ_CST);
		for (unsigned spins = 1; spins % LOCK_LOOK || npa_lock_held(lock); spins++) {
			if (read_block(b, since, out))
				return;
			if (spins % YIELD == 0)
				sched_yield();
			else
				npa_cpu_pause();
		}
		if (read_block(b, since, out))
			return;
	}
}
