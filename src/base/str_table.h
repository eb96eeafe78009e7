/*
 * str_table.h - strings interned as small dense indexes.
 *
 * An open-addressing hash table (linear probing, deletion by backward
 * shift, so no tombstones slow later lookups) from a string to an index
 * in [0, limit). The caller keeps whatever it knows of each string in its
 * own arrays indexed the same way. Indexes are given in order 0, 1, 2, ...
 * and a removed string's index is given again to the next string added,
 * so `limit` stays at the most strings held at once, however many pass
 * through.
 */
#ifndef NPUMEMFS_STR_TABLE_H
#define NPUMEMFS_STR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Keys up to this long live in the entry; longer ones are allocated. */
#define STR_TABLE_INLINE 22

struct str_entry {
	uint64_t hash;
	uint32_t len;
	bool held;      /* the index is in use */
	union {
		char in[STR_TABLE_INLINE + 1];
		char *out;
	} key;
};

/* A bucket holds the low half of its string's hash beside the index, so
 * a probe, a removal's backward shift and a doubling read no entry. */
struct str_bucket {
	uint32_t hash;
	uint32_t index1;         /* 1 + index, 0 empty */
};

struct str_table {
	struct str_bucket *bucket; /* [mask + 1] */
	uint32_t mask;
	uint32_t count;          /* strings held */
	struct str_entry *entry; /* [limit] */
	uint32_t limit;          /* indexes ever given out: 1 + the highest */
	uint32_t entry_cap;
	uint32_t *free_index;    /* removed indexes, given out again last-in first */
	uint32_t nfree, free_cap;
};

void str_table_init(struct str_table *t);
void str_table_release(struct str_table *t);

/* The index of `key` (len bytes), or -1 if it is not held. */
int64_t str_table_find(const struct str_table *t, const char *key, size_t len);
/* Add `key`, which must not be held: 0 with its index, or -ENOMEM. */
int str_table_add(struct str_table *t, const char *key, size_t len, uint32_t *index);
/* The same with the key's hash given: a find and then an add of one key
 * hash it once. Inline, as a trace's every line hashes its ID. */
static inline uint64_t str_table_hash(const char *key, size_t len);
static inline int64_t str_table_find_hashed(const struct str_table *t, const char *key,
					   size_t len, uint64_t hash);
int str_table_add_hashed(struct str_table *t, const char *key, size_t len, uint64_t hash,
			 uint32_t *index);
/* Forget the string at `index` (held); the index goes back for reuse. */
void str_table_remove(struct str_table *t, uint32_t index);
/* The string at a held `index`, NUL-terminated. */
const char *str_table_key(const struct str_table *t, uint32_t index);

/* memcmp(a, b, len) == 0, for 4 to 16 bytes without a call: the first and
 * the last word of each, overlapping as the hash's loads do. A find
 * compares bytes only when the hashes agree, so this is what tells two
 * keys apart when their hashes collide. */
static inline bool str_table_same_bytes(const char *a, const char *b, size_t len)
{
	if (len >= 8 && len <= 16) {
		uint64_t a0, a1, b0, b1;

		memcpy(&a0, a, 8), memcpy(&a1, a + len - 8, 8);
		memcpy(&b0, b, 8), memcpy(&b1, b + len - 8, 8);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
	if (len >= 4 && len < 8) {
		uint32_t a0, a1, b0, b1;

		memcpy(&a0, a, 4), memcpy(&a1, a + len - 4, 4);
		memcpy(&b0, b, 4), memcpy(&b1, b + len - 4, 4);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
	return memcmp(a, b, len) == 0;
}

static inline bool str_table_held(const struct str_table *t, uint32_t index)
{
	return index < t->limit && t->entry[index].held;
}

static inline const char *str_table_entry_key(const struct str_entry *e)
{
	return e->len <= STR_TABLE_INLINE ? e->key.in : e->key.out;
}

/* The last 1 to 7 bytes as one word, every byte in it, without a loop:
 * two overlapping 4-byte loads, or three single bytes (as wyhash reads). */
static inline uint64_t str_table_short_tail(const char *s, size_t len)
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
static inline uint64_t str_table_hash(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = len * k, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (len)
		h = (h ^ str_table_short_tail(s, len)) * k;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ULL;
	return h ^ (h >> 32);
}

/* Inline: a trace's every line looks an ID up, and the probe is short. */
static inline int64_t str_table_find_hashed(const struct str_table *t, const char *key,
					   size_t len, uint64_t hash)
{
	if (t->bucket == NULL)
		return -1;
	for (uint32_t b = (uint32_t)hash & t->mask;; b = (b + 1) & t->mask) {
		struct str_bucket v = t->bucket[b];
		if (v.index1 == 0)
			return -1;
		if (v.hash != (uint32_t)hash)
			continue;
		const struct str_entry *e = &t->entry[v.index1 - 1];
		if (e->hash == hash && e->len == len &&
		    str_table_same_bytes(str_table_entry_key(e), key, len))
			return v.index1 - 1;
	}
}

#endif /* NPUMEMFS_STR_TABLE_H */
