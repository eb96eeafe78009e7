/*
 * plugin.h - the allocator plug-in ABI, and how npumemfs loads a plug-in.
 *
 * A plug-in is a shared object exporting two functions with torch_npu's
 * NPUPluggableAllocator signatures, plus optional hooks that mirror
 * CUDAPluggableAllocator's setters. Plug-in authors need only the typedefs
 * below (or none: a plug-in written for torch_npu builds unchanged against
 * <acl/acl_rt.h> and libnpusim). The rest of this header is the daemon's
 * loader.
 *
 * Spec line (what is written to ctl/allocator):
 *     PATH ALLOC_FN FREE_FN [HOOK=FN ...]
 * HOOK is one of the names in NPUMEMFS_PLUGIN_HOOKS.
 */
#ifndef NPUMEMFS_PLUGIN_H
#define NPUMEMFS_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <limits.h>
#include <time.h>

#include <acl/acl_rt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The two required functions (torch_npu's documented example signatures). */
typedef void *(*npumemfs_alloc_fn)(ssize_t size, int device, aclrtStream stream);
typedef void (*npumemfs_free_fn)(void *ptr, ssize_t size, int device,
				 aclrtStream stream);

/* upstream MempoolId_t: std::pair<unsigned long long, unsigned long long>. */
struct npumemfs_mempool_id {
	unsigned long long first;
	unsigned long long second;
};
/* C stand-in for upstream's std::function<bool(stream)> pool filter. */
typedef bool (*npumemfs_stream_filter)(aclrtStream stream, void *arg);

/* Optional hooks. */
typedef void (*npumemfs_init_fn)(int device_count);
/* Extension: like init, but a non-zero return refuses the load. */
typedef int (*npumemfs_init_checked_fn)(int device_count);
/*
 * Called by empty_cache. torch_npu passes check_error; a CUDA-style
 * `void reset(void)` works as well, the argument being ignored.
 */
typedef void (*npumemfs_reset_fn)(bool check_error);
typedef void (*npumemfs_memory_fraction_fn)(double fraction, int device);
typedef void *(*npumemfs_base_alloc_fn)(void *ptr, size_t *size);
typedef void (*npumemfs_record_stream_fn)(void *ptr, aclrtStream stream);
typedef void (*npumemfs_begin_allocate_to_pool_fn)(
	int device, struct npumemfs_mempool_id pool,
	npumemfs_stream_filter filter, void *filter_arg);
typedef void (*npumemfs_end_allocate_to_pool_fn)(int device,
						 struct npumemfs_mempool_id pool);
typedef void (*npumemfs_release_pool_fn)(int device,
					 struct npumemfs_mempool_id pool);

/* Hook names accepted in a spec line, in the order they are listed. */
#define NPUMEMFS_PLUGIN_HOOKS(X)                                               \
	X(init)                                                                \
	X(init_checked)                                                        \
	X(reset)                                                               \
	X(memory_fraction)                                                     \
	X(base_alloc)                                                          \
	X(record_stream)                                                       \
	X(begin_allocate_to_pool)                                              \
	X(end_allocate_to_pool)                                                \
	X(release_pool)

enum plugin_hook {
#define PLUGIN_X(name) PLUGIN_HOOK_##name,
	NPUMEMFS_PLUGIN_HOOKS(PLUGIN_X)
#undef PLUGIN_X
	PLUGIN_NHOOKS
};

#define PLUGIN_SYMLEN 128
#define PLUGIN_ERRLEN 1024

/* A loaded plug-in: the resolved functions and where they came from. */
struct plugin {
	char path[PATH_MAX];              /* canonical path of the object */
	char alloc_name[PLUGIN_SYMLEN];
	char free_name[PLUGIN_SYMLEN];
	char hook_name[PLUGIN_NHOOKS][PLUGIN_SYMLEN]; /* "" when not given */
	time_t loaded_at;
	void *handle;                    /* dlopen handle */
	npumemfs_alloc_fn alloc;
	npumemfs_free_fn free;
	struct {
		npumemfs_init_fn init;
		npumemfs_init_checked_fn init_checked;
		npumemfs_reset_fn reset;
		npumemfs_memory_fraction_fn memory_fraction;
		npumemfs_base_alloc_fn base_alloc;
		npumemfs_record_stream_fn record_stream;
		npumemfs_begin_allocate_to_pool_fn begin_allocate_to_pool;
		npumemfs_end_allocate_to_pool_fn end_allocate_to_pool;
		npumemfs_release_pool_fn release_pool;
	} hook;
};

/* What a spec line names, before anything is opened. */
struct plugin_spec {
	char path[PATH_MAX];
	char alloc_name[PLUGIN_SYMLEN];
	char free_name[PLUGIN_SYMLEN];
	char hook_name[PLUGIN_NHOOKS][PLUGIN_SYMLEN];
};

/* "reset" for PLUGIN_HOOK_reset, and so on. */
const char *plugin_hook_name(enum plugin_hook hook);

/*
 * Split a spec line (a trailing newline is allowed). -EINVAL with the
 * reason in err for a relative path, a missing function name, a bad symbol
 * name, an unknown or repeated hook.
 */
int plugin_spec_parse(const char *line, struct plugin_spec *spec, char *err,
		      size_t errlen);

/*
 * Load the plug-in a spec line names and call its init hooks with
 * `device_count`. The object must lie under one of `allowed_dirs`
 * (comma-separated absolute folders), be a regular file owned by root or
 * `owner`, writable by its owner only, in folders that are the same (a
 * world-writable folder is accepted only with the sticky bit, as /tmp).
 * The file is opened once and that open file is what gets loaded.
 *
 * Errors: -EINVAL bad spec, missing symbol or init_checked refusing;
 * -ENOENT no such file; -EACCES refused by the rules above; -ENOEXEC not a
 * loadable shared object. The reason is written to err.
 */
int plugin_open(const char *line, const char *allowed_dirs, uid_t owner,
		int device_count, struct plugin **out, char *err, size_t errlen);
void plugin_close(struct plugin *p);

#ifdef __cplusplus
}
#endif

#endif /* NPUMEMFS_PLUGIN_H */
