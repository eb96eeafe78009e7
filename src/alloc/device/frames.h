/*
 * frames.h - where an allocator call comes from, as the memory history
 * keeps it: upstream gathers a Python stack per call; here the caller names
 * its origin (a trace file and line, a tensor file, a control file) with
 * npa_set_origin, and the history keeps that one frame.
 *
 * A recorded frame must outlive the caller's strings, so its file name is
 * interned: one copy per distinct name for the allocator's life. Interning
 * happens only while recording, so a daemon that never records keeps none.
 */
#ifndef NPA_FRAMES_H
#define NPA_FRAMES_H

#include <pthread.h>
#include <stddef.h>

#include "alloc/core/snapshot.h"

/* Distinct file names kept at most; more are named by NPA_FRAME_NAMES_FULL. */
#define NPA_FRAME_NAMES_MAX 65536
#define NPA_FRAME_NAMES_FULL "(more file names than the history keeps)"

/* An open-addressing set of strings; slots grow by doubling. */
struct npa_frame_names {
	pthread_mutex_t lock;
	char **slot;
	size_t cap;   /* a power of two, or 0 */
	size_t n;
};

void npa_frame_names_init(struct npa_frame_names *names);
void npa_frame_names_fini(struct npa_frame_names *names);
/* The kept copy of `s`, equal to it, valid until fini; when the set is full
 * or memory runs out, a fixed string saying so. Never NULL. */
const char *npa_frame_names_intern(struct npa_frame_names *names, const char *s);

#endif /* NPA_FRAMES_H */
