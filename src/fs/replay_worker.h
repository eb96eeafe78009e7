/*
 * replay_worker.h - one trace replayed in a background thread (workload/replay).
 *
 * At most one replay runs at a time. Its progress is published after each
 * chunk of events, so a reader sees numbers without touching the replay.
 * A looping replay pauses 10 ms between rounds (not counted in events/s);
 * a trace with loop_start keeps what its lines before it made and repeats
 * the rest, one without is freed and run again whole.
 * A finished replay keeps what it allocated (a fresh mount shows the
 * trace's end state) until the next replay starts or the daemon stops.
 */
#ifndef NPUMEMFS_REPLAY_WORKER_H
#define NPUMEMFS_REPLAY_WORKER_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "workload/replay.h"
#include "workload/replay_ops.h"
#include "base/sbuf.h"

#include "daemon_log.h"

enum rw_state { RW_IDLE, RW_RUNNING, RW_DONE, RW_FAILED, RW_STOPPED };

struct replay_worker {
	struct allocator target; /* the allocator switch, in the daemon */
	struct op_launcher *launcher; /* launch_op's, shared with ctl/op; may be NULL */
	struct dlog *log;

	pthread_mutex_t start_lock; /* one rw_start/rw_stop at a time */
	pthread_mutex_t lock;   /* guards everything below */
	pthread_t thread;
	bool joinable;
	atomic_bool stop;
	enum rw_state state;
	char path[PATH_MAX];
	bool loop;
	struct wl_trace *trace;
	struct wl_replay *replay;
	uint64_t total;         /* events in the trace */
	uint64_t done;          /* events of the current round */
	uint64_t done_total;    /* events over all rounds */
	uint64_t rounds;        /* completed rounds */
	struct wl_replay_counters counters;
	struct timespec started;
	double seconds;         /* running time, fixed once it ends */
	double paused;          /* of which spent between rounds */
	double cpu_seconds;     /* CPU time of the replay thread: events per CPU
				 * second shows what readers cost the replay apart
				 * from sharing the processors with it */
	char error[WL_ERRLEN];
};

/*
 * Replays allocate through `target` (the daemon passes its allocator
 * switch, so a plug-in current at an allocation makes that block).
 */
void rw_init(struct replay_worker *rw, struct allocator target,
	     struct dlog *log);
/*
 * Load `path` and start replaying it. -EBUSY while a replay runs; the
 * trace's own errors (-ENOENT, -EINVAL "TRACE:LINE: reason") in err.
 */
int rw_start(struct replay_worker *rw, const char *path, bool loop, char *err,
	     size_t errlen);
/*
 * The verb `stop`: end the running replay after its current event and free
 * what it holds, as the daemon's end does; its trace and loop stay for
 * rw_start. -EINVAL before any replay.
 */
int rw_halt(struct replay_worker *rw, char *err, size_t errlen);
bool rw_running(struct replay_worker *rw);
/* At the daemon's end: stop the running replay, if any, and free what
 * every replay held. */
void rw_stop(struct replay_worker *rw);
int rw_format(struct replay_worker *rw, struct sbuf *out);

#endif /* NPUMEMFS_REPLAY_WORKER_H */
