/*
 * trace_gen.c - the table of trace generators.
 */
#include <errno.h>
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

int wl_gen_write(enum wl_gen_kind kind, const struct wl_gen_options *opt, FILE *out)
{
	struct wl_gen_options o = *opt;
	int rc;

	if ((size_t)kind >= NGENERATORS)
		return -EINVAL;
	if (o.steps == 0)
		o.steps = generators[kind].default_steps;
	fprintf(out, "# npumem-gentrace %s --seed %llu --steps %u\n", generators[kind].name,
		(unsigned long long)o.seed, o.steps);
	rc = generators[kind].write(&o, out);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = -EIO;
	return rc;
}
