/*
 * vm.c - address reservations and the mappings placed in them.
 *
 * A reservation is a PROT_NONE mapping, so stray accesses fault as they
 * would on unmapped device addresses. aclrtMapMem replaces part of it with
 * a MAP_SHARED view of the device's physical memfd; aclrtUnmapMem puts
 * PROT_NONE back. Reservations and the mappings in each are ordered trees
 * so a device pointer is resolved in O(log n).
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "sim.h"

static int res_cmp(const struct vm_reservation *a, const struct vm_reservation *b)
{
	return a->base < b->base ? -1 : a->base > b->base;
}

static int map_cmp(const struct vm_mapping *a, const struct vm_mapping *b)
{
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* See extent_map.c: libbsd leaves __unused undefined on Linux. */
#define VM_TREE_ATTR __attribute__((unused)) static
RB_GENERATE_INTERNAL(vm_reservation_tree, vm_reservation, link, res_cmp, VM_TREE_ATTR)
RB_GENERATE_INTERNAL(vm_mapping_tree, vm_mapping, link, map_cmp, VM_TREE_ATTR)

/* The reservation holding p, or NULL; the caller holds sim.vm_lock. The
 * last one starting at p or below: p + 1 would overflow for the last
 * address, which a caller may well pass. */
static struct vm_reservation *reservation_holding(const void *p)
{
	struct vm_reservation key = { .base = (char *)p };
	struct vm_reservation *at, *r;

	at = RB_NFIND(vm_reservation_tree, &sim.vm.reservations, &key);
	if (at && at->base == (const char *)p)
		r = at;
	else
		r = at ? RB_PREV(vm_reservation_tree, &sim.vm.reservations, at)
		       : RB_MAX(vm_reservation_tree, &sim.vm.reservations);
	if (r && (const char *)p < r->base + r->size)
		return r;
	return NULL;
}

/* The mapping in r holding p, or NULL: the last one starting at p or
 * below, found as reservation_holding finds its reservation. */
static struct vm_mapping *mapping_holding(struct vm_reservation *r, const void *p)
{
	struct vm_mapping key = { .addr = (char *)p };
	struct vm_mapping *at, *m;

	at = RB_NFIND(vm_mapping_tree, &r->maps, &key);
	if (at && at->addr == (const char *)p)
		m = at;
	else
		m = at ? RB_PREV(vm_mapping_tree, &r->maps, at) : RB_MAX(vm_mapping_tree, &r->maps);
	if (m && (const char *)p < m->addr + m->size)
		return m;
	return NULL;
}

static uint64_t current_page_size(void)
{
	return sim.device[sim_current_device()].page_size;
}

/* A PROT_NONE range of `size` bytes aligned to `align`, at `want` if
 * that is free; NULL if the address space is exhausted. */
static char *reserve_range(uint64_t size, uint64_t align, void *want)
{
	const int prot = PROT_NONE;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	char *raw, *base;
	uint64_t head;

	if (want && (uintptr_t)want % align == 0) {
		raw = mmap(want, size, prot, flags | MAP_FIXED_NOREPLACE, -1, 0);
		if (raw == want)
			return raw;
		if (raw != MAP_FAILED)
			munmap(raw, size);
	}
	raw = mmap(NULL, size + align, prot, flags, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	head = (align - (uintptr_t)raw % align) % align;
	base = raw + head;
	if (head)
		munmap(raw, head);
	munmap(base + size, align - head);
	return base;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
				void *expectPtr, uint64_t flags)
{
	struct vm_reservation *r;
	uint64_t page, align;

	(void)flags;
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!virPtr || size == 0 || (alignment & (alignment - 1)))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	page = current_page_size();
	align = alignment > page ? alignment : page;
	if (size > UINT64_MAX - 2 * align)
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	r = calloc(1, sizeof(*r));
	if (!r)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	r->size = ((uint64_t)size + page - 1) / page * page;
	r->base = reserve_range(r->size, align, expectPtr);
	if (!r->base) {
		free(r);
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	}
	RB_INIT(&r->maps);
	pthread_mutex_lock(&sim.vm_lock);
	RB_INSERT(vm_reservation_tree, &sim.vm.reservations, r);
	pthread_mutex_unlock(&sim.vm_lock);
	*virPtr = r->base;
	return ACL_SUCCESS;
}

aclError aclrtReleaseMemAddress(void *virPtr)
{
	struct vm_reservation *r;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	pthread_mutex_lock(&sim.vm_lock);
	r = virPtr ? reservation_holding(virPtr) : NULL;
	if (!r || r->base != virPtr || !RB_EMPTY(&r->maps)) {
		pthread_mutex_unlock(&sim.vm_lock);
		return sim_status(ACL_ERROR_INVALID_PARAM);
	}
	RB_REMOVE(vm_reservation_tree, &sim.vm.reservations, r);
	pthread_mutex_unlock(&sim.vm_lock);
	munmap(r->base, r->size);
	free(r);
	return ACL_SUCCESS;
}

/* Whether [addr, addr + size) is free inside r. */
static bool range_unmapped(struct vm_reservation *r, char *addr, uint64_t size)
{
	struct vm_mapping key = { .addr = addr };
	struct vm_mapping *next, *prev;

	next = RB_NFIND(vm_mapping_tree, &r->maps, &key);
	prev = next ? RB_PREV(vm_mapping_tree, &r->maps, next)
		    : RB_MAX(vm_mapping_tree, &r->maps);
	if (next && next->addr < addr + size)
		return false;
	return !prev || prev->addr + prev->size <= addr;
}

static bool map_args_ok(struct vm_reservation *r, char *addr, uint64_t size,
			uint64_t offset, const struct vm_phys *ph)
{
	uint64_t page = vm_phys_page(ph);

	if (!r || size == 0 || size % page || offset % page || (uintptr_t)addr % page)
		return false;
	if (size > (uint64_t)(r->base + r->size - addr))
		return false;
	if (offset > ph->size || size > ph->size - offset)
		return false;
	return range_unmapped(r, addr, size);
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
		     aclrtDrvMemHandle handle, uint64_t flags)
{
	struct vm_reservation *r;
	struct vm_phys *ph;
	struct vm_mapping *m;
	uint64_t base_off;
	int fd;
	void *got;

	(void)flags;
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!virPtr)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	m = calloc(1, sizeof(*m));
	if (!m)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	pthread_mutex_lock(&sim.vm_lock);
	r = reservation_holding(virPtr);
	ph = vm_phys_find(handle);
	if (!ph || !map_args_ok(r, virPtr, size, offset, ph))
		goto invalid;
	fd = vm_phys_fd(ph, &base_off);
	got = mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		   fd, (off_t)(base_off + offset));
	if (got == MAP_FAILED) {
		pthread_mutex_unlock(&sim.vm_lock);
		free(m);
		return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
	}
	m->addr = virPtr;
	m->size = size;
	m->phys = ph;
	ph->maps++;
	RB_INSERT(vm_mapping_tree, &r->maps, m);
	pthread_mutex_unlock(&sim.vm_lock);
	return ACL_SUCCESS;
invalid:
	pthread_mutex_unlock(&sim.vm_lock);
	free(m);
	return sim_status(ACL_ERROR_INVALID_PARAM);
}

static void protect_none(char *addr, uint64_t size)
{
	mmap(addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

aclError aclrtUnmapMem(void *virPtr)
{
	struct vm_reservation *r;
	struct vm_mapping *m = NULL;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	pthread_mutex_lock(&sim.vm_lock);
	r = virPtr ? reservation_holding(virPtr) : NULL;
	if (r)
		m = mapping_holding(r, virPtr);
	if (!m || m->addr != virPtr) {
		pthread_mutex_unlock(&sim.vm_lock);
		return sim_status(ACL_ERROR_INVALID_PARAM);
	}
	RB_REMOVE(vm_mapping_tree, &r->maps, m);
	m->phys->maps--;
	protect_none(m->addr, m->size);
	pthread_mutex_unlock(&sim.vm_lock);
	free(m);
	return ACL_SUCCESS;
}

bool sim_vm_range_mapped(const void *p, size_t n)
{
	struct vm_reservation *r;
	struct vm_mapping *m = NULL;
	const char *end = (const char *)p + n;

	pthread_mutex_lock(&sim.vm_lock);
	r = reservation_holding(p);
	if (r && n <= (uint64_t)(r->base + r->size - (const char *)p))
		m = mapping_holding(r, p);
	/* Host pages mapped into a reservation are host memory, not device. */
	while (m && m->phys->device >= 0 && m->addr + m->size < end) {
		struct vm_mapping *next = RB_NEXT(vm_mapping_tree, &r->maps, m);

		m = next && next->addr == m->addr + m->size ? next : NULL;
	}
	pthread_mutex_unlock(&sim.vm_lock);
	return m != NULL && m->phys->device >= 0;
}

/* The mapping holding p: its start, size and device (-1: host pages);
 * *reserved tells whether a reservation holds p, mapped or not. */
bool sim_vm_mapping_at(const void *p, char **base, uint64_t *size, int *device,
		       bool *reserved)
{
	struct vm_reservation *r;
	struct vm_mapping *m = NULL;

	pthread_mutex_lock(&sim.vm_lock);
	r = reservation_holding(p);
	*reserved = r != NULL;
	if (r)
		m = mapping_holding(r, p);
	if (m) {
		*base = m->addr;
		*size = m->size;
		*device = m->phys->device;
	}
	pthread_mutex_unlock(&sim.vm_lock);
	return m != NULL;
}

int sim_vm_device_of(const void *p)
{
	struct vm_reservation *r;
	struct vm_mapping *m = NULL;
	int dev;

	pthread_mutex_lock(&sim.vm_lock);
	r = reservation_holding(p);
	if (r)
		m = mapping_holding(r, p);
	dev = m ? m->phys->device : -1;
	pthread_mutex_unlock(&sim.vm_lock);
	return dev;
}

void sim_vm_reset(void)
{
	struct vm_reservation *r, *rn;
	struct vm_mapping *m, *mn;
	struct vm_phys *ph, *tmp;

	pthread_mutex_lock(&sim.vm_lock);
	RB_FOREACH_SAFE(r, vm_reservation_tree, &sim.vm.reservations, rn) {
		RB_FOREACH_SAFE(m, vm_mapping_tree, &r->maps, mn) {
			RB_REMOVE(vm_mapping_tree, &r->maps, m);
			free(m);
		}
		RB_REMOVE(vm_reservation_tree, &sim.vm.reservations, r);
		munmap(r->base, r->size);
		free(r);
	}
	/* The pages themselves go with each device's memfd. */
	HASH_ITER(hh, sim.vm.handles, ph, tmp) {
		HASH_DEL(sim.vm.handles, ph);
		free(ph);
	}
	pthread_mutex_unlock(&sim.vm_lock);
}
