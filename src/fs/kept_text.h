/*
 * kept_text.h - the text a stat rendered, kept briefly for the open that
 * follows it.
 *
 * Tools that trust st_size (tar, shutil.copy's sendfile, cmp -s,
 * filecmp) stat a file and then open and read it. A file made when it is
 * opened would be made twice, and the size the stat saw would not be the
 * size the read returns. So a stat renders the text and keeps it, and an
 * open of the same file by the same process within KEPT_TEXT_MS takes that
 * very text. Any other open renders afresh, so `watch cat` sees live
 * numbers.
 */
#ifndef NPUMEMFS_KEPT_TEXT_H
#define NPUMEMFS_KEPT_TEXT_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "base/sbuf.h"

#define KEPT_TEXT_MS 1000
#define KEPT_TEXT_MAX 64 /* texts kept at once; the oldest goes first */

struct kept_text;

struct kept_texts {
	pthread_mutex_t lock;
	struct kept_text *list; /* newest first */
	unsigned count;
};

void kept_texts_init(struct kept_texts *k);
void kept_texts_release(struct kept_texts *k);
/* Keep `text` (taken over: *text is left empty), whose content dates from
 * `made` (its mtime), for `path` as stat'ed by `pid`, replacing what was
 * kept for them; it is taken within KEPT_TEXT_MS of now. */
void kept_text_put(struct kept_texts *k, const char *path, pid_t pid,
		   struct sbuf *text, const struct timespec *made);
/* The size and time of the text kept for `path` and `pid`, if it is
 * younger than KEPT_TEXT_MS: a second stat before the open (path walks
 * stat every folder and the file) must not render again. 0, or -ENOENT. */
int kept_text_peek(struct kept_texts *k, const char *path, pid_t pid, size_t *size,
		   struct timespec *made);
/* Hand the text kept for `path` and `pid` over to `text`, if it is younger
 * than KEPT_TEXT_MS. 0, or -ENOENT. */
int kept_text_take(struct kept_texts *k, const char *path, pid_t pid,
		   struct sbuf *text, struct timespec *made);
/* Forget every text kept for `path`: a write changed it. */
void kept_text_drop(struct kept_texts *k, const char *path);

#endif /* NPUMEMFS_KEPT_TEXT_H */
