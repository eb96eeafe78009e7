/*
 * host_impl.h - the pinned host allocator's state (internal to the host_*
 * files). Everything here runs under h->lock unless it says otherwise.
 */
#ifndef NPA_HOST_IMPL_H
#define NPA_HOST_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <bsd/sys/queue.h>
#include <uthash.h>

#include "alloc/conf/alloc_conf.h"
#include "host_allocator.h"
#include "alloc/core/lock.h"
#include "alloc/pools/pool_registry.h"

#define NPA_HOST_BUCKETS 64 /* MAX_SIZE_INDEX: one free list per log2 size */

struct host_pool;

/* The streams that used a block since it was handed out (a small set). */
struct host_streams {
	aclrtStream *s;
	size_t n, cap;
};

/* ATen HostBlock, with owning_pool_ and was_allocated_during_stream_capture_. */
struct host_block {
	char *ptr;
	size_t size;
	bool allocated;
	bool during_capture;
	bool reserved;             /* carved from the reserve segment */
	uint64_t serial;           /* 1 for the first block the allocator made */
	size_t event_count;
	struct host_streams streams;
	struct host_pool *pool;
	TAILQ_ENTRY(host_block) free_link;
	UT_hash_handle hh;         /* every block, by ptr (ptr_to_block_) */
};

TAILQ_HEAD(host_free_list, host_block);

/* HostPrivatePool, and the default pool with id (0, 0). */
struct host_pool {
	struct private_pool base;  /* id, use_count, freeable, insertion order */
	size_t nblocks;            /* blocks it owns, in any state */
	struct host_free_list free[NPA_HOST_BUCKETS];
};

/* An event recorded for a freed block's stream; `event` NULL while the
 * stream captures and cannot record one yet. */
struct host_event {
	aclrtEvent event;
	aclrtStream stream;
	void *block;               /* struct host_block or struct xblock */
	TAILQ_ENTRY(host_event) link;
};

TAILQ_HEAD(host_event_queue, host_event);

/* PinnedReserveSegment: a bump allocator in one host malloc, never freed. */
struct host_reserve {
	char *base;
	size_t size, used;
	bool decided;              /* the first allocation has looked at it */
};

struct host_expandable;

/*
 * What ATen's algorithm (host_caching.c) and torch_npu's expandable one
 * (host_expandable.c) do differently. npa_host_create picks one table as
 * torch_npu's call_once does, and every entry point calls through it
 * under h->lock; nothing else asks which algorithm runs.
 */
struct host_algo_ops {
	enum npa_host_variant variant;   /* for npa_host_variant() only */
	bool pools;                      /* private pools can route to it */
	const char *capture_refusal;     /* npa_host_capture_refusal's text */
	/* State beyond struct npa_host; NULL when it needs none. */
	int (*init)(struct npa_host *h);
	/* Process exit: every block's memory goes back. */
	void (*fini)(struct npa_host *h);
	int (*allocate)(struct npa_host *h, size_t size, aclrtStream stream, void **ptr,
			char *err, size_t errlen);
	/* -EINVAL when ptr is not an allocated block's. */
	int (*free)(struct npa_host *h, void *ptr);
	int (*record_event)(struct npa_host *h, const void *ptr, aclrtStream stream);
	size_t (*block_size)(struct npa_host *h, const void *ptr);
	/* npa_host_block_serial; NULL when blocks have no lasting identity. */
	uint64_t (*block_serial)(struct npa_host *h, const void *ptr);
	void (*empty_cache)(struct npa_host *h);
	/* The counters it keeps; the timings are shared. */
	void (*stats)(struct npa_host *h, struct npa_host_stats *out);
	void (*reset)(struct npa_host *h, bool peak);
	/* Every block, by address; *out and *n start empty. */
	int (*blocks)(struct npa_host *h, struct npa_host_block_info **out, size_t *n);
	int (*check)(struct npa_host *h, char *err, size_t errlen);
};

extern const struct host_algo_ops host_caching_ops;
extern const struct host_algo_ops host_expandable_ops;

struct npa_host {
	struct npa_lock lock;
	const struct host_algo_ops *ops;
	uint64_t host_capacity;          /* the machine's, for range sizes */
	struct host_limits limits;
	struct host_event_queue events;  /* newest at the head */
	aclrtEvent *spare;               /* EventPool */
	size_t nspare, spare_cap;
	struct npa_duration_stat alloc_time, free_time;
	/* ATen's algorithm and its private pools */
	struct host_block *blocks;       /* by ptr */
	struct host_pool dflt;
	struct pool_registry pools;      /* private, and their scopes */
	struct host_reserve reserve;
	uint64_t blocks_made;            /* the serial of the newest block */
	/* allocations and allocated_bytes, and per bucket the active stats */
	struct npa_stat allocations, allocated_bytes;
	struct npa_stat active_requests[NPA_HOST_BUCKETS];
	struct npa_stat active_bytes[NPA_HOST_BUCKETS];
	/* the expandable algorithm */
	struct host_expandable *xp;
};

/* host_allocator.c */
unsigned npa_host_bucket(size_t size);
uint64_t npa_host_now_us(void);

/* host_streams.c: stream sets, events, and whether a stream captures. */
int host_streams_add(struct host_streams *set, aclrtStream s);
void host_streams_clear(struct host_streams *set);
aclrtEvent host_event_get(struct npa_host *h);
void host_event_put(struct npa_host *h, aclrtEvent e);
/* One event per stream of `set`, queued for `block`; returns how many. */
size_t host_record_events(struct npa_host *h, const struct host_streams *set, void *block);
/* The oldest queued event's block if it completed (dequeued), else NULL;
 * an event a capture kept from being recorded is recorded first. */
void *host_next_completed(struct npa_host *h);
bool host_stream_capturing(aclrtStream s);
void host_events_fini(struct npa_host *h);
/* The stream numbers of the first 4 streams of `set`, for block views. */
void host_stream_ids(const struct host_streams *set, uint64_t out[4]);
/* qsort order of npa_host_block_info: by address. */
int host_info_by_address(const void *a, const void *b);

/* host_pools.c */
struct host_pool *host_pool_route(struct npa_host *h, aclrtStream stream);
/* The default pool, and the registry of private pools: scopes are searched
 * oldest first, and a freeable pool taken again comes back. */
void host_pools_init(struct npa_host *h);

/* The host pool a registry entry is, or NULL for none. */
static inline struct host_pool *host_pool_of(const struct private_pool *p)
{
	return p != NULL ? (struct host_pool *)((char *)p - offsetof(struct host_pool, base))
			 : NULL;
}

/* Insertion order, for walking every private pool. */
static inline struct host_pool *host_pool_first(const struct npa_host *h)
{
	return host_pool_of(h->pools.head);
}

static inline struct host_pool *host_pool_next(const struct host_pool *p)
{
	return host_pool_of(p->base.next);
}

void host_pool_delete(struct npa_host *h, struct host_pool *p);
bool host_pool_routed(const struct npa_host *h, const struct host_pool *p);
void host_pools_fini(struct npa_host *h);

/* host_caching_check.c: ATen's algorithm's blocks and invariants. */
int host_caching_blocks(struct npa_host *h, struct npa_host_block_info **out, size_t *n);
int host_caching_check(struct npa_host *h, char *err, size_t errlen);

#endif /* NPA_HOST_IMPL_H */
