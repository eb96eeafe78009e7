/*
 * block_handle.c - torch_npu's MallocBlock, FreeBlock, GetBlockPtr and
 * GetBlockSize, over the allocator switch.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <npumemfs/block_handle.h>

#include "block_handle.h"

static _Atomic(struct sw *) bound;

void npa_block_handles_bind(struct sw *sw)
{
	atomic_store(&bound, sw);
}

struct npa_block_handle *npa_block_malloc(struct sw *sw, struct sw_entry *e, int device,
					  size_t size, aclrtStream stream, char *err,
					  size_t errlen)
{
	struct npa_block_handle *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(err, errlen, "out of host memory");
		return NULL;
	}
	if (size == 0) {
		snprintf(err, errlen, "a block of 0 bytes");
		free(h);
		return NULL;
	}
	if (sw_malloc_from(sw, e, device, size, stream, &h->ptr, err, errlen) != 0) {
		free(h);
		return NULL;
	}
	h->sw = sw;
	h->requested = size;
	h->size = sw_block_size(sw, h->ptr);
	return h;
}

int npa_block_free(struct npa_block_handle *h, char *err, size_t errlen)
{
	int rc = sw_free(h->sw, h->ptr, err, errlen);

	free(h);
	return rc;
}

/* upstream: device -1 is the current one, one out of range gives NULL. */
void *MallocBlock(size_t size, void *stream, int device)
{
	struct sw *sw = atomic_load(&bound);
	char err[256];
	int32_t current;

	if (!sw || !stream)
		return NULL;
	if (device == -1 && aclrtGetDevice(&current) == ACL_SUCCESS)
		device = current;
	if (device < 0 || device >= sw_device_count(sw))
		return NULL;
	struct sw_entry *caching = sw_hold(sw, "caching");
	struct npa_block_handle *h = npa_block_malloc(sw, caching, device, size, stream,
						      err, sizeof(err));
	sw_drop(sw, caching);
	return h;
}

void FreeBlock(void *handle)
{
	char err[256];

	if (handle)
		npa_block_free(handle, err, sizeof(err));
}

void *GetBlockPtr(const void *handle)
{
	return handle ? ((const struct npa_block_handle *)handle)->ptr : NULL;
}

size_t GetBlockSize(const void *handle)
{
	return handle ? ((const struct npa_block_handle *)handle)->size : 0;
}

const struct plugin_block_api npa_block_handle_api = { MallocBlock, FreeBlock, GetBlockPtr,
						       GetBlockSize };
