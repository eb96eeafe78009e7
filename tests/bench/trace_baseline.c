/*
 * trace_baseline.c - the end-to-end baseline: a trace replayed the way a
 * user would write it in plain C, lines read with fgets and split with
 * sscanf, IDs in a chained hash table of strdup'ed keys, each alloc a
 * malloc and each free a free. The allocator is whatever malloc the
 * process has, so LD_PRELOAD puts jemalloc or mimalloc under the same
 * program. Lines other than alloc and free (sync, record_stream, comments)
 * are read and skipped; sizes are plain bytes, as npumem-gentrace writes
 * them.
 *
 *     trace_baseline TRACE
 *
 * Prints "EVENTS events" on standard output; exits 1 if the trace cannot be
 * read or names an ID this program does not know.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS (1u << 16)

struct entry {
	struct entry *next;
	char *key;
	void *ptr;
};

struct table {
	struct entry *bucket[NBUCKETS];
};

static unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

static int put(struct table *t, const char *key, void *ptr)
{
	struct entry *e = malloc(sizeof(*e));
	unsigned h = hash(key);

	if (e == NULL || (e->key = strdup(key)) == NULL) {
		free(e);
		return -1;
	}
	e->ptr = ptr;
	e->next = t->bucket[h];
	t->bucket[h] = e;
	return 0;
}

/* The pointer kept under `key`, its entry removed; NULL if none. */
static void *take(struct table *t, const char *key)
{
	struct entry **link = &t->bucket[hash(key)], *e;
	void *ptr;

	for (; (e = *link) != NULL; link = &e->next) {
		if (strcmp(e->key, key) != 0)
			continue;
		*link = e->next;
		ptr = e->ptr;
		free(e->key);
		free(e);
		return ptr;
	}
	return NULL;
}

static int replay_line(struct table *t, const char *line)
{
	char cmd[32], id[256];
	unsigned long long size;

	if (sscanf(line, "%31s %255s %llu", cmd, id, &size) == 3 && strcmp(cmd, "alloc") == 0) {
		void *p = malloc(size);
		return p && put(t, id, p) == 0 ? 1 : -1;
	}
	if (sscanf(line, "%31s %255s", cmd, id) == 2 && strcmp(cmd, "free") == 0) {
		void *p = take(t, id);
		free(p);
		return p ? 1 : -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct table t;
	char line[4096];
	unsigned long long events = 0, lineno = 0;
	FILE *f;

	if (argc != 2) {
		fputs("usage: trace_baseline TRACE\n", stderr);
		return 1;
	}
	if ((f = fopen(argv[1], "r")) == NULL) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		int n = replay_line(&t, line);
		lineno++;
		if (n < 0) {
			fprintf(stderr, "trace_baseline: %s:%llu: cannot replay\n", argv[1], lineno);
			return 1;
		}
		events += (unsigned)n;
	}
	fclose(f);
	printf("%llu events\n", events);
	return 0;
}
