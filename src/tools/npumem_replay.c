/*
 * npumem_replay.c - replay an allocation trace offline and print a report.
 *
 *     npumem-replay [--config FILE] [--flavor npu|cuda] [--alloc-conf STR]
 *                   [--no-memory-caching]
 *                   [--device-capacity SIZE] [--devices N]
 *                   [--format stats|json|summary|snapshot|pins] [--check]
 *                   [--plugin "PATH ALLOC_FN FREE_FN [HOOK=FN ...]" --plugin-dir DIR]
 *                   TRACE
 *
 * The simulator, the allocator and the replay are the daemon's own, so a
 * trace gives here the numbers a mount would show. With --plugin the
 * replay goes through the daemon's allocator switch with that plug-in
 * current, loaded under the daemon's trust rules (only from a folder that
 * --plugin-dir or the ini's plugin_dirs allows: loading runs its code), and
 * the report is the plug-in wrapper's. Exit status: 0 (OOMs
 * included: they are results, not errors), 2 for a bad option, value,
 * configuration or trace line, 1 if the allocator or runtime failed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc/switch/allocator_switch.h"
#include "alloc/caching/caching_allocator.h"
#include "alloc/device/mempool.h"
#include "config.h"
#include "machine.h"
#include "replay_setup.h"
#include "report/report.h"
#include "alloc/acl/block_handle.h"
#include "alloc/host/host_allocator.h"
#include "workload/replay.h"
#include "workload/replay_ops.h"

#define EXIT_USAGE 2
#define ERRLEN 1024
/* parse_option: --help or --version was served, exit 0. */
#define DONE 256
/* parse_args: the options are good, go on. */
#define GO_ON (-1)

enum format { FORMAT_STATS, FORMAT_JSON, FORMAT_SUMMARY, FORMAT_SNAPSHOT, FORMAT_PINS };

static const char *const format_names[] = { "stats", "json", "summary", "snapshot", "pins" };

struct cli {
	struct replay_setup setup; /* --config, --flavor, --device-capacity, --devices, --plugin-dir */
	const char *alloc_conf;
	bool no_caching;
	enum format format;
	bool check;
	const char *plugin;      /* a plug-in spec, or NULL: the caching allocator */
	const char *trace;
};

struct run {
	struct nmfs_config cfg;
	bool bad_line;           /* r->err is a bad trace line */
	bool device_missing;     /* r->err is a device the machine lacks */
	struct wl_trace_stream *in;
	const struct wl_trace *trace; /* the chunk read last, and the counts so far */
	bool ended;              /* every line is read and checked */
	int max_device;          /* the highest device the trace names */
	bool devices_guessed;    /* from the first chunk of a pipe only */
	bool sim_up;
	struct npa *alloc;
	struct sw *sw;           /* only with --plugin */
	struct wl_replay *replay;
	struct sbuf pins;        /* --format pins: a line a pin, as they run */
	char err[ERRLEN];
};

static const char usage[] =
	"Usage: npumem-replay [OPTION]... TRACE\n"
	"Replay an allocation trace against the caching allocator on a simulated\n"
	"NPU and print a report for device 0 (TRACE '-' reads standard input).\n"
	"\n"
	"  --config FILE           read the device and allocator settings of an npumemfs ini\n"
	"  --flavor npu|cuda       which upstream allocator to imitate (default npu)\n"
	"  --alloc-conf STR        PYTORCH_NPU_ALLOC_CONF settings, after the ini's\n"
	"  --no-memory-caching     every free goes back to the device (as\n"
	"                          PYTORCH_NO_NPU_MEMORY_CACHING=1, over the ini)\n"
	"  --device-capacity SIZE  bytes per device, or with KiB/MiB/GiB (default 32GiB)\n"
	"  --devices N             number of devices (default: the ini's, or what the trace names)\n"
	"  --format FORMAT         stats, json, summary (default), snapshot, or pins\n"
	"                          (the pinned host block each pin line got)\n"
	"  --check                 check the allocator's invariants after every event (slow)\n"
	"  --plugin SPEC           replay through a plug-in: \"PATH ALLOC_FN FREE_FN [HOOK=FN ...]\"\n"
	"  --plugin-dir DIR        allow plug-ins under DIR (repeatable; or the ini's plugin_dirs)\n"
	"  --help                  show this text\n"
	"  --version               show the version\n";

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("npumem-replay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static int parse_format(const char *s, enum format *out)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(s, format_names[i]) == 0) {
			*out = (enum format)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* One option: 0, DONE after --help or --version, or EXIT_USAGE. */
static int parse_option(struct cli *cli, int c, const char *arg)
{
	char err[ERRLEN];
	int rc;

	switch (c) {
	case 'a': cli->alloc_conf = arg; return 0;
	case 'n': cli->no_caching = true; return 0;
	case 'F':
		if (parse_format(arg, &cli->format) != 0)
			return usage_error("unknown format '%s' (stats, json, summary, snapshot "
					   "or pins)", arg);
		return 0;
	case 'k': cli->check = true; return 0;
	case 'p': cli->plugin = arg; return 0;
	case 'h': fputs(usage, stdout); return DONE;
	case 'V': printf("npumem-replay %s\n", PROJECT_VERSION); return DONE;
	}
	rc = replay_setup_option(&cli->setup, c, arg, err, sizeof(err));
	if (rc < 0)
		return usage_error("%s", err);
	return rc ? EXIT_USAGE : 0;
}

/* GO_ON, or the exit status to stop with (0 after --help or --version). */
static int parse_args(int argc, char **argv, struct cli *cli)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "flavor", required_argument, NULL, 'f' },
		{ "alloc-conf", required_argument, NULL, 'a' },
		{ "no-memory-caching", no_argument, NULL, 'n' },
		{ "device-capacity", required_argument, NULL, 'C' },
		{ "devices", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'F' },
		{ "check", no_argument, NULL, 'k' },
		{ "plugin", required_argument, NULL, 'p' },
		{ "plugin-dir", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	cli->format = FORMAT_SUMMARY;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if ((rc = parse_option(cli, c, optarg)) != 0)
			return rc == DONE ? EXIT_SUCCESS : rc;
	}
	if (optind != argc - 1)
		return usage_error("expected one TRACE; see --help");
	if (cli->plugin && cli->check)
		return usage_error("--check checks the caching allocator, which --plugin bypasses");
	if (cli->setup.plugin_dirs[0] && !cli->plugin)
		return usage_error("--plugin-dir without --plugin");
	cli->trace = argv[optind];
	return GO_ON;
}

/* A refused setting: "npumem-replay: ..." in r->err (printed once the
 * rest of the trace has no bad line), exit status 2. */
__attribute__((format(printf, 2, 3)))
static int refuse(struct run *r, const char *fmt, ...)
{
	static const char prefix[] = "npumem-replay: ";
	char msg[ERRLEN - sizeof(prefix) + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(r->err, prefix, sizeof(prefix) - 1);
	memcpy(r->err + sizeof(prefix) - 1, msg, strlen(msg) + 1);
	return EXIT_USAGE;
}

/* The ini, then the command line over it. */
static int configure(struct run *r, const struct cli *cli)
{
	if (replay_setup_config(&cli->setup, r->max_device, &r->cfg, r->err, sizeof(r->err)))
		return EXIT_USAGE;
	if (cli->no_caching)
		r->cfg.no_memory_caching = true;
	return 0;
}

static int start_simulator(struct run *r)
{
	if (machine_start(&r->cfg, r->err, sizeof(r->err)) != 0)
		return refuse(r, "%s", r->err);
	r->sim_up = true;
	return 0;
}

static int start_allocator(struct run *r, const struct cli *cli)
{
	struct npa_options opt = { .flavor = r->cfg.flavor, .device_count = r->cfg.device_count,
				   .no_caching = r->cfg.no_memory_caching };
	int rc = replay_setup_conf(&r->cfg, cli->alloc_conf, &opt.conf, r->err, sizeof(r->err));

	if (rc)
		return refuse(r, "%s", r->err);
	/* Once, after both sources: the ini and the command line add up. */
	if (npa_conf_warning(&opt.conf, r->err, sizeof(r->err)))
		fprintf(stderr, "npumem-replay: %s\n", r->err);
	if ((rc = npa_create(&opt, &r->alloc)) != 0)
		return refuse(r, "cannot create the allocator: %s", strerror(-rc));
	return 0;
}

/* The switch, with the plug-in current; the daemon's rules apply. */
static int start_plugin(struct run *r, const struct cli *cli)
{
	if (!r->cfg.plugin_dirs[0])
		return refuse(r, "no folder allows plug-ins: give --plugin-dir DIR, "
				   "or plugin_dirs in the --config ini");
	if (replay_setup_switch(&r->cfg, r->alloc, cli->plugin, &r->sw, r->err,
				sizeof(r->err)) != 0)
		return refuse(r, "%s", r->err);
	return 0;
}

/* A device the machine lacks: exit status 2, the message in r->err. */
static int device_refused(struct run *r)
{
	size_t n = strlen(r->err);

	r->device_missing = true;
	if (r->devices_guessed)
		snprintf(r->err + n, sizeof(r->err) - n, ": a trace read from a pipe gets the "
			 "devices its first %d events name; give --devices", WL_STREAM_CHUNK);
	return EXIT_USAGE;
}

/* A replay that could not start or take its next chunk: a device the
 * machine lacks is the user's to fix (EXIT_USAGE); out of memory is this
 * run's failure, and no hint about --devices. */
static int replay_refused(struct run *r, int rc)
{
	return rc == -EINVAL ? device_refused(r) : EXIT_FAILURE;
}

/*
 * A pin line's block, named by the order in which the host allocator
 * made its blocks, so that which cached block served which pin reads
 * without addresses. The expandable variant's blocks split and merge:
 * "-", as for a pin of 0 bytes, which gets no block.
 */
static void print_pin(void *arg, const struct wl_pin_served *p)
{
	struct sbuf *out = arg;

	sbuf_printf(out, "pin line=%u size=%llu ", p->line, (unsigned long long)p->size);
	if (p->refused)
		sbuf_printf(out, "refused\n");
	else if (p->block == 0)
		sbuf_printf(out, "block=- block_size=%llu\n", (unsigned long long)p->block_size);
	else
		sbuf_printf(out, "block=%llu block_size=%llu %s\n", (unsigned long long)p->block,
			    (unsigned long long)p->block_size, p->fresh ? "new" : "cached");
}

static int start_replay(struct run *r, const struct cli *cli)
{
	struct allocator target = r->sw ? sw_allocator(r->sw) : npa_allocator(r->alloc);
	int rc = wl_replay_new_target(target, r->trace, &r->replay, r->err, sizeof(r->err));

	if (rc != 0)
		return replay_refused(r, rc);
	wl_replay_set_check(r->replay, cli->check);
	if (cli->format == FORMAT_PINS)
		wl_replay_on_pin(r->replay, print_pin, &r->pins);
	return 0;
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* launch_op lines: where their workspace came from. */
static void report_operators(struct run *r)
{
	struct op_launcher *l = wl_replay_launcher(r->replay);
	struct op_totals t;

	if (!l)
		return;
	op_totals(l, &t);
	fprintf(stderr, "npumem-replay: %llu operators launched; workspace: %llu blocks "
		"through ACL allocators, %llu from the allocator in use\n",
		(unsigned long long)t.launched, (unsigned long long)t.acl_allocs,
		(unsigned long long)t.fallback_allocs);
}

/*
 * Each device's last OOM of the built-in allocator, as oom/deviceN shows
 * it: upstream's message, then why it ran out.
 */
static void report_ooms(struct run *r)
{
	char text[NPA_ERRLEN];
	struct npa_oom_why why;
	struct sbuf out;

	sbuf_init(&out);
	for (int d = 0; d < r->cfg.device_count; d++) {
		if (npa_last_oom(r->alloc, d, text, sizeof(text), &why) != 0 || !text[0])
			continue;
		sbuf_printf(&out, "npumem-replay: the last OOM of device %d:\n%s\n", d, text);
		report_oom_why(&out, &why);
	}
	if (out.error == 0 && out.len)
		fwrite(out.data, 1, out.len, stderr);
	sbuf_release(&out);
}

/* The next chunk: 0, or EXIT_USAGE with the bad line in r->err. */
static int read_chunk(struct run *r)
{
	if (wl_trace_stream_next(r->in, &r->ended, r->err, sizeof(r->err)) == 0)
		return 0;
	r->bad_line = true;
	return EXIT_USAGE;
}

/*
 * The devices to start before the first chunk runs: the highest the whole
 * trace names, looked for in the file without parsing it while the first
 * chunk is read; a pipe cannot be read twice, so there the first chunk's.
 */
static void scan_devices(struct run *r, const struct cli *cli)
{
	r->max_device = 0;
	if (cli->setup.devices || cli->setup.config)
		return;
	if (wl_trace_stream_max_device(r->in, &r->max_device) != 0)
		r->devices_guessed = true;
}

/* The first chunk's devices, with what the scan found. */
static void first_chunk_devices(struct run *r)
{
	if (r->trace->max_device > r->max_device)
		r->max_device = r->trace->max_device;
	if (r->ended)
		r->devices_guessed = false; /* the chunk was the whole trace */
}

/*
 * Chunk after chunk: run one, read the next. The loop's own time is what
 * *elapsed gets, reading excluded.
 */
static int run_chunks(struct run *r, double *elapsed)
{
	int status = 0;

	for (;;) {
		double start = seconds_now();
		int rc = wl_replay_run(r->replay, 0, r->trace->nevents, NULL, r->err,
				       sizeof(r->err));
		*elapsed += seconds_now() - start;
		if (rc)
			return EXIT_FAILURE;
		if (r->ended)
			return 0;
		if ((status = read_chunk(r)) != 0)
			return status;
		if ((rc = wl_replay_follow(r->replay, r->err, sizeof(r->err))) != 0)
			return replay_refused(r, rc);
	}
}

static int replay(struct run *r)
{
	struct wl_replay_counters c;
	double elapsed = 0;
	int status = run_chunks(r, &elapsed);

	if (status)
		return status;
	wl_replay_counters(r->replay, &c);
	fprintf(stderr, "npumem-replay: %llu events in %.3f s (%.0f events/s), %llu OOMs\n",
		(unsigned long long)c.events, elapsed,
		elapsed > 0 ? (double)c.events / elapsed : 0.0, (unsigned long long)c.ooms);
	report_operators(r);
	report_ooms(r);
	return 0;
}

/*
 * A whole trace used to be checked before anything ran, so a bad line
 * anywhere was the message, before a refused setting, a missing device or
 * a failed replay. Read the rest of the trace to keep that order: its
 * first bad line wins, then (once a replay exists) a chunk naming a device
 * the machine lacks, then the failure itself.
 */
static int settle(struct run *r, int status)
{
	char failure[ERRLEN];
	bool check_devices = r->replay && !r->device_missing && !r->bad_line;

	memcpy(failure, r->err, sizeof(failure));
	while (!r->bad_line && !r->ended) {
		if (read_chunk(r) != 0)
			break;
		int rc = check_devices ? wl_replay_follow(r->replay, r->err, sizeof(r->err)) : 0;
		if (rc != 0) {
			status = replay_refused(r, rc);
			memcpy(failure, r->err, sizeof(failure));
			check_devices = false;
		}
	}
	if (r->bad_line) {
		fprintf(stderr, "%s\n", r->err);
		return EXIT_USAGE;
	}
	fprintf(stderr, "%s\n", failure);
	return status;
}

static int format_report(struct run *r, enum format format, struct sbuf *out)
{
	const struct npa_flavor *fl = npa_get_flavor(r->alloc);
	struct npa_snapshot snap;
	struct npa_stats st;
	int rc;

	if (format == FORMAT_SNAPSHOT) {
		rc = r->sw ? sw_snapshot(r->sw, 0, &snap) : npa_snapshot(r->alloc, 0, &snap);
		if (rc)
			return rc;
		rc = report_snapshot_json(out, &snap);
		npa_snapshot_release(&snap);
		return rc;
	}
	rc = r->sw ? sw_get_stats(r->sw, 0, &st) : npa_get_stats(r->alloc, 0, &st);
	if (rc)
		return rc;
	if (format == FORMAT_STATS)
		return report_stats_flat(out, &st, fl);
	if (format == FORMAT_JSON)
		return report_stats_json(out, &st, fl);
	return report_summary(out, &st, fl, 0, false);
}

/*
 * What the graph pools hold: every private pool of device 0 (graph
 * captures' and MemPools', which graphs may share). Printed only for a
 * trace with graph or mempool lines, so other reports stay as they were.
 */
static int format_pools(struct run *r, enum format format, struct sbuf *out)
{
	struct npa_pool_info *p;
	size_t n;
	int rc;

	if ((r->trace->ngraphs == 0 && r->trace->npools == 0) || format == FORMAT_SNAPSHOT)
		return 0;
	if ((rc = npa_pool_list(r->alloc, 0, &p, &n)) != 0)
		return rc;
	if (format == FORMAT_SUMMARY)
		rc = report_graph_pools_text(out, p, n, 0);
	else if (format == FORMAT_STATS)
		rc = report_graph_pools_flat(out, p, n);
	else
		rc = report_graph_pools_json(out, p, n);
	free(p);
	return rc;
}

/*
 * What the pinned host allocator holds at the end, for a trace with pin
 * lines: host_memory_stats() and the bytes the live pins asked for, so
 * the rounding shows (a 20 GiB batch held in a 32 GiB block).
 */
static int format_host(struct run *r, enum format format, struct sbuf *out)
{
	struct wl_replay_counters c;
	struct npa_host_stats h;
	struct report_pins pins;

	if (r->trace->npins == 0 || format == FORMAT_SNAPSHOT)
		return 0;
	wl_replay_counters(r->replay, &c);
	npa_host_get_stats(npa_host_of(r->alloc), &h);
	pins = (struct report_pins){ .requested = c.pinned_requested,
				     .requested_peak = c.pinned_requested_peak,
				     .pins = c.pins, .copies = c.copies, .refused = c.pin_ooms };
	if (format == FORMAT_SUMMARY)
		return report_pinned_text(out, &h, &pins);
	if (format == FORMAT_STATS)
		return report_pinned_flat(out, &h, &pins);
	return report_pinned_json(out, &h, &pins);
}

/* The device's report, then its private pools and pinned memory. */
static int format_all(struct run *r, enum format format, struct sbuf *out)
{
	int rc = format_report(r, format, out);

	if (rc == 0)
		rc = format_pools(r, format, out);
	if (rc == 0)
		rc = format_host(r, format, out);
	return rc;
}

static int print_report(struct run *r, enum format format)
{
	/* The pin lines were written as the replay ran: printed as they are. */
	const struct sbuf *text = &r->pins;
	struct sbuf out;
	int rc;

	sbuf_init(&out);
	if (format != FORMAT_PINS) {
		rc = format_all(r, format, &out);
		text = &out;
	} else {
		rc = r->pins.error;
	}
	if (rc == 0 && text->len)
		fwrite(text->data, 1, text->len, stdout);
	sbuf_release(&out);
	if (rc == 0 && fflush(stdout) != 0)
		rc = -EIO;
	if (rc)
		fprintf(stderr, "npumem-replay: cannot print the report: %s\n", strerror(-rc));
	return rc ? EXIT_FAILURE : 0;
}

static void teardown(struct run *r)
{
	if (r->replay) {
		wl_replay_release_all(r->replay);
		wl_replay_free(r->replay);
	}
	/* Unloads the plug-in, which gets back anything it still holds. */
	sw_destroy(r->sw);
	npa_block_handles_bind(NULL);
	if (r->alloc)
		npa_destroy(r->alloc, NULL);
	if (r->sim_up)
		machine_stop();
	wl_trace_stream_close(r->in);
	sbuf_release(&r->pins);
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct run r = { 0 };
	int status = parse_args(argc, argv, &cli);

	if (status != GO_ON)
		return status;
	if (wl_trace_stream_open(cli.trace, &r.in, r.err, sizeof(r.err)) != 0) {
		fprintf(stderr, "%s\n", r.err);
		return EXIT_USAGE;
	}
	r.trace = wl_trace_stream_trace(r.in);
	sbuf_init(&r.pins);
	scan_devices(&r, &cli);
	status = read_chunk(&r);
	if (status == 0) {
		first_chunk_devices(&r);
		status = configure(&r, &cli);
	}
	if (status == 0)
		status = start_simulator(&r);
	if (status == 0)
		status = start_allocator(&r, &cli);
	if (status == 0 && cli.plugin)
		status = start_plugin(&r, &cli);
	if (status == 0)
		status = start_replay(&r, &cli);
	if (status == 0)
		status = replay(&r);
	if (status)
		status = settle(&r, status);
	else
		status = print_report(&r, cli.format);
	teardown(&r);
	return status;
}
