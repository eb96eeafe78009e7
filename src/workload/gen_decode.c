/*
 * gen_decode.c - LLM decoding with graphs captured per batch size, as
 * vLLM does at start-up (capture_model): the shape of the question "how
 * much do my graphs hold, and how much does sharing one pool save".
 *
 *   - weights (a TinyLlama-sized fp16 model) and the KV cache, allocated
 *     once on the default stream, and static input buffers for the
 *     largest batch;
 *   - one graph per capture size, largest first as vLLM captures them, on
 *     capture stream 1: each layer's activations (sizes scale with the
 *     batch) are allocated and freed inside the capture, and the output
 *     hidden states stay live, held by the graph; every graph shares the
 *     pool of graph_pool_handle() (vLLM's default), or has its own;
 *   - `steps` decode steps: a batch size is drawn, the smallest graph that
 *     fits it is replayed, and the logits and sampling temporaries are
 *     allocated outside the graph.
 * The trace ends while serving, graphs alive, so a replay's report shows
 * what they hold. Without graphs (the eager baseline) each decode step runs
 * the layers for its own batch on the default stream instead.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace_gen_impl.h"

#define LAYERS 22
#define HIDDEN 2048ULL
#define KV_DIM 256ULL        /* 4 KV heads of 64 (grouped-query attention) */
#define INTERMEDIATE 5632ULL
#define VOCAB 32000ULL
#define FP16 2ULL
#define FP32 4ULL
#define KV_BLOCKS 512ULL     /* per layer, of 16 tokens */
#define KV_BLOCK_TOKENS 16ULL
#define CAPTURE_STREAM 1

struct decode {
	FILE *out;
	const struct wl_gen_options *opt;
	unsigned next_id;
	unsigned max_batch;
	int stream;          /* of the forward pass: the capture's, or 0 eager */
};

static unsigned alloc_on(struct decode *g, uint64_t size, int stream)
{
	unsigned id = g->next_id++;

	if (stream == 0)
		fprintf(g->out, "alloc t%u %llu\n", id, (unsigned long long)size);
	else
		fprintf(g->out, "alloc t%u %llu stream=%d\n", id, (unsigned long long)size,
			stream);
	return id;
}

static void release(struct decode *g, unsigned id)
{
	fprintf(g->out, "free t%u\n", id);
}

/* Per layer: input norm, q/k/v, o, post norm, gate/up, down. */
static void create_weights(struct decode *g)
{
	static const uint64_t layer[] = {
		HIDDEN, HIDDEN * (HIDDEN + 2 * KV_DIM), HIDDEN * HIDDEN, HIDDEN,
		2 * INTERMEDIATE * HIDDEN, INTERMEDIATE * HIDDEN,
	};

	fprintf(g->out, "# weights (fp16) and KV cache, once\n");
	alloc_on(g, VOCAB * HIDDEN * FP16, 0);
	for (int l = 0; l < LAYERS; l++)
		for (size_t i = 0; i < sizeof(layer) / sizeof(layer[0]); i++)
			alloc_on(g, layer[i] * FP16, 0);
	alloc_on(g, HIDDEN * FP16, 0);
	alloc_on(g, VOCAB * HIDDEN * FP16, 0);
	for (int l = 0; l < LAYERS; l++) {
		alloc_on(g, KV_BLOCKS * KV_BLOCK_TOKENS * KV_DIM * FP16, 0);
		alloc_on(g, KV_BLOCKS * KV_BLOCK_TOKENS * KV_DIM * FP16, 0);
	}
	/* Static inputs the graphs read: token ids, positions, slot mapping. */
	for (int i = 0; i < 3; i++)
		alloc_on(g, (uint64_t)g->max_batch * 8, 0);
}

/* One decoder layer for `batch` tokens: its temporaries die inside it. */
static unsigned layer_forward(struct decode *g, uint64_t batch, unsigned hidden)
{
	uint64_t act = batch * HIDDEN * FP16;
	unsigned norm = alloc_on(g, act, g->stream);
	unsigned qkv = alloc_on(g, batch * (HIDDEN + 2 * KV_DIM) * FP16, g->stream);
	unsigned attn = alloc_on(g, act, g->stream);
	unsigned o = alloc_on(g, act, g->stream);

	release(g, qkv);
	release(g, norm);
	release(g, attn);
	unsigned residual = alloc_on(g, act, g->stream);
	release(g, o);
	release(g, hidden);
	norm = alloc_on(g, act, g->stream);
	unsigned gate_up = alloc_on(g, batch * 2 * INTERMEDIATE * FP16, g->stream);
	unsigned mlp = alloc_on(g, batch * INTERMEDIATE * FP16, g->stream);
	release(g, gate_up);
	release(g, norm);
	unsigned down = alloc_on(g, act, g->stream);
	release(g, mlp);
	unsigned next = alloc_on(g, act, g->stream);
	release(g, down);
	release(g, residual);
	return next;
}

/* The layers for `batch` tokens: the output hidden states outlive them. */
static unsigned forward(struct decode *g, unsigned batch)
{
	unsigned hidden = alloc_on(g, (uint64_t)batch * HIDDEN * FP16, g->stream);

	for (int l = 0; l < LAYERS; l++)
		hidden = layer_forward(g, batch, hidden);
	unsigned out = alloc_on(g, (uint64_t)batch * HIDDEN * FP16, g->stream); /* final norm */
	release(g, hidden);
	return out;
}

/* The graph for `batch`: its output stays live, held by the graph. */
static void capture(struct decode *g, unsigned batch)
{
	fprintf(g->out, "# capture batch %u\ncapture_begin %d%s graph=b%u\n", batch,
		CAPTURE_STREAM, g->opt->own_pools ? "" : " pool=graphs", batch);
	forward(g, batch);
	fprintf(g->out, "capture_end %d\n", CAPTURE_STREAM);
}

/* The smallest captured size that holds `n` sequences (padding up). */
static unsigned padded(const struct wl_gen_options *opt, unsigned n)
{
	for (unsigned i = 0; i < opt->nbatches; i++)
		if (opt->batches[i] >= n)
			return opt->batches[i];
	return opt->batches[opt->nbatches - 1];
}

static void decode_step(struct decode *g, struct gen_rng *rng)
{
	unsigned n = (unsigned)rng_range(rng, 1, g->max_batch), batch = padded(g->opt, n);
	unsigned out = 0;

	if (g->opt->no_graphs)
		out = forward(g, n);
	else
		fprintf(g->out, "graph_replay b%u\n", batch);
	unsigned logits = alloc_on(g, (uint64_t)n * VOCAB * FP16, 0);
	unsigned probs = alloc_on(g, (uint64_t)n * VOCAB * FP32, 0);
	unsigned tokens = alloc_on(g, (uint64_t)n * 8, 0);
	release(g, probs);
	release(g, logits);
	release(g, tokens);
	if (g->opt->no_graphs)
		release(g, out);
}

int gen_decode_graphs(const struct wl_gen_options *given, FILE *out)
{
	struct wl_gen_options o = *given;
	const struct wl_gen_options *opt = &o;
	struct decode g = { .out = out, .opt = opt,
			    .stream = given->no_graphs ? 0 : CAPTURE_STREAM };
	struct gen_rng rng = { opt->seed };

	if (o.nbatches == 0 && wl_gen_parse_batches(WL_GEN_DEFAULT_BATCHES, &o) != 0)
		return -EINVAL;
	g.max_batch = opt->batches[opt->nbatches - 1];
	if (opt->no_graphs)
		fprintf(out, "# batches up to %u, eager: no graphs\n", g.max_batch);
	else
		fprintf(out, "# batches %u..%u (%u graphs), %s\n", opt->batches[0], g.max_batch,
			opt->nbatches, opt->own_pools ? "a pool each" : "one shared pool");
	create_weights(&g);
	for (unsigned i = opt->nbatches; i-- > 0 && !opt->no_graphs;)
		capture(&g, opt->batches[i]);
	fprintf(out, "# serving\n");
	for (unsigned step = 0; step < opt->steps; step++)
		decode_step(&g, &rng);
	fprintf(out, "sync\n");
	return 0;
}
