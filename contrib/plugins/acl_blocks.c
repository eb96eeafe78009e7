/*
 * acl_blocks.c - operator workspace from torch_npu's caching allocator,
 * through its block handles, the way torchair's NpuAllocator hands it to
 * the runtime: MallocBlock(size, stream, device) gives a block,
 * GetBlockPtr its address, FreeBlock gives it back. The init hook makes a
 * stream per device and registers that allocator on it (with the ACL
 * descriptor API, as acl_pool.c does); tensors go to the device directly.
 *
 *     echo "$PWD/build/lib/acl_blocks.so acl_blocks_alloc acl_blocks_free init=acl_blocks_init" \
 *         > mnt/ctl/allocator
 *
 * The four block functions are not in libnpusim: the program that loads
 * the plug-in provides them (npumemfs and npumem-replay export them, as
 * libtorch_npu does), so the object is linked without them and they
 * resolve at load. Each block is reported on stderr with the size the
 * caching allocator gave it (GetBlockSize).
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <acl/acl_rt.h>
#include <acl/acl_rt_allocator.h>
#include <npumemfs/block_handle.h>

#define ACL_BLOCKS_MAX_DEVICES 16

struct acl_blocks {
	int device;
	aclrtStream stream;
};

static struct acl_blocks streams[ACL_BLOCKS_MAX_DEVICES];

void *acl_blocks_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *ptr = NULL;

	(void)device, (void)stream;
	if (aclrtMallocAlign32(&ptr, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return NULL;
	return ptr;
}

void acl_blocks_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(ptr);
}

static void *block_alloc(aclrtAllocator obj, size_t size)
{
	struct acl_blocks *s = obj;
	void *h = MallocBlock(size, s->stream, s->device);

	if (h)
		fprintf(stderr, "acl_blocks: device %d: a block for %zu bytes, GetBlockSize %zu\n",
			s->device, size, GetBlockSize(h));
	return h;
}

static void block_free(aclrtAllocator obj, aclrtAllocatorBlock block)
{
	(void)obj;
	FreeBlock(block);
}

static void *block_address(aclrtAllocatorBlock block)
{
	return GetBlockPtr(block);
}

/* init's argument is no device count (torch_npu passes the current
 * device, PyTorch 0): the runtime says how many there are. */
void acl_blocks_init(int device_index)
{
	int32_t current = 0;
	uint32_t count = 0;

	(void)device_index;
	aclrtGetDevice(&current);
	aclrtGetDeviceCount(&count);
	for (int i = 0; i < (int)count && i < ACL_BLOCKS_MAX_DEVICES; i++) {
		struct acl_blocks *s = &streams[i];
		aclrtAllocatorDesc d;

		s->device = i;
		if (aclrtSetDevice(i) != ACL_SUCCESS || aclrtCreateStream(&s->stream) != ACL_SUCCESS ||
		    !(d = aclrtAllocatorCreateDesc())) {
			fprintf(stderr, "acl_blocks: no stream on device %d\n", i);
			continue;
		}
		aclrtAllocatorSetObjToDesc(d, s);
		aclrtAllocatorSetAllocFuncToDesc(d, block_alloc);
		aclrtAllocatorSetFreeFuncToDesc(d, block_free);
		aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, block_address);
		aclrtAllocatorRegister(s->stream, d);
		/* The runtime keeps a copy of what was set. */
		aclrtAllocatorDestroyDesc(d);
	}
	aclrtSetDevice(current);
}

/* Unloading: the daemon has already unregistered what is ours. */
__attribute__((destructor)) static void acl_blocks_fini(void)
{
	for (int i = 0; i < ACL_BLOCKS_MAX_DEVICES; i++)
		if (streams[i].stream) {
			aclrtSetDevice(streams[i].device);
			aclrtDestroyStream(streams[i].stream);
			streams[i].stream = NULL;
		}
}
