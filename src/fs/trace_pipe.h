/*
 * trace_pipe.h - trace_pipe/deviceN: the memory history as JSON lines,
 * read like tracefs trace_pipe. A reader starts at the oldest entry the
 * ring still holds and, once it has read everything, waits for new
 * entries. With recording off none can come, so a read that would wait
 * fails with ENODATA instead, as soon as recording is off.
 *
 * A waiting read holds one of libfuse's few worker threads, so at most
 * TRACE_PIPE_WAITERS reads wait at once (the next gets EBUSY). With
 * allow_other no user may take them all: other users together hold at
 * most TRACE_PIPE_OTHERS, one each, so the mount's owner always has the
 * rest; a wait
 * ends when an entry arrives, the request is interrupted (EINTR), or the
 * session is ending (end of file), so unmounting never waits on a reader.
 * O_NONBLOCK readers get EAGAIN instead of waiting.
 *
 * Bytes read are consumed, as in trace_pipe, except that a reader may seek
 * back into what its last read returned and read it again: head -n 1
 * reads a block, prints one line and gives the rest back with lseek.
 */
#ifndef NPUMEMFS_TRACE_PIPE_H
#define NPUMEMFS_TRACE_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/caching/caching_allocator.h"
#include "base/sbuf.h"

#define TRACE_PIPE_WAITERS 4
#define TRACE_PIPE_OTHERS 2

/* One per process: who waits now. */
struct trace_pipe_limit {
	pthread_mutex_t lock;
	uid_t owner;
	int owner_waiting;
	int others_waiting;
	uid_t other[TRACE_PIPE_OTHERS]; /* [0, others_waiting): one wait each */
};

void trace_pipe_limit_init(struct trace_pipe_limit *lim, uid_t owner);

/* One per open file. */
struct trace_pipe {
	int device;
	uint64_t next;      /* number of the next entry to format */
	struct sbuf text;   /* formatted, not yet read */
	size_t sent;        /* bytes of text already read */
	uint64_t base;      /* the file offset of text's first byte */
	bool told_off;      /* the log said recording is off, once per reader */
};

/* What a wait checks between polls; fs passes FUSE's view of the request. */
struct trace_pipe_wait {
	bool (*interrupted)(void *arg);
	bool (*ending)(void *arg);
	void *arg;
};

void trace_pipe_init(struct trace_pipe *p, int device);
void trace_pipe_release(struct trace_pipe *p);
/*
 * Up to `size` bytes of whole or partial lines into buf, from file offset
 * `off` when that is within the text last formatted, else from where the
 * last read ended; waits for entries unless nonblock. Bytes read, 0 at
 * session end, -EAGAIN, -EINTR, -EBUSY (too many waiting), -ENODATA
 * (recording is off) or -ENOMEM.
 */
ssize_t trace_pipe_read(struct trace_pipe *p, struct npa *a, struct trace_pipe_limit *lim,
			uid_t uid, const struct trace_pipe_wait *w, bool nonblock,
			uint64_t off, char *buf, size_t size);
/* Whether a read now would return at once (for poll). */
bool trace_pipe_ready(struct trace_pipe *p, struct npa *a);

#endif /* NPUMEMFS_TRACE_PIPE_H */
