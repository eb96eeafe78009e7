/*
 * test_double_text.c - a double shown as the fewest digits that read back
 * as the same double: what was written is what is read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/double_text.h"

static void text_is(double v, const char *want)
{
	char buf[DOUBLE_TEXT_LEN];

	double_text(buf, v);
	assert_string_equal(buf, want);
}

static void nine_digits_read_back_as_nine_digits(void **state)
{
	(void)state;
	text_is(0.123456789, "0.123456789");
}

static void short_values_keep_their_short_text(void **state)
{
	(void)state;
	text_is(0, "0");
	text_is(1, "1");
	text_is(0.5, "0.5");
	text_is(0.1, "0.1");
	text_is(1e-7, "1e-07");
}

static void a_value_needing_17_digits_gets_them(void **state)
{
	(void)state;
	text_is(0.1 + 0.2, "0.30000000000000004");
	text_is(1.0 / 3.0, "0.3333333333333333");
}

static void every_text_reads_back_as_the_same_double(void **state)
{
	char buf[DOUBLE_TEXT_LEN];
	uint64_t x = 88172645463325252ULL;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double v = (double)(x >> 11) / 9007199254740992.0;
		double_text(buf, v);
		assert_true(strtod(buf, NULL) == v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nine_digits_read_back_as_nine_digits),
		cmocka_unit_test(short_values_keep_their_short_text),
		cmocka_unit_test(a_value_needing_17_digits_gets_them),
		cmocka_unit_test(every_text_reads_back_as_the_same_double),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
