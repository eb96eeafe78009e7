/*
 * size_runs.c - the hash of runs' first blocks: chains and doubling.
 */
#include <stdlib.h>
#include <string.h>

#include "block.h"

static void set_table(struct npa_size_runs *r, struct npa_block **bucket, size_t n)
{
	r->bucket = bucket;
	r->mask = n - 1;
	r->shift = (unsigned)(64 - __builtin_ctzll((unsigned long long)n));
}

void npa_size_runs_init(struct npa_size_runs *r)
{
	memset(r->first, 0, sizeof(r->first));
	set_table(r, r->first, NPA_SIZE_RUNS_MIN);
	r->count = 0;
}

void npa_size_runs_fini(struct npa_size_runs *r)
{
	if (r->bucket != r->first)
		free(r->bucket);
	npa_size_runs_init(r);
}

/* Twice the buckets, each chain split between two; the same table if out of memory. */
static void grow(struct npa_size_runs *r)
{
	size_t n = 2 * (r->mask + 1);
	struct npa_block **old = r->bucket, **bucket = calloc(n, sizeof(*bucket));
	size_t old_n = r->mask + 1;

	if (bucket == NULL)
		return;
	set_table(r, bucket, n);
	for (size_t i = 0; i < old_n; i++) {
		struct npa_block *b = old[i], *next;

		for (; b != NULL; b = next) {
			size_t h = npa_size_runs_home(r, b->stream, b->size);

			next = b->run_next;
			b->run_next = bucket[h];
			bucket[h] = b;
		}
	}
	if (old != r->first)
		free(old);
}

struct npa_block *npa_size_runs_find(const struct npa_size_runs *r, aclrtStream stream,
				     size_t size)
{
	struct npa_block *b = r->bucket[npa_size_runs_home(r, stream, size)];

	while (b != NULL && (b->size != size || b->stream != stream))
		b = b->run_next;
	return b;
}

void npa_size_runs_add(struct npa_size_runs *r, struct npa_block *b)
{
	if (r->count > r->mask)
		grow(r);
	struct npa_block **head = &r->bucket[npa_size_runs_home(r, b->stream, b->size)];

	b->run_next = *head;
	*head = b;
	b->run_first = true;
	r->count++;
}

/* Where the chain points at `b`. */
static struct npa_block **link_of(struct npa_size_runs *r, const struct npa_block *b)
{
	struct npa_block **link = &r->bucket[npa_size_runs_home(r, b->stream, b->size)];

	while (*link != b)
		link = &(*link)->run_next;
	return link;
}

void npa_size_runs_replace(struct npa_size_runs *r, struct npa_block *old,
			   struct npa_block *b)
{
	*link_of(r, old) = b;
	b->run_next = old->run_next;
	b->run_first = true;
	old->run_first = false;
}

void npa_size_runs_remove(struct npa_size_runs *r, struct npa_block *b)
{
	*link_of(r, b) = b->run_next;
	b->run_first = false;
	r->count--;
}
