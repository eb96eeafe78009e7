/*
 * gen_training.c - a transformer training loop as an allocation trace.
 *
 * The shape follows what PyTorch does for a GPT-style model trained with
 * Adam under mixed precision and data parallelism:
 *   - parameters (fp16) allocated once, layer by layer;
 *   - Adam's exp_avg and exp_avg_sq (fp32) allocated lazily at the first
 *     optimizer step and kept;
 *   - each step: the next batch is copied on a side stream (stream 1) and
 *     recorded on the compute stream; the forward pass saves activations
 *     layer by layer (sizes follow a sequence length that drifts from step
 *     to step); the backward pass frees them in reverse, allocating each
 *     parameter's gradient and gradient temporaries; every few layers a
 *     gradient bucket is all-reduced on stream 2 (record_stream), and the
 *     step waits for it (sync 2); the optimizer uses fp32 temporaries;
 *     zero_grad(set_to_none=True) frees the gradients; loss.item() syncs
 *     the compute stream.
 * The run keeps its weights and optimizer state to the end, as a training
 * process does: after the first step (which makes Adam's state) comes
 * loop_start, and every later step frees what it allocates, so a looping
 * replay repeats steps over the same persistent state.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "trace_gen_impl.h"

#define LAYERS 12
#define HIDDEN 1024ULL
#define HEADS 16ULL
#define BATCH 4ULL
#define VOCAB 32000ULL
#define SEQ_MIN 256
#define SEQ_MAX 1024
#define SEQ_STEP 64
#define FP16 2ULL
#define FP32 4ULL
#define PARAMS_PER_LAYER 12
#define SAVED_PER_LAYER 13
#define BUCKET_LAYERS 4
#define COMPUTE_STREAM 0
#define PREFETCH_STREAM 1
#define COMM_STREAM 2

struct tensor {
	uint32_t id;
	uint64_t size;
};

struct training {
	FILE *out;
	struct gen_rng rng;
	uint32_t next_id;
	uint64_t seq;
	struct tensor embedding;
	struct tensor param[LAYERS][PARAMS_PER_LAYER];
	struct tensor grad[LAYERS][PARAMS_PER_LAYER];
	struct tensor embedding_grad;
	struct tensor exp_avg[LAYERS + 1], exp_avg_sq[LAYERS + 1];
	struct tensor saved[LAYERS][SAVED_PER_LAYER];
	struct tensor batch;
	unsigned nsaved[LAYERS];
	bool optimizer_ready;
};

static struct tensor alloc_on(struct training *g, uint64_t size, int stream)
{
	struct tensor t = { g->next_id++, size };

	if (stream == COMPUTE_STREAM)
		fprintf(g->out, "alloc t%u %llu\n", t.id, (unsigned long long)size);
	else
		fprintf(g->out, "alloc t%u %llu stream=%d\n", t.id,
			(unsigned long long)size, stream);
	return t;
}

static struct tensor alloc(struct training *g, uint64_t size)
{
	return alloc_on(g, size, COMPUTE_STREAM);
}

static void release(struct training *g, struct tensor t)
{
	fprintf(g->out, "free t%u\n", t.id);
}

/* The element counts of one layer's parameters, in creation order. */
static const uint64_t layer_params[PARAMS_PER_LAYER] = {
	HIDDEN, HIDDEN,                       /* ln_1 weight, bias */
	3 * HIDDEN * HIDDEN, 3 * HIDDEN,      /* attn c_attn */
	HIDDEN * HIDDEN, HIDDEN,              /* attn c_proj */
	HIDDEN, HIDDEN,                       /* ln_2 */
	4 * HIDDEN * HIDDEN, 4 * HIDDEN,      /* mlp c_fc */
	4 * HIDDEN * HIDDEN, HIDDEN,          /* mlp c_proj */
};

static uint64_t layer_param_bytes(void)
{
	uint64_t n = 0;

	for (int i = 0; i < PARAMS_PER_LAYER; i++)
		n += layer_params[i] * FP16;
	return n;
}

static void create_parameters(struct training *g)
{
	fprintf(g->out, "# parameters (fp16)\n");
	g->embedding = alloc(g, VOCAB * HIDDEN * FP16);
	for (int l = 0; l < LAYERS; l++)
		for (int i = 0; i < PARAMS_PER_LAYER; i++)
			g->param[l][i] = alloc(g, layer_params[i] * FP16);
}

static void save(struct training *g, int layer, uint64_t size)
{
	g->saved[layer][g->nsaved[layer]++] = alloc(g, size);
}

static void forward_layer(struct training *g, int l)
{
	uint64_t tokens = BATCH * g->seq, act = tokens * HIDDEN * FP16;
	uint64_t probs = BATCH * HEADS * g->seq * g->seq * FP16;
	struct tensor scores;

	g->nsaved[l] = 0;
	save(g, l, act);                 /* ln_1 out */
	save(g, l, tokens * FP32);       /* ln_1 mean */
	save(g, l, tokens * FP32);       /* ln_1 rstd */
	save(g, l, 3 * act);             /* qkv */
	scores = alloc(g, probs);        /* q @ k^T, softmaxed in place of a copy */
	save(g, l, probs);               /* attention probabilities */
	release(g, scores);
	save(g, l, act);                 /* attention context */
	save(g, l, act);                 /* residual 1 */
	save(g, l, act);                 /* ln_2 out */
	save(g, l, tokens * FP32);       /* ln_2 mean */
	save(g, l, tokens * FP32);       /* ln_2 rstd */
	save(g, l, 4 * act);             /* c_fc out */
	save(g, l, 4 * act);             /* gelu out */
}

/* Logits and the loss: large, short-lived. */
static void loss(struct training *g)
{
	uint64_t tokens = BATCH * g->seq;
	struct tensor logits = alloc(g, tokens * VOCAB * FP16);
	struct tensor probs = alloc(g, tokens * VOCAB * FP32);
	struct tensor value = alloc(g, FP32);

	release(g, value);
	release(g, probs);
	release(g, logits);
}

static void backward_layer(struct training *g, int l)
{
	uint64_t act = BATCH * g->seq * HIDDEN * FP16;
	struct tensor grad_out = alloc(g, act);

	for (int i = PARAMS_PER_LAYER - 1; i >= 0; i--)
		g->grad[l][i] = alloc(g, layer_params[i] * FP16);
	while (g->nsaved[l] > 0) {
		struct tensor s = g->saved[l][--g->nsaved[l]];
		struct tensor tmp = alloc(g, s.size);
		release(g, s);
		release(g, tmp);
	}
	release(g, grad_out);
}

/* DDP: a bucket of gradients is all-reduced on the communication stream. */
static void allreduce_bucket(struct training *g, int layers)
{
	struct tensor bucket = alloc(g, (uint64_t)layers * layer_param_bytes());

	fprintf(g->out, "record_stream t%u %d\n", bucket.id, COMM_STREAM);
	release(g, bucket);
}

static void backward(struct training *g)
{
	for (int l = LAYERS - 1; l >= 0; l--) {
		backward_layer(g, l);
		if (l % BUCKET_LAYERS == 0)
			allreduce_bucket(g, BUCKET_LAYERS);
	}
	g->embedding_grad = alloc(g, VOCAB * HIDDEN * FP16);
	fprintf(g->out, "sync %d\n", COMM_STREAM);
}

static void create_optimizer_state(struct training *g)
{
	fprintf(g->out, "# Adam state (fp32), created at the first step\n");
	for (int l = 0; l <= LAYERS; l++) {
		uint64_t n = l < LAYERS ? layer_param_bytes() / FP16 : VOCAB * HIDDEN;
		g->exp_avg[l] = alloc(g, n * FP32);
		g->exp_avg_sq[l] = alloc(g, n * FP32);
	}
	g->optimizer_ready = true;
}

/* foreach Adam: fp32 temporaries per layer, then zero_grad(set_to_none). */
static void optimizer_step(struct training *g)
{
	if (!g->optimizer_ready)
		create_optimizer_state(g);
	for (int l = 0; l <= LAYERS; l++) {
		struct tensor tmp = alloc(g, g->exp_avg[l].size);
		release(g, tmp);
	}
	for (int l = 0; l < LAYERS; l++)
		for (int i = 0; i < PARAMS_PER_LAYER; i++)
			release(g, g->grad[l][i]);
	release(g, g->embedding_grad);
}

/* The next batch is copied on the prefetch stream and used on the compute stream. */
static void next_batch(struct training *g)
{
	struct tensor input = alloc_on(g, BATCH * g->seq * 8, PREFETCH_STREAM);

	fprintf(g->out, "sync %d\n", PREFETCH_STREAM);
	fprintf(g->out, "record_stream t%u %d\n", input.id, COMPUTE_STREAM);
	if (g->batch.size)
		release(g, g->batch);
	g->batch = input;
}

/* A random walk of -2..+2 steps of 64 tokens, kept in [SEQ_MIN, SEQ_MAX]. */
static void drift_sequence_length(struct training *g)
{
	int64_t seq = (int64_t)g->seq + ((int64_t)rng_below(&g->rng, 5) - 2) * SEQ_STEP;

	if (seq < SEQ_MIN)
		seq = SEQ_MIN;
	if (seq > SEQ_MAX)
		seq = SEQ_MAX;
	g->seq = (uint64_t)seq;
}

static void training_step(struct training *g, unsigned step)
{
	drift_sequence_length(g);
	fprintf(g->out, "# step %u, sequence length %llu\n", step,
		(unsigned long long)g->seq);
	next_batch(g);
	for (int l = 0; l < LAYERS; l++)
		forward_layer(g, l);
	loss(g);
	backward(g);
	optimizer_step(g);
	fprintf(g->out, "sync %d\n", COMPUTE_STREAM);
}

/* Between steps the batch goes too, so each step ends where it began. */
static void drop_batch(struct training *g)
{
	if (g->batch.size)
		release(g, g->batch);
	g->batch.size = 0;
}

int gen_training(const struct wl_gen_options *opt, FILE *out)
{
	struct training *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return -ENOMEM;
	g->out = out;
	g->rng.state = opt->seed;
	g->seq = (SEQ_MIN + SEQ_MAX) / 2;
	create_parameters(g);
	for (unsigned step = 0; step < opt->steps; step++) {
		training_step(g, step);
		drop_batch(g);
		if (step == 0)
			fprintf(g->out, "# steady state: a looping replay repeats the steps below\n"
					"loop_start\n");
	}
	free(g);
	return 0;
}
