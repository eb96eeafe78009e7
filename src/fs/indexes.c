/*
 * indexes.c - the {NAME}s of the folders whose files come and go: tensors
 * (tensors/deviceN/NAME) and allocators (allocators/NAME.deviceN).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "nodes.h"

struct name_walk {
	name_visit_fn fn;
	void *arg;
};

static int visit_tensor(void *arg, const char *name, uint64_t size)
{
	struct name_walk *w = arg;

	(void)size;
	return w->fn(w->arg, name);
}

static int list_tensors(struct nmfs *d, const struct target *t, name_visit_fn fn,
			void *arg)
{
	struct name_walk w = { fn, arg };
	struct tensor_store *ts = streams_store(&d->streams, t->device, t->stream, false);

	return ts ? ts_foreach(ts, visit_tensor, &w) : 0;
}

static int lookup_tensor(struct nmfs *d, struct target *t)
{
	struct tensor_store *ts = streams_store(&d->streams, t->device, t->stream, false);
	uint64_t size;

	return ts ? ts_size(ts, t->name, &size, NULL) : -ENOENT;
}

const struct node_index tensor_index = {
	.list = list_tensors,
	.lookup = lookup_tensor,
};

/* Every allocator the switch holds now: caching, then each plug-in. */
static int list_allocators(struct nmfs *d, const struct target *t,
			   name_visit_fn fn, void *arg)
{
	struct sw_info *all = NULL;
	size_t n = 0;
	int rc = sw_list(d->sw, &all, &n);

	(void)t;
	for (size_t i = 0; i < n && !rc; i++)
		rc = fn(arg, all[i].name);
	free(all);
	return rc;
}

static int lookup_allocator(struct nmfs *d, struct target *t)
{
	struct sw_info *all = NULL;
	size_t n = 0;
	int rc = sw_list(d->sw, &all, &n) ? -ENOMEM : -ENOENT;

	for (size_t i = 0; i < n && rc == -ENOENT; i++) {
		if (strcmp(all[i].name, t->name) == 0) {
			t->id = all[i].id;
			rc = 0;
		}
	}
	free(all);
	return rc;
}

const struct node_index allocator_index = {
	.list = list_allocators,
	.lookup = lookup_allocator,
};
