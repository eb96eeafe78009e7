/*
 * trace_baseline.c - the replay a user would write in an afternoon: fgets,
 * sscanf, IDs in a hash table, malloc and free. It reads the same trace
 * files as npumem-replay (alloc and free lines; every other line is read
 * and skipped) and is run under glibc's malloc and, with LD_PRELOAD, under
 * jemalloc and mimalloc, so that replay_e2e.sh can put npumem-replay's
 * whole-process time beside it. It touches no allocated byte, as the
 * simulated device touches none.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAX 64

struct slot {
	char id[ID_MAX];
	void *ptr;
	int used;
};

struct table {
	struct slot *slot;
	size_t mask;
	size_t count;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct slot *find(struct table *t, const char *id)
{
	size_t i = hash(id) & t->mask;

	while (t->slot[i].used && strcmp(t->slot[i].id, id) != 0)
		i = (i + 1) & t->mask;
	return &t->slot[i];
}

static int grow(struct table *t)
{
	struct table bigger = { calloc(2 * (t->mask + 1), sizeof(struct slot)),
				2 * (t->mask + 1) - 1, 0 };

	if (!bigger.slot)
		return -1;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slot[i].used)
			*find(&bigger, t->slot[i].id) = t->slot[i];
	bigger.count = t->count;
	free(t->slot);
	*t = bigger;
	return 0;
}

/* Freed IDs stay as tombstones (used, ptr NULL): the table only grows. */
static int alloc(struct table *t, const char *id, size_t size)
{
	if (2 * (t->count + 1) > t->mask + 1 && grow(t))
		return -1;
	struct slot *s = find(t, id);
	if (!s->used) {
		snprintf(s->id, sizeof(s->id), "%s", id);
		s->used = 1;
		t->count++;
	}
	s->ptr = malloc(size);
	return s->ptr ? 0 : -1;
}

static void release(struct table *t, const char *id)
{
	struct slot *s = find(t, id);

	if (s->used) {
		free(s->ptr);
		s->ptr = NULL;
	}
}

int main(int argc, char **argv)
{
	struct table t = { calloc(1024, sizeof(struct slot)), 1023, 0 };
	char line[4096], cmd[32], id[ID_MAX];
	unsigned long long size, events = 0;
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;

	if (!f || !t.slot) {
		fprintf(stderr, "usage: trace_baseline TRACE\n");
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%31s %63s %llu", cmd, id, &size);
		if (n == 3 && strcmp(cmd, "alloc") == 0) {
			if (alloc(&t, id, size)) {
				fprintf(stderr, "trace_baseline: out of memory\n");
				return 1;
			}
			events++;
		} else if (n >= 2 && strcmp(cmd, "free") == 0) {
			release(&t, id);
			events++;
		}
	}
	fclose(f);
	printf("trace_baseline: %llu alloc and free events\n", events);
	for (size_t i = 0; i <= t.mask; i++)
		free(t.slot[i].ptr);
	free(t.slot);
	return 0;
}
