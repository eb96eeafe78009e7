/*
 * snapshot_json.c - memory_snapshot(): the segment list, each segment and
 * block a JSON object with upstream's keys in upstream's order
 * (torch/csrc/cuda/Module.cpp memorySnapshot, segmentInfoToDict/blockInfo).
 *
 * jansson keeps insertion order, so the order of the set calls below is
 * the order in the text. Addresses are host addresses and stream and pool
 * numbers are small, so every value fits jansson's signed integers.
 */
#include <errno.h>

#include <jansson.h>

#include "report.h"

#include "frames_json.h"
#include "json_sbuf.h"

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* Each setter reports failure through a shared flag, so the builders read
 * as the list of keys they are. */
static void set(json_t *obj, const char *key, json_t *value, int *rc)
{
	if (json_object_set_new(obj, key, value) != 0)
		*rc = -ENOMEM;
}

static json_t *block_json(const struct npa_block_info *b)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int rc = 0;
	set(o, "address", u64(b->address), &rc);
	set(o, "size", u64(b->size), &rc);
	set(o, "requested_size", u64(b->requested_size), &rc);
	set(o, "state", json_string(npa_block_state_name(b->state)), &rc);
	set(o, "frames", frames_json(&b->frame), &rc);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *blocks_json(const struct npa_segment_info *seg)
{
	json_t *list = json_array();
	for (size_t i = 0; list != NULL && i < seg->nblocks; i++) {
		if (json_array_append_new(list, block_json(&seg->blocks[i]))) {
			json_decref(list);
			list = NULL;
		}
	}
	return list;
}

static json_t *pool_id_json(const struct npa_segment_info *seg)
{
	return json_pack("[II]", (json_int_t)seg->pool_id[0],
			 (json_int_t)seg->pool_id[1]);
}

static json_t *segment_json(const struct npa_segment_info *seg)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int rc = 0;
	set(o, "device", json_integer(seg->device), &rc);
	set(o, "address", u64(seg->address), &rc);
	set(o, "total_size", u64(seg->total_size), &rc);
	set(o, "allocated_size", u64(seg->allocated_size), &rc);
	set(o, "active_size", u64(seg->active_size), &rc);
	set(o, "requested_size", u64(seg->requested_size), &rc);
	set(o, "stream", u64(seg->stream), &rc);
	set(o, "segment_type", json_string(seg->is_large ? "large" : "small"), &rc);
	set(o, "segment_pool_id", pool_id_json(seg), &rc);
	set(o, "is_expandable", json_boolean(seg->is_expandable), &rc);
	/* Upstream adds a segment's frames after its blocks, once symbolized;
	 * an empty list takes its place before them. */
	if (seg->frame.filename == NULL)
		set(o, "frames", json_array(), &rc);
	set(o, "blocks", blocks_json(seg), &rc);
	if (seg->frame.filename != NULL)
		set(o, "frames", frames_json(&seg->frame), &rc);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int report_snapshot_json(struct sbuf *out, const struct npa_snapshot *snap)
{
	json_t *list = json_array();
	int rc = list == NULL ? -ENOMEM : 0;
	for (size_t i = 0; rc == 0 && i < snap->nsegments; i++)
		if (json_array_append_new(list, segment_json(&snap->segments[i])))
			rc = -ENOMEM;
	if (rc == 0)
		rc = json_to_sbuf(out, list, REPORT_JSON_FLAGS);
	json_decref(list);
	return rc;
}
