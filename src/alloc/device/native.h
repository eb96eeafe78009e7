/*
 * native.h - the calls of the caching allocator (struct npa, upstream's
 * NativeCachingAllocator) that go straight to one device's allocator:
 * malloc and free, whose path is kept in one file with the device's, and
 * the capture counts. caching_allocator.h is the face that shows them.
 */
#ifndef NPUMEMFS_NATIVE_H
#define NPUMEMFS_NATIVE_H

#include <stddef.h>

#include <acl/acl_rt.h>

#define NPA_ERRLEN 1024

struct npa;

/*
 * Allocate `size` bytes on `device` for use on `stream` (NULL: default).
 * size 0 gives *ptr = NULL and no stats. On OOM returns -ENOMEM with the
 * upstream message in err ("NPU out of memory. Tried to allocate ...").
 */
int npa_malloc(struct npa *a, int device, size_t size, aclrtStream stream,
	       void **ptr, char *err, size_t errlen);
/* Free a pointer from npa_malloc. Unknown: -EINVAL, "invalid device pointer: 0x..". */
int npa_free(struct npa *a, void *ptr, char *err, size_t errlen);

/* markCaptureBegin/End: a capture on `device` starts or ends; 0 or -ENODEV. */
int npa_mark_capture_begin(struct npa *a, int device);
int npa_mark_capture_end(struct npa *a, int device);

#endif /* NPUMEMFS_NATIVE_H */
