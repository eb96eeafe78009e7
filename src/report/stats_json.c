/*
 * stats_json.c - memory_stats_as_nested_dict() as JSON: the flat keys
 * split at their dots into nested objects, keys sorted so the text is the
 * same for the same numbers.
 */
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "report.h"

#include "json_sbuf.h"
#include "stat_keys.h"

/* The object under `parent` called `name`, made if missing; NULL on ENOMEM. */
static json_t *child_object(json_t *parent, const char *name)
{
	json_t *child = json_object_get(parent, name);
	if (child != NULL)
		return child;
	child = json_object();
	if (json_object_set_new(parent, name, child) != 0)
		return NULL;
	return child;
}

/* Sets root["a"]["b"]["c"] = value for key "a.b.c". */
static int set_nested(json_t *root, const struct stat_kv *kv)
{
	char path[STAT_KEY_LEN];
	memcpy(path, kv->key, sizeof(path));
	char *save = NULL;
	char *part = strtok_r(path, ".", &save);
	json_t *obj = root;
	for (char *next; (next = strtok_r(NULL, ".", &save)) != NULL;
	     part = next) {
		obj = child_object(obj, part);
		if (obj == NULL)
			return -ENOMEM;
	}
	if (json_object_set_new(obj, part, json_integer(kv->value)) != 0)
		return -ENOMEM;
	return 0;
}

int stat_kv_json(struct sbuf *out, const struct stat_kv *kv, size_t n)
{
	json_t *root = json_object();
	int rc = root == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = set_nested(root, &kv[i]);
	if (rc == 0)
		rc = json_to_sbuf(out, root, REPORT_JSON_FLAGS | JSON_SORT_KEYS);
	json_decref(root);
	return rc;
}

int report_stats_json(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl)
{
	struct stat_kv kv[STAT_KEYS_MAX];

	return stat_kv_json(out, kv, stat_keys_collect(kv, s, fl));
}
