/*
 * mem_populate.c - fresh pages made present in one call (mem_populate.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem_populate.h"

void mem_populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

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

void *mem_zalloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	if ((p = malloc(n * size)) != NULL) {
		mem_populate(p, n * size);
		memset(p, 0, n * size);
	}
	return p;
}

/*
 * A small array moves to a populated allocation: realloc would copy it
 * into fresh pages, a fault each, before the new part could be populated.
 * A large one is realloc'd (its pages are moved, not copied) and only the
 * first MEM_POPULATE_MOST bytes of its new part populated: a doubling of
 * a whole trace's events may never be filled.
 */
int mem_grow(void **array, size_t used, size_t bytes)
{
	char *grown;

	/* A size that wrapped around, never a realloc(p, 0) that frees p. */
	if (bytes == 0 || bytes < used)
		return -ENOMEM;
	if (used >= MEM_POPULATE_MOST) {
		if ((grown = realloc(*array, bytes)) == NULL)
			return -ENOMEM;
		if (bytes > used)
			mem_populate(grown + used, bytes - used < MEM_POPULATE_MOST ?
						   bytes - used : MEM_POPULATE_MOST);
	} else {
		if ((grown = malloc(bytes)) == NULL)
			return -ENOMEM;
		mem_populate(grown, bytes < used + MEM_POPULATE_MOST ? bytes :
						used + MEM_POPULATE_MOST);
		if (used)
			memcpy(grown, *array, used < bytes ? used : bytes);
		free(*array);
	}
	*array = grown;
	return 0;
}
