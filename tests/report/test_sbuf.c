/*
 * test_sbuf.c - the growable buffer every report is written into.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/sbuf.h"

/* Linked with --wrap=realloc: sbuf's realloc calls land here. */
void *__real_realloc(void *p, size_t n);
static bool realloc_fails;

void *__wrap_realloc(void *p, size_t n)
{
	return realloc_fails ? NULL : __real_realloc(p, n);
}

static int reset_realloc(void **state)
{
	(void)state;
	realloc_fails = false;
	return 0;
}

static void printf_and_puts_append_in_order(void **state)
{
	(void)state;
	struct sbuf b;
	sbuf_init(&b);
	assert_int_equal(sbuf_printf(&b, "%s=%d ", "peak", 4096), 0);
	assert_int_equal(sbuf_puts(&b, "B"), 0);
	assert_int_equal(sbuf_append(&b, "\nxyz", 1), 0);
	assert_string_equal(b.data, "peak=4096 B\n");
	assert_int_equal(b.len, 12);
	sbuf_release(&b);
}

static void grows_to_hold_100000_bytes(void **state)
{
	(void)state;
	struct sbuf b;
	sbuf_init(&b);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(sbuf_printf(&b, "%09d\n", i), 0);
	assert_int_equal(b.len, 100000);
	assert_true(b.cap > b.len);
	assert_int_equal(b.data[b.len], '\0');
	assert_memory_equal(b.data + 99990, "000009999\n", 10);
	sbuf_release(&b);
}

static void reset_empties_and_keeps_the_memory(void **state)
{
	(void)state;
	struct sbuf b;
	sbuf_init(&b);
	sbuf_puts(&b, "first report");
	char *data = b.data;
	size_t cap = b.cap;
	sbuf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	assert_ptr_equal(b.data, data);
	assert_int_equal(b.cap, cap);
	sbuf_release(&b);
}

static void release_returns_to_the_initial_state(void **state)
{
	(void)state;
	struct sbuf b;
	sbuf_init(&b);
	sbuf_puts(&b, "x");
	sbuf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	assert_int_equal(b.error, 0);
}

static void failed_growth_is_sticky_and_keeps_the_text(void **state)
{
	(void)state;
	struct sbuf b;
	char big[300];
	memset(big, 'a', sizeof(big));
	sbuf_init(&b);
	assert_int_equal(sbuf_puts(&b, "kept"), 0);
	realloc_fails = true;
	assert_int_equal(sbuf_append(&b, big, sizeof(big)), -ENOMEM);
	realloc_fails = false;
	/* Even a write that would fit is refused once an earlier one failed,
	 * so a report never has a hole in the middle. */
	assert_int_equal(sbuf_puts(&b, "!"), -ENOMEM);
	assert_int_equal(sbuf_printf(&b, "%d", 1), -ENOMEM);
	assert_int_equal(b.error, -ENOMEM);
	assert_string_equal(b.data, "kept");
	sbuf_reset(&b);
	assert_int_equal(b.error, 0);
	assert_int_equal(sbuf_puts(&b, "again"), 0);
	assert_string_equal(b.data, "again");
	sbuf_release(&b);
}

static void a_printf_that_cannot_grow_leaves_the_text_as_it_was(void **state)
{
	(void)state;
	struct sbuf b;
	sbuf_init(&b);
	assert_int_equal(sbuf_puts(&b, "kept"), 0);
	realloc_fails = true;
	/* Formatted into the room left first: it did not fit, and the part
	 * that did is not kept. */
	assert_int_equal(sbuf_printf(&b, "%0300d", 7), -ENOMEM);
	realloc_fails = false;
	assert_int_equal(b.len, 4);
	assert_string_equal(b.data, "kept");
	sbuf_release(&b);
}

static void a_printf_that_fits_the_room_left_needs_no_growth(void **state)
{
	(void)state;
	struct sbuf b;
	sbuf_init(&b);
	assert_int_equal(sbuf_puts(&b, "a"), 0);
	realloc_fails = true;
	/* 256 bytes of room after the first growth: no realloc is needed. */
	assert_int_equal(sbuf_printf(&b, "%0250d", 7), 0);
	realloc_fails = false;
	assert_int_equal(b.len, 251);
	assert_int_equal(b.data[250], '7');
	assert_int_equal(b.data[251], '\0');
	sbuf_release(&b);
}

static void copy_gives_the_whole_text_and_its_length(void **state)
{
	(void)state;
	struct sbuf b;
	char dst[8];
	sbuf_init(&b);
	sbuf_puts(&b, "1234567");
	assert_int_equal(sbuf_copy(&b, dst, sizeof(dst)), 7);
	assert_string_equal(dst, "1234567");
	sbuf_release(&b);
}

static void copy_cuts_to_fit_and_reports_enospc(void **state)
{
	(void)state;
	struct sbuf b;
	char dst[8];
	sbuf_init(&b);
	sbuf_puts(&b, "12345678");
	assert_int_equal(sbuf_copy(&b, dst, sizeof(dst)), -ENOSPC);
	assert_string_equal(dst, "1234567");
	sbuf_release(&b);
}

static void copy_into_no_room_writes_nothing(void **state)
{
	(void)state;
	struct sbuf b;
	char dst[1] = { 'x' };
	sbuf_init(&b);
	assert_int_equal(sbuf_copy(&b, dst, 0), -ENOSPC);
	assert_int_equal(dst[0], 'x');
	assert_int_equal(sbuf_copy(&b, NULL, 0), -ENOSPC);
	assert_int_equal(sbuf_copy(&b, dst, 1), 0);
	assert_string_equal(dst, "");
	sbuf_release(&b);
}

static void copy_after_failed_growth_gives_the_kept_text_and_the_error(void **state)
{
	(void)state;
	struct sbuf b;
	char big[300], dst[16];
	memset(big, 'a', sizeof(big));
	sbuf_init(&b);
	sbuf_puts(&b, "kept");
	realloc_fails = true;
	sbuf_append(&b, big, sizeof(big));
	realloc_fails = false;
	assert_int_equal(sbuf_copy(&b, dst, sizeof(dst)), -ENOMEM);
	assert_string_equal(dst, "kept");
	sbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(printf_and_puts_append_in_order),
		cmocka_unit_test(grows_to_hold_100000_bytes),
		cmocka_unit_test(reset_empties_and_keeps_the_memory),
		cmocka_unit_test(release_returns_to_the_initial_state),
		cmocka_unit_test_teardown(failed_growth_is_sticky_and_keeps_the_text,
					  reset_realloc),
		cmocka_unit_test_teardown(a_printf_that_cannot_grow_leaves_the_text_as_it_was,
					  reset_realloc),
		cmocka_unit_test_teardown(a_printf_that_fits_the_room_left_needs_no_growth,
					  reset_realloc),
		cmocka_unit_test(copy_gives_the_whole_text_and_its_length),
		cmocka_unit_test(copy_cuts_to_fit_and_reports_enospc),
		cmocka_unit_test(copy_into_no_room_writes_nothing),
		cmocka_unit_test_teardown(copy_after_failed_growth_gives_the_kept_text_and_the_error,
					  reset_realloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
