/*
 * fuzz_whatif_row.c - whatif_row_from_json over arbitrary lines: what
 * npumem-whatif --merge reads from shard files a user hands it. A refused
 * line must say why; an accepted one must write back to a line that reads
 * as the same row.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/whatif_rows.h"

static void same_row(const struct whatif_result *a, const struct whatif_result *b)
{
	if (a->index != b->index || a->rows != b->rows || a->plugin != b->plugin ||
	    strcmp(a->settings, b->settings) != 0 || strcmp(a->flavor, b->flavor) != 0 ||
	    a->failed != b->failed || strcmp(a->failure, b->failure) != 0 ||
	    a->m.peak_reserved_bytes != b->m.peak_reserved_bytes ||
	    a->m.num_ooms != b->m.num_ooms || a->m.first_oom_line != b->m.first_oom_line ||
	    a->min_searched != b->min_searched || a->min.bytes != b->min.bytes ||
	    a->curve.every != b->curve.every || a->curve.npoints != b->curve.npoints ||
	    (a->curve.npoints &&
	     memcmp(a->curve.points, b->curve.points, a->curve.npoints * sizeof(uint64_t)) != 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct whatif_result r, again;
	struct sbuf out;
	char err[256] = "";

	if (line == NULL)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (whatif_row_from_json(line, &r, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();
		whatif_row_release(&r);
		free(line);
		return 0;
	}
	sbuf_init(&out);
	if (whatif_row_to_json(&r, &out) != 0 ||
	    whatif_row_from_json(out.data, &again, err, sizeof(err)) != 0)
		abort();
	same_row(&r, &again);
	whatif_row_release(&again);
	whatif_row_release(&r);
	sbuf_release(&out);
	free(line);
	return 0;
}
