/*
 * log_file.h - where a daemon in the background keeps its messages.
 *
 * Once daemonized, stderr is /dev/null, and with it the report the daemon
 * makes when it is unmounted (tensors freed, invariant check, leaks). So a
 * background daemon appends its messages to a file instead: by default
 * $XDG_STATE_HOME/npumemfs/MOUNT.log ($XDG_STATE_HOME defaulting to
 * ~/.local/state, where the XDG base directory rules put logs: per user,
 * kept across reboots, outside the folders the user works in), MOUNT being
 * the absolute mount point escaped as `systemd-escape --path` escapes it,
 * so two mount points never share a file.
 */
#ifndef NPUMEMFS_LOG_FILE_H
#define NPUMEMFS_LOG_FILE_H

#include <stddef.h>

/* `path` (absolute, normalized) as systemd-escape --path writes it:
 * "/work/wt-a/mnt" is "work-wt\x2da-mnt". 0, or -ENAMETOOLONG. */
int log_file_escape(const char *path, char *buf, size_t len);
/* The default file for mount point `mnt` (absolute), from `state_home`
 * ($XDG_STATE_HOME, may be NULL or "") and `home` ($HOME). 0, or -ENOENT
 * with neither set, or -ENAMETOOLONG. */
int log_file_default(const char *mnt, const char *state_home, const char *home, char *buf,
		     size_t len);
/* Open `path` for appending (0600), making the folders of a default path
 * (`make_dirs`, 0700) first. An fd, or a negative errno with why in err. */
int log_file_open(const char *path, int make_dirs, char *err, size_t errlen);

#endif /* NPUMEMFS_LOG_FILE_H */
