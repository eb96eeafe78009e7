/*
 * whatif_print.c - the comparison as a table, JSON or CSV (whatif_print.h).
 */
#include <stdio.h>
#include <string.h>

#include "report/svg.h"
#include "whatif_print.h"

#define CELL 64

/* A column of the table: its heading and how a row fills it. */
struct column {
	const char *heading;
	void (*cell)(const struct whatif_result *r, char *buf, size_t len);
	bool min_capacity;   /* shown only after a capacity search */
};

static void size_cell(char *buf, size_t len, uint64_t bytes, bool star)
{
	svg_size(buf, len, bytes);
	if (star)
		strncat(buf, " *", len - strlen(buf) - 1);
}

static void count_cell(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void c_reserved(const struct whatif_result *r, char *b, size_t n)
{
	size_cell(b, n, r->m.peak_reserved_bytes, r->best_peak_reserved);
}

static void c_allocated(const struct whatif_result *r, char *b, size_t n)
{
	size_cell(b, n, r->m.peak_allocated_bytes, false);
}

static void c_active(const struct whatif_result *r, char *b, size_t n)
{
	size_cell(b, n, r->m.peak_active_bytes, false);
}

static void c_frag(const struct whatif_result *r, char *b, size_t n)
{
	char size[CELL];
	double f = r->m.peak_reserved_bytes ? 100.0 * (double)r->m.fragmentation_bytes /
						      (double)r->m.peak_reserved_bytes : 0;

	svg_size(size, sizeof(size), r->m.fragmentation_bytes);
	snprintf(b, n, "%s (%.1f%%)", size, f);
}

static void c_inactive(const struct whatif_result *r, char *b, size_t n)
{
	size_cell(b, n, r->m.peak_inactive_split_bytes, false);
}

static void c_mallocs(const struct whatif_result *r, char *b, size_t n)
{
	count_cell(b, n, r->m.num_device_alloc);
}

static void c_frees(const struct whatif_result *r, char *b, size_t n)
{
	count_cell(b, n, r->m.num_device_free);
}

static void c_retries(const struct whatif_result *r, char *b, size_t n)
{
	count_cell(b, n, r->m.num_alloc_retries);
}

static void c_syncs(const struct whatif_result *r, char *b, size_t n)
{
	count_cell(b, n, r->m.num_sync_all_streams);
}

static void c_ooms(const struct whatif_result *r, char *b, size_t n)
{
	count_cell(b, n, r->m.num_ooms);
}

static void c_first_oom(const struct whatif_result *r, char *b, size_t n)
{
	if (r->m.first_oom_line)
		snprintf(b, n, "%u", r->m.first_oom_line);
	else
		snprintf(b, n, "-");
}

static void c_min_capacity(const struct whatif_result *r, char *b, size_t n)
{
	if (r->min.bytes)
		size_cell(b, n, r->min.bytes, r->best_min_capacity);
	else
		snprintf(b, n, "over 1 TiB");
}

/* OOM is not monotonic in capacity: a smaller one that runs is said. */
static void c_smaller(const struct whatif_result *r, char *b, size_t n)
{
	if (r->min.smaller)
		svg_size(b, n, r->min.smaller);
	else
		snprintf(b, n, "-");
}

static void c_time(const struct whatif_result *r, char *b, size_t n)
{
	snprintf(b, n, "%.3f s", r->m.seconds);
}

static const struct column columns[] = {
	{ "peak reserved", c_reserved, false },
	{ "peak allocated", c_allocated, false },
	{ "peak active", c_active, false },
	{ "unused at peak", c_frag, false },
	{ "peak inactive split", c_inactive, false },
	{ "device mallocs", c_mallocs, false },
	{ "device frees", c_frees, false },
	{ "retries", c_retries, false },
	{ "sync all", c_syncs, false },
	{ "OOMs", c_ooms, false },
	{ "first OOM line", c_first_oom, false },
	{ "min capacity", c_min_capacity, true },
	{ "smaller also runs", c_smaller, true },
	{ "time", c_time, false },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static void setting_cell(const struct whatif_result *r, char *b, size_t n)
{
	if (r->plugin)
		snprintf(b, n, "plugin %s", r->settings);
	else
		snprintf(b, n, "%s", r->settings[0] ? r->settings
					      : r->under[0] ? "(the ini's)" : "(defaults)");
}

/* The search's columns, when a row searched (a failed one has none). */
static bool shown(const struct column *c, const struct whatif_result *rows, unsigned n)
{
	for (unsigned i = 0; c->min_capacity && i < n; i++)
		if (rows[i].min_searched)
			return true;
	return !c->min_capacity;
}

static void widths(const struct whatif_result *rows, unsigned n, int *setting, int *w)
{
	char b[WHATIF_TEXT + 16];

	*setting = (int)strlen("setting");
	for (size_t c = 0; c < NCOLUMNS; c++)
		w[c] = (int)strlen(columns[c].heading);
	for (unsigned i = 0; i < n; i++) {
		setting_cell(&rows[i], b, sizeof(b));
		if ((int)strlen(b) > *setting)
			*setting = (int)strlen(b);
		for (size_t c = 0; c < NCOLUMNS && !rows[i].failed; c++) {
			columns[c].cell(&rows[i], b, CELL);
			if ((int)strlen(b) > w[c])
				w[c] = (int)strlen(b);
		}
	}
}

static void table_line(struct sbuf *out, const struct whatif_result *rows, unsigned n,
		       const struct whatif_result *r, int setting, const int *w)
{
	char b[WHATIF_TEXT + 16];

	if (r)
		setting_cell(r, b, sizeof(b));
	sbuf_printf(out, "%-*s", setting, r ? b : "setting");
	/* Across the figures it does not have: what a user looks for next. */
	if (r && r->failed) {
		sbuf_printf(out, "  failed: %s\n", r->failure);
		return;
	}
	for (size_t c = 0; c < NCOLUMNS; c++) {
		if (!shown(&columns[c], rows, n))
			continue;
		if (r)
			columns[c].cell(r, b, CELL);
		sbuf_printf(out, "  %*s", w[c], r ? b : columns[c].heading);
	}
	sbuf_puts(out, "\n");
}

static const struct whatif_result *marked_row(const struct whatif_result *rows, unsigned n,
					      bool capacity)
{
	for (unsigned i = 0; i < n; i++)
		if (capacity ? rows[i].best_min_capacity : rows[i].best_peak_reserved)
			return &rows[i];
	return NULL;
}

static const struct whatif_result *defaults_row(const struct whatif_result *rows, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!rows[i].plugin && rows[i].settings[0] == '\0' && !rows[i].failed)
			return &rows[i];
	return NULL;
}

/* What the winner saves against upstream's defaults, when they are a row. */
static void versus(struct sbuf *out, const struct whatif_result *best,
		   const struct whatif_result *def, bool capacity)
{
	char a[CELL], b[CELL];

	svg_size(a, sizeof(a), capacity ? best->min.bytes : best->m.peak_reserved_bytes);
	if (def && def != best && (capacity ? def->min.bytes : def->m.num_ooms == 0)) {
		svg_size(b, sizeof(b), capacity ? def->min.bytes : def->m.peak_reserved_bytes);
		sbuf_printf(out, "%s %s (%s: %s)", capacity ? "runs in" : "peak reserved", a,
			    def->under[0] ? "the ini's" : "defaults", b);
	} else {
		sbuf_printf(out, "%s %s", capacity ? "runs in" : "peak reserved", a);
	}
}

static unsigned failures(const struct whatif_result *rows, unsigned n)
{
	unsigned failed = 0;

	for (unsigned i = 0; i < n; i++)
		failed += rows[i].failed;
	return failed;
}

/* No row to recommend: every row that ran ran out, or none ran. */
static void no_advice(struct sbuf *out, const struct whatif_result *rows, unsigned n)
{
	unsigned failed = failures(rows, n);

	if (failed == n)
		sbuf_puts(out, "\nNo setting's replay ran to its end.\n");
	else
		sbuf_printf(out, "\nEvery setting %sruns out of memory at this capacity; "
			    "--min-capacity finds how much each needs.\n",
			    failed ? "that ran " : "");
}

/* One line: what to set, by minimum capacity when it was searched. */
static void advice(struct sbuf *out, const struct whatif_result *rows, unsigned n)
{
	const struct whatif_result *cap = marked_row(rows, n, true);
	const struct whatif_result *best = cap ? cap : marked_row(rows, n, false);
	const struct whatif_result *def = defaults_row(rows, n);
	char env[32];

	if (best == NULL) {
		no_advice(out, rows, n);
		return;
	}
	snprintf(env, sizeof(env), "PYTORCH_%s_ALLOC_CONF",
		 strcmp(best->flavor, "cuda") == 0 ? "CUDA" : "NPU");
	if (best == def && best->under[0])
		sbuf_printf(out, "\nKeep the ini's settings (%s): ", best->under);
	else if (best == def)
		sbuf_printf(out, "\nKeep upstream's defaults (leave %s unset): ", env);
	else if (best->plugin)
		sbuf_printf(out, "\nUse the plug-in %s: ", best->settings);
	else
		sbuf_printf(out, "\nSet %s=%s: ", env, best->settings);
	versus(out, best, def, cap != NULL);
	sbuf_puts(out, ".\n");
}

static void table(struct sbuf *out, const struct whatif_result *rows, unsigned n)
{
	int setting, w[NCOLUMNS];

	widths(rows, n, &setting, w);
	if (n > 0 && rows[0].under[0])
		sbuf_printf(out, "Every row's settings are parsed over the ini's alloc_conf: %s\n",
			    rows[0].under);
	table_line(out, rows, n, NULL, setting, w);
	for (unsigned i = 0; i < n; i++)
		table_line(out, rows, n, &rows[i], setting, w);
	sbuf_puts(out, "* best of the column\n");
	advice(out, rows, n);
}

/* The rows without what only travels between processes. */
static int json(struct sbuf *out, const struct whatif_result *rows, unsigned n)
{
	sbuf_puts(out, "[\n");
	for (unsigned i = 0; i < n; i++) {
		struct whatif_result r = rows[i];
		r.curve.every = 0;
		if (whatif_row_to_json(&r, out) != 0)
			return -1;
		if (i + 1 < n) {
			out->len--; /* the newline, for the comma */
			sbuf_puts(out, ",\n");
		}
	}
	sbuf_puts(out, "]\n");
	return 0;
}

static void csv_text(struct sbuf *out, const char *s)
{
	sbuf_puts(out, "\"");
	for (; *s; s++)
		sbuf_printf(out, *s == '"' ? "\"\"" : "%c", *s);
	sbuf_puts(out, "\"");
}

static void csv_optional(struct sbuf *out, bool present, uint64_t v)
{
	if (present && v)
		sbuf_printf(out, ",%llu", (unsigned long long)v);
	else
		sbuf_puts(out, ",");
}

/* The 15 figures' cells, from peak_reserved_bytes to seconds. */
static void csv_figures(struct sbuf *out, const struct whatif_result *r)
{
	const struct wl_whatif_row *m = &r->m;

	sbuf_printf(out, ",%llu,%llu,%llu,%llu,%.6f,%llu,%llu,%llu,%llu,%llu,%llu",
		    (unsigned long long)m->peak_reserved_bytes,
		    (unsigned long long)m->peak_allocated_bytes,
		    (unsigned long long)m->peak_active_bytes,
		    (unsigned long long)m->fragmentation_bytes,
		    m->peak_reserved_bytes ? (double)m->fragmentation_bytes /
					     (double)m->peak_reserved_bytes : 0.0,
		    (unsigned long long)m->peak_inactive_split_bytes,
		    (unsigned long long)m->num_device_alloc,
		    (unsigned long long)m->num_device_free,
		    (unsigned long long)m->num_alloc_retries,
		    (unsigned long long)m->num_sync_all_streams,
		    (unsigned long long)m->num_ooms);
	csv_optional(out, true, m->first_oom_line);
	csv_optional(out, r->min_searched, r->min.bytes);
	csv_optional(out, r->min_searched, r->min.smaller);
	sbuf_printf(out, ",%.6f", m->seconds);
}

/* A failed row's figures are empty cells: it has none. */
static void csv_row(struct sbuf *out, const struct whatif_result *r)
{
	csv_text(out, r->settings);
	sbuf_printf(out, ",%d", r->plugin);
	if (r->failed)
		sbuf_puts(out, ",,,,,,,,,,,,,,,");
	else
		csv_figures(out, r);
	sbuf_printf(out, ",%d,%d,%d,", r->best_peak_reserved, r->best_min_capacity, r->failed);
	if (r->failed)
		csv_text(out, r->failure);
	sbuf_puts(out, "\n");
}

static void csv(struct sbuf *out, const struct whatif_result *rows, unsigned n)
{
	sbuf_puts(out, "settings,plugin,peak_reserved_bytes,peak_allocated_bytes,"
		       "peak_active_bytes,fragmentation_bytes,fragmentation_fraction,"
		       "peak_inactive_split_bytes,num_device_alloc,num_device_free,"
		       "num_alloc_retries,num_sync_all_streams,num_ooms,first_oom_line,"
		       "min_capacity_bytes,min_capacity_smaller_also_runs,seconds,"
		       "best_peak_reserved,best_min_capacity,failed,failure\n");
	for (unsigned i = 0; i < n; i++)
		csv_row(out, &rows[i]);
}

void whatif_mark(struct whatif_result *rows, unsigned n)
{
	struct whatif_result *reserved = NULL, *capacity = NULL;

	for (unsigned i = 0; i < n; i++) {
		struct whatif_result *r = &rows[i];
		r->marked = true;
		r->best_peak_reserved = r->best_min_capacity = false;
		if (r->failed)
			continue;
		if (r->m.num_ooms == 0 &&
		    (!reserved || r->m.peak_reserved_bytes < reserved->m.peak_reserved_bytes))
			reserved = r;
		if (r->min_searched && r->min.bytes &&
		    (!capacity || r->min.bytes < capacity->min.bytes))
			capacity = r;
	}
	if (reserved)
		reserved->best_peak_reserved = true;
	if (capacity)
		capacity->best_min_capacity = true;
}

int whatif_print(struct sbuf *out, const struct whatif_result *rows, unsigned n,
		 enum whatif_format format)
{
	if (format == WHATIF_TABLE)
		table(out, rows, n);
	else if (format == WHATIF_CSV)
		csv(out, rows, n);
	else if (json(out, rows, n) != 0)
		return -1;
	return out->error ? -1 : 0;
}
