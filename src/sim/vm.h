/*
 * vm.h - address reservations, physical handles and mappings (internal).
 */
#ifndef NPUSIM_VM_H
#define NPUSIM_VM_H

#include <stdint.h>

#include <bsd/sys/tree.h>
#include <uthash.h>

struct extent;

struct vm_phys {
	struct vm_phys *self;  /* hash key: the handle is the address */
	int device;            /* -1: host pages (sim.host.phys) */
	struct extent *pages;  /* in the device's (or host's) physical page space */
	uint64_t size;
	unsigned maps;         /* live mappings of this handle */
	unsigned refs;         /* 1, and one more each import of its shareable number */
	uint64_t shareable;    /* the number it was exported as; 0: never */
	UT_hash_handle hh;
};

struct vm_mapping {
	char *addr;
	uint64_t size;
	struct vm_phys *phys;
	RB_ENTRY(vm_mapping) link;
};

RB_HEAD(vm_mapping_tree, vm_mapping);

struct vm_reservation {
	char *base;
	uint64_t size;
	struct vm_mapping_tree maps;
	RB_ENTRY(vm_reservation) link;
};

RB_HEAD(vm_reservation_tree, vm_reservation);

struct sim_vm {
	struct vm_reservation_tree reservations;
	struct vm_phys *handles;
};

/* The handle's record, or NULL; the caller holds sim.vm_lock. */
struct vm_phys *vm_phys_find(void *handle);
/* The fd and byte offset at which a handle's memory lives. */
int vm_phys_fd(const struct vm_phys *ph, uint64_t *offset);
/* The page size of the memory a handle holds. */
uint64_t vm_phys_page(const struct vm_phys *ph);

#endif /* NPUSIM_VM_H */
