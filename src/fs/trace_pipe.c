/*
 * trace_pipe.c - the reader side of trace/deviceN.
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

/* Until an entry beyond p->next exists: 0, or why the wait ended. */
static int wait_for_entries(struct trace_pipe *p, struct npa *a,
			    const struct trace_pipe_wait *w)
{
	while (npa_history_recorded(a, p->device) == p->next) {
		if (w->interrupted(w->arg))
			return -EINTR;
		if (w->ending(w->arg))
			return 1;
		nap();
	}
	return 0;
}

static int wait_limited(struct trace_pipe *p, struct npa *a, struct trace_pipe_limit *lim,
			const struct trace_pipe_wait *w)
{
	if (__atomic_add_fetch(&lim->waiting, 1, __ATOMIC_ACQ_REL) > TRACE_PIPE_WAITERS) {
		__atomic_sub_fetch(&lim->waiting, 1, __ATOMIC_ACQ_REL);
		return -EBUSY;
	}
	int rc = wait_for_entries(p, a, w);
	__atomic_sub_fetch(&lim->waiting, 1, __ATOMIC_ACQ_REL);
	return rc;
}

ssize_t trace_pipe_read(struct trace_pipe *p, struct npa *a, struct trace_pipe_limit *lim,
			const struct trace_pipe_wait *w, bool nonblock, uint64_t off,
			char *buf, size_t size)
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
		if (nonblock)
			return -EAGAIN;
		rc = wait_limited(p, a, lim, w);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
}
