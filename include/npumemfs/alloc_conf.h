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

#define NPA_ROUNDUP_INTERVALS 16
#define NPA_CONF_ERRLEN 512

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
	X(multi_stream_lazy_reclaim)

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
};

/* The defaults of `flavor`'s upstream. */
void npa_conf_default(struct npa_conf *conf, const struct npa_flavor *flavor);

/*
 * Parse `str` over a copy of `*conf`; on success store it back, marking
 * each key given with `origin`. On error return -EINVAL, leave `*conf`
 * unchanged and write upstream's message (quoting the string and listing
 * the valid keys) into `err`.
 */
int npa_conf_parse(struct npa_conf *conf, const struct npa_flavor *flavor,
		   const char *str, enum npa_conf_origin origin, char *err,
		   size_t errlen);

/* Divisions for a rounded size (upstream roundup_power2_divisions(size)). */
unsigned npa_conf_divisions(const struct npa_conf *conf, size_t size);

/* Print "key value origin" lines for every option of the flavor. */
int npa_conf_format(const struct npa_conf *conf, const struct npa_flavor *flavor,
		    char *buf, size_t buflen);

#endif /* NPUMEMFS_ALLOC_CONF_H */
