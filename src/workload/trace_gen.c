/*
 * trace_gen.c - the table of trace generators.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace_gen_impl.h"

static const struct generator {
	const char *name;
	unsigned default_steps;
	int (*write)(const struct wl_gen_options *opt, FILE *out);
} generators[] = {
	[WL_GEN_TRAINING] = { "training", 20, gen_training },
	[WL_GEN_CHURN] = { "churn", 20000, gen_churn },
	[WL_GEN_RANDOM] = { "random", 20000, gen_random },
	[WL_GEN_DECODE_GRAPHS] = { "decode-graphs", 100, gen_decode_graphs },
	[WL_GEN_PINNED_LOADER] = { "pinned-loader", 200, gen_pinned_loader },
};

#define NGENERATORS (sizeof(generators) / sizeof(generators[0]))

int wl_gen_kind_find(const char *name, enum wl_gen_kind *out)
{
	for (size_t i = 0; i < NGENERATORS; i++) {
		if (strcmp(name, generators[i].name) == 0) {
			*out = (enum wl_gen_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *wl_gen_kind_name(enum wl_gen_kind kind)
{
	return (size_t)kind < NGENERATORS ? generators[kind].name : NULL;
}

unsigned wl_gen_default_steps(enum wl_gen_kind kind)
{
	return (size_t)kind < NGENERATORS ? generators[kind].default_steps : 0;
}

/* A decimal size in [1, WL_GEN_MAX_BATCH]; *end is where it stopped. */
static int parse_batch(const char *s, char **end, unsigned *out)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno || v == 0 || v > WL_GEN_MAX_BATCH)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static bool is_vllm_size(unsigned n)
{
	return n == 1 || n == 2 || n == 4 || n % 8 == 0;
}

static int parse_range(const char *s, unsigned *sizes, unsigned *n)
{
	unsigned lo, hi;
	char *end;

	if (parse_batch(s, &end, &lo) != 0 || strncmp(end, "..", 2) != 0 ||
	    parse_batch(end + 2, &end, &hi) != 0 || *end != '\0' || hi < lo)
		return -EINVAL;
	for (unsigned b = lo; b <= hi; b++)
		if (is_vllm_size(b))
			sizes[(*n)++] = b;
	return 0;
}

static int parse_list(const char *s, unsigned *sizes, unsigned *n)
{
	char *end;

	for (;;) {
		if (*n == WL_GEN_MAX_BATCHES || parse_batch(s, &end, &sizes[*n]) != 0)
			return -EINVAL;
		if (*n > 0 && sizes[*n] <= sizes[*n - 1])
			return -EINVAL;
		(*n)++;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
}

int wl_gen_parse_batches(const char *spec, struct wl_gen_options *opt)
{
	unsigned sizes[WL_GEN_MAX_BATCHES], n = 0;
	int rc = strstr(spec, "..") ? parse_range(spec, sizes, &n)
				    : parse_list(spec, sizes, &n);

	if (rc != 0 || n == 0)
		return -EINVAL;
	memcpy(opt->batches, sizes, n * sizeof(sizes[0]));
	opt->nbatches = n;
	return 0;
}

int wl_gen_write(enum wl_gen_kind kind, const struct wl_gen_options *opt, FILE *out)
{
	struct wl_gen_options o = *opt;
	int rc;

	if ((size_t)kind >= NGENERATORS)
		return -EINVAL;
	if (o.steps == 0)
		o.steps = generators[kind].default_steps;
	if (o.batch_max == 0)
		o.batch_max = WL_GEN_DEFAULT_BATCH_MAX;
	if (o.batch_min == 0)
		o.batch_min = o.batch_max / 8 ? o.batch_max / 8 : 1;
	if (!o.prefetch_set)
		o.prefetch = WL_GEN_DEFAULT_PREFETCH;
	if (o.batch_min > o.batch_max || o.prefetch > WL_GEN_MAX_PREFETCH ||
	    o.live > WL_GEN_MAX_LIVE || (o.max_size && (o.max_size < WL_GEN_MIN_MAX_SIZE ||
							 o.max_size > WL_GEN_MAX_MAX_SIZE)))
		return -EINVAL;
	fprintf(out, "# npumem-gentrace %s --seed %llu --steps %u", generators[kind].name,
		(unsigned long long)o.seed, o.steps);
	/* Named only when set, so that default traces keep their first line. */
	if (o.live)
		fprintf(out, " --live %u", o.live);
	if (o.max_size)
		fprintf(out, " --max-size %llu", (unsigned long long)o.max_size);
	fputc('\n', out);
	rc = generators[kind].write(&o, out);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = -EIO;
	return rc;
}
