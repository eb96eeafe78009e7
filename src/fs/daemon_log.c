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
	clock_gettime(CLOCK_REALTIME, &log->changed);
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
	if (log->count == DLOG_LINES) {
		log->first += strlen(log->lines[log->head]) + 1;
		log->head = (log->head + 1) % DLOG_LINES;
	} else {
		log->count++;
	}
	char *line = log->lines[slot];
	int stamp = snprintf(line, DLOG_LINE_MAX, "[%12.6f] ",
			     seconds_since(&log->start));
	if (stamp < 0 || stamp >= DLOG_LINE_MAX)
		stamp = 0;
	va_start(ap, fmt);
	vsnprintf(line + stamp, DLOG_LINE_MAX - (size_t)stamp, fmt, ap);
	va_end(ap);
	dlog_flatten(line + stamp);
	log->end += strlen(line) + 1;
	clock_gettime(CLOCK_REALTIME, &log->changed);
	if (log->echo)
		fprintf(stderr, "npumemfs: %s\n", line + stamp);
	pthread_mutex_unlock(&log->lock);
}

void dlog_echo_held(struct dlog *log)
{
	pthread_mutex_lock(&log->lock);
	for (unsigned i = 0; log->echo && i < log->count; i++) {
		const char *line = log->lines[(log->head + i) % DLOG_LINES];
		const char *msg = strstr(line, "] ");
		fprintf(stderr, "npumemfs: %s\n", msg ? msg + 2 : line);
	}
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

void dlog_extent(struct dlog *log, uint64_t *first, uint64_t *end, struct timespec *changed)
{
	pthread_mutex_lock(&log->lock);
	*first = log->first;
	*end = log->end;
	if (changed)
		*changed = log->changed;
	pthread_mutex_unlock(&log->lock);
}

/* Copy what of one line (its newline included) lies at or after *off. */
static size_t copy_line(const char *line, uint64_t start, uint64_t *off, char *buf,
			size_t size)
{
	size_t len = strlen(line) + 1, skip = (size_t)(*off - start);
	size_t n = len - skip < size ? len - skip : size;

	for (size_t i = 0; i < n; i++)
		buf[i] = skip + i == len - 1 ? '\n' : line[skip + i];
	*off += n;
	return n;
}

size_t dlog_read(struct dlog *log, uint64_t *off, char *buf, size_t size)
{
	size_t done = 0;

	pthread_mutex_lock(&log->lock);
	if (*off < log->first)
		*off = log->first;
	uint64_t start = log->first;
	for (unsigned i = 0; i < log->count && done < size; i++) {
		const char *line = log->lines[(log->head + i) % DLOG_LINES];
		uint64_t next = start + strlen(line) + 1;
		if (*off < next)
			done += copy_line(line, start, off, buf + done, size - done);
		start = next;
	}
	pthread_mutex_unlock(&log->lock);
	return done;
}
