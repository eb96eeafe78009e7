/*
 * event_table.h - event slots named by index and generation (internal).
 *
 * An aclrtEvent handle is not a pointer: it is (generation << 32) | (index
 * + 1). Slots live in chunks that never move and are freed only at
 * shutdown, so finding an event is two loads and a compare, with no lock,
 * and any handle is safe to look up: one that is unknown, destroyed or
 * from an earlier npusim_init names no slot with its generation. Each
 * generation is issued once per process.
 */
#ifndef NPUSIM_EVENT_TABLE_H
#define NPUSIM_EVENT_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <acl/acl_base.h>

#define EVENT_CHUNK_SHIFT 10
#define EVENT_CHUNK (1u << EVENT_CHUNK_SHIFT)
#define EVENT_CHUNKS 4096u /* at most 4 Mi live events */

struct sim_stream;

/*
 * What a record left, read without the scheduler lock: `seq` is odd while
 * a record is writing, so a reader retries until it sees an even, unchanged
 * value around its reads. Every field is atomic so that readers never race.
 */
struct sim_event {
	_Atomic uint32_t gen;      /* 0 while the slot is free */
	_Atomic uint32_t seq;
	_Atomic(struct sim_stream *) stream; /* NULL until recorded */
	_Atomic uint64_t stream_id; /* the stream's id at the record */
	_Atomic uint64_t time;
	_Atomic uint64_t open_seq;
	uint32_t next_free;        /* index + 1 of the next free slot, under lock */
};

struct event_table {
	pthread_mutex_t lock;      /* creating and destroying */
	_Atomic uint32_t nslots;   /* slots ever handed out */
	uint32_t free_head;        /* index + 1, 0: none */
	uint32_t next_gen;         /* kept across resets */
	_Atomic(struct sim_event *) chunk[EVENT_CHUNKS];
};

/* A fresh, unrecorded event and its handle; -ENOMEM when full. */
int event_table_new(struct event_table *t, aclrtEvent *handle,
		    struct sim_event **out);
/* The live event a handle names, or NULL. Inline: every event call
 * starts here. */
static inline struct sim_event *event_table_find(struct event_table *t,
						 aclrtEvent handle)
{
	uint64_t h = (uint64_t)(uintptr_t)handle;
	uint32_t index = (uint32_t)h - 1u, gen = (uint32_t)(h >> 32);
	struct sim_event *e;

	if (gen == 0 || index >= atomic_load(&t->nslots))
		return NULL;
	e = atomic_load(&t->chunk[index >> EVENT_CHUNK_SHIFT]);
	e += index & (EVENT_CHUNK - 1);
	return atomic_load(&e->gen) == gen ? e : NULL;
}
/* Free the event a handle names; -EINVAL if it names none. */
int event_table_delete(struct event_table *t, aclrtEvent handle);
/* Free every slot; handles issued before stay invalid. */
void event_table_reset(struct event_table *t);

#endif /* NPUSIM_EVENT_TABLE_H */
