/*
 * replay_ops.c - launch_op lines carried out: operators with workspace on
 * the replay's streams.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "replay_impl.h"
#include "replay_ops.h"

void wl_replay_set_launcher(struct wl_replay *r, struct op_launcher *l)
{
	if (r->own_launcher)
		op_launcher_destroy(r->launcher);
	r->launcher = l;
	r->own_launcher = false;
}

struct op_launcher *wl_replay_launcher(const struct wl_replay *r)
{
	return r->launcher;
}

aclrtStream wl_replay_runtime_stream(const struct wl_replay *r, int device, long number)
{
	if (device < 0 || device >= r->ndevices)
		return NULL;
	for (uint32_t k = 1; k < r->t->nstreams; k++)
		if (r->t->stream_number[k] == number)
			return *wl_replay_stream_at(r, device, (int32_t)k);
	return NULL;
}

static int launcher_of(struct wl_replay *r)
{
	struct op_fallback fb = { .malloc = r->a.ops->malloc, .free = r->a.ops->free,
				  .ctx = r->a.self };
	int rc;

	if (r->launcher)
		return 0;
	if ((rc = op_launcher_create(&fb, &r->launcher)) == 0)
		r->own_launcher = true;
	return rc;
}

/* The trace keeps ns as the launcher takes it. */
_Static_assert(WL_OPEN_ENDED == OP_OPEN_ENDED, "launch_op without ns= is open-ended");

int wl_replay_launch_op(struct wl_replay *r, const struct wl_event *ev, char *err,
			size_t errlen)
{
	aclrtStream s;
	int rc = wl_replay_stream(r, ev, ev->device, ev->stream, &s, err, errlen);

	if (rc)
		return rc;
	if ((rc = launcher_of(r)) != 0) {
		snprintf(r->msg, sizeof(r->msg), "launch_op: %s", strerror(-rc));
		return wl_replay_fail(r, ev, rc, err, errlen, r->msg);
	}
	rc = op_launch(r->launcher, ev->device, s, ev->size, r->t->op_ns[ev->slot], r->msg,
		       sizeof(r->msg));
	/* No workspace to be had is an OOM, counted, as an alloc's is. */
	if (rc == -ENOMEM) {
		r->c.ooms++;
		return 0;
	}
	return rc ? wl_replay_fail(r, ev, rc, err, errlen, r->msg) : 0;
}

void wl_replay_reap_ops(struct wl_replay *r)
{
	if (r->launcher)
		op_reap(r->launcher);
}

void wl_replay_ops_release(struct wl_replay *r)
{
	if (!r->launcher)
		return;
	if (r->own_launcher) {
		op_launcher_destroy(r->launcher);
		r->launcher = NULL;
		r->own_launcher = false;
		return;
	}
	/* A shared launcher stays: only this replay's streams are waited for. */
	for (int d = 0; d < r->ndevices; d++)
		for (uint32_t k = 1; k < r->t->nstreams; k++) {
			aclrtStream s = *wl_replay_stream_at(r, d, (int32_t)k);
			if (s && aclrtSetDevice(d) == ACL_SUCCESS)
				aclrtSynchronizeStream(s);
		}
	op_reap(r->launcher);
}

void wl_replay_ops_free(struct wl_replay *r)
{
	if (r->own_launcher)
		op_launcher_destroy(r->launcher);
	else
		wl_replay_ops_release(r);
	r->launcher = NULL;
	r->own_launcher = false;
}
