/*
 * bench_baseline.h - the general-purpose mallocs every allocator figure is
 * printed beside: glibc's, and Debian's jemalloc and mimalloc when they are
 * installed.
 *
 * All three are called through function pointers, so each pair pays the
 * same indirect call and the compiler can elide none of them. jemalloc and
 * mimalloc are dlopen'ed with RTLD_LOCAL: they serve only the calls made
 * through these pointers, while the rest of the process (the simulator,
 * the allocator's bookkeeping) keeps glibc, so they can be measured in the
 * same process and run, rounds interleaved with the allocator's.
 */
#ifndef NPUMEMFS_BENCH_BASELINE_H
#define NPUMEMFS_BENCH_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

enum bench_baseline_id {
	BENCH_GLIBC,
	BENCH_JEMALLOC,
	BENCH_MIMALLOC,
	BENCH_BASELINES,
};

struct bench_baseline {
	const char *name;          /* "glibc", "jemalloc", "mimalloc" */
	void *(*malloc)(size_t);
	void (*free)(void *);
	bool present;              /* false: not installed, printed as n/a */
};

/*
 * Call first in main, before anything else runs: jemalloc is built with
 * initial-exec TLS, which glibc's loader can give a dlopen'ed library only
 * from a surplus it reserves at start-up; when GLIBC_TUNABLES does not
 * reserve enough yet, the program re-executes itself once with it set.
 */
void bench_baseline_prepare(char **argv);

/*
 * Fills all three; a library that cannot be loaded is left absent. The
 * libraries stay loaded until exit: a malloc may leave thread-exit hooks
 * pointing into itself.
 */
void bench_baselines_open(struct bench_baseline b[BENCH_BASELINES]);
/* One by name, for programs that measure one at a time; -1 if the name is unknown. */
int bench_baseline_open(const char *name, struct bench_baseline *out);

/* "n/a (not installed)" or the figure, right-aligned in `width`. */
void bench_print_figure(bool present, double v, int width, int precision);

#endif /* NPUMEMFS_BENCH_BASELINE_H */
