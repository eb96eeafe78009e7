/*
 * mem_populate.h - fresh pages made present in one call.
 *
 * The first touch of a fresh page is a page fault. In a virtual machine a
 * fault can cost ten times what asking the kernel to populate the same
 * pages does (madvise MADV_POPULATE_WRITE, Linux 5.14): 12 us a page
 * against 1 us a page on one VM (tests/bench/bench_faults.c). The
 * arrays that grow while a trace is read and replayed, and the tables of
 * an allocator, are about to be written all over, so they are populated
 * as they grow. Where the kernel lacks the call, pages fault as before.
 */
#ifndef NPUMEMFS_MEM_POPULATE_H
#define NPUMEMFS_MEM_POPULATE_H

#include <stddef.h>

/* The whole pages inside [p, p + len) made present and writable. */
void mem_populate(void *p, size_t len);

/* calloc(n, size), its pages made present in one call before they are
 * zeroed (calloc's own zeroing would fault them in one by one). */
void *mem_zalloc(size_t n, size_t size);

/* Past what it held, a grown array has this much populated at most. */
#define MEM_POPULATE_MOST ((size_t)4 << 20)

/* *array (its first `used` bytes kept) grown to `bytes`, with what it
 * held and up to MEM_POPULATE_MOST bytes more populated: 0, or -ENOMEM
 * with *array as it was (also for a `bytes` of 0 or below `used`, which
 * only a size that wrapped around gives). */
int mem_grow(void **array, size_t used, size_t bytes);

#endif /* NPUMEMFS_MEM_POPULATE_H */
