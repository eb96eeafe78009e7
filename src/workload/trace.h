/*
 * trace.h - allocation traces: the format, the parser and the chunked
 * reader. The replay (replay.h) runs what they make.
 *
 * Trace format (one event a line, '#' starts a comment, fields separated by
 * blanks):
 *     alloc ID SIZE [stream=S] [device=D]    SIZE: bytes or KiB/MiB/GiB suffix
 *     free ID
 *     record_stream ID STREAM
 *     complete ID                            the freed ID's events are done
 *     erase_stream ID STREAM                 torch_npu.erase_stream(tensor, stream)
 *     sync [STREAM]
 *     empty_cache
 *     empty_virt_addr_cache                  needs expandable_segments, as upstream
 *     reset_peak | reset_accumulated
 *     fraction F [device=D]                  0 <= F <= 1, as upstream allows
 *     capture_begin STREAM [pool=P|pool=handle:P|pool=graph:G2] [graph=G] [mode=M] [device=D]
 *     capture_end STREAM
 *     graph_replay G [stream=S]
 *     graph_reset G
 *     mempool_create M [use_on_oom] [no_split] [device=D]
 *     mempool_begin M stream=S
 *     mempool_end M
 *     mempool_release M
 *     launch_op STREAM SIZE [ns=N] [device=D] an operator with SIZE bytes of workspace
 *     pin ID SIZE [stream=S] [device=D]      pin_memory(): pinned host memory
 *     unpin ID
 *     copy ID STREAM [device=D]              non-blocking copy of pinned ID on STREAM
 *     host_empty_cache
 *     loop_start
 * IDs are any non-blank tokens (PyTorch traces use addresses); streams are
 * integers >= 0 (0 is the default stream); devices are 0..15, as many as
 * the allocator serves (NPA_MAX_DEVICES). Graph (G) and pool (P, M) names
 * are any tokens too; pool=P and mempool names share one namespace, so a
 * capture can allocate into a MemPool.
 *
 * Graphs and pools are upstream's NPUGraph and MemPool, driven through
 * the caching allocator (graph.h, mempool.h): capture_begin makes graph G
 * (or an unnamed one, which lives until the end of the trace) capture
 * STREAM into pool P, taken from graph_pool_handle() the first time a line
 * names P and shared by every later line naming it, or into a pool of the
 * graph's own without pool=. pool=handle:P is the same handle as pool=P;
 * pool=graph:G2 is G2.pool(), the pool of graph G2's capture, which must
 * have ended (upstream refuses otherwise) on the same device. ctl/graph
 * spells G2.pool() as a bare pool=G2, but a bare pool=P stays a handle
 * here so that existing traces replay as they did. capture_end STREAM
 * ends the capture under way on STREAM. empty_virt_addr_cache is the
 * built-in allocator's, as ctl/empty_virt_addr_cache. mempool_create is MemPool(use_on_oom, no_split), mempool_begin
 * and mempool_end are use_mem_pool()'s entry and exit for one stream's
 * allocations, mempool_release is the MemPool's destructor. The parser
 * refuses what cannot name anything (capture_end of a stream not
 * capturing, an unknown graph or mempool, a released mempool, releasing a
 * mempool that still routes) and a sync that the runtime refuses during a
 * capture (a bare sync, or sync of the capturing stream); what upstream
 * refuses (capture on stream 0, a second capture of a graph, a second
 * mempool_begin of a pool) stops the replay with upstream's text.
 *
 * loop_start marks where a training run's steady state begins: a looping
 * replay (the mount's workload/replay) runs the lines before it once
 * (weights, optimizer state, graphs, mempools) and repeats the lines after
 * it, which must leave live exactly the IDs they found live and may not
 * make or unmake graphs or mempools. A replay run once ignores it.
 *
 * A whole trace is checked before any of it runs (unknown command, missing,
 * extra or bad field, an ID allocated twice while live, a free or
 * record_stream of an ID that is not live), so a bad trace changes nothing.
 */
#ifndef NPUMEMFS_TRACE_H
#define NPUMEMFS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <acl/acl_rt.h>

#include "alloc/allocator.h"

#define WL_ERRLEN 512

enum wl_op {
	WL_ALLOC,
	WL_FREE,
	WL_RECORD_STREAM,
	WL_ERASE_STREAM,
	WL_SYNC,
	WL_EMPTY_CACHE,
	WL_RESET_PEAK,
	WL_RESET_ACCUMULATED,
	WL_FRACTION,
	WL_CAPTURE_BEGIN,
	WL_CAPTURE_END,
	WL_GRAPH_REPLAY,
	WL_GRAPH_RESET,
	WL_MEMPOOL_CREATE,
	WL_MEMPOOL_BEGIN,
	WL_MEMPOOL_END,
	WL_MEMPOOL_RELEASE,
	WL_COMPLETE,
	WL_LAUNCH_OP,
	WL_PIN,
	WL_UNPIN,
	WL_COPY,
	WL_HOST_EMPTY_CACHE,
	WL_EMPTY_VIRT_ADDR_CACHE,
};
#define WL_NOPS (WL_EMPTY_VIRT_ADDR_CACHE + 1)

/* capture_begin without pool=: the graph takes a pool of its own. */
#define WL_NO_POOL UINT32_MAX
/* capture_begin's flags beside its mode: pool=graph:G, so pool is G's
 * dense graph index, not a pool's. */
#define WL_POOL_OF_GRAPH 0x80000000u
/* launch_op without ns=; the launcher's OP_OPEN_ENDED (op_launch.h). */
#define WL_OPEN_ENDED UINT64_MAX
/* mempool_create's flags. */
#define WL_POOL_USE_ON_OOM 1u
#define WL_POOL_NO_SPLIT 2u

/* One event, resolved at parse time so a replay does no lookups. */
struct wl_event {
	union {
		uint64_t size;     /* alloc; launch_op: workspace bytes */
		double fraction;   /* fraction */
		struct {
			uint32_t pool;   /* capture_begin, mempool_*: dense pool index
					  * (capture_begin with WL_POOL_OF_GRAPH:
					  * the graph's) */
			uint32_t flags;  /* mempool_create: WL_POOL_*; capture_begin:
					  * its aclmdlRICaptureMode, and
					  * WL_POOL_OF_GRAPH */
		};
	};
	/* dense index of the trace ID (alloc, free, record_stream), of the
	 * graph (capture_begin, capture_end, graph_replay, graph_reset), or of
	 * the operator (launch_op: its duration in wl_trace.op_ns) */
	uint32_t slot;
	uint32_t line;     /* line number in the trace file */
	uint16_t op;       /* enum wl_op */
	int16_t device;    /* of the event; free, record_stream: the ID's; graph and
			    * mempool lines: their capture's or mempool's */
	int32_t stream;    /* dense stream index (0 = default); sync: -1 = all */
};

/* The command of an op as a trace line spells it ("alloc", "capture_begin"). */
const char *wl_op_name(enum wl_op op);

struct wl_trace {
	char *name;          /* file name used in messages ("-" for stdin) */
	struct wl_event *events;
	size_t nevents;
	uint32_t nslots;     /* slots of IDs: distinct IDs (streamed: the most
			      * remembered at once, slots are reused) */
	uint32_t nstreams;   /* distinct streams named, stream 0 included */
	long *stream_number; /* [nstreams]: the trace's number of each dense stream */
	int max_device;      /* highest device named, 0 if none */
	long max_stream;     /* highest stream number named */
	uint32_t ngraphs;    /* graphs: named ones and one per unnamed capture */
	uint32_t npools;     /* distinct pool names (pool=P, mempool M) */
	bool has_complete;   /* some complete line: frees keep their events */
	uint64_t *op_ns;     /* [nops]: each launch_op's virtual ns (WL_OPEN_ENDED
			      * without ns=: until its stream is synchronized) */
	uint32_t nops;
	uint32_t npins;      /* slots of pinned IDs (pin, unpin, copy), as nslots */
	bool has_loop;       /* a loop_start line */
	size_t loop_from;    /* the first event after it */
};

/*
 * Parse a whole trace. On a bad line return -EINVAL with
 * "TRACE:LINE: reason" in err; -errno with "TRACE: reason" if the file
 * cannot be read. `path` "-" reads stdin.
 */
/* The longest trace line, newline excluded: a longer one is refused. */
#define WL_LINE_MAX 4096
/* The most events a trace loaded whole may hold: it is held in memory (24
 * bytes an event), so a runaway file stops at its line instead of the
 * host's memory. A streamed trace has no such limit. */
#define WL_EVENTS_MAX 20000000

int wl_trace_load(const char *path, struct wl_trace **out, char *err, size_t errlen);
/*
 * The same for a daemon: only a regular file, opened without blocking, so
 * a FIFO or a device named by a user cannot hold a thread. -EISDIR for a
 * folder, -EINVAL for anything else that is not a regular file.
 */
int wl_trace_load_file(const char *path, struct wl_trace **out, char *err, size_t errlen);
int wl_trace_parse(FILE *f, const char *name, struct wl_trace **out, char *err,
		   size_t errlen);
void wl_trace_free(struct wl_trace *t);

/*
 * A trace read and checked a chunk of events at a time, for a replay run
 * once (npumem-replay): memory follows the chunk and the IDs live, not the
 * trace's length. Every line is checked as wl_trace_parse checks it, with
 * the same messages, and the end of the trace (loop_start's rule) when the
 * last chunk is read. IDs are forgotten once no later line can need them
 * (trace_parse_ids.c), and their slots reused. A thread reads the next
 * chunk while the caller runs the one it has.
 */
struct wl_trace_stream;

/* The most events of a chunk. A file's chunks are 4096 events at first,
 * then up to 16384; a pipe's are whole. */
#define WL_STREAM_CHUNK 65536

/* Open `path` ("-": stdin): 0, or -errno with "TRACE: reason" in err. */
int wl_trace_stream_open(const char *path, struct wl_trace_stream **out, char *err,
			 size_t errlen);
/*
 * Read the next chunk: the trace's events are then that chunk's (the
 * previous chunk's are gone) and its counts (IDs, streams, graphs, pools,
 * max_device) cover every line read so far. 0, with *ended set once the
 * whole trace is read and checked (the last chunk may hold events); or
 * -EINVAL with "TRACE:LINE: reason", or another -errno with "TRACE: reason".
 */
int wl_trace_stream_next(struct wl_trace_stream *s, bool *ended, char *err, size_t errlen);
/* The trace the chunks are read into; it lives as long as the stream. */
const struct wl_trace *wl_trace_stream_trace(const struct wl_trace_stream *s);
/*
 * The highest device the whole trace names, found without parsing it (a
 * fast look for "device=" options), for a reader that must know it before
 * the first chunk runs: 0, or -ESPIPE if the trace cannot be read twice.
 */
int wl_trace_stream_max_device(const struct wl_trace_stream *s, int *out);
void wl_trace_stream_close(struct wl_trace_stream *s);

#endif /* NPUMEMFS_TRACE_H */
