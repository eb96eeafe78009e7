/*
 * test_size_parse.c - the size rule: bytes or an IEC unit, one space
 * allowed before it; units that read as 1000s to some and 1024s to others
 * are refused with the spelling to use.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/size_parse.h"

static uint64_t parsed(const char *s)
{
	uint64_t n = 0;

	assert_int_equal(npa_parse_size(s, &n), 0);
	return n;
}

static void refused(const char *s)
{
	uint64_t n = 7;

	assert_int_equal(npa_parse_size(s, &n), -EINVAL);
	assert_int_equal(n, 7);
}

static void bytes_and_iec_units_in_any_case_are_sizes(void **state)
{
	(void)state;
	assert_int_equal(parsed("4096"), 4096);
	assert_int_equal(parsed("4096B"), 4096);
	assert_int_equal(parsed("64KiB"), 64 << 10);
	assert_int_equal(parsed("20MiB"), 20 << 20);
	assert_int_equal(parsed("32GiB"), UINT64_C(32) << 30);
	assert_int_equal(parsed("2TiB"), UINT64_C(2) << 40);
	assert_int_equal(parsed("2gib"), UINT64_C(2) << 30);
	assert_int_equal(parsed("2MIB"), 2 << 20);
}

static void one_space_before_the_unit_is_allowed_and_no_more(void **state)
{
	(void)state;
	assert_int_equal(parsed("64 GiB"), UINT64_C(64) << 30);
	assert_int_equal(parsed("512 B"), 512);
	refused("64  GiB");
	refused("64\tGiB");
	refused("64 ");
	refused(" 64");
	refused("64GiB ");
}

static void decimal_looking_units_are_refused_with_the_iec_spelling(void **state)
{
	static const char *const spelled[][2] = {
		{ "32GB", "use 32GiB (binary) or bytes; npumemfs does not guess whether GB "
			  "means 1000^3 or 1024^3" },
		{ "32g", "use 32GiB (binary) or bytes; npumemfs does not guess whether g "
			 "means 1000^3 or 1024^3" },
		{ "1 TB", "use 1TiB (binary) or bytes; npumemfs does not guess whether TB "
			  "means 1000^4 or 1024^4" },
		{ "4k", "use 4KiB (binary) or bytes; npumemfs does not guess whether k "
			"means 1000^1 or 1024^1" },
		{ "20Mb", "use 20MiB (binary) or bytes; npumemfs does not guess whether Mb "
			  "means 1000^2 or 1024^2" },
	};
	char why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(spelled) / sizeof(spelled[0]); i++) {
		refused(spelled[i][0]);
		assert_int_equal(npa_size_ambiguous(spelled[i][0], why, sizeof(why)), 1);
		assert_string_equal(why, spelled[i][1]);
	}
	assert_int_equal(npa_size_ambiguous("32GiB", why, sizeof(why)), 0);
	assert_int_equal(npa_size_ambiguous("32XB", why, sizeof(why)), 0);
	assert_int_equal(npa_size_ambiguous("GB", why, sizeof(why)), 0);
}

static void signs_strangers_and_overflow_are_refused(void **state)
{
	(void)state;
	refused("");
	refused("-1");
	refused("+1");
	refused("GiB");
	refused("1.5GiB");
	refused("10XB");
	refused("18446744073709551616");
	refused("16777216TiB");
	assert_int_equal(parsed("18446744073709551615"), UINT64_MAX);
	assert_int_equal(parsed("16777215TiB"), UINT64_C(16777215) << 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bytes_and_iec_units_in_any_case_are_sizes),
		cmocka_unit_test(one_space_before_the_unit_is_allowed_and_no_more),
		cmocka_unit_test(decimal_looking_units_are_refused_with_the_iec_spelling),
		cmocka_unit_test(signs_strangers_and_overflow_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
