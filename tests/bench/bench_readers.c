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
 *   ratio        pairs with the reader / pairs alone (target <= 1.05)
 *
 * A copy's ns bounds what it can hold the device lock for; it is meant to
 * stay within a pair's. Needs two cores to say anything.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

#define PAIRS 2000000UL
#define ROUNDS 7
#define SIZE 4096

struct reader {
	struct npa *a;
	atomic_bool stop;
	unsigned long copies;
	uint64_t ns;
};

static void *read_stats(void *arg)
{
	struct reader *r = arg;
	struct npa_stats s;
	uint64_t t0 = bench_now_ns();

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		npa_get_stats(r->a, 0, &s);
		bench_escape(&s);
		r->copies++;
	}
	r->ns = bench_now_ns() - t0;
	return NULL;
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
static double pairs_read(struct npa *a, double *copy_ns, char *err, size_t errlen)
{
	struct reader r = { .a = a };
	pthread_t t;

	atomic_init(&r.stop, false);
	if (pthread_create(&t, NULL, read_stats, &r))
		return -1;
	double ns = pairs(a, err, errlen);
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	*copy_ns = r.copies ? (double)r.ns / (double)r.copies : 0;
	return ns;
}

int main(void)
{
	char err[256];
	struct npa *a = NULL;
	double alone[ROUNDS], busy[ROUNDS], copy[ROUNDS];

	if (bench_device_up(1ULL << 30, err, sizeof(err)) ||
	    bench_npa_new(NULL, &a, err, sizeof(err))) {
		fprintf(stderr, "bench_readers: %s\n", err);
		return 1;
	}
	pairs(a, err, sizeof(err)); /* warm: every later pair is a cached hit */
	for (int i = 0; i < ROUNDS; i++) {
		alone[i] = pairs(a, err, sizeof(err));
		busy[i] = pairs_read(a, &copy[i], err, sizeof(err));
		if (alone[i] < 0 || busy[i] < 0) {
			fprintf(stderr, "bench_readers: %s\n", err);
			return 1;
		}
	}
	double pa = bench_median(alone, ROUNDS), pb = bench_median(busy, ROUNDS);
	double c = bench_median(copy, ROUNDS);
	printf("bench_readers: 4 KiB cached pairs while another thread copies the stats\n");
	printf("%-26s%10s\n", "", "ns");
	printf("%-26s%10.1f\n", "pair, alone", pa);
	printf("%-26s%10.1f\n", "pair, with a reader", pb);
	printf("%-26s%10.1f\n", "stats copy (reader)", c);
	printf("%-26s%10.2f   (target <= 1.05: %s)\n", "pair with / alone", pb / pa,
	       bench_verdict(pb / pa <= 1.05));
	printf("%-26s%10.2f   (target <= 1.0: %s)\n", "copy / pair", c / pa,
	       bench_verdict(c / pa <= 1.0));
	npa_destroy(a, NULL);
	bench_device_down();
	return 0;
}
