/*
 * test_str_table.c - interned strings: a key is found exactly when it is
 * held, whatever its length and whichever byte sets it apart, through
 * doublings and removals that shift later keys back into the hole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/str_table.h"

#define MAXLEN 30

/* Keys of every length up to MAXLEN that differ from each other in one
 * byte only, at every position. */
static void a_key_is_found_and_one_differing_in_any_single_byte_is_not(void **state)
{
	(void)state;
	for (size_t len = 1; len <= MAXLEN; len++) {
		for (size_t at = 0; at < len; at++) {
			struct str_table t;
			char key[MAXLEN + 1], other[MAXLEN + 1];
			uint32_t index;

			memset(key, 'k', len);
			key[len] = '\0';
			memcpy(other, key, len + 1);
			other[at] = 'q';
			str_table_init(&t);
			assert_int_equal(str_table_add(&t, key, len, &index), 0);
			assert_int_equal(str_table_find(&t, key, len), index);
			assert_int_equal(str_table_find(&t, other, len), -1);
			/* A prefix is another key. */
			assert_int_equal(str_table_find(&t, key, len - 1), -1);
			assert_string_equal(str_table_key(&t, index), key);
			str_table_release(&t);
		}
	}
}

/* What tells keys apart when their hashes collide: every length, every byte. */
static void the_byte_compare_sees_every_byte_of_every_length(void **state)
{
	char a[MAXLEN], b[MAXLEN];

	(void)state;
	for (size_t len = 1; len <= MAXLEN; len++) {
		memset(a, 'k', len);
		memcpy(b, a, len);
		assert_true(str_table_same_bytes(a, b, len));
		for (size_t at = 0; at < len; at++) {
			b[at] = 'q';
			assert_false(str_table_same_bytes(a, b, len));
			b[at] = 'k';
		}
	}
}

static void a_hashed_find_and_add_are_the_plain_ones(void **state)
{
	struct str_table t;
	uint32_t a, b;

	(void)state;
	str_table_init(&t);
	uint64_t h = str_table_hash("t12345", 6);
	assert_int_equal(str_table_find_hashed(&t, "t12345", 6, h), -1);
	assert_int_equal(str_table_add_hashed(&t, "t12345", 6, h, &a), 0);
	assert_int_equal(str_table_find(&t, "t12345", 6), a);
	assert_int_equal(str_table_add(&t, "t54321", 6, &b), 0);
	assert_int_equal(str_table_find_hashed(&t, "t54321", 6, str_table_hash("t54321", 6)), b);
	str_table_release(&t);
}

/* Small state for a reproducible sequence. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

#define KEYS 3000

/*
 * Thousands of adds and removals in random order against an array of
 * what is held: after each, every key is found exactly when held, at its
 * index; the table doubles several times on the way and removals shift
 * later members of a run back.
 */
static void every_key_is_found_exactly_while_it_is_held(void **state)
{
	static int64_t at[KEYS];
	struct str_table t;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	char key[32];

	(void)state;
	str_table_init(&t);
	for (size_t i = 0; i < KEYS; i++)
		at[i] = -1;
	for (int step = 0; step < 20000; step++) {
		size_t k = next(&rng) % KEYS;
		int len = snprintf(key, sizeof(key), k % 7 ? "t%zu" : "a_longer_tensor_name_%zu", k);
		uint32_t index;

		if (at[k] < 0) {
			assert_int_equal(str_table_add(&t, key, (size_t)len, &index), 0);
			at[k] = index;
		} else {
			str_table_remove(&t, (uint32_t)at[k]);
			at[k] = -1;
		}
		if (step % 997 != 0)
			continue;
		for (size_t j = 0; j < KEYS; j++) {
			len = snprintf(key, sizeof(key), j % 7 ? "t%zu" : "a_longer_tensor_name_%zu", j);
			assert_int_equal(str_table_find(&t, key, (size_t)len), at[j]);
		}
	}
	str_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_key_is_found_and_one_differing_in_any_single_byte_is_not),
		cmocka_unit_test(the_byte_compare_sees_every_byte_of_every_length),
		cmocka_unit_test(a_hashed_find_and_add_are_the_plain_ones),
		cmocka_unit_test(every_key_is_found_exactly_while_it_is_held),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
