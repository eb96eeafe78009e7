/*
 * cli.c - npumemfs's command line (cli.h).
 *
 * libfuse would refuse an unknown option too, but only in fuse_new, after
 * the simulated machine has started and printed, and it takes a misspelt
 * "--confg FILE" as an option without a value and FILE as the mount
 * point. So every option is known here: npumemfs's own, the few libfuse
 * flags, and -o, whose values libfuse checks before anything starts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define NOPTS(a) (sizeof(a) / sizeof((a)[0]))

/* Every long option, to suggest the closest to a misspelt one. */
static const char *const long_options[] = { "--config", "--log", "--help", "--version",
					    "--debug" };
/* Passed on to libfuse as they are. */
static const char *const fuse_flags[] = { "-f", "-d", "-s", "--debug" };

void cli_usage(const char *prog)
{
	printf("usage: %s [OPTIONS] MOUNTPOINT\n\n"
	       "A PyTorch/torch_npu caching allocator on a simulated NPU, shown as files\n"
	       "on MOUNTPOINT, an existing folder.\n\n"
	       "    -c, --config FILE  ini file (see conf/npumemfs.ini); built-in defaults\n"
	       "                       without it: 1 npu device of 32GiB, no latency\n"
	       "    --log FILE         where the daemon's messages go once in the background,\n"
	       "                       its report at unmount included (default:\n"
	       "                       $XDG_STATE_HOME/npumemfs/MOUNT.log, MOUNT the mount point\n"
	       "                       escaped as systemd-escape --path does;\n"
	       "                       $XDG_STATE_HOME defaults to ~/.local/state)\n"
	       "    -f                 stay in the foreground, messages on the terminal\n"
	       "    -d, --debug        libfuse's trace of every request (implies -f)\n"
	       "    -s                 serve requests on one thread\n"
	       "    -h, --help         print this help\n"
	       "    -V, --version      print the version\n\n"
	       "libfuse options npumemfs works with (-o OPT[,OPT...]):\n"
	       "    -o allow_other     let other users in (as [fs] allow_other in the ini;\n"
	       "                       needs user_allow_other in /etc/fuse.conf unless root)\n"
	       "    -o allow_root      let root in as well as the mount's owner\n"
	       "    -o auto_unmount    unmount when the daemon dies, even by SIGKILL\n"
	       "    -o max_threads=N   at most N threads serve requests (default 10)\n"
	       "    -o max_idle_threads=N\n"
	       "                       at most N of them wait when idle (default: all)\n"
	       "    -o clone_fd        a /dev/fuse descriptor per thread\n\n"
	       "Other -o options are libfuse's own and untried with npumemfs: the daemon\n"
	       "sets file sizes, modes and caching itself. -o modules=... is refused:\n"
	       "libfuse's stacked modules change the paths npumemfs serves.\n",
	       prog);
}

static bool listed(const char *a, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(a, list[i]) == 0)
			return true;
	}
	return false;
}

/* Levenshtein distance; options are short, longer words are never close. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The known long option at most two edits from `name`, or NULL. */
static const char *closest(const char *name)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (size_t i = 0; i < NOPTS(long_options); i++) {
		size_t d = distance(name, long_options[i]);
		if (d < best_d) {
			best = long_options[i];
			best_d = d;
		}
	}
	return best;
}

static int unknown_option(const char *a)
{
	char name[64];
	const char *like;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(a, "="), a);
	like = name[1] == '-' ? closest(name) : NULL;
	if (like)
		fprintf(stderr, "npumemfs: unknown option %s; did you mean %s?\n", name, like);
	else
		fprintf(stderr, "npumemfs: unknown option %s (see npumemfs --help)\n", name);
	return -EINVAL;
}

/*
 * libfuse's stacked modules (subdir, iconv) rewrite the paths the daemon
 * resolves by itself: the mount would answer ENOENT or EIO everywhere.
 */
static int refuse_modules(const char *opts)
{
	for (const char *o = opts; *o;) {
		size_t n = strcspn(o, ",");
		if (strncmp(o, "modules=", 8) == 0) {
			fprintf(stderr, "npumemfs: -o %.*s: libfuse's stacked modules change "
				"the paths npumemfs serves; drop the option (see npumemfs "
				"--help)\n", (int)n, o);
			return -EINVAL;
		}
		o += n + (o[n] == ',');
	}
	return 0;
}

/*
 * A file option at argv[*i]: "LONG FILE", "LONG=FILE" or "SHORT FILE"
 * (short may be NULL). 1 with *out set (and *i past it), 0 when argv[*i]
 * is another option, -EINVAL when the file is missing.
 */
static int file_option(int argc, char **argv, int *i, const char *lng, const char *shrt,
		       const char **out)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);

	if (strncmp(a, lng, n) == 0 && a[n] == '=') {
		*out = a + n + 1;
		return 1;
	}
	if (strcmp(a, lng) != 0 && (shrt == NULL || strcmp(a, shrt) != 0))
		return 0;
	if (++*i == argc) {
		fprintf(stderr, "npumemfs: %s needs a file: %s FILE\n", a, a);
		return -EINVAL;
	}
	*out = argv[*i];
	return 1;
}

/* npumemfs's own options: 1 when argv[*i] was one, 0 when not, or -EINVAL. */
static int own_option(struct cli *cli, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	int rc = file_option(argc, argv, i, "--config", "-c", &cli->config);

	if (rc == 0)
		rc = file_option(argc, argv, i, "--log", NULL, &cli->log);
	if (rc != 0)
		return rc;
	if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
		return cli->help = true, 1;
	if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0)
		return cli->version = true, 1;
	return 0;
}

static void pass(struct cli *cli, char *a)
{
	cli->argv[cli->argc++] = a;
}

/* libfuse's options: a known flag, or -o OPTS / -oOPTS with its value checked. */
static int fuse_option(struct cli *cli, int argc, char **argv, int *i)
{
	char *a = argv[*i];

	if (strncmp(a, "-o", 2) != 0) {
		if (!listed(a, fuse_flags, NOPTS(fuse_flags)))
			return unknown_option(a);
		pass(cli, a);
		return 0;
	}
	pass(cli, a);
	if (a[2] != '\0')
		return refuse_modules(a + 2);
	if (++*i == argc) {
		fprintf(stderr, "npumemfs: -o needs options: -o OPT[,OPT...] (see npumemfs "
			"--help)\n");
		return -EINVAL;
	}
	pass(cli, argv[*i]);
	return refuse_modules(argv[*i]);
}

static int mountpoint(struct cli *cli, char *a)
{
	if (cli->mountpoint) {
		fprintf(stderr, "npumemfs: two mount points given, %s and %s: name one folder\n",
			cli->mountpoint, a);
		return -EINVAL;
	}
	cli->mountpoint = a;
	pass(cli, a);
	return 0;
}

/* A mount point starting with '-' is written ./-name: libfuse's "--" is not
 * taken, as the options npumemfs adds for libfuse come after these. */
static int one_arg(struct cli *cli, int argc, char **argv, int *i)
{
	char *a = argv[*i];
	int rc;

	if (a[0] != '-')
		return mountpoint(cli, a);
	rc = own_option(cli, argc, argv, i);
	return rc == 0 ? fuse_option(cli, argc, argv, i) : rc < 0 ? rc : 0;
}

int cli_parse(int argc, char **argv, struct cli *cli)
{
	int rc = 0;

	memset(cli, 0, sizeof(*cli));
	cli->argv = calloc((size_t)argc + 1, sizeof(char *));
	if (!cli->argv)
		return -ENOMEM;
	pass(cli, argv[0]);
	for (int i = 1; i < argc && rc == 0; i++)
		rc = one_arg(cli, argc, argv, &i);
	if (rc == 0 && !cli->mountpoint && !cli->help && !cli->version) {
		fprintf(stderr, "npumemfs: no mount point given: npumemfs [OPTIONS] FOLDER "
			"(see npumemfs --help)\n");
		rc = -EINVAL;
	}
	return rc;
}

void cli_release(struct cli *cli)
{
	free(cli->argv);
	cli->argv = NULL;
}
