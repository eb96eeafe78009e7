/*
 * test_stats.c - memory_stats() as "key value" lines and
 * memory_stats_as_nested_dict() as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"
#include "report/stat_keys.h"

#include "fixtures.h"
#include "jansson_budget.h"

/* 9 stat arrays x 3 pools x 4 fields + 6 counters + 2 singles x 4 fields */
#define CUDA_KEYS 122
#define NPU_KEYS 123 /* the same plus num_oom_rejections */

static char *flat(const struct npa_stats *s, const struct npa_flavor *fl,
		  struct sbuf *b)
{
	sbuf_init(b);
	assert_int_equal(report_stats_flat(b, s, fl), 0);
	return b->data;
}

static int count_lines(const char *text)
{
	int n = 0;
	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static void npu_reports_123_keys(void **state)
{
	(void)state;
	struct npa_stats s = { 0 };
	struct sbuf b;
	const char *text = flat(&s, &npa_flavor_npu, &b);
	assert_int_equal(count_lines(text), NPU_KEYS);
	assert_non_null(strstr(text, "\nnum_oom_rejections 0\n"));
	sbuf_release(&b);
}

static void cuda_reports_122_keys_without_oom_rejections(void **state)
{
	(void)state;
	struct npa_stats s = { 0 };
	struct sbuf b;
	const char *text = flat(&s, &npa_flavor_cuda, &b);
	assert_int_equal(count_lines(text), CUDA_KEYS);
	assert_null(strstr(text, "num_oom_rejections"));
	sbuf_release(&b);
}

/* Python sorts the keys as strings: '.' (0x2e) before '_' (0x5f), so
 * "active.*" comes before "active_bytes.*". */
static void keys_are_sorted_in_byte_order(void **state)
{
	(void)state;
	struct npa_stats s;
	struct sbuf b;
	fixture_distinct(&s);
	char *text = flat(&s, &npa_flavor_npu, &b);
	char prev[64] = "";
	int n = 0;
	for (char *save, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		char key[64];
		assert_int_equal(sscanf(line, "%63s", key), 1);
		assert_true(strcmp(prev, key) < 0);
		if (n == 0)
			assert_string_equal(key, "active.all.allocated");
		if (strcmp(key, "active_bytes.all.allocated") == 0)
			assert_string_equal(prev, "active.small_pool.peak");
		snprintf(prev, sizeof(prev), "%s", key);
	}
	assert_string_equal(prev, "segment.small_pool.peak");
	sbuf_release(&b);
}

static void lines_carry_the_worked_example_values(void **state)
{
	(void)state;
	struct npa_stats s;
	struct sbuf b;
	fixture_worked_example(&s);
	const char *text = flat(&s, &npa_flavor_cuda, &b);
	assert_non_null(strstr(text,
			       "inactive_split_bytes.all.allocated 2097152\n"
			       "inactive_split_bytes.all.current 2094080\n"
			       "inactive_split_bytes.all.freed 3072\n"
			       "inactive_split_bytes.all.peak 2096128\n"));
	assert_non_null(strstr(text, "\nmax_split_size -1\n"
				     "num_alloc_retries 0\n"
				     "num_device_alloc 1\n"
				     "num_device_free 0\n"
				     "num_ooms 0\n"
				     "num_sync_all_streams 1\n"));
	assert_non_null(strstr(text, "\nrequested_bytes.small_pool.peak 4000\n"));
	sbuf_release(&b);
}

/* The leaf at "a.b.c" of a nested object. */
static json_t *leaf(json_t *root, const char *key)
{
	char path[64];
	snprintf(path, sizeof(path), "%s", key);
	json_t *node = root;
	char *save;
	for (char *part = strtok_r(path, ".", &save); part && node;
	     part = strtok_r(NULL, ".", &save))
		node = json_object_get(node, part);
	return node;
}

static int count_leaves(json_t *node)
{
	if (!json_is_object(node))
		return 1;
	int n = 0;
	const char *key;
	json_t *child;
	json_object_foreach(node, key, child)
		n += count_leaves(child);
	return n;
}

/* Every value where the schema puts it, with printf's digits: stats whose
 * each field differs, negative ones and both int64 limits among them. */
static void lines_are_the_sorted_keys_with_printfs_values(void **state)
{
	(void)state;
	const struct npa_flavor *flavors[] = { &npa_flavor_npu, &npa_flavor_cuda };
	struct npa_stats s;
	int64_t *slot = (int64_t *)&s;
	size_t nslots = sizeof(s) / sizeof(*slot);

	for (size_t i = 0; i < nslots; i++)
		slot[i] = (int64_t)(i * 7919) * (i % 3 == 0 ? -1 : 1);
	slot[1] = INT64_MIN;
	slot[2] = INT64_MAX;
	for (size_t f = 0; f < 2; f++) {
		struct stat_kv kv[STAT_KEYS_MAX];
		struct sbuf want, got;
		size_t n = stat_keys_collect(kv, &s, flavors[f]);

		stat_keys_sort(kv, n);
		sbuf_init(&want);
		for (size_t i = 0; i < n; i++)
			sbuf_printf(&want, "%s %" PRId64 "\n", kv[i].key, kv[i].value);
		assert_string_equal(flat(&s, flavors[f], &got), want.data);
		sbuf_release(&want);
		sbuf_release(&got);
	}
}

static void json_holds_every_flat_key_with_its_value(void **state)
{
	(void)state;
	const struct npa_flavor *flavors[] = { &npa_flavor_cuda, &npa_flavor_npu };
	struct npa_stats s;
	fixture_distinct(&s);
	for (int f = 0; f < 2; f++) {
		struct sbuf text, js;
		sbuf_init(&js);
		assert_int_equal(report_stats_json(&js, &s, flavors[f]), 0);
		json_error_t err;
		json_t *root = json_loads(js.data, 0, &err);
		assert_non_null(root);
		int n = 0;
		char *lines = flat(&s, flavors[f], &text);
		for (char *save, *line = strtok_r(lines, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save), n++) {
			char key[64];
			long long value;
			assert_int_equal(sscanf(line, "%63s %lld", key, &value), 2);
			json_t *v = leaf(root, key);
			assert_true(json_is_integer(v));
			assert_int_equal(json_integer_value(v), value);
		}
		assert_int_equal(count_leaves(root), n);
		assert_int_equal(n, f == 0 ? CUDA_KEYS : NPU_KEYS);
		json_decref(root);
		sbuf_release(&text);
		sbuf_release(&js);
	}
}

static void json_nests_by_dots_with_sorted_keys(void **state)
{
	(void)state;
	struct npa_stats s;
	struct sbuf b;
	fixture_one_mib_tensor(&s);
	sbuf_init(&b);
	assert_int_equal(report_stats_json(&b, &s, &npa_flavor_npu), 0);
	const char *start = "{\n"
			    "  \"active\": {\n"
			    "    \"all\": {\n"
			    "      \"allocated\": 1,\n"
			    "      \"current\": 1,\n"
			    "      \"freed\": 0,\n"
			    "      \"peak\": 1\n"
			    "    },\n";
	assert_int_equal(strncmp(b.data, start, strlen(start)), 0);
	assert_non_null(strstr(b.data, "\n  \"max_split_size\": -1,\n"));
	assert_string_equal(b.data + b.len - 3, "\n}\n");
	sbuf_release(&b);
}

static void json_reports_enomem_when_jansson_runs_out(void **state)
{
	(void)state;
	struct npa_stats s;
	struct sbuf b;
	fixture_distinct(&s);
	sbuf_init(&b);
	for (int budget = 0; budget < 40; budget += 7) {
		jansson_budget_set(budget);
		assert_int_equal(report_stats_json(&b, &s, &npa_flavor_npu),
				 -ENOMEM);
	}
	sbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(npu_reports_123_keys),
		cmocka_unit_test(cuda_reports_122_keys_without_oom_rejections),
		cmocka_unit_test(keys_are_sorted_in_byte_order),
		cmocka_unit_test(lines_carry_the_worked_example_values),
		cmocka_unit_test(lines_are_the_sorted_keys_with_printfs_values),
		cmocka_unit_test(json_holds_every_flat_key_with_its_value),
		cmocka_unit_test(json_nests_by_dots_with_sorted_keys),
		cmocka_unit_test_teardown(json_reports_enomem_when_jansson_runs_out,
					  jansson_budget_restore),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
