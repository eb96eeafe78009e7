/*
 * bench_readers - what a reader of the stats costs the thread allocating.
 *
 * One thread makes cached-hit malloc+free pairs of 4 KiB on device 0;
 * another copies the device's stats (npa_get_stats, what every stats file
 * does first) in a loop as fast as it can, far harder than any number of
 * cat loops. Rounds alternate: pairs alone, pairs with the reader.
 *
 *   pair ns      ns per pair of the allocating thread, median round
 *   copy ns      ns per npa_get_stats call of the reader, median round
 *   ratio        pairs with the reader / pairs alone (target <= 1.05 for a
 *                reader every 10 us)
 *
 * A copy's ns bounds what it can hold the device lock for; it is meant to
 * stay within a pair's. Last, a cache line's round trip between the two
 * CPUs: a copy the holder is asked for costs it at least that, so on a
 * machine where it is near 500 ns the ratio cannot come under 1.05.
 *
 * Needs two cores to say anything. The allocating
 * thread keeps one CPU in every round and the reader gets the others:
 * on a virtual machine two CPUs can differ in speed by twice, and a ratio
 * of rounds run on different CPUs would say only that.
 */
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"

#define PAIRS 2000000UL
#define ROUNDS 7
#define SIZE 4096

/*
 * Aligned, so a line of its own (its size rounds up to the alignment).
 * The reader reads gap_ns and stop without a pause, and the struct lives
 * on the allocating thread's stack: sharing a line with pairs()' locals,
 * written every pair, it made every pair a cache miss. Whether it shared
 * one depended on where the stack began (ASLR): the same binary gave 1.09
 * or 4-5x from one run to the next.
 */
struct reader {
	_Alignas(64) struct npa *a;
	uint64_t gap_ns; /* between copies: 0 flat out */
	atomic_bool stop;
	unsigned long copies;
	uint64_t ns;
};

static void *read_stats(void *arg)
{
	struct reader *r = arg;
	struct npa_stats s;
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		uint64_t c0 = bench_now_ns();
		npa_get_stats(r->a, 0, &s);
		bench_escape(&s);
		r->copies++;
		r->ns += bench_now_ns() - c0;
		while (bench_now_ns() - c0 < r->gap_ns)
			;
	}
	return NULL;
}

static int alloc_cpu = -1;   /* the allocating thread's CPU, or -1: not pinned */
static cpu_set_t reader_cpus; /* the CPUs the process may use, but alloc_cpu */

/* The calling thread stays on the CPU it runs on, if the process may use
 * another for the reader (taskset and cpusets say which). */
static void pin_self(void)
{
	cpu_set_t allowed, one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
	    CPU_COUNT(&allowed) < 2 || !CPU_ISSET(cpu, &allowed))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0)
		return;
	reader_cpus = allowed;
	CPU_CLR(cpu, &reader_cpus);
	alloc_cpu = cpu;
}

/*
 * fn(arg) started on the reader's CPUs, set before it runs: anywhere the
 * process may but on the allocating thread's. Where they cannot be set,
 * it starts anyway (and the rounds are said not to be pinned) unless
 * only_pinned. false if it did not start.
 */
static bool start_reader(pthread_t *t, void *(*fn)(void *), void *arg, bool only_pinned)
{
	pthread_attr_t attr;
	bool pinned, started = false;

	if (pthread_attr_init(&attr) != 0)
		return false;
	pinned = alloc_cpu >= 0 &&
		 pthread_attr_setaffinity_np(&attr, sizeof(reader_cpus), &reader_cpus) == 0;
	if (pinned || !only_pinned) {
		started = pthread_create(t, &attr, fn, arg) == 0;
		if (started && !pinned)
			alloc_cpu = -1; /* say so: the rounds were not pinned */
	}
	pthread_attr_destroy(&attr);
	return started;
}

/* ns per pair over PAIRS pairs. */
static double pairs(struct npa *a, char *err, size_t errlen)
{
	uint64_t t0 = bench_now_ns();
	void *p;

	for (unsigned long i = 0; i < PAIRS; i++) {
		if (npa_malloc(a, 0, SIZE, NULL, &p, err, errlen) ||
		    npa_free(a, p, err, errlen))
			return -1;
	}
	return (double)(bench_now_ns() - t0) / PAIRS;
}

/* A round with a reader: ns per pair, and ns per copy into *copy_ns. */
static double pairs_read(struct npa *a, uint64_t gap_ns, double *copy_ns, char *err,
			 size_t errlen)
{
	struct reader r = { .a = a, .gap_ns = gap_ns };
	pthread_t t;

	atomic_init(&r.stop, false);
	if (!start_reader(&t, read_stats, &r, false))
		return -1;
	double ns = pairs(a, err, errlen);
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	*copy_ns = r.copies ? (double)r.ns / (double)r.copies : 0;
	return ns;
}

/*
 * A cache line's round trip between the allocating thread's CPU and the
 * reader's: one line bounced ROUND_TRIPS times. A copy asked of the
 * holder of the lock costs it at least one: the reader's request comes
 * in, and the holder's publication must take back lines the reader read.
 */
#define ROUND_TRIPS 100000

static _Alignas(64) atomic_ulong ball;

static void *bounce_back(void *arg)
{
	(void)arg;
	for (unsigned long i = 1; i < 2 * ROUND_TRIPS; i += 2) {
		while (atomic_load_explicit(&ball, memory_order_acquire) != i)
			;
		atomic_store_explicit(&ball, i + 1, memory_order_release);
	}
	return NULL;
}

/* ns per round trip, or -1 if the second thread could not start on the
 * reader's CPUs: on the allocating thread's, each bounce would wait for a
 * time slice. */
static double line_round_trip_ns(void)
{
	pthread_t t;

	atomic_store(&ball, 0);
	if (!start_reader(&t, bounce_back, NULL, true))
		return -1;
	uint64_t t0 = bench_now_ns();
	for (unsigned long i = 0; i < 2 * ROUND_TRIPS; i += 2) {
		atomic_store_explicit(&ball, i + 1, memory_order_release);
		while (atomic_load_explicit(&ball, memory_order_acquire) != i + 2)
			;
	}
	double ns = (double)(bench_now_ns() - t0) / ROUND_TRIPS;
	pthread_join(t, NULL);
	return ns;
}

struct pace {
	const char *name;
	uint64_t gap_ns;
};

/* Flat out: a copy after a copy. 10 us apart: 100,000 copies a second,
 * still twenty times what four cat loops ask for. */
static const struct pace paces[] = { { "flat out", 0 }, { "every 10 us", 10000 } };
#define NPACES (sizeof(paces) / sizeof(paces[0]))

int main(void)
{
	char err[256];
	struct npa *a = NULL;
	double alone[ROUNDS], busy[NPACES][ROUNDS], copy[NPACES][ROUNDS];

	if (bench_device_up(1ULL << 30, err, sizeof(err)) ||
	    bench_npa_new(NULL, &a, err, sizeof(err))) {
		fprintf(stderr, "bench_readers: %s\n", err);
		return 1;
	}
	pin_self();
	pairs(a, err, sizeof(err)); /* warm: every later pair is a cached hit */
	for (int i = 0; i < ROUNDS; i++) {
		alone[i] = pairs(a, err, sizeof(err));
		for (size_t p = 0; p < NPACES; p++)
			busy[p][i] = pairs_read(a, paces[p].gap_ns, &copy[p][i], err, sizeof(err));
	}
	double pa = bench_median(alone, ROUNDS);
	double trip = line_round_trip_ns();
	printf("bench_readers: 4 KiB cached pairs while another thread copies the stats\n");
	if (alloc_cpu >= 0)
		printf("(allocating thread on CPU %d in every round, the reader on the others)\n",
		       alloc_cpu);
	else
		printf("(threads not pinned: fewer than 2 CPUs allowed, or pinning refused)\n");
	printf("%-22s%10s%10s%10s%14s\n", "reader", "pair ns", "ratio", "copy ns", "copy / pair");
	printf("%-22s%10.1f%10s%10s%14s\n", "none", pa, "1.00", "-", "-");
	for (size_t p = 0; p < NPACES; p++) {
		double pb = bench_median(busy[p], ROUNDS), c = bench_median(copy[p], ROUNDS);
		if (pb < 0) {
			fprintf(stderr, "bench_readers: %s\n", err);
			return 1;
		}
		printf("%-22s%10.1f%10.2f%10.1f%14.2f\n", paces[p].name, pb, pb / pa, c, c / pa);
	}
	printf("targets: ratio <= 1.05 with a reader every 10 us (%s); copy / pair <= 1.0\n",
	       bench_verdict(bench_median(busy[1], ROUNDS) / pa <= 1.05));
	if (trip > 0)
		printf("a cache line's round trip between the two CPUs: %.0f ns, %.1f%% of 10 us:\n"
		       "the least a copy asked of the lock's holder costs it\n",
		       trip, trip / 100);
	npa_destroy(a, NULL);
	bench_device_down();
	return 0;
}
