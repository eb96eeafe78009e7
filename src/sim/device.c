/*
 * device.c - device selection, counters and per-device controls.
 */
#include <errno.h>

#include "sim.h"

/* The current device is per thread, as in CANN. The generation makes a
 * thread that selected device 3 under a previous init start at 0 again. */
static _Thread_local struct {
	unsigned generation;
	int device;
} current;

int sim_current_device(void)
{
	if (current.generation != atomic_load(&sim.generation))
		return 0;
	return current.device;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (deviceId < 0 || deviceId >= sim.ndev)
		return sim_status(ACL_ERROR_INVALID_DEVICE);
	current.generation = atomic_load(&sim.generation);
	current.device = deviceId;
	return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!deviceId)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	*deviceId = sim_current_device();
	return ACL_SUCCESS;
}

/* A device's default context is its state's address: nothing to make,
 * and a handle from elsewhere is told apart by range. */
aclError aclrtGetCurrentContext(aclrtContext *context)
{
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!context)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	*context = &sim.device[sim_current_device()];
	return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	for (int i = 0; i < sim.ndev; i++)
		if (context == &sim.device[i])
			return aclrtSetDevice(i);
	sim_set_recent_error("aclrtSetCurrentContext: %p is no device's context", context);
	return sim_status(ACL_ERROR_INVALID_PARAM);
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!count)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	*count = (uint32_t)sim.ndev;
	return ACL_SUCCESS;
}

struct sim_device *sim_device_holding(const void *p)
{
	const char *c = p;

	for (int i = 0; i < sim.ndev; i++) {
		struct sim_device *d = &sim.device[i];

		if (c >= d->base && c < d->base + d->span_pages * d->page_size)
			return d;
	}
	return NULL;
}

int npusim_device_of(const void *ptr)
{
	struct sim_device *d;

	if (!atomic_load(&sim.up) || !ptr)
		return -1;
	d = sim_device_holding(ptr);
	if (d)
		return (int)(d - sim.device);
	return sim_vm_device_of(ptr);
}

void sim_account_alloc(struct sim_device *d, uint64_t bytes)
{
	d->ctr.used += bytes;
	if (d->ctr.used > d->ctr.peak_used)
		d->ctr.peak_used = d->ctr.used;
}

void sim_account_free(struct sim_device *d, uint64_t bytes)
{
	d->ctr.used -= bytes;
}

static struct sim_device *device_at(int device)
{
	if (!atomic_load(&sim.up) || device < 0 || device >= sim.ndev)
		return NULL;
	return &sim.device[device];
}

int npusim_device_counters(int device, struct npusim_counters *out)
{
	struct sim_device *d = device_at(device);

	if (!d || !out)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	*out = d->ctr;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int npusim_set_latency(int device, uint64_t malloc_us, uint64_t free_us)
{
	struct sim_device *d = device_at(device);

	if (!d)
		return -EINVAL;
	atomic_store(&d->malloc_latency_us, malloc_us);
	atomic_store(&d->free_latency_us, free_us);
	return 0;
}

int npusim_fail_nth_malloc(int device, uint64_t nth)
{
	struct sim_device *d = device_at(device);

	if (!d)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	sim_fault_nth(&d->malloc_fault, nth);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int npusim_fail_malloc_rate(int device, double rate, uint64_t seed)
{
	struct sim_device *d = device_at(device);

	if (!d || !(rate >= 0.0 && rate <= 1.0))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	sim_fault_rate(&d->malloc_fault, rate, seed);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int npusim_fail_nth_physical(int device, uint64_t nth)
{
	struct sim_device *d = device_at(device);

	if (!d)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	sim_fault_nth(&d->phys_fault, nth);
	pthread_mutex_unlock(&d->lock);
	return 0;
}
