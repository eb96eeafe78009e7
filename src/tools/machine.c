/*
 * machine.c - from the [device] section to a running simulated NPU.
 */
#include <stdio.h>
#include <string.h>

#include <npumemfs/npusim.h>

#include "alloc/caching/caching_allocator.h"
#include "machine.h"

_Static_assert(NPA_MAX_DEVICES == NPUSIM_MAX_DEVICES,
	       "the allocator serves every device the machine can have");

int machine_start(const struct nmfs_config *cfg, char *err, size_t errlen)
{
	struct npusim_config sim;

	npusim_config_default(&sim, cfg->device_count, cfg->capacity);
	for (int i = 0; i < cfg->device_count; i++) {
		sim.device[i].page_size = cfg->page_size;
		sim.device[i].malloc_latency_us = cfg->malloc_latency_us;
		sim.device[i].free_latency_us = cfg->free_latency_us;
	}
	sim.host.capacity = cfg->host_capacity;
	sim.host.malloc_latency_us = cfg->host_malloc_latency_us;
	sim.host.free_latency_us = cfg->host_free_latency_us;
	int rc = npusim_init(&sim);
	if (rc)
		snprintf(err, errlen, "cannot start the simulated NPU: %s",
			 strerror(-rc));
	return rc;
}

void machine_stop(void)
{
	npusim_shutdown();
}
