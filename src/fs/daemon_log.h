/*
 * daemon_log.h - the daemon's messages (mnt/log), newest last, bounded.
 *
 * A ring of lines, each stamped with the seconds since start-up, like
 * dmesg. Old lines fall off the front. Lines are also echoed to stderr,
 * which is the terminal with -f and a log file once daemonized.
 *
 * As a file the log only grows, so that `tail -f` follows it: every byte
 * ever logged has its offset (the first line starts at 0), and a line
 * that falls off the ring takes its offsets with it.
 */
#ifndef NPUMEMFS_DAEMON_LOG_H
#define NPUMEMFS_DAEMON_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/sbuf.h"

#define DLOG_LINES 512
#define DLOG_LINE_MAX 1280 /* room for a whole OOM report or alloc_conf refusal */

struct dlog {
	pthread_mutex_t lock;
	struct timespec start;
	unsigned head;   /* index of the oldest line */
	unsigned count;
	uint64_t first;  /* offset of the oldest line held */
	uint64_t end;    /* offset after the newest line */
	struct timespec changed; /* when the newest line came: the file's mtime */
	bool echo;
	char lines[DLOG_LINES][DLOG_LINE_MAX];
};

void dlog_init(struct dlog *log, bool echo);
void dlog_destroy(struct dlog *log);
/*
 * Control characters (newlines, CR, escapes) in `s` become '?': messages
 * quote what users wrote, and one message must stay one line that nobody
 * can forge a log line or a terminal escape into.
 */
void dlog_flatten(char *s);
void dlog_printf(struct dlog *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Echo every line held again, oldest first: stderr has changed (a
 * daemonized process's log file) and should tell the whole story. */
void dlog_echo_held(struct dlog *log);
/* Every line held, oldest first. */
int dlog_format(struct dlog *log, struct sbuf *out);
/* The offsets of the bytes held: [*first, *end), and, unless `changed` is
 * NULL, when the newest line came. */
void dlog_extent(struct dlog *log, uint64_t *first, uint64_t *end, struct timespec *changed);
/*
 * Up to `size` bytes from offset *off; an offset whose line fell off the
 * ring is moved up to the oldest line held. Bytes copied, 0 at the end.
 */
size_t dlog_read(struct dlog *log, uint64_t *off, char *buf, size_t size);

#endif /* NPUMEMFS_DAEMON_LOG_H */
