/*
 * bench_traces.c - the benchmark workloads: the project's trace generators
 * at their default length, parsed by the project's trace parser, so a
 * benchmark replays exactly what `npumem-gentrace KIND --seed SEED` and
 * npumem-replay would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/trace_gen.h"

#include "bench_traces.h"

static int write_trace(const char *kind, uint64_t seed, char **text, size_t *len)
{
	struct wl_gen_options opt = { .seed = seed };
	enum wl_gen_kind k;
	FILE *f;
	int rc;

	rc = wl_gen_kind_find(kind, &k);
	if (rc < 0)
		return rc;
	f = open_memstream(text, len);
	if (!f)
		return -errno;
	rc = wl_gen_write(k, &opt, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	return rc;
}

int bench_trace_make(const char *kind, uint64_t seed, struct wl_trace **out,
		     char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	rc = write_trace(kind, seed, &text, &len);
	if (rc < 0) {
		snprintf(err, errlen, "trace %s: %s", kind,
			 rc == -EINVAL ? "unknown kind" : strerror(-rc));
		free(text);
		return rc;
	}
	f = fmemopen(text, len, "r");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "trace %s: %s", kind, strerror(-rc));
	} else {
		rc = wl_trace_parse(f, kind, out, err, errlen);
		fclose(f);
	}
	free(text);
	return rc;
}
