/*
 * whatif_merge.h - the rows of a comparison run as shards (--shard I/N,
 * one JSON line a row), put back together in their order.
 */
#ifndef NPUMEMFS_WHATIF_MERGE_H
#define NPUMEMFS_WHATIF_MERGE_H

#include "whatif_rows.h"

/*
 * Read every file's lines: 0 with the comparison's rows in *rows (*n of
 * them, in order), or 2 with the reason on standard error (a line that is
 * not a row, rows of different comparisons, a row missing or twice).
 */
int whatif_merge(char **files, int nfiles, struct whatif_result **rows, unsigned *n);

#endif /* NPUMEMFS_WHATIF_MERGE_H */
