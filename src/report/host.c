/*
 * host.c - host_memory_stats() flat and nested, and the host blocks view.
 *
 * The keys come from the list in alloc/host_stats.h: four stats with
 * allocated/current/freed/peak, two timings with avg/count/max/min/total,
 * two scalars; 28 flat keys, sorted as torch_npu's OrderedDict sorts them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report.h"

#include "json_sbuf.h"

#define HOST_KEY_LEN 48

struct host_kv {
	char key[HOST_KEY_LEN];
	int64_t value;
};

static size_t put(struct host_kv *kv, size_t n, const char *stat, const char *field,
		  int64_t value)
{
	if (field != NULL)
		snprintf(kv[n].key, HOST_KEY_LEN, "%s.%s", stat, field);
	else
		snprintf(kv[n].key, HOST_KEY_LEN, "%s", stat);
	kv[n].value = value;
	return n + 1;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct host_kv *)a)->key, ((const struct host_kv *)b)->key);
}

static size_t collect(struct host_kv *kv, const struct npa_host_stats *s)
{
	size_t n = 0;

#define NPA_X(name)                                                            \
	n = put(kv, n, #name, "allocated", s->name.allocated);                 \
	n = put(kv, n, #name, "current", s->name.current);                     \
	n = put(kv, n, #name, "freed", s->name.freed);                         \
	n = put(kv, n, #name, "peak", s->name.peak);
	NPA_HOST_STATS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	n = put(kv, n, #name, "avg", npa_duration_avg(&s->name));              \
	n = put(kv, n, #name, "count", s->name.count);                         \
	n = put(kv, n, #name, "max", s->name.max);                             \
	n = put(kv, n, #name, "min", s->name.min);                             \
	n = put(kv, n, #name, "total", s->name.total);
	NPA_HOST_DURATIONS(NPA_X)
#undef NPA_X
#define NPA_X(name) n = put(kv, n, #name, NULL, s->name);
	NPA_HOST_SCALARS(NPA_X)
#undef NPA_X
	qsort(kv, n, sizeof(*kv), by_key);
	return n;
}

#define HOST_KEYS 28

int report_host_stats_flat(struct sbuf *out, const struct npa_host_stats *s)
{
	struct host_kv kv[HOST_KEYS];
	size_t n = collect(kv, s);

	for (size_t i = 0; i < n; i++)
		sbuf_printf(out, "%s %lld\n", kv[i].key, (long long)kv[i].value);
	return out->error;
}

/* {"a": {"b": v}} for "a.b", {"a": v} for "a". */
static int set_nested(json_t *root, const struct host_kv *kv)
{
	char stat[HOST_KEY_LEN];
	const char *dot = strchr(kv->key, '.');
	json_t *obj;

	if (dot == NULL)
		return json_object_set_new(root, kv->key, json_integer(kv->value)) ? -ENOMEM : 0;
	memcpy(stat, kv->key, (size_t)(dot - kv->key));
	stat[dot - kv->key] = '\0';
	obj = json_object_get(root, stat);
	if (obj == NULL && json_object_set_new(root, stat, obj = json_object()) != 0)
		return -ENOMEM;
	return json_object_set_new(obj, dot + 1, json_integer(kv->value)) ? -ENOMEM : 0;
}

int report_host_stats_json(struct sbuf *out, const struct npa_host_stats *s)
{
	struct host_kv kv[HOST_KEYS];
	size_t n = collect(kv, s);
	json_t *root = json_object();
	int rc = root == NULL ? -ENOMEM : 0;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = set_nested(root, &kv[i]);
	if (rc == 0)
		rc = json_to_sbuf(out, root, REPORT_JSON_FLAGS | JSON_SORT_KEYS);
	json_decref(root);
	return rc;
}

static void put_streams(struct sbuf *out, const struct npa_host_block_info *b)
{
	if (b->nstreams == 0) {
		sbuf_puts(out, "-");
		return;
	}
	for (size_t i = 0; i < b->nstreams && i < 4; i++)
		sbuf_printf(out, "%s%llu", i ? "," : "", (unsigned long long)b->streams[i]);
	if (b->nstreams > 4)
		sbuf_printf(out, ",+%zu", b->nstreams - 4);
}

static const char *state_of(const struct npa_host_block_info *b)
{
	if (b->allocated)
		return "allocated";
	if (b->pending_events > 0)
		return "pending";
	return b->mapped ? "free" : "unmapped";
}

int report_host_blocks(struct sbuf *out, const struct npa_host_block_info *b, size_t n)
{
	char pool[48];

	sbuf_puts(out, "address size requested pool state pending_events streams "
		       "during_capture\n");
	for (size_t i = 0; i < n; i++) {
		report_pool_name(pool, sizeof(pool), b[i].pool);
		sbuf_printf(out, "0x%llx %llu %llu %s %s %llu ", (unsigned long long)b[i].address,
			    (unsigned long long)b[i].size, (unsigned long long)b[i].requested,
			    pool, state_of(&b[i]), (unsigned long long)b[i].pending_events);
		put_streams(out, &b[i]);
		sbuf_printf(out, " %s\n", b[i].during_capture ? "yes" : "no");
	}
	return out->error;
}

int report_host_pools(struct sbuf *out, const struct npa_host_pool_info *p, size_t n)
{
	char pool[48];

	sbuf_puts(out, "pool use_count freeable routing blocks bytes free_bytes\n");
	for (size_t i = 0; i < n; i++) {
		report_pool_name(pool, sizeof(pool), p[i].id);
		sbuf_printf(out, "%s %d %s %s %zu %llu %llu\n", pool, p[i].use_count,
			    p[i].freeable ? "yes" : "no", p[i].routing ? "yes" : "no",
			    p[i].blocks, (unsigned long long)p[i].bytes,
			    (unsigned long long)p[i].free_bytes);
	}
	return out->error;
}
