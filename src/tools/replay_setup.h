/*
 * replay_setup.h - what the offline replay programs (npumem-replay,
 * npumem-whatif) set up alike: the configuration from an ini and the
 * command line, the allocator settings over it, the plug-in folders.
 */
#ifndef NPUMEMFS_REPLAY_SETUP_H
#define NPUMEMFS_REPLAY_SETUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/conf/alloc_conf.h"
#include "alloc/switch/allocator_switch.h"
#include "config.h"

struct replay_setup {
	const char *config;   /* --config, or NULL */
	const char *flavor;   /* --flavor, or NULL */
	uint64_t capacity;    /* --device-capacity, 0: the ini's */
	int devices;          /* --devices, 0: the ini's, or what the trace names */
	char plugin_dirs[PATH_MAX]; /* --plugin-dir folders, made absolute; "": the ini's */
};

/*
 * One of the options both programs take alike, by its getopt value:
 * --config 'c', --flavor 'f', --device-capacity 'C', --devices 'd',
 * --plugin-dir 'P'. 0 with it in *s, 1 if `c` is none of them, or
 * -errno with the reason in err.
 */
int replay_setup_option(struct replay_setup *s, int c, const char *arg, char *err,
			size_t errlen);
/* The ini, the environment, then the command line over them: 0, or
 * -errno with "FILE:LINE: reason" in err. */
int replay_setup_config(const struct replay_setup *s, int trace_max_device,
			struct nmfs_config *cfg, char *err, size_t errlen);
/* The ini's alloc_conf, then `alloc_conf` (may be NULL) over it, on the
 * flavor's defaults: 0, or -EINVAL with upstream's message in err. */
int replay_setup_conf(const struct nmfs_config *cfg, const char *alloc_conf,
		      struct npa_conf *out, char *err, size_t errlen);
/*
 * The switch over `caching` with plug-in `spec` current, under the
 * daemon's rules: trust (cfg's plugin_dirs), and the ini's
 * plugin_isolation and plugin_timeout, so a plug-in runs in a host
 * process of its own unless the ini says none. 0, or -errno with the
 * reason in err: -EFAULT when the plug-in's own code faulted in the load
 * (its init hook), -EINVAL when the spec was refused; *out is set once
 * the switch exists, for the caller to destroy on failure too.
 */
int replay_setup_switch(const struct nmfs_config *cfg, struct npa *caching,
			const char *spec, struct sw **out, char *err, size_t errlen);

#endif /* NPUMEMFS_REPLAY_SETUP_H */
