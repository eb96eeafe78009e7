/*
 * stat_keys.h - memory_stats() as (key, value) pairs, made from the schema.
 *
 * The flat text and the nested JSON are both printed from this one list, so
 * the two views always hold the same keys and values.
 */
#ifndef NPUREPORT_STAT_KEYS_H
#define NPUREPORT_STAT_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc/conf/flavor.h"
#include "alloc/core/stats.h"

#define NPA_X(name) +1
enum {
	STAT_ARRAY_COUNT = 0 NPA_STAT_ARRAYS(NPA_X),
	STAT_SCALAR_COUNT = 0 NPA_STAT_SCALARS(NPA_X),
	STAT_SINGLE_COUNT = 0 NPA_STAT_SINGLES(NPA_X),
};
#undef NPA_X

enum { STAT_FIELDS = 4 }; /* current, peak, allocated, freed */

#define STAT_KEYS_MAX                                                          \
	(STAT_ARRAY_COUNT * NPA_STAT_TYPES * STAT_FIELDS + STAT_SCALAR_COUNT + \
	 STAT_SINGLE_COUNT * STAT_FIELDS)

/* Long enough for "inactive_split_bytes.large_pool.allocated". */
#define STAT_KEY_LEN 48

struct stat_kv {
	char key[STAT_KEY_LEN];
	int64_t value;
};

/*
 * Fills `out` (room for STAT_KEYS_MAX) with the flavor's memory_stats()
 * keys in the order the schema lists them; returns how many.
 */
size_t stat_keys_collect(struct stat_kv *out, const struct npa_stats *s,
			 const struct npa_flavor *fl);

/* Sorts by key in byte order, as Python sorts memory_stats(). */
void stat_keys_sort(struct stat_kv *kv, size_t n);

/* A memory_stats() key and where its value lies in struct npa_stats. */
struct stat_key {
	char name[STAT_KEY_LEN];
	size_t len;
	size_t offset;             /* bytes into struct npa_stats of its int64_t */
};

/* The flavor's keys, sorted as stat_keys_sort sorts them: made once, kept
 * for the life of the process; *n gets how many. */
const struct stat_key *stat_keys_sorted(const struct npa_flavor *fl, size_t *n);

static inline int64_t stat_key_value(const struct npa_stats *s, const struct stat_key *k)
{
	int64_t v;

	memcpy(&v, (const char *)s + k->offset, sizeof(v));
	return v;
}

struct sbuf;
/* "key value" lines in the order given (stats_flat.c). */
int stat_kv_flat(struct sbuf *out, const struct stat_kv *kv, size_t n);
/* Flat "a.b" keys as nested JSON objects, keys sorted (stats_json.c). */
int stat_kv_json(struct sbuf *out, const struct stat_kv *kv, size_t n);

#endif /* NPUREPORT_STAT_KEYS_H */
