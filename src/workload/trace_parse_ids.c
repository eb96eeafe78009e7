/*
 * trace_parse_ids.c - the IDs a trace names (device IDs and pinned IDs):
 * interned as they come, and in a streamed trace forgotten once no later
 * line can need them, so that memory follows the live set, not the
 * trace's length.
 *
 * A forgotten ID must still give the messages it gave when remembered
 * ("free of id 'a', freed on line 7"): the last WL_FREED_KEPT deaths are
 * kept, and beyond them the trace is read again up to the bad line to
 * find the line (an error, once). A pipe cannot be read again: there, and
 * only there, a line that names an ID freed before the last WL_FREED_KEPT
 * deaths says that it cannot tell.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_parse_impl.h"

void wl_ids_init(struct id_space *s, const char *make, const char *end, bool forgetting)
{
	*s = (struct id_space){ .make = make, .end = end, .forgetting = forgetting };
	str_table_init(&s->names);
}

void wl_ids_release(struct id_space *s)
{
	str_table_release(&s->names);
	free(s->st);
	free(s->ring);
	s->st = NULL;
	s->ring = NULL;
}

int64_t wl_ids_find(const struct id_space *s, const char *key)
{
	return str_table_find(&s->names, key, strlen(key));
}

int wl_ids_take(struct parser *p, struct id_space *s, const char *key, const char *what,
		const char *state, uint32_t *index)
{
	int64_t i = wl_ids_find(s, key);

	if (i >= 0 && s->st[i].live)
		return wl_parse_bad(p, "%s '%s' is already %s (line %u)", what, key, state,
				    s->st[i].line);
	if (i < 0)
		return wl_ids_add(p, s, key, index);
	*index = (uint32_t)i;
	return 0;
}

int wl_ids_add(struct parser *p, struct id_space *s, const char *key, uint32_t *index)
{
	size_t len = strlen(key);

	return wl_ids_add_hashed(p, s, key, len, str_table_hash(key, len), index);
}

int wl_ids_add_hashed(struct parser *p, struct id_space *s, const char *key, size_t len,
		      uint64_t hash, uint32_t *index)
{
	int rc;

	if (s->names.count == UINT32_MAX - 2)
		return wl_parse_bad(p, "too many %s", s == &p->pins ? "pinned ids" : "ids");
	if ((rc = str_table_add_hashed(&s->names, key, len, hash, index)) != 0)
		return rc;
	/* A new index is at most the limit's last: one more state at most. */
	if (s->names.limit > s->st_cap &&
	    wl_parse_grow((void **)&s->st, &s->st_cap, s->names.limit - 1, sizeof(*s->st),
			  64) != 0) {
		str_table_remove(&s->names, *index);
		return -ENOMEM;
	}
	s->st[*index] = (struct id_state){ .first_line = p->line };
	return 0;
}

/* Can no later line need it? Then it need not be remembered. */
static bool forgettable(const struct id_space *s, uint32_t index, uint64_t died)
{
	const struct id_state *e = &s->st[index];

	return str_table_held(&s->names, index) && e->died == died && !e->live &&
	       !e->pending && !(s->loop_started && e->live_at_loop);
}

/*
 * The ring holds the last WL_FREED_KEPT deaths, death d at d %
 * WL_FREED_KEPT: the one it replaces is death d - WL_FREED_KEPT, which
 * is forgotten now if nothing since made it needed again.
 */
void wl_ids_died(struct id_space *s, uint32_t index)
{
	uint64_t d = ++s->deaths;
	uint32_t at = (uint32_t)(d % WL_FREED_KEPT);

	s->st[index].died = d;
	if (!s->forgetting)
		return;
	if (s->ring == NULL && (s->ring = malloc(WL_FREED_KEPT * sizeof(*s->ring))) == NULL) {
		s->forgetting = false; /* remember everything instead */
		return;
	}
	if (d > WL_FREED_KEPT) {
		uint32_t old = s->ring[at];
		/* The next death's turn comes at the next free: its state and
		 * its name, WL_FREED_KEPT deaths old, are fetched meanwhile. */
		uint32_t next = s->ring[(at + 1) % WL_FREED_KEPT];
		__builtin_prefetch(&s->st[next]);
		__builtin_prefetch(&s->names.entry[next]);
		if (forgettable(s, old, d - WL_FREED_KEPT)) {
			str_table_remove(&s->names, old);
			s->forgot = true;
		}
	}
	s->ring[at] = index;
}

void wl_ids_loop_start(struct id_space *s)
{
	for (uint32_t i = 0; i < s->names.limit; i++)
		s->st[i].live_at_loop = str_table_held(&s->names, i) && s->st[i].live;
	s->loop_started = true;
}

/* Read the trace's lines before line `upto` again, giving each one's
 * fields to `fn`: 0, or -ENOENT if it cannot be read again. */
static int read_again(struct parser *p, unsigned upto, void (*fn)(void *ctx, unsigned line, char **f,
						    int nf), void *ctx)
{
	struct trace_lines in;
	FILE *f;
	char *line, *fields[WL_MAX_FIELDS];
	int rc = p->in ? trace_lines_reopen(p->in, &f) : -ESPIPE;

	if (rc)
		return -ENOENT;
	if (trace_lines_init(&in, f) != 0) {
		fclose(f);
		return -ENOENT;
	}
	for (unsigned n = 1; n < upto && trace_lines_next(&in, &line) >= 0; n++) {
		int nf = wl_parse_split(line, fields);
		if (nf >= 2)
			fn(ctx, n, fields, nf);
	}
	trace_lines_release(&in);
	fclose(f);
	return 0;
}

struct last_naming {
	const struct id_space *s;
	const char *key;
	unsigned line;
};

static void note_last(void *ctx, unsigned line, char **f, int nf)
{
	struct last_naming *l = ctx;

	(void)nf;
	if ((strcmp(f[0], l->s->make) == 0 || strcmp(f[0], l->s->end) == 0) &&
	    strcmp(f[1], l->key) == 0)
		l->line = line;
}

int wl_ids_forgotten_line(struct parser *p, const struct id_space *s, const char *key,
			  unsigned *line)
{
	struct last_naming l = { .s = s, .key = key };

	*line = 0;
	if (!s->forgot)
		return 0;
	if (read_again(p, p->line, note_last, &l) != 0)
		return -ENOENT;
	*line = l.line;
	return 0;
}

static bool mismatched(const struct id_space *s, uint32_t i)
{
	return str_table_held(&s->names, i) && s->st[i].live != s->st[i].live_at_loop;
}

struct first_allocs {
	const struct id_space *s;
	unsigned *first;  /* [limit]: the true first alloc of each mismatch */
};

static void note_first(void *ctx, unsigned line, char **f, int nf)
{
	struct first_allocs *a = ctx;
	int64_t i;

	(void)nf;
	if (strcmp(f[0], a->s->make) != 0 || (i = wl_ids_find(a->s, f[1])) < 0)
		return;
	if (mismatched(a->s, (uint32_t)i) && a->first[i] == 0)
		a->first[i] = line;
}

static bool any_mismatched(const struct id_space *s)
{
	for (uint32_t i = 0; i < s->names.limit; i++)
		if (mismatched(s, i))
			return true;
	return false;
}

/*
 * An ID forgotten and made again has a later first_line than the one it
 * had: when some were forgotten, the first allocs are read again, but
 * only to name a mismatch (a good trace is not read twice).
 */
int wl_ids_loop_mismatch(struct parser *p, struct id_space *s, uint32_t *index)
{
	struct first_allocs a = { .s = s };
	unsigned best = 0;
	int rc = -ENOENT;

	if (!any_mismatched(s))
		return -ENOENT;
	if (s->forgot && (a.first = calloc(s->names.limit + 1, sizeof(*a.first))) != NULL &&
	    read_again(p, p->line + 1, note_first, &a) != 0) {
		free(a.first);
		a.first = NULL;
	}
	for (uint32_t i = 0; i < s->names.limit; i++) {
		unsigned first;
		if (!mismatched(s, i))
			continue;
		first = a.first && a.first[i] ? a.first[i] : s->st[i].first_line;
		if (rc != 0 || first < best) {
			best = first;
			*index = i;
			rc = 0;
		}
	}
	free(a.first);
	return rc;
}
