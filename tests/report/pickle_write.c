/*
 * pickle_write OUT npu|cuda - the fixture's pickle into OUT, for
 * check_pickle.py.
 */
#include <stdio.h>

#include "report/report.h"

#include "history_fixture.h"

int main(int argc, char **argv)
{
	struct npa_snapshot snap;
	struct npa_trace trace;
	struct npa_conf conf;
	struct sbuf out;

	if (argc != 3 || npa_flavor_find(argv[2]) == NULL) {
		fprintf(stderr, "usage: pickle_write OUT npu|cuda\n");
		return 2;
	}
	hf_snapshot(&snap);
	hf_trace(&trace);
	hf_conf(&conf);
	sbuf_init(&out);
	int rc = report_snapshot_pickle(&out, &snap, &trace, 1, npa_flavor_find(argv[2]), &conf);
	FILE *f = fopen(argv[1], "wb");
	if (rc || f == NULL || fwrite(out.data, 1, out.len, f) != out.len || fclose(f)) {
		fprintf(stderr, "pickle_write: cannot write %s\n", argv[1]);
		return 1;
	}
	sbuf_release(&out);
	return 0;
}
