/*
 * history_files.c - the memory history as files: ctl/record_memory_history
 * turns it on (upstream torch.cuda.memory._record_memory_history) and
 * snapshot/deviceN.pickle is upstream's _dump_snapshot file for device N,
 * trace/deviceN what the ring holds now (tracefs trace). The waiting
 * reader, trace_pipe/deviceN, is served by trace_pipe.c.
 *
 * History is the built-in allocator's: a plug-in records none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#include "daemon.h"
#include "nodes.h"

/* PyTorch's documentation records with max_entries=100000; upstream's
 * default (sys.maxsize) cannot be a preallocated ring. */
#define HISTORY_DEFAULT_ENTRIES 100000
#define HISTORY_MAX_ENTRIES 10000000

/*
 * device_traces is indexed by device, so device N's file lists N + 1
 * traces, only the last one filled: memory_viz shows it as device N.
 */
int show_snapshot_pickle(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_snapshot snap = { 0 };
	struct npa_trace *traces = calloc((size_t)t->device + 1, sizeof(*traces));
	struct npa_conf conf;
	int rc = traces ? sw_snapshot(d->sw, t->device, &snap) : -ENOMEM;

	if (rc == 0)
		rc = npa_history_copy(sw_caching(d->sw), t->device, 0, &traces[t->device]);
	npa_get_conf(sw_caching(d->sw), &conf);
	if (rc == 0)
		rc = report_snapshot_pickle(out, &snap, traces, t->device + 1, d->flavor, &conf);
	if (traces)
		npa_trace_release(&traces[t->device]);
	free(traces);
	npa_snapshot_release(&snap);
	return rc;
}

int show_trace(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_trace trace;
	int rc = npa_history_copy(sw_caching(d->sw), t->device, 0, &trace);

	if (rc)
		return rc;
	rc = report_trace_jsonl(out, &trace);
	npa_trace_release(&trace);
	return rc;
}

int show_record_memory_history(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	for (int i = 0; i < d->device_count; i++) {
		struct npa_history_state hs;
		int rc = npa_history_state(sw_caching(d->sw), i, &hs);

		if (rc)
			return rc;
		if (hs.enabled)
			sbuf_printf(out, "device%d: %s max_entries %zu recorded %llu kept %zu\n",
				    i, hs.enabled, hs.max_entries,
				    (unsigned long long)hs.recorded, hs.kept);
		else
			sbuf_printf(out, "device%d: off\n", i);
	}
	return show_usage(d, t, out);
}

static int bad_history(const char *value, char *err, size_t errlen)
{
	snprintf(err, errlen, "'%s' is not 'all [max_entries]', 'state' or 'off'", value);
	return -EINVAL;
}

/* "all [N]", "state" or "off": the enabled and max_entries of upstream's call. */
static int parse_history(const char *value, const char **enabled, size_t *max,
			 char *err, size_t errlen)
{
	char *end;

	*enabled = NULL;
	*max = HISTORY_DEFAULT_ENTRIES;
	if (strcmp(value, "off") == 0 || strcmp(value, "state") == 0) {
		*enabled = value[0] == 's' ? "state" : NULL;
		return 0;
	}
	if (strncmp(value, "all", 3) != 0 || (value[3] != '\0' && value[3] != ' '))
		return bad_history(value, err, errlen);
	*enabled = "all";
	if (value[3] == '\0')
		return 0;
	const char *num = value + 4;
	unsigned long long n = strtoull(num, &end, 10);
	if (*num < '0' || *num > '9' || *end != '\0')
		return bad_history(value, err, errlen);
	if (n == 0 || n > HISTORY_MAX_ENTRIES) {
		snprintf(err, errlen, "max_entries must be 1..%d", HISTORY_MAX_ENTRIES);
		return -EINVAL;
	}
	*max = (size_t)n;
	return 0;
}

int store_record_memory_history(struct nmfs *d, const struct target *t,
				const char *value, uid_t caller, char *err, size_t errlen)
{
	const char *enabled;
	size_t max;
	int rc = parse_history(value, &enabled, &max, err, errlen);

	(void)t, (void)caller;
	if (rc)
		return rc;
	rc = npa_record_memory_history(sw_caching(d->sw), -1, enabled, max);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "no memory for %zu trace entries per device", max);
	else if (rc == 0 && enabled && strcmp(enabled, "all") == 0)
		dlog_printf(&d->log, "memory history: all, %zu entries per device", max);
	else if (rc == 0)
		dlog_printf(&d->log, "memory history: %s", enabled ? enabled : "off");
	return rc;
}
