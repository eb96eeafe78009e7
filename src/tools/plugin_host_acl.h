/*
 * plugin_host_acl.h - the ACL runtime inside a plug-in host: each function
 * a message to the daemon, whose simulator answers it.
 */
#ifndef NPUMEMFS_PLUGIN_HOST_ACL_H
#define NPUMEMFS_PLUGIN_HOST_ACL_H

#include <pthread.h>

#include "alloc/plugin/plugin_loader.h"
#include "alloc/plugin/plugin_wire.h"

struct host {
	struct plugin plugin;
	int async_fd;
	pthread_mutex_t async_lock; /* one async call in flight */
};

extern struct host the_host;
/* The lane this thread serves, or -1 on the plug-in's own threads. */
extern __thread int host_lane_fd;

/* Give the plug-in a filter it can call here for the daemon's one. */
void host_filter_wrap(struct plugin_call *c);

#endif /* NPUMEMFS_PLUGIN_HOST_ACL_H */
