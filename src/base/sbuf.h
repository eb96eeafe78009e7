/*
 * sbuf.h - a growable text buffer, the output of every report.
 */
#ifndef NPUMEMFS_SBUF_H
#define NPUMEMFS_SBUF_H

#include <stdarg.h>
#include <stddef.h>

struct sbuf {
	char *data; /* NUL-terminated while len < cap */
	size_t len;
	size_t cap;
	int error;  /* first -ENOMEM, sticky */
};

void sbuf_init(struct sbuf *b);
void sbuf_release(struct sbuf *b);
void sbuf_reset(struct sbuf *b);
int sbuf_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap);
int sbuf_append(struct sbuf *b, const char *s, size_t n);
int sbuf_puts(struct sbuf *b, const char *s);
/*
 * The text into `dst` of `dstlen` bytes, cut to fit and NUL-terminated
 * (nothing is written when dstlen is 0): for callers that hand out a fixed
 * buffer. Returns the text's length, -ENOSPC when it was cut, or the
 * buffer's error.
 */
int sbuf_copy(const struct sbuf *b, char *dst, size_t dstlen);

#endif /* NPUMEMFS_SBUF_H */
