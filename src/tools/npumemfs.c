/*
 * main.c - npumemfs: the checks of the mount point, and the set-up and
 * tear-down ladder around the FUSE loop. The command line is cli.c's.
 *
 *     npumemfs [--config FILE] [--log FILE] [-f] [-d] [-s] [-o OPT[,OPT...]] MOUNTPOINT
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <npumemfs/npusim.h>

#include "cli.h"
#include "config.h"
#include "fs/daemon.h"
#include "fs/fuse_ops.h"
#include "background.h"
#include "log_file.h"
#include "machine.h"
#include "alloc/plugin/plugin_host.h"
#include <fuse_lowlevel.h>

/* libfuse's own message for this is cryptic; say what to do instead. */
static int check_stale(const char *mnt)
{
	struct stat st;

	if (!mnt || stat(mnt, &st) == 0 || errno != ENOTCONN)
		return 0;
	fprintf(stderr,
		"npumemfs: %s: stale mount (Transport endpoint is not connected); "
		"clear it with: fusermount3 -u %s\n",
		mnt, mnt);
	return -ENOTCONN;
}

/*
 * libfuse mounts on a regular file too (every access then gives EIO), and
 * says of a missing one only "bad mount point": say what to do instead.
 */
static int check_folder(const char *mnt)
{
	struct stat st;

	if (stat(mnt, &st) != 0) {
		int e = errno;
		if (e == ENOENT)
			fprintf(stderr, "npumemfs: %s does not exist: create the folder first "
				"(mkdir -p %s)\n", mnt, mnt);
		else
			fprintf(stderr, "npumemfs: %s: %s\n", mnt, strerror(e));
		return -e;
	}
	if (S_ISDIR(st.st_mode))
		return 0;
	fprintf(stderr, "npumemfs: %s is not a folder: mount on a folder (mkdir DIR; "
		"npumemfs DIR)\n", mnt);
	return -ENOTDIR;
}

/*
 * A second daemon on a mounted npumemfs would stack on top of the first and
 * hide it: refuse, naming the mount that is there. Mount points in
 * mountinfo are absolute, with blanks escaped (\040), which realpath
 * names never are.
 */
static int check_mounted(const char *mnt)
{
	char real[PATH_MAX], line[4096], point[PATH_MAX], type[256], source[PATH_MAX];
	FILE *f;
	int rc = 0;

	if (!mnt || !realpath(mnt, real) || !(f = fopen("/proc/self/mountinfo", "r")))
		return 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(dash + 3, "%255s %4095s", type, source) != 2)
			continue;
		if (strcmp(point, real) == 0 && strcmp(type, "fuse.npumemfs") == 0)
			rc = -EBUSY;
	}
	fclose(f);
	if (rc)
		fprintf(stderr,
			"npumemfs: %s is already mounted (%s on %s type %s): another npumemfs "
			"serves it; unmount it first with: fusermount3 -u %s\n",
			mnt, source, real, type, mnt);
	return rc;
}

static int load_config(const struct cli *cli, struct nmfs_config *cfg)
{
	char err[NMFS_CONFIG_ERRLEN];

	int rc = 0;

	nmfs_config_default(cfg);
	if (cli->config)
		rc = nmfs_config_load(cfg, cli->config, err, sizeof(err));
	if (rc)
		fprintf(stderr, "npumemfs: %s\n", err);
	else
		nmfs_config_env(cfg);
	return rc;
}

static int fuse_args_for(const struct cli *cli, const struct nmfs_config *cfg,
			 struct fuse_args *args)
{
	*args = (struct fuse_args)FUSE_ARGS_INIT(0, NULL);
	for (int i = 0; i < cli->argc; i++) {
		if (fuse_opt_add_arg(args, cli->argv[i]))
			return -ENOMEM;
	}
	if (fuse_opt_add_arg(args, "-ofsname=npumemfs,subtype=npumemfs"))
		return -ENOMEM;
	/*
	 * Other users are held to each file's mode by the kernel. Without
	 * allow_other only the mount's owner gets in, and the daemon's own
	 * checks (fuse_ops.c: writes where a row takes them, access) say
	 * what the modes say; default_permissions would cost a GETATTR per
	 * path component of every open, since attributes are never cached.
	 */
	if (cfg->allow_other &&
	    fuse_opt_add_arg(args, "-oallow_other,default_permissions"))
		return -ENOMEM;
	return 0;
}

static int run_loop(struct fuse *fuse, const struct fuse_cmdline_opts *opts)
{
	if (opts->singlethread)
		return fuse_loop(fuse);
	struct fuse_loop_config *lc = fuse_loop_cfg_create();
	if (!lc)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(lc, opts->clone_fd);
	/* libfuse 3.14's own main forgets -o max_threads; apply it here. */
	fuse_loop_cfg_set_max_threads(lc, opts->max_threads);
	if (opts->max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(lc, opts->max_idle_threads);
	int rc = fuse_loop_mt(fuse, lc);
	fuse_loop_cfg_destroy(lc);
	return rc;
}

/* In the background: stderr becomes the log file, which gets a line saying
 * when and which process, then what was logged before. */
static void log_to_file(struct nmfs *d, int fd)
{
	char when[64];
	time_t now = time(NULL);

	if (fd < 0)
		return;
	dup2(fd, STDERR_FILENO);
	close(fd);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
	fprintf(stderr, "npumemfs: %s: pid %d serves %s in the background\n", when,
		(int)getpid(), d->mountpoint);
	dlog_echo_held(&d->log);
}

/* Mount, serve until unmounted or signalled, unmount. log_fd: the file a
 * background daemon's messages go to (-1 in the foreground). */
static int serve(struct nmfs *d, struct fuse *fuse, const struct fuse_cmdline_opts *opts,
		 int log_fd)
{
	char err[NMFS_ERRLEN];
	int rc = 1, ready = -1;

	if (daemon_set_mountpoint(d, opts->mountpoint) || fuse_mount(fuse, opts->mountpoint))
		goto out;
	if (opts->foreground ? fuse_daemonize(1) != 0 : bg_detach(&ready) != 0)
		goto out_unmount;
	log_to_file(d, log_fd);
	log_fd = -1;
	if (fuse_set_signal_handlers(fuse_get_session(fuse)))
		goto out_unmount;
	if (daemon_start_threads(d, err, sizeof(err)))
		dlog_printf(&d->log, "%s", err);
	dlog_printf(&d->log, "mounted on %s", opts->mountpoint);
	/* Only now may the command that started a background daemon return:
	 * a SIGTERM from here on unmounts with the report. */
	bg_ready(ready);
	ready = -1;
	int loop = run_loop(fuse, opts);
	/* A positive value is the signal that ended the loop: a clean exit. */
	rc = loop < 0 ? 1 : 0;
	if (loop > 0)
		dlog_printf(&d->log, "signal %d: unmounting", loop);
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	if (ready >= 0)
		close(ready); /* the starter exits 1 */
	fuse_unmount(fuse);
out:
	if (log_fd >= 0)
		close(log_fd);
	return rc;
}

/* The daemon as the ini describes it; mnt/config shows the ini's effect. */
static int open_daemon(struct nmfs *d, const struct nmfs_config *cfg, char *err,
		       size_t errlen)
{
	struct sbuf text;
	char *ini = NULL;
	char host[PATH_MAX];
	int rc;

	sbuf_init(&text);
	rc = nmfs_config_format(cfg, &text);
	if (rc == 0 && !(ini = strndup(text.data ? text.data : "", text.len)))
		rc = -ENOMEM;
	if (rc == 0 && !cfg->plugin_in_process &&
	    (rc = plugin_host_default_path(host, sizeof(host))) != 0) {
		snprintf(err, errlen, "cannot find the plug-in host program: %s", strerror(-rc));
		free(ini);
		sbuf_release(&text);
		return rc;
	}
	if (rc == 0) {
		const struct nmfs_options opt = {
			.flavor = cfg->flavor,
			.device_count = cfg->device_count,
			.host_capacity = cfg->host_capacity,
			.alloc_conf = cfg->alloc_conf,
			.plugin_dirs = cfg->plugin_dirs,
			.plugin_host = cfg->plugin_in_process ? NULL : host,
			.plugin_timeout_ms = cfg->plugin_timeout_ms,
			.no_caching = cfg->no_memory_caching,
			.replay = cfg->replay,
			.loop = cfg->loop,
			.config_text = ini,
			.config_path = cfg->path,
		};
		rc = daemon_init(d, &opt, err, errlen);
	} else {
		snprintf(err, errlen, "out of memory");
	}
	free(ini);
	sbuf_release(&text);
	return rc;
}

/*
 * The file a daemon going to the background will write to, opened now so
 * that a refusal is seen on the terminal: an fd, or -1 with the reason
 * printed (nothing is mounted then: a report that would go nowhere is what
 * this file is for).
 */
static int open_log(const struct cli *cli, const char *mountpoint)
{
	char path[PATH_MAX], real[PATH_MAX], err[PATH_MAX + 128];
	int rc = 0;

	if (cli->log)
		snprintf(path, sizeof(path), "%s", cli->log);
	else if (!realpath(mountpoint, real))
		rc = -errno;
	else
		rc = log_file_default(real, getenv("XDG_STATE_HOME"), getenv("HOME"), path,
				      sizeof(path));
	if (rc) {
		fprintf(stderr, "npumemfs: no file for the daemon's messages in the background "
			"(%s%s): name one with --log FILE, or stay in the foreground with -f\n",
			rc == -ENOENT ? "neither $XDG_STATE_HOME nor $HOME is set: " : "",
			strerror(-rc));
		return -1;
	}
	int fd = log_file_open(path, cli->log == NULL, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "npumemfs: %s: name another file with --log FILE, or stay in "
			"the foreground with -f\n", err);
		return -1;
	}
	fprintf(stderr, "npumemfs: in the background, messages and the report at unmount "
		"go to %s\n", path);
	return fd;
}

/*
 * libfuse checks its -o options in fuse_new: called before anything starts
 * or prints, so that a refusal is the only message. d is only its user
 * data until the mount, when fs_init hands it to every request.
 */
static int start(const struct cli *cli, const struct nmfs_config *cfg)
{
	struct fuse_args args;
	struct fuse_cmdline_opts opts = { 0 };
	char err[NMFS_ERRLEN];
	struct nmfs d;
	struct fuse *fuse = NULL;
	int rc = 1, log_fd = -1;

	if (fuse_args_for(cli, cfg, &args) || fuse_parse_cmdline(&args, &opts))
		goto out_args;
	if (!(fuse = fuse_new(&args, &nmfs_ops, sizeof(nmfs_ops), &d)))
		goto out_opts;
	if (!opts.foreground && (log_fd = open_log(cli, opts.mountpoint)) < 0)
		goto out_opts;
	if (machine_start(cfg, err, sizeof(err)) ||
	    open_daemon(&d, cfg, err, sizeof(err))) {
		fprintf(stderr, "npumemfs: %s\n", err);
		if (log_fd >= 0)
			close(log_fd);
		goto out_opts;
	}
	rc = serve(&d, fuse, &opts, log_fd);
	fuse_destroy(fuse);
	fuse = NULL;
	fs_release_open_files(&d);
	if (daemon_fini(&d))
		rc = rc ? rc : 2;
out_opts:
	if (fuse)
		fuse_destroy(fuse);
	if (npusim_initialized())
		machine_stop();
	free(opts.mountpoint);
out_args:
	fuse_opt_free_args(&args);
	return rc;
}

static void help_or_version(const char *prog, const struct cli *cli)
{
	if (cli->help)
		cli_usage(prog);
	else
		printf("npumemfs %s (libfuse %s)\n", NPUMEMFS_VERSION, fuse_pkgversion());
}

int main(int argc, char **argv)
{
	struct nmfs_config cfg;
	struct cli cli;
	int rc = 1;

	if (cli_parse(argc, argv, &cli))
		goto out;
	if (cli.help || cli.version) {
		help_or_version(argv[0], &cli);
		rc = 0;
		goto out;
	}
	if (check_stale(cli.mountpoint) || check_folder(cli.mountpoint) ||
	    check_mounted(cli.mountpoint) || load_config(&cli, &cfg))
		goto out;
	rc = start(&cli, &cfg);
out:
	cli_release(&cli);
	return rc;
}
