/*
 * allocator_switch_impl.h - the switch's state, shared by its two files
 * (allocator_switch.c: allocation and swapping; allocator_switch_views.c:
 * stats, controls and listing).
 */
#ifndef NPUMEMFS_ALLOCATOR_SWITCH_IMPL_H
#define NPUMEMFS_ALLOCATOR_SWITCH_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "alloc/allocator.h"
#include "allocator_switch.h"

struct sw_owner;
struct sw_pool;

struct sw_entry {
	unsigned id;
	char name[32];
	struct allocator a;       /* every allocator call goes through it */
	/* A plug-in's own facts (path, hooks, guards) and its lending; entries
	 * on the plug-ins list only. */
	struct npl *npl;
	/* Never unloaded (the built-in allocator): its pins cost nothing. */
	bool resident;
	time_t since;
	/* A plug-in's blocks handed out through the switch, not freed; the
	 * caching allocator's are counted by it (npa_live). */
	uint64_t live_blocks;
	uint64_t live_bytes;
	unsigned busy;            /* calls running on it outside the lock, unless resident */
	bool fault_told;          /* its fault was reported and it was retired */
	bool kept;                /* loaded with "load", pinned until "unload" */
	unsigned mempools;        /* MemPools whose allocator it is (each a pin) */
	struct sw_entry *next;    /* plug-ins, oldest first */
};

struct sw {
	pthread_mutex_t lock;      /* everything below */
	pthread_mutex_t swap_lock; /* one swap at a time; taken before lock */
	struct npa *npa;
	int device_count;
	char *plugin_dirs;
	uid_t owner;
	char *plugin_host;         /* NULL: plug-ins run in this process */
	unsigned plugin_timeout_ms;
	bool timeout_fails_replay;
	const struct plugin_block_api *plugin_blocks;
	/* A host that died outside any call is told here; the reaper thread
	 * retires it (allocator_switch_reaper.c). Started at the first load
	 * under swap_lock. */
	int fault_fd;
	int reaper_stop_fd;
	pthread_t reaper;
	bool reaper_on;
	void (*on_unload)(void *ctx, const char *name, const char *path);
	void (*on_unloading)(void *ctx, const struct sw_entry *e);
	void (*on_fault)(void *ctx, const char *name, const char *what);
	void (*on_warn)(void *ctx, const char *name, const char *text);
	void *ctx;
	struct sw_entry caching;
	/* Written under the lock; read without it where it is the caching
	 * allocator, which is never unloaded and so needs no pin. */
	struct sw_entry *_Atomic current;
	struct sw_entry *plugins;  /* current, loaded and retired plug-ins */
	struct sw_entry *unloading; /* unlinked where they could not be unloaded */
	atomic_bool unloading_set;  /* unloading is not empty: read without the lock */
	/* ptr -> entry, for plug-ins' blocks only: a pointer none of them
	 * made is the caching allocator's, or nobody's. */
	struct sw_owner *owners;
	atomic_size_t owned;       /* records in owners: read without the lock */
	struct sw_pool *pools;     /* private pools a plug-in was asked to route to */
	unsigned last_id;
	uint64_t refused_frees;
};

/* The contract's pool operations (allocator_switch_pools.c): to the
 * allocator current at begin; end and release to the one that began. */
int sw_begin_pool(void *self, int device, struct npa_pool_id id, npa_pool_filter filter,
		  void *arg, char *err, size_t errlen);
int sw_end_pool(void *self, int device, struct npa_pool_id id, char *err, size_t errlen);
int sw_release_pool(void *self, int device, struct npa_pool_id id, char *err, size_t errlen);
void sw_pools_fini(struct sw *sw);                              /* no lock */
/* Whether a plug-in's pool has a scope begun and not ended. */
bool sw_plugin_routes(struct sw *sw);                           /* lock held */

/* Pinning keeps a plug-in loaded while a call runs on it without the lock;
 * the caching allocator's entry is never unloaded, so its pins cost nothing
 * and take no lock. */
void sw_pin(struct sw_entry *e);                               /* lock held */
struct sw_entry *sw_unpin(struct sw *sw, struct sw_entry *e);  /* lock held */
void sw_reap(struct sw *sw, struct sw_entry *e);               /* no lock */
void sw_release(struct sw *sw, struct sw_entry *e);            /* no lock */
struct sw_entry *sw_pin_current(struct sw *sw);                /* no lock */
/* Whether a live block of a plug-in other than `self` (retired ones
 * included) shares a byte with [ptr, ptr + size); its name in owner. */
bool sw_plugin_owner(struct sw *sw, const struct npl *self, int device, const void *ptr,
		     size_t size, char *owner, size_t ownerlen);
/* After a call on `e` returned -EFAULT: the plug-in that faulted (`e`, or
 * a MemPool's inside the caching allocator) stops being current, and is
 * told once. */
void sw_note_fault(struct sw *sw, struct sw_entry *e);          /* no lock */
/* Retire every plug-in that faulted and was not yet told. */
void sw_retire_faulted(struct sw *sw);                          /* no lock */
int sw_reaper_start(struct sw *sw);
/* Stop the thread (hosts may still write the eventfd), then close it
 * once no plug-in holds it. */
void sw_reaper_stop(struct sw *sw);
void sw_reaper_close(struct sw *sw);

#endif /* NPUMEMFS_ALLOCATOR_SWITCH_IMPL_H */
