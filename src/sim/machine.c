/*
 * machine.c - bringing the simulated machine up and down.
 *
 * Each device's memory is one private anonymous mapping with MAP_NORESERVE:
 * the kernel commits a page only when it is first touched, so a 64 GiB
 * device costs nothing until written, and device pointers are ordinary
 * host addresses that memcpy can use.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"

struct sim_state sim = {
	.sched_lock = PTHREAD_MUTEX_INITIALIZER,
	.vm_lock = PTHREAD_MUTEX_INITIALIZER,
	.events.lock = PTHREAD_MUTEX_INITIALIZER,
	.ipc.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Serializes init against shutdown; the ACL calls never take it. */
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;

void npusim_config_default(struct npusim_config *cfg, int count, uint64_t capacity)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->device_count = count;
	for (int i = 0; i < count && i < NPUSIM_MAX_DEVICES; i++) {
		cfg->device[i].capacity = capacity;
		cfg->device[i].page_size = 2u << 20;
	}
	cfg->host.capacity = NPUSIM_HOST_DEFAULT_CAPACITY;
}

static bool device_config_ok(const struct npusim_device_config *c)
{
	uint64_t host_page = (uint64_t)sysconf(_SC_PAGESIZE);

	return c->page_size > 0 && c->page_size % host_page == 0 &&
	       c->capacity >= c->page_size;
}

static bool config_ok(const struct npusim_config *cfg)
{
	if (!cfg || cfg->device_count < 1 || cfg->device_count > NPUSIM_MAX_DEVICES)
		return false;
	for (int i = 0; i < cfg->device_count; i++)
		if (!device_config_ok(&cfg->device[i]))
			return false;
	/* 0 is the default; else at least one host page. */
	return cfg->host.capacity == 0 || cfg->host.capacity >= NPUSIM_HOST_PAGE;
}

/* Reserve npages * page_size bytes aligned to page_size: map one page more
 * than needed and trim both ends. */
static char *map_aligned(uint64_t len, uint64_t page)
{
	char *raw = mmap(NULL, len + page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *base;
	uint64_t head, tail;

	if (raw == MAP_FAILED)
		return NULL;
	head = (page - (uintptr_t)raw % page) % page;
	base = raw + head;
	tail = page - head;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(base + len, tail);
	return base;
}

/* aclrtMalloc's address space: EXTENT_SPAN_FACTOR times the memory where
 * the host can map that much (it costs no memory, only addresses), else
 * the memory alone, as under ThreadSanitizer with very large devices. */
static int map_address_space(struct sim_device *d)
{
	d->span_pages = extent_span_pages(d->npages, d->page_size);
	d->base = map_aligned(d->span_pages * d->page_size, d->page_size);
	if (!d->base && d->span_pages != d->npages) {
		d->span_pages = d->npages;
		d->base = map_aligned(d->span_pages * d->page_size, d->page_size);
	}
	return d->base ? 0 : -ENOMEM;
}

static int device_open(struct sim_device *d, int index,
		       const struct npusim_device_config *c)
{
	memset(d, 0, sizeof(*d));
	d->capacity = c->capacity;
	d->page_size = c->page_size;
	d->npages = c->capacity / c->page_size;
	atomic_store(&d->malloc_latency_us, c->malloc_latency_us);
	atomic_store(&d->free_latency_us, c->free_latency_us);
	d->phys_fd = -1;
	d->default_stream.device = index;
	d->default_stream.self = &d->default_stream;
	if (map_address_space(d) < 0)
		return -ENOMEM;
	if (extent_map_init(&d->mem, d->span_pages) < 0) {
		munmap(d->base, d->span_pages * d->page_size);
		return -ENOMEM;
	}
	if (extent_map_init(&d->phys, d->span_pages) < 0) {
		extent_map_destroy(&d->mem);
		munmap(d->base, d->span_pages * d->page_size);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	return 0;
}

static void device_close(struct sim_device *d)
{
	extent_map_destroy(&d->mem);
	extent_map_destroy(&d->phys);
	munmap(d->base, d->span_pages * d->page_size);
	if (d->phys_fd >= 0)
		close(d->phys_fd);
	pthread_mutex_destroy(&d->lock);
	d->base = NULL;
}

int npusim_init(const struct npusim_config *cfg)
{
	int rc = 0, i;

	if (!config_ok(cfg))
		return -EINVAL;
	pthread_mutex_lock(&life_lock);
	if (atomic_load(&sim.up)) {
		rc = -EBUSY;
		goto out;
	}
	for (i = 0; i < cfg->device_count; i++) {
		rc = device_open(&sim.device[i], i, &cfg->device[i]);
		if (rc < 0)
			break;
	}
	if (rc == 0)
		rc = sim_host_open(&cfg->host);
	if (rc < 0) {
		while (i-- > 0)
			device_close(&sim.device[i]);
		goto out;
	}
	sim.ndev = cfg->device_count;
	atomic_store(&sim.now, 0);
	sim.next_stream_id = 1;
	atomic_fetch_add(&sim.generation, 1);
	atomic_store(&sim.up, true);
out:
	pthread_mutex_unlock(&life_lock);
	return rc;
}

void npusim_shutdown(void)
{
	uint64_t leaked = 0;

	pthread_mutex_lock(&life_lock);
	if (!atomic_load(&sim.up))
		goto out;
	atomic_store(&sim.up, false);
	sim_ipc_reset();
	sim_vm_reset();
	sim_allocators_reset();
	sim_sched_reset();
	for (int i = 0; i < sim.ndev; i++) {
		leaked += sim.device[i].ctr.used;
		device_close(&sim.device[i]);
	}
	sim_host_close();
	sim.ndev = 0;
	sim.last_leaked = leaked;
out:
	pthread_mutex_unlock(&life_lock);
}

bool npusim_initialized(void)
{
	return atomic_load(&sim.up);
}

uint64_t npusim_last_leaked_bytes(void)
{
	pthread_mutex_lock(&life_lock);
	uint64_t n = sim.last_leaked;
	pthread_mutex_unlock(&life_lock);
	return n;
}
