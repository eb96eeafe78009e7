/*
 * alloc_conf.c - PYTORCH_NPU_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF settings.
 *
 * One table of keys per upstream parser. npu: torch_npu's
 * NPUAllocatorConfig::parseArgs (torch_npu/csrc/core/npu/
 * NPUAllocatorConfig.cpp) checks every key, lets PyTorch's
 * AcceleratorAllocatorConfig (c10/core/AllocatorConfig.cpp) parse the
 * common ones, then parses its own and refuses expandable segments with a
 * split limit or gc. cuda: AcceleratorAllocatorConfig, then
 * CUDAAllocatorConfig (c10/cuda/CUDAAllocatorConfig.cpp). The texts are
 * upstream's. The grammar is upstream's made strict: upstream's tokenizer
 * lets some malformed strings through half-parsed, this one refuses them
 * whole, so a bad write to ctl/alloc_conf never changes anything.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <npumemfs/alloc_conf.h>

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)
#define LARGE_BUFFER (20 * MiB)    /* kLargeBuffer */
#define MIN_LARGE_ALLOC_MB 10      /* kMinLargeAlloc / kMB */
#define ALIGN_ROUND_LARGE_KB 16    /* kAlignRoundLarge / 1024 */
#define MAX_REGISTER_THREADS 128   /* CUDAAllocatorConfig::pinned_max_register_threads */
#define MAX_DIVISIONS (1u << 31)   /* what an unsigned entry holds */
#define STR_MAX sizeof(((struct npa_conf *)0)->last_string)
#define QUOTE_MAX 96
#define ECHO_MAX 64
#define NO_EFFECT (-1)

/* ---- tokens (upstream ConfigTokenizer) ---- */

struct tokens {
	char text[2 * STR_MAX];       /* each input byte gives at most 2 */
	const char *t[STR_MAX];
	size_t n;
};

static bool is_sep(const char *tok)
{
	return tok[1] == '\0' && strchr(",:[]", tok[0]) != NULL;
}

/* Separators are tokens of their own; blanks vanish, even inside a word. */
static void tokenize(const char *s, struct tokens *tk)
{
	char *w = tk->text;
	bool in_word = false;

	tk->n = 0;
	for (; *s; s++) {
		if (strchr(",:[]", *s)) {
			if (in_word)
				*w++ = '\0';
			in_word = false;
			tk->t[tk->n++] = w;
			*w++ = *s;
			*w++ = '\0';
		} else if (!isspace((unsigned char)*s)) {
			if (!in_word)
				tk->t[tk->n++] = w;
			in_word = true;
			*w++ = *s;
		}
	}
	if (in_word)
		*w = '\0';
}

/* ---- keys and dialects ---- */

struct parse;
struct entry;
typedef int (*value_fn)(struct parse *p, const struct entry *e,
			struct npa_conf *c);

struct keydef {
	const char *name;
	int key;           /* enum npa_conf_key, or NO_EFFECT */
	bool common;       /* AcceleratorAllocatorConfig's: parsed before the flavor's */
	value_fn parse;
};

struct dialect {
	const struct keydef *keys;
	size_t nkeys;
	const char *unknown_key;   /* format with the key */
	bool empty_is_noop;        /* torch_npu returns early on "" */
	bool expandable_excludes_split_gc;
	size_t base_addr_aligned;
};

/* A "key:value" or "key:[...]" of the string, as token indices. */
struct entry {
	const struct keydef *kd;
	size_t key, val, end;      /* val: value or '['; end: value or ']' */
};

struct parse {
	const struct dialect *d;
	const struct tokens *tk;
	const char *str;
	char *err;
	size_t errlen;
};

/* ---- bounded text ---- */

struct out {
	char *buf;
	size_t len, off;
	bool full;
};

static void out_printf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	size_t room = o->off < o->len ? o->len - o->off : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->off : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		o->full = true;
		o->off = o->len ? o->len - 1 : 0;
		return;
	}
	o->off += (size_t)n;
}

/* A printable copy of untrusted text, cut at `max` bytes with "...". */
static void sanitize(char *dst, size_t dstlen, const char *src, size_t max)
{
	size_t i;

	for (i = 0; src[i] && i < max && i + 4 < dstlen; i++) {
		unsigned char ch = (unsigned char)src[i];
		dst[i] = (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
	}
	if (src[i]) {
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
}

/* Upstream's texts end in ".", ", " or nothing; what follows fits each. */
static const char *after_text(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	return n && strchr(",.", s[n - 1]) ? " " : "; ";
}

/*
 * Upstream's text, then the string as given and the keys the flavor knows.
 * Always -EINVAL.
 */
static int fail(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parse *p, const char *fmt, ...)
{
	char head[320], quoted[QUOTE_MAX + 4];
	struct out o = { p->err, p->errlen, 0, false };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	sanitize(quoted, sizeof(quoted), p->str, QUOTE_MAX);
	if (!p->err || !p->errlen)
		return -EINVAL;
	out_printf(&o, "%s%sinput \"%s\"; valid keys:", head, after_text(head), quoted);
	for (size_t i = 0; i < p->d->nkeys; i++)
		out_printf(&o, "%s %s", i ? "," : "", p->d->keys[i].name);
	return -EINVAL;
}

static const char *tok(const struct parse *p, size_t i)
{
	return p->tk->t[i];
}

static const char *value(const struct parse *p, const struct entry *e)
{
	return tok(p, e->val);
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

/* ---- values of the common (AcceleratorAllocatorConfig) keys ---- */

/* MiB clamped to SIZE_MAX / MiB as upstream; the bound is checked by the caller. */
static int mb_value(struct parse *p, const struct entry *e, size_t *mb)
{
	uint64_t v;

	if (!to_u64(value(p, e), &v))
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
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
		return fail(p, "CachingAllocator option large_segment_size_mb must be > %d MB",
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
		return fail(p, "CachingAllocator option %s too small, must be >= %zu",
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
		return fail(p, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
	c->garbage_collection_threshold = v;
	return 0;
}

static int divisions_value(struct parse *p, const char *s, bool zero_ok,
			   unsigned *out)
{
	uint64_t v;

	if (!to_u64(s, &v))
		return fail(p, "CachingAllocator option roundup_power2_divisions is invalid.");
	if (!is_pow2(v) && !(zero_ok && v == 0))
		return fail(p, zero_ok ?
			    "For roundups, the divisions has to be power of 2 or 0 to disable roundup" :
			    "For roundups, the divisions has to be power of 2");
	if (v > MAX_DIVISIONS)
		return fail(p, "For roundups, the divisions must be at most %u",
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
		if (is_sep(tok(p, i)))
			return fail(p, "Error parsing CachingAllocator settings, expected an entry in %s, got '%s'",
				    key, tok(p, i));
		if (i + 1 >= e->end || strcmp(tok(p, i + 1), ":"))
			return fail(p, "Error parsing CachingAllocator settings, expected ':' in %s",
				    key);
		if (i + 2 >= e->end || is_sep(tok(p, i + 2)))
			return fail(p, "Expected a value for %s entry", key);
		rc = fn(p, tok(p, i), tok(p, i + 2), arg);
		if (rc)
			return rc;
		i += 3;
		if (i < e->end && strcmp(tok(p, i), ","))
			return fail(p, "Error parsing CachingAllocator settings, expected ',' or ']' in %s",
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
		return fail(p, "CachingAllocator option roundup_power2_divisions is invalid.");
	if (!is_pow2(b))
		return fail(p, "For roundups, the intervals have to be power of 2");
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
	const char *v = value(p, e);
	char echo[ECHO_MAX + 4];

	if (strcmp(v, "True") && strcmp(v, "False")) {
		sanitize(echo, sizeof(echo), v, ECHO_MAX);
		return fail(p, "Expected 'True' or 'False' at index %zu in ConfigTokenizer but got '%s'",
			    e->val, echo);
	}
	return set_bool(e, c, strcmp(v, "True") == 0);
}

/* Keys other than the Accelerator's with no check of their own: any size. */
static int any_size(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	uint64_t v;

	(void)c;
	if (!to_u64(value(p, e), &v))
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
	return 0;
}

/* ---- values of torch_npu's own keys ---- */

static int npu_bool(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	const char *v = value(p, e);

	if (strcmp(v, "True") && strcmp(v, "False"))
		return fail(p, "Expected a single True/False argument for %s", e->kd->name);
	return set_bool(e, c, strcmp(v, "True") == 0);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* isDigit() then stoi(): digits that fit an int. */
static int npu_int(struct parse *p, const struct entry *e, unsigned *out)
{
	uint64_t v;

	if (!all_digits(value(p, e)) || !to_u64(value(p, e), &v) || v > INT32_MAX)
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
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
		return fail(p, "CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int");
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
		return fail(p, "CachingAllocator option segment_size_mb error, must be [20, 512], dtype is int");
	c->segment_size = mb * MiB;
	return 0;
}

static int page_size(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	char echo[ECHO_MAX + 4];

	if (strcmp(value(p, e), "1g")) {
		sanitize(echo, sizeof(echo), value(p, e), ECHO_MAX);
		return fail(p, "Unsupported page_size value: %s", echo);
	}
	c->page_size_1g = true;
	return 0;
}

static int fraction(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	double v;

	if (!to_double(value(p, e), &v) || !(v >= 0.0 && v <= 1.0))
		return fail(p, "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
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
		return fail(p, "Allocator backend parsed at runtime != allocator backend parsed at load time, cudaMallocAsync != native");
	if (strcmp(v, "native"))
		return fail(p, "Unknown allocator backend, options are native and cudaMallocAsync");
	return 0;
}

static int register_threads(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	uint64_t v;

	(void)c;
	if (!to_u64(value(p, e), &v))
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
	if (!is_pow2(v))
		return fail(p, "Number of register threads has to be power of 2, got %llu",
			    (unsigned long long)v);
	if (v > MAX_REGISTER_THREADS)
		return fail(p, "Number of register threads should be less than or equal to %d, got %llu",
			    MAX_REGISTER_THREADS, (unsigned long long)v);
	return 0;
}

static int reserve_segment(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	uint64_t v;

	(void)c;
	if (!to_u64(value(p, e), &v))
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
	if (v == 0)
		return fail(p, "Pinned reserve segment size has to be greater than 0");
	return 0;
}

/* Upstream warns about a bad reserve and keeps its default: any word will do. */
static int reserve_spec(struct parse *p, const struct entry *e, struct npa_conf *c)
{
	(void)c;
	if (strcmp(value(p, e), "[") == 0)
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
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
		return fail(p, "CachingAllocator option %s is invalid.", e->kd->name);
	return walk_list(p, e, any_pair, NULL);
}

/* ---- the tables ---- */

#define K(name) NPA_CONF_##name

static const struct keydef npu_keys[] = {
	{ "max_split_size_mb", K(max_split_size_mb), true, max_split },
	{ "max_non_split_rounding_mb", K(max_non_split_rounding_mb), true, max_non_split },
	{ "garbage_collection_threshold", K(garbage_collection_threshold), true, gc_threshold },
	{ "roundup_power2_divisions", K(roundup_power2_divisions), true, roundup },
	{ "expandable_segments", K(expandable_segments), true, acc_bool },
	{ "large_segment_size_mb", K(large_segment_size_mb), true, large_segment },
	{ "segment_size_mb", K(segment_size_mb), false, segment_size },
	{ "base_addr_aligned_kb", K(base_addr_aligned_kb), false, base_addr },
	{ "page_size", K(page_size), false, page_size },
	{ "per_process_memory_fraction", K(per_process_memory_fraction), false, fraction },
	{ "throw_on_npumalloc_oom", K(throw_on_npumalloc_oom), false, npu_bool },
	{ "multi_stream_lazy_reclaim", K(multi_stream_lazy_reclaim), false, npu_bool },
	{ "pinned_use_background_threads", NO_EFFECT, true, acc_bool },
	{ "pinned_max_round_threshold_mb", NO_EFFECT, true, any_size },
	{ "pinned_max_cached_size_mb", NO_EFFECT, true, any_size },
	{ "pin_memory_expandable_segments", NO_EFFECT, false, npu_bool },
	{ "pinned_mem_register", NO_EFFECT, false, npu_bool },
	{ "pinned_reserve_segment_size_mb", NO_EFFECT, false, any_size },
	{ "release_lock_on_npumalloc", NO_EFFECT, false, npu_bool },
};

static const struct keydef cuda_keys[] = {
	{ "max_split_size_mb", K(max_split_size_mb), true, max_split },
	{ "max_non_split_rounding_mb", K(max_non_split_rounding_mb), true, max_non_split },
	{ "garbage_collection_threshold", K(garbage_collection_threshold), true, gc_threshold },
	{ "roundup_power2_divisions", K(roundup_power2_divisions), true, roundup },
	{ "expandable_segments", K(expandable_segments), true, acc_bool },
	{ "large_segment_size_mb", K(large_segment_size_mb), true, large_segment },
	{ "per_process_memory_fraction", K(per_process_memory_fraction), false, fraction },
	{ "throw_on_cudamalloc_oom", K(throw_on_npumalloc_oom), false, acc_bool },
	{ "pinned_use_background_threads", NO_EFFECT, true, acc_bool },
	{ "pinned_max_round_threshold_mb", NO_EFFECT, true, any_size },
	{ "pinned_max_cached_size_mb", NO_EFFECT, true, any_size },
	{ "backend", NO_EFFECT, false, backend },
	{ "release_lock_on_cudamalloc", NO_EFFECT, false, acc_bool },
	{ "release_lock_on_hipmalloc", NO_EFFECT, false, acc_bool },
	{ "pinned_use_cuda_host_register", NO_EFFECT, false, acc_bool },
	{ "pinned_use_hip_host_register", NO_EFFECT, false, acc_bool },
	{ "pinned_num_register_threads", NO_EFFECT, false, register_threads },
	{ "pinned_reserve_segment_size_mb", NO_EFFECT, false, reserve_segment },
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

static const struct dialect *dialect_of(const struct npa_flavor *flavor)
{
	if (!flavor || flavor->conf_dialect != NPA_CONF_DIALECT_PYTORCH)
		return &dialects[NPA_CONF_DIALECT_TORCH_NPU];
	return &dialects[NPA_CONF_DIALECT_PYTORCH];
}

static const struct keydef *find_key(const struct dialect *d, const char *name)
{
	for (size_t i = 0; i < d->nkeys; i++)
		if (strcmp(d->keys[i].name, name) == 0)
			return &d->keys[i];
	return NULL;
}

/* ---- the string's shape ---- */

static int expect_value(struct parse *p, const struct keydef *kd)
{
	if (kd->parse == page_size)
		return fail(p, "page_size requires format 'page_size:1g'");
	return fail(p, "Error, expecting %s value", kd->name);
}

/* Index of the ']' closing the list opened at `open`. */
static int list_end(struct parse *p, const struct keydef *kd, size_t open,
		    size_t *end)
{
	for (size_t i = open + 1; i < p->tk->n; i++) {
		if (strcmp(tok(p, i), "]") == 0) {
			*end = i;
			return 0;
		}
		if (strcmp(tok(p, i), "[") == 0)
			return fail(p, "Error parsing CachingAllocator settings, unexpected '[' in %s",
				    kd->name);
	}
	return fail(p, "Expected closing bracket ']' in ConfigTokenizer but reached end of config");
}

/* One "key:value" at token `i`. */
static int split_entry(struct parse *p, size_t i, struct entry *e)
{
	const struct tokens *tk = p->tk;
	char echo[ECHO_MAX + 4];

	e->key = i;
	e->kd = find_key(p->d, tok(p, i));
	if (!e->kd) {
		sanitize(echo, sizeof(echo), tok(p, i), ECHO_MAX);
		return fail(p, p->d->unknown_key, echo);
	}
	if (i + 1 >= tk->n)
		return expect_value(p, e->kd);
	if (strcmp(tok(p, i + 1), ":"))
		return fail(p, "Error parsing CachingAllocator settings, expected ':' after %s",
			    e->kd->name);
	e->val = i + 2;
	if (e->val >= tk->n || (is_sep(tok(p, e->val)) && strcmp(tok(p, e->val), "[")))
		return expect_value(p, e->kd);
	e->end = e->val;
	if (strcmp(tok(p, e->val), "[") == 0)
		return list_end(p, e->kd, e->val, &e->end);
	return 0;
}

/* Every key known, every value present, ',' between entries (one may end the string, as upstream allows). */
static int split_entries(struct parse *p, struct entry *ents, size_t *nents)
{
	const struct tokens *tk = p->tk;
	size_t i = 0, n = 0;
	char echo[ECHO_MAX + 4];
	int rc;

	while (i < tk->n) {
		rc = split_entry(p, i, &ents[n]);
		if (rc)
			return rc;
		i = ents[n].end + 1;
		if (i < tk->n && strcmp(tok(p, i), ",")) {
			sanitize(echo, sizeof(echo), tok(p, i), ECHO_MAX);
			return fail(p, "Error parsing CachingAllocator settings, expected ',' after the value of %s, got '%s'",
				    ents[n].kd->name, echo);
		}
		i++;
		n++;
	}
	*nents = n;
	return 0;
}

/* ---- parse ---- */

enum pass { PASS_LARGE_SEGMENT, PASS_COMMON, PASS_FLAVOR };

static enum pass pass_of(const struct keydef *kd)
{
	if (kd->key == NPA_CONF_large_segment_size_mb)
		return PASS_LARGE_SEGMENT;
	return kd->common ? PASS_COMMON : PASS_FLAVOR;
}

static int apply(struct parse *p, const struct entry *ents, size_t n,
		 enum pass pass, struct npa_conf *c)
{
	for (size_t i = 0; i < n; i++) {
		if (pass_of(ents[i].kd) != pass)
			continue;
		int rc = ents[i].kd->parse(p, &ents[i], c);
		if (rc)
			return rc;
	}
	return 0;
}

/* What AcceleratorAllocatorConfig::parseArgs does before reading a string. */
static void reset_common(struct npa_conf *c)
{
	c->max_split_size = SIZE_MAX;
	c->garbage_collection_threshold = 0.0;
	memset(c->roundup_power2_divisions, 0, sizeof(c->roundup_power2_divisions));
}

static bool key_differs(const struct npa_conf *a, const struct npa_conf *b,
			enum npa_conf_key k);

static void mark_origins(const struct npa_conf *old, struct npa_conf *c,
			 const struct entry *ents, size_t n,
			 enum npa_conf_origin origin)
{
	static const enum npa_conf_key reset[] = {
		NPA_CONF_max_split_size_mb, NPA_CONF_max_non_split_rounding_mb,
		NPA_CONF_garbage_collection_threshold,
		NPA_CONF_roundup_power2_divisions,
	};

	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		if (old->origin[reset[i]] != NPA_ORIGIN_DEFAULT ||
		    key_differs(old, c, reset[i]))
			c->origin[reset[i]] = origin;
	for (size_t i = 0; i < n; i++)
		if (ents[i].kd->key != NO_EFFECT)
			c->origin[ents[i].kd->key] = origin;
}

static int parse_into(struct parse *p, struct npa_conf *c,
		      struct entry *ents, size_t *n)
{
	struct tokens tk;
	int rc;

	tokenize(p->str, &tk);
	p->tk = &tk;
	rc = split_entries(p, ents, n);
	if (!rc) {
		reset_common(c);
		rc = apply(p, ents, *n, PASS_LARGE_SEGMENT, c);
	}
	if (!rc) {
		/* max_non_split_rounding_mb may not be below the segment size. */
		c->max_non_split_rounding = c->large_segment_size;
		rc = apply(p, ents, *n, PASS_COMMON, c);
	}
	if (!rc)
		rc = apply(p, ents, *n, PASS_FLAVOR, c);
	if (!rc && p->d->expandable_excludes_split_gc && c->expandable_segments &&
	    (c->max_split_size != SIZE_MAX || c->garbage_collection_threshold != 0.0))
		rc = fail(p, "`max_split_size_mb` or `garbage_collection_threshold`, cannot be enabled with "
			  "`expandable_segments`, please set `expandable_segments` to `False`.");
	p->tk = NULL;   /* tk dies here */
	return rc;
}

int npa_conf_parse(struct npa_conf *conf, const struct npa_flavor *flavor,
		   const char *str, enum npa_conf_origin origin, char *err,
		   size_t errlen)
{
	struct parse p = { dialect_of(flavor), NULL, str ? str : "", err, errlen };
	struct entry ents[STR_MAX / 2];
	struct npa_conf c;
	size_t n = 0, len;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!conf || !str)
		return fail(&p, "no settings given");
	len = strlen(str);
	if (len >= STR_MAX)
		return fail(&p, "settings too long: %zu bytes, at most %zu", len,
			    STR_MAX - 1);
	if (len == 0 && p.d->empty_is_noop)
		return 0;
	c = *conf;
	rc = parse_into(&p, &c, ents, &n);
	if (rc)
		return rc;
	mark_origins(conf, &c, ents, n, origin);
	memcpy(c.last_string, str, len + 1);
	*conf = c;
	return 0;
}

void npa_conf_default(struct npa_conf *conf, const struct npa_flavor *flavor)
{
	memset(conf, 0, sizeof(*conf));
	conf->max_split_size = SIZE_MAX;
	conf->max_non_split_rounding = LARGE_BUFFER;
	conf->large_segment_size = LARGE_BUFFER;
	conf->per_process_memory_fraction = 1.0;
	conf->base_addr_aligned = dialect_of(flavor)->base_addr_aligned;
}

/* Interval index of a size: floor(log2(size)) - 20, clamped to 0..15. */
static unsigned divisions_index(size_t size)
{
	if (size == 0)
		return 0;
	int log2 = 63 - __builtin_clzll((unsigned long long)size);
	int idx = log2 - 20;
	if (idx < 0)
		idx = 0;
	if (idx > NPA_ROUNDUP_INTERVALS - 1)
		idx = NPA_ROUNDUP_INTERVALS - 1;
	return (unsigned)idx;
}

unsigned npa_conf_divisions(const struct npa_conf *conf, size_t size)
{
	return conf->roundup_power2_divisions[divisions_index(size)];
}

/* ---- names, format, diff ---- */

const char *npa_conf_key_name(enum npa_conf_key k, const struct npa_flavor *flavor)
{
	const struct dialect *d = dialect_of(flavor);

	for (size_t i = 0; i < d->nkeys; i++)
		if (d->keys[i].key == (int)k)
			return d->keys[i].name;
	return NULL;
}

const char *npa_conf_origin_name(enum npa_conf_origin o)
{
	static const char *const names[] = {
		[NPA_ORIGIN_DEFAULT] = "default",
		[NPA_ORIGIN_INI] = "ini",
		[NPA_ORIGIN_CLI] = "cli",
		[NPA_ORIGIN_WRITE] = "write",
	};

	if ((unsigned)o >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[o];
}

/* The shortest text strtod() reads back as exactly `v`. */
static void format_double(struct out *o, double v)
{
	char b[32];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	out_printf(o, "%s", b);
}

/*
 * "[1:d0,2:d1,...,>:dt]": each interval up to the start of the run that
 * ends the table, then '>' for that run. Interval 0 is always explicit
 * because '>' only fills above the last entry.
 */
static void format_divisions(struct out *o, const unsigned *div)
{
	size_t tail = NPA_ROUNDUP_INTERVALS - 1;

	while (tail > 1 && div[tail - 1] == div[NPA_ROUNDUP_INTERVALS - 1])
		tail--;
	out_printf(o, "[");
	for (size_t i = 0; i < tail; i++)
		out_printf(o, "%llu:%u,", 1ull << i, div[i]);
	out_printf(o, ">:%u]", div[tail]);
}

static void format_value(struct out *o, const struct npa_conf *c,
			 enum npa_conf_key k)
{
	switch (k) {
	case NPA_CONF_max_split_size_mb:
		if (c->max_split_size == SIZE_MAX)
			out_printf(o, "-");
		else
			out_printf(o, "%zu", c->max_split_size / MiB);
		break;
	case NPA_CONF_max_non_split_rounding_mb:
		out_printf(o, "%zu", c->max_non_split_rounding / MiB);
		break;
	case NPA_CONF_garbage_collection_threshold:
		if (c->garbage_collection_threshold == 0.0)
			out_printf(o, "-");
		else
			format_double(o, c->garbage_collection_threshold);
		break;
	case NPA_CONF_roundup_power2_divisions:
		format_divisions(o, c->roundup_power2_divisions);
		break;
	case NPA_CONF_expandable_segments:
		out_printf(o, "%s", c->expandable_segments ? "True" : "False");
		break;
	case NPA_CONF_large_segment_size_mb:
		out_printf(o, "%zu", c->large_segment_size / MiB);
		break;
	case NPA_CONF_segment_size_mb:
		if (c->segment_size == 0)
			out_printf(o, "-");
		else
			out_printf(o, "%zu", c->segment_size / MiB);
		break;
	case NPA_CONF_base_addr_aligned_kb:
		out_printf(o, "%zu", c->base_addr_aligned / KiB);
		break;
	case NPA_CONF_page_size:
		out_printf(o, "%s", c->page_size_1g ? "1g" : "-");
		break;
	case NPA_CONF_per_process_memory_fraction:
		format_double(o, c->per_process_memory_fraction);
		break;
	case NPA_CONF_throw_on_npumalloc_oom:
		out_printf(o, "%s", c->throw_on_npumalloc_oom ? "True" : "False");
		break;
	case NPA_CONF_multi_stream_lazy_reclaim:
		out_printf(o, "%s", c->multi_stream_lazy_reclaim ? "True" : "False");
		break;
	case NPA_CONF_NKEYS:
		break;
	}
}

int npa_conf_format(const struct npa_conf *conf, const struct npa_flavor *flavor,
		    char *buf, size_t buflen)
{
	const struct dialect *d = dialect_of(flavor);
	struct out o = { buf, buflen, 0, false };

	if (buf && buflen)
		buf[0] = '\0';
	for (int k = 0; k < NPA_CONF_NKEYS; k++) {
		const char *name = npa_conf_key_name((enum npa_conf_key)k, flavor);
		if (!name)
			continue;
		out_printf(&o, "%s ", name);
		format_value(&o, conf, (enum npa_conf_key)k);
		out_printf(&o, " %s\n", npa_conf_origin_name(conf->origin[k]));
	}
	out_printf(&o, "# accepted, no effect on the simulator:");
	for (size_t i = 0; i < d->nkeys; i++)
		if (d->keys[i].key == NO_EFFECT)
			out_printf(&o, " %s", d->keys[i].name);
	out_printf(&o, "\n");
	return o.full ? -ENOSPC : (int)o.off;
}

bool npa_conf_key_runtime_safe(enum npa_conf_key k)
{
	switch (k) {
	case NPA_CONF_max_split_size_mb:
	case NPA_CONF_max_non_split_rounding_mb:
	case NPA_CONF_garbage_collection_threshold:
	case NPA_CONF_roundup_power2_divisions:
	case NPA_CONF_expandable_segments:
	case NPA_CONF_per_process_memory_fraction:
	case NPA_CONF_throw_on_npumalloc_oom:
		return true;
	default:
		return false;
	}
}

static bool key_differs(const struct npa_conf *a, const struct npa_conf *b,
			enum npa_conf_key k)
{
	switch (k) {
	case NPA_CONF_max_split_size_mb:
		return a->max_split_size != b->max_split_size;
	case NPA_CONF_max_non_split_rounding_mb:
		return a->max_non_split_rounding != b->max_non_split_rounding;
	case NPA_CONF_garbage_collection_threshold:
		return a->garbage_collection_threshold != b->garbage_collection_threshold;
	case NPA_CONF_roundup_power2_divisions:
		return memcmp(a->roundup_power2_divisions, b->roundup_power2_divisions,
			      sizeof(a->roundup_power2_divisions)) != 0;
	case NPA_CONF_expandable_segments:
		return a->expandable_segments != b->expandable_segments;
	case NPA_CONF_large_segment_size_mb:
		return a->large_segment_size != b->large_segment_size;
	case NPA_CONF_segment_size_mb:
		return a->segment_size != b->segment_size;
	case NPA_CONF_base_addr_aligned_kb:
		return a->base_addr_aligned != b->base_addr_aligned;
	case NPA_CONF_page_size:
		return a->page_size_1g != b->page_size_1g;
	case NPA_CONF_per_process_memory_fraction:
		return a->per_process_memory_fraction != b->per_process_memory_fraction;
	case NPA_CONF_throw_on_npumalloc_oom:
		return a->throw_on_npumalloc_oom != b->throw_on_npumalloc_oom;
	case NPA_CONF_multi_stream_lazy_reclaim:
		return a->multi_stream_lazy_reclaim != b->multi_stream_lazy_reclaim;
	case NPA_CONF_NKEYS:
		break;
	}
	return false;
}

int npa_conf_diff(const struct npa_conf *a, const struct npa_conf *b,
		  enum npa_conf_key *keys, int max)
{
	int n = 0;

	for (int k = 0; k < NPA_CONF_NKEYS; k++) {
		if (!key_differs(a, b, (enum npa_conf_key)k))
			continue;
		if (keys && n < max)
			keys[n] = (enum npa_conf_key)k;
		n++;
	}
	return n;
}
