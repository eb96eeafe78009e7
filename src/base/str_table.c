/*
 * str_table.c - strings interned as small dense indexes (str_table.h).
 *
 * Buckets hold only 1 + the index, so a probe touches 4 bytes a bucket;
 * the hash is kept in the entry so that a probe compares bytes only when
 * the hashes agree. The table doubles when it is half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "str_table.h"

#define MIN_BUCKETS 64

/* The last 1 to 7 bytes as one word, every byte in it, without a loop:
 * two overlapping 4-byte loads, or three single bytes (as wyhash reads). */
static uint64_t short_tail(const char *s, size_t len)
{
	uint32_t a, b;

	if (len >= 4) {
		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		return (uint64_t)a << 32 | b;
	}
	return (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[len >> 1] << 8 |
	       (unsigned char)s[len - 1];
}

/* Eight bytes at a time, multiply-mixed: trace IDs are short tokens. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = len * k, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (len)
		h = (h ^ short_tail(s, len)) * k;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ULL;
	return h ^ (h >> 32);
}

void str_table_init(struct str_table *t)
{
	*t = (struct str_table){ 0 };
}

static const char *entry_key(const struct str_entry *e)
{
	return e->len <= STR_TABLE_INLINE ? e->key.in : e->key.out;
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

static bool same(const struct str_entry *e, uint64_t hash, const char *key, size_t len)
{
	return e->hash == hash && e->len == len && memcmp(entry_key(e), key, len) == 0;
}

int64_t str_table_find(const struct str_table *t, const char *key, size_t len)
{
	uint64_t hash;

	if (t->bucket == NULL)
		return -1;
	hash = hash_bytes(key, len);
	for (uint32_t b = (uint32_t)hash & t->mask;; b = (b + 1) & t->mask) {
		uint32_t v = t->bucket[b];
		if (v == 0)
			return -1;
		if (same(&t->entry[v - 1], hash, key, len))
			return v - 1;
	}
}

static void place(uint32_t *bucket, uint32_t mask, uint64_t hash, uint32_t index)
{
	uint32_t b = (uint32_t)hash & mask;

	while (bucket[b] != 0)
		b = (b + 1) & mask;
	bucket[b] = index + 1;
}

static int grow_buckets(struct str_table *t)
{
	uint32_t n = t->bucket ? 2 * (t->mask + 1) : MIN_BUCKETS;
	uint32_t *bucket;

	if (n == 0)
		return -ENOMEM;
	bucket = calloc(n, sizeof(*bucket));
	if (bucket == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->limit; i++)
		if (t->entry[i].held)
			place(bucket, n - 1, t->entry[i].hash, i);
	free(t->bucket);
	t->bucket = bucket;
	t->mask = n - 1;
	return 0;
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
		struct str_entry *e = realloc(t->entry, (size_t)cap * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		t->entry = e;
		t->entry_cap = cap;
	}
	*index = t->limit++;
	return 0;
}

int str_table_add(struct str_table *t, const char *key, size_t len, uint32_t *index)
{
	struct str_entry *e;
	char *out = NULL;
	int rc;

	if (len >= UINT32_MAX)
		return -ENOMEM;
	if ((size_t)t->count + 1 > (size_t)(t->bucket ? t->mask + 1 : 0) / 2 &&
	    (rc = grow_buckets(t)) != 0)
		return rc;
	if (len > STR_TABLE_INLINE && (out = malloc(len + 1)) == NULL)
		return -ENOMEM;
	if ((rc = take_index(t, index)) != 0) {
		free(out);
		return rc;
	}
	e = &t->entry[*index];
	e->hash = hash_bytes(key, len);
	e->len = (uint32_t)len;
	e->held = true;
	if (out)
		e->key.out = out;
	memcpy(out ? out : e->key.in, key, len);
	(out ? out : e->key.in)[len] = '\0';
	place(t->bucket, t->mask, e->hash, *index);
	t->count++;
	return 0;
}

/* Backward-shift deletion: pull later members of the run into the hole. */
static void unlink_bucket(struct str_table *t, uint32_t hole)
{
	uint32_t mask = t->mask;

	for (uint32_t b = (hole + 1) & mask; t->bucket[b] != 0; b = (b + 1) & mask) {
		uint32_t home = (uint32_t)t->entry[t->bucket[b] - 1].hash & mask;
		/* Movable if its home is not in (hole, b], cyclically. */
		if (((b - home) & mask) >= ((b - hole) & mask)) {
			t->bucket[hole] = t->bucket[b];
			hole = b;
		}
	}
	t->bucket[hole] = 0;
}

void str_table_remove(struct str_table *t, uint32_t index)
{
	struct str_entry *e = &t->entry[index];
	uint32_t b = (uint32_t)e->hash & t->mask;

	while (t->bucket[b] != index + 1)
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
	return entry_key(&t->entry[index]);
}
