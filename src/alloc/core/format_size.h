/*
 * format_size.h - upstream's format_size(): sizes as its messages write them.
 *
 * Inline so that the report layer, which does not link the allocator,
 * writes sizes as the allocator's own messages do.
 */
#ifndef NPUMEMFS_FORMAT_SIZE_H
#define NPUMEMFS_FORMAT_SIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "N bytes" up to 1 KiB, then KiB/MiB/GiB with two decimals. */
static inline void npa_format_size(char *buf, size_t len, uint64_t size)
{
	if (size <= 1024)
		snprintf(buf, len, "%llu bytes", (unsigned long long)size);
	else if (size <= 1048576)
		snprintf(buf, len, "%.2f KiB", (double)size / 1024.0);
	else if (size <= 1073741824ULL)
		snprintf(buf, len, "%.2f MiB", (double)size / 1048576.0);
	else
		snprintf(buf, len, "%.2f GiB", (double)size / 1073741824.0);
}

#endif /* NPUMEMFS_FORMAT_SIZE_H */
