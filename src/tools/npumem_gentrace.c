/*
 * npumem_gentrace.c - write a synthetic allocation trace.
 *
 *     npumem-gentrace KIND [--seed N] [--steps N] [--out FILE]
 *                     [--batches LO..HI|A,B,...] [--share-pool yes|no] [--graphs yes|no]
 *                     [--batch SIZE] [--batch-min SIZE] [--prefetch N]
 *                     [--live N] [--max-size SIZE]
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/size_parse.h"
#include "workload/trace_gen.h"

#define EXIT_USAGE 2
#define KINDS "training, churn, random, decode-graphs or pinned-loader"

static const char usage[] =
	"Usage: npumem-gentrace KIND [--seed N] [--steps N] [--out FILE]\n"
	"                       [--batches LO..HI|A,B,...] [--share-pool yes|no]\n"
	"                       [--graphs yes|no] [--batch SIZE] [--batch-min SIZE]\n"
	"                       [--prefetch N] [--live N] [--max-size SIZE]\n"
	"Write a synthetic allocation trace (the npumem-replay format).\n"
	"\n"
	"KIND:\n"
	"  training   a transformer training loop (steps: training steps, default 20)\n"
	"  churn      small allocations, 512 B to 1 MiB, about 750 live (steps: events,\n"
	"             default 20000; --live and --max-size change the last two)\n"
	"  random     RMM random_allocations, up to 64 MiB (steps: events, default 20000)\n"
	"  decode-graphs  LLM decoding with a graph captured per batch size, as vLLM\n"
	"             (steps: decode steps replaying them, default 100)\n"
	"  pinned-loader  a DataLoader with pin_memory=True: batches of varying size\n"
	"             pinned ahead, copied to the device on stream 1, unpinned\n"
	"             (steps: batches, default 200)\n"
	"\n"
	"Options:\n"
	"  --seed N    PRNG seed (default 1); the same seed gives the same trace\n"
	"  --steps N   how long the trace is (see KIND)\n"
	"  --out FILE  write to FILE instead of standard output\n"
	"  --batches LO..HI|A,B,...  decode-graphs' capture sizes: vLLM's (1, 2, 4, then\n"
	"              multiples of 8) from LO to HI, or these (default 1..256)\n"
	"  --graphs yes|no  decode-graphs: capture graphs (default yes) or decode\n"
	"              eagerly, each step's layers on the default stream (the baseline)\n"
	"  --share-pool yes|no  decode-graphs: one pool for every graph (default yes,\n"
	"              as vLLM) or a pool each\n"
	"  --batch SIZE  pinned-loader: the largest batch, bytes or KiB/MiB/GiB (default\n"
	"              320MiB)\n"
	"  --batch-min SIZE  pinned-loader: the smallest batch (default an eighth of\n"
	"              --batch); sizes are uniform between them\n"
	"  --prefetch N  pinned-loader: batches pinned ahead of the step (default 2,\n"
	"              at most 64)\n"
	"  --live N    churn: the live blocks the trace settles at (default 750, at\n"
	"              most 1000000); it never holds more than 4/3 of them\n"
	"  --max-size SIZE  churn: sizes are below SIZE, bytes or KiB/MiB/GiB (default\n"
	"              1MiB, more than 512)\n"
	"  --help      show this text\n"
	"  --version   show the version\n";

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("npumem-gentrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static int parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return *end || errno || *out > max ? -EINVAL : 0;
}

static int write_trace(enum wl_gen_kind kind, const struct wl_gen_options *opt,
		       const char *path)
{
	FILE *f = path ? fopen(path, "w") : stdout;
	int rc;

	if (f == NULL) {
		fprintf(stderr, "npumem-gentrace: %s: %s\n", path, strerror(errno));
		return EXIT_FAILURE;
	}
	rc = wl_gen_write(kind, opt, f);
	if (path && fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "npumem-gentrace: %s: %s\n", path ? path : "stdout",
			strerror(-rc));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "steps", required_argument, NULL, 'n' },
		{ "out", required_argument, NULL, 'o' },
		{ "batches", required_argument, NULL, 'b' },
		{ "share-pool", required_argument, NULL, 'S' },
		{ "graphs", required_argument, NULL, 'g' },
		{ "batch", required_argument, NULL, 'B' },
		{ "batch-min", required_argument, NULL, 'm' },
		{ "prefetch", required_argument, NULL, 'p' },
		{ "live", required_argument, NULL, 'l' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct wl_gen_options opt = { .seed = 1 };
	enum wl_gen_kind kind;
	const char *out = NULL;
	bool decode_options = false, loader_options = false, churn_options = false;
	unsigned long long v;
	uint64_t bytes;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u64(optarg, UINT64_MAX, &v))
				return usage_error("bad seed '%s'", optarg);
			opt.seed = v;
			break;
		case 'n':
			if (parse_u64(optarg, 100000000, &v) || v == 0)
				return usage_error("bad steps '%s' (1..100000000)", optarg);
			opt.steps = (unsigned)v;
			break;
		case 'o':
			out = optarg;
			break;
		case 'b':
			if (wl_gen_parse_batches(optarg, &opt) != 0)
				return usage_error("bad batches '%s' (LO..HI or increasing A,B,... "
						   "in 1..%d)", optarg, WL_GEN_MAX_BATCH);
			decode_options = true;
			break;
		case 'S':
		case 'g':
			if (strcmp(optarg, "yes") != 0 && strcmp(optarg, "no") != 0)
				return usage_error("bad %s '%s' (yes or no)",
						   c == 'S' ? "share-pool" : "graphs", optarg);
			*(c == 'S' ? &opt.own_pools : &opt.no_graphs) = strcmp(optarg, "no") == 0;
			decode_options = true;
			break;
		case 'B':
		case 'm':
			if (npa_parse_size(optarg, &bytes) != 0 || bytes == 0)
				return usage_error("bad %s '%s' (bytes, or with KiB/MiB/GiB)",
						   c == 'B' ? "batch" : "batch-min", optarg);
			*(c == 'B' ? &opt.batch_max : &opt.batch_min) = bytes;
			loader_options = true;
			break;
		case 'p':
			if (parse_u64(optarg, WL_GEN_MAX_PREFETCH, &v))
				return usage_error("bad prefetch '%s' (0..%d)", optarg,
						   WL_GEN_MAX_PREFETCH);
			opt.prefetch = (unsigned)v;
			opt.prefetch_set = true;
			loader_options = true;
			break;
		case 'l':
			if (parse_u64(optarg, WL_GEN_MAX_LIVE, &v) || v == 0)
				return usage_error("bad live '%s' (1..%d)", optarg, WL_GEN_MAX_LIVE);
			opt.live = (unsigned)v;
			churn_options = true;
			break;
		case 'M':
			if (npa_parse_size(optarg, &bytes) != 0 || bytes < WL_GEN_MIN_MAX_SIZE ||
			    bytes > WL_GEN_MAX_MAX_SIZE)
				return usage_error("bad max-size '%s' (513 bytes to 1TiB, bytes or "
						   "with KiB/MiB/GiB)", optarg);
			opt.max_size = bytes;
			churn_options = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("npumem-gentrace %s\n", PROJECT_VERSION);
			return EXIT_SUCCESS;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return usage_error("expected one KIND (%s); see --help", KINDS);
	if (wl_gen_kind_find(argv[optind], &kind) != 0)
		return usage_error("unknown kind '%s' (%s)", argv[optind], KINDS);
	if (decode_options && kind != WL_GEN_DECODE_GRAPHS)
		return usage_error("--batches, --share-pool and --graphs are decode-graphs "
				   "options");
	if (loader_options && kind != WL_GEN_PINNED_LOADER)
		return usage_error("--batch, --batch-min and --prefetch are pinned-loader options");
	if (churn_options && kind != WL_GEN_CHURN)
		return usage_error("--live and --max-size are churn options");
	if (opt.batch_min > (opt.batch_max ? opt.batch_max : WL_GEN_DEFAULT_BATCH_MAX))
		return usage_error("--batch-min is above --batch");
	if (opt.no_graphs && opt.own_pools)
		return usage_error("--share-pool needs graphs (--graphs no captures none)");
	return write_trace(kind, &opt, out);
}
