/*
 * mem_populate.c - fresh pages made present in one call (mem_populate.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem_populate.h"

void mem_populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	static uintptr_t page;

	if (page == 0)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	/* Whole pages only: the pages at either end may hold another
	 * allocation's bytes, and may not be mapped past it. */
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + len) & ~(page - 1);
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
	(void)p, (void)len;
#endif
}

int mem_grow(void **array, size_t used, size_t bytes)
{
	char *grown = realloc(*array, bytes);

	if (grown == NULL)
		return -ENOMEM;
	if (bytes > used)
		mem_populate(grown + used, bytes - used);
	*array = grown;
	return 0;
}
