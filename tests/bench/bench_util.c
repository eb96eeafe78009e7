/*
 * bench_util.c - shared set-up and measuring helpers of the benchmarks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <npumemfs/npusim.h>

#include "bench_util.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_device_up(uint64_t capacity, char *err, size_t errlen)
{
	struct npusim_config cfg;
	int rc;

	npusim_config_default(&cfg, 1, capacity);
	rc = npusim_init(&cfg);
	if (rc < 0)
		snprintf(err, errlen, "npusim_init(%llu bytes): %s",
			 (unsigned long long)capacity, strerror(-rc));
	return rc;
}

void bench_device_down(void)
{
	npusim_shutdown();
}

int bench_npa_new(const char *conf, struct npa **out, char *err, size_t errlen)
{
	return bench_npa_new_flavor(&npa_flavor_npu, conf, out, err, errlen);
}

int bench_npa_new_flavor(const struct npa_flavor *flavor, const char *conf,
			 struct npa **out, char *err, size_t errlen)
{
	struct npa_options opt = { .flavor = flavor, .device_count = 1 };
	int rc;

	npa_conf_default(&opt.conf, opt.flavor);
	if (conf && *conf) {
		rc = npa_conf_parse(&opt.conf, opt.flavor, conf, NPA_ORIGIN_CLI,
				    err, errlen);
		if (rc < 0)
			return rc;
	}
	rc = npa_create(&opt, out);
	if (rc < 0)
		snprintf(err, errlen, "npa_create(\"%s\"): %s", conf ? conf : "",
			 strerror(-rc));
	return rc;
}

const char *bench_fmt_bytes(uint64_t bytes, char *buf, size_t buflen)
{
	if (bytes >= GiB)
		snprintf(buf, buflen, "%.2f GiB", (double)bytes / GiB);
	else
		snprintf(buf, buflen, "%.1f MiB", (double)bytes / MiB);
	return buf;
}
