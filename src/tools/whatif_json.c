/*
 * whatif_json.c - a row of npumem-whatif as one JSON line and back: what a
 * child process sends over its pipe, what a shard writes, what --merge
 * reads. The names are npumem-whatif(1)'s fields, upstream's stat names where
 * they exist, so the same object serves --format json.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/json_sbuf.h"
#include "whatif_rows.h"

struct count_field {
	const char *name;
	size_t offset;  /* of a uint64_t in struct wl_whatif_row */
};

#define COUNT(name) { #name, offsetof(struct wl_whatif_row, name) }
static const struct count_field counts[] = {
	COUNT(peak_reserved_bytes),
	COUNT(peak_allocated_bytes),
	COUNT(peak_active_bytes),
	COUNT(fragmentation_bytes),
	COUNT(peak_inactive_split_bytes),
	COUNT(num_device_alloc),
	COUNT(num_device_free),
	COUNT(num_alloc_retries),
	COUNT(num_sync_all_streams),
	COUNT(num_ooms),
	COUNT(events),
};
#undef COUNT
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

static uint64_t *count_at(struct wl_whatif_row *m, size_t i)
{
	return (uint64_t *)((char *)m + counts[i].offset);
}

/* null for 0: "none" (no OOM, no capacity found, none smaller). */
static json_t *or_null(uint64_t v)
{
	return v ? json_integer((json_int_t)v) : json_null();
}

static json_t *curve_json(const struct wl_whatif_curve *c)
{
	json_t *points = json_array();

	for (size_t i = 0; i < c->npoints; i++)
		json_array_append_new(points, json_integer((json_int_t)c->points[i]));
	return json_pack("{s:I, s:o}", "every", (json_int_t)c->every, "points", points);
}

static void add_min_capacity(json_t *o, const struct whatif_result *r)
{
	json_object_set_new(o, "min_capacity_bytes", or_null(r->min.bytes));
	json_object_set_new(o, "min_capacity_smaller_also_runs", or_null(r->min.smaller));
	json_object_set_new(o, "min_capacity_replays", json_integer(r->min.probes));
	json_object_set_new(o, "min_capacity_events", json_integer((json_int_t)r->min_events));
}

/* The figures of a row whose replays ran. */
static void add_figures(json_t *o, const struct whatif_result *r)
{
	struct wl_whatif_row m = r->m;

	for (size_t i = 0; i < NCOUNTS; i++)
		json_object_set_new(o, counts[i].name, json_integer((json_int_t)*count_at(&m, i)));
	json_object_set_new(o, "fragmentation_fraction",
			    json_real(m.peak_reserved_bytes ? (double)m.fragmentation_bytes /
					      (double)m.peak_reserved_bytes : 0.0));
	json_object_set_new(o, "first_oom_line", or_null(m.first_oom_line));
	if (r->min_searched)
		add_min_capacity(o, r);
	json_object_set_new(o, "seconds", json_real(m.seconds));
}

static json_t *row_json(const struct whatif_result *r)
{
	json_t *o = json_pack("{s:i, s:i, s:s, s:s, s:b}", "index", (int)r->index,
			      "rows", (int)r->rows, "settings", r->settings,
			      "flavor", r->flavor, "plugin", r->plugin);

	if (o == NULL)
		return NULL;
	if (r->under[0])
		json_object_set_new(o, "ini_alloc_conf", json_string(r->under));
	json_object_set_new(o, "failed", json_boolean(r->failed));
	if (r->failed)
		json_object_set_new(o, "failure", json_string(r->failure));
	else
		add_figures(o, r);
	if (r->marked) {
		json_object_set_new(o, "best_peak_reserved", json_boolean(r->best_peak_reserved));
		json_object_set_new(o, "best_min_capacity", json_boolean(r->best_min_capacity));
	}
	if (r->curve.every)
		json_object_set_new(o, "reserved_curve", curve_json(&r->curve));
	return o;
}

int whatif_row_to_json(const struct whatif_result *r, struct sbuf *out)
{
	json_t *o = row_json(r);
	int rc = o ? json_to_sbuf(out, o, JSON_COMPACT | JSON_PRESERVE_ORDER) : -ENOMEM;

	json_decref(o);
	return rc;
}

static uint64_t u64_of(const json_t *o, const char *name)
{
	json_int_t v = json_integer_value(json_object_get(o, name));

	return v > 0 ? (uint64_t)v : 0;
}

static int curve_from(const json_t *c, struct wl_whatif_curve *out)
{
	const json_t *points = json_object_get(c, "points");
	size_t n = json_array_size(points);

	out->every = (size_t)u64_of(c, "every");
	if (out->every == 0 || n == 0)
		return out->every ? 0 : -EINVAL;
	if ((out->points = calloc(n, sizeof(*out->points))) == NULL)
		return -ENOMEM;
	out->npoints = n;
	for (size_t i = 0; i < n; i++) {
		json_int_t v = json_integer_value(json_array_get(points, i));
		out->points[i] = v > 0 ? (uint64_t)v : 0;
	}
	return 0;
}

/* What the figures say, once the object's shape is known good. */
static int fill(const json_t *o, struct whatif_result *out)
{
	const json_t *curve = json_object_get(o, "reserved_curve");

	for (size_t i = 0; i < NCOUNTS; i++)
		*count_at(&out->m, i) = u64_of(o, counts[i].name);
	out->m.first_oom_line = (uint32_t)u64_of(o, "first_oom_line");
	out->m.seconds = json_number_value(json_object_get(o, "seconds"));
	out->min_searched = json_object_get(o, "min_capacity_bytes") != NULL;
	out->min.bytes = u64_of(o, "min_capacity_bytes");
	out->min.smaller = u64_of(o, "min_capacity_smaller_also_runs");
	out->min.probes = (unsigned)u64_of(o, "min_capacity_replays");
	out->min_events = u64_of(o, "min_capacity_events");
	return curve ? curve_from(curve, &out->curve) : 0;
}

/* A failed row says why, a row that ran has its figures. */
static int unpack_outcome(json_t *o, struct whatif_result *out, json_error_t *je)
{
	const char *failure = NULL;
	int failed = 0;

	if (json_unpack_ex(o, je, 0, "{s?b, s?s}", "failed", &failed, "failure", &failure))
		return -EINVAL;
	if (failed && failure) {
		whatif_row_fail(out, failure);
		return 0;
	}
	if (failed) {
		snprintf(je->text, sizeof(je->text), "a failed row without its failure");
		return -EINVAL;
	}
	return json_unpack_ex(o, je, 0, "{s:I}", "peak_reserved_bytes", &(json_int_t){ 0 });
}

int whatif_row_from_json(const char *line, struct whatif_result *out, char *err,
			 size_t errlen)
{
	json_error_t je;
	json_t *o = json_loads(line, 0, &je);
	const char *settings, *flavor, *under = NULL;
	int index, rows, plugin, rc;

	memset(out, 0, sizeof(*out));
	if (o == NULL) {
		snprintf(err, errlen, "not a row (bad JSON: %s)", je.text);
		return -EINVAL;
	}
	rc = json_unpack_ex(o, &je, 0, "{s:i, s:i, s:s, s:s, s:b, s?s}", "index", &index,
			    "rows", &rows, "settings", &settings, "flavor", &flavor,
			    "plugin", &plugin, "ini_alloc_conf", &under);
	if (rc == 0)
		rc = unpack_outcome(o, out, &je);
	if (rc != 0 || index < 0 || rows <= index) {
		snprintf(err, errlen, "not a row of npumem-whatif (%s)",
			 rc ? je.text : "index out of range");
		json_decref(o);
		return -EINVAL;
	}
	out->index = (unsigned)index;
	out->rows = (unsigned)rows;
	out->plugin = plugin;
	snprintf(out->settings, sizeof(out->settings), "%s", settings);
	snprintf(out->flavor, sizeof(out->flavor), "%s", flavor);
	snprintf(out->under, sizeof(out->under), "%s", under ? under : "");
	rc = out->failed ? 0 : fill(o, out);
	json_decref(o);
	if (rc)
		snprintf(err, errlen, "bad reserved_curve");
	return rc;
}

void whatif_row_release(struct whatif_result *r)
{
	free(r->curve.points);
	r->curve.points = NULL;
	r->curve.npoints = 0;
}

/* Bytes of `s` that end on a UTF-8 character's end, `len` at most: a
 * string cut inside a character is not JSON's. */
static size_t whole_characters(const char *s, size_t len)
{
	size_t n = strnlen(s, len + 1);

	if (n <= len)
		return n;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

void whatif_row_fail(struct whatif_result *r, const char *why)
{
	size_t n = whole_characters(why, sizeof(r->failure) - 1);

	whatif_row_release(r);
	memset(&r->m, 0, sizeof(r->m));
	memset(&r->min, 0, sizeof(r->min));
	r->min_searched = false;
	r->min_events = 0;
	r->failed = true;
	/* A table's row and a line on standard error: one line. */
	for (size_t i = 0; i < n; i++)
		r->failure[i] = (unsigned char)why[i] < 0x20 || why[i] == 0x7f ? ' ' : why[i];
	r->failure[n] = '\0';
}
