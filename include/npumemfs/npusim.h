/*
 * npusim.h - control of the simulated NPU behind the ACL-compatible API.
 *
 * The ACL calls (acl/acl_rt.h) are what allocators use. This header is for
 * whoever owns the simulator: the daemon, the replay tool and tests. It sets
 * the machine up, drives the virtual clock, injects faults and reads the
 * counters that show what caching saves.
 *
 * Time is virtual and deterministic. Work launched on a stream ends at a
 * virtual time; an event recorded on a stream completes once the clock has
 * passed the end of the work launched before it. Work can also be
 * open-ended (a kernel whose length the test decides later): it ends only
 * when its stream, or the device, is synchronized. Synchronizing advances
 * the clock to the end of the timed work it waited for. Nothing sleeps,
 * except the optional simulated malloc/free latency.
 */
#ifndef NPUMEMFS_NPUSIM_H
#define NPUMEMFS_NPUSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPUSIM_MAX_DEVICES 16

#ifndef NPUSIM_API
#define NPUSIM_API __attribute__((visibility("default")))
#endif

struct npusim_device_config {
	uint64_t capacity;         /* bytes of device memory */
	uint64_t page_size;        /* device allocation granularity, e.g. 2 MiB */
	uint64_t malloc_latency_us; /* real time spent per aclrtMalloc (0: none) */
	uint64_t free_latency_us;  /* real time spent per aclrtFree (0: none) */
};

/*
 * The machine's pinned host memory (aclrtMallocHost, and physical handles
 * with a host location): committed lazily like device memory, refused
 * beyond `capacity`. Host physical handles come in whole pages of
 * NPUSIM_HOST_PAGE bytes.
 */
struct npusim_host_config {
	uint64_t capacity;          /* bytes; 0: NPUSIM_HOST_DEFAULT_CAPACITY */
	uint64_t malloc_latency_us; /* real time spent per aclrtMallocHost (0: none) */
	uint64_t free_latency_us;   /* real time spent per aclrtFreeHost (0: none) */
};

#define NPUSIM_HOST_DEFAULT_CAPACITY (64ull << 30)
#define NPUSIM_HOST_PAGE (2ull << 20)

struct npusim_config {
	int device_count;
	struct npusim_device_config device[NPUSIM_MAX_DEVICES];
	struct npusim_host_config host;
};

/* Counters of one device, read with npusim_device_counters(). */
struct npusim_counters {
	uint64_t malloc_calls;    /* successful aclrtMalloc* calls */
	uint64_t malloc_failures; /* calls refused (OOM or injected fault) */
	uint64_t free_calls;
	uint64_t malloc_bytes;    /* bytes committed by successful mallocs */
	uint64_t free_bytes;
	uint64_t malloc_ns;       /* real time spent inside malloc/free */
	uint64_t free_ns;
	uint64_t used;            /* bytes currently allocated (page-rounded) */
	uint64_t peak_used;
	uint64_t live_allocations; /* aclrtMalloc* blocks not yet freed */
	uint64_t physical_calls;  /* successful aclrtMallocPhysical calls */
	uint64_t physical_frees;
	uint64_t physical_failures; /* aclrtMallocPhysical refused (OOM or fault) */
	uint64_t physical_used;   /* bytes of physical handles, part of used */
};

/* Counters of the host memory, read with npusim_host_counters(). */
struct npusim_host_counters {
	uint64_t capacity;
	uint64_t used;             /* bytes of pinned host memory held (malloc and physical) */
	uint64_t peak_used;
	uint64_t malloc_calls;     /* successful aclrtMallocHost calls */
	uint64_t malloc_failures;  /* aclrtMallocHost or host aclrtMallocPhysical refused */
	uint64_t free_calls;
	uint64_t live_allocations; /* aclrtMallocHost blocks not yet freed */
	uint64_t physical_used;    /* bytes of host physical handles, part of used */
	uint64_t physical_calls;
	uint64_t physical_frees;
};

/*
 * Start the simulator with the given devices (all memory free, clock 0).
 * Returns 0, -EINVAL for a bad config, -EBUSY if already started, or
 * -ENOMEM if the address space cannot be reserved.
 */
NPUSIM_API int npusim_init(const struct npusim_config *cfg);
/* Release everything. Device memory still allocated is reported as leaked. */
NPUSIM_API void npusim_shutdown(void);
/* Bytes of device memory (malloc and physical) still allocated at the last
 * npusim_shutdown(), so that its caller can report them as leaks. */
NPUSIM_API uint64_t npusim_last_leaked_bytes(void);
NPUSIM_API bool npusim_initialized(void);
/* A config with `count` devices of `capacity` bytes, 2 MiB pages, no latency. */
NPUSIM_API void npusim_config_default(struct npusim_config *cfg, int count, uint64_t capacity);

/* Counters and leak information. */
NPUSIM_API int npusim_device_counters(int device, struct npusim_counters *out);
/* Change the simulated cost of malloc/free at run time. */
NPUSIM_API int npusim_set_latency(int device, uint64_t malloc_us, uint64_t free_us);
/* The device a device pointer belongs to, or -1 if none. */
NPUSIM_API int npusim_device_of(const void *ptr);

/* The host memory's counters; -EINVAL before npusim_init. */
NPUSIM_API int npusim_host_counters(struct npusim_host_counters *out);
/* Whether [ptr, ptr + size) lies inside one live aclrtMallocHost block. */
NPUSIM_API bool npusim_host_range_pinned(const void *ptr, size_t size);
/* Fail the nth aclrtMallocHost from now on (1 = the next one); 0 disables. */
NPUSIM_API int npusim_fail_nth_host_malloc(uint64_t nth);

/* Virtual clock. */
NPUSIM_API uint64_t npusim_now_ns(void);
NPUSIM_API void npusim_advance_ns(uint64_t ns);
/* Device `device`'s default stream: the handle torch_npu's
 * getDefaultNPUStream(device) holds (torch_npu makes it with
 * aclrtCreateStreamWithConfig when the device starts; here it comes with
 * the device). NULL in an aclrt* call is the current device's, the same
 * stream. NULL when the device does not exist or the simulator is down. */
NPUSIM_API aclrtStream npusim_default_stream(int device);
/* Work of `ns` virtual nanoseconds on `stream` (NULL: current default stream). */
NPUSIM_API aclError npusim_launch(aclrtStream stream, uint64_t ns);
/* Work on `stream` that ends only when the stream or the device is synchronized. */
NPUSIM_API aclError npusim_launch_open(aclrtStream stream);
/* A stable small number for a stream: 0 for a default stream, 1, 2, ...
 * in creation order across devices; UINT64_MAX for an unknown handle. */
NPUSIM_API uint64_t npusim_stream_id(aclrtStream stream);

/* The id of the capture under way on `stream`, active or invalidated (the
 * aclmdlRIGetId of the model aclmdlRICaptureGetInfo gives); 0 when the
 * stream does not capture or is unknown. What NPUGraph's allocation
 * filter compares with its graph's capture id. */
NPUSIM_API uint32_t npusim_stream_capture_id(aclrtStream stream);
/*
 * Whether an event query or synchronize by the calling thread would be
 * refused now, because a capture on its current device forbids it (a
 * global one, or a thread_local one this thread began). Asks without
 * invalidating anything, as torch_npu's allocator looks for captures under
 * way before it processes events.
 */
NPUSIM_API bool npusim_capture_forbids_query(void);

/*
 * The ACL allocator registrations (aclrtAllocatorRegister) in force, in
 * the order of the streams' ids: the stream, its id and device (-1 for a
 * handle the runtime does not know), the descriptor given and the copies
 * kept. Fills at most `max` and returns how many there are.
 */
struct npusim_allocator_reg {
	aclrtStream stream;
	uint64_t stream_id;
	int device;
	aclrtAllocatorDesc desc;
	aclrtAllocator obj;
	aclrtAllocatorAllocFunc alloc;
	aclrtAllocatorFreeFunc free;
	aclrtAllocatorAllocAdviseFunc alloc_advise;
	aclrtAllocatorGetAddrFromBlockFunc get_addr_from_block;
};
NPUSIM_API size_t npusim_allocator_registrations(struct npusim_allocator_reg *out, size_t max);

/* Fault injection on the device malloc path (aclrtMalloc*). */
/* Fail the nth malloc from now on (1 = the next one); 0 disables. */
NPUSIM_API int npusim_fail_nth_malloc(int device, uint64_t nth);
/* Fail each malloc with probability `rate` (0..1), from a seeded PRNG. */
NPUSIM_API int npusim_fail_malloc_rate(int device, double rate, uint64_t seed);
/* Fail the nth aclrtMallocPhysical on `device` from now on; 0 disables. */
NPUSIM_API int npusim_fail_nth_physical(int device, uint64_t nth);

#ifdef __cplusplus
}
#endif

#endif /* NPUMEMFS_NPUSIM_H */
