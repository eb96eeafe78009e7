/*
 * acl_rt_allocator.h - allocator descriptors: a framework's own allocator,
 * registered for a stream, from which the runtime takes operator workspace
 * on that stream.
 *
 * Names, types and return codes are CANN's (acl/acl_rt_allocator.h; the
 * copy torch_npu vendored up to v2.8.0). A descriptor collects an object
 * and four functions; aclrtAllocatorRegister keeps a copy of them for the
 * stream (the descriptor may be destroyed afterwards), the last
 * registration of a stream wins, and unregistering a stream that has none
 * succeeds. Every null argument is ACL_ERROR_INVALID_PARAM.
 *
 * The runtime uses a registration as alloc(obj, size) -> block,
 * getAddrFromBlock(block) -> device address, and free(obj, block) once the
 * operator's work on the stream has completed; allocAdvise is optional.
 */
#ifndef ACL_ACL_RT_ALLOCATOR_H
#define ACL_ACL_RT_ALLOCATOR_H

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclrtAllocatorDesc;
typedef void *aclrtAllocator;
typedef void *aclrtAllocatorBlock;
typedef void *aclrtAllocatorAddr;

typedef void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);
typedef void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size,
					       aclrtAllocatorAddr addr);
typedef void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

/* A descriptor with nothing set, or NULL when out of memory. */
ACL_FUNC_VISIBILITY aclrtAllocatorDesc aclrtAllocatorCreateDesc(void);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc,
							aclrtAllocator allocator);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
							      aclrtAllocatorAllocFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
							     aclrtAllocatorFreeFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
								    aclrtAllocatorAllocAdviseFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func);
/* The stream must not be NULL; the object, alloc, free and
 * get-addr-from-block functions must be set. */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorRegister(aclrtStream stream,
						    aclrtAllocatorDesc allocatorDesc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorUnregister(aclrtStream stream);
/*
 * What is registered for `stream`: the descriptor given to Register (even
 * if destroyed since) and copies of what it held; a NULL out-pointer other
 * than allocatorDesc is skipped. ACL_ERROR_INVALID_PARAM when the stream
 * is not registered with any allocator.
 */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorGetByStream(aclrtStream stream,
						       aclrtAllocatorDesc *allocatorDesc,
						       aclrtAllocator *allocator,
						       aclrtAllocatorAllocFunc *allocFunc,
						       aclrtAllocatorFreeFunc *freeFunc,
						       aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
						       aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc);

#ifdef __cplusplus
}
#endif

#endif /* ACL_ACL_RT_ALLOCATOR_H */
