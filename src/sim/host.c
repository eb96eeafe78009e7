/*
 * host.c - pinned host memory: aclrtMallocHost, aclrtFreeHost and the
 * host pages behind physical handles with a host location.
 *
 * The machine has a host capacity, as a real one has RAM the driver can
 * lock. A block is a private anonymous mapping with MAP_NORESERVE, so it
 * costs RAM only where it is touched, like device memory; host physical
 * pages live in a sparse memfd of their own, so that their bytes survive
 * being unmapped and mapped elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"

#define HOST_ALIGN 4096u

struct sim_host_block {
	char *ptr;
	uint64_t size;   /* as mapped: a multiple of HOST_ALIGN */
	UT_hash_handle hh;
};

int sim_host_open(const struct npusim_host_config *c)
{
	struct sim_host *h = &sim.host;
	uint64_t capacity = c->capacity ? c->capacity : NPUSIM_HOST_DEFAULT_CAPACITY;

	h->capacity = capacity;
	h->page_size = NPUSIM_HOST_PAGE;
	atomic_store(&h->malloc_latency_us, c->malloc_latency_us);
	atomic_store(&h->free_latency_us, c->free_latency_us);
	h->blocks = NULL;
	h->phys_fd = -1;
	h->malloc_fault = (struct sim_fault){ 0 };
	h->ctr = (struct npusim_host_counters){ .capacity = capacity };
	/* Host pages behind handles are placed as a device's are. */
	if (extent_map_init(&h->phys, extent_span_pages(capacity / h->page_size, h->page_size)) < 0)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	return 0;
}

void sim_host_close(void)
{
	struct sim_host *h = &sim.host;
	struct sim_host_block *b, *tmp;

	HASH_ITER(hh, h->blocks, b, tmp) {
		HASH_DEL(h->blocks, b);
		munmap(b->ptr, b->size);
		free(b);
	}
	extent_map_destroy(&h->phys);
	if (h->phys_fd >= 0)
		close(h->phys_fd);
	h->phys_fd = -1;
	pthread_mutex_destroy(&h->lock);
}

bool sim_host_take(uint64_t bytes)
{
	struct npusim_host_counters *c = &sim.host.ctr;

	if (bytes > c->capacity - c->used)
		return false;
	c->used += bytes;
	if (c->used > c->peak_used)
		c->peak_used = c->used;
	return true;
}

void sim_host_give(uint64_t bytes)
{
	sim.host.ctr.used -= bytes;
}

/* ACL_SUCCESS or the error; the caller holds the host lock. */
static aclError take_block(uint64_t size, struct sim_host_block *b)
{
	struct sim_host *h = &sim.host;

	if (sim_fault_fires(&h->malloc_fault) || !sim_host_take(size))
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	b->ptr = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->ptr == MAP_FAILED) {
		sim_host_give(size);
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	}
	b->size = size;
	HASH_ADD_PTR(h->blocks, ptr, b);
	h->ctr.malloc_calls++;
	h->ctr.live_allocations++;
	return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	struct sim_host *h = &sim.host;
	struct sim_host_block *b;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!hostPtr || size == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (size > UINT64_MAX - HOST_ALIGN)
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	b = calloc(1, sizeof(*b));
	if (!b)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	sim_spend_us(atomic_load(&h->malloc_latency_us));
	pthread_mutex_lock(&h->lock);
	rc = take_block(((uint64_t)size + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN, b);
	if (rc != ACL_SUCCESS)
		h->ctr.malloc_failures++;
	pthread_mutex_unlock(&h->lock);
	if (rc != ACL_SUCCESS) {
		free(b);
		return sim_status(rc);
	}
	*hostPtr = b->ptr;
	return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
	struct sim_host *h = &sim.host;
	struct sim_host_block *b = NULL;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!hostPtr)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	sim_spend_us(atomic_load(&h->free_latency_us));
	pthread_mutex_lock(&h->lock);
	HASH_FIND_PTR(h->blocks, &hostPtr, b);
	if (b) {
		HASH_DEL(h->blocks, b);
		sim_host_give(b->size);
		h->ctr.free_calls++;
		h->ctr.live_allocations--;
	}
	pthread_mutex_unlock(&h->lock);
	if (!b)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	munmap(b->ptr, b->size);
	free(b);
	return ACL_SUCCESS;
}

/* Under vm_lock, like a device's physical pages. */
aclError sim_host_take_physical(struct vm_phys *ph, uint64_t size)
{
	struct sim_host *h = &sim.host;
	uint64_t npages = size / h->page_size + (size % h->page_size != 0);
	uint64_t bytes = npages * h->page_size;
	aclError rc = ACL_SUCCESS;

	pthread_mutex_lock(&h->lock);
	if (bytes > h->capacity || !sim_host_take(bytes))
		rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
	else if (sim_phys_open(&h->phys_fd, h->phys.npages * h->page_size) < 0 ||
		 extent_map_alloc(&h->phys, npages, &ph->pages) < 0) {
		sim_host_give(bytes);
		rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	if (rc == ACL_SUCCESS) {
		ph->size = bytes;
		h->ctr.physical_used += bytes;
		h->ctr.physical_calls++;
	} else {
		h->ctr.malloc_failures++;
	}
	pthread_mutex_unlock(&h->lock);
	return sim_status(rc);
}

void sim_host_free_physical(struct vm_phys *ph)
{
	struct sim_host *h = &sim.host;
	uint64_t off;
	int fd;

	pthread_mutex_lock(&h->lock);
	fd = vm_phys_fd(ph, &off);
	fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)ph->size);
	extent_map_free(&h->phys, ph->pages);
	sim_host_give(ph->size);
	h->ctr.physical_used -= ph->size;
	h->ctr.physical_frees++;
	pthread_mutex_unlock(&h->lock);
}

int npusim_host_counters(struct npusim_host_counters *out)
{
	if (!atomic_load(&sim.up) || !out)
		return -EINVAL;
	pthread_mutex_lock(&sim.host.lock);
	*out = sim.host.ctr;
	pthread_mutex_unlock(&sim.host.lock);
	return 0;
}

/* Pinned blocks are few (the caching allocators hold them): a walk will do. */
/* The aclrtMallocHost block holding p: its start and size as mapped. */
bool sim_host_block_at(const void *p, char **base, uint64_t *size)
{
	struct sim_host_block *b, *tmp;
	bool in = false;

	pthread_mutex_lock(&sim.host.lock);
	HASH_ITER(hh, sim.host.blocks, b, tmp) {
		if ((const char *)p >= b->ptr && (const char *)p < b->ptr + b->size) {
			*base = b->ptr;
			*size = b->size;
			in = true;
			break;
		}
	}
	pthread_mutex_unlock(&sim.host.lock);
	return in;
}

bool npusim_host_range_pinned(const void *ptr, size_t size)
{
	struct sim_host_block *b, *tmp;
	const char *p = ptr;
	bool in = false;

	if (!atomic_load(&sim.up) || !ptr)
		return false;
	pthread_mutex_lock(&sim.host.lock);
	HASH_ITER(hh, sim.host.blocks, b, tmp) {
		if (p >= b->ptr && p < b->ptr + b->size) {
			in = size <= (uint64_t)(b->ptr + b->size - p);
			break;
		}
	}
	pthread_mutex_unlock(&sim.host.lock);
	return in;
}

int npusim_fail_nth_host_malloc(uint64_t nth)
{
	if (!atomic_load(&sim.up))
		return -EINVAL;
	pthread_mutex_lock(&sim.host.lock);
	sim_fault_nth(&sim.host.malloc_fault, nth);
	pthread_mutex_unlock(&sim.host.lock);
	return 0;
}
