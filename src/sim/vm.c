/*
 * vm.c - virtual memory for expandable segments.
 */
#include "sim.h"

bool sim_vm_range_mapped(const void *p, size_t n)
{
	(void)p;
	(void)n;
	return false;
}

int sim_vm_device_of(const void *p)
{
	(void)p;
	return -1;
}

void sim_vm_reset(void)
{
}
