/*
 * cli.h - npumemfs's command line: its own options taken out, libfuse's
 * checked as far as npumemfs can, everything refused before anything
 * starts or prints.
 *
 *     npumemfs [--config FILE] [--log FILE] [-f] [-d] [-s] [-o OPT[,OPT...]] MOUNTPOINT
 */
#ifndef NPUMEMFS_CLI_H
#define NPUMEMFS_CLI_H

#include <stdbool.h>

struct cli {
	const char *config;
	const char *log;        /* --log: the background daemon's messages */
	const char *mountpoint; /* NULL when none was given */
	bool help;
	bool version;
	int argc;
	char **argv;            /* what is left for libfuse, mount point included */
};

/*
 * 0, or -EINVAL with one line on stderr naming the argument and what to
 * write instead (an unknown option, a misspelt long one with the closest
 * known, a refused libfuse module, a missing or second mount point), or
 * -ENOMEM. cli_release in every case.
 */
int cli_parse(int argc, char **argv, struct cli *cli);
void cli_release(struct cli *cli);
/* --help: every npumemfs option and the libfuse options it works with. */
void cli_usage(const char *prog);

#endif /* NPUMEMFS_CLI_H */
