/*
 * passthrough.c - every request goes straight to the device.
 *
 * torch_npu's documented example allocator, in C: what any plug-in must
 * at least do. passthrough_alloc/passthrough_free log each call to stderr
 * like the example; passthrough_alloc_silent/passthrough_free_silent do
 * the same without the log (for benchmarks).
 *
 *     echo "$PWD/build/lib/passthrough.so passthrough_alloc passthrough_free" \
 *         > mnt/ctl/allocator
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include <acl/acl_rt.h>
#include <npumemfs/plugin.h>

void *passthrough_alloc_silent(ssize_t size, int device, aclrtStream stream)
{
	void *ptr = NULL;

	(void)device, (void)stream;
	if (aclrtMallocAlign32(&ptr, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) !=
	    ACL_SUCCESS)
		return NULL;
	return ptr;
}

void passthrough_free_silent(void *ptr, ssize_t size, int device,
			     aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(ptr);
}

void *passthrough_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *ptr = passthrough_alloc_silent(size, device, stream);

	fprintf(stderr, "passthrough: alloc ptr = %p, size = %zd, device = %d\n",
		ptr, size, device);
	return ptr;
}

void passthrough_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	fprintf(stderr, "passthrough: free ptr = %p, size = %zd, device = %d\n",
		ptr, size, device);
	passthrough_free_silent(ptr, size, device, stream);
}

/*
 * passthrough_alloc_silent that also says which stream it was given: a
 * line "alloc device=D stream=HANDLE id=ID" appended to the file
 * $PASSTHROUGH_STREAM_LOG names (ID from aclrtStreamGetId).
 */
void *passthrough_alloc_streams(ssize_t size, int device, aclrtStream stream)
{
	const char *path = getenv("PASSTHROUGH_STREAM_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	int32_t id = -1;

	if (f) {
		aclrtStreamGetId(stream, &id);
		fprintf(f, "alloc device=%d stream=%p id=%d\n", device, stream, (int)id);
		fclose(f);
	}
	return passthrough_alloc_silent(size, device, stream);
}

/*
 * Private-pool hooks (torch_npu's set_begin_allocate_to_pool,
 * set_end_allocate_to_pool_fn, set_release_pool) that only say what they
 * were asked: a line per call appended to the file $PASSTHROUGH_POOL_LOG
 * names. A pass-through has one pool, the device's.
 */
static void pool_log(const char *call, int device, struct npumemfs_mempool_id pool)
{
	const char *path = getenv("PASSTHROUGH_POOL_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "%s device=%d pool=%llu,%llu\n", call, device, pool.first, pool.second);
	fclose(f);
}

void passthrough_begin_pool(int device, struct npumemfs_mempool_id pool,
			    npumemfs_stream_filter filter, void *arg)
{
	(void)filter, (void)arg;
	pool_log("begin_allocate_to_pool", device, pool);
}

void passthrough_end_pool(int device, struct npumemfs_mempool_id pool)
{
	pool_log("end_allocate_to_pool", device, pool);
}

void passthrough_release_pool(int device, struct npumemfs_mempool_id pool)
{
	pool_log("release_pool", device, pool);
}
