/*
 * trace_stream.c - a trace read, checked and handed out a chunk of events
 * at a time (replay.h), with the whole-trace parser's own line checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_parse_impl.h"

struct wl_trace_stream {
	struct parser p;
	struct trace_lines in;
	FILE *f;
	bool own_f;
	bool ended;
};

int wl_trace_stream_open(const char *path, struct wl_trace_stream **out, char *err,
			 size_t errlen)
{
	struct wl_trace_stream *s = calloc(1, sizeof(*s));
	int rc;

	if (s == NULL)
		return -ENOMEM;
	s->own_f = strcmp(path, "-") != 0;
	s->f = s->own_f ? fopen(path, "r") : stdin;
	if (s->f == NULL) {
		rc = -errno;
		if (err)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(s);
		return rc;
	}
	rc = trace_lines_init(&s->in, s->f);
	if (rc == 0)
		rc = wl_parse_begin(&s->p, path, &s->in, true, err, errlen);
	else if (err)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	if (rc) {
		wl_trace_stream_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int wl_trace_stream_next(struct wl_trace_stream *s, bool *ended, char *err, size_t errlen)
{
	int rc;

	s->p.err = err;
	s->p.errlen = errlen;
	s->p.t->nevents = 0;
	s->p.t->nops = 0; /* launch_op durations are the chunk's */
	*ended = s->ended;
	if (s->ended)
		return 0;
	rc = wl_parse_some(&s->p, WL_STREAM_CHUNK, &s->ended);
	*ended = s->ended;
	return rc;
}

const struct wl_trace *wl_trace_stream_trace(const struct wl_trace_stream *s)
{
	return s->p.t;
}

/* The device of a "device=D" option, or -1 if the field is not one. */
static int device_option(const char *f)
{
	int d = 0;

	if (strncmp(f, "device=", 7) != 0 || f[7] == '\0')
		return -1;
	for (f += 7; *f; f++) {
		if (*f < '0' || *f > '9' || d >= WL_MAX_DEVICES)
			return -1;
		d = d * 10 + (*f - '0');
	}
	return d < WL_MAX_DEVICES ? d : -1;
}

/*
 * The device options of one line. Options come after a command's first
 * field, so a field "device=D" that is an ID or a name (always the first
 * after the command) is not taken for one; a line the parser refuses
 * stops the replay anyway.
 */
static int line_max_device(const char *s, size_t len)
{
	char line[WL_LINE_MAX + 1], *f[WL_MAX_FIELDS];
	int nf, max = 0;

	if (len > WL_LINE_MAX)
		return 0;
	memcpy(line, s, len);
	line[len] = '\0';
	nf = wl_parse_split(line, f);
	for (int i = 2; i < nf; i++) {
		int d = device_option(f[i]);
		if (d > max)
			max = d;
	}
	return max;
}

/* The lines of [s, end) that have "device=": their highest device. */
static int region_max_device(const char *s, const char *end)
{
	const char *hit, *from, *to;
	int max = 0;

	while ((hit = memmem(s, (size_t)(end - s), "device=", 7)) != NULL) {
		from = memrchr(s, '\n', (size_t)(hit - s));
		from = from ? from + 1 : s;
		to = memchr(hit, '\n', (size_t)(end - hit));
		to = to ? to : end;
		int d = line_max_device(from, (size_t)(to - from));
		if (d > max)
			max = d;
		s = to;
	}
	return max;
}

int wl_trace_stream_max_device(const struct wl_trace_stream *s, int *out)
{
	enum { BLOCK = 1 << 20 };
	char *buf;
	size_t have = 0, n;
	FILE *f;
	int max = 0;

	if (trace_lines_reopen(&s->in, &f) != 0)
		return -ESPIPE;
	if ((buf = malloc(BLOCK)) == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	/* Whole lines a block at a time; what follows the last newline is
	 * carried to the next (a line longer than a block is refused anyway). */
	while ((n = fread(buf + have, 1, BLOCK - have, f)) > 0 || have > 0) {
		char *end = buf + have + n, *last = n ? memrchr(buf, '\n', have + n) : NULL;
		char *cut = last ? last + 1 : end;
		int d = region_max_device(buf, cut);
		if (d > max)
			max = d;
		if (n == 0 || (last == NULL && have + n == BLOCK))
			cut = end; /* the end of the file, or a line too long to hold */
		have = (size_t)(end - cut);
		memmove(buf, cut, have);
		if (n == 0)
			break;
	}
	free(buf);
	fclose(f);
	*out = max;
	return 0;
}

void wl_trace_stream_close(struct wl_trace_stream *s)
{
	if (s == NULL)
		return;
	if (s->p.t != NULL) {
		wl_parse_end(&s->p);
		wl_trace_free(s->p.t);
	}
	trace_lines_release(&s->in);
	if (s->own_f && s->f)
		fclose(s->f);
	free(s);
}
