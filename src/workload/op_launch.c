/*
 * op_launch.c - operator workspace from a stream's ACL allocator, or from
 * the fallback allocator.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include <npumemfs/npusim.h>

#include "alloc/acl/acl_adapter.h"
#include "alloc/plugin/plugin_guard.h"
#include "op_launch.h"

struct pending {
	struct pending *next;
	aclrtStream stream;
	aclrtEvent event;
	aclrtAllocator obj;
	aclrtAllocatorFreeFunc free;
	aclrtAllocatorBlock block;
	size_t size;
	void *held;              /* the plug-in holding its code, kept loaded */
};

struct counts {
	struct op_stream_counts c;
	UT_hash_handle hh;      /* by c.stream */
};

/* An allocator that faulted: never called again. */
struct faulted {
	struct faulted *next;
	aclrtAllocator obj;
};

struct op_launcher {
	pthread_mutex_t lock;
	struct op_fallback fb;
	struct pending *pending;
	struct counts *counts;
	struct faulted *faulted;
	struct op_totals totals;
};

int op_launcher_create(const struct op_fallback *fb, struct op_launcher **out)
{
	struct op_launcher *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->fb = *fb;
	pthread_mutex_init(&l->lock, NULL);
	plugin_guard_install();
	*out = l;
	return 0;
}

/* Lock held. */
static struct op_stream_counts *counts_of(struct op_launcher *l, aclrtStream stream)
{
	struct counts *c;

	HASH_FIND_PTR(l->counts, &stream, c);
	if (!c && (c = calloc(1, sizeof(*c))) != NULL) {
		c->c.stream = stream;
		HASH_ADD_PTR(l->counts, c.stream, c);
	}
	return c ? &c->c : NULL;
}

static bool is_faulted(struct op_launcher *l, aclrtAllocator obj)
{
	bool found = false;

	pthread_mutex_lock(&l->lock);
	for (struct faulted *f = l->faulted; f && !found; f = f->next)
		found = f->obj == obj;
	pthread_mutex_unlock(&l->lock);
	return found;
}

/* One call into a registered allocator, behind the fault barrier. */
enum fn { ALLOC, GET_ADDR, FREE };
static const char *const fn_names[] = { "alloc", "get-addr-from-block", "free" };

struct call {
	enum fn fn;
	aclrtAllocator obj;
	aclrtAllocatorAllocFunc alloc;
	aclrtAllocatorGetAddrFromBlockFunc get_addr;
	aclrtAllocatorFreeFunc free;
	size_t size;
	aclrtAllocatorBlock block;
	void *ret;
};

static void run_call(void *arg)
{
	struct call *c = arg;

	switch (c->fn) {
	case ALLOC:
		c->ret = c->alloc(c->obj, c->size);
		break;
	case GET_ADDR:
		c->ret = c->get_addr(c->block);
		break;
	case FREE:
		c->free(c->obj, c->block);
		break;
	}
}

/* The stream is unregistered and the allocator never called again. */
static int retire(struct op_launcher *l, aclrtStream stream, const struct call *c,
		  const struct plugin_fault *f, char *err, size_t errlen)
{
	struct faulted *mark = malloc(sizeof(*mark));
	uint64_t lost = 0;

	aclrtAllocatorUnregister(stream);
	pthread_mutex_lock(&l->lock);
	if (mark) {
		mark->obj = c->obj;
		mark->next = l->faulted;
		l->faulted = mark;
	}
	for (struct pending *p = l->pending; p; p = p->next)
		lost += p->obj == c->obj;
	pthread_mutex_unlock(&l->lock);
	snprintf(err, errlen,
		 "the ACL allocator registered on stream %llu faulted in its %s function: "
		 "signal %d (%s) at %p; stream unregistered, the allocator never called "
		 "again; %llu of its workspace blocks are lost",
		 (unsigned long long)npusim_stream_id(stream), fn_names[c->fn], f->sig,
		 strsignal(f->sig), f->addr, (unsigned long long)lost);
	return -EFAULT;
}

static int guarded(struct op_launcher *l, aclrtStream stream, struct call *c, char *err,
		   size_t errlen)
{
	struct plugin_fault f;

	if (plugin_guard_call(run_call, c, &f) == 0)
		return 0;
	return retire(l, stream, c, &f, err, errlen);
}

/*
 * The pending frees whose operators have completed, unlinked. None while a
 * capture forbids event queries: a query would invalidate it (CANN's ACL
 * Graph rules), so they wait until no capture is under way, as torch_npu's
 * caching allocator defers its events (insert_events_deferred_until_no_capture).
 */
static struct pending *take_completed(struct op_launcher *l)
{
	struct pending *done = NULL, **pp = &l->pending;

	if (l->pending && npusim_capture_forbids_query())
		return NULL;
	while (*pp) {
		struct pending *p = *pp;
		aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;

		/* No event: the operator never ran. A query refused (a capture
		 * began meanwhile) leaves the block where it is. */
		if (p->event && (aclrtQueryEventStatus(p->event, &st) != ACL_SUCCESS ||
				 st != ACL_EVENT_RECORDED_STATUS_COMPLETE)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		p->next = done;
		done = p;
	}
	return done;
}

static void drop(struct op_launcher *l, void *held)
{
	if (held && l->fb.drop)
		l->fb.drop(l->fb.ctx, held);
}

static void free_workspace(struct op_launcher *l, struct pending *p)
{
	struct call c = { .fn = FREE, .obj = p->obj, .free = p->free, .block = p->block };
	char err[512];
	bool faulted = is_faulted(l, p->obj);

	if (!faulted)
		faulted = guarded(l, p->stream, &c, err, sizeof(err)) != 0;
	pthread_mutex_lock(&l->lock);
	struct op_stream_counts *n = counts_of(l, p->stream);
	if (n) {
		n->free_calls += !faulted;
		n->lost_blocks += faulted;
		n->outstanding_blocks--;
		n->outstanding_bytes -= p->size;
	}
	pthread_mutex_unlock(&l->lock);
	aclrtDestroyEvent(p->event);
	drop(l, p->held);
	free(p);
}

void op_reap(struct op_launcher *l)
{
	pthread_mutex_lock(&l->lock);
	struct pending *done = take_completed(l);
	pthread_mutex_unlock(&l->lock);
	/* Oldest first: the list holds the newest first. */
	struct pending *ordered = NULL;
	while (done) {
		struct pending *next = done->next;
		done->next = ordered;
		ordered = done;
		done = next;
	}
	while (ordered) {
		struct pending *next = ordered->next;
		free_workspace(l, ordered);
		ordered = next;
	}
}

static int acl_refused(aclError e, const char *call, char *err, size_t errlen)
{
	char name[64];

	snprintf(err, errlen, "%s: %s", call, acl_error_name(e, name, sizeof(name)));
	return -EIO;
}

/* Work on the stream, and an event that completes with it. */
static int run_operator(aclrtStream stream, uint64_t ns, aclrtEvent *event, char *err,
			size_t errlen)
{
	aclError e = ns == OP_OPEN_ENDED ? npusim_launch_open(stream) : npusim_launch(stream, ns);

	if (e != ACL_SUCCESS)
		return acl_refused(e, "launch", err, errlen);
	if (!event)
		return 0;
	if ((e = aclrtCreateEvent(event)) != ACL_SUCCESS)
		return acl_refused(e, "aclrtCreateEvent", err, errlen);
	if ((e = aclrtRecordEvent(*event, stream)) != ACL_SUCCESS) {
		aclrtDestroyEvent(*event);
		return acl_refused(e, "aclrtRecordEvent", err, errlen);
	}
	return 0;
}

static int launch_fallback(struct op_launcher *l, int device, aclrtStream stream,
			   size_t workspace, uint64_t ns, char *err, size_t errlen)
{
	void *ptr = NULL;
	int rc = workspace ? l->fb.malloc(l->fb.ctx, device, workspace, stream, &ptr, err, errlen)
			   : 0;

	if (rc)
		return rc;
	rc = run_operator(stream, ns, NULL, err, errlen);
	if (ptr)
		l->fb.free(l->fb.ctx, ptr, err, errlen);
	pthread_mutex_lock(&l->lock);
	l->totals.fallback_allocs += ptr != NULL;
	l->totals.launched += rc == 0;
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* What a registered allocator's address must be: memory of the device. */
static bool device_memory(const void *addr, size_t size, int device)
{
	return addr && npusim_device_of(addr) == device &&
	       npusim_device_of((const char *)addr + size - 1) == device;
}

static int take_workspace(struct op_launcher *l, int device, aclrtStream stream,
			  struct call *c, struct pending *p, char *err, size_t errlen)
{
	int rc = guarded(l, stream, c, err, errlen);

	if (rc)
		return rc;
	if (!c->ret) {
		snprintf(err, errlen, "the ACL allocator registered on stream %llu gave no "
			 "block for %zu bytes of workspace",
			 (unsigned long long)npusim_stream_id(stream), c->size);
		return -ENOMEM;
	}
	p->block = c->ret;
	c->fn = GET_ADDR;
	c->block = p->block;
	if ((rc = guarded(l, stream, c, err, errlen)) != 0)
		return rc;
	if (device_memory(c->ret, c->size, device))
		return 0;
	snprintf(err, errlen, "the ACL allocator registered on stream %llu gave address %p "
		 "for %zu bytes of workspace, not memory of device %d: block given back",
		 (unsigned long long)npusim_stream_id(stream), c->ret, c->size, device);
	c->fn = FREE;
	guarded(l, stream, c, err + strlen(err), errlen - strlen(err));
	return -EFAULT;
}

static void count_alloc(struct op_launcher *l, struct pending *p)
{
	pthread_mutex_lock(&l->lock);
	struct op_stream_counts *n = counts_of(l, p->stream);
	if (n) {
		n->alloc_calls++;
		n->outstanding_blocks++;
		n->outstanding_bytes += p->size;
	}
	l->totals.acl_allocs++;
	pthread_mutex_unlock(&l->lock);
}

/*
 * An operator captured into a graph runs again at every replay, so no
 * event can say when its workspace is free, and none can be recorded on a
 * capturing stream anyway. Its workspace comes the way torch_npu's
 * workspace path takes it (unsafe_empty_workspace): from the allocator in
 * use, which gives a capturing stream's blocks to the graph's private pool.
 */
static bool captures(aclrtStream stream)
{
	aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;

	return aclmdlRICaptureGetInfo(stream, &st, NULL) == ACL_SUCCESS &&
	       st != ACL_MODEL_RI_CAPTURE_STATUS_NONE;
}

/* The stream's registration, copied; false without one. */
static bool registered(aclrtStream stream, struct call *c)
{
	aclrtAllocatorDesc desc;

	return aclrtAllocatorGetByStream(stream, &desc, &c->obj, &c->alloc, &c->free, NULL,
					 &c->get_addr) == ACL_SUCCESS;
}

/*
 * Keep the allocator's object and the plug-in holding its code while its
 * functions may run. An unregister or a plug-in going away meanwhile
 * changes the registration (op_unregister_code), so one read again after
 * the hold, and unchanged, is safe to call.
 */
static void *hold(struct op_launcher *l, aclrtStream stream, struct call *c, bool *gone)
{
	void *held = l->fb.hold ? l->fb.hold(l->fb.ctx, c->obj, (const void *)c->alloc) : NULL;
	struct call again = { 0 };

	*gone = !registered(stream, &again) || again.obj != c->obj ||
		again.alloc != c->alloc || again.free != c->free ||
		again.get_addr != c->get_addr;
	return held;
}

int op_launch(struct op_launcher *l, int device, aclrtStream stream, size_t workspace,
	      uint64_t ns, char *err, size_t errlen)
{
	struct pending *p;
	struct call c = { .fn = ALLOC, .size = workspace };
	aclError e;
	bool gone;

	op_reap(l);
	if ((e = aclrtSetDevice(device)) != ACL_SUCCESS)
		return acl_refused(e, "aclrtSetDevice", err, errlen);
	if (workspace == 0 || !stream || captures(stream) || !registered(stream, &c) ||
	    is_faulted(l, c.obj))
		return launch_fallback(l, device, stream, workspace, ns, err, errlen);
	void *held = hold(l, stream, &c, &gone);
	if (gone || !(p = calloc(1, sizeof(*p)))) {
		drop(l, held);
		if (gone)
			return launch_fallback(l, device, stream, workspace, ns, err, errlen);
		snprintf(err, errlen, "out of host memory");
		return -ENOMEM;
	}
	*p = (struct pending){ .stream = stream, .obj = c.obj, .free = c.free,
			       .size = workspace, .held = held };
	int rc = take_workspace(l, device, stream, &c, p, err, errlen);
	if (rc) {
		free(p);
		drop(l, held);
		return rc;
	}
	count_alloc(l, p);
	/* If the operator cannot run, its block is free to go back at once:
	 * with no event the next reap takes it. */
	rc = run_operator(stream, ns, &p->event, err, errlen);
	if (rc)
		p->event = NULL;
	pthread_mutex_lock(&l->lock);
	p->next = l->pending;
	l->pending = p;
	l->totals.launched += rc == 0;
	pthread_mutex_unlock(&l->lock);
	if (rc)
		op_reap(l);
	return rc;
}

void op_counts(struct op_launcher *l, aclrtStream stream, struct op_stream_counts *out)
{
	struct counts *c;

	pthread_mutex_lock(&l->lock);
	HASH_FIND_PTR(l->counts, &stream, c);
	*out = c ? c->c : (struct op_stream_counts){ .stream = stream };
	pthread_mutex_unlock(&l->lock);
}

size_t op_registrations(struct op_launcher *l, struct op_registration *out, size_t max)
{
	struct npusim_allocator_reg *regs = max ? calloc(max, sizeof(*regs)) : NULL;
	size_t n = npusim_allocator_registrations(regs, regs ? max : 0);

	for (size_t i = 0; regs && i < n && i < max; i++) {
		const struct npusim_allocator_reg *r = &regs[i];
		out[i] = (struct op_registration){
			.stream = r->stream, .stream_id = r->stream_id, .device = r->device,
			.desc = r->desc, .obj = r->obj, .alloc = r->alloc != NULL,
			.free = r->free != NULL, .alloc_advise = r->alloc_advise != NULL,
			.get_addr_from_block = r->get_addr_from_block != NULL,
		};
		op_counts(l, r->stream, &out[i].counts);
	}
	free(regs);
	return n;
}

size_t op_unregister_code(bool (*owns)(const void *arg, const void *obj, const void *code),
			  const void *arg, char *ids, size_t idslen)
{
	size_t max = 64, n, dropped = 0, used = 0;
	struct npusim_allocator_reg *regs = calloc(max, sizeof(*regs));

	if (idslen)
		ids[0] = '\0';
	n = regs ? npusim_allocator_registrations(regs, max) : 0;
	for (size_t i = 0; i < n && i < max; i++) {
		const struct npusim_allocator_reg *r = &regs[i];
		if (!owns(arg, r->obj, (const void *)r->alloc) &&
		    !owns(arg, r->obj, (const void *)r->free) &&
		    !owns(arg, r->obj, (const void *)r->get_addr_from_block) &&
		    !owns(arg, r->obj, (const void *)r->alloc_advise))
			continue;
		if (aclrtAllocatorUnregister(r->stream) != ACL_SUCCESS)
			continue;
		dropped++;
		if (used < idslen)
			used += (size_t)snprintf(ids + used, idslen - used, "%s%llu",
						 used ? " " : "",
						 (unsigned long long)r->stream_id);
	}
	free(regs);
	return dropped;
}

uint64_t op_fallback_allocs(struct op_launcher *l)
{
	struct op_totals t;

	op_totals(l, &t);
	return t.fallback_allocs;
}

void op_totals(struct op_launcher *l, struct op_totals *out)
{
	pthread_mutex_lock(&l->lock);
	*out = l->totals;
	pthread_mutex_unlock(&l->lock);
}

void op_launcher_destroy(struct op_launcher *l)
{
	struct counts *c, *tmp;

	if (!l)
		return;
	for (struct pending *p = l->pending; p; p = p->next)
		if (p->event)
			aclrtSynchronizeEvent(p->event);
	op_reap(l);
	HASH_ITER(hh, l->counts, c, tmp) {
		HASH_DEL(l->counts, c);
		free(c);
	}
	while (l->faulted) {
		struct faulted *f = l->faulted;
		l->faulted = f->next;
		free(f);
	}
	pthread_mutex_destroy(&l->lock);
	free(l);
}
