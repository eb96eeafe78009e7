/*
 * daemon.h - everything one npumemfs process owns, in one struct.
 *
 * The allocator, the tensor stores, the replay thread and the log belong
 * to the daemon; FUSE operations reach them through
 * fuse_get_context()->private_data.
 */
#ifndef NPUMEMFS_DAEMON_H
#define NPUMEMFS_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/queue.h>
#include <time.h>

#include "alloc/switch/allocator_switch.h"
#include "alloc/caching/caching_allocator.h"
#include "workload/tensor_store.h"

#include "daemon_log.h"
#include "kept_text.h"
#include "text_times.h"
#include "replay_worker.h"
#include "stat_sampler.h"
#include "streams.h"
#include "trace_pipe.h"
#include "tree.h"

#define NMFS_ERRLEN 1024

struct fh;
struct fs_graphs;
struct fs_mempools;
struct acl_adapters;
struct op_launcher;
struct pinned_store;
LIST_HEAD(fh_list, fh);

/* What the program that mounts asks of the daemon (it has read the ini). */
struct nmfs_options {
	const struct npa_flavor *flavor;
	int device_count;          /* devices of the running machine to show */
	uint64_t host_capacity;    /* the machine's pinned host memory, 0: 64 GiB */
	const char *alloc_conf;    /* PYTORCH_NPU_ALLOC_CONF syntax, "" none */
	const char *plugin_dirs;   /* where plug-ins may be loaded from */
	const char *plugin_host;   /* the host program plug-ins run in; NULL: in the daemon */
	unsigned plugin_timeout_ms; /* bound on one call into a plug-in's host */
	bool no_caching;           /* PYTORCH_NO_NPU_MEMORY_CACHING */
	const char *replay;        /* start-up trace, "" none */
	bool loop;
	const char *config_text;   /* what mnt/config shows */
	const char *config_path;   /* for the log, "" none */
};

struct nmfs {
	char *mountpoint;        /* absolute; NULL until known */
	char *config_text;
	char *replay_path;       /* start-up trace, "" none */
	bool replay_loop;
	/* The allocator: what tensors, replays and views use (the built-in
	 * caching allocator or a plug-in), and through sw_caching the built-in
	 * one's settings, OOM reports, history, pools and graphs. */
	struct sw *sw;
	const struct npa_flavor *flavor;
	int device_count;
	struct fs_streams streams; /* each device's streams and their tensors */
	struct fs_graphs *graphs;  /* ctl/graph: NPUGraphs by name */
	struct fs_mempools *mempools; /* ctl/mempool: MemPools by name */
	struct acl_adapters *acl;  /* ctl/acl_allocator: allocators registered on streams */
	struct op_launcher *ops;   /* ctl/op: operators and their workspace */
	struct pinned_store *pinned;  /* pinned/NAME: pin_memory() tensors */
	struct replay_worker replay;
	struct stat_sampler sampler; /* byte stats over time, for the history picture */
	struct tree_errors errors; /* last refusal of each writable file */
	struct dlog log;
	time_t started;
	uid_t uid;
	gid_t gid;
	/* Handles the kernel has not released yet: a process that exits just
	 * before an unmount leaves its RELEASE unsent, so they are freed here. */
	struct fh_list open_files;
	pthread_mutex_t open_files_lock;
	bool polls_closed;       /* the session is going: no poll may be told */
	struct trace_pipe_limit trace_waiters; /* reads of trace_pipe/deviceN waiting */
	struct kept_texts kept;  /* texts stats rendered, for the opens after them */
	struct text_times times; /* when each generated text last changed */
};

/*
 * Start the allocator on the running machine's devices and build the tree.
 * 0, or a negative errno with the reason in err; nothing is left running.
 */
int daemon_init(struct nmfs *d, const struct nmfs_options *opt, char *err,
	      size_t errlen);
/* Start the stats sampler and the configured start-up replay, if any
 * (after daemonizing: threads do not survive the fork). */
int daemon_start_threads(struct nmfs *d, char *err, size_t errlen);
/* Where the daemon is mounted (made absolute): the files' frames in the
 * memory history name their paths there. 0 or a negative errno. */
int daemon_set_mountpoint(struct nmfs *d, const char *path);
/*
 * Stop the replay, free live tensors, check the allocator's invariants and
 * report leaks, all into the log. 0 when everything was consistent.
 */
int daemon_fini(struct nmfs *d);

#endif /* NPUMEMFS_DAEMON_H */
