/*
 * pointer.c - what an address is: aclrtPointerGetAttributes and
 * aclrtMemGetAddressRange.
 *
 * Only memory the simulator holds now answers as a block: a live aclrtMalloc
 * block, a mapped range of a reservation, an aclrtMallocHost block. A
 * device address that no live block holds (one given back with aclrtFree,
 * an unmapped page of a reservation) is an error, as a driver refuses a
 * freed device pointer, so an allocator can tell a pointer it may hand out
 * from one it gave back.
 */
#include "sim.h"

enum holder { HELD_NONE, HELD_DEVICE, HELD_HOST, DEVICE_ADDRESS_FREE };

/* The live aclrtMalloc block holding p, in a device's range `d`. */
static bool device_block_at(struct sim_device *d, const void *p, char **base,
			    uint64_t *size)
{
	uint64_t off = (uint64_t)((const char *)p - d->base);
	struct extent *e;

	pthread_mutex_lock(&d->lock);
	e = extent_map_containing(&d->mem, off / d->page_size);
	if (e && off - e->start * d->page_size < e->bytes) {
		*base = d->base + e->start * d->page_size;
		*size = e->bytes;
	} else {
		e = NULL;
	}
	pthread_mutex_unlock(&d->lock);
	return e != NULL;
}

static enum holder holder_of(const void *p, char **base, uint64_t *size, int *device)
{
	struct sim_device *d = sim_device_holding(p);
	bool reserved;

	if (d) {
		*device = (int)(d - sim.device);
		return device_block_at(d, p, base, size) ? HELD_DEVICE : DEVICE_ADDRESS_FREE;
	}
	if (sim_vm_mapping_at(p, base, size, device, &reserved))
		return *device >= 0 ? HELD_DEVICE : HELD_HOST;
	if (reserved)
		return DEVICE_ADDRESS_FREE;
	*device = -1;
	return sim_host_block_at(p, base, size) ? HELD_HOST : HELD_NONE;
}

/* CANN: an address on no device reads as host memory (torch_npu's
 * getDeviceFromPtr refuses it as "resides on host memory"). */
aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
	char *base;
	uint64_t size;
	int device;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!ptr || !attributes)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	*attributes = (aclrtPtrAttributes){
		.location = { .id = 0, .type = ACL_MEM_LOCATION_TYPE_HOST },
		.pageSize = 4096,
	};
	switch (holder_of(ptr, &base, &size, &device)) {
	case DEVICE_ADDRESS_FREE:
		return sim_status(ACL_ERROR_INVALID_PARAM);
	case HELD_DEVICE:
		attributes->location.id = (uint32_t)device;
		attributes->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
		attributes->pageSize = (uint32_t)sim.device[device].page_size;
		break;
	case HELD_HOST:
	case HELD_NONE:
		break;
	}
	return ACL_SUCCESS;
}

aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize)
{
	char *base;
	uint64_t size;
	int device;
	enum holder h;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	h = ptr ? holder_of(ptr, &base, &size, &device) : HELD_NONE;
	if (h != HELD_DEVICE && h != HELD_HOST)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (pbase)
		*pbase = base;
	if (psize)
		*psize = size;
	return ACL_SUCCESS;
}
