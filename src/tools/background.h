/*
 * background.h - a daemon that goes to the background, and whose starter
 * returns only once it serves.
 *
 * libfuse's fuse_daemonize lets the starting process exit as soon as the
 * child exists, before it has set its signal handlers or written its log
 * header: a script that mounts and at once sends SIGTERM could kill it
 * without its unmount report. Here the starter waits for the child's word.
 */
#ifndef NPUMEMFS_BACKGROUND_H
#define NPUMEMFS_BACKGROUND_H

/*
 * Fork. The starter never returns: it exits 0 when the child calls
 * bg_ready, 1 if the child ends first. The child returns 0 with *ready set
 * (in its own session, in /, stdin, stdout and stderr on /dev/null), or
 * -errno in the process that called if there is no child.
 */
int bg_detach(int *ready);
/* In the child: it serves; the starter may exit. */
void bg_ready(int ready);

#endif /* NPUMEMFS_BACKGROUND_H */
