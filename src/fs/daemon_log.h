/*
 * daemon_log.h - the daemon's messages (mnt/log), newest last, bounded.
 *
 * A ring of lines, each stamped with the seconds since start-up, like
 * dmesg. Old lines fall off the front. Lines are also echoed to stderr,
 * which is the terminal with -f and /dev/null once daemonized.
 */
#ifndef NPUMEMFS_DAEMON_LOG_H
#define NPUMEMFS_DAEMON_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "base/sbuf.h"

#define DLOG_LINES 512
#define DLOG_LINE_MAX 1280 /* room for a whole OOM report or alloc_conf refusal */

struct dlog {
	pthread_mutex_t lock;
	struct timespec start;
	unsigned head;   /* index of the oldest line */
	unsigned count;
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
/* Every line held, oldest first. */
int dlog_format(struct dlog *log, struct sbuf *out);

#endif /* NPUMEMFS_DAEMON_LOG_H */
