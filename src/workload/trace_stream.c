/*
 * trace_stream.c - a trace read, checked and handed out a chunk of events
 * at a time (trace.h), with the whole-trace parser's own line checks.
 *
 * A reading thread parses the next chunk while the caller replays the one
 * it has, so on two cores the reading hides behind the replay instead of
 * adding to it. Three sets of chunk arrays go round: the parser's, the
 * one waiting in the hand-over slot, and the caller's; the parser's
 * tables (IDs, streams) stay the reading thread's alone, and only counts
 * and a copy of the stream numbers cross over.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_parse_impl.h"

#define ERRLEN 1024

/* The arrays of one chunk, with their capacities. */
struct chunk {
	struct wl_event *events;
	size_t cap;
	uint64_t *op_ns;
	size_t op_cap;
	long *stream_number;
	size_t stream_cap;
};

/* A parsed chunk waiting for the caller. */
struct slot {
	struct chunk c;
	struct wl_trace counts; /* its counts; its arrays are in c */
	int rc;
	bool ended;
	bool full;
	char err[ERRLEN];
};

struct wl_trace_stream {
	struct parser p;        /* the reading thread's */
	struct trace_lines in;
	FILE *f;
	bool own_f;
	char parse_err[ERRLEN]; /* the parser's messages */
	pthread_t reader;
	bool reading;           /* the thread was started */
	pthread_mutex_t lock;
	pthread_cond_t moved;   /* the slot was filled or emptied, or stop */
	struct slot slot;
	bool stop;
	struct wl_trace view;   /* the caller's chunk; arrays of view_c */
	struct chunk view_c;
	bool done;              /* the caller got the end or an error */
	int done_rc;
	char done_err[ERRLEN];
};

/* Exchange the events and launch_op arrays of a and b. */
static void swap_events(struct chunk *a, struct chunk *b)
{
	struct chunk t = *a;

	a->events = b->events, a->cap = b->cap, a->op_ns = b->op_ns, a->op_cap = b->op_cap;
	b->events = t.events, b->cap = t.cap, b->op_ns = t.op_ns, b->op_cap = t.op_cap;
}

/* The parser's chunk into the slot: its arrays, its counts, and a copy of
 * the stream numbers (the parser keeps its own). */
static int fill_slot(struct wl_trace_stream *s)
{
	struct wl_trace *t = s->p.t;
	struct chunk *c = &s->slot.c;
	struct chunk parsed = { t->events, s->p.cap, t->op_ns, s->p.op_cap, NULL, 0 };

	if (t->nstreams > c->stream_cap) {
		long *n = realloc(c->stream_number, t->nstreams * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->stream_number = n;
		c->stream_cap = t->nstreams;
	}
	if (t->nstreams)
		memcpy(c->stream_number, t->stream_number, t->nstreams * sizeof(long));
	swap_events(&parsed, c);
	t->events = parsed.events, s->p.cap = parsed.cap;
	t->op_ns = parsed.op_ns, s->p.op_cap = parsed.op_cap;
	s->slot.counts = *t;
	return 0;
}

/* Wait for the slot to be free, then hand the chunk over: false if the
 * stream is closing. */
static bool hand_over(struct wl_trace_stream *s, int rc, bool ended)
{
	pthread_mutex_lock(&s->lock);
	while (s->slot.full && !s->stop)
		pthread_cond_wait(&s->moved, &s->lock);
	bool go = !s->stop;
	if (go) {
		wl_parse_fence();
		if (rc == 0 && (rc = fill_slot(s)) != 0)
			snprintf(s->parse_err, sizeof(s->parse_err), "%s: %s", s->p.name,
				 strerror(-rc));
		s->slot.rc = rc;
		s->slot.ended = ended;
		memcpy(s->slot.err, s->parse_err, sizeof(s->slot.err));
		s->slot.full = true;
		pthread_cond_broadcast(&s->moved);
	}
	pthread_mutex_unlock(&s->lock);
	return go;
}

/*
 * A file's chunks are small: the first lets the replay start at once, and
 * the three sets of arrays stay small (each fresh page costs a fault). A
 * pipe's first chunk is whole: the devices to start are the ones it names
 * (a file is read for them before the replay starts).
 */
enum { FILE_FIRST = WL_STREAM_CHUNK / 16, FILE_CHUNK = WL_STREAM_CHUNK / 4 };

static bool from_file(const struct wl_trace_stream *s)
{
	struct stat st;

	return fstat(fileno(s->f), &st) == 0 && S_ISREG(st.st_mode);
}

static void *read_ahead(void *arg)
{
	struct wl_trace_stream *s = arg;
	bool file = from_file(s);
	size_t max = file ? FILE_FIRST : WL_STREAM_CHUNK;
	size_t most = file ? FILE_CHUNK : WL_STREAM_CHUNK;
	bool ended = false;
	int rc = 0;

	for (; rc == 0 && !ended; max = max < most ? 2 * max : max) {
		s->p.t->nevents = 0;
		s->p.t->nops = 0; /* launch_op durations are the chunk's */
		rc = wl_parse_reserve(&s->p, max);
		rc = rc ? wl_parse_error(&s->p, rc) : wl_parse_some(&s->p, max, &ended);
		if (!hand_over(s, rc, ended))
			break;
	}
	return NULL;
}

static int start_reading(struct wl_trace_stream *s)
{
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->moved, NULL);
	s->view.name = s->p.t->name;
	int rc = -pthread_create(&s->reader, NULL, read_ahead, s);
	s->reading = rc == 0;
	if (s->reading) /* for top -H and perf -t */
		pthread_setname_np(s->reader, "trace-reader");
	return rc;
}

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
	s->p.err = s->parse_err;
	s->p.errlen = sizeof(s->parse_err);
	if (rc == 0 && (rc = start_reading(s)) != 0 && err)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	if (rc) {
		wl_trace_stream_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The chunk in the slot becomes the caller's; the slot is free again. */
static void take_slot(struct wl_trace_stream *s)
{
	struct slot *sl = &s->slot;
	struct wl_trace *v = &s->view;
	struct chunk c = s->view_c;

	swap_events(&s->view_c, &sl->c);
	s->view_c.stream_number = sl->c.stream_number;
	s->view_c.stream_cap = sl->c.stream_cap;
	sl->c.stream_number = c.stream_number;
	sl->c.stream_cap = c.stream_cap;
	*v = sl->counts;
	v->events = s->view_c.events;
	v->op_ns = s->view_c.op_ns;
	v->stream_number = s->view_c.stream_number;
	sl->full = false;
}

int wl_trace_stream_next(struct wl_trace_stream *s, bool *ended, char *err, size_t errlen)
{
	s->view.nevents = 0;
	s->view.nops = 0;
	if (!s->done) {
		pthread_mutex_lock(&s->lock);
		while (!s->slot.full)
			pthread_cond_wait(&s->moved, &s->lock);
		s->done_rc = s->slot.rc;
		s->done = s->slot.rc != 0 || s->slot.ended;
		*ended = s->slot.ended && s->slot.rc == 0;
		memcpy(s->done_err, s->slot.err, sizeof(s->done_err));
		if (s->slot.rc == 0)
			take_slot(s);
		else
			s->slot.full = false;
		pthread_cond_broadcast(&s->moved);
		pthread_mutex_unlock(&s->lock);
	} else {
		*ended = s->done_rc == 0;
	}
	if (s->done_rc && err)
		snprintf(err, errlen, "%s", s->done_err);
	return s->done_rc;
}

const struct wl_trace *wl_trace_stream_trace(const struct wl_trace_stream *s)
{
	return &s->view;
}

/* The device of a "device=D" option, or -1 if the field is not one. */
static int device_option(const char *f)
{
	int d = 0;

	if (strncmp(f, "device=", 7) != 0 || f[7] == '\0')
		return -1;
	for (f += 7; *f; f++) {
		if (*f < '0' || *f > '9' || d >= NPA_MAX_DEVICES)
			return -1;
		d = d * 10 + (*f - '0');
	}
	return d < NPA_MAX_DEVICES ? d : -1;
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

/* The lines of [base, end) that have "device=": their highest device.
 * Looked for by their '=' (memchr's pace; most lines have none), then the
 * word, then the whole line: an option before it ("stream=1 device=2")
 * has moved s past the line's start. */
static int region_max_device(const char *base, const char *end)
{
	const char *s = base, *eq, *from, *to;
	int max = 0;

	while ((eq = memchr(s, '=', (size_t)(end - s))) != NULL) {
		if (eq - base < 6 || memcmp(eq - 6, "device", 6) != 0) {
			s = eq + 1;
			continue;
		}
		from = memrchr(base, '\n', (size_t)(eq - base));
		from = from ? from + 1 : base;
		to = memchr(eq, '\n', (size_t)(end - eq));
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
	enum { BLOCK = 1 << 16 };
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
	mem_populate(buf, BLOCK);
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

static void stop_reading(struct wl_trace_stream *s)
{
	if (!s->reading)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->moved);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->reader, NULL);
	pthread_cond_destroy(&s->moved);
	pthread_mutex_destroy(&s->lock);
}

static void chunk_free(struct chunk *c)
{
	free(c->events);
	free(c->op_ns);
	free(c->stream_number);
}

void wl_trace_stream_close(struct wl_trace_stream *s)
{
	if (s == NULL)
		return;
	stop_reading(s);
	if (s->p.t != NULL) {
		wl_parse_end(&s->p);
		wl_trace_free(s->p.t);
	}
	chunk_free(&s->slot.c);
	chunk_free(&s->view_c);
	trace_lines_release(&s->in);
	if (s->own_f && s->f)
		fclose(s->f);
	free(s);
}
