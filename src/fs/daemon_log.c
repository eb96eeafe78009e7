/*
 * daemon_log.c - a bounded ring of timestamped lines.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon_log.h"

void dlog_init(struct dlog *log, bool echo)
{
	memset(log, 0, sizeof(*log));
	pthread_mutex_init(&log->lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &log->start);
	log->echo = echo;
}

void dlog_destroy(struct dlog *log)
{
	pthread_mutex_destroy(&log->lock);
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

void dlog_flatten(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

void dlog_printf(struct dlog *log, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&log->lock);
	unsigned slot = (log->head + log->count) % DLOG_LINES;
	if (log->count == DLOG_LINES)
		log->head = (log->head + 1) % DLOG_LINES;
	else
		log->count++;
	char *line = log->lines[slot];
	int stamp = snprintf(line, DLOG_LINE_MAX, "[%12.6f] ",
			     seconds_since(&log->start));
	if (stamp < 0 || stamp >= DLOG_LINE_MAX)
		stamp = 0;
	va_start(ap, fmt);
	vsnprintf(line + stamp, DLOG_LINE_MAX - (size_t)stamp, fmt, ap);
	va_end(ap);
	dlog_flatten(line + stamp);
	if (log->echo)
		fprintf(stderr, "npumemfs: %s\n", line + stamp);
	pthread_mutex_unlock(&log->lock);
}

int dlog_format(struct dlog *log, struct sbuf *out)
{
	pthread_mutex_lock(&log->lock);
	for (unsigned i = 0; i < log->count; i++)
		sbuf_printf(out, "%s\n", log->lines[(log->head + i) % DLOG_LINES]);
	pthread_mutex_unlock(&log->lock);
	return out->error;
}
