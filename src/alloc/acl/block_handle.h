/*
 * block_handle.h - blocks of any allocator of a switch as handles (what
 * <npumemfs/block_handle.h> gives for the caching allocator, and what an
 * ACL allocator descriptor hands the runtime).
 */
#ifndef NPUMEMFS_ALLOC_BLOCK_HANDLE_H
#define NPUMEMFS_ALLOC_BLOCK_HANDLE_H

#include <stddef.h>

#include <acl/acl_rt.h>

#include "alloc/switch/allocator_switch.h"

struct npa_block_handle {
	struct sw *sw;
	void *ptr;
	size_t size;   /* as the allocator keeps it */
	size_t requested;
};

/* A block of `size` bytes from the held allocator `e`; NULL with the
 * reason in err (size 0 is refused: a handle always has memory). */
struct npa_block_handle *npa_block_malloc(struct sw *sw, struct sw_entry *e, int device,
					  size_t size, aclrtStream stream, char *err,
					  size_t errlen);
/* Free the block through its allocator and the handle; 0 or what sw_free says. */
int npa_block_free(struct npa_block_handle *h, char *err, size_t errlen);

/*
 * The switch whose caching allocator MallocBlock uses (NULL: none; then
 * MallocBlock gives NULL). The one process-wide binding there is, because
 * torch_npu's functions take no allocator argument.
 */
void npa_block_handles_bind(struct sw *sw);

/* What a plug-in host's block-handle calls reach (sw_options'
 * plugin_blocks): this process's own MallocBlock and the rest. */
extern const struct plugin_block_api npa_block_handle_api;

#endif /* NPUMEMFS_ALLOC_BLOCK_HANDLE_H */
