/*
 * pinned_copy.h - non-blocking copies between a pinned tensor and a device
 * tensor on a stream: device.copy_(pinned, non_blocking=True) and back.
 *
 * As torch_npu's copy path does (process_non_blocking_copy), the copy is
 * aclrtMemcpyAsync on the current stream and then the host allocator
 * records that stream on the pinned block (CachingHostAllocator_recordEvent),
 * so a free of the pinned tensor waits for that stream's work. The copy is
 * work on the stream until the stream is synchronized, as an operator
 * without a length is: a freed block stays pending until then. While the
 * stream captures, the capture records the copy and every replay copies
 * the pinned bytes again.
 */
#ifndef NPUMEMFS_PINNED_COPY_H
#define NPUMEMFS_PINNED_COPY_H

#include <stddef.h>

#include "pinned_store.h"
#include "tensor_store.h"

enum pinned_copy_dir {
	PINNED_H2D, /* pinned -> tensor */
	PINNED_D2H, /* tensor -> pinned */
};

/*
 * Copy between pinned tensor `pinned` of `ps` and tensor `tensor` of `ts`,
 * on stream `current` (NULL: the tensor's store's stream), as copy_ runs
 * on getCurrentNPUStream() whatever stream the tensor was allocated on.
 * Their sizes must be equal (-EINVAL). -ENOENT for a name that is not
 * there, -EBUSY when the runtime refuses during a capture, -EIO for other
 * runtime errors; the reason in err. A refused copy changes nothing.
 */
int pinned_copy(struct pinned_store *ps, const char *pinned, struct tensor_store *ts,
		const char *tensor, enum pinned_copy_dir dir, aclrtStream current,
		char *err, size_t errlen);

#endif /* NPUMEMFS_PINNED_COPY_H */
