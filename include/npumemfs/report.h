/*
 * report.h - the text and JSON views of an allocator's state.
 *
 * Pure functions of a copy (npa_get_stats, npa_snapshot): no locks, no
 * allocator calls. Each returns 0 or -ENOMEM.
 */
#ifndef NPUMEMFS_REPORT_H
#define NPUMEMFS_REPORT_H

#include <stdbool.h>

#include "flavor.h"
#include "sbuf.h"
#include "snapshot.h"
#include "stats.h"

/* memory_stats(): "key value\n" lines sorted by key, upstream's key set. */
int report_stats_flat(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl);
/* memory_stats_as_nested_dict() as JSON. */
int report_stats_json(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl);
/* memory_summary(device, abbreviated): upstream's text, byte for byte. */
int report_summary(struct sbuf *out, const struct npa_stats *s,
		   const struct npa_flavor *fl, int device, bool abbreviated);
/* memory_snapshot() segments as a JSON list. */
int report_snapshot_json(struct sbuf *out, const struct npa_snapshot *snap);

#endif /* NPUMEMFS_REPORT_H */
