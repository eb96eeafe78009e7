/*
 * memory.c - aclrtMalloc, aclrtMallocAlign32, aclrtFree, aclrtGetMemInfo,
 * aclrtGetMemUsageInfo.
 *
 * Rounding follows CANN's documentation of aclrtMallocAlign32: "the
 * allocation size is the input size rounded up to the nearest multiple of
 * 32 bytes. Compared with aclrtMalloc, this API only rounds ... but does
 * not add an extra 32 bytes." The device then commits whole pages.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "sim.h"

static uint64_t page_bytes(const struct sim_device *d, uint64_t npages)
{
	return npages * d->page_size;
}

/* 0, or an ACL error; the caller holds d->lock. */
static aclError take_pages(struct sim_device *d, const char *call, uint64_t bytes, void **out)
{
	uint64_t npages = bytes / d->page_size + (bytes % d->page_size != 0);
	struct extent *e;

	if (sim_fault_fires(&d->malloc_fault))
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	/* Free pages decide (physical handles share them); the address
	 * space, larger than the memory, has a run for them (extent_map.h). */
	if (npages > d->npages || d->ctr.used + page_bytes(d, npages) > page_bytes(d, d->npages))
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	if (extent_map_alloc(&d->mem, npages, &e) < 0)
		return sim_span_refused(call, d->span_pages, npages);
	e->bytes = bytes;
	sim_account_alloc(d, page_bytes(d, npages));
	d->ctr.malloc_calls++;
	d->ctr.malloc_bytes += page_bytes(d, npages);
	d->ctr.live_allocations++;
	*out = d->base + page_bytes(d, e->start);
	return ACL_SUCCESS;
}

static aclError device_malloc(const char *call, void **devPtr, size_t size, uint64_t pad)
{
	struct sim_device *d;
	uint64_t t0, bytes;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!devPtr || size == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	d = &sim.device[sim_current_device()];
	t0 = sim_monotonic_ns();
	sim_spend_us(atomic_load(&d->malloc_latency_us));
	pthread_mutex_lock(&d->lock);
	if (size > UINT64_MAX - 64) {
		rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
	} else {
		bytes = ((uint64_t)size + 31) / 32 * 32 + pad;
		rc = take_pages(d, call, bytes, devPtr);
	}
	if (rc != ACL_SUCCESS)
		d->ctr.malloc_failures++;
	d->ctr.malloc_ns += sim_monotonic_ns() - t0;
	pthread_mutex_unlock(&d->lock);
	return sim_status(rc);
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	(void)policy;
	return device_malloc("aclrtMalloc", devPtr, size, 32);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	(void)policy;
	return device_malloc("aclrtMallocAlign32", devPtr, size, 0);
}

struct extent *sim_block_at(struct sim_device *d, const void *p)
{
	uint64_t off = (uint64_t)((const char *)p - d->base);

	return off % d->page_size ? NULL : extent_map_find(&d->mem, off / d->page_size);
}

aclError aclrtFree(void *devPtr)
{
	struct sim_device *d;
	struct extent *e;
	uint64_t t0;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	d = devPtr ? sim_device_holding(devPtr) : NULL;
	if (!d)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	t0 = sim_monotonic_ns();
	sim_spend_us(atomic_load(&d->free_latency_us));
	pthread_mutex_lock(&d->lock);
	e = sim_block_at(d, devPtr);
	if (!e) {
		pthread_mutex_unlock(&d->lock);
		return sim_status(ACL_ERROR_INVALID_PARAM);
	}
	sim_ipc_forget(d, devPtr);
	/* Give the RAM back: freed device memory keeps no data, as on a
	 * device whose driver hands the pages to someone else. */
	madvise(devPtr, page_bytes(d, e->npages), MADV_DONTNEED);
	sim_account_free(d, page_bytes(d, e->npages));
	d->ctr.free_calls++;
	d->ctr.free_bytes += page_bytes(d, e->npages);
	d->ctr.live_allocations--;
	extent_map_free(&d->mem, e);
	d->ctr.free_ns += sim_monotonic_ns() - t0;
	pthread_mutex_unlock(&d->lock);
	return ACL_SUCCESS;
}

static bool is_hbm(aclrtMemAttr attr)
{
	return attr == ACL_HBM_MEM || attr == ACL_HBM_MEM_HUGE ||
	       attr == ACL_HBM_MEM_NORMAL || attr == ACL_HBM_MEM_P2P_HUGE ||
	       attr == ACL_HBM_MEM_P2P_NORMAL;
}

static bool is_ddr(aclrtMemAttr attr)
{
	return attr == ACL_DDR_MEM || attr == ACL_DDR_MEM_HUGE ||
	       attr == ACL_DDR_MEM_NORMAL || attr == ACL_DDR_MEM_P2P_HUGE ||
	       attr == ACL_DDR_MEM_P2P_NORMAL;
}

/* The simulated device has HBM only: DDR reads as 0 of 0. */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
	struct sim_device *d;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!free || !total || !(is_hbm(attr) || is_ddr(attr)))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (is_ddr(attr)) {
		*free = 0;
		*total = 0;
		return ACL_SUCCESS;
	}
	d = &sim.device[sim_current_device()];
	pthread_mutex_lock(&d->lock);
	*total = d->capacity;
	*free = d->capacity - d->ctr.used;
	pthread_mutex_unlock(&d->lock);
	return ACL_SUCCESS;
}

aclError aclrtGetMemUsageInfo(uint32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum,
			      size_t *outputNum)
{
	struct sim_device *d;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (deviceId >= (uint32_t)sim.ndev)
		return sim_status(ACL_ERROR_INVALID_DEVICE);
	if (!memUsageInfo || !outputNum || inputNum == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	d = &sim.device[deviceId];
	memset(memUsageInfo, 0, sizeof(*memUsageInfo));
	snprintf(memUsageInfo->name, sizeof(memUsageInfo->name), "npusim");
	pthread_mutex_lock(&d->lock);
	memUsageInfo->curMemSize = d->ctr.used;
	memUsageInfo->memPeakSize = d->ctr.peak_used;
	pthread_mutex_unlock(&d->lock);
	*outputNum = 1;
	return ACL_SUCCESS;
}
