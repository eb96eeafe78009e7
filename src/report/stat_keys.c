/*
 * stat_keys.c - memory_stats() keys and values, generated from the
 * X-macro lists in stats.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat_keys.h"

static const char *const type_names[NPA_STAT_TYPES] = NPA_STAT_TYPE_NAMES;
static const char *const field_names[STAT_FIELDS] = NPA_STAT_FIELD_NAMES;

static int64_t stat_field(const struct npa_stat *st, int field)
{
	const int64_t v[STAT_FIELDS] = { st->current, st->peak, st->allocated,
					 st->freed };
	return v[field];
}

/* "<name>.<current|peak|allocated|freed>" */
static size_t put_stat(struct stat_kv *out, size_t n, const char *name,
		       const struct npa_stat *st)
{
	for (int f = 0; f < STAT_FIELDS; f++, n++) {
		snprintf(out[n].key, STAT_KEY_LEN, "%s.%s", name,
			 field_names[f]);
		out[n].value = stat_field(st, f);
	}
	return n;
}

/* "<name>.<all|small_pool|large_pool>.<current|peak|allocated|freed>" */
static size_t put_array(struct stat_kv *out, size_t n, const char *name,
			const struct npa_stat *arr)
{
	for (int t = 0; t < NPA_STAT_TYPES; t++) {
		for (int f = 0; f < STAT_FIELDS; f++, n++) {
			snprintf(out[n].key, STAT_KEY_LEN, "%s.%s.%s", name,
				 type_names[t], field_names[f]);
			out[n].value = stat_field(&arr[t], f);
		}
	}
	return n;
}

static size_t put_scalar(struct stat_kv *out, size_t n, const char *name,
			 int64_t value)
{
	snprintf(out[n].key, STAT_KEY_LEN, "%s", name);
	out[n].value = value;
	return n + 1;
}

/* num_oom_rejections is the one counter only some upstreams report. */
static int scalar_reported(const char *name, const struct npa_flavor *fl)
{
	return fl->oom_rejections_stat ||
	       strcmp(name, "num_oom_rejections") != 0;
}

size_t stat_keys_collect(struct stat_kv *out, const struct npa_stats *s,
			 const struct npa_flavor *fl)
{
	size_t n = 0;
#define NPA_X(name) n = put_array(out, n, #name, s->name);
	NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	if (scalar_reported(#name, fl))                                        \
		n = put_scalar(out, n, #name, s->name);
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name) n = put_stat(out, n, #name, &s->name);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
	return n;
}

static int kv_cmp(const void *a, const void *b)
{
	const struct stat_kv *x = a, *y = b;
	return strcmp(x->key, y->key);
}

void stat_keys_sort(struct stat_kv *kv, size_t n)
{
	qsort(kv, n, sizeof(*kv), kv_cmp);
}

/*
 * The key list only depends on whether the flavor reports
 * num_oom_rejections. It is collected from stats whose every value is its
 * own offset in the struct (all of it int64_t), so the schema above stays
 * the one place that names the keys.
 */
enum { KEY_SETS = 2 };
static struct stat_key key_sets[KEY_SETS][STAT_KEYS_MAX];
static size_t key_set_len[KEY_SETS];
static pthread_once_t key_set_once[KEY_SETS] = { PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT };

_Static_assert(sizeof(struct npa_stats) % sizeof(int64_t) == 0,
	       "struct npa_stats holds int64_t values only");

static void make_key_set(int with_oom_rejections)
{
	static struct npa_stats offsets;
	struct npa_flavor fl = { .oom_rejections_stat = with_oom_rejections };
	struct stat_kv kv[STAT_KEYS_MAX];
	int64_t *slot = (int64_t *)&offsets;

	for (size_t i = 0; i < sizeof(offsets) / sizeof(*slot); i++)
		slot[i] = (int64_t)(i * sizeof(*slot));
	size_t n = stat_keys_collect(kv, &offsets, &fl);
	stat_keys_sort(kv, n);
	for (size_t i = 0; i < n; i++) {
		struct stat_key *k = &key_sets[with_oom_rejections][i];

		memcpy(k->name, kv[i].key, sizeof(k->name));
		k->len = strlen(k->name);
		k->offset = (size_t)kv[i].value;
	}
	key_set_len[with_oom_rejections] = n;
}

static void make_keys_without(void)
{
	make_key_set(0);
}

static void make_keys_with(void)
{
	make_key_set(1);
}

const struct stat_key *stat_keys_sorted(const struct npa_flavor *fl, size_t *n)
{
	int with = fl->oom_rejections_stat ? 1 : 0;

	pthread_once(&key_set_once[with], with ? make_keys_with : make_keys_without);
	*n = key_set_len[with];
	return key_sets[with];
}
