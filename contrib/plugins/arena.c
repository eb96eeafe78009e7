/*
 * arena.c - a bump allocator: one device chunk per device, carved front to
 * back, rewound when its last block is freed.
 *
 * Allocation is a pointer increment; nothing is reused until every block
 * of the chunk is free. The reset hook (called by empty_cache) gives an
 * empty chunk back to the device. A request that does not fit the rest of
 * the chunk fails (NULL: an out-of-memory for the caller).
 *
 *     echo "$PWD/build/lib/arena.so arena_alloc arena_free \
 *           init=arena_init reset=arena_reset" > mnt/ctl/allocator
 *
 * Chunk size: NPUMEMFS_ARENA_MB in the daemon's environment (default 64),
 * or the request itself when larger.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <acl/acl_rt.h>

#define ARENA_MAX_DEVICES 16
#define ARENA_ALIGN 512

struct arena {
	char *base;
	size_t cap;
	size_t used;
	long live;
};

/* One lock for all devices: a bump is a few instructions. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct arena arenas[ARENA_MAX_DEVICES];
static size_t chunk_bytes = 64u << 20;

void arena_init(int device_count)
{
	const char *mb = getenv("NPUMEMFS_ARENA_MB");

	(void)device_count;
	if (mb && atol(mb) > 0)
		chunk_bytes = (size_t)atol(mb) << 20;
}

static struct arena *arena_of(int device)
{
	return device >= 0 && device < ARENA_MAX_DEVICES ? &arenas[device] : NULL;
}

/* Lock held. The caller's device is current, as upstream guarantees. */
static bool ensure_chunk(struct arena *a, size_t need)
{
	if (a->base)
		return true;
	size_t cap = need > chunk_bytes ? need : chunk_bytes;
	void *p = NULL;
	if (aclrtMalloc(&p, cap, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return false;
	a->base = p;
	a->cap = cap;
	a->used = 0;
	return true;
}

void *arena_alloc(ssize_t size, int device, aclrtStream stream)
{
	struct arena *a = arena_of(device);
	size_t n = ((size_t)size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p = NULL;

	(void)stream;
	if (!a || size <= 0)
		return NULL;
	pthread_mutex_lock(&lock);
	if (ensure_chunk(a, n) && n <= a->cap - a->used) {
		p = a->base + a->used;
		a->used += n;
		a->live++;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

void arena_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	struct arena *a = arena_of(device);

	(void)ptr, (void)size, (void)stream;
	if (!a)
		return;
	pthread_mutex_lock(&lock);
	if (a->live > 0 && --a->live == 0)
		a->used = 0;
	pthread_mutex_unlock(&lock);
}

static void release_chunks(bool only_empty)
{
	pthread_mutex_lock(&lock);
	for (int d = 0; d < ARENA_MAX_DEVICES; d++) {
		struct arena *a = &arenas[d];
		if (a->base && (!only_empty || a->live == 0)) {
			aclrtFree(a->base);
			*a = (struct arena){ 0 };
		}
	}
	pthread_mutex_unlock(&lock);
}

/* empty_cache: chunks with no live block go back to the device. */
void arena_reset(bool check_error)
{
	(void)check_error;
	release_chunks(true);
}

/* Unloading the plug-in must not strand its chunks on the device. */
__attribute__((destructor)) static void arena_unload(void)
{
	release_chunks(false);
}
