/*
 * whatif_rows.h - the rows of npumem-whatif: what each setting is, what
 * its replays found, and how rows travel (a JSON line each: from a child
 * process over a pipe, and in a shard's file).
 *
 * A row whose replay failed (its plug-in faulted or never returned, the
 * replay stopped for a reason of that setting's) is still a row: it says
 * why, in place, and has no figures, so the other rows still answer.
 */
#ifndef NPUMEMFS_WHATIF_ROWS_H
#define NPUMEMFS_WHATIF_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/sbuf.h"
#include "config.h"
#include "workload/min_capacity.h"
#include "workload/whatif.h"

/* Room for a setting: PYTORCH_NPU_ALLOC_CONF strings are under 512 bytes
 * (upstream refuses longer), a plug-in spec names a path and functions. */
#define WHATIF_TEXT 1024

struct whatif_setting {
	const char *text;  /* the --alloc-conf string or --plugin spec, as given */
	bool plugin;
};

struct whatif_result {
	unsigned index;              /* the row's place in the comparison */
	unsigned rows;               /* how many rows the comparison has */
	char settings[WHATIF_TEXT];  /* as given, "" for upstream's defaults */
	bool plugin;
	char flavor[8];
	/* The ini's alloc_conf, which every row's settings are parsed over
	 * (as npumem-replay does); "" none: "" is then upstream's defaults. */
	char under[512];
	struct wl_whatif_row m;
	bool min_searched;           /* --min-capacity */
	struct wl_min_capacity min;
	uint64_t min_events;         /* events its replays ran: failing ones stop
				      * at their first OOM */
	bool failed;                 /* no figures: `failure` says why */
	char failure[WHATIF_TEXT];   /* one line */
	struct wl_whatif_curve curve; /* every == 0: none (no --svg) */
	/* The comparison's marks, once every row is in (whatif_mark). */
	bool marked;
	bool best_peak_reserved;     /* the least peak reserved of the rows with no OOM */
	bool best_min_capacity;      /* the least minimum capacity */
};

/* What every row of one comparison shares. */
struct whatif_env {
	struct nmfs_config cfg;      /* the machine and the ini's alloc_conf */
	const struct wl_trace *trace;
	bool min_capacity;
	uint64_t largest_request;    /* the floor of the capacity search */
	size_t curve_every;          /* events a point of the SVG's curves; 0: none */
	int device;                  /* whose figures the rows show */
};

/* What a row is before it runs: its place, its setting, the machine's. */
void whatif_row_start(struct whatif_result *out, const struct whatif_env *env,
		      const struct whatif_setting *s, unsigned index, unsigned rows);

/*
 * Replay the trace under setting s (and, with min_capacity, again per
 * capacity tried) in this process: 0 with the row, a failed one if a
 * replay failed (a plug-in's fault, in the load too, or any error of the
 * replay's); or -EINVAL, the message in err, for a setting the allocator
 * or the plug-in loader refused, which is the command line's fault.
 */
int whatif_run_row(const struct whatif_env *env, const struct whatif_setting *s,
		   unsigned index, unsigned rows, struct whatif_result *out, char *err,
		   size_t errlen);

/* The row failed: `why` kept as one line (control characters as spaces,
 * cut short at a character's start), the figures cleared. */
void whatif_row_fail(struct whatif_result *r, const char *why);

/* A row as one JSON line (newline included). */
int whatif_row_to_json(const struct whatif_result *r, struct sbuf *out);
/* A JSON line back into a row: 0, or -EINVAL with the reason in err. */
int whatif_row_from_json(const char *line, struct whatif_result *out, char *err,
			 size_t errlen);
void whatif_row_release(struct whatif_result *r);

#endif /* NPUMEMFS_WHATIF_ROWS_H */
