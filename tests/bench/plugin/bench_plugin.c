/*
 * bench_plugin.c - what the plug-in wrapper costs per allocation.
 *
 * The pass-through plug-in (silent variant) on a device with no simulated
 * latency, driven three ways with the same size sequence:
 *   direct   aclrtMallocAlign32 + aclrtFree, what the plug-in itself does
 *   wrapper  npl_ops.malloc + free (bookkeeping, guards, stats)
 *   switch   sw_malloc + sw_free (the daemon's path: owner map on top)
 * and then the caching allocator, every pair a cached hit, two ways:
 *   npa      npa_malloc + npa_free
 *   switch   sw_malloc + sw_free with caching current (every daemon
 *            allocation: the replay, tensors, ctl)
 * Each round allocates 64 blocks and frees them; best of 5 runs. Prints
 * ns per alloc+free pair and the ratios to direct (to npa for the caching
 * rows). Target: wrapper/direct <= 1.5. Then the processor time a host
 * lane's wait burns when no answer comes. Never fails on time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <acl/acl_rt.h>
#include "alloc/plugin/plugin_box.h"
#include "alloc/plugin/plugin_host.h"
#include "alloc/switch/allocator_switch.h"
#include <npumemfs/npusim.h>

#define BLOCKS 64
#define ROUNDS 2000
#define RUNS 5

static const size_t sizes[8] = { 4096, 1 << 20, 512, 3 << 20, 65536,
				 2 << 20, 8192, 12 << 20 };

struct target {
	const char *name;
	int (*alloc)(void *ctx, size_t size, void **p);
	void (*free)(void *ctx, void *p);
	void *ctx;
};

static int direct_alloc(void *ctx, size_t size, void **p)
{
	(void)ctx;
	return aclrtMallocAlign32(p, size, ACL_MEM_MALLOC_HUGE_FIRST);
}

static void direct_free(void *ctx, void *p)
{
	(void)ctx;
	aclrtFree(p);
}

static int npl_alloc(void *ctx, size_t size, void **p)
{
	char err[256];
	return npl_ops.malloc(ctx, 0, size, NULL, p, err, sizeof(err));
}

static void npl_release(void *ctx, void *p)
{
	char err[256];
	npl_ops.free(ctx, p, err, sizeof(err));
}

static int sw_alloc(void *ctx, size_t size, void **p)
{
	char err[256];
	return sw_malloc(ctx, 0, size, NULL, p, err, sizeof(err));
}

static void sw_release(void *ctx, void *p)
{
	char err[256];
	sw_free(ctx, p, err, sizeof(err));
}

static int npa_alloc(void *ctx, size_t size, void **p)
{
	char err[256];
	return npa_malloc(ctx, 0, size, NULL, p, err, sizeof(err));
}

static void npa_release(void *ctx, void *p)
{
	char err[256];
	npa_free(ctx, p, err, sizeof(err));
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per alloc+free pair over `rounds`, best of RUNS. */
static double measure_rounds(const struct target *t, int rounds)
{
	void *p[BLOCKS];
	double best = 0;

	for (int run = 0; run < RUNS; run++) {
		double t0 = now_ns();
		for (int r = 0; r < rounds; r++) {
			for (int i = 0; i < BLOCKS; i++)
				if (t->alloc(t->ctx, sizes[(r + i) % 8], &p[i]) || !p[i]) {
					fprintf(stderr, "%s: allocation failed\n", t->name);
					exit(1);
				}
			for (int i = 0; i < BLOCKS; i++)
				t->free(t->ctx, p[i]);
		}
		double ns = (now_ns() - t0) / (rounds * BLOCKS);
		if (run == 0 || ns < best)
			best = ns;
	}
	return best;
}

static double measure(const struct target *t)
{
	return measure_rounds(t, ROUNDS);
}

/* The same plug-in run in a host process (plugin_isolation = process):
 * each pair is four round trips, the plug-in's two calls and the two ACL
 * calls it makes back. */
static double measure_host(struct sw_options so, const char *spec)
{
	char host[4096], err[1024];
	struct sw *sw;
	double ns;

	if (plugin_host_default_path(host, sizeof(host)))
		return 0;
	so.plugin_host = host;
	if (sw_create(&so, &sw) || sw_write(sw, spec, err, sizeof(err))) {
		fprintf(stderr, "bench_plugin: no host: %s\n", err);
		return 0;
	}
	struct target t = { "host", sw_alloc, sw_release, sw };
	ns = measure_rounds(&t, ROUNDS / 50);
	sw_write(sw, "caching", err, sizeof(err));
	sw_destroy(sw);
	return ns;
}

/* A lane's wait that no answer ends (2 ms): what the waiting side burns
 * before it sleeps, after every call. */
static void lane_wait(void *box)
{
	pw_box_wait(box, 1, 2);
}

/* The baseline: the same 2 ms asleep in the futex at once, no spin. */
static void futex_sleep(void *box)
{
	struct timespec ts = { 0, 2000000 };

	syscall(SYS_futex, &((struct pw_box *)box)->seq, FUTEX_WAIT, 0, &ts, NULL, 0);
}

/* Processor time of `wait`, in us, best of RUNS. */
static double wait_cpu_us(void (*wait)(void *box))
{
	struct pw_box *box = calloc(1, sizeof(*box) + PW_MAX_DATA);
	double best = 0;

	for (int run = 0; box && run < RUNS; run++) {
		struct timespec a, b;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		wait(box);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
		if (run == 0 || us < best)
			best = us;
	}
	free(box);
	return best;
}

int main(void)
{
	struct npusim_config cfg;
	struct npa_options opt = { .device_count = 1 };
	struct plugin *plug;
	struct npl *wrapper;
	struct npa *npa;
	struct sw *sw;
	char err[1024];
	const char *spec = PLUGIN_DIR "/passthrough.so passthrough_alloc_silent "
			   "passthrough_free_silent";

	npusim_config_default(&cfg, 1, 8ull << 30);
	if (npusim_init(&cfg) || aclrtSetDevice(0))
		return 1;
	npa_conf_default(&opt.conf, &npa_flavor_npu);
	struct sw_options so = { .device_count = 1, .plugin_dirs = PLUGIN_DIR,
				 .owner = getuid() };
	if (npa_create(&opt, &npa))
		return 1;
	so.caching = npa;
	if (plugin_open(spec, PLUGIN_DIR, getuid(), 1, NULL, &plug, err, sizeof(err)) ||
	    npl_create(plug, 1, &wrapper) || sw_create(&so, &sw) ||
	    sw_write(sw, spec, err, sizeof(err))) {
		fprintf(stderr, "bench_plugin: %s\n", err);
		return 1;
	}

	struct target direct = { "direct", direct_alloc, direct_free, NULL };
	struct target wrap = { "wrapper", npl_alloc, npl_release, wrapper };
	struct target swit = { "switch", sw_alloc, sw_release, sw };
	double d = measure(&direct), w = measure(&wrap), s = measure(&swit);

	printf("plug-in wrapper overhead (pass-through plug-in, device cost 0, "
	       "%d x %d alloc+free pairs, best of %d)\n", ROUNDS, BLOCKS, RUNS);
	printf("  direct  aclrtMallocAlign32+aclrtFree  %8.1f ns/pair\n", d);
	printf("  wrapper npl_malloc+npl_free           %8.1f ns/pair  ratio %.2f "
	       "(target <= 1.50: %s)\n", w, w / d, w / d <= 1.5 ? "met" : "not met");
	printf("  switch  sw_malloc+sw_free             %8.1f ns/pair  ratio %.2f\n",
	       s, s / d);
	double h = measure_host(so, spec);
	printf("  host    sw_malloc+sw_free, plug-in in its host process %8.1f ns/pair  "
	       "ratio %.2f to direct, %.2f to switch (in the daemon)\n", h, h / d, h / s);
	double spin = wait_cpu_us(lane_wait), sleep = wait_cpu_us(futex_sleep);
	printf("  idle    a lane's wait that no answer ends (2 ms): %.0f us of processor; "
	       "asleep at once: %.0f us (it spins up to 20 us first)\n", spin, sleep);

	if (sw_write(sw, "caching", err, sizeof(err))) {
		fprintf(stderr, "bench_plugin: %s\n", err);
		return 1;
	}
	struct target cached = { "npa", npa_alloc, npa_release, npa };
	double c = measure(&cached), sc = measure(&swit);
	printf("caching allocator through the switch (cached hits, same sizes)\n");
	printf("  npa     npa_malloc+npa_free           %8.1f ns/pair\n", c);
	printf("  switch  sw_malloc+sw_free             %8.1f ns/pair  ratio %.2f\n",
	       sc, sc / c);

	sw_destroy(sw);
	npl_destroy(wrapper);
	npa_destroy(npa, NULL);
	npusim_shutdown();
	return 0;
}
