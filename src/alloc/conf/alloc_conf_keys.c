/*
 * alloc_conf_keys.c - the keys each flavor knows and what each accepts.
 *
 * One table of keys per upstream parser. npu: torch_npu's
 * NPUAllocatorConfig::parseArgs (torch_npu/csrc/core/npu/
 * NPUAllocatorConfig.cpp) checks every key, lets PyTorch's
 * AcceleratorAllocatorConfig (c10/core/AllocatorConfig.cpp) parse the
 * common ones, then parses its own. cuda: AcceleratorAllocatorConfig, then
 * CUDAAllocatorConfig (c10/cuda/CUDAAllocatorConfig.cpp). The texts of the
 * refusals are upstream's.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_conf_impl.h"

#define MIN_LARGE_ALLOC_MB 10      /* kMinLargeAlloc / kMB */
#define ALIGN_ROUND_LARGE_KB 16    /* kAlignRoundLarge / 1024 */
#define MAX_REGISTER_THREADS 128   /* CUDAAllocatorConfig::pinned_max_register_threads */
#define MAX_DIVISIONS (1u << 31)   /* what an unsigned entry holds */

static const char *value(const struct parse *p, const struct entry *e)
{
	return conf_tok(p, e->val);
}

/* ---- numbers, strictly: what std::stoull/stod accept, whole ---- */

static bool to_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool to_double(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned log2_u64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

/* ConfigTokenizer::toBool: the two words, spelled as Python does. */
static bool to_bool(const char *s, bool *out)
{
	if (strcmp(s, "True") && strcmp(s, "False"))
		return false;
	*out = strcmp(s, "True") == 0;
	return true;
}

/* Upstream's refusal of a value it cannot read at all. */
static int invalid(struct parse *p, const struct entry *e)
{
	return conf_fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
}

static int u64_value(struct parse *p, const struct entry *e, uint64_t *v)
{
	return to_u64(value(p, e), v) ? 0 : invalid(p, e);
}

/* ---- values of the common (AcceleratorAllocatorConfig) keys ---- */

/* MiB clamped to SIZE_MAX / MiB as upstream; the bound is checked by the caller. */
static int mb_value(struct parse *p, const struct entry *e, size_t *mb)
{
	uint64_t v = 0;
	int rc = u64_value(p, e, &v);

	if (rc)
		return rc;
	*mb = v > SIZE_MAX / MiB ? SIZE_MAX / MiB : (size_t)v;
	return 0;
}

static int large_segment(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	size_t mb = 0;
	int rc = mb_value(p, e, &mb);

	if (rc)
		return rc;
	if (mb <= MIN_LARGE_ALLOC_MB)
		return conf_fail(p, "CachingAllocator option large_segment_size_mb must be > %d MB",
			    MIN_LARGE_ALLOC_MB);
	c->large_segment_size = mb * MiB;
	return 0;
}

/* max_split_size_mb and max_non_split_rounding_mb: >= large_segment_size_mb. */
static int split_bound(struct parse *p, const struct entry *e, size_t min_mb,
		       size_t *out)
{
	size_t mb = 0;
	int rc = mb_value(p, e, &mb);

	if (rc)
		return rc;
	if (mb < min_mb)
		return conf_fail(p, "CachingAllocator option %s too small, must be >= %zu",
			    e->kd->name, min_mb);
	*out = mb * MiB;
	return 0;
}

static int max_split(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	return split_bound(p, e, c->large_segment_size / MiB, &c->max_split_size);
}

static int max_non_split(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	return split_bound(p, e, c->large_segment_size / MiB,
			   &c->max_non_split_rounding);
}

static int gc_threshold(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	double v;

	if (!to_double(value(p, e), &v) || !(v > 0.0 && v < 1.0))
		return conf_fail(p, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
	c->garbage_collection_threshold = v;
	return 0;
}

static int divisions_value(struct parse *p, const char *s, bool zero_ok,
			   unsigned *out)
{
	uint64_t v;

	if (!to_u64(s, &v))
		return conf_fail(p, "CachingAllocator option roundup_power2_divisions is invalid.");
	if (!is_pow2(v) && !(zero_ok && v == 0))
		return conf_fail(p, zero_ok ?
			    "For roundups, the divisions has to be power of 2 or 0 to disable roundup" :
			    "For roundups, the divisions has to be power of 2");
	if (v > MAX_DIVISIONS)
		return conf_fail(p, "For roundups, the divisions must be at most %u",
			    MAX_DIVISIONS);
	*out = (unsigned)v;
	return 0;
}

/*
 * The pairs of a "[name:value,...]" list; `fn` checks each. A trailing ','
 * before ']' is accepted, as upstream does.
 */
typedef int (*pair_fn)(struct parse *p, const char *name, const char *val,
		       void *arg);

static int walk_list(struct parse *p, const struct entry *e, pair_fn fn, void *arg)
{
	const char *key = e->kd->name;
	size_t i = e->val + 1;
	int rc;

	while (i < e->end) {
		if (conf_is_sep(conf_tok(p, i)))
			return conf_fail(p, "Error parsing CachingAllocator settings, expected an entry in %s, got '%s'",
				    key, conf_tok(p, i));
		if (i + 1 >= e->end || strcmp(conf_tok(p, i + 1), ":"))
			return conf_fail(p, "Error parsing CachingAllocator settings, expected ':' in %s",
				    key);
		if (i + 2 >= e->end || conf_is_sep(conf_tok(p, i + 2)))
			return conf_fail(p, "Expected a value for %s entry", key);
		rc = fn(p, conf_tok(p, i), conf_tok(p, i + 2), arg);
		if (rc)
			return rc;
		i += 3;
		if (i < e->end && strcmp(conf_tok(p, i), ","))
			return conf_fail(p, "Error parsing CachingAllocator settings, expected ',' or ']' in %s",
				    key);
		i++;
	}
	return 0;
}

struct roundup_list {
	unsigned *div;
	size_t last;
	bool first;
};

/* `b:v` sets the interval starting at b MiB; the first also fills below it; `>:v` fills above the last. */
static int roundup_pair(struct parse *p, const char *name, const char *val, void *arg)
{
	struct roundup_list *l = arg;
	unsigned v = 0;
	uint64_t b;
	size_t idx;
	int rc = divisions_value(p, val, true, &v);

	if (rc)
		return rc;
	if (strcmp(name, ">") == 0) {
		for (idx = l->last + 1; idx < NPA_ROUNDUP_INTERVALS; idx++)
			l->div[idx] = v;
		return 0;
	}
	if (!to_u64(name, &b))
		return conf_fail(p, "CachingAllocator option roundup_power2_divisions is invalid.");
	if (!is_pow2(b))
		return conf_fail(p, "For roundups, the intervals have to be power of 2");
	idx = log2_u64(b);
	if (idx > NPA_ROUNDUP_INTERVALS - 1)
		idx = NPA_ROUNDUP_INTERVALS - 1;
	for (size_t j = 0; l->first && j < idx; j++)
		l->div[j] = v;
	l->first = false;
	l->div[idx] = v;
	l->last = idx;
	return 0;
}

static int roundup(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	struct roundup_list l = { c->roundup_power2_divisions, 0, true };
	unsigned v = 0;
	int rc;

	if (strcmp(value(p, e), "[") == 0)
		return walk_list(p, e, roundup_pair, &l);
	rc = divisions_value(p, value(p, e), false, &v);
	if (rc)
		return rc;
	for (size_t i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		c->roundup_power2_divisions[i] = v;
	return 0;
}

static bool *bool_field(struct npa_conf *c, int key)
{
	switch (key) {
	case NPA_CONF_pin_memory_expandable_segments:
		return &c->pin_memory_expandable_segments;
	case NPA_CONF_expandable_segments:
		return &c->expandable_segments;
	case NPA_CONF_throw_on_npumalloc_oom:
		return &c->throw_on_npumalloc_oom;
	case NPA_CONF_multi_stream_lazy_reclaim:
		return &c->multi_stream_lazy_reclaim;
	default:
		return NULL;
	}
}

static int set_bool(const struct entry *e, struct npa_conf *c, bool v)
{
	bool *field = bool_field(c, e->kd->key);

	if (field)
		*field = v;
	return 0;
}

/* ConfigTokenizer::toBool. */
static int acc_bool(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	struct echo echo;
	bool v;

	if (!to_bool(value(p, e), &v))
		return conf_fail(p, "Expected 'True' or 'False' at index %zu in ConfigTokenizer but got '%s'",
				 e->val, conf_echo(&echo, value(p, e)));
	return set_bool(e, c, v);
}

/* ---- values of torch_npu's own keys ---- */

static int npu_bool(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	bool v;

	if (!to_bool(value(p, e), &v))
		return conf_fail(p, "Expected a single True/False argument for %s", e->kd->name);
	return set_bool(e, c, v);
}

/* isDigit() then stoi(): digits that fit an int. */
static int npu_int(struct parse *p, const struct entry *e, unsigned *out)
{
	uint64_t v = 0;
	int rc = u64_value(p, e, &v);

	if (rc)
		return rc;
	if (v > INT32_MAX)
		return invalid(p, e);
	*out = (unsigned)v;
	return 0;
}

static int base_addr(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	const char *v = value(p, e);
	unsigned kb = 0;
	int rc = npu_int(p, e, &kb);

	if (rc)
		return rc;
	/* Upstream compares the length with to_string(val): no leading zeros. */
	if ((v[0] == '0' && v[1]) || kb > ALIGN_ROUND_LARGE_KB)
		return conf_fail(p, "CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int");
	c->base_addr_aligned = kb * KiB;
	return 0;
}

static int segment_size(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	unsigned mb = 0;
	int rc = npu_int(p, e, &mb);

	if (rc)
		return rc;
	if (mb < 20 || mb > 512)
		return conf_fail(p, "CachingAllocator option segment_size_mb error, must be [20, 512], dtype is int");
	c->segment_size = mb * MiB;
	return 0;
}

static int page_size(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	struct echo echo;

	if (strcmp(value(p, e), "1g"))
		return conf_fail(p, "Unsupported page_size value: %s",
				 conf_echo(&echo, value(p, e)));
	c->page_size_1g = true;
	return 0;
}

static int fraction(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	double v;

	if (!to_double(value(p, e), &v) || !(v >= 0.0 && v <= 1.0))
		return conf_fail(p, "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
	c->per_process_memory_fraction = v;
	return 0;
}

/* ---- values of CUDAAllocatorConfig's own keys ---- */

/* The allocator here is the native one; upstream asserts the backend cannot change at run time. */
static int backend(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	const char *v = value(p, e);

	(void)c;
	if (strcmp(v, "cudaMallocAsync") == 0)
		return conf_fail(p, "Allocator backend parsed at runtime != allocator backend parsed at load time, cudaMallocAsync != native");
	if (strcmp(v, "native"))
		return conf_fail(p, "Unknown allocator backend, options are native and cudaMallocAsync");
	return 0;
}

static int register_threads(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	uint64_t v = 0;
	int rc = u64_value(p, e, &v);

	(void)c;
	if (rc)
		return rc;
	if (!is_pow2(v))
		return conf_fail(p, "Number of register threads has to be power of 2, got %llu",
			    (unsigned long long)v);
	if (v > MAX_REGISTER_THREADS)
		return conf_fail(p, "Number of register threads should be less than or equal to %d, got %llu",
			    MAX_REGISTER_THREADS, (unsigned long long)v);
	return 0;
}

/* The pinned thresholds: MiB, overwritten (not reset) by each string. */
static int pinned_threshold(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	size_t mb = 0;
	int rc = mb_value(p, e, &mb);

	if (rc)
		return rc;
	if (e->kd->key == NPA_CONF_pinned_max_round_threshold_mb)
		c->pinned_max_round_threshold = mb * MiB;
	else
		c->pinned_max_cached_size = mb * MiB;
	return 0;
}

/* torch_npu: toSizeT, 0 (no reserve) allowed. */
static int npu_reserve_segment(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	size_t mb = 0;
	int rc = mb_value(p, e, &mb);

	if (rc == 0)
		c->pinned_reserve_segment_size = mb * MiB;
	return rc;
}

static int reserve_segment(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	uint64_t v = 0;
	int rc = u64_value(p, e, &v);

	if (rc)
		return rc;
	if (v == 0)
		return conf_fail(p, "Pinned reserve segment size has to be greater than 0");
	return npu_reserve_segment(p, e, c);
}

/* Upstream warns about a bad reserve and keeps its default: any word will do. */
static int reserve_spec(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	(void)c;
	if (strcmp(value(p, e), "[") == 0)
		return invalid(p, e);
	return 0;
}

static int any_pair(struct parse *p, const char *name, const char *val, void *arg)
{
	(void)p;
	(void)name;
	(void)val;
	(void)arg;
	return 0;
}

static int reserve_by_class(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	(void)c;
	if (strcmp(value(p, e), "["))
		return invalid(p, e);
	return walk_list(p, e, any_pair, NULL);
}

/* ---- the tables ---- */

#define K(name) NPA_CONF_##name

/* AcceleratorAllocatorConfig's keys, which both flavors' tables hold. */
#define ACCELERATOR_KEYS                                                                                  \
	{ "max_split_size_mb", K(max_split_size_mb), true, max_split },                                   \
	{ "max_non_split_rounding_mb", K(max_non_split_rounding_mb), true, max_non_split },               \
	{ "garbage_collection_threshold", K(garbage_collection_threshold), true, gc_threshold },          \
	{ "roundup_power2_divisions", K(roundup_power2_divisions), true, roundup },                       \
	{ "expandable_segments", K(expandable_segments), true, acc_bool },                                \
	{ "large_segment_size_mb", K(large_segment_size_mb), true, large_segment }

#define ACCELERATOR_PINNED_KEYS                                                                  \
	{ "pinned_use_background_threads", NO_EFFECT, true, acc_bool },                          \
	{ "pinned_max_round_threshold_mb", K(pinned_max_round_threshold_mb), true, pinned_threshold }, \
	{ "pinned_max_cached_size_mb", K(pinned_max_cached_size_mb), true, pinned_threshold }

static const struct keydef npu_keys[] = {
	ACCELERATOR_KEYS,
	{ "segment_size_mb", K(segment_size_mb), false, segment_size },
	{ "base_addr_aligned_kb", K(base_addr_aligned_kb), false, base_addr },
	{ "page_size", K(page_size), false, page_size },
	{ "per_process_memory_fraction", K(per_process_memory_fraction), false, fraction },
	{ "throw_on_npumalloc_oom", K(throw_on_npumalloc_oom), false, npu_bool },
	{ "multi_stream_lazy_reclaim", K(multi_stream_lazy_reclaim), false, npu_bool },
	ACCELERATOR_PINNED_KEYS,
	{ "pin_memory_expandable_segments", K(pin_memory_expandable_segments), false, npu_bool },
	{ "pinned_mem_register", NO_EFFECT, false, npu_bool },
	{ "pinned_reserve_segment_size_mb", K(pinned_reserve_segment_size_mb), false,
	  npu_reserve_segment },
	{ "release_lock_on_npumalloc", NO_EFFECT, false, npu_bool },
};

static const struct keydef cuda_keys[] = {
	ACCELERATOR_KEYS,
	{ "per_process_memory_fraction", K(per_process_memory_fraction), false, fraction },
	{ "throw_on_cudamalloc_oom", K(throw_on_npumalloc_oom), false, acc_bool },
	ACCELERATOR_PINNED_KEYS,
	{ "backend", NO_EFFECT, false, backend },
	{ "release_lock_on_cudamalloc", NO_EFFECT, false, acc_bool },
	{ "release_lock_on_hipmalloc", NO_EFFECT, false, acc_bool },
	{ "pinned_use_cuda_host_register", NO_EFFECT, false, acc_bool },
	{ "pinned_use_hip_host_register", NO_EFFECT, false, acc_bool },
	{ "pinned_num_register_threads", NO_EFFECT, false, register_threads },
	{ "pinned_reserve_segment_size_mb", K(pinned_reserve_segment_size_mb), false,
	  reserve_segment },
	{ "graph_capture_record_stream_reuse", NO_EFFECT, false, acc_bool },
	{ "pinned_free_catch_all", NO_EFFECT, false, acc_bool },
	{ "expandable_segments_reserve", NO_EFFECT, false, reserve_spec },
	{ "expandable_segments_reserve_by_class", NO_EFFECT, false, reserve_by_class },
};

static const struct dialect dialects[] = {
	[NPA_CONF_DIALECT_TORCH_NPU] = {
		.keys = npu_keys,
		.nkeys = sizeof(npu_keys) / sizeof(npu_keys[0]),
		.unknown_key = "Unrecognized key '%s' in NPU allocator config, ",
		.empty_is_noop = true,
		.expandable_excludes_split_gc = true,
		/* kAlignRoundLarge */
		.base_addr_aligned = 16 * KiB,
	},
	[NPA_CONF_DIALECT_PYTORCH] = {
		.keys = cuda_keys,
		.nkeys = sizeof(cuda_keys) / sizeof(cuda_keys[0]),
		.unknown_key = "Unrecognized key '%s' in Accelerator allocator config.",
	},
};

const struct dialect *conf_dialect_of(const struct npa_flavor *flavor)
{
	if (!flavor || flavor->conf_dialect != NPA_CONF_DIALECT_PYTORCH)
		return &dialects[NPA_CONF_DIALECT_TORCH_NPU];
	return &dialects[NPA_CONF_DIALECT_PYTORCH];
}

const struct keydef *conf_find_key(const struct dialect *d, const char *name)
{
	for (size_t i = 0; i < d->nkeys; i++)
		if (strcmp(d->keys[i].name, name) == 0)
			return &d->keys[i];
	return NULL;
}

const char *npa_conf_key_name(enum npa_conf_key k, const struct npa_flavor *flavor)
{
	const struct dialect *d = conf_dialect_of(flavor);

	for (size_t i = 0; i < d->nkeys; i++)
		if (d->keys[i].key == (int)k)
			return d->keys[i].name;
	return NULL;
}
