/*
 * npumem_whatif.c - which allocator settings fit a recorded workload, and
 * how much memory it needs under each.
 *
 *     npumem-whatif [OPTION]... TRACE|SNAPSHOT
 *     npumem-whatif --merge [--format F] [--svg FILE] SHARD...
 *
 * Each setting (--alloc-conf, --plugin, or a default set users try) is one
 * row: the whole trace replayed on a simulated NPU, in a child process of
 * its own (the simulator is one per process), --jobs at a time. With
 * --min-capacity each row also bisects over device capacity. --shard I/N
 * runs every N-th row and writes JSON lines that --merge puts together, so
 * a sweep can run across machines.
 *
 * A row whose replay fails (its plug-in faults or never returns, at its
 * capacity or at one the search probes) is shown failed, in its place,
 * with why, and the other rows still answer. Exit status: 0 (OOMs are
 * results); 1 if a row failed, every output written all the same, each
 * failure also said on standard error; 2 for a bad option, setting,
 * trace, ini or shard file, and then nothing is written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <npumemfs/npusim.h>

#include "alloc/caching/caching_allocator.h"
#include "child_jobs.h"
#include "config.h"
#include "replay_setup.h"
#include "snapshot_input.h"
#include "whatif_merge.h"
#include "whatif_print.h"
#include "whatif_rows.h"
#include "whatif_svg.h"

#define EXIT_USAGE 2
#define ERRLEN 1024
#define MAX_SETTINGS 256
/* parse_option: --help or --version was served, exit 0. */
#define DONE 256
/* parse_args: the options are good, go on. */
#define GO_ON (-1)

/*
 * The comparison with no setting given: upstream's defaults, then each
 * setting users reach for changed alone, so a row says what that one
 * setting does. garbage_collection_threshold acts only under a memory
 * fraction (upstream's set_fraction), so its rows match the defaults
 * unless the trace or the ini sets one.
 */
static const char *const default_set[] = {
	"",
	"expandable_segments:True",
	"max_split_size_mb:128",
	"max_split_size_mb:256",
	"max_split_size_mb:512",
	"garbage_collection_threshold:0.6",
	"garbage_collection_threshold:0.8",
	"roundup_power2_divisions:4",
};
#define NDEFAULT (sizeof(default_set) / sizeof(default_set[0]))

struct cli {
	struct replay_setup setup; /* --config, --flavor, --device-capacity, --devices, --plugin-dir */
	int device;         /* whose figures the rows show */
	struct whatif_setting settings[MAX_SETTINGS];
	unsigned nsettings;
	bool any_alloc_conf;
	bool min_capacity;
	unsigned jobs;      /* 0: the usable CPUs */
	enum whatif_format format;
	const char *svg;
	unsigned shard, nshards;  /* 1-based shard of nshards; 0: all rows */
	bool merge;
	char **inputs;      /* the trace, or with --merge the shard files */
	int ninputs;
};

/* A comparison under way: the rows this process runs or reads. */
struct comparison {
	struct whatif_env env;
	const struct cli *cli;
	unsigned *which;     /* [nrun]: the index of each row this process runs */
	unsigned nrun;
	struct whatif_result *rows;  /* [nrun] */
};

static const char usage[] =
	"Usage: npumem-whatif [OPTION]... TRACE|SNAPSHOT\n"
	"       npumem-whatif --merge [--format F] [--svg FILE] SHARD...\n"
	"Replay a trace (or a memory snapshot pickle, converted as snapshot2trace\n"
	"does) once per allocator setting and compare: peaks, fragmentation,\n"
	"device mallocs, OOMs and, with --min-capacity, the least capacity that\n"
	"runs it.\n"
	"\n"
	"  --alloc-conf STR        a row with these PYTORCH_NPU_ALLOC_CONF settings\n"
	"                          (repeatable; \"\" is upstream's defaults); none\n"
	"                          given: a default set of settings users try\n"
	"  --plugin SPEC           a row replayed through a plug-in:\n"
	"                          \"PATH ALLOC_FN FREE_FN [HOOK=FN ...]\" (repeatable)\n"
	"  --plugin-dir DIR        allow plug-ins under DIR (or the ini's plugin_dirs)\n"
	"  --config FILE           read the device and allocator settings of an npumemfs ini\n"
	"  --flavor npu|cuda       which upstream allocator to imitate (default npu)\n"
	"  --device-capacity SIZE  bytes per device, or with KiB/MiB/GiB (default 32GiB)\n"
	"  --devices N             number of devices (default: the ini's, or what the trace names)\n"
	"  --device D              show device D's figures (default 0; OOMs count on every device)\n"
	"  --min-capacity          also find each row's smallest capacity with no OOM\n"
	"  --jobs N                replays at once (default: the CPUs this process may use)\n"
	"  --format FORMAT         table (default), json or csv\n"
	"  --svg FILE              write reserved bytes over the events, per setting\n"
	"  --shard I/N             run rows I, I+N, ... only (1 <= I <= N), as JSON lines\n"
	"  --merge                 read the JSON lines of shards and print the comparison\n"
	"  --help                  show this text\n"
	"  --version               show the version\n";

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("npumem-whatif: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return *end || errno || *out > max ? -EINVAL : 0;
}

static int parse_shard(struct cli *cli, const char *s)
{
	unsigned long i, n;
	const char *slash = strchr(s, '/');
	char first[32];

	if (slash == NULL || (size_t)(slash - s) >= sizeof(first))
		return usage_error("bad --shard '%s' (I/N, 1 <= I <= N)", s);
	memcpy(first, s, (size_t)(slash - s));
	first[slash - s] = '\0';
	if (parse_count(first, 1u << 20, &i) != 0 || parse_count(slash + 1, 1u << 20, &n) != 0 ||
	    i < 1 || i > n)
		return usage_error("bad --shard '%s' (I/N, 1 <= I <= N)", s);
	cli->shard = (unsigned)i;
	cli->nshards = (unsigned)n;
	return 0;
}

static int add_setting(struct cli *cli, const char *text, bool plugin)
{
	if (cli->nsettings == MAX_SETTINGS)
		return usage_error("more than %d settings", MAX_SETTINGS);
	cli->settings[cli->nsettings++] = (struct whatif_setting){ .text = text,
								   .plugin = plugin };
	cli->any_alloc_conf |= !plugin;
	return 0;
}

static int parse_format(struct cli *cli, const char *s)
{
	static const char *const names[] = { "table", "json", "csv" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			cli->format = (enum whatif_format)i;
			return 0;
		}
	}
	return usage_error("unknown format '%s' (table, json or csv)", s);
}

static int parse_jobs(struct cli *cli, const char *s)
{
	unsigned long n;

	if (parse_count(s, 4096, &n) != 0 || n == 0)
		return usage_error("bad --jobs '%s': give 1 to 4096 (default: the CPUs this "
				   "process may use)", s);
	cli->jobs = (unsigned)n;
	return 0;
}

/* One option: 0, DONE after --help or --version, or EXIT_USAGE. */
static int parse_option(struct cli *cli, int c, const char *arg)
{
	char err[ERRLEN];
	unsigned long n;
	int rc;

	switch (c) {
	case 'a': return add_setting(cli, arg, false);
	case 'p': return add_setting(cli, arg, true);
	case 'D':
		if (parse_count(arg, NPUSIM_MAX_DEVICES - 1, &n) != 0)
			return usage_error("bad device '%s' (0..%d)", arg, NPUSIM_MAX_DEVICES - 1);
		cli->device = (int)n;
		return 0;
	case 'm': cli->min_capacity = true; return 0;
	case 'j': return parse_jobs(cli, arg);
	case 'F': return parse_format(cli, arg);
	case 's': cli->svg = arg; return 0;
	case 'S': return parse_shard(cli, arg);
	case 'M': cli->merge = true; return 0;
	case 'h': fputs(usage, stdout); return DONE;
	case 'V': printf("npumem-whatif %s\n", PROJECT_VERSION); return DONE;
	}
	rc = replay_setup_option(&cli->setup, c, arg, err, sizeof(err));
	if (rc < 0)
		return usage_error("%s", err);
	return rc ? EXIT_USAGE : 0;
}

static int check_args(struct cli *cli)
{
	if (cli->merge && cli->ninputs < 1)
		return usage_error("--merge needs the shards' files; see --help");
	if (cli->merge && (cli->nsettings || cli->shard || cli->min_capacity))
		return usage_error("--merge takes only --format and --svg: the shards ran the rows");
	if (!cli->merge && cli->ninputs != 1)
		return usage_error("expected one TRACE or SNAPSHOT; see --help");
	if (cli->shard && cli->svg)
		return usage_error("--svg goes with --merge: a shard has some rows only "
				   "(its lines carry the curves)");
	if (cli->setup.plugin_dirs[0] && cli->nsettings == 0)
		return usage_error("--plugin-dir without --plugin");
	return GO_ON;
}

/* GO_ON, or the exit status to stop with (0 after --help or --version). */
static int parse_args(int argc, char **argv, struct cli *cli)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "flavor", required_argument, NULL, 'f' },
		{ "alloc-conf", required_argument, NULL, 'a' },
		{ "plugin", required_argument, NULL, 'p' },
		{ "plugin-dir", required_argument, NULL, 'P' },
		{ "device-capacity", required_argument, NULL, 'C' },
		{ "devices", required_argument, NULL, 'd' },
		{ "device", required_argument, NULL, 'D' },
		{ "min-capacity", no_argument, NULL, 'm' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'F' },
		{ "svg", required_argument, NULL, 's' },
		{ "shard", required_argument, NULL, 'S' },
		{ "merge", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if ((rc = parse_option(cli, c, optarg)) != 0)
			return rc == DONE ? EXIT_SUCCESS : rc;
	}
	cli->inputs = argv + optind;
	cli->ninputs = argc - optind;
	return check_args(cli);
}

static int load_input(const char *path, struct wl_trace **out)
{
	char err[ERRLEN];
	int rc = snapshot_input_is_snapshot(path) ? snapshot_input_load(path, out, err, sizeof(err))
						   : wl_trace_load(path, out, err, sizeof(err));

	if (rc == 0)
		return 0;
	fprintf(stderr, "npumem-whatif: %s\n", err);
	return EXIT_USAGE;
}

/* The ini, then the command line over it, as npumem-replay. */
static int configure(struct comparison *cmp, const struct cli *cli)
{
	struct nmfs_config *cfg = &cmp->env.cfg;
	char err[ERRLEN];

	if (replay_setup_config(&cli->setup, cmp->env.trace->max_device, cfg, err, sizeof(err)))
		return usage_error("%s", err);
	/* Said once here, not by every row's replay. */
	if (cmp->env.trace->max_device >= cfg->device_count)
		return usage_error("%s names device %d; the machine has %d (--devices)",
				   cmp->env.trace->name, cmp->env.trace->max_device,
				   cfg->device_count);
	if (cli->device >= cfg->device_count)
		return usage_error("--device %d: the machine has %d devices", cli->device,
				   cfg->device_count);
	cmp->env.device = cli->device;
	return 0;
}

/* Every --alloc-conf parsed before anything runs: upstream's message. */
static int check_settings(const struct comparison *cmp, const struct cli *cli)
{
	const struct nmfs_config *cfg = &cmp->env.cfg;
	char err[NPA_CONF_ERRLEN];
	struct npa_conf conf;
	bool plugins = false;

	for (unsigned i = 0; i < cli->nsettings; i++) {
		plugins |= cli->settings[i].plugin;
		if (cli->settings[i].plugin)
			continue;
		if (replay_setup_conf(cfg, cli->settings[i].text, &conf, err, sizeof(err)))
			return usage_error("--alloc-conf '%s': %s", cli->settings[i].text, err);
	}
	if (plugins && !cfg->plugin_dirs[0])
		return usage_error("no folder allows plug-ins: give --plugin-dir DIR, or "
				   "plugin_dirs in the --config ini");
	return 0;
}

/* No capacity below the largest request can run the trace: said now. */
static int check_capacity(struct comparison *cmp)
{
	const struct wl_trace *t = cmp->env.trace;
	uint32_t line;
	uint64_t most = wl_whatif_largest_request(t, &line);

	cmp->env.largest_request = most;
	if (most <= cmp->env.cfg.capacity)
		return 0;
	return usage_error("%s:%u: a request of %llu bytes is larger than the device "
			   "capacity, %llu bytes: no setting can run this trace",
			   t->name, line, (unsigned long long)most,
			   (unsigned long long)cmp->env.cfg.capacity);
}

/* The settings compared: those given, or the default set before plug-ins. */
static void settings_of(const struct cli *cli, struct whatif_setting *out, unsigned *n)
{
	*n = 0;
	if (!cli->any_alloc_conf)
		for (size_t i = 0; i < NDEFAULT; i++)
			out[(*n)++] = (struct whatif_setting){ .text = default_set[i] };
	for (unsigned i = 0; i < cli->nsettings; i++)
		out[(*n)++] = cli->settings[i];
}

struct run_ctx {
	struct comparison *cmp;
	struct whatif_setting *settings;
	unsigned nsettings;
};

/* What went wrong with a row, named as on the command line. */
static void say_row(bool plugin, const char *setting, const char *why)
{
	fprintf(stderr, "npumem-whatif: %s %s: %s\n", plugin ? "--plugin" : "--alloc-conf",
		setting[0] ? setting : "\"\"", why);
}

static int row_work(void *ctx, unsigned k, struct sbuf *out)
{
	struct run_ctx *rc = ctx;
	unsigned index = rc->cmp->which[k];
	const struct whatif_setting *s = &rc->settings[index];
	struct whatif_result r;
	char err[ERRLEN];
	int e = whatif_run_row(&rc->cmp->env, s, index, rc->nsettings, &r, err, sizeof(err));

	if (e == 0 && whatif_row_to_json(&r, out) != 0) {
		e = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory for the row's line");
	}
	whatif_row_release(&r);
	if (e == 0)
		return 0;
	say_row(s->plugin, s->text, err);
	return e == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
}

/* A child that gave no row: its row failed, with how the child ended. */
static void row_lost(struct run_ctx *rc, unsigned k, const char *why)
{
	unsigned index = rc->cmp->which[k];

	whatif_row_start(&rc->cmp->rows[k], &rc->cmp->env, &rc->settings[index], index,
			 rc->nsettings);
	whatif_row_fail(&rc->cmp->rows[k], why);
}

/* A child's end: its row (failed or not), or exit 2 for a refused setting,
 * which the child has said. */
static int row_done(void *ctx, unsigned k, int ws, const char *out, size_t len)
{
	struct run_ctx *rc = ctx;
	char err[ERRLEN], why[ERRLEN + 64];

	(void)len;
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == EXIT_USAGE)
		return EXIT_USAGE;
	if (WIFSIGNALED(ws))
		snprintf(why, sizeof(why), "its replay process was killed by signal %d (%s)",
			 WTERMSIG(ws), strsignal(WTERMSIG(ws)));
	else if (WEXITSTATUS(ws) != 0)
		snprintf(why, sizeof(why), "its replay process exited with status %d",
			 WEXITSTATUS(ws));
	else if (whatif_row_from_json(out, &rc->cmp->rows[k], err, sizeof(err)) == 0)
		return 0;
	else
		snprintf(why, sizeof(why), "its replay process answered badly: %s", err);
	row_lost(rc, k, why);
	return 0;
}

static int run_rows(struct comparison *cmp, const struct cli *cli)
{
	struct whatif_setting settings[NDEFAULT + MAX_SETTINGS];
	struct run_ctx ctx = { .cmp = cmp, .settings = settings };
	struct child_jobs jobs = { .work = row_work, .done = row_done, .ctx = &ctx };

	settings_of(cli, settings, &ctx.nsettings);
	cmp->which = calloc(ctx.nsettings, sizeof(*cmp->which));
	cmp->rows = calloc(ctx.nsettings, sizeof(*cmp->rows));
	if (!cmp->which || !cmp->rows)
		return usage_error("out of memory");
	for (unsigned i = 0; i < ctx.nsettings; i++)
		if (!cli->shard || i % cli->nshards == cli->shard - 1)
			cmp->which[cmp->nrun++] = i;
	jobs.njobs = cmp->nrun;
	jobs.width = cli->jobs ? cli->jobs : child_jobs_cpus();
	if (jobs.width > cmp->nrun)
		jobs.width = cmp->nrun ? cmp->nrun : 1;
	return child_jobs_run(&jobs);
}

static int write_file(const char *path, const struct sbuf *b)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(b->data, 1, b->len, f) == b->len;

	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		fprintf(stderr, "npumem-whatif: cannot write %s: %s\n", path, strerror(errno));
	return ok ? 0 : EXIT_FAILURE;
}

static int print_out(const struct sbuf *b)
{
	if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
		return EXIT_FAILURE;
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* Each failed row on standard error too, as it reads in the table: 1 if
 * any, so scripts notice; 0 if every row ran. */
static int tell_failures(const struct whatif_result *rows, unsigned n)
{
	int status = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!rows[i].failed)
			continue;
		say_row(rows[i].plugin, rows[i].settings, rows[i].failure);
		status = EXIT_FAILURE;
	}
	return status;
}

/* A shard's rows as JSON lines, for --merge. */
static int print_shard(const struct comparison *cmp)
{
	struct sbuf out;
	int status = 0;

	sbuf_init(&out);
	for (unsigned i = 0; i < cmp->nrun && status == 0; i++)
		if (whatif_row_to_json(&cmp->rows[i], &out) != 0)
			status = EXIT_FAILURE;
	if (status == 0)
		status = print_out(&out);
	sbuf_release(&out);
	return status;
}

/* The comparison: the picture first, so a failure there prints nothing. */
static int print_comparison(struct whatif_result *rows, unsigned n, const struct cli *cli)
{
	struct sbuf out, svg;
	int status = 0;

	whatif_mark(rows, n);
	sbuf_init(&out);
	sbuf_init(&svg);
	if (cli->svg) {
		whatif_svg(&svg, rows, n);
		status = write_file(cli->svg, &svg);
	}
	if (status == 0 && whatif_print(&out, rows, n, cli->format) != 0)
		status = EXIT_FAILURE;
	if (status == 0)
		status = print_out(&out);
	sbuf_release(&out);
	sbuf_release(&svg);
	return status;
}

static void release_rows(struct whatif_result *rows, unsigned n)
{
	for (unsigned i = 0; rows && i < n; i++)
		whatif_row_release(&rows[i]);
	free(rows);
}

static int compare(const struct cli *cli)
{
	struct comparison cmp = { .cli = cli };
	struct wl_trace *t = NULL;
	int status = load_input(cli->inputs[0], &t);

	if (status)
		return status;
	cmp.env.trace = t;
	cmp.env.min_capacity = cli->min_capacity;
	/* A shard's lines carry the curves, for a --merge --svg. */
	cmp.env.curve_every = cli->svg || cli->shard ? whatif_svg_every(t->nevents) : 0;
	if ((status = configure(&cmp, cli)) == 0 && (status = check_settings(&cmp, cli)) == 0 &&
	    (status = check_capacity(&cmp)) == 0)
		status = run_rows(&cmp, cli);
	if (status == 0)
		status = cli->shard ? print_shard(&cmp) : print_comparison(cmp.rows, cmp.nrun, cli);
	if (status == 0)
		status = tell_failures(cmp.rows, cmp.nrun);
	release_rows(cmp.rows, cmp.nrun);
	free(cmp.which);
	wl_trace_free(t);
	return status;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct whatif_result *rows = NULL;
	unsigned n = 0;
	int status = parse_args(argc, argv, &cli);

	if (status != GO_ON)
		return status;
	if (!cli.merge)
		return compare(&cli);
	status = whatif_merge(cli.inputs, cli.ninputs, &rows, &n);
	if (status == 0 && cli.svg)
		for (unsigned i = 0; i < n && status == 0; i++)
			if (!rows[i].failed && rows[i].curve.every == 0)
				status = usage_error("--svg: the shards were run without --svg");
	if (status == 0)
		status = print_comparison(rows, n, &cli);
	if (status == 0)
		status = tell_failures(rows, n);
	release_rows(rows, n);
	return status;
}
