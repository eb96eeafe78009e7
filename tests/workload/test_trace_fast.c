/*
 * test_trace_fast.c - which lines the fast path takes: every plain
 * "alloc ID SIZE" and "free ID", whatever the lengths of ID and SIZE
 * (read a word at a time), and nothing with a byte the general parser
 * must judge. What the taken lines give is test_trace_parse's to check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workload/trace_parse_impl.h"

static int setup(void **state)
{
	struct parser *p = calloc(1, sizeof(*p));
	static char err[WL_ERRLEN];

	if (p == NULL || wl_parse_begin(p, "t", NULL, true, err, sizeof(err)) != 0)
		return -1;
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct parser *p = *state;

	wl_parse_end(p);
	wl_trace_free(p->t);
	free(p);
	return 0;
}

/* wl_parse_fast on a copy of `line`, as the reader hands it over. */
static int fast(struct parser *p, const char *line)
{
	char buf[128];
	size_t len = strlen(line);

	assert_true(len < sizeof(buf));
	memcpy(buf, line, len + 1);
	return wl_parse_fast(p, buf, len);
}

static void plain_lines_of_every_id_and_size_length_are_taken(void **state)
{
	struct parser *p = *state;
	char id[32], size[32], line[96];

	for (size_t id_len = 1; id_len <= 20; id_len++) {
		for (size_t digits = 1; digits <= 19; digits++) {
			memset(id, 'a' + (int)id_len, id_len);
			id[id_len] = '\0';
			memset(size, '1' + (int)(digits % 9), digits);
			size[digits] = '\0';
			snprintf(line, sizeof(line), "alloc %s %s", id, size);
			assert_int_equal(fast(p, line), 1);
			snprintf(line, sizeof(line), "free %s", id);
			assert_int_equal(fast(p, line), 1);
		}
	}
}

static void lines_with_a_byte_to_judge_are_left_to_the_general_parser(void **state)
{
	static const char *const lines[] = {
		"alloc a 12/4", "alloc a 1234567:", "alloc abcdefg 1x", "alloc abc#defgh 5",
		"alloc a\t5", "alloc a 5 ", "alloc a 5KiB", "alloc a 12345678901234567890",
		"free abcdefghij#k", "free b", /* b was never allocated */
	};
	struct parser *p = *state;

	assert_int_equal(fast(p, "alloc abcdefghij 1"), 1);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		assert_int_equal(fast(p, lines[i]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(plain_lines_of_every_id_and_size_length_are_taken,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			lines_with_a_byte_to_judge_are_left_to_the_general_parser, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
