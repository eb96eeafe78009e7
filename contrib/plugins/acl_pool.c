/*
 * acl_pool.c - an allocator plug-in that also serves operator workspace,
 * registered with the runtime the way MindSpore's AclAllocatorRegister
 * registers its memory pool: per stream, aclrtAllocatorCreateDesc, set the
 * object and the alloc, free, alloc-advise and get-addr-from-block
 * functions, aclrtAllocatorRegister. Only the ACL API is used, so the same
 * code runs against CANN.
 *
 *     echo "$PWD/build/lib/acl_pool.so acl_pool_alloc acl_pool_free init=acl_pool_init" \
 *         > mnt/ctl/allocator
 *     cat mnt/acl/allocators          # a row per device: stream '-', its runtime_stream id
 *     echo "launch runtime_stream=ID workspace=1MiB" > mnt/ctl/op
 *
 * The init hook makes one stream per device (as a framework makes its
 * compute streams) and registers a descriptor on it; its object is the
 * pool of that device. Blocks are device addresses (get-addr-from-block
 * is the identity, as MindSpore's). Unloading the plug-in tears down as
 * MindSpore does: destroy the descriptor, unregister, then the stream goes.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <acl/acl_rt.h>
#include <acl/acl_rt_allocator.h>

#define ACL_POOL_MAX_DEVICES 16

/* One device's pool: tensors and workspace both come from it. */
struct acl_pool {
	int device;
	aclrtStream stream;        /* the stream its descriptor is registered on */
	aclrtAllocatorDesc desc;
	uint64_t workspace_blocks; /* outstanding */
};

static struct acl_pool pools[ACL_POOL_MAX_DEVICES];
static int npools;

void *acl_pool_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *ptr = NULL;

	(void)device, (void)stream;
	if (aclrtMallocAlign32(&ptr, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return NULL;
	return ptr;
}

void acl_pool_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(ptr);
}

/* The descriptor's functions: the runtime calls them for an operator's
 * workspace on the pool's stream, with the device already set. */
static void *workspace_alloc(aclrtAllocator obj, size_t size)
{
	struct acl_pool *pool = obj;
	void *block = acl_pool_alloc((ssize_t)size, pool->device, pool->stream);

	if (block)
		pool->workspace_blocks++;
	return block;
}

static void workspace_free(aclrtAllocator obj, aclrtAllocatorBlock block)
{
	struct acl_pool *pool = obj;

	pool->workspace_blocks--;
	acl_pool_free(block, 0, pool->device, pool->stream);
}

/* The advised address is only a hint: a fresh block, as MindSpore's. */
static void *workspace_alloc_advise(aclrtAllocator obj, size_t size, aclrtAllocatorAddr addr)
{
	(void)addr;
	return workspace_alloc(obj, size);
}

static void *block_address(aclrtAllocatorBlock block)
{
	return block;
}

static int register_pool(struct acl_pool *pool)
{
	aclrtAllocatorDesc d;

	if (aclrtSetDevice(pool->device) != ACL_SUCCESS ||
	    aclrtCreateStream(&pool->stream) != ACL_SUCCESS)
		return -1;
	if (!(d = aclrtAllocatorCreateDesc()))
		return -1;
	aclrtAllocatorSetObjToDesc(d, pool);
	aclrtAllocatorSetAllocFuncToDesc(d, workspace_alloc);
	aclrtAllocatorSetFreeFuncToDesc(d, workspace_free);
	aclrtAllocatorSetAllocAdviseFuncToDesc(d, workspace_alloc_advise);
	aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, block_address);
	pool->desc = d;
	return aclrtAllocatorRegister(pool->stream, d) == ACL_SUCCESS ? 0 : -1;
}

/* init's argument is no device count (torch_npu passes the current
 * device, PyTorch 0): the runtime says how many there are. */
void acl_pool_init(int device_index)
{
	int32_t current = 0;
	uint32_t count = 0;

	(void)device_index;
	aclrtGetDevice(&current);
	aclrtGetDeviceCount(&count);
	for (int i = 0; i < (int)count && i < ACL_POOL_MAX_DEVICES; i++) {
		pools[i].device = i;
		if (register_pool(&pools[i]) != 0)
			fprintf(stderr, "acl_pool: no ACL allocator on device %d\n", i);
		npools = i + 1;
	}
	aclrtSetDevice(current);
}

__attribute__((destructor)) static void acl_pool_fini(void)
{
	for (int i = 0; i < npools; i++) {
		if (pools[i].desc)
			aclrtAllocatorDestroyDesc(pools[i].desc);
		if (pools[i].stream) {
			aclrtAllocatorUnregister(pools[i].stream);
			aclrtSetDevice(pools[i].device);
			aclrtDestroyStream(pools[i].stream);
		}
	}
	npools = 0;
}
