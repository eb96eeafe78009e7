/*
 * trace_lines.c - the lines of a trace file, read in large blocks
 * (trace_lines.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/mem_populate.h"
#include "trace.h"
#include "trace_lines.h"

/* Read this much at a time; the buffer also holds a whole longest line.
 * 64 KiB, not more: every later block reuses these pages, made present
 * at once rather than a fault each on the first read (mem_populate.h). */
#define BLOCK (1u << 16)

int trace_lines_init(struct trace_lines *r, FILE *f)
{
	*r = (struct trace_lines){ .f = f, .cap = BLOCK + WL_LINE_MAX + 2 };
	r->buf = malloc(r->cap);
	if (r->buf == NULL)
		return -ENOMEM;
	mem_populate(r->buf, r->cap);
	return 0;
}

void trace_lines_release(struct trace_lines *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* Move what is left to the front and read more after it: -1 on an error.
 * The new bytes are looked at for a NUL once, here, not line by line. */
static int refill(struct trace_lines *r)
{
	size_t left = r->end - r->pos, n;
	bool none = r->nul == r->end;

	memmove(r->buf, r->buf + r->pos, left);
	r->nul = none ? left : r->nul - r->pos;
	r->pos = 0;
	r->end = left;
	n = fread(r->buf + left, 1, r->cap - 1 - left, r->f);
	r->end += n;
	if (none) {
		const char *z = memchr(r->buf + left, '\0', n);
		r->nul = z ? (size_t)(z - r->buf) : r->end;
	}
	if (n == 0) {
		if (ferror(r->f))
			return -1;
		r->eof = true;
	}
	return 0;
}

/*
 * As a reader taking one byte at a time would see it: a NUL among the
 * first WL_LINE_MAX + 1 bytes before the newline is a NUL line; past that,
 * a line without its newline is too long.
 */
ssize_t trace_lines_next(struct trace_lines *r, char **line)
{
	char *s, *nl;
	size_t len;

	for (;;) {
		s = r->buf + r->pos;
		nl = memchr(s, '\n', r->end - r->pos);
		if (nl != NULL || r->eof || r->end - r->pos > WL_LINE_MAX)
			break;
		if (refill(r) != 0)
			return TRACE_LINE_IO;
	}
	len = nl ? (size_t)(nl - s) : r->end - r->pos;
	if (len == 0 && nl == NULL)
		return TRACE_LINE_EOF;
	/* A line with a NUL is never consumed, so r->nul stays at or after pos. */
	if (r->nul < r->pos + (len < WL_LINE_MAX + 1 ? len : WL_LINE_MAX + 1))
		return TRACE_LINE_NUL;
	if (len > WL_LINE_MAX)
		return TRACE_LINE_TOO_LONG;
	s[len] = '\0';
	r->pos += len + (nl != NULL);
	*line = s;
	return (ssize_t)len;
}

int trace_lines_reopen(const struct trace_lines *r, FILE **f)
{
	char path[64];
	struct stat st;
	int fd = fileno(r->f);

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -ESPIPE;
	/* A new open file description: its offset is its own. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	*f = fopen(path, "r");
	return *f ? 0 : -ESPIPE;
}
