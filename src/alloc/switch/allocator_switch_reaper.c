/*
 * allocator_switch_reaper.c - retiring a plug-in whose host died while
 * nothing was calling it (a thread of its own that crashed, an exit from
 * a timer). The host's watcher must not wait on the switch (unloading a
 * plug-in waits on the watcher), so it only writes an eventfd; this
 * thread does the retiring, as a caller that saw the fault would.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "allocator_switch_impl.h"

static void *reap(void *arg)
{
	struct sw *sw = arg;
	uint64_t n;

	for (;;) {
		struct pollfd p[2] = { { .fd = sw->reaper_stop_fd, .events = POLLIN },
				       { .fd = sw->fault_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[0].revents)
			return NULL;
		if ((p[1].revents & POLLIN) && read(sw->fault_fd, &n, sizeof(n)) == sizeof(n))
			sw_retire_faulted(sw);
	}
}

int sw_reaper_start(struct sw *sw)
{
	sw->fault_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sw->reaper_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (sw->fault_fd >= 0 && sw->reaper_stop_fd >= 0 &&
	    pthread_create(&sw->reaper, NULL, reap, sw) == 0) {
		sw->reaper_on = true;
		return 0;
	}
	if (sw->fault_fd >= 0)
		close(sw->fault_fd);
	if (sw->reaper_stop_fd >= 0)
		close(sw->reaper_stop_fd);
	sw->fault_fd = sw->reaper_stop_fd = -1;
	return -ENOMEM;
}

void sw_reaper_stop(struct sw *sw)
{
	uint64_t one = 1;

	if (!sw->reaper_on)
		return;
	if (write(sw->reaper_stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(sw->reaper, NULL);
	sw->reaper_on = false;
}

void sw_reaper_close(struct sw *sw)
{
	if (sw->fault_fd >= 0)
		close(sw->fault_fd);
	if (sw->reaper_stop_fd >= 0)
		close(sw->reaper_stop_fd);
	sw->fault_fd = sw->reaper_stop_fd = -1;
}
