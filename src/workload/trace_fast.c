/*
 * trace_fast.c - the two lines a trace is mostly made of, "alloc ID SIZE"
 * and "free ID", read in one pass over their bytes.
 *
 * A line is taken here only when it is exactly that: single spaces, a
 * SIZE of plain digits (at most 19, so it cannot overflow), nothing after,
 * and its ID in the state the command needs. Anything else (options, tabs,
 * a comment, a unit, an error to report) goes to the general parser with
 * nothing changed, so an accepted line gives the event the general parser
 * would give, and a refused one its message. The general parser splits
 * the line into fields, matches the command in a table, checks the field
 * count and each option, and measures the ID again; for these two lines
 * that was most of the reading.
 */
#include <errno.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "trace_parse_impl.h"

/* A byte of a field: the general parser's blanks, NUL and '#' end one
 * (stricter here: any control byte leaves the line to it). */
static inline bool token_byte(unsigned char c)
{
	return c > ' ' && c != '#';
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/*
 * The bytes of a little-endian word that end a field (below '!', or '#'),
 * each as its high bit. Only the lowest bit set is exact: a borrow from a
 * byte that ends a field may mark the bytes above it, which is all that
 * is asked (where the first one is).
 */
static inline uint64_t field_ends(uint64_t w)
{
	uint64_t hash = w ^ (ONES * '#');

	return (((w - ONES * '!') & ~w) | ((hash - ONES) & ~hash)) & HIGHS;
}

static inline uint64_t load_word(const char *s)
{
	uint64_t w;

	memcpy(&w, s, sizeof(w));
	return w;
}

/*
 * The length of the field at s, which ends by `end`, eight bytes at a time
 * (an ID is read in one or two steps, not byte by byte). The bytes after
 * the last whole word are read in the word that ends at `end`, whose first
 * bytes were looked at already; `line` is where reading may start.
 */
static inline __attribute__((always_inline)) size_t id_length(const char *line, const char *s,
							      const char *end)
{
	const char *q = s;
	uint64_t m;

	for (; end - q >= 8; q += 8)
		if ((m = field_ends(load_word(q))) != 0)
			return (size_t)(q - s) + (size_t)__builtin_ctzll(m) / 8;
	size_t left = (size_t)(end - q);
	if (left == 0)
		return (size_t)(q - s);
	if (end - line < 8) {
		while (q < end && token_byte((unsigned char)*q))
			q++;
		return (size_t)(q - s);
	}
	/* The word's first 8 - left bytes are before q: shifted out, and zero
	 * bytes shifted in end the field at `end` if nothing before does. */
	m = field_ends(load_word(end - 8) >> (8 * (8 - left)));
	return (size_t)(q - s) + (m ? (size_t)__builtin_ctzll(m) / 8 : left);
}

/* Whether all eight bytes of w are ASCII digits: each high nibble 3, and
 * still 3 with 6 added (no carry out of the low nibble, which is 9 at
 * most). */
static inline bool all_digits(uint64_t w)
{
	const uint64_t high = UINT64_C(0xF0F0F0F0F0F0F0F0);

	return ((w & high) | (((w + ONES * 6) & high) >> 4)) == ONES * 0x33;
}

/* Eight ASCII digits, the first in the lowest byte, as their value: pairs,
 * then fours, then the eight (three multiplies, no loop). */
static inline uint64_t eight_digits(uint64_t w)
{
	w = (w & (ONES * 0x0F)) * 2561 >> 8;
	w = (w & UINT64_C(0x00FF00FF00FF00FF)) * 6553601 >> 16;
	return (w & UINT64_C(0x0000FFFF0000FFFF)) * UINT64_C(42949672960001) >> 32;
}

/*
 * [s, end) as 1 to 19 plain digits: true with the value. Up to eight
 * digits at the end of a line of eight bytes or more are read in the word
 * that ends the line, the bytes before them made leading zeros.
 */
static bool plain_size(const char *line, const char *s, const char *end, uint64_t *out)
{
	size_t n = (size_t)(end - s);
	uint64_t v = 0;

	if (n == 0 || n > 19)
		return false;
	if (n <= 8 && end - line >= 8) {
		uint64_t w = load_word(end - 8) >> (8 * (8 - n)) << (8 * (8 - n));
		w |= n < 8 ? (ONES * '0') >> (8 * n) : 0;
		if (!all_digits(w))
			return false;
		*out = eight_digits(w);
		return true;
	}
	for (; s < end; s++) {
		unsigned d = (unsigned)(unsigned char)*s - '0';
		if (d > 9)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Room for one more event, as the general parser would allow it. */
static bool room(const struct parser *p)
{
	return p->streamed || p->t->nevents < WL_EVENTS_MAX;
}

_Static_assert(sizeof(struct wl_event) == 24, "an event is three words");

/*
 * The next event of the chunk, written past the cache when the trace is
 * streamed: the array's lines were last read by the replaying thread on
 * the other core, and a plain store would first fetch each line back
 * from there (the hand-over fences these stores).
 */
static inline __attribute__((always_inline)) void put_event(struct parser *p,
							      const struct wl_event *ev)
{
	struct wl_event *to = &p->t->events[p->t->nevents++];
#if defined(__x86_64__)
	if (p->streamed) {
		long long w[3];

		memcpy(w, ev, sizeof(w));
		_mm_stream_si64((long long *)to, w[0]);
		_mm_stream_si64((long long *)to + 1, w[1]);
		_mm_stream_si64((long long *)to + 2, w[2]);
		return;
	}
#endif
	*to = *ev;
}

void wl_parse_fence(void)
{
#if defined(__x86_64__)
	_mm_sfence();
#endif
}

static int fast_alloc(struct parser *p, const char *line, const char *id, const char *end)
{
	size_t n = id_length(line, id, end);
	uint64_t size;
	uint32_t slot;

	if (n == 0 || id + n == end || id[n] != ' ' || !plain_size(line, id + n + 1, end, &size))
		return 0;
	uint64_t hash = str_table_hash(id, n);
	int64_t i = wl_ids_find_hashed(&p->ids, id, n, hash);
	if ((i >= 0 && p->ids.st[i].live) || !room(p))
		return 0;
	if (wl_parse_room(p) != 0)
		return -ENOMEM;
	if (i < 0) {
		int rc = wl_ids_add_hashed(p, &p->ids, id, n, hash, &slot);
		if (rc)
			return rc;
		i = slot;
	}
	struct wl_event ev = { .size = size, .op = WL_ALLOC, .line = p->line };
	wl_parse_id_made(p, (uint32_t)i, &ev);
	put_event(p, &ev);
	return 1;
}

static int fast_free(struct parser *p, const char *line, const char *id, const char *end)
{
	size_t n = id_length(line, id, end);

	if (n == 0 || id + n != end)
		return 0;
	int64_t i = wl_ids_find_hashed(&p->ids, id, n, str_table_hash(id, n));
	if (i < 0 || !p->ids.st[i].live || !room(p))
		return 0;
	if (wl_parse_room(p) != 0)
		return -ENOMEM;
	struct wl_event ev = { .op = WL_FREE, .line = p->line };
	wl_parse_id_freed(p, (uint32_t)i, &ev);
	put_event(p, &ev);
	return 1;
}

int wl_parse_fast(struct parser *p, const char *line, size_t len)
{
	const char *end = line + len;

	if (len > 6 && memcmp(line, "alloc ", 6) == 0)
		return fast_alloc(p, line, line + 6, end);
	if (len > 5 && memcmp(line, "free ", 5) == 0)
		return fast_free(p, line, line + 5, end);
	return 0;
}
