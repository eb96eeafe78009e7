/*
 * bench_traces.h - the workloads the benchmarks replay, as parsed traces:
 * "churn" (small-size churn), "training" (a transformer training loop
 * whose sequence length drifts) and "random" (RMM's random_allocations),
 * from the project's generators (trace_gen.h). Same seed, same trace, on
 * every machine.
 */
#ifndef NPUMEMFS_BENCH_TRACES_H
#define NPUMEMFS_BENCH_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "workload/trace.h"

#define BENCH_SEED 42

/* Generate trace `kind` and parse it. -EINVAL for an unknown kind. */
int bench_trace_make(const char *kind, uint64_t seed, struct wl_trace **out,
		     char *err, size_t errlen);

#endif /* NPUMEMFS_BENCH_TRACES_H */
