/*
 * event_table.c - event slots named by index and generation.
 */
#include <errno.h>
#include <stdlib.h>

#include "event_table.h"

_Static_assert(sizeof(void *) == sizeof(uint64_t),
	       "event handles pack 32-bit generation and index into a pointer");

static aclrtEvent handle_of(uint32_t gen, uint32_t index)
{
	return (aclrtEvent)(uintptr_t)((uint64_t)gen << 32 | (index + 1u));
}

static struct sim_event *slot_at(struct event_table *t, uint32_t index)
{
	struct sim_event *c = atomic_load(&t->chunk[index >> EVENT_CHUNK_SHIFT]);

	return &c[index & (EVENT_CHUNK - 1)];
}

/* A new slot at the end, growing by a chunk when the last one is full. */
static int grow(struct event_table *t, uint32_t *index)
{
	uint32_t n = atomic_load(&t->nslots);
	uint32_t c = n >> EVENT_CHUNK_SHIFT;

	if (c >= EVENT_CHUNKS)
		return -ENOMEM;
	if (n % EVENT_CHUNK == 0) {
		struct sim_event *chunk = calloc(EVENT_CHUNK, sizeof(*chunk));

		if (!chunk)
			return -ENOMEM;
		atomic_store(&t->chunk[c], chunk);
	}
	atomic_store(&t->nslots, n + 1);
	*index = n;
	return 0;
}

static uint32_t issue_gen(struct event_table *t)
{
	if (++t->next_gen == 0)
		t->next_gen = 1;
	return t->next_gen;
}

int event_table_new(struct event_table *t, aclrtEvent *handle,
		    struct sim_event **out)
{
	struct sim_event *e;
	uint32_t index, gen;
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	if (t->free_head) {
		index = t->free_head - 1;
		t->free_head = slot_at(t, index)->next_free;
	} else {
		rc = grow(t, &index);
	}
	if (rc == 0)
		gen = issue_gen(t);
	pthread_mutex_unlock(&t->lock);
	if (rc < 0)
		return rc;
	e = slot_at(t, index);
	atomic_store(&e->stream, NULL);
	atomic_store(&e->gen, gen);
	*handle = handle_of(gen, index);
	*out = e;
	return 0;
}

int event_table_delete(struct event_table *t, aclrtEvent handle)
{
	uint64_t h = (uint64_t)(uintptr_t)handle;
	uint32_t gen = (uint32_t)(h >> 32);
	struct sim_event *e;
	int rc = -EINVAL;

	pthread_mutex_lock(&t->lock);
	e = event_table_find(t, handle);
	/* Under the lock, so that of two racing destroys only one wins. */
	if (e && atomic_compare_exchange_strong(&e->gen, &gen, 0)) {
		e->next_free = t->free_head;
		t->free_head = (uint32_t)h;
		rc = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void event_table_reset(struct event_table *t)
{
	uint32_t chunks;

	pthread_mutex_lock(&t->lock);
	chunks = (atomic_load(&t->nslots) + EVENT_CHUNK - 1) >> EVENT_CHUNK_SHIFT;
	atomic_store(&t->nslots, 0);
	for (uint32_t c = 0; c < chunks; c++) {
		free(atomic_load(&t->chunk[c]));
		atomic_store(&t->chunk[c], NULL);
	}
	t->free_head = 0;
	pthread_mutex_unlock(&t->lock);
}
