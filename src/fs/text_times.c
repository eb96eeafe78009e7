/*
 * text_times.c - the time of each generated file's content (text_times.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "text_times.h"

struct text_time {
	char *path;
	uint64_t hash;
	size_t len;
	struct timespec when;
	UT_hash_handle hh;
};

void text_times_init(struct text_times *tt)
{
	memset(tt, 0, sizeof(*tt));
	pthread_mutex_init(&tt->lock, NULL);
}

static void forget(struct text_times *tt, struct text_time *e)
{
	HASH_DEL(tt->by_path, e);
	free(e->path);
	free(e);
}

void text_times_release(struct text_times *tt)
{
	while (tt->by_path)
		forget(tt, tt->by_path);
	pthread_mutex_destroy(&tt->lock);
}

/* FNV-1a: texts of one path differ in a number or two, which it spreads. */
static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* Under the lock: the entry of `path`, made if it is new. */
static struct text_time *entry(struct text_times *tt, const char *path)
{
	struct text_time *e;

	HASH_FIND_STR(tt->by_path, path, e);
	if (e)
		return e;
	if (HASH_COUNT(tt->by_path) == TEXT_TIMES_MAX)
		forget(tt, tt->by_path);
	e = calloc(1, sizeof(*e));
	if (e && !(e->path = strdup(path))) {
		free(e);
		e = NULL;
	}
	if (e) {
		HASH_ADD_KEYPTR(hh, tt->by_path, e->path, strlen(e->path), e);
	}
	return e;
}

void text_time(struct text_times *tt, const char *path, const char *text, size_t len,
	       struct timespec *when)
{
	uint64_t hash = fnv1a(text, len);

	pthread_mutex_lock(&tt->lock);
	struct text_time *e = entry(tt, path);
	if (e && e->when.tv_sec && e->hash == hash && e->len == len) {
		*when = e->when;
	} else {
		clock_gettime(CLOCK_REALTIME, when);
	}
	if (e) {
		e->hash = hash;
		e->len = len;
		e->when = *when;
	}
	pthread_mutex_unlock(&tt->lock);
}
