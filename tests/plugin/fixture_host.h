/*
 * fixture_host.h - what the host-memory fixture plug-in counts. The tests
 * read it through the plug-in's fx_counts() symbol, so both sides must
 * share this one layout.
 */
#ifndef FIXTURE_HOST_H
#define FIXTURE_HOST_H

#include <sys/types.h>

#include <acl/acl_base.h>

struct fx_counts {
	long alloc, free, init, init_devices, reset, fraction, record_stream;
	double last_fraction;
	int last_fraction_device;
	long begin_pool, end_pool, release_pool, base_alloc;
	ssize_t last_free_size;
	int last_free_device;
	aclrtStream last_free_stream;
	long erase_stream, get_device_stats, reset_peak_status;
	int last_stats_device, last_reset_peak_device;
};

#endif /* FIXTURE_HOST_H */
