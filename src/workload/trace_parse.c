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
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/graph/graph.h"
#include "base/size_parse.h"
#include "trace_parse_impl.h"

#define MAX_STREAM INT32_MAX

int wl_parse_bad(struct parser *p, const char *fmt, ...)
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

	if (rc == 0 && v < NPA_MAX_DEVICES) {
		*out = (int)v;
		return 0;
	}
	if (rc == -EINVAL && is_negative_number(s))
		return wl_parse_bad(p, "negative device %s", s);
	if (rc == -EINVAL)
		return wl_parse_bad(p, "bad device '%s'", s);
	return wl_parse_bad(p, "device %s out of range (0..%d)", s, NPA_MAX_DEVICES - 1);
}

static int parse_stream_number(struct parser *p, const char *s, long *out)
{
	int rc = parse_decimal(s, MAX_STREAM, out);

	if (rc == 0)
		return 0;
	if (rc == -EINVAL && is_negative_number(s))
		return wl_parse_bad(p, "negative stream %s", s);
	if (rc == -EINVAL)
		return wl_parse_bad(p, "bad stream '%s'", s);
	return wl_parse_bad(p, "stream %s too large (max %d)", s, MAX_STREAM);
}

int wl_parse_grow(void **array, size_t *cap, size_t used, size_t elem, size_t first)
{
	if (used < *cap)
		return 0;
	size_t n = *cap ? 2 * *cap : first;
	if (mem_grow(array, used * elem, n * elem) != 0)
		return -ENOMEM;
	*cap = n;
	return 0;
}

int wl_parse_reserve(struct parser *p, size_t events)
{
	if (p->t->nevents != 0 || events <= p->cap)
		return 0;
	if (mem_grow((void **)&p->t->events, 0, events * sizeof(*p->t->events)) != 0)
		return -ENOMEM;
	p->cap = events;
	return 0;
}

int wl_parse_stream_entry(struct parser *p, long number, struct stream_entry **out)
{
	struct wl_trace *t = p->t;
	struct stream_entry *e;

	HASH_FIND(hh, p->streams, &number, sizeof(number), e);
	if (e == NULL) {
		if (wl_parse_grow((void **)&t->stream_number, &p->stream_cap, t->nstreams,
				  sizeof(*t->stream_number), 8))
			return -ENOMEM;
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
	*out = e;
	return 0;
}

/* The dense index of stream `number`, made on first sight. */
static int stream_index(struct parser *p, long number, int32_t *out)
{
	struct stream_entry *e;
	int rc = wl_parse_stream_entry(p, number, &e);

	if (rc == 0)
		*out = e->index;
	return rc;
}

int wl_parse_stream_field(struct parser *p, const char *s, struct stream_entry **out)
{
	long number;
	int rc = parse_stream_number(p, s, &number);

	return rc ? rc : wl_parse_stream_entry(p, number, out);
}

int wl_parse_stream(struct parser *p, const char *s, int32_t *out)
{
	long number;
	int rc = parse_stream_number(p, s, &number);

	return rc ? rc : stream_index(p, number, out);
}

static int set_stream(struct parser *p, const char *v, struct options *o)
{
	return parse_stream_number(p, v, &o->stream);
}

static int set_device(struct parser *p, const char *v, struct options *o)
{
	return parse_device(p, v, &o->device);
}

/* Graph and pool names are any token, as IDs are; only empty is refused. */
static int set_name(struct parser *p, const char *key, const char *v, const char **out)
{
	if (*v == '\0')
		return wl_parse_bad(p, "empty %s name", key);
	*out = v;
	return 0;
}

static int set_pool(struct parser *p, const char *v, struct options *o)
{
	return set_name(p, "pool", v, &o->pool);
}

static int set_graph(struct parser *p, const char *v, struct options *o)
{
	return set_name(p, "graph", v, &o->graph);
}

static int set_mode(struct parser *p, const char *v, struct options *o)
{
	char why[160];

	if (npa_graph_parse_mode(v, &o->mode, why, sizeof(why)) < 0)
		return wl_parse_bad(p, "%s", why);
	return 0;
}

/* A duration in virtual nanoseconds, as ctl/op's ns=N. */
static int set_ns(struct parser *p, const char *v, struct options *o)
{
	long ns;

	if (parse_decimal(v, LONG_MAX, &ns) != 0)
		return wl_parse_bad(p, "bad ns '%s' (virtual nanoseconds, 0 or more)", v);
	o->ns = (uint64_t)ns;
	return 0;
}

/* Options, in the order a refusal lists them; a NULL set marks a flag. */
static const struct option_kind {
	const char *key;
	const char *usage;
	unsigned bit;
	int (*set)(struct parser *p, const char *value, struct options *o);
} option_kinds[] = {
	{ "stream", "stream=S", OPT_STREAM, set_stream },
	{ "device", "device=D", OPT_DEVICE, set_device },
	{ "pool", "pool=P", OPT_POOL, set_pool },
	{ "graph", "graph=G", OPT_GRAPH, set_graph },
	{ "mode", "mode=M", OPT_MODE, set_mode },
	{ "ns", "ns=N", OPT_NS, set_ns },
	{ "use_on_oom", "use_on_oom", OPT_USE_ON_OOM, NULL },
	{ "no_split", "no_split", OPT_NO_SPLIT, NULL },
};

#define NOPTION_KINDS (sizeof(option_kinds) / sizeof(option_kinds[0]))

/* "stream=S or device=D": the options `allowed`, for a refusal. */
static void allowed_usage(unsigned allowed, char *buf, size_t len)
{
	unsigned left = 0;
	size_t n = 0;

	for (size_t i = 0; i < NOPTION_KINDS; i++)
		left += (allowed & option_kinds[i].bit) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NOPTION_KINDS && n < len; i++) {
		if (!(allowed & option_kinds[i].bit))
			continue;
		left--;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", option_kinds[i].usage,
				      left > 1 ? ", " : left == 1 ? " or " : "");
	}
}

static const struct option_kind *find_option(const char *f, const char *v, unsigned allowed)
{
	size_t klen = v ? (size_t)(v - f) : strlen(f);

	for (size_t i = 0; i < NOPTION_KINDS; i++) {
		const struct option_kind *k = &option_kinds[i];
		if ((allowed & k->bit) && (v != NULL) == (k->set != NULL) &&
		    strlen(k->key) == klen && strncmp(f, k->key, klen) == 0)
			return k;
	}
	return NULL;
}

static int parse_option(struct parser *p, const char *f, unsigned allowed,
			unsigned *seen, struct options *o)
{
	const char *v = strchr(f, '=');
	const struct option_kind *k = find_option(f, v, allowed);
	char usage[128];

	if (k == NULL) {
		allowed_usage(allowed, usage, sizeof(usage));
		return wl_parse_bad(p, "bad option '%s' (expected %s)", f, usage);
	}
	if (*seen & k->bit)
		return wl_parse_bad(p, "%s given twice", k->key);
	*seen |= k->bit;
	if (k->set == NULL) {
		o->flags |= k->bit;
		return 0;
	}
	return k->set(p, v + 1, o);
}

int wl_parse_options(struct parser *p, char **f, int nf, unsigned allowed,
		     struct options *o)
{
	unsigned seen = 0;

	*o = (struct options){ .device = -1, .stream = -1,
			       .mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, .ns = UINT64_MAX };
	for (int i = 0; i < nf; i++) {
		int rc = parse_option(p, f[i], allowed, &seen, o);
		if (rc)
			return rc;
	}
	return 0;
}

int wl_parse_check_fields(struct parser *p, char **f, int nf, int min, int max,
			  const char *usage)
{
	if (nf < min)
		return wl_parse_bad(p, "%s: missing %s", f[0], usage);
	if (nf > max)
		return wl_parse_bad(p, "%s: extra field '%s'", f[0], f[max]);
	return 0;
}

/*
 * A free, record_stream or erase_stream of an ID that is not live, or not
 * known at all. A streamed trace may have forgotten it: the line it was
 * freed on is then found again, or, from a pipe, cannot be.
 */
static int not_live(struct parser *p, const char *cmd, const char *key)
{
	unsigned line;

	if (wl_ids_forgotten_line(p, &p->ids, key, &line) != 0)
		return wl_parse_bad(p, "%s of id '%s', which is not live: unknown, or freed "
				    "before the last %d frees (a trace read from a pipe "
				    "remembers no more)", cmd, key, WL_FREED_KEPT);
	if (line == 0)
		return wl_parse_bad(p, "%s of unknown id '%s'", cmd, key);
	return wl_parse_bad(p, "%s of id '%s', freed on line %u", cmd, key, line);
}

/* The live entry of `key`, for a free or record_stream. */
static int live_id(struct parser *p, const char *cmd, const char *key, uint32_t *out)
{
	int64_t i = wl_ids_find(&p->ids, key);

	if (i < 0)
		return not_live(p, cmd, key);
	if (!p->ids.st[i].live)
		return wl_parse_bad(p, "%s of id '%s', freed on line %u", cmd, key,
				    p->ids.st[i].line);
	*out = (uint32_t)i;
	return 0;
}

int wl_parse_size(struct parser *p, const char *field, const char *what, uint64_t *out)
{
	char why[160];

	if (npa_parse_size(field, out) == 0)
		return 0;
	if (npa_size_ambiguous(field, why, sizeof(why)))
		return wl_parse_bad(p, "bad %s '%s': %s", what, field, why);
	return wl_parse_bad(p, "bad %s '%s'", what, field);
}

int wl_parse_sized(struct parser *p, char **f, int nf, struct wl_event *ev,
		   struct options *o)
{
	int rc = wl_parse_check_fields(p, f, nf, 3, 3 + 2, nf < 2 ? "ID SIZE" : "SIZE");

	if (rc == 0)
		rc = wl_parse_size(p, f[2], "size", &ev->size);
	if (rc == 0)
		rc = wl_parse_options(p, f + 3, nf - 3, OPT_STREAM | OPT_DEVICE, o);
	/* ev->stream is 0, the default stream's index, unless another is named. */
	if (rc == 0 && o->stream > 0)
		rc = stream_index(p, o->stream, &ev->stream);
	return rc;
}

static int parse_alloc(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	uint32_t i;
	int rc = wl_parse_sized(p, f, nf, ev, &o);

	if (rc == 0)
		rc = wl_ids_take(p, &p->ids, f[1], "id", "allocated", &i);
	if (rc)
		return rc;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	wl_parse_id_made(p, i, ev);
	return 0;
}

static int parse_free(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	uint32_t i = 0;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "ID");

	if (rc == 0)
		rc = live_id(p, "free", f[1], &i);
	if (rc == 0)
		wl_parse_id_freed(p, i, ev);
	return rc;
}

/* record_stream and erase_stream: "CMD ID STREAM". */
static int parse_stream_use(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	uint32_t i = 0;
	int rc = wl_parse_check_fields(p, f, nf, 3, 3, nf < 2 ? "ID STREAM" : "STREAM");

	if (rc == 0)
		rc = wl_parse_stream(p, f[2], &ev->stream);
	if (rc == 0)
		rc = live_id(p, f[0], f[1], &i);
	if (rc)
		return rc;
	ev->slot = i;
	ev->device = p->ids.st[i].device;
	/* Only record_stream makes a free wait on a stream (an erased stream
	 * gets no event; work launched there is harmless). */
	if (ev->op == WL_RECORD_STREAM)
		p->ids.st[i].used = true;
	return 0;
}

static int no_stream_waits(struct parser *p, const char *key, unsigned line)
{
	return wl_parse_bad(p, "complete of id '%s': its free on line %u waits for no stream "
			    "(no record_stream, or completed)", key, line);
}

static int parse_complete(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct id_state *e;
	int64_t i;
	unsigned line;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "ID");

	if (rc)
		return rc;
	if ((i = wl_ids_find(&p->ids, f[1])) < 0) {
		/* Forgotten IDs are the ones no complete waits for. */
		if (wl_ids_forgotten_line(p, &p->ids, f[1], &line) != 0)
			return not_live(p, "complete", f[1]);
		if (line == 0)
			return wl_parse_bad(p, "complete of unknown id '%s'", f[1]);
		return no_stream_waits(p, f[1], line);
	}
	e = &p->ids.st[i];
	if (e->live)
		return wl_parse_bad(p, "complete of id '%s', allocated on line %u and not freed",
				    f[1], e->line);
	if (!e->pending)
		return no_stream_waits(p, f[1], e->line);
	ev->slot = (uint32_t)i;
	ev->device = e->device;
	e->pending = false;
	wl_ids_died(&p->ids, (uint32_t)i);
	p->t->has_complete = true;
	return 0;
}

static int parse_sync(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct stream_entry *s = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 1, 2, "");

	if (rc == 0 && nf == 2)
		rc = wl_parse_stream_field(p, f[1], &s);
	if (rc)
		return rc;
	ev->stream = s ? s->index : -1;
	return wl_parse_sync_allowed(p, s);
}

static int parse_bare(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	(void)ev;
	return wl_parse_check_fields(p, f, nf, 1, 1, "");
}

/* Upstream's range and words (torch.npu.set_per_process_memory_fraction). */
static int parse_fraction(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	char *end;
	int rc = wl_parse_check_fields(p, f, nf, 2, 3, "F");

	if (rc)
		return rc;
	errno = 0;
	ev->fraction = strtod(f[1], &end);
	if (*end != '\0' || end == f[1] || errno == ERANGE || isnan(ev->fraction))
		return wl_parse_bad(p, "bad fraction '%s'", f[1]);
	if (ev->fraction < 0.0 || ev->fraction > 1.0)
		return wl_parse_bad(p, "Invalid fraction value: %s. Allowed range: 0~1", f[1]);
	rc = wl_parse_options(p, f + 2, nf - 2, OPT_DEVICE, &o);
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	return rc;
}

/* In enum wl_op's order, so that wl_op_name indexes it. */
static const struct command {
	const char *name;
	enum wl_op op;
	int (*parse)(struct parser *p, char **f, int nf, struct wl_event *ev);
} commands[] = {
	{ "alloc", WL_ALLOC, parse_alloc },
	{ "free", WL_FREE, parse_free },
	{ "record_stream", WL_RECORD_STREAM, parse_stream_use },
	{ "erase_stream", WL_ERASE_STREAM, parse_stream_use },
	{ "sync", WL_SYNC, parse_sync },
	{ "empty_cache", WL_EMPTY_CACHE, parse_bare },
	{ "reset_peak", WL_RESET_PEAK, parse_bare },
	{ "reset_accumulated", WL_RESET_ACCUMULATED, parse_bare },
	{ "fraction", WL_FRACTION, parse_fraction },
	{ "capture_begin", WL_CAPTURE_BEGIN, wl_parse_capture_begin },
	{ "capture_end", WL_CAPTURE_END, wl_parse_capture_end },
	{ "graph_replay", WL_GRAPH_REPLAY, wl_parse_graph_replay },
	{ "graph_reset", WL_GRAPH_RESET, wl_parse_graph_reset },
	{ "mempool_create", WL_MEMPOOL_CREATE, wl_parse_mempool_create },
	{ "mempool_begin", WL_MEMPOOL_BEGIN, wl_parse_mempool_begin },
	{ "mempool_end", WL_MEMPOOL_END, wl_parse_mempool_end },
	{ "mempool_release", WL_MEMPOOL_RELEASE, wl_parse_mempool_release },
	{ "complete", WL_COMPLETE, parse_complete },
	{ "launch_op", WL_LAUNCH_OP, wl_parse_launch_op },
	{ "pin", WL_PIN, wl_parse_pin },
	{ "unpin", WL_UNPIN, wl_parse_unpin },
	{ "copy", WL_COPY, wl_parse_copy },
	{ "host_empty_cache", WL_HOST_EMPTY_CACHE, parse_bare },
	{ "empty_virt_addr_cache", WL_EMPTY_VIRT_ADDR_CACHE, parse_bare },
};

_Static_assert(sizeof(commands) / sizeof(commands[0]) == WL_NOPS, "a row per wl_op");

const char *wl_op_name(enum wl_op op)
{
	return (size_t)op < sizeof(commands) / sizeof(commands[0]) ? commands[op].name : "?";
}

/* The bytes that separate fields; NUL and '#' end the line. */
static const unsigned char blank[256] = {
	[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1,
	['\0'] = 2, ['#'] = 2,
};

/* Split at blanks, in place, dropping a '#' comment. Returns the field count
 * (at most WL_MAX_FIELDS: the rest of the line is not looked at). */
int wl_parse_split(char *s, char **f)
{
	int nf = 0;

	for (;;) {
		while (blank[(unsigned char)*s] == 1)
			s++;
		if (blank[(unsigned char)*s] == 2 || nf == WL_MAX_FIELDS)
			return nf;
		f[nf++] = s;
		while (blank[(unsigned char)*s] == 0)
			s++;
		if (*s == '\0' || *s == '#') {
			*s = '\0';
			return nf;
		}
		*s++ = '\0';
	}
}

struct wl_event *wl_parse_event(struct parser *p, enum wl_op op)
{
	struct wl_trace *t = p->t;

	if (wl_parse_room(p) != 0)
		return NULL;
	struct wl_event *ev = &t->events[t->nevents];
	memset(ev, 0, sizeof(*ev));
	ev->op = (uint16_t)op;
	ev->line = p->line;
	return ev;
}

/*
 * loop_start: a looping replay runs the lines before it once and repeats
 * the lines after it, so those must end where they began: the same IDs
 * live. Graphs and mempools are made before it, once.
 */
static int parse_loop_start(struct parser *p, int nf)
{
	if (nf != 1)
		return wl_parse_bad(p, "loop_start takes no fields");
	if (p->loop_line)
		return wl_parse_bad(p, "a second loop_start (the first is on line %u)",
				    p->loop_line);
	if (p->ncapturing)
		return wl_parse_bad(p, "loop_start during a capture");
	wl_ids_loop_start(&p->ids);
	wl_parse_host_loop_start(p);
	p->loop_line = p->line;
	p->t->has_loop = true;
	p->t->loop_from = p->t->nevents;
	return 0;
}

/* Lines that make or unmake graphs and pools happen once, before loop_start. */
static bool once_only(enum wl_op op)
{
	return op == WL_CAPTURE_BEGIN || op == WL_CAPTURE_END || op == WL_GRAPH_RESET ||
	       op == WL_MEMPOOL_CREATE || op == WL_MEMPOOL_BEGIN || op == WL_MEMPOOL_END ||
	       op == WL_MEMPOOL_RELEASE;
}

/* At the end: what the repeated lines leave live is what they found. */
static int check_loop(struct parser *p)
{
	const struct id_state *e;
	uint32_t i;

	if (!p->loop_line)
		return 0;
	if (wl_ids_loop_mismatch(p, &p->ids, &i) == 0) {
		e = &p->ids.st[i];
		p->line = p->loop_line;
		return wl_parse_bad(p, "the lines after loop_start must leave live what they "
				    "found live: id '%s' is %s at the end (line %u)",
				    str_table_key(&p->ids.names, i),
				    e->live ? "allocated" : "freed", e->line);
	}
	return wl_parse_host_check_loop(p);
}

static int parse_line(struct parser *p, char *line, size_t len)
{
	char *f[WL_MAX_FIELDS];
	struct wl_event *ev;
	int rc = wl_parse_fast(p, line, len);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	int nf = wl_parse_split(line, f);
	if (nf == 0)
		return 0;
	if (f[0][0] == 'l' && strcmp(f[0], "loop_start") == 0)
		return parse_loop_start(p, nf);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		/* The first byte first: most lines are alloc or free, rows 0 and 1. */
		if (f[0][0] != commands[i].name[0] || strcmp(f[0], commands[i].name) != 0)
			continue;
		if (p->loop_line && once_only(commands[i].op))
			return wl_parse_bad(p, "%s after loop_start (line %u): graphs and "
					    "mempools are made once, before it", f[0],
					    p->loop_line);
		if (!p->streamed && p->t->nevents == WL_EVENTS_MAX)
			return wl_parse_bad(p, "more than %d events: a trace is held whole in "
					    "memory; split it", WL_EVENTS_MAX);
		if ((ev = wl_parse_event(p, commands[i].op)) == NULL)
			return -ENOMEM;
		rc = commands[i].parse(p, f, nf, ev);
		if (rc != 0)
			return rc;
		/* Only these lines name a device: the fast ones are on device 0
		 * or free an ID whose alloc came here. */
		if (ev->device > p->t->max_device)
			p->t->max_device = ev->device;
		p->t->nevents++;
		return 0;
	}
	return wl_parse_bad(p, "unknown command '%s'", f[0]);
}

int wl_parse_begin(struct parser *p, const char *name, struct trace_lines *in,
		   bool streamed, char *err, size_t errlen)
{
	int32_t ignored;
	int rc;

	*p = (struct parser){ .name = name, .in = in, .streamed = streamed, .err = err,
			      .errlen = errlen };
	wl_ids_init(&p->ids, "alloc", "free", streamed);
	wl_ids_init(&p->pins, "pin", "unpin", streamed);
	p->t = calloc(1, sizeof(*p->t));
	if (p->t == NULL || (p->t->name = strdup(name)) == NULL) {
		free(p->t);
		p->t = NULL;
		return wl_parse_error(p, -ENOMEM);
	}
	/* A streamed trace cannot know whether a complete will come: frees
	 * keep their events. */
	p->t->has_complete = streamed;
	/* Stream 0 is always dense index 0: the default stream. */
	rc = stream_index(p, 0, &ignored);
	return rc ? wl_parse_error(p, rc) : 0;
}

int wl_parse_error(struct parser *p, int rc)
{
	if ((rc == -ENOMEM || rc == -EIO) && p->err)
		snprintf(p->err, p->errlen, "%s: %s", p->name, strerror(-rc));
	return rc;
}

int wl_parse_some(struct parser *p, size_t max, bool *ended)
{
	struct wl_trace *t = p->t;
	char *line;
	ssize_t n;
	int rc = 0;

	*ended = false;
	while (rc == 0 && t->nevents < max) {
		n = trace_lines_next_fast(p->in, &line);
		if (n == TRACE_LINE_EOF) {
			*ended = true;
			break;
		}
		if (n == TRACE_LINE_IO)
			return wl_parse_error(p, -EIO);
		p->line++;
		if (n == TRACE_LINE_NUL)
			rc = wl_parse_bad(p, "NUL byte in line");
		else if (n == TRACE_LINE_TOO_LONG)
			rc = wl_parse_bad(p, "line longer than %d bytes", WL_LINE_MAX);
		else
			rc = parse_line(p, line, (size_t)n);
	}
	t->nslots = p->ids.names.limit;
	t->npins = p->pins.names.limit;
	if (rc == 0 && *ended)
		rc = check_loop(p);
	return wl_parse_error(p, rc);
}

void wl_parse_end(struct parser *p)
{
	struct stream_entry *s, *stmp;

	wl_ids_release(&p->ids);
	WL_HASH_FREE_ALL(p->streams, s, stmp);
	wl_parse_pools_release(p);
	wl_parse_host_release(p);
}

int wl_trace_parse(FILE *f, const char *name, struct wl_trace **out, char *err,
		   size_t errlen)
{
	struct trace_lines in;
	struct parser p;
	bool ended;
	int rc;

	if (trace_lines_init(&in, f) != 0) {
		if (err)
			snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	rc = wl_parse_begin(&p, name, &in, false, err, errlen);
	if (rc == 0)
		rc = wl_parse_some(&p, SIZE_MAX, &ended);
	wl_parse_end(&p);
	trace_lines_release(&in);
	if (rc) {
		wl_trace_free(p.t);
		return rc;
	}
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

/* `path` opened for reading if it is a regular file, else -errno (err). */
static int open_regular(const char *path, FILE **out, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int rc = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		rc = -errno;
	else if (S_ISDIR(st.st_mode))
		rc = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	if (rc == 0 && fcntl(fd, F_SETFL, 0) < 0)
		rc = -errno;
	if (rc == 0 && (*out = fdopen(fd, "r")) == NULL)
		rc = -errno;
	if (rc == 0)
		return 0;
	if (fd >= 0)
		close(fd);
	if (err)
		snprintf(err, errlen, "%s: %s", path,
			 rc == -EINVAL ? "not a regular file (a FIFO or a device would block)"
				       : strerror(-rc));
	return rc;
}

int wl_trace_load_file(const char *path, struct wl_trace **out, char *err, size_t errlen)
{
	FILE *f;
	int rc = open_regular(path, &f, err, errlen);

	if (rc)
		return rc;
	rc = wl_trace_parse(f, path, out, err, errlen);
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
	free(t->op_ns);
	free(t);
}
