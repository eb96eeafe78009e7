/*
 * trace_lines.h - the lines of a trace file, read in large blocks.
 *
 * A line is handed out in place, in the reader's buffer, its newline
 * replaced by a NUL; nothing is allocated per line. The limits are the
 * trace format's: a line longer than WL_LINE_MAX bytes, or one with a NUL
 * byte, is refused (a 50 GiB file without a newline never grows the
 * reader: it stops at the limit).
 */
#ifndef NPUMEMFS_TRACE_LINES_H
#define NPUMEMFS_TRACE_LINES_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "trace.h"

enum { TRACE_LINE_EOF = -1, TRACE_LINE_TOO_LONG = -2, TRACE_LINE_NUL = -3,
       TRACE_LINE_IO = -4 };

struct trace_lines {
	FILE *f;
	char *buf;
	size_t cap, pos, end;
	size_t nul;  /* the first NUL byte at or after pos, or end if none */
	bool eof;
};

/* 0, or -ENOMEM. The reader does not own `f`. */
int trace_lines_init(struct trace_lines *r, FILE *f);
void trace_lines_release(struct trace_lines *r);
/* The next line in *line (NUL-terminated, no newline): its length, or one
 * of TRACE_LINE_*. */
ssize_t trace_lines_next(struct trace_lines *r, char **line);

/*
 * The same, inline for a whole line already in the buffer with no NUL
 * (nearly every line); anything else goes to trace_lines_next.
 */
static inline ssize_t trace_lines_next_fast(struct trace_lines *r, char **line)
{
	char *s = r->buf + r->pos;
	char *nl = memchr(s, '\n', r->end - r->pos);
	size_t len = nl ? (size_t)(nl - s) : 0;

	if (nl == NULL || len > WL_LINE_MAX || r->nul < r->pos + len)
		return trace_lines_next(r, line);
	*nl = '\0';
	r->pos += len + 1;
	*line = s;
	return (ssize_t)len;
}
/*
 * A second reader of the same file from its start, independent of the
 * first (for reading a trace again): 0 with *f open, or -ESPIPE if the
 * file is not a regular file (a pipe cannot be read twice).
 */
int trace_lines_reopen(const struct trace_lines *r, FILE **f);

#endif /* NPUMEMFS_TRACE_LINES_H */
