/*
 * text_times.h - when the text of each generated file last changed.
 *
 * tar checks that a file's times did not move while it read it, rsync -a
 * skips a file whose size and mtime match its copy: both trust mtime to
 * say when the content changed. A generated text has no store to stamp,
 * and many views draw on more than one source (stats, pools, graphs,
 * settings), so the rule is the content itself: each rendering of a path
 * is compared, by a 64-bit hash and its length, with the last one seen,
 * and keeps that one's time when they are equal. So a file reads the same
 * time until its text differs, and then the time the daemon first made
 * the new text.
 */
#ifndef NPUMEMFS_TEXT_TIMES_H
#define NPUMEMFS_TEXT_TIMES_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* Paths remembered at once; the oldest is forgotten first (its next
 * rendering then counts as a change). */
#define TEXT_TIMES_MAX 4096

struct text_time; /* one path's: hash, length and time of its last text */

/* A hash table by path (uthash), oldest first, and its lock. */
struct text_times {
	struct text_time *by_path;
	pthread_mutex_t lock;
};

void text_times_init(struct text_times *tt);
void text_times_release(struct text_times *tt);
/* When the `len` bytes of `text` became the content of `path`: the time
 * kept for them, or now when they differ from the last ones (or no memory
 * is left to keep them). */
void text_time(struct text_times *tt, const char *path, const char *text, size_t len,
	       struct timespec *when);

#endif /* NPUMEMFS_TEXT_TIMES_H */
