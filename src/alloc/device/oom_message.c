/*
 * oom_message.c - upstream's out-of-memory text, word for word.
 */
#include <stdio.h>
#include <string.h>

#include "device.h"

struct oom_sizes {
	char alloc[32], total[32], free[32], allocated[32], active[32], reserved[32];
	char cuda_allocated[32]; /* allocated + the private pools' free blocks */
	char unallocated[32], allowed[48];
	char private_msg[96]; /* cuda: "with X allocated in private pools ..., " or "" */
};

static void npu_message(const struct npa_device *dev, const struct oom_sizes *s,
			char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "NPU out of memory. Tried to allocate %s (NPU %d; %s total capacity; "
		 "%s already allocated; %s current active; %s free; %s%s reserved in "
		 "total by PyTorch).If reserved memory is >> allocated memory try setting "
		 "max_split_size_mb to avoid fragmentation.",
		 s->alloc, dev->id, s->total, s->allocated, s->active, s->free, s->allowed,
		 s->reserved);
}

static void cuda_message(const struct npa_device *dev, const struct oom_sizes *s,
			 char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of "
		 "%s of which %s is free. %sOf the allocated memory %s is allocated by "
		 "PyTorch, %sand %s is reserved by PyTorch but unallocated. If reserved but "
		 "unallocated memory is large try setting "
		 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
		 "See documentation for Memory Management  "
		 "(https://docs.pytorch.org/docs/stable/notes/"
		 "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)",
		 s->alloc, dev->id, s->total, s->free, s->allowed, s->cuda_allocated,
		 s->private_msg, s->unallocated);
}

/* The cuda text counts the private pools' free blocks as allocated, as
 * upstream does since its message names them. */
static void private_pools(struct oom_sizes *s, uint64_t bytes)
{
	char fs[32];

	if (bytes == 0)
		return;
	npa_format_size(fs, sizeof(fs), bytes);
	snprintf(s->private_msg, sizeof(s->private_msg),
		 "with %s allocated in private pools (e.g., CUDA Graphs), ", fs);
}

void npa_oom_message(const struct npa_device *dev, size_t alloc_size, size_t dev_free,
		     size_t dev_total, uint64_t in_private_pools, char *err, size_t errlen)
{
	const struct npa_stats *st = &dev->stats;
	int64_t allocated = st->allocated_bytes[NPA_STAT_ALL].current;
	int64_t reserved = st->reserved_bytes[NPA_STAT_ALL].current;
	int64_t in_pools = (int64_t)in_private_pools;
	struct oom_sizes s = { .allowed = "", .private_msg = "" };

	if (err == NULL || errlen == 0)
		return;
	npa_format_size(s.alloc, sizeof(s.alloc), alloc_size);
	npa_format_size(s.total, sizeof(s.total), dev_total);
	npa_format_size(s.free, sizeof(s.free), dev_free);
	npa_format_size(s.allocated, sizeof(s.allocated), (uint64_t)allocated);
	npa_format_size(s.cuda_allocated, sizeof(s.cuda_allocated),
			(uint64_t)(allocated + in_pools));
	npa_format_size(s.active, sizeof(s.active),
			(uint64_t)st->active_bytes[NPA_STAT_ALL].current);
	npa_format_size(s.reserved, sizeof(s.reserved), (uint64_t)reserved);
	npa_format_size(s.unallocated, sizeof(s.unallocated),
			(uint64_t)(reserved - allocated - in_pools));
	private_pools(&s, in_private_pools);
	if (dev->set_fraction) {
		npa_format_size(s.allowed, sizeof(s.allowed), dev->allowed_memory_maximum);
		snprintf(s.allowed + strlen(s.allowed), sizeof(s.allowed) - strlen(s.allowed),
			 " allowed; ");
	}
	if (dev->flavor->oom_style == NPA_OOM_CUDA)
		cuda_message(dev, &s, err, errlen);
	else
		npu_message(dev, &s, err, errlen);
}
