/*
 * kept_text.c - texts rendered by a stat, waiting for their open.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kept_text.h"

struct kept_text {
	struct kept_text *next;
	char path[PATH_MAX];
	pid_t pid;
	struct timespec made;    /* when the text last changed: its mtime */
	struct timespec kept;    /* when it was put: its age */
	struct sbuf text;
};

void kept_texts_init(struct kept_texts *k)
{
	pthread_mutex_init(&k->lock, NULL);
	k->list = NULL;
	k->count = 0;
}

static void kept_free(struct kept_text *e)
{
	sbuf_release(&e->text);
	free(e);
}

void kept_texts_release(struct kept_texts *k)
{
	while (k->list) {
		struct kept_text *e = k->list;
		k->list = e->next;
		kept_free(e);
	}
	pthread_mutex_destroy(&k->lock);
}

static long age_ms(const struct timespec *kept)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (now.tv_sec - kept->tv_sec) * 1000 + (now.tv_nsec - kept->tv_nsec) / 1000000;
}

/* Under the lock: unlink and return the entry for path and pid, if any. */
static struct kept_text *unlink_entry(struct kept_texts *k, const char *path, pid_t pid)
{
	for (struct kept_text **p = &k->list; *p; p = &(*p)->next) {
		struct kept_text *e = *p;
		if (e->pid == pid && strcmp(e->path, path) == 0) {
			*p = e->next;
			k->count--;
			return e;
		}
	}
	return NULL;
}

/* Under the lock: drop what is too old to be taken, and the oldest beyond
 * the limit. */
static void expire(struct kept_texts *k)
{
	unsigned n = 0;

	for (struct kept_text **p = &k->list; *p;) {
		struct kept_text *e = *p;
		if (++n < KEPT_TEXT_MAX && age_ms(&e->kept) <= KEPT_TEXT_MS) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		k->count--;
		kept_free(e);
	}
}

void kept_text_put(struct kept_texts *k, const char *path, pid_t pid,
		   struct sbuf *text, const struct timespec *made)
{
	struct kept_text *e = calloc(1, sizeof(*e));

	if (e == NULL) {
		sbuf_reset(text);
		return;
	}
	strncpy(e->path, path, sizeof(e->path) - 1);
	e->pid = pid;
	e->made = *made;
	clock_gettime(CLOCK_REALTIME, &e->kept);
	e->text = *text;
	sbuf_init(text);
	pthread_mutex_lock(&k->lock);
	struct kept_text *old = unlink_entry(k, path, pid);
	expire(k);
	e->next = k->list;
	k->list = e;
	k->count++;
	pthread_mutex_unlock(&k->lock);
	if (old)
		kept_free(old);
}

/* Under the lock: the entry for path and pid, if any. */
static struct kept_text *find_entry(struct kept_texts *k, const char *path, pid_t pid)
{
	for (struct kept_text *e = k->list; e; e = e->next)
		if (e->pid == pid && strcmp(e->path, path) == 0)
			return e;
	return NULL;
}

int kept_text_peek(struct kept_texts *k, const char *path, pid_t pid, size_t *size,
		   struct timespec *made)
{
	pthread_mutex_lock(&k->lock);
	struct kept_text *e = find_entry(k, path, pid);
	int rc = e && age_ms(&e->kept) <= KEPT_TEXT_MS ? 0 : -ENOENT;
	if (rc == 0) {
		*size = e->text.len;
		*made = e->made;
	}
	pthread_mutex_unlock(&k->lock);
	return rc;
}

int kept_text_take(struct kept_texts *k, const char *path, pid_t pid,
		   struct sbuf *text, struct timespec *made)
{
	pthread_mutex_lock(&k->lock);
	struct kept_text *e = unlink_entry(k, path, pid);
	pthread_mutex_unlock(&k->lock);
	if (e == NULL)
		return -ENOENT;
	int rc = age_ms(&e->kept) <= KEPT_TEXT_MS ? 0 : -ENOENT;
	if (rc == 0) {
		sbuf_release(text);
		*text = e->text;
		*made = e->made;
		sbuf_init(&e->text);
	}
	kept_free(e);
	return rc;
}

void kept_text_drop(struct kept_texts *k, const char *path)
{
	pthread_mutex_lock(&k->lock);
	for (struct kept_text **p = &k->list; *p;) {
		struct kept_text *e = *p;
		if (strcmp(e->path, path) != 0) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		k->count--;
		kept_free(e);
	}
	pthread_mutex_unlock(&k->lock);
}
