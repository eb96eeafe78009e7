/*
 * stream_map.c - ska::flat_hash_map's slot rules for a map of streams
 * (c10/util/flat_hash_map.h, sherwood_v3_table with fibonacci_hash_policy).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "stream_map.h"

#define MIN_LOOKUPS 4

static int8_t log2_u64(uint64_t v)
{
	return (int8_t)(63 - __builtin_clzll(v));
}

/* fibonacci_hash_policy::index_for_hash */
static uint64_t home_slot(const struct npa_stream_map *m, uint64_t key)
{
	return (UINT64_C(11400714819323198485) * key) >> m->shift;
}

static bool is_empty(const struct npa_stream_slot *s)
{
	return s->dist < 0;
}

static void swap_q(struct npa_event_queue *a, struct npa_event_queue *b)
{
	struct npa_event_queue t = *a;

	*a = *b;
	*b = t;
}

static void swap_dist(int8_t *a, int8_t *b)
{
	int8_t t = *a;

	*a = *b;
	*b = t;
}

static struct npa_event_queue *emplace(struct npa_stream_map *m, struct npa_event_queue q);

/* rehash(): a table of `nslots` (a power of two >= 4), the old entries
 * emplaced again in their old slot order. */
static int rehash(struct npa_stream_map *m, uint64_t nslots)
{
	struct npa_stream_map old = *m;
	int8_t lookups = log2_u64(nslots);
	struct npa_stream_slot *s;

	if (lookups < MIN_LOOKUPS)
		lookups = MIN_LOOKUPS;
	s = malloc((nslots + (uint64_t)lookups) * sizeof(*s));
	if (s == NULL)
		return -1;
	for (uint64_t i = 0; i < nslots + (uint64_t)lookups; i++)
		s[i].dist = -1;
	s[nslots + (uint64_t)lookups - 1].dist = 0; /* the end sentinel */
	*m = (struct npa_stream_map){ .slot = s, .nslots = nslots, .max_lookups = lookups,
				      .shift = (int8_t)(64 - log2_u64(nslots)) };
	for (size_t i = 0; i < npa_stream_map_end(&old); i++)
		if (!is_empty(&old.slot[i]) && emplace(m, old.slot[i].q) == NULL)
			return -1; /* cannot happen: the new table is larger */
	free(old.slot);
	return 0;
}

/* grow(): double, from 4. */
static int grow(struct npa_stream_map *m)
{
	uint64_t want = m->nslots ? 2 * m->nslots : 4;

	/* rehash() never goes below the load factor's need, n / 0.5 */
	while (want < 2 * m->n)
		want *= 2;
	return rehash(m, want);
}

/* emplace_new_key(): place q at `at`, `dist` from its home, robin hood. */
static struct npa_event_queue *emplace_new(struct npa_stream_map *m, int8_t dist,
					   size_t at, struct npa_event_queue q)
{
	size_t result, sentinel;

	if (m->nslots == 0 || dist == m->max_lookups ||
	    (double)(m->n + 1) > (double)m->nslots * 0.5) {
		if (grow(m) != 0)
			return NULL;
		return emplace(m, q);
	}
	if (is_empty(&m->slot[at])) {
		m->slot[at].dist = dist;
		m->slot[at].q = q;
		m->n++;
		return &m->slot[at].q;
	}
	sentinel = npa_stream_map_end(m);
	swap_dist(&dist, &m->slot[at].dist);
	swap_q(&q, &m->slot[at].q);
	result = at;
	for (dist++, at++; at < sentinel; at++) {
		struct npa_stream_slot *s = &m->slot[at];

		if (is_empty(s)) {
			s->dist = dist;
			s->q = q;
			m->n++;
			return &m->slot[result].q;
		}
		if (s->dist < dist) {
			swap_dist(&dist, &s->dist);
			swap_q(&q, &s->q);
			dist++;
			continue;
		}
		if (++dist == m->max_lookups)
			break;
	}
	/* Too far from home: the new entry goes back out, the table grows. */
	swap_q(&q, &m->slot[result].q);
	if (grow(m) != 0)
		return NULL;
	return emplace(m, q);
}

/* emplace(): find q.stream from its home slot, else insert q. */
static struct npa_event_queue *emplace(struct npa_stream_map *m, struct npa_event_queue q)
{
	size_t at;
	int8_t dist = 0;

	if (m->nslots == 0)
		return emplace_new(m, 0, 0, q);
	for (at = home_slot(m, q.key); m->slot[at].dist >= dist; at++, dist++)
		if (m->slot[at].q.stream == q.stream)
			return &m->slot[at].q;
	return emplace_new(m, dist, at, q);
}

struct npa_event_queue *npa_stream_map_get(struct npa_stream_map *m, aclrtStream stream,
					   uint64_t key)
{
	return emplace(m, (struct npa_event_queue){ .stream = stream, .key = key });
}

void npa_stream_map_erase(struct npa_stream_map *m, size_t i)
{
	m->slot[i].dist = -1;
	m->n--;
	for (size_t next = i + 1; m->slot[next].dist > 0; i++, next++) {
		m->slot[i].dist = (int8_t)(m->slot[next].dist - 1);
		m->slot[i].q = m->slot[next].q;
		m->slot[next].dist = -1;
	}
}

void npa_stream_map_fini(struct npa_stream_map *m)
{
	free(m->slot);
	*m = (struct npa_stream_map){ 0 };
}
