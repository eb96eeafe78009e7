/*
 * gen_loader.c - a data loader's pinned-copy traffic (`pinned-loader`):
 * torch's DataLoader with pin_memory=True feeding a training step.
 *
 * Each step's batch has a size of its own, uniform in [batch_min, batch]
 * (sequences of varying length). The pin-memory thread pins batches
 * `prefetch` steps ahead on the default stream; the step allocates the
 * device batch on stream 1, copies the pinned one into it (a non-blocking
 * copy on stream 1), drops the pinned tensor (its block waits for the
 * copy, until the step's sync), computes, syncs stream 1 (loss.item())
 * and frees the device batch. What a replay then shows is the pinned
 * cache: power-of-two blocks for every size band the batches fell in,
 * held after the batches are gone; a batch of 20 GiB holds 32 GiB.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace_gen_impl.h"

static uint64_t batch_size(struct gen_rng *rng, const struct wl_gen_options *opt)
{
	return rng_range(rng, opt->batch_min, opt->batch_max);
}

int gen_pinned_loader(const struct wl_gen_options *opt, FILE *out)
{
	struct gen_rng rng = { opt->seed };
	unsigned ahead = opt->prefetch + 1;
	uint64_t *size = calloc(ahead, sizeof(*size));

	if (size == NULL)
		return -ENOMEM;
	fprintf(out, "# batches of %llu to %llu bytes, pinned %u step(s) ahead, copied on "
		"stream 1\n", (unsigned long long)opt->batch_min,
		(unsigned long long)opt->batch_max, opt->prefetch);
	for (unsigned i = 0; i < opt->prefetch && i < opt->steps; i++) {
		size[i % ahead] = batch_size(&rng, opt);
		fprintf(out, "pin b%u %llu\n", i, (unsigned long long)size[i % ahead]);
	}
	for (unsigned i = 0; i < opt->steps; i++) {
		unsigned next = i + opt->prefetch;
		if (next < opt->steps) {
			size[next % ahead] = batch_size(&rng, opt);
			fprintf(out, "pin b%u %llu\n", next, (unsigned long long)size[next % ahead]);
		}
		fprintf(out, "alloc x%u %llu stream=1\ncopy b%u 1\nunpin b%u\nsync 1\nfree x%u\n",
			i, (unsigned long long)size[i % ahead], i, i, i);
	}
	free(size);
	return 0;
}
