/*
 * daemon.c - bring the daemon's parts up in order and down in reverse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <acl/acl_rt.h>

#include "alloc/acl/acl_adapter.h"
#include "alloc/acl/block_handle.h"
#include "workload/op_launch.h"

#include "daemon.h"
#include "fuse_ops.h"
#include "graphs.h"
#include "mempools.h"
#include "alloc/host/host_allocator.h"
#include "workload/pinned_store.h"

static int start_alloc(struct nmfs *d, const struct nmfs_options *o, struct npa **a,
		       char *err, size_t errlen)
{
	const char *alloc_conf = o->alloc_conf ? o->alloc_conf : "";
	struct npa_options opt = { .flavor = d->flavor,
				   .device_count = d->device_count,
				   .host_capacity = o->host_capacity,
				   .no_caching = o->no_caching };
	char why[NPA_CONF_ERRLEN];
	int rc;

	npa_conf_default(&opt.conf, opt.flavor);
	if (alloc_conf[0] &&
	    (rc = npa_conf_parse(&opt.conf, opt.flavor, alloc_conf,
				 NPA_ORIGIN_INI, why, sizeof(why)))) {
		snprintf(err, errlen, "alloc_conf: %s", why);
		return rc;
	}
	if (npa_conf_warning(&opt.conf, why, sizeof(why)))
		dlog_printf(&d->log, "%s", why);
	rc = npa_create(&opt, a);
	if (rc)
		snprintf(err, errlen, "cannot create the allocator: %s", strerror(-rc));
	return rc;
}

static void log_unload(void *ctx, const char *name, const char *path)
{
	struct nmfs *d = ctx;

	dlog_printf(&d->log, "allocator %s (%s) unloaded: it holds no blocks any more",
		    name, path);
}

/* A plug-in that crashed in a call: the daemon goes on without it. */
static void log_fault(void *ctx, const char *name, const char *what)
{
	struct nmfs *d = ctx;

	dlog_printf(&d->log, "allocator %s: %s; the caching allocator is current", name, what);
}

/* torch_npu's own words where it would warn about a plug-in. */
static void log_warning(void *ctx, const char *name, const char *text)
{
	struct nmfs *d = ctx;

	dlog_printf(&d->log, "allocator %s: UserWarning: %s", name, text);
}

static int sw_fallback_malloc(void *ctx, int device, size_t size, aclrtStream stream,
			      void **ptr, char *err, size_t errlen)
{
	struct nmfs *d = ctx;

	return sw_malloc(d->sw, device, size, stream, ptr, err, errlen);
}

static int sw_fallback_free(void *ctx, void *ptr, char *err, size_t errlen)
{
	struct nmfs *d = ctx;

	return sw_free(d->sw, ptr, err, errlen);
}

/* An operator's registered allocator: one of the daemon's adapters is
 * pinned itself (ctl/acl_allocator may unregister it meanwhile); one a
 * plug-in registered keeps that plug-in loaded. */
static void *hold_registered(void *ctx, void *obj, const void *code)
{
	struct nmfs *d = ctx;

	if (acl_adapters_pin(d->acl, obj))
		return obj;
	return sw_hold_code(d->sw, obj, code);
}

static void drop_registered(void *ctx, void *held)
{
	struct nmfs *d = ctx;

	if (!acl_adapters_unpin(d->acl, held))
		sw_drop(d->sw, held);
}

static bool entry_owns(const void *entry, const void *obj, const void *code)
{
	return sw_entry_has_code(entry, obj, code);
}

/* A plug-in going away takes the ACL allocators it registered with it
 * (its destructor may have done so; one that faulted never runs again). */
static void drop_registrations(void *ctx, const struct sw_entry *e)
{
	struct nmfs *d = ctx;
	char ids[256];
	size_t n = op_unregister_code(entry_owns, e, ids, sizeof(ids));

	if (n)
		dlog_printf(&d->log, "acl: ACL allocator%s on runtime stream%s %s unregistered: "
			    "%s functions are %s's code, which is being unloaded",
			    n == 1 ? "" : "s", n == 1 ? "" : "s", ids, n == 1 ? "its" : "their",
			    sw_entry_name(e));
}

/* Block handles, ACL allocators on streams, and operators with workspace
 * (taken from the allocator in use where no stream has one registered). */
static int start_acl(struct nmfs *d)
{
	struct op_fallback fb = { .malloc = sw_fallback_malloc, .free = sw_fallback_free,
				  .hold = hold_registered, .drop = drop_registered,
				  .ctx = d };
	int rc = acl_adapters_create(d->sw, &d->acl);

	if (rc == 0)
		rc = op_launcher_create(&fb, &d->ops);
	if (rc == 0)
		npa_block_handles_bind(d->sw);
	return rc;
}

static void stop_acl(struct nmfs *d)
{
	op_launcher_destroy(d->ops);
	acl_adapters_destroy(d->acl);
	npa_block_handles_bind(NULL);
	d->ops = NULL;
	d->acl = NULL;
}

static int start_switch(struct nmfs *d, struct npa *a, const struct nmfs_options *o,
			char *err, size_t errlen)
{
	struct sw_options opt = {
		.caching = a,
		.device_count = d->device_count,
		.plugin_dirs = o->plugin_dirs ? o->plugin_dirs : "",
		.plugin_host = o->plugin_host,
		.plugin_timeout_ms = o->plugin_timeout_ms,
		.plugin_blocks = &npa_block_handle_api,
		.owner = d->uid,
		.on_unload = log_unload,
		.on_unloading = drop_registrations,
		.on_fault = log_fault,
		.on_warn = log_warning,
		.ctx = d,
	};
	int rc = sw_create(&opt, &d->sw);

	if (rc)
		snprintf(err, errlen, "cannot create the allocator switch: %s",
			 strerror(-rc));
	return rc;
}

/* Device 0's size, as the runtime reports it, for the start-up line. */
static unsigned long long device_bytes(void)
{
	size_t free_bytes = 0, total = 0;

	if (aclrtSetDevice(0) != ACL_SUCCESS ||
	    aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total) != ACL_SUCCESS)
		return 0;
	return total;
}

/* Simulated device memory is this process's memory, committed as it is
 * written: more of it than the host has can end in the OOM killer. */
static void warn_if_beyond_host(struct nmfs *d)
{
	unsigned long long host = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				  (unsigned long long)sysconf(_SC_PAGESIZE);
	unsigned long long all = device_bytes() * (unsigned long long)d->device_count;

	if (host > 0 && all > host)
		dlog_printf(&d->log, "warning: %d device%s of %llu bytes (%llu in all) exceed the "
			    "host's memory (%llu bytes); filling them can get the daemon killed "
			    "by the kernel's OOM killer", d->device_count,
			    d->device_count == 1 ? "" : "s", device_bytes(), all, host);
}

static int copy_options(struct nmfs *d, const struct nmfs_options *opt)
{
	d->flavor = opt->flavor;
	d->device_count = opt->device_count;
	d->replay_loop = opt->loop;
	d->config_text = strdup(opt->config_text ? opt->config_text : "");
	d->replay_path = strdup(opt->replay ? opt->replay : "");
	return d->config_text && d->replay_path ? 0 : -ENOMEM;
}

static void free_options(struct nmfs *d)
{
	free(d->config_text);
	free(d->replay_path);
	free(d->mountpoint);
}

int daemon_init(struct nmfs *d, const struct nmfs_options *opt, char *err,
	      size_t errlen)
{
	const char *path = opt->config_path ? opt->config_path : "";
	struct npa *a = NULL;
	int rc;

	memset(d, 0, sizeof(*d));
	d->started = time(NULL);
	d->uid = getuid();
	trace_pipe_limit_init(&d->trace_waiters, d->uid);
	d->gid = getgid();
	LIST_INIT(&d->open_files);
	pthread_mutex_init(&d->open_files_lock, NULL);
	tree_errors_init(&d->errors);
	kept_texts_init(&d->kept);
	text_times_init(&d->times);
	dlog_init(&d->log, true);
	rc = copy_options(d, opt);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto out_log;
	}
	rc = start_alloc(d, opt, &a, err, errlen);
	if (rc)
		goto out_log;
	rc = start_switch(d, a, opt, err, errlen);
	if (rc)
		goto out_alloc;
	rc = streams_init(&d->streams, d->sw, d->device_count);
	if (rc == 0)
		rc = sampler_init(&d->sampler, d->sw, d->device_count);
	d->sampler.tick = fs_notify_polls;
	d->sampler.tick_arg = d;
	if (rc == 0)
		rc = mempools_new(&d->mempools);
	if (rc == 0)
		rc = graphs_new(&d->graphs);
	if (rc == 0)
		rc = start_acl(d);
	if (rc == 0)
		rc = ps_new(sw_host(d->sw), &d->pinned);
	if (rc) {
		snprintf(err, errlen, "cannot start graphs and tensors: %s", strerror(-rc));
		goto out_switch;
	}
	rw_init(&d->replay, sw_allocator(d->sw), &d->log);
	d->replay.launcher = d->ops;
	dlog_printf(&d->log, "started: %d %s device%s of %llu bytes%s%s",
		    d->device_count, d->flavor->name, d->device_count == 1 ? "" : "s",
		    device_bytes(), path[0] ? ", config " : "", path);
	warn_if_beyond_host(d);
	return 0;

out_switch:
	ps_free(d->pinned);
	stop_acl(d);
	sampler_fini(&d->sampler);
	graphs_free(d->graphs);
	mempools_free(d->mempools, a);
	streams_fini(&d->streams, &d->log);
	sw_destroy(d->sw);
out_alloc:
	npa_destroy(a, NULL);
out_log:
	free_options(d);
	dlog_destroy(&d->log);
	kept_texts_release(&d->kept);
	text_times_release(&d->times);
	tree_errors_release(&d->errors);
	pthread_mutex_destroy(&d->open_files_lock);
	return rc;
}

int daemon_start_threads(struct nmfs *d, char *err, size_t errlen)
{
	int rc = graphs_start(d->graphs);

	if (rc) {
		snprintf(err, errlen, "cannot start the graph thread: %s", strerror(-rc));
		return rc;
	}
	rc = sampler_start(&d->sampler);
	if (rc) {
		snprintf(err, errlen, "cannot start the stats sampler: %s", strerror(-rc));
		return rc;
	}
	if (!d->replay_path[0])
		return 0;
	rc = rw_start(&d->replay, d->replay_path, d->replay_loop, err, errlen);
	if (rc) {
		char why[NMFS_ERRLEN];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "start-up replay not started: %s", why);
	}
	return rc;
}

int daemon_set_mountpoint(struct nmfs *d, const char *path)
{
	char *real = realpath(path, NULL);

	if (real == NULL)
		return -errno;
	free(d->mountpoint);
	d->mountpoint = real;
	return 0;
}

static int check_devices(struct nmfs *d, struct npa *a)
{
	char why[NPA_ERRLEN];
	int bad = 0;

	for (int i = 0; i < d->device_count; i++) {
		if (npa_check(a, i, why, sizeof(why)) == 0)
			continue;
		dlog_printf(&d->log, "invariant check: device%d: %s", i, why);
		bad = -EFAULT;
	}
	if (npa_host_check(npa_host_of(a), why, sizeof(why)) != 0) {
		dlog_printf(&d->log, "invariant check: host: %s", why);
		bad = -EFAULT;
	}
	if (!bad)
		dlog_printf(&d->log, "invariant check: ok");
	return bad;
}

int daemon_fini(struct nmfs *d)
{
	struct npa *a = sw_caching(d->sw);
	uint64_t leaked_bytes = 0;

	rw_stop(&d->replay);
	sampler_fini(&d->sampler);
	/* Graphs first: a capture must end before its stream can go, and a
	 * model before the host bytes its copies read. */
	graphs_free(d->graphs);
	/* Operators end and give their workspace back before streams go. */
	stop_acl(d);
	ps_free(d->pinned);
	mempools_free(d->mempools, a);
	streams_fini(&d->streams, &d->log);
	/* Tensors are gone, so every plug-in is unloaded here. */
	sw_destroy(d->sw);
	d->sw = NULL;
	int rc = check_devices(d, a);
	size_t leaks = npa_destroy(a, &leaked_bytes);
	if (leaks) {
		dlog_printf(&d->log, "leak: %zu block%s (%llu bytes) still allocated",
			    leaks, leaks == 1 ? "" : "s",
			    (unsigned long long)leaked_bytes);
		rc = rc ? rc : -EFAULT;
	} else {
		dlog_printf(&d->log, "no leaks");
	}
	tree_errors_release(&d->errors);
	kept_texts_release(&d->kept);
	text_times_release(&d->times);
	free_options(d);
	dlog_destroy(&d->log);
	pthread_mutex_destroy(&d->open_files_lock);
	return rc;
}
