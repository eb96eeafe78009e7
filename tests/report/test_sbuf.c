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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(printf_and_puts_append_in_order),
		cmocka_unit_test(grows_to_hold_100000_bytes),
		cmocka_unit_test(reset_empties_and_keeps_the_memory),
		cmocka_unit_test(release_returns_to_the_initial_state),
		cmocka_unit_test_teardown(failed_growth_is_sticky_and_keeps_the_text,
					  reset_realloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
