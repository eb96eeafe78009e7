/*
 * trace_parse.c - reading and checking a whole allocation trace.
 *
 * Everything a replay needs is resolved here, once: ID strings become dense
 * slots, stream numbers dense indexes, sizes bytes. Whether each free and
 * record_stream names a live ID is checked by following the trace's own
 * alloc/free order, so a trace that parses can only fail at run time for
 * reasons the allocator gives.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "replay.h"
#include "base/size_parse.h"

#define MAX_FIELDS 8
#define MAX_STREAM INT32_MAX

struct id_entry {
	UT_hash_handle hh;
	uint32_t slot;
	int16_t device;
	bool live;
	unsigned line;  /* where it was last allocated or freed */
	char key[];
};

struct stream_entry {
	UT_hash_handle hh;
	long number;
	int32_t index;
};

struct parser {
	const char *name;
	unsigned line;
	struct wl_trace *t;
	size_t cap;
	size_t stream_cap;
	struct id_entry *ids;
	struct stream_entry *streams;
	char *err;
	size_t errlen;
};

struct options {
	int device;   /* -1: not given */
	long stream;  /* -1: not given */
};

__attribute__((format(printf, 2, 3)))
static int bad(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err == NULL || p->errlen == 0)
		return -EINVAL;
	n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->line);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Decimal digits only; -EINVAL if not a number, -ERANGE if above max. */
static int parse_decimal(const char *s, long max, long *out)
{
	long v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (max - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 0;
}

static bool is_negative_number(const char *s)
{
	long ignored;

	return s[0] == '-' && parse_decimal(s + 1, LONG_MAX, &ignored) != -EINVAL;
}

static int parse_device(struct parser *p, const char *s, int *out)
{
	long v;
	int rc = parse_decimal(s, LONG_MAX, &v);

	if (rc == 0 && v < WL_MAX_DEVICES) {
		*out = (int)v;
		return 0;
	}
	if (rc == -EINVAL && is_negative_number(s))
		return bad(p, "negative device %s", s);
	if (rc == -EINVAL)
		return bad(p, "bad device '%s'", s);
	return bad(p, "device %s out of range (0..%d)", s, WL_MAX_DEVICES - 1);
}

static int parse_stream_number(struct parser *p, const char *s, long *out)
{
	int rc = parse_decimal(s, MAX_STREAM, out);

	if (rc == 0)
		return 0;
	if (rc == -EINVAL && is_negative_number(s))
		return bad(p, "negative stream %s", s);
	if (rc == -EINVAL)
		return bad(p, "bad stream '%s'", s);
	return bad(p, "stream %s too large (max %d)", s, MAX_STREAM);
}

/* The dense index of stream `number`, made on first sight. */
static int stream_index(struct parser *p, long number, int32_t *out)
{
	struct wl_trace *t = p->t;
	struct stream_entry *e;

	HASH_FIND(hh, p->streams, &number, sizeof(number), e);
	if (e == NULL) {
		if (t->nstreams == p->stream_cap) {
			size_t cap = p->stream_cap ? 2 * p->stream_cap : 8;
			long *n = realloc(t->stream_number, cap * sizeof(*n));
			if (n == NULL)
				return -ENOMEM;
			t->stream_number = n;
			p->stream_cap = cap;
		}
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		e->number = number;
		e->index = (int32_t)t->nstreams;
		t->stream_number[t->nstreams++] = number;
		HASH_ADD(hh, p->streams, number, sizeof(e->number), e);
		if (number > t->max_stream)
			t->max_stream = number;
	}
	*out = e->index;
	return 0;
}

static int parse_stream(struct parser *p, const char *s, int32_t *out)
{
	long number;
	int rc = parse_stream_number(p, s, &number);

	return rc ? rc : stream_index(p, number, out);
}

static int parse_option(struct parser *p, const char *f, bool stream_allowed,
			struct options *o)
{
	const char *v = strchr(f, '=');
	size_t klen = v ? (size_t)(v - f) : 0;

	if (v && klen == 6 && stream_allowed && strncmp(f, "stream", 6) == 0) {
		if (o->stream >= 0)
			return bad(p, "stream given twice");
		return parse_stream_number(p, v + 1, &o->stream);
	}
	if (v && klen == 6 && strncmp(f, "device", 6) == 0) {
		if (o->device >= 0)
			return bad(p, "device given twice");
		return parse_device(p, v + 1, &o->device);
	}
	return bad(p, "bad option '%s' (expected %s)", f,
		   stream_allowed ? "stream=S or device=D" : "device=D");
}

static int parse_options(struct parser *p, char **f, int nf, bool stream_allowed,
			 struct options *o)
{
	o->device = -1;
	o->stream = -1;
	for (int i = 0; i < nf; i++) {
		int rc = parse_option(p, f[i], stream_allowed, o);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_fields(struct parser *p, char **f, int nf, int min, int max,
			const char *usage)
{
	if (nf < min)
		return bad(p, "%s: missing %s", f[0], usage);
	if (nf > max)
		return bad(p, "%s: extra field '%s'", f[0], f[max]);
	return 0;
}

static int new_id(struct parser *p, const char *key, struct id_entry **out)
{
	size_t len = strlen(key);
	struct id_entry *e;

	if (p->t->nslots == UINT32_MAX)
		return bad(p, "too many ids");
	e = calloc(1, sizeof(*e) + len + 1);
	if (e == NULL)
		return -ENOMEM;
	memcpy(e->key, key, len + 1);
	e->slot = p->t->nslots++;
	HASH_ADD_KEYPTR(hh, p->ids, e->key, len, e);
	*out = e;
	return 0;
}

static struct id_entry *find_id(struct parser *p, const char *key)
{
	struct id_entry *e;

	HASH_FIND_STR(p->ids, key, e);
	return e;
}

/* The live entry of `key`, for a free or record_stream. */
static int live_id(struct parser *p, const char *cmd, const char *key,
		   struct id_entry **out)
{
	struct id_entry *e = find_id(p, key);

	if (e == NULL)
		return bad(p, "%s of unknown id '%s'", cmd, key);
	if (!e->live)
		return bad(p, "%s of id '%s', freed on line %u", cmd, key, e->line);
	*out = e;
	return 0;
}

static int parse_alloc(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	struct id_entry *e;
	int rc = check_fields(p, f, nf, 3, 3 + 2, nf < 2 ? "ID SIZE" : "SIZE");

	if (rc == 0 && npa_parse_size(f[2], &ev->size) != 0)
		rc = bad(p, "bad size '%s'", f[2]);
	if (rc == 0)
		rc = parse_options(p, f + 3, nf - 3, true, &o);
	/* ev->stream is 0, the default stream's index, unless another is named. */
	if (rc == 0 && o.stream > 0)
		rc = stream_index(p, o.stream, &ev->stream);
	if (rc)
		return rc;
	e = find_id(p, f[1]);
	if (e && e->live)
		return bad(p, "id '%s' is already allocated (line %u)", f[1], e->line);
	if (e == NULL && (rc = new_id(p, f[1], &e)) != 0)
		return rc;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	ev->slot = e->slot;
	e->device = ev->device;
	e->live = true;
	e->line = p->line;
	return 0;
}

static int parse_free(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct id_entry *e = NULL;
	int rc = check_fields(p, f, nf, 2, 2, "ID");

	if (rc == 0)
		rc = live_id(p, "free", f[1], &e);
	if (rc)
		return rc;
	ev->slot = e->slot;
	ev->device = e->device;
	e->live = false;
	e->line = p->line;
	return 0;
}

static int parse_record_stream(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct id_entry *e = NULL;
	int rc = check_fields(p, f, nf, 3, 3, nf < 2 ? "ID STREAM" : "STREAM");

	if (rc == 0)
		rc = parse_stream(p, f[2], &ev->stream);
	if (rc == 0)
		rc = live_id(p, "record_stream", f[1], &e);
	if (rc)
		return rc;
	ev->slot = e->slot;
	ev->device = e->device;
	return 0;
}

static int parse_sync(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	int rc = check_fields(p, f, nf, 1, 2, "");

	if (rc == 0 && nf == 2)
		return parse_stream(p, f[1], &ev->stream);
	ev->stream = -1;
	return rc;
}

static int parse_bare(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	(void)ev;
	return check_fields(p, f, nf, 1, 1, "");
}

/* Upstream's range and words (torch.npu.set_per_process_memory_fraction). */
static int parse_fraction(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	char *end;
	int rc = check_fields(p, f, nf, 2, 3, "F");

	if (rc)
		return rc;
	errno = 0;
	ev->fraction = strtod(f[1], &end);
	if (*end != '\0' || end == f[1] || errno == ERANGE || isnan(ev->fraction))
		return bad(p, "bad fraction '%s'", f[1]);
	if (ev->fraction < 0.0 || ev->fraction > 1.0)
		return bad(p, "Invalid fraction value: %s. Allowed range: 0~1", f[1]);
	rc = parse_options(p, f + 2, nf - 2, false, &o);
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	return rc;
}

static const struct command {
	const char *name;
	enum wl_op op;
	int (*parse)(struct parser *p, char **f, int nf, struct wl_event *ev);
} commands[] = {
	{ "alloc", WL_ALLOC, parse_alloc },
	{ "free", WL_FREE, parse_free },
	{ "record_stream", WL_RECORD_STREAM, parse_record_stream },
	{ "sync", WL_SYNC, parse_sync },
	{ "empty_cache", WL_EMPTY_CACHE, parse_bare },
	{ "reset_peak", WL_RESET_PEAK, parse_bare },
	{ "reset_accumulated", WL_RESET_ACCUMULATED, parse_bare },
	{ "fraction", WL_FRACTION, parse_fraction },
};

/* Split at blanks, in place, dropping a '#' comment. Returns the field count. */
static int split_fields(char *s, char **f)
{
	int nf = 0;
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	for (;;) {
		s += strspn(s, " \t\r\n\v\f");
		if (*s == '\0' || nf == MAX_FIELDS)
			return nf;
		f[nf++] = s;
		s += strcspn(s, " \t\r\n\v\f");
		if (*s)
			*s++ = '\0';
	}
}

static struct wl_event *next_event(struct parser *p)
{
	struct wl_trace *t = p->t;

	if (t->nevents == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		struct wl_event *ev = realloc(t->events, cap * sizeof(*ev));
		if (ev == NULL)
			return NULL;
		t->events = ev;
		p->cap = cap;
	}
	return &t->events[t->nevents];
}

static int parse_line(struct parser *p, char *line)
{
	char *f[MAX_FIELDS];
	int nf = split_fields(line, f);
	struct wl_event *ev;

	if (nf == 0)
		return 0;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(f[0], commands[i].name) != 0)
			continue;
		if ((ev = next_event(p)) == NULL)
			return -ENOMEM;
		memset(ev, 0, sizeof(*ev));
		ev->op = (uint16_t)commands[i].op;
		ev->line = p->line;
		int rc = commands[i].parse(p, f, nf, ev);
		if (rc == 0)
			p->t->nevents++;
		return rc;
	}
	return bad(p, "unknown command '%s'", f[0]);
}

static int parse_lines(struct parser *p, FILE *f)
{
	char *line = NULL;
	size_t linecap = 0;
	ssize_t n;
	int rc = 0;

	while (rc == 0 && (n = getline(&line, &linecap, f)) >= 0) {
		p->line++;
		if (strlen(line) != (size_t)n)
			rc = bad(p, "NUL byte in line");
		else
			rc = parse_line(p, line);
	}
	if (rc == 0 && ferror(f))
		rc = -EIO;
	free(line);
	return rc;
}

static void parser_release(struct parser *p)
{
	struct id_entry *e, *etmp;
	struct stream_entry *s, *stmp;

	HASH_ITER(hh, p->ids, e, etmp) {
		HASH_DEL(p->ids, e);
		free(e);
	}
	HASH_ITER(hh, p->streams, s, stmp) {
		HASH_DEL(p->streams, s);
		free(s);
	}
}

int wl_trace_parse(FILE *f, const char *name, struct wl_trace **out, char *err,
		   size_t errlen)
{
	struct parser p = { .name = name, .err = err, .errlen = errlen };
	int32_t ignored;
	int rc;

	p.t = calloc(1, sizeof(*p.t));
	if (p.t == NULL || (p.t->name = strdup(name)) == NULL) {
		free(p.t);
		return -ENOMEM;
	}
	/* Stream 0 is always dense index 0: the default stream. */
	rc = stream_index(&p, 0, &ignored);
	if (rc == 0)
		rc = parse_lines(&p, f);
	if ((rc == -ENOMEM || rc == -EIO) && err)
		snprintf(err, errlen, "%s: %s", name, strerror(-rc));
	parser_release(&p);
	if (rc) {
		wl_trace_free(p.t);
		return rc;
	}
	for (size_t i = 0; i < p.t->nevents; i++)
		if (p.t->events[i].device > p.t->max_device)
			p.t->max_device = p.t->events[i].device;
	*out = p.t;
	return 0;
}

int wl_trace_load(const char *path, struct wl_trace **out, char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	int rc;

	if (f == NULL) {
		rc = -errno;
		if (err)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = wl_trace_parse(f, path, out, err, errlen);
	if (!is_stdin)
		fclose(f);
	return rc;
}

void wl_trace_free(struct wl_trace *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t->events);
	free(t->stream_number);
	free(t);
}
