/*
 * trace_gen.h - synthetic allocation traces, in the replay format.
 *
 * Deterministic: the same kind, seed and steps give the same text, byte for
 * byte, on every machine (the PRNG is our own, not libc's).
 *
 *   training  a transformer-training loop: parameters once, optimizer state
 *             at the first step, per-step activations layer by layer with a
 *             drifting sequence length, freed in reverse by the backward
 *             pass, gradients until zero_grad, a prefetch stream and a
 *             gradient all-reduce stream with record_stream and sync.
 *             `steps` is training steps. Peak a few GiB.
 *   churn     small-size churn: allocations of 512 B to below max_size
 *             (1 MiB unless set; log-uniform), random frees, a live set
 *             that settles at `live` (750 unless set) and never passes
 *             4/3 of it. `steps` is events.
 *   random    RMM's random_allocations: sizes uniform in [1, 64 MiB],
 *             allocate with probability 73% while below the target live
 *             count and byte budget, else free a random live allocation.
 *             `steps` is events.
 *   decode-graphs  LLM decoding with one graph captured per batch size
 *             (vLLM's capture sizes), largest first, into one shared pool
 *             or a pool each, then decode steps replaying them; weights
 *             and KV cache once. `steps` is decode steps. Ends serving,
 *             with the graphs alive. See gen_decode.c.
 *   pinned-loader  a DataLoader with pin_memory=True: each step's batch
 *             (uniform in [batch_min, batch_max]) pinned `prefetch` steps
 *             ahead, copied to a device batch on stream 1, unpinned, the
 *             step synced. `steps` is batches. See gen_loader.c.
 */
#ifndef NPUMEMFS_TRACE_GEN_H
#define NPUMEMFS_TRACE_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum wl_gen_kind {
	WL_GEN_TRAINING,
	WL_GEN_CHURN,
	WL_GEN_RANDOM,
	WL_GEN_DECODE_GRAPHS,
	WL_GEN_PINNED_LOADER,
};

/* pinned-loader's defaults: batches of 40 to 320 MiB, pinned 2 ahead. */
#define WL_GEN_DEFAULT_BATCH_MAX (320ULL << 20)
#define WL_GEN_DEFAULT_PREFETCH 2
#define WL_GEN_MAX_PREFETCH 64

/* churn's defaults and limits. */
#define WL_GEN_DEFAULT_LIVE 750
#define WL_GEN_MAX_LIVE 1000000
#define WL_GEN_DEFAULT_MAX_SIZE (1ULL << 20)
#define WL_GEN_MIN_MAX_SIZE 513
#define WL_GEN_MAX_MAX_SIZE (1ULL << 40)

#define WL_GEN_MAX_BATCH 1024
#define WL_GEN_MAX_BATCHES 160
/* vLLM's cudagraph capture sizes up to 256: 1, 2, 4, 8, 16, 24, ..., 256. */
#define WL_GEN_DEFAULT_BATCHES "1..256"

struct wl_gen_options {
	uint64_t seed;
	unsigned steps; /* 0: the kind's default */
	/* decode-graphs only: capture sizes, increasing (none: the default) */
	unsigned batches[WL_GEN_MAX_BATCHES];
	unsigned nbatches;
	bool own_pools;  /* a pool per graph instead of one shared */
	bool no_graphs;  /* eager decoding: no captures, the baseline */
	/* pinned-loader only (0: the defaults; batch_min 0: batch_max / 8) */
	uint64_t batch_max, batch_min;
	unsigned prefetch;
	bool prefetch_set;
	/* churn only (0: the defaults) */
	unsigned live;
	uint64_t max_size;
};

/* The kind called `name` ("training", "churn", "random"): 0 or -EINVAL. */
int wl_gen_kind_find(const char *name, enum wl_gen_kind *out);
const char *wl_gen_kind_name(enum wl_gen_kind kind);
unsigned wl_gen_default_steps(enum wl_gen_kind kind);

/*
 * Capture sizes: "LO..HI" is vLLM's sizes (1, 2, 4, then multiples of 8)
 * from LO to HI; "A,B,C" is those sizes, increasing. Sizes are 1 to
 * WL_GEN_MAX_BATCH. 0, or -EINVAL (nothing changed) for a bad or empty list.
 */
int wl_gen_parse_batches(const char *spec, struct wl_gen_options *opt);

/* Write the trace to `out`. 0, -ENOMEM, or -EIO if writing failed. */
int wl_gen_write(enum wl_gen_kind kind, const struct wl_gen_options *opt, FILE *out);

#endif /* NPUMEMFS_TRACE_GEN_H */
