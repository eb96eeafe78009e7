/*
 * alloc_fixture.c - set-up and small helpers shared by the allocator tests.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"
#include "alloc/host/host_allocator.h"

bool fx_expandable(void)
{
	const char *v = getenv("NPA_TEST_EXPANDABLE");

	return v != NULL && strcmp(v, "1") == 0;
}

static struct npa *start(const struct npa_flavor *flavor, uint64_t capacity,
			 void (*tweak)(struct npa_conf *conf), bool expandable)
{
	struct npusim_config cfg;
	struct npa_options opt = { .flavor = flavor, .device_count = 1,
				   .host_capacity = FX_HOST_CAPACITY };
	struct npa *a = NULL;

	/* A test that failed half-way left its device up. */
	if (npusim_initialized())
		npusim_shutdown();
	npusim_config_default(&cfg, 1, capacity);
	cfg.host.capacity = FX_HOST_CAPACITY;
	assert_int_equal(npusim_init(&cfg), 0);
	npa_conf_default(&opt.conf, flavor);
	opt.conf.expandable_segments = expandable;
	if (tweak != NULL)
		tweak(&opt.conf);
	assert_int_equal(npa_create(&opt, &a), 0);
	return a;
}

struct npa *fx_start_conf(const struct npa_flavor *flavor, uint64_t capacity,
			  void (*tweak)(struct npa_conf *conf))
{
	return start(flavor, capacity, tweak, fx_expandable());
}

struct npa *fx_start_device_segments(const struct npa_flavor *flavor, uint64_t capacity,
				     void (*tweak)(struct npa_conf *conf))
{
	return start(flavor, capacity, tweak, false);
}

struct npa *fx_start(const struct npa_flavor *flavor, uint64_t capacity)
{
	return fx_start_conf(flavor, capacity, NULL);
}

void fx_check(struct npa *a)
{
	char err[NPA_ERRLEN] = "";
	int rc = npa_check(a, 0, err, sizeof(err));

	if (rc != 0)
		fail_msg("npa_check: %s", err);
	rc = npa_host_check(npa_host_of(a), err, sizeof(err));
	if (rc != 0)
		fail_msg("npa_host_check: %s", err);
}

void fx_stop(struct npa *a)
{
	uint64_t leaked = 1;

	fx_check(a);
	assert_int_equal(npa_destroy(a, &leaked), 0);
	assert_int_equal(leaked, 0);
	npusim_shutdown();
}

struct npa_stats fx_stats(struct npa *a)
{
	struct npa_stats st;

	assert_int_equal(npa_get_stats(a, 0, &st), 0);
	return st;
}

void *fx_malloc(struct npa *a, size_t size, aclrtStream stream)
{
	char err[NPA_ERRLEN] = "";
	void *p = NULL;
	int rc = npa_malloc(a, 0, size, stream, &p, err, sizeof(err));

	if (rc != 0)
		fail_msg("npa_malloc(%zu): %d %s", size, rc, err);
	return p;
}

void fx_free(struct npa *a, void *ptr)
{
	assert_int_equal(npa_free(a, ptr, NULL, 0), 0);
}

struct npusim_counters fx_device(void)
{
	struct npusim_counters c;

	assert_int_equal(npusim_device_counters(0, &c), 0);
	return c;
}

struct npa_pool_id fx_pool_of(struct npa *a, const void *ptr)
{
	struct npa_snapshot snap;
	struct npa_pool_id id = { 99, 99 };
	uint64_t p = (uint64_t)(uintptr_t)ptr;

	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	for (size_t i = 0; i < snap.nsegments; i++) {
		const struct npa_segment_info *s = &snap.segments[i];
		if (p >= s->address && p < s->address + s->total_size)
			id = (struct npa_pool_id){ s->pool_id[0], s->pool_id[1] };
	}
	npa_snapshot_release(&snap);
	return id;
}

uint64_t fx_next(struct fx_rng *r)
{
	uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

size_t fx_below(struct fx_rng *r, size_t n)
{
	return (size_t)(fx_next(r) % n);
}

void fx_free_random(struct npa *a, struct fx_rng *r, void **live, size_t *nlive,
		    const aclrtStream *streams, size_t nstreams)
{
	size_t i = fx_below(r, *nlive);
	void *p = live[i];

	live[i] = live[--*nlive];
	if (fx_below(r, 3) == 0) {
		aclrtStream s = streams[fx_below(r, nstreams)];

		assert_int_equal(npa_record_stream(a, p, s), 0);
		if (fx_below(r, 2) == 0)
			assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	}
	fx_free(a, p);
}
