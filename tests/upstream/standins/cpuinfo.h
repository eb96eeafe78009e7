/* cpuinfo.h - what c10/core/thread_pool.cpp asks of cpuinfo, which the
 * differential does not build: no information, so c10 falls back to
 * std::thread::hardware_concurrency(). The pinned host allocator only
 * names its background pool; the differential never starts it. */
#ifndef UPSTREAM_STANDIN_CPUINFO_H
#define UPSTREAM_STANDIN_CPUINFO_H

#include <stdbool.h>
#include <stdint.h>

static inline bool cpuinfo_initialize(void) { return false; }
static inline uint32_t cpuinfo_get_cores_count(void) { return 0; }
static inline uint32_t cpuinfo_get_processors_count(void) { return 0; }

#endif /* UPSTREAM_STANDIN_CPUINFO_H */
