/*
 * bench_baseline.c - glibc, jemalloc and mimalloc behind one interface.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_baseline.h"

/* jemalloc 5.3's TLS block is 2.6 KiB; this leaves room for a larger build. */
#define STATIC_TLS_TUNABLE "glibc.rtld.optional_static_tls=16384"

struct library {
	const char *name, *soname, *malloc_sym, *free_sym;
};

/* mimalloc exports malloc too, but mi_malloc is the same code without the override shim. */
static const struct library libraries[BENCH_BASELINES] = {
	[BENCH_GLIBC] = { "glibc", NULL, NULL, NULL },
	[BENCH_JEMALLOC] = { "jemalloc", "libjemalloc.so.2", "malloc", "free" },
	[BENCH_MIMALLOC] = { "mimalloc", "libmimalloc.so.2", "mi_malloc", "mi_free" },
};

void bench_baseline_prepare(char **argv)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char buf[512];

	if (old != NULL && strstr(old, "glibc.rtld.optional_static_tls=") != NULL)
		return;
	if (old != NULL && *old != '\0')
		snprintf(buf, sizeof(buf), "%s:%s", old, STATIC_TLS_TUNABLE);
	else
		snprintf(buf, sizeof(buf), "%s", STATIC_TLS_TUNABLE);
	if (setenv("GLIBC_TUNABLES", buf, 1) == 0)
		execv("/proc/self/exe", argv);
	/* No re-execution: jemalloc may then fail to load and shows as n/a. */
}

static void open_one(enum bench_baseline_id id, struct bench_baseline *b)
{
	const struct library *l = &libraries[id];

	*b = (struct bench_baseline){ .name = l->name };
	if (id == BENCH_GLIBC) {
		b->malloc = malloc;
		b->free = free;
		b->present = true;
		return;
	}
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		return;
	b->malloc = (void *(*)(size_t))dlsym(h, l->malloc_sym);
	b->free = (void (*)(void *))dlsym(h, l->free_sym);
	b->present = b->malloc != NULL && b->free != NULL;
}

void bench_baselines_open(struct bench_baseline b[BENCH_BASELINES])
{
	for (int i = 0; i < BENCH_BASELINES; i++)
		open_one((enum bench_baseline_id)i, &b[i]);
}

int bench_baseline_open(const char *name, struct bench_baseline *out)
{
	for (int i = 0; i < BENCH_BASELINES; i++) {
		if (strcmp(name, libraries[i].name) == 0) {
			open_one((enum bench_baseline_id)i, out);
			return 0;
		}
	}
	return -1;
}

void bench_print_figure(bool present, double v, int width, int precision)
{
	if (present)
		printf(" %*.*f", width, precision, v);
	else
		printf(" %*s", width, "n/a (not installed)");
}
