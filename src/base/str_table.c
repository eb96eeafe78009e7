/*
 * str_table.c - strings interned as small dense indexes (str_table.h).
 *
 * Buckets hold 1 + the index and the low half of the hash, so a probe
 * touches 8 bytes a bucket and reads an entry only when the hashes agree;
 * the whole hash is kept in the entry as well. The table doubles when it
 * is half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem_populate.h"
#include "str_table.h"

#define MIN_BUCKETS 64

void str_table_init(struct str_table *t)
{
	*t = (struct str_table){ 0 };
}

void str_table_release(struct str_table *t)
{
	for (uint32_t i = 0; i < t->limit; i++)
		if (t->entry[i].held && t->entry[i].len > STR_TABLE_INLINE)
			free(t->entry[i].key.out);
	free(t->bucket);
	free(t->entry);
	free(t->free_index);
	str_table_init(t);
}

int64_t str_table_find(const struct str_table *t, const char *key, size_t len)
{
	return str_table_find_hashed(t, key, len, str_table_hash(key, len));
}

static void place(struct str_bucket *bucket, uint32_t mask, uint32_t hash, uint32_t index1)
{
	uint32_t b = hash & mask;

	while (bucket[b].index1 != 0)
		b = (b + 1) & mask;
	bucket[b] = (struct str_bucket){ hash, index1 };
}

static int grow_buckets(struct str_table *t)
{
	uint32_t n = t->bucket ? 2 * (t->mask + 1) : MIN_BUCKETS;
	struct str_bucket *bucket;

	if (n == 0)
		return -ENOMEM;
	bucket = mem_zalloc(n, sizeof(*bucket));
	if (bucket == NULL)
		return -ENOMEM;
	for (uint32_t b = 0; t->bucket != NULL && b <= t->mask; b++)
		if (t->bucket[b].index1 != 0)
			place(bucket, n - 1, t->bucket[b].hash, t->bucket[b].index1);
	free(t->bucket);
	t->bucket = bucket;
	t->mask = n - 1;
	return 0;
}

/* key and a NUL into to: a trace ID (4 to 16 bytes) in two overlapping
 * words, without a call. */
static void copy_key(char *to, const char *key, size_t len)
{
	if (len >= 8 && len <= 16) {
		uint64_t a, b;

		memcpy(&a, key, 8), memcpy(&b, key + len - 8, 8);
		memcpy(to, &a, 8), memcpy(to + len - 8, &b, 8);
	} else if (len >= 4 && len < 8) {
		uint32_t a, b;

		memcpy(&a, key, 4), memcpy(&b, key + len - 4, 4);
		memcpy(to, &a, 4), memcpy(to + len - 4, &b, 4);
	} else {
		memcpy(to, key, len);
	}
	to[len] = '\0';
}

/* An index for a new string: a removed one, or the next. */
static int take_index(struct str_table *t, uint32_t *index)
{
	if (t->nfree) {
		*index = t->free_index[--t->nfree];
		return 0;
	}
	if (t->limit == UINT32_MAX - 1)
		return -ENOMEM;
	if (t->limit == t->entry_cap) {
		uint32_t cap = t->entry_cap ? 2 * t->entry_cap : MIN_BUCKETS;
		void *e = t->entry;
		if (mem_grow(&e, (size_t)t->entry_cap * sizeof(*t->entry),
			     (size_t)cap * sizeof(*t->entry)) != 0)
			return -ENOMEM;
		t->entry = e;
		t->entry_cap = cap;
	}
	*index = t->limit++;
	return 0;
}

int str_table_add(struct str_table *t, const char *key, size_t len, uint32_t *index)
{
	return str_table_add_hashed(t, key, len, str_table_hash(key, len), index);
}

/* Whether one more string needs the buckets doubled (half full at most). */
static bool full(const struct str_table *t)
{
	return (size_t)t->count + 1 > (size_t)(t->bucket ? t->mask + 1 : 0) / 2;
}

/* The string into entry `index`, its key at `out` if allocated. */
static void fill(struct str_table *t, uint32_t index, const char *key, size_t len,
		 uint64_t hash, char *out)
{
	struct str_entry *e = &t->entry[index];

	e->hash = hash;
	e->len = (uint32_t)len;
	e->held = true;
	if (out)
		e->key.out = out;
	copy_key(out ? out : e->key.in, key, len);
	place(t->bucket, t->mask, (uint32_t)hash, index + 1);
	t->count++;
}

/* Any add: the buckets grown, a long key allocated, a new index made. */
static __attribute__((noinline)) int add_grown(struct str_table *t, const char *key,
					       size_t len, uint64_t hash, uint32_t *index)
{
	char *out = NULL;
	int rc;

	if (len >= UINT32_MAX)
		return -ENOMEM;
	if (full(t) && (rc = grow_buckets(t)) != 0)
		return rc;
	if (len > STR_TABLE_INLINE && (out = malloc(len + 1)) == NULL)
		return -ENOMEM;
	if ((rc = take_index(t, index)) != 0) {
		free(out);
		return rc;
	}
	fill(t, *index, key, len, hash, out);
	return 0;
}

/* Mostly a short key taking a removed string's index, with room: nothing
 * to allocate or grow. */
int str_table_add_hashed(struct str_table *t, const char *key, size_t len, uint64_t hash,
			 uint32_t *index)
{
	if (len > STR_TABLE_INLINE || t->nfree == 0 || full(t))
		return add_grown(t, key, len, hash, index);
	*index = t->free_index[--t->nfree];
	fill(t, *index, key, len, hash, NULL);
	return 0;
}

/* Backward-shift deletion: pull later members of the run into the hole. */
static void unlink_bucket(struct str_table *t, uint32_t hole)
{
	uint32_t mask = t->mask;

	for (uint32_t b = (hole + 1) & mask; t->bucket[b].index1 != 0; b = (b + 1) & mask) {
		uint32_t home = t->bucket[b].hash & mask;
		/* Movable if its home is not in (hole, b], cyclically. */
		if (((b - home) & mask) >= ((b - hole) & mask)) {
			t->bucket[hole] = t->bucket[b];
			hole = b;
		}
	}
	t->bucket[hole] = (struct str_bucket){ 0, 0 };
}

void str_table_remove(struct str_table *t, uint32_t index)
{
	struct str_entry *e = &t->entry[index];
	uint32_t b = (uint32_t)e->hash & t->mask;

	while (t->bucket[b].index1 != index + 1)
		b = (b + 1) & t->mask;
	unlink_bucket(t, b);
	if (e->len > STR_TABLE_INLINE)
		free(e->key.out);
	e->held = false;
	t->count--;
	if (t->nfree == t->free_cap) {
		uint32_t cap = t->free_cap ? 2 * t->free_cap : MIN_BUCKETS;
		uint32_t *f = realloc(t->free_index, (size_t)cap * sizeof(*f));
		if (f == NULL)
			return; /* the index is simply not reused */
		t->free_index = f;
		t->free_cap = cap;
	}
	t->free_index[t->nfree++] = index;
}

const char *str_table_key(const struct str_table *t, uint32_t index)
{
	return str_table_entry_key(&t->entry[index]);
}
