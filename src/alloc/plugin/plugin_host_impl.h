/*
 * plugin_host_impl.h - a plug-in host's daemon-side state, shared by
 * plugin_host.c (the process, its lanes and calls) and plugin_host_serve.c
 * (the ACL calls it makes, checked against what it owns).
 */
#ifndef NPA_PLUGIN_HOST_IMPL_H
#define NPA_PLUGIN_HOST_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "plugin_host.h"
#include "plugin_wire.h"

struct pw_box;

struct ph_lane {
	struct pw_box *box;        /* shared with the host (plugin_box.h) */
	uint32_t seq;              /* the box's sequence number, our side's view */
	struct pw_msg *msg;        /* a private copy: PW_MSG_MAX bytes */
	struct ph_lane *next;      /* idle lanes */
	struct ph_lane *next_all;  /* every lane, for the end to be told */
};

struct ph_owned;
struct ph_desc;
struct ph_filter;

struct plugin_host {
	pid_t pid;
	int pidfd;
	int ctl_fd;                /* lanes' sockets go to the host on it */
	int async_fd;
	int fault_fd;              /* the host's fault handler's report */
	int stop_fd;               /* eventfd: the watcher's cue to leave */
	unsigned timeout_ms;
	const struct plugin_block_api *blocks; /* may be NULL */
	pthread_t watcher;
	struct pw_msg *async_msg;
	void (*on_death)(void *arg, enum plugin_fn where);
	void *death_arg;

	pthread_mutex_t lock;      /* lanes, the end, owned, filters, descs */
	struct ph_lane *idle;
	struct ph_lane *all;
	unsigned busy;             /* lanes taken: calls in flight */
	bool ended;
	bool timed_out;            /* killed by us for overrunning the bound */
	unsigned timed_out_ms;
	struct plugin_fault end;
	struct ph_owned *owned;    /* handles its ACL calls created */
	struct ph_filter *filters; /* pool filters it was given and may ask */
	struct ph_desc *descs;     /* its descriptors' functions */
	struct ph_desc *retired_descs; /* destroyed, still named by registrations */
};

/* Answer one PW_ACL or PW_FILTER message in place (plugin_host_serve.c). */
void ph_serve(struct plugin_host *h, struct pw_msg *m);
/* A filter the host may ask until the pool's scope ends. */
void ph_filter_allow(struct plugin_host *h, struct npumemfs_mempool_id pool, void *filter,
		     void *arg);
void ph_filter_forbid(struct plugin_host *h, struct npumemfs_mempool_id pool);
/* Unregister and destroy what the host left registered with the device. */
void ph_release_all(struct plugin_host *h);
/* Run one descriptor function in the host (plugin_host.c). */
int ph_desc_call(struct plugin_host *h, struct pw_msg *m);

#endif /* NPA_PLUGIN_HOST_IMPL_H */
