/*
 * block_handle.h - torch_npu's block handles (NPUBlockHandle.h): a block
 * of the caching allocator as an opaque handle, the way torchair's
 * NpuAllocator and an ACL allocator descriptor hand memory around
 * (alloc -> block, block -> address, free(block)).
 *
 * They act on the caching allocator of the process that provides them
 * (npumemfs binds its own at start), whatever allocator is current, as
 * torch_npu's act on its NPUCachingAllocator. A handle is valid until
 * FreeBlock.
 */
#ifndef NPUMEMFS_BLOCK_HANDLE_H
#define NPUMEMFS_BLOCK_HANDLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * `size` bytes on `device` (-1: the current device) for `stream`, which
 * must not be NULL. NULL for an invalid device, a NULL stream, size 0, an
 * out-of-memory, or when no caching allocator is bound.
 */
void *MallocBlock(size_t size, void *stream, int device);
void FreeBlock(void *handle);
/* The device address of the block. */
void *GetBlockPtr(const void *handle);
/* The block's size as the allocator keeps it (rounded: 512 bytes and up). */
size_t GetBlockSize(const void *handle);

#ifdef __cplusplus
}

namespace c10_npu {
namespace NPUCachingAllocator {
inline void *MallocBlock(size_t size, void *stream, int device = -1)
{
	return ::MallocBlock(size, stream, device);
}
inline void FreeBlock(void *handle) { ::FreeBlock(handle); }
inline void *GetBlockPtr(const void *handle) { return ::GetBlockPtr(handle); }
inline size_t GetBlockSize(const void *handle) { return ::GetBlockSize(handle); }
}
}
#endif

#endif /* NPUMEMFS_BLOCK_HANDLE_H */
