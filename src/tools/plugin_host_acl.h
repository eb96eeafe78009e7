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
/* The box of the lane this thread serves (plugin_box.h), and the box's
 * sequence number as this side last saw it; NULL on the plug-in's own
 * threads. */
struct host_lane {
	struct pw_box *box;
	uint32_t seq;
};
extern __thread struct host_lane *host_lane;

/* In a copy a fork in plug-in code made: end it, before it answers for
 * the host or touches a box. */
void host_leave_if_copy(void);

/* Give the plug-in a filter it can call here for the daemon's one. */
void host_filter_wrap(struct plugin_call *c);

#endif /* NPUMEMFS_PLUGIN_HOST_ACL_H */
