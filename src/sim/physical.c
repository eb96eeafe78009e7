/*
 * physical.c - aclrtMallocPhysical / aclrtFreePhysical.
 *
 * A device's physical memory is one sparse memfd the size of the device,
 * created on first use; a handle is a run of its pages, found with the
 * same page allocator as aclrtMalloc. Mapping the memfd MAP_SHARED is what
 * lets bytes survive an unmap and reappear at another address. One fd per
 * device, not per handle, so thousands of handles need no file limit.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"

struct vm_phys *vm_phys_find(void *handle)
{
	struct vm_phys *ph = NULL;

	if (handle)
		HASH_FIND_PTR(sim.vm.handles, &handle, ph);
	return ph;
}

uint64_t vm_phys_page(const struct vm_phys *ph)
{
	return ph->device < 0 ? sim.host.page_size : sim.device[ph->device].page_size;
}

int vm_phys_fd(const struct vm_phys *ph, uint64_t *offset)
{
	*offset = ph->pages->start * vm_phys_page(ph);
	return ph->device < 0 ? sim.host.phys_fd : sim.device[ph->device].phys_fd;
}

int sim_phys_open(int *fd, uint64_t bytes)
{
	if (*fd >= 0)
		return 0;
	*fd = memfd_create("npusim-physical", MFD_CLOEXEC);
	if (*fd < 0)
		return -1;
	if (ftruncate(*fd, (off_t)bytes) < 0) {
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

/* ACL_SUCCESS or an ACL error; the caller holds d->lock. */
static aclError take_physical(struct sim_device *d, uint64_t size, struct vm_phys *ph)
{
	uint64_t npages = size / d->page_size + (size % d->page_size != 0);
	uint64_t bytes = npages * d->page_size;

	if (sim_fault_fires(&d->phys_fault))
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	if (npages > d->npages || d->ctr.used + bytes > d->npages * d->page_size)
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	/* The file is sparse: its span costs what is written to it. */
	if (sim_phys_open(&d->phys_fd, d->span_pages * d->page_size) < 0)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	if (extent_map_alloc(&d->phys, npages, &ph->pages) < 0)
		return sim_span_refused("aclrtMallocPhysical", d->span_pages, npages);
	ph->size = bytes;
	sim_account_alloc(d, bytes);
	d->ctr.physical_used += bytes;
	d->ctr.physical_calls++;
	return ACL_SUCCESS;
}

static bool on_host(const aclrtPhysicalMemProp *prop)
{
	return prop->location.type == ACL_MEM_LOCATION_TYPE_HOST;
}

/* The host has one location, id 0. */
static aclError check_prop(const aclrtPhysicalMemProp *prop)
{
	if (!prop)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (on_host(prop))
		return sim_status(prop->location.id == 0 ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM);
	if (prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (prop->location.id >= (uint32_t)sim.ndev)
		return sim_status(ACL_ERROR_INVALID_DEVICE);
	return ACL_SUCCESS;
}

static aclError take_device_physical(struct vm_phys *ph, size_t size)
{
	struct sim_device *d = &sim.device[ph->device];
	aclError rc;

	pthread_mutex_lock(&d->lock);
	rc = take_physical(d, size, ph);
	if (rc != ACL_SUCCESS)
		d->ctr.physical_failures++;
	pthread_mutex_unlock(&d->lock);
	return sim_status(rc);
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags)
{
	struct vm_phys *ph;
	aclError rc;

	(void)flags;
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!handle || size == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	rc = check_prop(prop);
	if (rc != ACL_SUCCESS)
		return sim_status(rc);
	ph = calloc(1, sizeof(*ph));
	if (!ph)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	ph->self = ph;
	ph->refs = 1;
	ph->device = on_host(prop) ? -1 : (int)prop->location.id;
	pthread_mutex_lock(&sim.vm_lock);
	rc = ph->device < 0 ? sim_host_take_physical(ph, size) : take_device_physical(ph, size);
	if (rc == ACL_SUCCESS)
		HASH_ADD_PTR(sim.vm.handles, self, ph);
	pthread_mutex_unlock(&sim.vm_lock);
	if (rc != ACL_SUCCESS) {
		free(ph);
		return sim_status(rc);
	}
	*handle = ph;
	return ACL_SUCCESS;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
	struct vm_phys *ph;
	struct sim_device *d;
	uint64_t off;
	int fd;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	pthread_mutex_lock(&sim.vm_lock);
	ph = vm_phys_find(handle);
	if (ph && ph->refs > 1) {
		/* An import's reference: the pages stay for the others. */
		ph->refs--;
		pthread_mutex_unlock(&sim.vm_lock);
		return ACL_SUCCESS;
	}
	if (!ph || ph->maps > 0) {
		pthread_mutex_unlock(&sim.vm_lock);
		return sim_status(ACL_ERROR_INVALID_PARAM);
	}
	HASH_DEL(sim.vm.handles, ph);
	if (ph->device < 0) {
		sim_host_free_physical(ph);
		pthread_mutex_unlock(&sim.vm_lock);
		free(ph);
		return ACL_SUCCESS;
	}
	d = &sim.device[ph->device];
	pthread_mutex_lock(&d->lock);
	/* Give the RAM back; the next handle on these pages starts zeroed. */
	fd = vm_phys_fd(ph, &off);
	fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)ph->size);
	extent_map_free(&d->phys, ph->pages);
	sim_account_free(d, ph->size);
	d->ctr.physical_used -= ph->size;
	d->ctr.physical_frees++;
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&sim.vm_lock);
	free(ph);
	return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
					  aclrtMemGranularityOptions option,
					  size_t *granularity)
{
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!granularity || (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
			     option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	rc = check_prop(prop);
	if (rc == ACL_SUCCESS)
		*granularity = on_host(prop) ? sim.host.page_size
					     : sim.device[prop->location.id].page_size;
	return sim_status(rc);
}
