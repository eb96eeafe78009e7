/*
 * sched.h - streams and events on the virtual clock (internal).
 *
 * The rules, all under sim.sched_lock except the completion test, which
 * reads atomics:
 *   launch(s, ns)   s.tail = max(s.tail, now) + ns
 *   launch_open(s)  s.open_launched++   (ends only at a synchronize)
 *   record(e, s)    e remembers s.tail and s.open_launched
 *   e complete      now >= e.time and s.open_ended >= e.open_seq
 *   sync stream s   now = max(now, s.tail); s.open_ended = s.open_launched
 *   sync event e    now = max(now, e.time); s.open_ended >= e.open_seq
 * A stream that captures (s.cap.model set) takes no work on the clock:
 * launches go into its model, and aclmdlRIExecuteAsync launches them again.
 */
#ifndef NPUSIM_SCHED_H
#define NPUSIM_SCHED_H

#include "sim.h"

/* The stream a handle names (NULL: the current device's default stream),
 * or NULL if the handle is unknown. */
struct sim_stream *sched_stream(aclrtStream handle);
/* Wait for everything launched on s so far. */
void sched_sync_stream(struct sim_stream *s);
/* Timed work of `ns` on s, after what it already has. */
void sched_launch(struct sim_stream *s, uint64_t ns);

#endif /* NPUSIM_SCHED_H */
