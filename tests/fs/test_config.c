/*
 * test_config.c - the daemon's ini file: defaults, every key, and the exact
 * "FILE:LINE: reason" of each way a file can be wrong.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tools/config.h"

struct fixture {
	char dir[64];
	char ini[128];
	char err[NMFS_CONFIG_ERRLEN];
	struct nmfs_config cfg;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/npumemfs-config-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->ini, sizeof(fx->ini), "%s/test.ini", fx->dir);
	nmfs_config_default(&fx->cfg);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int load(struct fixture *fx, const char *text)
{
	write_file(fx->ini, text);
	return nmfs_config_load(&fx->cfg, fx->ini, fx->err, sizeof(fx->err));
}

/* Loading must fail with exactly "INI:line: reason" and change nothing. */
static void expect_error(struct fixture *fx, const char *text, int line,
			 const char *reason)
{
	char want[NMFS_CONFIG_ERRLEN + 256];
	struct nmfs_config before = fx->cfg;

	assert_int_equal(load(fx, text), -EINVAL);
	snprintf(want, sizeof(want), "%s:%d: %s", fx->ini, line, reason);
	assert_string_equal(fx->err, want);
	assert_memory_equal(&before, &fx->cfg, sizeof(before));
}

static void defaults_are_one_npu_device_of_32_gib(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(fx->cfg.device_count, 1);
	assert_string_equal(fx->cfg.flavor->name, "npu");
	assert_int_equal(fx->cfg.capacity, 34359738368ULL);
	assert_int_equal(fx->cfg.page_size, 2097152);
	assert_int_equal(fx->cfg.malloc_latency_us, 0);
	assert_int_equal(fx->cfg.free_latency_us, 0);
	assert_string_equal(fx->cfg.alloc_conf, "");
	assert_string_equal(fx->cfg.plugin_dirs, "");
	assert_false(fx->cfg.allow_other);
	assert_string_equal(fx->cfg.replay, "");
	assert_false(fx->cfg.loop);
	assert_false(fx->cfg.plugin_in_process);
	assert_int_equal(fx->cfg.plugin_timeout_ms, 5000);
}

static void empty_file_keeps_defaults_and_records_its_path(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(load(fx, "# nothing\n[device]\n"), 0);
	assert_int_equal(fx->cfg.device_count, 1);
	assert_int_equal(fx->cfg.capacity, 34359738368ULL);
	assert_string_equal(fx->cfg.path, fx->ini);
}

static void every_key_is_applied(void **state)
{
	struct fixture *fx = *state;
	char trace[192];

	snprintf(trace, sizeof(trace), "%s/t.trace", fx->dir);
	write_file(trace, "alloc a 1024\nfree a\n");
	char text[1024];
	snprintf(text, sizeof(text),
		 "[device]\ncount = 4\nflavor = cuda\ncapacity = 8GiB\n"
		 "page_size = 64KiB\nmalloc_latency_us = 50\nfree_latency_us = 7\n"
		 "[allocator]\nalloc_conf = max_split_size_mb:256\n"
		 "plugin_dirs = /opt/alloc,/usr/lib/npumemfs\n"
		 "[fs]\nallow_other = true\n"
		 "[workload]\nreplay = %s\nloop = yes\n", trace);
	assert_int_equal(load(fx, text), 0);
	assert_int_equal(fx->cfg.device_count, 4);
	assert_string_equal(fx->cfg.flavor->name, "cuda");
	assert_int_equal(fx->cfg.capacity, 8589934592ULL);
	assert_int_equal(fx->cfg.page_size, 65536);
	assert_int_equal(fx->cfg.malloc_latency_us, 50);
	assert_int_equal(fx->cfg.free_latency_us, 7);
	assert_string_equal(fx->cfg.alloc_conf, "max_split_size_mb:256");
	assert_string_equal(fx->cfg.plugin_dirs, "/opt/alloc,/usr/lib/npumemfs");
	assert_true(fx->cfg.allow_other);
	assert_string_equal(fx->cfg.replay, trace);
	assert_true(fx->cfg.loop);
}

static void plugin_isolation_and_timeout_are_applied(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(load(fx, "[allocator]\nplugin_isolation = none\nplugin_timeout = 250ms\n"),
			 0);
	assert_true(fx->cfg.plugin_in_process);
	assert_int_equal(fx->cfg.plugin_timeout_ms, 250);
	assert_int_equal(load(fx, "[allocator]\nplugin_isolation = process\nplugin_timeout = 2\n"),
			 0);
	assert_false(fx->cfg.plugin_in_process);
	assert_int_equal(fx->cfg.plugin_timeout_ms, 2000);
}

static void bad_plugin_isolation_and_timeout_are_refused(void **state)
{
	struct fixture *fx = *state;

	expect_error(fx, "[allocator]\nplugin_isolation = thread\n", 2,
		     "plugin_isolation: 'thread' is not process or none");
	expect_error(fx, "[allocator]\nplugin_timeout = 5 min\n", 2,
		     "plugin_timeout: '5 min' is not a time (5s, 250ms)");
	expect_error(fx, "[allocator]\nplugin_timeout = -1s\n", 2,
		     "plugin_timeout: '-1s' is not a time (5s, 250ms)");
	expect_error(fx, "[allocator]\nplugin_timeout = 5ms\n", 2,
		     "plugin_timeout: '5ms' is not between 10ms and 3600s");
	expect_error(fx, "[allocator]\nplugin_timeout = 3601s\n", 2,
		     "plugin_timeout: '3601s' is not between 10ms and 3600s");
}

static void sizes_accept_bytes_and_binary_suffixes(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(load(fx, "[device]\ncapacity = 1048576\n"), 0);
	assert_int_equal(fx->cfg.capacity, 1048576);
	assert_int_equal(load(fx, "[device]\ncapacity = 3MiB\n"), 0);
	assert_int_equal(fx->cfg.capacity, 3145728);
	assert_int_equal(load(fx, "[device]\ncapacity = 512KiB\n"), 0);
	assert_int_equal(fx->cfg.capacity, 524288);
	assert_int_equal(load(fx, "[device]\ncapacity = 2GiB\n"), 0);
	assert_int_equal(fx->cfg.capacity, 2147483648ULL);
}

/* Every size key: the README's own "64 GiB" loads, a decimal-looking unit
 * is refused with the spelling to use. */
static void every_size_key_takes_one_space_and_refuses_ambiguous_units(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(load(fx, "[device]\ncapacity = 8 GiB\npage_size = 4 KiB\n"
				  "[host]\ncapacity = 64 GiB\n"), 0);
	assert_int_equal(fx->cfg.capacity, 8ULL << 30);
	assert_int_equal(fx->cfg.page_size, 4096);
	assert_int_equal(fx->cfg.host_capacity, 64ULL << 30);
	expect_error(fx, "[device]\ncapacity = 32GB\n", 2,
		     "'32GB': use 32GiB (binary) or bytes; npumemfs does not guess whether GB "
		     "means 1000^3 or 1024^3");
	expect_error(fx, "[device]\npage_size = 2M\n", 2,
		     "'2M': use 2MiB (binary) or bytes; npumemfs does not guess whether M "
		     "means 1000^2 or 1024^2");
	expect_error(fx, "[host]\ncapacity = 1 tb\n", 2,
		     "'1 tb': use 1TiB (binary) or bytes; npumemfs does not guess whether tb "
		     "means 1000^4 or 1024^4");
}

static void relative_replay_path_is_taken_from_the_ini_folder(void **state)
{
	struct fixture *fx = *state;
	char sub[128], trace[192], want[192];

	snprintf(sub, sizeof(sub), "%s/traces", fx->dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(trace, sizeof(trace), "%s/one.trace", sub);
	write_file(trace, "alloc a 1\nfree a\n");
	assert_int_equal(load(fx, "[workload]\nreplay = traces/one.trace\n"), 0);
	assert_non_null(realpath(trace, want));
	assert_string_equal(fx->cfg.replay, want);
}

static void relative_plugin_dirs_are_taken_from_the_ini_folder(void **state)
{
	struct fixture *fx = *state;
	char want[256];

	assert_int_equal(load(fx, "[allocator]\nplugin_dirs = /opt/a, ../build/lib\n"), 0);
	snprintf(want, sizeof(want), "/opt/a,%s/../build/lib", fx->dir);
	assert_string_equal(fx->cfg.plugin_dirs, want);
}

/* mnt/config writes each value back on one line; a value that resolves
 * past what the reader takes in a line (198 characters) is refused. */
static void plugin_dirs_resolving_past_one_ini_line_are_refused(void **state)
{
	struct fixture *fx = *state;
	char text[256], reason[1024], resolved[512] = "";

	snprintf(text, sizeof(text), "[allocator]\nplugin_dirs = %s\n",
		 "a,a,a,a,a,a,a,a");
	for (int i = 0; i < 8; i++)
		snprintf(resolved + strlen(resolved), sizeof(resolved) - strlen(resolved),
			 "%s%s/a", i ? "," : "", fx->dir);
	snprintf(reason, sizeof(reason),
		 "plugin_dirs: resolves to '%s', longer than an ini line can hold (198 characters)",
		 resolved);
	expect_error(fx, text, 2, reason);
}

static void replay_of_a_missing_trace_names_the_resolved_path(void **state)
{
	struct fixture *fx = *state;
	char want[PATH_MAX + 256], real[PATH_MAX];

	assert_int_equal(load(fx, "[workload]\n\nreplay = no.trace\n"), -ENOENT);
	assert_non_null(realpath(fx->dir, real));
	snprintf(want, sizeof(want),
		 "%s:3: replay: cannot read %s/no.trace: No such file or directory",
		 fx->ini, real);
	assert_string_equal(fx->err, want);
}

static void unknown_section_is_refused_even_when_empty(void **state)
{
	struct fixture *fx = *state;

	expect_error(fx, "[device]\ncount = 2\n[network]\n", 3,
		     "unknown section [network]");
}

static void unknown_key_is_refused(void **state)
{
	struct fixture *fx = *state;

	expect_error(fx, "[device]\ncount = 2\n\n# c\nspeed = 9\n", 5,
		     "unknown key 'speed' in section [device]");
}

static void key_in_the_wrong_section_is_unknown(void **state)
{
	struct fixture *fx = *state;

	expect_error(fx, "[fs]\nloop = true\n", 2,
		     "unknown key 'loop' in section [fs]");
}

static void bad_values_are_refused_with_their_line(void **state)
{
	struct fixture *fx = *state;

	expect_error(fx, "[device]\ncount = 17\n", 2,
		     "count: '17' is not a number from 1 to 16");
	expect_error(fx, "[device]\ncount = 0\n", 2,
		     "count: '0' is not a number from 1 to 16");
	expect_error(fx, "[device]\nflavor = tpu\n", 2,
		     "flavor: 'tpu' is neither npu nor cuda");
	expect_error(fx, "[device]\ncapacity = 12XB\n", 2,
		     "'12XB' is not a size (bytes, or a number with KiB, MiB, GiB or TiB)");
	expect_error(fx, "[device]\npage_size = 3000\n", 2,
		     "page_size: '3000' is not a power of two of at least 4KiB");
	expect_error(fx, "[device]\nmalloc_latency_us = -1\n", 2,
		     "'-1' is not a latency in microseconds (0 to 10000000)");
	expect_error(fx, "[fs]\nallow_other = maybe\n", 2,
		     "'maybe' is not true or false");
	expect_error(fx, "[allocator]\nplugin_dirs = /opt/a,,/b\n", 2,
		     "plugin_dirs: empty folder name in '/opt/a,,/b'");
}

static void bad_alloc_conf_is_refused_at_its_line(void **state)
{
	struct fixture *fx = *state;
	char prefix[256];

	assert_int_equal(load(fx, "[allocator]\nalloc_conf = no_such_key:1\n"
				  "[device]\nflavor = npu\n"),
			 -EINVAL);
	snprintf(prefix, sizeof(prefix), "%s:2: alloc_conf: ", fx->ini);
	assert_memory_equal(fx->err, prefix, strlen(prefix));
	assert_non_null(strstr(fx->err, "no_such_key"));
	assert_string_equal(fx->cfg.alloc_conf, "");
}

static void syntax_error_is_reported_at_its_line(void **state)
{
	struct fixture *fx = *state;

	expect_error(fx, "[device]\ncount = 2\njust words\n", 3,
		     "syntax error (expected [section] or key = value)");
}

static void missing_file_is_enoent(void **state)
{
	struct fixture *fx = *state;
	char path[192], want[512];

	snprintf(path, sizeof(path), "%s/absent.ini", fx->dir);
	assert_int_equal(nmfs_config_load(&fx->cfg, path, fx->err, sizeof(fx->err)),
			 -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory",
		 path);
	assert_string_equal(fx->err, want);
}

/* A folder reads as an empty file: refused, naming its npumemfs.ini when
 * it has one, and the defaults stay. */
static void a_folder_is_refused_naming_its_ini(void **state)
{
	struct fixture *fx = *state;
	char ini[192], want[512];

	assert_int_equal(nmfs_config_load(&fx->cfg, fx->dir, fx->err, sizeof(fx->err)),
			 -EISDIR);
	snprintf(want, sizeof(want), "%s: a folder, not an ini file; --config takes an ini "
		 "file, such as the shipped conf/npumemfs.ini", fx->dir);
	assert_string_equal(fx->err, want);
	snprintf(ini, sizeof(ini), "%s/npumemfs.ini", fx->dir);
	write_file(ini, "[device]\ncount = 2\n");
	assert_int_equal(nmfs_config_load(&fx->cfg, fx->dir, fx->err, sizeof(fx->err)),
			 -EISDIR);
	snprintf(want, sizeof(want), "%s: a folder, not an ini file; did you mean "
		 "--config %s?", fx->dir, ini);
	assert_string_equal(fx->err, want);
	assert_int_equal(fx->cfg.device_count, 1);
}

static void formatted_config_loads_back_to_the_same_values(void **state)
{
	struct fixture *fx = *state;
	struct sbuf text;

	assert_int_equal(load(fx, "[device]\ncount = 3\ncapacity = 6GiB\n"
				  "page_size = 1MiB\nfree_latency_us = 9\n"
				  "[fs]\nallow_other = on\n"),
			 0);
	sbuf_init(&text);
	assert_int_equal(nmfs_config_format(&fx->cfg, &text), 0);
	assert_non_null(strstr(text.data, "capacity = 6GiB\n"));
	assert_non_null(strstr(text.data, "page_size = 1MiB\n"));
	assert_non_null(strstr(text.data, "allow_other = true\n"));

	struct nmfs_config again;
	nmfs_config_default(&again);
	char other[192];
	snprintf(other, sizeof(other), "%s/again.ini", fx->dir);
	write_file(other, text.data);
	assert_int_equal(nmfs_config_load(&again, other, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(again.device_count, 3);
	assert_int_equal(again.capacity, 6ULL << 30);
	assert_int_equal(again.page_size, 1 << 20);
	assert_int_equal(again.free_latency_us, 9);
	assert_true(again.allow_other);
	sbuf_release(&text);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(defaults_are_one_npu_device_of_32_gib),
		T(empty_file_keeps_defaults_and_records_its_path),
		T(every_key_is_applied),
		T(plugin_isolation_and_timeout_are_applied),
		T(bad_plugin_isolation_and_timeout_are_refused),
		T(sizes_accept_bytes_and_binary_suffixes),
		T(every_size_key_takes_one_space_and_refuses_ambiguous_units),
		T(relative_replay_path_is_taken_from_the_ini_folder),
		T(relative_plugin_dirs_are_taken_from_the_ini_folder),
		T(plugin_dirs_resolving_past_one_ini_line_are_refused),
		T(replay_of_a_missing_trace_names_the_resolved_path),
		T(unknown_section_is_refused_even_when_empty),
		T(unknown_key_is_refused),
		T(key_in_the_wrong_section_is_unknown),
		T(bad_values_are_refused_with_their_line),
		T(bad_alloc_conf_is_refused_at_its_line),
		T(syntax_error_is_reported_at_its_line),
		T(missing_file_is_enoent),
		T(a_folder_is_refused_naming_its_ini),
		T(formatted_config_loads_back_to_the_same_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
