/*
 * plugin_loader.h - how the daemon loads a plug-in: the spec line, the
 * trust rules for the object, and the resolved functions.
 */
#ifndef NPUMEMFS_PLUGIN_LOADER_H
#define NPUMEMFS_PLUGIN_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <npumemfs/plugin.h>

#include "plugin_call.h"

/* Hook names accepted in a spec line, in the order they are listed. */
#define NPUMEMFS_PLUGIN_HOOKS(X)                                               \
	X(init)                                                                \
	X(init_checked)                                                        \
	X(reset)                                                               \
	X(memory_fraction)                                                     \
	X(base_alloc)                                                          \
	X(record_stream)                                                       \
	X(erase_stream)                                                        \
	X(get_device_stats)                                                    \
	X(reset_peak_status)                                                   \
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
struct plugin_host;

struct plugin_block_api {
	void *(*malloc_block)(size_t size, void *stream, int device);
	void (*free_block)(void *handle);
	void *(*block_ptr)(const void *handle);
	size_t (*block_size)(const void *handle);
};

struct plugin {
	char path[PATH_MAX];              /* canonical path of the object */
	/* Where its code runs: a host process, or this one (NULL). In a host,
	 * the function pointers below are the host's and never called here. */
	struct plugin_host *host;
	char alloc_name[PLUGIN_SYMLEN];
	char free_name[PLUGIN_SYMLEN];
	char hook_name[PLUGIN_NHOOKS][PLUGIN_SYMLEN]; /* "" when not given */
	time_t loaded_at;
	void *handle;                    /* dlopen handle */
	void *base;                      /* where the object is mapped (dladdr) */
	npumemfs_alloc_fn alloc;
	npumemfs_free_fn free;
	struct {
		npumemfs_init_fn init;
		npumemfs_init_checked_fn init_checked;
		npumemfs_reset_fn reset;
		npumemfs_memory_fraction_fn memory_fraction;
		npumemfs_base_alloc_fn base_alloc;
		npumemfs_record_stream_fn record_stream;
		npumemfs_erase_stream_fn erase_stream;
		npumemfs_get_device_stats_fn get_device_stats;
		npumemfs_reset_peak_status_fn reset_peak_status;
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
 * `init_arg` (the device_count upstream's createCustomAllocator passes). The object must lie under one of `allowed_dirs`
 * (comma-separated absolute folders), be a regular file owned by root or
 * `owner`, writable by its owner only, in folders that are the same (a
 * world-writable folder is accepted only with the sticky bit, as /tmp).
 * The file is opened once and that open file is what gets loaded.
 *
 * Errors: -EINVAL bad spec, missing symbol or init_checked refusing;
 * -ENOENT no such file; -EACCES refused by the rules above; -ENOEXEC not a
 * loadable shared object; -EFAULT the init hook faulted (the object stays
 * mapped, and none of its code runs again). The reason is written to err.
 */
/* How a plug-in is run: in a host process of its own (what the daemon
 * does), or in this process behind the fault barrier. */
struct plugin_isolation {
	const char *host_path;   /* NULL: in this process */
	unsigned timeout_ms;     /* bound on one call in a host; 0: the default */
	/* torch_npu's block handles, as the loading program exports them
	 * (MallocBlock ...): a host forwards a plug-in's calls to these. */
	const struct plugin_block_api *blocks;
};

int plugin_open(const char *line, const char *allowed_dirs, uid_t owner,
		int init_arg, const struct plugin_isolation *iso, struct plugin **out,
		char *err, size_t errlen);
/* The loader's part, in whichever process runs the plug-in: load the open
 * object fd and resolve what spec names (the names are copied into p). */
int plugin_load_spec(struct plugin *p, const struct plugin_spec *spec, int fd, char *err,
		     size_t errlen);
/* Whether the plug-in has the hook (it was named, so it was resolved). */
bool plugin_has_hook(const struct plugin *p, enum plugin_hook hook);
/* Run one call where the plug-in lives: 0, -EIO when it is gone already,
 * -EFAULT when this call ended it (what happened in *f). */
int plugin_exec(const struct plugin *p, struct plugin_call *c, struct plugin_fault *f);
void plugin_close(struct plugin *p);
/* Whether `code` (a function's address), called with `obj`, is the
 * plug-in's: in its object, or for a plug-in in a host, one of the
 * trampolines its descriptors run through with a descriptor of its own. */
bool plugin_has_code(const struct plugin *p, const void *obj, const void *code);
/* Forget a plug-in without unloading it: its code stays mapped, none of it
 * (destructors included) runs again. For a plug-in that faulted. */
void plugin_abandon(struct plugin *p);

#endif /* NPUMEMFS_PLUGIN_LOADER_H */
