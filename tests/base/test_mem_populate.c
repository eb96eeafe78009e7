/*
 * test_mem_populate.c - pages made present in one call: the whole pages
 * of a range become resident, the bytes around them are left as they
 * were, an array grown keeps what it held, and zeroed memory is zero.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/mem_populate.h"

enum { PAGES = 64 };

static size_t resident_pages(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	unsigned char vec[PAGES];

	assert_int_equal(mincore(p, len, vec), 0);
	for (size_t i = 0; i < len / page; i++)
		n += vec[i] & 1;
	return n;
}

/* Can the page at `page` be populated? Not where the C library predates
 * MADV_POPULATE_WRITE or the kernel refuses it: then mem_populate does
 * nothing, and residency says nothing. */
static bool can_populate(void *page)
{
#ifdef MADV_POPULATE_WRITE
	return madvise(page, (size_t)sysconf(_SC_PAGESIZE), MADV_POPULATE_WRITE) == 0;
#else
	(void)page;
	return false;
#endif
}

/* Fresh anonymous pages are not resident until touched; populated, they
 * all are, with no touch. */
static void populated_pages_are_resident_untouched(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = PAGES * page;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	assert_int_equal(resident_pages(p, len), 0);
	mem_populate(p, len);
	if (!can_populate(p)) {
		munmap(p, len);
		skip();
	}
	assert_int_equal(resident_pages(p, len), PAGES);
	munmap(p, len);
}

/* A range that starts and ends inside pages: only the whole pages in it
 * are populated, and no byte anywhere changes. */
static void populating_changes_no_byte(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = PAGES * page;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	for (size_t i = 0; i < len; i += 7)
		p[i] = (unsigned char)(i * 31 + 1);
	mem_populate(p + 100, len - 200);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(p[i], i % 7 ? 0 : (unsigned char)(i * 31 + 1));
	munmap(p, len);
}

static void a_grown_array_keeps_its_bytes(void **state)
{
	void *a = NULL;
	size_t used = 0;

	(void)state;
	/* Past MEM_POPULATE_MOST held, the array grows another way. */
	for (size_t bytes = 16; bytes <= 4 * MEM_POPULATE_MOST; bytes *= 2) {
		assert_int_equal(mem_grow(&a, used, bytes), 0);
		for (size_t i = 0; i < used; i++)
			assert_int_equal(((unsigned char *)a)[i], (unsigned char)(i % 251));
		for (size_t i = used; i < bytes; i++)
			((unsigned char *)a)[i] = (unsigned char)(i % 251);
		used = bytes;
	}
	free(a);
}

/* The new part of a grown array is resident before it is written. */
static void a_grown_arrays_new_pages_are_resident(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *a = NULL;

	(void)state;
	assert_int_equal(mem_grow(&a, 0, PAGES * page), 0);
	char *first = (char *)(((uintptr_t)a + page - 1) & ~(uintptr_t)(page - 1));
	if (!can_populate(first)) {
		free(a);
		skip();
	}
	assert_int_equal(resident_pages(first, (PAGES - 1) * page), PAGES - 1);
	free(a);
}

static void zeroed_memory_is_zero_and_an_overflowing_size_is_refused(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *z = mem_zalloc(PAGES, page);

	(void)state;
	assert_non_null(z);
	for (size_t i = 0; i < PAGES * page; i++)
		assert_int_equal(z[i], 0);
	free(z);
	assert_null(mem_zalloc(SIZE_MAX / 2, 4));
}

/* A large array's new part is populated up to MEM_POPULATE_MOST only: a
 * doubling may never be filled. Looked at from one 2 MiB page past that
 * on: a transparent huge page (THP, or glibc.malloc.hugetlb) can make the
 * whole 2 MiB around the last populated byte resident. */
static void a_large_array_has_only_the_start_of_its_new_part_resident(void **state)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), used = 2 * MEM_POPULATE_MOST;
	size_t bytes = 8 * MEM_POPULATE_MOST, resident = 0;
	void *a = NULL;

	(void)state;
	assert_int_equal(mem_grow(&a, 0, used), 0);
	memset(a, 1, used);
	assert_int_equal(mem_grow(&a, used, bytes), 0);
	uintptr_t lo = (((uintptr_t)a + used + MEM_POPULATE_MOST + huge - 1) & ~(huge - 1)) + huge;
	uintptr_t hi = ((uintptr_t)a + bytes) & ~(uintptr_t)(page - 1);
	size_t n = (hi - lo) / page;
	unsigned char *vec = malloc(n);
	assert_non_null(vec);
	assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
	for (size_t i = 0; i < n; i++)
		resident += vec[i] & 1;
	assert_int_equal(resident, 0);
	assert_int_equal(((unsigned char *)a)[used - 1], 1);
	free(vec);
	free(a);
}

/* malloc is wrapped (CMakeLists.txt) to refuse while this is set. */
static bool refuse_malloc;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_malloc(size_t size)
{
	return refuse_malloc ? NULL : __real_malloc(size);
}

static void a_size_that_wrapped_around_is_refused(void **state)
{
	void *a = malloc(64), *was = a;

	(void)state;
	assert_int_equal(mem_grow(&a, 64, 0), -ENOMEM);
	assert_int_equal(mem_grow(&a, 64, 32), -ENOMEM);
	assert_ptr_equal(a, was);
	free(a);
}

static void a_growth_that_cannot_be_made_leaves_the_array(void **state)
{
	void *a = malloc(64), *was = a;

	(void)state;
	memset(a, 7, 64);
	refuse_malloc = true;
	int rc = mem_grow(&a, 64, 1 << 20);
	refuse_malloc = false;
	assert_int_equal(rc, -ENOMEM);
	assert_ptr_equal(a, was);
	assert_int_equal(((unsigned char *)a)[63], 7);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(populated_pages_are_resident_untouched),
		cmocka_unit_test(populating_changes_no_byte),
		cmocka_unit_test(a_grown_array_keeps_its_bytes),
		cmocka_unit_test(a_grown_arrays_new_pages_are_resident),
		cmocka_unit_test(a_large_array_has_only_the_start_of_its_new_part_resident),
		cmocka_unit_test(zeroed_memory_is_zero_and_an_overflowing_size_is_refused),
		cmocka_unit_test(a_size_that_wrapped_around_is_refused),
		cmocka_unit_test(a_growth_that_cannot_be_made_leaves_the_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
