/*
 * whatif_merge.c - shards' JSON lines back into one comparison
 * (whatif_merge.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif_merge.h"

#define EXIT_USAGE 2

struct merge {
	struct whatif_result *rows;  /* [nrows], by index */
	bool *seen;
	unsigned nrows;
};

static int bad(const char *file, unsigned long line, const char *why)
{
	fprintf(stderr, "npumem-whatif: %s:%lu: %s\n", file, line, why);
	return EXIT_USAGE;
}

/* The flavor and the ini's settings of the rows read so far, if any. */
static bool same_comparison(const struct merge *m, const struct whatif_result *r)
{
	for (unsigned i = 0; i < m->nrows; i++)
		if (m->seen[i])
			return strcmp(r->flavor, m->rows[i].flavor) == 0 &&
			       strcmp(r->under, m->rows[i].under) == 0;
	return true;
}

/* The first row says how many the comparison has. */
static int make_room(struct merge *m, unsigned rows)
{
	m->rows = calloc(rows, sizeof(*m->rows));
	m->seen = calloc(rows, sizeof(*m->seen));
	m->nrows = rows;
	return m->rows && m->seen ? 0 : -ENOMEM;
}

static int take(struct merge *m, const char *file, unsigned long line, const char *text)
{
	struct whatif_result r;
	char err[256];

	if (whatif_row_from_json(text, &r, err, sizeof(err)) != 0)
		return bad(file, line, err);
	if (m->rows == NULL && make_room(m, r.rows) != 0) {
		whatif_row_release(&r);
		return bad(file, line, "out of memory");
	}
	if (r.rows != m->nrows || !same_comparison(m, &r)) {
		whatif_row_release(&r);
		return bad(file, line, "a row of another comparison");
	}
	if (m->seen[r.index]) {
		whatif_row_release(&r);
		return bad(file, line, "this row was read already (a shard given twice?)");
	}
	m->rows[r.index] = r;
	m->seen[r.index] = true;
	return 0;
}

static int read_file(struct merge *m, const char *file)
{
	FILE *f = fopen(file, "r");
	char *text = NULL;
	size_t cap = 0;
	unsigned long line = 0;
	int status = 0;

	if (f == NULL) {
		fprintf(stderr, "npumem-whatif: %s: %s\n", file, strerror(errno));
		return EXIT_USAGE;
	}
	while (status == 0 && getline(&text, &cap, f) > 0) {
		line++;
		if (text[strspn(text, " \t\r\n")] != '\0')
			status = take(m, file, line, text);
	}
	free(text);
	fclose(f);
	return status;
}

static int complete(const struct merge *m)
{
	for (unsigned i = 0; i < m->nrows; i++) {
		if (!m->seen[i]) {
			fprintf(stderr, "npumem-whatif: row %u of %u is in none of the shards' "
				"files\n", i + 1, m->nrows);
			return EXIT_USAGE;
		}
	}
	if (m->nrows == 0) {
		fprintf(stderr, "npumem-whatif: the shards' files hold no row\n");
		return EXIT_USAGE;
	}
	return 0;
}

int whatif_merge(char **files, int nfiles, struct whatif_result **rows, unsigned *n)
{
	struct merge m = { 0 };
	int status = 0;

	for (int i = 0; i < nfiles && status == 0; i++)
		status = read_file(&m, files[i]);
	if (status == 0)
		status = complete(&m);
	free(m.seen);
	*rows = m.rows;
	*n = m.rows ? m.nrows : 0;
	return status;
}
