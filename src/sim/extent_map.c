/*
 * extent_map.c - best-fit page runs in red-black trees (libbsd <sys/tree.h>).
 */
#include <errno.h>
#include <stdlib.h>

#include "extent_map.h"

static int addr_cmp(const struct extent *a, const struct extent *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Ties broken by address so that the fit is deterministic and low. */
static int size_cmp(const struct extent *a, const struct extent *b)
{
	if (a->npages != b->npages)
		return a->npages < b->npages ? -1 : 1;
	return addr_cmp(a, b);
}

/* RB_GENERATE_STATIC needs __unused, which libbsd leaves undefined on
 * Linux (it clashes with a glibc struct member); spell the attribute out. */
#define EXTENT_TREE_ATTR __attribute__((unused)) static
RB_GENERATE_INTERNAL(extent_addr_tree, extent, by_addr, addr_cmp, EXTENT_TREE_ATTR)
RB_GENERATE_INTERNAL(extent_size_tree, extent, by_size, size_cmp, EXTENT_TREE_ATTR)

int extent_map_init(struct extent_map *m, uint64_t npages)
{
	struct extent *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	RB_INIT(&m->free_addr);
	RB_INIT(&m->free_size);
	RB_INIT(&m->live);
	m->npages = npages;
	m->free_pages = npages;
	m->live_count = 0;
	e->npages = npages;
	RB_INSERT(extent_addr_tree, &m->free_addr, e);
	RB_INSERT(extent_size_tree, &m->free_size, e);
	return 0;
}

static void free_tree(struct extent_addr_tree *t)
{
	struct extent *e, *next;

	RB_FOREACH_SAFE(e, extent_addr_tree, t, next) {
		RB_REMOVE(extent_addr_tree, t, e);
		free(e);
	}
}

void extent_map_destroy(struct extent_map *m)
{
	RB_INIT(&m->free_size);
	free_tree(&m->free_addr);
	free_tree(&m->live);
	m->free_pages = 0;
	m->live_count = 0;
}

int extent_map_alloc(struct extent_map *m, uint64_t npages, struct extent **out)
{
	struct extent key = { .start = 0, .npages = npages };
	struct extent *fit, *e;

	if (npages == 0)
		return -EINVAL;
	fit = RB_NFIND(extent_size_tree, &m->free_size, &key);
	if (!fit)
		return -ENOSPC;
	RB_REMOVE(extent_size_tree, &m->free_size, fit);
	if (fit->npages == npages) {
		RB_REMOVE(extent_addr_tree, &m->free_addr, fit);
		e = fit;
	} else {
		e = calloc(1, sizeof(*e));
		if (!e) {
			RB_INSERT(extent_size_tree, &m->free_size, fit);
			return -ENOMEM;
		}
		e->start = fit->start;
		e->npages = npages;
		/* Moving the start of a free run forward keeps its place in
		 * the address tree: runs never overlap. */
		fit->start += npages;
		fit->npages -= npages;
		RB_INSERT(extent_size_tree, &m->free_size, fit);
	}
	e->bytes = 0;
	RB_INSERT(extent_addr_tree, &m->live, e);
	m->free_pages -= npages;
	m->live_count++;
	*out = e;
	return 0;
}

void extent_map_free(struct extent_map *m, struct extent *e)
{
	struct extent key = { .start = e->start };
	struct extent *next, *prev;

	RB_REMOVE(extent_addr_tree, &m->live, e);
	m->free_pages += e->npages;
	m->live_count--;
	next = RB_NFIND(extent_addr_tree, &m->free_addr, &key);
	prev = next ? RB_PREV(extent_addr_tree, &m->free_addr, next)
		    : RB_MAX(extent_addr_tree, &m->free_addr);
	if (prev && prev->start + prev->npages == e->start) {
		RB_REMOVE(extent_size_tree, &m->free_size, prev);
		prev->npages += e->npages;
		free(e);
		e = prev;
	} else {
		RB_INSERT(extent_addr_tree, &m->free_addr, e);
	}
	if (next && e->start + e->npages == next->start) {
		RB_REMOVE(extent_size_tree, &m->free_size, next);
		RB_REMOVE(extent_addr_tree, &m->free_addr, next);
		e->npages += next->npages;
		free(next);
	}
	RB_INSERT(extent_size_tree, &m->free_size, e);
}

struct extent *extent_map_find(struct extent_map *m, uint64_t start)
{
	struct extent key = { .start = start };

	return RB_FIND(extent_addr_tree, &m->live, &key);
}

struct extent *extent_map_containing(struct extent_map *m, uint64_t page)
{
	struct extent key = { .start = page + 1 };
	struct extent *after, *e;

	after = RB_NFIND(extent_addr_tree, &m->live, &key);
	e = after ? RB_PREV(extent_addr_tree, &m->live, after)
		  : RB_MAX(extent_addr_tree, &m->live);
	if (e && page < e->start + e->npages)
		return e;
	return NULL;
}

uint64_t extent_map_largest_free(struct extent_map *m)
{
	struct extent *e = RB_MAX(extent_size_tree, &m->free_size);

	return e ? e->npages : 0;
}

uint64_t extent_map_free_runs(struct extent_map *m)
{
	struct extent *e;
	uint64_t n = 0;

	RB_FOREACH(e, extent_addr_tree, &m->free_addr)
		n++;
	return n;
}
