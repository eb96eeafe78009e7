/*
 * test_prometheus.c - memory_stats() of every device as Prometheus text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

#include "fixtures.h"

#define NPU_KEYS 123
#define CUDA_KEYS 122
/* 9 arrays and 2 singles, each a gauge (current, peak) and two counters
 * (allocated, freed), + 7 scalars (6 in cuda); each with HELP and TYPE. */
#define NPU_FAMILIES (11 * 3 + 7)
#define CUDA_FAMILIES (11 * 3 + 6)

static char *prom(const struct npa_stats *s, int ndev, const struct npa_flavor *fl,
		  struct sbuf *b)
{
	sbuf_init(b);
	assert_int_equal(report_prometheus(b, s, ndev, fl), 0);
	return b->data;
}

static int count_prefix(const char *text, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);

	for (const char *line = text; *line; line = strchr(line, '\n') + 1)
		n += strncmp(line, prefix, len) == 0;
	return n;
}

static void has_line(const char *text, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("missing line: %s", line);
}

static void one_mib_tensor_gives_exact_samples(void **state)
{
	struct npa_stats s = { 0 };
	struct sbuf b;

	(void)state;
	fixture_one_mib_tensor(&s);
	const char *text = prom(&s, 1, &npa_flavor_cuda, &b);
	has_line(text, "npumemfs_allocated_bytes{device=\"0\",pool=\"small_pool\",stat=\"current\"} 1048576");
	has_line(text, "npumemfs_allocated_bytes{device=\"0\",pool=\"all\",stat=\"current\"} 1048576");
	has_line(text, "npumemfs_reserved_bytes{device=\"0\",pool=\"small_pool\",stat=\"current\"} 2097152");
	has_line(text, "npumemfs_reserved_bytes{device=\"0\",pool=\"large_pool\",stat=\"current\"} 0");
	has_line(text, "npumemfs_inactive_split_bytes{device=\"0\",pool=\"all\",stat=\"current\"} 1048576");
	has_line(text, "npumemfs_num_device_alloc_total{device=\"0\"} 1");
	sbuf_release(&b);
}

static void families_have_one_help_and_type_before_samples(void **state)
{
	struct npa_stats s = { 0 };
	struct sbuf b;

	(void)state;
	const char *text = prom(&s, 1, &npa_flavor_npu, &b);
	const char *head = "# HELP npumemfs_allocation memory_stats() "
			   "allocation.POOL.STAT of each device\n"
			   "# TYPE npumemfs_allocation gauge\n"
			   "npumemfs_allocation{device=\"0\",pool=\"all\",stat=\"current\"} 0\n";

	assert_int_equal(strncmp(text, head, strlen(head)), 0);
	assert_int_equal(count_prefix(text, "# HELP "), NPU_FAMILIES);
	assert_int_equal(count_prefix(text, "# TYPE "), NPU_FAMILIES);
	assert_int_equal(count_prefix(text, "# TYPE npumemfs_allocated_bytes "), 1);
	has_line(text, "# TYPE npumemfs_num_ooms_total counter");
	has_line(text, "# TYPE npumemfs_max_split_size gauge");
	has_line(text, "# TYPE npumemfs_oversize_segments gauge");
	assert_int_equal(text[b.len - 1], '\n');
	sbuf_release(&b);
}

/* Running totals only go up (until reset_accumulated_stats): counters. */
static void running_totals_are_counters_named_total(void **state)
{
	struct npa_stats s = { 0 };
	struct sbuf b;

	(void)state;
	fixture_one_mib_tensor(&s);
	const char *text = prom(&s, 1, &npa_flavor_cuda, &b);
	has_line(text, "# TYPE npumemfs_allocated_bytes_allocated_total counter");
	has_line(text, "npumemfs_allocated_bytes_allocated_total{device=\"0\",pool=\"small_pool\"} 1048576");
	has_line(text, "# TYPE npumemfs_allocated_bytes_freed_total counter");
	has_line(text, "npumemfs_requested_bytes_freed_total{device=\"0\",pool=\"all\"} 0");
	has_line(text, "# TYPE npumemfs_oversize_allocations_allocated_total counter");
	assert_null(strstr(text, "stat=\"allocated\""));
	assert_null(strstr(text, "stat=\"freed\""));
	sbuf_release(&b);
}

static void cuda_has_no_oom_rejections(void **state)
{
	struct npa_stats s = { 0 };
	struct sbuf b;

	(void)state;
	const char *text = prom(&s, 1, &npa_flavor_cuda, &b);
	assert_null(strstr(text, "num_oom_rejections"));
	assert_int_equal(count_prefix(text, "# TYPE "), CUDA_FAMILIES);
	assert_int_equal(count_prefix(text, "npumemfs_"), CUDA_KEYS);
	sbuf_release(&b);
}

/*
 * A sample back to its memory_stats() key: name{device="D",pool="P",stat="S"} V
 * gives "name.P.S V" for device D; the _total suffix of counters is dropped.
 */
static int sample_to_flat(const char *line, int *device, char *key, size_t keylen)
{
	char name[64], pool[32] = "", stat[32] = "";
	long long v;
	int n = 0;

	if (sscanf(line, "npumemfs_%63[a-z_]{device=\"%d\"%n", name, device, &n) != 2)
		return -1;
	line += n;
	if (sscanf(line, ",pool=\"%31[a-z_]\"%n", pool, &n) == 1)
		line += n;
	if (sscanf(line, ",stat=\"%31[a-z]\"%n", stat, &n) == 1)
		line += n;
	if (sscanf(line, "} %lld", &v) != 1)
		return -1;
	size_t len = strlen(name);
	if (len > 6 && strcmp(name + len - 6, "_total") == 0)
		name[len -= 6] = '\0';
	/* NAME_allocated_total and NAME_freed_total: stat "allocated", "freed". */
	for (const char *const *f = (const char *const[]){ "allocated", "freed", NULL }; *f; f++) {
		size_t fl = strlen(*f);
		if (len > fl + 1 && name[len - fl - 1] == '_' && strcmp(name + len - fl, *f) == 0 &&
		    strncmp(name, "num_", 4) != 0) {
			snprintf(stat, sizeof(stat), "%s", *f);
			name[len - fl - 1] = '\0';
			break;
		}
	}
	snprintf(key, keylen, "%s%s%s%s%s %lld", name, pool[0] ? "." : "", pool,
		 stat[0] ? "." : "", stat, v);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The samples of `device`, as sorted "key value" text. */
static char *device_as_flat(const char *text, int device)
{
	char *lines[512], *joined = calloc(1, 65536);
	size_t n = 0, len = 0;

	assert_non_null(joined);
	for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
		char key[128];
		int dev;
		if (line[0] == '#')
			continue;
		assert_int_equal(sample_to_flat(line, &dev, key, sizeof(key)), 0);
		if (dev == device && n < 512)
			lines[n++] = strdup(key);
	}
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(joined + len, 65536 - len, "%s\n", lines[i]);
		free(lines[i]);
	}
	return joined;
}

/* Each device's samples are exactly its stats/deviceN lines, once each. */
static void every_stat_appears_once_per_device(void **state)
{
	struct npa_stats s[2] = { 0 };
	struct sbuf b, flat0, flat1;

	(void)state;
	fixture_distinct(&s[0]);
	fixture_one_mib_tensor(&s[1]);
	const char *text = prom(s, 2, &npa_flavor_npu, &b);
	assert_int_equal(count_prefix(text, "npumemfs_"), 2 * NPU_KEYS);
	sbuf_init(&flat0);
	sbuf_init(&flat1);
	assert_int_equal(report_stats_flat(&flat0, &s[0], &npa_flavor_npu), 0);
	assert_int_equal(report_stats_flat(&flat1, &s[1], &npa_flavor_npu), 0);
	char *dev0 = device_as_flat(text, 0), *dev1 = device_as_flat(text, 1);
	assert_string_equal(dev0, flat0.data);
	assert_string_equal(dev1, flat1.data);
	free(dev0);
	free(dev1);
	sbuf_release(&flat0);
	sbuf_release(&flat1);
	sbuf_release(&b);
}

/* All samples of a family form one group: device 1 follows device 0. */
static void devices_of_a_family_are_one_group(void **state)
{
	struct npa_stats s[2] = { 0 };
	struct sbuf b;

	(void)state;
	const char *text = prom(s, 2, &npa_flavor_npu, &b);
	const char *d0 = strstr(text, "npumemfs_num_ooms_total{device=\"0\"} 0\n");
	assert_non_null(d0);
	assert_ptr_equal(strchr(d0, '\n') + 1,
			 strstr(text, "npumemfs_num_ooms_total{device=\"1\"} 0\n"));
	sbuf_release(&b);
}

/* torch.ones(10 * 1024) and torch.ones(20 * 1024) pinned: upstream's numbers. */
static struct npa_host_stats two_pinned_tensors(void)
{
	struct npa_host_stats h = { 0 };

	h.allocations = (struct npa_stat){ .current = 2, .peak = 2, .allocated = 2 };
	h.active_requests = h.allocations;
	h.allocated_bytes = (struct npa_stat){ .current = 196608, .peak = 196608,
					       .allocated = 196608 };
	h.active_bytes = h.allocated_bytes;
	h.host_alloc_time = (struct npa_duration_stat){ .total = 30, .max = 20, .min = 10,
							.count = 2 };
	h.num_host_alloc = 2;
	return h;
}

/* 4 stats x (gauge + 2 counters), 2 timings x (gauge + 2 counters), 2 scalars. */
#define HOST_FAMILIES (4 * 3 + 2 * 3 + 2)
#define HOST_KEYS 28

static void host_stats_give_exact_samples(void **state)
{
	struct npa_host_stats h = two_pinned_tensors();
	struct sbuf b;

	(void)state;
	sbuf_init(&b);
	assert_int_equal(report_prometheus_host(&b, &h), 0);
	const char *text = b.data;
	const char *head = "# HELP npumemfs_host_allocations host_memory_stats() allocations.STAT\n"
			   "# TYPE npumemfs_host_allocations gauge\n"
			   "npumemfs_host_allocations{stat=\"current\"} 2\n";

	assert_int_equal(strncmp(text, head, strlen(head)), 0);
	has_line(text, "npumemfs_host_allocated_bytes{stat=\"peak\"} 196608");
	has_line(text, "# TYPE npumemfs_host_allocated_bytes_allocated_total counter");
	has_line(text, "npumemfs_host_allocated_bytes_allocated_total 196608");
	has_line(text, "npumemfs_host_active_bytes_freed_total 0");
	has_line(text, "# HELP npumemfs_host_alloc_time_seconds host_memory_stats() "
		       "host_alloc_time.STAT, in seconds (microseconds in host/stats)");
	has_line(text, "npumemfs_host_alloc_time_seconds{stat=\"avg\"} 0.000015");
	has_line(text, "npumemfs_host_alloc_time_seconds{stat=\"max\"} 0.000020");
	has_line(text, "npumemfs_host_alloc_time_seconds{stat=\"min\"} 0.000010");
	has_line(text, "# TYPE npumemfs_host_alloc_time_seconds_total counter");
	has_line(text, "npumemfs_host_alloc_time_seconds_total 0.000030");
	has_line(text, "# HELP npumemfs_host_alloc_time_count_total host_memory_stats() "
		       "host_alloc_time.count");
	has_line(text, "npumemfs_host_alloc_time_count_total 2");
	has_line(text, "npumemfs_host_free_time_count_total 0");
	has_line(text, "# TYPE npumemfs_num_host_alloc_total counter");
	has_line(text, "npumemfs_num_host_alloc_total 2");
	assert_int_equal(count_prefix(text, "# HELP "), HOST_FAMILIES);
	assert_int_equal(count_prefix(text, "# TYPE "), HOST_FAMILIES);
	assert_int_equal(count_prefix(text, "npumemfs_"), HOST_KEYS);
	sbuf_release(&b);
}

/* Microseconds become exact decimal seconds, whole seconds included. */
static void host_durations_are_seconds(void **state)
{
	struct npa_host_stats h = { 0 };
	struct sbuf b;

	(void)state;
	h.host_free_time = (struct npa_duration_stat){ .total = 3000007, .max = 2500000,
						       .min = 500007, .count = 2 };
	sbuf_init(&b);
	assert_int_equal(report_prometheus_host(&b, &h), 0);
	has_line(b.data, "npumemfs_host_free_time_seconds{stat=\"avg\"} 1.500003");
	has_line(b.data, "npumemfs_host_free_time_seconds{stat=\"max\"} 2.500000");
	has_line(b.data, "npumemfs_host_free_time_seconds{stat=\"min\"} 0.500007");
	has_line(b.data, "npumemfs_host_free_time_seconds_total 3.000007");
	has_line(b.data, "npumemfs_host_free_time_count_total 2");
	has_line(b.data, "npumemfs_host_alloc_time_seconds_total 0.000000");
	sbuf_release(&b);
}

/* The file is the devices' families, then the host's: no name twice. */
static void host_families_never_meet_device_families(void **state)
{
	struct npa_host_stats h = two_pinned_tensors();
	struct npa_stats s = { 0 };
	struct sbuf b;
	char *types[256];
	int n = 0;

	(void)state;
	prom(&s, 1, &npa_flavor_npu, &b);
	assert_int_equal(report_prometheus_host(&b, &h), 0);
	for (const char *line = b.data; *line; line = strchr(line, '\n') + 1)
		if (strncmp(line, "# TYPE ", 7) == 0 && n < 256)
			types[n++] = strndup(line + 7, (size_t)(strchr(line + 7, ' ') - line - 7));
	assert_int_equal(n, NPU_FAMILIES + HOST_FAMILIES);
	qsort(types, (size_t)n, sizeof(types[0]), cmp_str);
	for (int i = 1; i < n; i++)
		if (strcmp(types[i - 1], types[i]) == 0)
			fail_msg("family %s twice", types[i]);
	for (int i = 0; i < n; i++)
		free(types[i]);
	sbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_mib_tensor_gives_exact_samples),
		cmocka_unit_test(families_have_one_help_and_type_before_samples),
		cmocka_unit_test(cuda_has_no_oom_rejections),
		cmocka_unit_test(every_stat_appears_once_per_device),
		cmocka_unit_test(running_totals_are_counters_named_total),
		cmocka_unit_test(devices_of_a_family_are_one_group),
		cmocka_unit_test(host_stats_give_exact_samples),
		cmocka_unit_test(host_durations_are_seconds),
		cmocka_unit_test(host_families_never_meet_device_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
