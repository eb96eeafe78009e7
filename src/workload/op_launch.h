/*
 * op_launch.h - simulated operators that need workspace, launched on a
 * stream as CANN's runtime launches a single operator.
 *
 * The workspace comes from the ACL allocator registered for the stream
 * (aclrtAllocatorRegister): alloc(obj, size) gives a block,
 * getAddrFromBlock(block) its device address; the operator's work is
 * launched on the stream, and free(obj, block) runs once that work has
 * completed (seen at the next launch or reap after the stream is
 * synchronized). Each pending free keeps the functions it came from, so a
 * stream registered anew or unregistered meanwhile loses nothing. Without
 * a registration the workspace comes from the fallback allocator (the
 * caching allocator, as torch_npu's workspace path takes it) and is freed
 * right after the launch, the allocator's stream order keeping it safe.
 *
 * Graph captures: an operator on a capturing stream takes its workspace
 * from the fallback even with a registration (a captured operator runs at
 * every replay, so no event can tell when its block is free; the caching
 * allocator puts it in the graph's private pool, as torch_npu's workspace
 * path does), and while a capture forbids event queries (a global one, or
 * a thread_local one begun by the calling thread) no event is queried:
 * pending frees wait until it ends, instead of invalidating it.
 *
 * A registered allocator's functions are someone else's code (a plug-in's,
 * or a framework's): each call runs behind the fault barrier; one that
 * faults has its stream unregistered and is never called again, its
 * outstanding blocks reported lost.
 *
 * Thread-safe; no lock is held while an allocator's function runs.
 */
#ifndef NPUMEMFS_OP_LAUNCH_H
#define NPUMEMFS_OP_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

/* Where workspace comes from without a registration. */
struct op_fallback {
	int (*malloc)(void *ctx, int device, size_t size, aclrtStream stream, void **ptr,
		      char *err, size_t errlen);
	int (*free)(void *ctx, void *ptr, char *err, size_t errlen);
	/* Optional: keep a registered allocator's object `obj` and the
	 * plug-in holding its `code` alive while its functions may still run
	 * (from the launch to the free of each block, or to a failed alloc);
	 * NULL for what nothing needs to keep. */
	void *(*hold)(void *ctx, void *obj, const void *code);
	void (*drop)(void *ctx, void *held);
	void *ctx;
};

struct op_launcher;

int op_launcher_create(const struct op_fallback *fb, struct op_launcher **out);
/* Wait for every operator, free every workspace, then destroy. */
void op_launcher_destroy(struct op_launcher *l);

/* An operator whose work ends only when its stream is synchronized. */
#define OP_OPEN_ENDED UINT64_MAX

/*
 * An operator on `stream` of `device` that runs `ns` virtual nanoseconds
 * (or OP_OPEN_ENDED)
 * with `workspace` bytes (0: none). -ENOMEM when no workspace could be had
 * (the operator does not run), -EFAULT when the registered allocator
 * faulted or gave an address that is not device memory, -EIO when the
 * runtime refused; the reason in err.
 */
int op_launch(struct op_launcher *l, int device, aclrtStream stream, size_t workspace,
	      uint64_t ns, char *err, size_t errlen);
/* Free the workspace of every operator whose work has completed; none
 * while a capture forbids event queries on the calling thread. */
void op_reap(struct op_launcher *l);

/* One stream's registered allocator as the launcher has used it. */
struct op_stream_counts {
	aclrtStream stream;
	uint64_t alloc_calls;       /* alloc (or alloc-advise) calls */
	uint64_t free_calls;
	uint64_t outstanding_blocks;
	uint64_t outstanding_bytes;
	uint64_t lost_blocks;       /* of an allocator that faulted */
};
/* The counts of `stream` (zeros if it never had workspace). */
void op_counts(struct op_launcher *l, aclrtStream stream, struct op_stream_counts *out);
/* A registration in force, with the launcher's counts for its stream. */
struct op_registration {
	aclrtStream stream;
	uint64_t stream_id;          /* the runtime's (aclrtStreamGetId) */
	int device;                  /* -1: a stream the runtime does not know */
	aclrtAllocatorDesc desc;
	aclrtAllocator obj;
	bool alloc, free, alloc_advise, get_addr_from_block; /* which are set */
	struct op_stream_counts counts;
};
/* Fills at most `max`, in stream order; returns how many there are. */
size_t op_registrations(struct op_launcher *l, struct op_registration *out, size_t max);

/*
 * Unregister every ACL allocator with a function `owns` says is its code
 * (with that registration's object)
 * (a plug-in about to be unloaded), so that the runtime never calls into
 * code that is gone. Returns how many; their runtime stream ids, blank
 * separated, in ids.
 */
size_t op_unregister_code(bool (*owns)(const void *arg, const void *obj, const void *code),
			  const void *arg, char *ids, size_t idslen);

/* The workspace the fallback gave: allocations so far. */
uint64_t op_fallback_allocs(struct op_launcher *l);

/* Everything launched so far. */
struct op_totals {
	uint64_t launched;          /* operators that ran */
	uint64_t acl_allocs;        /* workspace blocks from registered allocators */
	uint64_t fallback_allocs;   /* workspace blocks from the fallback */
};
void op_totals(struct op_launcher *l, struct op_totals *out);

#endif /* NPUMEMFS_OP_LAUNCH_H */
