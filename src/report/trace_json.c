/*
 * trace_json.c - memory history entries as JSON lines, one compact object
 * a line with upstream's TraceEntry keys in upstream's order (frames
 * last), so
 * `jq -c 'select(.action == "oom")'` works on a live trace.
 */
#include <errno.h>

#include <jansson.h>

#include "report.h"

#include "frames_json.h"
#include "json_sbuf.h"

/* Addresses, sizes and microsecond times all fit jansson's signed 64 bits.
 * "frames" comes last, where upstream's symbolization puts it. */
static json_t *entry_json(const struct npa_trace_entry *e)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:[I,I], s:I, s:o}",
			 "action", npa_trace_action_name(e->action),
			 e->action == NPA_TRACE_OOM ? "device_free" : "addr", (json_int_t)e->addr,
			 "size", (json_int_t)e->size,
			 "stream", (json_int_t)e->stream,
			 "pool_id", (json_int_t)e->pool_id[0], (json_int_t)e->pool_id[1],
			 "time_us", (json_int_t)e->time_us,
			 "frames", frames_json(&e->frame));
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
