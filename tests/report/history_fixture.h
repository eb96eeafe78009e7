/*
 * history_fixture.h - one small snapshot and history, the same for the
 * byte-exact pickle test and the program python3 unpickles.
 */
#ifndef HISTORY_FIXTURE_H
#define HISTORY_FIXTURE_H

#include "alloc/conf/alloc_conf.h"
#include "alloc/core/snapshot.h"

#define HF_SEG 0x7f3a40000000ull   /* 139888158572544 */
#define HF_TIME 1700000000000000ll /* µs since the epoch */

/* Device 0: one 2 MiB segment, x = 1000 bytes live at its start, both
 * made by line 3 of /work/run.trace (their frame); history segment_alloc,
 * alloc (that frame), then an oom of 64 MiB with 1 MiB free, from a
 * truncate of /mnt/tensors/device0/big. */
void hf_snapshot(struct npa_snapshot *snap);
void hf_trace(struct npa_trace *t);
/* expandable_segments:True, roundup_power2_divisions [4:4] */
void hf_conf(struct npa_conf *conf);

#endif
