/*
 * pinned_store.h - pinned host tensors by name: pin_memory() allocations
 * from the host allocator whose bytes a caller reads and writes, as
 * pinned/NAME files show them. Thread-safe (one lock).
 */
#ifndef NPUMEMFS_PINNED_STORE_H
#define NPUMEMFS_PINNED_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <acl/acl_rt.h>

struct npa_host;
struct pinned_store;

int ps_new(struct npa_host *host, struct pinned_store **out);
/* Frees every tensor, then the store. */
void ps_free(struct pinned_store *ps);

/* An empty tensor (size 0). -EEXIST, -ENAMETOOLONG, -ENOMEM. */
int ps_create(struct pinned_store *ps, const char *name);
int ps_unlink(struct pinned_store *ps, const char *name);
/* Its size and, unless `changed` is NULL, when its bytes or size last
 * changed (a write, a resize, a copy through ps_use). -ENOENT. */
int ps_size(struct pinned_store *ps, const char *name, uint64_t *size,
	    struct timespec *changed);
/* A new block of `size` pinned while `stream` is current (a capturing
 * stream routes it to its graph's pool), what fits copied, the old one
 * freed; on -ENOMEM (upstream's text in err) the tensor keeps its block
 * and bytes. */
int ps_resize(struct pinned_store *ps, const char *name, uint64_t size, aclrtStream stream,
	      char *err, size_t errlen);
ssize_t ps_read(struct pinned_store *ps, const char *name, char *buf, size_t size,
		uint64_t off);
ssize_t ps_write(struct pinned_store *ps, const char *name, const char *buf, size_t size,
		 uint64_t off);
/*
 * fn(arg, host, ptr, size) with the tensor's block, under the store's lock
 * so that the block stays the tensor's meanwhile (a copy, and the event
 * it records). -ENOENT without such a tensor, else fn's result.
 */
typedef int (*ps_use_fn)(void *arg, struct npa_host *host, void *ptr, uint64_t size);
int ps_use(struct pinned_store *ps, const char *name, ps_use_fn fn, void *arg);
/* Each name, in creation order; a non-zero return of fn stops. */
int ps_list(struct pinned_store *ps, int (*fn)(void *arg, const char *name), void *arg);

#endif /* NPUMEMFS_PINNED_STORE_H */
