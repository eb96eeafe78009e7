/*
 * alloc_conf.h - PYTORCH_NPU_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF settings.
 *
 * The same "key:value,key:value" syntax, keys, defaults, ranges, combining
 * rules and error texts as upstream (see the flavor for which upstream).
 * Parsing never aborts: a bad string gives -EINVAL, a message that quotes
 * it, and leaves the settings it was given untouched.
 */
#ifndef NPUMEMFS_ALLOC_CONF_H
#define NPUMEMFS_ALLOC_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flavor.h"

struct sbuf;

#define NPA_ROUNDUP_INTERVALS 16
/* Room for upstream's text, the quoted input and the flavor's key list. */
#define NPA_CONF_ERRLEN 1024

/* Where an option's effective value came from (shown by ctl/alloc_conf). */
enum npa_conf_origin {
	NPA_ORIGIN_DEFAULT = 0,
	NPA_ORIGIN_INI,
	NPA_ORIGIN_CLI,
	NPA_ORIGIN_WRITE,
};

/* Every option a flavor knows, in the order ctl/alloc_conf lists them. */
#define NPA_CONF_KEYS(X)                                                       \
	X(max_split_size_mb)                                                   \
	X(max_non_split_rounding_mb)                                           \
	X(garbage_collection_threshold)                                        \
	X(roundup_power2_divisions)                                            \
	X(expandable_segments)                                                 \
	X(large_segment_size_mb)                                               \
	X(segment_size_mb)                                                     \
	X(base_addr_aligned_kb)                                                \
	X(page_size)                                                           \
	X(per_process_memory_fraction)                                         \
	X(throw_on_npumalloc_oom)                                              \
	X(multi_stream_lazy_reclaim)                                           \
	X(pinned_max_round_threshold_mb)                                       \
	X(pinned_max_cached_size_mb)                                           \
	X(pinned_reserve_segment_size_mb)                                      \
	X(pin_memory_expandable_segments)

enum npa_conf_key {
#define NPA_X(name) NPA_CONF_##name,
	NPA_CONF_KEYS(NPA_X)
#undef NPA_X
	NPA_CONF_NKEYS
};

struct npa_conf {
	size_t max_split_size;          /* bytes; SIZE_MAX = unlimited */
	size_t max_non_split_rounding;  /* bytes; default 20 MiB */
	double garbage_collection_threshold; /* 0 = off */
	unsigned roundup_power2_divisions[NPA_ROUNDUP_INTERVALS]; /* 0 = plain 512 rounding */
	bool expandable_segments;
	size_t large_segment_size;      /* bytes; default 20 MiB (kLargeBuffer) */
	size_t base_addr_aligned;       /* bytes; npu default 16 KiB, 0 = off */
	bool page_size_1g;              /* npu page_size:1g */
	double per_process_memory_fraction; /* npu; 1.0 = no limit */
	bool throw_on_npumalloc_oom;    /* npu; reject instead of retrying */
	bool multi_stream_lazy_reclaim; /* npu */
	enum npa_conf_origin origin[NPA_CONF_NKEYS];
	char last_string[512];          /* the last string parsed, as given */
	size_t segment_size;            /* npu segment_size_mb (deprecated); 0 = unset */
	/* The pinned host allocator's. */
	size_t pinned_max_round_threshold; /* bytes; SIZE_MAX = round every size */
	size_t pinned_max_cached_size;  /* bytes; SIZE_MAX = cache every block */
	size_t pinned_reserve_segment_size; /* bytes; 0 = no reserve segment */
	bool pin_memory_expandable_segments; /* npu; chosen once, at start-up */
};

/* The defaults of `flavor`'s upstream. */
void npa_conf_default(struct npa_conf *conf, const struct npa_flavor *flavor);

/*
 * Parse `str` over a copy of `*conf`; on success store it back, marking
 * each key given with `origin`. On error return -EINVAL, leave `*conf`
 * unchanged and write upstream's message (quoting the string and listing
 * the valid keys) into `err`:
 *
 *   Unrecognized key 'foo' in NPU allocator config, input "foo:1"; valid keys: ...
 *   garbage_collect_threshold is invalid, set it in (0.0, 1.0); input "..."; ...
 *
 * As upstream, every parse first resets max_split_size_mb,
 * garbage_collection_threshold and roundup_power2_divisions, and sets
 * max_non_split_rounding_mb to large_segment_size_mb (parsed first); the
 * other keys keep their values unless given. Those reset keys take `origin`
 * when the reset changes them or undoes an earlier setting. The npu flavor
 * leaves everything, last_string included, untouched for "" (torch_npu
 * returns early); the cuda flavor resets. Strings of 512 bytes or more are
 * refused. Keys upstream accepts that only matter on real hardware
 * (release_lock_on_npumalloc, pinned_mem_register, backend:native, ...) are checked and
 * accepted with no effect; npa_conf_print names them.
 */
int npa_conf_parse(struct npa_conf *conf, const struct npa_flavor *flavor,
		   const char *str, enum npa_conf_origin origin, char *err,
		   size_t errlen);

/* Divisions for a rounded size (upstream roundup_power2_divisions(size)). */
unsigned npa_conf_divisions(const struct npa_conf *conf, size_t size);

/*
 * Print "key value origin" lines for every option of the flavor, in
 * NPA_CONF_KEYS order, then one "# ..." line naming the keys accepted with
 * no effect on the simulator. Values are in upstream's syntax: sizes in
 * MiB (base_addr_aligned_kb in KiB), booleans True/False, fractions in the
 * shortest form that reads back exactly, roundup_power2_divisions always as
 * the list "[1:d0,2:d1,...,>:dN]". "-" marks an option that is not set and
 * has no upstream spelling (max_split_size_mb unlimited,
 * garbage_collection_threshold off, page_size not 1g, segment_size_mb
 * unset): leave such keys out. Joining the other lines as "key:value" with
 * ',' and parsing that over npa_conf_default gives the same settings.
 * Appends to `out`; returns 0 or the buffer's error.
 */
int npa_conf_print(struct sbuf *out, const struct npa_conf *conf,
		   const struct npa_flavor *flavor);

/* npa_conf_print into `buf`, cut to fit: the length written, or -ENOSPC if
 * `buflen` is too small. */
int npa_conf_format(const struct npa_conf *conf, const struct npa_flavor *flavor,
		    char *buf, size_t buflen);

/* The key as the flavor spells it (cuda: throw_on_cudamalloc_oom), or NULL
 * if the flavor has no such option. */
const char *npa_conf_key_name(enum npa_conf_key k, const struct npa_flavor *flavor);

/* "default", "ini", "cli" or "write". */
const char *npa_conf_origin_name(enum npa_conf_origin o);

/*
 * Whether an option may change while blocks are live: the ones torch_npu's
 * _set_allocator_settings() or a re-parse may change at run time (split,
 * rounding, gc, fraction, throw_on_npumalloc_oom, expandable_segments); not
 * those that shape segments or addresses (large_segment_size_mb,
 * segment_size_mb, page_size, base_addr_aligned_kb) nor
 * multi_stream_lazy_reclaim, which _set_allocator_settings() refuses.
 */
bool npa_conf_key_runtime_safe(enum npa_conf_key k);

/*
 * torch_npu's warning for pinned_max_round_threshold_mb or
 * pinned_max_cached_size_mb set with pin_memory_expandable_segments on
 * (the thresholds then do nothing), or NULL.
 */
const char *npa_conf_pinned_warning(const struct npa_conf *conf);
/*
 * That warning as the line the daemon logs and npumem-replay prints, so
 * both say the same words: true with the line in buf, false when `conf`
 * earns no warning.
 */
bool npa_conf_warning(const struct npa_conf *conf, char *buf, size_t len);

/*
 * Keys whose values differ between `a` and `b` (origins and last_string
 * are not values), in NPA_CONF_KEYS order: at most `max` are stored in
 * `keys` (may be NULL with max 0); returns how many differ in all.
 */
int npa_conf_diff(const struct npa_conf *a, const struct npa_conf *b,
		  enum npa_conf_key *keys, int max);

#endif /* NPUMEMFS_ALLOC_CONF_H */
