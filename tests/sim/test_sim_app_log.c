/*
 * test_sim_app_log.c - aclAppLog keeps a line at or above
 * ASCEND_GLOBAL_LOG_LEVEL and writes it to stderr, or to stdout with
 * ASCEND_SLOG_PRINT_TO_STDOUT=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_fixture.h"

/* What one aclAppLog call wrote to `fd` (1 or 2). */
static void logged(int fd, aclLogLevel level, const char *msg, char *out, size_t n)
{
	FILE *tmp = tmpfile();
	int saved = dup(fd);

	assert_non_null(tmp);
	fflush(fd == 1 ? stdout : stderr);
	dup2(fileno(tmp), fd);
	aclAppLog(level, "fn", "file.c", 7, "%s %d", msg, 42);
	fflush(fd == 1 ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	out[fread(out, 1, n - 1, tmp)] = '\0';
	fclose(tmp);
}

static void an_error_goes_to_stderr_by_default(void **state)
{
	char out[256], expected[256];

	(void)state;
	unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
	unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
	logged(2, ACL_ERROR, "broken", out, sizeof(out));
	snprintf(expected, sizeof(expected), "[ERROR] APP(%ld):fn:file.c:7 broken 42\n",
		 (long)getpid());
	assert_string_equal(out, expected);
}

static void a_warning_is_dropped_at_the_default_level(void **state)
{
	char out[256];

	(void)state;
	unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
	logged(2, ACL_WARNING, "minor", out, sizeof(out));
	assert_string_equal(out, "");
}

static void level_1_keeps_info_and_drops_debug(void **state)
{
	char out[256];

	(void)state;
	setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);
	logged(2, ACL_INFO, "note", out, sizeof(out));
	assert_non_null(strstr(out, "[INFO] "));
	logged(2, ACL_DEBUG, "detail", out, sizeof(out));
	assert_string_equal(out, "");
	unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
}

static void level_4_keeps_nothing(void **state)
{
	char out[256];

	(void)state;
	setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
	logged(2, ACL_ERROR, "broken", out, sizeof(out));
	assert_string_equal(out, "");
	unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
}

static void print_to_stdout_sends_lines_to_stdout(void **state)
{
	char out[256];

	(void)state;
	setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
	logged(1, ACL_ERROR, "broken", out, sizeof(out));
	assert_non_null(strstr(out, "fn:file.c:7 broken 42\n"));
	logged(2, ACL_ERROR, "broken", out, sizeof(out));
	assert_string_equal(out, "");
	unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_error_goes_to_stderr_by_default),
		cmocka_unit_test(a_warning_is_dropped_at_the_default_level),
		cmocka_unit_test(level_1_keeps_info_and_drops_debug),
		cmocka_unit_test(level_4_keeps_nothing),
		cmocka_unit_test(print_to_stdout_sends_lines_to_stdout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
