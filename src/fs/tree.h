/*
 * tree.h - the mount tree: one table of rows, every file and folder a row.
 *
 * A row's path may hold indexes, the parts that vary: {N} is a device
 * number, {S} a stream number 1..TREE_STREAMS (the S-th stream the daemon
 * takes on that device), {NAME} a name its row's index lists and looks up
 * (a tensor, an allocator, a pool), as jemalloc's ctl tree has indexed
 * nodes (arena.<i>). So
 * "/stats/device{N}" is one row for every device and
 * "/tensors/device{N}/{NAME}" one row for every tensor. A path is matched
 * against the rows to a target: the row and the values of its indexes.
 * Adding a file, or a folder of files that come and go, is adding a row.
 */
#ifndef NPUMEMFS_TREE_H
#define NPUMEMFS_TREE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/sbuf.h"

struct nmfs;
struct node;
struct fh;
struct seen;

#define TREE_NAME_MAX 255 /* a {NAME}, as a file name may be */
#define TREE_ERRLEN 1024  /* an alloc_conf refusal lists every valid key */
#define TREE_STREAMS 8    /* {S} is 1..8: streams besides the default one */
/* Writes to a ctl file larger than this are refused (sysfs takes a page). */
#define NMFS_WRITE_MAX 4096

/* What a path names: a row, and the values of the indexes in its path. */
struct target {
	const struct node *node;
	int device;                     /* {N}, or -1 where the row has none */
	int stream;                     /* {S}, or 0 (the default stream) */
	char name[TREE_NAME_MAX + 1];   /* {NAME}, or "" */
	unsigned id;                    /* what the index's lookup found for it */
};

typedef int (*show_fn)(struct nmfs *d, const struct target *t, struct sbuf *out);
/*
 * `value` has at most one trailing newline removed; `caller` is the uid of
 * the process that wrote. 0 or -errno, with the reason in err.
 */
typedef int (*store_fn)(struct nmfs *d, const struct target *t, const char *value,
			uid_t caller, char *err, size_t errlen);

/* The files of a {NAME} row whose bytes stay (tensors). */
struct data_ops {
	/* Its size, and when its bytes or size last changed (its mtime). */
	int (*size)(struct nmfs *d, const struct target *t, uint64_t *size,
		    struct timespec *changed);
	int (*create)(struct nmfs *d, const struct target *t);
	int (*unlink)(struct nmfs *d, const struct target *t);
	int (*resize)(struct nmfs *d, const struct target *t, uint64_t size);
	ssize_t (*read)(struct nmfs *d, const struct target *t, char *buf,
			size_t size, uint64_t off);
	ssize_t (*write)(struct nmfs *d, const struct target *t, const char *buf,
			 size_t size, uint64_t off);
};

/*
 * How a row's file is served (open_file.h has the four kinds). An
 * operation left NULL is refused: a write with EACCES, a new file with
 * EEXIST, an unlink, truncate or touch with EACCES.
 */
struct file_ops {
	/* flags as open(2)'s. */
	int (*open)(struct nmfs *d, struct fh *fh, int flags);
	void (*release)(struct fh *fh);
	int (*read)(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off,
		    int flags);
	int (*write)(struct nmfs *d, struct fh *fh, const char *buf, size_t size, off_t off);
	/* Size and mtime for a stat, through `fh` if the caller has it open. */
	int (*stat)(struct nmfs *d, const struct target *t, struct fh *fh, struct seen *s);
	int (*truncate)(struct nmfs *d, const struct target *t, off_t size);
	int (*create)(struct nmfs *d, const struct target *t);
	int (*unlink)(struct nmfs *d, const struct target *t);
	int (*touch)(struct nmfs *d, const struct target *t);
	/* Whether a read would return now, for poll; NULL: always. */
	bool (*ready)(struct nmfs *d, struct fh *fh);
};

/* Called for each name an index lists; non-zero stops the listing. */
typedef int (*name_visit_fn)(void *arg, const char *name);

/* The {NAME} of a row: which names exist, and what one stands for. */
struct node_index {
	/* Each name under `t` (its device and stream set when the path has
	 * {N} and {S}). */
	int (*list)(struct nmfs *d, const struct target *t, name_visit_fn fn,
		    void *arg);
	/* Whether t->name exists; sets t->id. 0 or -ENOENT. */
	int (*lookup)(struct nmfs *d, struct target *t);
};

struct node {
	const char *path;
	mode_t mode;                    /* S_IFDIR or S_IFREG, and the permissions */
	const struct file_ops *file;    /* files only */
	const struct node_index *index; /* rows with {NAME} */
	bool constant;  /* content fixed for the daemon's life (README, config) */
	show_fn show;                   /* text_file: the text; */
	store_fn store;                 /* and a write, if it takes one */
	const struct data_ops *data;    /* data_file: the bytes */
	/* Rows that are always there but listed only once in use (a stream's
	 * folder, once the stream is made); NULL: always listed. */
	bool (*listed)(struct nmfs *d, const struct target *t);
	const char *help;  /* one line for README */
	const char *usage; /* write syntax, for ctl files */
};

/* Last refusals of writes, per row and device, shown as last_error. */
struct tree_errors {
	pthread_mutex_t lock;
	struct tree_error *by_key;
};

/*
 * The target at `path`. With `creating`, a {NAME} that does not exist yet
 * is a target too (its lookup said -ENOENT). 0 or -ENOENT.
 */
int tree_resolve(struct nmfs *d, const char *path, bool creating,
		 struct target *t);
/* Each name directly inside folder `dir`, in table order. */
int tree_list(struct nmfs *d, const struct target *dir, name_visit_fn fn,
	      void *arg);
/* README: every row with its mode and help text. */
int tree_format_readme(struct sbuf *out);
/* The row's path with its indexes filled in from `t`. */
void tree_path(const struct target *t, char *buf, size_t len);

void tree_errors_init(struct tree_errors *te);
void tree_errors_release(struct tree_errors *te);
void tree_set_error(struct tree_errors *te, const struct target *t, const char *msg);
/* The last refusal of a write to `t`, or "none". */
void tree_get_error(struct tree_errors *te, const struct target *t, char *buf,
		    size_t len);

#endif /* NPUMEMFS_TREE_H */
