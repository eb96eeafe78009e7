/*
 * copy_files.c - ctl/copy: "SRC DST", a non-blocking copy between a
 * pinned tensor (pinned/NAME) and a tensor on a stream
 * (tensors/deviceN[/streamS]/NAME), either way round, as
 * dst.copy_(src, non_blocking=True) makes it (workload/pinned_copy.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "workload/pinned_copy.h"

#include "daemon.h"
#include "graphs.h"
#include "tree.h"
#include "nodes.h"

#define COPY_USAGE "'SRC DST': pinned/NAME and tensors/deviceN[/streamS]/NAME, either way round"

int resolve_written(struct nmfs *d, const char *word, struct target *t)
{
	char path[NMFS_WRITE_MAX + 2];

	snprintf(path, sizeof(path), "%s%s", word[0] == '/' ? "" : "/", word);
	return tree_resolve(d, path, false, t);
}

/* One end of the copy, a file of the mount ("pinned/p" or "/pinned/p"). */
static int resolve_end(struct nmfs *d, const char *word, struct target *t, char *err,
		       size_t errlen)
{
	if (resolve_written(d, word, t) != 0) {
		snprintf(err, errlen, "no file %s", word);
		return -ENOENT;
	}
	if (t->node->data != &pinned_data && t->node->data != &tensor_data) {
		snprintf(err, errlen, "%s is neither pinned/NAME nor a tensor file", word);
		return -EINVAL;
	}
	return 0;
}

static int split_two(const char *value, char *buf, size_t len, char **src, char **dst,
		     char *err, size_t errlen)
{
	char *save = NULL, *extra;

	snprintf(buf, len, "%s", value);
	*src = strtok_r(buf, " \t", &save);
	*dst = *src ? strtok_r(NULL, " \t", &save) : NULL;
	extra = *dst ? strtok_r(NULL, " \t", &save) : NULL;
	if (*dst != NULL && extra == NULL)
		return 0;
	snprintf(err, errlen, "'%s' is not %s", value, COPY_USAGE);
	return -EINVAL;
}

int store_copy(struct nmfs *d, const struct target *t, const char *value, uid_t caller,
	       char *err, size_t errlen)
{
	char buf[NMFS_WRITE_MAX + 1], *src, *dst;
	struct target from, to;
	int rc = split_two(value, buf, sizeof(buf), &src, &dst, err, errlen);

	(void)t, (void)caller;
	if (rc == 0)
		rc = resolve_end(d, src, &from, err, errlen);
	if (rc == 0)
		rc = resolve_end(d, dst, &to, err, errlen);
	if (rc != 0)
		return rc;
	if ((from.node->data == &pinned_data) == (to.node->data == &pinned_data)) {
		snprintf(err, errlen, "%s and %s: a copy is between a pinned tensor and a "
			 "tensor on a device", src, dst);
		return -EINVAL;
	}
	bool h2d = from.node->data == &pinned_data;
	const struct target *dev = h2d ? &to : &from, *pin = h2d ? &from : &to;
	struct tensor_store *ts = streams_store(&d->streams, dev->device, dev->stream, false);

	if (ts == NULL) {
		snprintf(err, errlen, "no tensor %s", dev->name);
		return -ENOENT;
	}
	/* copy_ runs on the current stream: inside a capture on the tensor's
	 * device, the capture stream, whatever stream the tensor is on. */
	aclrtStream current = graphs_current_stream(d->graphs, dev->device);
	rc = pinned_copy(d->pinned, pin->name, ts, dev->name, h2d ? PINNED_H2D : PINNED_D2H,
			 current, err, errlen);
	if (rc == 0)
		dlog_printf(&d->log, "copy: %s -> %s (%s, non_blocking)", src, dst,
			    h2d ? "h2d" : "d2h");
	return rc;
}
