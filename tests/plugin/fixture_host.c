/*
 * fixture_host.c - a plug-in on host memory for the unit tests.
 *
 * Needs no simulator, counts every call so tests can see which hooks ran,
 * and misbehaves on request through the functions a spec names:
 * fx_alloc_null never gives memory, fx_alloc_same hands out one buffer
 * again and again (overlap), fx_alloc_odd returns 8 bytes past a 512-byte
 * boundary (unaligned; free it with fx_free_odd).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <npumemfs/plugin.h>

#include "fixture_host.h"

static struct fx_counts counts;
static char same_buffer[4096] __attribute__((aligned(512)));

struct fx_counts *fx_counts(void)
{
	return &counts;
}

void *fx_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *p = NULL;
	(void)device, (void)stream;
	counts.alloc++;
	if (posix_memalign(&p, 512, (size_t)size))
		return NULL;
	return p;
}

void fx_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	counts.free++;
	counts.last_free_size = size;
	counts.last_free_device = device;
	counts.last_free_stream = stream;
	free(ptr);
}

void *fx_alloc_null(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	counts.alloc++;
	return NULL;
}

void *fx_alloc_same(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	counts.alloc++;
	return same_buffer;
}

void fx_free_same(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	(void)ptr, (void)size, (void)device, (void)stream;
	counts.free++;
}

void *fx_alloc_odd(ssize_t size, int device, aclrtStream stream)
{
	char *p = fx_alloc(size + 8, device, stream);
	return p ? p + 8 : NULL;
}

void fx_free_odd(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	fx_free((char *)ptr - 8, size, device, stream);
}

void fx_init(int device_count)
{
	counts.init++;
	counts.init_devices = device_count;
}

int fx_init_refuse(int device_count)
{
	(void)device_count;
	return 7;
}

int fx_init_accept(int device_count)
{
	counts.init++;
	counts.init_devices = device_count;
	return 0;
}

void fx_reset(bool check_error)
{
	(void)check_error;
	counts.reset++;
}

void fx_fraction(double fraction, int device)
{
	counts.fraction++;
	counts.last_fraction = fraction;
	counts.last_fraction_device = device;
}

void fx_record_stream(void *ptr, aclrtStream stream)
{
	(void)ptr, (void)stream;
	counts.record_stream++;
}

void fx_erase_stream(void *ptr, aclrtStream stream)
{
	(void)ptr, (void)stream;
	counts.erase_stream++;
}

/* Numbers no wrapper would count, each telling its field and device apart. */
struct npumemfs_device_stats fx_get_device_stats(int8_t device)
{
	struct npumemfs_device_stats s = { 0 };

	counts.get_device_stats++;
	counts.last_stats_device = device;
	s.allocated_bytes[0].current = 1000 + device;
	s.allocated_bytes[0].peak = 2000 + device;
	s.reserved_bytes[2].current = 3000 + device;
	s.requested_bytes[1].freed = 4000 + device;
	s.num_alloc_retries = 5;
	s.num_ooms = 6;
	s.oversize_segments.current = 7;
	s.num_sync_all_streams = 8;
	s.num_device_alloc = 9;
	s.num_device_free = 10;
	s.num_oom_rejections = 11;
	s.max_split_size = 12;
	return s;
}

/* A hook that aborts: the fault barrier's business (an abort, not a
 * null write, so that no sanitizer takes the fault first). */
struct npumemfs_device_stats fx_get_device_stats_crash(int8_t device)
{
	struct npumemfs_device_stats s = { 0 };

	if (device >= 0)
		abort();
	return s;
}

void fx_reset_peak_status(int8_t device)
{
	counts.reset_peak_status++;
	counts.last_reset_peak_device = device;
}

void *fx_base_alloc(void *ptr, size_t *size)
{
	counts.base_alloc++;
	*size = 1 << 20;
	return (char *)ptr - 512;
}

/*
 * A bump allocator over one static buffer: blocks come out back to back,
 * rounded to 512 bytes, and fx_bump_rewind moves the cursor back so that
 * the next block overlaps earlier ones on purpose.
 */
static char bump_buffer[4 << 20] __attribute__((aligned(4096)));
static size_t bump_used;

void *fx_bump_alloc(ssize_t size, int device, aclrtStream stream)
{
	size_t n = ((size_t)size + 511) & ~(size_t)511;
	(void)device, (void)stream;
	counts.alloc++;
	if (n > sizeof(bump_buffer) - bump_used)
		return NULL;
	bump_used += n;
	return bump_buffer + bump_used - n;
}

void fx_bump_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	(void)ptr, (void)size, (void)device, (void)stream;
	counts.free++;
}

void fx_bump_rewind(size_t bytes)
{
	bump_used = bytes > bump_used ? 0 : bump_used - bytes;
}
