/*
 * trace_pipe.c - the reader side of trace_pipe/deviceN.
 *
 * The allocator never wakes anyone (its hot path stays free of that): a
 * waiting reader polls the history's entry count, which is one atomic
 * load, every TRACE_PIPE_POLL_MS.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "report/report.h"

#include "trace_pipe.h"

#define TRACE_PIPE_POLL_MS 20

void trace_pipe_init(struct trace_pipe *p, int device)
{
	memset(p, 0, sizeof(*p));
	p->device = device;
	sbuf_init(&p->text);
}

void trace_pipe_release(struct trace_pipe *p)
{
	sbuf_release(&p->text);
}

/*
 * Format the entries from p->next on; 1 if there was any. Entries the ring
 * dropped before they were read are skipped; a ring started afresh (its
 * count is below ours) is read from its start.
 */
static int refill(struct trace_pipe *p, struct npa *a)
{
	struct npa_trace t;
	int rc = npa_history_copy(a, p->device, p->next, &t);

	if (rc < 0)
		return rc;
	if (t.recorded < p->next) {
		p->next = 0;
		rc = npa_history_copy(a, p->device, 0, &t);
		if (rc < 0)
			return rc;
	}
	p->base += p->text.len;
	sbuf_reset(&p->text);
	p->sent = 0;
	rc = report_trace_jsonl(&p->text, &t);
	bool got = t.n > 0;
	if (rc == 0)
		p->next = t.first + t.n;
	npa_trace_release(&t);
	return rc < 0 ? rc : got;
}

static size_t drain(struct trace_pipe *p, char *buf, size_t size)
{
	size_t n = p->text.len - p->sent;

	n = n < size ? n : size;
	memcpy(buf, p->text.data + p->sent, n);
	p->sent += n;
	return n;
}

static void nap(void)
{
	struct timespec ts = { 0, TRACE_PIPE_POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

static bool recording(const struct trace_pipe *p, struct npa *a)
{
	struct npa_history_state hs;

	return npa_history_state(a, p->device, &hs) == 0 && hs.enabled;
}

/* Until an entry beyond p->next exists: 0, or why the wait ended. Off,
 * no entry can come: waiting would be silence with no end. */
static int wait_for_entries(struct trace_pipe *p, struct npa *a,
			    const struct trace_pipe_wait *w)
{
	while (npa_history_recorded(a, p->device) == p->next) {
		if (!recording(p, a))
			return -ENODATA;
		if (w->interrupted(w->arg))
			return -EINTR;
		if (w->ending(w->arg))
			return 1;
		nap();
	}
	return 0;
}

void trace_pipe_limit_init(struct trace_pipe_limit *lim, uid_t owner)
{
	memset(lim, 0, sizeof(*lim));
	pthread_mutex_init(&lim->lock, NULL);
	lim->owner = owner;
}

static int other_slot(const struct trace_pipe_limit *lim, uid_t uid)
{
	for (int i = 0; i < lim->others_waiting; i++)
		if (lim->other[i] == uid)
			return i;
	return -1;
}

/* Under lim->lock: whether `uid` may wait now, and if so its place taken. */
static bool take_place(struct trace_pipe_limit *lim, uid_t uid)
{
	if (lim->owner_waiting + lim->others_waiting >= TRACE_PIPE_WAITERS)
		return false;
	if (uid == lim->owner) {
		lim->owner_waiting++;
		return true;
	}
	if (lim->others_waiting == TRACE_PIPE_OTHERS || other_slot(lim, uid) >= 0)
		return false;
	lim->other[lim->others_waiting++] = uid;
	return true;
}

static void give_place(struct trace_pipe_limit *lim, uid_t uid)
{
	if (uid == lim->owner) {
		lim->owner_waiting--;
		return;
	}
	int i = other_slot(lim, uid);

	lim->other[i] = lim->other[--lim->others_waiting];
}

static int wait_limited(struct trace_pipe *p, struct npa *a, struct trace_pipe_limit *lim,
			uid_t uid, const struct trace_pipe_wait *w)
{
	pthread_mutex_lock(&lim->lock);
	bool placed = take_place(lim, uid);
	pthread_mutex_unlock(&lim->lock);
	if (!placed)
		return -EBUSY;
	int rc = wait_for_entries(p, a, w);
	pthread_mutex_lock(&lim->lock);
	give_place(lim, uid);
	pthread_mutex_unlock(&lim->lock);
	return rc;
}

ssize_t trace_pipe_read(struct trace_pipe *p, struct npa *a, struct trace_pipe_limit *lim,
			uid_t uid, const struct trace_pipe_wait *w, bool nonblock,
			uint64_t off, char *buf, size_t size)
{
	if (off >= p->base && off < p->base + p->sent)
		p->sent = (size_t)(off - p->base);
	for (;;) {
		if (p->sent < p->text.len)
			return (ssize_t)drain(p, buf, size);
		int rc = refill(p, a);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		if (!recording(p, a))
			return -ENODATA;
		if (nonblock)
			return -EAGAIN;
		rc = wait_limited(p, a, lim, uid, w);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
}

bool trace_pipe_ready(struct trace_pipe *p, struct npa *a)
{
	return p->sent < p->text.len || npa_history_recorded(a, p->device) != p->next ||
	       !recording(p, a);
}
