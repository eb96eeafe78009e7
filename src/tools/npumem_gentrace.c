/*
 * npumem_gentrace.c - write a synthetic allocation trace.
 *
 *     npumem-gentrace KIND [--seed N] [--steps N] [--out FILE]
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/trace_gen.h"

#define EXIT_USAGE 2

static const char usage[] =
	"Usage: npumem-gentrace KIND [--seed N] [--steps N] [--out FILE]\n"
	"Write a synthetic allocation trace (the npumem-replay format).\n"
	"\n"
	"KIND:\n"
	"  training   a transformer training loop (steps: training steps, default 20)\n"
	"  churn      small allocations, 512 B to 1 MiB, about 750 live (steps: events, default 20000)\n"
	"  random     RMM random_allocations, up to 64 MiB (steps: events, default 20000)\n"
	"\n"
	"Options:\n"
	"  --seed N    PRNG seed (default 1); the same seed gives the same trace\n"
	"  --steps N   how long the trace is (see KIND)\n"
	"  --out FILE  write to FILE instead of standard output\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct wl_gen_options opt = { .seed = 1 };
	enum wl_gen_kind kind;
	const char *out = NULL;
	unsigned long long v;
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
		return usage_error("expected one KIND (training, churn or random); see --help");
	if (wl_gen_kind_find(argv[optind], &kind) != 0)
		return usage_error("unknown kind '%s' (training, churn or random)", argv[optind]);
	return write_trace(kind, &opt, out);
}
