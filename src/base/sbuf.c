/*
 * sbuf.c - a growable text buffer, the output of every report.
 *
 * Errors are sticky: after the first failed growth every later append is a
 * no-op returning the same -ENOMEM, so a report can be written straight
 * through and checked once at the end.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

#define SBUF_MIN_CAP 256

void sbuf_init(struct sbuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->error = 0;
}

void sbuf_release(struct sbuf *b)
{
	free(b->data);
	sbuf_init(b);
}

/* Keeps the memory for the next report; clears a past error. */
void sbuf_reset(struct sbuf *b)
{
	b->len = 0;
	b->error = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* Room for `extra` more bytes plus the terminating NUL. */
static int sbuf_reserve(struct sbuf *b, size_t extra)
{
	if (b->error)
		return b->error;
	if (extra < b->cap - b->len)
		return 0;
	if (extra >= SIZE_MAX / 2 - b->len) {
		b->error = -ENOMEM;
		return b->error;
	}
	size_t cap = b->cap ? b->cap : SBUF_MIN_CAP;
	while (cap <= b->len + extra)
		cap *= 2;
	char *data = realloc(b->data, cap);
	if (data == NULL) {
		b->error = -ENOMEM;
		return b->error;
	}
	b->data = data;
	b->cap = cap;
	return 0;
}

int sbuf_append(struct sbuf *b, const char *s, size_t n)
{
	int rc = sbuf_reserve(b, n);
	if (rc)
		return rc;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int sbuf_puts(struct sbuf *b, const char *s)
{
	return sbuf_append(b, s, strlen(s));
}

/*
 * Straight into the room left, and again after growing only when the text
 * did not fit: formatting into a 1-byte probe first cost as much as the
 * text itself (glibc flushes its overflow buffer every few bytes).
 */
int sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	if (b->error)
		return b->error;
	va_list again;
	va_copy(again, ap);
	size_t room = b->cap - b->len;
	int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
	int rc = 0;

	if (n < 0)
		rc = b->error = -EINVAL; /* a format the C library cannot render */
	else if ((size_t)n >= room && (rc = sbuf_reserve(b, (size_t)n)) == 0)
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
	if (rc == 0)
		b->len += (size_t)n;
	else if (b->data != NULL)
		b->data[b->len] = '\0'; /* the cut-off text is not part of it */
	va_end(again);
	return rc;
}

int sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = sbuf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int sbuf_copy(const struct sbuf *b, char *dst, size_t dstlen)
{
	bool fits = b->len < dstlen;
	size_t n = fits ? b->len : dstlen ? dstlen - 1 : 0;

	if (dstlen) {
		if (n)
			memcpy(dst, b->data, n);
		dst[n] = '\0';
	}
	if (b->error)
		return b->error;
	if (!fits)
		return -ENOSPC;
	return b->len > INT_MAX ? -EOVERFLOW : (int)b->len;
}
