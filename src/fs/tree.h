/*
 * tree.h - the mount tree: one table of nodes, expanded per device.
 *
 * A row names a path (with "%d" for the device number in per-device rows),
 * its kind and mode, how it is shown and how a write is stored. At start-up
 * the rows become concrete entries ("/stats/device0", ...), found by path
 * through a hash. Adding a file is adding a row.
 */
#ifndef NPUMEMFS_TREE_H
#define NPUMEMFS_TREE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <uthash.h>

#include "base/sbuf.h"

struct nmfs;
struct entry;

enum node_kind {
	NODE_DIR,
	NODE_FILE,
	NODE_TENSOR_DIR, /* a directory whose files are tensors */
	NODE_ALLOCATORS_DIR, /* a directory of one stats file per allocator */
};

typedef int (*show_fn)(struct nmfs *d, const struct entry *e, struct sbuf *out);
/* `value` has at most one trailing newline removed. 0 or -errno (err). */
typedef int (*store_fn)(struct nmfs *d, const struct entry *e,
			const char *value, char *err, size_t errlen);

struct node {
	const char *path;
	enum node_kind kind;
	mode_t mode;
	bool per_device;
	bool constant;  /* content fixed for the daemon's life (README, config) */
	bool pipe;      /* read as a stream that waits for more (trace_pipe.h) */
	show_fn show;
	store_fn store;
	const char *help;  /* one line for README */
	const char *usage; /* write syntax, for ctl files */
};

#define TREE_ERRLEN 1024 /* an alloc_conf refusal lists every valid key */

struct entry {
	char path[64];
	char parent[64];
	const char *name;  /* last component, inside path */
	const struct node *node;
	int device;        /* -1 unless per-device */
	char last_error[TREE_ERRLEN]; /* guarded by tree.lock */
	UT_hash_handle hh;
};

struct tree {
	struct entry *entries;
	size_t count;
	struct entry *by_path;
	pthread_mutex_t lock;
};

int tree_build(struct tree *t, int device_count);
void tree_release(struct tree *t);
const struct entry *tree_find(const struct tree *t, const char *path);
/* The entries directly inside directory `dir`, in table order. */
typedef int (*tree_visit_fn)(void *arg, const struct entry *e);
int tree_children(const struct tree *t, const char *dir, tree_visit_fn fn,
		  void *arg);
void tree_set_error(struct tree *t, const struct entry *e, const char *msg);
void tree_get_error(struct tree *t, const struct entry *e, char *buf, size_t len);
/* README: every row with its help text. */
int tree_format_readme(struct sbuf *out);

#endif /* NPUMEMFS_TREE_H */
