/*
 * config.h - the daemon's ini file (libinih).
 *
 *     [device]    count, flavor (npu|cuda), capacity, page_size,
 *                 malloc_latency_us, free_latency_us
 *     [host]      capacity (pinned host memory), malloc_latency_us, free_latency_us
 *     [allocator] alloc_conf (PYTORCH_NPU_ALLOC_CONF syntax), plugin_dirs,
 *                 no_memory_caching, plugin_isolation (process|none),
 *                 plugin_timeout (5s, 250ms)
 *     [fs]        allow_other
 *     [workload]  replay (trace path, relative to the ini's folder), loop
 *
 * An unknown section or key, a bad value or a missing file is an error
 * "FILE:LINE: reason", a folder or a device named as the file one that
 * names the file to give instead. Nothing is half-applied.
 */
#ifndef NPUMEMFS_CONFIG_H
#define NPUMEMFS_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "alloc/conf/flavor.h"
#include "base/sbuf.h"

#define NMFS_CONFIG_ERRLEN 1024

struct nmfs_config {
	char path[PATH_MAX];        /* the ini file, "" if none */
	int device_count;           /* 1..NPUSIM_MAX_DEVICES */
	const struct npa_flavor *flavor;
	uint64_t capacity;          /* bytes per device */
	uint64_t page_size;
	uint64_t malloc_latency_us;
	uint64_t free_latency_us;
	uint64_t host_capacity;     /* pinned host memory of the machine */
	uint64_t host_malloc_latency_us;
	uint64_t host_free_latency_us;
	char alloc_conf[512];
	char plugin_dirs[PATH_MAX]; /* comma-separated absolute folders (relative
				     * ones in the ini are taken from its folder) */
	bool no_memory_caching;     /* PYTORCH_NO_NPU_MEMORY_CACHING */
	bool plugin_in_process;     /* plugin_isolation = none */
	unsigned plugin_timeout_ms; /* bound on one call into a plug-in's host */
	bool allow_other;
	char replay[PATH_MAX];      /* absolute path of the start-up trace, "" if none */
	bool loop;
};

/* Built-in defaults: 1 npu device of 32 GiB, 2 MiB pages, no latency. */
void nmfs_config_default(struct nmfs_config *cfg);
/* Load `path` over the defaults. 0, or -EINVAL/-ENOENT with "FILE:LINE: reason";
 * a path that is not a regular file (-EISDIR for a folder, -EINVAL) is
 * refused before it is read, with the file to name instead. */
int nmfs_config_load(struct nmfs_config *cfg, const char *path, char *err,
		     size_t errlen);
/*
 * PYTORCH_NO_NPU_MEMORY_CACHING, when set, decides no_memory_caching over
 * the ini: it is what torch_npu itself reads. Read as torch_npu does
 * (strtol, non-zero is on), so it never refuses a value.
 */
void nmfs_config_env(struct nmfs_config *cfg);
/* The effective configuration as ini text (mnt/config). */
int nmfs_config_format(const struct nmfs_config *cfg, struct sbuf *out);

#endif /* NPUMEMFS_CONFIG_H */
