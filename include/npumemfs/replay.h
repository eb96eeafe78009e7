/*
 * replay.h - allocation traces and their replay against an allocator.
 *
 * Trace format (one event a line, '#' starts a comment, fields separated by
 * blanks):
 *     alloc ID SIZE [stream=S] [device=D]    SIZE: bytes or KiB/MiB/GiB suffix
 *     free ID
 *     record_stream ID STREAM
 *     sync [STREAM]
 *     empty_cache
 *     reset_peak | reset_accumulated
 *     fraction F [device=D]
 * A whole trace is checked before any of it runs (unknown command, missing
 * or bad field, an ID allocated twice, a free of an unknown ID), so a bad
 * trace changes nothing. An OOM while replaying is not an error: upstream
 * counts it, the ID stays unallocated (a later free of it is skipped) and
 * the replay goes on.
 */
#ifndef NPUMEMFS_REPLAY_H
#define NPUMEMFS_REPLAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "caching_allocator.h"

#define WL_ERRLEN 512

enum wl_op {
	WL_ALLOC,
	WL_FREE,
	WL_RECORD_STREAM,
	WL_SYNC,
	WL_EMPTY_CACHE,
	WL_RESET_PEAK,
	WL_RESET_ACCUMULATED,
	WL_FRACTION,
};

struct wl_event {
	enum wl_op op;
	unsigned line;     /* line number in the trace file */
	int device;        /* alloc, fraction; -1 = all (sync, empty_cache) */
	int stream;        /* alloc, record_stream, sync (-1: all streams) */
	uint32_t slot;     /* dense index of the trace ID (alloc, free, record_stream) */
	uint64_t size;     /* alloc */
	double fraction;   /* fraction */
};

struct wl_trace {
	char *name;        /* file name used in messages ("-" for stdin) */
	struct wl_event *events;
	size_t nevents;
	uint32_t nslots;   /* number of distinct IDs */
	int max_device;    /* highest device named, 0 if none */
	int max_stream;    /* highest stream named */
};

/*
 * Parse a whole trace. On a bad line return -EINVAL with
 * "TRACE:LINE: reason" in err; -errno if the file cannot be read.
 */
int wl_trace_load(const char *path, struct wl_trace **out, char *err, size_t errlen);
int wl_trace_parse(FILE *f, const char *name, struct wl_trace **out, char *err,
		   size_t errlen);
void wl_trace_free(struct wl_trace *t);

struct wl_replay_counters {
	uint64_t events;      /* events carried out */
	uint64_t allocs;
	uint64_t frees;
	uint64_t ooms;        /* allocations refused by the allocator */
	uint64_t skipped_frees; /* frees of IDs whose allocation failed */
};

struct wl_replay;

/* A replay state (ID table, streams) driving allocator `a`. */
int wl_replay_new(struct npa *a, const struct wl_trace *t, struct wl_replay **out);
/*
 * Run events [from, to) of the trace. Stops early, returning -ECANCELED,
 * when *stop becomes true; progress counts events done. Returns 0 or a
 * negative errno with "TRACE:LINE: reason" in err.
 */
int wl_replay_run(struct wl_replay *r, size_t from, size_t to,
		  const atomic_bool *stop, char *err, size_t errlen);
/* Free every allocation the replay still holds (end of a loop). */
void wl_replay_release_all(struct wl_replay *r);
void wl_replay_counters(const struct wl_replay *r, struct wl_replay_counters *out);
void wl_replay_free(struct wl_replay *r);

#endif /* NPUMEMFS_REPLAY_H */
