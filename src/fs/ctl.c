/*
 * ctl.c - what a write to each writable file does.
 *
 * Each store accepts exactly its documented syntax and acts only when the
 * whole value is good; the caller logs a refusal and keeps it as the
 * file's last_error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/double_text.h"
#include "daemon.h"
#include "tree.h"
#include "nodes.h"

int show_usage(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	char last[TREE_ERRLEN];
	const char *name = strrchr(t->node->path, '/') + 1;

	tree_get_error(&d->errors, t, last, sizeof(last));
	return sbuf_printf(out, "usage: echo VALUE > %s, VALUE: %s\nlast_error: %s\n",
			   name, t->node->usage, last);
}

/* "1" is every device (-1); "deviceN" is device N. */
static int parse_target(struct nmfs *d, const char *value, int *device,
			char *err, size_t errlen)
{
	char *end;

	if (strcmp(value, "1") == 0) {
		*device = -1;
		return 0;
	}
	if (strncmp(value, "device", 6) == 0 && value[6] >= '0' && value[6] <= '9') {
		long n = strtol(value + 6, &end, 10);
		if (*end == '\0' && end - (value + 6) <= 2) {
			if (n < d->device_count) {
				*device = (int)n;
				return 0;
			}
			snprintf(err, errlen, "no device %ld (devices are 0..%d)", n,
				 d->device_count - 1);
			return -ENODEV;
		}
	}
	snprintf(err, errlen, "'%s' is not 1 or deviceN", value);
	return -EINVAL;
}

typedef int (*device_action)(struct sw *sw, int device);

static int act(struct nmfs *d, const char *value, device_action fn,
	       const char *what, char *err, size_t errlen)
{
	int device, rc = parse_target(d, value, &device, err, errlen);

	if (rc)
		return rc;
	rc = fn(d->sw, device);
	if (rc) {
		snprintf(err, errlen, "%s failed: %s", what, npa_control_strerror(rc));
		return rc;
	}
	if (device < 0)
		dlog_printf(&d->log, "%s: all devices", what);
	else
		dlog_printf(&d->log, "%s: device%d", what, device);
	return 0;
}

int store_empty_cache(struct nmfs *d, const struct target *t,
		      const char *value, uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	return act(d, value, sw_empty_cache, "empty_cache", err, errlen);
}

int store_reset_peak_stats(struct nmfs *d, const struct target *t,
			   const char *value, uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	return act(d, value, sw_reset_peak_stats, "reset_peak_stats", err, errlen);
}

int store_reset_accumulated_stats(struct nmfs *d, const struct target *t,
				  const char *value, uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	return act(d, value, sw_reset_accumulated_stats, "reset_accumulated_stats",
		   err, errlen);
}

/* Upstream's range, [0, 1] (setMemoryFraction). */
int store_memory_fraction(struct nmfs *d, const struct target *t,
			  const char *value, uid_t caller, char *err, size_t errlen)
{
	char *end, text[DOUBLE_TEXT_LEN];
	double f;

	(void)caller;
	errno = 0;
	f = strtod(value, &end);
	if (value[0] == '\0' || *end || errno || !isfinite(f) || f < 0 || f > 1) {
		snprintf(err, errlen, "'%s' is not a number f with 0 <= f <= 1", value);
		return -EINVAL;
	}
	/* -0 passes as 0 does; it reads back as 0, not "-0". */
	f = f == 0 ? 0 : f;
	int rc = sw_set_memory_fraction(d->sw, t->device, f, err, errlen);
	double_text(text, f);
	if (rc == 0)
		dlog_printf(&d->log, "memory_fraction: device%d set to %s", t->device, text);
	return rc;
}

/* The trace `loop` alone means: the last one replayed, else the ini's. */
static const char *last_trace(struct nmfs *d, char *buf, size_t len)
{
	pthread_mutex_lock(&d->replay.lock);
	snprintf(buf, len, "%s", d->replay.path[0] ? d->replay.path : d->replay_path);
	pthread_mutex_unlock(&d->replay.lock);
	return buf;
}

/* "start": the last trace again as it ran, looping or once; before any
 * replay, the ini's. */
static int start_last(struct nmfs *d, char *err, size_t errlen)
{
	char path[PATH_MAX];

	pthread_mutex_lock(&d->replay.lock);
	bool replayed = d->replay.path[0] != '\0';
	bool loop = replayed ? d->replay.loop : d->replay_loop;
	snprintf(path, sizeof(path), "%s", replayed ? d->replay.path : d->replay_path);
	pthread_mutex_unlock(&d->replay.lock);
	if (!path[0]) {
		snprintf(err, errlen, "'start': no trace was replayed yet; write PATH or 'loop PATH'");
		return -EINVAL;
	}
	return rw_start(&d->replay, path, loop, err, errlen);
}

/* "PATH" once, "loop PATH" again and again, "loop": the last trace
 * looping, "stop" and "start". */
int store_replay(struct nmfs *d, const struct target *t,
		 const char *value, uid_t caller, char *err, size_t errlen)
{
	char last[PATH_MAX];
	bool loop = strncmp(value, "loop", 4) == 0 && (value[4] == '\0' || value[4] == ' ');
	const char *path = loop ? value + 4 + (value[4] == ' ') : value;

	(void)t, (void)caller;
	if (strcmp(value, "stop") == 0)
		return rw_halt(&d->replay, err, errlen);
	if (strcmp(value, "start") == 0)
		return start_last(d, err, errlen);
	if (loop && path[0] == '\0' && !last_trace(d, last, sizeof(last))[0]) {
		snprintf(err, errlen, "'loop': no trace was replayed yet; write 'loop PATH'");
		return -EINVAL;
	}
	if (loop && path[0] == '\0')
		path = last;
	if (path[0] != '/') {
		snprintf(err, errlen, "'%s' is not an absolute trace path, 'loop PATH', 'loop', "
			 "'stop' or 'start'", value);
		return -EINVAL;
	}
	return rw_start(&d->replay, path, loop, err, errlen);
}

/*
 * Loading a plug-in runs its code in the daemon: only the mount's owner
 * may ask, whatever the file modes or allow_other say.
 */
int store_allocator(struct nmfs *d, const struct target *t,
		    const char *value, uid_t caller, char *err, size_t errlen)
{
	(void)t;
	if (caller != d->uid) {
		snprintf(err, errlen,
			 "only the mount's owner (uid %u) may change the allocator",
			 (unsigned)d->uid);
		return -EACCES;
	}
	int rc = sw_write(d->sw, value, err, errlen);
	if (rc == 0)
		dlog_printf(&d->log, "allocator: now %s", value);
	return rc;
}

int store_empty_virt_addr_cache(struct nmfs *d, const struct target *t,
				const char *value, uid_t caller, char *err, size_t errlen)
{
	int device, rc = parse_target(d, value, &device, err, errlen);

	(void)t, (void)caller;
	if (rc)
		return rc;
	rc = npa_empty_virt_addr_cache(sw_caching(d->sw), device, err, errlen);
	if (rc)
		return rc;
	if (device < 0)
		dlog_printf(&d->log, "empty_virt_addr_cache: all devices");
	else
		dlog_printf(&d->log, "empty_virt_addr_cache: device%d", device);
	return 0;
}

/* Settings apply to the built-in allocator, even while a plug-in is current. */
int store_alloc_conf(struct nmfs *d, const struct target *t,
		     const char *value, uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	int rc = npa_set_conf(sw_caching(d->sw), value, NPA_ORIGIN_WRITE, err, errlen);
	if (rc == 0)
		dlog_printf(&d->log, "alloc_conf: set \"%s\"", value);
	return rc;
}
