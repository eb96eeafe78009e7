/*
 * open_file.h - an open file of the mount, and the four ways a row's file
 * is served (the struct file_ops a row of tree.c names):
 *
 *   text_file  made by the row's show at open, a write goes to its store
 *   log_file   the daemon's log, read in place as it grows
 *   pipe_file  trace_pipe/deviceN, read as a stream that waits for more
 *   data_file  bytes that stay, with a size (the row's data_ops)
 *
 * fuse_ops.c calls a row's file_ops and never asks which of these it is.
 */
#ifndef NPUMEMFS_OPEN_FILE_H
#define NPUMEMFS_OPEN_FILE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "alloc/caching/caching_allocator.h"
#include "base/sbuf.h"
#include "tree.h"

struct trace_pipe;
struct fuse_pollhandle;

struct fh {
	struct target t;
	pid_t pid;               /* the process that opened it */
	pthread_mutex_t lock;    /* two threads may read one handle */
	struct sbuf out;         /* text: the rendering */
	struct timespec made;    /* when out's content last changed: the file's mtime */
	bool readable;           /* text, log: opened for reading */
	bool fresh;              /* text: rendered by open, not yet read */
	bool judged;             /* text: a write was accepted or refused: one per open */
	uint64_t log_start;      /* log: the offset its byte 0 stands for */
	struct trace_pipe *pipe; /* trace_pipe/deviceN: a stream, not a rendering */
	struct fuse_pollhandle *ph; /* a poll to tell once a read would not wait */
	LIST_ENTRY(fh) link;     /* in nmfs.open_files */
	bool listed;             /* in it: once opened whole */
};

/* What a stat reports of a file: its size and time (0: the row decides). */
struct seen {
	uint64_t size;
	struct timespec mtime;
};

/*
 * Under the list's lock, `fn` on the newest handle of `t` that process
 * `pid` opened for reading: an fstat (which the kernel sends by path)
 * speaks of that handle. Whether there was one.
 */
bool fh_of_opener(struct nmfs *d, const struct target *t, pid_t pid,
		  void (*fn)(struct nmfs *d, struct fh *fh, struct seen *s), struct seen *s);

/*
 * The allocator calls an operation on a file makes come from that file:
 * the memory history keeps the file's path in the mount and the operation
 * as their frame, so memory_viz names the tensor or control file behind
 * each block. A frame of its own per call: worker threads serve many files.
 */
struct file_origin {
	char path[PATH_MAX];
	struct npa_frame frame;
	const struct npa_frame *saved;
};

void origin_enter(struct nmfs *d, const struct target *t, const char *op,
		  struct file_origin *o);
void origin_leave(const struct file_origin *o);

extern const struct file_ops text_file;
extern const struct file_ops log_file;
extern const struct file_ops pipe_file;
extern const struct file_ops data_file;

#endif /* NPUMEMFS_OPEN_FILE_H */
