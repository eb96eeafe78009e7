/*
 * snapshot.c - giving back the memory of a copied snapshot or trace
 * (snapshot.h): whoever took the copy, a device or a plug-in, frees it
 * the same way.
 */
#include <stdlib.h>

#include "snapshot.h"

void npa_snapshot_release(struct npa_snapshot *snap)
{
	for (size_t i = 0; i < snap->nsegments; i++)
		free(snap->segments[i].blocks);
	free(snap->segments);
	snap->segments = NULL;
	snap->nsegments = 0;
}

void npa_trace_release(struct npa_trace *t)
{
	free(t->entries);
	t->entries = NULL;
	t->n = 0;
}
