/*
 * sim.h - the simulator's state, shared by its modules (not installed).
 *
 * There is one simulated machine per process, as there is one ACL runtime:
 * the state is a single object, `sim`. Locks, and what they cover:
 *   device[i].lock  that device's memory, counters and fault settings
 *   host.lock       pinned host memory, its counters and fault setting
 *   sched_lock      the virtual clock, streams, events, captures and models
 *   vm_lock         address reservations, mappings and physical handles
 *   events.lock     creating and destroying events
 *   ipc.lock        IPC keys of device memory
 * Lock order: vm_lock before a device lock or host.lock; a device lock
 * before ipc.lock; sched_lock and events.lock are never nested.
 * Event queries take no lock: they read the clock, an event and its
 * stream's open_ended, which are atomic for that reason.
 */
#ifndef NPUSIM_SIM_H
#define NPUSIM_SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uthash.h>

#include <npumemfs/npusim.h>

#include "event_table.h"
#include "extent_map.h"
#include "fault.h"
#include "vm.h"

/*
 * A destroyed stream's memory is kept for the next aclrtCreateStream, never
 * freed before shutdown, so that an event can read the stream it was
 * recorded on without a lock; the id, never reused, tells it whether the
 * stream is still the one.
 */
struct sim_model;

/* A stream's capture, under sched_lock: between aclmdlRICaptureBegin and
 * aclmdlRICaptureEnd, `model` takes the work enqueued on the stream. */
struct sim_capture {
	struct sim_model *model; /* NULL: the stream does not capture */
	aclmdlRICaptureStatus status;
	aclmdlRICaptureMode mode;
	pthread_t thread;      /* the thread that began it */
	/* The first unsafe call that invalidated it and the thread that made
	 * it: the end's caller can only be told afterwards, and another
	 * thread made the call. */
	char invalidated_by[96];
};

struct sim_stream {
	_Atomic uint64_t id;   /* 0 for a default stream, UINT64_MAX once destroyed */
	int device;
	uint64_t tail;         /* virtual end of the timed work launched */
	uint64_t open_launched; /* open-ended launches so far */
	_Atomic uint64_t open_ended; /* of those, how many a synchronize ended */
	struct sim_capture cap;
	struct sim_stream *self; /* hash key: the handle is the address */
	struct sim_stream *next_free;
	UT_hash_handle hh;
};

struct sim_device {
	pthread_mutex_t lock;
	uint64_t capacity;
	uint64_t page_size;
	_Atomic uint64_t malloc_latency_us;
	_Atomic uint64_t free_latency_us;
	char *base;            /* page-aligned; device pointers live here */
	uint64_t npages;       /* usable pages: capacity / page_size */
	uint64_t span_pages;   /* of mem and phys: EXTENT_SPAN_FACTOR times npages, or npages */
	struct extent_map mem; /* aclrtMalloc's addresses, page i at base + i * page_size */
	struct extent_map phys; /* aclrtMallocPhysical's pages, page i at phys_fd offset i * page_size */
	bool phys_ready;
	int phys_fd;
	struct npusim_counters ctr;
	struct sim_fault malloc_fault;
	struct sim_fault phys_fault;
	struct sim_stream default_stream;
};

struct sim_host_block;

/* Pinned host memory: aclrtMallocHost blocks, and host physical pages in
 * a memfd of its own (page i at offset i * page_size). */
struct sim_host {
	pthread_mutex_t lock;
	uint64_t capacity;
	uint64_t page_size;
	_Atomic uint64_t malloc_latency_us;
	_Atomic uint64_t free_latency_us;
	struct sim_host_block *blocks; /* by address */
	struct extent_map phys;
	bool phys_ready;
	int phys_fd;
	struct sim_fault malloc_fault;
	struct npusim_host_counters ctr;
};

/* Device memory exported for IPC (aclrtIpcMemGetExportKey), by key. */
struct sim_ipc_key;

struct sim_ipc {
	pthread_mutex_t lock;
	struct sim_ipc_key *keys;
	/* Keys held, changed under lock: a free, which asks after its block's
	 * key, reads it without the lock first (a key of a block is added
	 * under the block's device lock, which the free holds). */
	_Atomic unsigned nkeys;
	uint64_t next_shareable; /* the last number a physical handle was exported as */
};

struct sim_state {
	atomic_bool up;
	atomic_uint generation; /* bumped by each init: resets the current device */
	int ndev;
	struct sim_device device[NPUSIM_MAX_DEVICES];
	struct sim_host host;

	pthread_mutex_t sched_lock;
	_Atomic uint64_t now;  /* written under sched_lock only */
	uint64_t next_stream_id;
	struct sim_stream *streams;
	struct sim_stream *free_streams;
	struct event_table events;
	struct sim_model *models; /* by id */
	uint32_t last_model_id;   /* kept across restarts: an id names one model */
	_Atomic uint32_t capturing; /* streams that capture: lock-free paths look here first */

	pthread_mutex_t vm_lock;
	struct sim_vm vm;
	struct sim_ipc ipc;
	uint64_t last_leaked;
};

extern struct sim_state sim;

/* The calling thread's current device (0 until aclrtSetDevice). */
int sim_current_device(void);
/* `e`, which, when it is a failure, becomes the calling thread's last
 * error (aclrtPeekAtLastError): every runtime call's error goes through it. */
aclError sim_status(aclError e);
/* What aclGetRecentErrMsg tells the calling thread next. */
void sim_set_recent_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The pages were free but the span had no run for them (extent_map.h):
 * a limit of the simulator's, not the device's, said in the recent error. */
aclError sim_span_refused(const char *call, uint64_t span_pages, uint64_t npages);
/* The device whose aclrtMalloc range holds `p`, or NULL. */
struct sim_device *sim_device_holding(const void *p);
/* The live aclrtMalloc block of d starting at p, or NULL; under d->lock. */
struct extent *sim_block_at(struct sim_device *d, const void *p);
/* Whether [p, p + n) lies in one live aclrtMalloc block or mapped VM. */
bool sim_range_is_device(const void *p, size_t n);
bool sim_vm_range_mapped(const void *p, size_t n);
/* The checks aclrtMemcpy makes: ACL_SUCCESS or the error it returns. */
aclError sim_copy_check(void *dst, size_t destMax, const void *src, size_t count,
			aclrtMemcpyKind kind);
int sim_vm_device_of(const void *p);
/* What holds p: a mapping (device -1 for host pages; *reserved: p lies in
 * a reservation), a pinned host block. */
bool sim_vm_mapping_at(const void *p, char **base, uint64_t *size, int *device,
		       bool *reserved);
bool sim_host_block_at(const void *p, char **base, uint64_t *size);

void sim_account_alloc(struct sim_device *d, uint64_t bytes);
/* host.c: bring the host memory up and down; charge host bytes (under host.lock). */
int sim_host_open(const struct npusim_host_config *c);
void sim_host_close(void);
bool sim_host_take(uint64_t bytes);
void sim_host_give(uint64_t bytes);
/* Under vm_lock: host pages for a physical handle, and their return. */
struct vm_phys;
aclError sim_host_take_physical(struct vm_phys *ph, uint64_t size);
void sim_host_free_physical(struct vm_phys *ph);
/* physical.c: a sparse memfd of `bytes` for physical pages, made once. */
int sim_phys_open(int *fd, uint64_t bytes);
void sim_account_free(struct sim_device *d, uint64_t bytes);

/* Teardown hooks run by npusim_shutdown. */
void sim_sched_reset(void);
void sim_models_reset(void);
void sim_vm_reset(void);
void sim_allocators_reset(void);
void sim_ipc_reset(void);
/* Under d->lock: the IPC key of d's block at `ptr` goes, as the block
 * is freed. */
void sim_ipc_forget(const struct sim_device *d, const char *ptr);

uint64_t sim_monotonic_ns(void);
/* Spend `us` microseconds of real time (the simulated driver cost). */
void sim_spend_us(uint64_t us);

#endif /* NPUSIM_SIM_H */
