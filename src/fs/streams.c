/*
 * streams.c - the daemon's streams and the tensor store on each.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "streams.h"

int streams_init(struct fs_streams *s, struct sw *sw, int device_count)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->sw = sw;
	s->device_count = device_count;
	for (int i = 0; i < device_count; i++) {
		int rc = ts_new(sw_allocator(sw), i, NULL, &s->tensors[i][0]);
		if (rc)
			return rc;
		s->stream[i][0] = ts_stream(s->tensors[i][0]);
	}
	return 0;
}

static void free_store(struct fs_streams *s, int device, int index, struct dlog *log)
{
	struct tensor_store *ts = s->tensors[device][index];
	uint64_t bytes = 0;

	if (!ts)
		return;
	size_t n = ts_release_all(ts, &bytes);
	char where[32] = "";
	if (index)
		snprintf(where, sizeof(where), " stream%d", index);
	if (n && log)
		dlog_printf(log, "shutdown: freed %zu tensor%s (%llu bytes) on device%d%s",
			    n, n == 1 ? "" : "s", (unsigned long long)bytes, device, where);
	ts_free(ts);
	s->tensors[device][index] = NULL;
}

/* A stream with work still queued is waited for by its destroy. */
static void destroy_stream(struct fs_streams *s, int device, int index)
{
	if (!s->stream[device][index] || index == 0)
		return;
	sw_set_stream_number(s->sw, s->stream[device][index], device, -1);
	if (aclrtSetDevice(device) == ACL_SUCCESS)
		aclrtDestroyStream(s->stream[device][index]);
	s->stream[device][index] = NULL;
}

void streams_fini(struct fs_streams *s, struct dlog *log)
{
	for (int d = 0; d < s->device_count; d++) {
		for (int i = 0; i <= TREE_STREAMS; i++) {
			free_store(s, d, i, log);
			destroy_stream(s, d, i);
		}
	}
	pthread_mutex_destroy(&s->lock);
}

static int make_locked(struct fs_streams *s, int device, int index, char *err,
		       size_t errlen)
{
	aclError e;

	if (index == 0 || s->stream[device][index])
		return 0;
	if ((e = aclrtSetDevice(device)) != ACL_SUCCESS ||
	    (e = aclrtCreateStream(&s->stream[device][index])) != ACL_SUCCESS) {
		snprintf(err, errlen, "aclrtCreateStream on device%d failed (error %d)",
			 device, (int)e);
		return -EIO;
	}
	/* streamS is the S-th pool stream, as a trace's stream S is. */
	if (sw_set_stream_number(s->sw, s->stream[device][index], device, index) != 0) {
		snprintf(err, errlen, "no memory to number stream %d", index);
		return -ENOMEM;
	}
	return 0;
}

static int check_index(const struct fs_streams *s, int device, int index, char *err,
		       size_t errlen)
{
	if (device < 0 || device >= s->device_count) {
		snprintf(err, errlen, "no device %d (devices are 0..%d)", device,
			 s->device_count - 1);
		return -ENODEV;
	}
	if (index < 0 || index > TREE_STREAMS) {
		snprintf(err, errlen, "no stream %d (streams are 0..%d, 0 the default)",
			 index, TREE_STREAMS);
		return -EINVAL;
	}
	return 0;
}

/* A stream and its store are made together: a folder is listed once its
 * stream exists, whoever named it first. */
static int make_store_locked(struct fs_streams *s, int device, int index, char *err,
			     size_t errlen)
{
	int rc = make_locked(s, device, index, err, errlen);

	if (rc || s->tensors[device][index])
		return rc;
	rc = ts_new(sw_allocator(s->sw), device, s->stream[device][index],
			   &s->tensors[device][index]);
	if (rc)
		snprintf(err, errlen, "no memory for the tensors of stream %d", index);
	return rc;
}

int streams_get(struct fs_streams *s, int device, int index, aclrtStream *out,
		char *err, size_t errlen)
{
	int rc = check_index(s, device, index, err, errlen);

	if (rc)
		return rc;
	pthread_mutex_lock(&s->lock);
	rc = make_store_locked(s, device, index, err, errlen);
	*out = s->stream[device][index];
	pthread_mutex_unlock(&s->lock);
	return rc;
}

struct tensor_store *streams_store(struct fs_streams *s, int device, int index,
				   bool make)
{
	struct tensor_store *ts;
	char err[128];

	pthread_mutex_lock(&s->lock);
	if (make)
		make_store_locked(s, device, index, err, sizeof(err));
	ts = s->tensors[device][index];
	pthread_mutex_unlock(&s->lock);
	return ts;
}
