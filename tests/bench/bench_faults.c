/*
 * bench_faults.c - what a fresh page costs: written first-touch, one page
 * fault each, against made present by mem_populate in one call and then
 * written. The reader's and the replay's arrays grow with mem_grow because
 * of the difference (base/mem_populate.h); on a machine where faults are
 * cheap the two are close.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/mem_populate.h"
#include "bench_util.h"

enum { PAGES = 4096, RUNS = 5 };

/* Nanoseconds per page to map PAGES fresh pages, optionally populate
 * them, and write a byte in each; the best of RUNS. */
static double per_page(bool populate)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = PAGES * page;
	double best = 0;

	for (int r = 0; r < RUNS; r++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		uint64_t t0 = bench_now_ns();
		if (populate)
			mem_populate(p, len);
		for (size_t i = 0; i < len; i += page)
			p[i] = 1;
		double ns = (double)(bench_now_ns() - t0) / PAGES;
		munmap(p, len);
		if (r == 0 || ns < best)
			best = ns;
	}
	return best;
}

int main(void)
{
	double touch = per_page(false), populated = per_page(true);

	if (touch < 0 || populated < 0) {
		fprintf(stderr, "bench_faults: mmap failed\n");
		return 1;
	}
	printf("bench_faults: a fresh page, written (best of %d runs of %d pages)\n", RUNS, PAGES);
	printf("  first-touch fault        %8.0f ns/page\n", touch);
	printf("  mem_populate, then write %8.0f ns/page   (%.1fx cheaper)\n", populated,
	       populated > 0 ? touch / populated : 0.0);
	return 0;
}
