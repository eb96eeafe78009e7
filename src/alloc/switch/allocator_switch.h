/*
 * allocator_switch.h - the allocator in use, and the ones it replaced.
 *
 * The daemon allocates only through this facade. It holds the built-in
 * caching allocator (never unloaded) and at most one current plug-in;
 * swapping is allowed with live allocations (upstream refuses): each block
 * stays owned by the allocator that made it and is freed through it, new
 * blocks come from the current one, and a retired plug-in is unloaded when
 * its last block is freed. No byte of a live allocation moves or is lost.
 *
 * Thread-safe. Allocator and plug-in calls run without the switch's lock,
 * so a slow plug-in never holds up a reader.
 */
#ifndef NPUMEMFS_ALLOCATOR_SWITCH_H
#define NPUMEMFS_ALLOCATOR_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "alloc/allocator.h"
#include "alloc/caching/caching_allocator.h"
#include "alloc/plugin/pluggable_allocator.h"

struct sw;
struct sw_entry;

struct sw_options {
	struct npa *caching;     /* the built-in allocator; stays the caller's */
	int device_count;
	const char *plugin_dirs; /* comma-separated allowed folders ("" none) */
	uid_t owner;             /* who may own plug-in files besides root */
	/* Where plug-ins run: each in a host process started from this
	 * program (plugin_host.h), or in this process when NULL. */
	const char *plugin_host;
	unsigned plugin_timeout_ms; /* bound on one call into a host; 0: default */
	/* An allocation whose plug-in never returned fails with EFAULT and
	 * the fault's words, as a fault does, rather than with ENOMEM: a
	 * replay must stop there, not count an OOM and go on with another
	 * allocator. */
	bool timeout_fails_replay;
	const struct plugin_block_api *plugin_blocks; /* what a host's block calls reach */
	/* Told (outside every switch lock, on the thread that let go of the
	 * last pin, so possibly on two threads at once) when a plug-in is
	 * unloaded: the switch does not log, its owner does. May be NULL. */
	void (*on_unload)(void *ctx, const char *name, const char *path);
	/*
	 * Told (outside every switch lock) just before a plug-in's code goes
	 * (unloaded, or abandoned after a fault), while nothing of the switch
	 * runs it: whoever registered its functions elsewhere (an ACL
	 * allocator descriptor) drops them, asking sw_entry_has_code. May be
	 * NULL.
	 */
	void (*on_unloading)(void *ctx, const struct sw_entry *e);
	/* Told once (outside every switch lock) when a plug-in faults and is
	 * retired: which one, and what happened (function, signal, address). */
	void (*on_fault)(void *ctx, const char *name, const char *what);
	/* Told (outside every switch lock) each of torch_npu's warnings about
	 * a plug-in (an absent hook, an unsupported call), once per plug-in. */
	void (*on_warn)(void *ctx, const char *name, const char *text);
	void *ctx;
};

enum sw_kind { SW_CACHING, SW_PLUGIN };

/* A hook a plug-in was loaded with. */
struct sw_hook {
	const char *hook;        /* plugin_hook_name(), e.g. "reset" */
	char fn[PLUGIN_SYMLEN];  /* the plug-in's function for it */
};

/* One allocator the switch knows: the current one or a retired one. */
struct sw_info {
	unsigned id;             /* 0 = caching; plug-ins count up from 1 */
	enum sw_kind kind;
	bool current;
	char name[32];           /* "caching", or "plugin1", "plugin2", ... */
	char path[PATH_MAX];     /* plug-in only */
	char alloc_name[PLUGIN_SYMLEN];
	char free_name[PLUGIN_SYMLEN];
	struct sw_hook hooks[PLUGIN_NHOOKS]; /* the ones given, in hook order */
	size_t nhooks;
	time_t since;            /* loaded, or made current for caching */
	bool kept;               /* loaded with "load", not yet unloaded */
	bool faulted;            /* retired by a fault: never called again */
	unsigned mempools;       /* MemPools whose allocator it is */
	uint64_t live_blocks;    /* allocations made through the switch */
	uint64_t live_bytes;
	struct npl_guard_counts guard; /* plug-in only */
};

int sw_create(const struct sw_options *opt, struct sw **out);
/* The switch as an allocator (alloc/allocator.h): whatever is current
 * allocates, each block is freed by the allocator that made it. */
struct allocator sw_allocator(struct sw *sw);
/* Unload every plug-in (giving back what they still hold); not the npa. */
void sw_destroy(struct sw *sw);

int sw_malloc(struct sw *sw, int device, size_t size, aclrtStream stream,
	      void **ptr, char *err, size_t errlen);
/* Through the owner. -EINVAL "Trying to free a pointer not allocated here". */
int sw_free(struct sw *sw, void *ptr, char *err, size_t errlen);
int sw_record_stream(struct sw *sw, void *ptr, aclrtStream stream);
/* npa_set_stream_number on the built-in caching allocator. */
int sw_set_stream_number(struct sw *sw, aclrtStream stream, int device, long number);

/* torch_npu.erase_stream: through the owner (its erase_stream hook). */
int sw_erase_stream(struct sw *sw, void *ptr, aclrtStream stream);

/*
 * One allocator of the switch by name ("caching" or "pluginK"), kept
 * loaded until dropped, for whoever allocates from it whatever is current
 * (an ACL allocator registered for a stream). NULL if there is none.
 */
struct sw_entry;
struct sw_entry *sw_hold(struct sw *sw, const char *name);
/*
 * The plug-in whose object holds `code` (a function's address), kept
 * loaded until dropped: a function of a plug-in someone else calls (an
 * ACL allocator it registered) keeps it as sw_hold does. NULL when no
 * loaded plug-in holds that code.
 */
struct sw_entry *sw_hold_code(struct sw *sw, const void *obj, const void *code);
/* Whether `code`, called with `obj`, is plug-in e's (false for caching). */
bool sw_entry_has_code(const struct sw_entry *e, const void *obj, const void *code);
void sw_drop(struct sw *sw, struct sw_entry *e);
const char *sw_entry_name(const struct sw_entry *e);
/* sw_malloc from a held allocator; freed with sw_free like any block. */
int sw_malloc_from(struct sw *sw, struct sw_entry *e, int device, size_t size,
		   aclrtStream stream, void **ptr, char *err, size_t errlen);
/* The size of the block behind a live pointer, as its allocator keeps it
 * (the caching allocator's rounded size); 0 if unknown. */
size_t sw_block_size(struct sw *sw, const void *ptr);

/*
 * Plug-in `name` ("pluginK", loaded) as the segment source of a MemPool
 * (torch.npu.MemPool(allocator=...)): held until the caching allocator
 * deletes the pool. A caller whose npa_mempool_create_from fails calls
 * the source's drop itself. -ENOENT for no such plug-in, -EINVAL for
 * "caching" or a plug-in that faulted.
 */
struct npa_segment_source;
int sw_mempool_source(struct sw *sw, const char *name, struct npa_segment_source *out,
		      char *err, size_t errlen);
/* Unload now the plug-ins whose last MemPool the caching allocator
 * deleted (it cannot unload them itself; any later call would). */
void sw_unload_dropped(struct sw *sw);

/*
 * A line written to ctl/allocator: "caching", a plug-in spec (made
 * current), "load SPEC" (loaded beside the current allocator, as
 * NPUPluggableAllocator(...) makes one without change_current_allocator,
 * and kept until "unload pluginK"), or "unload pluginK". On error nothing
 * changes and the reason is in err (see plugin_open for errnos).
 */
int sw_write(struct sw *sw, const char *line, char *err, size_t errlen);
int sw_set_plugin(struct sw *sw, const char *spec, char *err, size_t errlen);
void sw_set_caching(struct sw *sw);
/* The number of devices every allocator of the switch serves. */
int sw_device_count(const struct sw *sw);
/* Is the built-in allocator the current one? */
bool sw_is_caching(struct sw *sw);
/* The built-in allocator if it is the current one, else NULL. */
struct npa *sw_current_caching(struct sw *sw);
/* The built-in allocator, current or not: its settings, history, pools and
 * graphs stay its own whoever allocates. */
struct npa *sw_caching(struct sw *sw);
/* The pinned host allocator: the built-in allocator's, whichever device
 * allocator is current, as torch_npu keeps its host allocator. */
struct npa_host *sw_host(struct sw *sw);

/* A private pool a plug-in was asked to route to (graph capture, MemPool). */
struct sw_pool_info {
	struct npa_pool_id id;
	char allocator[32];      /* "pluginK" */
	unsigned scopes;         /* routing now */
	unsigned uses;           /* upstream's use_count */
};
/* The plug-ins' pools on `device`; free(*out). */
int sw_pools_of(struct sw *sw, int device, struct sw_pool_info **out, size_t *n);

/* Stats and snapshot of the current allocator. */
int sw_get_stats(struct sw *sw, int device, struct npa_stats *out);
int sw_snapshot(struct sw *sw, int device, struct npa_snapshot *out);
/* Stats of allocator `id` (see sw_list); -ENOENT once it is gone. */
int sw_get_stats_of(struct sw *sw, unsigned id, int device,
		    struct npa_stats *out);

/* empty_cache: the caching allocator's, and the current plug-in's reset hook. */
int sw_empty_cache(struct sw *sw, int device);
/* Set on the caching allocator and the current plug-in's hook. */
int sw_set_memory_fraction(struct sw *sw, int device, double fraction,
			   char *err, size_t errlen);
double sw_get_memory_fraction(struct sw *sw, int device);
/* On the caching allocator and the current plug-in. */
int sw_reset_peak_stats(struct sw *sw, int device);
int sw_reset_accumulated_stats(struct sw *sw, int device);

/* The current allocator first, then the retired ones, oldest first. */
int sw_list(struct sw *sw, struct sw_info **out, size_t *n);
/* Frees refused because no allocator of the switch made the pointer. */
uint64_t sw_refused_frees(struct sw *sw);
/*
 * No two allocators hold the same device memory on `device`: 0, or
 * -EFAULT with the two owners and ranges in err.
 */
int sw_check(struct sw *sw, int device, char *err, size_t errlen);

#endif /* NPUMEMFS_ALLOCATOR_SWITCH_H */
