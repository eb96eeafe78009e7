/*
 * devices.h - the allocator object behind struct npa: its devices and
 * what they share, for the calls that find a device (native.h) and for
 * the caching allocator above them (caching/).
 */
#ifndef NPA_DEVICES_H
#define NPA_DEVICES_H

#include <stdio.h>

#include "device.h"

struct npa {
	const struct npa_flavor *flavor;
	struct npa_conf conf;       /* read by devices under their lock */
	/* graph_pool_handle's counters: uid_ for users' pools, uuid_ for
	 * captures without one; both count from 1. */
	uint64_t next_user_pool;
	uint64_t next_graph_pool;
	struct npa_host *host;      /* the pinned host allocator */
	struct npa_frame_names names; /* what the devices' recorded frames point to */
	bool no_caching;            /* PYTORCH_NO_NPU_MEMORY_CACHING (uncached.c) */
	/* A request of `size` takes the caching path when size - 1 is below
	 * this: (1 << 60) - 1, or 0 when uncached. One compare on every
	 * malloc sends size 0, the over-1EB refusal and the uncached mode to
	 * the rare path. */
	size_t cached_below;
	int ndev;
	struct npa_device dev[];
};

/* A refusal's reason, for callers that passed room for one. */
static inline void npa_set_err(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
}

/* Device `device`, or NULL if there is none of that number. */
static inline struct npa_device *npa_device_of(struct npa *a, int device)
{
	return device >= 0 && device < a->ndev ? &a->dev[device] : NULL;
}

/*
 * The device holding `ptr` in its pointer map, returned locked and
 * settled (npa_device_lock): for every operation on an allocated block
 * but its free. With several devices, only those whose segments span
 * `ptr` are locked and searched.
 */
static inline struct npa_device *npa_lock_owner(struct npa *a, const void *ptr,
						 struct npa_ptr_slot **out)
{
	for (int i = 0; i < a->ndev; i++) {
		struct npa_device *dev = &a->dev[i];

		if (a->ndev > 1 && !npa_device_may_own(dev, ptr))
			continue;
		npa_device_lock(dev);
		*out = npa_device_find(dev, ptr);
		if (*out != NULL)
			return dev;
		npa_lock_release(&dev->lock);
	}
	return NULL;
}

#endif /* NPA_DEVICES_H */
