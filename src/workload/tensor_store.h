/*
 * tensor_store.h - named allocations on one device (tensors/deviceN/NAME).
 *
 * Each tensor is one block from the allocator on the store's stream. Bytes move to and from device memory with
 * aclrtMemcpy. While the store's stream captures a graph, bytes written
 * (and a resize's copy) are instead copies enqueued with aclrtMemcpyAsync
 * on that stream, so the capture records them and every replay makes them
 * again; the host bytes they read are kept until the store is freed, as a
 * replay reads them anew. A copy the runtime refuses during a capture
 * (error 107030) is -EBUSY with the reason in err. Changing
 * a tensor's size does what a framework resize does: allocate anew, copy
 * min(old, new) bytes, free the old block. Bytes beyond the copied ones are
 * whatever the device memory held (like torch.empty). When the allocator
 * refuses (-ENOMEM), the tensor keeps its old block and bytes.
 *
 * Thread-safe: one lock per store, held while bytes are copied.
 */
#ifndef NPUMEMFS_TENSOR_STORE_H
#define NPUMEMFS_TENSOR_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <acl/acl_rt.h>

#include "alloc/allocator.h"

#define TS_NAME_MAX 255

struct tensor_store;

/* A store on `stream`; NULL is the device's default stream, whose own
 * handle the store then holds (torch_npu's default stream is a real one). */
int ts_new(struct allocator a, int device, aclrtStream stream, struct tensor_store **out);
/* The stream the store's tensors are allocated on. */
aclrtStream ts_stream(const struct tensor_store *ts);
/* Free every tensor, then the store. */
void ts_free(struct tensor_store *ts);
/* Free the host bytes kept for captured copies of models the runtime has
 * destroyed (a graph reset or destroyed; later captured writes do it too).
 * Returns the bytes still kept for live models. */
size_t ts_release_staging(struct tensor_store *ts);

/* An empty tensor (size 0, no allocation). -EEXIST, -ENAMETOOLONG. */
int ts_create(struct tensor_store *ts, const char *name);
/* Free a tensor's block and forget it. -ENOENT. */
int ts_unlink(struct tensor_store *ts, const char *name);
/* The tensor's size in bytes and, unless `changed` is NULL, when its bytes
 * or size last changed through this store. -ENOENT. */
int ts_size(struct tensor_store *ts, const char *name, uint64_t *size,
	    struct timespec *changed);
/* Reallocate to `size` bytes keeping min(old, new). -ENOENT, -ENOMEM (err). */
int ts_resize(struct tensor_store *ts, const char *name, uint64_t size,
	      char *err, size_t errlen);
/* Copy out up to `len` bytes at `off`; bytes read, 0 at or past the end. */
ssize_t ts_read(struct tensor_store *ts, const char *name, void *buf,
		size_t len, uint64_t off, char *err, size_t errlen);
/* Copy in `len` bytes at `off`, growing the tensor first if needed. */
ssize_t ts_write(struct tensor_store *ts, const char *name, const void *buf,
		 size_t len, uint64_t off, char *err, size_t errlen);

/*
 * A non-blocking copy between the tensor and `size` bytes of pinned host
 * memory at `host` (tensor.copy_(pinned, non_blocking=True) and back):
 * aclrtMemcpyAsync on *stream, the current stream (NULL: the store's own,
 * then set to it), so a capture on it records the copy and every replay
 * reads (or writes) the pinned bytes anew; nothing is staged. The sizes
 * must be equal (-EINVAL, reason in err); size 0 copies nothing.
 */
int ts_copy_async(struct tensor_store *ts, const char *name, void *host, uint64_t size,
		  aclrtMemcpyKind kind, aclrtStream *stream, char *err, size_t errlen);

/*
 * fn with the tensor's block (record_stream, erase_stream), under the
 * store's lock so an rm cannot free the block meanwhile: what fn returns,
 * -ENOENT or -EINVAL for an empty tensor (reason in err).
 */
typedef int (*ts_block_fn)(void *arg, void *ptr);
int ts_with_block(struct tensor_store *ts, const char *name, ts_block_fn fn, void *arg,
		  char *err, size_t errlen);

/* Call fn for each tensor (under the store's lock: fn must not call back). */
/* Every tensor's bytes may have changed behind the store (a graph replay
 * writes again what its capture recorded): each one's time is now. */
void ts_touch_all(struct tensor_store *ts);

typedef int (*ts_visit_fn)(void *arg, const char *name, uint64_t size);
int ts_foreach(struct tensor_store *ts, ts_visit_fn fn, void *arg);

/* Free every tensor; the number freed, their bytes in *bytes (may be NULL). */
size_t ts_release_all(struct tensor_store *ts, uint64_t *bytes);

#endif /* NPUMEMFS_TENSOR_STORE_H */
