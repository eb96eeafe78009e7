/*
 * trace_json.c - memory history entries as JSON lines, one compact object
 * a line with upstream's TraceEntry keys in upstream's order, so
 * `jq -c 'select(.action == "oom")'` works on a live trace.
 */
#include <errno.h>

#include <jansson.h>

#include <npumemfs/report.h>

#include "json_sbuf.h"

/* Our own table: the report layer does not link the allocator. */
const char *report_trace_action_name(enum npa_trace_action action)
{
	static const char *const names[] = {
		[NPA_TRACE_ALLOC] = "alloc",
		[NPA_TRACE_FREE_REQUESTED] = "free_requested",
		[NPA_TRACE_FREE_COMPLETED] = "free_completed",
		[NPA_TRACE_SEGMENT_ALLOC] = "segment_alloc",
		[NPA_TRACE_SEGMENT_FREE] = "segment_free",
		[NPA_TRACE_SEGMENT_MAP] = "segment_map",
		[NPA_TRACE_SEGMENT_UNMAP] = "segment_unmap",
		[NPA_TRACE_SNAPSHOT] = "snapshot",
		[NPA_TRACE_OOM] = "oom",
	};
	return (unsigned)action < sizeof(names) / sizeof(names[0]) ? names[action] : "?";
}

/* Addresses, sizes and microsecond times all fit jansson's signed 64 bits. */
static json_t *entry_json(const struct npa_trace_entry *e)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I}",
			 "action", report_trace_action_name(e->action),
			 e->action == NPA_TRACE_OOM ? "device_free" : "addr", (json_int_t)e->addr,
			 "size", (json_int_t)e->size,
			 "stream", (json_int_t)e->stream,
			 "time_us", (json_int_t)e->time_us);
}

int report_trace_jsonl(struct sbuf *out, const struct npa_trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		json_t *j = entry_json(&t->entries[i]);
		int rc = j == NULL ? -ENOMEM
				   : json_to_sbuf(out, j, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(j);
		if (rc)
			return rc;
	}
	return out->error;
}
