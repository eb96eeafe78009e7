/*
 * replay_impl.h - a replay's state, shared by replay.c (allocations,
 * streams, the loop) and replay_pools.c (graphs and mempools).
 */
#ifndef NPUMEMFS_REPLAY_IMPL_H
#define NPUMEMFS_REPLAY_IMPL_H

#include <stdbool.h>

#include "graph_driver.h"
#include "op_launch.h"
#include "replay.h"

/* A record_stream of a live ID: a stream its free launches work on. */
struct wl_stream_use {
	int32_t stream;
	int16_t device;
	uint32_t prev;   /* 1 + the ID's record_stream before it, 0 none */
};

/* Make the array *a of *cap elements of `size` hold `need`, zeroing what
 * is new: 0 or -ENOMEM. */
int wl_replay_grow(void *a, uint32_t *cap, uint32_t need, size_t size);

/*
 * The current device is per thread and the allocator sets it too, so it is
 * set before every call that depends on it rather than remembered.
 */
struct wl_replay {
	struct allocator a;   /* what the events go to */
	const struct wl_trace *t;
	void **ptr;           /* [nslots]: NULL when not live (or size 0) */
	/* [nstreams * NPA_MAX_DEVICES]: (dense stream, device); index 0
	 * (default) unused */
	aclrtStream *streams;
	/* [nslots] when the trace has complete lines: the events recorded at
	 * the ID's last free behind its open work, NULL-terminated, until
	 * its complete; else NULL. */
	aclrtEvent **done;
	/* [nslots]: 1 + the ID's latest record_stream in uses, 0 none */
	uint32_t *last_use;
	struct wl_stream_use *uses;   /* the record_streams of live IDs */
	uint32_t nuses, free_use;     /* free_use: 1 + a free one, 0 none */
	/* What the arrays above and below have room for. */
	uint32_t slot_cap, stream_cap, graph_cap, pool_cap, pin_cap;
	int ndevices;         /* devices the trace uses: max_device + 1 */
	bool check;
	struct wl_replay_counters c;
	char msg[NPA_ERRLEN]; /* what the allocator said, before the prefix */
	struct npa *npa;      /* the caching allocator the graphs and pools are in */
	struct npa_graph **graphs;     /* [ngraphs], made at their first capture */
	/* [npools]: a trace's pool names, each a handle pool=P takes and
	 * the MemPool mempool_create M makes */
	struct wl_mempool *pools;
	struct op_launcher *launcher;  /* launch_op's: NULL until the first one */
	bool own_launcher;             /* made here (else the caller's) */
	void **pinned;                 /* [npins]: NULL when not pinned (or size 0) */
	uint64_t *pinned_size;         /* [npins]: the size each live pin asked for */
	wl_pin_fn on_pin;              /* wl_replay_on_pin's */
	void *on_pin_arg;
	uint64_t newest_block;         /* the highest block serial a pin got */
	/* wl_op_name of each op, at hand for each event's frame. */
	const char *op_names[WL_NOPS];
};

/* The stream of (device, dense index) made so far, NULL if none. */
static inline aclrtStream *wl_replay_stream_at(const struct wl_replay *r, int device,
					       int32_t index)
{
	return &r->streams[(size_t)index * NPA_MAX_DEVICES + (size_t)device];
}

/* "TRACE:LINE: what" into err; returns rc. */
int wl_replay_fail(struct wl_replay *r, const struct wl_event *ev, int rc, char *err,
		   size_t errlen, const char *what);
/* The stream of (device, dense index), made on first use (NULL: default);
 * 0 or -EIO with the runtime's error in err. */
int wl_replay_stream(struct wl_replay *r, const struct wl_event *ev, int device,
		     int32_t index, aclrtStream *out, char *err, size_t errlen);

/* Graph and mempool events (replay_pools.c). */
/* Room for the trace's graphs and pools so far. */
int wl_replay_pools_grow(struct wl_replay *r);
int wl_replay_pool_event(struct wl_replay *r, const struct wl_event *ev, char *err,
			 size_t errlen);
/* End of a loop: free the graphs, destroy the live mempools, forget handles. */
void wl_replay_pools_release(struct wl_replay *r);
void wl_replay_pools_free(struct wl_replay *r);

/* launch_op events and their workspace (replay_ops.c). */
int wl_replay_launch_op(struct wl_replay *r, const struct wl_event *ev, char *err,
			size_t errlen);
/* After a sync: free the workspace of the operators that completed. */
void wl_replay_reap_ops(struct wl_replay *r);
/* End of a loop: every operator of the replay's streams completes, and
 * its workspace is freed. */
void wl_replay_ops_release(struct wl_replay *r);
void wl_replay_ops_free(struct wl_replay *r);
/* Pinned host events (replay_host.c). */
/* Room for the trace's pinned IDs so far. */
int wl_replay_host_grow(struct wl_replay *r);
int wl_replay_host_event(struct wl_replay *r, const struct wl_event *ev, char *err,
			 size_t errlen);
/* End of a loop: unpin every pinned ID still live. */
void wl_replay_host_release(struct wl_replay *r);
void wl_replay_host_free(struct wl_replay *r);

#endif /* NPUMEMFS_REPLAY_IMPL_H */
