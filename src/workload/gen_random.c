/*
 * gen_random.c - random alloc/free traces over a bounded live set: `churn`
 * (small sizes) and `random` (RMM's random_allocations benchmark).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "trace_gen_impl.h"

#define RANDOM_MAX_LIVE 1000
#define RANDOM_MAX_SIZE (64ULL << 20)
#define RANDOM_MAX_USAGE (8ULL << 30)
#define RANDOM_ALLOC_PERCENT 73

struct live {
	uint32_t id;
	uint64_t size;
};

struct live_set {
	struct live *v;
	size_t n;
	uint64_t bytes;
	uint32_t next_id;
	FILE *out;
};

static void emit_alloc(struct live_set *s, uint64_t size)
{
	struct live *l = &s->v[s->n++];

	l->id = s->next_id++;
	l->size = size;
	s->bytes += size;
	fprintf(s->out, "alloc t%u %llu\n", l->id, (unsigned long long)size);
}

/* Swap-with-last removal, as RMM does. */
static void emit_free(struct live_set *s, size_t i)
{
	fprintf(s->out, "free t%u\n", s->v[i].id);
	s->bytes -= s->v[i].size;
	s->v[i] = s->v[--s->n];
}

static void free_all(struct live_set *s)
{
	while (s->n > 0)
		emit_free(s, s->n - 1);
}

/* The power-of-two band holding max - 1: the last one churn draws from. */
static unsigned top_band(uint64_t max)
{
	return 63 - (unsigned)__builtin_clzll(max - 1);
}

/* Log-uniform in [512 B, max): a power-of-two band, then uniform in it. */
static uint64_t churn_size(struct gen_rng *rng, uint64_t max)
{
	unsigned band = (unsigned)rng_range(rng, 9, top_band(max));
	uint64_t hi = (2ULL << band) - 1;

	return rng_range(rng, 1ULL << band, hi < max ? hi : max - 1);
}

int gen_churn(const struct wl_gen_options *opt, FILE *out)
{
	struct gen_rng rng = { opt->seed };
	struct live_set s = { .out = out };
	uint64_t target = opt->live ? opt->live : WL_GEN_DEFAULT_LIVE;
	uint64_t max_size = opt->max_size ? opt->max_size : WL_GEN_DEFAULT_MAX_SIZE;
	/* 1000 for the default 750, as the first churn traces had. */
	size_t most = target + target / 3;

	s.v = calloc(most, sizeof(*s.v));
	if (s.v == NULL)
		return -ENOMEM;
	for (unsigned step = 0; step < opt->steps; step++) {
		/* P(alloc) = 1 - live / (2 * target): the live set settles at the target. */
		bool grow = s.n < most && rng_below(&rng, 2 * target) >= s.n;
		if (grow)
			emit_alloc(&s, churn_size(&rng, max_size));
		else
			emit_free(&s, rng_below(&rng, s.n));
	}
	free_all(&s);
	free(s.v);
	return 0;
}

int gen_random(const struct wl_gen_options *opt, FILE *out)
{
	struct gen_rng rng = { opt->seed };
	struct live_set s = { .out = out };

	s.v = calloc(RANDOM_MAX_LIVE, sizeof(*s.v));
	if (s.v == NULL)
		return -ENOMEM;
	for (unsigned step = 0; step < opt->steps; step++) {
		uint64_t size = rng_range(&rng, 1, RANDOM_MAX_SIZE);
		bool grow = rng_below(&rng, 100) < RANDOM_ALLOC_PERCENT &&
			    s.n < RANDOM_MAX_LIVE && s.bytes + size <= RANDOM_MAX_USAGE;
		if (grow || s.n == 0)
			emit_alloc(&s, size);
		else
			emit_free(&s, rng_below(&rng, s.n));
	}
	free_all(&s);
	free(s.v);
	return 0;
}
