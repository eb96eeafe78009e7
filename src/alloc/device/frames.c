/*
 * frames.c - the calling thread's origin, and the file names that the
 * memory history's frames point to (frames.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory_history.h"
#include "frames.h"

/* Per thread: a replay thread and the file system's workers each name their
 * own calls, and none pays for another's. */
static _Thread_local const struct npa_frame *origin;

void npa_set_origin(const struct npa_frame *o)
{
	origin = o;
}

const struct npa_frame *npa_origin(void)
{
	return origin;
}

void npa_frame_names_init(struct npa_frame_names *names)
{
	memset(names, 0, sizeof(*names));
	pthread_mutex_init(&names->lock, NULL);
}

void npa_frame_names_fini(struct npa_frame_names *names)
{
	for (size_t i = 0; i < names->cap; i++)
		free(names->slot[i]);
	free(names->slot);
	pthread_mutex_destroy(&names->lock);
}

/* FNV-1a: names are short paths, and this runs once per new name. */
static uint64_t hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot holding `s`, or the empty slot where it belongs. */
static char **find(char **slot, size_t cap, const char *s)
{
	size_t i = (size_t)hash(s) & (cap - 1);

	while (slot[i] != NULL && strcmp(slot[i], s) != 0)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static int grow(struct npa_frame_names *names)
{
	size_t cap = names->cap ? names->cap * 2 : 64;
	char **slot = calloc(cap, sizeof(*slot));

	if (slot == NULL)
		return -1;
	for (size_t i = 0; i < names->cap; i++)
		if (names->slot[i] != NULL)
			*find(slot, cap, names->slot[i]) = names->slot[i];
	free(names->slot);
	names->slot = slot;
	names->cap = cap;
	return 0;
}

static const char *intern_locked(struct npa_frame_names *names, const char *s)
{
	if (names->cap > 0) {
		char **at = find(names->slot, names->cap, s);
		if (*at != NULL)
			return *at;
	}
	if (names->n == NPA_FRAME_NAMES_MAX)
		return NPA_FRAME_NAMES_FULL;
	/* At most half full, so a probe always ends. */
	if (2 * (names->n + 1) > names->cap && grow(names) < 0)
		return NPA_FRAME_NAMES_FULL;
	char *copy = strdup(s);
	if (copy == NULL)
		return NPA_FRAME_NAMES_FULL;
	*find(names->slot, names->cap, s) = copy;
	names->n++;
	return copy;
}

const char *npa_frame_names_intern(struct npa_frame_names *names, const char *s)
{
	pthread_mutex_lock(&names->lock);
	const char *kept = intern_locked(names, s);
	pthread_mutex_unlock(&names->lock);
	return kept;
}
