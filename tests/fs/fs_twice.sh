#!/usr/bin/env bash
# README command 1 run twice: the second npumemfs refuses the mounted
# folder, naming the mount there, and the first keeps serving it alone.
. "$(dirname "$0")/lib.sh"
mount_fs
STATUS=0
out=$("$NPUMEMFS" --config "$INI" "$MNT" 2>&1) || STATUS=$?
expect_eq "$STATUS" 1 "exit status of the second mount"
expect_eq "$out" "npumemfs: $MNT is already mounted (npumemfs on $MNT type fuse.npumemfs): another npumemfs serves it; unmount it first with: fusermount3 -u $MNT" \
	"the refusal"
expect_eq "$(awk -v m="$MNT" '$5 == m' /proc/self/mountinfo | wc -l)" 1 "mounts on the folder"
cat "$MNT/stats/device0" >/dev/null || fail "the first daemon stopped serving"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
