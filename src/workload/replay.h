/*
 * replay.h - the replay of an allocation trace (trace.h) against an
 * allocator.
 *
 * An OOM while replaying is not an error: the allocator counts it, the ID
 * stays unallocated (a later free or record_stream of it is skipped) and
 * the replay goes on.
 *
 * Replay: the events go to a target (wl_target): the caching allocator
 * itself, or the allocator switch, so that a replay allocates through a
 * plug-in when one is current. Device D is the target's device D; stream S > 0 is an
 * aclrtStream created on first use for (D, S); stream 0 is the default
 * stream. A free launches open-ended work on every stream the ID was
 * record_stream'ed to, just before the allocator records its events there,
 * so the event recorded at the free completes at the first `sync S` (or
 * bare `sync`) after the free, whatever syncs came before it, or at a
 * `complete ID` line: the work the free's events wait for is done there
 * (as a snapshot's free_completed says), on those streams only up to the
 * free. complete names an ID freed after record_stream and not yet
 * completed or allocated again.
 */
#ifndef NPUMEMFS_REPLAY_H
#define NPUMEMFS_REPLAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "alloc/allocator.h"
#include "alloc/caching/caching_allocator.h"
#include "trace.h"

struct wl_replay_counters {
	uint64_t events;        /* events carried out, over every run */
	uint64_t allocs;        /* successful allocations */
	uint64_t frees;
	uint64_t ooms;          /* allocations refused by the allocator */
	uint64_t skipped_frees; /* frees of IDs whose allocation failed */
	uint64_t skipped_record_streams; /* record_stream or erase_stream of such IDs */
	uint64_t pins;          /* successful pins */
	uint64_t pin_ooms;      /* pins the host allocator refused */
	uint64_t copies;        /* copies of live pins */
	uint64_t pinned_requested;      /* bytes the live pins asked for */
	uint64_t pinned_requested_peak; /* its peak, over every run */
	size_t position;        /* index of the next event to run */
};

struct wl_replay;

/* What a pin line got from the pinned host allocator. */
struct wl_pin_served {
	uint32_t line;        /* the pin line in the trace */
	uint64_t size;        /* the bytes it asked for */
	uint64_t block;       /* npa_host_block_serial: 0 if refused, of size 0,
			       * or under the expandable variant */
	uint64_t block_size;  /* 0 if refused or of size 0 */
	bool fresh;           /* the allocator made the block for this pin */
	bool refused;         /* the host could not hold it (counted in pin_ooms) */
};

typedef void (*wl_pin_fn)(void *arg, const struct wl_pin_served *pin);

/*
 * A replay is driven by one thread at a time: run, counters, release_all
 * and free are not meant to race each other (read the counters between
 * chunks, as a daemon running a trace in chunks would).
 *
 * A replay state (ID table, streams) driving caching allocator `a`. Fails with
 * -EINVAL and "TRACE:LINE: device 3 does not exist (2 devices)" if the
 * trace names a device the allocator does not have, or -ENOMEM and
 * "TRACE: Cannot allocate memory". The trace must outlive the replay.
 */
int wl_replay_new(struct npa *a, const struct wl_trace *t, struct wl_replay **out,
		  char *err, size_t errlen);
/* The same over any target (copied; its ctx must outlive the replay). */
int wl_replay_new_target(struct allocator target, const struct wl_trace *t,
			 struct wl_replay **out, char *err, size_t errlen);
/*
 * The trace grew: a streamed trace's next chunk is in it. Make room for
 * its new IDs, streams, graphs, pools and pinned IDs, and check that the
 * target has every device the chunk names (the message as
 * wl_replay_new's). Then run the chunk's events from 0. After a failure
 * the chunk must not run: the replay can be followed again, released and
 * freed.
 */
int wl_replay_follow(struct wl_replay *r, char *err, size_t errlen);
/*
 * Check the target (npa_check) on every device the trace uses after each
 * event (slow); a target without check (the switch) is not checked.
 */
void wl_replay_set_check(struct wl_replay *r, bool check);
/* fn(arg, pin) after each pin line, in trace order; NULL fn: none. */
void wl_replay_on_pin(struct wl_replay *r, wl_pin_fn fn, void *arg);
/*
 * Run events [from, to) of the trace (to is clamped to the trace's end).
 * Chunks must follow each other in order; to run the trace again from 0,
 * call wl_replay_release_all first.
 * Stops early, returning -ECANCELED, when *stop (may be NULL) becomes true;
 * counters.position says where it stopped. Returns 0, or a negative errno
 * with "TRACE:LINE: reason" in err for an allocator or runtime failure
 * other than OOM.
 */
int wl_replay_run(struct wl_replay *r, size_t from, size_t to,
		  const atomic_bool *stop, char *err, size_t errlen);
/*
 * Free every allocation the replay still holds, then end the captures
 * and scopes still under way, free the graphs (giving their pools' uses
 * back) and destroy the mempools not released (end of a loop: a run from
 * 0 takes new pool handles).
 */
void wl_replay_release_all(struct wl_replay *r);
void wl_replay_counters(const struct wl_replay *r, struct wl_replay_counters *out);
/* Destroys the streams; frees nothing in the allocator (release_all first),
 * but a graph release_all did not free is freed here (it names a stream). */
void wl_replay_free(struct wl_replay *r);

#endif /* NPUMEMFS_REPLAY_H */
