#!/usr/bin/env bash
# A daemon killed with -9 leaves a stale mount; starting again on it says
# so clearly, before libfuse's own confusing message, and exits 1.
. "$(dirname "$0")/lib.sh"
mount_fs

kill -9 "$PID"
wait "$PID" 2>/dev/null
PID=
stat "$MNT" >/dev/null 2>&1 && fail "the mount point is not stale after kill -9"

STATUS=0
out=$("$NPUMEMFS" --config "$INI" -f "$MNT" 2>&1) || STATUS=$?
expect_eq "$STATUS" 1 "exit status on a stale mount"
expect_eq "$out" "npumemfs: $MNT: stale mount (Transport endpoint is not connected); clear it with: fusermount3 -u $MNT" \
	"stale mount message"

# After the advice is followed, the mount works again.
fusermount3 -u "$MNT" || fail "fusermount3 -u on the stale mount"
mount_fs
cat "$MNT/stats/device0" >/dev/null || fail "cat after remounting"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
