/*
 * stream_use_files.c - ctl/stream_use: "record TENSOR stream=S" and "erase
 * TENSOR stream=S", TENSOR a file tensors/deviceN[/streamS]/NAME, as
 * tensor.record_stream(stream) and torch_npu.erase_stream(tensor, stream)
 * do to the tensor's block: a block used on another stream is freed only
 * once that stream has passed the free.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alloc/switch/allocator_switch.h"

#include "ctl_args.h"
#include "daemon.h"
#include "tree.h"
#include "nodes.h"

#define STREAM_USE_USAGE "'record TENSOR stream=S' or 'erase TENSOR stream=S', " \
			 "TENSOR tensors/deviceN[/streamS]/NAME"

struct stream_use {
	struct sw *sw;
	aclrtStream stream;
	bool record;
};

static int use_block(void *arg, void *ptr)
{
	struct stream_use *u = arg;

	return u->record ? sw_record_stream(u->sw, ptr, u->stream)
			 : sw_erase_stream(u->sw, ptr, u->stream);
}

static int split_three(const char *value, struct ctl_args *a, char *err, size_t errlen)
{
	char *save = NULL;

	snprintf(a->buf, sizeof(a->buf), "%s", value);
	a->n = 0;
	for (char *w = strtok_r(a->buf, " \t", &save); w && a->n < CTL_MAX_WORDS;
	     w = strtok_r(NULL, " \t", &save))
		a->word[a->n++] = w;
	if (a->n == 3 && (!strcmp(a->word[0], "record") || !strcmp(a->word[0], "erase")))
		return 0;
	snprintf(err, errlen, "'%s' is not %s", value, STREAM_USE_USAGE);
	return -EINVAL;
}

/* The tensor file a word names ("tensors/device0/a" or "/tensors/...). */
static int resolve_tensor(struct nmfs *d, const char *word, struct target *t, char *err,
			  size_t errlen)
{
	if (resolve_written(d, word, t) != 0) {
		snprintf(err, errlen, "no tensor %s", word);
		return -ENOENT;
	}
	if (t->node->data != &tensor_data) {
		snprintf(err, errlen, "%s is not a tensor file (tensors/deviceN[/streamS]/NAME)",
			 word);
		return -EINVAL;
	}
	return 0;
}

/* stream=S on the tensor's device, made if it is not yet. */
static int stream_option(struct nmfs *d, const char *word, int device, aclrtStream *out,
			 char *err, size_t errlen)
{
	int index, rc = ctl_int_option(word, "stream", TREE_STREAMS, &index, err, errlen);

	if (rc == 0) {
		snprintf(err, errlen, "'%s' is not stream=S", word);
		return -EINVAL;
	}
	if (rc < 0)
		return rc;
	return streams_get(&d->streams, device, index, out, err, errlen);
}

int store_stream_use(struct nmfs *d, const struct target *t, const char *value,
		     uid_t caller, char *err, size_t errlen)
{
	struct stream_use u = { .sw = d->streams.sw };
	struct ctl_args a;
	struct target ten;
	int rc = split_three(value, &a, err, errlen);

	(void)t, (void)caller;
	if (rc == 0)
		rc = resolve_tensor(d, a.word[1], &ten, err, errlen);
	if (rc == 0)
		rc = stream_option(d, a.word[2], ten.device, &u.stream, err, errlen);
	if (rc != 0)
		return rc;
	struct tensor_store *ts = streams_store(&d->streams, ten.device, ten.stream, false);
	if (ts == NULL) {
		snprintf(err, errlen, "no tensor %s", a.word[1]);
		return -ENOENT;
	}
	u.record = strcmp(a.word[0], "record") == 0;
	rc = ts_with_block(ts, ten.name, use_block, &u, err, errlen);
	if (rc == -EINVAL && !err[0])
		snprintf(err, errlen, "the allocator does not own the block of %s", a.word[1]);
	if (rc == 0)
		dlog_printf(&d->log, "stream_use: %s", value);
	return rc;
}
